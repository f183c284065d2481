/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * The InfiniBand extension's data path (see dofi_ext.c): its posts, their
 * completions as DAT_IB_DTO_EVENTs, and the counting that the posts and
 * dequeues do while counters run. In the data path's layer: it calls
 * dofi_dto.c, and dofi_dto.c and dofi_evd.c call it.
 *
 * - RDMA Write with immediate data. Where the fabric consumes a receive
 *   with remote CQ data (FI_RX_CQ_DATA: verbs), it is fi_writedata. tcp
 *   and sockets report fi_writedata's data at the target without taking
 *   a receive, so there it is an RDMA Write followed by an empty message
 *   carrying the immediate data and the write's length as its CQ data:
 *   the message takes the target's next receive in order with its sends,
 *   as on InfiniBand, and arrives after the data (FI_ORDER_SAW; where
 *   the fabric does not grant it, the post waits for the write's
 *   delivery before it sends the message: dofi_ext_write_delivered).
 *   The write completes on a sink context (ep->ext_sink) with no event
 *   (on tcp, where it is short, it is an inject with no completion at
 *   all); the message is the request the consumer sees.
 * - 64-bit fetch-and-add and compare-and-swap: fi_fetch_atomic and
 *   fi_compare_atomic. The operands live in the request's op (libfabric
 *   reads them until completion), so they need no descriptor.
 */
#include "config.h"

#define DOFI_LOG_COMP "ext"

#include <sched.h>
#include <string.h>

#include <rdma/fi_atomic.h>

#include "dofi.h"
#include "dofi_fast.h"

static void dofi_cnt_add(uint64_t *c, uint64_t n)
{
	__atomic_fetch_add(c, n, __ATOMIC_RELAXED);
}

/* ---- posts --------------------------------------------------------------- */

/*
 * What every extended request checks first; DAT_SUCCESS when it may be
 * posted, with *fepp the endpoint to post to, read once: a retry must not
 * read ep->fep again after the connection's end (as dofi_req_post).
 * offered: whether the IA's fabric carries it.
 */
static DAT_RETURN dofi_ext_ready(dofi_ep_t *ep, DAT_EP_HANDLE h, int offered,
                                 const char *what,
                                 const DAT_RMR_TRIPLET *remote,
                                 DAT_COMPLETION_FLAGS flags,
                                 struct fid_ep **fepp)
{
	struct fid_ep *fep;
	DAT_EP_STATE state;

	if (dofi_unlikely(ep == NULL)) {
		(void)dofi_obj_get(h, DOFI_OBJ_EP, what);
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	}
	if (dofi_unlikely(!offered)) {
		dof_info(DOFI_LOG, "%s: IA '%s' (%s) does not offer it", what,
		         ep->obj.ia->prov->info.ia_name,
		         ep->obj.ia->info->fabric_attr->prov_name);
		return DAT_ERROR(DAT_MODEL_NOT_SUPPORTED, 0);
	}
	if (dofi_unlikely(flags & ~DOFI_POST_FLAGS))
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG6);
	if (dofi_unlikely(remote == NULL))
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG5);
	fep = ep->fep;
	state = atomic_load_explicit(&ep->state, memory_order_acquire);
	if (dofi_unlikely(state != DAT_EP_STATE_CONNECTED || fep == NULL))
		return DAT_ERROR(DAT_INVALID_STATE,
		                 dofi_ep_state_subtype(state));
	/* Not queued behind requests waiting for room (dofi_defer.c):
	 * posted once they have gone. */
	if (dofi_unlikely(dofi_flag(&ep->deferring))) {
		DAT_RETURN ret = dofi_defer_settle(ep);

		if (ret != DAT_SUCCESS)
			return ret;
	}
	*fepp = fep;
	return DAT_SUCCESS;
}

/* A request op for type, or NULL when the EP's queue is full. */
static inline dofi_op_t *dofi_ext_op_get(dofi_ep_t *ep, uint8_t type,
                                         DAT_DTO_COOKIE cookie,
                                         DAT_SEG_LENGTH len,
                                         DAT_COMPLETION_FLAGS flags)
{
	dofi_op_t *op = dofi_pool_get(&ep->req_pool);

	if (dofi_unlikely(op == NULL))
		return NULL;
	op->cookie = cookie;
	op->len = len;
	op->type = type;
	op->suppress = (uint8_t)dofi_suppress(ep, flags, 0);
	return op;
}

