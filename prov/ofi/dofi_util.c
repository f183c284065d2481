/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * What every file of the provider uses and that uses nothing of theirs:
 * the clock, lazily mapped blocks, SIGPIPE suppression, the contended
 * halves of dofi_lock_t, and objects (their allocation, their graves, and
 * the checks of the handles that name them).
 */
#include "config.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "dofi.h"

/* ---- dofi_lock_t (dofi_lock.h) ------------------------------------------ */

/* Turns a taker spins before it sleeps: a holder keeps the lock for a CQ
 * read or a drain of one, a microsecond or so. */
#define DOFI_LOCK_SPINS 128

static inline void dofi_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

void dofi_lock_wait(dofi_lock_t *l)
{
	int i;

	for (i = 0; i < DOFI_LOCK_SPINS; i++) {
		uint32_t free_word = 0;

		if (atomic_load_explicit(&l->word, memory_order_relaxed) == 0 &&
		    atomic_compare_exchange_weak_explicit(
		            &l->word, &free_word, 1, memory_order_acquire,
		            memory_order_relaxed))
			return;
		dofi_cpu_relax();
	}
	/* Taken with 2, the word tells the giver that someone may sleep. */
	while (atomic_exchange_explicit(&l->word, 2, memory_order_acquire) != 0)
		(void)syscall(SYS_futex, &l->word, FUTEX_WAIT_PRIVATE, 2, NULL,
		              NULL, 0);
}

void dofi_lock_wake(dofi_lock_t *l)
{
	(void)syscall(SYS_futex, &l->word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL,
	              0);
}

/*
 * Freed objects are kept (dead magic, table pointer intact) and reused
 * only after DOFI_GRAVE_MIN others of the same size died, oldest first,
 * so a stale handle keeps answering DAT_INVALID_HANDLE.
 */
#define DOFI_GRAVE_MIN 64
typedef struct dofi_grave {
	dofi_list_t list;
	size_t count;
} dofi_grave_t;
static dofi_grave_t dofi_graves[DOFI_OBJ_LAST];
static pthread_mutex_t dofi_grave_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *const dofi_type_names[DOFI_OBJ_LAST] = {
        [DOFI_OBJ_IA] = "IA",   [DOFI_OBJ_PZ] = "PZ",   [DOFI_OBJ_LMR] = "LMR",
        [DOFI_OBJ_RMR] = "RMR", [DOFI_OBJ_EVD] = "EVD", [DOFI_OBJ_CNO] = "CNO",
        [DOFI_OBJ_EP] = "EP",   [DOFI_OBJ_PSP] = "PSP", [DOFI_OBJ_RSP] = "RSP",
        [DOFI_OBJ_CR] = "CR",   [DOFI_OBJ_SRQ] = "SRQ",
};

