/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/* The layouts of layout.h as libdat2's DAT 2.0 headers give them. */
#include "config.h"

#include <dat2/udat.h>

#include "layout.h"

#define LAYOUT_T(t12, t20) {#t20, 0, sizeof(t20)},
#define LAYOUT_F(t12, t20, m) \
	{#t20 "." #m, offsetof(t20, m), sizeof(((t20 *)0)->m)},

const struct dat12_layout dat12_layout_20[] = {
        DAT12_LAYOUT_TYPES(LAYOUT_T) DAT12_LAYOUT_FIELDS(LAYOUT_F){NULL, 0, 0}};
