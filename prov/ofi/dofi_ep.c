/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * Endpoints: creation with the completion-flag rules of dat_ep_create,
 * query/modify/status, reset and free. The libfabric endpoint exists only
 * while a connection is being made or is up: MSG endpoints cannot be
 * reconnected, and the passive side must build its endpoint from the
 * connection request. Receives posted before that are queued and posted
 * when it appears.
 */
#include "config.h"

#define DOFI_LOG_COMP "ep"

#include <stdlib.h>
#include <string.h>

#include "dofi.h"

#define DOFI_DEFAULT_DTOS      256
#define DOFI_DEFAULT_RDMA_READ 4

void dofi_ep_default_attr(dofi_ia_t *ia, DAT_EP_ATTR *a)
{
	const DAT_IA_ATTR *ia_attr = &ia->ia_attr;

	memset(a, 0, sizeof(*a));
	a->service_type = DAT_SERVICE_TYPE_RC;
	a->max_message_size = ia_attr->max_message_size;
	a->max_rdma_size = ia_attr->max_rdma_size;
	a->qos = DAT_QOS_BEST_EFFORT;
	a->recv_completion_flags = DAT_COMPLETION_DEFAULT_FLAG;
	a->request_completion_flags = DAT_COMPLETION_DEFAULT_FLAG;
	a->max_recv_dtos = ia_attr->max_dto_per_ep < DOFI_DEFAULT_DTOS
	                           ? ia_attr->max_dto_per_ep
	                           : DOFI_DEFAULT_DTOS;
	a->max_request_dtos = a->max_recv_dtos;
	a->max_recv_iov = ia_attr->max_iov_segments_per_dto;
	a->max_request_iov = ia_attr->max_iov_segments_per_dto;
	a->max_rdma_read_in = DOFI_DEFAULT_RDMA_READ;
	a->max_rdma_read_out = DOFI_DEFAULT_RDMA_READ;
	a->max_rdma_read_iov = ia_attr->max_iov_segments_per_rdma_read;
	a->max_rdma_write_iov = ia_attr->max_iov_segments_per_rdma_write;
}

/*
 * Consumers written for OFED leave sizes at 0 (memset) meaning "whatever
 * the provider allows": give them the IA's limits, as OFED's did.
 */
static void dofi_ep_fill_zero(dofi_ia_t *ia, DAT_EP_ATTR *a)
{
	const DAT_IA_ATTR *ia_attr = &ia->ia_attr;

	if (a->max_message_size == 0)
		a->max_message_size = ia_attr->max_message_size;
	if (a->max_rdma_size == 0)
		a->max_rdma_size = ia_attr->max_rdma_size;
	if (a->max_recv_iov == 0)
		a->max_recv_iov = ia_attr->max_iov_segments_per_dto;
	if (a->max_request_iov == 0)
		a->max_request_iov = ia_attr->max_iov_segments_per_dto;
	if (a->max_rdma_read_iov == 0)
		a->max_rdma_read_iov = ia_attr->max_iov_segments_per_rdma_read;
	if (a->max_rdma_write_iov == 0)
		a->max_rdma_write_iov =
		        ia_attr->max_iov_segments_per_rdma_write;
}

static DAT_RETURN dofi_ep_check_attr(dofi_ia_t *ia, DAT_EP_ATTR *a)
{
	const DAT_IA_ATTR *ia_attr = &ia->ia_attr;
	const char *why = NULL;

	dofi_ep_fill_zero(ia, a);
	if (a->service_type != DAT_SERVICE_TYPE_RC)
		why = "service_type is not DAT_SERVICE_TYPE_RC";
	else if (a->max_message_size > ia_attr->max_message_size)
		why = "max_message_size exceeds the IA's";
	else if (a->max_rdma_size > ia_attr->max_rdma_size)
		why = "max_rdma_size exceeds the IA's";
	else if (a->max_recv_dtos < 0 ||
	         a->max_recv_dtos > ia_attr->max_dto_per_ep)
		why = "max_recv_dtos outside 0..max_dto_per_ep";
	else if (a->max_request_dtos < 0 ||
	         a->max_request_dtos > ia_attr->max_dto_per_ep)
		why = "max_request_dtos outside 0..max_dto_per_ep";
	else if (a->max_recv_iov < 0 ||
	         a->max_recv_iov > ia_attr->max_iov_segments_per_dto)
		why = "max_recv_iov exceeds the IA's IOV limit";
	else if (a->max_request_iov < 0 ||
	         a->max_request_iov > ia_attr->max_iov_segments_per_dto)
		why = "max_request_iov exceeds the IA's IOV limit";
	else if (a->max_rdma_read_in < 0 ||
	         a->max_rdma_read_in > ia_attr->max_rdma_read_per_ep_in ||
	         a->max_rdma_read_out < 0 ||
	         a->max_rdma_read_out > ia_attr->max_rdma_read_per_ep_out)
		why = "RDMA read depth exceeds the IA's";
	else if ((a->recv_completion_flags | a->request_completion_flags) &
	         ~(DAT_COMPLETION_FLAGS)(DAT_COMPLETION_SUPPRESS_FLAG |
	                                 DAT_COMPLETION_SOLICITED_WAIT_FLAG |
	                                 DAT_COMPLETION_UNSIGNALLED_FLAG |
	                                 DAT_COMPLETION_EVD_THRESHOLD_FLAG))
		why = "unknown completion flags";
	if (why != NULL) {
		dof_warn(DOFI_LOG, "EP attributes: %s", why);
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG6);
	}
	if (a->qos & ~(DAT_QOS)DAT_QOS_BEST_EFFORT) {
		dof_info(DOFI_LOG,
		         "EP attributes: qos %#x cannot be given "
		         "(best effort only)",
		         (unsigned)a->qos);
		return DAT_ERROR(DAT_MODEL_NOT_SUPPORTED, 0);
	}
	return DAT_SUCCESS;
}

