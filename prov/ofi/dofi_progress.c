/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * The per-IA progress thread. It reads the EQ (connection events) and,
 * on fabrics that progress data only when called (tcp, shm, rxm), drives
 * each CQ the consumer is not reading itself: it moves the completions into
 * the EVD's ring, where the consumer finds them in order, and retires the
 * suppressed ones, so an RDMA write lands in a target that only polls
 * memory, a peer's disconnect is seen, and unread completions never keep
 * libfabric from progressing or the CQ fd from settling.
 *
 * It sleeps in poll() on the EQ and CQ fds (an EVD has one CQ per domain
 * its EPs' PZs live in) after fi_trywait, and naps
 * briefly when fi_trywait refuses (the ring is full). A CQ the consumer
 * polls is left alone for a nap: the consumer drives it
 * (dofi_progress_look).
 * hwloc binds the thread near the NIC when the domain names one.
 *
 * DAPL_OFI_PROGRESS=auto (default) | thread | none. auto starts the
 * thread at IA open where libfabric progresses data itself (sockets: the
 * thread reads the EQ and keeps the timers), and elsewhere only once the
 * consumer needs progress with no call of its own (dofi_progress_need);
 * until then every wait and poll drives the fabric, as with none.
 */
#include "config.h"

#define DOFI_LOG_COMP "progress"

#include <errno.h>
#include <hwloc.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "dofi.h"

#define DOFI_PROGRESS_MAX_FDS   64
#define DOFI_PROGRESS_IDLE_MS   100
#define DOFI_PROGRESS_TIMER_MS  10
#define DOFI_PROGRESS_BUSY_US   50
#define DOFI_PROGRESS_POLLED_US 2000
/*
 * While requests wait for room (dofi_defer.c), the thread's nap before it
 * tries them again: 1 ms, doubled each time a try posts none, up to 8 ms.
 * Room comes as the peer takes messages, which may be never; a consumer's
 * own reads and posts try them too. On tcp;ofi_rxm, with eight 4 MiB
 * Sends waiting 10 s for a peer that posts no receive, a process with
 * both ends used 4.5-4.7% of a core on naps of 1 ms, 2.4-3.1% with the
 * doubling (0.9% with none waiting).
 */
#define DOFI_PROGRESS_DEFER_US     1000
#define DOFI_PROGRESS_DEFER_MAX_US 8000
/* Beside a consumer that stops polling now and then (dofi_progress_look):
 * the first nap, how long such a stop is remembered, and how few polls
 * through a nap count as one. */
#define DOFI_PROGRESS_NAP0_US    50
#define DOFI_PROGRESS_GONE_MS    100
#define DOFI_PROGRESS_GONE_POLLS 1

/*
 * The device a domain is on, as /sys names it, into dev: a network
 * interface (tcp, tcp;ofi_rxm, udp;ofi_rxd: the interface's own name) or
 * an RDMA device (verbs: mlx5_0; efa's domains are the device's name
 * with -rdm or -dgrm after it, verbs' datagram ones with -dgram). 0 where
 * there is none (shm): loading hwloc's whole topology to find nothing
 * took some 10-50 ms of the consumer's core just as the thread started,
 * and cut shm's first 10 ms of 64 KiB RDMA Writes to a third of raw's.
 */
int dofi_progress_dev(const char *name, char *dev, size_t len)
{
	static const char *const dirs[] = {"/sys/class/net/",
	                                   "/sys/class/infiniband/"};
	char path[64 + 256];
	char *dash;
	size_t i;
	int pass;

	if (name == NULL || strlen(name) >= len || strlen(name) > 255)
		return 0;
	strcpy(dev, name);
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
			snprintf(path, sizeof(path), "%s%s", dirs[i], dev);
			if (dev[0] != '\0' && strchr(dev, '/') == NULL &&
			    access(path, F_OK) == 0)
				return 1;
		}
		dash = strrchr(dev, '-');
		if (dash == NULL)
			break;
		*dash = '\0';
	}
	return 0;
}

/*
 * Bind the calling thread to the cores near the IA's network device, within
 * the cores it may already use: a consumer that pinned its process (taskset,
 * an MPI launcher) keeps the thread on its cores. No binding when the
 * domain is on no device (dofi_progress_dev), the device is not in the
 * topology (loopback, a virtual NIC) or gives nothing narrower.
 */
