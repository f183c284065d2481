/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * Data transfer: posts and completions. The data path takes no lock of
 * ours, makes no allocation and no system call: operation contexts come
 * from per-EP lock-free pools sized by max_request_dtos / max_recv_dtos,
 * segments are checked against the LMR table (lock-free) and handed to
 * libfabric with their descriptors. The one exception is a completion
 * that must wait for an earlier one to keep posting order (tcp, below):
 * it waits on the EVD's lock-protected ring.
 */
#include "config.h"

#define DOFI_LOG_COMP "dto"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "dofi.h"
#include "dofi_fast.h"

/* ---- the op pool --------------------------------------------------------- */

dof_status_t dofi_pool_init(dofi_pool_t *pool, uint32_t size,
                            struct dofi_ep *ep, struct iovec *iov, void **desc,
                            uint32_t niov, size_t extra_bytes)
{
	size_t ops = (size ? size : 1) * sizeof(dofi_op_t);

	memset(pool, 0, sizeof(*pool));
	/*
	 * Not zeroed: dofi_pool_fresh sets up each op on first use. The
	 * extra bytes share the block (no mapping of their own), untouched
	 * until used.
	 */
	pool->ops_bytes = ops + extra_bytes;
	pool->ops = dofi_lazy_alloc(pool->ops_bytes);
	if (pool->ops == NULL)
		return DOF_ERR_NO_MEMORY;
	if (extra_bytes != 0)
		pool->extra = (char *)pool->ops + ops;
	pthread_mutex_init(&pool->fresh_lock, NULL);
	pool->size = size;
	pool->ep = ep;
	pool->iov = iov;
	pool->desc = desc;
	pool->niov = niov;
	atomic_store(&pool->head, DOFI_POOL_NONE);
	return DOF_OK;
}

dofi_op_t *dofi_pool_fresh(dofi_pool_t *pool)
{
	dofi_op_t *op = NULL;
	uint32_t i;

	pthread_mutex_lock(&pool->fresh_lock);
	i = atomic_load_explicit(&pool->fresh, memory_order_relaxed);
	if (i < pool->size) {
		op = &pool->ops[i];
		memset(op, 0, sizeof(*op));
		op->ep = pool->ep;
		op->next = DOFI_POOL_NONE;
		if (pool->iov != NULL) {
			op->iov = &pool->iov[(size_t)i * pool->niov];
			op->desc = &pool->desc[(size_t)i * pool->niov];
		}
		/* Set up before scans (dofi_pool_seen) may look at it. */
		atomic_store_explicit(&pool->fresh, i + 1,
		                      memory_order_release);
	}
	pthread_mutex_unlock(&pool->fresh_lock);
	return op;
}

uint32_t dofi_pool_used(const dofi_pool_t *pool)
{
	uint32_t i, n = 0, seen = dofi_pool_seen(pool);

	for (i = 0; i < seen; i++)
		n += atomic_load_explicit(&pool->ops[i].posted,
		                          memory_order_relaxed) != 0;
	return n;
}

/* A posted op and its number, read once: a sort needs fixed keys. */
typedef struct {
	dofi_op_t *op;
	uint32_t seq;
} dofi_pool_key_t;

static int dofi_pool_key_cmp(const void *a, const void *b)
{
	const dofi_pool_key_t *x = a, *y = b;
	int32_t d = (int32_t)(x->seq - y->seq);

	return d < 0 ? -1 : d > 0;
}

/*
 * A post on another thread may reuse an op as it is looked at (its number
 * changes): each number is read once, so that the sort sees fixed keys;
 * the caller checks posted again as it takes each op.
 */
dofi_op_t **dofi_pool_posted(dofi_pool_t *pool, uint32_t *n)
{
	uint32_t i, k = 0, seen = dofi_pool_seen(pool);
	size_t cap = seen ? seen : 1;
	/* The result, then the keys it is made from, in one block. */
	dofi_op_t **v = malloc(cap * (sizeof(*v) + sizeof(dofi_pool_key_t)));
	dofi_pool_key_t *key;

	*n = 0;
	if (v == NULL)
		return NULL;
	key = (dofi_pool_key_t *)(v + cap);
	for (i = 0; i < seen; i++) {
		dofi_op_t *op = &pool->ops[i];

		if (atomic_load(&op->posted)) {
			key[k].op = op;
			key[k++].seq = dofi_op_seq(op);
		}
	}
	qsort(key, k, sizeof(*key), dofi_pool_key_cmp);
	for (i = 0; i < k; i++)
		v[i] = key[i].op;
	*n = k;
	return v;
}

void dofi_pool_fini(dofi_pool_t *pool)
{
	if (pool->ops != NULL)
		pthread_mutex_destroy(&pool->fresh_lock);
	dofi_lazy_free(pool->ops, pool->ops_bytes);
	memset(pool, 0, sizeof(*pool));
}

/* ---- completions --------------------------------------------------------- */

static DAT_DTO_COMPLETION_STATUS dofi_dto_status(int err, uint8_t type)
{
	switch (err) {
	case FI_ECANCELED:
		return DAT_DTO_ERR_FLUSHED;
	case FI_ETRUNC:
	case FI_EMSGSIZE:
	case FI_ETOOSMALL:
		return DAT_DTO_ERR_LOCAL_LENGTH;
	case FI_EACCES:
	case FI_EPERM:
	case FI_EKEYREJECTED:
	case FI_EINVAL:
		return type == DOFI_OP_WRITE || type == DOFI_OP_READ ||
		                       DOFI_OP_EXT(type)
		               ? DAT_DTO_ERR_REMOTE_ACCESS
		               : DAT_DTO_ERR_LOCAL_PROTECTION;
	case FI_ENOMSG:
		return DAT_DTO_ERR_RECEIVER_NOT_READY;
	default:
		return DAT_DTO_ERR_TRANSPORT;
	}
}

/*
 * The codes that mean a dead peer on fabrics with no connection of their
 * own (efa, rxm: ECONNABORTED, EHOSTUNREACH, ENOTCONN; rxd: ECONNREFUSED).
 * FI_EADDRNOTAVAIL is no dead peer.
 */
static int dofi_dto_dead_peer(int err)
{
	return err == FI_ECONNABORTED || err == FI_EHOSTUNREACH ||
	       err == FI_ENOTCONN || err == FI_ECONNREFUSED;
}

/*
 * (dofi.h) An operation of ep failed with err: ep is in error, and its
 * connection breaks, as an InfiniBand queue pair goes to error; a fabric
 * that keeps the connection after a refused request (sockets) would let
 * later requests through (tcp ends it itself). FI_EADDRNOTAVAIL names an
 * address the AV no longer holds (efa: removed while the op was out),
 * not a failed connection: no break.
 */
void dofi_ep_failed(dofi_ep_t *ep, int err)
{
	atomic_store_explicit(&ep->dto_error, 1, memory_order_release);
	if (err != FI_EADDRNOTAVAIL)
		ep->obj.ia->ctl->cm_break_later(ep);
}