/*
 * dat_ep_create's completion-flag rules for a DTO EVD (ia->lock held):
 * EPs sharing it agree on the flags; an EVD that also carries other
 * streams takes only threshold/default flags; solicited-wait receive
 * EVDs carry nothing else.
 */
static int dofi_ep_flags_ok(dofi_evd_t *evd, DAT_COMPLETION_FLAGS flags,
                            int recv)
{
	const DAT_EVD_FLAGS other = DAT_EVD_SOFTWARE_FLAG | DAT_EVD_CR_FLAG |
	                            DAT_EVD_CONNECTION_FLAG |
	                            DAT_EVD_ASYNC_FLAG;

	if (evd == NULL)
		return 1;
	if ((evd->flags & other) &&
	    (flags & ~(DAT_COMPLETION_FLAGS)DAT_COMPLETION_EVD_THRESHOLD_FLAG))
		return 0;
	if (recv && (flags & DAT_COMPLETION_SOLICITED_WAIT_FLAG) &&
	    (evd->flags & ~(DAT_EVD_FLAGS)DAT_EVD_DTO_FLAG))
		return 0;
	/* The other streams on it share one set of flags. */
	if (evd->streams > 0 && evd->stream_flags != flags)
		return 0;
	/* A solicited-wait receive EVD carries only those. */
	if (!recv && evd->solicited > 0)
		return 0;
	return 1;
}

/*
 * (dofi.h) evd's partner names one EVD at a time: EPs pairing evd with a
 * third leave partner_eps short of evd->streams.
 */
void dofi_ep_partner(dofi_evd_t *evd, dofi_evd_t *other, int sign)
{
	if (sign > 0) {
		if (evd->partner == NULL)
			evd->partner = other;
		if (evd->partner == other)
			evd->partner_eps++;
	} else if (evd->partner == other && --evd->partner_eps == 0) {
		evd->partner = NULL;
	}
}

/* Count (sign 1) or forget (-1) an EP's streams on its EVDs. ia->lock. */
static void dofi_ep_streams(dofi_evd_t *recv, dofi_evd_t *req,
                            const DAT_EP_ATTR *a, int sign)
{
	if (recv != NULL && req != NULL && recv != req) {
		dofi_ep_partner(recv, req, sign);
		dofi_ep_partner(req, recv, sign);
	}
	if (recv != NULL) {
		recv->streams += sign;
		recv->stream_flags = a->recv_completion_flags;
		if (a->recv_completion_flags &
		    DAT_COMPLETION_SOLICITED_WAIT_FLAG)
			recv->solicited += sign;
	}
	if (req != NULL) {
		req->streams += sign;
		req->stream_flags = a->request_completion_flags;
	}
}

static void dofi_ep_free_pools(dofi_ep_t *ep)
{
	/* Off the IA's list of EPs whose requests wait for room. */
	dofi_defer_drop(ep);
	dofi_pool_fini(&ep->req_pool);
	dofi_pool_fini(&ep->recv_pool);
	dofi_lazy_free(ep->recv_block, ep->recv_block_bytes);
	ep->recv_block = NULL;
	/* Events behind requests name the pool's ops. */
	free(ep->after);
	ep->after = NULL;
	ep->nafter = 0;
	atomic_store(&ep->last_req, NULL);
}

/*
 * The segments a request's defer slot keeps (dofi_defer.c): the most a
 * request of the EP may have, of any type.
 */
static uint32_t dofi_ep_req_niov(const DAT_EP_ATTR *a)
{
	DAT_COUNT n = a->max_request_iov;

	if (a->max_rdma_write_iov > n)
		n = a->max_rdma_write_iov;
	if (a->max_rdma_read_iov > n)
		n = a->max_rdma_read_iov;
	return n < 1 ? 1 : n > DOFI_MAX_IOV ? DOFI_MAX_IOV : (uint32_t)n;
}

static dof_status_t dofi_ep_alloc_pools(dofi_ep_t *ep)
{
	uint32_t nrecv = (uint32_t)ep->attr.max_recv_dtos;
	/* On an SRQ (max_recv_iov 0): room for the SRQ's segments. */
	uint32_t niov =
	        (ep->srq != NULL             ? ep->srq->niov
	         : ep->attr.max_recv_iov > 0 ? (uint32_t)ep->attr.max_recv_iov
	                                     : 1) +
	        ep->recv_sink; /* and the sink's (dofi_recv_sink_add) */
	size_t n = (size_t)nrecv * niov + 1;
	uint32_t nreq = (uint32_t)ep->attr.max_request_dtos;
	uint32_t dniov = dofi_ep_req_niov(&ep->attr);
	struct iovec *iov;

	/*
	 * Written by each post before libfabric reads them: not zeroed, and
	 * one block, so that at the default depth it is big enough to come
	 * from mmap and an idle EP has none of it resident.
	 */
	ep->recv_block_bytes = n * (sizeof(struct iovec) + sizeof(void *));
	ep->recv_block = dofi_lazy_alloc(ep->recv_block_bytes);
	iov = ep->recv_block;
	if (ep->recv_block == NULL ||
	    dofi_pool_init(&ep->req_pool, nreq, ep, NULL, NULL, 0,
	                   dofi_defer_bytes(nreq, dniov)) != DOF_OK ||
	    dofi_pool_init(&ep->recv_pool, nrecv, ep, iov, (void **)(iov + n),
	                   niov, 0) != DOF_OK)
		goto err;
	dofi_defer_init(ep, dniov);
	ep->pend_head = ep->pend_tail = DOFI_POOL_NONE;
	return DOF_OK;
err:
	dofi_ep_free_pools(ep);
	return DOF_ERR_NO_MEMORY;
}