static void dofi_progress_bind(dofi_ia_t *ia)
{
	char dev[256];
	hwloc_topology_t topo;
	hwloc_obj_t os = NULL, anc;
	hwloc_bitmap_t cur, near;

	if (!dofi_progress_dev(ia->info->domain_attr->name, dev,
	                       sizeof(dev)) ||
	    strcmp(dev, "lo") == 0 || hwloc_topology_init(&topo) != 0)
		return;
	hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_ALL);
	if (hwloc_topology_load(topo) != 0)
		goto out;
	while ((os = hwloc_get_next_osdev(topo, os)) != NULL)
		if (os->name != NULL && strcmp(os->name, dev) == 0)
			break;
	if (os == NULL) {
		dof_debug(DOFI_LOG,
		          "progress: no device '%s' in the topology; "
		          "thread not bound",
		          dev);
		goto out;
	}
	anc = hwloc_get_non_io_ancestor_obj(topo, os);
	if (anc == NULL || anc->cpuset == NULL)
		goto out;
	cur = hwloc_bitmap_alloc();
	near = hwloc_bitmap_alloc();
	if (cur != NULL && near != NULL &&
	    hwloc_get_cpubind(topo, cur, HWLOC_CPUBIND_THREAD) == 0) {
		hwloc_bitmap_and(near, cur, anc->cpuset);
		if (!hwloc_bitmap_iszero(near) &&
		    !hwloc_bitmap_isequal(near, cur) &&
		    hwloc_set_cpubind(topo, near, HWLOC_CPUBIND_THREAD) == 0)
			dof_info(DOFI_LOG, "progress: thread bound near %s",
			         dev);
	}
	hwloc_bitmap_free(near);
	hwloc_bitmap_free(cur);
out:
	hwloc_topology_destroy(topo);
}

_Thread_local int dofi_progress_on_thread;

enum { DOFI_LOOK_DRIVE, DOFI_LOOK_NAP };

/*
 * How the thread treats an EVD's CQ at this look:
 * - DRIVE: the consumer has not polled it since the last look: read it
 *   into the ring and sleep on its fds.
 * - NAP: the consumer polled it, and so drives it: keep off for
 *   pt.nap_us. Waking on each message instead would compete with the
 *   consumer for its core (a send ping-pong went from 3.5 to 6 us where
 *   they share one), and so does waking often: with 2 ms naps, 26 of 40
 *   loopback runs of 64 KiB RDMA Writes fell into TCP's slow state,
 *   with 10 ms naps 10 of 40.
 * A consumer that stopped polling since it last did (it reaped a
 *   completion and went to poll memory for the peer's RDMA Write, which
 *   none of its calls land: OFED's dtest -W) may do so again: naps
 *   beside it start short and double while it goes on polling. Others
 *   nap DOFI_PROGRESS_POLLED_US from the start. Where the fabric moves
 *   data by itself, always that. ia->lock held.
 */
static int dofi_progress_look(dofi_ia_t *ia, dofi_evd_t *evd, uint64_t now)
{
	unsigned p = atomic_load_explicit(&evd->polls, memory_order_relaxed);
	unsigned n = p - evd->pt.seen;
	uint64_t since = now - evd->pt.look_ns;

	evd->pt.seen = p;
	evd->pt.look_ns = now;
	/*
	 * Gone: no poll since the last look, or one through a whole nap: a
	 * consumer that dequeues once an iteration and polls memory
	 * otherwise, whose iterations a nap would hold up one each. (Not a
	 * rate: one whose dequeues each move megabytes polls seldom, but
	 * without pause; counting two as gone cost 1 MiB writes 5%.)
	 */
	if (n == 0 || (!ia->traits->auto_progress && evd->pt.nap_us != 0 &&
	               n <= DOFI_PROGRESS_GONE_POLLS &&
	               since * 2 >= (uint64_t)evd->pt.nap_us * 1000)) {
		if (evd->pt.nap_us != 0)
			evd->pt.gone_ns = now;
		evd->pt.nap_us = 0;
		return DOFI_LOOK_DRIVE;
	}
	if (ia->traits->auto_progress ||
	    (evd->pt.nap_us == 0 &&
	     (evd->pt.gone_ns == 0 ||
	      now - evd->pt.gone_ns > DOFI_PROGRESS_GONE_MS * 1000000ull)))
		evd->pt.nap_us = DOFI_PROGRESS_POLLED_US;
	else if (evd->pt.nap_us == 0)
		evd->pt.nap_us = DOFI_PROGRESS_NAP0_US;
	else if ((evd->pt.nap_us *= 2) > DOFI_PROGRESS_POLLED_US)
		evd->pt.nap_us = DOFI_PROGRESS_POLLED_US;
	return DOFI_LOOK_NAP;
}

