/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * Shared receive queues: a pool of the consumer's receives that the EPs
 * created with dat_ep_create_with_srq take from.
 *
 * Why not fi_srx_context: tcp and sockets offer one (domain_attr's
 * max_ep_srx_ctx), and a message arriving on any endpoint bound to it
 * then takes its oldest receive, but the completion names only the
 * receive's context, never the endpoint it arrived on. A DAT receive
 * completion names its EP (ep_handle) and goes to that EP's receive EVD,
 * and EPs on one SRQ may have different receive EVDs: tcp (1.17) reports
 * an srx receive on the CQ of the endpoint it arrived on, sockets on the
 * srx's own, and a CQ that several EPs share cannot tell them apart. So
 * the pool is ours, on every fabric.
 *
 * Receives posted to the SRQ wait in a ring, oldest first. An EP whose
 * connection is up takes them, oldest first, up to its max_recv_dtos at
 * a time but no more than its share of the SRQ (max_recv_dtos of the SRQ
 * over the EPs on it, at least one), and posts each to its own fi_ep;
 * when one of them is over it takes the next. While the ring is empty, the EPs
 * that may take more wait in line (srq->waiting), and a receive posted then
 * goes to the first of them, which goes to the back. So receives leave the SRQ
 * in posting order; an EP consumes those it took in the order it took them; and
 * a message arriving on an EP that holds none waits in its connection (MSG
 * fabrics keep it) until a receive is posted or one of the EP's own is over. An
 * EP never gives back what it took: when its connection ends they are flushed
 * to its own receive EVD, and nothing of another EP's is.
 *
 * Cost: dat_srq_post_recv takes srq->lock (the ring and the line are
 * shared by every thread posting and completing), and so does the
 * receive completion of an EP on an SRQ, to take the next receive: one
 * mutex each, no allocation, no system call. The completion path of EPs
 * without an SRQ tests ep->srq and nothing more. A low watermark passed
 * on the completion path is posted by the CM (the EP is kicked), so that
 * no EVD lock is taken inside another.
 */
#include "config.h"

#define DOFI_LOG_COMP "srq"

#include <stdlib.h>
#include <string.h>

#include "dofi.h"
#include "dofi_fast.h"

/* ---- the ring --------------------------------------------------------------
 */

/* A ring of cap slots of niov segments each, in one block. */
static dof_status_t dofi_srq_ring_alloc(uint32_t cap, uint32_t niov,
                                        dofi_srq_recv_t **ring,
                                        struct iovec **iov, void ***desc)
{
	size_t nseg = (size_t)cap * niov;
	char *p = malloc(cap * sizeof(**ring) +
	                 nseg * (sizeof(**iov) + sizeof(**desc)));

	if (p == NULL)
		return DOF_ERR_NO_MEMORY;
	*ring = (dofi_srq_recv_t *)(void *)p;
	*iov = (struct iovec *)(void *)(p + cap * sizeof(**ring));
	*desc = (void **)(void *)(*iov + nseg);
	return DOF_OK;
}

/* The ring's slot i places after its oldest. */
static inline uint32_t dofi_srq_slot(const dofi_srq_t *srq, uint32_t i)
{
	uint32_t s = srq->head + i;

	return s >= srq->cap ? s - srq->cap : s;
}

/*
 * The low watermark: armed, it fires once, the first time fewer receives
 * than it wait in the ring. 1 when it fired. srq->lock held.
 */
static int dofi_srq_lw_check(dofi_srq_t *srq)
{
	if (!srq->lw_armed || (DAT_COUNT)srq->queued >= srq->lw)
		return 0;
	srq->lw_armed = 0;
	return 1;
}

/*
 * The event of a low watermark: DAT names no SRQ event number, so it is
 * the one OFED's providers give InfiniBand's SRQ limit event,
 * DAT_ASYNC_ERROR_EP_BROKEN, with the SRQ's handle and the SRQ reason.
 */
static void dofi_srq_lw_post(dofi_srq_t *srq)
{
	dof_info(DOFI_LOG, "SRQ %p: fewer than %d receives left: low watermark",
	         (void *)srq, srq->lw);
	dofi_async_post(srq->obj.ia, DAT_ASYNC_ERROR_EP_BROKEN, (DAT_HANDLE)srq,
	                DAT_SRQ_LOW_WATERMARK_EVENT);
}

/* ---- EPs taking receives ---------------------------------------------------
 */

