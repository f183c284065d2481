/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * dat_saw: a Send posted after an RDMA Write arrives after the Write's
 * data, as DAT promises (InfiniBand's order): one side posts a large RDMA
 * Write and at once a Send; the other, as soon as the Send's receive
 * completes, finds every written byte in place, without waiting. Writes
 * signalled and suppressed, -S sizes (default 1 and 4 MiB), -I rounds of
 * each (default 16). Run twice, on IAs opened with the fabric's own order
 * and on IAs opened with DAPL_OFI_TEST_NO_SAW=1, which makes dapl-ofi
 * treat the fabric as one that does not order a Send after a Write (efa),
 * where a Send waits for the Writes before it to be delivered (dapl-ofi(7)).
 * Single process, two IAs.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "shared.h"

static struct ft_ia ta, ra; /* the writing side and the target */
static struct ft_listener L;
static struct ft_ep tx, rx;
static struct ft_mr src, dst, note;

/* One round: Write len bytes (seed's pattern), then Send 8; whether the
 * data was all there when the receive completed. */
/* Rounds where the signalled Write had not completed when the Send's post
 * returned (with the fence, it has: the Send waited for its delivery). */
static long undelivered;

/*
 * Wait for the receive of the Send (cookie), polling the writer's request
 * EVD meanwhile and keeping what it gives in tx_ev (*ntx of at most 2):
 * one process drives both IAs, and a blocking wait on the target would
 * leave the writer to its progress thread's timer (on rxd, whose window
 * moves with each read of its queue, 4 MiB then took 0.4 s).
 */
static bool wait_recv(uint64_t cookie, DAT_EVENT *tx_ev, int *ntx)
{
	static const char what[] = "the send after the write is received";
	DAT_RETURN ret;
	DAT_EVENT ev;

	ret = ft_poll_with(rx.recv_evd, FT_TIMEOUT_US, &ev, tx.req_evd, tx_ev,
	                   2, ntx);
	if (ret != DAT_SUCCESS)
		return FT_CHECK(false, "%s: dat_evd_dequeue = %s", what,
		                ft_ret_str(ret));
	return ft_check_dto(&ev, rx.ep, DAT_DTO_RECEIVE, cookie,
	                    DAT_DTO_SUCCESS, 8, what);
}

/* The writer's next request completion: one wait_recv took, else the
 * next of its EVD. */
static void tx_next(const DAT_EVENT *tx_ev, int ntx, int *used, DAT_DTOS op,
                    uint64_t cookie, size_t len, const char *what)
{
	if (*used < ntx)
		(void)ft_check_dto(&tx_ev[(*used)++], tx.ep, op, cookie,
		                   DAT_DTO_SUCCESS, (long)len, what);
	else
		ft_expect_dto(tx.req_evd, FT_TIMEOUT_US, tx.ep, op, cookie,
		              DAT_DTO_SUCCESS, (long)len, NULL, what);
}

static bool round_one(size_t len, uint64_t seed, bool quiet, const char *tag)
{
	DAT_LMR_TRIPLET l, rr;
	DAT_RMR_TRIPLET r;
	DAT_DTO_COOKIE c;
	DAT_EVENT ev, tx_ev[2];
	bool wdone = false;
	int ntx = 0, used = 0;
	long bad;

	ft_fill(src.buf, len, seed);
	memset(dst.buf, 0, len);
	rr = ft_lmr_iov(&note, 0, 64);
	c.as_64 = seed;
	FT_DAT_CHECK(dat_ep_post_recv(rx.ep, 1, &rr, c,
	                              DAT_COMPLETION_DEFAULT_FLAG));
	l = ft_lmr_iov(&src, 0, len);
	r = ft_rmr_iov(&dst, 0, len);
	c.as_64 = seed + 1;
	FT_DAT_CHECK(
	        dat_ep_post_rdma_write(tx.ep, 1, &l, c, &r,
	                               quiet ? DAT_COMPLETION_SUPPRESS_FLAG
	                                     : DAT_COMPLETION_DEFAULT_FLAG));
	l = ft_lmr_iov(&src, 0, 8);
	c.as_64 = seed + 2;
	FT_DAT_CHECK(
	        dat_ep_post_send(tx.ep, 1, &l, c, DAT_COMPLETION_DEFAULT_FLAG));
	/* Without waiting: is the Write's completion there already? */
	if (!quiet) {
		wdone = dat_evd_dequeue(tx.req_evd, &ev) == DAT_SUCCESS;
		if (wdone)
			FT_CHECK(ev.event_number == DAT_DTO_COMPLETION_EVENT &&
			                 ev.event_data.dto_completion_event_data
			                                 .user_cookie.as_64 ==
			                         seed + 1,
			         "%s: the first request completion is the "
			         "write's: %s",
			         tag, ft_event_desc(&ev));
		else
			undelivered++;
	}
	if (!wait_recv(seed, tx_ev, &ntx))
		return false;
	/* At once: the receiver of the Send may read the memory. */
	bad = ft_pattern_mismatch(dst.buf, len, seed);
	if (bad >= 0)
		ft_log("%s: %zu-byte write, %s: byte %ld of %zu not yet "
		       "written when the send arrived",
		       tag, len, quiet ? "suppressed" : "signalled", bad, len);
	if (!quiet && !wdone)
		tx_next(tx_ev, ntx, &used, DAT_DTO_RDMA_WRITE, seed + 1, len,
		        "the write completes");
	tx_next(tx_ev, ntx, &used, DAT_DTO_SEND, seed + 2, 8,
	        "then the send completes");
	return bad < 0;
}

static void run(const char *tag, bool fenced)
{
	static const size_t defaults[] = {1 << 20, 4 << 20};
	size_t sizes[FT_MAX_SIZES], max;
	long rounds = ft_iterations(16), i, late;
	DAT_EP_ATTR attr;
	int n, s, q;

	ft_ia_open(ft_opts.ia_name, &ta);
	ft_ia_open(ft_opts.ia_name, &ra);
	ft_check_libs();
	max = ta.attr.max_rdma_size < ta.attr.max_lmr_block_size
	              ? ta.attr.max_rdma_size
	              : ta.attr.max_lmr_block_size;
	n = ft_sizes(defaults, 2, max, sizes);
	FT_REQUIRE(n > 0, "a size to write");
	ft_ep_attr_default(&ta, &attr);
	FT_DAT_OK(ft_listen(&ra, &L));
	FT_DAT_OK(ft_ep_create(&ta, ta.pz, &attr, 64, &tx));
	FT_DAT_OK(ft_ep_create(&ra, ra.pz, &attr, 64, &rx));
	FT_DAT_OK(ft_mr_create(&ta, ta.pz, sizes[n - 1], DAT_MEM_PRIV_ALL_FLAG,
	                       &src));
	FT_DAT_OK(ft_mr_create(&ra, ra.pz, sizes[n - 1], DAT_MEM_PRIV_ALL_FLAG,
	                       &dst));
	FT_DAT_OK(ft_mr_create(&ra, ra.pz, 64, DAT_MEM_PRIV_ALL_FLAG, &note));
	FT_REQUIRE(ft_connect_local(&ta, &tx, &ra, &rx, &L), "%s: connected",
	           tag);
	undelivered = 0;
	for (s = 0; s < n; s++) {
		for (q = 0; q < 2; q++) {
			late = 0;
			for (i = 0; i < rounds; i++)
				late += !round_one(sizes[s],
				                   ((uint64_t)s << 32) +
				                           ((uint64_t)q << 24) +
				                           ((uint64_t)i << 4) +
				                           0x1000,
				                   q == 1, tag);
			FT_CHECK(late == 0,
			         "%s: a send posted after a %s RDMA write of "
			         "%zu bytes arrives after its data (%ld of %ld "
			         "rounds early)",
			         tag, q ? "suppressed" : "signalled", sizes[s],
			         late, rounds);
		}
	}
	/*
	 * Where a Send waits for the Writes before it, dat_ep_post_send
	 * returns once the Write is delivered, its completion taken from
	 * libfabric: the data's arrival cannot be what the check above
	 * missed by luck. Elsewhere it is only reported.
	 */
	if (fenced)
		FT_CHECK(undelivered == 0,
		         "%s: every signalled write had completed when the "
		         "send's post returned (%ld of %ld had not)",
		         tag, undelivered, n * rounds);
	else
		ft_log("%s: %ld of %ld signalled writes not completed when "
		       "the send's post returned",
		       tag, undelivered, n * rounds);
	ft_disconnect_local(&tx, &rx, DAT_CLOSE_GRACEFUL_FLAG);
	ft_drain(tx.req_evd);
	ft_drain(rx.recv_evd);
	ft_mr_free(&note);
	ft_mr_free(&dst);
	ft_mr_free(&src);
	ft_ep_free(&tx);
	ft_ep_free(&rx);
	ft_listener_free(&L);
	ft_ia_close(&ra);
	ft_ia_close(&ta);
	memset(&L, 0, sizeof(L));
	memset(&tx, 0, sizeof(tx));
	memset(&rx, 0, sizeof(rx));
}

int main(int argc, char **argv)
{
	ft_init(argc, argv, "dat_saw",
	        "send after RDMA write: the data is there when the send is, "
	        "with the fabric's order and with DAPL_OFI_TEST_NO_SAW=1",
	        NULL);
	run("fabric's order", false);
	/* The fence efa needs, on this fabric: FI_ORDER_SAW masked. */
	FT_REQUIRE(setenv("DAPL_OFI_TEST_NO_SAW", "1", 1) == 0, "setenv");
	run("DAPL_OFI_TEST_NO_SAW=1", true);
	return ft_finish();
}
