/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * Protection zones, LMRs and (emulated) RMRs.
 *
 * A PZ is a libfabric domain (a PD on verbs): its LMRs and RMR windows are
 * registered there and its EPs open their endpoints there, and keys are
 * only valid in their domain, so a peer cannot reach a PZ's memory through
 * an EP of another PZ. The first PZ takes the IA's domain; a freed PZ
 * leaves its (empty) domain to the next.
 *
 * lmr_context is our own 32-bit index (20 bits of slot, 12 of generation)
 * into a chunked table that posts read without a lock; rmr_context is the
 * libfabric key the peer uses: ours (< 2^32) where the provider takes
 * application keys, the provider's where it insists (FI_MR_PROV_KEY, 4-byte
 * keys on verbs and EFA). An RMR bind registers the window as its own
 * memory region with its own key and only the rights the bind grants.
 */
#include "config.h"

#define DOFI_LOG_COMP "mem"

#include <stdlib.h>
#include <string.h>

#include "dofi.h"
#include "dofi_fast.h"

/* ---- domains ------------------------------------------------------------- */

int dofi_dom_open(dofi_ia_t *ia, dofi_dom_t *dom)
{
	struct fi_cq_attr cq_attr = {
	        .size = 64,
	        .format = FI_CQ_FORMAT_DATA,
	        .wait_obj = FI_WAIT_NONE,
	};
	int rc;

	rc = DOFI_NOPIPE(fi_domain(ia->fabric, ia->info, &dom->domain, NULL));
	if (rc != 0)
		goto err;
	rc = fi_cq_open(dom->domain, &cq_attr, &dom->null_cq, NULL);
	if (rc != 0)
		goto err_domain;
	return 0;

err_domain:
	fi_close(&dom->domain->fid);
err:
	dom->domain = NULL;
	dom->null_cq = NULL;
	dof_warn(DOFI_LOG, "opening a %s domain: %s",
	         ia->info->fabric_attr->prov_name, fi_strerror(-rc));
	return rc;
}

/* Every CQ and endpoint in it is closed already. */
void dofi_dom_close(dofi_dom_t *dom)
{
	int rc;

	if (dom->null_cq != NULL)
		fi_close(&dom->null_cq->fid);
	if (dom->domain != NULL) {
		rc = fi_close(&dom->domain->fid);
		if (rc != 0)
			dof_warn(DOFI_LOG, "closing domain %u: %s", dom->index,
			         fi_strerror(-rc));
	}
	dom->null_cq = NULL;
	dom->domain = NULL;
}

/* ---- PZ ------------------------------------------------------------------ */

/*
 * A domain for a new PZ: the first free one (the IA's first), else a new
 * one at the end of the list. ia->lock held.
 */
static dofi_dom_t *dofi_pz_dom_take(dofi_ia_t *ia, dofi_pz_t *pz)
{
	dofi_dom_t *d, *last = NULL;

	for (d = &ia->dom0; d != NULL; last = d, d = d->next)
		if (d->pz == NULL) {
			d->pz = pz;
			return d;
		}
	d = calloc(1, sizeof(*d));
	if (d == NULL)
		return NULL;
	if (dofi_dom_open(ia, d) != 0) {
		free(d);
		return NULL;
	}
	d->index = last->index + 1;
	d->pz = pz;
	last->next = d;
	dof_debug(DOFI_LOG, "PZ %p: domain %u of its own", (void *)pz,
	          d->index);
	return d;
}