/* Posted: for RMR binds and the counters. */
static inline DAT_RETURN dofi_ext_posted(dofi_ep_t *ep, dofi_op_t *op)
{
	atomic_store_explicit(&ep->last_req, op, memory_order_relaxed);
	if (dofi_unlikely(dofi_flag(&ep->counting)))
		dofi_ext_count_post(ep, op->type, op->len);
	return DAT_SUCCESS;
}

/* libfabric refused the post: the op takes its turn and goes back. */
static DAT_RETURN dofi_ext_refused(dofi_ep_t *ep, dofi_op_t *op, ssize_t rc,
                                   const char *what)
{
	/* The connection's end flushed it meanwhile, and reported it. */
	if (atomic_exchange(&op->posted, 0) == 0)
		return DAT_SUCCESS;
	dofi_order_unposted(ep, op);
	/* The connection ended while it waited for room (DOFI_RETRY_POST). */
	if (!dofi_post_live(ep))
		return DAT_ERROR(DAT_INVALID_STATE,
		                 DAT_INVALID_STATE_EP_DISCONNECTED);
	dof_info(DOFI_LOG, "EP %p: %s: post failed: %s", (void *)ep, what,
	         fi_strerror((int)-rc));
	return dofi_status_to_dat(dofi_fi_status((int)rc));
}

/* The sink context of the write halves: a request nobody reports. */
static inline struct fi_context2 *dofi_ext_sink(dofi_ep_t *ep)
{
	dofi_op_t *sink = &ep->ext_sink;

	if (dofi_unlikely(sink->type != DOFI_OP_EXT_SINK)) {
		sink->ep = ep;
		sink->type = DOFI_OP_EXT_SINK; /* posted, late, wait: 0 */
	}
	return &sink->fctx;
}

/*
 * The Write half of a write with immediate data where the fabric does
 * not order a message after an RDMA Write (ia->fence: DOFI_FENCE_WRITE,
 * efa, tcp;ofi_rxm with atomics): posted on the sink with a delivery
 * completion, which the post then waits for, moving the request EVD's
 * completions to its queue, as a Send waits behind Writes
 * (dofi_dto_fence). 0; 1 when the Write was posted but will not be
 * delivered: it failed (the sink's error breaks the connection) or the
 * connection ended meanwhile; or a libfabric error: the Write not posted,
 * or -FI_EAGAIN past DOFI_FENCE_NS, posted and not delivered (the post
 * fails with DAT_INSUFFICIENT_RESOURCES, as a Send's wait in
 * dofi_dto_fence does; rxm, shm and rxd in libfabric 1.17 never complete
 * a Write with delivery completion that the target refuses).
 */
static ssize_t dofi_ext_write_delivered(dofi_ep_t *ep, struct fid_ep *fep,
                                        const struct fi_msg_rma *wmsg)
{
	uint64_t target, until = 0;
	int tries = 0;
	ssize_t rc;

	if (ep->req_evd == NULL)
		return -FI_EINVAL;
	target = atomic_fetch_add(&ep->ext_wimm_posted, 1) + 1;
	rc = DOFI_RETRY_POST(
	        ep, ep->tx_cq,
	        fi_writemsg(fep, wmsg, FI_COMPLETION | FI_DELIVERY_COMPLETE));
	if (rc != 0) {
		/* Not posted: it will not complete. */
		(void)atomic_fetch_sub(&ep->ext_wimm_posted, 1);
		return rc;
	}
	while ((int64_t)(atomic_load_explicit(&ep->ext_wimm_done,
	                                      memory_order_acquire) -
	                 target) < 0) {
		if (!dofi_post_live(ep) ||
		    atomic_load_explicit(&ep->dto_error, memory_order_acquire))
			return 1;
		dofi_evd_flush_one(ep->req_evd, ep->tx_cq, 1);
		if (!dofi_retry_more_for(++tries, &until, DOFI_FENCE_NS))
			return -FI_EAGAIN;
		if (until != 0)
			sched_yield();
	}
	return 0;
}

