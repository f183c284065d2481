/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * Requests the fabric has no room for.
 *
 * A DAT consumer may have max_request_dtos requests outstanding on an EP,
 * and InfiniBand takes them all: a Send waits in the send queue until the
 * peer posts a receive for it. A libfabric provider may refuse a post
 * with -FI_EAGAIN for as long as the peer takes nothing. rxm (libfabric
 * 1.17) copies a large Send into 16 KiB bounce buffers queued to its tcp
 * endpoint, whose queue stays full while the peer's receive buffers are:
 * with no receive posted there, the third 4 MiB Send is refused until the
 * peer takes the first. A request refused that long (DOFI_EAGAIN_RETRIES
 * tries, each driving the CQ, or DOFI_DEFER_SPIN_NS) waits in the EP's
 * defer queue instead: the
 * post succeeds, and the request goes to libfabric, in posting order,
 * once there is room. Until the queue is empty, later posts of the EP
 * queue behind it (ep->deferring sends them down the slow path).
 *
 * Who posts them: whoever reads completions (dofi_defer_kick: a dequeue
 * that finds nothing, a wait's turn, the progress thread's look, a flush
 * of a CQ), and the EP's next post. A waiting request is the op the
 * consumer's post took, numbered in posting order (dofi_order_prepare)
 * and marked posted; its segments, remote buffer and flags are saved in
 * the EP's slot for that op (after the request pool's ops in their block,
 * touched only by a deferral).
 *
 * A request fenced behind late requests (dofi_dto_fence: a Send after a
 * Write where the fabric does not order them, anything after a Read on
 * rxd) would wait in its post for those to complete; behind waiting
 * requests that may mean waiting for the peer to post receives, which a
 * post on InfiniBand never does. There it waits in the queue instead,
 * with the fence mark it must see reached (dofi_defer_t.fence), and the
 * post returns.
 *
 * The connection's end empties the queue (dofi_defer_drop: before any
 * flush of requests, and before the fi_ep closes). Its requests are still
 * marked posted, so the flush reports them, in posting order, after those
 * libfabric held. A waiting request libfabric then refuses for another
 * reason than room breaks the connection, as a failed request does; the
 * flush reports it and those behind it. Through a graceful disconnect's
 * wait (DISCONNECT_PENDING) they are still posted as room comes.
 *
 * One lock per IA, ia->defer_lock, guards every EP's queue and the IA's
 * list of EPs that have one. It is taken only where a post was refused
 * or where ia->defer_neps says some wait. Order: ia->lock, then an EVD's
 * lock, then defer_lock; under it nothing of ours is taken, only
 * libfabric's own locks in its calls.
 */
#include "config.h"

#define DOFI_LOG_COMP "dto"

#include <stdlib.h>
#include <string.h>

#include "dofi.h"
#include "dofi_fast.h"

/*
 * How long a post refused for room retries before its request waits in
 * the queue: room that comes within it (the fabric's queue drains as the
 * peer takes what is under way) costs no deferral; the peer that takes
 * nothing costs a post no more.
 */
#define DOFI_DEFER_SPIN_NS (1000000ull)

size_t dofi_defer_bytes(uint32_t size, uint32_t niov)
{
	size_t n = size ? size : 1;

	return n * (sizeof(dofi_defer_t) +
	            niov * (sizeof(struct iovec) + sizeof(void *)));
}

void dofi_defer_init(dofi_ep_t *ep, uint32_t niov)
{
	size_t n = ep->req_pool.size ? ep->req_pool.size : 1;

	ep->defer_head = ep->defer_tail = DOFI_POOL_NONE;
	ep->defer_rec = ep->req_pool.extra;
	ep->defer_iov = (struct iovec *)(ep->defer_rec + n);
	ep->defer_desc = (void **)(ep->defer_iov + n * niov);
	ep->defer_niov = ep->defer_rec != NULL ? niov : 0;
}

/*
 * Whether the EP's waiting requests may go to libfabric: its connection
 * is up, or ending gracefully (requests still finish), and no waiting
 * one was refused for good. ep->fep is closed only after
 * dofi_defer_drop, which waits for defer_lock. defer_lock held.
 */
static int dofi_defer_live(const dofi_ep_t *ep)
{
	DAT_EP_STATE s = atomic_load_explicit(&ep->state, memory_order_acquire);

	return (s == DAT_EP_STATE_CONNECTED ||
	        s == DAT_EP_STATE_DISCONNECT_PENDING) &&
	       ep->fep != NULL && !ep->defer_failed;
}

