/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * The registry service providers call (exported by libdat2 as OFED's is,
 * but not in the public headers): IA handle translation both ways.
 */
#ifndef DOF_DATS_H
#define DOF_DATS_H

#include <dat2/udat.h>

/*
 * A consumer's small-integer IA handle gives the provider's IA pointer;
 * a provider's IA pointer gives the consumer's handle.
 */
extern DAT_RETURN DAT_API dats_get_ia_handle(DAT_IA_HANDLE handle,
                                             DAT_IA_HANDLE *out);

#endif /* DOF_DATS_H */
