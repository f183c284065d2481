/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * A small DAT provider built to the provider ABI, for the registry's unit
 * tests. It implements IA open/query/close, PZ create/free, consumer
 * contexts and handle types, and of dat_extension_op the IB extension's
 * open and close query; every other entry of its table is NULL.
 * The instance data chooses a behaviour: "ok", "noregister" (init does not
 * register), "failopen" (ia_open fails).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include <stdarg.h>

#include <dat2/udat.h>
#include <dat2/dat_ib_extensions.h>
#include <dat2/dat_registry.h>

#include "dof/daterr.h"
#include "dof/dats.h"

#include "check_tests.h"

#define FP_MAX      16
#define FP_IA_MAGIC 0x46414b45u
#define FP_PZ_MAGIC 0x505a505au

struct fp_prov {
	DAT_PROVIDER table;
	DAT_PROVIDER_INFO info;
	int in_use;
	int fail_open;
};

struct fp_ia {
	const DAT_PROVIDER *prov;
	unsigned magic;
	DAT_CONTEXT ctx;
	int npz;
	DAT_BOOLEAN thread_safe;
};

struct fp_pz {
	const DAT_PROVIDER *prov;
	unsigned magic;
	DAT_CONTEXT ctx;
	struct fp_ia *ia;
};

static struct fp_prov fp_provs[FP_MAX];

static struct fakeprov_counters *fp_counters(void)
{
	static struct fakeprov_counters dummy;
	struct fakeprov_counters *c = dlsym(RTLD_DEFAULT, "fakeprov_counters");

	return c ? c : &dummy;
}

static DAT_RETURN fp_ia_open(const DAT_NAME_PTR name, DAT_COUNT qlen,
                             DAT_EVD_HANDLE *async_evd, DAT_IA_HANDLE *ia_out)
{
	struct fp_prov *p = NULL;
	struct fp_ia *ia;
	int i;

	(void)qlen;
	(void)async_evd;
	for (i = 0; i < FP_MAX; i++)
		if (fp_provs[i].in_use &&
		    strcmp(fp_provs[i].info.ia_name, name) == 0)
			p = &fp_provs[i];
	if (p == NULL)
		return DAT_ERROR(DAT_PROVIDER_NOT_FOUND, 0);
	if (p->fail_open)
		return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES,
		                 DAT_RESOURCE_DEVICE);
	ia = calloc(1, sizeof(*ia));
	if (ia == NULL)
		return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES,
		                 DAT_RESOURCE_MEMORY);
	ia->prov = &p->table;
	ia->magic = FP_IA_MAGIC;
	ia->thread_safe = p->info.is_thread_safe;
	fp_counters()->open++;
	*ia_out = (DAT_IA_HANDLE)ia;
	return DAT_SUCCESS;
}

static DAT_RETURN fp_ia_close(DAT_IA_HANDLE h, DAT_CLOSE_FLAGS flags)
{
	struct fp_ia *ia = (struct fp_ia *)h;

	if (ia->magic != FP_IA_MAGIC)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	if (flags == DAT_CLOSE_GRACEFUL_FLAG && ia->npz > 0)
		return DAT_ERROR(DAT_INVALID_STATE,
		                 DAT_INVALID_STATE_IA_IN_USE);
	ia->magic = 0;
	free(ia);
	fp_counters()->close++;
	return DAT_SUCCESS;
}