/*
 * The Write half of a write with immediate data was posted and will not
 * be delivered (dofi_ext_write_delivered returned 1): the request
 * completes in error, in its turn, and the post succeeds, as on
 * InfiniBand, where a refused Write is reported by its completion. Its
 * message is not sent. DAT_DTO_ERR_REMOTE_ACCESS where the Write failed
 * (the sink's error), else DAT_DTO_ERR_FLUSHED (the connection ended); a
 * flush that reported the request first leaves nothing to do.
 */
static DAT_RETURN dofi_ext_write_undelivered(dofi_ep_t *ep, dofi_op_t *op)
{
	struct fi_cq_err_entry err;
	dofi_evd_t *evd = ep->req_evd;
	uint64_t len = op->len;
	DAT_EVENT ev;

	memset(&err, 0, sizeof(err));
	err.op_context = op;
	err.err = FI_ECANCELED;
	if (dofi_flag(&ep->ext_flags) & DOFI_EXT_EP_WFAIL) {
		dofi_ext_flag_clear(ep, DOFI_EXT_EP_WFAIL);
		err.err = FI_EACCES;
	}
	memset(&ev, 0, sizeof(ev));
	dofi_lock_take(&evd->lock);
	if (dofi_dto_complete_err(&err, &ev, evd) == 0)
		(void)dofi_evd_push_locked(evd, &ev);
	dofi_lock_give(&evd->lock);
	if (dofi_unlikely(dofi_flag(&ep->counting)))
		dofi_ext_count_post(ep, DOFI_OP_EXT_WIMM, len);
	return DAT_SUCCESS;
}

