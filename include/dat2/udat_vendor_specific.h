/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/* uDAT 2.0: hook for vendor-specific definitions (none are needed). */

#ifndef _UDAT_VENDOR_SPECIFIC_H_
#define _UDAT_VENDOR_SPECIFIC_H_

#include <dat2/dat_vendor_specific.h>

#endif /* _UDAT_VENDOR_SPECIFIC_H_ */
