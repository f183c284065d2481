/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * libFuzzer target: the dat.conf parser (dat/dat_conf.c). The input is a
 * whole file: each line goes through datr_conf_parse_line, then the file
 * through datr_conf_load_file (from a memfd) with the built-in entries
 * after it, and every entry is looked up again by name. An accepted line
 * must hold what the grammar allows; a refused one must leave the entry
 * alone. Log lines are formatted, at every level, and dropped. Build and
 * run: fuzz/run.sh dat_conf. It builds with the file and line limits
 * lowered (fuzz/run.sh sets them) so that inputs of libFuzzer's usual
 * sizes reach both: a file over the limit must be refused as a whole.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "datr.h"
#include "dof/log.h"

/* common/log.c's two symbols: everything formatted, nothing written. */
dof_log_level_t dof_log_level = DOF_LOG_TRACE;

void dof_log_printf(dof_log_level_t level, const char *component,
                    const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	(void)level;
	(void)component;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
}

static void check_entry(const datr_conf_entry_t *e, const char *file,
                        unsigned line)
{
	if (e->ia_name == NULL || e->lib_path == NULL || e->prov_name == NULL ||
	    e->ia_params == NULL || e->platform_params == NULL ||
	    e->source == NULL)
		abort();
	if (e->ia_name[0] == '\0' ||
	    strlen(e->ia_name) >= DAT_NAME_MAX_LENGTH ||
	    e->lib_path[0] == '\0' || strlen(e->lib_path) >= DATR_FIELD_MAX ||
	    strlen(e->ia_params) >= DATR_FIELD_MAX ||
	    strlen(e->platform_params) >= DATR_FIELD_MAX)
		abort();
	if (e->api_major != DAT_VERSION_MAJOR || e->api_minor > 99999 ||
	    e->prov_major > 99999 || e->prov_minor > 99999)
		abort();
	if ((e->threadsafe != DAT_TRUE && e->threadsafe != DAT_FALSE) ||
	    (e->is_default != DAT_TRUE && e->is_default != DAT_FALSE))
		abort();
	if (file != NULL && (strcmp(e->source, file) != 0 || e->line != line))
		abort();
	/* Quotes are taken off; a line ends at its first CR or LF. */
	if (strpbrk(e->ia_name, "\"\r\n") || strpbrk(e->lib_path, "\"\r\n") ||
	    strpbrk(e->prov_name, "\"\r\n") ||
	    strpbrk(e->ia_params, "\"\r\n") ||
	    strpbrk(e->platform_params, "\"\r\n"))
		abort();
}

static void parse_lines(const uint8_t *data, size_t size)
{
	unsigned line = 0;
	size_t at = 0;

	while (at < size) {
		const uint8_t *nl = memchr(data + at, '\n', size - at);
		size_t len = nl ? (size_t)(nl - (data + at)) + 1 : size - at;
		char *text = malloc(len + 1);
		datr_conf_entry_t e;
		dof_status_t st;

		if (text == NULL)
			return;
		memcpy(text, data + at, len);
		text[len] = '\0';
		line++;
		memset(&e, 0x5a, sizeof(e));
		st = datr_conf_parse_line(text, "fuzz.conf", line, &e);
		if (st == DOF_OK) {
			check_entry(&e, "fuzz.conf", line);
			datr_conf_entry_cleanup(&e);
		} else {
			const unsigned char *p = (const unsigned char *)&e;
			size_t i;

			if (st != DOF_ERR_NOT_FOUND &&
			    st != DOF_ERR_INVALID_PARAM &&
			    st != DOF_ERR_NO_MEMORY)
				abort();
			for (i = 0; i < sizeof(e); i++)
				if (p[i] != 0x5a)
					abort(); /* touched on failure */
		}
		free(text);
		at += len;
	}
}

static void load_file(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	datr_conf_t conf;
	size_t i, files = 0;

	if (fd < 0) {
		fd = memfd_create("fuzz-dat.conf", 0);
		if (fd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) != 0 ||
	    (size > 0 && pwrite(fd, data, size, 0) != (ssize_t)size))
		abort();
	memset(&conf, 0, sizeof(conf));
	if (size > DATR_CONF_SIZE_MAX) {
		if (datr_conf_load_file(&conf, path) != DOF_ERR_INVALID_PARAM ||
		    conf.count != 0 || conf.path != NULL)
			abort();
	} else if (datr_conf_load_file(&conf, path) != DOF_OK ||
	           conf.path == NULL) {
		abort();
	}
	if (datr_conf_add_builtins(&conf) != DOF_OK)
		abort();
	for (i = 0; i < conf.count; i++) {
		const datr_conf_entry_t *e = &conf.entries[i];
		const datr_conf_entry_t *f;

		check_entry(e, NULL, 0);
		files += e->line != 0;
		f = datr_conf_find(&conf, e->ia_name);
		/* The first entry of a name wins; later ones are shadowed. */
		if (f == NULL || f->shadowed ||
		    strcmp(f->ia_name, e->ia_name) ||
		    (f != e && !e->shadowed) || f > e)
			abort();
	}
	/* The built-ins come last, whatever the file held. */
	if (conf.count < files || datr_conf_find(&conf, "ofi-tcp") == NULL)
		abort();
	datr_conf_cleanup(&conf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	parse_lines(data, size);
	load_file(data, size);
	return 0;
}
