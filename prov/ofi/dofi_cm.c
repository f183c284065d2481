/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * The DAT connection model, whatever carries it: EP connection states and
 * their events as the seed man pages give them, PSP/RSP/CR objects,
 * argument checks, the connect timeout, graceful and abrupt ends with
 * their flushes in posting order, and the timers. A backend (dofi_cm.h)
 * carries the messages; it is reached only through ia->cm_ops.
 *
 * Nothing here walks every EP of an IA. Each EP with something pending
 * has its next deadline in ia->timers (a heap), sits on ia->watch while a
 * condition must be looked at every pass (requests still to finish), or
 * is kicked from the completion path (dofi_cm_kick, a lock-free stack):
 * a pass costs what is due, not what is open.
 */
#include "config.h"

#define DOFI_LOG_COMP "cm"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dofi_cm.h"
#include "dofi_fast.h"

#define DOFI_GRACEFUL_NS (5ull * 1000000000ull)
/* How long requests in flight at a connection's end may take to finish. */
#define DOFI_FLUSH_NS (2ull * 1000000000ull)
/* A post that raced a connection's end is in libfabric by then
 * (dofi_cm_settle_raced). */
#define DOFI_RACE_NS (50ull * 1000000ull)
/* A deadline a check left in the past is looked at again this much later
 * (a guard: checks settle what is due). */
#define DOFI_RECHECK_NS (1000000ull)
/* How often at most a consumer's wait for connection events also moves
 * data when no progress thread does (dofi_cm_walk_due). */
#define DOFI_WALK_NS (1000000ull)
/* A deadline this close makes the progress thread look often. */
#define DOFI_SOON_NS (100ull * 1000000ull)

static DAT_RETURN dofi_cm_check_pdata(dofi_ia_t *ia, DAT_COUNT len,
                                      const void *pdata, DAT_RETURN_SUBTYPE sub)
{
	if (len < 0 || len > ia->prov_attr.max_private_data_size ||
	    (len > 0 && pdata == NULL)) {
		dof_warn(DOFI_LOG,
		         "private data of %d bytes: 0..%d allowed, "
		         "and a buffer when non-empty",
		         len, ia->prov_attr.max_private_data_size);
		return DAT_ERROR(DAT_INVALID_PARAMETER, sub);
	}
	return DAT_SUCCESS;
}

/* ---- events -------------------------------------------------------------- */

static void dofi_cm_event(dofi_ep_t *ep, DAT_EVENT_NUMBER num,
                          const void *pdata, DAT_COUNT plen)
{
	DAT_EVENT ev;

	/* The end of an SRQ EP's connection, on the async EVD too: with the
	 * connection event, in the same order across EPs. */
	if (ep->srq != NULL && num != DAT_CONNECTION_EVENT_ESTABLISHED)
		dofi_srq_ep_down(ep);
	if (ep->conn_evd == NULL)
		return;
	memset(&ev, 0, sizeof(ev));
	ev.event_number = num;
	ev.evd_handle = (DAT_EVD_HANDLE)ep->conn_evd;
	ev.event_data.connect_event_data.ep_handle = (DAT_EP_HANDLE)ep;
	if (plen > 0 && pdata != NULL) {
		if (plen > (DAT_COUNT)sizeof(ep->pdata))
			plen = (DAT_COUNT)sizeof(ep->pdata);
		memcpy(ep->pdata, pdata, (size_t)plen);
		ep->pdata_len = plen;
		ev.event_data.connect_event_data.private_data_size = plen;
		ev.event_data.connect_event_data.private_data = ep->pdata;
	}
	dof_debug(DOFI_LOG, "EP %p: connection event %#x", (void *)ep,
	          (unsigned)num);
	(void)dofi_evd_post(ep->conn_evd, &ev);
}

/*
 * fn(ep, op) for each op of pool still posted, in posting order (the
 * pool's own order is its free list's), until fn returns non-zero; without
 * memory for the sort, in the pool's order.
 */
static void dofi_cm_each_posted(dofi_ep_t *ep, dofi_pool_t *pool,
                                int (*fn)(dofi_ep_t *, dofi_op_t *))
{
	uint32_t i, n, seen = dofi_pool_seen(pool);
	dofi_op_t **v = dofi_pool_posted(pool, &n);

	if (v == NULL) {
		for (i = 0; i < seen; i++)
			if (atomic_load(&pool->ops[i].posted) &&
			    fn(ep, &pool->ops[i]) != 0)
				return;
		return;
	}
	for (i = 0; i < n; i++)
		if (fn(ep, v[i]) != 0)
			break;
	free(v);
}

/* Cancel op; 1 (stop) when libfabric will not, unless forced. */
static int dofi_cm_cancel_recv(dofi_ep_t *ep, dofi_op_t *op)
{
	if (fi_cancel(&ep->fep->fid, op) == 0 || !atomic_load(&op->posted))
		return 0;
	/*
	 * Forced; or a fabric that refuses only what it has put in the CQ
	 * already (all but traits->recv_cancel_busy): nothing to wait for.
	 */
	if (ep->recv_cancel_pending < 0 ||
	    !ep->obj.ia->traits->recv_cancel_busy)
		return 0;
	ep->recv_cancel_pending = 1;
	return 1;
}

/*
 * Cancel every receive still posted to the fi_ep (FI_ECANCELED, reported
 * as DAT_DTO_ERR_FLUSHED) when the connection ends: providers that flush
 * on their own have nothing left to cancel. Receives complete in posting
 * order, flushed ones too: sockets reports each cancel as it is made, so
 * they are made in posting order, and it will not cancel a receive it is
 * filling, which completes later (maybe successfully). The later ones
 * then wait for it: the CQ is read and the cancels go on from there, at
 * each look (dofi_cm_ep_check) until DOFI_FLUSH_NS have passed, when the
 * rest are cancelled anyway (force). ia->lock held.
 */
static void dofi_cm_cancel_recvs(dofi_ep_t *ep, int force)
{
	int pass;

	for (pass = 0; pass < 2; pass++) {
		ep->recv_cancel_pending = force ? -1 : 0;
		if (ep->fep == NULL || dofi_pool_used(&ep->recv_pool) == 0)
			break;
		dofi_cm_each_posted(ep, &ep->recv_pool, dofi_cm_cancel_recv);
		if (ep->recv_cancel_pending <= 0)
			break;
		/* Its completion may be in the CQ already: read it. */
		if (ep->recv_evd != NULL)
			dofi_evd_flush_cq(ep->recv_evd, 1);
	}
	if (ep->recv_cancel_pending > 0) {
		if (ep->recv_cancel_at == 0) {
			ep->recv_cancel_at = dofi_now_ns() + DOFI_FLUSH_NS;
			dof_info(DOFI_LOG,
			         "EP %p: a receive is still being filled at "
			         "the connection's end: later ones wait for it",
			         (void *)ep);
		}
		return;
	}
	ep->recv_cancel_pending = 0;
	ep->recv_cancel_at = 0;
}

/* Report one request of the flush below. */
static int dofi_cm_flush_request(dofi_ep_t *ep, dofi_op_t *op)
{
	uint8_t posted =
	        atomic_load(&op->posted) ? atomic_exchange(&op->posted, 0) : 0;

	if (posted != 0) {
		dofi_dto_flush_op(op);
		/* An RMR bind's completion that followed it. */
		if (posted == DOFI_POSTED_AFTER)
			dofi_dto_after_flushed(op);
		ep->cq_stale = 1; /* libfabric may still report it */
	}
	return 0;
}

/*
 * Report every request (send, RDMA write or read) still posted as
 * flushed, so each gets its completion on every kind of connection end.
 * tcp flushes them on fi_shutdown. sockets does not: a send it has
 * delivered may complete (successfully) only after the peer's
 * FI_SHUTDOWN, and one in flight whenever sockets gets to it, if ever.
 * So our own disconnect flushes at once, ahead of its event, and any
 * other end of a connection leaves requests DOFI_FLUSH_NS to complete
 * (ep->deadline; dofi_cm_ep_check), then reports the rest here; what
 * libfabric says of them later is dropped, as for any op no longer
 * posted. ia->lock held.
 */
