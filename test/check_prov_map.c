/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * The provider's pointer map (prov/ofi/dofi_map.c): the API's edges,
 * growth, deletion inside and across the table's wrap, and random
 * operation sequences against a plain array. Keys are addresses nothing
 * is mapped at: a dereference would crash the test.
 */
#include "config.h"

#include <stdlib.h>

#include "check_tests.h"
#include "dofi_map.h"

/* The i-th key: 16-byte aligned, as the provider's objects are, in a
 * range where nothing is mapped (a dereference would fault). */
static const void *key_at(uint32_t i)
{
	return (const void *)(uintptr_t)(UINT64_C(0x10) + (uint64_t)i * 16);
}

static void *val_at(uint32_t i)
{
	return (void *)(uintptr_t)(UINT64_C(0x1000) + i);
}

START_TEST(map_empty)
{
	dofi_map_t m;

	dofi_map_init(&m);
	ck_assert_uint_eq(dofi_map_count(&m), 0);
	ck_assert_ptr_null(dofi_map_get(&m, key_at(1)));
	ck_assert_ptr_null(dofi_map_del(&m, key_at(1)));
	ck_assert_ptr_null(dofi_map_get(&m, NULL));
	ck_assert_ptr_null(dofi_map_del(&m, NULL));
	ck_assert_ptr_null(m.slots); /* init allocates nothing */
	dofi_map_fini(&m);
	dofi_map_fini(&m); /* twice is harmless */
	ck_assert_uint_eq(dofi_map_count(&m), 0);
}
END_TEST

START_TEST(map_invalid)
{
	dofi_map_t m;

	dofi_map_init(&m);
	ck_assert_int_eq(dofi_map_put(&m, NULL, val_at(1)),
	                 DOF_ERR_INVALID_PARAM);
	ck_assert_int_eq(dofi_map_put(&m, key_at(1), NULL),
	                 DOF_ERR_INVALID_PARAM);
	ck_assert_uint_eq(dofi_map_count(&m), 0);
	ck_assert_int_eq(dofi_map_put(&m, key_at(1), val_at(1)), DOF_OK);
	/* A NULL value does not delete (nor replace) either. */
	ck_assert_int_eq(dofi_map_put(&m, key_at(1), NULL),
	                 DOF_ERR_INVALID_PARAM);
	ck_assert_ptr_eq(dofi_map_get(&m, key_at(1)), val_at(1));
	ck_assert_uint_eq(dofi_map_count(&m), 1);
	dofi_map_fini(&m);
}
END_TEST

START_TEST(map_put_get_replace_del)
{
	dofi_map_t m;

	dofi_map_init(&m);
	ck_assert_int_eq(dofi_map_put(&m, key_at(7), val_at(1)), DOF_OK);
	ck_assert_int_eq(dofi_map_put(&m, key_at(8), val_at(2)), DOF_OK);
	ck_assert_uint_eq(dofi_map_count(&m), 2);
	ck_assert_ptr_eq(dofi_map_get(&m, key_at(7)), val_at(1));
	ck_assert_ptr_eq(dofi_map_get(&m, key_at(8)), val_at(2));
	ck_assert_ptr_null(dofi_map_get(&m, key_at(9)));
	/* Replace: same count, new value. */
	ck_assert_int_eq(dofi_map_put(&m, key_at(7), val_at(3)), DOF_OK);
	ck_assert_uint_eq(dofi_map_count(&m), 2);
	ck_assert_ptr_eq(dofi_map_get(&m, key_at(7)), val_at(3));
	ck_assert_ptr_eq(dofi_map_del(&m, key_at(7)), val_at(3));
	ck_assert_ptr_null(dofi_map_del(&m, key_at(7)));
	ck_assert_ptr_null(dofi_map_get(&m, key_at(7)));
	ck_assert_ptr_eq(dofi_map_get(&m, key_at(8)), val_at(2));
	ck_assert_uint_eq(dofi_map_count(&m), 1);
	/* Odd and high keys too: only compared. */
	ck_assert_int_eq(dofi_map_put(&m, (void *)(uintptr_t)1, val_at(4)),
	                 DOF_OK);
	ck_assert_int_eq(dofi_map_put(&m, (void *)UINTPTR_MAX, val_at(5)),
	                 DOF_OK);
	ck_assert_ptr_eq(dofi_map_get(&m, (void *)(uintptr_t)1), val_at(4));
	ck_assert_ptr_eq(dofi_map_get(&m, (void *)UINTPTR_MAX), val_at(5));
	ck_assert_uint_eq(dofi_map_count(&m), 3);
	dofi_map_fini(&m);
	/* Usable again after fini. */
	ck_assert_int_eq(dofi_map_put(&m, key_at(7), val_at(1)), DOF_OK);
	ck_assert_ptr_eq(dofi_map_get(&m, key_at(7)), val_at(1));
	dofi_map_fini(&m);
}
END_TEST