static DAT_RETURN fp_ia_query(DAT_IA_HANDLE h, DAT_EVD_HANDLE *async_evd,
                              DAT_IA_ATTR_MASK ia_mask, DAT_IA_ATTR *ia_attr,
                              DAT_PROVIDER_ATTR_MASK pmask,
                              DAT_PROVIDER_ATTR *pattr)
{
	struct fp_ia *ia = (struct fp_ia *)h;

	if (ia->magic != FP_IA_MAGIC)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	fp_counters()->query++;
	if (async_evd != NULL)
		*async_evd = DAT_HANDLE_NULL;
	if (ia_mask && ia_attr != NULL) {
		memset(ia_attr, 0, sizeof(*ia_attr));
		strcpy(ia_attr->adapter_name, "fake-adapter");
		strcpy(ia_attr->vendor_name, "dapl-ofi tests");
		ia_attr->max_eps = 7;
	}
	if (pmask && pattr != NULL) {
		memset(pattr, 0, sizeof(*pattr));
		strcpy(pattr->provider_name, "fake");
		pattr->dapl_version_major = 2;
		pattr->dapl_version_minor = 0;
		pattr->is_thread_safe = ia->thread_safe;
	}
	return DAT_SUCCESS;
}

static int fp_magic(DAT_HANDLE h, DAT_HANDLE_TYPE *type)
{
	unsigned magic = ((struct fp_ia *)h)->magic;

	if (magic == FP_IA_MAGIC)
		*type = DAT_HANDLE_TYPE_IA;
	else if (magic == FP_PZ_MAGIC)
		*type = DAT_HANDLE_TYPE_PZ;
	else
		return -1;
	return 0;
}

/*
 * dat_ib_open_query: the handle is the IA name, the arguments what
 * follows it (as OFED's registry and ours pass them); dat_ib_close_query:
 * the IA. Counted in ext_open / ext_close.
 */
static DAT_RETURN fp_ext_op(DAT_HANDLE h, DAT_EXTENDED_OP op, va_list args)
{
	DAT_EVD_HANDLE evd = DAT_HANDLE_NULL;
	DAT_RETURN ret;

	if ((int)op == DAT_IB_OPEN_QUERY_OP) {
		DAT_HANDLE *ia = va_arg(args, DAT_HANDLE *);
		DAT_IA_ATTR_MASK ia_mask = va_arg(args, DAT_IA_ATTR_MASK);
		DAT_IA_ATTR *ia_attr = va_arg(args, DAT_IA_ATTR *);
		DAT_PROVIDER_ATTR_MASK pmask =
		        va_arg(args, DAT_PROVIDER_ATTR_MASK);
		DAT_PROVIDER_ATTR *pattr = va_arg(args, DAT_PROVIDER_ATTR *);

		ret = fp_ia_open((const DAT_NAME_PTR)h, 8, &evd, ia);
		if (ret != DAT_SUCCESS)
			return ret;
		fp_counters()->ext_open++;
		return fp_ia_query(*ia, NULL, ia_mask, ia_attr, pmask, pattr);
	}
	if ((int)op == DAT_IB_CLOSE_QUERY_OP) {
		ret = fp_ia_close(h, DAT_CLOSE_ABRUPT_FLAG);
		if (ret == DAT_SUCCESS)
			fp_counters()->ext_close++;
		return ret;
	}
	return DAT_ERROR(DAT_NOT_IMPLEMENTED, 0);
}

static DAT_RETURN fp_set_ctx(DAT_HANDLE h, DAT_CONTEXT ctx)
{
	DAT_HANDLE_TYPE t;

	if (fp_magic(h, &t))
		return DAT_ERROR(DAT_INVALID_HANDLE, 0);
	if (t == DAT_HANDLE_TYPE_IA)
		((struct fp_ia *)h)->ctx = ctx;
	else
		((struct fp_pz *)h)->ctx = ctx;
	return DAT_SUCCESS;
}

