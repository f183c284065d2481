/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * dat_srq: shared receive queues.  Several EPs on one SRQ: receives leave
 * the SRQ in posting order (each EP takes the oldest when it takes one,
 * EPs waiting for one are served in turn), each completion names its EP
 * and goes to that EP's receive EVD, the data lands in the receive the
 * cookie names; a low watermark fires once per dat_srq_set_lw, also at
 * once when set below what the SRQ holds; a resize under load (a thread
 * resizing while messages flow) loses and repeats nothing; an EP whose
 * connection ends, or that is freed connected, flushes the receives it
 * held, each once, to its own EVD and nothing of another EP's, and the
 * async EVD hears DAT_ASYNC_ERROR_EP_BROKEN for it (OFED's last WQE
 * reached); a reset EP takes receives again once reconnected; argument
 * and handle checks (bad and freed handles give DAT_INVALID_HANDLE).
 * Single process, two IAs; -I sets the messages of the resize test.
 */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shared.h"

#define SLOT      256 /* bytes per receive buffer: cookie k, slot k % NSLOTS */
#define NSLOTS    256
#define MSG_LEN   64
#define MSG_MAGIC 0x5352510au
/* An error to expect: its type, and its subtype unless 0. */
#define ERR(type, sub) ((DAT_RETURN)((type) | (sub)))

static struct ft_ia ta, ra; /* senders; receivers, on the SRQ */
static struct ft_listener L;
static struct ft_mr smr, rmr;
static DAT_EP_ATTR tx_attr;

/* A receiver on the SRQ and the sender connected to it. */
struct link {
	struct ft_ep tx, rx;
	bool up;
	uint32_t sent; /* messages sent on it */
};

/* ---- helpers ----------------------------------------------------------------
 */

static DAT_SRQ_HANDLE srq_create(DAT_COUNT max, DAT_COUNT iov, DAT_COUNT lw)
{
	DAT_SRQ_ATTR a;
	DAT_SRQ_HANDLE srq = DAT_HANDLE_NULL;

	a.max_recv_dtos = max;
	a.max_recv_iov = iov;
	a.low_watermark = lw;
	FT_DAT_OK(dat_srq_create(ra.ia, ra.pz, &a, &srq));
	return srq;
}

static DAT_SRQ_PARAM srq_query(DAT_SRQ_HANDLE srq)
{
	DAT_SRQ_PARAM p;

	memset(&p, 0, sizeof(p));
	FT_DAT_CHECK(dat_srq_query(srq, DAT_SRQ_FIELD_ALL, &p));
	return p;
}

/* An EP on srq with max_recv_dtos depth; its own receive EVD unless
 * recv_evd is given. */
static void rx_create(DAT_SRQ_HANDLE srq, DAT_COUNT depth,
                      DAT_EVD_HANDLE recv_evd, struct ft_ep *ep)
{
	DAT_EP_ATTR a;

	memset(ep, 0, sizeof(*ep));
	ft_ep_attr_default(&ra, &a);
	a.max_recv_dtos = depth;
	FT_DAT_OK(ft_evd_create(&ra, 64, DAT_EVD_DTO_FLAG, &ep->req_evd));
	FT_DAT_OK(
	        ft_evd_create(&ra, 16, DAT_EVD_CONNECTION_FLAG, &ep->conn_evd));
	if (recv_evd == DAT_HANDLE_NULL)
		FT_DAT_OK(ft_evd_create(&ra, 64, DAT_EVD_DTO_FLAG,
		                        &ep->recv_evd));
	FT_DAT_OK(dat_ep_create_with_srq(
	        ra.ia, ra.pz,
	        recv_evd != DAT_HANDLE_NULL ? recv_evd : ep->recv_evd,
	        ep->req_evd, ep->conn_evd, srq, &a, &ep->ep));
}

/* A sender and a receiver on srq, connected. */
static void link_open(struct link *l, DAT_SRQ_HANDLE srq, DAT_COUNT depth,
                      DAT_EVD_HANDLE recv_evd)
{
	memset(l, 0, sizeof(*l));
	FT_DAT_OK(ft_ep_create(&ta, ta.pz, &tx_attr, 64, &l->tx));
	rx_create(srq, depth, recv_evd, &l->rx);
	l->up = ft_connect_local(&ta, &l->tx, &ra, &l->rx, &L);
	FT_REQUIRE(l->up, "a connected sender and SRQ receiver");
}

static void expect_async(DAT_EVENT_NUMBER num, DAT_HANDLE h, DAT_COUNT reason,
                         const char *what);

/*
 * End the link's connection (the async EVD hears EP_BROKEN for the SRQ
 * EP, as OFED reports InfiniBand's last WQE reached) and free both EPs and
 * the EVDs the link owns (a shared receive EVD is the caller's).
 */
static void link_close(struct link *l)
{
	if (l->up && ft_disconnect_local(&l->tx, &l->rx, DAT_CLOSE_ABRUPT_FLAG))
		expect_async(DAT_ASYNC_ERROR_EP_BROKEN, l->rx.ep,
		             DAT_EP_TRANSFER_TO_ERROR,
		             "the SRQ EP's connection ended");
	l->up = false;
	ft_ep_free(&l->tx);
	ft_ep_free(&l->rx);
}

/*
 * Wait for the link's Send l->sent to complete. One process drives both
 * IAs: while it polls the Send's EVD it also polls the receiver's request
 * EVD, where nothing comes, so that the receiving IA moves too. On rxd a
 * Send completes once the receiver has read its queue, which a blocking
 * wait on the sender left to the receiver's progress thread, every 10 ms.
 */
static void send_wait(struct link *l)
{
	DAT_EVENT ev, stray;
	DAT_RETURN ret;
	int nstray = 0;

	ret = ft_poll_with(l->tx.req_evd, FT_TIMEOUT_US, &ev, l->rx.req_evd,
	                   &stray, 1, &nstray);
	if (nstray != 0)
		FT_CHECK(false, "the receiver's request EVD stays empty: %s",
		         ft_event_desc(&stray));
	if (!FT_CHECK(ret == DAT_SUCCESS, "send: dat_evd_dequeue = %s",
	              ft_ret_str(ret)))
		return;
	ft_check_dto(&ev, l->tx.ep, DAT_DTO_SEND, l->sent, DAT_DTO_SUCCESS,
	             MSG_LEN, "send");
}

