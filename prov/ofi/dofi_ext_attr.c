/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * What the InfiniBand extension (dofi_ext.c) can do on an IA's fabric:
 * the fi_info with atomics where the provider has them, the ways a write
 * with immediate data can go, the atomics fi_query_atomic takes, and the
 * IA attributes that say so. A leaf: libfabric and the IA's fields only.
 */
#include "config.h"

#define DOFI_LOG_COMP "ext"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_atomic.h>

#include "dofi.h"

#define DOFI_EXT_MTU_DEFAULT 4096u

/* The netdev's MTU where libfabric knows it, at most InfiniBand's 4096. */
static void dofi_ext_mtu(dofi_ia_t *ia, const struct fi_info *info)
{
	size_t mtu = 0;

	if (info->nic != NULL && info->nic->link_attr != NULL)
		mtu = info->nic->link_attr->mtu;
	if (mtu == 0 || mtu > DOFI_EXT_MTU_DEFAULT)
		mtu = DOFI_EXT_MTU_DEFAULT;
	snprintf(ia->ext.mtu, sizeof(ia->ext.mtu), "%zu", mtu);
}

static int dofi_ext_same_place(const struct fi_info *a, const struct fi_info *b)
{
	if (strcmp(a->domain_attr->name, b->domain_attr->name) != 0)
		return 0;
	if (a->src_addr == NULL || b->src_addr == NULL)
		return a->src_addr == b->src_addr;
	return a->src_addrlen == b->src_addrlen &&
	       memcmp(a->src_addr, b->src_addr, a->src_addrlen) == 0;
}

struct fi_info *dofi_ext_info(dofi_ia_t *ia, struct fi_info *info)
{
	struct fi_info *hints, *list = NULL, *cur, *pick = NULL, **link;
	int rc;

	dofi_ext_mtu(ia, info);
	if (info->caps & FI_ATOMIC)
		return info;
	hints = fi_allocinfo();
	if (hints == NULL)
		return info;
	/* The same fabric, domain and address, with atomics too. */
	hints->ep_attr->type = info->ep_attr->type;
	hints->caps = info->caps | FI_ATOMIC;
	hints->mode = info->mode | FI_CONTEXT | FI_CONTEXT2 | FI_RX_CQ_DATA;
	hints->addr_format = info->addr_format;
	hints->domain_attr->mr_mode = info->domain_attr->mr_mode;
	hints->domain_attr->threading = info->domain_attr->threading;
	hints->fabric_attr->prov_name = strdup(info->fabric_attr->prov_name);
	hints->fabric_attr->name = strdup(info->fabric_attr->name);
	hints->domain_attr->name = strdup(info->domain_attr->name);
	rc = fi_getinfo(DOFI_FI_VERSION, NULL, NULL, 0, hints, &list);
	fi_freeinfo(hints);
	if (rc != 0 || list == NULL) {
		dof_debug(DOFI_LOG, "%s %s: no atomics (fi_getinfo: %s)",
		          info->fabric_attr->prov_name, info->domain_attr->name,
		          fi_strerror(-rc));
		return info;
	}
	for (cur = list; cur != NULL && pick == NULL; cur = cur->next)
		if ((cur->caps & FI_ATOMIC) && dofi_ext_same_place(cur, info))
			pick = cur;
	if (pick == NULL) {
		fi_freeinfo(list);
		return info;
	}
	for (link = &list; *link != pick; link = &(*link)->next)
		;
	*link = pick->next;
	pick->next = NULL;
	if (list != NULL)
		fi_freeinfo(list);
	fi_freeinfo(info);
	return pick;
}

