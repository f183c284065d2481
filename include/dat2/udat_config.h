/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/* uDAT 2.0: API version and build-time configuration. */

#ifndef _UDAT_CONFIG_H_
#define _UDAT_CONFIG_H_

/* Version requested by dat_ia_open(). */
#define DAT_VERSION_MAJOR 2
#define DAT_VERSION_MINOR 0

/*
 * Thread safety requested by dat_ia_open(). As in the reference headers this
 * is always DAT_FALSE: dat.conf entries are registered "nonthreadsafe", and a
 * DAT_TRUE request would not match them.
 */
#define DAT_THREADSAFE DAT_FALSE

/* DAT extension support (extension enumerators, dat_extension_op()). */
#ifndef DAT_EXTENSIONS
#define DAT_EXTENSIONS 1
#endif

#endif /* _UDAT_CONFIG_H_ */
