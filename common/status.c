/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
#include "config.h"

#include "dof/status.h"

static const char *const dof_status_names[DOF_ERR_LAST] = {
        [DOF_OK] = "success",
        [DOF_ERR_NO_MEMORY] = "out of memory",
        [DOF_ERR_INVALID_PARAM] = "invalid parameter",
        [DOF_ERR_INVALID_HANDLE] = "invalid handle",
        [DOF_ERR_INVALID_STATE] = "invalid state",
        [DOF_ERR_NOT_FOUND] = "not found",
        [DOF_ERR_EXISTS] = "already exists",
        [DOF_ERR_BUSY] = "busy",
        [DOF_ERR_IO] = "I/O error",
        [DOF_ERR_UNSUPPORTED] = "not supported",
        [DOF_ERR_TIMEOUT] = "timed out",
        [DOF_ERR_OVERFLOW] = "overflow",
};

const char *dof_status_str(dof_status_t status)
{
	if ((unsigned)status >= DOF_ERR_LAST)
		return "unknown status";
	return dof_status_names[status];
}
