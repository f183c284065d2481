/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * The SYNOPSIS of dat_ep_connect(3DAT), DAT/uDAPL 1.1 and 1.2 (seed page
 * 000, Solaris), as a declaration: the page's text with the underscores
 * and doubled letters its scrape lost put back, and ';' after it. It must
 * redeclare the prototype <dat/udat.h> gives; main() then calls it.
 *
 *	cc [ flag... ] file... -ldat [ library... ]
 */
#include <dat/udat.h>

/* clang-format off */
DAT_RETURN
    dat_ep_connect (
    IN    DAT_EP_HANDLE         ep_handle,
    IN    DAT_IA_ADDRESS_PTR    remote_ia_address,
    IN    DAT_CONN_QUAL         remote_conn_qual,
    IN    DAT_TIMEOUT           timeout,
    IN    DAT_COUNT             private_data_size,
    IN const  DAT_PVOID         private_data,
    IN    DAT_QOS               qos,
    IN    DAT_CONNECT_FLAGS     connect_flags
    )
;
/* clang-format on */

/* Reaches libdat2 and gets DAT_INVALID_HANDLE for the null Endpoint. */
int main(void)
{
	DAT_RETURN ret;

	ret = dat_ep_connect(DAT_HANDLE_NULL, NULL, 1, DAT_TIMEOUT_INFINITE, 0,
	                     NULL, DAT_QOS_BEST_EFFORT,
	                     DAT_CONNECT_DEFAULT_FLAG);
	return DAT_GET_TYPE(ret) == DAT_INVALID_HANDLE ? 0 : 1;
}
