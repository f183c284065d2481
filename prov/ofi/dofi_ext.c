/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * The InfiniBand extension of DAT (dat_ib_extensions.h, version 2.0.9),
 * reached through dat_extension_op (its data path: dofi_ext_dto.c, what
 * the fabric offers: dofi_ext_attr.c):
 *
 * - RDMA Write with immediate data: fi_writedata where the fabric
 *   consumes a receive with it, elsewhere (tcp, sockets) an RDMA Write
 *   then an empty message with the data (dofi_ext_dto.c).
 * - 64-bit fetch-and-add and compare-and-swap: fi_fetch_atomic and
 *   fi_compare_atomic, where the provider offers FI_ATOMIC and
 *   fi_query_atomic takes FI_UINT64 FI_SUM and FI_CSWAP. The operands
 *   live in the request's op (libfabric reads them until completion), so
 *   they need no descriptor: not offered where the domain wants
 *   FI_MR_LOCAL.
 * - Counters per IA, EP and EVD (DCNT_*). They cost the data path one
 *   test of a flag in a cache line the call reads anyway (ep->counting,
 *   evd->counting) until dat_ib_start_counter or DAPL_OFI_COUNTERS turns
 *   them on, and then send posts and dequeues to their slow paths, which
 *   count (dofi_ext_dto.c); the IA's are counted in the ops table's calls
 *   (below). Here: their query, print, start and stop.
 * - dat_ib_open_query and dat_ib_close_query.
 * UD and the collectives are not offered: DAT_MODEL_NOT_SUPPORTED.
 * In the layer above the IA (test/layers.sh): it calls the IA, CM, EP,
 * memory and EVD code, and only dofi_prov.c calls it.
 */
#include "config.h"

#define DOFI_LOG_COMP "ext"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "dofi.h"

/* ---- counters ------------------------------------------------------------ */

static const char *const dofi_ia_cnt_names[DCNT_IA_ALL_COUNTERS] = {
#define N(x) [x] = #x
        N(DCNT_IA_PZ_CREATE),
        N(DCNT_IA_PZ_FREE),
        N(DCNT_IA_LMR_CREATE),
        N(DCNT_IA_LMR_FREE),
        N(DCNT_IA_RMR_CREATE),
        N(DCNT_IA_RMR_FREE),
        N(DCNT_IA_PSP_CREATE),
        N(DCNT_IA_PSP_CREATE_ANY),
        N(DCNT_IA_PSP_FREE),
        N(DCNT_IA_RSP_CREATE),
        N(DCNT_IA_RSP_FREE),
        N(DCNT_IA_EVD_CREATE),
        N(DCNT_IA_EVD_FREE),
        N(DCNT_IA_EP_CREATE),
        N(DCNT_IA_EP_FREE),
        N(DCNT_IA_SRQ_CREATE),
        N(DCNT_IA_SRQ_FREE),
        N(DCNT_IA_SP_CR),
        N(DCNT_IA_SP_CR_ACCEPTED),
        N(DCNT_IA_SP_CR_REJECTED),
        N(DCNT_IA_MEM_ALLOC),
        N(DCNT_IA_MEM_ALLOC_DATA),
        N(DCNT_IA_MEM_FREE),
        N(DCNT_IA_ASYNC_ERROR),
        N(DCNT_IA_ASYNC_QP_ERROR),
        N(DCNT_IA_ASYNC_CQ_ERROR),
        N(DCNT_IA_CM_LISTEN),
        N(DCNT_IA_CM_REQ_TX),
        N(DCNT_IA_CM_REQ_RX),
        N(DCNT_IA_CM_REP_TX),
        N(DCNT_IA_CM_REP_RX),
        N(DCNT_IA_CM_RTU_TX),
        N(DCNT_IA_CM_RTU_RX),
        N(DCNT_IA_CM_USER_REJ_TX),
        N(DCNT_IA_CM_USER_REJ_RX),
        N(DCNT_IA_CM_ACTIVE_EST),
        N(DCNT_IA_CM_PASSIVE_EST),
        N(DCNT_IA_CM_AH_REQ_TX),
        N(DCNT_IA_CM_AH_REQ_RX),
        N(DCNT_IA_CM_AH_RESOLVED),
        N(DCNT_IA_CM_DREQ_TX),
        N(DCNT_IA_CM_DREQ_RX),
        N(DCNT_IA_CM_DREP_TX),
        N(DCNT_IA_CM_DREP_RX),
        N(DCNT_IA_CM_MRA_TX),
        N(DCNT_IA_CM_MRA_RX),
        N(DCNT_IA_CM_REQ_FULLQ_POLL),
        N(DCNT_IA_CM_ERR),
        N(DCNT_IA_CM_ERR_REQ_FULLQ),
        N(DCNT_IA_CM_ERR_REQ_DUP),
        N(DCNT_IA_CM_ERR_REQ_RETRY),
        N(DCNT_IA_CM_ERR_REP_DUP),
        N(DCNT_IA_CM_ERR_REP_RETRY),
        N(DCNT_IA_CM_ERR_RTU_DUP),
        N(DCNT_IA_CM_ERR_RTU_RETRY),
        N(DCNT_IA_CM_ERR_REFUSED),
        N(DCNT_IA_CM_ERR_RESET),
        N(DCNT_IA_CM_ERR_TIMEOUT),
        N(DCNT_IA_CM_ERR_REJ_TX),
        N(DCNT_IA_CM_ERR_REJ_RX),
        N(DCNT_IA_CM_ERR_DREQ_DUP),
        N(DCNT_IA_CM_ERR_DREQ_RETRY),
        N(DCNT_IA_CM_ERR_DREP_DUP),
        N(DCNT_IA_CM_ERR_DREP_RETRY),
        N(DCNT_IA_CM_ERR_MRA_DUP),
        N(DCNT_IA_CM_ERR_MRA_RETRY),
        N(DCNT_IA_CM_ERR_UNEXPECTED),
        N(DCNT_IA_LNK_ERR_RCV),
        N(DCNT_IA_LNK_ERR_RCV_REM_PHYS),
        N(DCNT_IA_LNK_ERR_RCV_CONSTRAINT),
        N(DCNT_IA_LNK_ERR_XMT_DISCARDS),
        N(DCNT_IA_LNK_ERR_XMT_CONTRAINT),
        N(DCNT_IA_LNK_ERR_INTEGRITY),
        N(DCNT_IA_LNK_ERR_EXC_BUF_OVERRUN),
        N(DCNT_IA_LNK_WARN_RCV_SW_RELAY),
        N(DCNT_IA_LNK_WARN_XMT_WAIT),
        N(DCNT_IA_DIAG_ERR_RQ_RAE),
        N(DCNT_IA_DIAG_ERR_RQ_OOS),
        N(DCNT_IA_DIAG_ERR_RQ_RIRE),
        N(DCNT_IA_DIAG_ERR_RQ_UDSDPRD),
        N(DCNT_IA_DIAG_ERR_SQ_RAE),
        N(DCNT_IA_DIAG_ERR_SQ_OOS),
        N(DCNT_IA_DIAG_ERR_SQ_RIRE),
        N(DCNT_IA_DIAG_ERR_SQ_RREE),
        N(DCNT_IA_DIAG_ERR_SQ_TREE),
};

