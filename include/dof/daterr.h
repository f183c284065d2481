/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/* Building DAT_RETURN error values (internal; DAT's headers have no macro). */
#ifndef DOF_DATERR_H
#define DOF_DATERR_H

#include <dat2/dat_error.h>

#ifndef DAT_ERROR
#define DAT_ERROR(_type, _subtype)                            \
	((DAT_RETURN)(DAT_CLASS_ERROR | (DAT_UINT32)(_type) | \
	              (DAT_UINT32)(_subtype)))
#endif

#endif /* DOF_DATERR_H */