/* An error completion's status; any but a flush breaks the connection. */
static DAT_DTO_COMPLETION_STATUS dofi_dto_err_status(dofi_op_t *op, int err,
                                                     int prov_errno)
{
	DAT_DTO_COMPLETION_STATUS st = dofi_dto_status(err, op->type);

	/*
	 * A dead peer fails everything queued for it (rxd's peer timeout
	 * gives each request ECONNREFUSED): once the EP is in error, the
	 * rest are flushes, as after InfiniBand's retry limit. The break is
	 * asked again: the error may have been one that broke nothing.
	 */
	if (dofi_dto_dead_peer(err) &&
	    atomic_load_explicit(&op->ep->dto_error, memory_order_acquire)) {
		op->ep->obj.ia->ctl->cm_break_later(op->ep);
		return DAT_DTO_ERR_FLUSHED;
	}
	if (st != DAT_DTO_ERR_FLUSHED) {
		dofi_ep_failed(op->ep, err);
		/* A warning, as OFED's "DTO completion ERR": which code
		 * the fabric gave. */
		dof_warn(DOFI_LOG,
		         "EP %p: %s completed in error: %s (prov_errno %d)",
		         (void *)op->ep,
		         op->type == DOFI_OP_RECV ? "receive" : "request",
		         fi_strerror(err), prov_errno);
	}
	return st;
}

int dofi_dto_recv_overrun(dofi_op_t *op, size_t len, DAT_EVENT *ev,
                          dofi_evd_t *evd)
{
	dofi_ep_t *ep = op->ep;

	dof_warn(DOFI_LOG,
	         "EP %p: a message of at least %zu bytes came into a receive "
	         "of %llu, and the fabric cut it without an error: "
	         "DAT_DTO_ERR_LOCAL_LENGTH, and the connection breaks",
	         (void *)ep, len, (unsigned long long)op->len);
	ep->recv_failed = 1;
	dofi_ep_failed(ep, FI_ETRUNC);
	dofi_dto_fill(ev, evd, op, DAT_DTO_ERR_LOCAL_LENGTH, op->len);
	dofi_op_release(op);
	return 0;
}

int dofi_dto_complete_err(const struct fi_cq_err_entry *err, DAT_EVENT *ev,
                          dofi_evd_t *evd)
{
	dofi_op_t *op = err->op_context;
	DAT_DTO_COMPLETION_STATUS st;
	uint8_t posted;
	int code = err->err;

	/* shm before 2.5 hands some codes over negated (traits). The EVD's
	 * IA: op's EP may be gone (its flushes are still in the CQ). */
	if (code < 0 && evd->obj.ia->traits->cq_err_negated)
		code = -code;

	/* The RDMA Write half of a write with immediate data: no event of
	 * its own (dofi_ext_dto.c). */
	if (op != NULL && op->type == DOFI_OP_EXT_SINK) {
		dofi_ext_sink_err(op, code ? code : FI_EOTHER);
		return 1;
	}
	if (op != NULL && dofi_order_due(op))
		return dofi_dto_order(op, code ? code : FI_EOTHER, err->len,
		                      evd);
	if (op == NULL || (posted = atomic_exchange(&op->posted, 0)) == 0)
		return 1;
	if (__builtin_expect(DOFI_OP_INTERNAL(op->type), 0)) {
		op->ep->obj.ia->ctl->cm_op_done(op, code ? code : FI_EOTHER);
		return 1;
	}
	st = dofi_dto_err_status(op, code, err->prov_errno);
	/*
	 * A failure broke the connection (dofi_dto_err_status), and no later
	 * receive succeeds (dofi_dto_complete): a message larger than its
	 * receive, or one an RDM fabric could not place (shm: EIO, its
	 * sender gone).
	 */
	if (op->type == DOFI_OP_RECV && st != DAT_DTO_ERR_FLUSHED)
		op->ep->recv_failed = 1;
	dofi_dto_fill(ev, evd, op, st, err->len);
	if (posted == DOFI_POSTED_AFTER)
		return dofi_dto_after(op, ev, evd, 0);
	dofi_op_release(op);
	return 0;
}

/* ---- completions in posting order ---------------------------------------- */

/*
 * On InfiniBand a send queue completes in posting order. libfabric tcp
 * completes a send, or a write without FI_DELIVERY_COMPLETE, once it is
 * sent, but an RDMA Read, or an acknowledged write, only when the target
 * answers: a send posted after a read completed before it. Where that is
 * so (ia->traits->late_order), a late request takes the next number of
 * ep->late_posted before it is posted (op->wait), and any other request
 * notes how many late ones came before it (op->wait too). ep->late_settled
 * counts the late requests reported, in their order: a request whose
 * completion comes before its turn (a non-late one with late ones before
 * it still out; a late one whose number is not late_settled's) waits on
 * the EP's held list, kept in posting order, and is reported when its
 * turn comes. tcp answers late requests in order; it flushes its queues
 * one after the other when a connection fails (unsent requests, then
 * reads, then acknowledged writes), and those come back in that order.
 * A late request whose post failed takes its turn without an event.
 *
 * Requests the consumer posts from several threads at once have no order
 * between them to keep; and since counting a late request and posting it
 * are two steps, a thread's request can come out after a later one of
 * its own while another thread, between the two, posts a late request.
 * Nothing is lost or held for good: a held request waits only for late
 * requests counted before it, each of which takes its turn.
 */

/* A late request whose post failed, held until its turn (no event). */
#define DOFI_HSTATUS_UNPOSTED 0xff

void dofi_dto_order_reset(dofi_ep_t *ep)
{
	atomic_store(&ep->last_req, NULL);
	ep->nafter = 0;
	atomic_store(&ep->late_posted, 0);
	atomic_store(&ep->late_settled, 0);
	atomic_store(&ep->fence_mark, 0);
	ep->held_head = ep->held_tail = DOFI_POOL_NONE;
	ep->held_closed = 0;
}

void dofi_dto_order_drop(dofi_ep_t *ep)
{
	uint32_t i, next;

	if (ep->req_evd == NULL)
		return;
	dofi_lock_take(&ep->req_evd->lock);
	/* The others are still posted: the flush of requests takes them. */
	for (i = ep->held_head; i != DOFI_POOL_NONE; i = next) {
		next = ep->req_pool.ops[i].next;
		if (ep->req_pool.ops[i].hstatus == DOFI_HSTATUS_UNPOSTED)
			dofi_pool_put(&ep->req_pool, &ep->req_pool.ops[i]);
	}
	ep->held_head = ep->held_tail = DOFI_POOL_NONE;
	/*
	 * A completion read meanwhile is not held after this: the flush
	 * takes its op and reports it. Held, the op would stay linked here
	 * after the flush gave it back to the pool.
	 */
	ep->held_closed = 1;
	dofi_lock_give(&ep->req_evd->lock);
}

/* Whether op comes before held op h: a non-late request that waits for w
 * late ones was posted between late requests w - 1 and w. */
static int dofi_order_before(const dofi_op_t *op, const dofi_op_t *h)
{
	if (op->wait != h->wait)
		return (int32_t)(op->wait - h->wait) < 0;
	if (op->late != h->late)
		return !op->late;
	return dofi_op_seq_before(op, h);
}

/* Put op on the held list, in posting order. evd->lock held. */
static void dofi_order_hold(dofi_ep_t *ep, dofi_op_t *op)
{
	dofi_pool_t *pool = &ep->req_pool;
	uint32_t *link = &ep->held_head;

	/* Mostly in order: at the end. */
	if (ep->held_tail == DOFI_POOL_NONE ||
	    !dofi_order_before(op, &pool->ops[ep->held_tail])) {
		dofi_op_list_append(pool, &ep->held_head, &ep->held_tail, op);
	} else {
		while (!dofi_order_before(op, &pool->ops[*link]))
			link = &pool->ops[*link].next;
		op->next = *link;
		*link = (uint32_t)(op - pool->ops);
	}
}

