/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * The IA handle table. Consumers see small integers (1..DATR_IA_HANDLE_MAX);
 * providers see their own pointers. A freed index is not handed out again
 * until the allocation cursor has gone round the whole table, so a stale
 * handle keeps failing with DAT_INVALID_HANDLE for as long as possible.
 */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "datr.h"
#include "dof/log.h"

static struct {
	pthread_mutex_t lock;  /* never held while calling a provider */
	datr_ia_slot_t *slots; /* slots[0] is unused */
	size_t capacity;       /* number of slots, including slot 0 */
	size_t cursor;         /* last index handed out */
	size_t used;
} datr_handles = {
        .lock = PTHREAD_MUTEX_INITIALIZER,
};

const DAT_PROVIDER *_Atomic datr_tables[DATR_TABLES_MAX];

/* Under the lock: whether an open IA other than slot skip has this table. */
static int datr_table_in_use(const DAT_PROVIDER *table, size_t skip)
{
	size_t i;

	for (i = 1; i < datr_handles.capacity; i++)
		if (i != skip && datr_handles.slots[i].raw != NULL &&
		    datr_handles.slots[i].provider == table)
			return 1;
	return 0;
}

/*
 * Under the lock: list the table of a newly opened IA; DOF_ERR_NO_MEMORY
 * when DATR_TABLES_MAX others are listed. A NULL slot 0 is always filled
 * first: it is the one datr_handle_obj_table checks first.
 */
static dof_status_t datr_table_add(const DAT_PROVIDER *table)
{
	unsigned i, free_slot = DATR_TABLES_MAX;

	for (i = 0; i < DATR_TABLES_MAX; i++) {
		const DAT_PROVIDER *t = atomic_load_explicit(
		        &datr_tables[i], memory_order_relaxed);

		if (t == table)
			return DOF_OK;
		if (t == NULL && free_slot == DATR_TABLES_MAX)
			free_slot = i;
	}
	/* The copy of slot 0's table that datr_table_drop left may go. */
	for (i = 1; i < DATR_TABLES_MAX && free_slot == DATR_TABLES_MAX; i++)
		if (atomic_load_explicit(&datr_tables[i],
		                         memory_order_relaxed) ==
		    atomic_load_explicit(&datr_tables[0], memory_order_relaxed))
			free_slot = i;
	if (free_slot == DATR_TABLES_MAX) {
		dof_warn(DATR_LOG,
		         "IAs of %u provider tables (IA names) are open "
		         "already; close one first",
		         DATR_TABLES_MAX);
		return DOF_ERR_NO_MEMORY;
	}
	atomic_store_explicit(&datr_tables[free_slot], table,
	                      memory_order_release);
	return DOF_OK;
}

/*
 * Under the lock: unlist the table of the last IA closed on it. When that
 * empties slot 0, another listed table is copied there (and stays in its
 * own slot too, so a reader never misses it).
 */
static void datr_table_drop(const DAT_PROVIDER *table, size_t idx)
{
	unsigned i;

	if (datr_table_in_use(table, idx))
		return;
	for (i = 0; i < DATR_TABLES_MAX; i++)
		if (atomic_load_explicit(&datr_tables[i],
		                         memory_order_relaxed) == table)
			atomic_store_explicit(&datr_tables[i], NULL,
			                      memory_order_release);
	for (i = 1; i < DATR_TABLES_MAX &&
	            atomic_load_explicit(&datr_tables[0],
	                                 memory_order_relaxed) == NULL;
	     i++) {
		const DAT_PROVIDER *t = atomic_load_explicit(
		        &datr_tables[i], memory_order_relaxed);

		if (t != NULL) {
			atomic_store_explicit(&datr_tables[0], t,
			                      memory_order_release);
			break;
		}
	}
}

static dof_status_t datr_handle_grow(void)
{
	size_t cap = datr_handles.capacity ? datr_handles.capacity * 2 : 64;
	datr_ia_slot_t *tmp;

	if (cap > DATR_IA_HANDLE_MAX + 1)
		cap = DATR_IA_HANDLE_MAX + 1;
	if (cap <= datr_handles.capacity)
		return DOF_ERR_NO_MEMORY;
	tmp = realloc(datr_handles.slots, cap * sizeof(*tmp));
	if (tmp == NULL)
		return DOF_ERR_NO_MEMORY;
	memset(tmp + datr_handles.capacity, 0,
	       (cap - datr_handles.capacity) * sizeof(*tmp));
	datr_handles.slots = tmp;
	datr_handles.capacity = cap;
	return DOF_OK;
}