/* Whether the late requests up to fence (a fence mark) are reported. */
static int dofi_defer_fence_clear(const dofi_ep_t *ep, uint32_t fence)
{
	return (int32_t)(fence - atomic_load_explicit(&ep->late_settled,
	                                              memory_order_acquire)) <=
	       0;
}

/*
 * Post the EP's waiting requests, in order, until the fabric has no room
 * for one, or one is fenced behind late requests not yet reported.
 * defer_lock held.
 */
static void dofi_defer_run(dofi_ep_t *ep)
{
	while (ep->defer_head != DOFI_POOL_NONE && dofi_defer_live(ep)) {
		uint32_t i = ep->defer_head;
		dofi_op_t *op = &ep->req_pool.ops[i];
		dofi_defer_t *rec = &ep->defer_rec[i];
		/* Read first: once posted, the op may complete and go back
		 * to its pool (whose free list links through next). */
		uint32_t next = op->next;
		size_t at = (size_t)i * ep->defer_niov;
		ssize_t rc;

		/* Fenced: the late requests before it are not all in. */
		if (rec->fenced && !dofi_defer_fence_clear(ep, rec->fence))
			return;
		rc = dofi_req_post(ep, ep->fep, op, op->type,
		                   &ep->defer_iov[at], &ep->defer_desc[at],
		                   rec->count, &rec->rma, rec->wflags);
		if (rc == -FI_EAGAIN)
			return;
		if (rc != 0) {
			/* It stays queued: the connection's flush reports
			 * it, and those behind it. */
			ep->defer_failed = 1;
			dof_warn(DOFI_LOG,
			         "EP %p: a request that waited for room was "
			         "refused: %s; the connection breaks",
			         (void *)ep, fi_strerror((int)-rc));
			dofi_ep_failed(ep, (int)-rc);
			return;
		}
		ep->defer_head = next;
		if (next == DOFI_POOL_NONE)
			ep->defer_tail = DOFI_POOL_NONE;
		atomic_fetch_add_explicit(&ep->obj.ia->defer_posted, 1,
		                          memory_order_relaxed);
	}
	if (ep->defer_head == DOFI_POOL_NONE)
		__atomic_store_n(&ep->deferring, 0, __ATOMIC_RELEASE);
}

/* Put op (its arguments saved) at the end of the EP's queue, and the EP
 * on the IA's list. defer_lock held. */
static void dofi_defer_append(dofi_ep_t *ep, dofi_op_t *op)
{
	dofi_ia_t *ia = ep->obj.ia;
	uint32_t i = (uint32_t)(op - ep->req_pool.ops);

	op->next = DOFI_POOL_NONE;
	if (ep->defer_tail == DOFI_POOL_NONE)
		ep->defer_head = i;
	else
		ep->req_pool.ops[ep->defer_tail].next = i;
	ep->defer_tail = i;
	__atomic_store_n(&ep->deferring, 1, __ATOMIC_RELEASE);
	if (!ep->defer_listed) {
		ep->defer_listed = 1;
		ep->defer_next = ia->defer_eps;
		ia->defer_eps = ep;
		atomic_fetch_add(&ia->defer_neps, 1);
	}
}