/*
 * How many receives ep may hold at once: its max_recv_dtos, and no more
 * than its share of the SRQ, so that one EP cannot hold them all while
 * messages wait on another. srq->lock held.
 */
static inline uint32_t dofi_srq_depth(const dofi_srq_t *srq,
                                      const dofi_ep_t *ep)
{
	uint32_t share = srq->cap / (srq->nref > 0 ? (uint32_t)srq->nref : 1);
	uint32_t max = (uint32_t)ep->attr.max_recv_dtos;

	if (share == 0)
		share = 1;
	return share < max ? share : max;
}

/*
 * Post receive rec (its segments iov, desc) on ep's fi_ep as an op of its
 * recv_pool: 1 when posted, 0 when ep holds all it may, -1 when libfabric
 * refused it. srq->lock held.
 */
static int dofi_srq_give(dofi_srq_t *srq, dofi_ep_t *ep,
                         const dofi_srq_recv_t *rec, const struct iovec *iov,
                         void *const *desc)
{
	dofi_op_t *op;
	ssize_t rc;

	if (ep->srq_held >= dofi_srq_depth(srq, ep) ||
	    (op = dofi_pool_get(&ep->recv_pool)) == NULL)
		return 0;
	memcpy(op->iov, iov, rec->count * sizeof(*iov));
	memcpy(op->desc, desc, rec->count * sizeof(*desc));
	op->iov_count =
	        ep->recv_sink ? (uint32_t)dofi_recv_sink_add(ep, op, rec->count)
	                      : rec->count;
	op->cookie = rec->cookie;
	op->len = rec->len;
	op->type = DOFI_OP_RECV;
	/* An SRQ's receive always completes signalled. */
	op->suppress = 0;
	/* The EP's posting order, for a flush (all under srq->lock). */
	dofi_op_seq_take(op, &ep->recv_seq);
	atomic_store_explicit(&op->posted, 1, memory_order_relaxed);
	rc = dofi_recv_submit(ep->fep, op);
	if (dofi_likely(rc == 0)) {
		ep->srq_held++;
		return 1;
	}
	atomic_store(&op->posted, 0);
	dofi_pool_put(&ep->recv_pool, op);
	dof_info(DOFI_LOG,
	         "EP %p: a receive of its SRQ was not posted (%s): it stays "
	         "on the SRQ",
	         (void *)ep, fi_strerror((int)-rc));
	return -1;
}

static void dofi_srq_unwait(dofi_ep_t *ep)
{
	if (ep->srq_waiting) {
		dofi_list_del(&ep->srq_wait);
		ep->srq_waiting = 0;
	}
}

/*
 * ep takes the oldest receives of the ring while it may; if the ring ran
 * out first, it waits in line for more. 1 when the low watermark fired.
 * srq->lock held, ep->srq_taking set.
 */
static int dofi_srq_take(dofi_srq_t *srq, dofi_ep_t *ep)
{
	int r = 1;

	while (srq->queued > 0) {
		uint32_t s = srq->head;

		r = dofi_srq_give(srq, ep, &srq->ring[s],
		                  &srq->iov[(size_t)s * srq->niov],
		                  &srq->desc[(size_t)s * srq->niov]);
		if (r <= 0)
			break;
		srq->head = dofi_srq_slot(srq, 1);
		srq->queued--;
	}
	if (r > 0 && ep->srq_held < dofi_srq_depth(srq, ep)) {
		if (!ep->srq_waiting) {
			dofi_list_add_tail(&srq->waiting, &ep->srq_wait);
			ep->srq_waiting = 1;
		}
	} else {
		dofi_srq_unwait(ep);
	}
	return dofi_srq_lw_check(srq);
}

void dofi_srq_recv_done(dofi_ep_t *ep)
{
	dofi_srq_t *srq = ep->srq;
	int fired = 0;

	pthread_mutex_lock(&srq->lock);
	srq->outstanding--;
	if (ep->srq_held > 0)
		ep->srq_held--;
	if (ep->srq_taking)
		fired = dofi_srq_take(srq, ep);
	pthread_mutex_unlock(&srq->lock);
	if (dofi_unlikely(fired)) {
		/* An EVD's lock may be held: the CM posts the event. */
		atomic_store(&srq->lw_due, 1);
		ep->obj.ia->ctl->cm_kick(ep);
	}
}