static void dofi_cm_flush_requests(dofi_ep_t *ep)
{
	/* Nothing posted, nothing to pull in: the CQ holds none of ours. */
	if (ep->req_evd != NULL && dofi_pool_used(&ep->req_pool) > 0)
		dofi_evd_flush_cq(ep->req_evd, 1);
	/* The backend flushes them once the provider has let go of them. */
	if (ep->obj.ia->cm_ops->flush_at_close && ep->fep != NULL)
		return;
	/* Requests still waiting for room are posted: flushed below. */
	dofi_defer_drop(ep);
	dofi_dto_order_drop(ep);
	if (dofi_pool_used(&ep->req_pool) == 0)
		return;
	dof_info(DOFI_LOG,
	         "EP %p: %d requests still posted after the "
	         "connection ended: flushed",
	         (void *)ep, (int)dofi_pool_used(&ep->req_pool));
	/* In posting order, as an InfiniBand send queue flushes. */
	dofi_cm_each_posted(ep, &ep->req_pool, dofi_cm_flush_request);
}

/* Request the shutdown once posted requests have completed. lock held. */
static int dofi_cm_requests_done(dofi_ep_t *ep)
{
	if (dofi_pool_used(&ep->req_pool) == 0)
		return 1;
	/* Pull completions into the ring so the count is true. */
	if (ep->req_evd != NULL)
		dofi_evd_flush_cq(ep->req_evd, 1);
	return dofi_pool_used(&ep->req_pool) == 0;
}

void dofi_cm_read_cqs(dofi_ep_t *ep)
{
	if (ep->recv_evd != NULL)
		dofi_evd_flush_cq(ep->recv_evd, 1);
	if (ep->req_evd != NULL && ep->req_evd != ep->recv_evd)
		dofi_evd_flush_cq(ep->req_evd, 1);
}

/*
 * A consumer's post that read the state just before the connection's end
 * may reach libfabric after the end cancelled the receives (or flushed
 * the requests), and nothing would complete it: on tcp a receive posted
 * as a killed peer's end came stayed posted until the EP was freed. Such
 * a post is out of libfabric well within DOFI_RACE_NS (the grace period
 * before an RDM or sockets endpoint closes, 20 ms, assumes the same):
 * then (dofi_cm_down_finish sets race_at, after a graceful end's wait
 * for the peer's messages) the CM cancels or flushes what is still
 * posted, unless ep->deadline's flush of the requests is still to come.
 * An op completes once: one already reported is no longer posted. No
 * cost on the data path. ia->lock held.
 */
static void dofi_cm_settle_raced(dofi_ep_t *ep)
{
	ep->race_at = 0;
	if (atomic_load(&ep->state) != DAT_EP_STATE_DISCONNECTED ||
	    ep->fep == NULL)
		return;
	if (ep->recv_cancel_pending == 0 &&
	    dofi_pool_used(&ep->recv_pool) > 0) {
		dof_debug(DOFI_LOG,
		          "EP %p: receives still posted after the "
		          "connection's end: cancelling them",
		          (void *)ep);
		dofi_cm_cancel_recvs(ep, 0);
	}
	if (ep->deadline == 0 && dofi_pool_used(&ep->req_pool) > 0)
		dofi_cm_flush_requests(ep);
}

/*
 * Whether a CQ may hold completions of ep's: an op libfabric holds, or one
 * a flush reported ahead of libfabric. ia->lock held.
 */
static int dofi_cm_ep_cq_owed(dofi_ep_t *ep)
{
	return ep->cq_stale || dofi_pool_used(&ep->recv_pool) > 0 ||
	       dofi_pool_used(&ep->req_pool) > 0;
}

/*
 * Close the EP's libfabric endpoint and move what its CQs still hold into
 * the EVDs: nothing may name its ops once the EP is gone. ia->lock held.
 */
static void dofi_cm_close_fep(dofi_ep_t *ep)
{
	int stale;

	if (ep->fep == NULL)
		return;
	/*
	 * Completions of this EP, before its contexts go: any op libfabric
	 * holds (its close cancels them), or one a flush reported ahead of
	 * libfabric. Otherwise none is in a CQ, and nothing need be read.
	 */
	stale = dofi_cm_ep_cq_owed(ep);
	stale |= ep->obj.ia->cm_ops->ep_close(ep);
	ep->cq_stale = 0;
	if (stale)
		dofi_cm_read_cqs(ep);
}

/* The end after the backend's part: receives flushed, the event. */
static void dofi_cm_down_finish(dofi_ep_t *ep, DAT_EVENT_NUMBER num,
                                const void *pdata, DAT_COUNT plen)
{
	/* On an SRQ it takes no more (dofi_cm_event reports the end). */
	if (ep->srq != NULL)
		dofi_srq_ep_stop(ep);
	dofi_cm_cancel_recvs(ep, 0);
	ep->race_at = dofi_now_ns() + DOFI_RACE_NS;
	/*
	 * On an EVD shared with the requests, their successful completions
	 * come before the end of the connection (dat_ep_disconnect): with
	 * requests still posted, the event waits for them
	 * (dofi_cm_ep_check).
	 */
	if (ep->deadline != 0 && plen == 0 &&
	    (num == DAT_CONNECTION_EVENT_DISCONNECTED ||
	     num == DAT_CONNECTION_EVENT_BROKEN)) {
		ep->held_event = num;
	} else {
		dofi_cm_event(ep, num, pdata, plen);
	}
	dofi_cm_schedule(ep);
}

/* End a connection (attempt) locally. ia->lock held. */
void dofi_cm_up_down(dofi_ep_t *ep, DAT_EVENT_NUMBER num, const void *pdata,
                     DAT_COUNT plen)
{
	int later;

	atomic_store(&ep->state, DAT_EP_STATE_DISCONNECTED);
	/* Requests still posted: see dofi_cm_flush_requests. */
	ep->deadline = dofi_pool_used(&ep->req_pool) > 0
	                       ? dofi_now_ns() + DOFI_FLUSH_NS
	                       : 0;
	ep->graceful = 0;
	/* Only a graceful end with nothing outstanding may wait. */
	if (num != DAT_CONNECTION_EVENT_DISCONNECTED || ep->deadline != 0)
		ep->clean_end = 0;
	/* The backend tells the peer (and takes back its own receive). */
	later = ep->obj.ia->cm_ops->disconnect(ep);
	ep->clean_end = 0;
	if (later) {
		/* Receives stay posted until the backend has the messages
		 * the peer counted: dofi_cm_up_drained ends it. */
		dofi_cm_schedule(ep);
		return;
	}
	dofi_cm_down_finish(ep, num, pdata, plen);
}

void dofi_cm_up_drained(dofi_ep_t *ep)
{
	dofi_cm_down_finish(ep, DAT_CONNECTION_EVENT_DISCONNECTED, NULL, 0);
}

void dofi_cm_up_established(dofi_ep_t *ep, const void *pdata, DAT_COUNT plen)
{
	ep->deadline = 0;
	atomic_store(&ep->state, DAT_EP_STATE_CONNECTED);
	/* On an SRQ it takes receives now, before the consumer hears. */
	if (ep->srq != NULL)
		dofi_srq_ep_start(ep);
	dofi_cm_event(ep, DAT_CONNECTION_EVENT_ESTABLISHED, pdata, plen);
	dofi_cm_schedule(ep);
}

void dofi_cm_up_peer_end(dofi_ep_t *ep)
{
	atomic_fetch_add_explicit(&ep->obj.ia->cm_peer_ends, 1,
	                          memory_order_relaxed);
	/*
	 * A transfer failed first: the fabric tore it down. tcp queues the
	 * failed completion with the FI_SHUTDOWN, which may be read first:
	 * read the EP's completions now. With nothing posted, none of them
	 * is in a CQ (and a read costs libfabric tcp a look at every
	 * socket).
	 */
	if (dofi_cm_ep_cq_owed(ep))
		dofi_cm_read_cqs(ep);
	dofi_cm_up_down(
	        ep,
	        atomic_load_explicit(&ep->dto_error, memory_order_acquire)
	                ? DAT_CONNECTION_EVENT_BROKEN
	                : DAT_CONNECTION_EVENT_DISCONNECTED,
	        NULL, 0);
}

/* The oldest request still posted, or NULL. ia->lock held. */
static dofi_op_t *dofi_cm_oldest_request(dofi_ep_t *ep)
{
	uint32_t i, seen = dofi_pool_seen(&ep->req_pool);
	dofi_op_t *old = NULL;

	for (i = 0; i < seen; i++) {
		dofi_op_t *op = &ep->req_pool.ops[i];

		if (atomic_load(&op->posted) &&
		    (old == NULL || dofi_op_seq_before(op, old)))
			old = op;
	}
	return old;
}

