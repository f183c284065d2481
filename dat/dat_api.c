/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * The DAT 2.0 entry points of libdat2: IA handles are translated from the
 * consumer's small integers to the provider's pointers; every other handle
 * is a provider object whose first field is its DAT_PROVIDER table, and the
 * call goes straight through that table once that word has been found among
 * the tables of the open IAs (datr_handle_obj_table): NULL, small integers,
 * misaligned values and readable memory that is no object are refused with
 * DAT_INVALID_HANDLE; a pointer into unmapped memory still faults.
 */
#include "config.h"

#include <stdarg.h>
#include <string.h>

#include "datr.h"
#include "dof/log.h"

/* Why an object handle was refused, logged; the DAT_INVALID_HANDLE code. */
static DAT_RETURN datr_invalid(const char *func, const void *handle,
                               DAT_RETURN_SUBTYPE sub)
{
	int want_ia = sub == DAT_INVALID_HANDLE_IA;

	if (handle == NULL)
		dof_warn(DATR_LOG, "%s: NULL handle", func);
	else if (!want_ia && datr_handle_is_ia_index(handle))
		dof_warn(DATR_LOG,
		         "%s: handle %p is an IA handle where another "
		         "object's belongs",
		         func, handle);
	else if (datr_handle_is_ia_index(handle))
		dof_warn(DATR_LOG, "%s: IA handle %lu is not open", func,
		         (unsigned long)(uintptr_t)handle);
	else if (want_ia)
		dof_warn(DATR_LOG,
		         "%s: %p is not an IA handle (dat_ia_open returns a "
		         "small integer)",
		         func, handle);
	else if (!datr_handle_obj_shaped(handle))
		dof_warn(DATR_LOG,
		         "%s: %p cannot be a DAT handle (misaligned or "
		         "outside user space)",
		         func, handle);
	else
		dof_warn(DATR_LOG,
		         "%s: %p is not a DAT object handle: its first word "
		         "is no open IA's provider table",
		         func, handle);
	return DAT_ERROR(DAT_INVALID_HANDLE, sub);
}

static DAT_RETURN datr_missing(const char *func, const DAT_PROVIDER *prov)
{
	dof_warn(DATR_LOG, "%s: provider %s does not implement this call", func,
	         prov->device_name ? prov->device_name : "?");
	return DAT_ERROR(DAT_NOT_IMPLEMENTED, 0);
}

/* Dispatch on an object handle. */
#define DATR_OBJ_CALL(_h, _sub, _fn, ...)                              \
	do {                                                           \
		const DAT_PROVIDER *prov_ = datr_handle_obj_table(_h); \
		if (prov_ == NULL)                                     \
			return datr_invalid(__func__, (_h), (_sub));   \
		if (prov_->_fn == NULL)                                \
			return datr_missing(__func__, prov_);          \
		return prov_->_fn(__VA_ARGS__);                        \
	} while (0)

/* Dispatch on an IA handle, translated to the provider's pointer. */
#define DATR_IA_CALL(_ia, _fn, ...)                                    \
	do {                                                           \
		datr_ia_slot_t slot_;                                  \
		if (datr_handle_lookup((_ia), &slot_) != DOF_OK)       \
			return datr_invalid(__func__, (_ia),           \
			                    DAT_INVALID_HANDLE_IA);    \
		if (slot_.provider->_fn == NULL)                       \
			return datr_missing(__func__, slot_.provider); \
		return slot_.provider->_fn(slot_.raw, __VA_ARGS__);    \
	} while (0)

/*
 * A generic DAT_HANDLE may be an IA (small integer) or an object: return
 * its provider table and set *raw to the provider's view of the handle;
 * NULL (logged) when the registry can tell the handle is bad.
 */
static const DAT_PROVIDER *datr_resolve(const char *func, DAT_HANDLE handle,
                                        DAT_HANDLE *raw)
{
	const DAT_PROVIDER *prov;
	datr_ia_slot_t slot;

	if (handle != NULL && !datr_handle_is_ia_index(handle)) {
		prov = datr_handle_obj_table(handle);
		if (prov == NULL)
			(void)datr_invalid(func, handle, 0);
		*raw = handle;
		return prov;
	}
	if (handle == NULL || datr_handle_lookup(handle, &slot) != DOF_OK) {
		(void)datr_invalid(func, handle, DAT_INVALID_HANDLE_IA);
		return NULL;
	}
	*raw = slot.raw;
	return slot.provider;
}

