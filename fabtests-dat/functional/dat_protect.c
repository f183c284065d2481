/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * dat_protect: memory protection.  Local: an LMR of another PZ, an LMR
 * without the local write a receive or RDMA Read needs (local read is
 * implied, as on InfiniBand: a send from a write-only LMR works), a
 * segment outside its LMR, an
 * unknown lmr_context -- each refused by the post or completed in error,
 * and no data delivered.  Remote: RDMA Write/Read through a context that
 * lacks the right, outside the registered range (after the end, before the
 * start), across the end of a bound RMR window, through a read-only
 * window, through an unbound RMR's old context, a freed LMR's context, a
 * made-up context, and a context of an LMR in a PZ other than the target
 * Endpoint's -- each an error completion at the initiator
 * (DAT_DTO_ERR_REMOTE_ACCESS expected), with every target byte unchanged.
 * Each case runs on a fresh connection, since a protection error breaks
 * it.  Last, one receive EVD serves target EPs of two PZs: both PZs'
 * traffic arrives.  Single process, two IAs (initiator and target).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shared.h"

static struct ft_ia ini, tgt;
static struct ft_listener L;
static size_t page;
/*
 * The fabric sends requests behind a refused RDMA operation before the
 * refusal comes back (sockets), so they may arrive.
 */
static bool pipelined;

/* A registered page with an unregistered page on each side. */
struct gmr {
	unsigned char *base; /* 3 pages */
	unsigned char *reg;  /* base + page, registered */
	DAT_LMR_HANDLE lmr;
	DAT_LMR_CONTEXT lctx;
	DAT_RMR_CONTEXT rctx;
};

static void gmr_create(struct ft_ia *ia, DAT_PZ_HANDLE pz,
                       DAT_MEM_PRIV_FLAGS priv, struct gmr *g)
{
	DAT_REGION_DESCRIPTION region;
	DAT_VLEN rlen = 0;
	DAT_VADDR raddr = 0;
	void *buf;

	memset(g, 0, sizeof(*g));
	FT_REQUIRE(posix_memalign(&buf, page, 3 * page) == 0, "3 pages");
	g->base = buf;
	g->reg = g->base + page;
	region.for_va = g->reg;
	FT_DAT_OK(dat_lmr_create(ia->ia, DAT_MEM_TYPE_VIRTUAL, region, page, pz,
	                         priv, DAT_VA_TYPE_VA, &g->lmr, &g->lctx,
	                         &g->rctx, &rlen, &raddr));
	FT_CHECK(raddr == (DAT_VADDR)(uintptr_t)g->reg && rlen == page,
	         "one page registered exactly (%#llx +%llu)",
	         (unsigned long long)raddr, (unsigned long long)rlen);
}

static void gmr_free(struct gmr *g)
{
	if (g->lmr != DAT_HANDLE_NULL)
		FT_DAT_CHECK(dat_lmr_free(g->lmr));
	free(g->base);
	memset(g, 0, sizeof(*g));
}

struct conn {
	struct ft_ep i, t;
	bool up;
};

static bool conn_up(struct conn *c, DAT_PZ_HANDLE tpz)
{
	DAT_EP_ATTR a;

	memset(c, 0, sizeof(*c));
	ft_ep_attr_default(&ini, &a);
	FT_DAT_OK(ft_ep_create(&ini, ini.pz, &a, 64, &c->i));
	FT_DAT_OK(ft_ep_create(&tgt, tpz, &a, 64, &c->t));
	c->up = ft_connect_local(&ini, &c->i, &tgt, &c->t, &L);
	return c->up;
}

static void conn_down(struct conn *c)
{
	(void)dat_ep_disconnect(c->i.ep, DAT_CLOSE_ABRUPT_FLAG);
	(void)dat_ep_disconnect(c->t.ep, DAT_CLOSE_ABRUPT_FLAG);
	usleep(20000);
	ft_drain(c->i.conn_evd);
	ft_drain(c->t.conn_evd);
	ft_drain(c->i.req_evd);
	ft_drain(c->i.recv_evd);
	ft_drain(c->t.req_evd);
	ft_drain(c->t.recv_evd);
	ft_ep_free(&c->i);
	ft_ep_free(&c->t);
}

/*
 * The outcome of a post that must not succeed: refused synchronously with
 * one of the two codes, or accepted and completed in error.
 */