/* Send message seq of link number idx (its payload names both). */
static void send_msg(struct link *l, int idx)
{
	unsigned char *b = (unsigned char *)smr.buf + (size_t)idx * SLOT;
	uint32_t w[3] = {MSG_MAGIC, (uint32_t)idx, l->sent};
	DAT_LMR_TRIPLET t = ft_lmr_iov(&smr, (size_t)idx * SLOT, MSG_LEN);
	DAT_DTO_COOKIE c;

	memcpy(b, w, sizeof(w));
	ft_fill(b + sizeof(w), MSG_LEN - sizeof(w), l->sent);
	c.as_64 = l->sent;
	FT_DAT_CHECK(dat_ep_post_send(l->tx.ep, 1, &t, c,
	                              DAT_COMPLETION_DEFAULT_FLAG));
	send_wait(l);
	l->sent++;
}

/* Whether receive buffer slot holds message seq of link idx. */
static bool msg_in_slot(uint64_t slot, int idx, uint32_t seq)
{
	const unsigned char *b =
	        (const unsigned char *)rmr.buf + (slot % NSLOTS) * SLOT;
	uint32_t w[3];

	memcpy(w, b, sizeof(w));
	return w[0] == MSG_MAGIC && w[1] == (uint32_t)idx && w[2] == seq &&
	       ft_pattern_mismatch(b + sizeof(w), MSG_LEN - sizeof(w), seq) < 0;
}

/* Post receive cookie (buffer slot cookie % NSLOTS) to srq. */
static DAT_RETURN srq_post(DAT_SRQ_HANDLE srq, uint64_t cookie)
{
	DAT_LMR_TRIPLET t = ft_lmr_iov(&rmr, (cookie % NSLOTS) * SLOT, SLOT);
	DAT_DTO_COOKIE c;

	memset((char *)rmr.buf + (cookie % NSLOTS) * SLOT, 0, SLOT);
	c.as_64 = cookie;
	return dat_srq_post_recv(srq, 1, &t, c);
}

/*
 * Send on link idx and check its receive: the cookie it was to take, its
 * EP, its EVD, the data in that receive's buffer.
 */
static void send_expect(struct link *lk, int idx, uint64_t cookie)
{
	uint32_t seq = lk[idx].sent;
	char what[96];
	DAT_EVENT ev;

	send_msg(&lk[idx], idx);
	snprintf(what, sizeof(what),
	         "EP %d's message takes receive %llu, on its own EVD", idx,
	         (unsigned long long)cookie);
	if (ft_expect_dto(lk[idx].rx.recv_evd, FT_TIMEOUT_US, lk[idx].rx.ep,
	                  DAT_DTO_RECEIVE, cookie, DAT_DTO_SUCCESS, MSG_LEN,
	                  &ev, what))
		FT_CHECK(msg_in_slot(cookie, idx, seq),
		         "EP %d's message %u is in receive %llu's buffer", idx,
		         seq, (unsigned long long)cookie);
}

static void expect_recv_query(DAT_EP_HANDLE ep, DAT_COUNT n, const char *who)
{
	DAT_COUNT nbufs = -1, span = -1;

	FT_DAT_CHECK(dat_ep_recv_query(ep, &nbufs, &span));
	FT_CHECK(nbufs == n && span == n,
	         "dat_ep_recv_query: %s holds %d receives (%d, span %d)", who,
	         n, nbufs, span);
}

static void expect_counts(DAT_SRQ_HANDLE srq, DAT_COUNT avail,
                          DAT_COUNT outstanding, const char *when)
{
	DAT_SRQ_PARAM p = srq_query(srq);

	FT_CHECK(p.available_dto_count == avail &&
	                 p.outstanding_dto_count == outstanding,
	         "%s: %d receives on the SRQ, %d outstanding (got %d, %d)",
	         when, avail, outstanding, p.available_dto_count,
	         p.outstanding_dto_count);
}

/* An async event on ra: num, handle h, reason. */
static void expect_async(DAT_EVENT_NUMBER num, DAT_HANDLE h, DAT_COUNT reason,
                         const char *what)
{
	DAT_EVENT ev;
	DAT_RETURN ret;

	memset(&ev, 0, sizeof(ev));
	ret = ft_wait(ra.async_evd, FT_TIMEOUT_US, &ev);
	FT_CHECK(ret == DAT_SUCCESS && ev.event_number == num &&
	                 ev.event_data.asynch_error_event_data.dat_handle ==
	                         h &&
	                 ev.event_data.asynch_error_event_data.reason == reason,
	         "%s: %s for %p, reason %d (got %s: %s, %p, reason %d)", what,
	         ft_event_str(num), h, reason, ft_ret_str(ret),
	         ft_event_str(ev.event_number),
	         ev.event_data.asynch_error_event_data.dat_handle,
	         ev.event_data.asynch_error_event_data.reason);
}

/* No async event within ms (the CM posts some a little later). */
static void expect_no_async(unsigned ms, const char *what)
{
	DAT_EVENT ev;
	DAT_RETURN ret;

	ret = ft_wait(ra.async_evd, (DAT_TIMEOUT)ms * 1000, &ev);
	FT_CHECK(DAT_GET_TYPE(ret) == DAT_TIMEOUT_EXPIRED,
	         "%s: no async event (got %s%s%s)", what, ft_ret_str(ret),
	         ret == DAT_SUCCESS ? ": " : "",
	         ret == DAT_SUCCESS ? ft_event_desc(&ev) : "");
}

/* ---- receives leave the SRQ in posting order --------------------------------
 */

