/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * Provider entry: dat_provider_init/fini, the ops table registered once per
 * IA name, object allocation and handle checks, the generic handle calls.
 */
#include "config.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "dofi.h"

static pthread_mutex_t dofi_prov_lock = PTHREAD_MUTEX_INITIALIZER;
static dofi_list_t dofi_provs = {&dofi_provs, &dofi_provs};

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
        [DOFI_OBJ_CR] = "CR",
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
static void dofi_lazy_release(void)
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

static void dofi_graves_release(void)
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

/* ---- generic handle calls ------------------------------------------------ */

static dofi_obj_t *dofi_any_get(DAT_HANDLE handle, const char *func)
{
	dofi_obj_t *o = handle;

	if (!dofi_handle_shaped(o) ||
	    atomic_load(&o->magic) != DOFI_MAGIC_LIVE || o->type <= 0 ||
	    o->type >= DOFI_OBJ_LAST) {
		dof_warn(DOFI_LOG, "%s: %p is not a live DAT object", func,
		         handle);
		return NULL;
	}
	return o;
}

static DAT_RETURN dofi_set_consumer_context(DAT_HANDLE handle,
                                            DAT_CONTEXT context)
{
	dofi_obj_t *o = dofi_any_get(handle, __func__);

	if (o == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, 0);
	o->context = context;
	return DAT_SUCCESS;
}

static DAT_RETURN dofi_get_consumer_context(DAT_HANDLE handle,
                                            DAT_CONTEXT *context)
{
	dofi_obj_t *o = dofi_any_get(handle, __func__);

	if (o == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, 0);
	if (context == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	*context = o->context;
	return DAT_SUCCESS;
}

static DAT_RETURN dofi_get_handle_type(DAT_HANDLE handle, DAT_HANDLE_TYPE *t)
{
	static const DAT_HANDLE_TYPE map[DOFI_OBJ_LAST] = {
	        [DOFI_OBJ_IA] = DAT_HANDLE_TYPE_IA,
	        [DOFI_OBJ_PZ] = DAT_HANDLE_TYPE_PZ,
	        [DOFI_OBJ_LMR] = DAT_HANDLE_TYPE_LMR,
	        [DOFI_OBJ_RMR] = DAT_HANDLE_TYPE_RMR,
	        [DOFI_OBJ_EVD] = DAT_HANDLE_TYPE_EVD,
	        [DOFI_OBJ_CNO] = DAT_HANDLE_TYPE_CNO,
	        [DOFI_OBJ_EP] = DAT_HANDLE_TYPE_EP,
	        [DOFI_OBJ_PSP] = DAT_HANDLE_TYPE_PSP,
	        [DOFI_OBJ_RSP] = DAT_HANDLE_TYPE_RSP,
	        [DOFI_OBJ_CR] = DAT_HANDLE_TYPE_CR,
	};
	dofi_obj_t *o = dofi_any_get(handle, __func__);

	if (o == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, 0);
	if (t == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	*t = map[o->type];
	return DAT_SUCCESS;
}

/* ---- calls this backend does not offer ----------------------------------- */

static DAT_RETURN dofi_srq_unsupported(const char *func)
{
	dof_info(DOFI_LOG, "%s: shared receive queues are not offered yet",
	         func);
	return DAT_ERROR(DAT_MODEL_NOT_SUPPORTED, 0);
}

static DAT_RETURN dofi_srq_create(DAT_IA_HANDLE ia_h, DAT_PZ_HANDLE pz_h,
                                  DAT_SRQ_ATTR *attr, DAT_SRQ_HANDLE *srq)
{
	dofi_ia_t *ia = dofi_obj_get(ia_h, DOFI_OBJ_IA, "dat_srq_create");
	dofi_obj_t *pz;

	(void)attr, (void)srq;
	if (ia == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	pz = dofi_obj_get(pz_h, DOFI_OBJ_PZ, "dat_srq_create");
	if (pz == NULL || pz->ia != ia)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ);
	return dofi_srq_unsupported(__func__);
}

static DAT_RETURN dofi_srq_free(DAT_SRQ_HANDLE srq)
{
	(void)srq;
	return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_SRQ);
}

static DAT_RETURN dofi_srq_post_recv(DAT_SRQ_HANDLE srq, DAT_COUNT n,
                                     DAT_LMR_TRIPLET *iov, DAT_DTO_COOKIE c)
{
	(void)srq, (void)n, (void)iov, (void)c;
	return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_SRQ);
}