static void expect_local_failure(const char *name, DAT_RETURN ret,
                                 DAT_EVD_HANDLE evd, DAT_RETURN sync1,
                                 DAT_RETURN sync2)
{
	DAT_EVENT ev;
	DAT_RETURN w;

	if (ret != DAT_SUCCESS) {
		FT_CHECK(ft_ret_matches(ret, sync1) ||
		                 ft_ret_matches(ret, sync2),
		         "%s: refused by the post: %s", name, ft_ret_str(ret));
		return;
	}
	w = ft_wait(evd, FT_TIMEOUT_US, &ev);
	FT_CHECK(w == DAT_SUCCESS &&
	                 ev.event_number == DAT_DTO_COMPLETION_EVENT &&
	                 ev.event_data.dto_completion_event_data.status !=
	                         DAT_DTO_SUCCESS,
	         "%s: accepted, then completed in error: %s", name,
	         w == DAT_SUCCESS ? ft_event_desc(&ev) : ft_ret_str(w));
	if (w == DAT_SUCCESS &&
	    ev.event_data.dto_completion_event_data.status !=
	            DAT_DTO_ERR_LOCAL_PROTECTION &&
	    ev.event_data.dto_completion_event_data.status != DAT_DTO_SUCCESS)
		FT_WARN("%s: status %s, DAT_DTO_ERR_LOCAL_PROTECTION expected",
		        name,
		        ft_dto_status_str(
		                ev.event_data.dto_completion_event_data
		                        .status));
}

/*
 * A fresh connection whose target has a 4 KiB receive posted, then the
 * initiator's send from iov. Returns the post's result, or DAT_ABORT when
 * the connection did not come up (the caller still calls conn_down).
 */
static DAT_RETURN send_case_start(struct conn *c, struct ft_mr *rbuf,
                                  DAT_LMR_TRIPLET *iov)
{
	DAT_LMR_TRIPLET r;
	DAT_DTO_COOKIE ck;

	FT_DAT_OK(
	        ft_mr_create(&tgt, tgt.pz, 4096, DAT_MEM_PRIV_ALL_FLAG, rbuf));
	if (!conn_up(c, tgt.pz))
		return DAT_ABORT;
	r = ft_lmr_iov(rbuf, 0, 4096);
	ck.as_64 = 1;
	FT_DAT_CHECK(dat_ep_post_recv(c->t.ep, 1, &r, ck,
	                              DAT_COMPLETION_DEFAULT_FLAG));
	ck.as_64 = 2;
	return dat_ep_post_send(c->i.ep, 1, iov, ck,
	                        DAT_COMPLETION_DEFAULT_FLAG);
}

/* A send that must fail locally; the peer must receive nothing. */
static void local_send_case(const char *name, DAT_LMR_TRIPLET *iov)
{
	struct conn c;
	struct ft_mr rbuf;
	DAT_EVENT ev;
	DAT_RETURN ret;

	ret = send_case_start(&c, &rbuf, iov);
	if (ret != DAT_ABORT) {
		expect_local_failure(name, ret, c.i.req_evd,
		                     DAT_PROTECTION_VIOLATION,
		                     DAT_PRIVILEGES_VIOLATION);
		memset(&ev, 0, sizeof(ev));
		ret = ft_wait(c.t.recv_evd, 200000, &ev);
		FT_CHECK(ret != DAT_SUCCESS ||
		                 ev.event_data.dto_completion_event_data
		                                 .status != DAT_DTO_SUCCESS,
		         "%s: the peer received nothing", name);
	}
	conn_down(&c);
	ft_mr_free(&rbuf);
}

/*
 * Local read is implied, as on InfiniBand (which has no such right to
 * withhold): OFED's consumers, dtest among them, send from LMRs registered
 * with local write only. Such a send must succeed and deliver its bytes.
 */
static void send_without_local_read_case(struct ft_mr *wo)
{
	const char *name = "send from an LMR with local write only";
	struct conn c;
	struct ft_mr rbuf;
	DAT_LMR_TRIPLET t;
	DAT_EVENT ev;
	DAT_RETURN ret;

	ft_fill(wo->buf, 64, 9);
	t = ft_lmr_iov(wo, 0, 64);
	ret = send_case_start(&c, &rbuf, &t);
	if (ret == DAT_ABORT)
		goto out;
	FT_CHECK(ret == DAT_SUCCESS, "%s: posted: %s", name, ft_ret_str(ret));
	if (ret != DAT_SUCCESS)
		goto out;
	ret = ft_wait(c.i.req_evd, FT_TIMEOUT_US, &ev);
	FT_CHECK(ret == DAT_SUCCESS &&
	                 ev.event_number == DAT_DTO_COMPLETION_EVENT &&
	                 ev.event_data.dto_completion_event_data.status ==
	                         DAT_DTO_SUCCESS,
	         "%s: completes with success: %s", name,
	         ret == DAT_SUCCESS ? ft_event_desc(&ev) : ft_ret_str(ret));
	ret = ft_wait(c.t.recv_evd, FT_TIMEOUT_US, &ev);
	FT_CHECK(ret == DAT_SUCCESS &&
	                 ev.event_data.dto_completion_event_data.status ==
	                         DAT_DTO_SUCCESS &&
	                 ev.event_data.dto_completion_event_data
	                                 .transfered_length == 64 &&
	                 ft_pattern_mismatch(rbuf.buf, 64, 9) < 0,
	         "%s: the peer received the 64 bytes: %s", name,
	         ret == DAT_SUCCESS ? ft_event_desc(&ev) : ft_ret_str(ret));
out:
	conn_down(&c);
	ft_mr_free(&rbuf);
}