DAT_RETURN dofi_pz_create(DAT_IA_HANDLE h, DAT_PZ_HANDLE *out)
{
	dofi_ia_t *ia = dofi_obj_get(h, DOFI_OBJ_IA, __func__);
	dofi_pz_t *pz;

	if (ia == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	if (out == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	pthread_mutex_lock(&ia->lock);
	pz = dofi_obj_alloc_locked(ia, DOFI_OBJ_PZ, sizeof(*pz),
	                           ia->obj.provider);
	if (pz == NULL)
		goto err_unlock;
	pz->dom = dofi_pz_dom_take(ia, pz);
	if (pz->dom == NULL)
		goto err_free;
	pthread_mutex_unlock(&ia->lock);
	*out = (DAT_PZ_HANDLE)pz;
	return DAT_SUCCESS;

err_free:
	dofi_obj_free(pz);
err_unlock:
	pthread_mutex_unlock(&ia->lock);
	return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES,
	                 DAT_RESOURCE_PROTECTION_DOMAIN);
}

DAT_RETURN dofi_pz_query(DAT_PZ_HANDLE h, DAT_PZ_PARAM_MASK mask,
                         DAT_PZ_PARAM *param)
{
	dofi_pz_t *pz = dofi_obj_get(h, DOFI_OBJ_PZ, __func__);

	if (pz == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ);
	if (param == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	if (mask & DAT_PZ_FIELD_IA_HANDLE)
		param->ia_handle = dofi_ia_consumer_handle(pz->obj.ia);
	return DAT_SUCCESS;
}

DAT_RETURN dofi_pz_free(DAT_PZ_HANDLE h)
{
	dofi_pz_t *pz = dofi_obj_get(h, DOFI_OBJ_PZ, __func__);
	dofi_ia_t *ia;

	if (pz == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ);
	ia = pz->obj.ia;
	pthread_mutex_lock(&ia->lock);
	if (atomic_load(&pz->nref) > 0) {
		pthread_mutex_unlock(&ia->lock);
		dof_warn(DOFI_LOG,
		         "dat_pz_free: %d LMR/RMR/EP still use the PZ",
		         atomic_load(&pz->nref));
		return DAT_ERROR(DAT_INVALID_STATE,
		                 DAT_INVALID_STATE_PZ_IN_USE);
	}
	/* No MR and no endpoint is left in it: the next PZ may have it. */
	pz->dom->pz = NULL;
	dofi_obj_free(pz);
	pthread_mutex_unlock(&ia->lock);
	return DAT_SUCCESS;
}

/* ---- LMR table ----------------------------------------------------------- */

/* Give the LMR a context and publish it. ia->lock held. */
static dof_status_t dofi_lmr_table_add(dofi_ia_t *ia, dofi_lmr_t *lmr)
{
	uint32_t i, slot = 0;

	for (i = 1; i < DOFI_LMR_SLOTS; i++) {
		uint32_t cand = (ia->lmr_next + i) % DOFI_LMR_SLOTS;
		dofi_lmr_t **chunk;

		if (cand == 0)
			continue;
		chunk = ia->lmr_chunks[cand / DOFI_LMR_CHUNK];
		if (chunk == NULL) {
			chunk = calloc(DOFI_LMR_CHUNK, sizeof(*chunk));
			if (chunk == NULL)
				return DOF_ERR_NO_MEMORY;
			__atomic_store_n(&ia->lmr_chunks[cand / DOFI_LMR_CHUNK],
			                 chunk, __ATOMIC_RELEASE);
		}
		if (chunk[cand % DOFI_LMR_CHUNK] == NULL) {
			slot = cand;
			break;
		}
	}
	if (slot == 0)
		return DOF_ERR_NO_MEMORY;
	ia->lmr_next = slot;
	lmr->lmr_context = slot | ((atomic_fetch_add(&ia->key_next, 1) & 0xfffu)
	                           << DOFI_LMR_SLOT_BITS);
	__atomic_store_n(
	        &ia->lmr_chunks[slot / DOFI_LMR_CHUNK][slot % DOFI_LMR_CHUNK],
	        lmr, __ATOMIC_RELEASE);
	return DOF_OK;
}

static void dofi_lmr_table_del(dofi_ia_t *ia, dofi_lmr_t *lmr)
{
	uint32_t slot = lmr->lmr_context & DOFI_LMR_SLOT_MASK;

	__atomic_store_n(
	        &ia->lmr_chunks[slot / DOFI_LMR_CHUNK][slot % DOFI_LMR_CHUNK],
	        NULL, __ATOMIC_RELEASE);
}

/*
 * Register [addr, addr+len) in the PZ's domain with the access DAT
 * privileges grant. The key is unique in the IA whatever the domain.
 */
static int dofi_mr_reg(dofi_ia_t *ia, dofi_pz_t *pz, uintptr_t addr, size_t len,
                       DAT_MEM_PRIV_FLAGS priv, struct fid_mr **mr,
                       DAT_RMR_CONTEXT *rkey)
{
	uint64_t access = 0, key = 0;
	int rc;

	if (priv & DAT_MEM_PRIV_LOCAL_READ_FLAG)
		access |= FI_SEND | FI_WRITE;
	if (priv & DAT_MEM_PRIV_LOCAL_WRITE_FLAG)
		access |= FI_RECV | FI_READ;
	if (priv & DAT_MEM_PRIV_REMOTE_READ_FLAG)
		access |= FI_REMOTE_READ;
	if (priv & DAT_MEM_PRIV_REMOTE_WRITE_FLAG)
		access |= FI_REMOTE_WRITE;
	/* The IB extension's atomics read and write the target. */
	if (priv & DAT_IB_MEM_PRIV_REMOTE_ATOMIC)
		access |= FI_REMOTE_READ | FI_REMOTE_WRITE;
	/* Local DTOs go through our own checks; keep the MR usable. */
	access |= FI_SEND | FI_RECV | FI_READ | FI_WRITE;
	/*
	 * A peer may read or write this memory while the consumer only
	 * polls it (or computes): libfabric must make progress without it.
	 */
	if (access & (FI_REMOTE_READ | FI_REMOTE_WRITE))
		dofi_progress_need(ia, "memory open to RDMA");
	if (!ia->prov_key)
		key = atomic_fetch_add(&ia->key_next, 1) + 1;
	rc = fi_mr_reg(pz->dom->domain, (void *)addr, len ? len : 1, access, 0,
	               key, 0, mr, NULL);
	if (rc != 0) {
		dof_warn(DOFI_LOG, "fi_mr_reg(%p, %zu): %s", (void *)addr, len,
		         fi_strerror(-rc));
		return rc;
	}
	key = fi_mr_key(*mr);
	if (key > UINT32_MAX) {
		dof_warn(DOFI_LOG,
		         "memory key %#llx does not fit DAT's 32-bit "
		         "rmr_context",
		         (unsigned long long)key);
		fi_close(&(*mr)->fid);
		return -FI_EKEYREJECTED;
	}
	*rkey = (DAT_RMR_CONTEXT)key;
	return 0;
}

static DAT_RETURN dofi_priv_check(DAT_MEM_PRIV_FLAGS priv)
{
	if (priv & ~(DAT_MEM_PRIV_FLAGS)(DAT_MEM_PRIV_ALL_FLAG |
	                                 DAT_IB_MEM_PRIV_REMOTE_ATOMIC))
		return DAT_ERROR(DAT_INVALID_PARAMETER, 0);
	return DAT_SUCCESS;
}

DAT_RETURN dofi_lmr_create(DAT_IA_HANDLE h, DAT_MEM_TYPE type,
                           DAT_REGION_DESCRIPTION region, DAT_VLEN length,
                           DAT_PZ_HANDLE pz_h, DAT_MEM_PRIV_FLAGS priv,
                           DAT_VA_TYPE va_type, DAT_LMR_HANDLE *lmr_out,
                           DAT_LMR_CONTEXT *lctx, DAT_RMR_CONTEXT *rctx,
                           DAT_VLEN *reg_len, DAT_VADDR *reg_addr)
{
	dofi_ia_t *ia = dofi_obj_get(h, DOFI_OBJ_IA, __func__);
	dofi_lmr_t *lmr, *from = NULL;
	dofi_pz_t *pz;
	uintptr_t base;
	int rc;

	if (ia == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	pz = dofi_obj_get(pz_h, DOFI_OBJ_PZ, __func__);
	if (pz == NULL || pz->obj.ia != ia)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ);
	if (lmr_out == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG8);
	if (dofi_priv_check(priv) != DAT_SUCCESS)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG6);
	if (va_type != DAT_VA_TYPE_VA) {
		dof_info(DOFI_LOG, "dat_lmr_create: zero-based LMRs are not "
		                   "offered");
		return DAT_ERROR(DAT_MODEL_NOT_SUPPORTED, 0);
	}
	switch (type) {
	case DAT_MEM_TYPE_VIRTUAL:
		if (region.for_va == NULL || length == 0)
			return DAT_ERROR(DAT_INVALID_PARAMETER,
			                 region.for_va ? DAT_INVALID_ARG4
			                               : DAT_INVALID_ARG3);
		base = (uintptr_t)region.for_va;
		break;
	case DAT_MEM_TYPE_LMR:
		from = dofi_obj_get(region.for_lmr_handle, DOFI_OBJ_LMR,
		                    __func__);
		if (from == NULL || from->obj.ia != ia)
			return DAT_ERROR(DAT_INVALID_HANDLE,
			                 DAT_INVALID_HANDLE_LMR);
		base = from->base;
		length = from->length;
		break;
	case DAT_MEM_TYPE_SHARED_VIRTUAL:
		dof_info(DOFI_LOG, "dat_lmr_create: shared virtual memory is "
		                   "not offered");
		return DAT_ERROR(DAT_MODEL_NOT_SUPPORTED, 0);
	default:
		dof_warn(DOFI_LOG, "dat_lmr_create: %#x is not a memory type",
		         (unsigned)type);
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	}

	lmr = dofi_obj_alloc(ia, DOFI_OBJ_LMR, sizeof(*lmr), ia->obj.provider);
	if (lmr == NULL)
		return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES,
		                 DAT_RESOURCE_MEMORY);
	lmr->pz = pz;
	lmr->mem_type = type;
	lmr->region = region;
	lmr->priv = priv;
	lmr->va_type = va_type;
	lmr->base = base;
	lmr->length = length;
	rc = dofi_mr_reg(ia, pz, base, length, priv, &lmr->mr,
	                 &lmr->rmr_context);
	if (rc != 0)
		goto err_free;
	lmr->desc = fi_mr_desc(lmr->mr);
	pthread_mutex_lock(&ia->lock);
	if (dofi_lmr_table_add(ia, lmr) != DOF_OK) {
		pthread_mutex_unlock(&ia->lock);
		fi_close(&lmr->mr->fid);
		rc = -FI_ENOMEM;
		goto err_free;
	}
	atomic_fetch_add(&pz->nref, 1);
	if (from != NULL) {
		lmr->shared_from = from;
		atomic_fetch_add(&from->nref, 1);
	}
	pthread_mutex_unlock(&ia->lock);

	*lmr_out = (DAT_LMR_HANDLE)lmr;
	if (lctx)
		*lctx = lmr->lmr_context;
	if (rctx)
		*rctx = lmr->rmr_context;
	if (reg_len)
		*reg_len = length;
	if (reg_addr)
		*reg_addr = (DAT_VADDR)base;
	return DAT_SUCCESS;

err_free:
	pthread_mutex_lock(&ia->lock);
	dofi_obj_free(lmr);
	pthread_mutex_unlock(&ia->lock);
	return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES,
	                 DAT_RESOURCE_MEMORY_REGION);
}

