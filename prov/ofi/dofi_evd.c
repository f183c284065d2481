/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * EVDs and CNOs.
 *
 * An EVD is a ring of DAT_EVENTs (connection, CR, RMR bind, software and
 * async events, and completions pulled ahead by a threshold wait) plus,
 * for DTO streams, a libfabric CQ. A CQ belongs to one domain and a PZ is
 * a domain, so an EVD serving EPs of other PZs than the first also has a
 * CQ in each of their domains (xcq, opened when such an EP first binds
 * it). dat_evd_dequeue takes the ring first, then reads the CQ directly:
 * on the common path (empty ring) it costs one fi_cq_read under the EVD's
 * lock, uncontended unless another thread drains the same CQ (see
 * dofi_evd_dequeue); the other CQs are read only when the first is empty
 * and there are any. Posting an event moves
 * the CQ's completions into the ring first, so completions that happened
 * before a disconnect are seen before it.
 *
 * Waiting blocks in poll() on the CQ's FI_WAIT_FD fd (after fi_trywait)
 * and on an eventfd that event posters write. A CNO is an eventfd too.
 */
#include "config.h"

#define DOFI_LOG_COMP "evd"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "dofi.h"
#include "dofi_fast.h"

/*
 * Entries per read when a CQ is drained into the ring. On libfabric tcp
 * every read is a progress pass over each socket of the CQ, and one pass
 * can complete a message on each (a burst of RTUs): 16 a read made
 * draining 10,000 of them cost 625 passes.
 */
#define DOFI_CQ_BATCH      128
#define DOFI_WAIT_SLICE_MS 10
/*
 * The fewest entries a CQ is opened with, whatever the EVD's qlen. A read
 * returns no more than the CQ's size: libfabric's util CQ keeps what does
 * not fit in a list behind its last slot and hands it out one slot at a
 * time. OFED's dtestcm gives its receive EVD a qlen of 1, so each RTU of
 * its connections took a read of its own, and on tcp a read is a pass over
 * every socket: quadratic in the connections. Completions of a backend's
 * own (RTUs) come on top of what the consumer sized the EVD for, too.
 */
#define DOFI_CQ_MIN_SIZE 256

static uint32_t dofi_pow2(uint32_t n)
{
	uint32_t c = 8;

	while (c < n)
		c <<= 1;
	return c;
}

