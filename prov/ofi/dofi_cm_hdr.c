/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/* Our CM private-data header (dofi_cm_hdr.h). */
#include "config.h"

#include <string.h>

#include "dofi_cm_hdr.h"

static int dofi_cm_type_known(uint8_t type)
{
	return type == DOFI_CM_REQ || type == DOFI_CM_REP ||
	       type == DOFI_CM_REJ;
}

size_t dofi_cm_hdr_pack(unsigned char *buf, size_t room, const dofi_cm_hdr_t *h,
                        const void *pdata, size_t plen)
{
	if (buf == NULL || h == NULL || !dofi_cm_type_known(h->type) ||
	    (pdata == NULL && plen > 0) || room < DOFI_CM_HDR_SIZE ||
	    plen > room - DOFI_CM_HDR_SIZE)
		return 0;
	buf[0] = DOFI_CM_MAGIC0;
	buf[1] = DOFI_CM_MAGIC1;
	buf[2] = DOFI_CM_VERSION;
	buf[3] = h->type;
	buf[4] = h->rdma_in;
	buf[5] = h->rdma_out;
	buf[6] = h->flags;
	if (plen > 0)
		memcpy(buf + DOFI_CM_HDR_SIZE, pdata, plen);
	return DOFI_CM_HDR_SIZE + plen;
}

dof_status_t dofi_cm_hdr_unpack(const void *data, size_t len, size_t max_pdata,
                                dofi_cm_hdr_t *h, const unsigned char **pdata,
                                size_t *plen)
{
	const unsigned char *b = data;

	if (b == NULL || h == NULL || len < DOFI_CM_HDR_SIZE ||
	    b[0] != DOFI_CM_MAGIC0 || b[1] != DOFI_CM_MAGIC1 ||
	    b[2] != DOFI_CM_VERSION || !dofi_cm_type_known(b[3]) ||
	    len - DOFI_CM_HDR_SIZE > max_pdata)
		return DOF_ERR_INVALID_PARAM;
	h->type = b[3];
	h->rdma_in = b[4];
	h->rdma_out = b[5];
	/* Unknown flags: a later version's offers, which we do not take. */
	h->flags = b[6] & DOFI_CM_F_KNOWN;
	if (pdata != NULL)
		*pdata = b + DOFI_CM_HDR_SIZE;
	if (plen != NULL)
		*plen = len - DOFI_CM_HDR_SIZE;
	return DOF_OK;
}