dof_status_t datr_handle_alloc(const datr_ia_slot_t *slot, DAT_IA_HANDLE *out)
{
	dof_status_t status = DOF_OK;
	size_t i, idx = 0;

	if (slot->raw == NULL)
		return DOF_ERR_INVALID_PARAM;
	pthread_mutex_lock(&datr_handles.lock);
	/* Grow while more than half full, so the cursor rarely wraps. */
	if (datr_handles.used + 1 >= datr_handles.capacity / 2 &&
	    datr_handle_grow() != DOF_OK && datr_handles.capacity == 0) {
		status = DOF_ERR_NO_MEMORY;
		goto out;
	}
	for (i = 1; i < datr_handles.capacity; i++) {
		size_t cand = (datr_handles.cursor + i) % datr_handles.capacity;

		if (cand != 0 && datr_handles.slots[cand].raw == NULL) {
			idx = cand;
			break;
		}
	}
	if (idx == 0) {
		dof_warn(DATR_LOG, "all %u IA handles are in use",
		         DATR_IA_HANDLE_MAX);
		status = DOF_ERR_NO_MEMORY;
		goto out;
	}
	if (datr_table_add(slot->provider) != DOF_OK) {
		status = DOF_ERR_NO_MEMORY;
		goto out;
	}
	datr_handles.slots[idx] = *slot;
	datr_handles.cursor = idx;
	datr_handles.used++;
	*out = (DAT_IA_HANDLE)(uintptr_t)idx;
out:
	pthread_mutex_unlock(&datr_handles.lock);
	return status;
}

dof_status_t datr_handle_lookup(DAT_IA_HANDLE handle, datr_ia_slot_t *slot)
{
	uintptr_t idx = (uintptr_t)handle;
	dof_status_t status = DOF_ERR_INVALID_HANDLE;

	if (!datr_handle_is_ia_index(handle))
		return status;
	pthread_mutex_lock(&datr_handles.lock);
	if (idx < datr_handles.capacity &&
	    datr_handles.slots[idx].raw != NULL) {
		*slot = datr_handles.slots[idx];
		status = DOF_OK;
	}
	pthread_mutex_unlock(&datr_handles.lock);
	return status;
}

dof_status_t datr_handle_free(DAT_IA_HANDLE handle)
{
	uintptr_t idx = (uintptr_t)handle;
	dof_status_t status = DOF_ERR_INVALID_HANDLE;

	if (!datr_handle_is_ia_index(handle))
		return status;
	pthread_mutex_lock(&datr_handles.lock);
	if (idx < datr_handles.capacity &&
	    datr_handles.slots[idx].raw != NULL) {
		datr_table_drop(datr_handles.slots[idx].provider, idx);
		memset(&datr_handles.slots[idx], 0, sizeof(datr_ia_slot_t));
		datr_handles.used--;
		status = DOF_OK;
	}
	pthread_mutex_unlock(&datr_handles.lock);
	return status;
}

int datr_handle_provider_busy(const DAT_PROVIDER *provider)
{
	int busy = 0;
	size_t i;

	pthread_mutex_lock(&datr_handles.lock);
	for (i = 1; i < datr_handles.capacity && !busy; i++)
		busy = datr_handles.slots[i].raw != NULL &&
		       datr_handles.slots[i].provider == provider;
	pthread_mutex_unlock(&datr_handles.lock);
	return busy;
}

DAT_RETURN DAT_API dats_get_ia_handle(DAT_IA_HANDLE handle, DAT_IA_HANDLE *out)
{
	DAT_RETURN ret = DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	size_t i;

	if (out == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	if (handle == NULL)
		return ret;
	if (datr_handle_is_ia_index(handle)) {
		datr_ia_slot_t slot;

		if (datr_handle_lookup(handle, &slot) != DOF_OK)
			return ret;
		*out = slot.raw;
		return DAT_SUCCESS;
	}
	/* A provider pointer: find its index (not on any data path). */
	pthread_mutex_lock(&datr_handles.lock);
	for (i = 1; i < datr_handles.capacity; i++) {
		if (datr_handles.slots[i].raw == handle) {
			*out = (DAT_IA_HANDLE)(uintptr_t)i;
			ret = DAT_SUCCESS;
			break;
		}
	}
	pthread_mutex_unlock(&datr_handles.lock);
	return ret;
}