DAT_RETURN dofi_ext_write_imm(DAT_EP_HANDLE h, DAT_COUNT nseg,
                              DAT_LMR_TRIPLET *segs, DAT_DTO_COOKIE cookie,
                              const DAT_RMR_TRIPLET *remote, DAT_UINT32 imm,
                              DAT_COMPLETION_FLAGS flags)
{
	static const char what[] = "dat_ib_post_rdma_write_immed";
	dofi_ep_t *ep = dofi_obj_fast(h, DOFI_OBJ_EP);
	struct iovec iov[DOFI_MAX_IOV];
	void *desc[DOFI_MAX_IOV];
	DAT_DTO_COMPLETION_STATUS st = DAT_DTO_SUCCESS;
	DAT_SEG_LENGTH total = 0;
	const dofi_lmr_t *lmr;
	struct fi_rma_iov rma;
	size_t count = 0;
	struct fid_ep *fep = NULL;
	const dofi_ia_t *ia;
	uint64_t wflags;
	dofi_op_t *op;
	DAT_RETURN ret;
	ssize_t rc;

	ret = dofi_ext_ready(
	        ep, h, ep != NULL && ep->obj.ia->ext.immed != DOFI_IMMED_NONE,
	        what, remote, flags, &fep);
	if (dofi_unlikely(ret != DAT_SUCCESS))
		return ret;
	ia = ep->obj.ia;
	/* Local read is implied, as for dat_ep_post_rdma_write. */
	if (dofi_likely(nseg == 1 && ep->attr.max_rdma_write_iov >= 1 &&
	                (lmr = dofi_seg_lmr(ep, segs,
	                                    DAT_MEM_PRIV_NONE_FLAG)) != NULL)) {
		iov[0].iov_base = (void *)(uintptr_t)segs->virtual_address;
		iov[0].iov_len = segs->segment_length;
		desc[0] = lmr->desc;
		count = 1;
		total = segs->segment_length;
	} else {
		DAT_COUNT max = ep->attr.max_rdma_write_iov < DOFI_MAX_IOV
		                        ? ep->attr.max_rdma_write_iov
		                        : DOFI_MAX_IOV;

		ret = dofi_segs(ep, nseg, segs, max, DAT_MEM_PRIV_NONE_FLAG,
		                iov, desc, &count, &total, &st);
		if (ret != DAT_SUCCESS)
			return ret;
		if (st != DAT_DTO_SUCCESS)
			return dofi_dto_fail(ep, ep->req_evd, DOFI_OP_EXT_WIMM,
			                     cookie, st);
	}
	if (dofi_unlikely(total > ia->ia_attr.max_rdma_size ||
	                  total > remote->segment_length || total > UINT32_MAX))
		return DAT_ERROR(DAT_LENGTH_ERROR, 0);
	/* It consumes the peer's receive: after the Writes before it where
	 * the fabric does not order that (DOFI_FENCE_WRITE). */
	if (dofi_fence_due(ep, DOFI_FENCE_WAITS(DOFI_OP_EXT_WIMM)) &&
	    (ret = dofi_dto_fence(ep, DOFI_FENCE_WAITS(DOFI_OP_EXT_WIMM))) !=
	            DAT_SUCCESS)
		return ret;
	op = dofi_ext_op_get(ep, DOFI_OP_EXT_WIMM, cookie, total, flags);
	if (dofi_unlikely(op == NULL))
		return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_TEP);
	/* Acknowledged where plain writes are (dofi_post_request_slow). */
	wflags = op->suppress ? ia->quiet_write_flags : ia->write_flags;
	dofi_order_prepare(ep, op, wflags != 0,
	                   DOFI_FENCE_READ | DOFI_FENCE_WRITE);
	atomic_store_explicit(&op->posted, 1, memory_order_relaxed);
	rma.addr = remote->virtual_address;
	rma.len = total;
	rma.key = remote->rmr_context;
	if (ia->ext.immed == DOFI_IMMED_WRITEDATA) {
		struct fi_msg_rma msg = {
		        .msg_iov = iov,
		        .desc = desc,
		        .iov_count = count,
		        .addr = ep->peer,
		        .rma_iov = &rma,
		        .rma_iov_count = 1,
		        .context = op,
		        .data = imm,
		};

		rc = DOFI_RETRY_POST(ep, ep->tx_cq,
		                     fi_writemsg(fep, &msg,
		                                 FI_COMPLETION |
		                                         FI_REMOTE_CQ_DATA |
		                                         wflags));
	} else {
		struct fi_msg_rma wmsg = {
		        .msg_iov = iov,
		        .desc = desc,
		        .iov_count = count,
		        .addr = ep->peer,
		        .rma_iov = &rma,
		        .rma_iov_count = 1,
		        .context = dofi_ext_sink(ep),
		};
		/* No data, but an iovec to point at: rxd reads the first
		 * one's base whatever the count (libfabric 1.17 to 2.6). */
		struct iovec none = {.iov_base = NULL, .iov_len = 0};
		struct fi_msg smsg = {
		        .msg_iov = &none,
		        .addr = ep->peer,
		        .context = op,
		        .data = (uint64_t)imm | (uint64_t)total << 32,
		};

		/*
		 * A short one goes as an inject (no completion at all) where
		 * a target's refusal ends the connection, so that the message
		 * fails too (tcp); elsewhere the sink's error says so. Where
		 * the fabric does not order the message after the Write, the
		 * Write completes on delivery before the message goes.
		 */
		if (count == 0) {
			rc = 0;
		} else if (dofi_unlikely(ia->fence & DOFI_FENCE_WRITE)) {
			rc = dofi_ext_write_delivered(ep, fep, &wmsg);
			if (rc == 1)
				return dofi_ext_write_undelivered(ep, op);
		} else if (count == 1 && ia->traits->delivery_write &&
		           total <= ia->info->tx_attr->inject_size) {
			rc = DOFI_RETRY_POST(
			        ep, ep->tx_cq,
			        fi_inject_write(fep, iov[0].iov_base, total,
			                        ep->peer, rma.addr, rma.key));
		} else {
			rc = DOFI_RETRY_POST(ep, ep->tx_cq,
			                     fi_writemsg(fep, &wmsg, 0));
		}
		/* After a delivered Write, the message needs no more than
		 * a Send's completion. */
		if (ia->fence & DOFI_FENCE_WRITE)
			wflags = 0;
		if (rc == 0)
			rc = DOFI_RETRY_POST(
			        ep, ep->tx_cq,
			        fi_sendmsg(fep, &smsg,
			                   FI_COMPLETION | FI_REMOTE_CQ_DATA |
			                           wflags));
	}
	if (dofi_unlikely(rc != 0))
		return dofi_ext_refused(ep, op, rc, what);
	return dofi_ext_posted(ep, op);
}