static void dofi_ext_caps(dofi_ia_t *ia)
{
	const struct fi_info *fi = ia->info;
	struct fi_atomic_attr aa;

	ia->ext.immed = DOFI_IMMED_NONE;
	if ((fi->caps & FI_RMA) && (fi->mode & FI_RX_CQ_DATA) &&
	    fi->domain_attr->cq_data_size >= 4)
		ia->ext.immed = DOFI_IMMED_WRITEDATA;
	else if ((fi->caps & (FI_MSG | FI_RMA)) == (FI_MSG | FI_RMA) &&
	         fi->domain_attr->cq_data_size >= 8 &&
	         ((fi->tx_attr->msg_order & FI_ORDER_SAW) ||
	          (ia->fence & DOFI_FENCE_WRITE)) &&
	         !(fi->mode & (FI_CONTEXT | FI_CONTEXT2)))
		/* The sink context is shared: only where libfabric does not
		 * keep state in contexts. */
		ia->ext.immed = DOFI_IMMED_SENDDATA;
	ia->ext.fetch_add = 0;
	ia->ext.cmp_swap = 0;
	if ((fi->caps & FI_ATOMIC) && !ia->mr_local) {
		memset(&aa, 0, sizeof(aa));
		ia->ext.fetch_add =
		        fi_query_atomic(ia->dom0.domain, FI_UINT64, FI_SUM, &aa,
		                        FI_FETCH_ATOMIC) == 0 &&
		        aa.count >= 1;
		memset(&aa, 0, sizeof(aa));
		ia->ext.cmp_swap =
		        fi_query_atomic(ia->dom0.domain, FI_UINT64, FI_CSWAP,
		                        &aa, FI_COMPARE_ATOMIC) == 0 &&
		        aa.count >= 1;
	}
	dof_info(DOFI_LOG,
	         "IA '%s': write with immediate data %s, fetch-and-add %s, "
	         "compare-and-swap %s",
	         ia->prov->info.ia_name,
	         ia->ext.immed == DOFI_IMMED_WRITEDATA  ? "fi_writedata"
	         : ia->ext.immed == DOFI_IMMED_SENDDATA ? "write + senddata"
	                                                : "no",
	         ia->ext.fetch_add ? "yes" : "no",
	         ia->ext.cmp_swap ? "yes" : "no");
}

/* DAPL_OFI_COUNTERS=1: every object counts from its creation. */
static int dofi_ext_counters_env(void)
{
	const char *env = getenv("DAPL_OFI_COUNTERS");

	return env != NULL && *env != '\0' && strcmp(env, "0") != 0;
}

int dofi_ext_ia_attrs(dofi_ia_t *ia, DAT_IA_ATTR *a, DAT_NAMED_ATTR *named,
                      int room)
{
	int n = 0;

	dofi_ext_caps(ia);
	if (dofi_ext_counters_env())
		__atomic_store_n(&ia->counting, 1, __ATOMIC_RELAXED);
	a->extension_supported = DAT_EXTENSION_IB;
	a->extension_version = DAT_IB_EXTENSION_VERSION;
#define DOFI_EXT_ATTR(_name, _value)                                  \
	do {                                                          \
		if (n < room)                                         \
			named[n++] = (DAT_NAMED_ATTR){_name, _value}; \
	} while (0)
	DOFI_EXT_ATTR("DAT_EXTENSION_INTERFACE", "TRUE");
	DOFI_EXT_ATTR("DAT_IB_TRANSPORT_MTU", ia->ext.mtu);
	if (ia->ext.immed != DOFI_IMMED_NONE)
		DOFI_EXT_ATTR(DAT_IB_ATTR_IMMED_DATA, "TRUE");
	if (ia->ext.fetch_add)
		DOFI_EXT_ATTR(DAT_IB_ATTR_FETCH_AND_ADD, "TRUE");
	if (ia->ext.cmp_swap)
		DOFI_EXT_ATTR(DAT_IB_ATTR_CMP_AND_SWAP, "TRUE");
	DOFI_EXT_ATTR(DAT_IB_ATTR_COUNTERS, "TRUE");
#undef DOFI_EXT_ATTR
	return n;
}