DAT_RETURN dofi_lmr_query(DAT_LMR_HANDLE h, DAT_LMR_PARAM_MASK mask,
                          DAT_LMR_PARAM *p)
{
	dofi_lmr_t *lmr = dofi_obj_get(h, DOFI_OBJ_LMR, __func__);

	if (lmr == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_LMR);
	if (p == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	(void)mask; /* every field is cheap: fill them all */
	p->ia_handle = dofi_ia_consumer_handle(lmr->obj.ia);
	p->mem_type = lmr->mem_type;
	p->region_desc = lmr->region;
	p->length = lmr->length;
	p->pz_handle = (DAT_PZ_HANDLE)lmr->pz;
	p->mem_priv = lmr->priv;
	p->va_type = lmr->va_type;
	p->lmr_context = lmr->lmr_context;
	p->rmr_context = lmr->rmr_context;
	p->registered_size = lmr->length;
	p->registered_address = (DAT_VADDR)lmr->base;
	return DAT_SUCCESS;
}

/* ia->lock held. */
static void dofi_lmr_destroy(dofi_lmr_t *lmr)
{
	dofi_ia_t *ia = lmr->obj.ia;

	dofi_lmr_table_del(ia, lmr);
	fi_close(&lmr->mr->fid);
	atomic_fetch_sub(&lmr->pz->nref, 1);
	if (lmr->shared_from != NULL)
		atomic_fetch_sub(&lmr->shared_from->nref, 1);
	dofi_obj_free(lmr);
}

DAT_RETURN dofi_lmr_free(DAT_LMR_HANDLE h)
{
	dofi_lmr_t *lmr = dofi_obj_get(h, DOFI_OBJ_LMR, __func__);
	dofi_ia_t *ia;

	if (lmr == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_LMR);
	ia = lmr->obj.ia;
	pthread_mutex_lock(&ia->lock);
	if (atomic_load(&lmr->nref) > 0) {
		pthread_mutex_unlock(&ia->lock);
		dof_warn(DOFI_LOG, "dat_lmr_free: the LMR is shared or has "
		                   "bound RMRs");
		return DAT_ERROR(DAT_INVALID_STATE,
		                 DAT_INVALID_STATE_LMR_IN_USE);
	}
	dofi_lmr_destroy(lmr);
	pthread_mutex_unlock(&ia->lock);
	return DAT_SUCCESS;
}

static DAT_RETURN dofi_lmr_sync(DAT_IA_HANDLE h, const DAT_LMR_TRIPLET *segs,
                                DAT_VLEN n, const char *func)
{
	dofi_ia_t *ia = dofi_obj_get(h, DOFI_OBJ_IA, func);
	DAT_VLEN i;

	if (ia == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	if (segs == NULL && n > 0)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	for (i = 0; i < n; i++)
		if (dofi_lmr_lookup(ia, segs[i].lmr_context) == NULL)
			return DAT_ERROR(DAT_INVALID_PARAMETER,
			                 DAT_INVALID_ARG2);
	/* Coherent memory (lmr_sync_req is false): nothing to do. */
	return DAT_SUCCESS;
}

DAT_RETURN dofi_lmr_sync_rdma_read(DAT_IA_HANDLE h, const DAT_LMR_TRIPLET *segs,
                                   DAT_VLEN n)
{
	return dofi_lmr_sync(h, segs, n, __func__);
}

DAT_RETURN dofi_lmr_sync_rdma_write(DAT_IA_HANDLE h,
                                    const DAT_LMR_TRIPLET *segs, DAT_VLEN n)
{
	return dofi_lmr_sync(h, segs, n, __func__);
}

/* ---- RMR ----------------------------------------------------------------- */

DAT_RETURN dofi_rmr_create(DAT_PZ_HANDLE pz_h, DAT_RMR_HANDLE *out)
{
	dofi_pz_t *pz = dofi_obj_get(pz_h, DOFI_OBJ_PZ, __func__);
	dofi_rmr_t *rmr;

	if (pz == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ);
	if (out == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	rmr = dofi_obj_alloc(pz->obj.ia, DOFI_OBJ_RMR, sizeof(*rmr),
	                     pz->obj.provider);
	if (rmr == NULL)
		return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES,
		                 DAT_RESOURCE_MEMORY);
	rmr->pz = pz;
	atomic_fetch_add(&pz->nref, 1);
	*out = (DAT_RMR_HANDLE)rmr;
	return DAT_SUCCESS;
}

DAT_RETURN dofi_rmr_query(DAT_RMR_HANDLE h, DAT_RMR_PARAM_MASK mask,
                          DAT_RMR_PARAM *p)
{
	dofi_rmr_t *rmr = dofi_obj_get(h, DOFI_OBJ_RMR, __func__);

	if (rmr == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_RMR);
	if (p == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	(void)mask;
	p->ia_handle = dofi_ia_consumer_handle(rmr->obj.ia);
	p->pz_handle = (DAT_PZ_HANDLE)rmr->pz;
	p->lmr_triplet = rmr->triplet;
	p->mem_priv = rmr->priv;
	p->rmr_context = rmr->rmr_context;
	p->rmr_scope = DAT_RMR_SCOPE_EP;
	p->va_type = rmr->va_type;
	return DAT_SUCCESS;
}

/* Revoke the bound window, if any. ia->lock held. */
static void dofi_rmr_unbind_locked(dofi_rmr_t *rmr)
{
	if (rmr->mr != NULL) {
		fi_close(&rmr->mr->fid);
		rmr->mr = NULL;
	}
	if (rmr->lmr != NULL) {
		atomic_fetch_sub(&rmr->lmr->nref, 1);
		rmr->lmr = NULL;
	}
	memset(&rmr->triplet, 0, sizeof(rmr->triplet));
	rmr->priv = 0;
	rmr->ep = NULL;
}

DAT_RETURN dofi_rmr_bind(DAT_RMR_HANDLE h, DAT_LMR_HANDLE lmr_h,
                         const DAT_LMR_TRIPLET *trip, DAT_MEM_PRIV_FLAGS priv,
                         DAT_VA_TYPE va_type, DAT_EP_HANDLE ep_h,
                         DAT_RMR_COOKIE cookie, DAT_COMPLETION_FLAGS flags,
                         DAT_RMR_CONTEXT *ctx_out)
{
	dofi_rmr_t *rmr = dofi_obj_get(h, DOFI_OBJ_RMR, __func__);
	dofi_lmr_t *lmr = NULL;
	dofi_ep_t *ep;
	dofi_ia_t *ia;
	DAT_RMR_CONTEXT key = 0;
	DAT_EVENT ev;
	int unbind, rc;

	if (rmr == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_RMR);
	ia = rmr->obj.ia;
	ep = dofi_obj_get(ep_h, DOFI_OBJ_EP, __func__);
	if (ep == NULL || ep->obj.ia != ia)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	if (trip == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	if (dofi_priv_check(priv) != DAT_SUCCESS)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG4);
	if (va_type != DAT_VA_TYPE_VA)
		return DAT_ERROR(DAT_MODEL_NOT_SUPPORTED, 0);
	/*
	 * A zero length unbinds. Without an LMR handle (the DAT 1.2 call has
	 * none) the triplet's lmr_context names the LMR.
	 */
	unbind = trip->segment_length == 0;
	if (!unbind) {
		lmr = lmr_h == DAT_HANDLE_NULL
		              ? dofi_lmr_lookup(ia, trip->lmr_context)
		              : dofi_obj_get(lmr_h, DOFI_OBJ_LMR, __func__);
		if (lmr == NULL || lmr->obj.ia != ia)
			return DAT_ERROR(DAT_INVALID_HANDLE,
			                 DAT_INVALID_HANDLE_LMR);
		if (lmr->pz != rmr->pz || ep->pz != rmr->pz) {
			dof_warn(DOFI_LOG, "dat_rmr_bind: the RMR, LMR and EP "
			                   "are not all in one PZ");
			return DAT_ERROR(DAT_PROTECTION_VIOLATION, 0);
		}
		if (trip->lmr_context != lmr->lmr_context ||
		    trip->virtual_address < lmr->base ||
		    trip->segment_length > lmr->length ||
		    trip->virtual_address - lmr->base >
		            lmr->length - trip->segment_length)
			return DAT_ERROR(DAT_LENGTH_ERROR, 0);
		/* A window grants at most what its LMR allows. */
		if ((priv & ~lmr->priv) & (DAT_MEM_PRIV_REMOTE_READ_FLAG |
		                           DAT_MEM_PRIV_REMOTE_WRITE_FLAG))
			return DAT_ERROR(DAT_PRIVILEGES_VIOLATION, 0);
	}
	if (atomic_load(&ep->state) != DAT_EP_STATE_CONNECTED)
		return DAT_ERROR(
		        DAT_INVALID_STATE,
		        dofi_ep_state_subtype(atomic_load(&ep->state)));

	pthread_mutex_lock(&ia->lock);
	dofi_rmr_unbind_locked(rmr);
	if (!unbind) {
		struct fid_mr *mr;

		rc = dofi_mr_reg(ia, rmr->pz, (uintptr_t)trip->virtual_address,
		                 trip->segment_length, priv, &mr, &key);
		if (rc != 0) {
			pthread_mutex_unlock(&ia->lock);
			return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES,
			                 DAT_RESOURCE_MEMORY_REGION);
		}
		rmr->mr = mr;
		rmr->lmr = lmr;
		atomic_fetch_add(&lmr->nref, 1);
		rmr->triplet = *trip;
		rmr->priv = priv;
		rmr->ep = ep;
	}
	rmr->va_type = va_type;
	rmr->rmr_context = key;
	pthread_mutex_unlock(&ia->lock);

	if (ctx_out != NULL)
		*ctx_out = key;
	if (!(flags & DAT_COMPLETION_SUPPRESS_FLAG) && ep->req_evd != NULL) {
		memset(&ev, 0, sizeof(ev));
		ev.event_number = DAT_RMR_BIND_COMPLETION_EVENT;
		ev.evd_handle = (DAT_EVD_HANDLE)ep->req_evd;
		ev.event_data.rmr_completion_event_data.rmr_handle = h;
		ev.event_data.rmr_completion_event_data.user_cookie = cookie;
		ev.event_data.rmr_completion_event_data.status =
		        DAT_RMR_BIND_SUCCESS;
		/* After the requests posted before it, as on InfiniBand. */
		if (dofi_dto_post_after(ep, &ev) != DOF_OK)
			(void)dofi_evd_post(ep->req_evd, &ev);
	}
	return DAT_SUCCESS;
}

DAT_RETURN dofi_rmr_free(DAT_RMR_HANDLE h)
{
	dofi_rmr_t *rmr = dofi_obj_get(h, DOFI_OBJ_RMR, __func__);
	dofi_ia_t *ia;

	if (rmr == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_RMR);
	ia = rmr->obj.ia;
	pthread_mutex_lock(&ia->lock);
	dofi_rmr_unbind_locked(rmr);
	atomic_fetch_sub(&rmr->pz->nref, 1);
	dofi_obj_free(rmr);
	pthread_mutex_unlock(&ia->lock);
	return DAT_SUCCESS;
}

void dofi_mem_release_all(dofi_ia_t *ia)
{
	dofi_list_t *e;

	while (!dofi_list_empty(&ia->objs[DOFI_OBJ_RMR])) {
		dofi_rmr_t *rmr;

		e = ia->objs[DOFI_OBJ_RMR].next;
		rmr = dofi_container_of(e, dofi_rmr_t, obj.link);
		dofi_rmr_unbind_locked(rmr);
		atomic_fetch_sub(&rmr->pz->nref, 1);
		dofi_obj_free(rmr);
	}
	/* Shared LMRs before the LMRs they share. */
	for (;;) {
		dofi_lmr_t *victim = NULL;

		for (e = ia->objs[DOFI_OBJ_LMR].next;
		     e != &ia->objs[DOFI_OBJ_LMR]; e = e->next) {
			dofi_lmr_t *l =
			        dofi_container_of(e, dofi_lmr_t, obj.link);

			if (atomic_load(&l->nref) == 0) {
				victim = l;
				break;
			}
		}
		if (victim == NULL)
			break;
		dofi_lmr_destroy(victim);
	}
}