/* Dispatch on a generic handle. */
#define DATR_ANY_CALL(_h, _fn, ...)                              \
	do {                                                     \
		const DAT_PROVIDER *prov_;                       \
		DAT_HANDLE raw_;                                 \
		prov_ = datr_resolve(__func__, (_h), &raw_);     \
		if (prov_ == NULL)                               \
			return DAT_ERROR(DAT_INVALID_HANDLE, 0); \
		if (prov_->_fn == NULL)                          \
			return datr_missing(__func__, prov_);    \
		return prov_->_fn(raw_, __VA_ARGS__);            \
	} while (0)

/* ---- IA ------------------------------------------------------------------ */

/*
 * The provider opened raw for IA name (what: the call, for the log):
 * enter it in the handle table, its index in *idx. A handle the table
 * cannot take is closed again; the caller drops its provider reference on
 * any failure.
 */
static DAT_RETURN datr_ia_enter(const char *what, const char *name,
                                const DAT_PROVIDER *prov,
                                datr_conf_entry_t *entry, DAT_IA_HANDLE raw,
                                DAT_IA_HANDLE *idx)
{
	datr_ia_slot_t slot;

	if (raw == NULL || datr_handle_is_ia_index(raw)) {
		dof_error(DATR_LOG,
		          "%s(%s): provider returned an unusable IA handle %p",
		          what, name, (void *)raw);
		return DAT_ERROR(DAT_INTERNAL_ERROR, 0);
	}
	slot.raw = raw;
	slot.provider = prov;
	slot.entry = entry;
	if (datr_handle_alloc(&slot, idx) != DOF_OK) {
		if (prov->ia_close_func != NULL)
			(void)prov->ia_close_func(raw, DAT_CLOSE_ABRUPT_FLAG);
		return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES,
		                 DAT_RESOURCE_MEMORY);
	}
	return DAT_SUCCESS;
}

DAT_RETURN DAT_API dat_ia_openv(const DAT_NAME_PTR name, DAT_COUNT qlen,
                                DAT_EVD_HANDLE *async_evd,
                                DAT_IA_HANDLE *ia_handle, DAT_UINT32 major,
                                DAT_UINT32 minor, DAT_BOOLEAN thread_safety)
{
	const DAT_PROVIDER *prov;
	datr_conf_entry_t *entry;
	DAT_IA_HANDLE raw = NULL, idx;
	DAT_RETURN ret;

	if (name == NULL || memchr(name, '\0', DAT_NAME_MAX_LENGTH) == NULL) {
		dof_warn(DATR_LOG, "dat_ia_open: IA name is NULL or longer "
		                   "than DAT_NAME_MAX_LENGTH");
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG1);
	}
	if (async_evd == NULL) {
		dof_warn(DATR_LOG,
		         "dat_ia_open(%s): async_evd_handle pointer "
		         "is NULL",
		         name);
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	}
	if (ia_handle == NULL) {
		dof_warn(DATR_LOG, "dat_ia_open(%s): ia_handle pointer is NULL",
		         name);
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG4);
	}
	if (thread_safety != DAT_TRUE && thread_safety != DAT_FALSE) {
		dof_warn(DATR_LOG,
		         "dat_ia_open(%s): thread_safety %d is "
		         "neither DAT_TRUE nor DAT_FALSE",
		         name, (int)thread_safety);
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG7);
	}
	(void)datr_registry_conf();

	ret = datr_provider_get(name, major, minor, &prov, &entry);
	if (ret != DAT_SUCCESS)
		return ret;
	if (prov->ia_open_func == NULL) {
		ret = datr_missing(__func__, prov);
		goto err_put;
	}
	ret = prov->ia_open_func(name, qlen, async_evd, &raw);
	if (ret != DAT_SUCCESS)
		goto err_put;
	ret = datr_ia_enter("dat_ia_open", name, prov, entry, raw, &idx);
	if (ret != DAT_SUCCESS)
		goto err_put;
	dof_debug(DATR_LOG, "dat_ia_open(%s) = IA %lu", name,
	          (unsigned long)(uintptr_t)idx);
	*ia_handle = idx;
	return DAT_SUCCESS;

err_put:
	datr_provider_put(entry);
	return ret;
}

DAT_RETURN DAT_API dat_ia_close(DAT_IA_HANDLE ia_handle, DAT_CLOSE_FLAGS flags)
{
	datr_ia_slot_t slot;
	DAT_RETURN ret;

	if (datr_handle_lookup(ia_handle, &slot) != DOF_OK)
		return datr_invalid(__func__, ia_handle, DAT_INVALID_HANDLE_IA);
	if (flags != DAT_CLOSE_ABRUPT_FLAG &&
	    flags != DAT_CLOSE_GRACEFUL_FLAG) {
		dof_warn(DATR_LOG,
		         "dat_ia_close: close flags %#x are neither "
		         "abrupt nor graceful",
		         (unsigned)flags);
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	}
	if (slot.provider->ia_close_func == NULL)
		return datr_missing(__func__, slot.provider);
	ret = slot.provider->ia_close_func(slot.raw, flags);
	if (ret != DAT_SUCCESS)
		return ret;
	(void)datr_handle_free(ia_handle);
	datr_provider_put(slot.entry);
	return DAT_SUCCESS;
}