static void check_order(void)
{
	/* Who sends (C A B A C B, then B C A) and the receive it takes. */
	static const int who[9] = {2, 0, 1, 0, 2, 1, 1, 2, 0};
	static const uint64_t takes[9] = {2, 0, 1, 4, 3, 5, 8, 7, 6};
	DAT_SRQ_HANDLE srq = srq_create(16, 1, 0);
	struct link lk[3];
	DAT_EP_PARAM ep;
	uint64_t c;
	int i;

	ft_log("-- several EPs on one SRQ: the order receives are taken in");
	for (c = 0; c < 6; c++)
		FT_DAT_CHECK(srq_post(srq, c));
	expect_counts(srq, 6, 6, "6 posted, no EP connected");
	/* Each may hold one: A takes 0, B 1, C 2, as they connect. */
	for (i = 0; i < 3; i++)
		link_open(&lk[i], srq, 1, DAT_HANDLE_NULL);
	memset(&ep, 0, sizeof(ep));
	FT_DAT_CHECK(dat_ep_query(lk[0].rx.ep, DAT_EP_FIELD_ALL, &ep));
	FT_CHECK(ep.srq_handle == srq, "dat_ep_query names the EP's SRQ");
	FT_CHECK(ep.ep_attr.max_recv_dtos == 1 && ep.ep_attr.max_recv_iov == 0,
	         "an EP on an SRQ: max_recv_dtos 1, max_recv_iov 0 (got %d, "
	         "%d)",
	         ep.ep_attr.max_recv_dtos, ep.ep_attr.max_recv_iov);
	expect_counts(srq, 3, 6, "three EPs connected");
	for (i = 0; i < 3; i++)
		expect_recv_query(lk[i].rx.ep, 1, "a connected EP");
	/* A message takes what its EP holds, which then takes the oldest
	 * left; with none left, the EPs wait in the order they ran out. */
	for (i = 0; i < 6; i++)
		send_expect(lk, who[i], takes[i]);
	expect_counts(srq, 0, 0, "every receive consumed");
	for (i = 0; i < 3; i++)
		expect_recv_query(lk[i].rx.ep, 0,
		                  "an EP whose receive was used");
	/* A, C and B ran out in that order: 6 goes to A, 7 to C, 8 to B. */
	for (c = 6; c < 9; c++)
		FT_DAT_CHECK(srq_post(srq, c));
	expect_counts(srq, 0, 3, "3 posted to the 3 waiting EPs");
	for (i = 6; i < 9; i++)
		send_expect(lk, who[i], takes[i]);
	for (i = 0; i < 3; i++)
		FT_CHECK(ft_expect_empty(lk[i].rx.recv_evd, "an EP's own EVD"),
		         "EP %d's EVD holds nothing more, of its own or of "
		         "another EP",
		         i);
	ft_expect_empty(ra.async_evd, "no async event while connected");
	for (i = 0; i < 3; i++)
		link_close(&lk[i]);
	FT_DAT_CHECK(dat_srq_free(srq));
}

/* ---- the low watermark
 * ----------------------------------------------------------
 */

static void check_lw(void)
{
	DAT_SRQ_HANDLE srq;
	struct link lk[1];
	char what[96];
	int i;

	ft_log("-- the low watermark");
	/* Set at creation above 0: the SRQ starts empty, it fires at once. */
	srq = srq_create(8, 1, 2);
	expect_async(DAT_ASYNC_ERROR_EP_BROKEN, srq,
	             DAT_SRQ_LOW_WATERMARK_EVENT,
	             "low_watermark 2 at creation: the event at once");
	FT_DAT_CHECK(dat_srq_free(srq));
	expect_no_async(100, "a freed SRQ");

	srq = srq_create(16, 1, DAT_SRQ_LW_DEFAULT);
	for (i = 0; i < 8; i++)
		FT_DAT_CHECK(srq_post(srq, 100 + (uint64_t)i));
	FT_DAT_CHECK(dat_srq_set_lw(srq, 4));
	FT_CHECK(srq_query(srq).low_watermark == 4,
	         "dat_srq_query gives the low watermark");
	expect_no_async(100, "8 receives on the SRQ, watermark 4");
	link_open(&lk[0], srq, 1, DAT_HANDLE_NULL); /* takes 100: 7 left */
	expect_no_async(100, "7 left");
	/* Each message takes the next: 6, 5, 4, then 3 left (below 4: the
	 * event), 2, 1, 0 (none: once per setting). */
	for (i = 0; i < 7; i++) {
		send_expect(lk, 0, 100 + (uint64_t)i);
		snprintf(what, sizeof(what), "%d receives left", 6 - i);
		if (6 - i == 3)
			expect_async(DAT_ASYNC_ERROR_EP_BROKEN, srq,
			             DAT_SRQ_LOW_WATERMARK_EVENT, what);
		else
			expect_no_async(100, what);
	}
	expect_counts(srq, 0, 1, "all taken");
	/* Set below what the SRQ holds: at once, in the call. */
	FT_DAT_CHECK(dat_srq_set_lw(srq, 2));
	expect_async(DAT_ASYNC_ERROR_EP_BROKEN, srq,
	             DAT_SRQ_LOW_WATERMARK_EVENT,
	             "set to 2 with none left: the event at once");
	FT_DAT_CHECK(dat_srq_set_lw(srq, DAT_SRQ_LW_DEFAULT));
	for (i = 8; i < 12; i++)
		FT_DAT_CHECK(srq_post(srq, 100 + (uint64_t)i));
	/* Re-armed at 3 with 4 left: 3 left is not below, 2 is, 1 is once
	 * too many. */
	FT_DAT_CHECK(dat_srq_set_lw(srq, 3));
	expect_no_async(100, "re-armed at 3 with 4 left");
	for (i = 7; i < 10; i++) {
		send_expect(lk, 0, 100 + (uint64_t)i);
		snprintf(what, sizeof(what), "re-armed: %d left", 10 - i);
		if (10 - i == 2)
			expect_async(DAT_ASYNC_ERROR_EP_BROKEN, srq,
			             DAT_SRQ_LOW_WATERMARK_EVENT, what);
		else
			expect_no_async(100, what);
	}
	FT_DAT_EXPECT(dat_srq_set_lw(srq, 17), ERR(DAT_INVALID_PARAMETER, 0));
	FT_DAT_EXPECT(dat_srq_set_lw(srq, -1), ERR(DAT_INVALID_PARAMETER, 0));
	/* A watermark of 0 never fires. */
	FT_DAT_CHECK(dat_srq_set_lw(srq, DAT_SRQ_LW_DEFAULT));
	send_expect(lk, 0, 110);
	expect_no_async(100, "watermark 0");
	link_close(&lk[0]);
	FT_DAT_CHECK(dat_srq_free(srq));
}