/* Keys of freed objects: the map never looks behind them (ASan would
 * report a use after free). */
START_TEST(map_freed_keys)
{
	enum { N = 64 };
	void *keys[N];
	dofi_map_t m;
	int i;

	dofi_map_init(&m);
	for (i = 0; i < N; i++) {
		keys[i] = malloc(32);
		ck_assert_ptr_nonnull(keys[i]);
		ck_assert_int_eq(dofi_map_put(&m, keys[i], val_at((uint32_t)i)),
		                 DOF_OK);
	}
	for (i = 0; i < N; i += 2)
		free(keys[i]);
	for (i = 0; i < N; i += 2)
		ck_assert_ptr_eq(dofi_map_del(&m, keys[i]),
		                 val_at((uint32_t)i));
	for (i = 1; i < N; i += 2) {
		ck_assert_ptr_eq(dofi_map_get(&m, keys[i]),
		                 val_at((uint32_t)i));
		free(keys[i]);
	}
	ck_assert_uint_eq(dofi_map_count(&m), N / 2);
	dofi_map_fini(&m);
}
END_TEST

START_TEST(map_grow_many)
{
	enum { N = 200000 };
	dofi_map_t m;
	uint32_t i;

	dofi_map_init(&m);
	for (i = 0; i < N; i++)
		ck_assert_int_eq(dofi_map_put(&m, key_at(i), val_at(i)),
		                 DOF_OK);
	ck_assert_uint_eq(dofi_map_count(&m), N);
	/* Grown by doubling, never more than 3/4 full. */
	ck_assert_uint_eq(m.cap & (m.cap - 1), 0);
	ck_assert_uint_le((uint64_t)m.n * 4, (uint64_t)m.cap * 3);
	for (i = 0; i < N; i++)
		ck_assert_ptr_eq(dofi_map_get(&m, key_at(i)), val_at(i));
	ck_assert_ptr_null(dofi_map_get(&m, key_at(N)));
	/* Remove the even ones, then check all. */
	for (i = 0; i < N; i += 2)
		ck_assert_ptr_eq(dofi_map_del(&m, key_at(i)), val_at(i));
	ck_assert_uint_eq(dofi_map_count(&m), N / 2);
	for (i = 0; i < N; i++) {
		if (i % 2)
			ck_assert_ptr_eq(dofi_map_get(&m, key_at(i)),
			                 val_at(i));
		else
			ck_assert_ptr_null(dofi_map_get(&m, key_at(i)));
	}
	for (i = 1; i < N; i += 2)
		ck_assert_ptr_eq(dofi_map_del(&m, key_at(i)), val_at(i));
	ck_assert_uint_eq(dofi_map_count(&m), 0);
	dofi_map_fini(&m);
}
END_TEST

/*
 * Keys that all hash to the last slot of a 16-slot table (the same
 * hash as dofi_map.c's; were it to change, the test would still pass,
 * only less pointedly): the run wraps around to slot 0, and a deletion
 * must shift keys back across the wrap.
 */
static uint32_t home16(const void *key)
{
	return (uint32_t)(((uint64_t)(uintptr_t)key *
	                   UINT64_C(0x9e3779b97f4a7c15)) >>
	                  60);
}