/* Queue its event on the ring, then what follows it. evd->lock held. */
static void dofi_order_push(dofi_op_t *op, dofi_evd_t *evd,
                            DAT_DTO_COMPLETION_STATUS st, DAT_SEG_LENGTH len,
                            uint8_t posted)
{
	DAT_EVENT ev;
	int suppress = op->suppress && st == DAT_DTO_SUCCESS;

	/* Counted as dofi_dto_complete counts (a graceful end, RDM). */
	if (st == DAT_DTO_SUCCESS &&
	    (op->type == DOFI_OP_SEND || op->type == DOFI_OP_EXT_WIMM))
		dofi_dto_count(&op->ep->msgs_sent);
	memset(&ev, 0, sizeof(ev));
	dofi_dto_fill(&ev, evd, op, st, len);
	if (posted == DOFI_POSTED_AFTER) {
		(void)dofi_dto_after(op, &ev, evd, suppress);
		return;
	}
	dofi_op_release(op);
	if (!suppress)
		(void)dofi_evd_push_locked(evd, &ev);
}

/*
 * A late request failed: the requests held behind it were posted after
 * it, and as on InfiniBand none of those succeeds (they are flushed) even
 * where the fabric had sent them. evd->lock held.
 */
static void dofi_order_fail_held(dofi_ep_t *ep)
{
	uint32_t i;

	for (i = ep->held_head; i != DOFI_POOL_NONE;
	     i = ep->req_pool.ops[i].next)
		if (ep->req_pool.ops[i].hstatus == DAT_DTO_SUCCESS)
			ep->req_pool.ops[i].hstatus = DAT_DTO_ERR_FLUSHED;
}

/*
 * Report a late request whose turn it is (posted: what its completion
 * took). The caller counts it in late_settled, after: a non-late
 * completion that reads the count may be reported without the lock.
 * evd->lock held.
 */
static void dofi_order_late_report(dofi_ep_t *ep, dofi_op_t *op,
                                   dofi_evd_t *evd,
                                   DAT_DTO_COMPLETION_STATUS st,
                                   DAT_SEG_LENGTH len, uint8_t posted)
{
	dofi_order_push(op, evd, st, len, posted);
	if (st != DAT_DTO_SUCCESS)
		dofi_order_fail_held(ep);
}

/* Report the held requests whose turn has come. evd->lock held. */
static void dofi_order_release(dofi_ep_t *ep, dofi_evd_t *evd)
{
	while (ep->held_head != DOFI_POOL_NONE) {
		dofi_op_t *op = &ep->req_pool.ops[ep->held_head];
		uint32_t settled = atomic_load(&ep->late_settled);
		int late = op->late;

		if (late ? op->wait != settled
		         : (int32_t)(op->wait - settled) > 0)
			break;
		ep->held_head = op->next;
		if (ep->held_head == DOFI_POOL_NONE)
			ep->held_tail = DOFI_POOL_NONE;
		if (op->hstatus == DOFI_HSTATUS_UNPOSTED) {
			dofi_pool_put(&ep->req_pool, op);
		} else {
			/* A flush drops the list before it takes any op. */
			uint8_t posted = atomic_exchange(&op->posted, 0);

			if (posted != 0 && late)
				dofi_order_late_report(ep, op, evd, op->hstatus,
				                       op->len, posted);
			else if (posted != 0)
				dofi_order_push(op, evd, op->hstatus, op->len,
				                posted);
		}
		if (late)
			dofi_order_settle(ep);
	}
}

/*
 * The post of op failed (its posted flag is 0): a late request still
 * takes its turn, without an event, so that what waits for it goes on.
 * The op goes back to the pool, at once or at its turn.
 */
void dofi_order_unposted(dofi_ep_t *ep, dofi_op_t *op)
{
	dofi_evd_t *evd = ep->req_evd;

	if (!op->late || evd == NULL) {
		dofi_pool_put(&ep->req_pool, op);
		return;
	}
	dofi_lock_take(&evd->lock);
	if (ep->held_closed) {
		dofi_pool_put(&ep->req_pool, op);
	} else {
		op->hstatus = DOFI_HSTATUS_UNPOSTED;
		dofi_order_hold(ep, op);
		dofi_order_release(ep, evd);
	}
	dofi_lock_give(&evd->lock);
}

/* A completion's status (err 0: success). */
static DAT_DTO_COMPLETION_STATUS dofi_order_status(dofi_op_t *op, int err)
{
	return err == 0 ? DAT_DTO_SUCCESS : dofi_dto_err_status(op, err, 0);
}

int dofi_dto_order(dofi_op_t *op, int err, DAT_SEG_LENGTH len, dofi_evd_t *evd)
{
	dofi_ep_t *ep = op->ep;
	uint8_t posted;

	/* evd->lock held: whatever this releases goes to the ring. */
	if (op->late && op->wait == atomic_load(&ep->late_settled)) {
		/* A late request in its turn; not when a flush of requests
		 * reported it already. */
		posted = atomic_exchange(&op->posted, 0);
		if (posted != 0) {
			dofi_order_late_report(ep, op, evd,
			                       dofi_order_status(op, err), len,
			                       posted);
			dofi_order_settle(ep);
			dofi_order_release(ep, evd);
		}
	} else if (!ep->held_closed && atomic_load(&op->posted)) {
		/* Not its turn: held (see above). */
		op->hstatus = (uint8_t)dofi_order_status(op, err);
		op->len = len;
		dofi_order_hold(ep, op);
		dofi_order_release(ep, evd);
	}
	return 1;
}

/* ---- fences: behind Reads (rxd), behind Writes (no FI_ORDER_SAW) -------- */

/*
 * rxd (libfabric 1.17 to 2.6) queues a request while the peer's window is
 * closed and starts queued ones, in order, as acknowledgements open it;
 * but its walk of the queue stops after it starts an RDMA Read, and a
 * post that finds room starts at once: a Send posted then overtakes the
 * requests queued behind the Read, and the peer's receives take messages
 * out of order. With Reads and large Sends under way at once it also
 * stalls for good. So there a request waits until the Reads and atomics
 * posted before it have been reported. Their completions, and those
 * before them, go to the request EVD as a dat_evd_dequeue would take
 * them, in order. A lost datagram costs a retransmission (1 ms, then
 * twice as long each time), so the wait may take seconds; past
 * DOFI_FENCE_NS (dofi.h) the post fails.
 */

/*
 * A fabric that does not order a message after an RDMA Write (efa: send
 * after send only; ia->fence DOFI_FENCE_WRITE) may hand the peer a Send
 * before the data of a Write posted ahead of it has landed, where DAT
 * promises, as InfiniBand does, that whoever sees the Send may read that
 * memory. There every Write asks FI_DELIVERY_COMPLETE (its completion
 * means the data is at the target; efa's default does not: its eager
 * protocol completes once the packet is sent), raises the fence mark, and
 * a Send or a Write with immediate data waits here for the Writes before
 * it, as a request waits behind Reads on rxd. FI_FENCE would do it inside
 * libfabric, but efa does not offer it (of libfabric 1.17's providers
 * only sockets does, which orders anyway).
 */
DAT_RETURN dofi_dto_fence(dofi_ep_t *ep, uint8_t waits)
{
	uint64_t until = 0;
	int tries = 0;

	while (dofi_fence_due(ep, waits)) {
		DAT_EP_STATE state = atomic_load(&ep->state);

		/* The connection ended: the Read is flushed. */
		if (state != DAT_EP_STATE_CONNECTED || ep->req_evd == NULL)
			return DAT_ERROR(DAT_INVALID_STATE,
			                 dofi_ep_state_subtype(state));
		dofi_evd_flush_one(ep->req_evd, ep->tx_cq, 1);
		if (!dofi_retry_more_for(++tries, &until, DOFI_FENCE_NS)) {
			dof_info(
			        DOFI_LOG,
			        "EP %p: a Read, atomic or RDMA Write posted "
			        "earlier has not completed in %llu s; the post "
			        "fails",
			        (void *)ep,
			        (unsigned long long)(DOFI_FENCE_NS /
			                             1000000000ull));
			return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES,
			                 DAT_RESOURCE_TEP);
		}
		if (until != 0)
			sched_yield();
	}
	return DAT_SUCCESS;
}

