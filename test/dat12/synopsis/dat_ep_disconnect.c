/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * The SYNOPSIS of dat_ep_disconnect(3DAT), DAT/uDAPL 1.1 and 1.2 (seed
 * page 002, second page), as a declaration: the page's text, which its
 * scrape ran onto one line, with ';' after it. It must redeclare the
 * prototype <dat/udat.h> gives; main() then calls it with both flags the
 * page lists.
 *
 *	cc [ flag... ] file... -ldat [ library... ]
 */
#include <dat/udat.h>

/* clang-format off */
DAT_RETURN dat_ep_disconnect ( IN DAT_EP_HANDLE ep_handle, IN DAT_CLOSE_FLAGS disconnect_flags )
;
/* clang-format on */

/* Reaches libdat2 and gets DAT_INVALID_HANDLE for the null Endpoint. */
int main(void)
{
	DAT_RETURN abrupt, graceful;

	abrupt = dat_ep_disconnect(DAT_HANDLE_NULL, DAT_CLOSE_ABRUPT_FLAG);
	graceful = dat_ep_disconnect(DAT_HANDLE_NULL, DAT_CLOSE_GRACEFUL_FLAG);
	return DAT_GET_TYPE(abrupt) == DAT_INVALID_HANDLE &&
	                       DAT_GET_TYPE(graceful) == DAT_INVALID_HANDLE
	               ? 0
	               : 1;
}
