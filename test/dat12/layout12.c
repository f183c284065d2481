/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/* The layouts of layout.h as the DAT 1.2 headers give them. */
#include "config.h"

#include <dat/udat.h>

#include "layout.h"

#define LAYOUT_T(t12, t20) {#t20, 0, sizeof(t12)},
#define LAYOUT_F(t12, t20, m) \
	{#t20 "." #m, offsetof(t12, m), sizeof(((t12 *)0)->m)},

const struct dat12_layout dat12_layout_12[] = {
        DAT12_LAYOUT_TYPES(LAYOUT_T) DAT12_LAYOUT_FIELDS(LAYOUT_F){NULL, 0, 0}};
