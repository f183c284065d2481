/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/* dat.conf parser: the grammar's edge cases, the lookup order, built-ins. */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_tests.h"
#include "datr.h"

static dof_status_t parse(const char *line, datr_conf_entry_t *e)
{
	memset(e, 0, sizeof(*e));
	return datr_conf_parse_line(line, "test.conf", 7, e);
}

START_TEST(conf_good_entry)
{
	datr_conf_entry_t e;

	ck_assert_int_eq(parse("ofi-tcp u2.0 nonthreadsafe default "
	                       "libdaplofi.so.2 dapl.2.0 \"tcp lo\" \"\"\n",
	                       &e),
	                 DOF_OK);
	ck_assert_str_eq(e.ia_name, "ofi-tcp");
	ck_assert_uint_eq(e.api_major, 2);
	ck_assert_uint_eq(e.api_minor, 0);
	ck_assert_int_eq(e.threadsafe, DAT_FALSE);
	ck_assert_int_eq(e.is_default, DAT_TRUE);
	ck_assert_str_eq(e.lib_path, "libdaplofi.so.2");
	ck_assert_str_eq(e.prov_name, "dapl");
	ck_assert_uint_eq(e.prov_major, 2);
	ck_assert_uint_eq(e.prov_minor, 0);
	ck_assert_str_eq(e.ia_params, "tcp lo");
	ck_assert_str_eq(e.platform_params, "");
	ck_assert_str_eq(e.source, "test.conf");
	ck_assert_uint_eq(e.line, 7);
	datr_conf_entry_cleanup(&e);
}
END_TEST

START_TEST(conf_threadsafe_nondefault_tabs)
{
	datr_conf_entry_t e;

	ck_assert_int_eq(parse("\tx\tu2.1\tthreadsafe\tnondefault\t/a/b.so\t"
	                       "my.prov.3.14\t\"a  b\"\t\"p q\"  ",
	                       &e),
	                 DOF_OK);
	ck_assert_int_eq(e.threadsafe, DAT_TRUE);
	ck_assert_int_eq(e.is_default, DAT_FALSE);
	ck_assert_uint_eq(e.api_minor, 1);
	/* The name may itself hold dots; the last two parts are numbers. */
	ck_assert_str_eq(e.prov_name, "my.prov");
	ck_assert_uint_eq(e.prov_major, 3);
	ck_assert_uint_eq(e.prov_minor, 14);
	ck_assert_str_eq(e.ia_params, "a  b");
	ck_assert_str_eq(e.platform_params, "p q");
	datr_conf_entry_cleanup(&e);
}
END_TEST

START_TEST(conf_comments_and_blanks)
{
	datr_conf_entry_t e;

	ck_assert_int_eq(parse("", &e), DOF_ERR_NOT_FOUND);
	ck_assert_int_eq(parse("   \t \r\n", &e), DOF_ERR_NOT_FOUND);
	ck_assert_int_eq(parse("# a comment u2.0", &e), DOF_ERR_NOT_FOUND);
	ck_assert_int_eq(parse("   # indented comment", &e), DOF_ERR_NOT_FOUND);
	/* A trailing comment after the 8 fields is fine ... */
	ck_assert_int_eq(parse("a u2.0 threadsafe default l.so d.2.0 \"x\" "
	                       "\"\" # trailing",
	                       &e),
	                 DOF_OK);
	datr_conf_entry_cleanup(&e);
	/* ... and '#' inside quotes is data. */
	ck_assert_int_eq(parse("a u2.0 threadsafe default l.so d.2.0 \"x#y\" "
	                       "\"#\"",
	                       &e),
	                 DOF_OK);
	ck_assert_str_eq(e.ia_params, "x#y");
	ck_assert_str_eq(e.platform_params, "#");
	datr_conf_entry_cleanup(&e);
	/* A comment that cuts the entry short leaves fields missing. */
	ck_assert_int_eq(
	        parse("a u2.0 threadsafe default l.so#d.2.0 \"\" \"\"", &e),
	        DOF_ERR_INVALID_PARAM);
}
END_TEST

