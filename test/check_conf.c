/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/* dat.conf parser: the grammar's edge cases, the lookup order, built-ins. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
	char *path = strdup("/tmp/dat-conf-test.XXXXXX");
	int fd;

	ck_assert_ptr_nonnull(path);
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
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
	ck_assert_uint_eq(conf.count, 11);

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
	/* A 1 MiB line: refused with a warning, the next line still read. */
	size_t big = 1 << 20;
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
	return s;
}
