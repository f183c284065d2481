/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/* libdat2 internals: dat.conf, the provider table and the IA handle table. */
#ifndef DATR_H
#define DATR_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <dat2/udat.h>
#include <dat2/dat_registry.h>

#include "dof/daterr.h"
#include "dof/dats.h"
#include "dof/status.h"

#define DATR_LOG "dat"

/* Longest accepted dat.conf field other than the IA name. */
#define DATR_FIELD_MAX 4096

/*
 * dat.conf limits (dat.conf(5), LIMITS): a larger file is refused as a
 * whole; a longer line (its newline included) is skipped. The line limit
 * is above the longest entry the field limits allow, every field quoted.
 * A build may lower them (the fuzz target does, to reach both paths).
 */
#ifndef DATR_CONF_SIZE_MAX
#define DATR_CONF_SIZE_MAX (1024 * 1024)
#endif
#ifndef DATR_LINE_MAX
#define DATR_LINE_MAX (32 * 1024)
#endif

/* IA handles are 1..DATR_IA_HANDLE_MAX; no user pointer is that small. */
#define DATR_IA_HANDLE_MAX 65535u

/* One dat.conf entry (from a file or built in) and its load state. */
typedef struct datr_conf_entry {
	char *ia_name;
	unsigned api_major;
	unsigned api_minor;
	DAT_BOOLEAN threadsafe;
	DAT_BOOLEAN is_default;
	char *lib_path;
	char *prov_name;
	unsigned prov_major;
	unsigned prov_minor;
	char *ia_params;
	char *platform_params;
	char *source;  /* file path, or "built-in" */
	unsigned line; /* 0 for built-in entries */
	int shadowed;  /* an earlier entry has the same ia_name */
	/* Load state, under the registry lock. */
	void *dl_handle;
	DAT_PROVIDER_FINI_FUNC fini;
	unsigned refcnt;
} datr_conf_entry_t;

typedef struct datr_conf {
	datr_conf_entry_t *entries;
	size_t count;
	size_t capacity;
	char *path; /* the file read, NULL when none */
} datr_conf_t;

/*
 * Parse one line. DOF_OK fills *entry (strings malloc'd, source/line
 * set); DOF_ERR_NOT_FOUND for a blank or comment line; DOF_ERR_INVALID_PARAM
 * for a malformed one (a warning naming file, line and field is logged);
 * DOF_ERR_NO_MEMORY.
 */
dof_status_t datr_conf_parse_line(const char *text, const char *file,
                                  unsigned line, datr_conf_entry_t *entry);

/*
 * Append every valid entry of a file. DOF_ERR_IO if it cannot be opened or
 * read; DOF_ERR_INVALID_PARAM, with a warning, if it is refused as a whole
 * (not a regular file, or larger than DATR_CONF_SIZE_MAX): then nothing
 * is appended and conf->path is left alone.
 */
dof_status_t datr_conf_load_file(datr_conf_t *conf, const char *path);

/* Append the built-in entries of our provider (after the file's). */
dof_status_t datr_conf_add_builtins(datr_conf_t *conf);

/* First usable entry of that name, or NULL. */
datr_conf_entry_t *datr_conf_find(datr_conf_t *conf, const char *ia_name);

/* "file:line" or "built-in", for messages. */
void datr_conf_entry_where(const datr_conf_entry_t *entry, char *buf,
                           size_t len);

void datr_conf_entry_cleanup(datr_conf_entry_t *entry);
void datr_conf_cleanup(datr_conf_t *conf);

/*
 * Which file to read: $DAT_OVERRIDE when set, else the first that exists
 * of $(sysconfdir)/dat.conf and /etc/dat.conf; NULL when there is none.
 */
const char *datr_conf_choose_path(void);

/* Registry state: read dat.conf once; returns the table (never NULL). */
datr_conf_t *datr_registry_conf(void);

/* Locks around provider loading and the conf table's load state. */
void datr_registry_lock(void);
void datr_registry_unlock(void);

