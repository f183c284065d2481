/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * The data path's small pieces, inline: the per-EP op pools, the LMR table
 * lookup and the conversion of a completion into a DAT event. Posts
 * (dofi_dto.c) and dequeues (dofi_evd.c) are a few dozen instructions of
 * ours around one libfabric call; out-of-line calls between the files
 * would be a good part of them.
 */
#ifndef DOFI_FAST_H
#define DOFI_FAST_H

#include "dofi.h"

#define dofi_likely(x)   __builtin_expect(!!(x), 1)
#define dofi_unlikely(x) __builtin_expect(!!(x), 0)

/* ---- op pools: lock-free stacks of indices, tagged against ABA ----------- */

static inline dofi_op_t *dofi_pool_get(dofi_pool_t *pool)
{
	uint64_t old = atomic_load_explicit(&pool->head, memory_order_acquire);
	uint64_t new;
	uint32_t idx;

	do {
		idx = (uint32_t)old;
		if (dofi_unlikely(idx == DOFI_POOL_NONE))
			return dofi_pool_fresh(pool); /* none given back */
		new = ((old >> 32) + 1) << 32 |
		      __atomic_load_n(&pool->ops[idx].next, __ATOMIC_RELAXED);
	} while (!atomic_compare_exchange_weak_explicit(&pool->head, &old, new,
	                                                memory_order_acq_rel,
	                                                memory_order_acquire));
	return &pool->ops[idx];
}

static inline void dofi_pool_put(dofi_pool_t *pool, dofi_op_t *op)
{
	uint32_t idx = (uint32_t)(op - pool->ops);
	uint64_t old = atomic_load_explicit(&pool->head, memory_order_acquire);
	uint64_t new;

	do {
		__atomic_store_n(&op->next, (uint32_t)old, __ATOMIC_RELAXED);
		new = ((old >> 32) + 1) << 32 | idx;
	} while (!atomic_compare_exchange_weak_explicit(&pool->head, &old, new,
	                                                memory_order_acq_rel,
	                                                memory_order_acquire));
}

/* ---- the LMR table ------------------------------------------------------- */

/* lmr_context -> LMR, without a lock; NULL when it names none. */
static inline dofi_lmr_t *dofi_lmr_lookup(dofi_ia_t *ia, DAT_LMR_CONTEXT ctx)
{
	uint32_t slot = ctx & DOFI_LMR_SLOT_MASK;
	dofi_lmr_t **chunk, *lmr;

	if (dofi_unlikely(slot == 0 || slot >= DOFI_LMR_SLOTS))
		return NULL;
	chunk = __atomic_load_n(&ia->lmr_chunks[slot / DOFI_LMR_CHUNK],
	                        __ATOMIC_ACQUIRE);
	if (dofi_unlikely(chunk == NULL))
		return NULL;
	lmr = __atomic_load_n(&chunk[slot % DOFI_LMR_CHUNK], __ATOMIC_ACQUIRE);
	if (dofi_unlikely(lmr == NULL || lmr->lmr_context != ctx))
		return NULL;
	return lmr;
}

/*
 * Append an op of pool to a list of op indices linked through op->next.
 * A dofi_pool_get may read the next of an op it lost the race for (its
 * compare-and-swap then fails): the stores are atomic, as that read is.
 */
static inline void dofi_op_list_append(dofi_pool_t *pool, uint32_t *head,
                                       uint32_t *tail, dofi_op_t *op)
{
	uint32_t idx = (uint32_t)(op - pool->ops);

	__atomic_store_n(&op->next, DOFI_POOL_NONE, __ATOMIC_RELAXED);
	if (*tail == DOFI_POOL_NONE)
		*head = idx;
	else
		__atomic_store_n(&pool->ops[*tail].next, idx, __ATOMIC_RELAXED);
	*tail = idx;
}

/* ---- posts: what dofi_dto.c and dofi_ext_dto.c share -------------------- */

/*
 * Before a request is posted: its place in posting order, for a flush at
 * the connection's end (a load and a store, as for receives: requests
 * posted at once by two threads have no order to keep), and its order
 * role, where the fabric needs one. raise: the fence kinds (DOFI_FENCE_*)
 * a late request of its type stands for, a constant (0 for a Send).
 */