uint64_t dofi_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Blocks of a page and more (an EP's op pools and its receive IOV slots) come
 * from mmap: their pages stay off the resident set until used, so an idle
 * EP costs what it touched, not its queue depths. Smaller ones: malloc.
 */
#define DOFI_LAZY_MIN 4096

/*
 * Blocks given back are kept, by size, for the next EP: an application that
 * creates an EP per connection then makes no mmap and takes no page fault
 * per connection, and tearing down many EPs makes no munmap (which splits
 * the merged mapping, and costs more than the rest of dat_ep_free). The
 * first DOFI_LAZY_WARM of a size keep the pages their last EP touched;
 * those beyond give their pages back (madvise), so a cache that holds the
 * blocks of the most EPs ever open at once keeps only address space.
 * Sizes beyond DOFI_LAZY_SIZES distinct ones are not cached.
 */
#define DOFI_LAZY_WARM  64
#define DOFI_LAZY_SIZES 8

static struct dofi_lazy_size {
	size_t n;
	void **p; /* malloc'd stack of cached blocks */
	size_t np, cap;
} dofi_lazy_cache[DOFI_LAZY_SIZES];
static pthread_mutex_t dofi_lazy_lock = PTHREAD_MUTEX_INITIALIZER;

/* The cache of blocks of n bytes, made if make; NULL if none. */
static struct dofi_lazy_size *dofi_lazy_size_of(size_t n, int make)
{
	int i;

	for (i = 0; i < DOFI_LAZY_SIZES; i++) {
		if (dofi_lazy_cache[i].n == n)
			return &dofi_lazy_cache[i];
		if (dofi_lazy_cache[i].n == 0) {
			if (!make)
				return NULL;
			dofi_lazy_cache[i].n = n;
			return &dofi_lazy_cache[i];
		}
	}
	return NULL;
}

void *dofi_lazy_alloc(size_t n)
{
	struct dofi_lazy_size *c;
	void *p = NULL;

	if (n < DOFI_LAZY_MIN)
		return malloc(n ? n : 1);
	pthread_mutex_lock(&dofi_lazy_lock);
	c = dofi_lazy_size_of(n, 0);
	if (c != NULL && c->np > 0)
		p = c->p[--c->np];
	pthread_mutex_unlock(&dofi_lazy_lock);
	if (p != NULL)
		return p;
	p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
	         -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

void dofi_lazy_free(void *p, size_t n)
{
	struct dofi_lazy_size *c;
	void **grown;
	int kept = 0, cold = 0;

	if (p == NULL)
		return;
	if (n < DOFI_LAZY_MIN) {
		free(p);
		return;
	}
	pthread_mutex_lock(&dofi_lazy_lock);
	c = dofi_lazy_size_of(n, 1);
	if (c != NULL && c->np == c->cap) {
		grown = realloc(c->p,
		                (c->cap ? 2 * c->cap : 64) * sizeof(*grown));
		if (grown != NULL) {
			c->p = grown;
			c->cap = c->cap ? 2 * c->cap : 64;
		}
	}
	if (c != NULL && c->np < c->cap) {
		cold = c->np >= DOFI_LAZY_WARM;
		c->p[c->np++] = p;
		kept = 1;
	}
	pthread_mutex_unlock(&dofi_lazy_lock);
	if (!kept)
		(void)munmap(p, n);
	else if (cold)
		(void)madvise(p, n, MADV_DONTNEED);
}

/* The cached blocks go back to the system (provider unload). */
void dofi_lazy_release(void)
{
	struct dofi_lazy_size *c;

	pthread_mutex_lock(&dofi_lazy_lock);
	for (c = dofi_lazy_cache; c < dofi_lazy_cache + DOFI_LAZY_SIZES; c++) {
		while (c->np > 0)
			(void)munmap(c->p[--c->np], c->n);
		free(c->p);
		memset(c, 0, sizeof(*c));
	}
	pthread_mutex_unlock(&dofi_lazy_lock);
}

_Atomic int dofi_nopipe_on;

void dofi_nopipe_need(void)
{
	atomic_store(&dofi_nopipe_on, 1);
}

void dofi_nopipe_begin(sigset_t *old)
{
	sigset_t pipe;

	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe, old);
}

void dofi_nopipe_end(const sigset_t *old)
{
	struct timespec zero = {0, 0};
	sigset_t pipe, pending;

	if (sigismember(old, SIGPIPE))
		return; /* the caller had it blocked: not ours to take */
	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	/* The write failed with EPIPE; the signal it raised is ours. */
	if (sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE))
		(void)sigtimedwait(&pipe, NULL, &zero);
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

static void *dofi_obj_alloc_common(dofi_ia_t *ia, dofi_obj_type_t type,
                                   size_t size, const DAT_PROVIDER *table,
                                   int locked)
{
	dofi_grave_t *g = &dofi_graves[type];
	dofi_obj_t *obj = NULL;

	pthread_mutex_lock(&dofi_grave_lock);
	if (g->list.next == NULL)
		dofi_list_init(&g->list);
	if (g->count > DOFI_GRAVE_MIN) {
		dofi_list_t *e;

		for (e = g->list.next; e != &g->list; e = e->next) {
			dofi_obj_t *o = dofi_container_of(e, dofi_obj_t, link);

			if (o->size == size) {
				dofi_list_del(e);
				g->count--;
				obj = o;
				break;
			}
		}
	}
	pthread_mutex_unlock(&dofi_grave_lock);
	if (obj == NULL) {
		obj = calloc(1, size);
		if (obj == NULL)
			return NULL;
	} else {
		memset(obj, 0, size);
	}
	obj->provider = table;
	obj->type = type;
	obj->ia = ia;
	obj->size = size;
	dofi_list_init(&obj->link);
	if (ia != NULL && type != DOFI_OBJ_IA) {
		if (!locked)
			pthread_mutex_lock(&ia->lock);
		dofi_list_add_tail(&ia->objs[type], &obj->link);
		if (!locked)
			pthread_mutex_unlock(&ia->lock);
	}
	atomic_store(&obj->magic, DOFI_MAGIC_LIVE);
	return obj;
}

void *dofi_obj_alloc(dofi_ia_t *ia, dofi_obj_type_t type, size_t size,
                     const DAT_PROVIDER *table)
{
	return dofi_obj_alloc_common(ia, type, size, table, 0);
}

void *dofi_obj_alloc_locked(dofi_ia_t *ia, dofi_obj_type_t type, size_t size,
                            const DAT_PROVIDER *table)
{
	return dofi_obj_alloc_common(ia, type, size, table, 1);
}

/* Caller holds ia->lock when the object is on an IA list. */
void dofi_obj_free(void *p)
{
	dofi_obj_t *obj = p;
	dofi_grave_t *g;

	if (obj == NULL)
		return;
	g = &dofi_graves[obj->type];
	atomic_store(&obj->magic, DOFI_MAGIC_DEAD);
	dofi_list_del(&obj->link);
	pthread_mutex_lock(&dofi_grave_lock);
	if (g->list.next == NULL)
		dofi_list_init(&g->list);
	dofi_list_add_tail(&g->list, &obj->link);
	g->count++;
	pthread_mutex_unlock(&dofi_grave_lock);
}

void dofi_graves_release(void)
{
	int t;

	pthread_mutex_lock(&dofi_grave_lock);
	for (t = 0; t < DOFI_OBJ_LAST; t++) {
		dofi_grave_t *g = &dofi_graves[t];

		while (g->list.next != NULL && !dofi_list_empty(&g->list)) {
			dofi_list_t *e = g->list.next;

			dofi_list_del(e);
			free(dofi_container_of(e, dofi_obj_t, link));
		}
		g->count = 0;
	}
	pthread_mutex_unlock(&dofi_grave_lock);
}

/* "n" before the type names read with a vowel sound: "an EP handle". */
static const char *dofi_type_article(dofi_obj_type_t type)
{
	return type == DOFI_OBJ_IA || type == DOFI_OBJ_EP ||
	                       type == DOFI_OBJ_EVD || type == DOFI_OBJ_LMR ||
	                       type == DOFI_OBJ_RMR
	               ? "n"
	               : "";
}

void *dofi_obj_get(const void *handle, dofi_obj_type_t type, const char *func)
{
	const dofi_obj_t *o = handle;
	uint32_t magic;

	if (o == NULL) {
		dof_warn(DOFI_LOG, "%s: NULL %s handle", func,
		         dofi_type_names[type]);
		return NULL;
	}
	if (!dofi_handle_shaped(o)) {
		dof_warn(DOFI_LOG,
		         "%s: %p cannot be a%s %s handle (a small integer, "
		         "misaligned or outside user space)",
		         func, handle, dofi_type_article(type),
		         dofi_type_names[type]);
		return NULL;
	}
	magic = atomic_load(&o->magic);
	if (magic == DOFI_MAGIC_DEAD) {
		dof_warn(DOFI_LOG, "%s: %s handle %p was freed", func,
		         dofi_type_names[o->type < DOFI_OBJ_LAST ? o->type : 0]
		                 ?: "object",
		         handle);
		return NULL;
	}
	if (magic != DOFI_MAGIC_LIVE || o->type != type) {
		dof_warn(DOFI_LOG, "%s: %p is not a%s %s handle", func, handle,
		         dofi_type_article(type), dofi_type_names[type]);
		return NULL;
	}
	return (void *)o;
}

DAT_IA_HANDLE dofi_ia_consumer_handle(dofi_ia_t *ia)
{
	DAT_IA_HANDLE h = DAT_HANDLE_NULL;

	if (ia == NULL)
		return DAT_HANDLE_NULL;
	/* Under OFED's registry too: both export dats_get_ia_handle. */
	if (dats_get_ia_handle((DAT_IA_HANDLE)ia, &h) != DAT_SUCCESS)
		return (DAT_IA_HANDLE)ia;
	return h;
}

/* ---- the IA names registered (dat_provider_init/fini) -------------------- */

static pthread_mutex_t dofi_prov_lock = PTHREAD_MUTEX_INITIALIZER;
static dofi_list_t dofi_provs = {&dofi_provs, &dofi_provs};

void dofi_prov_add(dofi_prov_t *p)
{
	pthread_mutex_lock(&dofi_prov_lock);
	dofi_list_add_tail(&dofi_provs, &p->link);
	pthread_mutex_unlock(&dofi_prov_lock);
}

int dofi_prov_remove(dofi_prov_t *p)
{
	int last;

	pthread_mutex_lock(&dofi_prov_lock);
	dofi_list_del(&p->link);
	last = dofi_list_empty(&dofi_provs);
	pthread_mutex_unlock(&dofi_prov_lock);
	return last;
}

dofi_prov_t *dofi_prov_find(const char *ia_name)
{
	dofi_prov_t *found = NULL;
	dofi_list_t *e;

	pthread_mutex_lock(&dofi_prov_lock);
	for (e = dofi_provs.next; e != &dofi_provs; e = e->next) {
		dofi_prov_t *p = dofi_container_of(e, dofi_prov_t, link);

		if (strcmp(p->info.ia_name, ia_name) == 0) {
			found = p;
			break;
		}
	}
	pthread_mutex_unlock(&dofi_prov_lock);
	return found;
}