DAT_RETURN dofi_ext_atomic(DAT_EP_HANDLE h, uint8_t type, uint64_t v0,
                           uint64_t v1, DAT_LMR_TRIPLET *lbuf,
                           DAT_DTO_COOKIE cookie, const DAT_RMR_TRIPLET *remote,
                           DAT_COMPLETION_FLAGS flags)
{
	const char *what = type == DOFI_OP_EXT_FADD
	                           ? "dat_ib_post_fetch_and_add"
	                           : "dat_ib_post_cmp_and_swap";
	dofi_ep_t *ep = dofi_obj_fast(h, DOFI_OBJ_EP);
	struct fid_ep *fep = NULL;
	DAT_LMR_TRIPLET t;
	const dofi_lmr_t *lmr;
	dofi_op_t *op;
	DAT_RETURN ret;
	void *result;
	ssize_t rc;

	ret = dofi_ext_ready(ep, h,
	                     ep != NULL && (type == DOFI_OP_EXT_FADD
	                                            ? ep->obj.ia->ext.fetch_add
	                                            : ep->obj.ia->ext.cmp_swap),
	                     what, remote, flags, &fep);
	if (dofi_unlikely(ret != DAT_SUCCESS))
		return ret;
	/* 64 bits, aligned, as InfiniBand's atomics. */
	if (dofi_unlikely(lbuf == NULL || lbuf->segment_length < 8 ||
	                  (lbuf->virtual_address & 7) != 0)) {
		dof_info(DOFI_LOG,
		         "%s: the local buffer is not 8 aligned bytes", what);
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	}
	if (dofi_unlikely(remote->segment_length < 8 ||
	                  (remote->virtual_address & 7) != 0)) {
		dof_info(DOFI_LOG,
		         "%s: the remote buffer is not 8 aligned bytes", what);
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG5);
	}
	t = *lbuf;
	t.segment_length = 8;
	lmr = dofi_seg_lmr(ep, &t, DAT_MEM_PRIV_LOCAL_WRITE_FLAG);
	if (dofi_unlikely(lmr == NULL)) {
		struct iovec iov;
		void *desc;
		size_t count;
		DAT_SEG_LENGTH total;
		DAT_DTO_COMPLETION_STATUS st;

		/* It says why, and the completion reports it. */
		ret = dofi_segs(ep, 1, &t, 1, DAT_MEM_PRIV_LOCAL_WRITE_FLAG,
		                &iov, &desc, &count, &total, &st);
		if (ret != DAT_SUCCESS)
			return ret;
		return dofi_dto_fail(ep, ep->req_evd, type, cookie,
		                     DAT_DTO_ERR_LOCAL_PROTECTION);
	}
	if (dofi_fence_due(ep, DOFI_FENCE_WAITS(type)) &&
	    (ret = dofi_dto_fence(ep, DOFI_FENCE_WAITS(type))) != DAT_SUCCESS)
		return ret;
	op = dofi_ext_op_get(ep, type, cookie, 8, flags);
	if (dofi_unlikely(op == NULL))
		return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_TEP);
	op->ext_val[0] = v0; /* the addend, or the swap value */
	op->ext_val[1] = v1; /* the compare value */
	/* Answered by the target: late where completions can pass. */
	dofi_order_prepare(ep, op, 1, DOFI_FENCE_READ);
	atomic_store_explicit(&op->posted, 1, memory_order_relaxed);
	result = (void *)(uintptr_t)t.virtual_address;
	if (type == DOFI_OP_EXT_FADD)
		rc = DOFI_RETRY_POST(
		        ep, ep->tx_cq,
		        fi_fetch_atomic(
		                fep, &op->ext_val[0], 1, NULL, result,
		                lmr->desc, ep->peer, remote->virtual_address,
		                remote->rmr_context, FI_UINT64, FI_SUM, op));
	else
		rc = DOFI_RETRY_POST(
		        ep, ep->tx_cq,
		        fi_compare_atomic(
		                fep, &op->ext_val[0], 1, NULL, &op->ext_val[1],
		                NULL, result, lmr->desc, ep->peer,
		                remote->virtual_address, remote->rmr_context,
		                FI_UINT64, FI_CSWAP, op));
	if (dofi_unlikely(rc != 0))
		return dofi_ext_refused(ep, op, rc, what);
	return dofi_ext_posted(ep, op);
}

/* ---- completions ------------------------------------------------------- */