/* ---- events that follow a request: RMR binds ---------------------------- */

/*
 * On InfiniBand an RMR bind is a work request of the send queue and
 * completes in its order. dapl-ofi binds at once (a memory registration),
 * so its completion is made to follow that of the request posted last
 * (ep->last_req), if it is still outstanding: the bind marks that op's
 * posted flag DOFI_POSTED_AFTER (a compare-and-swap from 1, so a
 * completion that has taken the op already is not missed) and queues the
 * event on ep->after; whoever reports the op then queues the events after
 * its own. Requests complete in posting order, so every earlier one has
 * been reported by then.
 */

/* Take the events waiting behind op idx into out[], in order; how many.
 * evd->lock held. */
static uint32_t dofi_after_take(dofi_ep_t *ep, uint32_t idx, DAT_EVENT *out)
{
	uint32_t i, j = 0, n = 0;

	for (i = 0; i < ep->nafter; i++) {
		if (ep->after[i].op == idx)
			out[n++] = ep->after[i].ev;
		else
			ep->after[j++] = ep->after[i];
	}
	ep->nafter = j;
	return n;
}

dof_status_t dofi_dto_post_after(dofi_ep_t *ep, const DAT_EVENT *ev)
{
	dofi_op_t *op = atomic_load(&ep->last_req);
	dofi_evd_t *evd = ep->req_evd;
	dof_status_t st = DOF_ERR_INVALID_STATE;
	uint8_t one = 1;
	uint32_t idx, i;
	int waiting;

	if (op == NULL || evd == NULL)
		return st;
	idx = (uint32_t)(op - ep->req_pool.ops);
	dofi_lock_take(&evd->lock);
	/* Taken and not yet through dofi_dto_after: still behind it. */
	waiting = 0;
	for (i = 0; i < ep->nafter; i++)
		waiting |= ep->after[i].op == idx;
	if (ep->after == NULL)
		ep->after = malloc(DOFI_AFTER_MAX * sizeof(*ep->after));
	if (ep->after != NULL && ep->nafter < DOFI_AFTER_MAX &&
	    (waiting ||
	     atomic_compare_exchange_strong(&op->posted, &one,
	                                    DOFI_POSTED_AFTER) ||
	     one == DOFI_POSTED_AFTER)) {
		ep->after[ep->nafter].op = idx;
		ep->after[ep->nafter].ev = *ev;
		ep->nafter++;
		st = DOF_OK;
	}
	dofi_lock_give(&evd->lock);
	return st;
}

int dofi_dto_after(dofi_op_t *op, DAT_EVENT *ev, dofi_evd_t *evd, int suppress)
{
	dofi_ep_t *ep = op->ep;
	DAT_EVENT evs[DOFI_AFTER_MAX];
	uint32_t i, n;

	if (!suppress)
		(void)dofi_evd_push_locked(evd, ev); /* its own comes first */
	n = dofi_after_take(ep, (uint32_t)(op - ep->req_pool.ops), evs);
	for (i = 0; i < n; i++)
		(void)dofi_evd_push_locked(evd, &evs[i]);
	/* Given back under the lock: no bind can mark its next use yet. */
	dofi_op_release(op);
	return 1;
}

void dofi_dto_after_flushed(dofi_op_t *op)
{
	dofi_ep_t *ep = op->ep;
	dofi_evd_t *evd = ep->req_evd;
	DAT_EVENT evs[DOFI_AFTER_MAX];
	uint32_t i, n;

	if (evd == NULL)
		return;
	/* Taken out under the lock, posted as any event (waiters woken). */
	dofi_lock_take(&evd->lock);
	n = dofi_after_take(ep, (uint32_t)(op - ep->req_pool.ops), evs);
	dofi_lock_give(&evd->lock);
	for (i = 0; i < n; i++)
		(void)dofi_evd_post(evd, &evs[i]);
}

/* A completion with an error the provider detected itself. */
DAT_RETURN dofi_dto_fail(dofi_ep_t *ep, dofi_evd_t *evd, uint8_t type,
                         DAT_DTO_COOKIE cookie,
                         DAT_DTO_COMPLETION_STATUS status)
{
	dofi_op_t op = {.ep = ep, .cookie = cookie, .type = type};
	DAT_EVENT ev;

	if (evd == NULL)
		return DAT_SUCCESS;
	memset(&ev, 0, sizeof(ev));
	dofi_dto_fill(&ev, evd, &op, status, 0);
	(void)dofi_evd_post(evd, &ev);
	return DAT_SUCCESS;
}

/* ---- segments ------------------------------------------------------------ */

/*
 * Check the consumer's triplets and build the iov/desc arrays. Returns
 * DAT_SUCCESS, a synchronous error, or sets *status for an error that is
 * reported as a completion (local protection), as hardware would.
 */
DAT_RETURN dofi_segs(dofi_ep_t *ep, DAT_COUNT nseg, const DAT_LMR_TRIPLET *segs,
                     DAT_COUNT max_iov, DAT_MEM_PRIV_FLAGS need,
                     struct iovec *iov, void **desc, size_t *count,
                     DAT_SEG_LENGTH *total, DAT_DTO_COMPLETION_STATUS *status)
{
	dofi_ia_t *ia = ep->obj.ia;
	DAT_COUNT i;
	size_t n = 0;
	uint64_t sum = 0;

	if (nseg < 0 || nseg > max_iov || (nseg > 0 && segs == NULL))
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	*status = DAT_DTO_SUCCESS;
	for (i = 0; i < nseg; i++) {
		const DAT_LMR_TRIPLET *t = &segs[i];
		dofi_lmr_t *lmr;

		if (t->segment_length == 0)
			continue;
		lmr = dofi_lmr_lookup(ia, t->lmr_context);
		if (lmr == NULL || lmr->pz != ep->pz ||
		    (lmr->priv & need) != need ||
		    t->virtual_address < lmr->base ||
		    t->segment_length > lmr->length ||
		    t->virtual_address - lmr->base >
		            lmr->length - t->segment_length) {
			dof_info(DOFI_LOG,
			         "EP %p: segment %d (lmr_context %#x, "
			         "%#llx+%llu) "
			         "%s: local protection error",
			         (void *)ep, i, t->lmr_context,
			         (unsigned long long)t->virtual_address,
			         (unsigned long long)t->segment_length,
			         lmr == NULL         ? "names no LMR"
			         : lmr->pz != ep->pz ? "is in another PZ"
			         : (lmr->priv & need) != need
			                 ? "lacks the local right"
			                 : "is outside its LMR");
			*status = DAT_DTO_ERR_LOCAL_PROTECTION;
			return DAT_SUCCESS;
		}
		iov[n].iov_base = (void *)(uintptr_t)t->virtual_address;
		iov[n].iov_len = t->segment_length;
		desc[n] = lmr->desc;
		sum += t->segment_length;
		n++;
	}
	*count = n;
	*total = sum;
	return DAT_SUCCESS;
}

