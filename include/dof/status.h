/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/* The one internal status type; converted to DAT_RETURN at the API edge. */
#ifndef DOF_STATUS_H
#define DOF_STATUS_H

typedef enum {
	DOF_OK = 0,
	DOF_ERR_NO_MEMORY,
	DOF_ERR_INVALID_PARAM,
	DOF_ERR_INVALID_HANDLE,
	DOF_ERR_INVALID_STATE,
	DOF_ERR_NOT_FOUND,
	DOF_ERR_EXISTS,
	DOF_ERR_BUSY,
	DOF_ERR_IO,
	DOF_ERR_UNSUPPORTED,
	DOF_ERR_TIMEOUT,
	DOF_ERR_OVERFLOW,
	DOF_ERR_NO_RESOURCE, /* a fabric resource (endpoint, queue) is short */
	DOF_ERR_IN_USE,      /* the address or qualifier is taken */
	DOF_ERR_BAD_ADDRESS, /* an address that cannot be used as given */
	DOF_ERR_UNREACHABLE, /* no route to the address */
	DOF_ERR_PRIVILEGE,   /* not permitted */
	DOF_ERR_LAST
} dof_status_t;

#endif /* DOF_STATUS_H */