static DAT_IB_EXTENSION_EVENT_DATA *dofi_ext_data(DAT_EVENT *ev)
{
	return (DAT_IB_EXTENSION_EVENT_DATA *)(void *)ev->event_extension_data;
}

void dofi_ext_fill(DAT_EVENT *ev, const dofi_op_t *op)
{
	DAT_DTO_COMPLETION_EVENT_DATA *d =
	        &ev->event_data.dto_completion_event_data;
	DAT_IB_EXTENSION_EVENT_DATA *x = dofi_ext_data(ev);
	dofi_ep_t *ep = op->ep;

	ev->event_number = (DAT_EVENT_NUMBER)DAT_IB_DTO_EVENT;
	memset(x, 0, sizeof(*x));
	switch (op->type) {
	case DOFI_OP_EXT_WIMM:
		d->operation = (DAT_DTOS)DAT_IB_DTO_RDMA_WRITE_IMMED;
		x->type = DAT_IB_RDMA_WRITE_IMMED;
		/* Its write half failed, and its message went (sockets). */
		if (d->status == DAT_DTO_SUCCESS &&
		    (dofi_flag(&ep->ext_flags) & DOFI_EXT_EP_WFAIL)) {
			dofi_ext_flag_clear(ep, DOFI_EXT_EP_WFAIL);
			d->status = DAT_DTO_ERR_REMOTE_ACCESS;
		}
		break;
	case DOFI_OP_EXT_FADD:
		d->operation = (DAT_DTOS)DAT_IB_DTO_FETCH_ADD;
		x->type = DAT_IB_FETCH_AND_ADD;
		break;
	default:
		d->operation = (DAT_DTOS)DAT_IB_DTO_CMP_SWAP;
		x->type = DAT_IB_CMP_AND_SWAP;
		break;
	}
	x->status =
	        d->status == DAT_DTO_SUCCESS ? DAT_OP_SUCCESS : DAT_IB_OP_ERR;
}

int dofi_ext_complete(dofi_op_t *op, DAT_EVENT *ev, dofi_evd_t *evd,
                      uint8_t posted)
{
	int suppress = op->suppress;

	/* A write with immediate data takes a receive at the peer. */
	if (op->type == DOFI_OP_EXT_WIMM)
		dofi_dto_count(&op->ep->msgs_sent);
	if (!suppress)
		dofi_dto_fill(ev, evd, op, DAT_DTO_SUCCESS, op->len);
	/* An RMR bind's completion follows it. */
	if (posted == DOFI_POSTED_AFTER)
		return dofi_dto_after(op, ev, evd, suppress);
	dofi_op_release(op);
	return suppress;
}

int dofi_ext_complete_recv(const struct fi_cq_data_entry *entry, dofi_op_t *op,
                           DAT_EVENT *ev, dofi_evd_t *evd)
{
	DAT_DTO_COMPLETION_EVENT_DATA *d =
	        &ev->event_data.dto_completion_event_data;
	DAT_IB_EXTENSION_EVENT_DATA *x = dofi_ext_data(ev);
	int suppress = op->suppress;

	if (op->type == DOFI_OP_RECV)
		dofi_dto_count(&op->ep->msgs_recvd);
	/* Receives are never followed by an RMR bind's event. */
	if (!suppress) {
		dofi_dto_fill_std(ev, evd, op, DAT_DTO_SUCCESS,
		                  op->type == DOFI_OP_RECV ? entry->len
		                                           : op->len);
		if (op->type == DOFI_OP_RECV) {
			memset(x, 0, sizeof(*x));
			ev->event_number = (DAT_EVENT_NUMBER)DAT_IB_DTO_EVENT;
			d->operation = (DAT_DTOS)DAT_IB_DTO_RECV_IMMED;
			x->type = DAT_IB_RDMA_WRITE_IMMED_DATA;
			x->status = DAT_OP_SUCCESS;
			x->val.immed.data = (DAT_UINT32)entry->data;
			/* The empty message carries the write's length. */
			if (op->ep->obj.ia->ext.immed == DOFI_IMMED_SENDDATA)
				d->transfered_length =
				        (DAT_SEG_LENGTH)(entry->data >> 32);
		}
	}
	dofi_op_release(op);
	return suppress;
}