static const char *const dofi_ep_cnt_names[DCNT_EP_ALL_COUNTERS] = {
        N(DCNT_EP_CONNECT),        N(DCNT_EP_DISCONNECT),
        N(DCNT_EP_POST_SEND),      N(DCNT_EP_POST_SEND_DATA),
        N(DCNT_EP_POST_SEND_UD),   N(DCNT_EP_POST_SEND_UD_DATA),
        N(DCNT_EP_POST_RECV),      N(DCNT_EP_POST_RECV_DATA),
        N(DCNT_EP_POST_WRITE),     N(DCNT_EP_POST_WRITE_DATA),
        N(DCNT_EP_POST_WRITE_IMM), N(DCNT_EP_POST_WRITE_IMM_DATA),
        N(DCNT_EP_POST_READ),      N(DCNT_EP_POST_READ_DATA),
        N(DCNT_EP_POST_CMP_SWAP),  N(DCNT_EP_POST_FETCH_ADD),
        N(DCNT_EP_RECV),           N(DCNT_EP_RECV_DATA),
        N(DCNT_EP_RECV_UD),        N(DCNT_EP_RECV_UD_DATA),
        N(DCNT_EP_RECV_IMM),       N(DCNT_EP_RECV_IMM_DATA),
        N(DCNT_EP_RECV_RDMA_IMM),  N(DCNT_EP_RECV_RDMA_IMM_DATA),
};

static const char *const dofi_evd_cnt_names[DCNT_EVD_ALL_COUNTERS] = {
        N(DCNT_EVD_WAIT),          N(DCNT_EVD_WAIT_BLOCKED),
        N(DCNT_EVD_WAIT_NOTIFY),   N(DCNT_EVD_DEQUEUE),
        N(DCNT_EVD_DEQUEUE_FOUND), N(DCNT_EVD_DEQUEUE_NOT_FOUND),
        N(DCNT_EVD_DEQUEUE_POLL),  N(DCNT_EVD_DEQUEUE_POLL_FOUND),
        N(DCNT_EVD_CONN_CALLBACK), N(DCNT_EVD_DTO_CALLBACK),
#undef N
};

