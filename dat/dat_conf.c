/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/* dat.conf: the 8-field grammar, the file lookup order, built-in entries. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "datr.h"
#include "dof/log.h"

enum {
	DATR_F_IA_NAME,
	DATR_F_API_VERSION,
	DATR_F_THREADSAFETY,
	DATR_F_DEFAULT,
	DATR_F_LIB_PATH,
	DATR_F_PROVIDER_VERSION,
	DATR_F_IA_PARAMS,
	DATR_F_PLATFORM_PARAMS,
	DATR_F_COUNT
};

static const char *const datr_field_names[DATR_F_COUNT] = {
        "ia_name",  "api_version",      "threadsafety", "default",
        "lib_path", "provider_version", "ia_params",    "platform_params",
};

#define datr_conf_warn(_file, _line, _field, _fmt, ...)                     \
	dof_warn(DATR_LOG, "%s:%u: field %d (%s): " _fmt "; entry skipped", \
	         (_file), (_line), (_field) + 1, datr_field_names[_field],  \
	         __VA_ARGS__)

/*
 * Split a line into at most DATR_F_COUNT fields. Quotes group (and are
 * removed); '#' outside quotes starts a comment. Returns the number of
 * fields, or -1 after logging why the line is malformed. Each field points
 * into buf, which is modified.
 */
static int datr_conf_split(char *buf, const char *file, unsigned line,
                           char *fields[DATR_F_COUNT])
{
	char *p = buf;
	int n = 0;

	for (;;) {
		char *start;

		while (*p != '\0' && isspace((unsigned char)*p))
			p++;
		if (*p == '\0' || *p == '#')
			return n;
		if (n == DATR_F_COUNT) {
			dof_warn(DATR_LOG,
			         "%s:%u: unexpected text after field 8 "
			         "(platform_params): '%.40s'; entry skipped",
			         file, line, p);
			return -1;
		}
		if (*p == '"') {
			start = ++p;
			p = strchr(p, '"');
			if (p == NULL) {
				datr_conf_warn(file, line, n,
				               "unterminated quote at '%.40s'",
				               start - 1);
				return -1;
			}
			*p++ = '\0';
			if (*p != '\0' && !isspace((unsigned char)*p) &&
			    *p != '#') {
				datr_conf_warn(file, line, n,
				               "text '%.20s' runs into the "
				               "closing quote",
				               p);
				return -1;
			}
		} else {
			start = p;
			while (*p != '\0' && !isspace((unsigned char)*p) &&
			       *p != '#' && *p != '"')
				p++;
			if (*p == '"') {
				datr_conf_warn(file, line, n,
				               "stray quote in '%.40s'", start);
				return -1;
			}
			if (*p != '\0' && *p != '#')
				*p++ = '\0';
			else if (*p == '#') {
				/* A comment ends the line right here. */
				*p = '\0';
				fields[n++] = start;
				return n;
			}
		}
		fields[n++] = start;
	}
}

/* Parse a decimal number of at most 5 digits; end at *endp. */
static int datr_parse_uint(const char *s, unsigned *out, const char **endp)
{
	unsigned v = 0;
	int digits = 0;

	while (isdigit((unsigned char)*s) && digits < 6) {
		v = v * 10 + (unsigned)(*s - '0');
		s++;
		digits++;
	}
	if (digits == 0 || digits > 5)
		return -1;
	*out = v;
	*endp = s;
	return 0;
}

/* "u2.0": user API, major.minor. */
static int datr_parse_api_version(const char *s, unsigned *major,
                                  unsigned *minor, const char **why)
{
	const char *p;

	if (s[0] == 'k') {
		*why = "kernel (k) API entries are not for user space";
		return -1;
	}
	if (s[0] != 'u') {
		*why = "expected u<major>.<minor>, e.g. u2.0";
		return -1;
	}
	if (datr_parse_uint(s + 1, major, &p) != 0 || *p != '.' ||
	    datr_parse_uint(p + 1, minor, &p) != 0 || *p != '\0') {
		*why = "expected u<major>.<minor>, e.g. u2.0";
		return -1;
	}
	if (*major != DAT_VERSION_MAJOR) {
		*why = "this libdat2 loads only DAT 2.x providers";
		return -1;
	}
	return 0;
}