START_TEST(conf_missing_and_extra_fields)
{
	datr_conf_entry_t e;

	ck_assert_int_eq(parse("a", &e), DOF_ERR_INVALID_PARAM);
	ck_assert_int_eq(
	        parse("a u2.0 threadsafe default l.so d.2.0 \"x\"", &e),
	        DOF_ERR_INVALID_PARAM);
	ck_assert_int_eq(parse("a u2.0 threadsafe default l.so d.2.0 \"x\" "
	                       "\"\" extra",
	                       &e),
	                 DOF_ERR_INVALID_PARAM);
}
END_TEST

START_TEST(conf_bad_quotes)
{
	datr_conf_entry_t e;

	ck_assert_int_eq(parse("a u2.0 threadsafe default l.so d.2.0 \"x "
	                       "\"\"",
	                       &e),
	                 DOF_ERR_INVALID_PARAM);
	ck_assert_int_eq(parse("a u2.0 threadsafe default l.so d.2.0 \"x\" "
	                       "\"unterminated",
	                       &e),
	                 DOF_ERR_INVALID_PARAM);
	ck_assert_int_eq(parse("a u2.0 threadsafe default l.so d.2.0 x\"y\" "
	                       "\"\"",
	                       &e),
	                 DOF_ERR_INVALID_PARAM);
	/* Unquoted single words are accepted for the last two fields. */
	ck_assert_int_eq(
	        parse("a u2.0 threadsafe default l.so d.2.0 tcp -", &e),
	        DOF_OK);
	ck_assert_str_eq(e.ia_params, "tcp");
	datr_conf_entry_cleanup(&e);
}
END_TEST

START_TEST(conf_bad_versions)
{
	static const char *const bad[] = {
	        "a k2.0 threadsafe default l.so d.2.0 \"\" \"\"",
	        "a 2.0 threadsafe default l.so d.2.0 \"\" \"\"",
	        "a u1.2 threadsafe default l.so d.2.0 \"\" \"\"",
	        "a u3.0 threadsafe default l.so d.2.0 \"\" \"\"",
	        "a u2 threadsafe default l.so d.2.0 \"\" \"\"",
	        "a u2.x threadsafe default l.so d.2.0 \"\" \"\"",
	        "a u2.0.1 threadsafe default l.so d.2.0 \"\" \"\"",
	        "a u99999999999.0 threadsafe default l.so d.2.0 \"\" \"\"",
	        "a u2.0 threadsafe default l.so dapl \"\" \"\"",
	        "a u2.0 threadsafe default l.so dapl.2 \"\" \"\"",
	        "a u2.0 threadsafe default l.so .2.0 \"\" \"\"",
	        "a u2.0 threadsafe default l.so d.2.x \"\" \"\"",
	        "a u2.0 safe default l.so d.2.0 \"\" \"\"",
	        "a u2.0 threadsafe maybe l.so d.2.0 \"\" \"\"",
	        "a u2.0 threadsafe default \"\" d.2.0 \"\" \"\"",
	};
	datr_conf_entry_t e;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(parse(bad[i], &e) == DOF_ERR_INVALID_PARAM,
		              "accepted: %s", bad[i]);
}
END_TEST