static void check_local(void)
{
	DAT_PZ_HANDLE pz2;
	struct ft_mr other_pz, wo, ro;
	struct conn c;
	DAT_LMR_TRIPLET t;
	DAT_RMR_TRIPLET r;
	DAT_DTO_COOKIE ck;
	struct gmr g;
	DAT_RETURN ret;

	FT_DAT_OK(dat_pz_create(ini.ia, &pz2));
	FT_DAT_OK(ft_mr_create(&ini, pz2, 4096, DAT_MEM_PRIV_ALL_FLAG,
	                       &other_pz));
	FT_DAT_OK(ft_mr_create(&ini, ini.pz, 4096,
	                       DAT_MEM_PRIV_LOCAL_WRITE_FLAG, &wo));
	FT_DAT_OK(ft_mr_create(&ini, ini.pz, 4096, DAT_MEM_PRIV_LOCAL_READ_FLAG,
	                       &ro));
	gmr_create(&ini, ini.pz, DAT_MEM_PRIV_ALL_FLAG, &g);

	t = ft_lmr_iov(&other_pz, 0, 64);
	local_send_case("send from an LMR of another PZ", &t);
	send_without_local_read_case(&wo);
	t.virtual_address = (DAT_VADDR)(uintptr_t)g.reg + page - 32;
	t.segment_length = 64;
	t.lmr_context = g.lctx;
	local_send_case("send from a segment crossing the LMR's end", &t);
	t.virtual_address = (DAT_VADDR)(uintptr_t)g.reg;
	t.segment_length = 64;
	t.lmr_context = g.lctx ^ 0x5a5a5a5a;
	local_send_case("send naming an unknown lmr_context", &t);

	/* A receive into memory without local write. */
	if (conn_up(&c, tgt.pz)) {
		t = ft_lmr_iov(&ro, 0, 64);
		ck.as_64 = 3;
		ret = dat_ep_post_recv(c.i.ep, 1, &t, ck,
		                       DAT_COMPLETION_DEFAULT_FLAG);
		if (ret == DAT_SUCCESS) {
			struct ft_mr s;
			DAT_LMR_TRIPLET st;

			FT_DAT_OK(ft_mr_create(&tgt, tgt.pz, 64,
			                       DAT_MEM_PRIV_ALL_FLAG, &s));
			ft_fill(s.buf, 64, 3);
			st = ft_lmr_iov(&s, 0, 64);
			ck.as_64 = 4;
			(void)dat_ep_post_send(c.t.ep, 1, &st, ck,
			                       DAT_COMPLETION_DEFAULT_FLAG);
			expect_local_failure("receive into an LMR without "
			                     "local write",
			                     ret, c.i.recv_evd,
			                     DAT_PRIVILEGES_VIOLATION,
			                     DAT_PROTECTION_VIOLATION);
			FT_CHECK(ft_pattern_mismatch(ro.buf, 64, 3) >= 0,
			         "the read-only LMR was not written");
			conn_down(&c);
			ft_mr_free(&s);
		} else {
			expect_local_failure("receive into an LMR without "
			                     "local write",
			                     ret, c.i.recv_evd,
			                     DAT_PRIVILEGES_VIOLATION,
			                     DAT_PROTECTION_VIOLATION);
			conn_down(&c);
		}
	} else {
		conn_down(&c);
	}

	/* RDMA Read into memory without local write. */
	if (conn_up(&c, tgt.pz)) {
		struct ft_mr src;

		FT_DAT_OK(ft_mr_create(&tgt, tgt.pz, 4096,
		                       DAT_MEM_PRIV_ALL_FLAG, &src));
		ft_fill(src.buf, 64, 4);
		t = ft_lmr_iov(&ro, 0, 64);
		r = ft_rmr_iov(&src, 0, 64);
		ck.as_64 = 5;
		ret = dat_ep_post_rdma_read(c.i.ep, 1, &t, ck, &r,
		                            DAT_COMPLETION_DEFAULT_FLAG);
		expect_local_failure("RDMA read into an LMR without local "
		                     "write",
		                     ret, c.i.req_evd, DAT_PRIVILEGES_VIOLATION,
		                     DAT_PROTECTION_VIOLATION);
		usleep(50000);
		FT_CHECK(ft_pattern_mismatch(ro.buf, 64, 4) >= 0,
		         "the read-only LMR was not written by the read");
		conn_down(&c);
		ft_mr_free(&src);
	} else {
		conn_down(&c);
	}

	gmr_free(&g);
	ft_mr_free(&ro);
	ft_mr_free(&wo);
	ft_mr_free(&other_pz);
	FT_DAT_CHECK(dat_pz_free(pz2));
}

