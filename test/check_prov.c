/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * The runner of the provider's internal tests: built from the provider's
 * own sources (test/test.am), with fakes where libfabric would be.
 */
#include "config.h"

#include <stdlib.h>

#include "check_tests.h"

int main(void)
{
	SRunner *sr = srunner_create(check_prov_pool_suite());
	int failed;

	srunner_add_suite(sr, check_prov_order_suite());
	srunner_add_suite(sr, check_prov_status_suite());
	srunner_add_suite(sr, check_prov_evd_suite());
	srunner_add_suite(sr, check_prov_gate_suite());
	srunner_add_suite(sr, check_prov_progress_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