DAT_RETURN DAT_API dat_ia_query(DAT_IA_HANDLE ia, DAT_EVD_HANDLE *async_evd,
                                DAT_IA_ATTR_MASK ia_mask, DAT_IA_ATTR *ia_attr,
                                DAT_PROVIDER_ATTR_MASK prov_mask,
                                DAT_PROVIDER_ATTR *prov_attr)
{
	DATR_IA_CALL(ia, ia_query_func, async_evd, ia_mask, ia_attr, prov_mask,
	             prov_attr);
}

/* ---- generic handles ----------------------------------------------------- */

DAT_RETURN DAT_API dat_set_consumer_context(DAT_HANDLE handle,
                                            DAT_CONTEXT context)
{
	DATR_ANY_CALL(handle, set_consumer_context_func, context);
}

DAT_RETURN DAT_API dat_get_consumer_context(DAT_HANDLE handle,
                                            DAT_CONTEXT *context)
{
	DATR_ANY_CALL(handle, get_consumer_context_func, context);
}

DAT_RETURN DAT_API dat_get_handle_type(DAT_HANDLE handle, DAT_HANDLE_TYPE *type)
{
	DATR_ANY_CALL(handle, get_handle_type_func, type);
}

/*
 * An extension's open operation (op has DAT_OPEN_EXTENSION_BASE set, as
 * dat_ib_open_query): the first argument names the IA. The provider is
 * loaded as for dat_ia_open and called with the name as the handle and
 * the arguments after it, the first of which is where the IA handle goes;
 * the provider's IA is entered in the handle table, so the consumer gets
 * a handle like dat_ia_open's.
 */
static DAT_RETURN datr_extension_open(DAT_EXTENDED_OP op, va_list args)
{
	const DAT_NAME_PTR name = va_arg(args, const DAT_NAME_PTR);
	const DAT_PROVIDER *prov;
	datr_conf_entry_t *entry;
	DAT_HANDLE *ia_handle, raw;
	DAT_IA_HANDLE idx;
	DAT_RETURN ret;
	va_list peek;

	if (name == NULL || memchr(name, '\0', DAT_NAME_MAX_LENGTH) == NULL) {
		dof_warn(DATR_LOG,
		         "dat_extension_op %#x: IA name is NULL or "
		         "longer than DAT_NAME_MAX_LENGTH",
		         (unsigned)op);
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	}
	va_copy(peek, args);
	ia_handle = va_arg(peek, DAT_HANDLE *);
	va_end(peek);
	if (ia_handle == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG4);
	(void)datr_registry_conf();
	ret = datr_provider_get(name, DAT_VERSION_MAJOR, DAT_VERSION_MINOR,
	                        &prov, &entry);
	if (ret != DAT_SUCCESS)
		return ret;
	if (prov->handle_extendedop_func == NULL) {
		ret = datr_missing(__func__, prov);
		goto err_put;
	}
	ret = prov->handle_extendedop_func((DAT_HANDLE)name, op, args);
	if (ret != DAT_SUCCESS)
		goto err_put;
	raw = *ia_handle;
	ret = datr_ia_enter("dat_extension_op", name, prov, entry, raw, &idx);
	if (ret != DAT_SUCCESS)
		goto err_put;
	*ia_handle = idx;
	return DAT_SUCCESS;

err_put:
	datr_provider_put(entry);
	return ret;
}

/*
 * An extension's close operation (DAT_CLOSE_EXTENSION_BASE set, as
 * dat_ib_close_query) on an IA handle: on success the handle and the
 * provider reference go, as after dat_ia_close.
 */
static DAT_RETURN datr_extension_close(DAT_HANDLE handle, DAT_EXTENDED_OP op,
                                       va_list args)
{
	datr_ia_slot_t slot;
	DAT_RETURN ret;

	if (datr_handle_lookup(handle, &slot) != DOF_OK)
		return datr_invalid(__func__, handle, DAT_INVALID_HANDLE_IA);
	if (slot.provider->handle_extendedop_func == NULL)
		return datr_missing(__func__, slot.provider);
	ret = slot.provider->handle_extendedop_func(slot.raw, op, args);
	if (ret != DAT_SUCCESS)
		return ret;
	(void)datr_handle_free(handle);
	datr_provider_put(slot.entry);
	return DAT_SUCCESS;
}