/*
 * The next request completion is cookie's, request n (of kind s, r or w)
 * after the refused one: true when it succeeded.
 */
static bool next_request(struct conn *c, uint64_t cookie, const char *name,
                         int n, char kind)
{
	DAT_EVENT ev;
	DAT_RETURN w;

	memset(&ev, 0, sizeof(ev));
	w = ft_wait(c->i.req_evd, FT_TIMEOUT_US, &ev);
	FT_CHECK(w == DAT_SUCCESS &&
	                 ev.event_number == DAT_DTO_COMPLETION_EVENT &&
	                 ev.event_data.dto_completion_event_data.user_cookie
	                                 .as_64 == cookie,
	         "%s: request %d after it (%c) completes next: %s", name, n,
	         kind, w == DAT_SUCCESS ? ft_event_desc(&ev) : ft_ret_str(w));
	return w == DAT_SUCCESS &&
	       ev.event_data.dto_completion_event_data.status ==
	               DAT_DTO_SUCCESS;
}

/*
 * An RDMA operation the target must refuse.  The whole 3-page target
 * allocation holds a pattern before and must hold it after; for a Read
 * the initiator's buffer must be unchanged too.
 */
static void remote_case(const char *name, bool write, struct gmr *g,
                        DAT_RMR_TRIPLET r, DAT_PZ_HANDLE tpz)
{
	struct conn c;
	struct ft_mr local;
	DAT_LMR_TRIPLET l;
	DAT_DTO_COOKIE ck;
	DAT_EVENT ev;
	/* After it: send, read, one of its kind, send, read. */
	const char *kinds = write ? "srwsr" : "srrsr";
	DAT_RETURN ret, w;
	bool sent = false;
	int i, nposted = 0;

	ft_fill(g->base, 3 * page, 500);
	FT_DAT_OK(ft_mr_create(&ini, ini.pz, r.segment_length,
	                       DAT_MEM_PRIV_ALL_FLAG, &local));
	ft_fill(local.buf, r.segment_length, 600);
	if (!conn_up(&c, tpz))
		goto out;
	l = ft_lmr_iov(&local, 0, r.segment_length);
	ck.as_64 = 0x77;
	if (write)
		ret = dat_ep_post_rdma_write(c.i.ep, 1, &l, ck, &r,
		                             DAT_COMPLETION_DEFAULT_FLAG);
	else
		ret = dat_ep_post_rdma_read(c.i.ep, 1, &l, ck, &r,
		                            DAT_COMPLETION_DEFAULT_FLAG);
	if (ret != DAT_SUCCESS) {
		FT_CHECK(false,
		         "%s: the post = %s (the target must refuse "
		         "it, the initiator cannot know)",
		         name, ft_ret_str(ret));
		goto out;
	}
	/*
	 * Requests behind it, which the fabric may send before the refusal
	 * comes back, unless the connection has ended already: sends, RDMA
	 * Reads of the same remote buffer, and a second op of its kind. On
	 * tcp the target ends the connection at the first refusal and
	 * never answers the rest; reads and acknowledged writes wait in
	 * other queues of tcp's than sends, and tcp flushes its queues one
	 * after the other.
	 */
	for (i = 0; kinds[i] != '\0'; i++) {
		ck.as_64 = 0x78 + (uint64_t)i;
		l = ft_lmr_iov(&local, 0,
		               kinds[i] == 's' ? 8 : r.segment_length);
		if (kinds[i] == 's')
			ret = dat_ep_post_send(c.i.ep, 1, &l, ck,
			                       DAT_COMPLETION_DEFAULT_FLAG);
		else if (kinds[i] == 'r')
			ret = dat_ep_post_rdma_read(
			        c.i.ep, 1, &l, ck, &r,
			        DAT_COMPLETION_DEFAULT_FLAG);
		else
			ret = dat_ep_post_rdma_write(
			        c.i.ep, 1, &l, ck, &r,
			        DAT_COMPLETION_DEFAULT_FLAG);
		FT_CHECK(ret == DAT_SUCCESS ||
		                 DAT_GET_TYPE(ret) == DAT_INVALID_STATE,
		         "%s: request %d after it (%c) = %s", name, i + 1,
		         kinds[i], ft_ret_str(ret));
		if (ret != DAT_SUCCESS)
			break;
		nposted++;
	}
	memset(&ev, 0, sizeof(ev));
	w = ft_wait(c.i.req_evd, FT_TIMEOUT_US, &ev);
	FT_CHECK(w == DAT_SUCCESS &&
	                 ev.event_number == DAT_DTO_COMPLETION_EVENT &&
	                 ev.event_data.dto_completion_event_data.user_cookie
	                                 .as_64 == 0x77 &&
	                 ev.event_data.dto_completion_event_data.status !=
	                         DAT_DTO_SUCCESS,
	         "%s: completes in error: %s", name,
	         w == DAT_SUCCESS ? ft_event_desc(&ev) : ft_ret_str(w));
	if (w == DAT_SUCCESS &&
	    ev.event_data.dto_completion_event_data.status !=
	            DAT_DTO_ERR_REMOTE_ACCESS &&
	    ev.event_data.dto_completion_event_data.status != DAT_DTO_SUCCESS)
		FT_WARN("%s: status %s, DAT_DTO_ERR_REMOTE_ACCESS expected",
		        name,
		        ft_dto_status_str(
		                ev.event_data.dto_completion_event_data
		                        .status));
	/*
	 * They complete after it, in posting order, as on InfiniBand, none
	 * successfully where the refusal ended the connection at once (tcp).
	 * sockets sends them before the target's refusal comes back: they
	 * arrive, and a read succeeds where the buffer allows reads.
	 */
	for (i = 0; i < nposted; i++)
		sent |= next_request(&c, 0x78 + (uint64_t)i, name, i + 1,
		                     kinds[i]);
	/* Then the connection ends, as a queue pair in error. */
	for (i = 0; i < 100 && ft_ep_state(c.i.ep) == DAT_EP_STATE_CONNECTED;
	     i++)
		usleep(10000);
	FT_CHECK(ft_ep_state(c.i.ep) != DAT_EP_STATE_CONNECTED,
	         "%s: the connection ended within 1 s of the refusal (%s)",
	         name, ft_ep_state_str((DAT_EP_STATE)ft_ep_state(c.i.ep)));
	if (sent && pipelined)
		FT_WARN("%s: requests posted behind it went through before "
		        "the refusal came back",
		        name);
	else
		FT_CHECK(!sent,
		         "%s: none of the %d requests after it succeeded", name,
		         nposted);
	if (ft_ep_state(c.i.ep) != DAT_EP_STATE_CONNECTED) {
		l = ft_lmr_iov(&local, 0, 8);
		ck.as_64 = 0x7f;
		ret = dat_ep_post_send(c.i.ep, 1, &l, ck,
		                       DAT_COMPLETION_DEFAULT_FLAG);
		FT_CHECK(DAT_GET_TYPE(ret) == DAT_INVALID_STATE,
		         "%s: a send posted after the end is refused: %s", name,
		         ft_ret_str(ret));
	}
	FT_CHECK(ft_pattern_mismatch(g->base, 3 * page, 500) < 0,
	         "%s: every target byte unchanged", name);
	if (!write)
		FT_CHECK(ft_pattern_mismatch(local.buf, r.segment_length, 600) <
		                 0,
		         "%s: the initiator's buffer unchanged", name);
out:
	conn_down(&c);
	ft_mr_free(&local);
}