START_TEST(map_wrap_delete)
{
	enum { K = 6 };
	const void *keys[K];
	dofi_map_t m;
	uint32_t i, n = 0, order;

	for (i = 1; n < K; i++)
		if (home16(key_at(i)) == 15)
			keys[n++] = key_at(i);
	/* Each order of deletion of the colliding run. */
	for (order = 0; order < K; order++) {
		uint32_t j;

		dofi_map_init(&m);
		for (j = 0; j < K; j++)
			ck_assert_int_eq(dofi_map_put(&m, keys[j], val_at(j)),
			                 DOF_OK);
		ck_assert_uint_eq(m.cap, 16); /* 6 keys fit without growth */
		ck_assert_ptr_eq(dofi_map_del(&m, keys[order]), val_at(order));
		for (j = 0; j < K; j++) {
			if (j == order)
				ck_assert_ptr_null(dofi_map_get(&m, keys[j]));
			else
				ck_assert_ptr_eq(dofi_map_get(&m, keys[j]),
				                 val_at(j));
		}
		/* The rest, from the far end of the run. */
		for (j = K; j-- > 0;)
			if (j != order)
				ck_assert_ptr_eq(dofi_map_del(&m, keys[j]),
				                 val_at(j));
		ck_assert_uint_eq(dofi_map_count(&m), 0);
		dofi_map_fini(&m);
	}
}
END_TEST

/* Key number k; every 64th far away, so the table sees mixed ranges. */
static const void *key_mixed(uint32_t k)
{
	if (k % 64 == 0)
		return (const void *)(uintptr_t)(UINT64_C(0x7ffd00000000) +
		                                 (uint64_t)k * 4096);
	return key_at(k);
}

/*
 * Random puts, replaces, gets and deletes against an array indexed by
 * key number. A universe small enough that keys come back often, and
 * large enough that the table grows through several sizes.
 */
static void map_random_run(uint64_t seed, uint32_t universe, uint32_t ops)
{
	void **ref = calloc(universe, sizeof(*ref));
	uint32_t i, refn = 0;
	uint64_t rs = seed;
	dofi_map_t m;

	ck_assert_ptr_nonnull(ref);
	dofi_map_init(&m);
	for (i = 0; i < ops; i++) {
		uint32_t k = check_rand_below(&rs, universe);
		uint32_t op = check_rand_below(&rs, 10);
		const void *key = key_mixed(k);
		void *v;

		if (op < 4) { /* put (new or replace) */
			v = val_at(i + 1);
			ck_assert_int_eq(dofi_map_put(&m, key, v), DOF_OK);
			refn += ref[k] == NULL;
			ref[k] = v;
		} else if (op < 7) { /* get */
			ck_assert_ptr_eq(dofi_map_get(&m, key), ref[k]);
		} else { /* delete */
			v = dofi_map_del(&m, key);
			ck_assert_ptr_eq(v, ref[k]);
			refn -= ref[k] != NULL;
			ref[k] = NULL;
		}
		ck_assert_uint_eq(dofi_map_count(&m), refn);
		if (i % 4096 == 0) {
			uint32_t j;

			for (j = 0; j < universe; j++)
				ck_assert_ptr_eq(dofi_map_get(&m, key_mixed(j)),
				                 ref[j]);
		}
	}
	dofi_map_fini(&m);
	free(ref);
}

START_TEST(map_random_small)
{
	map_random_run(1, 64, 200000);
}
END_TEST

START_TEST(map_random_large)
{
	map_random_run(0xdeadbeef, 5000, 300000);
}
END_TEST

Suite *check_prov_map_suite(void)
{
	Suite *s = suite_create("prov map");
	TCase *tc = tcase_create("dofi_map");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, map_empty);
	tcase_add_test(tc, map_invalid);
	tcase_add_test(tc, map_put_get_replace_del);
	tcase_add_test(tc, map_freed_keys);
	tcase_add_test(tc, map_grow_many);
	tcase_add_test(tc, map_wrap_delete);
	tcase_add_test(tc, map_random_small);
	tcase_add_test(tc, map_random_large);
	suite_add_tcase(s, tc);
	return s;
}