void dofi_srq_attach(dofi_srq_t *srq, dofi_ep_t *ep)
{
	dofi_list_init(&ep->srq_wait);
	ep->srq_taking = 0;
	ep->srq_waiting = 0;
	ep->srq_took = 0;
	ep->srq_held = 0;
	ep->srq = srq;
	pthread_mutex_lock(&srq->lock);
	srq->nref++;
	pthread_mutex_unlock(&srq->lock);
}

void dofi_srq_ep_start(dofi_ep_t *ep)
{
	dofi_srq_t *srq = ep->srq;
	int fired;

	if (srq == NULL || ep->fep == NULL)
		return;
	pthread_mutex_lock(&srq->lock);
	ep->srq_taking = 1;
	ep->srq_took = 1;
	fired = dofi_srq_take(srq, ep);
	pthread_mutex_unlock(&srq->lock);
	if (fired)
		dofi_srq_lw_post(srq);
}

void dofi_srq_ep_stop(dofi_ep_t *ep)
{
	dofi_srq_t *srq = ep->srq;

	if (srq == NULL)
		return;
	pthread_mutex_lock(&srq->lock);
	ep->srq_taking = 0;
	dofi_srq_unwait(ep);
	pthread_mutex_unlock(&srq->lock);
}

void dofi_srq_ep_down(dofi_ep_t *ep)
{
	dofi_srq_ep_stop(ep);
	if (ep->srq == NULL || !ep->srq_took)
		return;
	ep->srq_took = 0;
	dof_debug(DOFI_LOG,
	          "EP %p: its connection ended: it takes no more of "
	          "its SRQ's receives",
	          (void *)ep);
	dofi_async_post(ep->obj.ia, DAT_ASYNC_ERROR_EP_BROKEN, (DAT_HANDLE)ep,
	                DAT_EP_TRANSFER_TO_ERROR);
}

void dofi_srq_kicked(dofi_ep_t *ep)
{
	dofi_srq_t *srq = ep->srq;

	if (srq != NULL && atomic_load(&srq->lw_due) &&
	    atomic_exchange(&srq->lw_due, 0))
		dofi_srq_lw_post(srq);
}

void dofi_srq_detach(dofi_ep_t *ep)
{
	dofi_srq_t *srq = ep->srq;

	if (srq == NULL)
		return;
	dofi_srq_ep_stop(ep);
	/* Its fi_ep is closed: the receives it took that libfabric did
	 * not report (sockets reports none at a close) are flushed now,
	 * in the order it took them. */
	dofi_pool_flush_posted(&ep->recv_pool);
	pthread_mutex_lock(&srq->lock);
	srq->nref--;
	pthread_mutex_unlock(&srq->lock);
	/* A watermark its completions passed, not yet posted. */
	dofi_srq_kicked(ep);
	ep->srq = NULL;
}

/* ---- the DAT calls ---------------------------------------------------------
 */

/* Free an SRQ no EP uses. ia->lock held. */
static void dofi_srq_destroy(dofi_srq_t *srq)
{
	if (srq->queued > 0)
		dof_info(DOFI_LOG,
		         "SRQ %p freed with %u receives no EP took: they "
		         "complete nowhere",
		         (void *)srq, srq->queued);
	free(srq->ring);
	srq->ring = NULL;
	pthread_mutex_destroy(&srq->lock);
	atomic_fetch_sub(&srq->pz->nref, 1);
	srq->obj.ia->srq_count--;
	dofi_obj_free(srq);
}