void dofi_cm_up_link_lost(dofi_ep_t *ep)
{
	dofi_op_t *op;
	uint8_t posted;

	/* What did complete comes first, in its order. */
	if (ep->req_evd != NULL)
		dofi_evd_flush_cq(ep->req_evd, 1);
	dofi_dto_order_drop(ep);
	op = dofi_cm_oldest_request(ep);
	if (op != NULL && (posted = atomic_exchange(&op->posted, 0)) != 0) {
		dof_warn(DOFI_LOG,
		         "EP %p: the link is lost: the oldest request "
		         "completes with DAT_DTO_ERR_TRANSPORT, the rest "
		         "flushed",
		         (void *)ep);
		if (ep->req_evd != NULL) {
			DAT_EVENT ev;

			memset(&ev, 0, sizeof(ev));
			dofi_dto_fill(&ev, ep->req_evd, op,
			              DAT_DTO_ERR_TRANSPORT, 0);
			(void)dofi_evd_post(ep->req_evd, &ev);
		}
		dofi_op_release(op);
		if (posted == DOFI_POSTED_AFTER)
			dofi_dto_after_flushed(op);
		ep->cq_stale = 1;
	}
	atomic_store_explicit(&ep->dto_error, 1, memory_order_release);
	dofi_cm_flush_requests(ep);
	dofi_cm_up_down(ep, DAT_CONNECTION_EVENT_BROKEN, NULL, 0);
}

/* ---- timers, watch list, kicks --------------------------------------------
 */

/*
 * When the generic model must look at ep again: its next deadline
 * (UINT64_MAX: none), and *poll when a condition (requests finishing) needs
 * a look at every pass. ia->lock held.
 */
static uint64_t dofi_cm_ep_next(dofi_ep_t *ep, int *poll)
{
	DAT_EP_STATE s = atomic_load(&ep->state);
	uint64_t next = UINT64_MAX, b;
	int bpoll = 0;

	*poll = 0;
	if (s == DAT_EP_STATE_DISCONNECT_PENDING && ep->graceful) {
		*poll = 1;
		next = ep->deadline;
	} else if (s == DAT_EP_STATE_DISCONNECTED && ep->deadline != 0) {
		*poll = 1;
		next = ep->deadline;
	} else if (s == DAT_EP_STATE_ACTIVE_CONNECTION_PENDING &&
	           ep->deadline != 0) {
		next = ep->deadline;
	}
	if (ep->recv_cancel_pending > 0) {
		*poll = 1;
		if (ep->recv_cancel_at < next)
			next = ep->recv_cancel_at;
	}
	if (ep->race_at != 0 && ep->race_at < next)
		next = ep->race_at;
	b = ep->obj.ia->cm_ops->ep_timers(ep, 0, &bpoll);
	*poll |= bpoll;
	return b < next ? b : next;
}

void dofi_cm_schedule(dofi_ep_t *ep)
{
	dofi_ia_t *ia = ep->obj.ia;
	/* A progress thread with nothing pending sleeps long: it must be
	 * woken for the first deadline or watched EP, not for later ones
	 * (with some pending it looks every DOFI_PROGRESS_TIMER_MS). */
	int idle = dofi_timers_next(&ia->timers) == UINT64_MAX &&
	           dofi_list_empty(&ia->watch);
	uint64_t next;
	int poll;

	next = dofi_cm_ep_next(ep, &poll);
	if (poll && !ep->watched) {
		dofi_list_add_tail(&ia->watch, &ep->watch);
		ep->watched = 1;
	} else if (!poll && ep->watched) {
		dofi_list_del(&ep->watch);
		ep->watched = 0;
	}
	if (next == UINT64_MAX)
		dofi_timer_disarm(&ia->timers, &ep->timer.t);
	else if ((!dofi_timer_armed(&ep->timer.t) || ep->timer.t.at != next) &&
	         dofi_timer_arm(&ia->timers, &ep->timer.t, next) != DOF_OK &&
	         !ep->watched) {
		/* No room in the heap: look at every pass instead. */
		dofi_list_add_tail(&ia->watch, &ep->watch);
		ep->watched = 1;
	}
	if (idle && (ep->watched || dofi_timer_armed(&ep->timer.t)))
		dofi_progress_wake(ia);
}

/* What is due for ep at now; then when to look again. ia->lock held. */
static void dofi_cm_ep_check(dofi_ep_t *ep, uint64_t now)
{
	DAT_EP_STATE s = atomic_load(&ep->state);
	int poll;

	if (ep->race_at != 0 && now >= ep->race_at)
		dofi_cm_settle_raced(ep);
	if (atomic_load(&ep->break_pending) &&
	    atomic_exchange(&ep->break_pending, 0) &&
	    (s == DAT_EP_STATE_CONNECTED ||
	     s == DAT_EP_STATE_DISCONNECT_PENDING)) {
		/* As tcp and InfiniBand do after a truncation. */
		dof_info(DOFI_LOG,
		         "EP %p: a receive was too small for its "
		         "message: connection broken",
		         (void *)ep);
		atomic_store_explicit(&ep->dto_error, 1, memory_order_release);
		dofi_cm_up_down(ep, DAT_CONNECTION_EVENT_BROKEN, NULL, 0);
	} else if (s == DAT_EP_STATE_DISCONNECT_PENDING && ep->graceful &&
	           (dofi_cm_requests_done(ep) || now >= ep->deadline)) {
		/* Every request completed: the peer may count on them. */
		ep->clean_end = dofi_pool_used(&ep->req_pool) == 0;
		dofi_cm_flush_requests(ep);
		dofi_cm_up_down(ep, DAT_CONNECTION_EVENT_DISCONNECTED, NULL, 0);
	} else if (s == DAT_EP_STATE_DISCONNECTED && ep->deadline != 0 &&
	           (dofi_cm_requests_done(ep) || now >= ep->deadline)) {
		ep->deadline = 0;
		dofi_cm_flush_requests(ep);
		if (ep->held_event != 0) {
			dofi_cm_event(ep, ep->held_event, NULL, 0);
			ep->held_event = 0;
		}
	} else if (s == DAT_EP_STATE_ACTIVE_CONNECTION_PENDING &&
	           ep->deadline != 0 && now >= ep->deadline) {
		dof_info(DOFI_LOG, "EP %p: connect timed out", (void *)ep);
		dofi_cm_up_down(ep, DAT_CONNECTION_EVENT_TIMED_OUT, NULL, 0);
	}
	/* Receives waiting to be cancelled after one libfabric fills. */
	if (ep->recv_cancel_pending > 0)
		dofi_cm_cancel_recvs(ep, now >= ep->recv_cancel_at);
	(void)ep->obj.ia->cm_ops->ep_timers(ep, now, &poll);
	dofi_cm_schedule(ep);
	/* Settled nothing that was due: not again in this pass. */
	if (dofi_timer_armed(&ep->timer.t) && ep->timer.t.at <= now)
		(void)dofi_timer_arm(&ep->obj.ia->timers, &ep->timer.t,
		                     now + DOFI_RECHECK_NS);
}

static void dofi_cm_ep_fire(dofi_cm_timer_t *tm, uint64_t now)
{
	dofi_cm_ep_check(dofi_container_of(tm, dofi_ep_t, timer), now);
}

/* Push ep on the IA's kick stack (its kicked flag is the caller's). */
static void dofi_cm_kick_push(dofi_ia_t *ia, dofi_ep_t *ep)
{
	dofi_ep_t *head = atomic_load(&ia->kicks);

	do
		ep->kick_next = head;
	while (!atomic_compare_exchange_weak(&ia->kicks, &head, ep));
}

void dofi_cm_kick(dofi_ep_t *ep)
{
	dofi_ia_t *ia = ep->obj.ia;

	if (atomic_exchange(&ep->kicked, 1))
		return; /* already on the stack */
	dofi_cm_kick_push(ia, ep);
	if (dofi_progress_off(ia))
		atomic_store(&ia->cm_due, 1);
	dofi_progress_wake(ia);
}

void dofi_cm_break_later(dofi_ep_t *ep)
{
	if (ep->obj.ia->traits->trunc_ends_conn)
		return; /* libfabric shuts it down: FI_SHUTDOWN follows */
	atomic_store(&ep->break_pending, 1);
	dofi_cm_kick(ep);
}

