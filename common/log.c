/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/* Leveled logging: stderr, one line per message, prefixed by component. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dof/log.h"

dof_log_level_t dof_log_level = DOF_LOG_WARN;

/*
 * DAPL_OFI_LOG_COMPONENTS: a comma list of the components whose
 * information, debug and trace lines print ("cm,evd"); unset or "all":
 * every one. Errors and warnings always print.
 */
static char dof_log_comps[256];

static const char *const dof_log_names[] = {
        [DOF_LOG_ERROR] = "error", [DOF_LOG_WARN] = "warning",
        [DOF_LOG_INFO] = "info",   [DOF_LOG_DEBUG] = "debug",
        [DOF_LOG_TRACE] = "trace",
};

dof_log_level_t dof_log_level_from_mask(unsigned long mask)
{
	if ((mask & DOF_DBG_ALL) == DOF_DBG_ALL)
		return DOF_LOG_TRACE;
	if (mask & (DOF_DBG_PROVIDER_API | DOF_DBG_CONSUMER_API))
		return DOF_LOG_DEBUG;
	if (mask & (DOF_DBG_GENERIC | DOF_DBG_SR | DOF_DBG_DR))
		return DOF_LOG_INFO;
	return DOF_LOG_WARN;
}

void dof_log_init(void)
{
	const char *names[] = {"DAT_DBG_TYPE", "DAPL_DBG_TYPE"};
	unsigned long mask = 0;
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const char *val = getenv(names[i]);
		char *end;

		if (val == NULL || *val == '\0')
			continue;
		mask |= strtoul(val, &end, 0);
		if (*end != '\0')
			fprintf(stderr,
			        "dat: warning: %s='%s' is not a number; "
			        "using the leading digits\n",
			        names[i], val);
	}
	dof_log_level = dof_log_level_from_mask(mask);
	dof_log_comps[0] = '\0';
	{
		const char *c = getenv("DAPL_OFI_LOG_COMPONENTS");

		if (c != NULL && *c != '\0' && strcmp(c, "all") != 0)
			snprintf(dof_log_comps, sizeof(dof_log_comps), ",%s,",
			         c);
	}
}

int dof_log_component_on(const char *component)
{
	const char *slash = strchr(component, '/');
	const char *name = slash != NULL ? slash + 1 : "core";
	char key[64];

	if (dof_log_comps[0] == '\0')
		return 1;
	snprintf(key, sizeof(key), ",%s,", name);
	return strstr(dof_log_comps, key) != NULL;
}

void dof_log_printf(dof_log_level_t level, const char *component,
                    const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	if (level > DOF_LOG_WARN && !dof_log_component_on(component))
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* One fprintf so lines from several threads do not interleave. */
	fprintf(stderr, "%s: %s: %s\n", component, dof_log_names[level], line);
}
