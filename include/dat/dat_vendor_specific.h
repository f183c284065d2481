/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/* DAT 1.2: hook for vendor-specific definitions (none are needed). */

#ifndef _DAT12_VENDOR_SPECIFIC_H_
#define _DAT12_VENDOR_SPECIFIC_H_

#endif /* _DAT12_VENDOR_SPECIFIC_H_ */
