/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * dat_dto: data transfer operations.  Send/receive of sizes 0 ..
 * max_message_size with 1 .. max IOV segments (scatter and gather checked
 * byte for byte, gaps untouched), RDMA Write and Read of each size and
 * with IOVs, completion fields (operation, cookie, status, length),
 * completion suppression, ordering (receives, sends, write-then-send),
 * posted receives and sends flushed on disconnect (DAT_DTO_ERR_FLUSHED), a
 * receive too small (DAT_DTO_ERR_LOCAL_LENGTH) breaking the connection, one EVD
 * for DTOs and connection events (successful DTO completions before
 * DISCONNECTED), more requests than the fabric holds while the peer posts
 * no receive (each post succeeds; all arrive, in order, once it does;
 * again with Sends of several segments on an EP that dat_ep_modify gave
 * them), and post errors (segments, lengths, flags, a full receive queue).
 * Single process, two IAs; -S picks sizes, -I repeats the ordering test.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "shared.h"

#define MAX_DEFAULT_SIZE ((size_t)16 << 20)

static struct ft_ia ta, ra; /* transmitting and receiving sides */
static struct ft_listener L;
static DAT_EP_ATTR attr;
static bool have_read;

struct pair {
	struct ft_ep tx, rx;
	bool up;
};

static void pair_open(struct pair *p, const DAT_EP_ATTR *a)
{
	memset(p, 0, sizeof(*p));
	FT_DAT_OK(ft_ep_create(&ta, ta.pz, a, 256, &p->tx));
	FT_DAT_OK(ft_ep_create(&ra, ra.pz, a, 256, &p->rx));
}

static bool pair_connect(struct pair *p)
{
	p->up = ft_connect_local(&ta, &p->tx, &ra, &p->rx, &L);
	return p->up;
}

static void pair_close(struct pair *p)
{
	if (p->up)
		ft_disconnect_local(&p->tx, &p->rx, DAT_CLOSE_GRACEFUL_FLAG);
	ft_drain(p->tx.recv_evd);
	ft_drain(p->rx.recv_evd);
	ft_drain(p->tx.req_evd);
	ft_ep_free(&p->tx);
	ft_ep_free(&p->rx);
}

/* ---- sizes ------------------------------------------------------------------
 */

static void check_sizes(struct pair *p, struct ft_mr *src, struct ft_mr *dst,
                        size_t max)
{
	static const size_t defaults[] = {0,    1,    2,     63,      64,
	                                  1000, 4096, 65536, 1 << 20, 4 << 20};
	size_t sizes[FT_MAX_SIZES];
	int n, i;
	DAT_LMR_TRIPLET s, r;
	DAT_DTO_COOKIE c;
	char what[96];

	n = ft_sizes(defaults, sizeof(defaults) / sizeof(defaults[0]), max,
	             sizes);
	for (i = 0; i < n; i++) {
		size_t len = sizes[i];

		ft_fill(src->buf, len, 7000 + len);
		memset(dst->buf, 0xEE, len + 16 <= dst->len ? len + 16 : len);
		r = ft_lmr_iov(dst, 0, len ? len : 64);
		c.as_64 = 0x10000 + i;
		FT_DAT_CHECK(dat_ep_post_recv(p->rx.ep, 1, &r, c,
		                              DAT_COMPLETION_DEFAULT_FLAG));
		s = ft_lmr_iov(src, 0, len);
		c.as_64 = 0x20000 + i;
		FT_DAT_CHECK(dat_ep_post_send(p->tx.ep, len ? 1 : 0,
		                              len ? &s : NULL, c,
		                              DAT_COMPLETION_DEFAULT_FLAG));
		snprintf(what, sizeof(what), "send %zu bytes", len);
		ft_expect_dto(p->tx.req_evd, FT_TIMEOUT_US, p->tx.ep,
		              DAT_DTO_SEND, 0x20000 + i, DAT_DTO_SUCCESS,
		              (long)len, NULL, what);
		snprintf(what, sizeof(what), "receive %zu bytes", len);
		ft_expect_dto(p->rx.recv_evd, FT_TIMEOUT_US, p->rx.ep,
		              DAT_DTO_RECEIVE, 0x10000 + i, DAT_DTO_SUCCESS,
		              (long)len, NULL, what);
		FT_CHECK(ft_pattern_mismatch(dst->buf, len, 7000 + len) < 0,
		         "%zu bytes arrive intact", len);
		if (len + 16 <= dst->len && len > 0)
			FT_CHECK(((unsigned char *)dst->buf)[len] == 0xEE,
			         "%zu bytes: nothing written past the message",
			         len);
	}

	/* Zero bytes into a receive of zero segments. */
	c.as_64 = 0x30000;
	FT_DAT_CHECK(dat_ep_post_recv(p->rx.ep, 0, NULL, c,
	                              DAT_COMPLETION_DEFAULT_FLAG));
	c.as_64 = 0x30001;
	FT_DAT_CHECK(dat_ep_post_send(p->tx.ep, 0, NULL, c,
	                              DAT_COMPLETION_DEFAULT_FLAG));
	ft_expect_dto(p->tx.req_evd, FT_TIMEOUT_US, p->tx.ep, DAT_DTO_SEND,
	              0x30001, DAT_DTO_SUCCESS, 0, NULL,
	              "zero-length send, no segments");
	ft_expect_dto(p->rx.recv_evd, FT_TIMEOUT_US, p->rx.ep, DAT_DTO_RECEIVE,
	              0x30000, DAT_DTO_SUCCESS, 0, NULL,
	              "into a receive with no segments");
}

/* ---- IOVs -------------------------------------------------------------------
 */

static void check_iov(struct pair *p, struct ft_mr *src, struct ft_mr *dst,
                      DAT_COUNT nseg_tx, DAT_COUNT nseg_rx)
{
	DAT_LMR_TRIPLET siov[256], riov[256];
	unsigned char *sb = src->buf, *rb = dst->buf;
	size_t total = 0, off, k, rtotal = 0;
	DAT_COUNT i;
	DAT_DTO_COOKIE c;
	bool ok = true, gaps = true;
	char what[96];

	if (nseg_tx > 256 || nseg_rx > 256)
		return;
	/* Send segments: lengths 100+7i, with 13-byte gaps, one of 0. */
	off = 0;
	for (i = 0; i < nseg_tx; i++) {
		size_t len = (i == 1 && nseg_tx > 2) ? 0 : 100 + 7 * (size_t)i;

		siov[i] = ft_lmr_iov(src, off, len);
		ft_fill(sb + off, len, 9000 + (uint64_t)i);
		off += len + 13;
		total += len;
	}
	/* Receive segments: equal split of total (+ slack on the last). */
	off = 0;
	for (i = 0; i < nseg_rx; i++) {
		size_t len = total / (size_t)nseg_rx;

		if (i == nseg_rx - 1)
			len = total - rtotal + 32;
		riov[i] = ft_lmr_iov(dst, off, len);
		off += len + 11;
		rtotal += len;
	}
	memset(rb, 0xEE, off < dst->len ? off : dst->len);
	c.as_64 = 0x40000 + (uint64_t)nseg_rx;
	FT_DAT_CHECK(dat_ep_post_recv(p->rx.ep, nseg_rx, riov, c,
	                              DAT_COMPLETION_DEFAULT_FLAG));
	c.as_64 = 0x50000 + (uint64_t)nseg_tx;
	FT_DAT_CHECK(dat_ep_post_send(p->tx.ep, nseg_tx, siov, c,
	                              DAT_COMPLETION_DEFAULT_FLAG));
	snprintf(what, sizeof(what), "send gathered from %d segments",
	         (int)nseg_tx);
	ft_expect_dto(p->tx.req_evd, FT_TIMEOUT_US, p->tx.ep, DAT_DTO_SEND,
	              0x50000 + (uint64_t)nseg_tx, DAT_DTO_SUCCESS, (long)total,
	              NULL, what);
	snprintf(what, sizeof(what), "receive scattered into %d segments",
	         (int)nseg_rx);
	ft_expect_dto(p->rx.recv_evd, FT_TIMEOUT_US, p->rx.ep, DAT_DTO_RECEIVE,
	              0x40000 + (uint64_t)nseg_rx, DAT_DTO_SUCCESS, (long)total,
	              NULL, what);

	/* Compare the gathered stream with the scattered one, byte by byte. */
	{
		DAT_COUNT si = 0, ri = 0;
		size_t so = 0, ro = 0, n = 0;

		while (n < total && ok) {
			while (si < nseg_tx && so == siov[si].segment_length) {
				si++;
				so = 0;
			}
			while (ri < nseg_rx && ro == riov[ri].segment_length) {
				ri++;
				ro = 0;
			}
			if (si == nseg_tx || ri == nseg_rx)
				break;
			if (sb[siov[si].virtual_address -
			       (DAT_VADDR)(uintptr_t)sb + so] !=
			    rb[riov[ri].virtual_address -
			       (DAT_VADDR)(uintptr_t)rb + ro])
				ok = false;
			so++;
			ro++;
			n++;
		}
		ok = ok && n == total;
	}
	FT_CHECK(ok, "%d -> %d segments: %zu bytes scattered in order",
	         (int)nseg_tx, (int)nseg_rx, total);
	for (i = 0; i + 1 < nseg_rx; i++) {
		k = riov[i].virtual_address + riov[i].segment_length -
		    (DAT_VADDR)(uintptr_t)rb;
		if (rb[k] != 0xEE)
			gaps = false;
	}
	FT_CHECK(gaps,
	         "%d -> %d segments: gaps between receive segments "
	         "untouched",
	         (int)nseg_tx, (int)nseg_rx);
}