DAT_RETURN dofi_srq_create(DAT_IA_HANDLE ia_h, DAT_PZ_HANDLE pz_h,
                           DAT_SRQ_ATTR *attr, DAT_SRQ_HANDLE *out)
{
	dofi_ia_t *ia = dofi_obj_get(ia_h, DOFI_OBJ_IA, "dat_srq_create");
	dofi_srq_recv_t *ring;
	const char *why = NULL;
	struct iovec *iov;
	dofi_srq_t *srq;
	uint32_t niov;
	dofi_pz_t *pz;
	void **desc;

	if (ia == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	pz = dofi_obj_get(pz_h, DOFI_OBJ_PZ, "dat_srq_create");
	if (pz == NULL || pz->obj.ia != ia)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ);
	if (attr == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	if (out == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG4);
	if (attr->max_recv_dtos <= 0 ||
	    attr->max_recv_dtos > ia->ia_attr.max_recv_per_srq)
		why = "max_recv_dtos outside 1..max_recv_per_srq";
	else if (attr->max_recv_iov < 0 ||
	         attr->max_recv_iov > ia->ia_attr.max_iov_segments_per_dto ||
	         attr->max_recv_iov > DOFI_MAX_IOV)
		why = "max_recv_iov exceeds the IA's segment limit";
	else if (attr->low_watermark < 0 ||
	         attr->low_watermark > attr->max_recv_dtos)
		why = "low_watermark outside 0..max_recv_dtos";
	if (why != NULL) {
		dof_warn(DOFI_LOG, "dat_srq_create: %s", why);
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	}
	niov = attr->max_recv_iov > 0 ? (uint32_t)attr->max_recv_iov : 1;
	if (dofi_srq_ring_alloc((uint32_t)attr->max_recv_dtos, niov, &ring,
	                        &iov, &desc) != DOF_OK)
		return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES,
		                 DAT_RESOURCE_MEMORY);
	pthread_mutex_lock(&ia->lock);
	if (ia->srq_count >= ia->ia_attr.max_srqs) {
		pthread_mutex_unlock(&ia->lock);
		free(ring);
		dof_warn(DOFI_LOG,
		         "dat_srq_create: the IA has %d SRQs open, "
		         "its max_srqs",
		         ia->srq_count);
		return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_SRQ);
	}
	srq = dofi_obj_alloc_locked(ia, DOFI_OBJ_SRQ, sizeof(*srq),
	                            ia->obj.provider);
	if (srq == NULL) {
		pthread_mutex_unlock(&ia->lock);
		free(ring);
		return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES,
		                 DAT_RESOURCE_MEMORY);
	}
	srq->pz = pz;
	pthread_mutex_init(&srq->lock, NULL);
	srq->ring = ring;
	srq->iov = iov;
	srq->desc = desc;
	srq->cap = (uint32_t)attr->max_recv_dtos;
	srq->niov = niov;
	dofi_list_init(&srq->waiting);
	srq->lw = attr->low_watermark;
	srq->lw_armed = srq->lw > 0;
	atomic_fetch_add(&pz->nref, 1);
	ia->srq_count++;
	pthread_mutex_unlock(&ia->lock);
	/* A watermark above 0 fires at once: the SRQ starts empty. */
	if (dofi_srq_lw_check(srq))
		dofi_srq_lw_post(srq);
	*out = (DAT_SRQ_HANDLE)srq;
	return DAT_SUCCESS;
}

DAT_RETURN dofi_srq_free(DAT_SRQ_HANDLE h)
{
	dofi_srq_t *srq = dofi_obj_get(h, DOFI_OBJ_SRQ, "dat_srq_free");
	dofi_ia_t *ia;

	if (srq == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_SRQ);
	ia = srq->obj.ia;
	pthread_mutex_lock(&ia->lock);
	/* Freed by another thread since the check: not twice. */
	if (atomic_load(&srq->obj.magic) != DOFI_MAGIC_LIVE) {
		pthread_mutex_unlock(&ia->lock);
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_SRQ);
	}
	if (srq->nref > 0) {
		pthread_mutex_unlock(&ia->lock);
		dof_warn(DOFI_LOG, "dat_srq_free: %d EPs still use the SRQ",
		         srq->nref);
		return DAT_ERROR(DAT_INVALID_STATE,
		                 DAT_INVALID_STATE_SRQ_IN_USE);
	}
	dofi_srq_destroy(srq);
	pthread_mutex_unlock(&ia->lock);
	return DAT_SUCCESS;
}

void dofi_srq_release_all(dofi_ia_t *ia)
{
	while (!dofi_list_empty(&ia->objs[DOFI_OBJ_SRQ])) {
		dofi_list_t *e = ia->objs[DOFI_OBJ_SRQ].next;

		dofi_srq_destroy(dofi_container_of(e, dofi_srq_t, obj.link));
	}
}

/*
 * The consumer's segments, checked against the SRQ's PZ, into iov and
 * desc, and their count and length into *rec. Segments of zero bytes are
 * left out, as for an EP's receive.
 */