void dofi_ext_sink_err(dofi_op_t *sink, int err)
{
	dofi_ep_t *ep = sink->ep;

	if (err == FI_ECANCELED)
		return; /* flushed: its message is flushed too */
	dof_info(DOFI_LOG,
	         "EP %p: the RDMA Write of a write with immediate data "
	         "failed: %s",
	         (void *)ep, fi_strerror(err));
	dofi_ext_flag_set(ep, DOFI_EXT_EP_WFAIL);
	dofi_ep_failed(ep, err);
}

/* ---- counting ------------------------------------------------------------ */

/* A post's counter (its _DATA counter follows it where it has one). */
void dofi_ext_count_post(dofi_ep_t *ep, uint8_t type, uint64_t len)
{
	int i = -1, data = 1;

	switch (type) {
	case DOFI_OP_SEND:
		i = DCNT_EP_POST_SEND;
		break;
	case DOFI_OP_RECV:
		i = DCNT_EP_POST_RECV;
		break;
	case DOFI_OP_WRITE:
		i = DCNT_EP_POST_WRITE;
		break;
	case DOFI_OP_READ:
		i = DCNT_EP_POST_READ;
		break;
	case DOFI_OP_EXT_WIMM:
		i = DCNT_EP_POST_WRITE_IMM;
		break;
	case DOFI_OP_EXT_FADD:
		i = DCNT_EP_POST_FETCH_ADD;
		data = 0;
		break;
	case DOFI_OP_EXT_CSWAP:
		i = DCNT_EP_POST_CMP_SWAP;
		data = 0;
		break;
	default:
		return;
	}
	dofi_cnt_add(&ep->cnt[i], 1);
	if (data)
		dofi_cnt_add(&ep->cnt[i + 1], len);
}

void dofi_ext_ia_count(dofi_ia_t *ia, int i)
{
	if (dofi_flag(&ia->counting))
		dofi_cnt_add(&ia->cnt[i], 1);
}

/* A DTO completion handed to the consumer: its EP's receive counters,
 * and the IA's count of failed transfers. */
static void dofi_ext_count_dto(const DAT_EVENT *ev)
{
	const DAT_DTO_COMPLETION_EVENT_DATA *d =
	        &ev->event_data.dto_completion_event_data;
	dofi_ep_t *ep = dofi_obj_fast(d->ep_handle, DOFI_OBJ_EP);

	if (ep == NULL)
		return;
	if (d->status != DAT_DTO_SUCCESS) {
		if (d->status != DAT_DTO_ERR_FLUSHED)
			dofi_ext_ia_count(ep->obj.ia, DCNT_IA_ASYNC_QP_ERROR);
		return;
	}
	if (!dofi_flag(&ep->counting))
		return;
	if (d->operation == DAT_DTO_RECEIVE) {
		dofi_cnt_add(&ep->cnt[DCNT_EP_RECV], 1);
		dofi_cnt_add(&ep->cnt[DCNT_EP_RECV_DATA], d->transfered_length);
	} else if (d->operation == (DAT_DTOS)DAT_IB_DTO_RECV_IMMED) {
		dofi_cnt_add(&ep->cnt[DCNT_EP_RECV_RDMA_IMM], 1);
		dofi_cnt_add(&ep->cnt[DCNT_EP_RECV_RDMA_IMM_DATA],
		             d->transfered_length);
	}
}

void dofi_ext_count_take(dofi_evd_t *evd, DAT_RETURN ret, const DAT_EVENT *ev,
                         int wait, int blocked)
{
	uint64_t *c = evd->cnt;

	if (wait) {
		dofi_cnt_add(&c[DCNT_EVD_WAIT], 1);
		if (blocked)
			dofi_cnt_add(&c[DCNT_EVD_WAIT_BLOCKED], 1);
	} else {
		dofi_cnt_add(&c[DCNT_EVD_DEQUEUE], 1);
		if (evd->cq != NULL)
			dofi_cnt_add(&c[DCNT_EVD_DEQUEUE_POLL], 1);
	}
	if (ret != DAT_SUCCESS) {
		if (!wait)
			dofi_cnt_add(&c[DCNT_EVD_DEQUEUE_NOT_FOUND], 1);
		return;
	}
	if (!wait) {
		dofi_cnt_add(&c[DCNT_EVD_DEQUEUE_FOUND], 1);
		if (evd->cq != NULL)
			dofi_cnt_add(&c[DCNT_EVD_DEQUEUE_POLL_FOUND], 1);
	}
	if (ev->event_number == DAT_DTO_COMPLETION_EVENT ||
	    ev->event_number == (DAT_EVENT_NUMBER)DAT_IB_DTO_EVENT) {
		dofi_cnt_add(&c[DCNT_EVD_DTO_CALLBACK], 1);
		dofi_ext_count_dto(ev);
	}
}