/* ---- RDMA -------------------------------------------------------------------
 */

static void check_rdma(struct pair *p, struct ft_mr *src, struct ft_mr *dst,
                       size_t max)
{
	static const size_t defaults[] = {1,     8,       64,     4096,
	                                  65536, 1 << 20, 4 << 20};
	size_t sizes[FT_MAX_SIZES];
	DAT_LMR_TRIPLET l, liov[64];
	DAT_RMR_TRIPLET r;
	DAT_DTO_COOKIE c;
	DAT_COUNT nseg, i;
	size_t off;
	int n, k;
	char what[96];

	n = ft_sizes(defaults, sizeof(defaults) / sizeof(defaults[0]), max,
	             sizes);
	for (k = 0; k < n; k++) {
		size_t len = sizes[k];

		if (len == 0)
			continue;
		ft_fill(src->buf, len, 11000 + len);
		memset(dst->buf, 0, len);
		l = ft_lmr_iov(src, 0, len);
		r = ft_rmr_iov(dst, 0, len);
		c.as_64 = 0x60000 + (uint64_t)k;
		FT_DAT_CHECK(dat_ep_post_rdma_write(
		        p->tx.ep, 1, &l, c, &r, DAT_COMPLETION_DEFAULT_FLAG));
		snprintf(what, sizeof(what), "RDMA write %zu bytes", len);
		ft_expect_dto(p->tx.req_evd, FT_TIMEOUT_US, p->tx.ep,
		              DAT_DTO_RDMA_WRITE, 0x60000 + (uint64_t)k,
		              DAT_DTO_SUCCESS, (long)len, NULL, what);
		FT_CHECK(ft_poll_pattern(dst->buf, len, 11000 + len, 5000000),
		         "RDMA write %zu bytes lands in target memory (polled)",
		         len);
		if (!have_read)
			continue;
		ft_fill(dst->buf, len, 12000 + len);
		memset(src->buf, 0, len);
		c.as_64 = 0x70000 + (uint64_t)k;
		FT_DAT_CHECK(dat_ep_post_rdma_read(
		        p->tx.ep, 1, &l, c, &r, DAT_COMPLETION_DEFAULT_FLAG));
		snprintf(what, sizeof(what), "RDMA read %zu bytes", len);
		ft_expect_dto(p->tx.req_evd, FT_TIMEOUT_US, p->tx.ep,
		              DAT_DTO_RDMA_READ, 0x70000 + (uint64_t)k,
		              DAT_DTO_SUCCESS, (long)len, NULL, what);
		FT_CHECK(ft_pattern_mismatch(src->buf, len, 12000 + len) < 0,
		         "RDMA read %zu bytes: data intact", len);
	}
	if (!have_read)
		FT_WARN("DAT_IB_RDMA_READ is not TRUE: RDMA Read not tested");

	/* Local IOVs gathered into one remote range, and scattered back. */
	nseg = attr.max_rdma_write_iov < 64 ? attr.max_rdma_write_iov : 64;
	off = 0;
	for (i = 0; i < nseg; i++) {
		liov[i] = ft_lmr_iov(src, off, 50 + (size_t)i);
		off += 50 + (size_t)i + 5;
	}
	{
		size_t total = 0, pos = 0;
		bool ok = true;

		for (i = 0; i < nseg; i++) {
			ft_fill((char *)src->buf + (liov[i].virtual_address -
			                            (uintptr_t)src->buf),
			        liov[i].segment_length, 13000 + (uint64_t)i);
			total += liov[i].segment_length;
		}
		memset(dst->buf, 0, total + 64);
		r = ft_rmr_iov(dst, 0, total);
		c.as_64 = 0x80000;
		FT_DAT_CHECK(
		        dat_ep_post_rdma_write(p->tx.ep, nseg, liov, c, &r,
		                               DAT_COMPLETION_DEFAULT_FLAG));
		ft_expect_dto(p->tx.req_evd, FT_TIMEOUT_US, p->tx.ep,
		              DAT_DTO_RDMA_WRITE, 0x80000, DAT_DTO_SUCCESS,
		              (long)total, NULL,
		              "RDMA write from IOV segments");
		usleep(1000);
		for (i = 0; i < nseg; i++) {
			if (!ft_poll_pattern((char *)dst->buf + pos,
			                     liov[i].segment_length,
			                     13000 + (uint64_t)i, 5000000))
				ok = false;
			pos += liov[i].segment_length;
		}
		FT_CHECK(ok,
		         "RDMA write gathered %d segments (%zu bytes) in "
		         "order",
		         (int)nseg, total);
		if (have_read) {
			nseg = attr.max_rdma_read_iov < nseg
			               ? attr.max_rdma_read_iov
			               : nseg;
			total = 0;
			for (i = 0; i < nseg; i++) {
				memset((char *)src->buf +
				               (liov[i].virtual_address -
				                (uintptr_t)src->buf),
				       0, liov[i].segment_length);
				total += liov[i].segment_length;
			}
			r = ft_rmr_iov(dst, 0, total);
			c.as_64 = 0x80001;
			FT_DAT_CHECK(dat_ep_post_rdma_read(
			        p->tx.ep, nseg, liov, c, &r,
			        DAT_COMPLETION_DEFAULT_FLAG));
			ft_expect_dto(p->tx.req_evd, FT_TIMEOUT_US, p->tx.ep,
			              DAT_DTO_RDMA_READ, 0x80001,
			              DAT_DTO_SUCCESS, (long)total, NULL,
			              "RDMA read into IOV segments");
			ok = true;
			for (i = 0; i < nseg; i++)
				if (ft_pattern_mismatch(
				            (char *)src->buf +
				                    (liov[i].virtual_address -
				                     (uintptr_t)src->buf),
				            liov[i].segment_length,
				            13000 + (uint64_t)i) >= 0)
					ok = false;
			FT_CHECK(ok, "RDMA read scattered into %d segments",
			         (int)nseg);
		}
	}

	/* Writing more than the remote range holds is refused. */
	l = ft_lmr_iov(src, 0, 64);
	r = ft_rmr_iov(dst, 0, 32);
	c.as_64 = 0x80002;
	if (FT_DAT_EXPECT(dat_ep_post_rdma_write(p->tx.ep, 1, &l, c, &r,
	                                         DAT_COMPLETION_DEFAULT_FLAG),
	                  DAT_LENGTH_ERROR) == DAT_SUCCESS) {
		DAT_EVENT ev;

		/* Accepted after all: take its completion out of the way. */
		(void)ft_wait(p->tx.req_evd, FT_TIMEOUT_US, &ev);
	}
	FT_DAT_EXPECT(dat_ep_post_rdma_write(p->tx.ep, 1, &l, c, NULL,
	                                     DAT_COMPLETION_DEFAULT_FLAG),
	              DAT_INVALID_PARAMETER);
	ft_expect_empty(p->tx.req_evd, "refused RDMA posts complete nothing");
}

/* ---- write-then-send, ordering, suppression
 * ---------------------------------- */

/*
 * A receive at rx (cookie base, into rr), then at tx an RDMA Write of len
 * bytes from src to dst (base + 1, flags wflags) and an 8-byte Send
 * (base + 2).
 */
