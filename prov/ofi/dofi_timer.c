/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/* The timer heap (dofi_timer.h). Each timer knows its index (slot - 1). */
#include "config.h"

#include <stdlib.h>

#include "dofi_timer.h"

#define DOFI_TIMERS_MIN_CAP 16u
/* Far beyond need; keeps cap * sizeof(pointer) within size_t anywhere. */
#define DOFI_TIMERS_MAX_CAP (1u << 28)

/* Whether tm is armed in this heap (a stale slot, e.g. from a heap freed
 * since, counts as not armed). */
static int dofi_timers_holds(const dofi_timers_t *t, const dofi_timer_t *tm)
{
	return tm->slot != 0 && tm->slot <= t->n && t->heap[tm->slot - 1] == tm;
}

static inline void dofi_timers_place(dofi_timers_t *t, uint32_t i,
                                     dofi_timer_t *tm)
{
	t->heap[i] = tm;
	tm->slot = i + 1;
}

static void dofi_timers_up(dofi_timers_t *t, uint32_t i)
{
	dofi_timer_t *tm = t->heap[i];

	while (i > 0) {
		uint32_t parent = (i - 1) / 2;

		if (t->heap[parent]->at <= tm->at)
			break;
		dofi_timers_place(t, i, t->heap[parent]);
		i = parent;
	}
	dofi_timers_place(t, i, tm);
}

static void dofi_timers_down(dofi_timers_t *t, uint32_t i)
{
	dofi_timer_t *tm = t->heap[i];

	for (;;) {
		uint64_t child = 2 * (uint64_t)i + 1;

		if (child >= t->n)
			break;
		if (child + 1 < t->n &&
		    t->heap[child + 1]->at < t->heap[child]->at)
			child++;
		if (tm->at <= t->heap[child]->at)
			break;
		dofi_timers_place(t, i, t->heap[child]);
		i = (uint32_t)child;
	}
	dofi_timers_place(t, i, tm);
}

/* Restore the order around index i, whose deadline changed. */
static void dofi_timers_fix(dofi_timers_t *t, uint32_t i)
{
	if (i > 0 && t->heap[(i - 1) / 2]->at > t->heap[i]->at)
		dofi_timers_up(t, i);
	else
		dofi_timers_down(t, i);
}

/* Take the timer at index i out of the heap. */
static void dofi_timers_remove(dofi_timers_t *t, uint32_t i)
{
	dofi_timer_t *tm = t->heap[i];

	t->n--;
	if (i < t->n) {
		dofi_timers_place(t, i, t->heap[t->n]);
		dofi_timers_fix(t, i);
	}
	t->heap[t->n] = NULL;
	tm->slot = 0;
}

void dofi_timers_init(dofi_timers_t *t)
{
	t->heap = NULL;
	t->n = 0;
	t->cap = 0;
}

void dofi_timers_fini(dofi_timers_t *t)
{
	free(t->heap);
	dofi_timers_init(t);
}

dof_status_t dofi_timer_arm(dofi_timers_t *t, dofi_timer_t *tm, uint64_t at)
{
	if (dofi_timers_holds(t, tm)) {
		tm->at = at;
		dofi_timers_fix(t, tm->slot - 1);
		return DOF_OK;
	}
	if (t->n == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : DOFI_TIMERS_MIN_CAP;
		dofi_timer_t **heap;

		if (cap > DOFI_TIMERS_MAX_CAP)
			return DOF_ERR_NO_MEMORY;
		heap = realloc(t->heap, (size_t)cap * sizeof(*heap));
		if (heap == NULL)
			return DOF_ERR_NO_MEMORY;
		t->heap = heap;
		t->cap = cap;
	}
	tm->at = at;
	t->heap[t->n] = tm;
	t->n++;
	dofi_timers_up(t, t->n - 1);
	return DOF_OK;
}

void dofi_timer_disarm(dofi_timers_t *t, dofi_timer_t *tm)
{
	if (dofi_timers_holds(t, tm))
		dofi_timers_remove(t, tm->slot - 1);
	else
		tm->slot = 0; /* a stale slot: armed nowhere */
}

uint64_t dofi_timers_next(const dofi_timers_t *t)
{
	return t->n ? t->heap[0]->at : UINT64_MAX;
}

dofi_timer_t *dofi_timers_pop_due(dofi_timers_t *t, uint64_t now)
{
	dofi_timer_t *tm;

	if (t->n == 0 || t->heap[0]->at > now)
		return NULL;
	tm = t->heap[0];
	dofi_timers_remove(t, 0);
	return tm;
}
