/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * The SYNOPSIS of dat_ep_create(3DAT), DAT/uDAPL 1.1 and 1.2 (seed page
 * 004, Solaris), as a declaration: the page's text with the underscores
 * and doubled letters its scrape lost put back, and ';' after it. It must
 * redeclare the prototype <dat/udat.h> gives (a wrapper that converts the
 * 1.2 DAT_EP_ATTR; note the attributes are not const); main() then calls
 * it with 1.2 attributes.
 *
 *	cc [ flag... ] file... -ldat [ library... ]
 */
#include <string.h>

#include <dat/udat.h>

/* clang-format off */
DAT_RETURN
    dat_ep_create (
    IN    DAT_IA_HANDLE    ia_handle,
    IN    DAT_PZ_HANDLE    pz_handle,
    IN    DAT_EVD_HANDLE   recv_evd_handle,
    IN    DAT_EVD_HANDLE   request_evd_handle,
    IN    DAT_EVD_HANDLE   connect_evd_handle,
    IN    DAT_EP_ATTR      *ep_attributes,
    OUT   DAT_EP_HANDLE    *ep_handle
    )
;
/* clang-format on */

/* Reaches libdat2 and gets DAT_INVALID_HANDLE for the null IA. */
int main(void)
{
	DAT_EP_ATTR attr;
	DAT_EP_HANDLE ep = DAT_HANDLE_NULL;
	DAT_RETURN ret;

	memset(&attr, 0, sizeof(attr));
	attr.service_type = DAT_SERVICE_TYPE_RC;
	attr.max_message_size = 4096;
	ret = dat_ep_create(DAT_HANDLE_NULL, DAT_HANDLE_NULL, DAT_HANDLE_NULL,
	                    DAT_HANDLE_NULL, DAT_HANDLE_NULL, &attr, &ep);
	return DAT_GET_TYPE(ret) == DAT_INVALID_HANDLE ? 0 : 1;
}
