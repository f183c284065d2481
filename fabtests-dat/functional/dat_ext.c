/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * dat_ext: the InfiniBand extension (dat_ib_extensions.h) through
 * dat_extension_op.  The IA attributes (DAT_EXTENSION_IB, version 209,
 * the named attributes of what the fabric offers: on libfabric tcp write
 * with immediate data and the counters, on sockets the atomics as well);
 * RDMA Write with immediate data of sizes 0 .. 1 MiB and with several
 * segments, each taking the target's next receive in order with the
 * sends between them (DAT_IB_DTO_EVENTs on both sides, the data in place
 * when the target sees it), suppressed, with a bad local segment, and its
 * post errors; 64-bit fetch-and-add and compare-and-swap (the old value in
 * the local LMR, the target changed, or DAT_MODEL_NOT_SUPPORTED where the
 * attribute is absent); the counters of an IA, an EP and an EVD (nothing
 * counted while stopped, posts and bytes, completions, CM events, one
 * counter or all, reset, print); dat_ib_open_query / dat_ib_close_query;
 * UD and the collectives answer DAT_MODEL_NOT_SUPPORTED, an unknown
 * operation DAT_NOT_IMPLEMENTED.  Single process, two IAs.
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shared.h"

#include <dat2/dat_ib_extensions.h>

static struct ft_ia ta, ra; /* transmitting and receiving sides */
static struct ft_listener L;
static struct ft_ep tx, rx;
static struct ft_mr src, dst;
static size_t bufsz;

/* What a fabric must offer, by libfabric provider (DAT_OFI_PROVIDER). */
static const struct {
	const char *prov;
	bool immed, atomics;
} expect[] = {
        {"tcp", true, false},
        {"sockets", true, true},
};

static bool attr_true(const struct ft_ia *ia, const char *name)
{
	const char *v = ft_provider_attr(ia, name);

	return v != NULL && strcmp(v, "TRUE") == 0;
}

static DAT_DTO_COOKIE ck(uint64_t v)
{
	DAT_DTO_COOKIE c;

	c.as_64 = v;
	return c;
}

static DAT_IB_EXTENSION_EVENT_DATA *ext_of(DAT_EVENT *ev)
{
	return (DAT_IB_EXTENSION_EVENT_DATA *)(void *)ev->event_extension_data;
}

/*
 * The next event of evd is a DAT_IB_DTO_EVENT of ep with type, operation,
 * cookie, status and (for a success, when len >= 0) length.
 */
static bool expect_ext(DAT_EVD_HANDLE evd, DAT_EP_HANDLE ep,
                       DAT_IB_EXT_TYPE type, DAT_IB_DTOS op, uint64_t cookie,
                       DAT_DTO_COMPLETION_STATUS status, long len,
                       DAT_EVENT *evp, const char *what)
{
	const DAT_DTO_COMPLETION_EVENT_DATA *d;
	DAT_IB_EXTENSION_EVENT_DATA *x;
	DAT_EVENT ev;
	DAT_RETURN ret;

	memset(&ev, 0, sizeof(ev));
	ret = ft_wait(evd, FT_TIMEOUT_US, &ev);
	if (evp != NULL)
		*evp = ev;
	if (ret != DAT_SUCCESS)
		return FT_CHECK(false, "%s: dat_evd_wait = %s", what,
		                ft_ret_str(ret));
	d = &ev.event_data.dto_completion_event_data;
	x = ext_of(&ev);
	return FT_CHECK(
	        ev.event_number == (DAT_EVENT_NUMBER)DAT_IB_DTO_EVENT &&
	                d->ep_handle == ep && x->type == type &&
	                d->operation == (DAT_DTOS)op &&
	                d->user_cookie.as_64 == cookie && d->status == status &&
	                x->status == (status == DAT_DTO_SUCCESS
	                                      ? DAT_OP_SUCCESS
	                                      : DAT_IB_OP_ERR) &&
	                (len < 0 || status != DAT_DTO_SUCCESS ||
	                 (long)d->transfered_length == len),
	        "%s: event %#x type %d op %#x cookie %#" PRIx64
	        " status %s len %llu (want type %d op %#x cookie %#" PRIx64
	        " %s len %ld)",
	        what, (unsigned)ev.event_number, (int)x->type,
	        (unsigned)d->operation, (uint64_t)d->user_cookie.as_64,
	        ft_dto_status_str(d->status),
	        (unsigned long long)d->transfered_length, (int)type,
	        (unsigned)op, cookie, ft_dto_status_str(status), len);
}

static void post_recv(size_t off, size_t len, uint64_t cookie)
{
	DAT_LMR_TRIPLET t = ft_lmr_iov(&dst, off, len);

	FT_DAT_OK(dat_ep_post_recv(rx.ep, 1, &t, ck(cookie),
	                           DAT_COMPLETION_DEFAULT_FLAG));
}

/* The receive area of the target buffer; RDMA goes to the rest. */
#define RECV_AREA ((size_t)64 << 10)
#define RECV_SLOT ((size_t)4096)

/* ---- attributes ------------------------------------------------------------
 */

static bool have_immed, have_fadd, have_cswap;

