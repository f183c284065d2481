/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * The per-EP op pools (prov/ofi/dofi_dto.c, dofi_fast.h): set-up of a
 * fresh op, exhaustion, reuse, the count of posted ops, and two threads
 * getting and putting ops of a small pool at once (the tag that defeats
 * ABA on the lock-free stack).
 */
#include "config.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "check_tests.h"
#include "dofi.h"
#include "dofi_fast.h"

/* The pool's EP is only stored: any address does. */
static struct dofi_ep *const fake_ep = (struct dofi_ep *)(uintptr_t)0x1230;

/* Ops on the pool's free stack, walked without taking them. */
static uint32_t pool_free_count(dofi_pool_t *pool)
{
	uint32_t i, n = 0;

	for (i = (uint32_t)atomic_load(&pool->head); i != DOFI_POOL_NONE;
	     i = pool->ops[i].next) {
		ck_assert_uint_lt(i, pool->size);
		ck_assert_uint_le(++n, pool->size);
	}
	return n;
}

/* The free stack's ABA tag: how many times its head changed. */
static uint64_t pool_tag(dofi_pool_t *pool)
{
	return atomic_load(&pool->head) >> 32;
}

START_TEST(pool_fresh_setup)
{
	enum { N = 5, NIOV = 3 };
	struct iovec iov[N * NIOV];
	void *desc[N * NIOV];
	dofi_pool_t pool;
	uint32_t i;

	ck_assert_int_eq(dofi_pool_init(&pool, N, fake_ep, iov, desc, NIOV, 0),
	                 DOF_OK);
	ck_assert_uint_eq(dofi_pool_seen(&pool), 0);
	ck_assert_uint_eq(dofi_pool_used(&pool), 0);
	ck_assert_uint_eq(pool_free_count(&pool), 0);
	/* Not zeroed at init: garbage until handed out. */
	memset(pool.ops, 0xa5, N * sizeof(*pool.ops));
	for (i = 0; i < N; i++) {
		dofi_op_t *op = dofi_pool_get(&pool);

		ck_assert_ptr_eq(op, &pool.ops[i]); /* fresh ones in order */
		ck_assert_ptr_eq(op->ep, fake_ep);
		ck_assert_uint_eq(op->next, DOFI_POOL_NONE);
		ck_assert_ptr_eq(op->iov, &iov[i * NIOV]);
		ck_assert_ptr_eq(op->desc, &desc[i * NIOV]);
		ck_assert_uint_eq(atomic_load(&op->posted), 0);
		ck_assert_uint_eq(op->cookie.as_64, 0);
		ck_assert_uint_eq(op->len, 0);
		ck_assert_uint_eq(op->type, 0);
		ck_assert_uint_eq(op->suppress, 0);
		ck_assert_uint_eq(op->late, 0);
		ck_assert_uint_eq(op->seq, 0);
		ck_assert_uint_eq(op->wait, 0);
		ck_assert_uint_eq(op->hstatus, 0);
		ck_assert_uint_eq(op->iov_count, 0);
		ck_assert_uint_eq(dofi_pool_seen(&pool), i + 1);
	}
	dofi_pool_fini(&pool);
	ck_assert_ptr_null(pool.ops);
	/* No IOV slots: a request pool. */
	ck_assert_int_eq(dofi_pool_init(&pool, 2, fake_ep, NULL, NULL, 0, 0),
	                 DOF_OK);
	ck_assert_ptr_null(dofi_pool_get(&pool)->iov);
	dofi_pool_fini(&pool);
}
END_TEST

START_TEST(pool_exhaustion)
{
	enum { N = 8 };
	dofi_op_t *ops[N];
	dofi_pool_t pool;
	uint32_t i, j;

	ck_assert_int_eq(dofi_pool_init(&pool, N, fake_ep, NULL, NULL, 0, 0),
	                 DOF_OK);
	for (i = 0; i < N; i++) {
		ops[i] = dofi_pool_get(&pool);
		ck_assert_ptr_nonnull(ops[i]);
		for (j = 0; j < i; j++)
			ck_assert_ptr_ne(ops[i], ops[j]);
	}
	ck_assert_ptr_null(dofi_pool_get(&pool));
	ck_assert_ptr_null(dofi_pool_fresh(&pool));
	ck_assert_ptr_null(dofi_pool_get(&pool)); /* still */
	dofi_pool_put(&pool, ops[3]);
	ck_assert_ptr_eq(dofi_pool_get(&pool), ops[3]);
	ck_assert_ptr_null(dofi_pool_get(&pool));
	dofi_pool_fini(&pool);
	/* A pool of none hands out none. */
	ck_assert_int_eq(dofi_pool_init(&pool, 0, fake_ep, NULL, NULL, 0, 0),
	                 DOF_OK);
	ck_assert_ptr_null(dofi_pool_get(&pool));
	ck_assert_uint_eq(dofi_pool_used(&pool), 0);
	dofi_pool_fini(&pool);
}
END_TEST

