/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * The pointer map (dofi_map.h). A slot is empty when its key is NULL.
 * Every key sits at or after its home slot with no empty slot between:
 * a lookup stops at the first empty one, and a deletion shifts the run
 * that follows back over the hole instead of leaving a tombstone.
 */
#include "config.h"

#include <stdlib.h>

#include "dofi_map.h"

struct dofi_map_slot {
	const void *key;
	void *val;
};

#define DOFI_MAP_MIN_BITS 4  /* 16 slots */
#define DOFI_MAP_MAX_BITS 31 /* cap stays a uint32_t power of two */

/*
 * Fibonacci hashing: the product's top bits depend on every bit of the
 * pointer, so the alignment's zero low bits cost nothing.
 */
static inline uint32_t dofi_map_home(const dofi_map_t *m, const void *key)
{
	return (uint32_t)(((uint64_t)(uintptr_t)key *
	                   UINT64_C(0x9e3779b97f4a7c15)) >>
	                  m->shift);
}

/* The slot holding key, or the empty slot where a search for it ends. */
static uint32_t dofi_map_find(const dofi_map_t *m, const void *key)
{
	uint32_t mask = m->cap - 1, i = dofi_map_home(m, key);

	while (m->slots[i].key != NULL && m->slots[i].key != key)
		i = (i + 1) & mask;
	return i;
}

void dofi_map_init(dofi_map_t *m)
{
	m->slots = NULL;
	m->cap = 0;
	m->n = 0;
	m->shift = 64;
}

void dofi_map_fini(dofi_map_t *m)
{
	free(m->slots);
	dofi_map_init(m);
}

static dof_status_t dofi_map_grow(dofi_map_t *m)
{
	uint32_t bits = 64 - m->shift + 1, i;
	dofi_map_t g;

	if (bits < DOFI_MAP_MIN_BITS)
		bits = DOFI_MAP_MIN_BITS;
	if (bits > DOFI_MAP_MAX_BITS)
		return DOF_ERR_NO_MEMORY;
	g.cap = UINT32_C(1) << bits;
	g.shift = 64 - bits;
	g.n = m->n;
	g.slots = calloc(g.cap, sizeof(*g.slots));
	if (g.slots == NULL)
		return DOF_ERR_NO_MEMORY;
	for (i = 0; i < m->cap; i++)
		if (m->slots[i].key != NULL)
			g.slots[dofi_map_find(&g, m->slots[i].key)] =
			        m->slots[i];
	free(m->slots);
	*m = g;
	return DOF_OK;
}

dof_status_t dofi_map_put(dofi_map_t *m, const void *key, void *val)
{
	uint32_t i;
	dof_status_t st;

	if (key == NULL || val == NULL)
		return DOF_ERR_INVALID_PARAM;
	if (m->n > 0) {
		i = dofi_map_find(m, key);
		if (m->slots[i].key == key) {
			m->slots[i].val = val;
			return DOF_OK;
		}
	}
	/* At most half full after the insert. */
	if ((uint64_t)(m->n + 1) * 2 > m->cap) {
		st = dofi_map_grow(m);
		if (st != DOF_OK)
			return st;
	}
	i = dofi_map_find(m, key);
	m->slots[i].key = key;
	m->slots[i].val = val;
	m->n++;
	return DOF_OK;
}

void *dofi_map_get(const dofi_map_t *m, const void *key)
{
	uint32_t i;

	if (key == NULL || m->n == 0)
		return NULL;
	i = dofi_map_find(m, key);
	return m->slots[i].val; /* NULL in an empty slot */
}

void *dofi_map_del(dofi_map_t *m, const void *key)
{
	uint32_t mask, hole, j, home;
	void *val;

	if (key == NULL || m->n == 0)
		return NULL;
	mask = m->cap - 1;
	hole = dofi_map_find(m, key);
	if (m->slots[hole].key == NULL)
		return NULL;
	val = m->slots[hole].val;
	m->n--;
	/*
	 * Shift back each key of the run after the hole whose home is not
	 * between the hole and its slot (cyclically): it was pushed past
	 * the hole, and a search for it would now stop there.
	 */
	for (j = (hole + 1) & mask; m->slots[j].key != NULL;
	     j = (j + 1) & mask) {
		home = dofi_map_home(m, m->slots[j].key);
		if (((j - home) & mask) >= ((j - hole) & mask)) {
			m->slots[hole] = m->slots[j];
			hole = j;
		}
	}
	m->slots[hole].key = NULL;
	m->slots[hole].val = NULL;
	return val;
}

uint32_t dofi_map_count(const dofi_map_t *m)
{
	return m->n;
}
