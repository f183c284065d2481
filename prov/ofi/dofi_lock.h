/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * A small mutex for the locks a dequeue takes (evd->lock): one atomic
 * compare-and-swap to take it and one exchange to give it back when no
 * one waits, against some fifty instructions for a glibc mutex's lock and
 * unlock. A thread that finds it taken spins briefly, then sleeps on a
 * futex; the holder wakes one sleeper as it gives the lock back.
 *
 * The word is 0 (free), 1 (taken, no sleeper) or 2 (taken, perhaps a
 * sleeper). Acquire on taking, release on giving back: what the holder
 * wrote is seen by the next holder, as with a pthread mutex (and as
 * ThreadSanitizer follows C11 atomics, it sees that too). Not recursive;
 * no condition variable waits on it.
 */
#ifndef DOFI_LOCK_H
#define DOFI_LOCK_H

#include <stdatomic.h>
#include <stdint.h>

typedef struct dofi_lock {
	_Atomic uint32_t word;
} dofi_lock_t;

/* The contended halves (dofi_util.c). */
void dofi_lock_wait(dofi_lock_t *l);
void dofi_lock_wake(dofi_lock_t *l);

static inline void dofi_lock_init(dofi_lock_t *l)
{
	atomic_init(&l->word, 0);
}

static inline void dofi_lock_take(dofi_lock_t *l)
{
	uint32_t free_word = 0;

	if (__builtin_expect(!atomic_compare_exchange_strong_explicit(
	                             &l->word, &free_word, 1,
	                             memory_order_acquire,
	                             memory_order_relaxed),
	                     0))
		dofi_lock_wait(l);
}

static inline void dofi_lock_give(dofi_lock_t *l)
{
	if (__builtin_expect(atomic_exchange_explicit(
	                             &l->word, 0, memory_order_release) == 2,
	                     0))
		dofi_lock_wake(l);
}

#endif /* DOFI_LOCK_H */