START_TEST(conf_long_fields)
{
	char *line = malloc(3 * DATR_FIELD_MAX + 200);
	char name[DAT_NAME_MAX_LENGTH + 2];
	datr_conf_entry_t e;

	ck_assert_ptr_nonnull(line);
	/* The longest legal IA name is DAT_NAME_MAX_LENGTH - 1. */
	memset(name, 'n', DAT_NAME_MAX_LENGTH - 1);
	name[DAT_NAME_MAX_LENGTH - 1] = '\0';
	sprintf(line, "%s u2.0 threadsafe default l.so d.2.0 \"\" \"\"", name);
	ck_assert_int_eq(parse(line, &e), DOF_OK);
	ck_assert_uint_eq(strlen(e.ia_name), DAT_NAME_MAX_LENGTH - 1);
	datr_conf_entry_cleanup(&e);
	strcat(name, "n");
	sprintf(line, "%s u2.0 threadsafe default l.so d.2.0 \"\" \"\"", name);
	ck_assert_int_eq(parse(line, &e), DOF_ERR_INVALID_PARAM);

	/* A field longer than any path is refused, not truncated. */
	strcpy(line, "a u2.0 threadsafe default l.so d.2.0 \"");
	memset(line + strlen(line), 'x', 2 * DATR_FIELD_MAX);
	line[38 + 2 * DATR_FIELD_MAX] = '\0';
	strcat(line, "\" \"\"");
	ck_assert_int_eq(parse(line, &e), DOF_ERR_INVALID_PARAM);
	free(line);
}
END_TEST

static char *write_conf(const char *text)
{
	char *path = malloc(CHECK_PATH_MAX);
	FILE *fp;

	ck_assert_ptr_nonnull(path);
	fp = check_tmp_open(path, "dat-conf-test");
	ck_assert_uint_eq(fwrite(text, 1, strlen(text), fp), strlen(text));
	ck_assert_int_eq(fclose(fp), 0);
	return path;
}

START_TEST(conf_file_duplicates_and_builtins)
{
	char *path = write_conf(
	        "# header\n"
	        "one u2.0 nonthreadsafe default a.so d.2.0 \"1\" \"\"\n"
	        "bad u2.0 nonthreadsafe default\n"
	        "one u2.0 nonthreadsafe default b.so d.2.0 \"2\" \"\"\n"
	        "ofi-tcp u2.0 threadsafe nondefault c.so d.2.0 \"mine\" \"\"\n"
	        "\n"
	        "two u2.0 nonthreadsafe nondefault d.so d.2.0 \"3\" \"\"");
	datr_conf_t conf = {0};
	datr_conf_entry_t *e;

	ck_assert_int_eq(datr_conf_load_file(&conf, path), DOF_OK);
	ck_assert_uint_eq(conf.count, 4);
	ck_assert_int_eq(datr_conf_add_builtins(&conf), DOF_OK);
	ck_assert_uint_eq(conf.count, 12);

	e = datr_conf_find(&conf, "one");
	ck_assert_ptr_nonnull(e);
	ck_assert_str_eq(e->lib_path, "a.so"); /* the first one wins */
	ck_assert_uint_eq(e->line, 2);
	ck_assert_int_eq(conf.entries[1].shadowed, 1);

	e = datr_conf_find(&conf, "two"); /* last line, no newline */
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e->line, 7);

	/* A file entry shadows the built-in of the same name. */
	e = datr_conf_find(&conf, "ofi-tcp");
	ck_assert_ptr_nonnull(e);
	ck_assert_str_eq(e->ia_params, "mine");
	e = datr_conf_find(&conf, "ofi-sockets");
	ck_assert_ptr_nonnull(e);
	ck_assert_str_eq(e->source, "built-in");
	ck_assert_str_eq(e->ia_params, "sockets");
	ck_assert_ptr_nonnull(datr_conf_find(&conf, "ofi"));
	ck_assert_ptr_nonnull(datr_conf_find(&conf, "ofi-verbs"));
	ck_assert_ptr_nonnull(datr_conf_find(&conf, "ofi-efa"));
	ck_assert_ptr_nonnull(datr_conf_find(&conf, "ofi-shm"));
	ck_assert_str_eq(datr_conf_find(&conf, "ofi-rxm")->ia_params,
	                 "tcp;ofi_rxm");
	ck_assert_str_eq(datr_conf_find(&conf, "ofi-rxd")->ia_params,
	                 "udp;ofi_rxd");
	ck_assert_ptr_null(datr_conf_find(&conf, "bad"));
	ck_assert_ptr_null(datr_conf_find(&conf, "nosuch"));

	datr_conf_cleanup(&conf);
	unlink(path);
	free(path);
}
END_TEST