static DAT_RETURN dofi_srq_query(DAT_SRQ_HANDLE srq, DAT_SRQ_PARAM_MASK m,
                                 DAT_SRQ_PARAM *p)
{
	(void)srq, (void)m, (void)p;
	return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_SRQ);
}

static DAT_RETURN dofi_srq_resize(DAT_SRQ_HANDLE srq, DAT_COUNT n)
{
	(void)srq, (void)n;
	return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_SRQ);
}

static DAT_RETURN dofi_srq_set_lw(DAT_SRQ_HANDLE srq, DAT_COUNT n)
{
	(void)srq, (void)n;
	return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_SRQ);
}

static DAT_RETURN dofi_extended_op(DAT_HANDLE handle, DAT_EXTENDED_OP op,
                                   va_list args)
{
	(void)args;
	if (dofi_any_get(handle, __func__) == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, 0);
	dof_info(DOFI_LOG,
	         "dat_extension_op %d: the IB extensions are not "
	         "offered by this provider",
	         (int)op);
	return DAT_ERROR(DAT_MODEL_NOT_SUPPORTED, 0);
}

/* ---- registration -------------------------------------------------------- */

/*
 * The DAT entry points, in DAT_PROVIDER order; what is left out is NULL.
 * Each registered IA name gets a copy with its own device_name.
 */
static const DAT_PROVIDER dofi_table = {
        .device_name = NULL,
        .extension = NULL,
        .ia_open_func = dofi_ia_open,
        .ia_query_func = dofi_ia_query,
        .ia_close_func = dofi_ia_close,
        .set_consumer_context_func = dofi_set_consumer_context,
        .get_consumer_context_func = dofi_get_consumer_context,
        .get_handle_type_func = dofi_get_handle_type,
        .cno_create_func = dofi_cno_create,
        .cno_modify_agent_func = dofi_cno_modify_agent,
        .cno_query_func = dofi_cno_query,
        .cno_free_func = dofi_cno_free,
        .cno_fd_create_func = dofi_cno_fd_create,
        .cno_trigger_func = dofi_cno_trigger,
        .cno_wait_func = dofi_cno_wait,
        .cr_query_func = dofi_cr_query,
        .cr_accept_func = dofi_cr_accept,
        .cr_reject_func = dofi_cr_reject,
        .cr_handoff_func = dofi_cr_handoff,
        .evd_create_func = dofi_evd_create,
        .evd_query_func = dofi_evd_query,
        .evd_modify_cno_func = dofi_evd_modify_cno,
        .evd_enable_func = dofi_evd_enable,
        .evd_disable_func = dofi_evd_disable,
        .evd_wait_func = dofi_evd_wait,
        .evd_resize_func = dofi_evd_resize,
        .evd_post_se_func = dofi_evd_post_se,
        .evd_dequeue_func = dofi_evd_dequeue,
        .evd_free_func = dofi_evd_free,
        .ep_create_func = dofi_ep_create,
        .ep_query_func = dofi_ep_query,
        .ep_modify_func = dofi_ep_modify,
        .ep_connect_func = dofi_ep_connect,
        .ep_dup_connect_func = dofi_ep_dup_connect,
        .ep_disconnect_func = dofi_ep_disconnect,
        .ep_post_send_func = dofi_ep_post_send,
        .ep_post_recv_func = dofi_ep_post_recv,
        .ep_post_rdma_read_func = dofi_ep_post_rdma_read,
        .ep_post_rdma_write_func = dofi_ep_post_rdma_write,
        .ep_get_status_func = dofi_ep_get_status,
        .ep_free_func = dofi_ep_free,
        .lmr_create_func = dofi_lmr_create,
        .lmr_query_func = dofi_lmr_query,
        .lmr_free_func = dofi_lmr_free,
        .rmr_create_func = dofi_rmr_create,
        .rmr_query_func = dofi_rmr_query,
        .rmr_bind_func = dofi_rmr_bind,
        .rmr_free_func = dofi_rmr_free,
        .psp_create_func = dofi_psp_create,
        .psp_query_func = dofi_psp_query,
        .psp_free_func = dofi_psp_free,
        .rsp_create_func = dofi_rsp_create,
        .rsp_query_func = dofi_rsp_query,
        .rsp_free_func = dofi_rsp_free,
        .pz_create_func = dofi_pz_create,
        .pz_query_func = dofi_pz_query,
        .pz_free_func = dofi_pz_free,
        .psp_create_any_func = dofi_psp_create_any,
        .ep_reset_func = dofi_ep_reset,
        .evd_set_unwaitable_func = dofi_evd_set_unwaitable,
        .evd_clear_unwaitable_func = dofi_evd_clear_unwaitable,
        .lmr_sync_rdma_read_func = dofi_lmr_sync_rdma_read,
        .lmr_sync_rdma_write_func = dofi_lmr_sync_rdma_write,
        .ep_create_with_srq_func = dofi_ep_create_with_srq,
        .ep_recv_query_func = dofi_ep_recv_query,
        .ep_set_watermark_func = dofi_ep_set_watermark,
        .srq_create_func = dofi_srq_create,
        .srq_free_func = dofi_srq_free,
        .srq_post_recv_func = dofi_srq_post_recv,
        .srq_query_func = dofi_srq_query,
        .srq_resize_func = dofi_srq_resize,
        .srq_set_lw_func = dofi_srq_set_lw,
        .handle_extendedop_func = dofi_extended_op,
};