ssize_t dofi_defer_post(dofi_ep_t *ep, struct fid_ep *fep, dofi_op_t *op,
                        uint8_t type, struct iovec *iov, void **desc,
                        size_t count, struct fi_rma_iov *rma, uint64_t wflags,
                        const uint32_t *fence)
{
	dofi_ia_t *ia = ep->obj.ia;
	uint64_t until = 0;
	dofi_defer_t *rec;
	size_t at;
	ssize_t rc;
	int tries = 0;

	if (fence != NULL || dofi_flag(&ep->deferring)) {
		pthread_mutex_lock(&ia->defer_lock);
		dofi_defer_run(ep);
		/* Behind those still waiting, or its fence. */
		if (ep->defer_head != DOFI_POOL_NONE ||
		    (fence != NULL && !dofi_defer_fence_clear(ep, *fence)))
			goto queue;
		pthread_mutex_unlock(&ia->defer_lock);
	}
	for (;;) {
		rc = dofi_req_post(ep, fep, op, type, iov, desc, count, rma,
		                   wflags);
		if (rc != -FI_EAGAIN || !dofi_post_live(ep))
			return rc;
		if (++tries >= DOFI_EAGAIN_RETRIES ||
		    (tries % 16 == 0 && dofi_now_ns() >= until))
			break;
		if (until == 0)
			until = dofi_now_ns() + DOFI_DEFER_SPIN_NS;
		(void)dofi_retry_eagain(ep->tx_cq, rc);
	}
	pthread_mutex_lock(&ia->defer_lock);
queue:
	/* The connection ended meanwhile: the caller says so. A slot holds
	 * the EP's most segments (dofi_ep_req_niov, kept by dat_ep_modify). */
	if (ep->fep != fep ||
	    atomic_load(&ep->state) != DAT_EP_STATE_CONNECTED) {
		pthread_mutex_unlock(&ia->defer_lock);
		return -FI_EAGAIN;
	}
	at = (size_t)(op - ep->req_pool.ops);
	rec = &ep->defer_rec[at];
	rec->rma = *rma;
	rec->wflags = wflags;
	rec->count = (uint32_t)count;
	rec->fenced = fence != NULL;
	rec->fence = fence != NULL ? *fence : 0;
	at *= ep->defer_niov;
	memcpy(&ep->defer_iov[at], iov, count * sizeof(*iov));
	memcpy(&ep->defer_desc[at], desc, count * sizeof(*desc));
	if (ep->defer_head == DOFI_POOL_NONE)
		dof_debug(DOFI_LOG,
		          "EP %p: the fabric has no room for a request: it "
		          "waits, and later ones behind it",
		          (void *)ep);
	dofi_defer_append(ep, op);
	pthread_mutex_unlock(&ia->defer_lock);
	return 0;
}

int dofi_defer_drain(dofi_ia_t *ia)
{
	dofi_ep_t **link, *ep;
	int left;

	/* Another thread drains (or posts) now: it does this one's work. */
	if (pthread_mutex_trylock(&ia->defer_lock) != 0)
		return 1;
	for (link = &ia->defer_eps; (ep = *link) != NULL;) {
		dofi_defer_run(ep);
		if (ep->defer_head != DOFI_POOL_NONE && !ep->defer_failed) {
			link = &ep->defer_next;
			continue;
		}
		/* Empty, or its connection breaks: off the list (the drop
		 * at its end forgets the rest). */
		*link = ep->defer_next;
		ep->defer_next = NULL;
		ep->defer_listed = 0;
		atomic_fetch_sub(&ia->defer_neps, 1);
	}
	left = ia->defer_eps != NULL;
	pthread_mutex_unlock(&ia->defer_lock);
	return left;
}

DAT_RETURN dofi_defer_settle(dofi_ep_t *ep)
{
	dofi_ia_t *ia = ep->obj.ia;
	uint64_t until = 0;
	int tries = 0, left;

	for (;;) {
		pthread_mutex_lock(&ia->defer_lock);
		dofi_defer_run(ep);
		left = ep->defer_head != DOFI_POOL_NONE;
		pthread_mutex_unlock(&ia->defer_lock);
		if (!left)
			return DAT_SUCCESS;
		if (!dofi_retry_more(++tries, &until))
			break;
		/* Completions taken in: a fenced one waits for them. */
		if (ep->req_evd != NULL)
			dofi_evd_flush_one(ep->req_evd, ep->tx_cq, 1);
		else if (ep->tx_cq != NULL)
			(void)fi_cq_read(ep->tx_cq, NULL, 0);
	}
	dof_info(DOFI_LOG,
	         "EP %p: requests posted earlier still wait for room after "
	         "%llu s; the post fails",
	         (void *)ep,
	         (unsigned long long)(DOFI_EAGAIN_NS / 1000000000ull));
	return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_TEP);
}

void dofi_defer_drop(dofi_ep_t *ep)
{
	dofi_ia_t *ia = ep->obj.ia;
	dofi_ep_t **link;

	pthread_mutex_lock(&ia->defer_lock);
	if (ep->defer_listed) {
		for (link = &ia->defer_eps; *link != NULL;
		     link = &(*link)->defer_next)
			if (*link == ep) {
				*link = ep->defer_next;
				atomic_fetch_sub(&ia->defer_neps, 1);
				break;
			}
		ep->defer_next = NULL;
		ep->defer_listed = 0;
	}
	if (ep->defer_head != DOFI_POOL_NONE && ep->defer_rec != NULL)
		dof_info(DOFI_LOG,
		         "EP %p: requests waiting for room at the connection's "
		         "end: flushed",
		         (void *)ep);
	ep->defer_head = ep->defer_tail = DOFI_POOL_NONE;
	ep->defer_failed = 0;
	__atomic_store_n(&ep->deferring, 0, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&ia->defer_lock);
}