dofi_ep_t *dofi_ep_alloc(dofi_ia_t *ia, dofi_pz_t *pz, dofi_evd_t *recv,
                         dofi_evd_t *req, dofi_evd_t *conn,
                         const DAT_EP_ATTR *attr, DAT_RETURN *ret)
{
	DAT_EP_ATTR a;
	dofi_ep_t *ep;

	if (attr != NULL)
		a = *attr;
	else
		dofi_ep_default_attr(ia, &a);
	*ret = dofi_ep_check_attr(ia, &a);
	if (*ret != DAT_SUCCESS)
		return NULL;
	ep = dofi_obj_alloc(ia, DOFI_OBJ_EP, sizeof(*ep), ia->obj.provider);
	if (ep == NULL)
		goto err_nomem;
	ep->attr = a;
	ep->pz = pz;
	ep->recv_evd = recv;
	ep->req_evd = req;
	ep->conn_evd = conn;
	dofi_dto_order_reset(ep);
	atomic_store(&ep->state, DAT_EP_STATE_UNCONNECTED);
	ep->local_addr = ia->addr;
	ep->recv_sink = ia->trunc_sink;
	if (dofi_ep_alloc_pools(ep) != DOF_OK)
		goto err_obj;
	if (ia->ctl->cm_ep_init(ep) != DOF_OK)
		goto err_pools;
	pthread_mutex_lock(&ia->lock);
	if (!dofi_ep_flags_ok(recv, a.recv_completion_flags, 1) ||
	    !dofi_ep_flags_ok(req, a.request_completion_flags, 0)) {
		ia->ctl->cm_ep_fini(ep);
		dofi_ep_free_pools(ep);
		dofi_obj_free(ep);
		pthread_mutex_unlock(&ia->lock);
		dof_warn(DOFI_LOG,
		         "dat_ep_create: completion flags conflict with other "
		         "streams on the same EVD");
		*ret = DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG6);
		return NULL;
	}
	dofi_ep_streams(recv, req, &a, 1);
	if (pz)
		atomic_fetch_add(&pz->nref, 1);
	if (recv)
		atomic_fetch_add(&recv->nref, 1);
	if (req)
		atomic_fetch_add(&req->nref, 1);
	if (conn)
		atomic_fetch_add(&conn->nref, 1);
	pthread_mutex_unlock(&ia->lock);
	return ep;

err_pools:
	dofi_ep_free_pools(ep);
err_obj:
	pthread_mutex_lock(&ia->lock);
	dofi_obj_free(ep);
	pthread_mutex_unlock(&ia->lock);
err_nomem:
	*ret = DAT_ERROR(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_MEMORY);
	return NULL;
}

static dofi_evd_t *dofi_ep_evd_arg(dofi_ia_t *ia, DAT_EVD_HANDLE h,
                                   DAT_EVD_FLAGS need, DAT_RETURN *ret,
                                   DAT_RETURN_SUBTYPE sub)
{
	dofi_evd_t *evd;

	if (h == DAT_HANDLE_NULL)
		return NULL;
	evd = dofi_obj_get(h, DOFI_OBJ_EVD, "dat_ep_create");
	/*
	 * DTO EVDs carry a CQ of the IA's domain; a connection EVD takes
	 * only events we post, so one of another IA of ours will do (OFED
	 * allowed it, and dapltest's limit tests rely on it).
	 */
	if (evd == NULL ||
	    (evd->obj.ia != ia && (need != DAT_EVD_CONNECTION_FLAG ||
	                           evd->obj.provider != ia->obj.provider))) {
		*ret = DAT_ERROR(DAT_INVALID_HANDLE, sub);
		return NULL;
	}
	if (!(evd->flags & need)) {
		dof_warn(DOFI_LOG, "dat_ep_create: EVD %p lacks the %s flag",
		         (void *)evd,
		         need == DAT_EVD_DTO_FLAG ? "DTO" : "CONNECTION");
		*ret = DAT_ERROR(DAT_INVALID_HANDLE, sub);
		return NULL;
	}
	return evd;
}

/* The PZ and EVDs a new EP is to use. */
typedef struct dofi_ep_objs {
	dofi_pz_t *pz;
	dofi_evd_t *recv, *req, *conn;
} dofi_ep_objs_t;