static void check_attrs(void)
{
	const char *prov = ft_provider_attr(&ta, "DAT_OFI_PROVIDER");
	size_t i;

	FT_CHECK(ta.attr.extension_supported == DAT_EXTENSION_IB,
	         "dat_ia_query: extension_supported is DAT_EXTENSION_IB (%d)",
	         (int)ta.attr.extension_supported);
	FT_CHECK(ta.attr.extension_version == DAT_IB_EXTENSION_VERSION,
	         "dat_ia_query: extension_version is %d (%d)",
	         DAT_IB_EXTENSION_VERSION, (int)ta.attr.extension_version);
	FT_CHECK(attr_true(&ta, DAT_IB_ATTR_COUNTERS),
	         "attribute " DAT_IB_ATTR_COUNTERS " is TRUE");
	FT_CHECK(ft_provider_attr(&ta, DAT_IB_ATTR_UD) == NULL,
	         "attribute " DAT_IB_ATTR_UD " is absent (no UD yet)");
	FT_CHECK(ft_provider_attr(&ta, "DAT_IB_TRANSPORT_MTU") != NULL &&
	                 atoi(ft_provider_attr(&ta, "DAT_IB_TRANSPORT_MTU")) >=
	                         256,
	         "attribute DAT_IB_TRANSPORT_MTU is there");
	have_immed = attr_true(&ta, DAT_IB_ATTR_IMMED_DATA);
	have_fadd = attr_true(&ta, DAT_IB_ATTR_FETCH_AND_ADD);
	have_cswap = attr_true(&ta, DAT_IB_ATTR_CMP_AND_SWAP);
	ft_log("fabric %s: immediate data %s, fetch-and-add %s, "
	       "compare-and-swap %s",
	       prov ? prov : "?", have_immed ? "yes" : "no",
	       have_fadd ? "yes" : "no", have_cswap ? "yes" : "no");
	for (i = 0; prov != NULL && i < sizeof(expect) / sizeof(expect[0]);
	     i++) {
		if (strcmp(prov, expect[i].prov) != 0)
			continue;
		if (expect[i].immed)
			FT_CHECK(have_immed,
			         "%s offers write with immediate data", prov);
		if (expect[i].atomics)
			FT_CHECK(have_fadd && have_cswap,
			         "%s offers fetch-and-add and compare-and-swap",
			         prov);
	}
}

/* ---- write with immediate data ------------------------------------------- */

static void write_imm_size(size_t len, uint32_t imm, uint64_t n)
{
	size_t roff = RECV_AREA, soff = 0;
	DAT_LMR_TRIPLET l = ft_lmr_iov(&src, soff, len);
	DAT_RMR_TRIPLET r = ft_rmr_iov(&dst, roff, len);
	DAT_EVENT ev;
	char what[96];

	ft_fill((char *)src.buf + soff, len, 1000 + n);
	memset((char *)dst.buf + roff, 0, len);
	post_recv(0, RECV_SLOT, 0x100 + n);
	snprintf(what, sizeof(what), "%zu-byte write with immediate %#x", len,
	         imm);
	FT_DAT_CHECK(dat_ib_post_rdma_write_immed(
	        tx.ep, len ? 1 : 0, len ? &l : NULL, ck(0x200 + n), &r, imm,
	        DAT_COMPLETION_DEFAULT_FLAG));
	if (expect_ext(rx.recv_evd, rx.ep, DAT_IB_RDMA_WRITE_IMMED_DATA,
	               DAT_IB_DTO_RECV_IMMED, 0x100 + n, DAT_DTO_SUCCESS,
	               (long)len, &ev, what)) {
		FT_CHECK(ext_of(&ev)->val.immed.data == imm,
		         "%s: the target's event holds the immediate data "
		         "(%#x)",
		         what, ext_of(&ev)->val.immed.data);
		FT_CHECK(ft_pattern_mismatch((char *)dst.buf + roff, len,
		                             1000 + n) < 0,
		         "%s: the data is in place when the target sees it",
		         what);
	}
	expect_ext(tx.req_evd, tx.ep, DAT_IB_RDMA_WRITE_IMMED,
	           DAT_IB_DTO_RDMA_WRITE_IMMED, 0x200 + n, DAT_DTO_SUCCESS,
	           (long)len, NULL, what);
}