static DAT_RETURN dofi_srq_segs(const dofi_srq_t *srq, DAT_COUNT nseg,
                                const DAT_LMR_TRIPLET *segs, struct iovec *iov,
                                void **desc, dofi_srq_recv_t *rec)
{
	DAT_RETURN ret = DAT_SUCCESS;
	const char *why = NULL;
	uint64_t sum = 0;
	uint32_t n = 0;
	DAT_COUNT i;

	if (nseg < 0 || (uint32_t)nseg > srq->niov) {
		dof_warn(DOFI_LOG,
		         "dat_srq_post_recv: %d segments: the SRQ takes "
		         "0..%u",
		         nseg, srq->niov);
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	}
	if (nseg > 0 && segs == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	for (i = 0; i < nseg && why == NULL; i++) {
		const DAT_LMR_TRIPLET *t = &segs[i];
		const dofi_lmr_t *lmr;

		if (t->segment_length == 0)
			continue;
		lmr = dofi_lmr_lookup(srq->obj.ia, t->lmr_context);
		if (lmr == NULL) {
			why = "names no LMR";
			ret = DAT_ERROR(DAT_PRIVILEGES_VIOLATION, 0);
		} else if (lmr->pz != srq->pz) {
			why = "is in another PZ than the SRQ";
			ret = DAT_ERROR(DAT_PROTECTION_VIOLATION, 0);
		} else if (!(lmr->priv & DAT_MEM_PRIV_LOCAL_WRITE_FLAG)) {
			why = "lacks local write";
			ret = DAT_ERROR(DAT_PRIVILEGES_VIOLATION, 0);
		} else if (t->virtual_address < lmr->base ||
		           t->segment_length > lmr->length ||
		           t->virtual_address - lmr->base >
		                   lmr->length - t->segment_length) {
			why = "is outside its LMR";
			ret = DAT_ERROR(DAT_INVALID_PARAMETER,
			                DAT_INVALID_ARG3);
		} else {
			iov[n].iov_base = (void *)(uintptr_t)t->virtual_address;
			iov[n].iov_len = t->segment_length;
			desc[n] = lmr->desc;
			sum += t->segment_length;
			n++;
		}
		if (why != NULL)
			dof_warn(DOFI_LOG,
			         "dat_srq_post_recv: segment %d (lmr_context "
			         "%#x, %#llx+%llu) %s",
			         i, t->lmr_context,
			         (unsigned long long)t->virtual_address,
			         (unsigned long long)t->segment_length, why);
	}
	rec->count = n;
	rec->len = sum;
	return ret;
}

DAT_RETURN dofi_srq_post_recv(DAT_SRQ_HANDLE h, DAT_COUNT nseg,
                              DAT_LMR_TRIPLET *segs, DAT_DTO_COOKIE cookie)
{
	dofi_srq_t *srq = dofi_obj_fast(h, DOFI_OBJ_SRQ);
	struct iovec iov[DOFI_MAX_IOV];
	void *desc[DOFI_MAX_IOV];
	dofi_srq_recv_t rec;
	DAT_RETURN ret;
	int given = 0;

	if (dofi_unlikely(srq == NULL)) {
		(void)dofi_obj_get(h, DOFI_OBJ_SRQ, "dat_srq_post_recv");
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_SRQ);
	}
	ret = dofi_srq_segs(srq, nseg, segs, iov, desc, &rec);
	if (ret != DAT_SUCCESS)
		return ret;
	rec.cookie = cookie;
	pthread_mutex_lock(&srq->lock);
	if (dofi_unlikely(srq->outstanding >= srq->cap)) {
		uint32_t cap = srq->cap;

		pthread_mutex_unlock(&srq->lock);
		dof_info(DOFI_LOG,
		         "dat_srq_post_recv: the SRQ holds its %u receives",
		         cap);
		return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_SRQ);
	}
	srq->outstanding++;
	/*
	 * EPs wait only while the ring is empty: this is its oldest receive,
	 * and it goes to the first in line, which goes to the back.
	 */
	while (!given && !dofi_list_empty(&srq->waiting)) {
		dofi_ep_t *ep = dofi_container_of(srq->waiting.next, dofi_ep_t,
		                                  srq_wait);

		dofi_list_del(&ep->srq_wait);
		given = dofi_srq_give(srq, ep, &rec, iov, desc) > 0;
		if (given && ep->srq_held < dofi_srq_depth(srq, ep))
			dofi_list_add_tail(&srq->waiting, &ep->srq_wait);
		else
			ep->srq_waiting = 0;
	}
	if (!given) {
		uint32_t s = dofi_srq_slot(srq, srq->queued);

		srq->ring[s] = rec;
		memcpy(&srq->iov[(size_t)s * srq->niov], iov,
		       rec.count * sizeof(*iov));
		memcpy(&srq->desc[(size_t)s * srq->niov], desc,
		       rec.count * sizeof(*desc));
		srq->queued++;
	}
	pthread_mutex_unlock(&srq->lock);
	return DAT_SUCCESS;
}