/* "dapl.2.0": name, then .major.minor at the end. */
static int datr_parse_prov_version(const char *s, char **name, unsigned *major,
                                   unsigned *minor)
{
	const char *dot2 = strrchr(s, '.');
	const char *dot1, *p;

	if (dot2 == NULL || dot2 == s)
		return -1;
	for (dot1 = dot2 - 1; dot1 > s && *dot1 != '.'; dot1--)
		;
	if (*dot1 != '.' || dot1 == s)
		return -1;
	if (datr_parse_uint(dot1 + 1, major, &p) != 0 || p != dot2 ||
	    datr_parse_uint(dot2 + 1, minor, &p) != 0 || *p != '\0')
		return -1;
	*name = strndup(s, (size_t)(dot1 - s));
	return *name == NULL ? -2 : 0;
}

void datr_conf_entry_where(const datr_conf_entry_t *entry, char *buf,
                           size_t len)
{
	if (entry->line != 0)
		snprintf(buf, len, "%s:%u", entry->source, entry->line);
	else
		snprintf(buf, len, "%s", entry->source);
}

void datr_conf_entry_cleanup(datr_conf_entry_t *entry)
{
	free(entry->ia_name);
	free(entry->lib_path);
	free(entry->prov_name);
	free(entry->ia_params);
	free(entry->platform_params);
	free(entry->source);
	memset(entry, 0, sizeof(*entry));
}

dof_status_t datr_conf_parse_line(const char *text, const char *file,
                                  unsigned line, datr_conf_entry_t *entry)
{
	char *fields[DATR_F_COUNT];
	datr_conf_entry_t e;
	const char *why;
	char *buf;
	int n, i, rc;

	buf = strdup(text);
	if (buf == NULL)
		return DOF_ERR_NO_MEMORY;
	buf[strcspn(buf, "\r\n")] = '\0';

	n = datr_conf_split(buf, file, line, fields);
	if (n == 0) {
		free(buf);
		return DOF_ERR_NOT_FOUND;
	}
	if (n < 0)
		goto err_buf;
	if (n < DATR_F_COUNT) {
		dof_warn(DATR_LOG,
		         "%s:%u: field %d (%s) is missing: an entry has 8 "
		         "fields; entry skipped",
		         file, line, n + 1, datr_field_names[n]);
		goto err_buf;
	}
	for (i = 0; i < DATR_F_COUNT; i++) {
		size_t max = i == DATR_F_IA_NAME ? DAT_NAME_MAX_LENGTH - 1
		                                 : DATR_FIELD_MAX - 1;
		size_t len = strlen(fields[i]);

		if (len > max) {
			datr_conf_warn(file, line, i,
			               "%zu characters, longer than %zu", len,
			               max);
			goto err_buf;
		}
		if (len == 0 && i < DATR_F_IA_PARAMS) {
			datr_conf_warn(file, line, i, "%s", "empty");
			goto err_buf;
		}
	}

	memset(&e, 0, sizeof(e));
	if (datr_parse_api_version(fields[DATR_F_API_VERSION], &e.api_major,
	                           &e.api_minor, &why) != 0) {
		datr_conf_warn(file, line, DATR_F_API_VERSION, "'%s': %s",
		               fields[DATR_F_API_VERSION], why);
		goto err_buf;
	}
	if (strcmp(fields[DATR_F_THREADSAFETY], "threadsafe") == 0) {
		e.threadsafe = DAT_TRUE;
	} else if (strcmp(fields[DATR_F_THREADSAFETY], "nonthreadsafe") == 0) {
		e.threadsafe = DAT_FALSE;
	} else {
		datr_conf_warn(file, line, DATR_F_THREADSAFETY,
		               "'%s' is neither threadsafe nor nonthreadsafe",
		               fields[DATR_F_THREADSAFETY]);
		goto err_buf;
	}
	if (strcmp(fields[DATR_F_DEFAULT], "default") == 0) {
		e.is_default = DAT_TRUE;
	} else if (strcmp(fields[DATR_F_DEFAULT], "nondefault") == 0) {
		e.is_default = DAT_FALSE;
	} else {
		datr_conf_warn(file, line, DATR_F_DEFAULT,
		               "'%s' is neither default nor nondefault",
		               fields[DATR_F_DEFAULT]);
		goto err_buf;
	}
	rc = datr_parse_prov_version(fields[DATR_F_PROVIDER_VERSION],
	                             &e.prov_name, &e.prov_major,
	                             &e.prov_minor);
	if (rc == -2)
		goto err_nomem;
	if (rc != 0) {
		datr_conf_warn(file, line, DATR_F_PROVIDER_VERSION,
		               "'%s': expected <name>.<major>.<minor>, e.g. "
		               "dapl.2.0",
		               fields[DATR_F_PROVIDER_VERSION]);
		goto err_buf;
	}
	e.ia_name = strdup(fields[DATR_F_IA_NAME]);
	e.lib_path = strdup(fields[DATR_F_LIB_PATH]);
	e.ia_params = strdup(fields[DATR_F_IA_PARAMS]);
	e.platform_params = strdup(fields[DATR_F_PLATFORM_PARAMS]);
	e.source = strdup(file);
	if (e.ia_name == NULL || e.lib_path == NULL || e.ia_params == NULL ||
	    e.platform_params == NULL || e.source == NULL)
		goto err_entry;
	e.line = line;
	free(buf);
	*entry = e;
	return DOF_OK;

err_entry:
	datr_conf_entry_cleanup(&e);
err_nomem:
	free(buf);
	return DOF_ERR_NO_MEMORY;
err_buf:
	free(buf);
	return DOF_ERR_INVALID_PARAM;
}