/* dofi_seg_lmr, filling iov/desc: 1 when the segment is good. */
static inline int dofi_seg1(const dofi_ep_t *ep, const DAT_LMR_TRIPLET *t,
                            DAT_MEM_PRIV_FLAGS need, struct iovec *iov,
                            void **desc)
{
	const dofi_lmr_t *lmr = dofi_seg_lmr(ep, t, need);

	if (lmr == NULL)
		return 0;
	iov->iov_base = (void *)(uintptr_t)t->virtual_address;
	iov->iov_len = t->segment_length;
	*desc = lmr->desc;
	return 1;
}

static DAT_RETURN dofi_post_flags_ok(DAT_COMPLETION_FLAGS flags)
{
	if (flags & ~DOFI_POST_FLAGS)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG5);
	return DAT_SUCCESS;
}

/* The EP's segment limit for a request of this type. */
static inline DAT_COUNT dofi_req_max_iov(const dofi_ep_t *ep, uint8_t type)
{
	return type == DOFI_OP_SEND    ? ep->attr.max_request_iov
	       : type == DOFI_OP_WRITE ? ep->attr.max_rdma_write_iov
	                               : ep->attr.max_rdma_read_iov;
}

/*
 * One try at posting a request (the slow path's), to fep: the endpoint
 * the post found, read once (a retry must not read ep->fep again after
 * the connection's end).
 */
ssize_t dofi_req_post(dofi_ep_t *ep, struct fid_ep *fep, dofi_op_t *op,
                      uint8_t type, struct iovec *iov, void **desc,
                      size_t count, struct fi_rma_iov *rmap, uint64_t wflags)
{
	struct fi_rma_iov rma = *rmap;

	if (count <= 1 && wflags == 0) {
		/* The common case: libfabric's short calls are the
		 * cheapest path through most providers. */
		void *buf = count ? iov[0].iov_base : NULL;
		size_t len = count ? iov[0].iov_len : 0;
		void *d = count ? desc[0] : NULL;

		return type == DOFI_OP_SEND
		               ? fi_send(fep, buf, len, d, ep->peer, op)
		       : type == DOFI_OP_WRITE
		               ? fi_write(fep, buf, len, d, ep->peer, rma.addr,
		                          rma.key, op)
		               : fi_read(fep, buf, len, d, ep->peer, rma.addr,
		                         rma.key, op);
	} else if (type == DOFI_OP_SEND) {
		struct fi_msg msg = {
		        .msg_iov = iov,
		        .desc = desc,
		        .iov_count = count,
		        .addr = ep->peer,
		        .context = op,
		};

		return fi_sendmsg(fep, &msg, FI_COMPLETION);
	} else {
		struct fi_msg_rma msg = {
		        .msg_iov = iov,
		        .desc = desc,
		        .iov_count = count,
		        .addr = ep->peer,
		        .rma_iov = &rma,
		        .rma_iov_count = 1,
		        .context = op,
		};

		return type == DOFI_OP_WRITE
		               ? fi_writemsg(fep, &msg, FI_COMPLETION | wflags)
		               : fi_readmsg(fep, &msg, FI_COMPLETION);
	}
}

/*
 * Every post the fast path (dofi_post_request) does not take: several
 * segments, a bad argument, a full queue, libfabric's EAGAIN. It checks
 * everything again and gives each error its DAT return and log line.
 */
static __attribute__((noinline)) DAT_RETURN
dofi_post_request_slow(DAT_EP_HANDLE h, uint8_t type, DAT_COUNT nseg,
                       DAT_LMR_TRIPLET *segs, DAT_DTO_COOKIE cookie,
                       const DAT_RMR_TRIPLET *remote,
                       DAT_COMPLETION_FLAGS flags)
{
	dofi_ep_t *ep = dofi_obj_fast(h, DOFI_OBJ_EP);
	struct iovec iov[DOFI_MAX_IOV];
	void *desc[DOFI_MAX_IOV];
	DAT_DTO_COMPLETION_STATUS st;
	DAT_SEG_LENGTH total = 0;
	struct fi_rma_iov rma = {0};
	const uint32_t *fencep = NULL;
	uint32_t fence = 0;
	size_t count = 0;
	DAT_MEM_PRIV_FLAGS need;
	struct fid_ep *fep;
	DAT_COUNT max_iov;
	uint64_t wflags;
	dofi_op_t *op;
	DAT_RETURN ret;
	ssize_t rc;

	if (ep == NULL) {
		(void)dofi_obj_get(h, DOFI_OBJ_EP, "dat_ep_post");
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	}
	ret = dofi_post_flags_ok(flags);
	if (ret != DAT_SUCCESS)
		return ret;
	fep = ep->fep;
	if (atomic_load_explicit(&ep->state, memory_order_acquire) !=
	            DAT_EP_STATE_CONNECTED ||
	    fep == NULL)
		return DAT_ERROR(
		        DAT_INVALID_STATE,
		        dofi_ep_state_subtype(atomic_load(&ep->state)));
	max_iov = dofi_req_max_iov(ep, type);
	/*
	 * A Read's destination needs local write. Local read is implied,
	 * as on InfiniBand, where it cannot be withheld: OFED's consumers
	 * (dtest among them) send from LMRs registered with local write
	 * only.
	 */
	need = type == DOFI_OP_READ ? DAT_MEM_PRIV_LOCAL_WRITE_FLAG
	                            : DAT_MEM_PRIV_NONE_FLAG;
	if (dofi_likely(nseg == 1 && max_iov >= 1 &&
	                dofi_seg1(ep, segs, need, iov, desc))) {
		count = 1;
		total = segs->segment_length;
	} else {
		if (max_iov > DOFI_MAX_IOV)
			max_iov = DOFI_MAX_IOV;
		ret = dofi_segs(ep, nseg, segs, max_iov, need, iov, desc,
		                &count, &total, &st);
		if (ret != DAT_SUCCESS)
			return ret;
		if (st != DAT_DTO_SUCCESS)
			return dofi_dto_fail(ep, ep->req_evd, type, cookie, st);
	}
	/*
	 * Limits are the IA's: OFED's consumers often leave the EP's sizes
	 * at small or zero values they never meant as a limit.
	 */
	if (type == DOFI_OP_SEND &&
	    total > ep->obj.ia->ia_attr.max_message_size)
		return DAT_ERROR(DAT_LENGTH_ERROR, 0);
	if (type != DOFI_OP_SEND) {
		if (remote == NULL)
			return DAT_ERROR(DAT_INVALID_PARAMETER,
			                 DAT_INVALID_ARG5);
		/* The local segments give the length; it must fit the
		 * remote buffer the triplet describes. */
		if (total > ep->obj.ia->ia_attr.max_rdma_size ||
		    total > remote->segment_length)
			return DAT_ERROR(DAT_LENGTH_ERROR, 0);
		rma.addr = remote->virtual_address;
		rma.len = total;
		rma.key = remote->rmr_context;
	}
	if (dofi_fence_due(ep, DOFI_FENCE_WAITS(type))) {
		/*
		 * Behind requests waiting for room (dofi_defer.c), what it
		 * is fenced behind may wait for the peer: it waits in the
		 * queue too, and the post returns.
		 */
		if (dofi_flag(&ep->deferring)) {
			fence = atomic_load(&ep->fence_mark);
			fencep = &fence;
		} else {
			ret = dofi_dto_fence(ep, DOFI_FENCE_WAITS(type));
			if (ret != DAT_SUCCESS)
				return ret;
		}
	}

	op = dofi_pool_get(&ep->req_pool);
	if (op == NULL)
		return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_TEP);
	op->cookie = cookie;
	op->len = total;
	op->type = type;
	op->suppress = (uint8_t)dofi_suppress(ep, flags, 0);
	/*
	 * A write whose completion the consumer sees waits for the target's
	 * acknowledgement where the IA asks for it (see dofi_write_flags). A
	 * suppressed one need not: tcp keeps order, so a later signalled DTO
	 * still reports a refusal; unless a message must wait for its data
	 * (DOFI_FENCE_WRITE, dofi_dto_fence).
	 */
	wflags = type != DOFI_OP_WRITE ? 0
	         : op->suppress        ? ep->obj.ia->quiet_write_flags
	                               : ep->obj.ia->write_flags;
	dofi_order_prepare(ep, op, type == DOFI_OP_READ || wflags != 0,
	                   DOFI_FENCE_RAISES(type));
	atomic_store_explicit(&op->posted, 1, memory_order_relaxed);

	/* Where the fabric has no room, it waits (dofi_defer.c). */
	rc = dofi_defer_post(ep, fep, op, type, iov, desc, count, &rma, wflags,
	                     fencep);
	if (rc != 0) {
		/* The connection's end flushed it meanwhile (reported). */
		if (atomic_exchange(&op->posted, 0) == 0)
			return DAT_SUCCESS;
		dofi_order_unposted(ep, op);
		/*
		 * The connection's end came while it waited for room: the
		 * EP is no longer connected, as the post's first check would
		 * have found (a graceful end pending included).
		 */
		if (!dofi_post_live(ep) ||
		    (rc == -FI_EAGAIN &&
		     atomic_load(&ep->state) != DAT_EP_STATE_CONNECTED)) {
			dof_debug(DOFI_LOG,
			          "EP %p: the connection ended while a post "
			          "waited for room",
			          (void *)ep);
			return DAT_ERROR(
			        DAT_INVALID_STATE,
			        dofi_ep_state_subtype(atomic_load(&ep->state)));
		}
		dof_info(DOFI_LOG, "EP %p: post failed: %s", (void *)ep,
		         fi_strerror((int)-rc));
		return dofi_status_to_dat(dofi_fi_status((int)rc));
	}
	atomic_store_explicit(&ep->last_req, op, memory_order_relaxed);
	if (dofi_unlikely(dofi_flag(&ep->counting)))
		dofi_ext_count_post(ep, type, total);
	return DAT_SUCCESS;
}