/*
 * (dofi.h) An EVD the consumer does not poll whose EPs all have their
 * other stream on one it does (its last look found it polled; dtest -p
 * polls the request EVD through a run of RDMA Writes and leaves the
 * receive EVD): the consumer's reads of that one drive those EPs, and
 * reading this EVD's CQ as well only contends with it for the same
 * endpoints' locks. On rxd, dtest -p's 4 MiB RDMA Writes moved 220-880
 * MB/s with the thread reading the receive EVD (2 runs of 38 under 50,
 * past the time limit), 465-880 without (70 of 70 passed). The nap to
 * keep off for; 0: drive the EVD. Not for one with a waiter or a CNO,
 * nor where either has CQs in more than one domain (a dequeue may read
 * only the first). ia->lock held.
 */
long dofi_progress_partner_nap(dofi_evd_t *evd)
{
	dofi_evd_t *p = evd->partner;

	if (p == NULL || evd->partner_eps != evd->streams || evd->cno != NULL ||
	    atomic_load(&evd->waiters) != 0 ||
	    dofi_evd_xcq_first(evd) != NULL || dofi_evd_xcq_first(p) != NULL)
		return 0;
	return p->pt.nap_us;
}

static void *dofi_progress_main(void *arg)
{
	dofi_ia_t *ia = arg;
	int full = ia->progress_mode == DOFI_PROGRESS_THREAD ||
	           (ia->progress_mode == DOFI_PROGRESS_AUTO &&
	            !ia->traits->auto_progress);

	unsigned eq_spins = 0;
	/* The nap while requests wait for room, and how many the IA had
	 * posted from its queues at the last look (DOFI_PROGRESS_DEFER_US). */
	long defer_nap = 0;
	uint64_t defer_seen = 0;

	dofi_progress_on_thread = 1;
	dofi_progress_bind(ia);
	while (__atomic_load_n(&ia->progress_running, __ATOMIC_ACQUIRE)) {
		struct pollfd fds[DOFI_PROGRESS_MAX_FDS];
		struct fid *fids[DOFI_PROGRESS_MAX_FDS];
		int nfds = 0, nfids = 0, timers = 0, polled = 0, base;
		long nap_us = DOFI_PROGRESS_POLLED_US;
		uint64_t now;
		int eq_ready = 0, cm_polled = 0;
		struct timespec ts;
		long timeout_us;
		dofi_list_t *e;

		/*
		 * A consumer busy-polls connection events: it reads the EQ
		 * (and checks the timers) itself; stay off the core and out
		 * of its locks, as beside a polled CQ.
		 */
		if (atomic_exchange(&ia->cm_polled, 0))
			cm_polled = 1;
		else
			ia->ctl->cm_progress(ia); /* also checks timers */

		fds[nfds].fd = ia->stop_fd;
		fds[nfds++].events = POLLIN;
		if (!cm_polled) {
			/* The CM's fd, armed (see dofi_cm_wait_fd). */
			int fd = ia->ctl->cm_wait_fd(ia, &eq_ready);

			if (fd >= 0) {
				fds[nfds].fd = fd;
				fds[nfds++].events = POLLIN;
			}
		}
		base = nfds;
		pthread_mutex_lock(&ia->lock);
		now = dofi_now_ns();
		timers = ia->ctl->cm_timers_pending(ia);
		for (e = ia->objs[DOFI_OBJ_EVD].next;
		     full && e != &ia->objs[DOFI_OBJ_EVD]; e = e->next) {
			dofi_evd_t *evd =
			        dofi_container_of(e, dofi_evd_t, obj.link);
			struct fid_cq *cq;
			dofi_evd_cq_t *x;
			long nap;
			int fd;

			if (!dofi_evd_ready(evd) || evd->cq == NULL)
				continue;
			/* The consumer drives it, or its partner; 0: none. */
			nap = dofi_progress_look(ia, evd, now) == DOFI_LOOK_NAP
			              ? evd->pt.nap_us
			              : dofi_progress_partner_nap(evd);
			if (nap > 0) {
				if (!polled || nap < nap_us)
					nap_us = nap;
				polled = 1;
				continue;
			}
			/*
			 * Nobody reads it now: move its completions into the
			 * EVD's ring (the consumer still gets them, in order;
			 * suppressed ones are retired), which also drives
			 * the data and lets fi_trywait arm the fd.
			 */
			dofi_evd_flush_cq(evd, 0);
			/* Its CQ in the IA's domain, then in other PZs'. */
			cq = evd->cq;
			fd = evd->cq_fd;
			x = dofi_evd_xcq_first(evd);
			for (;;) {
				/* An EVD has a CQ per DOFI_CQ_SHARD EPs: as
				 * many fids as fds may not fit either. */
				int n = nfids < DOFI_PROGRESS_MAX_FDS
				                ? dofi_cq_fds(
				                          cq, fd, &fds[nfds],
				                          DOFI_PROGRESS_MAX_FDS -
				                                  nfds)
				                : -1;

				if (n >= 0) {
					nfds += n;
					fids[nfids++] = &cq->fid;
					/* A list may change: look again. */
					if (fd == DOFI_CQ_POLLFD)
						timers = 1;
				} else {
					timers = 1; /* no fd: timed polling */
				}
				if (x == NULL)
					break;
				cq = x->cq;
				fd = x->fd;
				x = dofi_evd_xcq_next(x);
			}
		}
		timeout_us = polled      ? nap_us
		             : cm_polled ? DOFI_PROGRESS_POLLED_US
		             : timers    ? DOFI_PROGRESS_TIMER_MS * 1000L
		                         : DOFI_PROGRESS_IDLE_MS * 1000L;
		if (polled && nfids == 0) {
			/*
			 * The consumer is busy polling: stay off the core;
			 * look at the EQ again after the nap. With CQs nobody
			 * polls (a receive EVD apart from the request EVD the
			 * consumer polls, say), stay on their fds: data that
			 * lands there is no call of the consumer's.
			 */
			nfds = 1;
		}
		/* Under the lock: an EVD freed meanwhile takes its CQ along. */
		if (nfids > 0 && fi_trywait(ia->fabric, fids, nfids) != 0) {
			/*
			 * Completions sit unread, so the CQ fds stay
			 * readable: keep driving data (a target may only
			 * poll memory) with short naps instead of spinning.
			 */
			nfds = base;
			timeout_us = DOFI_PROGRESS_BUSY_US;
		}
		pthread_mutex_unlock(&ia->lock);
		/* Requests wait for room (dofi_defer.c): post what fits, and
		 * look again soon while some still wait. */
		if (dofi_defer_kick(ia)) {
			uint64_t posted = atomic_load_explicit(
			        &ia->defer_posted, memory_order_relaxed);

			defer_nap = posted != defer_seen || defer_nap == 0
			                    ? DOFI_PROGRESS_DEFER_US
			            : defer_nap < DOFI_PROGRESS_DEFER_MAX_US
			                    ? 2 * defer_nap
			                    : defer_nap;
			defer_seen = posted;
			if (timeout_us > defer_nap)
				timeout_us = defer_nap;
		} else {
			defer_nap = 0;
		}
		/* Events arrived since the read at the top: go round. */
		if (eq_ready)
			timeout_us =
			        eq_spins++ < 16 ? 0 : DOFI_PROGRESS_BUSY_US;
		else
			eq_spins = 0;
		ts.tv_sec = timeout_us / 1000000L;
		ts.tv_nsec = (timeout_us % 1000000L) * 1000L;
		if (ppoll(fds, (nfds_t)nfds, &ts, NULL) > 0 &&
		    (fds[0].revents & POLLIN)) {
			uint64_t v;

			if (read(ia->stop_fd, &v, sizeof(v)) < 0 &&
			    errno != EAGAIN)
				break;
		}
	}
	return NULL;
}