/* Ops given back are handed out again, last first, before fresh ones,
 * and keep what they were set up with. */
START_TEST(pool_reuse)
{
	dofi_pool_t pool;
	dofi_op_t *a, *b, *c;

	ck_assert_int_eq(dofi_pool_init(&pool, 16, fake_ep, NULL, NULL, 0, 0),
	                 DOF_OK);
	a = dofi_pool_get(&pool);
	b = dofi_pool_get(&pool);
	a->cookie.as_64 = 11;
	b->cookie.as_64 = 22;
	dofi_pool_put(&pool, a);
	dofi_pool_put(&pool, b);
	ck_assert_uint_eq(pool_free_count(&pool), 2);
	ck_assert_ptr_eq(dofi_pool_get(&pool), b);
	ck_assert_ptr_eq(dofi_pool_get(&pool), a);
	ck_assert_uint_eq(dofi_pool_seen(&pool), 2); /* none fresh */
	ck_assert_uint_eq(a->cookie.as_64, 11);      /* not set up again */
	ck_assert_ptr_eq(a->ep, fake_ep);
	c = dofi_pool_get(&pool);
	ck_assert_ptr_eq(c, &pool.ops[2]);
	ck_assert_uint_eq(dofi_pool_seen(&pool), 3);
	/* Every put and take of the stack moved the tag. */
	ck_assert_uint_eq(pool_tag(&pool), 4);
	dofi_pool_fini(&pool);
}
END_TEST

/* dofi_pool_used counts the ops whose posted flag is up. */
START_TEST(pool_used_count)
{
	enum { N = 10 };
	dofi_op_t *ops[N];
	dofi_pool_t pool;
	uint32_t i;

	ck_assert_int_eq(dofi_pool_init(&pool, 64, fake_ep, NULL, NULL, 0, 0),
	                 DOF_OK);
	for (i = 0; i < N; i++) {
		ops[i] = dofi_pool_get(&pool);
		if (i % 3 != 0)
			atomic_store(&ops[i]->posted,
			             i % 2 ? 1 : DOFI_POSTED_AFTER);
	}
	ck_assert_uint_eq(dofi_pool_used(&pool), 6);
	/* Completed and given back: no longer counted. */
	for (i = 0; i < N; i++) {
		atomic_store(&ops[i]->posted, 0);
		dofi_pool_put(&pool, ops[i]);
	}
	ck_assert_uint_eq(dofi_pool_used(&pool), 0);
	ck_assert_uint_eq(dofi_pool_seen(&pool), N); /* the scan's reach */
	dofi_pool_fini(&pool);
}
END_TEST

/* ---- two threads at once ------------------------------------------------- */

#define POOL_MT_SIZE  3
#define POOL_MT_ITERS 100000

struct pool_mt {
	dofi_pool_t pool;
	_Atomic int owner[POOL_MT_SIZE]; /* thread holding op i, 0: none */
	pthread_barrier_t start;
};

struct pool_mt_thread {
	struct pool_mt *mt;
	int id;
	/* counted for the tag: takes from and puts to the stack */
	uint64_t gets, puts, empty, errors;
};

static dofi_op_t *pool_mt_take(struct pool_mt_thread *th)
{
	struct pool_mt *mt = th->mt;
	dofi_op_t *op = dofi_pool_get(&mt->pool);
	int none = 0;

	if (op == NULL) {
		th->empty++;
		return NULL;
	}
	th->gets++;
	/* Nobody else may hold it: a lost ABA race hands out one op twice. */
	if (!atomic_compare_exchange_strong(&mt->owner[op - mt->pool.ops],
	                                    &none, th->id))
		th->errors++;
	op->cookie.as_64 = (uint64_t)th->id;
	return op;
}

