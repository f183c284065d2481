/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * The progress thread's device lookup (prov/ofi/dofi_progress.c,
 * dofi_progress_dev): a domain name leads to hwloc's topology only when
 * /sys knows it as a network interface or an RDMA device, itself or
 * without a -suffix (efa's -rdm); shm's domain and names that are no
 * file name lead nowhere. Uses the loopback interface, which every
 * Linux machine has.
 */
#include "config.h"

#include <string.h>

#include "check_tests.h"
#include "dofi.h"

START_TEST(progress_dev_interface)
{
	char dev[64];

	ck_assert_int_eq(dofi_progress_dev("lo", dev, sizeof(dev)), 1);
	ck_assert_str_eq(dev, "lo");
}
END_TEST

START_TEST(progress_dev_suffix)
{
	char dev[64];

	/* As efa names a domain after its device. */
	ck_assert_int_eq(dofi_progress_dev("lo-rdm", dev, sizeof(dev)), 1);
	ck_assert_str_eq(dev, "lo");
}
END_TEST

START_TEST(progress_dev_none)
{
	char dev[64], small[2];
	char longname[300];

	ck_assert_int_eq(dofi_progress_dev("shm", dev, sizeof(dev)), 0);
	ck_assert_int_eq(
	        dofi_progress_dev("dapl-ofi-no-such-device", dev, sizeof(dev)),
	        0);
	ck_assert_int_eq(dofi_progress_dev(NULL, dev, sizeof(dev)), 0);
	ck_assert_int_eq(dofi_progress_dev("", dev, sizeof(dev)), 0);
	/* A path is no device name. */
	ck_assert_int_eq(dofi_progress_dev("../net/lo", dev, sizeof(dev)), 0);
	ck_assert_int_eq(dofi_progress_dev("-", dev, sizeof(dev)), 0);
	/* Too long for the buffer, or for a name. */
	ck_assert_int_eq(dofi_progress_dev("lo", small, sizeof(small)), 0);
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	ck_assert_int_eq(dofi_progress_dev(longname, dev, sizeof(dev)), 0);
}
END_TEST

Suite *check_prov_progress_suite(void)
{
	Suite *s = suite_create("prov_progress");
	TCase *tc = tcase_create("dev");

	tcase_add_test(tc, progress_dev_interface);
	tcase_add_test(tc, progress_dev_suffix);
	tcase_add_test(tc, progress_dev_none);
	suite_add_tcase(s, tc);
	return s;
}