static DAT_RMR_TRIPLET rt(struct gmr *g, long off, size_t len,
                          DAT_RMR_CONTEXT ctx)
{
	DAT_RMR_TRIPLET r;

	r.virtual_address = (DAT_VADDR)(uintptr_t)g->reg + (DAT_VADDR)off;
	r.segment_length = (DAT_SEG_LENGTH)len;
	r.rmr_context = ctx;
	return r;
}

/* Bind an RMR on a connected target EP; returns its context or 0. */
static DAT_RMR_CONTEXT rmr_bind_wait(DAT_RMR_HANDLE rmr, struct gmr *g,
                                     size_t off, size_t len,
                                     DAT_MEM_PRIV_FLAGS priv, struct ft_ep *ep)
{
	DAT_LMR_TRIPLET w;
	DAT_RMR_CONTEXT ctx = 0;
	DAT_RMR_COOKIE ck;
	DAT_EVENT ev;

	w.virtual_address = (DAT_VADDR)(uintptr_t)g->reg + off;
	w.segment_length = (DAT_SEG_LENGTH)len;
	w.lmr_context = g->lctx;
	ck.as_64 = 0xb1;
	FT_DAT_CHECK(dat_rmr_bind(rmr, g->lmr, &w, priv, DAT_VA_TYPE_VA, ep->ep,
	                          ck, DAT_COMPLETION_DEFAULT_FLAG, &ctx));
	ft_expect_event(ep->req_evd, FT_TIMEOUT_US,
	                DAT_RMR_BIND_COMPLETION_EVENT, NULL, &ev,
	                "RMR bind completes");
	return ctx;
}