DAT_RETURN DAT_API dat_extension_op(DAT_HANDLE handle, DAT_EXTENDED_OP op, ...)
{
	const DAT_PROVIDER *prov;
	DAT_HANDLE raw;
	DAT_RETURN ret;
	va_list args;

	/*
	 * The bits OFED's registry tests: open by name (the handle does not
	 * count), close an IA.
	 */
	if (op & DAT_OPEN_EXTENSION_BASE) {
		va_start(args, op);
		ret = datr_extension_open(op, args);
		va_end(args);
		return ret;
	}
	if ((op & DAT_CLOSE_EXTENSION_BASE) &&
	    datr_handle_is_ia_index(handle)) {
		va_start(args, op);
		ret = datr_extension_close(handle, op, args);
		va_end(args);
		return ret;
	}
	prov = datr_resolve(__func__, handle, &raw);
	if (prov == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, 0);
	if (prov->handle_extendedop_func == NULL)
		return datr_missing(__func__, prov);
	va_start(args, op);
	ret = prov->handle_extendedop_func(raw, op, args);
	va_end(args);
	return ret;
}

/* ---- CR ------------------------------------------------------------------ */

DAT_RETURN DAT_API dat_cr_query(DAT_CR_HANDLE cr, DAT_CR_PARAM_MASK mask,
                                DAT_CR_PARAM *param)
{
	DATR_OBJ_CALL(cr, DAT_INVALID_HANDLE_CR, cr_query_func, cr, mask,
	              param);
}

DAT_RETURN DAT_API dat_cr_accept(DAT_CR_HANDLE cr, DAT_EP_HANDLE ep,
                                 DAT_COUNT pdata_size, const DAT_PVOID pdata)
{
	DATR_OBJ_CALL(cr, DAT_INVALID_HANDLE_CR, cr_accept_func, cr, ep,
	              pdata_size, pdata);
}

DAT_RETURN DAT_API dat_cr_reject(DAT_CR_HANDLE cr, DAT_COUNT pdata_size,
                                 const DAT_PVOID pdata)
{
	DATR_OBJ_CALL(cr, DAT_INVALID_HANDLE_CR, cr_reject_func, cr, pdata_size,
	              pdata);
}

DAT_RETURN DAT_API dat_cr_handoff(DAT_CR_HANDLE cr, DAT_CONN_QUAL qual)
{
	DATR_OBJ_CALL(cr, DAT_INVALID_HANDLE_CR, cr_handoff_func, cr, qual);
}

/* ---- EVD ----------------------------------------------------------------- */

DAT_RETURN DAT_API dat_evd_create(DAT_IA_HANDLE ia, DAT_COUNT qlen,
                                  DAT_CNO_HANDLE cno, DAT_EVD_FLAGS flags,
                                  DAT_EVD_HANDLE *evd)
{
	DATR_IA_CALL(ia, evd_create_func, qlen, cno, flags, evd);
}

DAT_RETURN DAT_API dat_evd_query(DAT_EVD_HANDLE evd, DAT_EVD_PARAM_MASK mask,
                                 DAT_EVD_PARAM *param)
{
	DATR_OBJ_CALL(evd, DAT_INVALID_HANDLE_EVD_REQUEST, evd_query_func, evd,
	              mask, param);
}

DAT_RETURN DAT_API dat_evd_modify_cno(DAT_EVD_HANDLE evd, DAT_CNO_HANDLE cno)
{
	DATR_OBJ_CALL(evd, DAT_INVALID_HANDLE_EVD_REQUEST, evd_modify_cno_func,
	              evd, cno);
}

DAT_RETURN DAT_API dat_evd_enable(DAT_EVD_HANDLE evd)
{
	DATR_OBJ_CALL(evd, DAT_INVALID_HANDLE_EVD_REQUEST, evd_enable_func,
	              evd);
}

DAT_RETURN DAT_API dat_evd_disable(DAT_EVD_HANDLE evd)
{
	DATR_OBJ_CALL(evd, DAT_INVALID_HANDLE_EVD_REQUEST, evd_disable_func,
	              evd);
}

DAT_RETURN DAT_API dat_evd_wait(DAT_EVD_HANDLE evd, DAT_TIMEOUT timeout,
                                DAT_COUNT threshold, DAT_EVENT *event,
                                DAT_COUNT *nmore)
{
	DATR_OBJ_CALL(evd, DAT_INVALID_HANDLE_EVD_REQUEST, evd_wait_func, evd,
	              timeout, threshold, event, nmore);
}

DAT_RETURN DAT_API dat_evd_resize(DAT_EVD_HANDLE evd, DAT_COUNT qlen)
{
	DATR_OBJ_CALL(evd, DAT_INVALID_HANDLE_EVD_REQUEST, evd_resize_func, evd,
	              qlen);
}