void dofi_cm_op_done(dofi_op_t *op, int err)
{
	op->ep->obj.ia->cm_ops->op_done(op, err);
}

/* The kicked EPs, taken off the stack in one go (newest first). */
static dofi_ep_t *dofi_cm_kicks_take(dofi_ia_t *ia)
{
	if (atomic_load_explicit(&ia->kicks, memory_order_relaxed) == NULL)
		return NULL;
	return atomic_exchange(&ia->kicks, NULL);
}

/*
 * Whether the progress thread must look soon: a deadline within
 * DOFI_SOON_NS (one further off, such as the link watch's, needs no
 * tighter naps than an idle thread's), a watched EP or a kick.
 */
int dofi_cm_timers_pending(dofi_ia_t *ia)
{
	uint64_t next = dofi_timers_next(&ia->timers);

	return (next != UINT64_MAX && next <= dofi_now_ns() + DOFI_SOON_NS) ||
	       !dofi_list_empty(&ia->watch) ||
	       atomic_load_explicit(&ia->kicks, memory_order_relaxed) != NULL;
}

/* Act on the kicked EPs: what their completions recorded. ia->lock held. */
static void dofi_cm_kicks_run(dofi_ia_t *ia, uint64_t now)
{
	dofi_ep_t *k;

	for (k = dofi_cm_kicks_take(ia); k != NULL;) {
		dofi_ep_t *ep = k;

		k = ep->kick_next;
		atomic_store(&ep->kicked, 0);
		if (atomic_load(&ep->obj.magic) != DOFI_MAGIC_LIVE)
			continue;
		if (ep->srq != NULL)
			dofi_srq_kicked(ep);
		ia->cm_ops->ep_kicked(ep);
		dofi_cm_ep_check(ep, now);
	}
}

void dofi_cm_check_timers(dofi_ia_t *ia)
{
	dofi_timer_t *t;
	dofi_list_t *e, *next;
	uint64_t now;

	pthread_mutex_lock(&ia->lock);
	now = dofi_now_ns();
	dofi_cm_kicks_run(ia, now);
	/* Deadlines that passed. */
	while ((t = dofi_timers_pop_due(&ia->timers, now)) != NULL) {
		dofi_cm_timer_t *tm = dofi_container_of(t, dofi_cm_timer_t, t);

		tm->fire(tm, now);
	}
	/* Conditions: the few EPs waiting for requests to finish. */
	for (e = ia->watch.next; e != &ia->watch; e = next) {
		next = e->next;
		dofi_cm_ep_check(dofi_container_of(e, dofi_ep_t, watch), now);
	}
	/* What this pass settled may have kicked others (an RTU settled
	 * lets a peer's end held for it follow). */
	dofi_cm_kicks_run(ia, now);
	pthread_mutex_unlock(&ia->lock);
}

/* ---- active side --------------------------------------------------------- */

static DAT_RETURN dofi_cm_connect(dofi_ep_t *ep, const struct sockaddr_in *dst,
                                  DAT_CONN_QUAL qual, DAT_TIMEOUT timeout,
                                  DAT_COUNT plen, const void *pdata)
{
	dofi_ia_t *ia = ep->obj.ia;
	DAT_RETURN ret;

	pthread_mutex_lock(&ia->lock);
	if (atomic_load(&ep->state) != DAT_EP_STATE_UNCONNECTED ||
	    ep->fep != NULL) {
		pthread_mutex_unlock(&ia->lock);
		return DAT_ERROR(DAT_INVALID_STATE,
		                 DAT_INVALID_STATE_EP_CONNECTED);
	}
	/* The endpoint opens in its PZ's domain (as OFED: no PZ, no QP). */
	if (ep->pz == NULL) {
		pthread_mutex_unlock(&ia->lock);
		dof_warn(DOFI_LOG, "dat_ep_connect: the EP needs a PZ");
		return DAT_ERROR(DAT_INVALID_STATE,
		                 DAT_INVALID_STATE_EP_NOTREADY);
	}
	ep->pdata_len = 0;
	ret = dofi_status_to_dat(
	        ia->cm_ops->connect(ep, dst, qual, pdata, plen));
	if (ret == DAT_SUCCESS) {
		/* What dat_ep_query reports, set only once the request is
		 * out (or refused at once, its event posted already). */
		ep->remote_addr = *dst;
		ep->remote_addr.sin_port = 0;
		ep->remote_qual = qual;
		if (atomic_load(&ep->state) ==
		    DAT_EP_STATE_ACTIVE_CONNECTION_PENDING)
			ep->deadline =
			        timeout == DAT_TIMEOUT_INFINITE
			                ? 0
			                : dofi_now_ns() +
			                          (uint64_t)timeout * 1000;
		dofi_cm_schedule(ep);
	}
	pthread_mutex_unlock(&ia->lock);
	return ret;
}

static DAT_RETURN dofi_cm_connect_args(dofi_ep_t *ep, DAT_TIMEOUT timeout,
                                       DAT_COUNT plen, const void *pdata,
                                       DAT_QOS qos)
{
	DAT_RETURN ret;

	if (timeout == 0) {
		dof_warn(DOFI_LOG, "dat_ep_connect: a timeout of 0 is invalid");
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG4);
	}
	ret = dofi_cm_check_pdata(ep->obj.ia, plen, pdata, DAT_INVALID_ARG5);
	if (ret != DAT_SUCCESS)
		return ret;
	if (qos & ~(DAT_QOS)DAT_QOS_BEST_EFFORT) {
		dof_info(DOFI_LOG, "dat_ep_connect: qos %#x cannot be given",
		         (unsigned)qos);
		return DAT_ERROR(DAT_MODEL_NOT_SUPPORTED, 0);
	}
	if (ep->conn_evd == NULL) {
		dof_warn(DOFI_LOG, "dat_ep_connect: the EP has no connection "
		                   "EVD");
		return DAT_ERROR(DAT_INVALID_STATE,
		                 DAT_INVALID_STATE_EP_EVD_CONNECT);
	}
	return DAT_SUCCESS;
}

DAT_RETURN dofi_ep_connect(DAT_EP_HANDLE h, DAT_IA_ADDRESS_PTR addr,
                           DAT_CONN_QUAL qual, DAT_TIMEOUT timeout,
                           DAT_COUNT plen, const DAT_PVOID pdata, DAT_QOS qos,
                           DAT_CONNECT_FLAGS flags)
{
	dofi_ep_t *ep = dofi_obj_get(h, DOFI_OBJ_EP, __func__);
	struct sockaddr_in dst;
	DAT_RETURN ret;

	if (ep == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	if (addr == NULL || addr->sa_family != AF_INET) {
		dof_warn(DOFI_LOG, "dat_ep_connect: the remote address must be "
		                   "AF_INET");
		return DAT_ERROR(DAT_INVALID_ADDRESS,
		                 DAT_INVALID_ADDRESS_MALFORMED);
	}
	if (dofi_cm_port(qual) == 0) {
		dof_warn(DOFI_LOG,
		         "dat_ep_connect: conn_qual %#llx maps to "
		         "port 0",
		         (unsigned long long)qual);
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	}
	if (flags & (DAT_CONNECT_MULTIPATH_FLAG |
	             DAT_CONNECT_MULTIPATH_REQUIRED_FLAG)) {
		dof_info(DOFI_LOG, "dat_ep_connect: multipath is not offered");
		return DAT_ERROR(DAT_MODEL_NOT_SUPPORTED, 0);
	}
	if (flags & ~(DAT_CONNECT_FLAGS)(DAT_CONNECT_MULTIPATH_FLAG |
	                                 DAT_CONNECT_MULTIPATH_REQUIRED_FLAG))
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG8);
	ret = dofi_cm_connect_args(ep, timeout, plen, pdata, qos);
	if (ret != DAT_SUCCESS)
		return ret;
	memcpy(&dst, addr, sizeof(dst));
	return dofi_cm_connect(ep, &dst, qual, timeout, plen, pdata);
}