void dofi_ext_count_queued(dofi_evd_t *evd, const DAT_EVENT *ev)
{
	dofi_ia_t *ia = evd->obj.ia;
	dofi_ep_t *ep = NULL;
	int conn = 1, i = -1;

	if (ev->event_number >= DAT_CONNECTION_EVENT_ESTABLISHED &&
	    ev->event_number <= DAT_CONNECTION_EVENT_UNREACHABLE)
		ep = dofi_obj_fast(ev->event_data.connect_event_data.ep_handle,
		                   DOFI_OBJ_EP);
	switch (ev->event_number) {
	case DAT_CONNECTION_REQUEST_EVENT:
		dofi_ext_ia_count(ia, DCNT_IA_SP_CR);
		i = DCNT_IA_CM_REQ_RX;
		break;
	case DAT_CONNECTION_EVENT_ESTABLISHED:
		i = ep != NULL && (dofi_flag(&ep->ext_flags) &
		                   DOFI_EXT_EP_PASSIVE)
		            ? DCNT_IA_CM_PASSIVE_EST
		            : DCNT_IA_CM_ACTIVE_EST;
		if (ep != NULL && dofi_flag(&ep->counting))
			dofi_cnt_add(&ep->cnt[DCNT_EP_CONNECT], 1);
		break;
	case DAT_CONNECTION_EVENT_PEER_REJECTED:
		i = DCNT_IA_CM_USER_REJ_RX;
		break;
	case DAT_CONNECTION_EVENT_NON_PEER_REJECTED:
		i = DCNT_IA_CM_ERR_REFUSED;
		break;
	case DAT_CONNECTION_EVENT_ACCEPT_COMPLETION_ERROR:
		i = DCNT_IA_CM_ERR;
		break;
	case DAT_CONNECTION_EVENT_UNREACHABLE:
	case DAT_CONNECTION_EVENT_TIMED_OUT:
		i = DCNT_IA_CM_ERR_TIMEOUT;
		break;
	case DAT_CONNECTION_EVENT_BROKEN:
	case DAT_CONNECTION_EVENT_DISCONNECTED:
		if (ev->event_number == DAT_CONNECTION_EVENT_BROKEN)
			i = DCNT_IA_CM_ERR_RESET;
		else if (ep != NULL &&
		         (dofi_flag(&ep->ext_flags) & DOFI_EXT_EP_DISC))
			i = DCNT_IA_CM_DREP_RX;
		else
			i = DCNT_IA_CM_DREQ_RX;
		if (ep != NULL && dofi_flag(&ep->counting))
			dofi_cnt_add(&ep->cnt[DCNT_EP_DISCONNECT], 1);
		break;
	case DAT_ASYNC_ERROR_EVD_OVERFLOW:
		dofi_ext_ia_count(ia, DCNT_IA_ASYNC_CQ_ERROR);
		i = DCNT_IA_ASYNC_ERROR;
		conn = 0;
		break;
	case DAT_ASYNC_ERROR_EP_BROKEN:
		dofi_ext_ia_count(ia, DCNT_IA_ASYNC_QP_ERROR);
		i = DCNT_IA_ASYNC_ERROR;
		conn = 0;
		break;
	case DAT_ASYNC_ERROR_IA_CATASTROPHIC:
	case DAT_ASYNC_ERROR_TIMED_OUT:
	case DAT_ASYNC_ERROR_PROVIDER_INTERNAL_ERROR:
		i = DCNT_IA_ASYNC_ERROR;
		conn = 0;
		break;
	default:
		return;
	}
	if (i >= 0)
		dofi_ext_ia_count(ia, i);
	if (conn && dofi_flag(&evd->counting))
		dofi_cnt_add(&evd->cnt[DCNT_EVD_CONN_CALLBACK], 1);
}