/* The PZ and EVD handles given to dat_ep_create(_with_srq), checked. */
static DAT_RETURN dofi_ep_objs(dofi_ia_t *ia, DAT_PZ_HANDLE pz_h,
                               DAT_EVD_HANDLE recv_h, DAT_EVD_HANDLE req_h,
                               DAT_EVD_HANDLE conn_h, dofi_ep_objs_t *o)
{
	DAT_RETURN ret = DAT_SUCCESS;

	o->pz = NULL;
	if (pz_h != DAT_HANDLE_NULL) {
		o->pz = dofi_obj_get(pz_h, DOFI_OBJ_PZ, "dat_ep_create");
		if (o->pz == NULL || o->pz->obj.ia != ia)
			return DAT_ERROR(DAT_INVALID_HANDLE,
			                 DAT_INVALID_HANDLE_PZ);
	}
	o->recv = dofi_ep_evd_arg(ia, recv_h, DAT_EVD_DTO_FLAG, &ret,
	                          DAT_INVALID_HANDLE_EVD_RECV);
	o->req = dofi_ep_evd_arg(ia, req_h, DAT_EVD_DTO_FLAG, &ret,
	                         DAT_INVALID_HANDLE_EVD_REQUEST);
	o->conn = dofi_ep_evd_arg(ia, conn_h, DAT_EVD_CONNECTION_FLAG, &ret,
	                          DAT_INVALID_HANDLE_EVD_CONN);
	return ret;
}