static dof_status_t datr_conf_append(datr_conf_t *conf,
                                     datr_conf_entry_t *entry)
{
	size_t i;

	if (conf->count == conf->capacity) {
		size_t cap = conf->capacity ? conf->capacity * 2 : 16;
		datr_conf_entry_t *tmp;

		tmp = realloc(conf->entries, cap * sizeof(*tmp));
		if (tmp == NULL)
			return DOF_ERR_NO_MEMORY;
		conf->entries = tmp;
		conf->capacity = cap;
	}
	for (i = 0; i < conf->count; i++) {
		const datr_conf_entry_t *old = &conf->entries[i];

		if (old->shadowed || strcmp(old->ia_name, entry->ia_name))
			continue;
		entry->shadowed = 1;
		if (entry->line != 0)
			dof_warn(DATR_LOG,
			         "%s:%u: IA name '%s' already defined at "
			         "%s:%u; this entry is ignored",
			         entry->source, entry->line, entry->ia_name,
			         old->source, old->line);
		else
			dof_info(DATR_LOG,
			         "built-in IA '%s' is overridden by %s:%u",
			         entry->ia_name, old->source, old->line);
		break;
	}
	conf->entries[conf->count++] = *entry;
	return DOF_OK;
}

/*
 * Open path for reading only if it is a regular file. stat() first, so a
 * device or FIFO is never opened at all; then open without blocking (a
 * FIFO swapped in meanwhile has no writer to wait for) and check again on
 * the descriptor, which is what is read. Symbolic links are followed.
 */
