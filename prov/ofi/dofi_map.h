/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * A map from pointers to pointers: open addressing with linear probing
 * and backward-shift deletion (no tombstones), doubling once more than
 * half full; O(1) on average. Keys are only compared, never dereferenced:
 * a key may be the address of an object freed since (a libfabric fid).
 * No lock: the caller serialises every call on one map.
 */
#ifndef DOFI_MAP_H
#define DOFI_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "dof/status.h"

struct dofi_map_slot;

typedef struct dofi_map {
	struct dofi_map_slot *slots; /* NULL until the first put */
	uint32_t cap;                /* slots, a power of two (or 0) */
	uint32_t n;                  /* keys held */
	uint32_t shift;              /* 64 - log2(cap): the hash's top bits */
} dofi_map_t;

/* An empty map; allocates nothing. */
void dofi_map_init(dofi_map_t *m);
/* Frees the slots; the map is empty (and usable) again. */
void dofi_map_fini(dofi_map_t *m);
/*
 * Insert key -> val, or replace key's value. DOF_ERR_INVALID_PARAM for a
 * NULL key or val; DOF_ERR_NO_MEMORY when the map cannot grow (it is
 * unchanged then).
 */
dof_status_t dofi_map_put(dofi_map_t *m, const void *key, void *val);
/* key's value, NULL when absent (or key NULL). */
void *dofi_map_get(const dofi_map_t *m, const void *key);
/* Remove key; its value, NULL when absent. */
void *dofi_map_del(dofi_map_t *m, const void *key);
uint32_t dofi_map_count(const dofi_map_t *m);

#endif /* DOFI_MAP_H */