START_TEST(conf_missing_file)
{
	datr_conf_t conf = {0};

	ck_assert_int_eq(datr_conf_load_file(&conf, "/nonexistent/dat.conf"),
	                 DOF_ERR_IO);
	ck_assert_uint_eq(conf.count, 0);
	datr_conf_cleanup(&conf);
}
END_TEST

START_TEST(conf_huge_line)
{
	/* A 512 KiB line: skipped with a warning, the next line still read. */
	size_t big = 512 * 1024;
	char *text = malloc(big + 200);
	datr_conf_t conf = {0};
	char *path;

	ck_assert_ptr_nonnull(text);
	memset(text, 'z', big);
	strcpy(text + big, " u2.0 threadsafe default l.so d.2.0 \"\" \"\"\n"
	                   "ok u2.0 threadsafe default l.so d.2.0 \"\" \"\"\n");
	path = write_conf(text);
	ck_assert_int_eq(datr_conf_load_file(&conf, path), DOF_OK);
	ck_assert_uint_eq(conf.count, 1);
	ck_assert_str_eq(conf.entries[0].ia_name, "ok");
	ck_assert_uint_eq(conf.entries[0].line, 2);
	datr_conf_cleanup(&conf);
	unlink(path);
	free(path);
	free(text);
}
END_TEST

/*
 * The limits dat.conf(5) documents: a file of at most 1 MiB, a line of at
 * most 32 KiB with its newline. Written out here so a change of either
 * has to change this test and the page together.
 */
#define CONF_SIZE_MAX (1024 * 1024)
#define CONF_LINE_MAX (32 * 1024)

static const char conf_ok_line[] =
        "ok u2.0 threadsafe default l.so d.2.0 \"\" \"\"\n";

/*
 * Load path with stderr sent to a file; the log lines come back in log
 * (malloc'd). Each limits test also runs under the case's timeout.
 */
static dof_status_t load_logged(datr_conf_t *conf, const char *path, char **log)
{
	char tmpl[CHECK_PATH_MAX];
	dof_status_t st;
	int fd, saved;
	off_t len;

	fd = mkstemp(check_tmp_template(tmpl, sizeof(tmpl), "dat-conf-log"));
	ck_assert_int_ge(fd, 0);
	unlink(tmpl);
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	ck_assert_int_ge(saved, 0);
	ck_assert_int_ge(dup2(fd, STDERR_FILENO), 0);
	st = datr_conf_load_file(conf, path);
	fflush(stderr);
	ck_assert_int_ge(dup2(saved, STDERR_FILENO), 0);
	close(saved);
	len = lseek(fd, 0, SEEK_END);
	ck_assert_int_ge(len, 0);
	*log = calloc(1, (size_t)len + 1);
	ck_assert_ptr_nonnull(*log);
	ck_assert_int_eq(pread(fd, *log, (size_t)len, 0), len);
	close(fd);
	return st;
}

/* The case's timeout needs Check's fork mode; this also holds without. */
static void limits_setup(void)
{
	alarm(20);
}

static void limits_teardown(void)
{
	alarm(0);
}

/* path is refused as a whole, nothing added, with a warning holding why. */
static void assert_refused(const char *path, const char *why)
{
	datr_conf_t conf = {0};
	char *log;

	ck_assert_int_eq(load_logged(&conf, path, &log), DOF_ERR_INVALID_PARAM);
	ck_assert_uint_eq(conf.count, 0);
	ck_assert_ptr_null(conf.path);
	ck_assert_msg(strstr(log, "warning") && strstr(log, path) &&
	                      strstr(log, why),
	              "log for %s lacks '%s': %s", path, why, log);
	free(log);
	datr_conf_cleanup(&conf);
}