static void post_write_send(struct pair *p, DAT_LMR_TRIPLET rr,
                            struct ft_mr *src, struct ft_mr *dst, size_t len,
                            uint64_t base, DAT_COMPLETION_FLAGS wflags)
{
	DAT_LMR_TRIPLET l;
	DAT_RMR_TRIPLET r;
	DAT_DTO_COOKIE c;

	c.as_64 = base;
	FT_DAT_CHECK(dat_ep_post_recv(p->rx.ep, 1, &rr, c,
	                              DAT_COMPLETION_DEFAULT_FLAG));
	l = ft_lmr_iov(src, 0, len);
	r = ft_rmr_iov(dst, 0, len);
	c.as_64 = base + 1;
	FT_DAT_CHECK(dat_ep_post_rdma_write(p->tx.ep, 1, &l, c, &r, wflags));
	l = ft_lmr_iov(src, 0, 8);
	c.as_64 = base + 2;
	FT_DAT_CHECK(dat_ep_post_send(p->tx.ep, 1, &l, c,
	                              DAT_COMPLETION_DEFAULT_FLAG));
}

static void check_write_then_send(struct pair *p, struct ft_mr *src,
                                  struct ft_mr *dst, size_t len)
{
	struct ft_mr note;

	FT_DAT_OK(ft_mr_create(&ra, ra.pz, 64, DAT_MEM_PRIV_ALL_FLAG, &note));
	ft_fill(src->buf, len, 14000);
	memset(dst->buf, 0, len);
	post_write_send(p, ft_lmr_iov(&note, 0, 64), src, dst, len, 0x90000,
	                DAT_COMPLETION_SUPPRESS_FLAG);
	ft_expect_dto(
	        p->tx.req_evd, FT_TIMEOUT_US, p->tx.ep, DAT_DTO_SEND, 0x90002,
	        DAT_DTO_SUCCESS, 8, NULL,
	        "the suppressed write gives no completion, the send does");
	ft_expect_dto(p->rx.recv_evd, FT_TIMEOUT_US, p->rx.ep, DAT_DTO_RECEIVE,
	              0x90000, DAT_DTO_SUCCESS, 8, NULL,
	              "the send after the write arrives");
	FT_CHECK(ft_pattern_mismatch(dst->buf, len, 14000) < 0,
	         "when a send posted after an RDMA write of %zu bytes is "
	         "received, the written data is all in place",
	         len);
	ft_mr_free(&note);
}

/* The EVD's next event is a successful DTO completion with this cookie. */
static bool next_ok(DAT_EVD_HANDLE evd, uint64_t cookie)
{
	DAT_EVENT ev;

	return ft_wait(evd, FT_TIMEOUT_US, &ev) == DAT_SUCCESS &&
	       ev.event_number == DAT_DTO_COMPLETION_EVENT &&
	       ev.event_data.dto_completion_event_data.user_cookie.as_64 ==
	               cookie &&
	       ev.event_data.dto_completion_event_data.status ==
	               DAT_DTO_SUCCESS;
}

/*
 * More requests than the fabric holds while the peer posts no receive
 * (rxm: its bounce buffers and its tcp queue are full after a few MiB):
 * every post succeeds, as on an InfiniBand send queue. Once the receives
 * are posted, each message arrives whole and in posting order, a Write
 * posted among them has landed when the Send after it arrives, and the
 * requests complete in posting order.
 */
static void check_wait_for_room(struct pair *p, struct ft_mr *src,
                                struct ft_mr *dst, int nseg)
{
	enum { N = 4, MAXSEG = 4 };
	const size_t len = (size_t)4 << 20, wlen = 32768, last = 4096;
	/* The Sends, the last Send's receive, then the Write's target. */
	const size_t need = N * len + last + wlen;
	char *rbuf = dst->buf;
	DAT_LMR_TRIPLET l, rr, ls[MAXSEG];
	DAT_RMR_TRIPLET r;
	DAT_DTO_COOKIE c;
	int i, k, posted = 0, whole = 0;
	uint64_t t0, us;

	if (attr.max_message_size < len || attr.max_rdma_size < wlen ||
	    attr.max_request_dtos < N + 2 || attr.max_recv_dtos < N + 1 ||
	    src->len < need || dst->len < need || nseg > MAXSEG) {
		ft_log("wait for room: not checked (EP limits or buffers "
		       "too small)");
		return;
	}
	for (i = 0; i < N; i++)
		ft_fill((char *)src->buf + (size_t)i * len, len, 15000 + i);
	ft_fill((char *)src->buf + (size_t)N * len, wlen, 15100);
	memset(rbuf, 0, need);
	t0 = ft_now_us();
	for (i = 0; i < N; i++) {
		/* Each Send in nseg segments, one after the other. */
		for (k = 0; k < nseg; k++)
			ls[k] = ft_lmr_iov(
			        src, (size_t)i * len + (size_t)k * (len / nseg),
			        k < nseg - 1 ? len / nseg
			                     : len - (size_t)k * (len / nseg));
		c.as_64 = 0xa000 + (uint64_t)i;
		posted += dat_ep_post_send(p->tx.ep, nseg, ls, c,
		                           DAT_COMPLETION_DEFAULT_FLAG) ==
		          DAT_SUCCESS;
	}
	l = ft_lmr_iov(src, (size_t)N * len, wlen);
	r = ft_rmr_iov(dst, (size_t)N * len + last, wlen);
	c.as_64 = 0xa000 + N;
	posted += dat_ep_post_rdma_write(p->tx.ep, 1, &l, c, &r,
	                                 DAT_COMPLETION_DEFAULT_FLAG) ==
	          DAT_SUCCESS;
	l = ft_lmr_iov(src, 0, 8);
	c.as_64 = 0xa000 + N + 1;
	posted += dat_ep_post_send(p->tx.ep, 1, &l, c,
	                           DAT_COMPLETION_DEFAULT_FLAG) == DAT_SUCCESS;
	us = ft_now_us() - t0;
	FT_REQUIRE(posted == N + 2,
	           "with no receive posted at the peer, %d posts (%d Sends "
	           "of 4 MiB in %d segment%s, a Write, a Send) all succeed "
	           "(%d did)",
	           N + 2, N, nseg, nseg > 1 ? "s" : "", posted);
	/* A post does not wait for the peer (InfiniBand's never does). */
	FT_CHECK(us < 1000000,
	         "wait for room: the %d posts took %.3f s together, under 1 s",
	         N + 2, (double)us / 1e6);
	/* The fabric fills up meanwhile. */
	usleep(200000);
	for (i = 0; i <= N; i++) {
		rr = ft_lmr_iov(dst, (size_t)i * len, i < N ? len : last);
		c.as_64 = 0xb000 + (uint64_t)i;
		FT_DAT_CHECK(dat_ep_post_recv(p->rx.ep, 1, &rr, c,
		                              DAT_COMPLETION_DEFAULT_FLAG));
	}
	for (i = 0; i < N; i++)
		if (ft_expect_dto(p->rx.recv_evd, FT_TIMEOUT_US, p->rx.ep,
		                  DAT_DTO_RECEIVE, 0xb000 + (uint64_t)i,
		                  DAT_DTO_SUCCESS, (long)len, NULL,
		                  "wait for room: a 4 MiB Send arrives, in "
		                  "posting order"))
			whole += ft_pattern_mismatch(rbuf + (size_t)i * len,
			                             len, 15000 + i) < 0;
	FT_CHECK(whole == N,
	         "wait for room: each of the %d messages arrived "
	         "whole (%d did)",
	         N, whole);
	ft_expect_dto(p->rx.recv_evd, FT_TIMEOUT_US, p->rx.ep, DAT_DTO_RECEIVE,
	              0xb000 + N, DAT_DTO_SUCCESS, 8, NULL,
	              "wait for room: the Send after the Write arrives");
	FT_CHECK(ft_pattern_mismatch(rbuf + (size_t)N * len + last, wlen,
	                             15100) < 0,
	         "wait for room: the Write posted among the Sends has landed "
	         "when the Send after it arrives");
	for (i = 0; i < N + 2; i++)
		FT_CHECK(next_ok(p->tx.req_evd, 0xa000 + (uint64_t)i),
		         "wait for room: request %d completes successfully, in "
		         "posting order",
		         i);
}

/*
 * An EP made with one segment a request and given more by dat_ep_modify
 * before it connects: its requests of several segments wait for room as
 * those of one do (the slots a waiting request's segments are kept in
 * follow the EP's limits).
 */