/*
 * The common post, inlined into each call so that the type is a constant:
 * one good segment on a connected EP. Whatever else, and a post libfabric
 * refuses, goes to dofi_post_request_slow, which decides. Locals instead
 * of the slow path's iov arrays keep this to registers.
 */
static inline __attribute__((always_inline)) DAT_RETURN
dofi_post_request(DAT_EP_HANDLE h, uint8_t type, DAT_COUNT nseg,
                  DAT_LMR_TRIPLET *segs, DAT_DTO_COOKIE cookie,
                  const DAT_RMR_TRIPLET *remote, DAT_COMPLETION_FLAGS flags)
{
	dofi_ep_t *ep = dofi_obj_fast(h, DOFI_OBJ_EP);
	const dofi_ia_t *ia;
	const dofi_lmr_t *lmr;
	struct fid_ep *fep;
	dofi_op_t *op;
	uint64_t wflags = 0;
	void *buf, *desc;
	size_t len;
	int suppress;
	ssize_t rc;

	if (dofi_unlikely(ep == NULL || nseg != 1 ||
	                  (flags & ~DOFI_POST_FLAGS) != 0))
		goto slow;
	/* Counted posts take the slow path (dofi_ext_dto.c), and so do
	 * those behind requests waiting for room (dofi_defer.c). */
	if (dofi_unlikely(
	            atomic_load_explicit(&ep->state, memory_order_acquire) !=
	                    DAT_EP_STATE_CONNECTED ||
	            (dofi_flag(&ep->counting) | dofi_flag(&ep->deferring))))
		goto slow;
	fep = ep->fep;
	if (dofi_unlikely(fep == NULL))
		goto slow;
	if (dofi_unlikely(dofi_req_max_iov(ep, type) < 1))
		goto slow;
	/* A Read's destination needs local write: see the slow path. */
	lmr = dofi_seg_lmr(ep, segs,
	                   type == DOFI_OP_READ ? DAT_MEM_PRIV_LOCAL_WRITE_FLAG
	                                        : DAT_MEM_PRIV_NONE_FLAG);
	if (dofi_unlikely(lmr == NULL))
		goto slow;
	ia = ep->obj.ia;
	len = segs->segment_length;
	suppress = dofi_suppress(ep, flags, 0);
	if (type == DOFI_OP_SEND) {
		if (dofi_unlikely(len > ia->ia_attr.max_message_size))
			goto slow;
	} else {
		if (dofi_unlikely(remote == NULL ||
		                  len > ia->ia_attr.max_rdma_size ||
		                  len > remote->segment_length))
			goto slow;
		/* See dofi_post_request_slow on acknowledged writes. */
		if (type == DOFI_OP_WRITE)
			wflags = suppress ? ia->quiet_write_flags
			                  : ia->write_flags;
	}
	if (dofi_fence_due(ep, DOFI_FENCE_WAITS(type)))
		goto slow;
	op = dofi_pool_get(&ep->req_pool);
	if (dofi_unlikely(op == NULL))
		goto slow;
	op->cookie = cookie;
	op->len = len;
	op->type = type;
	op->suppress = (uint8_t)suppress;
	dofi_order_prepare(ep, op, type == DOFI_OP_READ || wflags != 0,
	                   DOFI_FENCE_RAISES(type));
	atomic_store_explicit(&op->posted, 1, memory_order_relaxed);
	buf = (void *)(uintptr_t)segs->virtual_address;
	desc = lmr->desc;
	if (type == DOFI_OP_SEND) {
		rc = fi_send(fep, buf, len, desc, ep->peer, op);
	} else if (type == DOFI_OP_READ) {
		rc = fi_read(fep, buf, len, desc, ep->peer,
		             remote->virtual_address, remote->rmr_context, op);
	} else if (wflags == 0) {
		rc = fi_write(fep, buf, len, desc, ep->peer,
		              remote->virtual_address, remote->rmr_context, op);
	} else {
		struct iovec iov = {.iov_base = buf, .iov_len = len};
		struct fi_rma_iov rma = {.addr = remote->virtual_address,
		                         .len = len,
		                         .key = remote->rmr_context};
		struct fi_msg_rma msg = {.msg_iov = &iov,
		                         .desc = &desc,
		                         .iov_count = 1,
		                         .addr = ep->peer,
		                         .rma_iov = &rma,
		                         .rma_iov_count = 1,
		                         .context = op};

		rc = fi_writemsg(fep, &msg, FI_COMPLETION | wflags);
	}
	if (dofi_likely(rc == 0)) {
		atomic_store_explicit(&ep->last_req, op, memory_order_relaxed);
		return DAT_SUCCESS;
	}
	/*
	 * Not posted: the slow path retries or reports it; unless the
	 * connection's end flushed it meanwhile (a failed post's only
	 * read-modify-write), which reported it.
	 */
	if (atomic_exchange(&op->posted, 0) == 0)
		return DAT_SUCCESS;
	dofi_order_unposted(ep, op);
slow:
	return dofi_post_request_slow(h, type, nseg, segs, cookie, remote,
	                              flags);
}

DAT_RETURN dofi_ep_post_send(DAT_EP_HANDLE h, DAT_COUNT nseg,
                             DAT_LMR_TRIPLET *segs, DAT_DTO_COOKIE cookie,
                             DAT_COMPLETION_FLAGS flags)
{
	return dofi_post_request(h, DOFI_OP_SEND, nseg, segs, cookie, NULL,
	                         flags);
}

