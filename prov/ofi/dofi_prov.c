/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * Provider entry: dat_provider_init/fini, the ops table registered once per
 * IA name, the generic handle calls. Objects and the other utilities every
 * file uses: dofi_util.c.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "dofi.h"

/* ---- generic handle calls ------------------------------------------------ */

static dofi_obj_t *dofi_any_get(DAT_HANDLE handle, const char *func)
{
	dofi_obj_t *o = handle;

	if (!dofi_handle_shaped(o) ||
	    atomic_load(&o->magic) != DOFI_MAGIC_LIVE || o->type <= 0 ||
	    o->type >= DOFI_OBJ_LAST) {
		dof_warn(DOFI_LOG, "%s: %p is not a live DAT object", func,
		         handle);
		return NULL;
	}
	return o;
}

static DAT_RETURN dofi_set_consumer_context(DAT_HANDLE handle,
                                            DAT_CONTEXT context)
{
	dofi_obj_t *o = dofi_any_get(handle, __func__);

	if (o == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, 0);
	o->context = context;
	return DAT_SUCCESS;
}

static DAT_RETURN dofi_get_consumer_context(DAT_HANDLE handle,
                                            DAT_CONTEXT *context)
{
	dofi_obj_t *o = dofi_any_get(handle, __func__);

	if (o == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, 0);
	if (context == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	*context = o->context;
	return DAT_SUCCESS;
}

static DAT_RETURN dofi_get_handle_type(DAT_HANDLE handle, DAT_HANDLE_TYPE *t)
{
	static const DAT_HANDLE_TYPE map[DOFI_OBJ_LAST] = {
	        [DOFI_OBJ_IA] = DAT_HANDLE_TYPE_IA,
	        [DOFI_OBJ_PZ] = DAT_HANDLE_TYPE_PZ,
	        [DOFI_OBJ_LMR] = DAT_HANDLE_TYPE_LMR,
	        [DOFI_OBJ_RMR] = DAT_HANDLE_TYPE_RMR,
	        [DOFI_OBJ_EVD] = DAT_HANDLE_TYPE_EVD,
	        [DOFI_OBJ_CNO] = DAT_HANDLE_TYPE_CNO,
	        [DOFI_OBJ_EP] = DAT_HANDLE_TYPE_EP,
	        [DOFI_OBJ_PSP] = DAT_HANDLE_TYPE_PSP,
	        [DOFI_OBJ_RSP] = DAT_HANDLE_TYPE_RSP,
	        [DOFI_OBJ_CR] = DAT_HANDLE_TYPE_CR,
	        [DOFI_OBJ_SRQ] = DAT_HANDLE_TYPE_SRQ,
	};
	dofi_obj_t *o = dofi_any_get(handle, __func__);

	if (o == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, 0);
	if (t == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	*t = map[o->type];
	return DAT_SUCCESS;
}

/* ---- registration -------------------------------------------------------- */

/*
 * The DAT entry points, in DAT_PROVIDER order; what is left out is NULL.
 * Each registered IA name gets a copy with its own device_name.
 */
static const DAT_PROVIDER dofi_table = {
        .device_name = NULL,
        .extension = NULL,
        .ia_open_func = dofi_ia_open,
        .ia_query_func = dofi_ia_query,
        .ia_close_func = dofi_ia_close,
        .set_consumer_context_func = dofi_set_consumer_context,
        .get_consumer_context_func = dofi_get_consumer_context,
        .get_handle_type_func = dofi_get_handle_type,
        .cno_create_func = dofi_cno_create,
        .cno_modify_agent_func = dofi_cno_modify_agent,
        .cno_query_func = dofi_cno_query,
        .cno_free_func = dofi_cno_free,
        .cno_fd_create_func = dofi_cno_fd_create,
        .cno_trigger_func = dofi_cno_trigger,
        .cno_wait_func = dofi_cno_wait,
        .cr_query_func = dofi_cr_query,
        .cr_accept_func = dofi_cr_accept,
        .cr_reject_func = dofi_cr_reject,
        .cr_handoff_func = dofi_cr_handoff,
        .evd_create_func = dofi_evd_create,
        .evd_query_func = dofi_evd_query,
        .evd_modify_cno_func = dofi_evd_modify_cno,
        .evd_enable_func = dofi_evd_enable,
        .evd_disable_func = dofi_evd_disable,
        .evd_wait_func = dofi_evd_wait,
        .evd_resize_func = dofi_evd_resize,
        .evd_post_se_func = dofi_evd_post_se,
        .evd_dequeue_func = dofi_evd_dequeue,
        .evd_free_func = dofi_evd_free,
        .ep_create_func = dofi_ep_create,
        .ep_query_func = dofi_ep_query,
        .ep_modify_func = dofi_ep_modify,
        .ep_connect_func = dofi_ep_connect,
        .ep_dup_connect_func = dofi_ep_dup_connect,
        .ep_disconnect_func = dofi_ep_disconnect,
        .ep_post_send_func = dofi_ep_post_send,
        .ep_post_recv_func = dofi_ep_post_recv,
        .ep_post_rdma_read_func = dofi_ep_post_rdma_read,
        .ep_post_rdma_write_func = dofi_ep_post_rdma_write,
        .ep_get_status_func = dofi_ep_get_status,
        .ep_free_func = dofi_ep_free,
        .lmr_create_func = dofi_lmr_create,
        .lmr_query_func = dofi_lmr_query,
        .lmr_free_func = dofi_lmr_free,
        .rmr_create_func = dofi_rmr_create,
        .rmr_query_func = dofi_rmr_query,
        .rmr_bind_func = dofi_rmr_bind,
        .rmr_free_func = dofi_rmr_free,
        .psp_create_func = dofi_psp_create,
        .psp_query_func = dofi_psp_query,
        .psp_free_func = dofi_psp_free,
        .rsp_create_func = dofi_rsp_create,
        .rsp_query_func = dofi_rsp_query,
        .rsp_free_func = dofi_rsp_free,
        .pz_create_func = dofi_pz_create,
        .pz_query_func = dofi_pz_query,
        .pz_free_func = dofi_pz_free,
        .psp_create_any_func = dofi_psp_create_any,
        .ep_reset_func = dofi_ep_reset,
        .evd_set_unwaitable_func = dofi_evd_set_unwaitable,
        .evd_clear_unwaitable_func = dofi_evd_clear_unwaitable,
        .lmr_sync_rdma_read_func = dofi_lmr_sync_rdma_read,
        .lmr_sync_rdma_write_func = dofi_lmr_sync_rdma_write,
        .ep_create_with_srq_func = dofi_ep_create_with_srq,
        .ep_recv_query_func = dofi_ep_recv_query,
        .ep_set_watermark_func = dofi_ep_set_watermark,
        .srq_create_func = dofi_srq_create,
        .srq_free_func = dofi_srq_free,
        .srq_post_recv_func = dofi_srq_post_recv,
        .srq_query_func = dofi_srq_query,
        .srq_resize_func = dofi_srq_resize,
        .srq_set_lw_func = dofi_srq_set_lw,
        .handle_extendedop_func = dofi_ext_op,
};

/* "tcp lo", "verbs mlx5_0", "tcp;ofi_rxm", "auto", "" */
static void dofi_parse_instance(dofi_prov_t *p, const char *instance)
{
	const char *env = getenv("FI_PROVIDER");
	char why[128];

	if (dofi_instance_parse(instance, &p->inst, why, sizeof(why)) != DOF_OK)
		dof_warn(DOFI_LOG, "IA '%s': instance data: %s",
		         p->info.ia_name, why);
	if (env != NULL && *env != '\0') /* the same dat.conf, other hardware */
		snprintf(p->inst.fi_prov, sizeof(p->inst.fi_prov), "%s", env);
}

void DAT_API dat_provider_init(const DAT_PROVIDER_INFO *info,
                               const char *instance_data)
{
	dofi_prov_t *p;
	DAT_RETURN ret;

	dof_log_init();
	if (info == NULL)
		return;
	if (dofi_prov_find(info->ia_name) != NULL) {
		dof_warn(DOFI_LOG, "IA '%s' is already initialised",
		         info->ia_name);
		return;
	}
	p = calloc(1, sizeof(*p));
	if (p == NULL) {
		dof_error(DOFI_LOG, "out of memory initialising IA '%s'",
		          info->ia_name);
		return;
	}
	p->info = *info;
	dofi_parse_instance(p, instance_data);
	p->table = dofi_table;
	p->table.device_name = p->info.ia_name;
	dofi_ext_table(&p->table);
	dofi_prov_add(p);
	ret = dat_registry_add_provider(&p->table, &p->info);
	if (ret != DAT_SUCCESS) {
		dof_warn(DOFI_LOG, "IA '%s': registration refused (%#x)",
		         info->ia_name, ret);
		(void)dofi_prov_remove(p);
		free(p);
		return;
	}
	dof_info(DOFI_LOG, "IA '%s': libfabric provider '%s', domain '%s'",
	         info->ia_name, p->inst.fi_prov[0] ? p->inst.fi_prov : "(any)",
	         p->inst.fi_domain[0] ? p->inst.fi_domain : "(any)");
}

void DAT_API dat_provider_fini(const DAT_PROVIDER_INFO *info)
{
	dofi_prov_t *p;
	int last;

	if (info == NULL)
		return;
	p = dofi_prov_find(info->ia_name);
	if (p == NULL)
		return;
	dat_registry_remove_provider(&p->table, &p->info);
	last = dofi_prov_remove(p);
	free(p);
	if (last) {
		dofi_graves_release();
		dofi_lazy_release();
	}
}