static void check_remote(void)
{
	struct gmr all, noremote, pz2mem;
	DAT_PZ_HANDLE pz2;
	DAT_RMR_HANDLE rmr;
	DAT_RMR_CONTEXT ctx, old;
	struct conn binder;

	gmr_create(&tgt, tgt.pz, DAT_MEM_PRIV_ALL_FLAG, &all);
	gmr_create(&tgt, tgt.pz,
	           DAT_MEM_PRIV_LOCAL_READ_FLAG | DAT_MEM_PRIV_LOCAL_WRITE_FLAG,
	           &noremote);

	/* Sanity: the same path succeeds within bounds and rights. */
	{
		struct conn c;
		struct ft_mr l;
		DAT_LMR_TRIPLET lt;
		DAT_RMR_TRIPLET r = rt(&all, 0, 64, all.rctx);
		DAT_DTO_COOKIE ck;

		FT_DAT_OK(ft_mr_create(&ini, ini.pz, 64, DAT_MEM_PRIV_ALL_FLAG,
		                       &l));
		ft_fill(l.buf, 64, 42);
		if (conn_up(&c, tgt.pz)) {
			lt = ft_lmr_iov(&l, 0, 64);
			ck.as_64 = 1;
			FT_DAT_CHECK(dat_ep_post_rdma_write(
			        c.i.ep, 1, &lt, ck, &r,
			        DAT_COMPLETION_DEFAULT_FLAG));
			ft_expect_dto(c.i.req_evd, FT_TIMEOUT_US, c.i.ep,
			              DAT_DTO_RDMA_WRITE, 1, DAT_DTO_SUCCESS,
			              64, NULL,
			              "control: an allowed RDMA write");
			FT_CHECK(ft_poll_pattern(all.reg, 64, 42, 5000000),
			         "control: it lands");
		}
		conn_down(&c);
		ft_mr_free(&l);
	}

	remote_case("RDMA write through an LMR without remote write", true,
	            &noremote, rt(&noremote, 0, 64, noremote.rctx), tgt.pz);
	remote_case("RDMA read through an LMR without remote read", false,
	            &noremote, rt(&noremote, 0, 64, noremote.rctx), tgt.pz);
	remote_case("RDMA write across the end of the LMR", true, &all,
	            rt(&all, (long)page - 32, 64, all.rctx), tgt.pz);
	remote_case("RDMA write entirely after the LMR", true, &all,
	            rt(&all, (long)page + 64, 64, all.rctx), tgt.pz);
	remote_case("RDMA write starting before the LMR", true, &all,
	            rt(&all, -32, 64, all.rctx), tgt.pz);
	remote_case("RDMA read across the end of the LMR", false, &all,
	            rt(&all, (long)page - 32, 64, all.rctx), tgt.pz);
	remote_case("RDMA write with a made-up rmr_context", true, &all,
	            rt(&all, 0, 64, all.rctx ^ 0x00a5a5a5), tgt.pz);

	/* RMR windows, bound on a target EP of their own connection. */
	FT_DAT_OK(dat_rmr_create(tgt.pz, &rmr));
	if (conn_up(&binder, tgt.pz)) {
		ctx = rmr_bind_wait(rmr, &all, 1024, 1024,
		                    DAT_MEM_PRIV_REMOTE_WRITE_FLAG |
		                            DAT_MEM_PRIV_REMOTE_READ_FLAG,
		                    &binder.t);
		remote_case("RDMA write across the end of an RMR window", true,
		            &all, rt(&all, 2048 - 32, 64, ctx), tgt.pz);
		remote_case("RDMA write before the start of an RMR window",
		            true, &all, rt(&all, 1024 - 32, 64, ctx), tgt.pz);
		ctx = rmr_bind_wait(rmr, &all, 1024, 1024,
		                    DAT_MEM_PRIV_REMOTE_READ_FLAG, &binder.t);
		remote_case("RDMA write through a read-only RMR window", true,
		            &all, rt(&all, 1024, 64, ctx), tgt.pz);
		old = ctx;
		(void)rmr_bind_wait(rmr, &all, 0, 0,
		                    DAT_MEM_PRIV_REMOTE_READ_FLAG, &binder.t);
		remote_case("RDMA read through an unbound RMR's old context",
		            false, &all, rt(&all, 1024, 64, old), tgt.pz);
		ctx = rmr_bind_wait(rmr, &all, 1024, 1024,
		                    DAT_MEM_PRIV_REMOTE_WRITE_FLAG, &binder.t);
		FT_DAT_CHECK(dat_rmr_free(rmr));
		rmr = DAT_HANDLE_NULL;
		remote_case("RDMA write through a freed RMR's context", true,
		            &all, rt(&all, 1024, 64, ctx), tgt.pz);
	}
	conn_down(&binder);
	if (rmr != DAT_HANDLE_NULL)
		FT_DAT_CHECK(dat_rmr_free(rmr));

	/* A context of an LMR in another PZ than the target EP's. */
	FT_DAT_OK(dat_pz_create(tgt.ia, &pz2));
	gmr_create(&tgt, pz2, DAT_MEM_PRIV_ALL_FLAG, &pz2mem);
	remote_case("RDMA write through an LMR of another PZ than the target "
	            "EP's",
	            true, &pz2mem, rt(&pz2mem, 0, 64, pz2mem.rctx), tgt.pz);

	/* A freed LMR's context. */
	{
		DAT_RMR_CONTEXT dead = pz2mem.rctx;

		FT_DAT_CHECK(dat_lmr_free(pz2mem.lmr));
		pz2mem.lmr = DAT_HANDLE_NULL;
		remote_case("RDMA write through a freed LMR's context", true,
		            &pz2mem, rt(&pz2mem, 0, 64, dead), pz2);
	}
	gmr_free(&pz2mem);
	FT_DAT_CHECK(dat_pz_free(pz2));
	gmr_free(&noremote);
	gmr_free(&all);
}