DAT_RETURN dofi_ep_post_rdma_write(DAT_EP_HANDLE h, DAT_COUNT nseg,
                                   DAT_LMR_TRIPLET *segs, DAT_DTO_COOKIE cookie,
                                   const DAT_RMR_TRIPLET *remote,
                                   DAT_COMPLETION_FLAGS flags)
{
	return dofi_post_request(h, DOFI_OP_WRITE, nseg, segs, cookie, remote,
	                         flags);
}

DAT_RETURN dofi_ep_post_rdma_read(DAT_EP_HANDLE h, DAT_COUNT nseg,
                                  DAT_LMR_TRIPLET *segs, DAT_DTO_COOKIE cookie,
                                  const DAT_RMR_TRIPLET *remote,
                                  DAT_COMPLETION_FLAGS flags)
{
	return dofi_post_request(h, DOFI_OP_READ, nseg, segs, cookie, remote,
	                         flags);
}

/*
 * Post a receive to fep, the endpoint the post found (read once); it
 * stops retrying once the connection has ended (a replay at the
 * endpoint's opening never meets an ended one).
 */
static ssize_t dofi_recv_post(dofi_ep_t *ep, struct fid_ep *fep, dofi_op_t *op)
{
	return DOFI_RETRY_POST(ep, ep->rx_cq, dofi_recv_submit(fep, op));
}

/* A receive's op, its iov and desc set: the rest, and posted. */
static inline void dofi_recv_fill(dofi_ep_t *ep, dofi_op_t *op, size_t count,
                                  DAT_DTO_COOKIE cookie, DAT_SEG_LENGTH len,
                                  DAT_COMPLETION_FLAGS flags)
{
	op->iov_count = (uint32_t)count;
	op->cookie = cookie;
	op->len = len;
	op->type = DOFI_OP_RECV;
	op->suppress = (uint8_t)dofi_suppress(ep, flags, 1);
	dofi_op_seq_take(op, &ep->recv_seq); /* for flushing */
	atomic_store_explicit(&op->posted, 1, memory_order_relaxed);
}

/* Every receive dofi_ep_post_recv does not take; see the slow post. */
static __attribute__((noinline)) DAT_RETURN
dofi_post_recv_slow(DAT_EP_HANDLE h, DAT_COUNT nseg, DAT_LMR_TRIPLET *segs,
                    DAT_DTO_COOKIE cookie, DAT_COMPLETION_FLAGS flags)
{
	dofi_ep_t *ep = dofi_obj_fast(h, DOFI_OBJ_EP);
	DAT_DTO_COMPLETION_STATUS st;
	DAT_SEG_LENGTH total = 0;
	DAT_EP_STATE state;
	struct fid_ep *fep;
	size_t count = 0;
	dofi_op_t *op;
	DAT_RETURN ret;
	ssize_t rc;

	if (ep == NULL) {
		(void)dofi_obj_get(h, DOFI_OBJ_EP, __func__);
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	}
	if (ep->srq != NULL) {
		dof_warn(DOFI_LOG,
		         "dat_ep_post_recv: EP %p takes its receives "
		         "from an SRQ: post them there",
		         (void *)ep);
		return DAT_ERROR(DAT_INVALID_STATE, 0);
	}
	ret = dofi_post_flags_ok(flags);
	if (ret != DAT_SUCCESS)
		return ret;
	/* Receives stay allowed while a graceful disconnect is pending. */
	state = atomic_load_explicit(&ep->state, memory_order_acquire);
	if (state == DAT_EP_STATE_DISCONNECTED)
		return DAT_ERROR(DAT_INVALID_STATE,
		                 DAT_INVALID_STATE_EP_DISCONNECTED);
	op = dofi_pool_get(&ep->recv_pool);
	if (op == NULL)
		return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_TEP);
	if (dofi_likely(nseg == 1 && ep->attr.max_recv_iov >= 1 &&
	                dofi_seg1(ep, segs, DAT_MEM_PRIV_LOCAL_WRITE_FLAG,
	                          op->iov, op->desc))) {
		count = 1;
		total = segs->segment_length;
	} else {
		ret = dofi_segs(ep, nseg, segs,
		                ep->attr.max_recv_iov < DOFI_MAX_IOV
		                        ? ep->attr.max_recv_iov
		                        : DOFI_MAX_IOV,
		                DAT_MEM_PRIV_LOCAL_WRITE_FLAG, op->iov,
		                op->desc, &count, &total, &st);
		if (ret != DAT_SUCCESS || st != DAT_DTO_SUCCESS) {
			dofi_pool_put(&ep->recv_pool, op);
			if (ret != DAT_SUCCESS)
				return ret;
			return dofi_dto_fail(ep, ep->recv_evd, DOFI_OP_RECV,
			                     cookie, st);
		}
	}
	if (ep->recv_sink)
		count = dofi_recv_sink_add(ep, op, count);
	dofi_recv_fill(ep, op, count, cookie, total, flags);

	fep = ep->fep;
	if (fep == NULL) {
		dofi_ia_t *ia = ep->obj.ia;

		/* No libfabric endpoint yet: queue, in order. */
		pthread_mutex_lock(&ia->lock);
		fep = ep->fep;
		if (fep == NULL) {
			dofi_op_list_append(&ep->recv_pool, &ep->pend_head,
			                    &ep->pend_tail, op);
			pthread_mutex_unlock(&ia->lock);
			if (dofi_unlikely(dofi_flag(&ep->counting)))
				dofi_ext_count_post(ep, DOFI_OP_RECV, total);
			return DAT_SUCCESS;
		}
		pthread_mutex_unlock(&ia->lock);
	}
	rc = dofi_recv_post(ep, fep, op);
	if (rc != 0) {
		/* The connection's end flushed it meanwhile (reported). */
		if (atomic_exchange(&op->posted, 0) == 0)
			return DAT_SUCCESS;
		dofi_pool_put(&ep->recv_pool, op);
		if (!dofi_post_live(ep))
			return DAT_ERROR(DAT_INVALID_STATE,
			                 DAT_INVALID_STATE_EP_DISCONNECTED);
		dof_info(DOFI_LOG, "EP %p: receive post failed: %s", (void *)ep,
		         fi_strerror((int)-rc));
		return dofi_status_to_dat(dofi_fi_status((int)rc));
	}
	if (dofi_unlikely(dofi_flag(&ep->counting)))
		dofi_ext_count_post(ep, DOFI_OP_RECV, total);
	return DAT_SUCCESS;
}

/*
 * The common receive: one good segment on an EP with a libfabric
 * endpoint. The rest, and a receive libfabric refuses, go to
 * dofi_post_recv_slow.
 */
