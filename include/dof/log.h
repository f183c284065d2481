/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/* Leveled logging shared by libdat2 and the providers (internal). */
#ifndef DOF_LOG_H
#define DOF_LOG_H

#include <stdarg.h>

#ifndef DOF_LOG_MAX_LEVEL
#define DOF_LOG_MAX_LEVEL 4
#endif

typedef enum {
	DOF_LOG_ERROR = 0,
	DOF_LOG_WARN = 1,
	DOF_LOG_INFO = 2,
	DOF_LOG_DEBUG = 3,
	DOF_LOG_TRACE = 4,
} dof_log_level_t;

/*
 * OFED's DAT_DBG_TYPE / DAPL_DBG_TYPE bits. Errors and warnings always
 * print; 0x2..0x8 add information, 0x10/0x20 add debug, 0xff adds trace.
 */
#define DOF_DBG_ERROR        0x01
#define DOF_DBG_GENERIC      0x02
#define DOF_DBG_SR           0x04
#define DOF_DBG_DR           0x08
#define DOF_DBG_PROVIDER_API 0x10
#define DOF_DBG_CONSUMER_API 0x20
#define DOF_DBG_ALL          0xff

/* Level currently enabled at run time; set from the environment once. */
extern dof_log_level_t dof_log_level;

/* Map a DAT_DBG_TYPE bitmask to a level. */
dof_log_level_t dof_log_level_from_mask(unsigned long mask);

/*
 * Read DAT_DBG_TYPE, then DAPL_DBG_TYPE, and set dof_log_level; and
 * DAPL_OFI_LOG_COMPONENTS, the components whose lines below warnings
 * print.
 */
void dof_log_init(void);

/*
 * Whether lines of component ("dapl-ofi/cm": its part after the slash;
 * none: "core") below warnings print.
 */
int dof_log_component_on(const char *component);

void dof_log_printf(dof_log_level_t level, const char *component,
                    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#define dof_log(_level, _comp, ...)                                     \
	do {                                                            \
		if ((_level) <= DOF_LOG_MAX_LEVEL &&                    \
		    (_level) <= dof_log_level)                          \
			dof_log_printf((_level), (_comp), __VA_ARGS__); \
	} while (0)

#define dof_error(_comp, ...) dof_log(DOF_LOG_ERROR, _comp, __VA_ARGS__)
#define dof_warn(_comp, ...)  dof_log(DOF_LOG_WARN, _comp, __VA_ARGS__)
#define dof_info(_comp, ...)  dof_log(DOF_LOG_INFO, _comp, __VA_ARGS__)
#define dof_debug(_comp, ...) dof_log(DOF_LOG_DEBUG, _comp, __VA_ARGS__)
#define dof_trace(_comp, ...) dof_log(DOF_LOG_TRACE, _comp, __VA_ARGS__)

#endif /* DOF_LOG_H */