DAT_RETURN dofi_ep_dup_connect(DAT_EP_HANDLE h, DAT_EP_HANDLE dup_h,
                               DAT_TIMEOUT timeout, DAT_COUNT plen,
                               const DAT_PVOID pdata, DAT_QOS qos)
{
	dofi_ep_t *ep = dofi_obj_get(h, DOFI_OBJ_EP, __func__);
	dofi_ep_t *dup = dofi_obj_get(dup_h, DOFI_OBJ_EP, __func__);
	struct sockaddr_in dst;
	DAT_CONN_QUAL qual;
	DAT_RETURN ret;

	if (ep == NULL || dup == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	ret = dofi_cm_connect_args(ep, timeout, plen, pdata, qos);
	if (ret != DAT_SUCCESS)
		return ret;
	pthread_mutex_lock(&ep->obj.ia->lock);
	if (atomic_load(&dup->state) != DAT_EP_STATE_CONNECTED) {
		pthread_mutex_unlock(&ep->obj.ia->lock);
		return DAT_ERROR(DAT_INVALID_STATE,
		                 DAT_INVALID_STATE_EP_UNCONNECTED);
	}
	dst = dup->remote_addr;
	qual = dup->remote_qual;
	pthread_mutex_unlock(&ep->obj.ia->lock);
	return dofi_cm_connect(ep, &dst, qual, timeout, plen, pdata);
}

DAT_RETURN dofi_ep_disconnect(DAT_EP_HANDLE h, DAT_CLOSE_FLAGS flags)
{
	dofi_ep_t *ep = dofi_obj_get(h, DOFI_OBJ_EP, __func__);
	DAT_RETURN ret = DAT_SUCCESS;
	dofi_ia_t *ia;

	if (ep == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	if (flags != DAT_CLOSE_ABRUPT_FLAG && flags != DAT_CLOSE_GRACEFUL_FLAG)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	ia = ep->obj.ia;
	pthread_mutex_lock(&ia->lock);
	switch (atomic_load(&ep->state)) {
	case DAT_EP_STATE_CONNECTED:
		if (flags == DAT_CLOSE_GRACEFUL_FLAG &&
		    !dofi_cm_requests_done(ep)) {
			/* Outstanding requests finish first. */
			atomic_store(&ep->state,
			             DAT_EP_STATE_DISCONNECT_PENDING);
			ep->graceful = 1;
			ep->deadline = dofi_now_ns() + DOFI_GRACEFUL_NS;
			dofi_cm_schedule(ep);
			break;
		}
		/* Ours: what is posted is flushed now, ahead of the event. */
		ep->clean_end = flags == DAT_CLOSE_GRACEFUL_FLAG;
		dofi_cm_flush_requests(ep);
		dofi_cm_up_down(ep, DAT_CONNECTION_EVENT_DISCONNECTED, NULL, 0);
		break;
	case DAT_EP_STATE_DISCONNECT_PENDING:
		if (flags == DAT_CLOSE_ABRUPT_FLAG) {
			dofi_cm_flush_requests(ep);
			dofi_cm_up_down(ep, DAT_CONNECTION_EVENT_DISCONNECTED,
			                NULL, 0);
		}
		break;
	case DAT_EP_STATE_ACTIVE_CONNECTION_PENDING:
	case DAT_EP_STATE_COMPLETION_PENDING:
		/* Abort the establishment; posted receives are flushed. */
		dofi_cm_up_down(ep, DAT_CONNECTION_EVENT_DISCONNECTED, NULL, 0);
		break;
	case DAT_EP_STATE_DISCONNECTED:
		break; /* no-op */
	default:
		dof_warn(DOFI_LOG,
		         "dat_ep_disconnect: EP state %d allows no "
		         "disconnect",
		         (int)atomic_load(&ep->state));
		ret = DAT_ERROR(DAT_INVALID_STATE,
		                DAT_INVALID_STATE_EP_UNCONNECTED);
		break;
	}
	pthread_mutex_unlock(&ia->lock);
	return ret;
}

/* ---- service points ------------------------------------------------------ */

dofi_sp_t *dofi_cm_sp_search(dofi_ia_t *ia,
                             int (*match)(const dofi_sp_t *, const void *),
                             const void *arg)
{
	int t;

	for (t = DOFI_OBJ_PSP; t <= DOFI_OBJ_RSP; t++) {
		dofi_list_t *e;

		for (e = ia->objs[t].next; e != &ia->objs[t]; e = e->next) {
			dofi_sp_t *sp =
			        dofi_container_of(e, dofi_sp_t, obj.link);

			if (match(sp, arg))
				return sp;
		}
	}
	return NULL;
}

static int dofi_sp_on_port(const dofi_sp_t *sp, const void *qual)
{
	return dofi_cm_port(sp->qual) ==
	       dofi_cm_port(*(const DAT_CONN_QUAL *)qual);
}

/* The PSP or RSP on qual's port, or NULL. ia->lock held. */
static dofi_sp_t *dofi_sp_find(dofi_ia_t *ia, DAT_CONN_QUAL qual)
{
	return dofi_cm_sp_search(ia, dofi_sp_on_port, &qual);
}

/*
 * A listener's port was taken. When it lies in the kernel's ephemeral
 * range, any process's outgoing connection (live or in TIME_WAIT) may
 * hold it for a while, which no option of a listener overrides: say so,
 * and what a deployment does about it. Not on the data path.
 */
static void dofi_sp_in_use_hint(DAT_CONN_QUAL qual)
{
	unsigned int lo = 0, hi = 0, port = dofi_cm_port(qual);
	FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "re");

	if (f != NULL) {
		if (fscanf(f, "%u %u", &lo, &hi) != 2)
			lo = hi = 0;
		fclose(f);
	}
	if (port < lo || port > hi)
		return;
	dof_info(DOFI_LOG,
	         "conn_qual %llu: port %u is in the kernel's ephemeral "
	         "range %u-%u (net.ipv4.ip_local_port_range), where any "
	         "connection may hold it; pick a qualifier outside it or "
	         "reserve the port (net.ipv4.ip_local_reserved_ports)",
	         (unsigned long long)qual, port, lo, hi);
}

static DAT_RETURN dofi_sp_create(dofi_ia_t *ia, dofi_obj_type_t type,
                                 DAT_CONN_QUAL *qual, DAT_EVD_HANDLE evd_h,
                                 DAT_PSP_FLAGS flags, dofi_ep_t *ep,
                                 dofi_sp_t **out)
{
	dofi_evd_t *evd = dofi_obj_get(evd_h, DOFI_OBJ_EVD, "dat_sp_create");
	dofi_sp_t *sp;
	dof_status_t st;
	DAT_RETURN ret;

	if (evd == NULL || evd->obj.ia != ia || !(evd->flags & DAT_EVD_CR_FLAG))
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EVD_CR);
	if (*qual != 0 && dofi_cm_port(*qual) == 0)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	sp = dofi_obj_alloc(ia, type, sizeof(*sp), ia->obj.provider);
	if (sp == NULL)
		return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES,
		                 DAT_RESOURCE_MEMORY);
	pthread_mutex_lock(&ia->lock);
	if (*qual != 0 && dofi_sp_find(ia, *qual) != NULL &&
	    dofi_sp_find(ia, *qual) != sp) {
		ret = DAT_ERROR(DAT_CONN_QUAL_IN_USE, 0);
		goto err;
	}
	if (ep != NULL &&
	    (atomic_load(&ep->state) != DAT_EP_STATE_UNCONNECTED ||
	     ep->sp != NULL)) {
		ret = DAT_ERROR(DAT_INVALID_STATE,
		                DAT_INVALID_STATE_EP_CONNECTED);
		goto err;
	}
	st = ia->cm_ops->listen(sp, qual);
	if (st != DOF_OK) {
		if (st == DOF_ERR_IN_USE)
			dofi_sp_in_use_hint(*qual);
		ret = dofi_status_to_dat(st);
		goto err;
	}
	sp->qual = *qual;
	sp->evd = evd;
	sp->flags = flags;
	sp->ep = ep;
	atomic_fetch_add(&evd->nref, 1);
	if (ep != NULL) {
		ep->sp = sp;
		ep->local_qual = *qual;
		atomic_store(&ep->state, DAT_EP_STATE_RESERVED);
	}
	pthread_mutex_unlock(&ia->lock);
	*out = sp;
	return DAT_SUCCESS;
err:
	dofi_obj_free(sp);
	pthread_mutex_unlock(&ia->lock);
	return ret;
}

