/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/* DAT 2.0: hook for vendor-specific definitions (none are needed). */

#ifndef _DAT_VENDOR_SPECIFIC_H_
#define _DAT_VENDOR_SPECIFIC_H_

#endif /* _DAT_VENDOR_SPECIFIC_H_ */
