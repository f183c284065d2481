/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * The SYNOPSIS of dat_cr_accept(3DAT), DAT/uDAPL 1.2 (seed page 001, its
 * nroff source), as a declaration: the page's text, which the copy ran
 * onto one line, fonts removed, with ';' after it. It must redeclare the
 * prototype <dat/udat.h> gives; main() then calls it.
 *
 *	cc [ flag... ] file... -ldat [ library... ]
 */
#include <dat/udat.h>

/* clang-format off */
DAT_RETURN dat_cr_accept ( IN DAT_CR_HANDLE cr_handle, IN DAT_EP_HANDLE ep_handle, IN DAT_COUNT private_data_size, IN const DAT_PVOID private_data )
;
/* clang-format on */

/* Reaches libdat2 and gets DAT_INVALID_HANDLE for the null CR. */
int main(void)
{
	DAT_RETURN ret;

	ret = dat_cr_accept(DAT_HANDLE_NULL, DAT_HANDLE_NULL, 0, NULL);
	return DAT_GET_TYPE(ret) == DAT_INVALID_HANDLE ? 0 : 1;
}