static void check_modified_wait_for_room(struct ft_mr *src, struct ft_mr *dst)
{
	DAT_EP_ATTR one = attr;
	DAT_EP_PARAM prm;
	struct pair q;
	int nseg = attr.max_request_iov < 4 ? (int)attr.max_request_iov : 4;

	if (nseg < 2) {
		ft_log("wait for room after dat_ep_modify: not checked (one "
		       "segment a request)");
		return;
	}
	one.max_request_iov = 1;
	one.max_rdma_write_iov = 1;
	one.max_rdma_read_iov = 1;
	pair_open(&q, &one);
	memset(&prm, 0, sizeof(prm));
	prm.ep_attr = attr;
	FT_DAT_CHECK(
	        dat_ep_modify(q.tx.ep,
	                      DAT_EP_FIELD_EP_ATTR_MAX_REQUEST_IOV |
	                              DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_IOV |
	                              DAT_EP_FIELD_EP_ATTR_MAX_RDMA_WRITE_IOV,
	                      &prm));
	memset(&prm, 0, sizeof(prm));
	FT_DAT_CHECK(dat_ep_query(q.tx.ep, DAT_EP_FIELD_EP_ATTR_ALL, &prm));
	FT_CHECK(prm.ep_attr.max_request_iov == attr.max_request_iov,
	         "dat_ep_modify gave the EP %d segments a request (it has %d)",
	         (int)attr.max_request_iov, (int)prm.ep_attr.max_request_iov);
	if (pair_connect(&q))
		check_wait_for_room(&q, src, dst, nseg);
	pair_close(&q);
}

/*
 * One request queue, mixed: signalled RDMA Writes (acknowledged on tcp),
 * Sends and RDMA Reads complete in posting order, as on an InfiniBand
 * send queue, whichever way each is completed underneath.
 */
static void check_request_order(struct pair *p, struct ft_mr *src,
                                struct ft_mr *dst, size_t len, long iters)
{
	enum { N = 12 };
	DAT_LMR_TRIPLET l, rr;
	DAT_RMR_TRIPLET r;
	DAT_DTO_COOKIE c;
	DAT_EVENT ev;
	int i, bad = 0;
	long it;

	for (it = 0; it < iters; it++) {
		for (i = 0; i < N; i++) {
			rr = ft_lmr_iov(dst, 0, 64);
			c.as_64 = 0x700 + (uint64_t)i;
			if (i % 3 == 1)
				FT_REQUIRE(
				        dat_ep_post_recv(
				                p->rx.ep, 1, &rr, c,
				                DAT_COMPLETION_DEFAULT_FLAG) ==
				                DAT_SUCCESS,
				        "post receive %d", i);
		}
		for (i = 0; i < N; i++) {
			DAT_RETURN ret;

			c.as_64 = 0x800 + (uint64_t)i;
			r = ft_rmr_iov(dst, 4096, len);
			if (i % 3 == 0) {
				/* A large write, then small things after it. */
				l = ft_lmr_iov(src, 0, len);
				ret = dat_ep_post_rdma_write(
				        p->tx.ep, 1, &l, c, &r,
				        DAT_COMPLETION_DEFAULT_FLAG);
			} else if (i % 3 == 1) {
				l = ft_lmr_iov(src, 0, 8);
				ret = dat_ep_post_send(
				        p->tx.ep, 1, &l, c,
				        DAT_COMPLETION_DEFAULT_FLAG);
			} else {
				l = ft_lmr_iov(src, len, 64);
				r = ft_rmr_iov(dst, 4096, 64);
				ret = dat_ep_post_rdma_read(
				        p->tx.ep, 1, &l, c, &r,
				        DAT_COMPLETION_DEFAULT_FLAG);
			}
			FT_REQUIRE(ret == DAT_SUCCESS, "post request %d: %s", i,
			           ft_ret_str(ret));
		}
		for (i = 0; i < N; i++)
			if (!next_ok(p->tx.req_evd, 0x800 + (uint64_t)i))
				bad++;
		for (i = 0; i < N / 3; i++)
			FT_REQUIRE(ft_wait(p->rx.recv_evd, FT_TIMEOUT_US,
			                   &ev) == DAT_SUCCESS,
			           "receive %d of the round", i);
	}
	FT_CHECK(bad == 0,
	         "%ld x %d writes of %zu bytes, sends and reads complete in "
	         "posting order (%d out of place)",
	         iters, N, len, bad);
}

/*
 * An RMR bind is a request too: its completion comes after those of the
 * requests posted before it on the Endpoint (here an RDMA Write, which
 * tcp completes on the target's answer, and a Send), as on InfiniBand.
 */
static void check_bind_order(struct pair *p, struct ft_mr *src,
                             struct ft_mr *dst, size_t len, long iters)
{
	DAT_LMR_TRIPLET win;
	DAT_RMR_HANDLE rmr;
	DAT_RMR_CONTEXT ctx;
	DAT_RMR_COOKIE rc;
	DAT_EVENT ev;
	int bad = 0;
	long it;

	FT_DAT_OK(dat_rmr_create(ta.pz, &rmr));
	win = ft_lmr_iov(src, 0, 4096);
	for (it = 0; it < iters; it++) {
		post_write_send(p, ft_lmr_iov(dst, len, 64), src, dst, len,
		                0xb00, DAT_COMPLETION_DEFAULT_FLAG);
		rc.as_64 = 0xb03;
		FT_DAT_CHECK(dat_rmr_bind(rmr, src->lmr, &win,
		                          DAT_MEM_PRIV_REMOTE_READ_FLAG,
		                          DAT_VA_TYPE_VA, p->tx.ep, rc,
		                          DAT_COMPLETION_DEFAULT_FLAG, &ctx));
		bad += !next_ok(p->tx.req_evd, 0xb01);
		bad += !next_ok(p->tx.req_evd, 0xb02);
		memset(&ev, 0, sizeof(ev));
		bad += ft_wait(p->tx.req_evd, FT_TIMEOUT_US, &ev) !=
		               DAT_SUCCESS ||
		       ev.event_number != DAT_RMR_BIND_COMPLETION_EVENT ||
		       ev.event_data.rmr_completion_event_data.user_cookie
		                       .as_64 != 0xb03 ||
		       ev.event_data.rmr_completion_event_data.status !=
		               DAT_RMR_BIND_SUCCESS;
		FT_REQUIRE(ft_wait(p->rx.recv_evd, FT_TIMEOUT_US, &ev) ==
		                   DAT_SUCCESS,
		           "the send of round %ld arrives", it);
	}
	FT_CHECK(bad == 0,
	         "%ld x an RDMA Write of %zu bytes, a Send and an RMR bind "
	         "complete in posting order (%d out of place)",
	         iters, len, bad);
	/* With nothing outstanding, a bind completes at once. */
	rc.as_64 = 0xb04;
	FT_DAT_CHECK(dat_rmr_bind(rmr, src->lmr, &win,
	                          DAT_MEM_PRIV_REMOTE_READ_FLAG, DAT_VA_TYPE_VA,
	                          p->tx.ep, rc, DAT_COMPLETION_DEFAULT_FLAG,
	                          &ctx));
	memset(&ev, 0, sizeof(ev));
	if (ft_wait(p->tx.req_evd, FT_TIMEOUT_US, &ev) != DAT_SUCCESS)
		ev.event_number = 0;
	FT_CHECK(ev.event_number == DAT_RMR_BIND_COMPLETION_EVENT &&
	                 ev.event_data.rmr_completion_event_data.user_cookie
	                                 .as_64 == 0xb04,
	         "a bind with no request outstanding completes: %s",
	         ft_event_desc(&ev));
	FT_DAT_CHECK(dat_rmr_free(rmr));
}

static void check_order_suppress(struct pair *p, struct ft_mr *src,
                                 struct ft_mr *dst, long iters)
{
	enum { N = 32 };
	DAT_LMR_TRIPLET s, r;
	DAT_DTO_COOKIE c;
	DAT_EVENT ev;
	int i, bad_recv = 0, bad_send = 0, bad_data = 0;
	long it;

