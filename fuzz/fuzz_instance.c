/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * libFuzzer target: a dat.conf line's instance data for this provider
 * (prov/ofi/dofi_instance.c), as anyone who may write dat.conf could put
 * it. The fields must come back terminated and within their arrays, a
 * given link_timeout within its range, and a reason given for every
 * refusal. Build and run: fuzz/run.sh instance.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dofi_instance.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	dofi_instance_t inst;
	char why[96];
	char *text = malloc(size + 1);
	uint64_t ms;
	dof_status_t st;

	if (text == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	st = dofi_instance_parse(text, &inst, why, sizeof(why));
	if (memchr(inst.fi_prov, '\0', sizeof(inst.fi_prov)) == NULL ||
	    memchr(inst.fi_domain, '\0', sizeof(inst.fi_domain)) == NULL ||
	    memchr(why, '\0', sizeof(why)) == NULL)
		abort();
	if (inst.link_timeout_ms != DOFI_INSTANCE_UNSET &&
	    inst.link_timeout_ms > UINT32_MAX)
		abort();
	if ((st == DOF_OK) != (why[0] == '\0'))
		abort();
	/* No blank inside a word. */
	if (strpbrk(inst.fi_prov, " \t") || strpbrk(inst.fi_domain, " \t"))
		abort();
	ms = 12345;
	if (dofi_duration_ms(text, &ms) != DOF_OK && ms != 12345)
		abort();
	free(text);
	return 0;
}