static inline void dofi_order_prepare(dofi_ep_t *ep, dofi_op_t *op, int late,
                                      uint8_t raise)
{
	const dofi_ia_t *ia = ep->obj.ia;

	dofi_op_seq_take(op, &ep->req_seq);
	if (ia->late_order == DOFI_ORDER_NONE) {
		op->late = 0;
		op->wait = 0;
		return;
	}
	op->late = (uint8_t)(late || ia->late_order == DOFI_ORDER_ALL);
	if (op->late)
		op->wait = atomic_fetch_add(&ep->late_posted, 1);
	else
		op->wait = atomic_load_explicit(&ep->late_posted,
		                                memory_order_relaxed);
	/* What the target answers: later requests that wait for its kind
	 * wait until it is reported (ia->fence). The mark only moves on. */
	if (dofi_unlikely(late && (ia->fence & raise))) {
		uint32_t m = atomic_load(&ep->fence_mark);

		while ((int32_t)(op->wait + 1 - m) > 0 &&
		       !atomic_compare_exchange_weak(&ep->fence_mark, &m,
		                                     op->wait + 1))
			;
	}
}

/* The fence kinds a late request of type raises (DOFI_FENCE_*): a
 * delivered Write raises both, as it did behind Reads before. */
#define DOFI_FENCE_RAISES(type)                                 \
	((uint8_t)((type) == DOFI_OP_READ ? DOFI_FENCE_READ     \
	           : (type) == DOFI_OP_WRITE                    \
	                   ? DOFI_FENCE_READ | DOFI_FENCE_WRITE \
	                   : 0))

/* The fence kinds a request of type waits for (DOFI_FENCE_*): a message
 * for the Writes before it too. */
#define DOFI_FENCE_WAITS(type)                                          \
	((uint8_t)((type) == DOFI_OP_SEND || (type) == DOFI_OP_EXT_WIMM \
	                   ? DOFI_FENCE_READ | DOFI_FENCE_WRITE         \
	                   : DOFI_FENCE_READ))

/*
 * Whether a request that waits for the fence kinds waits (a constant in
 * the fast path) must wait before it is posted for a late request posted
 * earlier to be reported (ia->fence; dofi_dto_fence). One load where the
 * IA fences nothing.
 */
static inline int dofi_fence_due(const dofi_ep_t *ep, uint8_t waits)
{
	return dofi_unlikely(ep->obj.ia->fence & waits) &&
	       (int32_t)(atomic_load_explicit(&ep->fence_mark,
	                                      memory_order_relaxed) -
	                 atomic_load_explicit(&ep->late_settled,
	                                      memory_order_acquire)) > 0;
}

/*
 * One segment, the common case, checked inline: its LMR when the segment
 * is good, else NULL, and the post goes through dofi_segs, which decides
 * (and says why in the log).
 */
static inline const dofi_lmr_t *dofi_seg_lmr(const dofi_ep_t *ep,
                                             const DAT_LMR_TRIPLET *t,
                                             DAT_MEM_PRIV_FLAGS need)
{
	const dofi_lmr_t *lmr;

	if (dofi_unlikely(t == NULL || t->segment_length == 0))
		return NULL;
	lmr = dofi_lmr_lookup(ep->obj.ia, t->lmr_context);
	if (dofi_unlikely(lmr == NULL || lmr->pz != ep->pz ||
	                  (lmr->priv & need) != need ||
	                  t->virtual_address < lmr->base ||
	                  t->segment_length > lmr->length ||
	                  t->virtual_address - lmr->base >
	                          lmr->length - t->segment_length))
		return NULL;
	return lmr;
}

/* The completion flags a post accepts. */
#define DOFI_POST_FLAGS                                              \
	((DAT_COMPLETION_FLAGS)(DAT_COMPLETION_SUPPRESS_FLAG |       \
	                        DAT_COMPLETION_SOLICITED_WAIT_FLAG | \
	                        DAT_COMPLETION_UNSIGNALLED_FLAG |    \
	                        DAT_COMPLETION_BARRIER_FENCE_FLAG |  \
	                        DAT_COMPLETION_EVD_THRESHOLD_FLAG))

/*
 * Where the fabric cuts long messages silently (ep->recv_sink): the IA's
 * sink after a receive's count segments, so that what spills past them
 * tells (dofi_dto_recv_overrun). The pool's ops have a slot for it. No
 * descriptor: the IA has no sink where the fabric wants one. The new
 * count.
 */