	for (it = 0; it < iters; it++) {
		for (i = 0; i < N; i++) {
			r = ft_lmr_iov(dst, 256 * (size_t)i, 256);
			c.as_64 = (uint64_t)i;
			FT_REQUIRE(
			        dat_ep_post_recv(p->rx.ep, 1, &r, c,
			                         DAT_COMPLETION_DEFAULT_FLAG) ==
			                DAT_SUCCESS,
			        "post receive %d", i);
		}
		for (i = 0; i < N; i++) {
			ft_fill((char *)src->buf + 256 * (size_t)i, 200,
			        (uint64_t)(it * N + i));
			s = ft_lmr_iov(src, 256 * (size_t)i, 200);
			c.as_64 = 1000 + (uint64_t)i;
			FT_REQUIRE(
			        dat_ep_post_send(p->tx.ep, 1, &s, c,
			                         DAT_COMPLETION_DEFAULT_FLAG) ==
			                DAT_SUCCESS,
			        "post send %d", i);
		}
		for (i = 0; i < N; i++)
			if (!next_ok(p->tx.req_evd, 1000 + (uint64_t)i))
				bad_send++;
		for (i = 0; i < N; i++) {
			if (ft_wait(p->rx.recv_evd, FT_TIMEOUT_US, &ev) !=
			            DAT_SUCCESS ||
			    ev.event_data.dto_completion_event_data.user_cookie
			                    .as_64 != (uint64_t)i ||
			    ev.event_data.dto_completion_event_data.status !=
			            DAT_DTO_SUCCESS ||
			    ev.event_data.dto_completion_event_data
			                    .transfered_length != 200)
				bad_recv++;
			else if (ft_pattern_mismatch(
			                 (char *)dst->buf + 256 * (size_t)i,
			                 200, (uint64_t)(it * N + i)) >= 0)
				bad_data++;
		}
	}
	FT_CHECK(bad_send == 0, "%ld x %d sends complete in posting order",
	         iters, N);
	FT_CHECK(bad_recv == 0, "%ld x %d receives complete in posting order",
	         iters, N);
	FT_CHECK(bad_data == 0, "message i lands in receive i (%d wrong)",
	         bad_data);

	/* Suppression: 8 suppressed sends, then one signalled. */
	for (i = 0; i < 9; i++) {
		r = ft_lmr_iov(dst, 256 * (size_t)i, 256);
		c.as_64 = 2000 + (uint64_t)i;
		FT_DAT_CHECK(dat_ep_post_recv(p->rx.ep, 1, &r, c,
		                              DAT_COMPLETION_DEFAULT_FLAG));
	}
	for (i = 0; i < 9; i++) {
		s = ft_lmr_iov(src, 0, 16);
		c.as_64 = 3000 + (uint64_t)i;
		FT_DAT_CHECK(
		        dat_ep_post_send(p->tx.ep, 1, &s, c,
		                         i < 8 ? DAT_COMPLETION_SUPPRESS_FLAG
		                               : DAT_COMPLETION_DEFAULT_FLAG));
	}
	ft_expect_dto(p->tx.req_evd, FT_TIMEOUT_US, p->tx.ep, DAT_DTO_SEND,
	              3008, DAT_DTO_SUCCESS, 16, NULL,
	              "only the unsuppressed 9th send completes");
	for (i = 0; i < 9; i++)
		if (ft_wait(p->rx.recv_evd, FT_TIMEOUT_US, &ev) !=
		            DAT_SUCCESS ||
		    ev.event_data.dto_completion_event_data.user_cookie.as_64 !=
		            2000 + (uint64_t)i)
			break;
	FT_CHECK(i == 9, "all 9 messages, suppressed or not, are received");
	usleep(50000);
	ft_expect_empty(p->tx.req_evd, "no completion for suppressed sends");
}

/* ---- errors -----------------------------------------------------------------
 */

static void check_post_errors(struct pair *p, struct ft_mr *src,
                              struct ft_mr *dst)
{
	static DAT_LMR_TRIPLET s[300], rs[300];
	DAT_LMR_TRIPLET r;
	DAT_DTO_COOKIE c;
	DAT_COUNT i;
	DAT_EP_STATE st;
	DAT_BOOLEAN ridle = DAT_FALSE, qidle = DAT_FALSE;
	DAT_RETURN ret = DAT_SUCCESS;

	c.as_64 = 1;
	for (i = 0; i < 300; i++)
		s[i] = ft_lmr_iov(src, (size_t)i, 1);
	FT_DAT_EXPECT(dat_ep_post_send(p->tx.ep, -1, s, c,
	                               DAT_COMPLETION_DEFAULT_FLAG),
	              DAT_INVALID_PARAMETER);
	FT_DAT_EXPECT(dat_ep_post_send(p->tx.ep, 1, NULL, c,
	                               DAT_COMPLETION_DEFAULT_FLAG),
	              DAT_INVALID_PARAMETER);
	if (attr.max_request_iov < 300)
		FT_DAT_EXPECT(dat_ep_post_send(p->tx.ep,
		                               attr.max_request_iov + 1, s, c,
		                               DAT_COMPLETION_DEFAULT_FLAG),
		              DAT_INVALID_PARAMETER);
	for (i = 0; i < 300; i++)
		rs[i] = ft_lmr_iov(dst, (size_t)i, 1);
	if (attr.max_recv_iov < 300)
		FT_DAT_EXPECT(dat_ep_post_recv(p->rx.ep, attr.max_recv_iov + 1,
		                               rs, c,
		                               DAT_COMPLETION_DEFAULT_FLAG),
		              DAT_INVALID_PARAMETER);
	FT_DAT_EXPECT(dat_ep_post_send(p->tx.ep, 1, s, c,
	                               (DAT_COMPLETION_FLAGS)0x4000),
	              DAT_INVALID_PARAMETER);
	ft_expect_empty(p->tx.req_evd, "refused sends complete nothing");

	FT_DAT_CHECK(dat_ep_get_status(p->rx.ep, &st, &ridle, &qidle));
	FT_CHECK(st == DAT_EP_STATE_CONNECTED && ridle && qidle,
	         "get_status: connected, receive and request queues idle");
	/* A full receive queue. */
	r = ft_lmr_iov(dst, 0, 16);
	for (i = 0; i < attr.max_recv_dtos; i++) {
		ret = dat_ep_post_recv(p->rx.ep, 1, &r, c,
		                       DAT_COMPLETION_DEFAULT_FLAG);
		if (ret != DAT_SUCCESS)
			break;
	}
	FT_CHECK(i == attr.max_recv_dtos, "%d receives posted (max_recv_dtos)",
	         (int)i);
	FT_DAT_EXPECT(dat_ep_post_recv(p->rx.ep, 1, &r, c,
	                               DAT_COMPLETION_DEFAULT_FLAG),
	              DAT_INSUFFICIENT_RESOURCES);
	FT_DAT_CHECK(dat_ep_get_status(p->rx.ep, &st, &ridle, &qidle));
	FT_CHECK(!ridle, "get_status: receive queue not idle with receives "
	                 "posted");
}