/* ---- resizing under load
 * -------------------------------------------------------
 */

struct resizer {
	DAT_SRQ_HANDLE srq;
	_Atomic int stop;
	_Atomic long ok; /* read by the sender while it runs */
	long refused, bad, over;
};

/* Resize to random sizes (1..64) while the main thread sends, receives
 * and posts: each answer is DAT_SUCCESS or DAT_INVALID_STATE (below what
 * is outstanding), and the SRQ never holds more than its size. */
static void *resizer_main(void *arg)
{
	struct resizer *r = arg;
	unsigned seed = 42;

	while (!atomic_load(&r->stop)) {
		DAT_COUNT n = 1 + (DAT_COUNT)(rand_r(&seed) % 64);
		DAT_RETURN ret = dat_srq_resize(r->srq, n);
		DAT_SRQ_PARAM p;

		if (ret == DAT_SUCCESS)
			atomic_fetch_add(&r->ok, 1);
		else if (DAT_GET_TYPE(ret) == DAT_INVALID_STATE)
			r->refused++;
		else
			r->bad++;
		if (dat_srq_query(r->srq, DAT_SRQ_FIELD_ALL, &p) !=
		            DAT_SUCCESS ||
		    p.outstanding_dto_count > p.max_recv_dtos ||
		    p.available_dto_count > p.outstanding_dto_count ||
		    (ret == DAT_SUCCESS && p.max_recv_dtos != n))
			r->over++;
		usleep(10);
	}
	return NULL;
}

static void check_resize(void)
{
	const long n = ft_iterations(2000);
	long target = n; /* grows while the resizer has not had a turn */
	const int nbuf = 64, window = 16;
	DAT_SRQ_HANDLE srq = srq_create(8, 1, 0);
	DAT_EVD_HANDLE evd;
	struct link lk[2];
	struct resizer r;
	pthread_t th;
	uint64_t free_list[64];
	uint32_t next[2] = {0, 0};
	long received = 0, nfree = 0, bad = 0, i;
	uint64_t last = ft_now_us();
	DAT_COUNT k;

	ft_log("-- dat_srq_resize, and resizing under load (%ld messages)", n);
	FT_DAT_EXPECT(dat_srq_resize(srq, 0), ERR(DAT_INVALID_PARAMETER, 0));
	FT_DAT_EXPECT(dat_srq_resize(srq, -3), ERR(DAT_INVALID_PARAMETER, 0));
	FT_DAT_EXPECT(dat_srq_resize(srq, ra.attr.max_recv_per_srq + 1),
	              ERR(DAT_INVALID_PARAMETER, 0));
	for (k = 0; k < 6; k++)
		FT_DAT_CHECK(srq_post(srq, (uint64_t)k));
	FT_DAT_EXPECT(dat_srq_resize(srq, 5), ERR(DAT_INVALID_STATE, 0));
	FT_DAT_CHECK(dat_srq_resize(srq, 6));
	FT_DAT_EXPECT(srq_post(srq, 6), ERR(DAT_INSUFFICIENT_RESOURCES, 0));
	FT_DAT_CHECK(dat_srq_resize(srq, 32));
	FT_CHECK(srq_query(srq).max_recv_dtos == 32 &&
	                 srq_query(srq).available_dto_count == 6,
	         "grown to 32, the 6 receives still there");
	FT_DAT_CHECK(dat_srq_set_lw(srq, 20));
	expect_async(DAT_ASYNC_ERROR_EP_BROKEN, srq,
	             DAT_SRQ_LOW_WATERMARK_EVENT, "6 left, watermark 20");
	FT_DAT_EXPECT(dat_srq_resize(srq, 19), ERR(DAT_INVALID_STATE, 0));
	FT_DAT_CHECK(dat_srq_set_lw(srq, DAT_SRQ_LW_DEFAULT));
	FT_DAT_CHECK(dat_srq_resize(srq, 8));
	for (i = 6; i < nbuf; i++)
		free_list[nfree++] = (uint64_t)i;

	/* Two EPs on one receive EVD, a thread resizing. */
	FT_DAT_OK(ft_evd_create(&ra, 256, DAT_EVD_DTO_FLAG, &evd));
	link_open(&lk[0], srq, 4, evd);
	link_open(&lk[1], srq, 4, evd);
	memset(&r, 0, sizeof(r));
	r.srq = srq;
	FT_REQUIRE(pthread_create(&th, NULL, resizer_main, &r) == 0,
	           "a resizing thread");
	while (received < target) {
		DAT_EVENT ev;
		DAT_RETURN ret;

		/*
		 * On a busy machine the resizing thread may not run before
		 * n messages are through (shm moves them in milliseconds):
		 * send n more, up to 10 n, until it has resized once.
		 */
		if (received == target - 1 && atomic_load(&r.ok) == 0 &&
		    target < 10 * n)
			target += n;
		/* Keep the SRQ stocked, as far as its size lets. */
		while (nfree > 0) {
			ret = srq_post(srq, free_list[nfree - 1]);
			if (ret != DAT_SUCCESS) {
				if (DAT_GET_TYPE(ret) !=
				    DAT_INSUFFICIENT_RESOURCES)
					bad++;
				break;
			}
			nfree--;
		}
		/* Up to a window of messages in flight, on both EPs. */
		while ((long)(lk[0].sent + lk[1].sent) < target &&
		       (long)(lk[0].sent + lk[1].sent) - received < window) {
			int j = (lk[0].sent + lk[1].sent) % 2;

			send_msg(&lk[j], j);
		}
		ret = ft_wait(evd, 20000, &ev);
		if (DAT_GET_TYPE(ret) == DAT_TIMEOUT_EXPIRED) {
			if (ft_now_us() - last > FT_TIMEOUT_US) {
				FT_CHECK(false,
				         "no receive for 10 s (%ld of "
				         "%ld)",
				         received, n);
				break;
			}
			continue;
		}
		last = ft_now_us();
		if (ret != DAT_SUCCESS ||
		    ev.event_number != DAT_DTO_COMPLETION_EVENT ||
		    ev.event_data.dto_completion_event_data.status !=
		            DAT_DTO_SUCCESS) {
			FT_CHECK(false, "a receive under load: %s: %s",
			         ft_ret_str(ret), ft_event_desc(&ev));
			break;
		}
		{
			const DAT_DTO_COMPLETION_EVENT_DATA *d =
			        &ev.event_data.dto_completion_event_data;
			int j = d->ep_handle == lk[0].rx.ep   ? 0
			        : d->ep_handle == lk[1].rx.ep ? 1
			                                      : -1;
			uint64_t c = d->user_cookie.as_64;

			/* Each EP's messages arrive once, in order, in the
			 * buffer of the receive the event names. */
			if (j < 0 || c >= (uint64_t)nbuf ||
			    !msg_in_slot(c, j, next[j])) {
				FT_CHECK(false,
				         "receive %ld: %s is not the next "
				         "message of its EP",
				         received, ft_event_desc(&ev));
				break;
			}
			next[j]++;
			free_list[nfree++] = c;
			received++;
		}
	}
	atomic_store(&r.stop, 1);
	pthread_join(th, NULL);
	FT_CHECK(received == target && next[0] + next[1] == (uint32_t)target,
	         "%ld messages received under load, each once, each EP's "
	         "in order",
	         received);
	FT_CHECK(bad == 0,
	         "posting under load: full or accepted (%ld "
	         "other answers)",
	         bad);
	FT_CHECK(r.bad == 0 && r.over == 0 && atomic_load(&r.ok) > 0,
	         "%ld resizes done, %ld refused (below what was "
	         "outstanding), %ld other answers, %ld inconsistent queries",
	         atomic_load(&r.ok), r.refused, r.bad, r.over);
	link_close(&lk[0]);
	link_close(&lk[1]);
	ft_drain(evd); /* the receives the EPs held, flushed */
	FT_DAT_CHECK(dat_evd_free(evd));
	FT_DAT_CHECK(dat_srq_free(srq));
}