static dof_status_t dofi_progress_launch(dofi_ia_t *ia)
{
	int efd, rc;

	efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (efd < 0)
		return DOF_ERR_IO;
	__atomic_store_n(&ia->stop_fd, efd, __ATOMIC_RELEASE);
	__atomic_store_n(&ia->progress_running, 1, __ATOMIC_RELEASE);
	/* Ours for good: SIGPIPE blocked (see DOFI_NOPIPE), inherited. */
	rc = DOFI_NOPIPE(pthread_create(&ia->progress_thread, NULL,
	                                dofi_progress_main, ia));
	if (rc != 0) {
		dof_warn(DOFI_LOG, "progress thread: %s", strerror(rc));
		__atomic_store_n(&ia->progress_running, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&ia->stop_fd, -1, __ATOMIC_RELEASE);
		close(efd);
		return DOF_ERR_IO;
	}
	return DOF_OK;
}

/*
 * The process's open IAs. A consumer's wait drives its own IA only: once
 * a second IA is open, a wait on one would leave the other (its connect
 * say) without progress, so every IA gets its thread.
 */
static pthread_mutex_t dofi_progress_ias_lock = PTHREAD_MUTEX_INITIALIZER;
static dofi_list_t dofi_progress_ias = {&dofi_progress_ias, &dofi_progress_ias};