static inline size_t dofi_recv_sink_add(dofi_ep_t *ep, dofi_op_t *op,
                                        size_t count)
{
	dofi_ia_t *ia = ep->obj.ia;

	op->iov[count].iov_base = ia->recv_sink;
	op->iov[count].iov_len = sizeof(ia->recv_sink);
	op->desc[count] = NULL;
	return count + 1;
}

/*
 * Hand receive op, its segments set (op->iov, op->desc, op->iov_count),
 * to fep once: libfabric's short call for one segment or none, the
 * message call for more. What libfabric returned.
 */
static inline ssize_t dofi_recv_submit(struct fid_ep *fep, dofi_op_t *op)
{
	struct fi_msg msg = {
	        .msg_iov = op->iov,
	        .desc = op->desc,
	        .iov_count = op->iov_count,
	        .context = op,
	};

	if (op->iov_count <= 1)
		return fi_recv(fep, op->iov_count ? op->iov[0].iov_base : NULL,
		               op->iov_count ? op->iov[0].iov_len : 0,
		               op->iov_count ? op->desc[0] : NULL, 0, op);
	return fi_recvmsg(fep, &msg, FI_COMPLETION);
}

static inline int dofi_suppress(const dofi_ep_t *ep, DAT_COMPLETION_FLAGS flags,
                                int recv)
{
	DAT_COMPLETION_FLAGS ep_flags =
	        recv ? ep->attr.recv_completion_flags
	             : ep->attr.request_completion_flags;

	if (flags & DAT_COMPLETION_SUPPRESS_FLAG)
		return 1;
	return (flags & DAT_COMPLETION_UNSIGNALLED_FLAG) &&
	       (ep_flags & DAT_COMPLETION_UNSIGNALLED_FLAG);
}

/* Drive progress while libfabric's queue is full, then give up. */
static inline ssize_t dofi_retry_eagain(struct fid_cq *cq, ssize_t rc)
{
	if (rc == -FI_EAGAIN && cq != NULL)
		(void)fi_cq_read(cq, NULL, 0);
	return rc;
}

#define DOFI_EAGAIN_RETRIES 1000
/* After those, on for this long: a layer's internal queue (rxm's
 * segments of a large message) drains as the peer takes them. */
#define DOFI_EAGAIN_NS (1000000000ull)

uint64_t dofi_now_ns(void);

/*
 * Whether a slow-path wait goes on at its tries-th turn: at once for
 * DOFI_EAGAIN_RETRIES turns, then until bound_ns have passed since
 * (*until, 0 at first, keeps the deadline). What a post that answers
 * -FI_EAGAIN, a fence and a delivered Write each wait with.
 */
static inline int dofi_retry_more_for(int tries, uint64_t *until,
                                      uint64_t bound_ns)
{
	if (tries < DOFI_EAGAIN_RETRIES)
		return 1;
	if (*until == 0)
		*until = dofi_now_ns() + bound_ns;
	return dofi_now_ns() < *until;
}

/* Whether a post that answered -FI_EAGAIN tries-th time goes on. */
static inline int dofi_retry_more(int tries, uint64_t *until)
{
	return dofi_retry_more_for(tries, until, DOFI_EAGAIN_NS);
}

/*
 * call (a post to libfabric) again while it answers -FI_EAGAIN and
 * dofi_retry_eagain, driving cq, says to: DOFI_EAGAIN_RETRIES times, then
 * until DOFI_EAGAIN_NS have passed; its last return. Slow paths only.
 */
#define DOFI_RETRY(cq, call) DOFI_RETRY_WHILE(1, cq, call)

/* DOFI_RETRY, but only while live (read before each retry) holds. */
#define DOFI_RETRY_WHILE(live, cq, call)                                  \
	__extension__({                                                   \
		ssize_t dofi_rc_;                                         \
		int dofi_tries_ = 0;                                      \
		uint64_t dofi_until_ = 0;                                 \
		do                                                        \
			dofi_rc_ = (call);                                \
		while (dofi_rc_ == -FI_EAGAIN && (live) &&                \
		       dofi_retry_eagain((cq), dofi_rc_) == -FI_EAGAIN && \
		       dofi_retry_more(++dofi_tries_, &dofi_until_));     \
		dofi_rc_;                                                 \
	})

/*
 * Whether a consumer's post to ep, retrying -FI_EAGAIN, may call into
 * libfabric again: not once the connection has ended. An RDM backend
 * closes the libfabric endpoint a grace period after the end (dofi_cm_rdm.c),
 * so a post must be out of libfabric by then, not retrying for a second.
 * A load, only on the retry path.
 */
