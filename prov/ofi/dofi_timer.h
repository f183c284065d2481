/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * Deadlines (CLOCK_MONOTONIC ns) in a binary min-heap of timers the
 * caller embeds in its objects (container_of to get back): O(log n) arm,
 * move and disarm, O(1) look at the earliest. No lock: the caller
 * serialises every call on one set of timers.
 */
#ifndef DOFI_TIMER_H
#define DOFI_TIMER_H

#include <stddef.h>
#include <stdint.h>

#include "dof/status.h"

typedef struct dofi_timer {
	uint64_t at;   /* the deadline, while armed */
	uint32_t slot; /* heap index + 1; 0: not armed */
} dofi_timer_t;

typedef struct dofi_timers {
	dofi_timer_t **heap; /* heap[0] is the earliest */
	uint32_t n, cap;
} dofi_timers_t;

void dofi_timers_init(dofi_timers_t *t);
/*
 * Frees the heap. Timers still armed are not touched (their objects may
 * be gone already): dofi_timer_init one before arming it again.
 */
void dofi_timers_fini(dofi_timers_t *t);

static inline void dofi_timer_init(dofi_timer_t *tm)
{
	tm->at = 0;
	tm->slot = 0;
}

static inline int dofi_timer_armed(const dofi_timer_t *tm)
{
	return tm->slot != 0;
}

/* Arm tm for at, or move it there if armed; DOF_ERR_NO_MEMORY. */
dof_status_t dofi_timer_arm(dofi_timers_t *t, dofi_timer_t *tm, uint64_t at);
/* Disarm tm; nothing if it is not armed. */
void dofi_timer_disarm(dofi_timers_t *t, dofi_timer_t *tm);
/* The earliest deadline, UINT64_MAX when none is armed. */
uint64_t dofi_timers_next(const dofi_timers_t *t);
/*
 * Disarm and return the earliest timer if it is due (at <= now), else
 * NULL. Timers due at the same time come out in no set order.
 */
dofi_timer_t *dofi_timers_pop_due(dofi_timers_t *t, uint64_t now);

#endif /* DOFI_TIMER_H */
