/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/* A dat.conf line's instance data for this provider (dofi_instance.h). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "dofi_instance.h"

dof_status_t dofi_duration_ms(const char *s, uint64_t *ms)
{
	uint64_t v = 0;
	const char *p = s;

	if (s == NULL || *p < '0' || *p > '9')
		return DOF_ERR_INVALID_PARAM;
	for (; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (uint64_t)(*p - '0');
		if (v > UINT32_MAX)
			return DOF_ERR_INVALID_PARAM;
	}
	if (strcmp(p, "s") == 0) {
		v *= 1000;
		if (v > UINT32_MAX)
			return DOF_ERR_INVALID_PARAM;
	} else if (*p != '\0' && strcmp(p, "ms") != 0) {
		return DOF_ERR_INVALID_PARAM;
	}
	*ms = v;
	return DOF_OK;
}

/* Copy word [w, w + n) into buf of size cap; 0 when it does not fit. */
static int dofi_instance_word(char *buf, size_t cap, const char *w, size_t n)
{
	if (n >= cap)
		return 0;
	memcpy(buf, w, n);
	buf[n] = '\0';
	return 1;
}

/* One KEY=VALUE word; 0 when it is not understood. */
static int dofi_instance_option(dofi_instance_t *out, const char *w, size_t n)
{
	char buf[64];
	const char *eq;

	if (!dofi_instance_word(buf, sizeof(buf), w, n))
		return 0;
	eq = strchr(buf, '=');
	if (eq == NULL)
		return 0;
	if ((size_t)(eq - buf) == strlen("link_timeout") &&
	    strncmp(buf, "link_timeout", (size_t)(eq - buf)) == 0)
		return dofi_duration_ms(eq + 1, &out->link_timeout_ms) ==
		       DOF_OK;
	if (strcmp(buf, "ep=msg") == 0 || strcmp(buf, "ep=rdm") == 0) {
		out->ep_type = buf[3] == 'm' ? DOFI_INSTANCE_EP_MSG
		                             : DOFI_INSTANCE_EP_RDM;
		return 1;
	}
	return 0;
}

dof_status_t dofi_instance_parse(const char *text, dofi_instance_t *out,
                                 char *why, size_t why_len)
{
	size_t len;
	const char *p, *end;
	dof_status_t st = DOF_OK;
	int nword = 0;

	memset(out, 0, sizeof(*out));
	out->link_timeout_ms = DOFI_INSTANCE_UNSET;
	if (why_len > 0)
		why[0] = '\0';
	if (text == NULL)
		return DOF_OK;
	len = strnlen(text, DOFI_INSTANCE_MAX + 1);
	p = text;
	end = text + len;
	if (len > DOFI_INSTANCE_MAX) {
		end = text + DOFI_INSTANCE_MAX;
		st = DOF_ERR_INVALID_PARAM;
		snprintf(why, why_len,
		         "longer than %d bytes: the rest is left out",
		         DOFI_INSTANCE_MAX);
	}
	while (p < end) {
		const char *w;
		size_t n;
		int ok;

		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p == end)
			break;
		w = p;
		while (p < end && *p != ' ' && *p != '\t')
			p++;
		n = (size_t)(p - w);
		if (memchr(w, '=', n) != NULL) {
			ok = dofi_instance_option(out, w, n);
			nword = 2; /* no provider or domain after options */
		} else if (nword == 0) {
			ok = dofi_instance_word(out->fi_prov,
			                        sizeof(out->fi_prov), w, n);
			if (ok && strcmp(out->fi_prov, "auto") == 0)
				out->fi_prov[0] = '\0';
			nword++;
		} else if (nword == 1) {
			ok = dofi_instance_word(out->fi_domain,
			                        sizeof(out->fi_domain), w, n);
			nword++;
		} else {
			ok = 0;
		}
		if (!ok && st == DOF_OK) {
			st = DOF_ERR_INVALID_PARAM;
			snprintf(why, why_len,
			         "'%.*s' is not understood: left out",
			         (int)(n > 64 ? 64 : n), w);
		}
	}
	return st;
}
