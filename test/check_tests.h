/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/* The Check suites of test/check_dat and test/check_prov. */
#ifndef CHECK_TESTS_H
#define CHECK_TESTS_H

#include <stdint.h>

#include <check.h>

/* test/check_dat */
Suite *check_conf_suite(void);
Suite *check_registry_suite(void);
Suite *check_handles_suite(void);
Suite *check_prov_map_suite(void);
Suite *check_prov_timer_suite(void);
Suite *check_prov_cm_hdr_suite(void);
Suite *check_prov_instance_suite(void);

/* test/check_prov: the provider's internals, linked from its sources */
Suite *check_prov_pool_suite(void);
Suite *check_prov_order_suite(void);
Suite *check_prov_status_suite(void);

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