/* ---- EPs going with receives outstanding
 * ------------------------------------------
 */

static void expect_flushed(struct ft_ep *ep, DAT_EP_HANDLE h,
                           const uint64_t *cookies, int n, const char *who)
{
	char what[96];
	int i;

	for (i = 0; i < n; i++) {
		snprintf(what, sizeof(what), "%s: receive %llu flushed", who,
		         (unsigned long long)cookies[i]);
		ft_expect_dto(ep->recv_evd, FT_TIMEOUT_US, h, DAT_DTO_RECEIVE,
		              cookies[i], DAT_DTO_ERR_FLUSHED, -1, NULL, what);
	}
	ft_expect_empty(ep->recv_evd, "and nothing else");
}

static void check_free(void)
{
	static const uint64_t a_held[3] = {201, 202, 206};
	static const uint64_t b_held[3] = {204, 205, 207};
	DAT_SRQ_HANDLE srq = srq_create(16, 2, 0);
	DAT_LMR_TRIPLET t[2];
	struct link lk[2];
	DAT_EP_HANDLE b;
	DAT_DTO_COOKIE c;
	int i;

	ft_log("-- EPs disconnected and freed with receives outstanding");
	/* 200 in two segments, which the message spans. */
	t[0] = ft_lmr_iov(&rmr, 200 * SLOT % (NSLOTS * SLOT), 40);
	t[1] = ft_lmr_iov(&rmr, 200 * SLOT % (NSLOTS * SLOT) + 40, SLOT - 40);
	c.as_64 = 200;
	FT_DAT_CHECK(dat_srq_post_recv(srq, 2, t, c));
	for (i = 1; i < 10; i++)
		FT_DAT_CHECK(srq_post(srq, 200 + (uint64_t)i));
	/* A takes 200-202, B 203-205; 206-209 wait. */
	link_open(&lk[0], srq, 3, DAT_HANDLE_NULL);
	link_open(&lk[1], srq, 3, DAT_HANDLE_NULL);
	expect_counts(srq, 4, 10, "A and B hold 3 each");
	send_expect(lk, 0, 200); /* two segments; A takes 206 */
	FT_DAT_EXPECT(dat_srq_free(srq),
	              ERR(DAT_INVALID_STATE, DAT_INVALID_STATE_SRQ_IN_USE));

	/* A's connection ends: what it holds is flushed to its own EVD, in
	 * the order it took them, once each; nothing goes to B's. */
	FT_DAT_CHECK(dat_ep_disconnect(lk[0].rx.ep, DAT_CLOSE_ABRUPT_FLAG));
	ft_expect_event(lk[0].rx.conn_evd, FT_TIMEOUT_US,
	                DAT_CONNECTION_EVENT_DISCONNECTED, lk[0].rx.ep, NULL,
	                "A disconnected");
	ft_expect_event(lk[0].tx.conn_evd, FT_TIMEOUT_US,
	                DAT_CONNECTION_EVENT_DISCONNECTED, lk[0].tx.ep, NULL,
	                "A's peer disconnected");
	expect_flushed(&lk[0].rx, lk[0].rx.ep, a_held, 3, "A disconnected");
	ft_expect_empty(lk[1].rx.recv_evd, "B's EVD: nothing of A's");
	expect_async(DAT_ASYNC_ERROR_EP_BROKEN, lk[0].rx.ep,
	             DAT_EP_TRANSFER_TO_ERROR, "A's connection ended");
	expect_recv_query(lk[0].rx.ep, 0, "A, disconnected");
	expect_counts(srq, 3, 6, "A gone: B's 3 and 207-209");
	send_expect(lk, 1, 203); /* B goes on; takes 207 */

	/* A reset and connected again takes receives again: 208, 209. */
	FT_DAT_CHECK(dat_ep_reset(lk[0].rx.ep));
	ft_ep_free(&lk[0].tx);
	FT_DAT_OK(ft_ep_create(&ta, ta.pz, &tx_attr, 64, &lk[0].tx));
	lk[0].sent = 0;
	lk[0].up = ft_connect_local(&ta, &lk[0].tx, &ra, &lk[0].rx, &L);
	FT_REQUIRE(lk[0].up, "A reset and connected again");
	expect_recv_query(lk[0].rx.ep, 2, "A, connected again");
	send_expect(lk, 0, 208);

	/* B freed while connected: what it holds is flushed to its EVD. */
	b = lk[1].rx.ep;
	FT_DAT_CHECK(dat_ep_free(b));
	lk[1].rx.ep = DAT_HANDLE_NULL;
	expect_flushed(&lk[1].rx, b, b_held, 3, "B freed");
	ft_expect_empty(lk[0].rx.recv_evd, "A's EVD: nothing of B's");
	expect_counts(srq, 0, 1, "B gone: A holds 209");
	lk[1].up = false;
	ft_ep_free(&lk[1].tx);
	ft_ep_free(&lk[1].rx);

	FT_DAT_CHECK(dat_ep_disconnect(lk[0].rx.ep, DAT_CLOSE_ABRUPT_FLAG));
	ft_expect_event(lk[0].rx.conn_evd, FT_TIMEOUT_US,
	                DAT_CONNECTION_EVENT_DISCONNECTED, lk[0].rx.ep, NULL,
	                "A disconnected again");
	ft_expect_dto(lk[0].rx.recv_evd, FT_TIMEOUT_US, lk[0].rx.ep,
	              DAT_DTO_RECEIVE, 209, DAT_DTO_ERR_FLUSHED, -1, NULL,
	              "A disconnected again: 209 flushed");
	expect_async(DAT_ASYNC_ERROR_EP_BROKEN, lk[0].rx.ep,
	             DAT_EP_TRANSFER_TO_ERROR, "A's second connection ended");
	lk[0].up = false;
	link_close(&lk[0]);
	expect_counts(srq, 0, 0, "no EP: nothing outstanding");
	FT_DAT_CHECK(dat_srq_free(srq));
}

