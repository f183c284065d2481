/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * The unit-test runner: every Check suite of libdat2, and those of the
 * provider's libfabric-free modules.
 */
#include "config.h"

#include <stdlib.h>

#include "check_tests.h"

int main(void)
{
	SRunner *sr = srunner_create(check_conf_suite());
	int failed;

	srunner_add_suite(sr, check_registry_suite());
	srunner_add_suite(sr, check_handles_suite());
	srunner_add_suite(sr, check_prov_map_suite());
	srunner_add_suite(sr, check_prov_timer_suite());
	srunner_add_suite(sr, check_prov_cm_hdr_suite());
	srunner_add_suite(sr, check_prov_instance_suite());
	srunner_add_suite(sr, check_prov_rdm_wire_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
