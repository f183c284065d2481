/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * libdaplofi: the DAT 2.0 provider on libfabric. Internal types.
 *
 * Every DAT object is a dofi_obj_t followed by its own fields; the first
 * word is the DAT_PROVIDER table libdat2 dispatches on. Freed objects keep
 * that word and a dead magic until the provider is unloaded, so a stale
 * handle is answered with DAT_INVALID_HANDLE instead of a crash.
 *
 * The DAT state machines (dofi_cm.c), EVD, memory and DTO code are shared;
 * the carriage of connection messages is what a connection backend
 * provides, behind the seam of dofi_cm.h (dofi_cm_ops_t, chosen at IA open
 * from the endpoint type). The MSG backend (dofi_cm_msg.c) uses
 * libfabric's own CM. What differs between libfabric providers is one row
 * of dofi_traits.c, looked up once per IA (ia->traits).
 *
 * Locks, outermost first; a thread holding one never takes one above it:
 *   1. ia->cm_read_lock  one reader of CM events at a time (trylock: a
 *                        second reader goes away rather than wait)
 *   2. ia->lock          the control path: the IA's object lists, EP
 *                        states, CM objects, the timer heap, the watch list
 *                        (dofi_cm.c) and the backend's state
 *   3. evd->lock         an EVD's ring and the reads of its CQs (a
 *                        dofi_lock_t, dofi_lock.h)
 *   4. cno->lock         a CNO's trigger and references (a leaf)
 *   5. srq->lock         a shared receive queue's receives and the EPs
 *                        waiting for one (dofi_srq.c); taken on the
 *                        completion path of an EP on an SRQ
 *   6. pool->fresh_lock  setting up an op the first time it is handed out
 *   dofi_grave_lock and dofi_prov_lock (dofi_util.c) are leaves, taken
 *   with or without the others.
 * The data path (posts, completions, dequeues) takes none of ours beyond
 * the EVD's lock, which a dequeue holds while it reads the CQ (one
 * compare-and-swap and one exchange uncontended); what concerns the CM
 * from there (a backend's own message, a truncated receive) is recorded
 * and the EP kicked (dofi_cm_kick, a lock-free push), never acted on.
 */
#ifndef DOFI_H
#define DOFI_H

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <netinet/in.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include <dat2/udat.h>
#include <dat2/dat_ib_extensions.h>
#include <dat2/dat_registry.h>

#include "dof/daterr.h"
#include "dof/dats.h"
#include "dof/log.h"
#include "dof/status.h"
#include "dofi_lock.h"

#include "dofi_cm_hdr.h" /* our CM private-data header */
#include "dofi_instance.h"
#include "dofi_map.h"
#include "dofi_timer.h"

/*
 * Log lines name their component: a file defines DOFI_LOG_COMP ("cm",
 * "dto", "evd", "mem", "progress", "ep") before including this header;
 * DAPL_OFI_LOG_COMPONENTS picks which print (dapl-ofi(7)).
 */
#ifdef DOFI_LOG_COMP
#define DOFI_LOG "dapl-ofi/" DOFI_LOG_COMP
#else
#define DOFI_LOG "dapl-ofi"
#endif
#define DOFI_FI_VERSION FI_VERSION(1, 17)

typedef enum {
	DOFI_OBJ_IA = 1,
	DOFI_OBJ_PZ,
	DOFI_OBJ_LMR,
	DOFI_OBJ_RMR,
	DOFI_OBJ_EVD,
	DOFI_OBJ_CNO,
	DOFI_OBJ_EP,
	DOFI_OBJ_PSP,
	DOFI_OBJ_RSP,
	DOFI_OBJ_CR,
	DOFI_OBJ_SRQ,
	DOFI_OBJ_LAST
} dofi_obj_type_t;

#define DOFI_MAGIC_LIVE 0x44415432u /* "DAT2" */
#define DOFI_MAGIC_DEAD 0xdeadda72u

typedef struct dofi_list {
	struct dofi_list *next, *prev;
} dofi_list_t;

static inline void dofi_list_init(dofi_list_t *l)
{
	l->next = l->prev = l;
}

static inline int dofi_list_empty(const dofi_list_t *l)
{
	return l->next == l;
}

static inline void dofi_list_add_tail(dofi_list_t *head, dofi_list_t *e)
{
	e->prev = head->prev;
	e->next = head;
	head->prev->next = e;
	head->prev = e;
}

static inline void dofi_list_del(dofi_list_t *e)
{
	e->prev->next = e->next;
	e->next->prev = e->prev;
	dofi_list_init(e);
}

#define dofi_container_of(_p, _type, _member) \
	((_type *)(void *)((char *)(_p)-offsetof(_type, _member)))

struct dofi_ia;
typedef struct dofi_cm_ops dofi_cm_ops_t;
typedef struct dofi_ctl_ops dofi_ctl_ops_t;

typedef struct dofi_obj {
	const DAT_PROVIDER *provider; /* first: libdat2 dispatches on it */
	_Atomic uint32_t magic;
	dofi_obj_type_t type;
	struct dofi_ia *ia;
	DAT_CONTEXT context;
	dofi_list_t link; /* in ia->objs[type] */
	size_t size;      /* allocation size, for reuse */
} dofi_obj_t;

/* One registered IA name: its table, libdat2's info, our instance data. */
typedef struct dofi_prov {
	DAT_PROVIDER table;
	DAT_PROVIDER_INFO info;
	/* Its dat.conf instance data (FI_PROVIDER overrides the provider). */
	dofi_instance_t inst;
	dofi_list_t link;
} dofi_prov_t;

/* ---- memory -------------------------------------------------------------- */

struct dofi_pz;

/*
 * A libfabric domain: memory keys and endpoints live in one, so a PZ is a
 * domain of its own (a PD on verbs). The IA's domain is the first in the
 * list and holds the CQs EVDs open at creation; the first PZ takes it.
 * A freed PZ leaves its domain empty (no MR, no endpoint) for the next
 * PZ; domains close with the IA.
 */
typedef struct dofi_dom {
	struct fid_domain *domain;
	struct fid_cq *null_cq; /* for EPs with no request/recv EVD */
	struct dofi_pz *pz;     /* the PZ using it; NULL when free */
	unsigned index;         /* 0: the IA's */
	struct dofi_dom *next;
} dofi_dom_t;

typedef struct dofi_pz {
	dofi_obj_t obj;
	dofi_dom_t *dom;
	_Atomic int nref; /* LMRs, RMRs, EPs using it */
} dofi_pz_t;

typedef struct dofi_lmr {
	dofi_obj_t obj;
	dofi_pz_t *pz;
	DAT_MEM_TYPE mem_type;
	DAT_REGION_DESCRIPTION region;
	DAT_MEM_PRIV_FLAGS priv;
	DAT_VA_TYPE va_type;
	uintptr_t base;
	DAT_VLEN length;
	struct fid_mr *mr;
	void *desc;
	DAT_LMR_CONTEXT lmr_context;
	DAT_RMR_CONTEXT rmr_context;
	struct dofi_lmr *shared_from; /* DAT_MEM_TYPE_LMR */
	_Atomic int nref;             /* LMRs sharing it, RMRs bound to it */
} dofi_lmr_t;

typedef struct dofi_rmr {
	dofi_obj_t obj;
	dofi_pz_t *pz;
	dofi_lmr_t *lmr; /* bound LMR, NULL when unbound */
	DAT_LMR_TRIPLET triplet;
	DAT_MEM_PRIV_FLAGS priv;
	DAT_VA_TYPE va_type;
	struct fid_mr *mr;
	DAT_RMR_CONTEXT rmr_context;
	struct dofi_ep *ep;
} dofi_rmr_t;

/* ---- events -------------------------------------------------------------- */

typedef struct dofi_cno {
	dofi_obj_t obj;
	int efd; /* eventfd: readable while an EVD has triggered it */
	DAT_OS_WAIT_PROXY_AGENT agent;
	struct dofi_evd *triggered;
	pthread_mutex_t lock;
	int nref;
	int waiters;
	int fd_proxy; /* dat_cno_fd_create: efd is the consumer's fd */
	/* When a wait last returned an EVD (dofi_now_ns; 0: never), which
	 * makes its waits hot for a while (dofi_wait_heat); any waiter's,
	 * relaxed atomics (dofi_cno_wait). */
	uint64_t wait_last_ns;
} dofi_cno_t;

/*
 * A further CQ of an EVD: in a domain other than the IA's, opened when the
 * first EP of that domain's PZ binds the EVD, or one more in a domain
 * whose CQs each have DOFI_CQ_SHARD EPs bound (dofi_evd_cq_get).
 * Appended under ia->lock with a release store, read without a lock,
 * freed only with the EVD.
 */
typedef struct dofi_evd_cq {
	struct fid_cq *cq;
	int fd; /* -1 when the CQ has no fd wait object */
	dofi_dom_t *dom;
	uint32_t neps; /* EPs bound to it (ia->lock) */
	/* The CM's last reads of it (dofi_evd_cq_marks). */
	uint64_t cm_marks[2];
	struct dofi_evd_cq *next;
} dofi_evd_cq_t;

/*
 * The most EPs bound to one CQ of an EVD; more get another CQ of the
 * same EVD. libfabric 1.17 walks a list of every endpoint (and socket)
 * bound to a CQ at each bind, enable and close (fid_list_insert,
 * ofi_wait_add_fd), so one CQ for 10,000 connections made each new one
 * cost a walk over all the others; per EP, completions stay in one CQ,
 * in order. Not fewer: tcp's poll list of each CQ is an array as long
 * as the highest fd on it (24 bytes a slot), which 256 a CQ made 2.4 KiB
 * per EP at 10,000 connections; 1,024 makes it 0.6 (bench-scale.sh b).
 */
#define DOFI_CQ_SHARD 1024
/*
 * The most EPs on an EVD's CQ that waits on a poll() list (the first in
 * its domain, where ia->traits->cq_pollfd): tcp's progress looks at every
 * socket of such a list at each read, where it asks epoll on the fd of
 * the CQs after it (dofi_evd.c, dofi_evd_cq_open).
 */
#define DOFI_CQ_SHARD_LIST 256

typedef struct dofi_evd {
	dofi_obj_t obj;
	DAT_EVD_FLAGS flags;
	DAT_COUNT qlen;
	dofi_lock_t lock; /* dofi_lock.h: the dequeue takes it */
	DAT_EVENT *ring;
	uint32_t cap; /* ring capacity, >= qlen */
	uint32_t head;
	_Atomic uint32_t count;
	struct fid_cq *cq; /* DTO and RMR streams, in the IA's domain */
	int cq_fd;         /* the CQ's wait fd; DOFI_CQ_POLLFD, -1 none */
	uint32_t cq_neps;  /* EPs bound to cq (ia->lock) */
	/* The IB extension's counters run (dofi_ext_dto.c): read on every
	 * dequeue, next to cq (in what was padding). */
	uint8_t counting;
	dofi_evd_cq_t *xcq; /* CQs in other PZs' domains; usually NULL */
	int efd;            /* eventfd: software/CM events for waiters */
	_Atomic int waiters;
	int enabled;
	int waitable;
	int overflowed;
	/* When a wait last returned an event (dofi_now_ns; 0: never),
	 * which makes its waits hot for a while (dofi_wait_heat); the
	 * one waiter's (dofi_evd_wait). */
	uint64_t wait_last_ns;
	dofi_cno_t *cno;
	_Atomic int nref; /* EPs, PSPs, RSPs using it */
	/*
	 * EPs' receive and request streams bound to it (ia->lock): all share
	 * stream_flags, and a solicited-wait receive stream takes no request
	 * stream (dofi_ep_flags_ok).
	 */
	int streams;
	int solicited;
	DAT_COMPLETION_FLAGS stream_flags;
	/*
	 * The other EVD of EPs with a stream here and their other stream
	 * there, and how many (ia->lock; dofi_ep_streams): when that counts
	 * every stream here, the consumer's reads of partner drive all of
	 * this EVD's EPs (dofi_progress_partner_nap).
	 */
	struct dofi_evd *partner;
	int partner_eps;
	/* The consumer's dequeues, counted; the progress thread reads it. */
	_Atomic unsigned polls;
	/* The progress thread's own (dofi_progress_main). */
	struct {
		unsigned seen;    /* polls at its last look */
		long nap_us;      /* keeping off for this long; 0: driving */
		uint64_t gone_ns; /* when the consumer last stopped polling */
		uint64_t look_ns; /* the last look */
	} pt;
	/* Empty dequeues, with no progress thread (dofi_evd_dequeue). */
	_Atomic unsigned idle_polls;
	/* The CM's last reads of cq for a backend's own messages: one per
	 * pass serves every EP waiting on it (ia->lock; dofi_evd_cq_marks). */
	uint64_t cm_marks[2];
	/* Set up: walkers of ia->objs may look at it (dofi_evd_ready). */
	_Atomic int ready;
	uint64_t cnt[DCNT_EVD_ALL_COUNTERS]; /* dofi_ext_dto.c */
} dofi_evd_t;

/*
 * The consumer polled the EVD (dofi_evd_dequeue, or the CM reading its CQ
 * for it): counted, so that the progress thread keeps off a CQ polled
 * without pause (dofi_progress_look). A load and a store, not a locked
 * add: two threads polling at once may count one call.
 */
static inline void dofi_evd_count_poll(dofi_evd_t *evd)
{
	atomic_store_explicit(
	        &evd->polls,
	        atomic_load_explicit(&evd->polls, memory_order_relaxed) + 1,
	        memory_order_relaxed);
}

/* The EVD's CQs in other domains, safe without a lock (never removed). */
static inline dofi_evd_cq_t *dofi_evd_xcq_first(dofi_evd_t *evd)
{
	return __atomic_load_n(&evd->xcq, __ATOMIC_ACQUIRE);
}

static inline dofi_evd_cq_t *dofi_evd_xcq_next(dofi_evd_cq_t *x)
{
	return __atomic_load_n(&x->next, __ATOMIC_ACQUIRE);
}

/*
 * A flag the control path sets while the data path reads it (whether the
 * counters run): a plain load, without a data race.
 */
static inline uint8_t dofi_flag(const uint8_t *flag)
{
	return __atomic_load_n(flag, __ATOMIC_RELAXED);
}

/* ---- endpoints ----------------------------------------------------------- */

/*
 * DAT_INVALID_STATE's subtype for an EP in state s, as OFED's DAPL gives
 * it: a post on an EP that is not connected names the state it is in.
 */
static inline DAT_RETURN_SUBTYPE dofi_ep_state_subtype(DAT_EP_STATE s)
{
	switch (s) {
	case DAT_EP_STATE_UNCONNECTED:
		return DAT_INVALID_STATE_EP_UNCONNECTED;
	case DAT_EP_STATE_UNCONFIGURED_UNCONNECTED:
		return DAT_INVALID_STATE_EP_UNCONFIGURED;
	case DAT_EP_STATE_RESERVED:
		return DAT_INVALID_STATE_EP_RESERVED;
	case DAT_EP_STATE_UNCONFIGURED_RESERVED:
		return DAT_INVALID_STATE_EP_UNCONFRESERVED;
	case DAT_EP_STATE_PASSIVE_CONNECTION_PENDING:
		return DAT_INVALID_STATE_EP_PASSCONNPENDING;
	case DAT_EP_STATE_UNCONFIGURED_PASSIVE:
		return DAT_INVALID_STATE_EP_UNCONFPASSIVE;
	case DAT_EP_STATE_ACTIVE_CONNECTION_PENDING:
		return DAT_INVALID_STATE_EP_ACTCONNPENDING;
	case DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING:
		return DAT_INVALID_STATE_EP_TENTCONNPENDING;
	case DAT_EP_STATE_UNCONFIGURED_TENTATIVE:
		return DAT_INVALID_STATE_EP_UNCONFTENTATIVE;
	case DAT_EP_STATE_CONNECTED:
		return DAT_INVALID_STATE_EP_CONNECTED;
	case DAT_EP_STATE_DISCONNECT_PENDING:
		return DAT_INVALID_STATE_EP_DISCPENDING;
	case DAT_EP_STATE_DISCONNECTED:
		return DAT_INVALID_STATE_EP_DISCONNECTED;
	case DAT_EP_STATE_COMPLETION_PENDING:
		return DAT_INVALID_STATE_EP_COMPLPENDING;
	default:
		return DAT_INVALID_STATE_EP_NOTREADY;
	}
}

enum {
	DOFI_OP_SEND = 1,
	DOFI_OP_RECV,
	DOFI_OP_WRITE,
	DOFI_OP_READ,
	/* A connection backend's own messages: never reported. */
	DOFI_OP_CM_RECV,
	DOFI_OP_CM_SEND,
	/*
	 * The IB extension's requests (dofi_ext_dto.c): they complete as
	 * DAT_IB_DTO_EVENTs (dofi_dto_fill), and on success through the
	 * branch the backend's own take (type >= DOFI_OP_CM_RECV), at no
	 * cost to the others. DOFI_OP_EXT_SINK is no request of a pool but
	 * the context of the RDMA Write half of a write with immediate data
	 * sent as two operations: never reported.
	 */
	DOFI_OP_EXT_WIMM,
	DOFI_OP_EXT_FADD,
	DOFI_OP_EXT_CSWAP,
	DOFI_OP_EXT_SINK,
};

#define DOFI_OP_INTERNAL(type) \
	((uint8_t)((type)-DOFI_OP_CM_RECV) <= DOFI_OP_CM_SEND - DOFI_OP_CM_RECV)
#define DOFI_OP_EXT(type) ((type) >= DOFI_OP_EXT_WIMM)

/* One posted DTO; the libfabric context. Pooled per EP. */
typedef struct dofi_op {
	struct fi_context2 fctx; /* first: FI_CONTEXT/FI_CONTEXT2 modes */
	struct dofi_ep *ep;
	DAT_DTO_COOKIE cookie;
	DAT_SEG_LENGTH len;
	uint8_t type;
	uint8_t suppress;
	/* Owned by libfabric or queued: 1, or DOFI_POSTED_AFTER when events
	 * wait to follow its own (dofi_dto_post_after). 0: neither. */
	_Atomic uint8_t posted;
	/* Requests where the fabric completes some out of order
	 * (ia->traits->late_order, dofi_dto.c): late, it may complete after
	 * later requests, and wait is its number among the late ones; otherwise
	 * wait is how many late ones were posted before it. */
	uint8_t late;
	uint32_t next; /* free list / pending / held list link */
	/* Posting order in its pool, for flushing. Written by the post, read
	 * by the CM's scans of posted ops: atomic, relaxed (dofi_op_seq). */
	_Atomic uint32_t seq;
	uint32_t wait;
	/* held: its DAT_DTO_COMPLETION_STATUS (DOFI_HSTATUS_UNPOSTED: a
	 * late request whose post failed, taking its turn) */
	uint8_t hstatus;
	union {
		struct { /* a receive's segments */
			struct iovec *iov;
			void **desc;
		};
		/* An atomic's operands (dofi_ext_dto.c): libfabric reads them
		 * until the operation completes. */
		uint64_t ext_val[2];
	};
	uint32_t iov_count;
} dofi_op_t;

/* op's place in its pool's posting order (a plain load on x86). */
static inline uint32_t dofi_op_seq(const dofi_op_t *op)
{
	return atomic_load_explicit(&op->seq, memory_order_relaxed);
}

/*
 * Give op the next number of a pool's posting order (*next). A load and a
 * store, not a locked add: ops posted at once by two threads have no
 * order to keep, and may share a number.
 */
static inline void dofi_op_seq_take(dofi_op_t *op, _Atomic uint32_t *next)
{
	uint32_t seq = atomic_load_explicit(next, memory_order_relaxed);

	atomic_store_explicit(&op->seq, seq, memory_order_relaxed);
	atomic_store_explicit(next, seq + 1, memory_order_relaxed);
}

/* Whether a was posted before b, in the same pool. */
static inline int dofi_op_seq_before(const dofi_op_t *a, const dofi_op_t *b)
{
	return (int32_t)(dofi_op_seq(a) - dofi_op_seq(b)) < 0;
}

#define DOFI_POSTED_AFTER 2

/* An event held to follow a request's completion (an RMR bind's). */
typedef struct dofi_after {
	uint32_t op; /* its req_pool index */
	DAT_EVENT ev;
} dofi_after_t;

#define DOFI_AFTER_MAX 64

#define DOFI_POOL_NONE UINT32_MAX
#define DOFI_MAX_IOV   32

/*
 * A lock-free stack of op indices; tag defeats ABA. Ops are set up when
 * first handed out, not when the EP is made: an EP costs no pass over
 * (nor zeroing of) its queue depth's ops, and scans (dofi_pool_used,
 * flushes) stop at the last op ever used.
 */
typedef struct dofi_pool {
	_Atomic uint64_t head; /* tag << 32 | index: ops given back */
	dofi_op_t *ops;
	uint32_t size;
	size_t ops_bytes;           /* dofi_lazy_alloc'd */
	_Atomic uint32_t fresh;     /* ops [0, fresh) are set up */
	pthread_mutex_t fresh_lock; /* sets up the next one */
	/* Bytes of the block after the ops (extra_bytes at dofi_pool_init;
	 * NULL if none): the request pool's defer slots. */
	void *extra;
	/* What an op starts with: its EP, and a receive's IOV slots. */
	struct dofi_ep *ep;
	struct iovec *iov;
	void **desc;
	uint32_t niov;
} dofi_pool_t;

typedef struct dofi_cr dofi_cr_t;
typedef struct dofi_sp dofi_sp_t;

/* A deadline in ia->timers and what to do once it passed (ia->lock). */
typedef struct dofi_cm_timer {
	dofi_timer_t t;
	void (*fire)(struct dofi_cm_timer *tm, uint64_t now);
} dofi_cm_timer_t;

typedef struct dofi_ep {
	dofi_obj_t obj;
	_Atomic DAT_EP_STATE state;
	/* The IB extension's counters run (dofi_ext_dto.c): read on every post,
	 * in the cache line of obj and state. */
	uint8_t counting;
	uint8_t ext_flags; /* DOFI_EXT_EP_* (below) */
	/* A receive completed in error: later ones do not succeed (read on
	 * every completion of a receive; dofi_dto_complete_err). */
	uint8_t recv_failed;
	/* Requests wait in its defer queue (dofi_defer.c): later posts
	 * queue behind them (read on every post, beside counting). */
	uint8_t deferring;
	/* Its receives end in the IA's sink segment (ia->trunc_sink,
	 * dofi_recv_sink_add). */
	uint8_t recv_sink;
	dofi_pz_t *pz;
	dofi_evd_t *recv_evd;
	dofi_evd_t *req_evd;
	dofi_evd_t *conn_evd;
	DAT_EP_ATTR attr;
	/*
	 * NULL until connect or accept. Posts read these with no lock
	 * after checking the state; the CM closes them (NULL) a grace
	 * period after the state changed (DOFI_CLOSE_NS): atomic, so that
	 * the two never race (a plain load on x86).
	 */
	struct fid_ep *_Atomic fep;
	struct fid_cq *_Atomic tx_cq, *_Atomic rx_cq; /* what fep is bound to */
	fi_addr_t peer;               /* where DTOs go (MSG: ignored) */
	void *cm;                     /* the connection backend's state */
	dofi_pool_t req_pool;
	dofi_pool_t recv_pool;
	/* The shared receive queue it takes its receives from (dofi_srq.c),
	 * or NULL; recv_pool then holds those it took, at most
	 * max_recv_dtos. */
	struct dofi_srq *srq;
	_Atomic uint32_t recv_seq; /* next receive's dofi_op_t.seq */
	_Atomic uint32_t req_seq;  /* next request's dofi_op_t.seq */
	/* Receives posted while there is no fi_ep, in posting order. */
	uint32_t pend_head, pend_tail;
	/* Addresses reported by dat_ep_query. */
	struct sockaddr_in local_addr;
	struct sockaddr_in remote_addr;
	DAT_CONN_QUAL remote_qual;
	DAT_CONN_QUAL local_qual;
	int local_unnamed; /* local_qual/addr still to read (fi_getname) */
	/* Private data of the last connection event. */
	unsigned char pdata[256];
	DAT_COUNT pdata_len;
	/* Connect timeout, CLOCK_MONOTONIC ns; 0 = none. */
	uint64_t deadline;
	dofi_cr_t *cr; /* passive side: the CR being accepted */
	dofi_sp_t *sp; /* EP reserved by a PSP (provider) or RSP */
	int graceful;  /* disconnect pending on outstanding sends */
	/*
	 * The end under way is the consumer's graceful dat_ep_disconnect
	 * with every request completed (dofi_cm.c sets it around the
	 * backend's disconnect): the peer may wait for what we sent.
	 */
	int clean_end;
	/*
	 * Messages of the connection that completed successfully: Sends
	 * and writes with immediate data this side sent (msgs_sent), and
	 * receives, those a write with immediate data took included
	 * (msgs_recvd). The RDM backend's graceful end counts them
	 * (dofi_cm_rdm.c); dofi_dto_count says why a plain increment is
	 * race-free.
	 */
	_Atomic uint64_t msgs_sent, msgs_recvd;
	/* A DTO failed: the connection is broken. Set by the completion
	 * path (an EVD's lock), read by the CM (ia->lock): atomic. */
	_Atomic int dto_error;
	/* A receive was truncated on a fabric that keeps the connection:
	 * the CM ends it (dofi_cm_check_timers). */
	_Atomic int break_pending;
	/* When the CM looks again for posts that raced the connection's
	 * end (dofi_cm_settle_raced); 0: not due (ia->lock). */
	uint64_t race_at;
	/* DISCONNECTED or BROKEN held back until the requests still posted
	 * at the end complete or are flushed (dofi_cm_down); 0 if none. */
	DAT_EVENT_NUMBER held_event;
	/* A flush reported requests libfabric still held: their CQ entries
	 * may come later (ia->lock). */
	int cq_stale;
	/* The connection ended while libfabric still held a receive it
	 * would not cancel (sockets fills it): the later ones are cancelled
	 * once it completes, or at recv_cancel_at (dofi_cm_cancel_recvs). */
	int recv_cancel_pending;
	uint64_t recv_cancel_at;
	/* The CM's look at it (dofi_cm.c, ia->lock): its next deadline in
	 * ia->timers, its place on ia->watch while a condition needs a look
	 * at every pass, and its kick (lock-free, see dofi_cm_kick). */
	dofi_cm_timer_t timer;
	dofi_list_t watch;
	uint8_t watched;
	_Atomic uint8_t kicked;
	struct dofi_ep *kick_next;
	/*
	 * Requests the fabric had no room for (dofi_defer.c), under
	 * ia->defer_lock: the queue (req_pool indices, linked by op->next),
	 * the EP's link among the IA's EPs that have one, whether the
	 * fabric refused one of them for good, and each request op's saved
	 * arguments (the slots follow req_pool's ops in their block).
	 */
	uint32_t defer_head, defer_tail;
	struct dofi_ep *defer_next;
	uint8_t defer_listed;
	uint8_t defer_failed;
	struct dofi_defer *defer_rec;
	struct iovec *defer_iov;
	void **defer_desc;
	uint32_t defer_niov;
	/* The receive ops' iovecs, then their descriptors: one block,
	 * dofi_lazy_alloc'd, of recv_block_bytes. */
	void *recv_block;
	size_t recv_block_bytes;
	/*
	 * Request completions in posting order (ia->traits->late_order,
	 * dofi_dto.c): late requests numbered, and reported in their order (a
	 * failed post takes its turn too), and the requests held until their
	 * turn, in posting order (req_pool indices, under req_evd->lock). Reset
	 * with each libfabric endpoint.
	 */
	_Atomic uint32_t late_posted;
	_Atomic uint32_t late_settled;
	uint32_t held_head, held_tail;
	/* A flush of requests dropped the list: hold nothing more. */
	uint8_t held_closed;
	/* ia->fence: late_settled must reach this before a request that
	 * waits is posted (one past the number of the last late request
	 * posted that raises a fence; dofi_dto_fence). */
	_Atomic uint32_t fence_mark;
	/*
	 * RMR bind completions in request-queue order: the request posted
	 * last, and the events waiting to follow requests' completions
	 * (under req_evd->lock; allocated with the first).
	 */
	_Atomic(dofi_op_t *) last_req;
	dofi_after_t *after;
	uint32_t nafter;
	/* The IB extension (dofi_ext_dto.c): the context of the RDMA Write
	 * half of its writes with immediate data, and the counters. */
	dofi_op_t ext_sink;
	/*
	 * Write halves posted to the sink asking for a completion (where
	 * the fabric does not order a message after a Write: ia->fence has
	 * DOFI_FENCE_WRITE), and those completed; the message waits for its
	 * own (dofi_ext_write_imm). done is counted under req_evd->lock.
	 */
	_Atomic uint64_t ext_wimm_posted, ext_wimm_done;
	uint64_t cnt[DCNT_EP_ALL_COUNTERS];
	/*
	 * On a shared receive queue (ep->srq), under srq->lock: its place
	 * among the EPs waiting for a receive, how many it holds, whether
	 * it takes receives (its connection is up), and whether its
	 * connection's end is still to be reported.
	 */
	dofi_list_t srq_wait;
	uint32_t srq_held; /* receives it took and are not over */
	uint8_t srq_taking;
	uint8_t srq_waiting;
	uint8_t srq_took;
} dofi_ep_t;

/* ep->ext_flags (dofi_ext.c, dofi_ext_dto.c) */
#define DOFI_EXT_EP_PASSIVE 0x1 /* connected through dat_cr_accept */
#define DOFI_EXT_EP_DISC    0x2 /* dat_ep_disconnect was called */
#define DOFI_EXT_EP_WFAIL   0x4 /* a write half failed: its message too */

static inline void dofi_ext_flag_set(dofi_ep_t *ep, uint8_t bits)
{
	__atomic_fetch_or(&ep->ext_flags, bits, __ATOMIC_RELAXED);
}

static inline void dofi_ext_flag_clear(dofi_ep_t *ep, uint8_t bits)
{
	__atomic_fetch_and(&ep->ext_flags, (uint8_t)~bits, __ATOMIC_RELAXED);
}

/* ---- shared receive queues (dofi_srq.c) ---------------------------------- */

/* A receive posted to an SRQ, waiting for an EP to take it. */
typedef struct dofi_srq_recv {
	DAT_DTO_COOKIE cookie;
	DAT_SEG_LENGTH len;
	uint32_t count; /* its segments, at its slot of iov and desc */
} dofi_srq_recv_t;

/*
 * A pool of receives the EPs on it take from, oldest first, each EP up to
 * its max_recv_dtos and its share of cap at a time; an EP posts what it
 * took to its own fi_ep (dofi_srq.c says why not fi_srx_context). Under lock:
 * the receives not yet taken (a ring of cap slots of niov segments each), the
 * EPs waiting for one, the counts and the watermark.
 */
typedef struct dofi_srq {
	dofi_obj_t obj;
	dofi_pz_t *pz;
	pthread_mutex_t lock;
	dofi_srq_recv_t *ring;
	struct iovec *iov;
	void **desc;
	uint32_t cap;          /* max_recv_dtos: receives not yet over */
	uint32_t niov;         /* max_recv_iov */
	uint32_t head, queued; /* the ring: oldest slot, how many */
	uint32_t outstanding;  /* posted and not yet over: queued or held */
	dofi_list_t waiting;   /* EPs holding fewer than they may, in order */
	DAT_COUNT lw;          /* the low watermark */
	uint8_t lw_armed;      /* it fires once, the next time queued < lw */
	/* It fired on the completion path: the CM posts the event. */
	_Atomic uint8_t lw_due;
	int nref; /* EPs on it (ia->lock and lock) */
} dofi_srq_t;

/* PSP and RSP: a passive endpoint on a conn_qual. */
struct dofi_sp {
	dofi_obj_t obj;
	DAT_CONN_QUAL qual;
	dofi_evd_t *evd;
	DAT_PSP_FLAGS flags;
	dofi_ep_t *ep; /* RSP's EP */
	void *cm;      /* the connection backend's listener */
	int nref;      /* CRs not yet resolved */
};

struct dofi_cr {
	dofi_obj_t obj;
	dofi_sp_t *sp;      /* NULL once an RSP has spent itself */
	DAT_CONN_QUAL qual; /* the qualifier it arrived on */
	void *cm;           /* the connection backend's request */
	struct sockaddr_in remote_addr;
	DAT_PORT_QUAL remote_port;
	unsigned char pdata[256];
	DAT_COUNT pdata_len;
	dofi_ep_t *ep; /* provider-created or RSP EP */
	uint8_t rdma_in, rdma_out;
};

/* ---- fabric traits (dofi_traits.c) ----------------------------------------
 */

/* ia->traits->late_order */
enum { DOFI_ORDER_NONE, DOFI_ORDER_LATE, DOFI_ORDER_ALL };

/*
 * ia->fence: what a request waits for before it is handed to libfabric
 * (dofi_dto_fence, dofi_dto.c). A late request of a kind the IA fences
 * raises ep->fence_mark; a request that waits for that kind is posted
 * once the late requests up to the mark have completed.
 */
/* traits->read_fence: any request, for the Reads and atomics before it. */
#define DOFI_FENCE_READ 0x1
/* The fabric does not order a message after an RDMA Write (no
 * FI_ORDER_SAW granted, or DAPL_OFI_TEST_NO_SAW): a request that consumes
 * the peer's receive (a Send, a Write with immediate data) waits for the
 * Writes before it, which complete on delivery (FI_DELIVERY_COMPLETE). */
#define DOFI_FENCE_WRITE 0x2

/*
 * What one libfabric provider does differently; one row per provider name,
 * looked up once at IA open.
 */
typedef struct dofi_traits {
	const char *prov; /* libfabric provider name; NULL: any other */
	/* libfabric progresses data on its own threads (sockets). */
	uint8_t auto_progress;
	/* fi_cancel refuses a receive it is filling, which completes later
	 * (dofi_cm_cancel_recvs keeps flushes behind it). */
	uint8_t recv_cancel_busy;
	/*
	 * A message with no receive posted waits in the receiver's provider
	 * (sockets buffers it, and the sender's Send completes then), and
	 * goes to the next receive posted: a peer's end holds the
	 * connection while one waits, for a receive to take it
	 * (dofi_msg_drain_hold, dofi_cm_msg.c).
	 */
	uint8_t recv_buffers;
	/*
	 * Our end of a connection closes the libfabric endpoint instead of
	 * calling fi_shutdown (sockets: its fi_shutdown closes the CM socket
	 * behind its CM thread's back, which closes the same number again
	 * later, by then often another object's; before the connection
	 * exists, it closes an fd it never opened). See dofi_cm_msg.c.
	 */
	uint8_t close_ends_conn;
	/*
	 * Closing an endpoint drops what libfabric has not yet written to
	 * the socket (sockets: its progress thread writes an fi_inject
	 * later): our internal messages go with a completion, which the
	 * close waits for (dofi_dto_send_internal, dofi_cm_msg.c).
	 */
	uint8_t close_drops_unsent;
	/*
	 * fi_accept reports FI_CONNECTED before it marks the endpoint
	 * connected, and the peer's end arriving in between is lost
	 * (sockets): an active side asks for the accepted message and holds
	 * its own end until it came (dofi_cm_msg.c).
	 */
	uint8_t accept_late;
	/* Closing an endpoint leaves its queued EQ events behind (sockets;
	 * tcp and verbs remove them): closed fids become tombstones. */
	uint8_t eq_keeps_closed;
	/*
	 * CQs wait on a poll() list (FI_WAIT_POLLFD) whose first entry is
	 * libfabric's own change signal (util's pollfds: tcp); the first CQ
	 * of an EVD in a domain only, for its first DOFI_CQ_SHARD_LIST EPs,
	 * the others on an fd (dofi_evd_cq_open). verbs lists its one
	 * channel fd there, so it keeps FI_WAIT_FD.
	 */
	uint8_t cq_pollfd;
	/* libfabric ends the connection itself after a truncated receive
	 * (tcp); elsewhere (sockets) we do, as InfiniBand would. */
	uint8_t trunc_ends_conn;
	/*
	 * RDMA writes ask for FI_DELIVERY_COMPLETE by default: a transmit
	 * completion would hide a target's refusal (tcp).
	 */
	uint8_t delivery_write;
	/* Never raises SIGPIPE (writes with MSG_NOSIGNAL): no guard. */
	uint8_t no_sigpipe;
	/* domain_attr->ep_cnt is a default, not a limit, and each connected
	 * endpoint holds a socket: RLIMIT_NOFILE bounds max_eps (tcp,
	 * sockets). */
	uint8_t ep_cnt_soft;
	/*
	 * Request completions that come out of posting order are put back
	 * in order (dofi_dto.c). DOFI_ORDER_LATE: those that complete on the
	 * target's answer (RDMA Reads, writes with FI_DELIVERY_COMPLETE)
	 * come after later ones that complete once sent (tcp).
	 * DOFI_ORDER_ALL: any may come after a later one (sockets answers a
	 * Read while a Send before it waits for a receive).
	 */
	uint8_t late_order;
	/* The fabric's listener trusts what connects to it (sockets): our
	 * listeners go behind a gate (dofi_gate.c). */
	uint8_t cm_gate;
	/* Each connection is a kernel TCP socket, whose state tells a peer
	 * that stopped answering: the link watch runs (dofi_cm_msg.c). */
	uint8_t kernel_tcp;
	/* Memory is registered in FI_MR_BASIC mode (virtual addresses,
	 * provider keys): the core under a utility provider drops
	 * FI_MR_VIRT_ADDR otherwise (tcp;ofi_rxm, dofi_ia_open). */
	uint8_t mr_basic;
	/* CQs get no wait object: the progress thread polls them on a timer
	 * (tcp;ofi_rxm on 1.17 crashes in fi_trywait beside a consumer's
	 * thread; rxd's is unusable, nap_us, and costs each endpoint three
	 * descriptors for its udp CQ's). */
	uint8_t cq_nowait;
	/* A peer's address stays in the AV after its connection ends: rxm
	 * keeps its connection to an fi_addr_t past fi_av_remove, and the
	 * next insert reuses the index (dofi_cm_rdm.c). Elsewhere it goes
	 * (shm maps every entry's region when an endpoint is enabled). */
	uint8_t av_keep;
	/*
	 * Each connection's endpoint binds an AV of its own (dofi_cm_rdm.c):
	 * shm holds 256 peers an AV and maps each peer inserted into every
	 * endpoint bound to the AV, whose SAR buffers it shares among them.
	 */
	uint8_t av_per_ep;
	/*
	 * Some error completions carry a negative errno in err (shm before
	 * libfabric 2.5: a truncated receive's is -FI_ETRUNC), which
	 * dofi_dto_complete_err reads as the positive one.
	 */
	uint8_t cq_err_negated;
	/*
	 * A request posted while an RDMA Read (or an atomic: what the
	 * target answers) is outstanding can overtake requests the fabric
	 * queued behind the Read, and Reads beside large Sends stall (rxd,
	 * libfabric 1.17 to 2.6): such a post waits until the Read is
	 * reported (dofi_dto_fence, dofi_dto.c; DOFI_FENCE_READ in
	 * ia->fence, which raises late_order where it is none).
	 */
	uint8_t read_fence;
	/*
	 * A wait over CQs without an fd naps this many us rather than 1 ms
	 * (dofi_wait_poll). rxd's CQ hands out no fd (no fi_control; and
	 * an endpoint's close leaves its entry in the CQ's wait, so
	 * fi_trywait there reads freed memory, libfabric 1.17), and its
	 * window only moves when its CQ is read. OFED's dtest over rxd:
	 * 73 s on 1 ms naps, 31-34 s on 250 us ones, 26 s on 100 us (its
	 * 4 MiB RDMA Writes at 142, 301-339 and 400 MB/s); a waiter that
	 * nothing reaches takes 2.5% of a core on 1 ms naps and 7.5% on
	 * 250 us ones (a quiet machine).
	 */
	uint16_t nap_us;
	/*
	 * Reads of a CQ without an fd one nap of a hot wait makes, back to
	 * back (dofi_arm_slice): a wait whose EVD or CNO returned an event
	 * within DOFI_WAIT_BURST_MS. rxm (libfabric 1.17) handles one
	 * completion of its tcp endpoints a read of its queue
	 * (FI_OFI_RXM_COMP_PER_PROGRESS, 1 by default), so a 4 MiB message,
	 * 256 segments of 16 KiB, took 256 naps of 1 ms: OFED dtest's 4 MiB
	 * ping-pong took 238 ms a round trip. 16, 32, 64 and 128 reads a
	 * nap: 21, 13, 8.7 and 5.7 ms, for 0.5%, 1.1%, 2.2% and 4.4% of a
	 * core more while the wait is hot. Raising
	 * FI_OFI_RXM_COMP_PER_PROGRESS to 128 instead (6.4 ms) cost every
	 * polled 8-byte round trip 0.75 us (4.9 against 4.1, raw alike):
	 * each read that finds a completion reads tcp's queue once more.
	 */
	uint8_t nap_reads;
	/*
	 * An endpoint's transmit queue holds at least twice the fabric's
	 * window of packets, whatever the consumer's max_request_dtos
	 * (ia->tx_size_min). rxd (libfabric 1.17) opens its udp CQ with room
	 * for its transmit and receive queues only (rxd_dg_cq_open), but
	 * sends a peer up to its window of packets (FI_OFI_RXD_MAX_UNACKED)
	 * besides its acknowledgements, whatever its transmit queue; and udp
	 * writes a receive's completion into that CQ without looking for
	 * room (udpx_ep_progress). Full, the CQ loses its oldest entry: a
	 * packet whose send completion was lost stays in use, acknowledged
	 * but never freed, and its message never completes (OFED's
	 * dtestsrq: queues of one, 4 KiB messages of three packets).
	 */
	uint8_t tx_window_room;
	/*
	 * A message longer than its receive completes as a success, cut to
	 * the receive's length, with no -FI_ETRUNC (rxd, libfabric 1.17 to
	 * 2.6: rxd_match_rx and rxd_progress_unexp_list report the lesser
	 * of the two lengths). Each receive then ends in one more segment,
	 * the IA's sink (ia->recv_sink): a message longer than the
	 * consumer's segments spills into it, its completion's length
	 * exceeds the receive's, and dofi_dto_complete reports
	 * DAT_DTO_ERR_LOCAL_LENGTH. The IA offers one segment fewer.
	 */
	uint8_t trunc_silent;
} dofi_traits_t;

/* The row for a libfabric provider name (never NULL). */
const dofi_traits_t *dofi_traits_lookup(const char *prov_name);

/* ---- the IA -------------------------------------------------------------- */

/* How the IA carries an RDMA Write with immediate data (dofi_ext_attr.c). */
enum {
	DOFI_IMMED_NONE,
	/* fi_writedata: the fabric consumes a receive (FI_RX_CQ_DATA). */
	DOFI_IMMED_WRITEDATA,
	/* An RDMA Write, then an empty message whose CQ data holds the
	 * immediate data and the write's length, consuming the receive. */
	DOFI_IMMED_SENDDATA,
};

/* What the IB extension does on the IA's fabric (dofi_ext_attr.c). */
typedef struct dofi_ia_ext {
	uint8_t immed; /* DOFI_IMMED_* */
	uint8_t fetch_add;
	uint8_t cmp_swap;
	char mtu[16]; /* DAT_IB_TRANSPORT_MTU's value */
} dofi_ia_ext_t;

typedef enum {
	DOFI_PROGRESS_AUTO,
	DOFI_PROGRESS_THREAD,
	DOFI_PROGRESS_NONE,
} dofi_progress_mode_t;

typedef struct dofi_ia {
	dofi_obj_t obj;
	dofi_prov_t *prov;
	pthread_mutex_t lock; /* control path: objects, states, CM */
	struct fi_info *info;
	struct fid_fabric *fabric;
	dofi_dom_t dom0; /* the IA's domain, head of the domain list */
	const dofi_cm_ops_t *cm_ops; /* the connection backend */
	void *cm;                    /* its state */
	const dofi_ctl_ops_t *ctl;   /* the layers above, for those below */
	dofi_evd_t *async_evd;
	int async_evd_ours;
	struct sockaddr_in addr;
	size_t cm_data_size; /* libfabric's, including our header */
	DAT_IA_ATTR ia_attr;
	DAT_PROVIDER_ATTR prov_attr;
	DAT_NAMED_ATTR named[16];
	DAT_NAMED_ATTR transport[4];
	char names[4][64];
	dofi_list_t objs[DOFI_OBJ_LAST];
	/* The CM's timers and watch list (dofi_cm.c), under lock; its
	 * kicked EPs, a lock-free stack. */
	dofi_timers_t timers;
	dofi_list_t watch;
	struct dofi_ep *_Atomic kicks;
	/*
	 * Requests waiting for room (dofi_defer.c): the EPs that hold some,
	 * how many of them (read where completions are read, so that those
	 * post them), and the lock of the list and of every EP's queue.
	 */
	struct dofi_ep *defer_eps;
	_Atomic uint32_t defer_neps;
	pthread_mutex_t defer_lock;
	/* Requests posted from the queues so far (the thread's backoff). */
	_Atomic uint64_t defer_posted;
	/* lmr_context -> LMR, lock-free reads: chunked table. */
	dofi_lmr_t **lmr_chunks[256];
	uint32_t lmr_next;
	_Atomic uint32_t key_next;
	int virt_addr;               /* FI_MR_VIRT_ADDR in effect */
	int mr_local;                /* FI_MR_LOCAL: descriptors required */
	int prov_key;                /* FI_MR_PROV_KEY */
	const dofi_traits_t *traits; /* the fabric's (dofi_traits.c) */
	/* Extra op flags for RDMA writes: FI_DELIVERY_COMPLETE where a
	 * transmit completion would hide a target's refusal, or where a
	 * message must wait for the data (DOFI_FENCE_WRITE); quiet_...: those
	 * of a write whose completion the consumer does not see. */
	uint64_t write_flags;
	uint64_t quiet_write_flags;
	/* The least transmit queue of its endpoints (traits->tx_window_room,
	 * dofi_ia_tx_size_min); 0: the consumer's max_request_dtos. */
	size_t tx_size_min;
	/* DAPL_OFI_WAIT_HOT in ns (0: off): how long after a wait returned
	 * an event the EVD's waits nap short where the fabric has no fd
	 * (dofi_evd_block). */
	uint64_t wait_hot_ns;
	/* What requests wait for before they are posted (DOFI_FENCE_*,
	 * dofi_dto_fence), and traits->late_order, raised to DOFI_ORDER_LATE
	 * where a fence needs it: read once per post (dofi_fast.h). */
	uint8_t fence;
	uint8_t late_order;
	/* Receives end in the sink segment (traits->trunc_silent; not where
	 * the fabric wants a descriptor for it, FI_MR_LOCAL): what spills
	 * past a receive lands in recv_sink, which nobody reads. */
	uint8_t trunc_sink;
	char recv_sink[8];
	/* progress */
	dofi_progress_mode_t progress_mode;
	pthread_t progress_thread;
	int progress_running; /* the thread runs; atomic accesses */
	/*
	 * auto on a fabric that progresses data only when called: the thread
	 * starts when first needed (dofi_progress_need); 0 not yet asked,
	 * 1 asked (started, or failed to and left to the consumer).
	 */
	_Atomic int progress_asked;
	dofi_list_t progress_link; /* among the process's IAs */
	int stop_fd;
	/* A consumer polled a CR or connection EVD since the thread's last
	 * look: it reads the EQ itself. */
	_Atomic int cm_polled;
	/* With no progress thread, an EP was kicked: the CM has to act on
	 * it at the next dequeue (dofi_evd_dequeue). */
	_Atomic int cm_due;
	pthread_mutex_t cm_read_lock; /* one reader of CM events at a time */
	/* When the next data walk of a wait for connection events may
	 * start (dofi_cm_walk_due). */
	_Atomic uint64_t cm_walk_ns;
	/* Peer ends reported (dofi_cm_up_peer_end), and their count when
	 * the last walk began: a walk that found some may find more. */
	_Atomic uint64_t cm_peer_ends;
	_Atomic uint64_t cm_walk_ends;
	/* The IB extension (dofi_ext.c): what the fabric offers, whether
	 * the counters run, and the IA's counters. */
	dofi_ia_ext_t ext;
	uint8_t counting;
	uint64_t cnt[DCNT_IA_ALL_COUNTERS];
	int srq_count; /* SRQs open (ia->lock), at most ia_attr.max_srqs */
} dofi_ia_t;

/*
 * What the data path (dofi_dto.c, dofi_evd.c, dofi_fast.h), the progress
 * thread and the EP code call in the layers above them: the connection
 * model (dofi_cm.c) and the progress thread (dofi_progress.c). The files
 * are layered, each calling only into those below it:
 *
 *   dofi_prov.c                       the DAT_PROVIDER table
 *   dofi_ext.c                        the IB extension's calls
 *   dofi_ia.c                         the IA; picks the backend
 *   dofi_cm_msg.c, dofi_cm_rdm.c      the connection backends
 *   dofi_cm.c                         the DAT connection model
 *   dofi_ep.c                         EPs
 *   dofi_srq.c                        shared receive queues
 *   dofi_mem.c                        domains, PZs, LMRs, RMRs
 *   dofi_progress.c                   the progress thread
 *   dofi_dto.c, dofi_evd.c,           the data path (one circle)
 *   dofi_ext_dto.c
 *   dofi_gate.c                       sockets' listener gate
 *   dofi_status.c, _traits, _map,     leaves
 *   _timer, _cm_hdr, _instance, _ext_attr
 *   dofi_util.c                       the lowest leaf
 *
 * Calls upward go through this table, which the IA fills in when it opens
 * (dofi_ia.c), so that no file below links against one above it
 * (test/check_layers.sh checks the objects). None of these is on the
 * data path's common case but srq_recv_done, which only the receive
 * completions of EPs on an SRQ call.
 */
struct dofi_ctl_ops {
	/* dofi_cm.c: see the declarations of the same names. */
	void (*cm_progress)(dofi_ia_t *ia);
	void (*cm_progress_until)(dofi_ia_t *ia, dofi_evd_t *until);
	void (*cm_progress_events)(dofi_ia_t *ia);
	int (*cm_timers_pending)(dofi_ia_t *ia);
	int (*cm_wait_fd)(dofi_ia_t *ia, int *ready);
	void (*cm_break_later)(dofi_ep_t *ep);
	void (*cm_op_done)(dofi_op_t *op, int err);
	dof_status_t (*cm_ep_init)(dofi_ep_t *ep);
	void (*cm_ep_teardown)(dofi_ep_t *ep);
	void (*cm_ep_fini)(dofi_ep_t *ep);
	/* Look at ep at the CM's next pass (dofi_cm_kick, lock-free). */
	void (*cm_kick)(dofi_ep_t *ep);
	/* dofi_progress.c */
	void (*progress_need)(dofi_ia_t *ia, const char *why);
	void (*progress_watch)(dofi_ia_t *ia);
	/* dofi_srq.c: a receive of an EP on an SRQ is over (completed or
	 * flushed, its op given back); the EP takes the next one. Only EPs
	 * on an SRQ call it. */
	void (*srq_recv_done)(dofi_ep_t *ep);
};

#define DOFI_LMR_CHUNK     4096u
#define DOFI_LMR_SLOT_BITS 20
#define DOFI_LMR_SLOT_MASK ((1u << DOFI_LMR_SLOT_BITS) - 1)
#define DOFI_LMR_SLOTS     (256u * DOFI_LMR_CHUNK)

/* ---- object helpers (dofi_util.c) ---------------------------------------- */

void *dofi_obj_alloc(dofi_ia_t *ia, dofi_obj_type_t type, size_t size,
                     const DAT_PROVIDER *table);
/* The same with ia->lock already held. */
void *dofi_obj_alloc_locked(dofi_ia_t *ia, dofi_obj_type_t type, size_t size,
                            const DAT_PROVIDER *table);
void dofi_obj_free(void *obj);
/* The object of that type behind a handle, or NULL (and a log line). */
void *dofi_obj_get(const void *handle, dofi_obj_type_t type, const char *func);

/*
 * Whether a handle can point to an object at all, read nothing: not NULL
 * nor a small integer (an IA handle of libdat2 is one), aligned, and not a
 * kernel address (bit 63 set on x86-64, bit 55 on AArch64, where the top
 * byte may hold a tag). A handle that passes may be read; only a pointer
 * into unmapped memory can still fault.
 */
#if defined(__x86_64__)
#define DOFI_KERNEL_BIT 63
#elif defined(__aarch64__)
#define DOFI_KERNEL_BIT 55
#endif
#define DOFI_HANDLE_MIN 65536u
static inline int dofi_handle_shaped(const void *handle)
{
	uintptr_t v = (uintptr_t)handle;

	if (v < DOFI_HANDLE_MIN || (v & (_Alignof(dofi_obj_t) - 1)) != 0)
		return 0;
#ifdef DOFI_KERNEL_BIT
	if ((v >> DOFI_KERNEL_BIT) & 1)
		return 0;
#endif
	return 1;
}

static inline void *dofi_obj_fast(const void *handle, dofi_obj_type_t type)
{
	const dofi_obj_t *o = handle;

	if (!dofi_handle_shaped(o) ||
	    atomic_load_explicit(&o->magic, memory_order_relaxed) !=
	            DOFI_MAGIC_LIVE ||
	    o->type != type)
		return NULL;
	return (void *)o;
}

/* n bytes whose pages are resident only once touched (n >= 16 KiB: mmap),
 * and their release with the same n. */
void *dofi_lazy_alloc(size_t n);
void dofi_lazy_free(void *p, size_t n);
/* The last IA name goes (dat_provider_fini): the blocks and the freed
 * objects kept for reuse go back to the system. */
void dofi_lazy_release(void);
void dofi_graves_release(void);
/* dofi_status.c: a libfabric error (negative or not) as a status, where
 * libfabric returns it; a status as the DAT_RETURN of a DAT call. */
dof_status_t dofi_fi_status(int fi_err);
DAT_RETURN dofi_status_to_dat(dof_status_t st);
DAT_IA_HANDLE dofi_ia_consumer_handle(dofi_ia_t *ia);
uint64_t dofi_now_ns(void);
/*
 * libfabric's sockets provider writes to socket pairs whose reading end
 * its own threads may have closed (a listener's, on fi_close of its
 * passive endpoint): that raises SIGPIPE, which would end the process.
 * Control-path calls that can do so, or that start libfabric threads
 * (which inherit the mask), run with SIGPIPE blocked; a SIGPIPE they
 * raised is taken before the mask is restored. Never on the data path.
 */
void dofi_nopipe_begin(sigset_t *old);
void dofi_nopipe_end(const sigset_t *old);
/* Set once an IA opens on a provider not known to write with
 * MSG_NOSIGNAL (dofi_nopipe_need); tcp, verbs and efa never raise SIGPIPE. */
extern _Atomic int dofi_nopipe_on;
void dofi_nopipe_need(void);
#define DOFI_NOPIPE(call)                                                     \
	__extension__({                                                       \
		sigset_t dofi_old_;                                           \
		int dofi_rc_, dofi_on_ = atomic_load_explicit(                \
		                      &dofi_nopipe_on, memory_order_relaxed); \
		if (dofi_on_)                                                 \
			dofi_nopipe_begin(&dofi_old_);                        \
		dofi_rc_ = (int)(call);                                       \
		if (dofi_on_)                                                 \
			dofi_nopipe_end(&dofi_old_);                          \
		dofi_rc_;                                                     \
	})

/* ---- entry points, one file per object ----------------------------------- */

/* dofi_ia.c */
DAT_RETURN dofi_ia_open(const DAT_NAME_PTR, DAT_COUNT, DAT_EVD_HANDLE *,
                        DAT_IA_HANDLE *);
DAT_RETURN dofi_ia_query(DAT_IA_HANDLE, DAT_EVD_HANDLE *, DAT_IA_ATTR_MASK,
                         DAT_IA_ATTR *, DAT_PROVIDER_ATTR_MASK,
                         DAT_PROVIDER_ATTR *);
DAT_RETURN dofi_ia_close(DAT_IA_HANDLE, DAT_CLOSE_FLAGS);
dofi_prov_t *dofi_prov_find(const char *ia_name);
/* The IA names registered (dofi_util.c): add one; remove one, 1 when it
 * was the last. */
void dofi_prov_add(dofi_prov_t *p);
int dofi_prov_remove(dofi_prov_t *p);
/* dofi_mem.c */
/* Open a domain and its null CQ on the IA's fabric; libfabric's error. */
int dofi_dom_open(dofi_ia_t *ia, dofi_dom_t *dom);
void dofi_dom_close(dofi_dom_t *dom);
DAT_RETURN dofi_pz_create(DAT_IA_HANDLE, DAT_PZ_HANDLE *);
DAT_RETURN dofi_pz_query(DAT_PZ_HANDLE, DAT_PZ_PARAM_MASK, DAT_PZ_PARAM *);
DAT_RETURN dofi_pz_free(DAT_PZ_HANDLE);
DAT_RETURN dofi_lmr_create(DAT_IA_HANDLE, DAT_MEM_TYPE, DAT_REGION_DESCRIPTION,
                           DAT_VLEN, DAT_PZ_HANDLE, DAT_MEM_PRIV_FLAGS,
                           DAT_VA_TYPE, DAT_LMR_HANDLE *, DAT_LMR_CONTEXT *,
                           DAT_RMR_CONTEXT *, DAT_VLEN *, DAT_VADDR *);
DAT_RETURN dofi_lmr_query(DAT_LMR_HANDLE, DAT_LMR_PARAM_MASK, DAT_LMR_PARAM *);
DAT_RETURN dofi_lmr_free(DAT_LMR_HANDLE);
DAT_RETURN dofi_lmr_sync_rdma_read(DAT_IA_HANDLE, const DAT_LMR_TRIPLET *,
                                   DAT_VLEN);
DAT_RETURN dofi_lmr_sync_rdma_write(DAT_IA_HANDLE, const DAT_LMR_TRIPLET *,
                                    DAT_VLEN);
DAT_RETURN dofi_rmr_create(DAT_PZ_HANDLE, DAT_RMR_HANDLE *);
DAT_RETURN dofi_rmr_query(DAT_RMR_HANDLE, DAT_RMR_PARAM_MASK, DAT_RMR_PARAM *);
DAT_RETURN dofi_rmr_bind(DAT_RMR_HANDLE, DAT_LMR_HANDLE,
                         const DAT_LMR_TRIPLET *, DAT_MEM_PRIV_FLAGS,
                         DAT_VA_TYPE, DAT_EP_HANDLE, DAT_RMR_COOKIE,
                         DAT_COMPLETION_FLAGS, DAT_RMR_CONTEXT *);
DAT_RETURN dofi_rmr_free(DAT_RMR_HANDLE);
/* The LMR for an lmr_context, or NULL. Lock-free. */
/* Free what the IA still holds (abrupt close). */
void dofi_mem_release_all(dofi_ia_t *ia);

/* dofi_evd.c */
DAT_RETURN dofi_evd_create(DAT_IA_HANDLE, DAT_COUNT, DAT_CNO_HANDLE,
                           DAT_EVD_FLAGS, DAT_EVD_HANDLE *);
DAT_RETURN dofi_evd_query(DAT_EVD_HANDLE, DAT_EVD_PARAM_MASK, DAT_EVD_PARAM *);
DAT_RETURN dofi_evd_modify_cno(DAT_EVD_HANDLE, DAT_CNO_HANDLE);
DAT_RETURN dofi_evd_enable(DAT_EVD_HANDLE);
DAT_RETURN dofi_evd_disable(DAT_EVD_HANDLE);
DAT_RETURN dofi_evd_wait(DAT_EVD_HANDLE, DAT_TIMEOUT, DAT_COUNT, DAT_EVENT *,
                         DAT_COUNT *);
DAT_RETURN dofi_evd_resize(DAT_EVD_HANDLE, DAT_COUNT);
DAT_RETURN dofi_evd_post_se(DAT_EVD_HANDLE, const DAT_EVENT *);
DAT_RETURN dofi_evd_dequeue(DAT_EVD_HANDLE, DAT_EVENT *);
DAT_RETURN dofi_evd_free(DAT_EVD_HANDLE);
DAT_RETURN dofi_evd_set_unwaitable(DAT_EVD_HANDLE);
DAT_RETURN dofi_evd_clear_unwaitable(DAT_EVD_HANDLE);
DAT_RETURN dofi_cno_create(DAT_IA_HANDLE, DAT_OS_WAIT_PROXY_AGENT,
                           DAT_CNO_HANDLE *);
DAT_RETURN dofi_cno_modify_agent(DAT_CNO_HANDLE, DAT_OS_WAIT_PROXY_AGENT);
DAT_RETURN dofi_cno_query(DAT_CNO_HANDLE, DAT_CNO_PARAM_MASK, DAT_CNO_PARAM *);
DAT_RETURN dofi_cno_free(DAT_CNO_HANDLE);
DAT_RETURN dofi_cno_fd_create(DAT_IA_HANDLE, DAT_FD *, DAT_CNO_HANDLE *);
DAT_RETURN dofi_cno_trigger(DAT_CNO_HANDLE, DAT_EVD_HANDLE *);
DAT_RETURN dofi_cno_wait(DAT_CNO_HANDLE, DAT_TIMEOUT, DAT_EVD_HANDLE *);
/*
 * Queue an event on an EVD (CM, RMR bind, software, async). Moves what
 * the EVD's CQ holds into the ring first, so completions that happened
 * before come before it. DOF_ERR_OVERFLOW when the EVD is full (the event
 * is still queued; overflow is reported on the async EVD).
 */
dof_status_t dofi_evd_post(dofi_evd_t *evd, const DAT_EVENT *event);
/* Queue an event on the ring, evd->lock held (no drain, no notify). */
dof_status_t dofi_evd_push_locked(dofi_evd_t *evd, const DAT_EVENT *ev);
dofi_evd_t *dofi_evd_internal_create(dofi_ia_t *ia, DAT_COUNT qlen,
                                     DAT_EVD_FLAGS flags);
void dofi_evd_destroy(dofi_evd_t *evd);
/*
 * The EVD's CQ in dom that an EP binds, counted: one with fewer than
 * DOFI_CQ_SHARD EPs, opened on first use (an EP of another PZ, or one
 * more EP than the CQs hold). NULL when the EVD has no CQ or the open
 * failed. Its release once the EP's endpoint is closed. ia->lock held.
 */
struct fid_cq *dofi_evd_cq_get(dofi_evd_t *evd, dofi_dom_t *dom);
void dofi_evd_cq_put(dofi_evd_t *evd, struct fid_cq *cq);
/*
 * What the CM keeps with one CQ of evd (the one an EP is bound to): the
 * rounds of its last two kinds of reads (dofi_cm_msg.c). ia->lock held;
 * NULL when cq is not the EVD's.
 */
uint64_t *dofi_evd_cq_marks(dofi_evd_t *evd, struct fid_cq *cq);
/* dofi_evd_flush_cq for one CQ of evd only: the one an EP is bound to. */
void dofi_evd_flush_one(dofi_evd_t *evd, struct fid_cq *cq, int all);
/*
 * Move the EVD's CQ completions into its ring: up to qlen events, or all
 * of them (EP teardown, before the contexts they name are freed).
 */
void dofi_evd_flush_cq(dofi_evd_t *evd, int all);
/*
 * cq_fd of a CQ with an FI_WAIT_POLLFD wait object (dofi_ia_t.cq_pollfd):
 * its fds come from FI_GETWAIT (dofi_cq_fds). tcp then poll()s its
 * sockets instead of keeping them in an epoll set, which costs every
 * arriving message an epoll callback (about 0.4 us of a loopback
 * ping-pong).
 */
#define DOFI_CQ_POLLFD (-2)
/*
 * Put a CQ's wait fds (fd: its cq_fd) in fds, which has room for room:
 * how many, or -1 when it has none or they do not fit.
 */
int dofi_cq_fds(struct fid_cq *cq, int fd, struct pollfd *fds, int room);
/* Drive the CQ without consuming completions (progress thread). */
void dofi_evd_progress(dofi_evd_t *evd);
/*
 * Whether an EVD on ia->objs is set up: it is put there when allocated,
 * before its lock, ring and CQ are, and a walker of the list (the progress
 * thread, the CM, a CNO) must leave it alone until then.
 */
static inline int dofi_evd_ready(dofi_evd_t *evd)
{
	return atomic_load_explicit(&evd->ready, memory_order_acquire);
}

/* dofi_ep.c */
DAT_RETURN dofi_ep_create(DAT_IA_HANDLE, DAT_PZ_HANDLE, DAT_EVD_HANDLE,
                          DAT_EVD_HANDLE, DAT_EVD_HANDLE, const DAT_EP_ATTR *,
                          DAT_EP_HANDLE *);
DAT_RETURN dofi_ep_create_with_srq(DAT_IA_HANDLE, DAT_PZ_HANDLE, DAT_EVD_HANDLE,
                                   DAT_EVD_HANDLE, DAT_EVD_HANDLE,
                                   DAT_SRQ_HANDLE, const DAT_EP_ATTR *,
                                   DAT_EP_HANDLE *);
DAT_RETURN dofi_ep_query(DAT_EP_HANDLE, DAT_EP_PARAM_MASK, DAT_EP_PARAM *);
DAT_RETURN dofi_ep_modify(DAT_EP_HANDLE, DAT_EP_PARAM_MASK,
                          const DAT_EP_PARAM *);
DAT_RETURN dofi_ep_get_status(DAT_EP_HANDLE, DAT_EP_STATE *, DAT_BOOLEAN *,
                              DAT_BOOLEAN *);
DAT_RETURN dofi_ep_free(DAT_EP_HANDLE);
DAT_RETURN dofi_ep_reset(DAT_EP_HANDLE);
DAT_RETURN dofi_ep_recv_query(DAT_EP_HANDLE, DAT_COUNT *, DAT_COUNT *);
DAT_RETURN dofi_ep_set_watermark(DAT_EP_HANDLE, DAT_COUNT, DAT_COUNT);
/*
 * An EP with a stream on evd and its other one on other: counted (sign 1)
 * or forgotten (-1) in evd->partner. ia->lock held.
 */
void dofi_ep_partner(dofi_evd_t *evd, dofi_evd_t *other, int sign);
/*
 * Open, bind and enable an fi_ep for ep (info from the IA or a request)
 * in its PZ's domain, bound to bind (the backend's EQ or AV) and the
 * EVDs' CQs, with one slot more each way for a backend's own message.
 * Not yet published in ep->fep: the caller posts its own receive first,
 * then dofi_ep_publish_fep. ia->lock held.
 */
dof_status_t dofi_ep_open_fep(dofi_ep_t *ep, struct fi_info *info,
                              struct fid *bind,
                              int (*aside)(dofi_ep_t *, struct fid_ep *),
                              struct fid_ep **out, int *extra);
/* Publish fep as ep->fep and post the receives queued meanwhile. */
dof_status_t dofi_ep_publish_fep(dofi_ep_t *ep, struct fid_ep *fep);
/* Close the fi_ep, flushing every posted DTO. ia->lock held. */
void dofi_ep_close_fep(dofi_ep_t *ep);
/* Close an fi_ep dofi_ep_open_fep opened that was never published, and
 * give back the CQs it took. ia->lock held. */
void dofi_ep_drop_fep(dofi_ep_t *ep, struct fid_ep *fep);
/* Fill attributes with the provider's defaults, clamped to the IA. */
void dofi_ep_default_attr(dofi_ia_t *ia, DAT_EP_ATTR *attr);
dofi_ep_t *dofi_ep_alloc(dofi_ia_t *ia, dofi_pz_t *pz, dofi_evd_t *recv,
                         dofi_evd_t *req, dofi_evd_t *conn,
                         const DAT_EP_ATTR *attr, DAT_RETURN *ret);
void dofi_ep_destroy(dofi_ep_t *ep);

/* dofi_srq.c */
DAT_RETURN dofi_srq_create(DAT_IA_HANDLE, DAT_PZ_HANDLE, DAT_SRQ_ATTR *,
                           DAT_SRQ_HANDLE *);
DAT_RETURN dofi_srq_free(DAT_SRQ_HANDLE);
DAT_RETURN dofi_srq_post_recv(DAT_SRQ_HANDLE, DAT_COUNT, DAT_LMR_TRIPLET *,
                              DAT_DTO_COOKIE);
DAT_RETURN dofi_srq_query(DAT_SRQ_HANDLE, DAT_SRQ_PARAM_MASK, DAT_SRQ_PARAM *);
DAT_RETURN dofi_srq_resize(DAT_SRQ_HANDLE, DAT_COUNT);
DAT_RETURN dofi_srq_set_lw(DAT_SRQ_HANDLE, DAT_COUNT);
/* ep (new, not yet the consumer's) takes its receives from srq. */
void dofi_srq_attach(dofi_srq_t *srq, dofi_ep_t *ep);
/* ep goes (EP free, IA close): off its SRQ. ia->lock held. */
void dofi_srq_detach(dofi_ep_t *ep);
/* ep's connection is established: it takes receives. ia->lock held. */
void dofi_srq_ep_start(dofi_ep_t *ep);
/* ep's fi_ep is about to close: it takes no more. */
void dofi_srq_ep_stop(dofi_ep_t *ep);
/*
 * ep's connection ended: it takes no more, and the IA's async EVD hears
 * DAT_ASYNC_ERROR_EP_BROKEN for it, as OFED reports InfiniBand's last
 * WQE reached. ia->lock held.
 */
void dofi_srq_ep_down(dofi_ep_t *ep);
/* ep was kicked: a low watermark its SRQ passed on the completion path
 * is posted. ia->lock held. */
void dofi_srq_kicked(dofi_ep_t *ep);
/* The IA closes: its SRQs go (their EPs went first). ia->lock held. */
void dofi_srq_release_all(dofi_ia_t *ia);
/* ctl->srq_recv_done (dofi_ctl_ops_t). */
void dofi_srq_recv_done(dofi_ep_t *ep);
/* The IA's limits (ia_attr.max_srqs, max_recv_per_srq). */
#define DOFI_SRQ_MAX      4096
#define DOFI_SRQ_MAX_RECV (1 << 20)

/* dofi_dto.c */
DAT_RETURN dofi_ep_post_send(DAT_EP_HANDLE, DAT_COUNT, DAT_LMR_TRIPLET *,
                             DAT_DTO_COOKIE, DAT_COMPLETION_FLAGS);
DAT_RETURN dofi_ep_post_recv(DAT_EP_HANDLE, DAT_COUNT, DAT_LMR_TRIPLET *,
                             DAT_DTO_COOKIE, DAT_COMPLETION_FLAGS);
DAT_RETURN dofi_ep_post_rdma_read(DAT_EP_HANDLE, DAT_COUNT, DAT_LMR_TRIPLET *,
                                  DAT_DTO_COOKIE, const DAT_RMR_TRIPLET *,
                                  DAT_COMPLETION_FLAGS);
DAT_RETURN dofi_ep_post_rdma_write(DAT_EP_HANDLE, DAT_COUNT, DAT_LMR_TRIPLET *,
                                   DAT_DTO_COOKIE, const DAT_RMR_TRIPLET *,
                                   DAT_COMPLETION_FLAGS);
dof_status_t dofi_pool_init(dofi_pool_t *pool, uint32_t size,
                            struct dofi_ep *ep, struct iovec *iov, void **desc,
                            uint32_t niov, size_t extra_bytes);
/* An op never handed out before; NULL when all have been. */
dofi_op_t *dofi_pool_fresh(dofi_pool_t *pool);
/* How many ops a scan of the pool has to look at. */
static inline uint32_t dofi_pool_seen(const dofi_pool_t *pool)
{
	return atomic_load_explicit(&pool->fresh, memory_order_acquire);
}
void dofi_pool_fini(dofi_pool_t *pool);
/* dofi_pool_get/put, dofi_lmr_lookup, dofi_dto_complete: dofi_fast.h */
/* Ops of the pool now posted (a scan: for queries, not the data path). */
uint32_t dofi_pool_used(const dofi_pool_t *pool);
/*
 * The ops of the pool now posted, in posting order (their seq): a
 * malloc'd array of *n, for the caller to free; NULL without memory (the
 * caller then goes in the pool's order). A scan and a sort: connection
 * ends, not the data path.
 */
dofi_op_t **dofi_pool_posted(dofi_pool_t *pool, uint32_t *n);
/*
 * An operation of ep failed with err (no flush): ep in error, and its
 * connection broken (cm_break_later) unless err is FI_EADDRNOTAVAIL.
 */
void dofi_ep_failed(dofi_ep_t *ep, int err);
/*
 * A receive whose completion says len bytes, more than it was posted
 * with: the message spilled into the IA's sink (ep->recv_sink). Fills ev
 * with DAT_DTO_ERR_LOCAL_LENGTH, as a fabric's truncation error, and the
 * connection breaks; returns 0. evd->lock held.
 */
int dofi_dto_recv_overrun(dofi_op_t *op, size_t len, DAT_EVENT *ev,
                          dofi_evd_t *evd);
/* The caller holds evd->lock (as for dofi_dto_complete). */
int dofi_dto_complete_err(const struct fi_cq_err_entry *err, DAT_EVENT *event,
                          dofi_evd_t *evd);
/*
 * The completion (err 0) or error of a request that may have to wait for
 * late ones posted before it (ia->traits->late_order), evd->lock held:
 * the events it releases go to the EVD's ring; returns 1 (nothing for the
 * caller), as dofi_dto_complete does then.
 */
int dofi_dto_order(dofi_op_t *op, int err, DAT_SEG_LENGTH len, dofi_evd_t *evd);
/* A new libfabric endpoint: nothing late, nothing held. */
void dofi_dto_order_reset(dofi_ep_t *ep);
/*
 * Queue ev (an RMR bind's completion) to follow the completion of the
 * request posted last, if that one is still outstanding; DOF_OK then.
 * Otherwise the caller posts it now.
 */
dof_status_t dofi_dto_post_after(dofi_ep_t *ep, const DAT_EVENT *ev);
/*
 * A request whose posted flag was DOFI_POSTED_AFTER is reported: queue
 * what waits behind it on the ring, after its own event (*ev, unless
 * suppress), and give the op back. evd->lock held. Returns 1: everything
 * went to the ring.
 */
int dofi_dto_after(dofi_op_t *op, DAT_EVENT *ev, dofi_evd_t *evd, int suppress);
/* The same after the flush of requests reported op. ia->lock held. */
void dofi_dto_after_flushed(dofi_op_t *op);
/* The connection is over: forget the held list (its requests stay
 * posted, for the flush of requests). ia->lock held. */
void dofi_dto_order_drop(dofi_ep_t *ep);
/* Post the receives queued while the EP had no fi_ep. */
dof_status_t dofi_dto_replay_recvs(dofi_ep_t *ep);
/*
 * What other files' posts share with dofi_dto.c's: the check of a
 * consumer's segments (a bad one sets *status: it completes in error,
 * posted with dofi_dto_fail), and the turn of a request whose post
 * failed (its posted flag 0).
 */
DAT_RETURN dofi_segs(dofi_ep_t *ep, DAT_COUNT nseg, const DAT_LMR_TRIPLET *segs,
                     DAT_COUNT max_iov, DAT_MEM_PRIV_FLAGS need,
                     struct iovec *iov, void **desc, size_t *count,
                     DAT_SEG_LENGTH *total, DAT_DTO_COMPLETION_STATUS *status);
DAT_RETURN dofi_dto_fail(dofi_ep_t *ep, dofi_evd_t *evd, uint8_t type,
                         DAT_DTO_COOKIE cookie,
                         DAT_DTO_COMPLETION_STATUS status);
void dofi_order_unposted(dofi_ep_t *ep, dofi_op_t *op);
/*
 * ia->fence: wait until the EP's late requests up to its fence mark have
 * completed, for a request that waits for the kinds waits (DOFI_FENCE_*;
 * dofi_fence_due says when a post must). DAT_SUCCESS, or the post's error
 * when the connection ended or they took too long.
 */
DAT_RETURN dofi_dto_fence(dofi_ep_t *ep, uint8_t waits);
/* How long a post waits for what it is fenced behind, at most. */
#define DOFI_FENCE_NS (20 * 1000000000ull)
/*
 * A backend's own zero-byte receive and send (DOFI_OP_CM_RECV/SEND), with
 * op one of its own (op->ep set). ia->lock held.
 */
dof_status_t dofi_dto_post_internal_recv(dofi_ep_t *ep, struct fid_ep *fep,
                                         dofi_op_t *op);
dof_status_t dofi_dto_send_internal(dofi_ep_t *ep, dofi_op_t *op);
/*
 * Report an op the caller took back from libfabric (posted exchanged
 * to 0) as flushed, and return it to its pool.
 */
void dofi_dto_flush_op(dofi_op_t *op);
/*
 * Report every op pool still has posted as flushed, each once, in posting
 * order (dofi_pool_posted; without memory, in the pool's order), with an
 * RMR bind's completion that followed one. ia->lock held.
 */
void dofi_pool_flush_posted(dofi_pool_t *pool);
/* Complete queued receives as flushed (no fi_ep will carry them). */
void dofi_dto_flush_queued(dofi_ep_t *ep);
/* One try at posting a request of the slow path's to fep. */
ssize_t dofi_req_post(dofi_ep_t *ep, struct fid_ep *fep, dofi_op_t *op,
                      uint8_t type, struct iovec *iov, void **desc,
                      size_t count, struct fi_rma_iov *rmap, uint64_t wflags);

/* dofi_defer.c: requests the fabric has no room for */
/* A request op's saved arguments while it waits. */
typedef struct dofi_defer {
	struct fi_rma_iov rma;
	uint64_t wflags;
	uint32_t count;
	/* fenced: posted once late_settled reaches fence (dofi_dto_fence's
	 * wait, taken over by the queue). */
	uint32_t fence;
	uint8_t fenced;
} dofi_defer_t;
/* Bytes of defer slots for a request pool of size ops (dofi_pool_init's
 * extra_bytes), and setting the EP's pointers into them. */
size_t dofi_defer_bytes(uint32_t size, uint32_t niov);
void dofi_defer_init(dofi_ep_t *ep, uint32_t niov);
/*
 * Post a request for the consumer (what dofi_req_post takes, op marked
 * posted): behind those waiting, else at once while the fabric finds
 * room soon, else into the EP's defer queue. fence (or NULL): the fence
 * mark it must wait for (dofi_dto_fence), read before the op was
 * numbered, where the EP's queue was not empty; it waits in the queue.
 * 0 when posted or queued; libfabric's error otherwise (-FI_EAGAIN also
 * when the connection ended meanwhile).
 */
ssize_t dofi_defer_post(dofi_ep_t *ep, struct fid_ep *fep, dofi_op_t *op,
                        uint8_t type, struct iovec *iov, void **desc,
                        size_t count, struct fi_rma_iov *rma, uint64_t wflags,
                        const uint32_t *fence);
/* Post the IA's waiting requests the fabric has room for now; whether
 * some still wait. */
int dofi_defer_drain(dofi_ia_t *ia);
/* Cheap where none wait: where completions are read. */
static inline int dofi_defer_kick(dofi_ia_t *ia)
{
	if (__builtin_expect(atomic_load_explicit(&ia->defer_neps,
	                                          memory_order_relaxed) == 0,
	                     1))
		return 0;
	return dofi_defer_drain(ia);
}
/* For a post that cannot queue (the IB extension's): wait until the EP's
 * queue is empty; DAT_SUCCESS, or the error when it took too long. */
DAT_RETURN dofi_defer_settle(dofi_ep_t *ep);
/*
 * The connection is over (before any flush of requests, and before its
 * fi_ep closes): the queue is forgotten, its requests stay posted for
 * the flush to report in posting order.
 */
void dofi_defer_drop(dofi_ep_t *ep);

/* dofi_cm.c: the DAT connection model (the seam: dofi_cm.h) */
DAT_RETURN dofi_ep_connect(DAT_EP_HANDLE, DAT_IA_ADDRESS_PTR, DAT_CONN_QUAL,
                           DAT_TIMEOUT, DAT_COUNT, const DAT_PVOID, DAT_QOS,
                           DAT_CONNECT_FLAGS);
DAT_RETURN dofi_ep_dup_connect(DAT_EP_HANDLE, DAT_EP_HANDLE, DAT_TIMEOUT,
                               DAT_COUNT, const DAT_PVOID, DAT_QOS);
DAT_RETURN dofi_ep_disconnect(DAT_EP_HANDLE, DAT_CLOSE_FLAGS);
DAT_RETURN dofi_psp_create(DAT_IA_HANDLE, DAT_CONN_QUAL, DAT_EVD_HANDLE,
                           DAT_PSP_FLAGS, DAT_PSP_HANDLE *);
DAT_RETURN dofi_psp_create_any(DAT_IA_HANDLE, DAT_CONN_QUAL *, DAT_EVD_HANDLE,
                               DAT_PSP_FLAGS, DAT_PSP_HANDLE *);
DAT_RETURN dofi_psp_query(DAT_PSP_HANDLE, DAT_PSP_PARAM_MASK, DAT_PSP_PARAM *);
DAT_RETURN dofi_psp_free(DAT_PSP_HANDLE);
DAT_RETURN dofi_rsp_create(DAT_IA_HANDLE, DAT_CONN_QUAL, DAT_EP_HANDLE,
                           DAT_EVD_HANDLE, DAT_RSP_HANDLE *);
DAT_RETURN dofi_rsp_query(DAT_RSP_HANDLE, DAT_RSP_PARAM_MASK, DAT_RSP_PARAM *);
DAT_RETURN dofi_rsp_free(DAT_RSP_HANDLE);
DAT_RETURN dofi_cr_query(DAT_CR_HANDLE, DAT_CR_PARAM_MASK, DAT_CR_PARAM *);
DAT_RETURN dofi_cr_accept(DAT_CR_HANDLE, DAT_EP_HANDLE, DAT_COUNT,
                          const DAT_PVOID);
DAT_RETURN dofi_cr_reject(DAT_CR_HANDLE, DAT_COUNT, const DAT_PVOID);
DAT_RETURN dofi_cr_handoff(DAT_CR_HANDLE, DAT_CONN_QUAL);
/* The IA's connection backend (chosen by dofi_ia.c) and its state. */
dof_status_t dofi_cm_ia_open(dofi_ia_t *ia, const dofi_cm_ops_t *ops);
/* Everything of the IA's is gone. ia->lock not held. */
void dofi_cm_ia_close(dofi_ia_t *ia);
/* The backend's state of a new EP. */
dof_status_t dofi_cm_ep_init(dofi_ep_t *ep);
/* Read and handle every pending CM event, then the timers. Safe from
 * any thread. */
void dofi_cm_progress(dofi_ia_t *ia);
/*
 * The same, stopping once an event is in until's ring (a consumer's
 * dequeue: it takes that one now and reads on at its next call).
 */
void dofi_cm_progress_until(dofi_ia_t *ia, dofi_evd_t *until);
/* The CM's events and timers only, no data progress (a DTO EVD's idle
 * dequeue: its own read moved its data). */
void dofi_cm_progress_events(dofi_ia_t *ia);
/* Deadlines that passed, conditions watched, EPs kicked. */
void dofi_cm_check_timers(dofi_ia_t *ia);
/* Whether the CM has anything pending that needs a look in time. */
int dofi_cm_timers_pending(dofi_ia_t *ia);
/* The CM's wait fd, armed (-1: none); *ready: events are in already. */
int dofi_cm_wait_fd(dofi_ia_t *ia, int *ready);
/*
 * A receive of the EP completed truncated: end the connection (BROKEN)
 * unless the fabric does. Error completion path; takes no lock.
 */
void dofi_cm_break_later(dofi_ep_t *ep);
/* An internal op of the backend's completed. Completion path. */
void dofi_cm_op_done(dofi_op_t *op, int err);
/* Tear down an EP's connection (EP free/reset, IA close). lock held. */
void dofi_cm_ep_teardown(dofi_ep_t *ep);
/* The same, and the backend's state goes (EP free). lock held. */
void dofi_cm_ep_fini(dofi_ep_t *ep);
void dofi_cm_sp_destroy(dofi_sp_t *sp);
void dofi_cm_cr_destroy(dofi_cr_t *cr);

/* dofi_ext.c: the IB extension (dat_ib_extensions.h) */
/* The ops table's handle_extendedop_func. */
DAT_RETURN dofi_ext_op(DAT_HANDLE handle, DAT_EXTENDED_OP op, va_list args);
/*
 * Point an IA name's ops table at the extension's own: dat_extension_op,
 * and the create, free and connection calls, which count on the IA while
 * its counters run and pass the call on.
 */
void dofi_ext_table(DAT_PROVIDER *table);

/* dofi_ext_attr.c: what the extension does on the IA's fabric */
/*
 * IA open: the entry fi_getinfo picked, or the same fabric's entry with
 * atomics as well (freeing the first) where the provider has them.
 */
struct fi_info *dofi_ext_info(dofi_ia_t *ia, struct fi_info *info);
/*
 * What the extension does on the IA's fabric (ia->ext; the domain is
 * open): sets the IA attributes' extension fields and appends the named
 * provider attributes of what it offers to named (room entries); how
 * many it appended.
 */
int dofi_ext_ia_attrs(dofi_ia_t *ia, DAT_IA_ATTR *a, DAT_NAMED_ATTR *named,
                      int room);

/* dofi_ext_dto.c: the extension's data path */
/* dat_ib_post_rdma_write_immed; dat_ib_post_fetch_and_add (type
 * DOFI_OP_EXT_FADD, v0 the addend) and dat_ib_post_cmp_and_swap
 * (DOFI_OP_EXT_CSWAP, v0 the swap value, v1 the compare value). */
DAT_RETURN dofi_ext_write_imm(DAT_EP_HANDLE h, DAT_COUNT nseg,
                              DAT_LMR_TRIPLET *segs, DAT_DTO_COOKIE cookie,
                              const DAT_RMR_TRIPLET *remote, DAT_UINT32 imm,
                              DAT_COMPLETION_FLAGS flags);
DAT_RETURN dofi_ext_atomic(DAT_EP_HANDLE h, uint8_t type, uint64_t v0,
                           uint64_t v1, DAT_LMR_TRIPLET *lbuf,
                           DAT_DTO_COOKIE cookie, const DAT_RMR_TRIPLET *remote,
                           DAT_COMPLETION_FLAGS flags);
/* Count i (a DCNT_IA_*) on the IA if its counters run. */
void dofi_ext_ia_count(dofi_ia_t *ia, int i);
/* An extended request's DAT_IB_DTO_EVENT, from its dofi_dto_fill. */
void dofi_ext_fill(DAT_EVENT *ev, const dofi_op_t *op);
/* The successful completion of an extended request, taken from libfabric
 * (posted: what the op's posted flag was). As dofi_dto_complete. */
int dofi_ext_complete(dofi_op_t *op, DAT_EVENT *ev, dofi_evd_t *evd,
                      uint8_t posted);
/*
 * A successful completion with remote CQ data of a standard op taken from
 * libfabric: a receive that a write with immediate data consumed becomes a
 * DAT_IB_DTO_EVENT. As dofi_dto_complete.
 */
int dofi_ext_complete_recv(const struct fi_cq_data_entry *entry, dofi_op_t *op,
                           DAT_EVENT *ev, dofi_evd_t *evd);
/* The RDMA Write half of a write with immediate data failed. */
void dofi_ext_sink_err(dofi_op_t *sink, int err);
/*
 * Counting, where ep->counting or evd->counting says the counters run: a
 * post (type DOFI_OP_*, bytes), what a dequeue or wait returned (wait:
 * dat_evd_wait, blocked: it slept), an event queued by dofi_evd_post.
 */
void dofi_ext_count_post(dofi_ep_t *ep, uint8_t type, uint64_t len);
void dofi_ext_count_take(dofi_evd_t *evd, DAT_RETURN ret, const DAT_EVENT *ev,
                         int wait, int blocked);
void dofi_ext_count_queued(dofi_evd_t *evd, const DAT_EVENT *ev);
/* dofi_progress.c */
dof_status_t dofi_progress_start(dofi_ia_t *ia);
void dofi_progress_stop(dofi_ia_t *ia);
/*
 * The device a libfabric domain name is on, as /sys/class/net or
 * /sys/class/infiniband names it, into dev (len bytes): the name itself,
 * or without its last -suffix (efa's -rdm); 1 when found, else 0.
 */
int dofi_progress_dev(const char *name, char *dev, size_t len);
/*
 * How long the thread keeps off an EVD the consumer does not poll because
 * it polls the EVD every one of its EPs has its other stream on (see
 * dofi_evd_t.partner); 0: the thread drives it. ia->lock held.
 */
long dofi_progress_partner_nap(dofi_evd_t *evd);
/*
 * Something only a thread can serve from now on (why: for the log):
 * start it if the IA waited to (auto mode). Any lock may be held.
 */
void dofi_progress_need(dofi_ia_t *ia, const char *why);
/* No progress thread runs: the consumer's calls drive everything. */
static inline int dofi_progress_off(const dofi_ia_t *ia)
{
	return !__atomic_load_n(&ia->progress_running, __ATOMIC_ACQUIRE);
}
/* A CQ the progress thread should watch: it wakes the thread, which
 * reads every EVD's cq_fd again. */
void dofi_progress_watch(dofi_ia_t *ia);
/* Make the progress thread look at the IA again now. */
void dofi_progress_wake(dofi_ia_t *ia);
/* 1 on an IA's progress thread. */
extern _Thread_local int dofi_progress_on_thread;

/* An event on the IA's async EVD (errors the consumer cannot tie to a
 * call). */
void dofi_async_post(dofi_ia_t *ia, DAT_EVENT_NUMBER num, DAT_HANDLE h,
                     DAT_COUNT reason);

#endif /* DOFI_H */