DAT_RETURN DAT_API dat_evd_post_se(DAT_EVD_HANDLE evd, const DAT_EVENT *event)
{
	DATR_OBJ_CALL(evd, DAT_INVALID_HANDLE_EVD_REQUEST, evd_post_se_func,
	              evd, event);
}

DAT_RETURN DAT_API dat_evd_dequeue(DAT_EVD_HANDLE evd, DAT_EVENT *event)
{
	DATR_OBJ_CALL(evd, DAT_INVALID_HANDLE_EVD_REQUEST, evd_dequeue_func,
	              evd, event);
}

DAT_RETURN DAT_API dat_evd_free(DAT_EVD_HANDLE evd)
{
	DATR_OBJ_CALL(evd, DAT_INVALID_HANDLE_EVD_REQUEST, evd_free_func, evd);
}

DAT_RETURN DAT_API dat_evd_set_unwaitable(DAT_EVD_HANDLE evd)
{
	DATR_OBJ_CALL(evd, DAT_INVALID_HANDLE_EVD_REQUEST,
	              evd_set_unwaitable_func, evd);
}

DAT_RETURN DAT_API dat_evd_clear_unwaitable(DAT_EVD_HANDLE evd)
{
	DATR_OBJ_CALL(evd, DAT_INVALID_HANDLE_EVD_REQUEST,
	              evd_clear_unwaitable_func, evd);
}

/* ---- CNO ----------------------------------------------------------------- */

DAT_RETURN DAT_API dat_cno_create(DAT_IA_HANDLE ia,
                                  DAT_OS_WAIT_PROXY_AGENT agent,
                                  DAT_CNO_HANDLE *cno)
{
	DATR_IA_CALL(ia, cno_create_func, agent, cno);
}

DAT_RETURN DAT_API dat_cno_modify_agent(DAT_CNO_HANDLE cno,
                                        DAT_OS_WAIT_PROXY_AGENT agent)
{
	DATR_OBJ_CALL(cno, DAT_INVALID_HANDLE_CNO, cno_modify_agent_func, cno,
	              agent);
}

DAT_RETURN DAT_API dat_cno_query(DAT_CNO_HANDLE cno, DAT_CNO_PARAM_MASK mask,
                                 DAT_CNO_PARAM *param)
{
	DATR_OBJ_CALL(cno, DAT_INVALID_HANDLE_CNO, cno_query_func, cno, mask,
	              param);
}

DAT_RETURN DAT_API dat_cno_free(DAT_CNO_HANDLE cno)
{
	DATR_OBJ_CALL(cno, DAT_INVALID_HANDLE_CNO, cno_free_func, cno);
}

DAT_RETURN DAT_API dat_cno_wait(DAT_CNO_HANDLE cno, DAT_TIMEOUT timeout,
                                DAT_EVD_HANDLE *evd)
{
	DATR_OBJ_CALL(cno, DAT_INVALID_HANDLE_CNO, cno_wait_func, cno, timeout,
	              evd);
}

/* ---- EP ------------------------------------------------------------------ */

DAT_RETURN DAT_API dat_ep_create(DAT_IA_HANDLE ia, DAT_PZ_HANDLE pz,
                                 DAT_EVD_HANDLE recv_evd,
                                 DAT_EVD_HANDLE request_evd,
                                 DAT_EVD_HANDLE connect_evd,
                                 const DAT_EP_ATTR *attr, DAT_EP_HANDLE *ep)
{
	DATR_IA_CALL(ia, ep_create_func, pz, recv_evd, request_evd, connect_evd,
	             attr, ep);
}

DAT_RETURN DAT_API dat_ep_create_with_srq(
        DAT_IA_HANDLE ia, DAT_PZ_HANDLE pz, DAT_EVD_HANDLE recv_evd,
        DAT_EVD_HANDLE request_evd, DAT_EVD_HANDLE connect_evd,
        DAT_SRQ_HANDLE srq, const DAT_EP_ATTR *attr, DAT_EP_HANDLE *ep)
{
	DATR_IA_CALL(ia, ep_create_with_srq_func, pz, recv_evd, request_evd,
	             connect_evd, srq, attr, ep);
}

DAT_RETURN DAT_API dat_ep_query(DAT_EP_HANDLE ep, DAT_EP_PARAM_MASK mask,
                                DAT_EP_PARAM *param)
{
	DATR_OBJ_CALL(ep, DAT_INVALID_HANDLE_EP, ep_query_func, ep, mask,
	              param);
}