static void dofi_efd_signal(int fd)
{
	uint64_t one = 1;

	if (fd >= 0 && write(fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		dof_debug(DOFI_LOG, "eventfd write: %s", strerror(errno));
}

static void dofi_efd_drain(int fd)
{
	uint64_t v;

	if (fd >= 0 && read(fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		dof_debug(DOFI_LOG, "eventfd read: %s", strerror(errno));
}

/* ---- the ring (evd->lock held) ------------------------------------------- */

static dof_status_t dofi_ring_grow(dofi_evd_t *evd, uint32_t want)
{
	uint32_t cap = dofi_pow2(want), i, n;
	DAT_EVENT *ring;

	if (cap <= evd->cap)
		return DOF_OK;
	ring = malloc(cap * sizeof(*ring));
	if (ring == NULL)
		return DOF_ERR_NO_MEMORY;
	n = atomic_load(&evd->count);
	for (i = 0; i < n; i++)
		ring[i] = evd->ring[(evd->head + i) & (evd->cap - 1)];
	free(evd->ring);
	evd->ring = ring;
	evd->cap = cap;
	evd->head = 0;
	return DOF_OK;
}

static dof_status_t dofi_ring_push(dofi_evd_t *evd, const DAT_EVENT *ev)
{
	uint32_t n = atomic_load(&evd->count);

	if (n == evd->cap && dofi_ring_grow(evd, evd->cap * 2) != DOF_OK)
		return DOF_ERR_NO_MEMORY;
	evd->ring[(evd->head + n) & (evd->cap - 1)] = *ev;
	atomic_store(&evd->count, n + 1);
	return DOF_OK;
}

dof_status_t dofi_evd_push_locked(dofi_evd_t *evd, const DAT_EVENT *ev)
{
	dof_status_t st = dofi_ring_push(evd, ev);

	if (st != DOF_OK)
		dof_error(DOFI_LOG, "EVD %p: event %#x lost: out of memory",
		          (void *)evd, (unsigned)ev->event_number);
	return st;
}

static int dofi_ring_pop(dofi_evd_t *evd, DAT_EVENT *ev)
{
	uint32_t n = atomic_load(&evd->count);

	if (n == 0)
		return 0;
	*ev = evd->ring[evd->head];
	evd->head = (evd->head + 1) & (evd->cap - 1);
	atomic_store(&evd->count, n - 1);
	return 1;
}

/* Pop an event if the ring holds one: 1 when *ev is filled. The look at
 * the count is inline: an empty dequeue passes here. */
static __attribute__((noinline)) int dofi_ring_take_locked(dofi_evd_t *evd,
                                                            DAT_EVENT *ev)
{
	int got;

	dofi_lock_take(&evd->lock);
	got = dofi_ring_pop(evd, ev);
	dofi_lock_give(&evd->lock);
	return got;
}

static inline int dofi_ring_take(dofi_evd_t *evd, DAT_EVENT *ev)
{
	return atomic_load_explicit(&evd->count, memory_order_acquire) != 0 &&
	       dofi_ring_take_locked(evd, ev);
}

/*
 * The error entry a read of cq announced (-FI_EAVAIL), converted into *ev:
 * 1 when it gives the consumer an event, 0 when it was taken with none,
 * -1 when none could be read. evd->lock held.
 */
static int dofi_evd_read_err(dofi_evd_t *evd, struct fid_cq *cq, DAT_EVENT *ev)
{
	struct fi_cq_err_entry err;

	memset(&err, 0, sizeof(err));
	if (fi_cq_readerr(cq, &err, 0) != 1)
		return -1;
	return dofi_dto_complete_err(&err, ev, evd) == 0;
}

/* Move completions of one CQ into the ring until it holds `limit`. */
static int dofi_evd_drain_cq(dofi_evd_t *evd, struct fid_cq *cq, uint32_t limit)
{
	struct fi_cq_data_entry entries[DOFI_CQ_BATCH];
	uint32_t start = atomic_load(&evd->count);
	int shorts = 0;

	/*
	 * Whole batches even when the ring has less room: the ring grows
	 * (dofi_ring_grow) on the control path when completions the
	 * consumer did not size the EVD for come in; a backend's own
	 * completions (RTUs) take no room, so capping the read by it made a
	 * tiny EVD (OFED's dtestcm: a queue length of 1) read one entry a
	 * pass.
	 */
	while (atomic_load(&evd->count) < limit) {
		const size_t want = DOFI_CQ_BATCH;
		ssize_t n, i;
		DAT_EVENT ev;

		n = fi_cq_read(cq, entries, want);
		if (n == -FI_EAVAIL) {
			int got = dofi_evd_read_err(evd, cq, &ev);

			if (got < 0)
				break;
			if (got)
				(void)dofi_evd_push_locked(evd, &ev);
			shorts = 0;
			continue;
		}
		if (n <= 0)
			break;
		for (i = 0; i < n; i++)
			if (dofi_dto_complete(&entries[i], &ev, evd) == 0)
				(void)dofi_evd_push_locked(evd, &ev);
		/*
		 * A short read found the CQ empty as of its progress, or
		 * stopped at an error entry. Another would cost libfabric tcp
		 * a pass over every socket to find only what came since,
		 * which the next look finds; under a steady trickle (RTUs of
		 * a burst of connections) it went on one entry a pass, for
		 * seconds, while nobody read the EQ. A flush of everything
		 * (limit UINT32_MAX) reads once more, for an error entry
		 * behind the short read, and ends at a second short one.
		 */
		if ((size_t)n < want && (limit != UINT32_MAX || ++shorts == 2))
			break;
	}
	/* Counted on the ring: a completion may release held ones too. */
	return (int)(atomic_load(&evd->count) - start);
}

/*
 * Move completions from the EVD's CQs (the IA domain's, then those of
 * other PZs' domains) into the ring until it holds `limit` events or the
 * CQs are empty. Returns how many were moved.
 */
static int dofi_evd_drain_locked(dofi_evd_t *evd, uint32_t limit)
{
	dofi_evd_cq_t *x;
	int moved;

	if (evd->cq == NULL)
		return 0;
	moved = dofi_evd_drain_cq(evd, evd->cq, limit);
	for (x = dofi_evd_xcq_first(evd); x != NULL; x = dofi_evd_xcq_next(x))
		moved += dofi_evd_drain_cq(evd, x->cq, limit);
	return moved;
}

/* ---- creation ------------------------------------------------------------ */

/*
 * A CQ for an EVD in one of ia's domains, with the first wait object the
 * provider takes: a poll() list (where ia->traits->cq_pollfd, for the
 * EVD's first CQ in the domain), an fd, none (shm: timed polling). *fd:
 * its cq_fd.
 *
 * A further CQ of the domain (more than DOFI_CQ_SHARD EPs, dofi_evd_cq_get)
 * takes an fd: tcp's progress then asks epoll which of its sockets are
 * ready, where on a poll() list it looks at every one of them at each
 * read (10,000 connections: 8.6 ms a new connection took with one CQ, 0.9
 * with CQs of 1,024 on fds). The first keeps the list, for its first
 * DOFI_CQ_SHARD_LIST EPs: an fd costs tcp a wake-up callback per message,
 * 0.25 us on an 8-byte ping-pong here.
 */
static int dofi_evd_cq_open(dofi_ia_t *ia, struct fid_domain *domain,
                            DAT_COUNT qlen, int more, struct fid_cq **cq,
                            int *fd)
{
	static const enum fi_wait_obj waits[] = {FI_WAIT_POLLFD, FI_WAIT_FD,
	                                         FI_WAIT_NONE};
	struct fi_cq_attr attr = {
	        .size = qlen < DOFI_CQ_MIN_SIZE ? DOFI_CQ_MIN_SIZE
	                                        : (size_t)qlen,
	        .format = FI_CQ_FORMAT_DATA,
	};
	size_t i;
	int rc = -FI_ENOSYS;

	for (i = ia->traits->cq_pollfd && !more ? 0
	         : ia->traits->cq_nowait        ? 2
	                                        : 1;
	     i < sizeof(waits) / sizeof(waits[0]); i++) {
		attr.wait_obj = waits[i];
		rc = fi_cq_open(domain, &attr, cq, NULL);
		/* A fabric that refuses the larger size gets qlen. */
		if (rc == -FI_EINVAL && attr.size > (size_t)qlen) {
			attr.size = (size_t)qlen;
			rc = fi_cq_open(domain, &attr, cq, NULL);
		}
		if (rc != -FI_ENOSYS && rc != -FI_EINVAL)
			break;
	}
	if (rc != 0) {
		dof_warn(DOFI_LOG, "fi_cq_open(%d): %s", qlen,
		         fi_strerror(-rc));
		*cq = NULL;
		return rc;
	}
	*fd = -1;
	if (attr.wait_obj == FI_WAIT_POLLFD)
		*fd = DOFI_CQ_POLLFD;
	else if (attr.wait_obj == FI_WAIT_FD &&
	         fi_control(&(*cq)->fid, FI_GETWAIT, fd) != 0)
		*fd = -1;
	return 0;
}

int dofi_cq_fds(struct fid_cq *cq, int fd, struct pollfd *fds, int room)
{
	struct fi_wait_pollfd list;
	size_t i;

	if (room < 1 || fd == -1)
		return -1;
	if (fd >= 0) {
		fds[0].fd = fd;
		fds[0].events = POLLIN;
		fds[0].revents = 0;
		return 1;
	}
	list.change_index = 0;
	list.nfds = (size_t)room;
	list.fd = fds;
	/* -FI_ETOOSMALL when they do not fit: timed polling then. */
	if (fi_control(&cq->fid, FI_GETWAIT, &list) != 0 || list.nfds == 0)
		return -1;
	/*
	 * The first is libfabric's own signal that the list changed: its
	 * progress (what fi_cq_read runs) never clears it, so it would keep
	 * every poll() awake. Left out; a change (a socket added or
	 * removed, write interest) is seen when the list is read again:
	 * sleeps on a list are capped at DOFI_WAIT_SLICE_MS.
	 */
	for (i = 1; i < list.nfds; i++) {
		fds[i - 1] = fds[i];
		fds[i - 1].revents = 0;
	}
	return (int)list.nfds - 1;
}

/* How many EPs a CQ of an EVD takes: fewer on a poll() list. */
static uint32_t dofi_evd_cq_room(int fd)
{
	return fd == DOFI_CQ_POLLFD ? DOFI_CQ_SHARD_LIST : DOFI_CQ_SHARD;
}

struct fid_cq *dofi_evd_cq_get(dofi_evd_t *evd, dofi_dom_t *dom)
{
	dofi_evd_cq_t *x, **tail;
	int more;

	if (evd->cq == NULL)
		return NULL;
	if (dom->index == 0 && evd->cq_neps < dofi_evd_cq_room(evd->cq_fd)) {
		evd->cq_neps++;
		return evd->cq;
	}
	for (tail = &evd->xcq; (x = *tail) != NULL; tail = &x->next)
		if (x->dom == dom && x->neps < dofi_evd_cq_room(x->fd)) {
			x->neps++;
			return x->cq;
		}
	/* A CQ of this domain already: this one is one more of it. */
	more = dom->index == 0;
	for (x = evd->xcq; x != NULL && !more; x = x->next)
		more = x->dom == dom;
	x = calloc(1, sizeof(*x));
	if (x == NULL)
		return NULL;
	x->dom = dom;
	if (dofi_evd_cq_open(evd->obj.ia, dom->domain, evd->qlen, more, &x->cq,
	                     &x->fd) != 0) {
		free(x);
		return NULL;
	}
	x->neps = 1;
	/* Readers walk the list without a lock: publish it whole. */
	__atomic_store_n(tail, x, __ATOMIC_RELEASE);
	dof_debug(DOFI_LOG, "EVD %p: a CQ in domain %u", (void *)evd,
	          dom->index);
	evd->obj.ia->ctl->progress_watch(evd->obj.ia);
	return x->cq;
}

void dofi_evd_cq_put(dofi_evd_t *evd, struct fid_cq *cq)
{
	dofi_evd_cq_t *x;

	if (cq == NULL)
		return;
	if (cq == evd->cq) {
		if (evd->cq_neps > 0)
			evd->cq_neps--;
		return;
	}
	for (x = evd->xcq; x != NULL; x = x->next)
		if (x->cq == cq) {
			if (x->neps > 0)
				x->neps--;
			return;
		}
}

dofi_evd_t *dofi_evd_internal_create(dofi_ia_t *ia, DAT_COUNT qlen,
                                     DAT_EVD_FLAGS flags)
{
	dofi_evd_t *evd;

	evd = dofi_obj_alloc(ia, DOFI_OBJ_EVD, sizeof(*evd), ia->obj.provider);
	if (evd == NULL)
		return NULL;
	dofi_lock_init(&evd->lock);
	evd->flags = flags;
	evd->qlen = qlen;
	evd->cap = dofi_pow2((uint32_t)qlen);
	evd->cq_fd = -1;
	evd->enabled = 1;
	evd->waitable = 1;
	evd->ring = malloc(evd->cap * sizeof(DAT_EVENT));
	evd->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (evd->ring == NULL || evd->efd < 0)
		goto err;
	if (flags & DAT_EVD_DTO_FLAG) {
		if (dofi_evd_cq_open(ia, ia->dom0.domain, qlen, 0, &evd->cq,
		                     &evd->cq_fd) != 0)
			goto err;
		ia->ctl->progress_watch(ia);
	}
	atomic_store_explicit(&evd->ready, 1, memory_order_release);
	return evd;
err:
	if (evd->efd >= 0)
		close(evd->efd);
	free(evd->ring);
	pthread_mutex_lock(&ia->lock);
	dofi_obj_free(evd);
	pthread_mutex_unlock(&ia->lock);
	return NULL;
}

/* ia->lock held, or the IA is being torn down. */
void dofi_evd_destroy(dofi_evd_t *evd)
{
	while (evd->xcq != NULL) {
		dofi_evd_cq_t *x = evd->xcq;

		evd->xcq = x->next;
		fi_close(&x->cq->fid);
		free(x);
	}
	if (evd->cq != NULL)
		fi_close(&evd->cq->fid);
	if (evd->cno != NULL)
		evd->cno->nref--;
	close(evd->efd);
	free(evd->ring);
	dofi_obj_free(evd);
}

DAT_RETURN dofi_evd_create(DAT_IA_HANDLE h, DAT_COUNT qlen,
                           DAT_CNO_HANDLE cno_h, DAT_EVD_FLAGS flags,
                           DAT_EVD_HANDLE *out)
{
	const DAT_EVD_FLAGS all = DAT_EVD_SOFTWARE_FLAG | DAT_EVD_CR_FLAG |
	                          DAT_EVD_DTO_FLAG | DAT_EVD_CONNECTION_FLAG |
	                          DAT_EVD_RMR_BIND_FLAG | DAT_EVD_ASYNC_FLAG;
	dofi_ia_t *ia = dofi_obj_get(h, DOFI_OBJ_IA, __func__);
	dofi_cno_t *cno = NULL;
	dofi_evd_t *evd;

	if (ia == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	if (qlen <= 0 || qlen > ia->ia_attr.max_evd_qlen) {
		dof_warn(DOFI_LOG, "dat_evd_create: qlen %d outside 1..%d",
		         qlen, ia->ia_attr.max_evd_qlen);
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	}
	if (flags == 0 || (flags & ~all)) {
		dof_warn(DOFI_LOG, "dat_evd_create: bad flags %#x",
		         (unsigned)flags);
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG4);
	}
	if (out == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG5);
	if (cno_h != DAT_HANDLE_NULL) {
		cno = dofi_obj_get(cno_h, DOFI_OBJ_CNO, __func__);
		if (cno == NULL || cno->obj.ia != ia)
			return DAT_ERROR(DAT_INVALID_HANDLE,
			                 DAT_INVALID_HANDLE_CNO);
	}
	evd = dofi_evd_internal_create(ia, qlen, flags);
	if (evd == NULL)
		return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_TEVD);
	if (cno != NULL) {
		pthread_mutex_lock(&cno->lock);
		cno->nref++;
		pthread_mutex_unlock(&cno->lock);
		evd->cno = cno;
	}
	*out = (DAT_EVD_HANDLE)evd;
	return DAT_SUCCESS;
}

DAT_RETURN dofi_evd_query(DAT_EVD_HANDLE h, DAT_EVD_PARAM_MASK mask,
                          DAT_EVD_PARAM *p)
{
	dofi_evd_t *evd = dofi_obj_get(h, DOFI_OBJ_EVD, __func__);

	if (evd == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE,
		                 DAT_INVALID_HANDLE_EVD_REQUEST);
	if (p == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	(void)mask;
	p->ia_handle = dofi_ia_consumer_handle(evd->obj.ia);
	p->evd_qlen = evd->qlen;
	p->evd_state = (evd->enabled ? DAT_EVD_STATE_ENABLED
	                             : DAT_EVD_STATE_DISABLED) |
	               (evd->waitable ? DAT_EVD_STATE_WAITABLE
	                              : DAT_EVD_STATE_UNWAITABLE);
	p->cno_handle = (DAT_CNO_HANDLE)evd->cno;
	p->evd_flags = evd->flags;
	return DAT_SUCCESS;
}

DAT_RETURN dofi_evd_modify_cno(DAT_EVD_HANDLE h, DAT_CNO_HANDLE cno_h)
{
	dofi_evd_t *evd = dofi_obj_get(h, DOFI_OBJ_EVD, __func__);
	dofi_cno_t *cno = NULL;

	if (evd == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE,
		                 DAT_INVALID_HANDLE_EVD_REQUEST);
	if (cno_h != DAT_HANDLE_NULL) {
		cno = dofi_obj_get(cno_h, DOFI_OBJ_CNO, __func__);
		if (cno == NULL || cno->obj.ia != evd->obj.ia)
			return DAT_ERROR(DAT_INVALID_HANDLE,
			                 DAT_INVALID_HANDLE_CNO);
	}
	pthread_mutex_lock(&evd->obj.ia->lock);
	if (evd->cno != NULL)
		evd->cno->nref--;
	evd->cno = cno;
	if (cno != NULL)
		cno->nref++;
	pthread_mutex_unlock(&evd->obj.ia->lock);
	return DAT_SUCCESS;
}

enum { DOFI_EVD_ENABLED, DOFI_EVD_WAITABLE };

static DAT_RETURN dofi_evd_set(DAT_EVD_HANDLE h, int which, int value,
                               const char *func)
{
	dofi_evd_t *evd = dofi_obj_get(h, DOFI_OBJ_EVD, func);

	if (evd == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE,
		                 DAT_INVALID_HANDLE_EVD_REQUEST);
	dofi_lock_take(&evd->lock);
	if (which == DOFI_EVD_ENABLED)
		evd->enabled = value;
	else
		__atomic_store_n(&evd->waitable, value, __ATOMIC_RELAXED);
	dofi_lock_give(&evd->lock);
	/* Waiters re-check: unwaitable sends them home. */
	dofi_efd_signal(evd->efd);
	return DAT_SUCCESS;
}

DAT_RETURN dofi_evd_enable(DAT_EVD_HANDLE h)
{
	return dofi_evd_set(h, DOFI_EVD_ENABLED, 1, __func__);
}

DAT_RETURN dofi_evd_disable(DAT_EVD_HANDLE h)
{
	return dofi_evd_set(h, DOFI_EVD_ENABLED, 0, __func__);
}

DAT_RETURN dofi_evd_set_unwaitable(DAT_EVD_HANDLE h)
{
	return dofi_evd_set(h, DOFI_EVD_WAITABLE, 0, __func__);
}

DAT_RETURN dofi_evd_clear_unwaitable(DAT_EVD_HANDLE h)
{
	return dofi_evd_set(h, DOFI_EVD_WAITABLE, 1, __func__);
}

DAT_RETURN dofi_evd_resize(DAT_EVD_HANDLE h, DAT_COUNT qlen)
{
	dofi_evd_t *evd = dofi_obj_get(h, DOFI_OBJ_EVD, __func__);
	DAT_RETURN ret = DAT_SUCCESS;

	if (evd == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE,
		                 DAT_INVALID_HANDLE_EVD_REQUEST);
	if (qlen <= 0 || qlen > evd->obj.ia->ia_attr.max_evd_qlen)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	dofi_lock_take(&evd->lock);
	if (atomic_load(&evd->waiters))
		ret = DAT_ERROR(DAT_INVALID_STATE,
		                DAT_INVALID_STATE_EVD_WAITER);
	else if ((uint32_t)qlen < atomic_load(&evd->count))
		ret = DAT_ERROR(DAT_INVALID_STATE, 0);
	else if (dofi_ring_grow(evd, (uint32_t)qlen) != DOF_OK)
		ret = DAT_ERROR(DAT_INSUFFICIENT_RESOURCES,
		                DAT_RESOURCE_MEMORY);
	else
		evd->qlen = qlen;
	dofi_lock_give(&evd->lock);
	return ret;
}

DAT_RETURN dofi_evd_free(DAT_EVD_HANDLE h)
{
	dofi_evd_t *evd = dofi_obj_get(h, DOFI_OBJ_EVD, __func__);
	dofi_ia_t *ia;

	if (evd == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE,
		                 DAT_INVALID_HANDLE_EVD_REQUEST);
	ia = evd->obj.ia;
	pthread_mutex_lock(&ia->lock);
	/* Freed by another thread since the check: not twice (its eventfd
	 * number may already belong to someone else). */
	if (atomic_load(&evd->obj.magic) != DOFI_MAGIC_LIVE) {
		pthread_mutex_unlock(&ia->lock);
		return DAT_ERROR(DAT_INVALID_HANDLE,
		                 DAT_INVALID_HANDLE_EVD_REQUEST);
	}
	if (atomic_load(&evd->nref) > 0 || atomic_load(&evd->waiters) > 0 ||
	    (evd == ia->async_evd)) {
		pthread_mutex_unlock(&ia->lock);
		dof_warn(DOFI_LOG,
		         "dat_evd_free: the EVD is in use (%d "
		         "users, %d waiters%s)",
		         atomic_load(&evd->nref), atomic_load(&evd->waiters),
		         evd == ia->async_evd ? ", the IA's async EVD" : "");
		return DAT_ERROR(DAT_INVALID_STATE,
		                 DAT_INVALID_STATE_EVD_IN_USE);
	}
	dofi_evd_destroy(evd);
	pthread_mutex_unlock(&ia->lock);
	return DAT_SUCCESS;
}

/* ---- posting ------------------------------------------------------------- */

static void dofi_evd_notify(dofi_evd_t *evd)
{
	if (atomic_load(&evd->waiters) > 0)
		dofi_efd_signal(evd->efd);
	if (evd->cno != NULL && evd->enabled) {
		dofi_cno_t *cno = evd->cno;
		DAT_OS_WAIT_PROXY_AGENT agent;

		pthread_mutex_lock(&cno->lock);
		cno->triggered = evd;
		agent = cno->agent;
		pthread_mutex_unlock(&cno->lock);
		dofi_efd_signal(cno->efd);
		/* The consumer's proxy agent, when it gave one. */
		if (agent.proxy_agent_func != NULL)
			agent.proxy_agent_func(agent.instance_data,
			                       (DAT_EVD_HANDLE)evd);
	}
}

dof_status_t dofi_evd_post(dofi_evd_t *evd, const DAT_EVENT *event)
{
	dof_status_t status = DOF_OK;
	int overflow;

	if (dofi_unlikely(dofi_flag(&evd->counting) ||
	                  dofi_flag(&evd->obj.ia->counting)))
		dofi_ext_count_queued(evd, event);
	dofi_lock_take(&evd->lock);
	dofi_evd_drain_locked(evd, (uint32_t)evd->qlen);
	overflow = atomic_load(&evd->count) >= (uint32_t)evd->qlen;
	if (dofi_ring_push(evd, event) != DOF_OK)
		status = DOF_ERR_NO_MEMORY;
	if (overflow && !evd->overflowed)
		evd->overflowed = 1;
	else
		overflow = 0;
	dofi_lock_give(&evd->lock);
	if (status != DOF_OK) {
		dof_error(DOFI_LOG, "EVD %p: event %#x lost: out of memory",
		          (void *)evd, (unsigned)event->event_number);
		return status;
	}
	dofi_evd_notify(evd);
	if (overflow) {
		dof_warn(DOFI_LOG, "EVD %p overflowed its qlen %d", (void *)evd,
		         evd->qlen);
		if (evd != evd->obj.ia->async_evd)
			dofi_async_post(
			        evd->obj.ia, DAT_ASYNC_ERROR_EVD_OVERFLOW,
			        (DAT_HANDLE)evd, DAT_EVD_OVERFLOW_ERROR);
		return DOF_ERR_OVERFLOW;
	}
	return DOF_OK;
}

void dofi_async_post(dofi_ia_t *ia, DAT_EVENT_NUMBER num, DAT_HANDLE h,
                     DAT_COUNT reason)
{
	DAT_EVENT ev;

	if (ia->async_evd == NULL)
		return;
	memset(&ev, 0, sizeof(ev));
	ev.event_number = num;
	ev.evd_handle = (DAT_EVD_HANDLE)ia->async_evd;
	ev.event_data.asynch_error_event_data.dat_handle = h;
	ev.event_data.asynch_error_event_data.reason = reason;
	(void)dofi_evd_post(ia->async_evd, &ev);
}

DAT_RETURN dofi_evd_post_se(DAT_EVD_HANDLE h, const DAT_EVENT *event)
{
	dofi_evd_t *evd = dofi_obj_get(h, DOFI_OBJ_EVD, __func__);
	DAT_EVENT ev;
	int full;

	if (evd == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE,
		                 DAT_INVALID_HANDLE_EVD_REQUEST);
	if (!(evd->flags & DAT_EVD_SOFTWARE_FLAG)) {
		dof_warn(DOFI_LOG, "dat_evd_post_se: the EVD was not created "
		                   "with DAT_EVD_SOFTWARE_FLAG");
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG1);
	}
	if (event == NULL || event->event_number != DAT_SOFTWARE_EVENT) {
		dof_warn(DOFI_LOG, "dat_evd_post_se: only DAT_SOFTWARE_EVENT "
		                   "may be posted");
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	}
	ev = *event;
	ev.evd_handle = h;
	dofi_lock_take(&evd->lock);
	full = atomic_load(&evd->count) >= (uint32_t)evd->qlen;
	if (!full && dofi_ring_push(evd, &ev) != DOF_OK)
		full = 1;
	dofi_lock_give(&evd->lock);
	if (full)
		return DAT_ERROR(DAT_QUEUE_FULL, 0);
	dofi_evd_notify(evd);
	return DAT_SUCCESS;
}

/* ---- consuming ----------------------------------------------------------- */

/*
 * One entry of cq for a dequeue: 1 with an event in *event, 2 when an
 * entry was taken that gives none here (suppressed, a backend's own
 * message, or events put on the ring: held ones released, an RMR bind's
 * that follows), 0 when the CQ is empty or its error entry cannot be
 * read. evd->lock held: see dofi_evd_dequeue.
 */
static inline __attribute__((always_inline)) int
dofi_evd_take_cq(dofi_evd_t *evd, struct fid_cq *cq, DAT_EVENT *event)
{
	struct fi_cq_data_entry entry;
	ssize_t n;

	/*
	 * One entry per read, as the consumer asks: on tcp each read is
	 * also libfabric's progress. Reading several and keeping the rest
	 * in the ring halves the reads (8-byte message rate 1.5x) but
	 * starves the transmit pipeline: 64 KiB RDMA Writes went from about
	 * 10 to 33 us each.
	 */
	n = fi_cq_read(cq, &entry, 1);
	if (n == 1)
		return dofi_dto_complete(&entry, event, evd) == 0 ? 1 : 2;
	if (n == -FI_EAVAIL) {
		int got = dofi_evd_read_err(evd, cq, event);

		/* An error entry that cannot be read ends this look: asking
		 * again would only find it again. */
		return got < 0 ? 0 : got ? 1 : 2;
	}
	return 0;
}

/* One entry from the CQs in other domains, as dofi_evd_take_cq; 0 when
 * they are empty. evd->lock held. */
static int dofi_evd_take_xcq(dofi_evd_t *evd, DAT_EVENT *event)
{
	dofi_evd_cq_t *x;
	int r;

	for (x = dofi_evd_xcq_first(evd); x != NULL; x = dofi_evd_xcq_next(x))
		if ((r = dofi_evd_take_cq(evd, x->cq, event)) != 0)
			return r;
	return 0;
}

/*
 * With no progress thread, a dequeue that took an RTU lets the CM act on
 * it before handing out the next event (the requester's first message,
 * say): the EP is connected by the time the consumer sees that.
 */
static void dofi_evd_cm_due(dofi_evd_t *evd)
{
	dofi_ia_t *ia = evd->obj.ia;

	if (dofi_unlikely(
	            atomic_load_explicit(&ia->cm_due, memory_order_relaxed)) &&
	    atomic_exchange(&ia->cm_due, 0))
		ia->ctl->cm_progress(ia);
}

/* dat_evd_dequeue on a valid EVD. */
static inline __attribute__((always_inline)) DAT_RETURN
dofi_evd_take(dofi_evd_t *evd, DAT_EVENT *event)
{
	int r;

	/* Events belong to the waiter while there is one. */
	if (atomic_load_explicit(&evd->waiters, memory_order_relaxed))
		return DAT_ERROR(DAT_INVALID_STATE,
		                 DAT_INVALID_STATE_EVD_WAITER);
	/* Counted on every call, the ring path too. */
	dofi_evd_count_poll(evd);
	/*
	 * The ring, then the CQ, under evd->lock. Whoever else reads the
	 * CQ (the progress thread, an event poster, a flush: all through
	 * dofi_evd_drain_locked) holds it from the read until the entries
	 * are on the ring. Read without it, the CQ would hand this dequeue
	 * a completion later than those a drain has taken but not yet
	 * queued: receive #499 before #492.
	 */
	while (evd->cq != NULL) {
		dofi_lock_take(&evd->lock);
		/* The count first: a call only when the ring holds some. */
		if (atomic_load_explicit(&evd->count, memory_order_relaxed) &&
		    dofi_ring_pop(evd, event)) {
			dofi_lock_give(&evd->lock);
			return DAT_SUCCESS;
		}
		r = dofi_evd_take_cq(evd, evd->cq, event);
		/* EPs of other PZs: their domains' CQs. */
		if (r == 0 &&
		    __atomic_load_n(&evd->xcq, __ATOMIC_RELAXED) != NULL)
			r = dofi_evd_take_xcq(evd, event);
		if (r == 2 && dofi_ring_pop(evd, event))
			r = 1; /* what the entry put on the ring */
		dofi_lock_give(&evd->lock);
		if (r == 1)
			return DAT_SUCCESS;
		if (r == 0)
			break;
		/* Suppressed, or a backend's own message. */
		dofi_evd_cm_due(evd);
	}
	/* Nothing came: requests waiting for room may go now. */
	(void)dofi_defer_kick(evd->obj.ia);
	/* An event posted while we read the CQ. */
	if (dofi_ring_take(evd, event))
		return DAT_SUCCESS;
	/* Connection events: read the EQ now rather than wait for the
	 * progress thread to wake. */
	if (evd->flags & (DAT_EVD_CR_FLAG | DAT_EVD_CONNECTION_FLAG)) {
		dofi_ia_t *ia = evd->obj.ia;

		if (!atomic_load_explicit(&ia->cm_polled, memory_order_relaxed))
			atomic_store_explicit(&ia->cm_polled, 1,
			                      memory_order_relaxed);
		ia->ctl->cm_progress_until(ia, evd);
		if (dofi_ring_take(evd, event))
			return DAT_SUCCESS;
	} else if (dofi_progress_off(evd->obj.ia)) {
		/*
		 * No progress thread: every 64th empty poll reads the
		 * connection events and checks the timers too, so that a
		 * consumer polling only for data still gets connected (its
		 * connect, an RTU) and sees a peer's end.
		 */
		unsigned n = atomic_load_explicit(&evd->idle_polls,
		                                  memory_order_relaxed) +
		             1;

		atomic_store_explicit(&evd->idle_polls, n,
		                      memory_order_relaxed);
		if (n % 64 == 0) {
			/* The CM alone: this EVD's own read moved its data,
			 * and a walk over every EVD would cost as many reads
			 * as the IA has EVDs. */
			evd->obj.ia->ctl->cm_progress_events(evd->obj.ia);
			if (dofi_ring_take(evd, event))
				return DAT_SUCCESS;
		}
	}
	/*
	 * Without the error class bit: consumers (OFED's dtest -p among
	 * them) compare with == DAT_QUEUE_EMPTY, others use DAT_GET_TYPE.
	 */
	return DAT_QUEUE_EMPTY;
}

/* A dequeue dofi_evd_dequeue does not take: a bad argument, or a
 * counting EVD (dofi_ext_dto.c). */
static __attribute__((noinline)) DAT_RETURN
dofi_evd_dequeue_slow(DAT_EVD_HANDLE h, DAT_EVENT *event)
{
	dofi_evd_t *evd = dofi_obj_fast(h, DOFI_OBJ_EVD);
	DAT_RETURN ret;

	if (evd == NULL) {
		(void)dofi_obj_get(h, DOFI_OBJ_EVD, "dofi_evd_dequeue");
		return DAT_ERROR(DAT_INVALID_HANDLE,
		                 DAT_INVALID_HANDLE_EVD_REQUEST);
	}
	if (event == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	ret = dofi_evd_take(evd, event);
	if (dofi_flag(&evd->counting))
		dofi_ext_count_take(evd, ret, event, 0, 0);
	return ret;
}

DAT_RETURN dofi_evd_dequeue(DAT_EVD_HANDLE h, DAT_EVENT *event)
{
	dofi_evd_t *evd = dofi_obj_fast(h, DOFI_OBJ_EVD);

	if (dofi_unlikely(evd == NULL || event == NULL ||
	                  dofi_flag(&evd->counting)))
		return dofi_evd_dequeue_slow(h, event);
	return dofi_evd_take(evd, event);
}

/* Milliseconds left until deadline_ns (0 = infinite: -1). */
static int dofi_ms_left(uint64_t deadline_ns)
{
	uint64_t now;

	if (deadline_ns == 0)
		return -1;
	now = dofi_now_ns();
	if (now >= deadline_ns)
		return 0;
	return (int)((deadline_ns - now + 999999) / 1000000);
}

/*
 * Put a CQ's fds in a poll set when fi_trywait says nothing sits unread.
 * DOFI_ARM_NAP when the caller should nap briefly instead: the CQ has no
 * fd, or the set is full; DOFI_ARM_BUSY when fi_trywait refuses (entries
 * sit unread, or progress is owed): read the CQ again at once;
 * DOFI_ARM_LIST when its fds came from a list (FI_WAIT_POLLFD), which the
 * sleep must not outlast by much; 0 for an fd. Outcomes combine with |.
 */
#define DOFI_ARM_NAP  1
#define DOFI_ARM_LIST 2
#define DOFI_ARM_BUSY 4

/*
 * How many refused fi_trywaits in a row one wait reads again at once, as
 * libfabric's own fi_cq_sread does, before it naps instead: a fabric
 * whose trywait keeps refusing must not spin a waiter.
 */
#define DOFI_ARM_SPINS 64

static int dofi_cq_arm(dofi_ia_t *ia, struct fid_cq *cq, int fd,
                       struct pollfd *fds, int *nfds, int max)
{
	struct fid *f = &cq->fid;
	int n;

	if (fd == -1 || *nfds >= max)
		return DOFI_ARM_NAP;
	if (fi_trywait(ia->fabric, &f, 1) != 0)
		return DOFI_ARM_BUSY;
	n = dofi_cq_fds(cq, fd, &fds[*nfds], max - *nfds);
	if (n < 0)
		return DOFI_ARM_NAP;
	*nfds += n;
	return fd == DOFI_CQ_POLLFD ? DOFI_ARM_LIST : 0;
}

/*
 * How long after a wait returned an event its waits stay hot: they read
 * a queue without an fd traits->nap_reads times a nap (dofi.h).
 */
#define DOFI_WAIT_BURST_MS 1000

/* Whether waits note when they last returned an event (dofi_wait_heat). */
static inline int dofi_wait_notes(const dofi_ia_t *ia)
{
	return ia->wait_hot_ns != 0 || ia->traits->nap_reads > 1;
}

/*
 * A nap over CQs without an fd (arm has DOFI_ARM_NAP) of a wait whose EVD
 * or CNO last returned an event at last (0: never): *reads, the reads
 * back to back one nap makes (traits->nap_reads within
 * DOFI_WAIT_BURST_MS of last, else 1), and *hot, whether the nap is
 * short (within ia->wait_hot_ns, DAPL_OFI_WAIT_HOT). A CNO's last may be
 * newer than the clock read here (another waiter's): cold.
 */
static void dofi_wait_heat(const dofi_ia_t *ia, uint64_t last, int arm,
                           int *reads, int *hot)
{
	uint64_t now, since;

	*reads = 1;
	*hot = 0;
	if (!(arm & DOFI_ARM_NAP) || last == 0)
		return;
	now = dofi_now_ns();
	if (now < last)
		return;
	since = now - last;
	if (ia->traits->nap_reads > 1 &&
	    since < DOFI_WAIT_BURST_MS * 1000000ull)
		*reads = ia->traits->nap_reads;
	*hot = ia->wait_hot_ns != 0 && since < ia->wait_hot_ns;
}

/*
 * The sleep in ms a dofi_cq_arm outcome allows (ms < 0: unbounded).
 * *busy: one wait's refused trywaits in a row (DOFI_ARM_SPINS), or its
 * reads over CQs without an fd; reads: how many of those make one nap
 * (dofi_wait_heat).
 */
static int dofi_arm_slice(int arm, int ms, int *busy, int reads)
{
	if (arm & DOFI_ARM_NAP) {
		/* A hot wait reads again at once, reads - 1 times a nap. */
		if (reads > 1 && ++*busy % reads != 0)
			return 0;
		return 1; /* no fd: short naps (dofi_wait_poll) */
	}
	if (arm & DOFI_ARM_BUSY)
		return (*busy)++ < DOFI_ARM_SPINS ? 0 : 1;
	*busy = 0;
	if ((arm & DOFI_ARM_LIST) && (ms < 0 || ms > DOFI_WAIT_SLICE_MS))
		return DOFI_WAIT_SLICE_MS; /* the list may change */
	return ms;
}

/*
 * A nap of a wait that returned an event not long ago (DAPL_OFI_WAIT_HOT,
 * ia->wait_hot_ns): a large message on rxm moves a segment or two at
 * each read of its queue, so both ends' naps set its pace.
 */
#define DOFI_WAIT_HOT_NAP_US 20

/*
 * poll() for up to ms; a nap over CQs without an fd (arm has
 * DOFI_ARM_NAP) lasts ia->traits->nap_us where the fabric sets it, and
 * DOFI_WAIT_HOT_NAP_US when hot.
 */
static int dofi_wait_poll(dofi_ia_t *ia, struct pollfd *fds, int nfds, int ms,
                          int arm, int hot)
{
	long us = hot ? DOFI_WAIT_HOT_NAP_US : ia->traits->nap_us;

	if ((arm & DOFI_ARM_NAP) && us > 0 && ms > 0 && us < ms * 1000L) {
		struct timespec ts = {.tv_sec = 0, .tv_nsec = us * 1000L};

		return ppoll(fds, (nfds_t)nfds, &ts, NULL);
	}
	return poll(fds, (nfds_t)nfds, ms);
}

#define DOFI_BLOCK_FDS 16

/* Block until something may have arrived, or ms pass. */
static void dofi_evd_block(dofi_evd_t *evd, int ms, int *busy)
{
	dofi_ia_t *ia = evd->obj.ia;
	struct pollfd fds[DOFI_BLOCK_FDS];
	int nfds = 1, ready = 0, arm = 0, reads = 1, hot = 0;
	int slice = ms;

	fds[0].fd = evd->efd;
	fds[0].events = POLLIN;
	if (evd->flags & (DAT_EVD_CR_FLAG | DAT_EVD_CONNECTION_FLAG)) {
		/* Armed, or it stays readable (see dofi_cm_wait_fd). */
		int fd = ia->ctl->cm_wait_fd(ia, &ready);

		if (fd >= 0) {
			fds[nfds].fd = fd;
			fds[nfds++].events = POLLIN;
		}
	}
	if (evd->cq != NULL) {
		dofi_evd_cq_t *x;

		arm = dofi_cq_arm(ia, evd->cq, evd->cq_fd, fds, &nfds,
		                  DOFI_BLOCK_FDS);
		for (x = dofi_evd_xcq_first(evd); x != NULL;
		     x = dofi_evd_xcq_next(x))
			arm |= dofi_cq_arm(ia, x->cq, x->fd, fds, &nfds,
			                   DOFI_BLOCK_FDS);
		dofi_wait_heat(ia, evd->wait_last_ns, arm, &reads, &hot);
		slice = dofi_arm_slice(arm, slice, busy, reads);
	}
	/* No thread: come back for the connection events and timers. */
	if (dofi_progress_off(ia) && (slice < 0 || slice > DOFI_WAIT_SLICE_MS))
		slice = DOFI_WAIT_SLICE_MS;
	if (ms >= 0 && (slice < 0 || ms < slice))
		slice = ms;
	if (ready)
		slice = 0; /* connection events to read first */
	if (slice != 0 && dofi_wait_poll(ia, fds, nfds, slice, arm, hot) > 0 &&
	    (fds[0].revents & POLLIN))
		dofi_efd_drain(evd->efd);
}

DAT_RETURN dofi_evd_wait(DAT_EVD_HANDLE h, DAT_TIMEOUT timeout,
                         DAT_COUNT threshold, DAT_EVENT *event,
                         DAT_COUNT *nmore)
{
	dofi_evd_t *evd = dofi_obj_get(h, DOFI_OBJ_EVD, __func__);
	uint64_t deadline = 0;
	DAT_RETURN ret;
	int blocked = 0, busy = 0;

	if (evd == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE,
		                 DAT_INVALID_HANDLE_EVD_REQUEST);
	if (threshold <= 0 || threshold > evd->qlen) {
		dof_warn(DOFI_LOG, "dat_evd_wait: threshold %d outside 1..%d",
		         threshold, evd->qlen);
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	}
	if (event == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG4);
	if (nmore == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG5);
	if (!__atomic_load_n(&evd->waitable, __ATOMIC_RELAXED))
		return DAT_ERROR(DAT_INVALID_STATE,
		                 DAT_INVALID_STATE_EVD_UNWAITABLE);
	{
		int expected = 0;

		if (!atomic_compare_exchange_strong(&evd->waiters, &expected,
		                                    1))
			return DAT_ERROR(DAT_INVALID_STATE,
			                 DAT_INVALID_STATE_EVD_WAITER);
	}
	if (timeout != DAT_TIMEOUT_INFINITE)
		deadline = dofi_now_ns() + (uint64_t)timeout * 1000 + 1;

	for (;;) {
		uint32_t count;
		int ms, waitable;

		dofi_lock_take(&evd->lock);
		dofi_evd_drain_locked(evd, (uint32_t)evd->qlen);
		count = atomic_load(&evd->count);
		if (count >= (uint32_t)threshold) {
			dofi_ring_pop(evd, event);
			if (nmore)
				*nmore = (DAT_COUNT)(count - 1);
			dofi_lock_give(&evd->lock);
			if (dofi_wait_notes(evd->obj.ia))
				evd->wait_last_ns = dofi_now_ns();
			ret = DAT_SUCCESS;
			break;
		}
		/* Under the lock dofi_evd_set writes it with. */
		waitable = evd->waitable;
		dofi_lock_give(&evd->lock);
		(void)dofi_defer_kick(evd->obj.ia);
		if (!waitable) {
			/* dat_evd_set_unwaitable sends waiters home. */
			ret = DAT_ERROR(DAT_ABORT, 0);
			break;
		}
		/* Connection events: the CM knows who looks (an RTU held
		 * for a look, dofi_cm_msg.c). */
		if (evd->flags & (DAT_EVD_CR_FLAG | DAT_EVD_CONNECTION_FLAG))
			evd->obj.ia->ctl->cm_progress_until(evd->obj.ia, evd);
		else if (dofi_progress_off(evd->obj.ia))
			evd->obj.ia->ctl->cm_progress(evd->obj.ia);
		ms = dofi_ms_left(deadline);
		if (ms == 0) {
			if (nmore)
				*nmore = (DAT_COUNT)count;
			ret = DAT_TIMEOUT_EXPIRED;
			break;
		}
		dofi_evd_block(evd, ms, &busy);
		blocked = 1;
	}
	atomic_store(&evd->waiters, 0);
	if (dofi_unlikely(dofi_flag(&evd->counting)))
		dofi_ext_count_take(evd, ret, event, 1, blocked);
	return ret;
}

void dofi_evd_flush_cq(dofi_evd_t *evd, int all)
{
	int moved;

	if (evd->cq == NULL)
		return;
	dofi_lock_take(&evd->lock);
	moved = dofi_evd_drain_locked(evd,
	                              all ? UINT32_MAX : (uint32_t)evd->qlen);
	dofi_lock_give(&evd->lock);
	if (moved > 0)
		dofi_evd_notify(evd);
	/* Room the read made: requests waiting for it go (dofi_defer.c). */
	(void)dofi_defer_kick(evd->obj.ia);
}

void dofi_evd_flush_one(dofi_evd_t *evd, struct fid_cq *cq, int all)
{
	int moved;

	if (cq == NULL)
		return;
	dofi_lock_take(&evd->lock);
	moved = dofi_evd_drain_cq(evd, cq,
	                          all ? UINT32_MAX : (uint32_t)evd->qlen);
	dofi_lock_give(&evd->lock);
	if (moved > 0)
		dofi_evd_notify(evd);
	(void)dofi_defer_kick(evd->obj.ia);
}

uint64_t *dofi_evd_cq_marks(dofi_evd_t *evd, struct fid_cq *cq)
{
	dofi_evd_cq_t *x;

	if (cq == evd->cq)
		return evd->cm_marks;
	for (x = evd->xcq; x != NULL; x = x->next)
		if (x->cq == cq)
			return x->cm_marks;
	return NULL;
}

void dofi_evd_progress(dofi_evd_t *evd)
{
	dofi_evd_cq_t *x;

	if (evd->cq == NULL)
		return;
	(void)fi_cq_read(evd->cq, NULL, 0);
	for (x = dofi_evd_xcq_first(evd); x != NULL; x = dofi_evd_xcq_next(x))
		(void)fi_cq_read(x->cq, NULL, 0);
}

/* ---- CNO ----------------------------------------------------------------- */

DAT_RETURN dofi_cno_create(DAT_IA_HANDLE h, DAT_OS_WAIT_PROXY_AGENT agent,
                           DAT_CNO_HANDLE *out)
{
	dofi_ia_t *ia = dofi_obj_get(h, DOFI_OBJ_IA, __func__);
	dofi_cno_t *cno;

	if (ia == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	if (out == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	cno = dofi_obj_alloc(ia, DOFI_OBJ_CNO, sizeof(*cno), ia->obj.provider);
	if (cno == NULL)
		return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES,
		                 DAT_RESOURCE_MEMORY);
	cno->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (cno->efd < 0) {
		pthread_mutex_lock(&ia->lock);
		dofi_obj_free(cno);
		pthread_mutex_unlock(&ia->lock);
		return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES, 0);
	}
	pthread_mutex_init(&cno->lock, NULL);
	cno->agent = agent;
	/* A CNO notifies (its fd, its agent) with no call of the consumer's. */
	ia->ctl->progress_need(ia, "a CNO");
	*out = (DAT_CNO_HANDLE)cno;
	return DAT_SUCCESS;
}

DAT_RETURN dofi_cno_modify_agent(DAT_CNO_HANDLE h,
                                 DAT_OS_WAIT_PROXY_AGENT agent)
{
	dofi_cno_t *cno = dofi_obj_get(h, DOFI_OBJ_CNO, __func__);

	if (cno == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CNO);
	pthread_mutex_lock(&cno->lock);
	cno->agent = agent;
	pthread_mutex_unlock(&cno->lock);
	return DAT_SUCCESS;
}

DAT_RETURN dofi_cno_query(DAT_CNO_HANDLE h, DAT_CNO_PARAM_MASK mask,
                          DAT_CNO_PARAM *p)
{
	dofi_cno_t *cno = dofi_obj_get(h, DOFI_OBJ_CNO, __func__);

	if (cno == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CNO);
	if (p == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	(void)mask;
	p->ia_handle = dofi_ia_consumer_handle(cno->obj.ia);
	if (cno->fd_proxy) {
		p->proxy_type = DAT_PROXY_TYPE_FD;
		p->proxy.fd = cno->efd;
	} else if (cno->agent.proxy_agent_func != NULL) {
		p->proxy_type = DAT_PROXY_TYPE_AGENT;
		p->proxy.agent = cno->agent;
	} else {
		p->proxy_type = DAT_PROXY_TYPE_NONE;
		p->proxy.none = NULL;
	}
	return DAT_SUCCESS;
}

DAT_RETURN dofi_cno_free(DAT_CNO_HANDLE h)
{
	dofi_cno_t *cno = dofi_obj_get(h, DOFI_OBJ_CNO, __func__);
	dofi_ia_t *ia;

	if (cno == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CNO);
	ia = cno->obj.ia;
	pthread_mutex_lock(&ia->lock);
	if (atomic_load(&cno->obj.magic) != DOFI_MAGIC_LIVE) {
		pthread_mutex_unlock(&ia->lock);
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CNO);
	}
	if (cno->nref > 0 || cno->waiters > 0) {
		pthread_mutex_unlock(&ia->lock);
		return DAT_ERROR(DAT_INVALID_STATE,
		                 DAT_INVALID_STATE_CNO_IN_USE);
	}
	close(cno->efd);
	pthread_mutex_destroy(&cno->lock);
	dofi_obj_free(cno);
	pthread_mutex_unlock(&ia->lock);
	return DAT_SUCCESS;
}

/* An enabled EVD of this CNO with an event waiting, or NULL. */
static dofi_evd_t *dofi_cno_ready(dofi_cno_t *cno, struct pollfd *fds,
                                  int *nfds, int max, int *retry)
{
	dofi_ia_t *ia = cno->obj.ia;
	dofi_evd_t *ready = NULL;
	dofi_evd_cq_t *x;
	dofi_list_t *e;

	*nfds = 1;
	*retry = 0;
	pthread_mutex_lock(&ia->lock);
	for (e = ia->objs[DOFI_OBJ_EVD].next; e != &ia->objs[DOFI_OBJ_EVD];
	     e = e->next) {
		dofi_evd_t *evd = dofi_container_of(e, dofi_evd_t, obj.link);

		if (!dofi_evd_ready(evd) || evd->cno != cno || !evd->enabled)
			continue;
		dofi_lock_take(&evd->lock);
		dofi_evd_drain_locked(evd, (uint32_t)evd->qlen);
		/* Level-triggered, as OFED's: any EVD holding an event. */
		if (atomic_load(&evd->count) > 0)
			ready = evd;
		dofi_lock_give(&evd->lock);
		if (ready != NULL)
			break;
		/* Entries sit unread: read again. CQs with no fd: naps. */
		if (evd->cq != NULL)
			*retry |= dofi_cq_arm(ia, evd->cq, evd->cq_fd, fds,
			                      nfds, max);
		for (x = evd->cq ? dofi_evd_xcq_first(evd) : NULL; x != NULL;
		     x = dofi_evd_xcq_next(x))
			*retry |= dofi_cq_arm(ia, x->cq, x->fd, fds, nfds, max);
	}
	pthread_mutex_unlock(&ia->lock);
	return ready;
}

/*
 * A CNO whose wake-up is a file descriptor the consumer polls (or hands to
 * its own event loop): readable once an enabled EVD of the CNO holds an
 * event; dat_cno_trigger or dat_cno_wait then names the EVD. The fd stays
 * the CNO's: dat_cno_free closes it.
 */
DAT_RETURN dofi_cno_fd_create(DAT_IA_HANDLE h, DAT_FD *fd, DAT_CNO_HANDLE *out)
{
	DAT_OS_WAIT_PROXY_AGENT none = {NULL, NULL};
	DAT_CNO_HANDLE ch;
	DAT_RETURN ret;

	if (fd == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	if (out == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	ret = dofi_cno_create(h, none, &ch);
	if (ret != DAT_SUCCESS)
		return ret;
	((dofi_cno_t *)ch)->fd_proxy = 1;
	*fd = ((dofi_cno_t *)ch)->efd;
	*out = ch;
	return DAT_SUCCESS;
}

/* Which EVD triggered the CNO, without waiting: DAT_QUEUE_EMPTY if none. */
DAT_RETURN dofi_cno_trigger(DAT_CNO_HANDLE h, DAT_EVD_HANDLE *evd_out)
{
	dofi_cno_t *cno = dofi_obj_get(h, DOFI_OBJ_CNO, __func__);
	struct pollfd fds[16];
	dofi_evd_t *ready;
	int nfds, retry;

	if (cno == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CNO);
	if (evd_out == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	/*
	 * Level-triggered, as dat_cno_wait: the fd is cleared, and set again
	 * while an EVD still holds an event, so a consumer that polls it is
	 * woken until it has taken them all (then this says empty).
	 */
	dofi_efd_drain(cno->efd);
	fds[0].fd = cno->efd;
	fds[0].events = POLLIN;
	ready = dofi_cno_ready(cno, fds, &nfds, 16, &retry);
	if (ready == NULL)
		return DAT_QUEUE_EMPTY;
	dofi_efd_signal(cno->efd);
	*evd_out = (DAT_EVD_HANDLE)ready;
	return DAT_SUCCESS;
}

DAT_RETURN dofi_cno_wait(DAT_CNO_HANDLE h, DAT_TIMEOUT timeout,
                         DAT_EVD_HANDLE *evd_out)
{
	dofi_cno_t *cno = dofi_obj_get(h, DOFI_OBJ_CNO, __func__);
	uint64_t deadline = 0;
	DAT_RETURN ret;
	dofi_ia_t *ia;
	int busy = 0;

	if (cno == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CNO);
	ia = cno->obj.ia;
	if (evd_out == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	if (timeout != DAT_TIMEOUT_INFINITE)
		deadline = dofi_now_ns() + (uint64_t)timeout * 1000 + 1;
	pthread_mutex_lock(&cno->lock);
	cno->waiters++;
	pthread_mutex_unlock(&cno->lock);
	for (;;) {
		struct pollfd fds[16];
		dofi_evd_t *ready;
		int nfds, ms, slice, retry, reads, hot;

		fds[0].fd = cno->efd;
		fds[0].events = POLLIN;
		ready = dofi_cno_ready(cno, fds, &nfds, 16, &retry);
		if (ready != NULL) {
			*evd_out = (DAT_EVD_HANDLE)ready;
			if (dofi_wait_notes(ia))
				__atomic_store_n(&cno->wait_last_ns,
				                 dofi_now_ns(),
				                 __ATOMIC_RELAXED);
			ret = DAT_SUCCESS;
			break;
		}
		if (dofi_progress_off(cno->obj.ia))
			cno->obj.ia->ctl->cm_progress(cno->obj.ia);
		ms = dofi_ms_left(deadline);
		if (ms == 0) {
			ret = DAT_TIMEOUT_EXPIRED;
			break;
		}
		dofi_wait_heat(
		        ia,
		        __atomic_load_n(&cno->wait_last_ns, __ATOMIC_RELAXED),
		        retry, &reads, &hot);
		slice = dofi_arm_slice(retry, DOFI_WAIT_SLICE_MS * 10, &busy,
		                       reads);
		if (ms >= 0 && ms < slice)
			slice = ms;
		if (slice != 0 &&
		    dofi_wait_poll(ia, fds, nfds, slice, retry, hot) > 0 &&
		    (fds[0].revents & POLLIN))
			dofi_efd_drain(cno->efd);
	}
	pthread_mutex_lock(&cno->lock);
	cno->waiters--;
	cno->triggered = NULL;
	pthread_mutex_unlock(&cno->lock);
	return ret;
}