DAT_RETURN dofi_ep_create(DAT_IA_HANDLE h, DAT_PZ_HANDLE pz_h,
                          DAT_EVD_HANDLE recv_h, DAT_EVD_HANDLE req_h,
                          DAT_EVD_HANDLE conn_h, const DAT_EP_ATTR *attr,
                          DAT_EP_HANDLE *out)
{
	dofi_ia_t *ia = dofi_obj_get(h, DOFI_OBJ_IA, __func__);
	dofi_ep_objs_t o;
	DAT_RETURN ret;
	dofi_ep_t *ep;

	if (ia == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	if (out == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG7);
	ret = dofi_ep_objs(ia, pz_h, recv_h, req_h, conn_h, &o);
	if (ret != DAT_SUCCESS)
		return ret;
	ep = dofi_ep_alloc(ia, o.pz, o.recv, o.req, o.conn, attr, &ret);
	if (ep == NULL)
		return ret;
	*out = (DAT_EP_HANDLE)ep;
	return DAT_SUCCESS;
}

/*
 * An EP on an SRQ (dofi_srq.c) takes its receives from it, up to its
 * max_recv_dtos at a time (0 is taken as 1): its recv_pool holds those,
 * with the SRQ's segments each. Nothing may be posted to it directly, so
 * its max_recv_iov is 0 (the fast post then goes to the slow one, which
 * says so). It shares its SRQ's PZ: what it took is posted to its fi_ep
 * in its PZ's domain.
 */
DAT_RETURN dofi_ep_create_with_srq(DAT_IA_HANDLE h, DAT_PZ_HANDLE pz_h,
                                   DAT_EVD_HANDLE recv_h, DAT_EVD_HANDLE req_h,
                                   DAT_EVD_HANDLE conn_h, DAT_SRQ_HANDLE srq_h,
                                   const DAT_EP_ATTR *attr, DAT_EP_HANDLE *out)
{
	dofi_ia_t *ia = dofi_obj_get(h, DOFI_OBJ_IA, __func__);
	dofi_ep_objs_t o;
	dofi_srq_t *srq;
	DAT_EP_ATTR a;
	DAT_RETURN ret;
	dofi_ep_t *ep;

	if (ia == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	ret = dofi_ep_objs(ia, pz_h, recv_h, req_h, conn_h, &o);
	if (ret != DAT_SUCCESS)
		return ret;
	srq = dofi_obj_get(srq_h, DOFI_OBJ_SRQ, __func__);
	if (srq == NULL || srq->obj.ia != ia)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_SRQ);
	if (attr == NULL || out == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER,
		                 attr == NULL ? DAT_INVALID_ARG7
		                              : DAT_INVALID_ARG8);
	if (o.pz != srq->pz) {
		dof_warn(DOFI_LOG, "dat_ep_create_with_srq: the EP's PZ is not "
		                   "the SRQ's (srq_ep_pz_difference_supported "
		                   "is false)");
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	}
	a = *attr;
	if (a.max_recv_dtos == 0)
		a.max_recv_dtos = 1;
	a.max_recv_iov = (DAT_COUNT)srq->niov;
	ep = dofi_ep_alloc(ia, o.pz, o.recv, o.req, o.conn, &a, &ret);
	if (ep == NULL)
		return ret;
	pthread_mutex_lock(&ia->lock);
	ep->attr.max_recv_iov = 0;
	dofi_srq_attach(srq, ep);
	pthread_mutex_unlock(&ia->lock);
	*out = (DAT_EP_HANDLE)ep;
	return DAT_SUCCESS;
}

DAT_RETURN dofi_ep_query(DAT_EP_HANDLE h, DAT_EP_PARAM_MASK mask,
                         DAT_EP_PARAM *p)
{
	dofi_ep_t *ep = dofi_obj_get(h, DOFI_OBJ_EP, __func__);
	dofi_ia_t *ia;

	if (ep == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	if (p == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	(void)mask; /* all fields are cheap */
	ia = ep->obj.ia;
	pthread_mutex_lock(&ia->lock);
	p->ia_handle = dofi_ia_consumer_handle(ia);
	p->ep_state = atomic_load(&ep->state);
	memset(&p->comm, 0, sizeof(p->comm));
	if (ep->local_unnamed && ep->fep != NULL) {
		/* A connection this EP made: the port it was given. */
		struct sockaddr_in a;
		size_t alen = sizeof(a);

		if (fi_getname(&ep->fep->fid, &a, &alen) == 0 &&
		    a.sin_family == AF_INET) {
			ep->local_qual = ntohs(a.sin_port);
			a.sin_port = 0;
			ep->local_addr = a;
		}
		ep->local_unnamed = 0;
	}
	p->local_ia_address_ptr = (DAT_IA_ADDRESS_PTR)&ep->local_addr;
	p->local_port_qual = ep->local_qual;
	p->remote_ia_address_ptr = (DAT_IA_ADDRESS_PTR)&ep->remote_addr;
	p->remote_port_qual = ep->remote_qual;
	p->pz_handle = (DAT_PZ_HANDLE)ep->pz;
	p->recv_evd_handle = (DAT_EVD_HANDLE)ep->recv_evd;
	p->request_evd_handle = (DAT_EVD_HANDLE)ep->req_evd;
	p->connect_evd_handle = (DAT_EVD_HANDLE)ep->conn_evd;
	p->srq_handle = (DAT_SRQ_HANDLE)ep->srq;
	p->ep_attr = ep->attr;
	pthread_mutex_unlock(&ia->lock);
	return DAT_SUCCESS;
}

static int dofi_ep_quiescent(DAT_EP_STATE s)
{
	return s == DAT_EP_STATE_UNCONNECTED || s == DAT_EP_STATE_RESERVED ||
	       s == DAT_EP_STATE_PASSIVE_CONNECTION_PENDING ||
	       s == DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING;
}

static void dofi_ep_swap_evd(dofi_evd_t **slot, dofi_evd_t *evd)
{
	if (*slot == evd)
		return;
	if (*slot != NULL)
		atomic_fetch_sub(&(*slot)->nref, 1);
	if (evd != NULL)
		atomic_fetch_add(&evd->nref, 1);
	*slot = evd;
}

DAT_RETURN dofi_ep_modify(DAT_EP_HANDLE h, DAT_EP_PARAM_MASK mask,
                          const DAT_EP_PARAM *p)
{
	const DAT_EP_PARAM_MASK ok =
	        DAT_EP_FIELD_PZ_HANDLE | DAT_EP_FIELD_RECV_EVD_HANDLE |
	        DAT_EP_FIELD_REQUEST_EVD_HANDLE |
	        DAT_EP_FIELD_CONNECT_EVD_HANDLE | DAT_EP_FIELD_EP_ATTR_ALL;
	dofi_ep_t *ep = dofi_obj_get(h, DOFI_OBJ_EP, __func__);
	dofi_evd_t *recv, *req, *conn;
	DAT_RETURN ret = DAT_SUCCESS;
	dofi_pz_t *pz;
	DAT_EP_ATTR a;
	dofi_ia_t *ia;

	if (ep == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	if (p == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	if (mask & ~ok) {
		dof_warn(DOFI_LOG,
		         "dat_ep_modify: fields %#llx cannot be "
		         "modified",
		         (unsigned long long)(mask & ~ok));
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	}
	ia = ep->obj.ia;
	pz = ep->pz;
	recv = ep->recv_evd;
	req = ep->req_evd;
	conn = ep->conn_evd;
	a = ep->attr;
	if (mask & DAT_EP_FIELD_PZ_HANDLE) {
		pz = dofi_obj_get(p->pz_handle, DOFI_OBJ_PZ, __func__);
		if (pz == NULL || pz->obj.ia != ia)
			return DAT_ERROR(DAT_INVALID_HANDLE,
			                 DAT_INVALID_HANDLE_PZ);
	}
	if (mask & DAT_EP_FIELD_RECV_EVD_HANDLE)
		recv = dofi_ep_evd_arg(ia, p->recv_evd_handle, DAT_EVD_DTO_FLAG,
		                       &ret, DAT_INVALID_HANDLE_EVD_RECV);
	if (mask & DAT_EP_FIELD_REQUEST_EVD_HANDLE)
		req = dofi_ep_evd_arg(ia, p->request_evd_handle,
		                      DAT_EVD_DTO_FLAG, &ret,
		                      DAT_INVALID_HANDLE_EVD_REQUEST);
	if (mask & DAT_EP_FIELD_CONNECT_EVD_HANDLE)
		conn = dofi_ep_evd_arg(ia, p->connect_evd_handle,
		                       DAT_EVD_CONNECTION_FLAG, &ret,
		                       DAT_INVALID_HANDLE_EVD_CONN);
	if (ret != DAT_SUCCESS)
		return ret;
	if (mask & DAT_EP_FIELD_EP_ATTR_ALL) {
		const DAT_EP_ATTR *n = &p->ep_attr;

		if (mask & DAT_EP_FIELD_EP_ATTR_MAX_MESSAGE_SIZE)
			a.max_message_size = n->max_message_size;
		if (mask & DAT_EP_FIELD_EP_ATTR_MAX_RDMA_SIZE)
			a.max_rdma_size = n->max_rdma_size;
		if (mask & DAT_EP_FIELD_EP_ATTR_QOS)
			a.qos = n->qos;
		if (mask & DAT_EP_FIELD_EP_ATTR_RECV_COMPLETION_FLAGS)
			a.recv_completion_flags = n->recv_completion_flags;
		if (mask & DAT_EP_FIELD_EP_ATTR_REQUEST_COMPLETION_FLAGS)
			a.request_completion_flags =
			        n->request_completion_flags;
		if (mask & DAT_EP_FIELD_EP_ATTR_MAX_RECV_DTOS)
			a.max_recv_dtos = n->max_recv_dtos;
		if (mask & DAT_EP_FIELD_EP_ATTR_MAX_REQUEST_DTOS)
			a.max_request_dtos = n->max_request_dtos;
		if (mask & DAT_EP_FIELD_EP_ATTR_MAX_RECV_IOV)
			a.max_recv_iov = n->max_recv_iov;
		if (mask & DAT_EP_FIELD_EP_ATTR_MAX_REQUEST_IOV)
			a.max_request_iov = n->max_request_iov;
		if (mask & DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_IN)
			a.max_rdma_read_in = n->max_rdma_read_in;
		if (mask & DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_OUT)
			a.max_rdma_read_out = n->max_rdma_read_out;
		if (mask & DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_IOV)
			a.max_rdma_read_iov = n->max_rdma_read_iov;
		if (mask & DAT_EP_FIELD_EP_ATTR_MAX_RDMA_WRITE_IOV)
			a.max_rdma_write_iov = n->max_rdma_write_iov;
		ret = dofi_ep_check_attr(ia, &a);
		if (ret != DAT_SUCCESS)
			return ret;
	}
	if (ep->srq != NULL) {
		/* Its receive sizes and PZ are its SRQ's. */
		if (pz != ep->pz || a.max_recv_dtos != ep->attr.max_recv_dtos ||
		    ((mask & DAT_EP_FIELD_EP_ATTR_MAX_RECV_IOV) &&
		     p->ep_attr.max_recv_iov != 0)) {
			dof_warn(DOFI_LOG,
			         "dat_ep_modify: the PZ and receive "
			         "sizes of an EP on an SRQ are fixed");
			return DAT_ERROR(DAT_INVALID_PARAMETER,
			                 DAT_INVALID_ARG3);
		}
		a.max_recv_iov = 0;
	}

	pthread_mutex_lock(&ia->lock);
	if (!dofi_ep_quiescent(atomic_load(&ep->state)) || ep->fep != NULL) {
		pthread_mutex_unlock(&ia->lock);
		return DAT_ERROR(DAT_INVALID_STATE,
		                 DAT_INVALID_STATE_EP_CONNECTED);
	}
	/* Checked against the other EPs' streams: ours count again below. */
	dofi_ep_streams(ep->recv_evd, ep->req_evd, &ep->attr, -1);
	if (!dofi_ep_flags_ok(recv, a.recv_completion_flags, 1) ||
	    !dofi_ep_flags_ok(req, a.request_completion_flags, 0)) {
		dofi_ep_streams(ep->recv_evd, ep->req_evd, &ep->attr, 1);
		pthread_mutex_unlock(&ia->lock);
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	}
	/*
	 * The libfabric endpoint is opened in the PZ's domain at connect or
	 * accept, so the PZ may change until then; receives queued meanwhile
	 * were checked against the old one.
	 */
	if (pz != ep->pz && ep->pend_head != DOFI_POOL_NONE) {
		dofi_ep_streams(ep->recv_evd, ep->req_evd, &ep->attr, 1);
		pthread_mutex_unlock(&ia->lock);
		dof_warn(DOFI_LOG, "dat_ep_modify: receives posted in the old "
		                   "PZ are queued; the PZ cannot change");
		return DAT_ERROR(DAT_INVALID_STATE, 0);
	}
	/* The pools' sizes, and the segments a request's defer slot holds. */
	if (a.max_recv_dtos != ep->attr.max_recv_dtos ||
	    a.max_request_dtos != ep->attr.max_request_dtos ||
	    a.max_recv_iov != ep->attr.max_recv_iov ||
	    dofi_ep_req_niov(&a) != dofi_ep_req_niov(&ep->attr)) {
		DAT_EP_ATTR old = ep->attr;

		if (ep->pend_head != DOFI_POOL_NONE) {
			dofi_ep_streams(ep->recv_evd, ep->req_evd, &ep->attr,
			                1);
			pthread_mutex_unlock(&ia->lock);
			return DAT_ERROR(DAT_INVALID_STATE, 0);
		}
		dofi_ep_free_pools(ep);
		ep->attr = a;
		if (dofi_ep_alloc_pools(ep) != DOF_OK) {
			ep->attr = old;
			(void)dofi_ep_alloc_pools(ep);
			dofi_ep_streams(ep->recv_evd, ep->req_evd, &ep->attr,
			                1);
			pthread_mutex_unlock(&ia->lock);
			return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES,
			                 DAT_RESOURCE_MEMORY);
		}
	}
	ep->attr = a;
	if (pz != ep->pz) {
		if (ep->pz)
			atomic_fetch_sub(&ep->pz->nref, 1);
		atomic_fetch_add(&pz->nref, 1);
		ep->pz = pz;
	}
	dofi_ep_swap_evd(&ep->recv_evd, recv);
	dofi_ep_swap_evd(&ep->req_evd, req);
	dofi_ep_swap_evd(&ep->conn_evd, conn);
	dofi_ep_streams(ep->recv_evd, ep->req_evd, &ep->attr, 1);
	pthread_mutex_unlock(&ia->lock);
	return DAT_SUCCESS;
}

DAT_RETURN dofi_ep_get_status(DAT_EP_HANDLE h, DAT_EP_STATE *state,
                              DAT_BOOLEAN *recv_idle, DAT_BOOLEAN *req_idle)
{
	dofi_ep_t *ep = dofi_obj_get(h, DOFI_OBJ_EP, __func__);

	if (ep == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	if (state != NULL)
		*state = atomic_load(&ep->state);
	if (recv_idle != NULL)
		*recv_idle = dofi_pool_used(&ep->recv_pool) == 0;
	if (req_idle != NULL)
		*req_idle = dofi_pool_used(&ep->req_pool) == 0;
	return DAT_SUCCESS;
}

DAT_RETURN dofi_ep_recv_query(DAT_EP_HANDLE h, DAT_COUNT *nbufs,
                              DAT_COUNT *bufs_alloc)
{
	dofi_ep_t *ep = dofi_obj_get(h, DOFI_OBJ_EP, __func__);
	DAT_COUNT used;

	if (ep == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	/*
	 * Receives posted to it, or taken from its SRQ, and not yet
	 * completed. A message fills the oldest of them (MSG endpoints
	 * deliver in order): the span is their number.
	 */
	used = (DAT_COUNT)dofi_pool_used(&ep->recv_pool);
	if (nbufs != NULL)
		*nbufs = used;
	if (bufs_alloc != NULL)
		*bufs_alloc = used;
	return DAT_SUCCESS;
}

DAT_RETURN dofi_ep_set_watermark(DAT_EP_HANDLE h, DAT_COUNT soft_hw,
                                 DAT_COUNT hard_hw)
{
	dofi_ep_t *ep = dofi_obj_get(h, DOFI_OBJ_EP, __func__);

	if (ep == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	(void)soft_hw, (void)hard_hw;
	/* Watermarks are for EPs on a shared receive queue. */
	dof_info(DOFI_LOG, "dat_ep_set_watermark: SRQ watermarks are not "
	                   "offered yet");
	return DAT_ERROR(DAT_MODEL_NOT_SUPPORTED, 0);
}

/* Give back the EVDs' CQs dofi_ep_open_fep took for ep (NULL: none). */
static void dofi_ep_cqs_put(dofi_ep_t *ep, struct fid_cq *tx, struct fid_cq *rx)
{
	if (ep->req_evd != NULL)
		dofi_evd_cq_put(ep->req_evd, tx);
	if (ep->recv_evd != NULL && ep->recv_evd != ep->req_evd)
		dofi_evd_cq_put(ep->recv_evd, rx);
}

/* The transmit queue of an endpoint for n requests: at least the IA's
 * least (ia->tx_size_min, traits->tx_window_room). */
static size_t dofi_ep_tx_size(const dofi_ep_t *ep, size_t n)
{
	size_t min = ep->obj.ia->tx_size_min;

	return n > min ? n : min;
}

dof_status_t dofi_ep_open_fep(dofi_ep_t *ep, struct fi_info *info,
                              struct fid *bind,
                              int (*aside)(dofi_ep_t *, struct fid_ep *),
                              struct fid_ep **out, int *extra)
{
	struct fid_cq *tx, *rx;
	struct fid_ep *fep;
	dofi_dom_t *dom;
	int rc;

	/* Connect and accept refuse an EP with no PZ. */
	if (ep->pz == NULL)
		return DOF_ERR_INVALID_STATE;
	/*
	 * The PZ's domain: only its keys reach this endpoint, and it binds
	 * its EVDs' CQs in that domain (opened now if it is new to them).
	 */
	dom = ep->pz->dom;
	tx = ep->req_evd ? dofi_evd_cq_get(ep->req_evd, dom) : dom->null_cq;
	/* One EVD both ways: one CQ of it. */
	rx = ep->recv_evd == NULL          ? dom->null_cq
	     : ep->recv_evd == ep->req_evd ? tx
	                                   : dofi_evd_cq_get(ep->recv_evd, dom);
	if (tx == NULL || rx == NULL) {
		dofi_ep_cqs_put(ep, tx, rx);
		return DOF_ERR_NO_MEMORY;
	}
	/* One slot more each way for the backend's own message. */
	*extra = 1;
	if (ep->attr.max_request_dtos > 0)
		info->tx_attr->size = dofi_ep_tx_size(
		        ep, (size_t)ep->attr.max_request_dtos + 1);
	if (ep->attr.max_recv_dtos > 0)
		info->rx_attr->size = (size_t)ep->attr.max_recv_dtos + 1;
	rc = DOFI_NOPIPE(fi_endpoint(dom->domain, info, &fep, ep));
	if (rc != 0 &&
	    (ep->attr.max_request_dtos > 0 || ep->attr.max_recv_dtos > 0)) {
		/* The provider's limit: the consumer's sizes, no extra. */
		if (ep->attr.max_request_dtos > 0)
			info->tx_attr->size = dofi_ep_tx_size(
			        ep, (size_t)ep->attr.max_request_dtos);
		if (ep->attr.max_recv_dtos > 0)
			info->rx_attr->size = (size_t)ep->attr.max_recv_dtos;
		*extra = 0;
		rc = DOFI_NOPIPE(fi_endpoint(dom->domain, info, &fep, ep));
	}
	/* Open, unbound, the ones the backend sets aside. */
	while (rc == 0 && aside != NULL && aside(ep, fep))
		rc = DOFI_NOPIPE(fi_endpoint(dom->domain, info, &fep, ep));
	if (rc != 0) {
		dof_warn(DOFI_LOG, "fi_endpoint: %s", fi_strerror(-rc));
		dofi_ep_cqs_put(ep, tx, rx);
		return DOF_ERR_NO_MEMORY;
	}
	rc = fi_ep_bind(fep, bind, 0);
	/* One EVD both ways (the usual case): one bind. */
	if (rc == 0 && tx == rx)
		rc = fi_ep_bind(fep, &tx->fid, FI_TRANSMIT | FI_RECV);
	else if (rc == 0)
		rc = fi_ep_bind(fep, &tx->fid, FI_TRANSMIT);
	if (rc == 0 && tx != rx)
		rc = fi_ep_bind(fep, &rx->fid, FI_RECV);
	if (rc == 0)
		rc = fi_enable(fep);
	if (rc != 0) {
		dof_warn(DOFI_LOG, "binding the endpoint: %s",
		         fi_strerror(-rc));
		(void)DOFI_NOPIPE(fi_close(&fep->fid));
		dofi_ep_cqs_put(ep, tx, rx);
		return DOF_ERR_IO;
	}
	ep->tx_cq = tx;
	ep->rx_cq = rx;
	dofi_dto_order_reset(ep);
	*out = fep;
	return DOF_OK;
}

dof_status_t dofi_ep_publish_fep(dofi_ep_t *ep, struct fid_ep *fep)
{
	ep->fep = fep;
	return dofi_dto_replay_recvs(ep);
}

void dofi_ep_drop_fep(dofi_ep_t *ep, struct fid_ep *fep)
{
	dofi_defer_drop(ep);
	(void)DOFI_NOPIPE(fi_close(&fep->fid));
	dofi_ep_cqs_put(ep, ep->tx_cq, ep->rx_cq);
	ep->tx_cq = ep->rx_cq = NULL;
}

void dofi_ep_close_fep(dofi_ep_t *ep)
{
	if (ep->fep == NULL)
		return;
	/* Nothing waiting for room is posted to it from now on. */
	dofi_defer_drop(ep);
	/* It takes no more of its SRQ's receives: none reach a closed fi_ep. */
	if (ep->srq != NULL)
		dofi_srq_ep_stop(ep);
	/* libfabric flushes what was posted (FI_ECANCELED) on close. */
	(void)DOFI_NOPIPE(fi_close(&ep->fep->fid));
	ep->fep = NULL;
	dofi_ep_cqs_put(ep, ep->tx_cq, ep->rx_cq);
	ep->tx_cq = ep->rx_cq = NULL;
}

/* ia->lock held. */
void dofi_ep_destroy(dofi_ep_t *ep)
{
	ep->obj.ia->ctl->cm_ep_fini(ep);
	dofi_dto_flush_queued(ep);
	dofi_srq_detach(ep);
	if (ep->pz)
		atomic_fetch_sub(&ep->pz->nref, 1);
	dofi_ep_streams(ep->recv_evd, ep->req_evd, &ep->attr, -1);
	if (ep->recv_evd)
		atomic_fetch_sub(&ep->recv_evd->nref, 1);
	if (ep->req_evd)
		atomic_fetch_sub(&ep->req_evd->nref, 1);
	if (ep->conn_evd)
		atomic_fetch_sub(&ep->conn_evd->nref, 1);
	dofi_ep_free_pools(ep);
	dofi_obj_free(ep);
}

DAT_RETURN dofi_ep_free(DAT_EP_HANDLE h)
{
	dofi_ep_t *ep = dofi_obj_get(h, DOFI_OBJ_EP, __func__);
	dofi_ia_t *ia;

	if (ep == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	ia = ep->obj.ia;
	pthread_mutex_lock(&ia->lock);
	if ((ep->sp != NULL && ep->sp->obj.type == DOFI_OBJ_RSP) ||
	    (ep->cr != NULL &&
	     atomic_load(&ep->state) ==
	             DAT_EP_STATE_PASSIVE_CONNECTION_PENDING)) {
		/* DAT: an EP reserved by an RSP is freed with it only. */
		pthread_mutex_unlock(&ia->lock);
		return DAT_ERROR(DAT_INVALID_STATE,
		                 DAT_INVALID_STATE_EP_RESERVED);
	}
	dofi_ep_destroy(ep);
	pthread_mutex_unlock(&ia->lock);
	return DAT_SUCCESS;
}

DAT_RETURN dofi_ep_reset(DAT_EP_HANDLE h)
{
	dofi_ep_t *ep = dofi_obj_get(h, DOFI_OBJ_EP, __func__);
	DAT_RETURN ret = DAT_SUCCESS;
	DAT_EP_STATE s;
	dofi_ia_t *ia;

	if (ep == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	ia = ep->obj.ia;
	pthread_mutex_lock(&ia->lock);
	s = atomic_load(&ep->state);
	switch (s) {
	case DAT_EP_STATE_UNCONNECTED:
		break; /* no-op; queued receives stay */
	case DAT_EP_STATE_DISCONNECTED:
		ep->obj.ia->ctl->cm_ep_teardown(ep);
		atomic_store(&ep->state, DAT_EP_STATE_UNCONNECTED);
		memset(&ep->remote_addr, 0, sizeof(ep->remote_addr));
		ep->remote_qual = 0;
		break;
	default:
		ret = DAT_ERROR(DAT_INVALID_STATE, 0);
		dof_warn(DOFI_LOG,
		         "dat_ep_reset: EP state %d is neither "
		         "Disconnected nor Unconnected",
		         (int)s);
		break;
	}
	pthread_mutex_unlock(&ia->lock);
	return ret;
}