DAT_RETURN DAT_API dat_ep_modify(DAT_EP_HANDLE ep, DAT_EP_PARAM_MASK mask,
                                 const DAT_EP_PARAM *param)
{
	DATR_OBJ_CALL(ep, DAT_INVALID_HANDLE_EP, ep_modify_func, ep, mask,
	              param);
}

DAT_RETURN DAT_API dat_ep_connect(DAT_EP_HANDLE ep, DAT_IA_ADDRESS_PTR addr,
                                  DAT_CONN_QUAL qual, DAT_TIMEOUT timeout,
                                  DAT_COUNT pdata_size, const DAT_PVOID pdata,
                                  DAT_QOS qos, DAT_CONNECT_FLAGS flags)
{
	DATR_OBJ_CALL(ep, DAT_INVALID_HANDLE_EP, ep_connect_func, ep, addr,
	              qual, timeout, pdata_size, pdata, qos, flags);
}

DAT_RETURN DAT_API dat_ep_dup_connect(DAT_EP_HANDLE ep, DAT_EP_HANDLE dup_ep,
                                      DAT_TIMEOUT timeout, DAT_COUNT pdata_size,
                                      const DAT_PVOID pdata, DAT_QOS qos)
{
	DATR_OBJ_CALL(ep, DAT_INVALID_HANDLE_EP, ep_dup_connect_func, ep,
	              dup_ep, timeout, pdata_size, pdata, qos);
}

DAT_RETURN DAT_API dat_ep_disconnect(DAT_EP_HANDLE ep, DAT_CLOSE_FLAGS flags)
{
	DATR_OBJ_CALL(ep, DAT_INVALID_HANDLE_EP, ep_disconnect_func, ep, flags);
}

DAT_RETURN DAT_API dat_ep_post_send(DAT_EP_HANDLE ep, DAT_COUNT nseg,
                                    DAT_LMR_TRIPLET *iov, DAT_DTO_COOKIE cookie,
                                    DAT_COMPLETION_FLAGS flags)
{
	DATR_OBJ_CALL(ep, DAT_INVALID_HANDLE_EP, ep_post_send_func, ep, nseg,
	              iov, cookie, flags);
}

DAT_RETURN DAT_API dat_ep_post_recv(DAT_EP_HANDLE ep, DAT_COUNT nseg,
                                    DAT_LMR_TRIPLET *iov, DAT_DTO_COOKIE cookie,
                                    DAT_COMPLETION_FLAGS flags)
{
	DATR_OBJ_CALL(ep, DAT_INVALID_HANDLE_EP, ep_post_recv_func, ep, nseg,
	              iov, cookie, flags);
}

DAT_RETURN DAT_API dat_ep_post_rdma_read(DAT_EP_HANDLE ep, DAT_COUNT nseg,
                                         DAT_LMR_TRIPLET *iov,
                                         DAT_DTO_COOKIE cookie,
                                         const DAT_RMR_TRIPLET *remote,
                                         DAT_COMPLETION_FLAGS flags)
{
	DATR_OBJ_CALL(ep, DAT_INVALID_HANDLE_EP, ep_post_rdma_read_func, ep,
	              nseg, iov, cookie, remote, flags);
}

DAT_RETURN DAT_API dat_ep_post_rdma_write(DAT_EP_HANDLE ep, DAT_COUNT nseg,
                                          DAT_LMR_TRIPLET *iov,
                                          DAT_DTO_COOKIE cookie,
                                          const DAT_RMR_TRIPLET *remote,
                                          DAT_COMPLETION_FLAGS flags)
{
	DATR_OBJ_CALL(ep, DAT_INVALID_HANDLE_EP, ep_post_rdma_write_func, ep,
	              nseg, iov, cookie, remote, flags);
}

DAT_RETURN DAT_API dat_ep_get_status(DAT_EP_HANDLE ep, DAT_EP_STATE *state,
                                     DAT_BOOLEAN *recv_idle,
                                     DAT_BOOLEAN *request_idle)
{
	DATR_OBJ_CALL(ep, DAT_INVALID_HANDLE_EP, ep_get_status_func, ep, state,
	              recv_idle, request_idle);
}

DAT_RETURN DAT_API dat_ep_free(DAT_EP_HANDLE ep)
{
	DATR_OBJ_CALL(ep, DAT_INVALID_HANDLE_EP, ep_free_func, ep);
}

DAT_RETURN DAT_API dat_ep_reset(DAT_EP_HANDLE ep)
{
	DATR_OBJ_CALL(ep, DAT_INVALID_HANDLE_EP, ep_reset_func, ep);
}

