/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * The provider's timer heap (prov/ofi/dofi_timer.c): pop order is sorted
 * order, moves and disarms in the middle, and random operation sequences
 * against a plain array, with the heap's invariants checked as it goes.
 */
#include "config.h"

#include <stddef.h>
#include <stdlib.h>

#include "check_tests.h"
#include "dofi_timer.h"

/* A caller's object with a timer inside, found back with container_of. */
struct tobj {
	uint32_t id;
	dofi_timer_t tm;
};

static struct tobj *tobj_of(dofi_timer_t *tm)
{
	return (struct tobj *)(void *)((char *)tm - offsetof(struct tobj, tm));
}

/* Every parent is due no later than its children; every slot is right. */
static void heap_check(const dofi_timers_t *t)
{
	uint32_t i;

	ck_assert_uint_le(t->n, t->cap);
	for (i = 0; i < t->n; i++) {
		ck_assert_uint_eq(t->heap[i]->slot, i + 1);
		if (i > 0)
			ck_assert_uint_le(t->heap[(i - 1) / 2]->at,
			                  t->heap[i]->at);
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

START_TEST(timer_empty)
{
	dofi_timers_t t;
	dofi_timer_t tm;

	dofi_timers_init(&t);
	dofi_timer_init(&tm);
	ck_assert_int_eq(dofi_timer_armed(&tm), 0);
	ck_assert_uint_eq(dofi_timers_next(&t), UINT64_MAX);
	ck_assert_ptr_null(dofi_timers_pop_due(&t, UINT64_MAX));
	dofi_timer_disarm(&t, &tm); /* not armed: nothing */
	ck_assert_int_eq(dofi_timer_armed(&tm), 0);
	dofi_timers_fini(&t);
	dofi_timers_fini(&t);
}
END_TEST

START_TEST(timer_basic)
{
	struct tobj a = {.id = 1}, b = {.id = 2};
	dofi_timers_t t;

	dofi_timers_init(&t);
	dofi_timer_init(&a.tm);
	dofi_timer_init(&b.tm);
	ck_assert_int_eq(dofi_timer_arm(&t, &a.tm, 100), DOF_OK);
	ck_assert_int_eq(dofi_timer_armed(&a.tm), 1);
	ck_assert_int_eq(dofi_timer_arm(&t, &b.tm, 50), DOF_OK);
	ck_assert_uint_eq(dofi_timers_next(&t), 50);
	ck_assert_ptr_null(dofi_timers_pop_due(&t, 49));
	ck_assert_ptr_eq(tobj_of(dofi_timers_pop_due(&t, 50)), &b);
	ck_assert_int_eq(dofi_timer_armed(&b.tm), 0);
	ck_assert_uint_eq(dofi_timers_next(&t), 100);
	/* Move later, then earlier than a new one. */
	ck_assert_int_eq(dofi_timer_arm(&t, &a.tm, 300), DOF_OK);
	ck_assert_uint_eq(t.n, 1);
	ck_assert_int_eq(dofi_timer_arm(&t, &b.tm, 200), DOF_OK);
	ck_assert_uint_eq(dofi_timers_next(&t), 200);
	ck_assert_int_eq(dofi_timer_arm(&t, &a.tm, 150), DOF_OK);
	ck_assert_uint_eq(dofi_timers_next(&t), 150);
	ck_assert_uint_eq(t.n, 2);
	dofi_timer_disarm(&t, &a.tm);
	ck_assert_int_eq(dofi_timer_armed(&a.tm), 0);
	dofi_timer_disarm(&t, &a.tm);
	ck_assert_uint_eq(dofi_timers_next(&t), 200);
	/* The extremes are deadlines like any other. */
	ck_assert_int_eq(dofi_timer_arm(&t, &a.tm, UINT64_MAX), DOF_OK);
	ck_assert_int_eq(dofi_timer_arm(&t, &b.tm, 0), DOF_OK);
	ck_assert_ptr_eq(dofi_timers_pop_due(&t, 0), &b.tm);
	ck_assert_ptr_null(dofi_timers_pop_due(&t, UINT64_MAX - 1));
	ck_assert_ptr_eq(dofi_timers_pop_due(&t, UINT64_MAX), &a.tm);
	ck_assert_ptr_null(dofi_timers_pop_due(&t, UINT64_MAX));
	dofi_timers_fini(&t);
}
END_TEST

/* A timer still armed when its heap is freed: stale, then armed anew in
 * another heap without trouble. */
START_TEST(timer_stale_after_fini)
{
	struct tobj a = {.id = 1}, b = {.id = 2};
	dofi_timers_t t, u;

	dofi_timers_init(&t);
	dofi_timer_init(&a.tm);
	dofi_timer_init(&b.tm);
	ck_assert_int_eq(dofi_timer_arm(&t, &a.tm, 10), DOF_OK);
	ck_assert_int_eq(dofi_timer_arm(&t, &b.tm, 20), DOF_OK);
	dofi_timers_fini(&t);
	dofi_timers_init(&u);
	ck_assert_int_eq(dofi_timer_arm(&u, &b.tm, 5), DOF_OK);
	ck_assert_uint_eq(u.n, 1);
	dofi_timer_disarm(&u, &a.tm); /* stale: cleared, heap untouched */
	ck_assert_int_eq(dofi_timer_armed(&a.tm), 0);
	ck_assert_uint_eq(u.n, 1);
	ck_assert_ptr_eq(dofi_timers_pop_due(&u, 5), &b.tm);
	dofi_timers_fini(&u);
}
END_TEST

/* Pop everything: the deadlines come out sorted, each timer once. */
START_TEST(timer_pop_sorted)
{
	enum { N = 20000 };
	struct tobj *o = calloc(N, sizeof(*o));
	uint64_t *want = calloc(N, sizeof(*want)), rs = 42;
	unsigned char *seen = calloc(N, 1);
	dofi_timers_t t;
	dofi_timer_t *tm;
	uint32_t i, n = 0;

	ck_assert(o != NULL && want != NULL && seen != NULL);
	dofi_timers_init(&t);
	for (i = 0; i < N; i++) {
		o[i].id = i;
		dofi_timer_init(&o[i].tm);
		/* Many equal deadlines among them. */
		want[i] = i % 3 ? check_rand(&rs) : check_rand(&rs) % 100;
		ck_assert_int_eq(dofi_timer_arm(&t, &o[i].tm, want[i]), DOF_OK);
	}
	heap_check(&t);
	qsort(want, N, sizeof(*want), cmp_u64);
	while ((tm = dofi_timers_pop_due(&t, UINT64_MAX)) != NULL) {
		struct tobj *x = tobj_of(tm);

		ck_assert_uint_lt(n, N);
		ck_assert_uint_eq(tm->at, want[n]);
		ck_assert_int_eq(seen[x->id], 0);
		ck_assert_int_eq(dofi_timer_armed(tm), 0);
		seen[x->id] = 1;
		n++;
		if (n % 997 == 0)
			heap_check(&t);
	}
	ck_assert_uint_eq(n, N);
	ck_assert_uint_eq(dofi_timers_next(&t), UINT64_MAX);
	dofi_timers_fini(&t);
	free(seen);
	free(want);
	free(o);
}
END_TEST

/* Disarm and move timers in the middle of the heap, then pop all. */
START_TEST(timer_move_disarm_middle)
{
	enum { N = 4096 };
	struct tobj *o = calloc(N, sizeof(*o));
	uint64_t *want = calloc(N, sizeof(*want)), rs = 7, prev = 0;
	dofi_timers_t t;
	dofi_timer_t *tm;
	uint32_t i, n = 0, m = 0;

	ck_assert(o != NULL && want != NULL);
	dofi_timers_init(&t);
	for (i = 0; i < N; i++) {
		o[i].id = i;
		dofi_timer_init(&o[i].tm);
		ck_assert_int_eq(
		        dofi_timer_arm(&t, &o[i].tm,
		                       1000 + check_rand(&rs) % 100000),
		        DOF_OK);
	}
	for (i = 0; i < N; i++) {
		switch (i % 4) {
		case 0: /* disarm */
			dofi_timer_disarm(&t, &o[i].tm);
			ck_assert_int_eq(dofi_timer_armed(&o[i].tm), 0);
			break;
		case 1: /* earlier */
			ck_assert_int_eq(dofi_timer_arm(&t, &o[i].tm,
			                                check_rand(&rs) % 1000),
			                 DOF_OK);
			break;
		case 2: /* later */
			ck_assert_int_eq(
			        dofi_timer_arm(&t, &o[i].tm,
			                       200000 + check_rand(&rs) % 1000),
			        DOF_OK);
			break;
		default: /* same deadline again */
			ck_assert_int_eq(
			        dofi_timer_arm(&t, &o[i].tm, o[i].tm.at),
			        DOF_OK);
		}
		if (i % 257 == 0)
			heap_check(&t);
	}
	heap_check(&t);
	ck_assert_uint_eq(t.n, N - N / 4);
	for (i = 0; i < N; i++)
		if (dofi_timer_armed(&o[i].tm))
			want[m++] = o[i].tm.at;
	ck_assert_uint_eq(m, t.n);
	qsort(want, m, sizeof(*want), cmp_u64);
	/* Pop in steps of time: only what is due comes out. */
	for (prev = 0; t.n > 0; prev += 5000) {
		while ((tm = dofi_timers_pop_due(&t, prev)) != NULL) {
			ck_assert_uint_le(tm->at, prev);
			ck_assert_uint_eq(tm->at, want[n++]);
		}
		ck_assert_uint_gt(dofi_timers_next(&t), prev);
	}
	ck_assert_uint_eq(n, m);
	dofi_timers_fini(&t);
	free(want);
	free(o);
}
END_TEST

/* Random arms, moves, disarms, pops and peeks against an array. */
START_TEST(timer_random_vs_array)
{
	enum { N = 300, OPS = 200000 };
	struct tobj o[N];
	uint64_t at[N], rs = 0x5eed;
	int armed[N];
	dofi_timers_t t;
	uint32_t i, j, narmed = 0;

	dofi_timers_init(&t);
	for (i = 0; i < N; i++) {
		o[i].id = i;
		dofi_timer_init(&o[i].tm);
		armed[i] = 0;
	}
	for (i = 0; i < OPS; i++) {
		uint32_t k = check_rand_below(&rs, N);
		uint32_t op = check_rand_below(&rs, 10);
		uint64_t min = UINT64_MAX, now;

		for (j = 0; j < N; j++)
			if (armed[j] && at[j] < min)
				min = at[j];
		if (op < 4) { /* arm or move; small range: many ties */
			uint64_t when = check_rand(&rs) % 5000;

			ck_assert_int_eq(dofi_timer_arm(&t, &o[k].tm, when),
			                 DOF_OK);
			narmed += !armed[k];
			armed[k] = 1;
			at[k] = when;
		} else if (op < 6) {
			dofi_timer_disarm(&t, &o[k].tm);
			narmed -= armed[k];
			armed[k] = 0;
		} else if (op < 9) { /* pop at a random now */
			dofi_timer_t *tm;

			now = check_rand(&rs) % 6000;
			tm = dofi_timers_pop_due(&t, now);
			if (min > now) {
				ck_assert_ptr_null(tm);
			} else {
				struct tobj *x;

				ck_assert_ptr_nonnull(tm);
				x = tobj_of(tm);
				ck_assert_uint_lt(x->id, N);
				ck_assert_int_eq(armed[x->id], 1);
				ck_assert_uint_eq(at[x->id], min);
				ck_assert_uint_eq(tm->at, min);
				ck_assert_int_eq(dofi_timer_armed(tm), 0);
				armed[x->id] = 0;
				narmed--;
			}
		} else {
			ck_assert_uint_eq(dofi_timers_next(&t), min);
		}
		ck_assert_uint_eq(t.n, narmed);
		ck_assert_int_eq(dofi_timer_armed(&o[k].tm), armed[k]);
		if (i % 1024 == 0)
			heap_check(&t);
	}
	heap_check(&t);
	dofi_timers_fini(&t);
}
END_TEST

Suite *check_prov_timer_suite(void)
{
	Suite *s = suite_create("prov timer");
	TCase *tc = tcase_create("dofi_timer");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, timer_empty);
	tcase_add_test(tc, timer_basic);
	tcase_add_test(tc, timer_stale_after_fini);
	tcase_add_test(tc, timer_pop_sorted);
	tcase_add_test(tc, timer_move_disarm_middle);
	tcase_add_test(tc, timer_random_vs_array);
	suite_add_tcase(s, tc);
	return s;
}