static dof_status_t datr_conf_open(const char *path, FILE **out)
{
	struct stat st;
	FILE *fp;
	int fd;

	if (stat(path, &st) != 0) {
		dof_warn(DATR_LOG, "cannot read %s: %s", path, strerror(errno));
		return DOF_ERR_IO;
	}
	if (!S_ISREG(st.st_mode))
		goto err_type;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		dof_warn(DATR_LOG, "cannot read %s: %s", path, strerror(errno));
		return DOF_ERR_IO;
	}
	if (fstat(fd, &st) != 0) {
		dof_warn(DATR_LOG, "cannot read %s: %s", path, strerror(errno));
		close(fd);
		return DOF_ERR_IO;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		goto err_type;
	}
	if (st.st_size > DATR_CONF_SIZE_MAX) {
		dof_warn(DATR_LOG,
		         "%s is refused: %lld bytes, larger than %d; "
		         "built-in entries only",
		         path, (long long)st.st_size, DATR_CONF_SIZE_MAX);
		close(fd);
		return DOF_ERR_INVALID_PARAM;
	}
	fp = fdopen(fd, "r");
	if (fp == NULL) {
		int err = errno; /* before close() may change it */

		dof_warn(DATR_LOG, "cannot read %s: %s", path, strerror(err));
		close(fd);
		return err == ENOMEM ? DOF_ERR_NO_MEMORY : DOF_ERR_IO;
	}
	*out = fp;
	return DOF_OK;

err_type:
	dof_warn(DATR_LOG,
	         "%s is refused: not a regular file (%s); built-in entries "
	         "only",
	         path,
	         S_ISDIR(st.st_mode)    ? "a directory"
	         : S_ISFIFO(st.st_mode) ? "a FIFO"
	         : S_ISCHR(st.st_mode)  ? "a character device"
	         : S_ISBLK(st.st_mode)  ? "a block device"
	         : S_ISSOCK(st.st_mode) ? "a socket"
	                                : "of an unknown type");
	return DOF_ERR_INVALID_PARAM;
}

/*
 * Read one line into buf (DATR_LINE_MAX + 1 bytes), newline included, and
 * NUL-terminate it. *len is the line's full length, which may be more than
 * was kept; *total counts every byte read from the file. Returns 0 with
 * *len == 0 at the end of the file, -1 on a read error, 1 when the file
 * passes DATR_CONF_SIZE_MAX (it grew after fstat, or reports no size).
 */
static int datr_conf_read_line(FILE *fp, char *buf, size_t *len, size_t *total)
{
	size_t n = 0;
	int c;

	while ((c = getc(fp)) != EOF) {
		if (++*total > DATR_CONF_SIZE_MAX)
			return 1;
		if (n < DATR_LINE_MAX)
			buf[n] = (char)c;
		n++;
		if (c == '\n')
			break;
	}
	if (ferror(fp))
		return -1;
	buf[n < DATR_LINE_MAX ? n : DATR_LINE_MAX] = '\0';
	*len = n;
	return 0;
}

dof_status_t datr_conf_load_file(datr_conf_t *conf, const char *path)
{
	size_t first = conf->count, total = 0;
	dof_status_t status = DOF_OK;
	datr_conf_entry_t entry;
	unsigned line = 0;
	char *text, *copy;
	FILE *fp;

	status = datr_conf_open(path, &fp);
	if (status != DOF_OK)
		return status;
	text = malloc(DATR_LINE_MAX + 1);
	copy = strdup(path);
	if (text == NULL || copy == NULL) {
		status = DOF_ERR_NO_MEMORY;
		goto out;
	}
	for (;;) {
		dof_status_t rc;
		size_t len;
		int rd = datr_conf_read_line(fp, text, &len, &total);

		if (rd < 0) {
			dof_warn(DATR_LOG, "%s:%u: read error: %s", path,
			         line + 1, strerror(errno));
			status = DOF_ERR_IO;
			break;
		}
		if (rd > 0) {
			dof_warn(DATR_LOG,
			         "%s is refused: larger than %d bytes; "
			         "built-in entries only",
			         path, DATR_CONF_SIZE_MAX);
			status = DOF_ERR_INVALID_PARAM;
			break;
		}
		if (len == 0)
			break;
		line++;
		if (len > DATR_LINE_MAX) {
			dof_warn(DATR_LOG,
			         "%s:%u: line of %zu bytes, longer than %d; "
			         "entry skipped",
			         path, line, len, DATR_LINE_MAX);
			continue;
		}
		rc = datr_conf_parse_line(text, copy, line, &entry);
		if (rc == DOF_ERR_NO_MEMORY) {
			status = rc;
			break;
		}
		if (rc != DOF_OK)
			continue;
		dof_info(DATR_LOG, "%s:%u: IA '%s' -> %s \"%s\"", copy, line,
		         entry.ia_name, entry.lib_path, entry.ia_params);
		rc = datr_conf_append(conf, &entry);
		if (rc != DOF_OK) {
			datr_conf_entry_cleanup(&entry);
			status = rc;
			break;
		}
	}
	if (status == DOF_OK) {
		free(conf->path);
		conf->path = copy;
		copy = NULL;
	} else {
		/* All of the file or none of it. */
		while (conf->count > first)
			datr_conf_entry_cleanup(&conf->entries[--conf->count]);
	}
out:
	free(copy);
	free(text);
	fclose(fp);
	return status;
}

