/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * The provider's dat.conf instance data (prov/ofi/dofi_instance.c):
 * provider, domain and options, and what it does with text it cannot use.
 */
#include "config.h"

#include <string.h>

#include "check_tests.h"
#include "dofi_instance.h"

static dofi_instance_t inst;
static char why[128];

static dof_status_t parse(const char *text)
{
	return dofi_instance_parse(text, &inst, why, sizeof(why));
}

START_TEST(instance_words)
{
	ck_assert_int_eq(parse("tcp lo"), DOF_OK);
	ck_assert_str_eq(inst.fi_prov, "tcp");
	ck_assert_str_eq(inst.fi_domain, "lo");
	ck_assert_uint_eq(inst.link_timeout_ms, DOFI_INSTANCE_UNSET);
	ck_assert_str_eq(why, "");

	ck_assert_int_eq(parse("  verbs;ofi_rxm \t mlx5_0  "), DOF_OK);
	ck_assert_str_eq(inst.fi_prov, "verbs;ofi_rxm");
	ck_assert_str_eq(inst.fi_domain, "mlx5_0");

	/* auto, and nothing: any provider, any domain. */
	ck_assert_int_eq(parse("auto"), DOF_OK);
	ck_assert_str_eq(inst.fi_prov, "");
	ck_assert_str_eq(inst.fi_domain, "");
	ck_assert_int_eq(parse(""), DOF_OK);
	ck_assert_str_eq(inst.fi_prov, "");
	ck_assert_int_eq(parse(NULL), DOF_OK);
	ck_assert_str_eq(inst.fi_domain, "");
	ck_assert_uint_eq(inst.link_timeout_ms, DOFI_INSTANCE_UNSET);
}
END_TEST

START_TEST(instance_options)
{
	ck_assert_int_eq(parse("tcp lo link_timeout=5s"), DOF_OK);
	ck_assert_str_eq(inst.fi_domain, "lo");
	ck_assert_uint_eq(inst.link_timeout_ms, 5000);
	/* Options may follow the provider alone: no domain then. */
	ck_assert_int_eq(parse("sockets link_timeout=2500"), DOF_OK);
	ck_assert_str_eq(inst.fi_prov, "sockets");
	ck_assert_str_eq(inst.fi_domain, "");
	ck_assert_uint_eq(inst.link_timeout_ms, 2500);
	ck_assert_int_eq(parse("tcp link_timeout=0"), DOF_OK);
	ck_assert_uint_eq(inst.link_timeout_ms, 0);
	ck_assert_int_eq(parse("tcp link_timeout=750ms"), DOF_OK);
	ck_assert_uint_eq(inst.link_timeout_ms, 750);
	ck_assert_uint_eq(inst.ep_type, DOFI_INSTANCE_EP_ANY);
	ck_assert_int_eq(parse("verbs;ofi_rxm mlx5_0 ep=rdm"), DOF_OK);
	ck_assert_uint_eq(inst.ep_type, DOFI_INSTANCE_EP_RDM);
	ck_assert_int_eq(parse("efa ep=msg link_timeout=1s"), DOF_OK);
	ck_assert_uint_eq(inst.ep_type, DOFI_INSTANCE_EP_MSG);
	ck_assert_uint_eq(inst.link_timeout_ms, 1000);
}
END_TEST

/* What it cannot use is left out, said why, and the rest still holds. */
START_TEST(instance_refused)
{
	static const char *bad[] = {
	        "tcp lo link_timeout=",
	        "tcp lo link_timeout=5m",
	        "tcp lo link_timeout=-1",
	        "tcp lo link_timeout=4294967296",
	        "tcp lo link_timeout=4294968s",
	        "tcp lo nosuchkey=1",
	        "tcp lo ep=dgram",
	        "tcp lo ep=",
	        "tcp lo =5",
	        "tcp lo extra",
	        "tcp lo link_timeout=5s x",
	};
	char big[600];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(parse(bad[i]) == DOF_ERR_INVALID_PARAM, "'%s'",
		              bad[i]);
		ck_assert_msg(why[0] != '\0', "'%s': no reason", bad[i]);
		ck_assert_str_eq(inst.fi_prov, "tcp");
		ck_assert_str_eq(inst.fi_domain, "lo");
	}
	/* A word longer than its field: left out, the others kept. */
	memset(big, 'x', 200);
	memcpy(big + 200, " lo", 4);
	ck_assert_int_eq(parse(big), DOF_ERR_INVALID_PARAM);
	ck_assert_str_eq(inst.fi_prov, "");
	ck_assert_str_eq(inst.fi_domain, "lo");
	/* Past DOFI_INSTANCE_MAX: only the start is read. */
	memset(big, ' ', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	memcpy(big, "tcp lo", 6);
	memcpy(big + sizeof(big) - 8, "sockets", 7);
	ck_assert_int_eq(parse(big), DOF_ERR_INVALID_PARAM);
	ck_assert_str_eq(inst.fi_prov, "tcp");
	ck_assert_str_eq(inst.fi_domain, "lo");
}
END_TEST

START_TEST(instance_duration)
{
	uint64_t ms = 77;

	ck_assert_int_eq(dofi_duration_ms("20000", &ms), DOF_OK);
	ck_assert_uint_eq(ms, 20000);
	ck_assert_int_eq(dofi_duration_ms("3s", &ms), DOF_OK);
	ck_assert_uint_eq(ms, 3000);
	ck_assert_int_eq(dofi_duration_ms("4294967295", &ms), DOF_OK);
	ck_assert_uint_eq(ms, 4294967295u);
	/* Refused: *ms left alone. */
	ms = 77;
	ck_assert_int_eq(dofi_duration_ms("", &ms), DOF_ERR_INVALID_PARAM);
	ck_assert_int_eq(dofi_duration_ms(NULL, &ms), DOF_ERR_INVALID_PARAM);
	ck_assert_int_eq(dofi_duration_ms("s", &ms), DOF_ERR_INVALID_PARAM);
	ck_assert_int_eq(dofi_duration_ms("1 s", &ms), DOF_ERR_INVALID_PARAM);
	ck_assert_int_eq(dofi_duration_ms("1sec", &ms), DOF_ERR_INVALID_PARAM);
	ck_assert_int_eq(dofi_duration_ms("99999999999999999999", &ms),
	                 DOF_ERR_INVALID_PARAM);
	ck_assert_uint_eq(ms, 77);
}
END_TEST

Suite *check_prov_instance_suite(void)
{
	Suite *s = suite_create("prov_instance");
	TCase *tc = tcase_create("instance");

	tcase_add_test(tc, instance_words);
	tcase_add_test(tc, instance_options);
	tcase_add_test(tc, instance_refused);
	tcase_add_test(tc, instance_duration);
	suite_add_tcase(s, tc);
	return s;
}
