/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * libFuzzer target: the CM private-data header (prov/ofi/dofi_cm_hdr.c)
 * as a peer could send it. The first input byte chooses max_pdata, the
 * rest is the message. A refusal must leave the outputs alone and be
 * right by an independent reading of the format; an accepted message,
 * packed again, must give the same bytes (unknown flag bits cleared).
 * Build and run: fuzz/run.sh cm_hdr.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dofi_cm_hdr.h"

/* Whether b[0..len) is a valid header by the format's own words. */
static int valid(const uint8_t *b, size_t len, size_t max_pdata)
{
	return len >= 7 && b[0] == 0xda && b[1] == 0x7f && b[2] == 1 &&
	       b[3] >= 1 && b[3] <= 3 && len - 7 <= max_pdata;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned char mark = 0;
	const unsigned char *pdata = &mark;
	size_t max = 256, plen = 12345, n;
	dofi_cm_hdr_t h = {0xa5, 0xa6, 0xa7, 0xa8};
	unsigned char *buf;
	dof_status_t st;

	if (size > 0) {
		/* 0..508 by twos, or "no limit" */
		max = data[0] == 0xff ? SIZE_MAX : (size_t)data[0] * 2;
		data++;
		size--;
	}
	st = dofi_cm_hdr_unpack(data, size, max, &h, &pdata, &plen);
	if (st != DOF_OK) {
		if (st != DOF_ERR_INVALID_PARAM || valid(data, size, max) ||
		    h.type != 0xa5 || h.flags != 0xa6 || h.rdma_in != 0xa7 ||
		    h.rdma_out != 0xa8 || pdata != &mark || plen != 12345)
			abort();
		return 0;
	}
	if (!valid(data, size, max) || pdata != data + 7 || plen != size - 7 ||
	    h.type != data[3] || h.rdma_in != data[4] ||
	    h.rdma_out != data[5] || h.flags != (data[6] & DOFI_CM_F_KNOWN))
		abort();
	/* Exactly the room it needs (ASan sees a byte more), and one less. */
	buf = malloc(size);
	if (buf == NULL)
		return 0;
	if (dofi_cm_hdr_pack(buf, size - 1, &h, pdata, plen) != 0)
		abort();
	n = dofi_cm_hdr_pack(buf, size, &h, pdata, plen);
	if (n != size || memcmp(buf, data, 6) != 0 ||
	    buf[6] != (data[6] & DOFI_CM_F_KNOWN) ||
	    memcmp(buf + 7, data + 7, size - 7) != 0)
		abort();
	free(buf);
	return 0;
}