DAT_RETURN DAT_API dat_ep_recv_query(DAT_EP_HANDLE ep, DAT_COUNT *nbufs,
                                     DAT_COUNT *bufs_alloc)
{
	DATR_OBJ_CALL(ep, DAT_INVALID_HANDLE_EP, ep_recv_query_func, ep, nbufs,
	              bufs_alloc);
}

DAT_RETURN DAT_API dat_ep_set_watermark(DAT_EP_HANDLE ep, DAT_COUNT soft_hi,
                                        DAT_COUNT hard_hi)
{
	DATR_OBJ_CALL(ep, DAT_INVALID_HANDLE_EP, ep_set_watermark_func, ep,
	              soft_hi, hard_hi);
}

/* ---- LMR / RMR ----------------------------------------------------------- */

DAT_RETURN DAT_API dat_lmr_create(DAT_IA_HANDLE ia, DAT_MEM_TYPE type,
                                  DAT_REGION_DESCRIPTION region,
                                  DAT_VLEN length, DAT_PZ_HANDLE pz,
                                  DAT_MEM_PRIV_FLAGS privs, DAT_VA_TYPE va_type,
                                  DAT_LMR_HANDLE *lmr, DAT_LMR_CONTEXT *lctx,
                                  DAT_RMR_CONTEXT *rctx, DAT_VLEN *reg_len,
                                  DAT_VADDR *reg_addr)
{
	DATR_IA_CALL(ia, lmr_create_func, type, region, length, pz, privs,
	             va_type, lmr, lctx, rctx, reg_len, reg_addr);
}

DAT_RETURN DAT_API dat_lmr_query(DAT_LMR_HANDLE lmr, DAT_LMR_PARAM_MASK mask,
                                 DAT_LMR_PARAM *param)
{
	DATR_OBJ_CALL(lmr, DAT_INVALID_HANDLE_LMR, lmr_query_func, lmr, mask,
	              param);
}

DAT_RETURN DAT_API dat_lmr_free(DAT_LMR_HANDLE lmr)
{
	DATR_OBJ_CALL(lmr, DAT_INVALID_HANDLE_LMR, lmr_free_func, lmr);
}

DAT_RETURN DAT_API dat_lmr_sync_rdma_read(DAT_IA_HANDLE ia,
                                          const DAT_LMR_TRIPLET *segs,
                                          DAT_VLEN nseg)
{
	DATR_IA_CALL(ia, lmr_sync_rdma_read_func, segs, nseg);
}

DAT_RETURN DAT_API dat_lmr_sync_rdma_write(DAT_IA_HANDLE ia,
                                           const DAT_LMR_TRIPLET *segs,
                                           DAT_VLEN nseg)
{
	DATR_IA_CALL(ia, lmr_sync_rdma_write_func, segs, nseg);
}

DAT_RETURN DAT_API dat_rmr_create(DAT_PZ_HANDLE pz, DAT_RMR_HANDLE *rmr)
{
	DATR_OBJ_CALL(pz, DAT_INVALID_HANDLE_PZ, rmr_create_func, pz, rmr);
}

DAT_RETURN DAT_API dat_rmr_query(DAT_RMR_HANDLE rmr, DAT_RMR_PARAM_MASK mask,
                                 DAT_RMR_PARAM *param)
{
	DATR_OBJ_CALL(rmr, DAT_INVALID_HANDLE_RMR, rmr_query_func, rmr, mask,
	              param);
}

DAT_RETURN DAT_API dat_rmr_bind(DAT_RMR_HANDLE rmr, DAT_LMR_HANDLE lmr,
                                const DAT_LMR_TRIPLET *triplet,
                                DAT_MEM_PRIV_FLAGS privs, DAT_VA_TYPE va_type,
                                DAT_EP_HANDLE ep, DAT_RMR_COOKIE cookie,
                                DAT_COMPLETION_FLAGS flags,
                                DAT_RMR_CONTEXT *rctx)
{
	DATR_OBJ_CALL(rmr, DAT_INVALID_HANDLE_RMR, rmr_bind_func, rmr, lmr,
	              triplet, privs, va_type, ep, cookie, flags, rctx);
}

DAT_RETURN DAT_API dat_rmr_free(DAT_RMR_HANDLE rmr)
{
	DATR_OBJ_CALL(rmr, DAT_INVALID_HANDLE_RMR, rmr_free_func, rmr);
}

/* ---- PSP / RSP ----------------------------------------------------------- */

DAT_RETURN DAT_API dat_psp_create(DAT_IA_HANDLE ia, DAT_CONN_QUAL qual,
                                  DAT_EVD_HANDLE evd, DAT_PSP_FLAGS flags,
                                  DAT_PSP_HANDLE *psp)
{
	DATR_IA_CALL(ia, psp_create_func, qual, evd, flags, psp);
}