/* The cookies of two receive completions on evd, by wait or by dequeue. */
static int two_recvs(DAT_EVD_HANDLE evd, bool wait, uint64_t got[2])
{
	uint64_t end = ft_now_us() + FT_TIMEOUT_US;
	DAT_EVENT ev;
	DAT_RETURN ret;
	int n = 0;

	while (n < 2 && ft_now_us() < end) {
		if (wait)
			ret = ft_wait(evd, FT_TIMEOUT_US, &ev);
		else
			ret = dat_evd_dequeue(evd, &ev);
		if (ret != DAT_SUCCESS) {
			if (wait)
				break;
			usleep(1000);
			continue;
		}
		if (ev.event_number == DAT_DTO_COMPLETION_EVENT &&
		    ev.event_data.dto_completion_event_data.status ==
		            DAT_DTO_SUCCESS)
			got[n++] = ev.event_data.dto_completion_event_data
			                   .user_cookie.as_64;
	}
	return n;
}

/*
 * One receive EVD serving target EPs of two PZs (a PZ is a libfabric
 * domain: the EVD reads a CQ in each): receives of both arrive through
 * dat_evd_wait and dat_evd_dequeue, and an RDMA write through the second
 * PZ's EP lands in that PZ's memory.
 */
static void check_shared_evd(void)
{
	const char *how[2] = {"dat_evd_wait", "dat_evd_dequeue"};
	struct conn a, b;
	struct ft_mr ra, rb, sa, sb;
	DAT_PZ_HANDLE pz2;
	DAT_EP_PARAM p;
	DAT_EP_ATTR attr;
	DAT_LMR_TRIPLET l;
	DAT_RMR_TRIPLET r;
	DAT_DTO_COOKIE ck;
	uint64_t end;
	int round;

	FT_DAT_OK(dat_pz_create(tgt.ia, &pz2));
	FT_DAT_OK(ft_mr_create(&tgt, tgt.pz, 4096, DAT_MEM_PRIV_ALL_FLAG, &ra));
	FT_DAT_OK(ft_mr_create(&tgt, pz2, 4096, DAT_MEM_PRIV_ALL_FLAG, &rb));
	FT_DAT_OK(ft_mr_create(&ini, ini.pz, 4096, DAT_MEM_PRIV_ALL_FLAG, &sa));
	FT_DAT_OK(ft_mr_create(&ini, ini.pz, 4096, DAT_MEM_PRIV_ALL_FLAG, &sb));
	memset(&b, 0, sizeof(b));
	if (!conn_up(&a, tgt.pz))
		goto out_a;
	/* b's target EP is in pz2 and receives on a's receive EVD. */
	ft_ep_attr_default(&ini, &attr);
	FT_DAT_OK(ft_ep_create(&ini, ini.pz, &attr, 64, &b.i));
	FT_DAT_OK(ft_ep_create(&tgt, pz2, &attr, 64, &b.t));
	memset(&p, 0, sizeof(p));
	p.recv_evd_handle = a.t.recv_evd;
	FT_DAT_CHECK(dat_ep_modify(b.t.ep, DAT_EP_FIELD_RECV_EVD_HANDLE, &p));
	FT_DAT_CHECK(dat_evd_free(b.t.recv_evd));
	b.t.recv_evd = DAT_HANDLE_NULL;
	b.up = ft_connect_local(&ini, &b.i, &tgt, &b.t, &L);
	if (!b.up)
		goto out;
	for (round = 0; round < 2; round++) {
		uint64_t got[2] = {0, 0};
		int n;

		l = ft_lmr_iov(&ra, 0, 64);
		ck.as_64 = 0xa0 + (uint64_t)round;
		FT_DAT_CHECK(dat_ep_post_recv(a.t.ep, 1, &l, ck,
		                              DAT_COMPLETION_DEFAULT_FLAG));
		l = ft_lmr_iov(&rb, 0, 64);
		ck.as_64 = 0xb0 + (uint64_t)round;
		FT_DAT_CHECK(dat_ep_post_recv(b.t.ep, 1, &l, ck,
		                              DAT_COMPLETION_DEFAULT_FLAG));
		l = ft_lmr_iov(&sa, 0, 64);
		ck.as_64 = 1;
		FT_DAT_CHECK(dat_ep_post_send(a.i.ep, 1, &l, ck,
		                              DAT_COMPLETION_DEFAULT_FLAG));
		l = ft_lmr_iov(&sb, 0, 64);
		ck.as_64 = 2;
		FT_DAT_CHECK(dat_ep_post_send(b.i.ep, 1, &l, ck,
		                              DAT_COMPLETION_DEFAULT_FLAG));
		ft_expect_dto(a.i.req_evd, FT_TIMEOUT_US, a.i.ep, DAT_DTO_SEND,
		              1, DAT_DTO_SUCCESS, 64, NULL, "send in PZ 1");
		ft_expect_dto(b.i.req_evd, FT_TIMEOUT_US, b.i.ep, DAT_DTO_SEND,
		              2, DAT_DTO_SUCCESS, 64, NULL, "send to PZ 2");
		n = two_recvs(a.t.recv_evd, round == 0, got);
		FT_CHECK(n == 2 && ((got[0] == 0xa0 + (uint64_t)round &&
		                     got[1] == 0xb0 + (uint64_t)round) ||
		                    (got[1] == 0xa0 + (uint64_t)round &&
		                     got[0] == 0xb0 + (uint64_t)round)),
		         "one EVD for EPs of two PZs: both receives by %s (%d: "
		         "%#llx %#llx)",
		         how[round], n, (unsigned long long)got[0],
		         (unsigned long long)got[1]);
	}
	/* An RDMA write through pz2's EP into pz2's memory lands. */
	ft_fill(sb.buf, 64, 700);
	l = ft_lmr_iov(&sb, 0, 64);
	r = ft_rmr_iov(&rb, 128, 64);
	ck.as_64 = 3;
	FT_DAT_CHECK(dat_ep_post_rdma_write(b.i.ep, 1, &l, ck, &r,
	                                    DAT_COMPLETION_DEFAULT_FLAG));
	ft_expect_dto(b.i.req_evd, FT_TIMEOUT_US, b.i.ep, DAT_DTO_RDMA_WRITE, 3,
	              DAT_DTO_SUCCESS, 64, NULL, "RDMA write in PZ 2");
	end = ft_now_us() + FT_TIMEOUT_US;
	while (ft_pattern_mismatch((char *)rb.buf + 128, 64, 700) >= 0 &&
	       ft_now_us() < end)
		usleep(1000);
	FT_CHECK(ft_pattern_mismatch((char *)rb.buf + 128, 64, 700) < 0,
	         "RDMA write through an EP of a second PZ lands in its memory");
out:
	(void)dat_ep_disconnect(b.i.ep, DAT_CLOSE_ABRUPT_FLAG);
	(void)dat_ep_disconnect(b.t.ep, DAT_CLOSE_ABRUPT_FLAG);
	usleep(20000);
	ft_ep_free(&b.t);
	ft_ep_free(&b.i);
	conn_down(&a);
out_a:
	ft_mr_free(&sb);
	ft_mr_free(&sa);
	ft_mr_free(&rb);
	ft_mr_free(&ra);
	FT_DAT_CHECK(dat_pz_free(pz2));
}

int main(int argc, char **argv)
{
	ft_init(argc, argv, "dat_protect",
	        "protection: wrong PZ, missing rights, out-of-range and "
	        "revoked RDMA; target bytes unchanged",
	        NULL);
	page = (size_t)sysconf(_SC_PAGESIZE);
	ft_ia_open(ft_opts.ia_name, &ini);
	ft_ia_open(ft_opts.ia_name, &tgt);
	ft_check_libs();
	{
		const char *prov = ft_provider_attr(&ini, "DAT_OFI_PROVIDER");

		pipelined = prov != NULL && strcmp(prov, "sockets") == 0;
	}
	FT_DAT_OK(ft_listen(&tgt, &L));
	check_local();
	check_remote();
	check_shared_evd();
	ft_listener_free(&L);
	ft_ia_close(&tgt);
	ft_ia_close(&ini);
	return ft_finish();
}