static void check_write_imm(void)
{
	static const size_t sizes[] = {0, 1, 8, 4096, 65536, (size_t)1 << 20};
	DAT_LMR_TRIPLET segs[3], l;
	DAT_RMR_TRIPLET r;
	DAT_EVENT ev;
	uint64_t i;
	size_t k;

	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++)
		if (sizes[k] <= bufsz - RECV_AREA &&
		    sizes[k] <= ta.attr.max_rdma_size)
			write_imm_size(sizes[k], 0xa5000000u | (uint32_t)k, k);

	/* Three segments gathered into one remote range. */
	ft_fill(src.buf, 3000, 77);
	segs[0] = ft_lmr_iov(&src, 0, 1000);
	segs[1] = ft_lmr_iov(&src, 1000, 1000);
	segs[2] = ft_lmr_iov(&src, 2000, 1000);
	r = ft_rmr_iov(&dst, RECV_AREA, 3000);
	memset((char *)dst.buf + RECV_AREA, 0, 3000);
	post_recv(0, RECV_SLOT, 0x301);
	FT_DAT_CHECK(dat_ib_post_rdma_write_immed(
	        tx.ep, 3, segs, ck(0x302), &r, 3, DAT_COMPLETION_DEFAULT_FLAG));
	if (expect_ext(rx.recv_evd, rx.ep, DAT_IB_RDMA_WRITE_IMMED_DATA,
	               DAT_IB_DTO_RECV_IMMED, 0x301, DAT_DTO_SUCCESS, 3000,
	               NULL, "3-segment write with immediate data"))
		FT_CHECK(ft_pattern_mismatch((char *)dst.buf + RECV_AREA, 3000,
		                             77) < 0,
		         "3 segments: the 3000 bytes are in place in order");
	expect_ext(tx.req_evd, tx.ep, DAT_IB_RDMA_WRITE_IMMED,
	           DAT_IB_DTO_RDMA_WRITE_IMMED, 0x302, DAT_DTO_SUCCESS, 3000,
	           NULL, "3-segment write with immediate data");

	/*
	 * Sends and writes with immediate data take the receives in order:
	 * receive i gets message i, whichever kind it is.
	 */
	for (i = 0; i < 8; i++)
		post_recv(i * RECV_SLOT, RECV_SLOT, 0x400 + i);
	for (i = 0; i < 8; i++) {
		l = ft_lmr_iov(&src, i * 64, 64);
		ft_fill((char *)src.buf + i * 64, 64, 500 + i);
		if (i % 2 == 0) {
			FT_DAT_CHECK(
			        dat_ep_post_send(tx.ep, 1, &l, ck(0x500 + i),
			                         DAT_COMPLETION_SUPPRESS_FLAG));
		} else {
			r = ft_rmr_iov(&dst, RECV_AREA + i * 64, 64);
			FT_DAT_CHECK(dat_ib_post_rdma_write_immed(
			        tx.ep, 1, &l, ck(0x500 + i), &r, (uint32_t)i,
			        DAT_COMPLETION_SUPPRESS_FLAG));
		}
	}
	for (i = 0; i < 8; i++) {
		char what[64];

		snprintf(what, sizeof(what), "in order: receive %d", (int)i);
		if (i % 2 == 0) {
			if (ft_expect_dto(rx.recv_evd, FT_TIMEOUT_US, rx.ep,
			                  DAT_DTO_RECEIVE, 0x400 + i,
			                  DAT_DTO_SUCCESS, 64, NULL, what))
				FT_CHECK(
				        ft_pattern_mismatch(
				                (char *)dst.buf + i * RECV_SLOT,
				                64, 500 + i) < 0,
				        "%s holds send %d's bytes", what,
				        (int)i);
		} else if (expect_ext(rx.recv_evd, rx.ep,
		                      DAT_IB_RDMA_WRITE_IMMED_DATA,
		                      DAT_IB_DTO_RECV_IMMED, 0x400 + i,
		                      DAT_DTO_SUCCESS, 64, &ev, what)) {
			FT_CHECK(ext_of(&ev)->val.immed.data == i &&
			                 ft_pattern_mismatch((char *)dst.buf +
			                                             RECV_AREA +
			                                             i * 64,
			                                     64, 500 + i) < 0,
			         "%s: write %d's immediate data and bytes",
			         what, (int)i);
		}
	}
	/* Suppressed requests gave no event; a signalled one still does. */
	l = ft_lmr_iov(&src, 0, 8);
	post_recv(0, RECV_SLOT, 0x600);
	FT_DAT_CHECK(dat_ep_post_send(tx.ep, 1, &l, ck(0x601),
	                              DAT_COMPLETION_DEFAULT_FLAG));
	ft_expect_dto(tx.req_evd, FT_TIMEOUT_US, tx.ep, DAT_DTO_SEND, 0x601,
	              DAT_DTO_SUCCESS, 8, NULL,
	              "after suppressed writes with immediate data, the next "
	              "signalled send is the first request event");
	ft_expect_dto(rx.recv_evd, FT_TIMEOUT_US, rx.ep, DAT_DTO_RECEIVE, 0x600,
	              DAT_DTO_SUCCESS, 8, NULL, "its receive");

	/* A local segment of no LMR: the request completes in error. */
	l = ft_lmr_iov(&src, 0, 64);
	l.lmr_context ^= 0x5a5a0000u;
	r = ft_rmr_iov(&dst, RECV_AREA, 64);
	FT_DAT_CHECK(dat_ib_post_rdma_write_immed(
	        tx.ep, 1, &l, ck(0x700), &r, 1, DAT_COMPLETION_DEFAULT_FLAG));
	expect_ext(tx.req_evd, tx.ep, DAT_IB_RDMA_WRITE_IMMED,
	           DAT_IB_DTO_RDMA_WRITE_IMMED, 0x700,
	           DAT_DTO_ERR_LOCAL_PROTECTION, -1, NULL,
	           "a bad local segment: LOCAL_PROTECTION");
	ft_expect_empty(rx.recv_evd, "... and nothing arrives");

	/* Post errors. */
	l = ft_lmr_iov(&src, 0, 128);
	r = ft_rmr_iov(&dst, RECV_AREA, 64);
	FT_DAT_EXPECT(dat_ib_post_rdma_write_immed(tx.ep, 1, &l, ck(1), &r, 1,
	                                           DAT_COMPLETION_DEFAULT_FLAG),
	              DAT_LENGTH_ERROR);
	FT_DAT_EXPECT(dat_ib_post_rdma_write_immed(tx.ep, 1, &l, ck(1), NULL, 1,
	                                           DAT_COMPLETION_DEFAULT_FLAG),
	              DAT_INVALID_PARAMETER);
	FT_DAT_EXPECT(dat_ib_post_rdma_write_immed(tx.ep, 1, &l, ck(1), &r, 1,
	                                           0x80000),
	              DAT_INVALID_PARAMETER);
	FT_DAT_EXPECT(dat_ib_post_rdma_write_immed(ta.pz, 1, &l, ck(1), &r, 1,
	                                           DAT_COMPLETION_DEFAULT_FLAG),
	              DAT_INVALID_HANDLE);
	ft_expect_empty(tx.req_evd, "post errors made no event");
}

/* ---- atomics ---------------------------------------------------------------
 */

