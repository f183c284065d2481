/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * The SYNOPSIS of dat_ep_reset(3DAT), DAT/uDAPL 1.1 and 1.2 (seed page
 * 002, first page), as a declaration: the page's text, which its scrape
 * ran onto one line, with ';' after it. It must redeclare the prototype
 * <dat/udat.h> gives; main() then calls it.
 *
 *	cc [ flag... ] file... -ldat [ library... ]
 */
#include <dat/udat.h>

/* clang-format off */
DAT_RETURN dat_ep_reset ( IN DAT_EP_HANDLE ep_handle )
;
/* clang-format on */

/* Reaches libdat2 and gets DAT_INVALID_HANDLE for the null Endpoint. */
int main(void)
{
	DAT_RETURN ret;

	ret = dat_ep_reset(DAT_HANDLE_NULL);
	return DAT_GET_TYPE(ret) == DAT_INVALID_HANDLE ? 0 : 1;
}