/*
 * Find (loading it if needed) the provider for ia_name and take a
 * reference. On success *provider is set, and *entry to the dat.conf entry
 * that was referenced (NULL for a provider that registered itself).
 */
DAT_RETURN datr_provider_get(const char *ia_name, DAT_UINT32 major,
                             DAT_UINT32 minor, const DAT_PROVIDER **provider,
                             datr_conf_entry_t **entry);

/* Drop a reference; the last one calls dat_provider_fini and dlcloses. */
void datr_provider_put(datr_conf_entry_t *entry);

/* The registered provider for ia_name, or NULL (registry lock held). */
const DAT_PROVIDER *datr_provider_find(const char *ia_name);

/* IA handle table. */
typedef struct datr_ia_slot {
	DAT_IA_HANDLE raw; /* the provider's IA pointer */
	const DAT_PROVIDER *provider;
	datr_conf_entry_t *entry;
} datr_ia_slot_t;

static inline int datr_handle_is_ia_index(const void *handle)
{
	return handle != NULL && (uintptr_t)handle <= DATR_IA_HANDLE_MAX;
}

/*
 * The address bit that is set in every kernel address and clear in every
 * user one: bit 63 on x86-64 (with LAM too), bit 55 on AArch64 (whose top
 * byte may hold a tag). Elsewhere the check is left out.
 */
#if defined(__x86_64__)
#define DATR_KERNEL_BIT 63
#elif defined(__aarch64__)
#define DATR_KERNEL_BIT 55
#endif

/*
 * Whether a value can be an object handle at all: above the IA indices
 * (so neither NULL nor a small integer), aligned like the pointer its
 * first word is, and not a kernel address. Nothing is read.
 */
static inline int datr_handle_obj_shaped(const void *handle)
{
	uintptr_t v = (uintptr_t)handle;

	if (v <= DATR_IA_HANDLE_MAX ||
	    (v & (_Alignof(const DAT_PROVIDER *) - 1)) != 0)
		return 0;
#ifdef DATR_KERNEL_BIT
	if ((v >> DATR_KERNEL_BIT) & 1)
		return 0;
#endif
	return 1;
}

/*
 * The provider tables of the open IAs, which an object handle's first
 * word must be. Slots are written under the handle table's lock and read
 * without one: a table is listed before the dat_ia_open that needs it
 * returns, and unlisted after the last IA on it is closed. At most
 * DATR_TABLES_MAX distinct tables (IA names, with our provider) can have
 * IAs open at once; dat_ia_open refuses one more.
 */
#define DATR_TABLES_MAX 16
extern const DAT_PROVIDER *_Atomic datr_tables[DATR_TABLES_MAX];

/*
 * The provider table of an object handle, or NULL when the handle is not
 * shaped like one or its first word is no open IA's table. Reads the
 * handle's first word: a pointer into unmapped memory still faults. With
 * one IA name in use, three compares, two loads and one more compare;
 * never a call, a lock or a store.
 */
static inline const DAT_PROVIDER *datr_handle_obj_table(const void *handle)
{
	const DAT_PROVIDER *table;
	unsigned i;

	if (!datr_handle_obj_shaped(handle))
		return NULL;
	table = *(const DAT_PROVIDER *const *)handle;
	if (__builtin_expect(table ==
	                             atomic_load_explicit(&datr_tables[0],
	                                                  memory_order_acquire),
	                     1))
		return table;
	for (i = 1; i < DATR_TABLES_MAX; i++)
		if (table ==
		    atomic_load_explicit(&datr_tables[i], memory_order_acquire))
			return table;
	return NULL;
}

dof_status_t datr_handle_alloc(const datr_ia_slot_t *slot, DAT_IA_HANDLE *out);
dof_status_t datr_handle_lookup(DAT_IA_HANDLE handle, datr_ia_slot_t *slot);
dof_status_t datr_handle_free(DAT_IA_HANDLE handle);
/* Whether any open IA handle belongs to this provider table. */
int datr_handle_provider_busy(const DAT_PROVIDER *provider);

#endif /* DATR_H */
