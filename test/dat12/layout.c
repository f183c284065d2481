/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * What a DAT 1.2 call hands to libdat2 has libdat2's layout: every type
 * and member of layout.h has the same size and offset through
 * <dat/udat.h> (layout12.c) as through <dat2/udat.h> (layout20.c).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "layout.h"

int main(void)
{
	const struct dat12_layout *a = dat12_layout_12, *b = dat12_layout_20;
	int n = 0, bad = 0;

	for (; a->name != NULL && b->name != NULL; a++, b++, n++) {
		if (strcmp(a->name, b->name) != 0) {
			printf("FAIL: tables out of step at %s / %s\n", a->name,
			       b->name);
			return 1;
		}
		if (a->offset != b->offset || a->size != b->size) {
			printf("FAIL: %s: 1.2 headers offset %zu size %zu, "
			       "libdat2 offset %zu size %zu\n",
			       a->name, a->offset, a->size, b->offset, b->size);
			bad++;
		}
	}
	if (a->name != NULL || b->name != NULL) {
		printf("FAIL: tables of different lengths\n");
		return 1;
	}
	if (bad == 0)
		printf("ok: %d types and members have libdat2's layout\n", n);
	return bad != 0;
}