static void dofi_progress_enlist(dofi_ia_t *ia)
{
	dofi_list_t *e;

	pthread_mutex_lock(&dofi_progress_ias_lock);
	dofi_list_add_tail(&dofi_progress_ias, &ia->progress_link);
	if (dofi_progress_ias.next->next != &dofi_progress_ias)
		for (e = dofi_progress_ias.next; e != &dofi_progress_ias;
		     e = e->next)
			dofi_progress_need(
			        dofi_container_of(e, dofi_ia_t, progress_link),
			        "another IA in the process");
	pthread_mutex_unlock(&dofi_progress_ias_lock);
}

dof_status_t dofi_progress_start(dofi_ia_t *ia)
{
	if (ia->progress_mode == DOFI_PROGRESS_NONE) {
		dof_info(DOFI_LOG, "progress: none (DAPL_OFI_PROGRESS=none): "
		                   "the consumer's calls drive the fabric");
		return DOF_OK;
	}
	/*
	 * auto, on a fabric that moves data only when called: a consumer
	 * that sends, receives and connects drives all of it through its
	 * own calls, and a thread would only tax each of them (a second
	 * thread makes glibc and the kernel take atomics on every system
	 * call and malloc). The thread starts once something needs
	 * progress with no call of the consumer's: memory a peer may read
	 * or write (an RDMA target may only poll memory), a CNO, or a
	 * second IA in the process (dofi_progress_enlist).
	 */
	if (ia->progress_mode == DOFI_PROGRESS_AUTO &&
	    !ia->traits->auto_progress) {
		dof_info(DOFI_LOG, "progress: thread started when first "
		                   "needed (remote access memory, a CNO, a "
		                   "second IA)");
	} else if (dofi_progress_launch(ia) != DOF_OK) {
		return DOF_ERR_IO;
	}
	dofi_progress_enlist(ia);
	return DOF_OK;
}

void dofi_progress_need(dofi_ia_t *ia, const char *why)
{
	int expected = 0;

	/* Only auto, where libfabric leaves progress to the caller, waits. */
	if (ia->progress_mode != DOFI_PROGRESS_AUTO ||
	    ia->traits->auto_progress ||
	    !atomic_compare_exchange_strong(&ia->progress_asked, &expected, 1))
		return;
	if (dofi_progress_launch(ia) == DOF_OK)
		dof_info(DOFI_LOG, "progress: thread started for %s", why);
	else
		dof_warn(DOFI_LOG,
		         "progress: no thread for %s; the "
		         "consumer's calls drive the fabric",
		         why);
}

void dofi_progress_stop(dofi_ia_t *ia)
{
	uint64_t one = 1;

	/* Closing: no thread starts any more (dofi_progress_need). */
	atomic_store(&ia->progress_asked, 1);
	pthread_mutex_lock(&dofi_progress_ias_lock);
	if (ia->progress_link.next != NULL) {
		dofi_list_del(&ia->progress_link);
		ia->progress_link.next = NULL;
	}
	pthread_mutex_unlock(&dofi_progress_ias_lock);

	if (!__atomic_load_n(&ia->progress_running, __ATOMIC_ACQUIRE))
		return;
	__atomic_store_n(&ia->progress_running, 0, __ATOMIC_RELEASE);
	if (write(ia->stop_fd, &one, sizeof(one)) < 0)
		dof_debug(DOFI_LOG, "progress stop: %s", strerror(errno));
	pthread_join(ia->progress_thread, NULL);
	close(ia->stop_fd);
	ia->stop_fd = -1;
}

void dofi_progress_wake(dofi_ia_t *ia)
{
	int fd = __atomic_load_n(&ia->stop_fd, __ATOMIC_ACQUIRE);
	uint64_t one = 1;

	if (fd >= 0 && write(fd, &one, sizeof(one)) < 0)
		dof_debug(DOFI_LOG, "progress wake: %s", strerror(errno));
}

void dofi_progress_watch(dofi_ia_t *ia)
{
	/* The thread rebuilds its fd set every round: just wake it. */
	dofi_progress_wake(ia);
}