static void check_atomics(void)
{
	volatile uint64_t *target =
	        (volatile uint64_t *)(void *)((char *)dst.buf + RECV_AREA);
	volatile uint64_t *result = (volatile uint64_t *)src.buf;
	DAT_LMR_TRIPLET l = ft_lmr_iov(&src, 0, 8);
	DAT_RMR_TRIPLET r = ft_rmr_iov(&dst, RECV_AREA, 8);
	uint64_t want = 0x1000, i;

	if (!have_fadd) {
		FT_DAT_EXPECT(
		        dat_ib_post_fetch_and_add(tx.ep, 1, &l, ck(1), &r,
		                                  DAT_COMPLETION_DEFAULT_FLAG),
		        DAT_MODEL_NOT_SUPPORTED);
	} else {
		*target = want;
		for (i = 0; i < 5; i++) {
			*result = 0xdeadbeef;
			FT_DAT_CHECK(dat_ib_post_fetch_and_add(
			        tx.ep, 0x10 + i, &l, ck(0x800 + i), &r,
			        DAT_COMPLETION_DEFAULT_FLAG));
			if (expect_ext(tx.req_evd, tx.ep, DAT_IB_FETCH_AND_ADD,
			               DAT_IB_DTO_FETCH_ADD, 0x800 + i,
			               DAT_DTO_SUCCESS, 8, NULL,
			               "fetch-and-add"))
				FT_CHECK(*result == want,
				         "fetch-and-add %d: the old value "
				         "%#" PRIx64
				         " in the local LMR (%#" PRIx64 ")",
				         (int)i, want, (uint64_t)*result);
			want += 0x10 + i;
		}
		FT_CHECK(*target == want,
		         "fetch-and-add: the target holds the sum %#" PRIx64
		         " (%#" PRIx64 ")",
		         want, (uint64_t)*target);
		/* Wraps around as 64-bit unsigned. */
		FT_DAT_CHECK(dat_ib_post_fetch_and_add(
		        tx.ep, UINT64_MAX, &l, ck(0x810), &r,
		        DAT_COMPLETION_DEFAULT_FLAG));
		expect_ext(tx.req_evd, tx.ep, DAT_IB_FETCH_AND_ADD,
		           DAT_IB_DTO_FETCH_ADD, 0x810, DAT_DTO_SUCCESS, 8,
		           NULL, "fetch-and-add of -1");
		FT_CHECK(*target == want - 1, "... leaves the target one less");
		want--;
	}
	if (!have_cswap) {
		FT_DAT_EXPECT(
		        dat_ib_post_cmp_and_swap(tx.ep, 0, 1, &l, ck(1), &r,
		                                 DAT_COMPLETION_DEFAULT_FLAG),
		        DAT_MODEL_NOT_SUPPORTED);
	} else {
		*target = want;
		*result = 0;
		FT_DAT_CHECK(dat_ib_post_cmp_and_swap(
		        tx.ep, want + 1, 0x77, &l, ck(0x820), &r,
		        DAT_COMPLETION_DEFAULT_FLAG));
		if (expect_ext(tx.req_evd, tx.ep, DAT_IB_CMP_AND_SWAP,
		               DAT_IB_DTO_CMP_SWAP, 0x820, DAT_DTO_SUCCESS, 8,
		               NULL, "compare-and-swap, not equal"))
			FT_CHECK(*result == want && *target == want,
			         "not equal: the old value returned, the "
			         "target unchanged");
		FT_DAT_CHECK(dat_ib_post_cmp_and_swap(
		        tx.ep, want, 0x77, &l, ck(0x821), &r,
		        DAT_COMPLETION_DEFAULT_FLAG));
		if (expect_ext(tx.req_evd, tx.ep, DAT_IB_CMP_AND_SWAP,
		               DAT_IB_DTO_CMP_SWAP, 0x821, DAT_DTO_SUCCESS, 8,
		               NULL, "compare-and-swap, equal"))
			FT_CHECK(*result == want && *target == 0x77,
			         "equal: the old value returned, the target "
			         "swapped (%#" PRIx64 ")",
			         (uint64_t)*target);
	}
	if (have_fadd) {
		DAT_LMR_TRIPLET small = ft_lmr_iov(&src, 0, 4);
		DAT_RMR_TRIPLET odd = ft_rmr_iov(&dst, RECV_AREA + 4, 8);

		FT_DAT_EXPECT(
		        dat_ib_post_fetch_and_add(tx.ep, 1, &small, ck(1), &r,
		                                  DAT_COMPLETION_DEFAULT_FLAG),
		        DAT_INVALID_PARAMETER);
		FT_DAT_EXPECT(
		        dat_ib_post_fetch_and_add(tx.ep, 1, &l, ck(1), &odd,
		                                  DAT_COMPLETION_DEFAULT_FLAG),
		        DAT_INVALID_PARAMETER);
		ft_expect_empty(tx.req_evd, "bad atomics made no event");
	}
}

/* ---- counters --------------------------------------------------------------
 */

/* Counter i of an IA, EP or EVD handle. */
static uint64_t cnt_of(DAT_HANDLE h, int i)
{
	DAT_UINT64 v = ~0ull;

	FT_DAT_CHECK(dat_ib_query_counters(h, i, &v, 0));
	return v;
}

static void traffic(int n, size_t len)
{
	DAT_LMR_TRIPLET l = ft_lmr_iov(&src, 0, len);
	int i;

	for (i = 0; i < n; i++) {
		post_recv(0, RECV_SLOT, 0x900);
		FT_DAT_CHECK(dat_ep_post_send(tx.ep, 1, &l, ck(0x901),
		                              DAT_COMPLETION_DEFAULT_FLAG));
		ft_expect_dto(tx.req_evd, FT_TIMEOUT_US, tx.ep, DAT_DTO_SEND,
		              0x901, DAT_DTO_SUCCESS, (long)len, NULL,
		              "counted traffic: send");
		ft_expect_dto(rx.recv_evd, FT_TIMEOUT_US, rx.ep,
		              DAT_DTO_RECEIVE, 0x900, DAT_DTO_SUCCESS,
		              (long)len, NULL, "counted traffic: receive");
	}
}

