/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/* The Check suites of test/check_dat and test/check_prov. */
#ifndef CHECK_TESTS_H
#define CHECK_TESTS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <check.h>

/* test/check_dat */
Suite *check_conf_suite(void);
Suite *check_registry_suite(void);
Suite *check_handles_suite(void);
Suite *check_prov_map_suite(void);
Suite *check_prov_timer_suite(void);
Suite *check_prov_cm_hdr_suite(void);
Suite *check_prov_instance_suite(void);
Suite *check_prov_rdm_wire_suite(void);

/* test/check_prov: the provider's internals, linked from its sources */
Suite *check_prov_pool_suite(void);
Suite *check_prov_order_suite(void);
Suite *check_prov_status_suite(void);
Suite *check_prov_evd_suite(void);
Suite *check_prov_gate_suite(void);
Suite *check_prov_progress_suite(void);

/* A seeded PRNG (splitmix64) for reproducible random tests. */
static inline uint64_t check_rand(uint64_t *state)
{
	uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0 (the bias is negligible for small n). */
static inline uint32_t check_rand_below(uint64_t *state, uint32_t n)
{
	return (uint32_t)((check_rand(state) >> 32) * n >> 32);
}

/* Room for a temporary path (check_tmp_template). */
#define CHECK_PATH_MAX 256

/*
 * A template "DIR/NAME.XXXXXX" for mkstemp or mkdtemp in buf (cap bytes),
 * DIR being $TMPDIR, else /tmp; buf returned.
 */
static inline char *check_tmp_template(char *buf, size_t cap, const char *name)
{
	const char *dir = getenv("TMPDIR");
	int n;

	if (dir == NULL || *dir == '\0')
		dir = "/tmp";
	n = snprintf(buf, cap, "%s/%s.XXXXXX", dir, name);
	ck_assert_msg(n > 0 && (size_t)n < cap, "temporary path too long");
	return buf;
}

/* A new temporary file named after name, open for writing; its path in
 * buf (CHECK_PATH_MAX bytes). */
static inline FILE *check_tmp_open(char *buf, const char *name)
{
	FILE *fp;
	int fd;

	fd = mkstemp(check_tmp_template(buf, CHECK_PATH_MAX, name));
	ck_assert_int_ge(fd, 0);
	fp = fdopen(fd, "w");
	ck_assert_ptr_nonnull(fp);
	return fp;
}

/* Counters the fake provider finds in this executable with dlsym. */
struct fakeprov_counters {
	int init;
	int fini;
	int open;
	int close;
	int query;
	int ext_open;  /* dat_ib_open_query */
	int ext_close; /* dat_ib_close_query */
	char last_instance[256];
};

#endif /* CHECK_TESTS_H */
