/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/* The Check suites of test/check_dat. */
#ifndef CHECK_TESTS_H
#define CHECK_TESTS_H

#include <check.h>

Suite *check_conf_suite(void);
Suite *check_registry_suite(void);

/* Counters the fake provider finds in this executable with dlsym. */
struct fakeprov_counters {
	int init;
	int fini;
	int open;
	int close;
	int query;
	char last_instance[256];
};

#endif /* CHECK_TESTS_H */