static void check_counters(void)
{
	DAT_UINT64 all[DCNT_IA_ALL_COUNTERS], evd[DCNT_EVD_ALL_COUNTERS];
	DAT_PZ_HANDLE pz;
	int i;
	bool zero = true;

	/* Stopped: nothing counts. */
	traffic(2, 100);
	FT_DAT_CHECK(
	        dat_ib_query_counters(tx.ep, DCNT_EP_ALL_COUNTERS, all, 0));
	for (i = 0; i < DCNT_EP_ALL_COUNTERS; i++)
		zero = zero && all[i] == 0;
	FT_CHECK(zero, "an EP whose counters never ran counted nothing");

	/* An EP's posts and bytes; its receives where they are dequeued. */
	FT_DAT_CHECK(dat_ib_start_counter(tx.ep, DCNT_IA_CM));
	FT_DAT_CHECK(dat_ib_start_counter(rx.ep, DCNT_IA_CM));
	traffic(3, 100);
	FT_CHECK(cnt_of(tx.ep, DCNT_EP_POST_SEND) == 3 &&
	                 cnt_of(tx.ep, DCNT_EP_POST_SEND_DATA) == 300,
	         "started: 3 sends of 100 bytes counted (%llu, %llu)",
	         (unsigned long long)cnt_of(tx.ep, DCNT_EP_POST_SEND),
	         (unsigned long long)cnt_of(tx.ep, DCNT_EP_POST_SEND_DATA));
	FT_CHECK(cnt_of(rx.ep, DCNT_EP_POST_RECV) == 3 &&
	                 cnt_of(rx.ep, DCNT_EP_RECV) == 3 &&
	                 cnt_of(rx.ep, DCNT_EP_RECV_DATA) == 300,
	         "the receiving EP: 3 receives posted, 3 completed, 300 "
	         "bytes");
	if (have_immed) {
		DAT_LMR_TRIPLET l = ft_lmr_iov(&src, 0, 256);
		DAT_RMR_TRIPLET r = ft_rmr_iov(&dst, RECV_AREA, 256);

		post_recv(0, RECV_SLOT, 0x910);
		FT_DAT_CHECK(dat_ib_post_rdma_write_immed(
		        tx.ep, 1, &l, ck(0x911), &r, 9,
		        DAT_COMPLETION_DEFAULT_FLAG));
		expect_ext(rx.recv_evd, rx.ep, DAT_IB_RDMA_WRITE_IMMED_DATA,
		           DAT_IB_DTO_RECV_IMMED, 0x910, DAT_DTO_SUCCESS, 256,
		           NULL, "counted write with immediate data");
		expect_ext(tx.req_evd, tx.ep, DAT_IB_RDMA_WRITE_IMMED,
		           DAT_IB_DTO_RDMA_WRITE_IMMED, 0x911, DAT_DTO_SUCCESS,
		           256, NULL, "its request");
		FT_CHECK(cnt_of(tx.ep, DCNT_EP_POST_WRITE_IMM) == 1 &&
		                 cnt_of(tx.ep, DCNT_EP_POST_WRITE_IMM_DATA) ==
		                         256 &&
		                 cnt_of(rx.ep, DCNT_EP_RECV_RDMA_IMM) == 1 &&
		                 cnt_of(rx.ep, DCNT_EP_RECV_RDMA_IMM_DATA) ==
		                         256,
		         "a write with immediate data counted on both EPs");
	}
	/* Its EVDs count too (started with the EP). */
	FT_DAT_CHECK(dat_ib_query_counters(rx.recv_evd, DCNT_EVD_ALL_COUNTERS,
	                                   evd, 0));
	FT_CHECK(evd[DCNT_EVD_WAIT] >= 3 && evd[DCNT_EVD_DTO_CALLBACK] >= 3,
	         "the receive EVD counted its waits (%llu) and completions "
	         "(%llu)",
	         (unsigned long long)evd[DCNT_EVD_WAIT],
	         (unsigned long long)evd[DCNT_EVD_DTO_CALLBACK]);
	{
		DAT_EVENT ev;

		(void)dat_evd_dequeue(rx.recv_evd, &ev);
		FT_CHECK(cnt_of(rx.recv_evd, DCNT_EVD_DEQUEUE) == 1 &&
		                 cnt_of(rx.recv_evd,
		                        DCNT_EVD_DEQUEUE_NOT_FOUND) == 1,
		         "an empty dequeue counted");
	}

	/* Reset, one counter and all. */
	FT_CHECK(cnt_of(tx.ep, DCNT_EP_POST_SEND) == 3, "before reset: 3");
	{
		DAT_UINT64 v = 0;

		FT_DAT_CHECK(
		        dat_ib_query_counters(tx.ep, DCNT_EP_POST_SEND, &v, 1));
		FT_CHECK(v == 3 && cnt_of(tx.ep, DCNT_EP_POST_SEND) == 0 &&
		                 cnt_of(tx.ep, DCNT_EP_POST_SEND_DATA) == 300,
		         "reset of one counter clears that one only");
	}
	FT_DAT_CHECK(
	        dat_ib_query_counters(tx.ep, DCNT_EP_ALL_COUNTERS, all, 1));
	FT_CHECK(cnt_of(tx.ep, DCNT_EP_POST_SEND_DATA) == 0,
	         "reset of all clears them all");
	FT_DAT_CHECK(dat_ib_print_counters(tx.ep, DCNT_EP_ALL_COUNTERS, 0));
	FT_DAT_CHECK(dat_ib_print_counters(rx.recv_evd, DCNT_EVD_WAIT, 0));

	/* Stopped again: no more counts. */
	FT_DAT_CHECK(dat_ib_stop_counter(tx.ep, DCNT_IA_CM));
	traffic(1, 50);
	FT_CHECK(cnt_of(tx.ep, DCNT_EP_POST_SEND) == 0,
	         "stopped: a send is not counted");

	/* The IA: objects, and what its new EPs do. */
	FT_DAT_CHECK(dat_ib_start_counter(ta.ia, DCNT_IA_CM));
	FT_DAT_OK(dat_pz_create(ta.ia, &pz));
	FT_DAT_CHECK(dat_pz_free(pz));
	FT_DAT_CHECK(
	        dat_ib_query_counters(ta.ia, DCNT_IA_ALL_COUNTERS, all, 0));
	FT_CHECK(all[DCNT_IA_PZ_CREATE] == 1 && all[DCNT_IA_PZ_FREE] == 1,
	         "the IA counted a PZ created and freed");
	traffic(1, 10);
	FT_CHECK(cnt_of(tx.ep, DCNT_EP_POST_SEND) == 1,
	         "starting the IA's counters started its EP's");
	FT_DAT_CHECK(dat_ib_print_counters(ta.ia, DCNT_IA_ALL_COUNTERS, 0));
	FT_DAT_CHECK(dat_ib_stop_counter(ta.ia, DCNT_IA_CM));

	FT_DAT_EXPECT(
	        dat_ib_query_counters(tx.ep, DCNT_EP_ALL_COUNTERS + 1, all, 0),
	        DAT_INVALID_PARAMETER);
	FT_DAT_EXPECT(dat_ib_query_counters(tx.ep, -1, all, 0),
	              DAT_INVALID_PARAMETER);
	FT_DAT_EXPECT(dat_ib_query_counters(tx.ep, 0, NULL, 0),
	              DAT_INVALID_PARAMETER);
	FT_DAT_EXPECT(dat_ib_query_counters(ta.pz, 0, all, 0),
	              DAT_INVALID_HANDLE);
}

