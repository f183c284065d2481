/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/* uDAT 1.2: API version and build-time configuration. */

#ifndef _DAT12_UDAT_CONFIG_H_
#define _DAT12_UDAT_CONFIG_H_

/*
 * The API these headers give. dat_ia_open() passes it to dat_ia_openv(),
 * whose 1.2 wrapper asks libdat2 for the DAT 2.0 it serves 1.x with.
 */
#define DAT_VERSION_MAJOR 1
#define DAT_VERSION_MINOR 2

/*
 * Thread safety requested by dat_ia_open(): DAT_FALSE, as in the 1.2
 * reference headers; define DAT_THREADSAFE before including <dat/udat.h>
 * to ask for DAT_TRUE.
 */
#ifndef DAT_THREADSAFE
#define DAT_THREADSAFE DAT_FALSE
#endif

#endif /* _DAT12_UDAT_CONFIG_H_ */