DAT_RETURN DAT_API dat_psp_create_any(DAT_IA_HANDLE ia, DAT_CONN_QUAL *qual,
                                      DAT_EVD_HANDLE evd, DAT_PSP_FLAGS flags,
                                      DAT_PSP_HANDLE *psp)
{
	DATR_IA_CALL(ia, psp_create_any_func, qual, evd, flags, psp);
}

DAT_RETURN DAT_API dat_psp_query(DAT_PSP_HANDLE psp, DAT_PSP_PARAM_MASK mask,
                                 DAT_PSP_PARAM *param)
{
	DATR_OBJ_CALL(psp, DAT_INVALID_HANDLE_PSP, psp_query_func, psp, mask,
	              param);
}

DAT_RETURN DAT_API dat_psp_free(DAT_PSP_HANDLE psp)
{
	DATR_OBJ_CALL(psp, DAT_INVALID_HANDLE_PSP, psp_free_func, psp);
}

DAT_RETURN DAT_API dat_rsp_create(DAT_IA_HANDLE ia, DAT_CONN_QUAL qual,
                                  DAT_EP_HANDLE ep, DAT_EVD_HANDLE evd,
                                  DAT_RSP_HANDLE *rsp)
{
	DATR_IA_CALL(ia, rsp_create_func, qual, ep, evd, rsp);
}

DAT_RETURN DAT_API dat_rsp_query(DAT_RSP_HANDLE rsp, DAT_RSP_PARAM_MASK mask,
                                 DAT_RSP_PARAM *param)
{
	DATR_OBJ_CALL(rsp, DAT_INVALID_HANDLE_RSP, rsp_query_func, rsp, mask,
	              param);
}

DAT_RETURN DAT_API dat_rsp_free(DAT_RSP_HANDLE rsp)
{
	DATR_OBJ_CALL(rsp, DAT_INVALID_HANDLE_RSP, rsp_free_func, rsp);
}

/* ---- PZ ------------------------------------------------------------------ */

DAT_RETURN DAT_API dat_pz_create(DAT_IA_HANDLE ia, DAT_PZ_HANDLE *pz)
{
	DATR_IA_CALL(ia, pz_create_func, pz);
}

DAT_RETURN DAT_API dat_pz_query(DAT_PZ_HANDLE pz, DAT_PZ_PARAM_MASK mask,
                                DAT_PZ_PARAM *param)
{
	DATR_OBJ_CALL(pz, DAT_INVALID_HANDLE_PZ, pz_query_func, pz, mask,
	              param);
}

DAT_RETURN DAT_API dat_pz_free(DAT_PZ_HANDLE pz)
{
	DATR_OBJ_CALL(pz, DAT_INVALID_HANDLE_PZ, pz_free_func, pz);
}

/* ---- SRQ ----------------------------------------------------------------- */

DAT_RETURN DAT_API dat_srq_create(DAT_IA_HANDLE ia, DAT_PZ_HANDLE pz,
                                  DAT_SRQ_ATTR *attr, DAT_SRQ_HANDLE *srq)
{
	DATR_IA_CALL(ia, srq_create_func, pz, attr, srq);
}

DAT_RETURN DAT_API dat_srq_free(DAT_SRQ_HANDLE srq)
{
	DATR_OBJ_CALL(srq, DAT_INVALID_HANDLE_SRQ, srq_free_func, srq);
}

DAT_RETURN DAT_API dat_srq_post_recv(DAT_SRQ_HANDLE srq, DAT_COUNT nseg,
                                     DAT_LMR_TRIPLET *iov,
                                     DAT_DTO_COOKIE cookie)
{
	DATR_OBJ_CALL(srq, DAT_INVALID_HANDLE_SRQ, srq_post_recv_func, srq,
	              nseg, iov, cookie);
}

DAT_RETURN DAT_API dat_srq_query(DAT_SRQ_HANDLE srq, DAT_SRQ_PARAM_MASK mask,
                                 DAT_SRQ_PARAM *param)
{
	DATR_OBJ_CALL(srq, DAT_INVALID_HANDLE_SRQ, srq_query_func, srq, mask,
	              param);
}

DAT_RETURN DAT_API dat_srq_resize(DAT_SRQ_HANDLE srq, DAT_COUNT qlen)
{
	DATR_OBJ_CALL(srq, DAT_INVALID_HANDLE_SRQ, srq_resize_func, srq, qlen);
}

DAT_RETURN DAT_API dat_srq_set_lw(DAT_SRQ_HANDLE srq, DAT_COUNT low_watermark)
{
	DATR_OBJ_CALL(srq, DAT_INVALID_HANDLE_SRQ, srq_set_lw_func, srq,
	              low_watermark);
}