/* A second pair, connected while the IAs count: the CM events count. */
static void check_cm_counters(void)
{
	struct ft_ep a, b;
	DAT_UINT64 tc[DCNT_IA_ALL_COUNTERS], rc[DCNT_IA_ALL_COUNTERS];

	FT_DAT_CHECK(dat_ib_query_counters(ta.ia, DCNT_IA_ALL_COUNTERS, tc, 1));
	FT_DAT_CHECK(dat_ib_query_counters(ra.ia, DCNT_IA_ALL_COUNTERS, rc, 1));
	FT_DAT_CHECK(dat_ib_start_counter(ta.ia, DCNT_IA_CM));
	FT_DAT_CHECK(dat_ib_start_counter(ra.ia, DCNT_IA_CM));
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	FT_DAT_OK(ft_ep_create(&ta, ta.pz, NULL, 16, &a));
	FT_DAT_OK(ft_ep_create(&ra, ra.pz, NULL, 16, &b));
	if (ft_connect_local(&ta, &a, &ra, &b, &L))
		ft_disconnect_local(&a, &b, DAT_CLOSE_GRACEFUL_FLAG);
	FT_CHECK(cnt_of(a.ep, DCNT_EP_CONNECT) == 1 &&
	                 cnt_of(a.ep, DCNT_EP_DISCONNECT) == 1 &&
	                 cnt_of(b.ep, DCNT_EP_CONNECT) == 1,
	         "EPs made while the IA counts count their connection");
	ft_ep_free(&a);
	ft_ep_free(&b);
	FT_DAT_CHECK(dat_ib_query_counters(ta.ia, DCNT_IA_ALL_COUNTERS, tc, 0));
	FT_DAT_CHECK(dat_ib_query_counters(ra.ia, DCNT_IA_ALL_COUNTERS, rc, 0));
	FT_CHECK(tc[DCNT_IA_EP_CREATE] == 1 && tc[DCNT_IA_EP_FREE] == 1 &&
	                 tc[DCNT_IA_EVD_CREATE] == 3 &&
	                 tc[DCNT_IA_CM_REQ_TX] == 1 &&
	                 tc[DCNT_IA_CM_ACTIVE_EST] == 1 &&
	                 tc[DCNT_IA_CM_DREQ_TX] == 1,
	         "active IA: EP, EVDs, request sent, established, "
	         "disconnect sent");
	FT_CHECK(rc[DCNT_IA_SP_CR] == 1 && rc[DCNT_IA_CM_REQ_RX] == 1 &&
	                 rc[DCNT_IA_SP_CR_ACCEPTED] == 1 &&
	                 rc[DCNT_IA_CM_PASSIVE_EST] == 1 &&
	                 rc[DCNT_IA_CM_DREQ_RX] == 1,
	         "passive IA: request arrived, accepted, established, "
	         "disconnect received");
	FT_DAT_CHECK(dat_ib_stop_counter(ta.ia, DCNT_IA_CM));
	FT_DAT_CHECK(dat_ib_stop_counter(ra.ia, DCNT_IA_CM));
}

/* ---- the rest --------------------------------------------------------------
 */