static void pool_mt_give(struct pool_mt_thread *th, dofi_op_t *op)
{
	struct pool_mt *mt = th->mt;
	int mine = th->id;

	if (op->cookie.as_64 != (uint64_t)th->id)
		th->errors++;
	if (!atomic_compare_exchange_strong(&mt->owner[op - mt->pool.ops],
	                                    &mine, 0))
		th->errors++;
	dofi_pool_put(&mt->pool, op);
	th->puts++;
}

static void *pool_mt_main(void *arg)
{
	struct pool_mt_thread *th = arg;
	uint64_t rs = (uint64_t)th->id;
	int i;

	pthread_barrier_wait(&th->mt->start);
	for (i = 0; i < POOL_MT_ITERS; i++) {
		/* Hold one or two, give them back in either order: the
		 * interleavings where a stale head would come back. */
		dofi_op_t *a = pool_mt_take(th), *b = NULL;
		uint32_t r = check_rand_below(&rs, 8);

		if (r & 1)
			b = pool_mt_take(th);
		/* Now and then: a yield costs milliseconds on a busy
		 * machine, and the test must fit its time limit there. */
		if (r == 4)
			sched_yield();
		if ((r & 2) && b != NULL) {
			pool_mt_give(th, b);
			b = NULL;
		}
		if (a != NULL)
			pool_mt_give(th, a);
		if (b != NULL)
			pool_mt_give(th, b);
	}
	return NULL;
}

START_TEST(pool_two_threads)
{
	struct pool_mt *mt = calloc(1, sizeof(*mt));
	struct pool_mt_thread th[2];
	pthread_t tid[2];
	uint64_t stack_ops = 0;
	int i;

	ck_assert_ptr_nonnull(mt);
	ck_assert_int_eq(dofi_pool_init(&mt->pool, POOL_MT_SIZE, fake_ep, NULL,
	                                NULL, 0, 0),
	                 DOF_OK);
	pthread_barrier_init(&mt->start, NULL, 2);
	for (i = 0; i < 2; i++) {
		memset(&th[i], 0, sizeof(th[i]));
		th[i].mt = mt;
		th[i].id = i + 1;
		ck_assert_int_eq(
		        pthread_create(&tid[i], NULL, pool_mt_main, &th[i]), 0);
	}
	for (i = 0; i < 2; i++) {
		pthread_join(tid[i], NULL);
		ck_assert_uint_eq(th[i].errors, 0);
		ck_assert_uint_eq(th[i].gets, th[i].puts);
		stack_ops += th[i].gets + th[i].puts;
	}
	/* Every op is back, once; all were set up. */
	ck_assert_uint_eq(dofi_pool_seen(&mt->pool), POOL_MT_SIZE);
	ck_assert_uint_eq(pool_free_count(&mt->pool), POOL_MT_SIZE);
	for (i = 0; i < POOL_MT_SIZE; i++)
		ck_assert_int_eq(atomic_load(&mt->owner[i]), 0);
	/* The tag counts every change of the stack: the gets of ops given
	 * back (all but the fresh ones) and the puts. */
	ck_assert_uint_eq(pool_tag(&mt->pool),
	                  (stack_ops - POOL_MT_SIZE) & UINT32_MAX);
	/* Both threads worked, and ran dry at times (3 ops, up to 4 held). */
	ck_assert_uint_gt(th[0].gets, POOL_MT_ITERS / 2);
	ck_assert_uint_gt(th[1].gets, POOL_MT_ITERS / 2);
	pthread_barrier_destroy(&mt->start);
	dofi_pool_fini(&mt->pool);
	free(mt);
}
END_TEST

Suite *check_prov_pool_suite(void)
{
	Suite *s = suite_create("prov op pool");
	TCase *tc = tcase_create("dofi_pool");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, pool_fresh_setup);
	tcase_add_test(tc, pool_exhaustion);
	tcase_add_test(tc, pool_reuse);
	tcase_add_test(tc, pool_used_count);
	tcase_add_test(tc, pool_two_threads);
	suite_add_tcase(s, tc);
	return s;
}