static inline int dofi_post_live(const dofi_ep_t *ep)
{
	return atomic_load_explicit(&ep->state, memory_order_acquire) !=
	       DAT_EP_STATE_DISCONNECTED;
}

/* DOFI_RETRY for a consumer's post to ep: it stops once the connection
 * has ended (dofi_post_live), with the last return (-FI_EAGAIN). */
#define DOFI_RETRY_POST(ep, cq, call) \
	DOFI_RETRY_WHILE(dofi_post_live(ep), cq, call)

/* ---- completions --------------------------------------------------------- */

/* The event of a standard DTO (the completion path's own). */
static inline void dofi_dto_fill_std(DAT_EVENT *ev, dofi_evd_t *evd,
                                     const dofi_op_t *op,
                                     DAT_DTO_COMPLETION_STATUS status,
                                     DAT_SEG_LENGTH len)
{
	DAT_DTO_COMPLETION_EVENT_DATA *d =
	        &ev->event_data.dto_completion_event_data;

	ev->event_number = DAT_DTO_COMPLETION_EVENT;
	ev->evd_handle = (DAT_EVD_HANDLE)evd;
	d->ep_handle = (DAT_EP_HANDLE)op->ep;
	d->user_cookie = op->cookie;
	d->status = status;
	d->transfered_length = len;
	d->rmr_context = 0;
	d->operation = op->type == DOFI_OP_SEND    ? DAT_DTO_SEND
	               : op->type == DOFI_OP_RECV  ? DAT_DTO_RECEIVE
	               : op->type == DOFI_OP_WRITE ? DAT_DTO_RDMA_WRITE
	                                           : DAT_DTO_RDMA_READ;
}

/* The event of any DTO, the IB extension's included. */
static inline void dofi_dto_fill(DAT_EVENT *ev, dofi_evd_t *evd,
                                 const dofi_op_t *op,
                                 DAT_DTO_COMPLETION_STATUS status,
                                 DAT_SEG_LENGTH len)
{
	dofi_dto_fill_std(ev, evd, op, status, len);
	if (dofi_unlikely(DOFI_OP_EXT(op->type)))
		dofi_ext_fill(ev, op);
}

static inline void dofi_op_release(dofi_op_t *op)
{
	dofi_ep_t *ep = op->ep;

	if (op->type != DOFI_OP_RECV) {
		dofi_pool_put(&ep->req_pool, op);
		return;
	}
	dofi_pool_put(&ep->recv_pool, op);
	/* An EP on a shared receive queue takes its next receive. */
	if (dofi_unlikely(ep->srq != NULL))
		ep->obj.ia->ctl->srq_recv_done(ep);
}

/*
 * One more message of a connection that completed successfully
 * (dofi_ep_t.msgs_sent, msgs_recvd). No atomic read-modify-write is
 * needed: every CQ is read only under the lock of the EVD it belongs to,
 * whoever reads it (the consumer's dequeue or wait, the CM's
 * dofi_cm_read_cqs, a flush; dofi_evd.c), and an EP's requests complete
 * on its request EVD's CQ, its receives on its receive EVD's, so each
 * counter has one writer at a time, serialised by that lock. The CM
 * reads them under ia->lock only, from another thread: hence relaxed
 * atomic loads and stores, which are plain moves (no lock prefix).
 */
static inline void dofi_dto_count(_Atomic uint64_t *c)
{
	atomic_store_explicit(c,
	                      atomic_load_explicit(c, memory_order_relaxed) + 1,
	                      memory_order_relaxed);
}

/*
 * The completion of a request that goes through dofi_dto_order (posting
 * order, dofi_dto.c): a late request, or one posted after a late request
 * not yet settled. Never a receive (late and wait stay 0).
 */
static inline int dofi_order_due(const dofi_op_t *op)
{
	return op->late ||
	       (op->wait != 0 &&
	        (int32_t)(op->wait - atomic_load(&op->ep->late_settled)) > 0);
}

/*
 * A late request in its turn, with nothing held behind it: the common
 * case where every request is late (traits->late_order ALL). Reported
 * as any completion, into the caller's event, then counted settled;
 * dofi_dto_order, whose first branch is this case with the ring, would
 * queue the event for the dequeue to take back. Standard requests only
 * (a receive is never late). evd->lock held, as for every writer of
 * late_settled and of the held list.
 */