static void check_open_query(void)
{
	DAT_IA_ATTR a;
	DAT_PROVIDER_ATTR p;
	DAT_HANDLE h = DAT_HANDLE_NULL;
	DAT_IA_ATTR b;
	int i;
	bool counters = false;

	memset(&a, 0, sizeof(a));
	memset(&p, 0, sizeof(p));
	if (FT_DAT_CHECK(dat_ib_open_query(
	            ft_opts.ia_name, &h, DAT_IA_FIELD_ALL, &a,
	            DAT_PROVIDER_FIELD_ALL, &p)) != DAT_SUCCESS)
		return;
	for (i = 0; i < p.num_provider_specific_attr; i++)
		counters |= strcmp(p.provider_specific_attr[i].name,
		                   DAT_IB_ATTR_COUNTERS) == 0;
	FT_CHECK(a.extension_supported == DAT_EXTENSION_IB && counters,
	         "dat_ib_open_query: the attributes, extension and all");
	FT_DAT_CHECK(dat_ia_query(h, NULL, DAT_IA_FIELD_ALL, &b, 0, NULL));
	FT_DAT_CHECK(dat_ib_close_query(h));
	FT_DAT_EXPECT(dat_ib_close_query(h), DAT_INVALID_HANDLE);
}

static void check_unsupported(void)
{
	DAT_LMR_TRIPLET l = ft_lmr_iov(&src, 0, 8);
	DAT_IB_ADDR_HANDLE ah;
	DAT_IB_COLLECTIVE_MEMBER m;
	DAT_UINT32 msize;

	memset(&ah, 0, sizeof(ah));
	FT_DAT_EXPECT(dat_ib_post_send_ud(tx.ep, 1, &l, &ah, ck(1),
	                                  DAT_COMPLETION_DEFAULT_FLAG),
	              DAT_MODEL_NOT_SUPPORTED);
	FT_DAT_EXPECT(dat_ib_collective_create_member(ta.ia, NULL, &m, &msize),
	              DAT_MODEL_NOT_SUPPORTED);
	FT_DAT_EXPECT(dat_extension_op(tx.ep, (DAT_EXTENDED_OP)999),
	              DAT_NOT_IMPLEMENTED);
}

/*
 * A write with immediate data the target refuses (a bad RMR context), on
 * IAs opened with DAPL_OFI_TEST_NO_SAW=1: there the post waits for the
 * Write's delivery before it sends the message (efa's path, dapl-ofi(7)),
 * so the refusal comes back while the post is under way. As on
 * InfiniBand the post succeeds and the request completes in error, once
 * (DAT_DTO_ERR_REMOTE_ACCESS; FLUSHED where the fabric ended the
 * connection first), the target's receive takes no message, and the
 * connection ends. Fresh IAs, for that end.
 */
/*
 * Whether the fabric reports a Write its target refuses that asks for
 * delivery completion (FI_DELIVERY_COMPLETE, as on the fence path): tcp
 * and sockets. rxm, shm and rxd (libfabric 1.17) never complete it, so a
 * post that waits for it fails after 20 s (dapl-ofi(7), Ordering).
 */
static bool refusal_reported(void)
{
	const char *prov = ft_provider_attr(&ta, "DAT_OFI_PROVIDER");

	if (prov != NULL &&
	    (strcmp(prov, "tcp") == 0 || strcmp(prov, "sockets") == 0))
		return true;
	ft_log("not checked: a refused write with immediate data on the "
	       "fence path (%s does not complete a refused RDMA Write that "
	       "asks for delivery completion)",
	       prov ? prov : "this fabric");
	return false;
}

static void check_refused_fenced(void)
{
	struct ft_ia a, b;
	struct ft_listener l2;
	struct ft_ep t2, r2;
	struct ft_mr s2, d2;
	DAT_EP_ATTR attr;
	DAT_LMR_TRIPLET l;
	DAT_RMR_TRIPLET r;
	DAT_EVENT ev;
	DAT_DTO_COMPLETION_EVENT_DATA *d =
	        &ev.event_data.dto_completion_event_data;
	DAT_RETURN ret;

	FT_REQUIRE(setenv("DAPL_OFI_TEST_NO_SAW", "1", 1) == 0, "setenv");
	memset(&t2, 0, sizeof(t2));
	memset(&r2, 0, sizeof(r2));
	ft_ia_open(ft_opts.ia_name, &a);
	ft_ia_open(ft_opts.ia_name, &b);
	FT_DAT_OK(ft_mr_create(&a, a.pz, 4096, DAT_MEM_PRIV_ALL_FLAG, &s2));
	FT_DAT_OK(ft_mr_create(&b, b.pz, 4096, DAT_MEM_PRIV_ALL_FLAG, &d2));
	ft_ep_attr_default(&a, &attr);
	FT_DAT_OK(ft_listen(&b, &l2));
	FT_DAT_OK(ft_ep_create(&a, a.pz, &attr, 16, &t2));
	FT_DAT_OK(ft_ep_create(&b, b.pz, &attr, 16, &r2));
	FT_REQUIRE(ft_connect_local(&a, &t2, &b, &r2, &l2),
	           "DAPL_OFI_TEST_NO_SAW=1: connected");
	l = ft_lmr_iov(&d2, 0, 64);
	FT_DAT_OK(dat_ep_post_recv(r2.ep, 1, &l, ck(0x800),
	                           DAT_COMPLETION_DEFAULT_FLAG));
	l = ft_lmr_iov(&s2, 0, 1024);
	r = ft_rmr_iov(&d2, 1024, 1024);
	r.rmr_context ^= 0x5a5a0000u;
	ret = dat_ib_post_rdma_write_immed(t2.ep, 1, &l, ck(0x801), &r, 7,
	                                   DAT_COMPLETION_DEFAULT_FLAG);
	FT_CHECK(ret == DAT_SUCCESS,
	         "DAPL_OFI_TEST_NO_SAW=1: a write with immediate data to a bad "
	         "RMR context is posted (%s)",
	         ft_ret_str(ret));
	if (ret == DAT_SUCCESS &&
	    FT_CHECK(ft_wait(t2.req_evd, FT_TIMEOUT_US, &ev) == DAT_SUCCESS,
	             "DAPL_OFI_TEST_NO_SAW=1: ... and completes"))
		FT_CHECK(ev.event_number ==
		                         (DAT_EVENT_NUMBER)DAT_IB_DTO_EVENT &&
		                 d->user_cookie.as_64 == 0x801 &&
		                 (d->status == DAT_DTO_ERR_REMOTE_ACCESS ||
		                  d->status == DAT_DTO_ERR_FLUSHED),
		         "DAPL_OFI_TEST_NO_SAW=1: ... in error: event %#x "
		         "cookie %#" PRIx64 " %s",
		         (unsigned)ev.event_number,
		         (uint64_t)d->user_cookie.as_64,
		         ft_dto_status_str(d->status));
	ft_expect_empty(t2.req_evd, "DAPL_OFI_TEST_NO_SAW=1: ... once");
	if (ft_wait(r2.recv_evd, 200000, &ev) == DAT_SUCCESS)
		FT_CHECK(
		        d->status != DAT_DTO_SUCCESS,
		        "DAPL_OFI_TEST_NO_SAW=1: the target's receive takes no "
		        "message: %s",
		        ft_event_desc(&ev));
	/* The refusal ends the connection, as a queue pair in error. */
	memset(&ev, 0, sizeof(ev));
	ret = ft_wait(t2.conn_evd, 2000000, &ev);
	FT_CHECK(ret == DAT_SUCCESS &&
	                 (ev.event_number == DAT_CONNECTION_EVENT_BROKEN ||
	                  ev.event_number == DAT_CONNECTION_EVENT_DISCONNECTED),
	         "DAPL_OFI_TEST_NO_SAW=1: the connection ends: %s",
	         ret == DAT_SUCCESS ? ft_event_desc(&ev) : ft_ret_str(ret));
	(void)dat_ep_disconnect(t2.ep, DAT_CLOSE_ABRUPT_FLAG);
	(void)dat_ep_disconnect(r2.ep, DAT_CLOSE_ABRUPT_FLAG);
	usleep(20000);
	ft_drain(t2.conn_evd);
	ft_drain(r2.conn_evd);
	ft_drain(t2.req_evd);
	ft_drain(r2.recv_evd);
	ft_ep_free(&t2);
	ft_ep_free(&r2);
	ft_listener_free(&l2);
	ft_mr_free(&s2);
	ft_mr_free(&d2);
	ft_ia_close(&a);
	ft_ia_close(&b);
	unsetenv("DAPL_OFI_TEST_NO_SAW");
}