/* Our provider's names; the file's entries come first and win. */
static const struct {
	const char *name;
	const char *params;
} datr_builtins[] = {
        {"ofi", "auto"},
        {"ofi-tcp", "tcp"},
        {"ofi-sockets", "sockets"},
        {"ofi-verbs", "verbs"},
        {"ofi-efa", "efa"},
        {"ofi-shm", "shm"},
        {"ofi-rxm", "tcp;ofi_rxm"},
        {"ofi-rxd", "udp;ofi_rxd"},
};

dof_status_t datr_conf_add_builtins(datr_conf_t *conf)
{
	size_t i;

	for (i = 0; i < sizeof(datr_builtins) / sizeof(datr_builtins[0]); i++) {
		datr_conf_entry_t e = {
		        .api_major = DAT_VERSION_MAJOR,
		        .api_minor = DAT_VERSION_MINOR,
		        .threadsafe = DAT_TRUE,
		        .is_default = DAT_TRUE,
		        .prov_major = DAT_VERSION_MAJOR,
		        .prov_minor = DAT_VERSION_MINOR,
		};

		e.ia_name = strdup(datr_builtins[i].name);
		e.lib_path = strdup(DAPL_OFI_PROVIDER_LIB);
		e.prov_name = strdup("dapl");
		e.ia_params = strdup(datr_builtins[i].params);
		e.platform_params = strdup("");
		e.source = strdup("built-in");
		if (e.source == NULL || e.ia_name == NULL ||
		    e.lib_path == NULL || e.prov_name == NULL ||
		    e.ia_params == NULL || e.platform_params == NULL ||
		    datr_conf_append(conf, &e) != DOF_OK) {
			datr_conf_entry_cleanup(&e);
			return DOF_ERR_NO_MEMORY;
		}
	}
	return DOF_OK;
}

datr_conf_entry_t *datr_conf_find(datr_conf_t *conf, const char *ia_name)
{
	size_t i;

	for (i = 0; i < conf->count; i++) {
		datr_conf_entry_t *e = &conf->entries[i];

		if (!e->shadowed && strcmp(e->ia_name, ia_name) == 0)
			return e;
	}
	return NULL;
}

void datr_conf_cleanup(datr_conf_t *conf)
{
	size_t i;

	for (i = 0; i < conf->count; i++)
		datr_conf_entry_cleanup(&conf->entries[i]);
	free(conf->entries);
	free(conf->path);
	memset(conf, 0, sizeof(*conf));
}

const char *datr_conf_choose_path(void)
{
	static const char *const candidates[] = {DAT_SYSCONF_PATH,
	                                         "/etc/dat.conf"};
	const char *env = getenv("DAT_OVERRIDE");
	size_t i;

	if (env != NULL && *env != '\0')
		return env;
	for (i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++)
		if (access(candidates[i], R_OK) == 0)
			return candidates[i];
	return NULL;
}