DAT_RETURN dofi_ep_post_recv(DAT_EP_HANDLE h, DAT_COUNT nseg,
                             DAT_LMR_TRIPLET *segs, DAT_DTO_COOKIE cookie,
                             DAT_COMPLETION_FLAGS flags)
{
	dofi_ep_t *ep = dofi_obj_fast(h, DOFI_OBJ_EP);
	const dofi_lmr_t *lmr;
	struct fid_ep *fep;
	dofi_op_t *op;
	size_t len;
	ssize_t rc;

	if (dofi_unlikely(ep == NULL || nseg != 1 ||
	                  (flags & ~DOFI_POST_FLAGS) != 0 ||
	                  ep->attr.max_recv_iov < 1))
		goto slow;
	/* Receives stay allowed while a graceful disconnect is pending;
	 * counted ones take the slow path (dofi_ext_dto.c). */
	if (dofi_unlikely(
	            atomic_load_explicit(&ep->state, memory_order_acquire) ==
	                    DAT_EP_STATE_DISCONNECTED ||
	            dofi_flag(&ep->counting)))
		goto slow;
	fep = ep->fep;
	if (dofi_unlikely(fep == NULL))
		goto slow;
	lmr = dofi_seg_lmr(ep, segs, DAT_MEM_PRIV_LOCAL_WRITE_FLAG);
	if (dofi_unlikely(lmr == NULL))
		goto slow;
	len = segs->segment_length;
	op = dofi_pool_get(&ep->recv_pool);
	if (dofi_unlikely(op == NULL))
		goto slow;
	op->iov[0].iov_base = (void *)(uintptr_t)segs->virtual_address;
	op->iov[0].iov_len = len;
	op->desc[0] = lmr->desc;
	if (dofi_likely(!ep->recv_sink)) {
		dofi_recv_fill(ep, op, 1, cookie, len, flags);
		rc = fi_recv(fep, op->iov[0].iov_base, len, op->desc[0], 0, op);
	} else {
		dofi_recv_fill(ep, op, dofi_recv_sink_add(ep, op, 1), cookie,
		               len, flags);
		rc = dofi_recv_submit(fep, op);
	}
	if (dofi_likely(rc == 0))
		return DAT_SUCCESS;
	/* As for requests: the connection's end may have flushed it. */
	if (atomic_exchange(&op->posted, 0) == 0)
		return DAT_SUCCESS;
	dofi_pool_put(&ep->recv_pool, op);
slow:
	return dofi_post_recv_slow(h, nseg, segs, cookie, flags);
}

/* ---- internal operations (RTU, accepted message) -----------------------
 */

/*
 * Zero bytes, no buffer, no descriptor: valid with FI_MR_LOCAL too. The
 * receive goes to fep before the endpoint is published in ep->fep, so no
 * consumer receive can reach libfabric ahead of it (matching is in posting
 * order on MSG endpoints: it takes the peer's first message).
 */
dof_status_t dofi_dto_post_internal_recv(dofi_ep_t *ep, struct fid_ep *fep,
                                         dofi_op_t *op)
{
	uint64_t until = 0;
	int tries = 0;
	ssize_t rc;

	op->type = DOFI_OP_CM_RECV;
	op->len = 0;
	atomic_store(&op->posted, 1);
	/*
	 * rxd refuses a receive while the CQ it completes into is full (its
	 * util CQ's ring; libfabric 1.17-2.6, rxd_ep_generic_recvmsg), and a
	 * progress pass does not empty it: a reader must. A consumer that
	 * does not dequeue while it accepts (OFED's dtestcm, no progress
	 * thread) leaves the backends' own completions there, one per
	 * connection, and the 257th accept failed. Move them into the EVD,
	 * where they take no room, and try again.
	 */
	while ((rc = fi_recv(fep, NULL, 0, NULL, 0, op)) == -FI_EAGAIN &&
	       dofi_retry_more(++tries, &until)) {
		if (ep->recv_evd != NULL)
			dofi_evd_flush_one(ep->recv_evd, ep->rx_cq, 1);
		else
			(void)dofi_retry_eagain(ep->rx_cq, rc);
	}
	if (rc != 0) {
		atomic_store(&op->posted, 0);
		dof_info(DOFI_LOG, "EP %p: internal receive: %s", (void *)ep,
		         fi_strerror((int)-rc));
		return DOF_ERR_IO;
	}
	return DOF_OK;
}

/*
 * A side's first message (the RTU, the accepted message). fi_inject needs
 * no context and makes no completion; where the provider refuses it, or
 * where a close would drop it unsent (close_drops_unsent: the close waits
 * for the completion), a send with our internal op as context, whose
 * completion the conversion retires.
 */
dof_status_t dofi_dto_send_internal(dofi_ep_t *ep, dofi_op_t *op)
{
	int readable = ep->req_evd != NULL && ep->req_evd->cq != NULL;
	ssize_t rc;

	if (!readable || !ep->obj.ia->traits->close_drops_unsent) {
		rc = DOFI_RETRY(ep->tx_cq,
		                fi_inject(ep->fep, NULL, 0, ep->peer));
		if (rc == 0)
			return DOF_OK;
		dof_debug(DOFI_LOG,
		          "EP %p: fi_inject of an internal message: %s; "
		          "sending it",
		          (void *)ep, fi_strerror((int)-rc));
	}
	if (!readable || atomic_load(&op->posted))
		return DOF_ERR_IO; /* its completion would go unread */
	op->type = DOFI_OP_CM_SEND;
	op->len = 0;
	atomic_store(&op->posted, 1);
	rc = DOFI_RETRY(ep->tx_cq,
	                fi_send(ep->fep, NULL, 0, NULL, ep->peer, op));
	if (rc != 0) {
		atomic_store(&op->posted, 0);
		dof_info(DOFI_LOG, "EP %p: sending an internal message: %s",
		         (void *)ep, fi_strerror((int)-rc));
		return DOF_ERR_IO;
	}
	return DOF_OK;
}

void dofi_dto_flush_op(dofi_op_t *op)
{
	dofi_ep_t *ep = op->ep;
	dofi_evd_t *evd = op->type == DOFI_OP_RECV ? ep->recv_evd : ep->req_evd;
	DAT_EVENT ev;

	if (evd != NULL) {
		memset(&ev, 0, sizeof(ev));
		dofi_dto_fill(&ev, evd, op, DAT_DTO_ERR_FLUSHED, 0);
		(void)dofi_evd_post(evd, &ev);
	}
	dofi_op_release(op);
}

void dofi_pool_flush_posted(dofi_pool_t *pool)
{
	uint32_t i, n, seen = dofi_pool_seen(pool);
	dofi_op_t **v;

	if (dofi_pool_used(pool) == 0)
		return;
	v = dofi_pool_posted(pool, &n);
	if (v == NULL) {
		/* No memory for the sort: in the pool's order. */
		for (i = 0; i < seen; i++) {
			uint8_t posted =
			        atomic_exchange(&pool->ops[i].posted, 0);

			if (posted != 0)
				dofi_dto_flush_op(&pool->ops[i]);
			if (posted == DOFI_POSTED_AFTER)
				dofi_dto_after_flushed(&pool->ops[i]);
		}
		return;
	}
	for (i = 0; i < n; i++) {
		uint8_t posted = atomic_exchange(&v[i]->posted, 0);

		if (posted != 0)
			dofi_dto_flush_op(v[i]);
		if (posted == DOFI_POSTED_AFTER)
			dofi_dto_after_flushed(v[i]);
	}
	free(v);
}

dof_status_t dofi_dto_replay_recvs(dofi_ep_t *ep)
{
	while (ep->pend_head != DOFI_POOL_NONE) {
		dofi_op_t *op = &ep->recv_pool.ops[ep->pend_head];
		uint32_t next = op->next;

		if (dofi_recv_post(ep, ep->fep, op) != 0)
			return DOF_ERR_IO;
		ep->pend_head = next;
		if (next == DOFI_POOL_NONE)
			ep->pend_tail = DOFI_POOL_NONE;
	}
	return DOF_OK;
}

void dofi_dto_flush_queued(dofi_ep_t *ep)
{
	while (ep->pend_head != DOFI_POOL_NONE) {
		dofi_op_t *op = &ep->recv_pool.ops[ep->pend_head];

		ep->pend_head = op->next;
		if (atomic_exchange(&op->posted, 0))
			dofi_dto_flush_op(op);
	}
	ep->pend_tail = DOFI_POOL_NONE;
}