int main(int argc, char **argv)
{
	DAT_EP_ATTR attr;
	bool refusal;

	ft_init(argc, argv, "dat_ext",
	        "IB extension: attributes, write with immediate data, "
	        "atomics, counters, open query",
	        NULL);
	/* Counters off until started: the test starts them itself. */
	unsetenv("DAPL_OFI_COUNTERS");
	ft_ia_open(ft_opts.ia_name, &ta);
	ft_ia_open(ft_opts.ia_name, &ra);
	ft_check_libs();
	check_attrs();
	refusal = refusal_reported();
	bufsz = RECV_AREA + ((size_t)1 << 20);
	FT_DAT_OK(ft_mr_create(
	        &ta, ta.pz, bufsz,
	        DAT_MEM_PRIV_ALL_FLAG | DAT_IB_MEM_PRIV_REMOTE_ATOMIC, &src));
	FT_DAT_OK(ft_mr_create(
	        &ra, ra.pz, bufsz,
	        DAT_MEM_PRIV_ALL_FLAG | DAT_IB_MEM_PRIV_REMOTE_ATOMIC, &dst));
	ft_ep_attr_default(&ta, &attr);
	memset(&tx, 0, sizeof(tx));
	memset(&rx, 0, sizeof(rx));
	FT_DAT_OK(ft_listen(&ra, &L));
	FT_DAT_OK(ft_ep_create(&ta, ta.pz, &attr, 256, &tx));
	FT_DAT_OK(ft_ep_create(&ra, ra.pz, &attr, 256, &rx));
	{
		DAT_LMR_TRIPLET l = ft_lmr_iov(&src, 0, 8);
		DAT_RMR_TRIPLET r = ft_rmr_iov(&dst, 0, 8);

		FT_DAT_EXPECT(dat_ib_post_rdma_write_immed(
		                      tx.ep, 1, &l, ck(1), &r, 1,
		                      DAT_COMPLETION_DEFAULT_FLAG),
		              have_immed ? DAT_INVALID_STATE
		                         : DAT_MODEL_NOT_SUPPORTED);
	}
	FT_REQUIRE(ft_connect_local(&ta, &tx, &ra, &rx, &L), "connected");
	if (have_immed) {
		check_write_imm();
	} else {
		DAT_RMR_TRIPLET r = ft_rmr_iov(&dst, 0, 8);

		FT_DAT_EXPECT(dat_ib_post_rdma_write_immed(
		                      tx.ep, 0, NULL, ck(1), &r, 1,
		                      DAT_COMPLETION_DEFAULT_FLAG),
		              DAT_MODEL_NOT_SUPPORTED);
	}
	check_atomics();
	check_counters();
	check_unsupported();
	ft_disconnect_local(&tx, &rx, DAT_CLOSE_GRACEFUL_FLAG);
	ft_drain(tx.req_evd);
	ft_drain(rx.recv_evd);
	ft_ep_free(&tx);
	ft_ep_free(&rx);
	check_cm_counters();
	check_open_query();
	ft_listener_free(&L);
	ft_mr_free(&src);
	ft_mr_free(&dst);
	ft_ia_close(&ta);
	ft_ia_close(&ra);
	if (have_immed && refusal)
		check_refused_fenced();
	return ft_finish();
}