/* "tcp lo", "verbs mlx5_0", "tcp;ofi_rxm", "auto", "" */
static void dofi_parse_instance(dofi_prov_t *p, const char *instance)
{
	const char *env = getenv("FI_PROVIDER");
	char why[128];

	if (dofi_instance_parse(instance, &p->inst, why, sizeof(why)) != DOF_OK)
		dof_warn(DOFI_LOG, "IA '%s': instance data: %s",
		         p->info.ia_name, why);
	if (env != NULL && *env != '\0') /* the same dat.conf, other hardware */
		snprintf(p->inst.fi_prov, sizeof(p->inst.fi_prov), "%s", env);
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

void DAT_API dat_provider_init(const DAT_PROVIDER_INFO *info,
                               const char *instance_data)
{
	dofi_prov_t *p;
	DAT_RETURN ret;

	dof_log_init();
	if (info == NULL)
		return;
	if (dofi_prov_find(info->ia_name) != NULL) {
		dof_warn(DOFI_LOG, "IA '%s' is already initialised",
		         info->ia_name);
		return;
	}
	p = calloc(1, sizeof(*p));
	if (p == NULL) {
		dof_error(DOFI_LOG, "out of memory initialising IA '%s'",
		          info->ia_name);
		return;
	}
	p->info = *info;
	dofi_parse_instance(p, instance_data);
	p->table = dofi_table;
	p->table.device_name = p->info.ia_name;
	pthread_mutex_lock(&dofi_prov_lock);
	dofi_list_add_tail(&dofi_provs, &p->link);
	pthread_mutex_unlock(&dofi_prov_lock);
	ret = dat_registry_add_provider(&p->table, &p->info);
	if (ret != DAT_SUCCESS) {
		dof_warn(DOFI_LOG, "IA '%s': registration refused (%#x)",
		         info->ia_name, ret);
		pthread_mutex_lock(&dofi_prov_lock);
		dofi_list_del(&p->link);
		pthread_mutex_unlock(&dofi_prov_lock);
		free(p);
		return;
	}
	dof_info(DOFI_LOG, "IA '%s': libfabric provider '%s', domain '%s'",
	         info->ia_name, p->inst.fi_prov[0] ? p->inst.fi_prov : "(any)",
	         p->inst.fi_domain[0] ? p->inst.fi_domain : "(any)");
}

void DAT_API dat_provider_fini(const DAT_PROVIDER_INFO *info)
{
	dofi_prov_t *p;
	int last;

	if (info == NULL)
		return;
	p = dofi_prov_find(info->ia_name);
	if (p == NULL)
		return;
	dat_registry_remove_provider(&p->table, &p->info);
	pthread_mutex_lock(&dofi_prov_lock);
	dofi_list_del(&p->link);
	last = dofi_list_empty(&dofi_provs);
	pthread_mutex_unlock(&dofi_prov_lock);
	free(p);
	if (last) {
		dofi_graves_release();
		dofi_lazy_release();
	}
}