START_TEST(conf_refuse_fifo)
{
	char dir[CHECK_PATH_MAX], path[CHECK_PATH_MAX + 16];

	/* No writer: a blocking open would wait for ever. */
	ck_assert_ptr_nonnull(
	        mkdtemp(check_tmp_template(dir, sizeof(dir), "dat-conf-fifo")));
	snprintf(path, sizeof(path), "%s/dat.conf", dir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	assert_refused(path, "not a regular file");
	unlink(path);
	rmdir(dir);
}
END_TEST

START_TEST(conf_refuse_directory)
{
	char dir[CHECK_PATH_MAX];

	ck_assert_ptr_nonnull(
	        mkdtemp(check_tmp_template(dir, sizeof(dir), "dat-conf-dir")));
	assert_refused(dir, "not a regular file");
	rmdir(dir);
}
END_TEST

START_TEST(conf_refuse_dev_zero)
{
	/* Endless, without a newline: one line that never ends. */
	assert_refused("/dev/zero", "not a regular file");
}
END_TEST

START_TEST(conf_refuse_dev_urandom)
{
	/* Endless, with a newline every 256 bytes or so. */
	assert_refused("/dev/urandom", "not a regular file");
}
END_TEST

/* A file of size bytes: comment lines, then conf_ok_line at its end. */
static char *write_sized_conf(size_t size)
{
	size_t ok = strlen(conf_ok_line), at = 0;
	char *text = malloc(size + 1);
	char *path;

	ck_assert_ptr_nonnull(text);
	ck_assert_uint_ge(size, ok);
	while (at < size - ok) {
		size_t n = size - ok - at < 80 ? size - ok - at : 80;

		memset(text + at, '#', n);
		text[at + n - 1] = '\n';
		at += n;
	}
	memcpy(text + at, conf_ok_line, ok + 1);
	path = write_conf(text);
	free(text);
	return path;
}

START_TEST(conf_size_limit)
{
	datr_conf_t conf = {0};
	char *path, *log;

	/* At the limit: read, and its last line used. */
	path = write_sized_conf(CONF_SIZE_MAX);
	ck_assert_int_eq(load_logged(&conf, path, &log), DOF_OK);
	ck_assert_uint_eq(conf.count, 1);
	ck_assert_str_eq(conf.entries[0].ia_name, "ok");
	ck_assert_str_eq(conf.path, path);
	free(log);
	datr_conf_cleanup(&conf);
	unlink(path);
	free(path);

	/* One byte over: refused as a whole, its entry not used. */
	path = write_sized_conf(CONF_SIZE_MAX + 1);
	assert_refused(path, "larger than");
	unlink(path);
	free(path);
}
END_TEST

START_TEST(conf_line_limit)
{
	/*
	 * Line 1 fits exactly (a comment pads it to the limit, newline
	 * included); line 2 is one byte longer and skipped, with a warning
	 * naming it; lines after it are still read.
	 */
	static const char entry[] = "a%d u2.0 threadsafe default l.so d.2.0 "
	                            "\"\" \"\" #";
	size_t len = 2 * CONF_LINE_MAX + 200;
	char *text = malloc(len);
	datr_conf_t conf = {0};
	char *path, *log, *p = text;
	int i;

	ck_assert_ptr_nonnull(text);
	for (i = 1; i <= 2; i++) {
		int n = sprintf(p, entry, i);
		size_t want = (size_t)CONF_LINE_MAX + (size_t)(i - 1);

		memset(p + n, 'x', want - (size_t)n - 1);
		p[want - 1] = '\n';
		p += want;
	}
	strcpy(p, conf_ok_line);
	path = write_conf(text);
	free(text);

	ck_assert_int_eq(load_logged(&conf, path, &log), DOF_OK);
	ck_assert_uint_eq(conf.count, 2);
	ck_assert_str_eq(conf.entries[0].ia_name, "a1");
	ck_assert_uint_eq(conf.entries[0].line, 1);
	ck_assert_str_eq(conf.entries[1].ia_name, "ok");
	ck_assert_uint_eq(conf.entries[1].line, 3);
	ck_assert_msg(strstr(log, ":2: ") && strstr(log, "longer than"),
	              "no warning for line 2: %s", log);
	free(log);
	datr_conf_cleanup(&conf);
	unlink(path);
	free(path);
}
END_TEST

START_TEST(conf_registry_device)
{
	/*
	 * The registry's first read, as dat_ia_open makes it, with a device
	 * named: it returns, and only the 8 built-in names are known.
	 */
	DAT_COUNT n = -1;

	setenv("DAT_OVERRIDE", "/dev/urandom", 1);
	ck_assert_int_ne(dat_registry_list_providers(0, &n, NULL), DAT_SUCCESS);
	ck_assert_int_eq(n, 8);
	unsetenv("DAT_OVERRIDE");
}
END_TEST

START_TEST(conf_override_wins)
{
	setenv("DAT_OVERRIDE", "/some/where/dat.conf", 1);
	ck_assert_str_eq(datr_conf_choose_path(), "/some/where/dat.conf");
	setenv("DAT_OVERRIDE", "", 1);
	/* Empty means unset: the sysconfdir file, /etc/dat.conf, or none. */
	if (access(DAT_SYSCONF_PATH, R_OK) == 0)
		ck_assert_str_eq(datr_conf_choose_path(), DAT_SYSCONF_PATH);
	else if (access("/etc/dat.conf", R_OK) == 0)
		ck_assert_str_eq(datr_conf_choose_path(), "/etc/dat.conf");
	else
		ck_assert_ptr_null(datr_conf_choose_path());
	unsetenv("DAT_OVERRIDE");
}
END_TEST

START_TEST(conf_ofed_file)
{
	/* Debian's OFED dat.conf, when installed, parses without a skip. */
	datr_conf_t conf = {0};
	FILE *fp = fopen("/etc/dat.conf", "r");
	char line[1024];
	size_t entries = 0;

	if (fp == NULL) {
		/* Nothing to compare with; the other cases still ran. */
		return;
	}
	while (fgets(line, sizeof(line), fp))
		if (line[strspn(line, " \t")] != '#' &&
		    line[strspn(line, " \t\r\n")] != '\0')
			entries++;
	fclose(fp);
	ck_assert_int_eq(datr_conf_load_file(&conf, "/etc/dat.conf"), DOF_OK);
	ck_assert_uint_eq(conf.count, entries);
	datr_conf_cleanup(&conf);
}
END_TEST

Suite *check_conf_suite(void)
{
	Suite *s = suite_create("dat.conf");
	TCase *tc = tcase_create("parser");

	tcase_add_test(tc, conf_good_entry);
	tcase_add_test(tc, conf_threadsafe_nondefault_tabs);
	tcase_add_test(tc, conf_comments_and_blanks);
	tcase_add_test(tc, conf_missing_and_extra_fields);
	tcase_add_test(tc, conf_bad_quotes);
	tcase_add_test(tc, conf_bad_versions);
	tcase_add_test(tc, conf_long_fields);
	tcase_add_test(tc, conf_file_duplicates_and_builtins);
	tcase_add_test(tc, conf_missing_file);
	tcase_add_test(tc, conf_huge_line);
	tcase_add_test(tc, conf_override_wins);
	tcase_add_test(tc, conf_ofed_file);
	suite_add_tcase(s, tc);

	/* A test that blocks or reads for ever fails at the timeout. */
	tc = tcase_create("limits");
	tcase_set_timeout(tc, 10);
	tcase_add_checked_fixture(tc, limits_setup, limits_teardown);
	tcase_add_test(tc, conf_refuse_fifo);
	tcase_add_test(tc, conf_refuse_directory);
	tcase_add_test(tc, conf_refuse_dev_zero);
	tcase_add_test(tc, conf_refuse_dev_urandom);
	tcase_add_test(tc, conf_size_limit);
	tcase_add_test(tc, conf_line_limit);
	tcase_add_test(tc, conf_registry_device);
	suite_add_tcase(s, tc);
	return s;
}