/* ---- arguments and handles
 * ---------------------------------------------------------
 */

static void check_args(void)
{
	DAT_SRQ_HANDLE srq, freed, other;
	DAT_SRQ_ATTR a;
	DAT_SRQ_PARAM p;
	DAT_LMR_TRIPLET t;
	DAT_EP_ATTR ea;
	DAT_EP_PARAM ep;
	DAT_DTO_COOKIE c;
	DAT_HANDLE_TYPE ht;
	DAT_PZ_HANDLE pz2;
	struct ft_mr mr2, ro;
	struct ft_ep e, x;
	DAT_EP_HANDLE h;
	DAT_IA_HANDLE ia3;
	DAT_EVD_HANDLE async3 = DAT_HANDLE_NULL;
	void *junk;
	DAT_HANDLE bad[4];
	const char *bad_what[4] = {"NULL", "(void *)1", "random memory",
	                           "a live EP handle"};
	int i;

	ft_log("-- arguments and handles");
	FT_CHECK(ra.attr.max_srqs > 0 && ra.attr.max_ep_per_srq > 0 &&
	                 ra.attr.max_recv_per_srq > 0,
	         "dat_ia_query: max_srqs %d, max_ep_per_srq %d, "
	         "max_recv_per_srq %d",
	         ra.attr.max_srqs, ra.attr.max_ep_per_srq,
	         ra.attr.max_recv_per_srq);
	FT_CHECK(ra.pattr.srq_supported == DAT_TRUE &&
	                 ra.pattr.srq_ep_pz_difference_supported == DAT_FALSE,
	         "provider attributes: srq_supported, not "
	         "srq_ep_pz_difference_supported");

	/* dat_srq_create */
	memset(&a, 0, sizeof(a));
	a.max_recv_dtos = 4;
	a.max_recv_iov = 1;
	FT_DAT_EXPECT(dat_srq_create(ra.ia, DAT_HANDLE_NULL, &a, &srq),
	              ERR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ));
	FT_DAT_EXPECT(dat_srq_create(ra.ia, ta.pz, &a, &srq),
	              ERR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ));
	FT_DAT_EXPECT(dat_srq_create((DAT_IA_HANDLE)(uintptr_t)0x7777, ra.pz,
	                             &a, &srq),
	              ERR(DAT_INVALID_HANDLE, 0));
	FT_DAT_EXPECT(dat_srq_create(ra.ia, ra.pz, NULL, &srq),
	              ERR(DAT_INVALID_PARAMETER, 0));
	FT_DAT_EXPECT(dat_srq_create(ra.ia, ra.pz, &a, NULL),
	              ERR(DAT_INVALID_PARAMETER, 0));
	a.max_recv_dtos = 0;
	FT_DAT_EXPECT(dat_srq_create(ra.ia, ra.pz, &a, &srq),
	              ERR(DAT_INVALID_PARAMETER, 0));
	a.max_recv_dtos = ra.attr.max_recv_per_srq + 1;
	FT_DAT_EXPECT(dat_srq_create(ra.ia, ra.pz, &a, &srq),
	              ERR(DAT_INVALID_PARAMETER, 0));
	a.max_recv_dtos = 4;
	a.max_recv_iov = ra.attr.max_iov_segments_per_dto + 1;
	FT_DAT_EXPECT(dat_srq_create(ra.ia, ra.pz, &a, &srq),
	              ERR(DAT_INVALID_PARAMETER, 0));
	a.max_recv_iov = 1;
	a.low_watermark = 5;
	FT_DAT_EXPECT(dat_srq_create(ra.ia, ra.pz, &a, &srq),
	              ERR(DAT_INVALID_PARAMETER, 0));
	a.low_watermark = 0;
	a.max_recv_iov = 0; /* rounded up to 1 */
	srq = DAT_HANDLE_NULL;
	FT_DAT_OK(dat_srq_create(ra.ia, ra.pz, &a, &srq));
	FT_DAT_CHECK(dat_get_handle_type(srq, &ht));
	FT_CHECK(ht == DAT_HANDLE_TYPE_SRQ, "dat_get_handle_type: an SRQ");

	/* dat_srq_query */
	memset(&p, 0, sizeof(p));
	FT_DAT_CHECK(dat_srq_query(srq, DAT_SRQ_FIELD_ALL, &p));
	FT_CHECK(p.ia_handle == ra.ia && p.pz_handle == ra.pz &&
	                 p.srq_state == DAT_SRQ_STATE_OPERATIONAL &&
	                 p.max_recv_dtos == 4 && p.max_recv_iov == 1 &&
	                 p.low_watermark == 0 && p.available_dto_count == 0 &&
	                 p.outstanding_dto_count == 0,
	         "dat_srq_query: its IA, PZ, operational, 4 receives of 1 "
	         "segment, watermark 0, none posted");
	FT_DAT_EXPECT(dat_srq_query(srq, DAT_SRQ_FIELD_ALL, NULL),
	              ERR(DAT_INVALID_PARAMETER, 0));
	FT_DAT_EXPECT(dat_srq_query(srq, (DAT_SRQ_PARAM_MASK)0x100, &p),
	              ERR(DAT_INVALID_PARAMETER, 0));

	/* dat_srq_post_recv */
	t = ft_lmr_iov(&rmr, 0, 64);
	c.as_64 = 1;
	FT_DAT_EXPECT(dat_srq_post_recv(srq, 2, &t, c),
	              ERR(DAT_INVALID_PARAMETER, 0));
	FT_DAT_EXPECT(dat_srq_post_recv(srq, -1, &t, c),
	              ERR(DAT_INVALID_PARAMETER, 0));
	FT_DAT_EXPECT(dat_srq_post_recv(srq, 1, NULL, c),
	              ERR(DAT_INVALID_PARAMETER, 0));
	t = ft_lmr_iov(&rmr, rmr.len - 16, 64);
	FT_DAT_EXPECT(dat_srq_post_recv(srq, 1, &t, c),
	              ERR(DAT_INVALID_PARAMETER, 0));
	t = ft_lmr_iov(&rmr, 0, 64);
	t.lmr_context ^= 0x5a5a5;
	FT_DAT_EXPECT(dat_srq_post_recv(srq, 1, &t, c),
	              ERR(DAT_PRIVILEGES_VIOLATION, 0));
	FT_DAT_OK(dat_pz_create(ra.ia, &pz2));
	FT_DAT_OK(ft_mr_create(&ra, pz2, 4096, DAT_MEM_PRIV_ALL_FLAG, &mr2));
	t = ft_lmr_iov(&mr2, 0, 64);
	FT_DAT_EXPECT(dat_srq_post_recv(srq, 1, &t, c),
	              ERR(DAT_PROTECTION_VIOLATION, 0));
	FT_DAT_OK(ft_mr_create(&ra, ra.pz, 4096, DAT_MEM_PRIV_REMOTE_READ_FLAG,
	                       &ro));
	t = ft_lmr_iov(&ro, 0, 64);
	FT_DAT_EXPECT(dat_srq_post_recv(srq, 1, &t, c),
	              ERR(DAT_PRIVILEGES_VIOLATION, 0));
	expect_counts(srq, 0, 0, "refused posts left nothing");
	FT_DAT_CHECK(dat_srq_post_recv(srq, 0, NULL, c)); /* zero bytes */
	for (i = 1; i < 4; i++)
		FT_DAT_CHECK(srq_post(srq, (uint64_t)i));
	FT_DAT_EXPECT(srq_post(srq, 9), ERR(DAT_INSUFFICIENT_RESOURCES, 0));
	expect_counts(srq, 4, 4, "4 posted, the 5th refused");

	/* dat_ep_create_with_srq */
	ft_ep_attr_default(&ra, &ea);
	memset(&x, 0, sizeof(x));
	FT_DAT_OK(ft_ep_create(&ra, ra.pz, NULL, 16, &x));
	FT_DAT_EXPECT(dat_ep_create_with_srq(ra.ia, ra.pz, x.recv_evd,
	                                     x.req_evd, x.conn_evd,
	                                     DAT_HANDLE_NULL, &ea, &h),
	              ERR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_SRQ));
	FT_DAT_EXPECT(dat_ep_create_with_srq(ra.ia, ra.pz, x.recv_evd,
	                                     x.req_evd, x.conn_evd, x.ep, &ea,
	                                     &h),
	              ERR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_SRQ));
	FT_DAT_EXPECT(dat_ep_create_with_srq(ra.ia, DAT_HANDLE_NULL, x.recv_evd,
	                                     x.req_evd, x.conn_evd, srq, &ea,
	                                     &h),
	              ERR(DAT_INVALID_PARAMETER, 0));
	FT_DAT_EXPECT(dat_ep_create_with_srq(ra.ia, pz2, x.recv_evd, x.req_evd,
	                                     x.conn_evd, srq, &ea, &h),
	              ERR(DAT_INVALID_PARAMETER, 0));
	FT_DAT_EXPECT(dat_ep_create_with_srq(ra.ia, ra.pz, x.recv_evd,
	                                     x.req_evd, x.conn_evd, srq, NULL,
	                                     &h),
	              ERR(DAT_INVALID_PARAMETER, 0));
	FT_DAT_EXPECT(dat_ep_create_with_srq(ra.ia, ra.pz, x.recv_evd,
	                                     x.req_evd, x.conn_evd, srq, &ea,
	                                     NULL),
	              ERR(DAT_INVALID_PARAMETER, 0));
	{
		/* An SRQ of the other IA. */
		a.max_recv_dtos = 4;
		FT_DAT_OK(dat_srq_create(ta.ia, ta.pz, &a, &other));
		FT_DAT_EXPECT(dat_ep_create_with_srq(ra.ia, ra.pz, x.recv_evd,
		                                     x.req_evd, x.conn_evd,
		                                     other, &ea, &h),
		              ERR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_SRQ));
		FT_DAT_CHECK(dat_srq_free(other));
	}
	memset(&e, 0, sizeof(e));
	rx_create(srq, 2, DAT_HANDLE_NULL, &e);
	/* Receives go to the SRQ, not to the EP. */
	t = ft_lmr_iov(&rmr, 0, 64);
	FT_DAT_EXPECT(
	        dat_ep_post_recv(e.ep, 1, &t, c, DAT_COMPLETION_DEFAULT_FLAG),
	        ERR(DAT_INVALID_STATE, 0));
	memset(&ep, 0, sizeof(ep));
	ep.ep_attr = ea;
	ep.ep_attr.max_recv_dtos = 3;
	FT_DAT_EXPECT(
	        dat_ep_modify(e.ep, DAT_EP_FIELD_EP_ATTR_MAX_RECV_DTOS, &ep),
	        ERR(DAT_INVALID_PARAMETER, 0));
	ep.pz_handle = pz2;
	FT_DAT_EXPECT(dat_ep_modify(e.ep, DAT_EP_FIELD_PZ_HANDLE, &ep),
	              ERR(DAT_INVALID_PARAMETER, 0));
	ep.ep_attr.max_request_dtos = 8;
	FT_DAT_CHECK(dat_ep_modify(e.ep, DAT_EP_FIELD_EP_ATTR_MAX_REQUEST_DTOS,
	                           &ep));
	expect_recv_query(e.ep, 0, "an unconnected EP on an SRQ");
	FT_DAT_EXPECT(dat_srq_free(srq),
	              ERR(DAT_INVALID_STATE, DAT_INVALID_STATE_SRQ_IN_USE));
	ft_ep_free(&e);
	ft_ep_free(&x);
	expect_counts(srq, 4, 4, "an EP that never connected took none");
	FT_DAT_CHECK(dat_srq_free(srq)); /* 4 receives left on it */
	freed = srq;

	/* Bad and freed handles, each call. */
	junk = calloc(1, 256);
	FT_REQUIRE(junk != NULL, "256 bytes");
	memset(junk, 0x5a, 256);
	FT_DAT_OK(ft_ep_create(&ra, ra.pz, NULL, 16, &x));
	bad[0] = DAT_HANDLE_NULL;
	bad[1] = (DAT_HANDLE)(uintptr_t)1;
	bad[2] = junk;
	bad[3] = x.ep;
	for (i = -1; i < 4; i++) {
		DAT_HANDLE b = i < 0 ? freed : bad[i];
		const char *w = i < 0 ? "a freed SRQ" : bad_what[i];
		DAT_RETURN inv = ERR(DAT_INVALID_HANDLE, 0);
		DAT_RETURN r[6];
		int k, ok = 1;

		t = ft_lmr_iov(&rmr, 0, 64);
		r[0] = dat_srq_post_recv(b, 1, &t, c);
		r[1] = dat_srq_query(b, DAT_SRQ_FIELD_ALL, &p);
		r[2] = dat_srq_resize(b, 8);
		r[3] = dat_srq_set_lw(b, 1);
		r[4] = dat_srq_free(b);
		r[5] = dat_ep_create_with_srq(ra.ia, ra.pz, x.recv_evd,
		                              x.req_evd, x.conn_evd, b, &ea,
		                              &h);
		for (k = 0; k < 6; k++)
			ok &= ft_ret_matches(r[k], inv);
		FT_CHECK(ok,
		         "%s: post_recv, query, resize, set_lw, free and "
		         "ep_create_with_srq give DAT_INVALID_HANDLE (%s, %s, "
		         "%s, %s, %s, %s)",
		         w, ft_ret_str(r[0]), ft_ret_str(r[1]),
		         ft_ret_str(r[2]), ft_ret_str(r[3]), ft_ret_str(r[4]),
		         ft_ret_str(r[5]));
	}
	ft_ep_free(&x);
	free(junk);
	ft_mr_free(&ro);
	ft_mr_free(&mr2);
	FT_DAT_CHECK(dat_pz_free(pz2));

	/* An IA with an SRQ: a graceful close refuses, an abrupt one frees
	 * it. */
	FT_DAT_OK(dat_ia_open((DAT_NAME_PTR)ft_opts.ia_name, 8, &async3, &ia3));
	{
		DAT_PZ_HANDLE pz3;

		FT_DAT_OK(dat_pz_create(ia3, &pz3));
		a.max_recv_dtos = 8;
		FT_DAT_OK(dat_srq_create(ia3, pz3, &a, &other));
		FT_DAT_EXPECT(dat_ia_close(ia3, DAT_CLOSE_GRACEFUL_FLAG),
		              ERR(DAT_INVALID_STATE, 0));
		FT_DAT_CHECK(dat_ia_close(ia3, DAT_CLOSE_ABRUPT_FLAG));
		FT_DAT_EXPECT(dat_srq_query(other, DAT_SRQ_FIELD_ALL, &p),
		              ERR(DAT_INVALID_HANDLE, 0));
	}
}

int main(int argc, char **argv)
{
	ft_init(argc, argv, "dat_srq",
	        "shared receive queues: order across EPs, low watermark, "
	        "resize under load, EPs going with receives outstanding, "
	        "arguments and handles",
	        NULL);
	ft_ia_open(ft_opts.ia_name, &ta);
	ft_ia_open(ft_opts.ia_name, &ra);
	ft_check_libs();
	if (!ra.pattr.srq_supported)
		ft_notrun("%s offers no shared receive queues", ra.name);
	ft_ep_attr_default(&ta, &tx_attr);
	FT_DAT_OK(ft_listen(&ra, &L));
	FT_DAT_OK(ft_mr_create(&ta, ta.pz, NSLOTS * SLOT, DAT_MEM_PRIV_ALL_FLAG,
	                       &smr));
	FT_DAT_OK(ft_mr_create(&ra, ra.pz, NSLOTS * SLOT, DAT_MEM_PRIV_ALL_FLAG,
	                       &rmr));

	check_args();
	check_order();
	check_lw();
	check_free();
	check_resize();

	ft_mr_free(&smr);
	ft_mr_free(&rmr);
	ft_listener_free(&L);
	ft_ia_close(&ra);
	ft_ia_close(&ta);
	return ft_finish();
}