static DAT_RETURN fp_get_ctx(DAT_HANDLE h, DAT_CONTEXT *ctx)
{
	DAT_HANDLE_TYPE t;

	if (fp_magic(h, &t))
		return DAT_ERROR(DAT_INVALID_HANDLE, 0);
	if (ctx == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	*ctx = t == DAT_HANDLE_TYPE_IA ? ((struct fp_ia *)h)->ctx
	                               : ((struct fp_pz *)h)->ctx;
	return DAT_SUCCESS;
}

static DAT_RETURN fp_get_type(DAT_HANDLE h, DAT_HANDLE_TYPE *type)
{
	if (type == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	if (fp_magic(h, type))
		return DAT_ERROR(DAT_INVALID_HANDLE, 0);
	return DAT_SUCCESS;
}

static DAT_RETURN fp_pz_create(DAT_IA_HANDLE h, DAT_PZ_HANDLE *out)
{
	struct fp_ia *ia = (struct fp_ia *)h;
	struct fp_pz *pz;

	if (ia->magic != FP_IA_MAGIC)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	pz = calloc(1, sizeof(*pz));
	if (pz == NULL)
		return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES,
		                 DAT_RESOURCE_MEMORY);
	pz->prov = ia->prov;
	pz->magic = FP_PZ_MAGIC;
	pz->ia = ia;
	ia->npz++;
	*out = (DAT_PZ_HANDLE)pz;
	return DAT_SUCCESS;
}

static DAT_RETURN fp_pz_query(DAT_PZ_HANDLE h, DAT_PZ_PARAM_MASK mask,
                              DAT_PZ_PARAM *param)
{
	struct fp_pz *pz = (struct fp_pz *)h;
	DAT_IA_HANDLE idx;
	DAT_RETURN ret;

	(void)mask;
	if (pz->magic != FP_PZ_MAGIC)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ);
	/* As a real provider must: hand the consumer its IA index. */
	ret = dats_get_ia_handle((DAT_IA_HANDLE)pz->ia, &idx);
	if (ret != DAT_SUCCESS)
		return ret;
	param->ia_handle = idx;
	return DAT_SUCCESS;
}

static DAT_RETURN fp_pz_free(DAT_PZ_HANDLE h)
{
	struct fp_pz *pz = (struct fp_pz *)h;

	if (pz->magic != FP_PZ_MAGIC)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ);
	pz->ia->npz--;
	pz->magic = 0;
	free(pz);
	return DAT_SUCCESS;
}

void dat_provider_init(const DAT_PROVIDER_INFO *info, const char *instance)
{
	struct fakeprov_counters *c = fp_counters();
	struct fp_prov *p = NULL;
	int i;

	c->init++;
	strncpy(c->last_instance, instance ? instance : "",
	        sizeof(c->last_instance) - 1);
	if (instance != NULL && strcmp(instance, "noregister") == 0)
		return;
	for (i = 0; i < FP_MAX && p == NULL; i++)
		if (!fp_provs[i].in_use)
			p = &fp_provs[i];
	if (p == NULL)
		return;
	memset(p, 0, sizeof(*p));
	p->info = *info;
	p->fail_open = instance != NULL && strcmp(instance, "failopen") == 0;
	p->table.device_name = p->info.ia_name;
	p->table.ia_open_func = fp_ia_open;
	p->table.ia_query_func = fp_ia_query;
	p->table.ia_close_func = fp_ia_close;
	p->table.set_consumer_context_func = fp_set_ctx;
	p->table.get_consumer_context_func = fp_get_ctx;
	p->table.get_handle_type_func = fp_get_type;
	p->table.pz_create_func = fp_pz_create;
	p->table.pz_query_func = fp_pz_query;
	p->table.pz_free_func = fp_pz_free;
	p->table.handle_extendedop_func = fp_ext_op;
	if (dat_registry_add_provider(&p->table, &p->info) == DAT_SUCCESS)
		p->in_use = 1;
}

void dat_provider_fini(const DAT_PROVIDER_INFO *info)
{
	int i;

	fp_counters()->fini++;
	for (i = 0; i < FP_MAX; i++) {
		struct fp_prov *p = &fp_provs[i];

		if (p->in_use && strcmp(p->info.ia_name, info->ia_name) == 0) {
			dat_registry_remove_provider(&p->table, &p->info);
			p->in_use = 0;
		}
	}
}