/* Both PSP calls: *qual 0 listens on any port and returns the one taken. */
static DAT_RETURN dofi_psp_open(DAT_IA_HANDLE h, DAT_CONN_QUAL *qual,
                                DAT_EVD_HANDLE evd, DAT_PSP_FLAGS flags,
                                DAT_PSP_HANDLE *out, const char *func)
{
	dofi_ia_t *ia = dofi_obj_get(h, DOFI_OBJ_IA, func);
	dofi_sp_t *sp;
	DAT_RETURN ret;

	if (ia == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	if (out == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG5);
	if (flags != DAT_PSP_CONSUMER_FLAG && flags != DAT_PSP_PROVIDER_FLAG)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG4);
	ret = dofi_sp_create(ia, DOFI_OBJ_PSP, qual, evd, flags, NULL, &sp);
	if (ret == DAT_SUCCESS)
		*out = (DAT_PSP_HANDLE)sp;
	return ret;
}

DAT_RETURN dofi_psp_create(DAT_IA_HANDLE h, DAT_CONN_QUAL qual,
                           DAT_EVD_HANDLE evd, DAT_PSP_FLAGS flags,
                           DAT_PSP_HANDLE *out)
{
	if (qual == 0) {
		dof_warn(DOFI_LOG, "dat_psp_create: conn_qual 0 is not a port; "
		                   "use dat_psp_create_any");
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	}
	return dofi_psp_open(h, &qual, evd, flags, out, __func__);
}