static inline int dofi_order_alone(const dofi_op_t *op)
{
	const dofi_ep_t *ep = op->ep;

	return op->late && op->type <= DOFI_OP_READ &&
	       op->wait == atomic_load_explicit(&ep->late_settled,
	                                        memory_order_relaxed) &&
	       ep->held_head == DOFI_POOL_NONE;
}

/* One more late request reported in its turn. Its only writer: every
 * caller holds the request EVD's lock, so a load and a store do. */
static inline void dofi_order_settle(dofi_ep_t *ep)
{
	atomic_store_explicit(
	        &ep->late_settled,
	        atomic_load_explicit(&ep->late_settled, memory_order_relaxed) +
	                1,
	        memory_order_release);
}

/*
 * Turn one CQ entry into a DAT event. Returns 0 when *ev is filled, 1 when
 * there is nothing to report: a suppressed completion, or one a flush
 * reported already (each op is reported once), or not an op of ours, or
 * events went to the EVD's ring instead (held to keep posting order).
 * The caller holds evd->lock.
 */
static inline __attribute__((always_inline)) int
dofi_dto_complete(const struct fi_cq_data_entry *entry, DAT_EVENT *ev,
                  dofi_evd_t *evd)
{
	dofi_op_t *op = entry->op_context;
	dofi_ep_t *ep;
	int suppress, settle = 0;
	uint8_t posted;

	if (dofi_unlikely(op == NULL))
		return 1;
	ep = op->ep;
	if (dofi_unlikely(dofi_order_due(op))) {
		if (!dofi_order_alone(op))
			return dofi_dto_order(op, 0, op->len, evd);
		settle = 1;
	}
	posted = atomic_exchange(&op->posted, 0);
	if (dofi_unlikely(posted == 0)) {
		/* A write half waited for (dofi_ext_write_imm). */
		if (op->type == DOFI_OP_EXT_SINK)
			dofi_dto_count(&ep->ext_wimm_done);
		return 1;
	}
	if (dofi_unlikely(op->type >= DOFI_OP_CM_RECV)) {
		/* An IB extension's request (dofi_ext_dto.c). */
		if (DOFI_OP_EXT(op->type))
			return dofi_ext_complete(op, ev, evd, posted);
		/* A backend's own message. */
		ep->obj.ia->ctl->cm_op_done(op, 0);
		return 1;
	}
	/* A receive a write with immediate data consumed (dofi_ext_dto.c). */
	if (dofi_unlikely(entry->flags & FI_REMOTE_CQ_DATA))
		return dofi_ext_complete_recv(entry, op, ev, evd);
	/*
	 * After a receive failed, none succeeds, as on an InfiniBand queue
	 * pair in error: an RDM fabric may still place messages that
	 * followed the failed one (shm: what a dead peer had copied).
	 */
	if (dofi_unlikely(ep->recv_failed) && op->type == DOFI_OP_RECV) {
		dofi_dto_fill_std(ev, evd, op, DAT_DTO_ERR_FLUSHED, 0);
		dofi_op_release(op);
		return 0;
	}
	/* A Send or a receive, counted for a graceful end (RDM). */
	if (op->type == DOFI_OP_RECV) {
		/* A message longer than its receive that the fabric cut
		 * without an error: it spilled into the sink
		 * (ep->recv_sink). */
		if (dofi_unlikely(entry->len > op->len))
			return dofi_dto_recv_overrun(op, entry->len, ev, evd);
		dofi_dto_count(&ep->msgs_recvd);
	} else if (op->type == DOFI_OP_SEND)
		dofi_dto_count(&ep->msgs_sent);
	suppress = op->suppress;
	if (dofi_likely(!suppress))
		dofi_dto_fill_std(ev, evd, op, DAT_DTO_SUCCESS,
		                  op->type == DOFI_OP_RECV ? entry->len
		                                           : op->len);
	/* An RMR bind's completion follows it. */
	if (dofi_unlikely(posted == DOFI_POSTED_AFTER)) {
		int r = dofi_dto_after(op, ev, evd, suppress);

		if (settle)
			dofi_order_settle(ep);
		return r;
	}
	dofi_op_release(op);
	if (settle)
		dofi_order_settle(ep);
	return suppress;
}

#endif /* DOFI_FAST_H */
