/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * The provider's one status type (dof_status_t) at its two edges:
 * libfabric's negative errno values become a status where libfabric
 * returns them, and a status becomes a DAT_RETURN where a DAT call
 * returns.
 */
#include "config.h"

#define DOFI_LOG_COMP "prov"

#include "dofi.h"

dof_status_t dofi_fi_status(int fi_err)
{
	switch (fi_err < 0 ? -fi_err : fi_err) {
	case 0:
		return DOF_OK;
	case FI_ENOMEM:
		return DOF_ERR_NO_MEMORY;
	case FI_EAGAIN:
	case FI_ENOSPC:
		return DOF_ERR_NO_RESOURCE;
	case FI_EINVAL:
		return DOF_ERR_INVALID_PARAM;
	case FI_EADDRINUSE:
		return DOF_ERR_IN_USE;
	case FI_ENOSYS:
	case FI_EOPNOTSUPP:
		return DOF_ERR_UNSUPPORTED;
	case FI_EACCES:
	case FI_EPERM:
		return DOF_ERR_PRIVILEGE;
	case FI_EHOSTUNREACH:
	case FI_ENETUNREACH:
	case FI_EADDRNOTAVAIL:
		return DOF_ERR_UNREACHABLE;
	case FI_ETIMEDOUT:
		return DOF_ERR_TIMEOUT;
	default:
		return DOF_ERR_IO;
	}
}

static const DAT_RETURN dofi_status_dat[DOF_ERR_LAST] = {
        [DOF_OK] = DAT_SUCCESS,
        [DOF_ERR_NO_MEMORY] =
                DAT_ERROR(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_MEMORY),
        [DOF_ERR_INVALID_PARAM] = DAT_ERROR(DAT_INVALID_PARAMETER, 0),
        [DOF_ERR_INVALID_HANDLE] = DAT_ERROR(DAT_INVALID_HANDLE, 0),
        [DOF_ERR_INVALID_STATE] = DAT_ERROR(DAT_INVALID_STATE, 0),
        [DOF_ERR_NOT_FOUND] = DAT_ERROR(DAT_PROVIDER_NOT_FOUND, 0),
        [DOF_ERR_EXISTS] = DAT_ERROR(DAT_PROVIDER_ALREADY_REGISTERED, 0),
        [DOF_ERR_BUSY] = DAT_ERROR(DAT_INVALID_STATE, 0),
        [DOF_ERR_IO] = DAT_ERROR(DAT_INTERNAL_ERROR, 0),
        [DOF_ERR_UNSUPPORTED] = DAT_ERROR(DAT_MODEL_NOT_SUPPORTED, 0),
        [DOF_ERR_TIMEOUT] = DAT_ERROR(DAT_TIMEOUT_EXPIRED, 0),
        [DOF_ERR_OVERFLOW] = DAT_ERROR(DAT_QUEUE_FULL, 0),
        [DOF_ERR_NO_RESOURCE] =
                DAT_ERROR(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_TEP),
        [DOF_ERR_IN_USE] = DAT_ERROR(DAT_CONN_QUAL_IN_USE, 0),
        [DOF_ERR_BAD_ADDRESS] =
                DAT_ERROR(DAT_INVALID_ADDRESS, DAT_INVALID_ADDRESS_MALFORMED),
        [DOF_ERR_UNREACHABLE] =
                DAT_ERROR(DAT_INVALID_ADDRESS, DAT_INVALID_ADDRESS_UNREACHABLE),
        [DOF_ERR_PRIVILEGE] = DAT_ERROR(DAT_PRIVILEGES_VIOLATION, 0),
};

DAT_RETURN dofi_status_to_dat(dof_status_t st)
{
	if ((unsigned)st >= DOF_ERR_LAST)
		return DAT_ERROR(DAT_INTERNAL_ERROR, 0);
	return dofi_status_dat[st];
}