DAT_RETURN dofi_psp_create_any(DAT_IA_HANDLE h, DAT_CONN_QUAL *qual,
                               DAT_EVD_HANDLE evd, DAT_PSP_FLAGS flags,
                               DAT_PSP_HANDLE *out)
{
	DAT_CONN_QUAL q = 0;
	DAT_RETURN ret;

	if (qual == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	ret = dofi_psp_open(h, &q, evd, flags, out, __func__);
	if (ret == DAT_SUCCESS)
		*qual = q; /* set only on success */
	return ret;
}

DAT_RETURN dofi_psp_query(DAT_PSP_HANDLE h, DAT_PSP_PARAM_MASK mask,
                          DAT_PSP_PARAM *p)
{
	dofi_sp_t *sp = dofi_obj_get(h, DOFI_OBJ_PSP, __func__);

	if (sp == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PSP);
	if (p == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	(void)mask;
	p->ia_handle = dofi_ia_consumer_handle(sp->obj.ia);
	p->conn_qual = sp->qual;
	p->evd_handle = (DAT_EVD_HANDLE)sp->evd;
	p->psp_flags = sp->flags;
	return DAT_SUCCESS;
}

DAT_RETURN dofi_rsp_create(DAT_IA_HANDLE h, DAT_CONN_QUAL qual,
                           DAT_EP_HANDLE ep_h, DAT_EVD_HANDLE evd,
                           DAT_RSP_HANDLE *out)
{
	dofi_ia_t *ia = dofi_obj_get(h, DOFI_OBJ_IA, __func__);
	dofi_ep_t *ep;
	dofi_sp_t *sp;
	DAT_RETURN ret;

	if (ia == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	ep = dofi_obj_get(ep_h, DOFI_OBJ_EP, __func__);
	if (ep == NULL || ep->obj.ia != ia)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	if (out == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG5);
	if (qual == 0)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	ret = dofi_sp_create(ia, DOFI_OBJ_RSP, &qual, evd, 0, ep, &sp);
	if (ret == DAT_SUCCESS)
		*out = (DAT_RSP_HANDLE)sp;
	return ret;
}

DAT_RETURN dofi_rsp_query(DAT_RSP_HANDLE h, DAT_RSP_PARAM_MASK mask,
                          DAT_RSP_PARAM *p)
{
	dofi_sp_t *sp = dofi_obj_get(h, DOFI_OBJ_RSP, __func__);

	if (sp == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_RSP);
	if (p == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	(void)mask;
	p->ia_handle = dofi_ia_consumer_handle(sp->obj.ia);
	p->conn_qual = sp->qual;
	p->evd_handle = (DAT_EVD_HANDLE)sp->evd;
	p->ep_handle = (DAT_EP_HANDLE)sp->ep;
	return DAT_SUCCESS;
}

static DAT_RETURN dofi_sp_free(DAT_HANDLE h, dofi_obj_type_t type,
                               DAT_RETURN_SUBTYPE sub, const char *func)
{
	dofi_sp_t *sp = dofi_obj_get(h, type, func);
	dofi_ia_t *ia;

	if (sp == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, sub);
	ia = sp->obj.ia;
	pthread_mutex_lock(&ia->lock);
	dofi_cm_sp_destroy(sp);
	pthread_mutex_unlock(&ia->lock);
	return DAT_SUCCESS;
}

DAT_RETURN dofi_psp_free(DAT_PSP_HANDLE h)
{
	return dofi_sp_free(h, DOFI_OBJ_PSP, DAT_INVALID_HANDLE_PSP, __func__);
}

DAT_RETURN dofi_rsp_free(DAT_RSP_HANDLE h)
{
	return dofi_sp_free(h, DOFI_OBJ_RSP, DAT_INVALID_HANDLE_RSP, __func__);
}

static void dofi_cr_announce(dofi_cr_t *cr)
{
	dofi_sp_t *sp = cr->sp;
	DAT_EVENT ev;

	memset(&ev, 0, sizeof(ev));
	ev.event_number = DAT_CONNECTION_REQUEST_EVENT;
	ev.evd_handle = (DAT_EVD_HANDLE)sp->evd;
	if (sp->obj.type == DOFI_OBJ_RSP)
		/* The RSP is spent by this request (see dofi_cm_connreq). */
		ev.event_data.cr_arrival_event_data.sp_handle.rsp_handle =
		        DAT_HANDLE_NULL;
	else
		ev.event_data.cr_arrival_event_data.sp_handle.psp_handle =
		        (DAT_PSP_HANDLE)sp;
	ev.event_data.cr_arrival_event_data.local_ia_address_ptr =
	        (DAT_IA_ADDRESS_PTR)&sp->obj.ia->addr;
	ev.event_data.cr_arrival_event_data.conn_qual = sp->qual;
	ev.event_data.cr_arrival_event_data.cr_handle = (DAT_CR_HANDLE)cr;
	ev.event_data.cr_arrival_event_data.truncate_flag = DAT_FALSE;
	(void)dofi_evd_post(sp->evd, &ev);
}

/* ---- passive side -------------------------------------------------------- */

void dofi_cm_cr_destroy(dofi_cr_t *cr)
{
	dofi_ia_t *ia = cr->obj.ia;

	/* The backend refuses a request nobody answered. */
	ia->cm_ops->cr_release(cr);
	cr->cm = NULL;
	if (cr->ep != NULL && cr->sp != NULL &&
	    cr->sp->obj.type == DOFI_OBJ_PSP) {
		/* A provider-made EP the consumer never accepted on. */
		dofi_ep_t *ep = cr->ep;

		cr->ep = NULL;
		ep->cr = NULL;
		dofi_ep_destroy(ep);
	} else if (cr->ep != NULL) {
		/* A rejected RSP request frees its EP for other use. */
		cr->ep->cr = NULL;
		if (atomic_load(&cr->ep->state) ==
		    DAT_EP_STATE_PASSIVE_CONNECTION_PENDING) {
			atomic_store(&cr->ep->state, DAT_EP_STATE_UNCONNECTED);
			if (cr->ep->sp != NULL && cr->ep->sp->ep == cr->ep)
				cr->ep->sp->ep = NULL;
			cr->ep->sp = NULL;
		}
	}
	if (cr->sp != NULL)
		cr->sp->nref--;
	dofi_obj_free(cr);
}

/* ia->lock held. */
void dofi_cm_sp_destroy(dofi_sp_t *sp)
{
	dofi_ia_t *ia = sp->obj.ia;
	dofi_list_t *e, *next;

	for (e = ia->objs[DOFI_OBJ_CR].next; e != &ia->objs[DOFI_OBJ_CR];
	     e = next) {
		dofi_cr_t *cr = dofi_container_of(e, dofi_cr_t, obj.link);

		next = e->next;
		if (cr->sp == sp)
			dofi_cm_cr_destroy(cr);
	}
	ia->cm_ops->unlisten(sp);
	sp->cm = NULL;
	if (sp->ep != NULL) {
		if (atomic_load(&sp->ep->state) == DAT_EP_STATE_RESERVED)
			atomic_store(&sp->ep->state, DAT_EP_STATE_UNCONNECTED);
		if (sp->ep->sp == sp)
			sp->ep->sp = NULL;
	}
	if (sp->evd != NULL)
		atomic_fetch_sub(&sp->evd->nref, 1);
	dofi_obj_free(sp);
}

dofi_cr_t *dofi_cm_up_request(dofi_sp_t *sp, const dofi_cm_req_t *req, void *be)
{
	dofi_ia_t *ia = sp->obj.ia;
	dofi_cr_t *cr;

	if (sp->obj.type == DOFI_OBJ_RSP &&
	    (sp->ep == NULL ||
	     atomic_load(&sp->ep->state) != DAT_EP_STATE_RESERVED)) {
		/* An RSP serves one request: later ones find nobody. */
		dof_info(DOFI_LOG,
		         "conn_qual %llu: the RSP's EP is taken; "
		         "request refused",
		         (unsigned long long)sp->qual);
		return NULL;
	}
	cr = dofi_obj_alloc_locked(ia, DOFI_OBJ_CR, sizeof(*cr),
	                           ia->obj.provider);
	if (cr == NULL)
		return NULL;
	cr->sp = sp;
	cr->qual = sp->qual;
	cr->cm = be;
	sp->nref++;
	if (req->plen > 0)
		memcpy(cr->pdata, req->pdata, (size_t)req->plen);
	cr->pdata_len = req->plen;
	cr->rdma_in = req->rdma_in;
	cr->rdma_out = req->rdma_out;
	cr->remote_addr = req->remote_addr;
	cr->remote_port = req->remote_port;
	if (sp->obj.type == DOFI_OBJ_RSP) {
		cr->ep = sp->ep;
		sp->ep->cr = cr;
		atomic_store(&sp->ep->state,
		             DAT_EP_STATE_PASSIVE_CONNECTION_PENDING);
	} else if (sp->flags == DAT_PSP_PROVIDER_FLAG) {
		DAT_RETURN ret;
		dofi_ep_t *ep;

		pthread_mutex_unlock(&ia->lock);
		ep = dofi_ep_alloc(ia, NULL, NULL, NULL, NULL, NULL, &ret);
		pthread_mutex_lock(&ia->lock);
		if (ep != NULL) {
			cr->ep = ep;
			ep->cr = cr;
			atomic_store(&ep->state,
			             DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING);
		}
	}
	dof_debug(DOFI_LOG,
	          "conn_qual %llu: connection request, %d bytes of "
	          "private data",
	          (unsigned long long)sp->qual, req->plen);
	dofi_cr_announce(cr);
	return cr;
}

void dofi_cm_up_rsp_spent(dofi_sp_t *sp, dofi_cr_t *cr)
{
	/*
	 * An RSP is spent by its request: it goes away, the request keeps
	 * the backend's listener until it is accepted or rejected.
	 */
	if (sp->ep != NULL) {
		sp->ep->sp = NULL;
		sp->ep = NULL;
	}
	cr->sp = NULL;
	sp->nref--;
	dofi_cm_sp_destroy(sp);
}

DAT_RETURN dofi_cr_accept(DAT_CR_HANDLE h, DAT_EP_HANDLE ep_h, DAT_COUNT plen,
                          const DAT_PVOID pdata)
{
	dofi_cr_t *cr = dofi_obj_get(h, DOFI_OBJ_CR, __func__);
	DAT_RETURN ret;
	dofi_ia_t *ia;
	dofi_ep_t *ep;
	DAT_EP_STATE s;

	if (cr == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CR);
	ia = cr->obj.ia;
	ret = dofi_cm_check_pdata(ia, plen, pdata, DAT_INVALID_ARG3);
	if (ret != DAT_SUCCESS)
		return ret;
	if (ep_h != DAT_HANDLE_NULL) {
		ep = dofi_obj_get(ep_h, DOFI_OBJ_EP, __func__);
		if (ep == NULL || ep->obj.ia != ia)
			return DAT_ERROR(DAT_INVALID_HANDLE,
			                 DAT_INVALID_HANDLE_EP);
	} else {
		ep = cr->ep;
		if (ep == NULL) {
			dof_warn(DOFI_LOG, "dat_cr_accept: no EP given and "
			                   "none came with the request");
			return DAT_ERROR(DAT_INVALID_PARAMETER,
			                 DAT_INVALID_ARG2);
		}
	}
	pthread_mutex_lock(&ia->lock);
	if (atomic_load(&cr->obj.magic) != DOFI_MAGIC_LIVE) {
		pthread_mutex_unlock(&ia->lock);
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CR);
	}
	if (cr->ep != NULL && ep != cr->ep &&
	    (cr->sp == NULL || cr->sp->obj.type == DOFI_OBJ_RSP)) {
		pthread_mutex_unlock(&ia->lock);
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	}
	s = atomic_load(&ep->state);
	if (!(s == DAT_EP_STATE_UNCONNECTED ||
	      (ep == cr->ep &&
	       (s == DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING ||
	        s == DAT_EP_STATE_PASSIVE_CONNECTION_PENDING))) ||
	    ep->fep != NULL) {
		pthread_mutex_unlock(&ia->lock);
		return DAT_ERROR(DAT_INVALID_STATE,
		                 DAT_INVALID_STATE_EP_CONNECTED);
	}
	if (ep->conn_evd == NULL || ep->pz == NULL) {
		pthread_mutex_unlock(&ia->lock);
		dof_warn(DOFI_LOG, "dat_cr_accept: the EP needs a PZ and a "
		                   "connection EVD");
		return DAT_ERROR(DAT_INVALID_STATE,
		                 DAT_INVALID_STATE_EP_NOTREADY);
	}
	ep->remote_addr = cr->remote_addr;
	ep->remote_qual = cr->remote_port;
	ep->local_qual = cr->qual;
	ep->pdata_len = 0;
	/* COMPLETION_PENDING on success, or down already. */
	ret = dofi_status_to_dat(ia->cm_ops->accept(cr, ep, pdata, plen));
	if (ret != DAT_SUCCESS) {
		pthread_mutex_unlock(&ia->lock);
		return ret;
	}
	if (cr->ep == ep)
		cr->ep = NULL;
	ep->cr = NULL;
	dofi_cm_cr_destroy(cr);
	dofi_cm_schedule(ep);
	pthread_mutex_unlock(&ia->lock);
	return DAT_SUCCESS;
}

DAT_RETURN dofi_cr_reject(DAT_CR_HANDLE h, DAT_COUNT plen,
                          const DAT_PVOID pdata)
{
	dofi_cr_t *cr = dofi_obj_get(h, DOFI_OBJ_CR, __func__);
	DAT_RETURN ret;
	dofi_ia_t *ia;

	if (cr == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CR);
	ia = cr->obj.ia;
	ret = dofi_cm_check_pdata(ia, plen, pdata, DAT_INVALID_ARG2);
	if (ret != DAT_SUCCESS)
		return ret;
	pthread_mutex_lock(&ia->lock);
	if (atomic_load(&cr->obj.magic) != DOFI_MAGIC_LIVE) {
		pthread_mutex_unlock(&ia->lock);
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CR);
	}
	ia->cm_ops->reject(cr, pdata, plen);
	dofi_cm_cr_destroy(cr);
	pthread_mutex_unlock(&ia->lock);
	return DAT_SUCCESS;
}

DAT_RETURN dofi_cr_query(DAT_CR_HANDLE h, DAT_CR_PARAM_MASK mask,
                         DAT_CR_PARAM *p)
{
	dofi_cr_t *cr = dofi_obj_get(h, DOFI_OBJ_CR, __func__);

	if (cr == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CR);
	if (p == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	(void)mask;
	p->remote_ia_address_ptr = (DAT_IA_ADDRESS_PTR)&cr->remote_addr;
	p->remote_port_qual = cr->remote_port;
	p->private_data_size = cr->pdata_len;
	p->private_data = cr->pdata;
	p->local_ep_handle = (DAT_EP_HANDLE)cr->ep;
	return DAT_SUCCESS;
}

DAT_RETURN dofi_cr_handoff(DAT_CR_HANDLE h, DAT_CONN_QUAL qual)
{
	dofi_cr_t *cr = dofi_obj_get(h, DOFI_OBJ_CR, __func__);
	dofi_sp_t *to;
	dofi_ia_t *ia;

	if (cr == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CR);
	ia = cr->obj.ia;
	pthread_mutex_lock(&ia->lock);
	to = dofi_sp_find(ia, qual);
	if (to == NULL || to == cr->sp) {
		pthread_mutex_unlock(&ia->lock);
		dof_warn(DOFI_LOG,
		         "dat_cr_handoff: no other service point on "
		         "conn_qual %llu",
		         (unsigned long long)qual);
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	}
	if (cr->ep != NULL && cr->sp != NULL &&
	    cr->sp->obj.type == DOFI_OBJ_PSP) {
		dofi_ep_t *ep = cr->ep;

		cr->ep = NULL;
		ep->cr = NULL;
		dofi_ep_destroy(ep);
	} else if (cr->ep != NULL) {
		atomic_store(&cr->ep->state, DAT_EP_STATE_RESERVED);
		cr->ep->cr = NULL;
		cr->ep = NULL;
	}
	/* The request stays bound to the first listener's libfabric pep. */
	if (cr->sp != NULL)
		cr->sp->nref--;
	cr->sp = to;
	to->nref++;
	if (to->obj.type == DOFI_OBJ_RSP && to->ep != NULL &&
	    to->ep->cr == NULL) {
		cr->ep = to->ep;
		to->ep->cr = cr;
		atomic_store(&to->ep->state,
		             DAT_EP_STATE_PASSIVE_CONNECTION_PENDING);
	}
	dofi_cr_announce(cr);
	pthread_mutex_unlock(&ia->lock);
	return DAT_SUCCESS;
}

/* ---- progress ------------------------------------------------------------ */

/*
 * Whether a data walk of the IA's EVDs is due (dofi_cm_progress_until):
 * DOFI_WALK_NS after the last one ended, or ten times as long as it took,
 * whichever is later, so the walks take at most a tenth of a polling
 * consumer's time however many sockets libfabric looks at in each. A
 * walk that found peer ends (tcp sees them only through data progress)
 * may have left more behind, as peers often leave together: the next is
 * due at once, as raw libfabric would poll.
 */
static int dofi_cm_walk_due(dofi_ia_t *ia, uint64_t now)
{
	return atomic_load_explicit(&ia->cm_peer_ends, memory_order_relaxed) !=
	               atomic_load_explicit(&ia->cm_walk_ends,
	                                    memory_order_relaxed) ||
	       now >= atomic_load_explicit(&ia->cm_walk_ns,
	                                   memory_order_relaxed);
}

static void dofi_cm_walk(dofi_ia_t *ia, uint64_t start)
{
	uint64_t end, gap;
	dofi_list_t *e;

	pthread_mutex_lock(&ia->lock);
	atomic_store_explicit(
	        &ia->cm_walk_ends,
	        atomic_load_explicit(&ia->cm_peer_ends, memory_order_relaxed),
	        memory_order_relaxed);
	for (e = ia->objs[DOFI_OBJ_EVD].next; e != &ia->objs[DOFI_OBJ_EVD];
	     e = e->next) {
		dofi_evd_t *evd = dofi_container_of(e, dofi_evd_t, obj.link);

		if (dofi_evd_ready(evd))
			dofi_evd_progress(evd);
	}
	pthread_mutex_unlock(&ia->lock);
	end = dofi_now_ns();
	gap = 10 * (end - start);
	atomic_store_explicit(&ia->cm_walk_ns,
	                      end + (gap > DOFI_WALK_NS ? gap : DOFI_WALK_NS),
	                      memory_order_relaxed);
}

void dofi_cm_progress(dofi_ia_t *ia)
{
	dofi_cm_progress_until(ia, NULL);
}

void dofi_cm_progress_until(dofi_ia_t *ia, dofi_evd_t *until)
{
	int early;

	if (pthread_mutex_trylock(&ia->cm_read_lock) != 0)
		return; /* another thread is reading */
	early = ia->cm_ops->progress(ia, until);
	/*
	 * With no progress thread, whoever waits for connection events
	 * also moves data, so that a peer's disconnect is seen (tcp sees
	 * it only through CQ progress); not at every call (see
	 * dofi_cm_walk_due): each read costs libfabric tcp a look at every
	 * socket of the domain, and a consumer polling for connection
	 * events calls here without pause.
	 */
	if (dofi_progress_off(ia) && !early) {
		uint64_t now = dofi_now_ns();

		if (dofi_cm_walk_due(ia, now))
			dofi_cm_walk(ia, now);
	}
	pthread_mutex_unlock(&ia->cm_read_lock);
	dofi_cm_check_timers(ia);
}

void dofi_cm_progress_events(dofi_ia_t *ia)
{
	if (pthread_mutex_trylock(&ia->cm_read_lock) != 0)
		return;
	(void)ia->cm_ops->progress(ia, NULL);
	pthread_mutex_unlock(&ia->cm_read_lock);
	dofi_cm_check_timers(ia);
}

int dofi_cm_wait_fd(dofi_ia_t *ia, int *ready)
{
	*ready = 0;
	return ia->cm_ops->wait_fd(ia, ready);
}

/* ---- the IA and its EPs -------------------------------------------------- */

dof_status_t dofi_cm_ia_open(dofi_ia_t *ia, const dofi_cm_ops_t *ops)
{
	ia->cm_ops = ops;
	dofi_timers_init(&ia->timers);
	dofi_list_init(&ia->watch);
	atomic_store(&ia->kicks, NULL);
	pthread_mutex_init(&ia->cm_read_lock, NULL);
	if (ia->cm_ops->ia_open(ia) != DOF_OK) {
		pthread_mutex_destroy(&ia->cm_read_lock);
		dofi_timers_fini(&ia->timers);
		ia->cm_ops = NULL;
		return DOF_ERR_IO;
	}
	return DOF_OK;
}

void dofi_cm_ia_close(dofi_ia_t *ia)
{
	if (ia->cm_ops == NULL)
		return;
	ia->cm_ops->ia_close(ia);
	pthread_mutex_destroy(&ia->cm_read_lock);
	dofi_timers_fini(&ia->timers);
	ia->cm_ops = NULL;
}

dof_status_t dofi_cm_ep_init(dofi_ep_t *ep)
{
	dofi_timer_init(&ep->timer.t);
	ep->timer.fire = dofi_cm_ep_fire;
	dofi_list_init(&ep->watch);
	ep->peer = FI_ADDR_UNSPEC;
	return ep->obj.ia->cm_ops->ep_init(ep);
}

/* EP free/reset, IA close. ia->lock held. */
void dofi_cm_ep_teardown(dofi_ep_t *ep)
{
	if (ep->cr != NULL) {
		dofi_cr_t *cr = ep->cr;

		ep->cr = NULL;
		if (cr->ep == ep)
			cr->ep = NULL;
	}
	if (ep->sp != NULL) {
		if (ep->sp->ep == ep)
			ep->sp->ep = NULL;
		ep->sp = NULL;
	}
	/* The end may be ours, maybe the first (EP free when connected). */
	dofi_cm_close_fep(ep);
	ep->recv_cancel_pending = 0;
	ep->recv_cancel_at = 0;
	ep->deadline = 0;
	ep->held_event = 0;
	ep->graceful = 0;
	ep->clean_end = 0;
	/* A new connection starts unbroken. */
	atomic_store_explicit(&ep->dto_error, 0, memory_order_release);
	ep->recv_failed = 0;
	atomic_store(&ep->break_pending, 0);
	ep->peer = FI_ADDR_UNSPEC;
	dofi_cm_schedule(ep);
}

void dofi_cm_ep_fini(dofi_ep_t *ep)
{
	dofi_ia_t *ia = ep->obj.ia;
	dofi_ep_t *k, *keep = NULL;

	dofi_cm_ep_teardown(ep);
	/* Off the kick stack: the others go back on it. */
	for (k = dofi_cm_kicks_take(ia); k != NULL;) {
		dofi_ep_t *o = k;

		k = o->kick_next;
		if (o == ep) {
			atomic_store(&ep->kicked, 0);
			continue;
		}
		o->kick_next = keep;
		keep = o;
	}
	while (keep != NULL) {
		dofi_ep_t *o = keep;

		keep = o->kick_next;
		dofi_cm_kick_push(ia, o);
	}
	if (ep->watched) {
		dofi_list_del(&ep->watch);
		ep->watched = 0;
	}
	dofi_timer_disarm(&ia->timers, &ep->timer.t);
	ia->cm_ops->ep_fini(ep);
	ep->cm = NULL;
}