/* CPU time this process has used, in microseconds. */
static uint64_t cpu_us(void)
{
	struct rusage u;

	if (getrusage(RUSAGE_SELF, &u) != 0)
		return 0;
	return (uint64_t)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1000000 +
	       (uint64_t)(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

/*
 * A wait with nothing to come sleeps: a connected EP's EVD waited on for
 * 300 ms times out having used a small part of that in CPU (the wait and
 * any progress thread together), not spun on a wait object that stays
 * readable.
 */
static void check_idle_wait(struct pair *p)
{
	uint64_t t0 = ft_now_us(), c0 = cpu_us(), wall, cpu;
	DAT_EVENT ev;
	DAT_RETURN ret;

	ret = ft_wait(p->rx.recv_evd, 300000, &ev);
	wall = ft_now_us() - t0;
	cpu = cpu_us() - c0;
	FT_CHECK(DAT_GET_TYPE(ret) == DAT_TIMEOUT_EXPIRED,
	         "dat_evd_wait on an idle EVD: %s (expected "
	         "DAT_TIMEOUT_EXPIRED)",
	         ft_ret_str(ret));
	FT_CHECK(cpu * 3 < wall,
	         "an idle 300 ms dat_evd_wait used %llu us of CPU in %llu us "
	         "(at most a third)",
	         (unsigned long long)cpu, (unsigned long long)wall);
}

static void check_flush(void)
{
	struct pair p;
	struct ft_mr mr, tmr;
	DAT_LMR_TRIPLET r;
	DAT_DTO_COOKIE c;
	int i;
	char what[64];

	pair_open(&p, &attr);
	FT_DAT_OK(ft_mr_create(&ra, ra.pz, 8192, DAT_MEM_PRIV_ALL_FLAG, &mr));
	FT_DAT_OK(ft_mr_create(&ta, ta.pz, 8192, DAT_MEM_PRIV_ALL_FLAG, &tmr));
	if (!pair_connect(&p))
		goto out;
	for (i = 0; i < 4; i++) {
		r = ft_lmr_iov(&mr, 1024 * (size_t)i, 1024);
		c.as_64 = 0xa000 + (uint64_t)i;
		FT_DAT_CHECK(dat_ep_post_recv(p.rx.ep, 1, &r, c,
		                              DAT_COMPLETION_DEFAULT_FLAG));
		c.as_64 = 0xb000 + (uint64_t)i;
		r = ft_lmr_iov(&tmr, 1024 * (size_t)i, 1024);
		FT_DAT_CHECK(dat_ep_post_recv(p.tx.ep, 1, &r, c,
		                              DAT_COMPLETION_DEFAULT_FLAG));
	}
	ft_disconnect_local(&p.tx, &p.rx, DAT_CLOSE_ABRUPT_FLAG);
	p.up = false;
	for (i = 0; i < 4; i++) {
		snprintf(what, sizeof(what),
		         "peer disconnected: receive %d "
		         "flushed",
		         i);
		ft_expect_dto(p.rx.recv_evd, FT_TIMEOUT_US, p.rx.ep,
		              DAT_DTO_RECEIVE, 0xa000 + (uint64_t)i,
		              DAT_DTO_ERR_FLUSHED, -1, NULL, what);
	}
	for (i = 0; i < 4; i++) {
		snprintf(what, sizeof(what),
		         "own abrupt disconnect: receive %d flushed", i);
		ft_expect_dto(p.tx.recv_evd, FT_TIMEOUT_US, p.tx.ep,
		              DAT_DTO_RECEIVE, 0xb000 + (uint64_t)i,
		              DAT_DTO_ERR_FLUSHED, -1, NULL, what);
	}
out:
	pair_close(&p);
	ft_mr_free(&mr);
	ft_mr_free(&tmr);
}

/*
 * Sends posted when the connection ends abruptly all complete, once
 * each: flushed, or successful where the fabric had finished one (the
 * peer posts no receive, so 4 MiB sends are likely still in flight). A
 * send never reported, or reported twice, fails. They complete in
 * posting order, as an InfiniBand send queue flushes: four small sends
 * first, each reaped, so that the provider reuses its contexts in
 * another order than it first handed them out.
 */
static void check_flush_requests(void)
{
	const size_t len = (size_t)4 << 20;
	struct pair p;
	struct ft_mr smr, rmr;
	DAT_LMR_TRIPLET s, r;
	DAT_DTO_COOKIE c;
	DAT_EVENT ev;
	int i, seen = 0, flushed = 0, n, next = 0, out_of_order = 0;

	if (attr.max_message_size < len)
		return;
	pair_open(&p, &attr);
	FT_DAT_OK(ft_mr_create(&ta, ta.pz, len, DAT_MEM_PRIV_ALL_FLAG, &smr));
	FT_DAT_OK(ft_mr_create(&ra, ra.pz, 4096, DAT_MEM_PRIV_ALL_FLAG, &rmr));
	if (!pair_connect(&p))
		goto out;
	s = ft_lmr_iov(&smr, 0, 64);
	for (i = 0; i < 4; i++) {
		r = ft_lmr_iov(&rmr, 1024 * (size_t)i, 1024);
		c.as_64 = 0xc000 + (uint64_t)i;
		FT_DAT_CHECK(dat_ep_post_recv(p.rx.ep, 1, &r, c,
		                              DAT_COMPLETION_DEFAULT_FLAG));
		FT_DAT_CHECK(dat_ep_post_send(p.tx.ep, 1, &s, c,
		                              DAT_COMPLETION_DEFAULT_FLAG));
	}
	for (i = 0; i < 4; i++) {
		FT_CHECK(next_ok(p.tx.req_evd, 0xc000 + (uint64_t)i),
		         "small send %d completes", i);
		FT_CHECK(next_ok(p.rx.recv_evd, 0xc000 + (uint64_t)i),
		         "small send %d arrives", i);
	}
	s = ft_lmr_iov(&smr, 0, len);
	for (i = 0; i < 4; i++) {
		c.as_64 = 0xd000 + (uint64_t)i;
		FT_DAT_CHECK(dat_ep_post_send(p.tx.ep, 1, &s, c,
		                              DAT_COMPLETION_DEFAULT_FLAG));
	}
	/* tcp's peer sees the end only once it reads the message: not
	 * waited for. */
	ft_disconnect_local(&p.tx, NULL, DAT_CLOSE_ABRUPT_FLAG);
	p.up = false;
	for (n = 0; n < 8 && seen != 0xf; n++) {
		const DAT_DTO_COMPLETION_EVENT_DATA *d =
		        &ev.event_data.dto_completion_event_data;

		if (ft_wait(p.tx.req_evd, FT_TIMEOUT_US, &ev) != DAT_SUCCESS)
			break;
		if (ev.event_number != DAT_DTO_COMPLETION_EVENT ||
		    d->user_cookie.as_64 < 0xd000 ||
		    d->user_cookie.as_64 > 0xd003 ||
		    (seen & 1 << (d->user_cookie.as_64 - 0xd000)) ||
		    (d->status != DAT_DTO_SUCCESS &&
		     d->status != DAT_DTO_ERR_FLUSHED)) {
			FT_CHECK(false,
			         "abrupt disconnect: unexpected request "
			         "completion (%s)",
			         ft_event_desc(&ev));
			continue;
		}
		seen |= 1 << (d->user_cookie.as_64 - 0xd000);
		flushed += d->status == DAT_DTO_ERR_FLUSHED;
		out_of_order += d->user_cookie.as_64 != 0xd000 + (uint64_t)next;
		next++;
	}
	FT_CHECK(seen == 0xf,
	         "abrupt disconnect: each of 4 posted 4 MiB sends completes "
	         "once, success or flushed (seen mask %#x, %d flushed)",
	         seen, flushed);
	FT_CHECK(out_of_order == 0,
	         "abrupt disconnect: the 4 sends complete in posting order "
	         "(%d of %d out of place, %d flushed)",
	         out_of_order, next, flushed);
out:
	pair_close(&p);
	ft_mr_free(&smr);
	ft_mr_free(&rmr);
}

/*
 * A graceful disconnect while Sends wait for room (no receive posted at
 * the peer): once the peer posts its receives, every message arrives in
 * order, every Send completes successfully, and then both sides see
 * DISCONNECTED, as a graceful end waits for its requests on InfiniBand.
 * late_ms: the peer posts its receives that long after the disconnect.
 * Where the peer's provider holds a message with no receive (sockets),
 * the Sends have completed by then and the end has reached the peer: the
 * connection must stay up there until receives take the messages. Small
 * Sends (len) complete at once on tcp too, where the socket holds them.
 */
static void check_graceful_waits_for_room(size_t len, int late_ms)
{
	enum { N = 4 };
	struct pair p;
	struct ft_mr smr, rmr;
	DAT_LMR_TRIPLET l;
	DAT_DTO_COOKIE c;
	int i, posted = 0, whole = 0;
	char tag[64], what[128];

	if (attr.max_message_size < len || attr.max_request_dtos < N ||
	    attr.max_recv_dtos < N)
		return;
	snprintf(tag, sizeof(tag), "graceful end, %zu-byte Sends%s", len,
	         late_ms > 0 ? ", receives late" : "");
	pair_open(&p, &attr);
	FT_DAT_OK(
	        ft_mr_create(&ta, ta.pz, N * len, DAT_MEM_PRIV_ALL_FLAG, &smr));
	FT_DAT_OK(
	        ft_mr_create(&ra, ra.pz, N * len, DAT_MEM_PRIV_ALL_FLAG, &rmr));
	if (!pair_connect(&p))
		goto out;
	for (i = 0; i < N; i++) {
		ft_fill((char *)smr.buf + (size_t)i * len, len, 16000 + i);
		l = ft_lmr_iov(&smr, (size_t)i * len, len);
		c.as_64 = 0xe000 + (uint64_t)i;
		posted += dat_ep_post_send(p.tx.ep, 1, &l, c,
		                           DAT_COMPLETION_DEFAULT_FLAG) ==
		          DAT_SUCCESS;
	}
	FT_CHECK(posted == N,
	         "%s: %d posts with no receive posted succeed (%d did)", tag, N,
	         posted);
	usleep(200000);
	FT_DAT_CHECK(dat_ep_disconnect(p.tx.ep, DAT_CLOSE_GRACEFUL_FLAG));
	p.up = false;
	if (late_ms > 0)
		usleep((useconds_t)late_ms * 1000);
	for (i = 0; i < N; i++) {
		l = ft_lmr_iov(&rmr, (size_t)i * len, len);
		c.as_64 = 0xe100 + (uint64_t)i;
		FT_DAT_CHECK(dat_ep_post_recv(p.rx.ep, 1, &l, c,
		                              DAT_COMPLETION_DEFAULT_FLAG));
	}
	snprintf(what, sizeof(what),
	         "%s: a Send that waited arrives, in posting order", tag);
	for (i = 0; i < posted; i++)
		if (ft_expect_dto(p.rx.recv_evd, FT_TIMEOUT_US, p.rx.ep,
		                  DAT_DTO_RECEIVE, 0xe100 + (uint64_t)i,
		                  DAT_DTO_SUCCESS, (long)len, NULL, what))
			whole += ft_pattern_mismatch((char *)rmr.buf +
			                                     (size_t)i * len,
			                             len, 16000 + i) < 0;
	FT_CHECK(whole == posted, "%s: each message arrived whole (%d of %d)",
	         tag, whole, posted);
	for (i = 0; i < posted; i++)
		FT_CHECK(next_ok(p.tx.req_evd, 0xe000 + (uint64_t)i),
		         "%s: Send %d completes successfully, in posting "
		         "order",
		         tag, i);
	snprintf(what, sizeof(what), "%s: DISCONNECTED once the Sends are done",
	         tag);
	ft_expect_event(p.tx.conn_evd, FT_TIMEOUT_US,
	                DAT_CONNECTION_EVENT_DISCONNECTED, p.tx.ep, NULL, what);
	snprintf(what, sizeof(what), "%s: the peer sees DISCONNECTED", tag);
	ft_expect_event(p.rx.conn_evd, FT_TIMEOUT_US,
	                DAT_CONNECTION_EVENT_DISCONNECTED, p.rx.ep, NULL, what);
out:
	pair_close(&p);
	ft_mr_free(&smr);
	ft_mr_free(&rmr);
}

static void check_too_small(void)
{
	struct pair p;
	struct ft_mr rmr, smr;
	DAT_LMR_TRIPLET r, s;
	DAT_DTO_COOKIE c;
	DAT_EVENT ev;

	pair_open(&p, &attr);
	FT_DAT_OK(ft_mr_create(&ra, ra.pz, 4096, DAT_MEM_PRIV_ALL_FLAG, &rmr));
	FT_DAT_OK(ft_mr_create(&ta, ta.pz, 4096, DAT_MEM_PRIV_ALL_FLAG, &smr));
	if (!pair_connect(&p))
		goto out;
	r = ft_lmr_iov(&rmr, 0, 16);
	c.as_64 = 0xc000;
	FT_DAT_CHECK(dat_ep_post_recv(p.rx.ep, 1, &r, c,
	                              DAT_COMPLETION_DEFAULT_FLAG));
	r = ft_lmr_iov(&rmr, 1024, 1024);
	c.as_64 = 0xc001;
	FT_DAT_CHECK(dat_ep_post_recv(p.rx.ep, 1, &r, c,
	                              DAT_COMPLETION_DEFAULT_FLAG));
	s = ft_lmr_iov(&smr, 0, 64);
	c.as_64 = 0xc002;
	FT_DAT_CHECK(dat_ep_post_send(p.tx.ep, 1, &s, c,
	                              DAT_COMPLETION_DEFAULT_FLAG));
	ft_expect_dto(p.rx.recv_evd, FT_TIMEOUT_US, p.rx.ep, DAT_DTO_RECEIVE,
	              0xc000, DAT_DTO_ERR_LOCAL_LENGTH, -1, NULL,
	              "64 bytes into a 16-byte receive: LOCAL_LENGTH");
	ft_expect_dto(p.rx.recv_evd, FT_TIMEOUT_US, p.rx.ep, DAT_DTO_RECEIVE,
	              0xc001, DAT_DTO_ERR_FLUSHED, -1, NULL,
	              "the next receive is flushed: the connection broke");
	ft_expect_event(p.rx.conn_evd, FT_TIMEOUT_US,
	                DAT_CONNECTION_EVENT_BROKEN, p.rx.ep, NULL,
	                "the receiver's connection EVD reports BROKEN");
	FT_CHECK(ft_wait(p.tx.req_evd, FT_TIMEOUT_US, &ev) == DAT_SUCCESS &&
	                 ev.event_number == DAT_DTO_COMPLETION_EVENT &&
	                 ev.event_data.dto_completion_event_data.user_cookie
	                                 .as_64 == 0xc002,
	         "the sender's send completes (%s)", ft_event_desc(&ev));
	FT_CHECK(ft_wait(p.tx.conn_evd, FT_TIMEOUT_US, &ev) == DAT_SUCCESS &&
	                 (ev.event_number == DAT_CONNECTION_EVENT_BROKEN ||
	                  ev.event_number == DAT_CONNECTION_EVENT_DISCONNECTED),
	         "the sender's connection ends too (%s)", ft_event_desc(&ev));
	p.up = false;
out:
	pair_close(&p);
	ft_mr_free(&rmr);
	ft_mr_free(&smr);
}

/* One EVD for DTOs and connection events: successes precede DISCONNECTED. */
static void check_shared_evd(void)
{
	DAT_EVD_HANDLE tev, rev;
	DAT_EP_HANDLE tx = DAT_HANDLE_NULL, rx = DAT_HANDLE_NULL;
	struct ft_mr rmr, smr;
	DAT_LMR_TRIPLET r, s;
	DAT_DTO_COOKIE c;
	DAT_CR_HANDLE cr;
	DAT_EVENT ev;
	int i, n, disc_at, last_ok_tx = -1, last_ok_rx = -1, ok_rx = 0;
	int flushed_rx = 0, ok_tx = 0, disc_tx_at = -1;
	const DAT_EVD_FLAGS f = DAT_EVD_DTO_FLAG | DAT_EVD_CONNECTION_FLAG;

	FT_DAT_OK(ft_evd_create(&ta, 64, f, &tev));
	FT_DAT_OK(ft_evd_create(&ra, 64, f, &rev));
	FT_DAT_OK(dat_ep_create(ta.ia, ta.pz, tev, tev, tev, &attr, &tx));
	FT_DAT_OK(dat_ep_create(ra.ia, ra.pz, rev, rev, rev, &attr, &rx));
	FT_DAT_OK(ft_mr_create(&ra, ra.pz, 8192, DAT_MEM_PRIV_ALL_FLAG, &rmr));
	FT_DAT_OK(ft_mr_create(&ta, ta.pz, 8192, DAT_MEM_PRIV_ALL_FLAG, &smr));
	for (i = 0; i < 6; i++) {
		r = ft_lmr_iov(&rmr, 1024 * (size_t)i, 1024);
		c.as_64 = 0xd000 + (uint64_t)i;
		FT_DAT_CHECK(dat_ep_post_recv(rx, 1, &r, c,
		                              DAT_COMPLETION_DEFAULT_FLAG));
	}
	FT_DAT_CHECK(dat_ep_connect(tx, ra.attr.ia_address_ptr, L.qual,
	                            FT_TIMEOUT_US, 0, NULL, DAT_QOS_BEST_EFFORT,
	                            DAT_CONNECT_DEFAULT_FLAG));
	if (!ft_expect_event(L.cr_evd, FT_TIMEOUT_US,
	                     DAT_CONNECTION_REQUEST_EVENT, NULL, &ev,
	                     "shared EVD: request"))
		goto out;
	cr = ev.event_data.cr_arrival_event_data.cr_handle;
	FT_DAT_CHECK(dat_cr_accept(cr, rx, 0, NULL));
	if (!ft_expect_event(rev, FT_TIMEOUT_US,
	                     DAT_CONNECTION_EVENT_ESTABLISHED, rx, NULL,
	                     "shared EVD: passive ESTABLISHED") ||
	    !ft_expect_event(tev, FT_TIMEOUT_US,
	                     DAT_CONNECTION_EVENT_ESTABLISHED, tx, NULL,
	                     "shared EVD: active ESTABLISHED"))
		goto out;
	for (i = 0; i < 4; i++) {
		s = ft_lmr_iov(&smr, 1024 * (size_t)i, 512);
		c.as_64 = 0xe000 + (uint64_t)i;
		FT_DAT_CHECK(dat_ep_post_send(tx, 1, &s, c,
		                              DAT_COMPLETION_DEFAULT_FLAG));
	}
	FT_DAT_CHECK(dat_ep_disconnect(tx, DAT_CLOSE_GRACEFUL_FLAG));

	/* Sender: 4 successful sends, all before DISCONNECTED. */
	for (n = 0; n < 16 && disc_tx_at < 0; n++) {
		if (ft_wait(tev, FT_TIMEOUT_US, &ev) != DAT_SUCCESS)
			break;
		if (ev.event_number == DAT_CONNECTION_EVENT_DISCONNECTED)
			disc_tx_at = n;
		else if (ev.event_number == DAT_DTO_COMPLETION_EVENT &&
		         ev.event_data.dto_completion_event_data.status ==
		                 DAT_DTO_SUCCESS) {
			ok_tx++;
			last_ok_tx = n;
		}
	}
	FT_CHECK(disc_tx_at >= 0 && ok_tx == 4 && last_ok_tx < disc_tx_at,
	         "shared EVD, graceful disconnect: the 4 sends complete "
	         "successfully before DISCONNECTED (%d ok, DISCONNECTED at "
	         "%d)",
	         ok_tx, disc_tx_at);

	/* Receiver: 4 successes and 2 flushes; successes before DISCONNECTED.
	 */
	disc_at = -1;
	for (n = 0; n < 16 && (disc_at < 0 || ok_rx + flushed_rx < 6); n++) {
		if (ft_wait(rev, FT_TIMEOUT_US, &ev) != DAT_SUCCESS)
			break;
		if (ev.event_number == DAT_CONNECTION_EVENT_DISCONNECTED) {
			disc_at = n;
		} else if (ev.event_number == DAT_DTO_COMPLETION_EVENT) {
			if (ev.event_data.dto_completion_event_data.status ==
			    DAT_DTO_SUCCESS) {
				ok_rx++;
				last_ok_rx = n;
			} else if (ev.event_data.dto_completion_event_data
			                   .status == DAT_DTO_ERR_FLUSHED) {
				flushed_rx++;
			}
		}
	}
	FT_CHECK(ok_rx == 4 && flushed_rx == 2,
	         "shared EVD: the receiver gets 4 messages and 2 flushed "
	         "receives (%d, %d)",
	         ok_rx, flushed_rx);
	FT_CHECK(disc_at >= 0 && last_ok_rx < disc_at,
	         "shared EVD: successful receives come before DISCONNECTED "
	         "(last at %d, DISCONNECTED at %d)",
	         last_ok_rx, disc_at);
out:
	if (tx != DAT_HANDLE_NULL)
		FT_DAT_CHECK(dat_ep_free(tx));
	if (rx != DAT_HANDLE_NULL)
		FT_DAT_CHECK(dat_ep_free(rx));
	ft_drain(tev);
	ft_drain(rev);
	FT_DAT_CHECK(dat_evd_free(tev));
	FT_DAT_CHECK(dat_evd_free(rev));
	ft_mr_free(&rmr);
	ft_mr_free(&smr);
}

int main(int argc, char **argv)
{
	struct pair p;
	struct ft_mr src, dst;
	DAT_EP_PARAM ep;
	size_t max_msg, max_rdma, buf;
	const char *rr;
	DAT_COUNT n;

	ft_init(argc, argv, "dat_dto",
	        "send/recv sizes and IOVs, RDMA write/read, suppression, "
	        "ordering, flush, LOCAL_LENGTH, shared EVD",
	        NULL);
	ft_ia_open(ft_opts.ia_name, &ta);
	ft_ia_open(ft_opts.ia_name, &ra);
	ft_check_libs();
	rr = ft_provider_attr(&ta, "DAT_IB_RDMA_READ");
	have_read = rr != NULL && strcmp(rr, "TRUE") == 0;

	ft_ep_attr_default(&ta, &attr);
	attr.max_request_iov = ta.attr.max_iov_segments_per_dto;
	attr.max_recv_iov = ta.attr.max_iov_segments_per_dto;
	if (attr.max_request_iov > 256)
		attr.max_request_iov = attr.max_recv_iov = 256;
	attr.max_rdma_read_iov =
	        ta.attr.max_iov_segments_per_rdma_read > 0
	                ? ta.attr.max_iov_segments_per_rdma_read
	                : 1;
	attr.max_rdma_write_iov =
	        ta.attr.max_iov_segments_per_rdma_write > 0
	                ? ta.attr.max_iov_segments_per_rdma_write
	                : 1;
	if (attr.max_rdma_read_iov > 64)
		attr.max_rdma_read_iov = 64;
	if (attr.max_rdma_write_iov > 64)
		attr.max_rdma_write_iov = 64;
	FT_DAT_OK(ft_listen(&ra, &L));
	pair_open(&p, &attr);
	memset(&ep, 0, sizeof(ep));
	FT_DAT_CHECK(dat_ep_query(p.tx.ep, DAT_EP_FIELD_EP_ATTR_ALL, &ep));
	attr = ep.ep_attr;
	ft_log("EP: max_message_size %u, max_rdma_size %u, iov %d/%d, rdma "
	       "iov r%d w%d, dtos %d/%d, RDMA read %s",
	       (unsigned)attr.max_message_size, (unsigned)attr.max_rdma_size,
	       (int)attr.max_request_iov, (int)attr.max_recv_iov,
	       (int)attr.max_rdma_read_iov, (int)attr.max_rdma_write_iov,
	       (int)attr.max_request_dtos, (int)attr.max_recv_dtos,
	       have_read ? "yes" : "no");
	max_msg = attr.max_message_size < MAX_DEFAULT_SIZE || ft_opts.nsizes
	                  ? attr.max_message_size
	                  : MAX_DEFAULT_SIZE;
	max_rdma = attr.max_rdma_size < MAX_DEFAULT_SIZE || ft_opts.nsizes
	                   ? attr.max_rdma_size
	                   : MAX_DEFAULT_SIZE;
	if (attr.max_message_size > MAX_DEFAULT_SIZE && !ft_opts.nsizes)
		ft_log("max_message_size %u: sizes capped at %zu (use -S)",
		       (unsigned)attr.max_message_size, MAX_DEFAULT_SIZE);
	buf = (max_msg > max_rdma ? max_msg : max_rdma) + 65536;
	FT_DAT_OK(ft_mr_create(&ta, ta.pz, buf, DAT_MEM_PRIV_ALL_FLAG, &src));
	FT_DAT_OK(ft_mr_create(&ra, ra.pz, buf, DAT_MEM_PRIV_ALL_FLAG, &dst));
	FT_REQUIRE(pair_connect(&p), "a connected pair");

	check_idle_wait(&p);
	check_sizes(&p, &src, &dst, max_msg);
	for (n = 1; n <= attr.max_request_iov && n <= 256;
	     n = n < 4 ? n + 1 : n * 4) {
		DAT_COUNT m = n < attr.max_recv_iov ? n : attr.max_recv_iov;

		check_iov(&p, &src, &dst, n, m);
	}
	check_iov(&p, &src, &dst, attr.max_request_iov, 1);
	check_iov(&p, &src, &dst, 1, attr.max_recv_iov);
	check_iov(&p, &src, &dst, attr.max_request_iov, attr.max_recv_iov);
	check_rdma(&p, &src, &dst, max_rdma);
	check_write_then_send(&p, &src, &dst,
	                      max_rdma < ((size_t)1 << 20) ? max_rdma
	                                                   : ((size_t)1 << 20));
	check_wait_for_room(&p, &src, &dst, 1);
	check_order_suppress(&p, &src, &dst, ft_iterations(4));
	check_request_order(&p, &src, &dst,
	                    max_rdma < ((size_t)1 << 18) ? max_rdma
	                                                 : ((size_t)1 << 18),
	                    ft_iterations(4));
	check_bind_order(&p, &src, &dst,
	                 max_rdma < ((size_t)1 << 18) ? max_rdma
	                                              : ((size_t)1 << 18),
	                 ft_iterations(4));
	check_post_errors(&p, &src, &dst);
	pair_close(&p);
	check_modified_wait_for_room(&src, &dst);

	check_flush();
	check_flush_requests();
	check_graceful_waits_for_room((size_t)4 << 20, 0);
	check_graceful_waits_for_room((size_t)4 << 20, 300);
	check_graceful_waits_for_room(64, 300);
	check_too_small();
	check_shared_evd();

	ft_mr_free(&src);
	ft_mr_free(&dst);
	ft_listener_free(&L);
	ft_ia_close(&ra);
	ft_ia_close(&ta);
	return ft_finish();
}