DAT_RETURN dofi_srq_query(DAT_SRQ_HANDLE h, DAT_SRQ_PARAM_MASK mask,
                          DAT_SRQ_PARAM *p)
{
	dofi_srq_t *srq = dofi_obj_get(h, DOFI_OBJ_SRQ, "dat_srq_query");

	if (srq == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_SRQ);
	if (mask & ~(DAT_SRQ_PARAM_MASK)DAT_SRQ_FIELD_ALL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	if (p == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	p->ia_handle = dofi_ia_consumer_handle(srq->obj.ia);
	p->srq_state = DAT_SRQ_STATE_OPERATIONAL;
	p->pz_handle = (DAT_PZ_HANDLE)srq->pz;
	pthread_mutex_lock(&srq->lock);
	p->max_recv_dtos = (DAT_COUNT)srq->cap;
	p->max_recv_iov = (DAT_COUNT)srq->niov;
	p->low_watermark = srq->lw;
	p->available_dto_count = (DAT_COUNT)srq->queued;
	p->outstanding_dto_count = (DAT_COUNT)srq->outstanding;
	pthread_mutex_unlock(&srq->lock);
	return DAT_SUCCESS;
}

DAT_RETURN dofi_srq_resize(DAT_SRQ_HANDLE h, DAT_COUNT n)
{
	dofi_srq_t *srq = dofi_obj_get(h, DOFI_OBJ_SRQ, "dat_srq_resize");
	dofi_srq_recv_t *ring, *old;
	uint32_t i, outstanding;
	struct iovec *iov;
	void **desc;

	if (srq == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_SRQ);
	if (n <= 0 || n > srq->obj.ia->ia_attr.max_recv_per_srq) {
		dof_warn(DOFI_LOG,
		         "dat_srq_resize: %d receives: 1..max_recv_per_srq "
		         "(%d)",
		         n, srq->obj.ia->ia_attr.max_recv_per_srq);
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	}
	if (dofi_srq_ring_alloc((uint32_t)n, srq->niov, &ring, &iov, &desc) !=
	    DOF_OK)
		return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES,
		                 DAT_RESOURCE_MEMORY);
	pthread_mutex_lock(&srq->lock);
	outstanding = srq->outstanding;
	if ((uint32_t)n < outstanding || n < srq->lw) {
		DAT_COUNT lw = srq->lw;

		pthread_mutex_unlock(&srq->lock);
		free(ring);
		dof_info(DOFI_LOG,
		         "dat_srq_resize: %d is below the %u receives "
		         "outstanding or the low watermark %d",
		         n, outstanding, lw);
		return DAT_ERROR(DAT_INVALID_STATE, 0);
	}
	/* The receives waiting move over, oldest first. */
	for (i = 0; i < srq->queued; i++) {
		uint32_t s = dofi_srq_slot(srq, i);

		ring[i] = srq->ring[s];
		memcpy(&iov[(size_t)i * srq->niov],
		       &srq->iov[(size_t)s * srq->niov],
		       srq->ring[s].count * sizeof(*iov));
		memcpy(&desc[(size_t)i * srq->niov],
		       &srq->desc[(size_t)s * srq->niov],
		       srq->ring[s].count * sizeof(*desc));
	}
	old = srq->ring;
	srq->ring = ring;
	srq->iov = iov;
	srq->desc = desc;
	srq->head = 0;
	srq->cap = (uint32_t)n;
	pthread_mutex_unlock(&srq->lock);
	free(old);
	return DAT_SUCCESS;
}

DAT_RETURN dofi_srq_set_lw(DAT_SRQ_HANDLE h, DAT_COUNT lw)
{
	dofi_srq_t *srq = dofi_obj_get(h, DOFI_OBJ_SRQ, "dat_srq_set_lw");
	uint32_t cap;
	int fired;

	if (srq == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_SRQ);
	pthread_mutex_lock(&srq->lock);
	cap = srq->cap;
	if (lw < 0 || (uint32_t)lw > cap) {
		pthread_mutex_unlock(&srq->lock);
		dof_warn(DOFI_LOG,
		         "dat_srq_set_lw: %d is outside 0..max_recv_dtos "
		         "(%u)",
		         lw, cap);
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	}
	srq->lw = lw;
	srq->lw_armed = lw > 0;
	fired = dofi_srq_lw_check(srq);
	pthread_mutex_unlock(&srq->lock);
	if (fired)
		dofi_srq_lw_post(srq);
	return DAT_SUCCESS;
}
