/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * The provider's status type at its edges (dofi_status.c): libfabric's
 * errors in, DAT_RETURN out.
 */
#include "config.h"

#include "check_tests.h"
#include "dofi.h"

/* Every status has a DAT_RETURN of its own kind; none is left out. */
START_TEST(status_table_complete)
{
	int st;

	ck_assert_uint_eq(dofi_status_to_dat(DOF_OK), DAT_SUCCESS);
	for (st = DOF_OK + 1; st < DOF_ERR_LAST; st++) {
		DAT_RETURN r = dofi_status_to_dat((dof_status_t)st);

		ck_assert_msg(r != DAT_SUCCESS, "status %d maps to success",
		              st);
		ck_assert_msg(DAT_GET_TYPE(r) != 0, "status %d has no type",
		              st);
	}
	/* Out of range: an internal error, not a read past the table. */
	ck_assert_uint_eq(DAT_GET_TYPE(dofi_status_to_dat(DOF_ERR_LAST)),
	                  DAT_INTERNAL_ERROR);
	ck_assert_uint_eq(DAT_GET_TYPE(dofi_status_to_dat((dof_status_t)-1)),
	                  DAT_INTERNAL_ERROR);
}
END_TEST

/* What the CM and the posts return for libfabric's errors. */
START_TEST(status_from_libfabric)
{
	static const struct {
		int fi_err;
		DAT_RETURN dat;
	} map[] = {
	        {0, DAT_SUCCESS},
	        {-FI_ENOMEM,
	         DAT_ERROR(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_MEMORY)},
	        {-FI_EAGAIN,
	         DAT_ERROR(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_TEP)},
	        {-FI_EADDRINUSE, DAT_ERROR(DAT_CONN_QUAL_IN_USE, 0)},
	        {-FI_EOPNOTSUPP, DAT_ERROR(DAT_MODEL_NOT_SUPPORTED, 0)},
	        {-FI_EPERM, DAT_ERROR(DAT_PRIVILEGES_VIOLATION, 0)},
	        {-FI_EHOSTUNREACH, DAT_ERROR(DAT_INVALID_ADDRESS,
	                                     DAT_INVALID_ADDRESS_UNREACHABLE)},
	        {-FI_EINVAL, DAT_ERROR(DAT_INVALID_PARAMETER, 0)},
	        {-FI_EOTHER, DAT_ERROR(DAT_INTERNAL_ERROR, 0)},
	        /* libfabric's sign is not always negative. */
	        {FI_ENOMEM,
	         DAT_ERROR(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_MEMORY)},
	};
	size_t i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		ck_assert_msg(dofi_status_to_dat(dofi_fi_status(
		                      map[i].fi_err)) == map[i].dat,
		              "fi error %d: 0x%x, want 0x%x", map[i].fi_err,
		              dofi_status_to_dat(dofi_fi_status(map[i].fi_err)),
		              map[i].dat);
}
END_TEST

Suite *check_prov_status_suite(void)
{
	Suite *s = suite_create("prov_status");
	TCase *tc = tcase_create("status");

	tcase_add_test(tc, status_table_complete);
	tcase_add_test(tc, status_from_libfabric);
	suite_add_tcase(s, tc);
	return s;
}