/* An object's counters: where they are, how many, their names. */
static int dofi_cnt_of(dofi_obj_t *o, uint64_t **cnt, const char *const **names)
{
	switch (o->type) {
	case DOFI_OBJ_IA:
		*cnt = ((dofi_ia_t *)(void *)o)->cnt;
		*names = dofi_ia_cnt_names;
		return DCNT_IA_ALL_COUNTERS;
	case DOFI_OBJ_EP:
		*cnt = ((dofi_ep_t *)(void *)o)->cnt;
		*names = dofi_ep_cnt_names;
		return DCNT_EP_ALL_COUNTERS;
	case DOFI_OBJ_EVD:
		*cnt = ((dofi_evd_t *)(void *)o)->cnt;
		*names = dofi_evd_cnt_names;
		return DCNT_EVD_ALL_COUNTERS;
	default:
		return 0;
	}
}

static const char *dofi_cnt_kind(const dofi_obj_t *o)
{
	return o->type == DOFI_OBJ_IA   ? "IA"
	       : o->type == DOFI_OBJ_EP ? "EP"
	                                : "EVD";
}

static DAT_RETURN dofi_ext_query_counters(dofi_obj_t *o, int which,
                                          DAT_UINT64 *out, int reset)
{
	const char *const *names;
	uint64_t *cnt;
	int n = dofi_cnt_of(o, &cnt, &names), i, lo, hi;

	if (n == 0)
		return DAT_ERROR(DAT_INVALID_HANDLE, 0);
	if (which < 0 || which > n) {
		dof_warn(DOFI_LOG,
		         "dat_ib_query_counters: counter %d of an %s is not "
		         "0..%d",
		         which, dofi_cnt_kind(o), n);
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	}
	if (out == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	lo = which == n ? 0 : which;
	hi = which == n ? n : which + 1;
	for (i = lo; i < hi; i++)
		out[i - lo] =
		        reset ? __atomic_exchange_n(&cnt[i], 0,
		                                    __ATOMIC_RELAXED)
		              : __atomic_load_n(&cnt[i], __ATOMIC_RELAXED);
	return DAT_SUCCESS;
}

static DAT_RETURN dofi_ext_print_counters(dofi_obj_t *o, int which, int reset)
{
	const char *const *names;
	uint64_t *cnt;
	int n = dofi_cnt_of(o, &cnt, &names), i, lo, hi;

	if (n == 0)
		return DAT_ERROR(DAT_INVALID_HANDLE, 0);
	if (which < 0 || which > n)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	lo = which == n ? 0 : which;
	hi = which == n ? n : which + 1;
	/* All of them: those that are not 0. */
	printf("DAT %s %p counters%s:\n", dofi_cnt_kind(o), (void *)o,
	       which == n ? " (those not 0)" : "");
	for (i = lo; i < hi; i++) {
		uint64_t v = reset ? __atomic_exchange_n(&cnt[i], 0,
		                                         __ATOMIC_RELAXED)
		                   : __atomic_load_n(&cnt[i], __ATOMIC_RELAXED);

		if (v != 0 || which != n)
			printf("  %-32s %" PRIu64 "\n", names[i], v);
	}
	fflush(stdout);
	return DAT_SUCCESS;
}

static void dofi_ext_run_ep(dofi_ep_t *ep, int on)
{
	__atomic_store_n(&ep->counting, (uint8_t)on, __ATOMIC_RELAXED);
	/* Its completions are counted where they are dequeued. */
	if (on && ep->recv_evd != NULL)
		__atomic_store_n(&ep->recv_evd->counting, 1, __ATOMIC_RELAXED);
	if (on && ep->req_evd != NULL)
		__atomic_store_n(&ep->req_evd->counting, 1, __ATOMIC_RELAXED);
}

/* Start (on) or stop the counters of an IA (and of all its EPs and
 * EVDs), an EP (and the EVDs of its completions) or an EVD. */
static DAT_RETURN dofi_ext_run_counters(dofi_obj_t *o, int on)
{
	dofi_ia_t *ia = o->ia;
	dofi_list_t *e;

	switch (o->type) {
	case DOFI_OBJ_IA:
		pthread_mutex_lock(&ia->lock);
		__atomic_store_n(&ia->counting, (uint8_t)on, __ATOMIC_RELAXED);
		for (e = ia->objs[DOFI_OBJ_EVD].next;
		     e != &ia->objs[DOFI_OBJ_EVD]; e = e->next)
			__atomic_store_n(
			        &dofi_container_of(e, dofi_evd_t, obj.link)
			                 ->counting,
			        (uint8_t)on, __ATOMIC_RELAXED);
		for (e = ia->objs[DOFI_OBJ_EP].next;
		     e != &ia->objs[DOFI_OBJ_EP]; e = e->next)
			dofi_ext_run_ep(
			        dofi_container_of(e, dofi_ep_t, obj.link), on);
		pthread_mutex_unlock(&ia->lock);
		return DAT_SUCCESS;
	case DOFI_OBJ_EP:
		pthread_mutex_lock(&ia->lock);
		dofi_ext_run_ep((dofi_ep_t *)(void *)o, on);
		pthread_mutex_unlock(&ia->lock);
		return DAT_SUCCESS;
	case DOFI_OBJ_EVD:
		__atomic_store_n(&((dofi_evd_t *)(void *)o)->counting,
		                 (uint8_t)on, __ATOMIC_RELAXED);
		return DAT_SUCCESS;
	default:
		return DAT_ERROR(DAT_INVALID_HANDLE, 0);
	}
}

/* ---- the ops table's counted calls --------------------------------------- */

/* The IA a handle of type belongs to, if it is live; else NULL. */
static dofi_ia_t *dofi_ext_ia_of(const void *h, dofi_obj_type_t type)
{
	const dofi_obj_t *o = dofi_obj_fast(h, type);

	return o != NULL ? o->ia : NULL;
}

/* A call on handle h (of type) returned ret: count i on its IA if it
 * worked. */
static DAT_RETURN dofi_ext_tally(const void *h, dofi_obj_type_t type,
                                 DAT_RETURN ret, int i)
{
	dofi_ia_t *ia = dofi_ext_ia_of(h, type);

	if (ret == DAT_SUCCESS && ia != NULL)
		dofi_ext_ia_count(ia, i);
	return ret;
}

/* The same on ia, the IA the object had (a free: taken before it). */
static DAT_RETURN dofi_ext_tally_ia(dofi_ia_t *ia, DAT_RETURN ret, int i)
{
	if (ret == DAT_SUCCESS && ia != NULL)
		dofi_ext_ia_count(ia, i);
	return ret;
}

/* A new EP or EVD of a counting IA counts too. */
static void dofi_ext_born(DAT_IA_HANDLE h, void *obj, dofi_obj_type_t type)
{
	dofi_ia_t *ia = dofi_ext_ia_of(h, DOFI_OBJ_IA);

	if (ia == NULL || !dofi_flag(&ia->counting))
		return;
	if (type == DOFI_OBJ_EP)
		dofi_ext_run_ep(obj, 1);
	else
		__atomic_store_n(&((dofi_evd_t *)obj)->counting, 1,
		                 __ATOMIC_RELAXED);
}

static DAT_RETURN dofi_ext_pz_create(DAT_IA_HANDLE h, DAT_PZ_HANDLE *out)
{
	return dofi_ext_tally(h, DOFI_OBJ_IA, dofi_pz_create(h, out),
	                      DCNT_IA_PZ_CREATE);
}

static DAT_RETURN dofi_ext_pz_free(DAT_PZ_HANDLE h)
{
	dofi_ia_t *ia = dofi_ext_ia_of(h, DOFI_OBJ_PZ);

	return dofi_ext_tally_ia(ia, dofi_pz_free(h), DCNT_IA_PZ_FREE);
}

static DAT_RETURN dofi_ext_lmr_create(
        DAT_IA_HANDLE h, DAT_MEM_TYPE type, DAT_REGION_DESCRIPTION region,
        DAT_VLEN len, DAT_PZ_HANDLE pz, DAT_MEM_PRIV_FLAGS priv,
        DAT_VA_TYPE va_type, DAT_LMR_HANDLE *out, DAT_LMR_CONTEXT *lctx,
        DAT_RMR_CONTEXT *rctx, DAT_VLEN *rlen, DAT_VADDR *raddr)
{
	return dofi_ext_tally(h, DOFI_OBJ_IA,
	                      dofi_lmr_create(h, type, region, len, pz, priv,
	                                      va_type, out, lctx, rctx, rlen,
	                                      raddr),
	                      DCNT_IA_LMR_CREATE);
}

static DAT_RETURN dofi_ext_lmr_free(DAT_LMR_HANDLE h)
{
	dofi_ia_t *ia = dofi_ext_ia_of(h, DOFI_OBJ_LMR);

	return dofi_ext_tally_ia(ia, dofi_lmr_free(h), DCNT_IA_LMR_FREE);
}

static DAT_RETURN dofi_ext_rmr_create(DAT_PZ_HANDLE pz, DAT_RMR_HANDLE *out)
{
	return dofi_ext_tally(pz, DOFI_OBJ_PZ, dofi_rmr_create(pz, out),
	                      DCNT_IA_RMR_CREATE);
}

static DAT_RETURN dofi_ext_rmr_free(DAT_RMR_HANDLE h)
{
	dofi_ia_t *ia = dofi_ext_ia_of(h, DOFI_OBJ_RMR);

	return dofi_ext_tally_ia(ia, dofi_rmr_free(h), DCNT_IA_RMR_FREE);
}

static DAT_RETURN dofi_ext_evd_create(DAT_IA_HANDLE h, DAT_COUNT qlen,
                                      DAT_CNO_HANDLE cno, DAT_EVD_FLAGS flags,
                                      DAT_EVD_HANDLE *out)
{
	DAT_RETURN ret = dofi_ext_tally(
	        h, DOFI_OBJ_IA, dofi_evd_create(h, qlen, cno, flags, out),
	        DCNT_IA_EVD_CREATE);

	if (ret == DAT_SUCCESS)
		dofi_ext_born(h, *out, DOFI_OBJ_EVD);
	return ret;
}

static DAT_RETURN dofi_ext_evd_free(DAT_EVD_HANDLE h)
{
	dofi_ia_t *ia = dofi_ext_ia_of(h, DOFI_OBJ_EVD);

	return dofi_ext_tally_ia(ia, dofi_evd_free(h), DCNT_IA_EVD_FREE);
}

/* UD EPs need the RDM backend, which does not exist yet. */
static int dofi_ext_ud(const DAT_EP_ATTR *attr)
{
	if (attr == NULL ||
	    attr->service_type != (DAT_SERVICE_TYPE)DAT_IB_SERVICE_TYPE_UD)
		return 0;
	dof_info(DOFI_LOG, "dat_ep_create: DAT_IB_SERVICE_TYPE_UD is not "
	                   "offered (no RDM backend yet)");
	return 1;
}

static DAT_RETURN dofi_ext_ep_create(DAT_IA_HANDLE h, DAT_PZ_HANDLE pz,
                                     DAT_EVD_HANDLE recv, DAT_EVD_HANDLE req,
                                     DAT_EVD_HANDLE conn,
                                     const DAT_EP_ATTR *attr,
                                     DAT_EP_HANDLE *out)
{
	DAT_RETURN ret;

	if (dofi_ext_ud(attr))
		return DAT_ERROR(DAT_MODEL_NOT_SUPPORTED, 0);
	ret = dofi_ext_tally(h, DOFI_OBJ_IA,
	                     dofi_ep_create(h, pz, recv, req, conn, attr, out),
	                     DCNT_IA_EP_CREATE);
	if (ret == DAT_SUCCESS)
		dofi_ext_born(h, *out, DOFI_OBJ_EP);
	return ret;
}

static DAT_RETURN
dofi_ext_ep_create_with_srq(DAT_IA_HANDLE h, DAT_PZ_HANDLE pz,
                            DAT_EVD_HANDLE recv, DAT_EVD_HANDLE req,
                            DAT_EVD_HANDLE conn, DAT_SRQ_HANDLE srq,
                            const DAT_EP_ATTR *attr, DAT_EP_HANDLE *out)
{
	DAT_RETURN ret;

	if (dofi_ext_ud(attr))
		return DAT_ERROR(DAT_MODEL_NOT_SUPPORTED, 0);
	ret = dofi_ext_tally(
	        h, DOFI_OBJ_IA,
	        dofi_ep_create_with_srq(h, pz, recv, req, conn, srq, attr, out),
	        DCNT_IA_EP_CREATE);
	if (ret == DAT_SUCCESS)
		dofi_ext_born(h, *out, DOFI_OBJ_EP);
	return ret;
}

static DAT_RETURN dofi_ext_ep_free(DAT_EP_HANDLE h)
{
	dofi_ia_t *ia = dofi_ext_ia_of(h, DOFI_OBJ_EP);

	return dofi_ext_tally_ia(ia, dofi_ep_free(h), DCNT_IA_EP_FREE);
}

/* A listener made: DCNT_IA_CM_LISTEN and its own counter i. */
static DAT_RETURN dofi_ext_listens(DAT_IA_HANDLE h, DAT_RETURN ret, int i)
{
	if (dofi_ext_tally(h, DOFI_OBJ_IA, ret, i) == DAT_SUCCESS)
		(void)dofi_ext_tally(h, DOFI_OBJ_IA, ret, DCNT_IA_CM_LISTEN);
	return ret;
}

static DAT_RETURN dofi_ext_psp_create(DAT_IA_HANDLE h, DAT_CONN_QUAL qual,
                                      DAT_EVD_HANDLE evd, DAT_PSP_FLAGS flags,
                                      DAT_PSP_HANDLE *out)
{
	return dofi_ext_listens(h, dofi_psp_create(h, qual, evd, flags, out),
	                        DCNT_IA_PSP_CREATE);
}

static DAT_RETURN dofi_ext_psp_create_any(DAT_IA_HANDLE h, DAT_CONN_QUAL *qual,
                                          DAT_EVD_HANDLE evd,
                                          DAT_PSP_FLAGS flags,
                                          DAT_PSP_HANDLE *out)
{
	return dofi_ext_listens(h,
	                        dofi_psp_create_any(h, qual, evd, flags, out),
	                        DCNT_IA_PSP_CREATE_ANY);
}

static DAT_RETURN dofi_ext_psp_free(DAT_PSP_HANDLE h)
{
	dofi_ia_t *ia = dofi_ext_ia_of(h, DOFI_OBJ_PSP);

	return dofi_ext_tally_ia(ia, dofi_psp_free(h), DCNT_IA_PSP_FREE);
}

static DAT_RETURN dofi_ext_rsp_create(DAT_IA_HANDLE h, DAT_CONN_QUAL qual,
                                      DAT_EP_HANDLE ep, DAT_EVD_HANDLE evd,
                                      DAT_RSP_HANDLE *out)
{
	return dofi_ext_listens(h, dofi_rsp_create(h, qual, ep, evd, out),
	                        DCNT_IA_RSP_CREATE);
}

static DAT_RETURN dofi_ext_rsp_free(DAT_RSP_HANDLE h)
{
	dofi_ia_t *ia = dofi_ext_ia_of(h, DOFI_OBJ_RSP);

	return dofi_ext_tally_ia(ia, dofi_rsp_free(h), DCNT_IA_RSP_FREE);
}

static DAT_RETURN dofi_ext_cr_accept(DAT_CR_HANDLE cr, DAT_EP_HANDLE h,
                                     DAT_COUNT plen, const DAT_PVOID pdata)
{
	dofi_ia_t *ia = dofi_ext_ia_of(cr, DOFI_OBJ_CR);
	dofi_ep_t *ep = dofi_obj_fast(h, DOFI_OBJ_EP);
	DAT_RETURN ret;

	/* Before: its ESTABLISHED may be queued before accept returns. */
	if (ep != NULL) {
		dofi_ext_flag_set(ep, DOFI_EXT_EP_PASSIVE);
		dofi_ext_flag_clear(ep, DOFI_EXT_EP_DISC);
	}
	ret = dofi_ext_tally_ia(ia, dofi_cr_accept(cr, h, plen, pdata),
	                        DCNT_IA_SP_CR_ACCEPTED);
	return dofi_ext_tally_ia(ia, ret, DCNT_IA_CM_REP_TX);
}

static DAT_RETURN dofi_ext_cr_reject(DAT_CR_HANDLE cr, DAT_COUNT plen,
                                     const DAT_PVOID pdata)
{
	dofi_ia_t *ia = dofi_ext_ia_of(cr, DOFI_OBJ_CR);
	DAT_RETURN ret = dofi_ext_tally_ia(ia, dofi_cr_reject(cr, plen, pdata),
	                                   DCNT_IA_SP_CR_REJECTED);

	return dofi_ext_tally_ia(ia, ret, DCNT_IA_CM_USER_REJ_TX);
}

/* An EP about to connect actively. */
static void dofi_ext_active(DAT_EP_HANDLE h)
{
	dofi_ep_t *ep = dofi_obj_fast(h, DOFI_OBJ_EP);

	if (ep != NULL)
		dofi_ext_flag_clear(ep, DOFI_EXT_EP_PASSIVE | DOFI_EXT_EP_DISC);
}

static DAT_RETURN dofi_ext_ep_connect(DAT_EP_HANDLE h, DAT_IA_ADDRESS_PTR addr,
                                      DAT_CONN_QUAL qual, DAT_TIMEOUT timeout,
                                      DAT_COUNT plen, const DAT_PVOID pdata,
                                      DAT_QOS qos, DAT_CONNECT_FLAGS flags)
{
	DAT_RETURN ret;

	dofi_ext_active(h);
	ret = dofi_ep_connect(h, addr, qual, timeout, plen, pdata, qos, flags);
	return dofi_ext_tally(h, DOFI_OBJ_EP, ret, DCNT_IA_CM_REQ_TX);
}

static DAT_RETURN dofi_ext_ep_dup_connect(DAT_EP_HANDLE h, DAT_EP_HANDLE dup,
                                          DAT_TIMEOUT timeout, DAT_COUNT plen,
                                          const DAT_PVOID pdata, DAT_QOS qos)
{
	DAT_RETURN ret;

	dofi_ext_active(h);
	ret = dofi_ep_dup_connect(h, dup, timeout, plen, pdata, qos);
	return dofi_ext_tally(h, DOFI_OBJ_EP, ret, DCNT_IA_CM_REQ_TX);
}

static DAT_RETURN dofi_ext_ep_disconnect(DAT_EP_HANDLE h, DAT_CLOSE_FLAGS flags)
{
	dofi_ep_t *ep = dofi_obj_fast(h, DOFI_OBJ_EP);
	DAT_RETURN ret;

	if (ep != NULL)
		dofi_ext_flag_set(ep, DOFI_EXT_EP_DISC);
	ret = dofi_ep_disconnect(h, flags);
	return dofi_ext_tally(h, DOFI_OBJ_EP, ret, DCNT_IA_CM_DREQ_TX);
}

void dofi_ext_table(DAT_PROVIDER *t)
{
	t->handle_extendedop_func = dofi_ext_op;
	t->pz_create_func = dofi_ext_pz_create;
	t->pz_free_func = dofi_ext_pz_free;
	t->lmr_create_func = dofi_ext_lmr_create;
	t->lmr_free_func = dofi_ext_lmr_free;
	t->rmr_create_func = dofi_ext_rmr_create;
	t->rmr_free_func = dofi_ext_rmr_free;
	t->evd_create_func = dofi_ext_evd_create;
	t->evd_free_func = dofi_ext_evd_free;
	t->ep_create_func = dofi_ext_ep_create;
	t->ep_create_with_srq_func = dofi_ext_ep_create_with_srq;
	t->ep_free_func = dofi_ext_ep_free;
	t->psp_create_func = dofi_ext_psp_create;
	t->psp_create_any_func = dofi_ext_psp_create_any;
	t->psp_free_func = dofi_ext_psp_free;
	t->rsp_create_func = dofi_ext_rsp_create;
	t->rsp_free_func = dofi_ext_rsp_free;
	t->cr_accept_func = dofi_ext_cr_accept;
	t->cr_reject_func = dofi_ext_cr_reject;
	t->ep_connect_func = dofi_ext_ep_connect;
	t->ep_dup_connect_func = dofi_ext_ep_dup_connect;
	t->ep_disconnect_func = dofi_ext_ep_disconnect;
}

/* ---- open and close for a query ----------------------------------------- */

static DAT_RETURN dofi_ext_open_query(const char *name, va_list args)
{
	DAT_HANDLE *ia_out = va_arg(args, DAT_HANDLE *);
	DAT_IA_ATTR_MASK ia_mask = va_arg(args, DAT_IA_ATTR_MASK);
	DAT_IA_ATTR *ia_attr = va_arg(args, DAT_IA_ATTR *);
	DAT_PROVIDER_ATTR_MASK prov_mask = va_arg(args, DAT_PROVIDER_ATTR_MASK);
	DAT_PROVIDER_ATTR *prov_attr = va_arg(args, DAT_PROVIDER_ATTR *);
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
	DAT_IA_HANDLE ia;
	DAT_RETURN ret;

	if (name == NULL || ia_out == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	ret = dofi_ia_open((const DAT_NAME_PTR)name, 8, &async, &ia);
	if (ret != DAT_SUCCESS)
		return ret;
	ret = dofi_ia_query(ia, NULL, ia_mask, ia_attr, prov_mask, prov_attr);
	if (ret != DAT_SUCCESS) {
		(void)dofi_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG);
		return ret;
	}
	/* The provider's own handle, as OFED's registry expects. */
	*ia_out = ia;
	return DAT_SUCCESS;
}

/* ---- dat_extension_op ---------------------------------------------------- */

static DAT_RETURN dofi_ext_unsupported(DAT_EXTENDED_OP op, const char *what)
{
	dof_info(DOFI_LOG, "dat_extension_op %d: %s is not offered", (int)op,
	         what);
	return DAT_ERROR(DAT_MODEL_NOT_SUPPORTED, 0);
}

DAT_RETURN dofi_ext_op(DAT_HANDLE handle, DAT_EXTENDED_OP op, va_list args)
{
	dofi_obj_t *o = handle;

	/* Opened by name: OFED's registry passes the name as the handle. */
	if ((int)op == DAT_IB_OPEN_QUERY_OP)
		return dofi_ext_open_query((const char *)handle, args);
	if (!dofi_handle_shaped(o) ||
	    atomic_load(&o->magic) != DOFI_MAGIC_LIVE || o->type <= 0 ||
	    o->type >= DOFI_OBJ_LAST) {
		dof_warn(DOFI_LOG,
		         "dat_extension_op %d: %p is not a live DAT "
		         "object",
		         (int)op, handle);
		return DAT_ERROR(DAT_INVALID_HANDLE, 0);
	}
	switch ((int)op) {
	case DAT_IB_RDMA_WRITE_IMMED_OP: {
		DAT_COUNT nseg = va_arg(args, DAT_COUNT);
		DAT_LMR_TRIPLET *segs = va_arg(args, DAT_LMR_TRIPLET *);
		DAT_DTO_COOKIE cookie = va_arg(args, DAT_DTO_COOKIE);
		const DAT_RMR_TRIPLET *remote =
		        va_arg(args, const DAT_RMR_TRIPLET *);
		DAT_UINT32 imm = va_arg(args, DAT_UINT32);
		DAT_COMPLETION_FLAGS flags = va_arg(args, DAT_COMPLETION_FLAGS);

		return dofi_ext_write_imm(handle, nseg, segs, cookie, remote,
		                          imm, flags);
	}
	case DAT_IB_FETCH_AND_ADD_OP: {
		DAT_UINT64 add = va_arg(args, DAT_UINT64);
		DAT_LMR_TRIPLET *lbuf = va_arg(args, DAT_LMR_TRIPLET *);
		DAT_DTO_COOKIE cookie = va_arg(args, DAT_DTO_COOKIE);
		const DAT_RMR_TRIPLET *remote =
		        va_arg(args, const DAT_RMR_TRIPLET *);
		DAT_COMPLETION_FLAGS flags = va_arg(args, DAT_COMPLETION_FLAGS);

		return dofi_ext_atomic(handle, DOFI_OP_EXT_FADD, add, 0, lbuf,
		                       cookie, remote, flags);
	}
	case DAT_IB_CMP_AND_SWAP_OP: {
		DAT_UINT64 cmp = va_arg(args, DAT_UINT64);
		DAT_UINT64 swap = va_arg(args, DAT_UINT64);
		DAT_LMR_TRIPLET *lbuf = va_arg(args, DAT_LMR_TRIPLET *);
		DAT_DTO_COOKIE cookie = va_arg(args, DAT_DTO_COOKIE);
		const DAT_RMR_TRIPLET *remote =
		        va_arg(args, const DAT_RMR_TRIPLET *);
		DAT_COMPLETION_FLAGS flags = va_arg(args, DAT_COMPLETION_FLAGS);

		return dofi_ext_atomic(handle, DOFI_OP_EXT_CSWAP, swap, cmp,
		                       lbuf, cookie, remote, flags);
	}
	case DAT_IB_QUERY_COUNTERS_OP: {
		int which = va_arg(args, int);
		DAT_UINT64 *out = va_arg(args, DAT_UINT64 *);
		int reset = va_arg(args, int);

		return dofi_ext_query_counters(o, which, out, reset);
	}
	case DAT_IB_PRINT_COUNTERS_OP: {
		int which = va_arg(args, int);
		int reset = va_arg(args, int);

		return dofi_ext_print_counters(o, which, reset);
	}
	case DAT_IB_START_COUNTERS_OP:
	case DAT_IB_STOP_COUNTERS_OP:
		/* The DAT_IA_COUNTER_TYPE: every group counts alike. */
		(void)va_arg(args, int);
		return dofi_ext_run_counters(
		        o, (int)op == DAT_IB_START_COUNTERS_OP);
	case DAT_IB_CLOSE_QUERY_OP:
		if (o->type != DOFI_OBJ_IA)
			return DAT_ERROR(DAT_INVALID_HANDLE,
			                 DAT_INVALID_HANDLE_IA);
		return dofi_ia_close(handle, DAT_CLOSE_ABRUPT_FLAG);
	case DAT_IB_UD_SEND_OP:
	case DAT_IB_UD_CM_FREE_OP:
	case DAT_IB_UD_AH_FREE_OP:
		return dofi_ext_unsupported(op, "UD (no RDM backend yet)");
	default:
		if ((int)op >= DAT_IB_COLLECTIVE_CREATE_MEMBER_OP &&
		    (int)op <= DAT_IB_COLLECTIVE_BARRIER_OP)
			return dofi_ext_unsupported(op, "a collective");
		dof_info(DOFI_LOG, "dat_extension_op %d: no such operation",
		         (int)op);
		return DAT_ERROR(DAT_NOT_IMPLEMENTED, 0);
	}
}
