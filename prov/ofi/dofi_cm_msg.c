/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * The MSG connection backend (dofi_cm.h): libfabric's own CM carries the
 * DAT connection model on FI_EP_MSG endpoints (tcp, sockets, verbs). PSP
 * and RSP listen as passive endpoints on port = conn_qual, FI_CONNREQ makes
 * a CR, fi_connect/fi_accept/fi_reject/fi_shutdown carry the rest, and the
 * EQ reader matches events to EPs through a map of their fids.
 *
 * Our 7-byte header leads the private data both ways, so the active side
 * tells a consumer's reject (PEER_REJECTED) from "nobody listens" or a
 * backlog overflow (NON_PEER_REJECTED): both arrive as ECONNREFUSED, only
 * the first carries a header. Whatever arrives from the network is checked
 * before it is believed.
 *
 * Ready to use: libfabric's MSG CM (tcp, sockets) has no RTU step, so a
 * passive side gets FI_CONNECTED even when the requester has given up
 * (its connect timed out) and would report ESTABLISHED. Ours: the REQ
 * offers an RTU (DOFI_CM_F_RTU), the REP takes it; the passive side posts
 * an internal zero-byte receive before any receive of the consumer's, the
 * active side sends one zero-byte message as its first, before it reports
 * ESTABLISHED. The passive side reports ESTABLISHED once that message and
 * FI_CONNECTED are both in; if the connection ends first, or no message
 * comes within DOFI_RTU_NS, ACCEPT_COMPLETION_ERROR (dat_cr_accept).
 *
 * The accepted message goes the other way, where the fabric's accept
 * reports the connection before it can see the peer end it (sockets,
 * ia->traits->accept_late): the REQ asks for it (DOFI_CM_F_ACCEPTED), a REP
 * that carries the flag promises it, and the passive side sends it, a zero-byte
 * message before any of the consumer's, once fi_accept has returned. The active
 * side takes it with an internal receive posted before the consumer's, and an
 * end of its own closes the libfabric endpoint only after it came (or
 * DOFI_ACC_NS), so the passive side's CM cannot miss that end.
 */
#include "config.h"

#define DOFI_LOG_COMP "cm"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dofi_cm.h"
#include "dofi_gate.h"

/*
 * How long an accepting side waits for the requester's RTU. The requester
 * sends it as soon as it sees FI_CONNECTED (its progress thread, or its
 * own wait for the connection event). sockets may lose the FI_SHUTDOWN
 * of a requester that gave up: this bounds the wait then.
 */
#define DOFI_RTU_NS (5ull * 1000000000ull)
/*
 * Where closing the endpoint ends a connection (close_ends_conn), how long
 * after our end it stays open: posts that read the state just before are
 * out of libfabric by then.
 */
#define DOFI_CLOSE_NS (20ull * 1000000ull)
/*
 * How long an active side holds an end of its own for the passive side's
 * accepted message (DOFI_CM_F_ACCEPTED), from FI_CONNECTED. The passive
 * side sends it as soon as its fi_accept returns.
 */
#define DOFI_ACC_NS (2ull * 1000000000ull)
/*
 * Where closing an endpoint drops what libfabric has not yet written
 * (close_drops_unsent), how long its close waits for our first message
 * (the RTU, or the accepted message) to go (dofi_msg_sends_settled).
 */
#define DOFI_SENT_NS (1ull * 1000000000ull)
/*
 * A peer's end of one connection waits for the RTUs that were due when it
 * came (dofi_msg_shutdown); each of those is settled within DOFI_RTU_NS,
 * by ESTABLISHED or ACCEPT_COMPLETION_ERROR. This bounds the wait should
 * the CM not run in between.
 */
#define DOFI_ORDER_NS (DOFI_RTU_NS + 1000000000ull)
/*
 * sockets sends a reject from the listener's own CM thread, later; closing
 * the listener stops that thread, and the reject never leaves (the
 * requester times out). A spent RSP's listener that rejected is therefore
 * closed DOFI_PARK_NS later, or as soon as a new listener wants its port.
 * Requests reaching it meanwhile are refused.
 */
#define DOFI_PARK_NS (500ull * 1000000ull)
/*
 * How long a passive side waits for the RTU once the requester's end came
 * first (dofi_msg_shutdown): an RTU sent before that end follows it within
 * the fabric's own delays; a requester that gave up sent none, and the
 * accept ends in ACCEPT_COMPLETION_ERROR this much later.
 */
#define DOFI_END_RTU_NS (200ull * 1000000ull)
/*
 * Where a message with no receive posted waits in the provider
 * (traits->recv_buffers), how long a peer's end waits for receives to take
 * such messages (dofi_msg_drain_hold), and how often it asks again.
 */
#define DOFI_DRAIN_NS (2ull * 1000000000ull)
#define DOFI_PEEK_NS  (2ull * 1000000ull)
/* Endpoints set aside at one open (dofi_msg_set_aside). */
#define DOFI_TOMB_SPARES 4

/* The passive side's ready-to-use wait (dofi_msg_ep_t.rtu). */
enum {
	DOFI_RTU_NONE = 0, /* not negotiated, or over */
	DOFI_RTU_WAIT,     /* internal receive posted, ESTABLISHED held */
};

/* What an internal receive's completion said (rtu_done, acc_done). */
enum {
	DOFI_RTU_PENDING = 0,
	DOFI_RTU_ARRIVED, /* the peer's message */
	DOFI_RTU_FAILED,  /* flushed or failed */
};

/* What the drain's FI_PEEK said (dofi_msg_ep_t.peek_done). */
enum {
	DOFI_PEEK_NONE = 0, /* not asked */
	DOFI_PEEK_ASKED,    /* its completion not read yet */
	DOFI_PEEK_FOUND,    /* a message waits for a receive */
	DOFI_PEEK_EMPTY,    /* none (FI_ENOMSG), or the ask failed */
};

/* A closed fi_ep's address while EQ events for it may be unread. */
typedef struct dofi_tomb {
	const struct fid *fid; /* compared, never dereferenced */
	uint64_t epoch;        /* eq_epoch when it was closed */
	struct fid_ep *spare;  /* an endpoint opened at that address, unused */
} dofi_tomb_t;

/* A spent RSP's listener kept open until its reject has gone out. */
typedef struct dofi_parked_pep {
	dofi_list_t link;
	struct fid_pep *pep;
	struct fi_info *info;
	uint16_t port;
	dofi_cm_timer_t timer; /* closes it */
	dofi_ia_t *ia;
} dofi_parked_pep_t;

typedef struct dofi_msg_ia {
	struct fid_eq *eq;
	int eq_fd;
	/* Live endpoints' fids -> EPs, under ia->lock. */
	dofi_map_t eps;
	/* Passive EPs waiting for an RTU (dofi_msg_ep_t.rtu WAIT), in the
	 * order of their accepts (rtu_seq). */
	dofi_list_t rtu_wait;
	uint64_t rtu_seq;
	/*
	 * Peers' ends held until the RTUs due when they came are settled
	 * (dofi_msg_ends_release), oldest first; the EQ drain that last
	 * settled the RTUs already in before an end (dofi_msg_shutdown).
	 */
	dofi_list_t ends_held;
	uint64_t settle_epoch;
	dofi_list_t parked;
	/* Closed endpoints' fids (eq_keeps_closed), under ia->lock. */
	dofi_tomb_t *tombs;
	uint32_t ntombs, tombs_cap;
	uint64_t eq_epoch; /* EQ drains begun */
	/*
	 * Rounds of RTU reads: one read of a receive CQ per round serves
	 * every EP waiting on it (dofi_msg_rtu_arrived). A round begins with
	 * each EQ drain and with each lazy pass.
	 */
	uint64_t read_epoch;
	/*
	 * Connected passive EPs whose RTU is looked for lazily (rtu_lazy):
	 * how many, and when the next lazy pass reads for them all
	 * (dofi_msg_rtu_lazy_pass). The EVD the running progress call serves
	 * (NULL: none, or the progress thread).
	 */
	uint32_t rtu_lazy_n;
	uint64_t rtu_lazy_at;
	dofi_evd_t *until;
	/* dofi_msg_open's endpoints set aside, and whether it may. */
	int spares, no_aside;
	/* What dat_ep_connect opens endpoints with. */
	struct fi_info *conn_info;
	/* Listeners behind the gate (traits->cm_gate; started at the first). */
	int gated;
	struct dofi_gate *gate;
	uint16_t gate_port; /* the last inner port taken (dofi_gate_port) */
	/* The link watch's bound (0: off), and its walk of the sockets. */
	uint64_t link_ns;
	struct dofi_link_sock *link_socks;
	uint32_t nlink_socks, link_socks_cap;
	uint64_t link_scan_at;
} dofi_msg_ia_t;

typedef struct dofi_msg_ep {
	dofi_ep_t *ep;
	struct fi_info *info; /* passive: the request's, for the fi_ep's life */
	int shutdown_sent;
	/* close_ends_conn: our end is over for DAT, and the libfabric
	 * endpoint closes at close_at, which is what tells the peer. */
	int close_pending;
	uint64_t close_at;
	/*
	 * A peer's end (FI_SHUTDOWN) held in ends_held until the RTUs due
	 * when it came are settled, those up to end_mark in rtu_seq, or
	 * until peer_end_at at the latest (dofi_msg_shutdown); 0: none.
	 */
	uint64_t peer_end_at;
	uint64_t end_mark;
	dofi_list_t end_link;
	/*
	 * Our ready-to-use step. libfabric's tcp and sockets CM has none: a
	 * passive side gets FI_CONNECTED even when the requester gave up.
	 * The active side sends one zero-byte message as its first; the
	 * passive side takes it with an internal receive posted before any
	 * of the consumer's and reports ESTABLISHED only then.
	 */
	dofi_op_t rtu_op;         /* internal receive (passive) or send */
	uint8_t rtu;              /* DOFI_RTU_* */
	uint8_t rtu_connected;    /* FI_CONNECTED seen during the wait */
	_Atomic uint8_t rtu_done; /* DOFI_RTU_PENDING/ARRIVED/FAILED */
	uint8_t rtu_lazy;         /* looked for lazily (rtu_lazy_n) */
	/* The peer's end came during the wait: it follows the RTU, when
	 * the RTU comes (dofi_msg_shutdown). */
	uint8_t end_after_rtu;
	dofi_list_t rtu_link; /* in rtu_wait while rtu is WAIT */
	uint64_t rtu_seq;     /* its place in rtu_wait */
	/*
	 * The accepted message, where the fabric's fi_accept reports the
	 * connection before it would see the peer end it, and loses such an
	 * end (traits->accept_late). The passive side sends one zero-byte
	 * message once fi_accept has returned; the active side takes it
	 * with an internal receive posted before any of the consumer's, and
	 * closes its endpoint for an end of its own only once it came (or
	 * acc_deadline passed).
	 */
	dofi_op_t acc_op;         /* internal receive (active) or send */
	uint8_t acc;              /* 1: the receive is ours to wait for */
	_Atomic uint8_t acc_done; /* DOFI_RTU_PENDING/ARRIVED/FAILED */
	uint64_t acc_deadline;    /* set at FI_CONNECTED */
	/*
	 * A peer's end held while a message waits in the provider for a
	 * receive (traits->recv_buffers, dofi_msg_drain_hold): peek_op is
	 * the zero-byte FI_PEEK receive that asks, drain_next the next look,
	 * drain_by the bound; 0 when no end is held.
	 */
	dofi_op_t peek_op;
	_Atomic uint8_t peek_done; /* DOFI_PEEK_* */
	uint8_t drain_found;       /* a message was seen waiting */
	uint64_t drain_next, drain_by;
	/* The link watch (while connected): the next look (0: none), the
	 * request pool's head and post count then, its sockets. */
	uint64_t link_next;
	uint64_t link_head;
	uint64_t link_silent_at; /* first look that found it silent */
	uint32_t link_idle_seq;  /* req_seq when nothing was posted */
	uint8_t link_idle;
	int nlink;
	struct dofi_link_sock {
		int fd;
		struct sockaddr_in local, peer;
	} link[4];
} dofi_msg_ep_t;

typedef struct dofi_msg_sp {
	struct fid_pep *pep;
	struct fi_info *info; /* the pep's; some providers keep pointers */
	struct dofi_gate_lis *gate_lis; /* the port's listener (gated) */
} dofi_msg_sp_t;

typedef struct dofi_msg_cr {
	struct fid_pep *pep;      /* the listener the request came to */
	struct fi_info *pep_info; /* set when the CR owns pep (spent RSP) */
	struct fi_info *info;     /* from FI_CONNREQ; handle inside */
	uint8_t rtu;              /* the requester offered an RTU */
	uint8_t acc;              /* it asked for the accepted message */
	int rejected;             /* dat_cr_reject sent a reject on pep */
} dofi_msg_cr_t;

static inline dofi_msg_ia_t *dofi_msg_ia(dofi_ia_t *ia)
{
	return ia->cm;
}

static inline dofi_msg_ep_t *dofi_msg_ep(dofi_ep_t *ep)
{
	return ep->cm;
}

/* ---- our header ---------------------------------------------------------- */

static size_t dofi_msg_pack(unsigned char *buf, uint8_t type, uint8_t flags,
                            const void *pdata, DAT_COUNT len,
                            const dofi_ep_t *ep)
{
	dofi_cm_hdr_t h = {
	        .type = type,
	        .flags = flags,
	        .rdma_in = ep ? (uint8_t)ep->attr.max_rdma_read_in : 0,
	        .rdma_out = ep ? (uint8_t)ep->attr.max_rdma_read_out : 0,
	};

	return dofi_cm_hdr_pack(buf, DOFI_CM_HDR_SIZE + 256, &h, pdata,
	                        len > 0 ? (size_t)len : 0);
}

/*
 * Our header's type (with its flags and the peer's RDMA Read limits), or
 * 0 when the data is not ours: checked by dofi_cm_hdr_unpack, never more
 * private data than libfabric carries.
 */
static uint8_t dofi_msg_unpack(const void *data, size_t len,
                               const unsigned char **pdata, DAT_COUNT *plen,
                               dofi_cm_hdr_t *h)
{
	size_t n;

	*pdata = NULL;
	*plen = 0;
	memset(h, 0, sizeof(*h));
	if (dofi_cm_hdr_unpack(data, len, 256, h, pdata, &n) != DOF_OK)
		return 0;
	*plen = (DAT_COUNT)n;
	return h->type;
}

/* ---- endpoints and their fids -------------------------------------------- */

/*
 * EQ events are matched to EPs by fid address (dofi_msg_ia_t.eps), and
 * libfabric may have queued events for an endpoint we close before we
 * read them (sockets: the FI_SHUTDOWN that follows our own). The next
 * fi_endpoint often returns the closed one's address, and such a stale
 * event then ended the new connection (ACCEPT_COMPLETION_ERROR on the
 * passive side, a requester timing out or NON_PEER_REJECTED). So where
 * the fabric keeps such events (traits->eq_keeps_closed) a closed fid
 * stays a tombstone until an EQ drain begun after the close has read
 * everything, and an endpoint opened at a tombstone's address is set
 * aside (open but unbound: it gets no events) and replaced; it is closed
 * with its tombstone. ia->lock held.
 */
static dofi_tomb_t *dofi_msg_tomb_find(dofi_msg_ia_t *m, const struct fid *fid)
{
	uint32_t i;

	for (i = 0; i < m->ntombs; i++)
		if (m->tombs[i].fid == fid)
			return &m->tombs[i];
	return NULL;
}

static void dofi_msg_tomb_add(dofi_msg_ia_t *m, const struct fid *fid)
{
	if (m->ntombs == m->tombs_cap) {
		uint32_t cap = m->tombs_cap ? m->tombs_cap * 2 : 16;
		dofi_tomb_t *t = realloc(m->tombs, cap * sizeof(*t));

		if (t == NULL)
			return; /* unguarded, as before */
		m->tombs = t;
		m->tombs_cap = cap;
	}
	m->tombs[m->ntombs].fid = fid;
	m->tombs[m->ntombs].epoch = m->eq_epoch;
	m->tombs[m->ntombs].spare = NULL;
	m->ntombs++;
}

/* An EQ drain begun at epoch has read every event: forget the fids closed
 * before it (UINT64_MAX: all, at IA close). ia->lock held. */
static void dofi_msg_tombs_expire(dofi_msg_ia_t *m, uint64_t epoch)
{
	uint32_t i = 0;

	while (i < m->ntombs) {
		dofi_tomb_t *t = &m->tombs[i];

		if (t->epoch >= epoch) {
			i++;
			continue;
		}
		if (t->spare != NULL)
			(void)DOFI_NOPIPE(fi_close(&t->spare->fid));
		*t = m->tombs[--m->ntombs];
	}
	if (epoch == UINT64_MAX) {
		free(m->tombs);
		m->tombs = NULL;
		m->tombs_cap = 0;
	}
}

/*
 * Open the connection's endpoint (info from the IA or the request), with
 * our internal receive first when one is wanted (rtu or acc), and publish
 * it in ep->fep and the fid map. ia->lock held.
 */
static void dofi_msg_rtu_set(dofi_ep_t *ep, uint8_t rtu);

/*
 * A new endpoint at a tombstone's address is set aside (dofi_ep_open_fep
 * opens another). An accepting endpoint takes the connection request's
 * socket: that is good for one fi_endpoint only, so it keeps whatever
 * address it got.
 */
static int dofi_msg_set_aside(dofi_ep_t *ep, struct fid_ep *fep)
{
	dofi_msg_ia_t *m = dofi_msg_ia(ep->obj.ia);
	dofi_tomb_t *tomb;

	if (!ep->obj.ia->traits->eq_keeps_closed || m->no_aside ||
	    m->spares == DOFI_TOMB_SPARES)
		return 0;
	tomb = dofi_msg_tomb_find(m, &fep->fid);
	if (tomb == NULL || tomb->spare != NULL)
		return 0;
	dof_debug(DOFI_LOG,
	          "EP %p: fi_endpoint gave a closed endpoint's address; "
	          "set aside",
	          (void *)ep);
	tomb->spare = fep; /* closed with the tombstone */
	m->spares++;
	return 1;
}

/*
 * Open the connection's endpoint (info from the IA or the request), with
 * our internal receive first when one is wanted (rtu or acc), and publish
 * it in ep->fep and the fid map. ia->lock held.
 */
static dof_status_t dofi_msg_open(dofi_ep_t *ep, struct fi_info *info)
{
	dofi_msg_ia_t *m = dofi_msg_ia(ep->obj.ia);
	dofi_msg_ep_t *me = dofi_msg_ep(ep);
	struct fid_ep *fep;
	dof_status_t st;
	int extra;

	m->spares = 0;
	m->no_aside = info->handle != NULL;
	st = dofi_ep_open_fep(ep, info, &m->eq->fid, dofi_msg_set_aside, &fep,
	                      &extra);
	if (st != DOF_OK)
		return st;
	if (!extra) {
		/* No slot for our own message: no RTU. */
		dofi_msg_rtu_set(ep, DOFI_RTU_NONE);
		me->acc = 0;
	}
	if (dofi_map_put(&m->eps, &fep->fid, ep) != DOF_OK) {
		dofi_ep_drop_fep(ep, fep);
		return DOF_ERR_NO_MEMORY;
	}
	/*
	 * The internal receive first of all: the RTU's (the passive side
	 * asks for it, dofi_msg_accept) or the accepted message's (the
	 * active side, dofi_msg_connect); the consumer's receives can reach
	 * libfabric only once ep->fep is set. Without it, neither.
	 */
	if (me->rtu == DOFI_RTU_WAIT) {
		atomic_store(&me->rtu_done, DOFI_RTU_PENDING);
		if (dofi_dto_post_internal_recv(ep, fep, &me->rtu_op) !=
		    DOF_OK) {
			me->rtu = DOFI_RTU_NONE;
			dofi_list_del(&me->rtu_link);
		}
	}
	if (me->acc) {
		atomic_store(&me->acc_done, DOFI_RTU_PENDING);
		if (dofi_dto_post_internal_recv(ep, fep, &me->acc_op) != DOF_OK)
			me->acc = 0;
	}
	ep->peer = 0; /* connected: the destination is ignored */
	return dofi_ep_publish_fep(ep, fep);
}

static int dofi_msg_ep_close(dofi_ep_t *ep);

/* ---- ready to use -------------------------------------------------------- */

/* The EP whose RTU this thread reads a CQ for (dofi_msg_rtu_arrived). */
static _Thread_local const dofi_ep_t *dofi_msg_rtu_reading;

/*
 * Lazy passes (dofi_msg_rtu_lazy_pass) are at least this far apart, and
 * twenty times their own duration: each read of a CQ costs libfabric tcp
 * a look at every socket on it.
 */
#define DOFI_RTU_LAZY_NS (10ull * 1000000ull)

static dofi_ep_t *dofi_msg_rtu_head(dofi_msg_ia_t *m)
{
	return dofi_container_of(m->rtu_wait.next, dofi_msg_ep_t, rtu_link)->ep;
}

static void dofi_msg_rtu_set(dofi_ep_t *ep, uint8_t rtu)
{
	dofi_msg_ia_t *m = dofi_msg_ia(ep->obj.ia);
	dofi_msg_ep_t *me = dofi_msg_ep(ep);
	int head;

	if (me->rtu == rtu)
		return;
	me->rtu = rtu;
	if (rtu == DOFI_RTU_WAIT) {
		me->rtu_seq = ++m->rtu_seq;
		dofi_list_add_tail(&m->rtu_wait, &me->rtu_link);
		return;
	}
	head = m->rtu_wait.next == &me->rtu_link;
	dofi_list_del(&me->rtu_link);
	if (me->rtu_lazy) {
		me->rtu_lazy = 0;
		m->rtu_lazy_n--;
	}
	if (!head)
		return;
	/* The head carries the lazy pass's timer: hand it on. */
	if (m->rtu_lazy_n > 0)
		dofi_cm_schedule(dofi_msg_rtu_head(m));
	/* The oldest RTU is settled: held ends may follow it now, at the
	 * CM's next look at the first of them (dofi_msg_ep_kicked). */
	if (!dofi_list_empty(&m->ends_held))
		dofi_cm_kick(dofi_container_of(m->ends_held.next, dofi_msg_ep_t,
		                               end_link)
		                     ->ep);
}

/*
 * Whether ep's RTU is looked for at every pass from FI_CONNECTED on:
 * someone waits for its ESTABLISHED (a waiter or a CNO on its connection
 * EVD), or the consumer is polling connection events right now. If not,
 * the RTU is looked for lazily: when the consumer next looks at
 * connection events, when its receive CQ is read anyway, or at the next
 * lazy pass. A consumer that accepts a burst from one EVD and collects
 * ESTABLISHED from another afterwards (OFED's dtestcm) would otherwise pay
 * one read per accept, each a look at every socket. ia->lock held.
 */
static int dofi_msg_rtu_eager(const dofi_ep_t *ep)
{
	const dofi_msg_ia_t *m = dofi_msg_ia(ep->obj.ia);
	dofi_evd_t *evd = ep->conn_evd;

	return evd == NULL ||
	       __atomic_load_n(&evd->cno, __ATOMIC_RELAXED) != NULL ||
	       atomic_load_explicit(&evd->waiters, memory_order_relaxed) != 0 ||
	       (m->until != NULL &&
	        (m->until->flags & DAT_EVD_CONNECTION_FLAG) != 0);
}

/* ep's RTU is looked for lazily from now. ia->lock held. */
static void dofi_msg_rtu_lazy(dofi_ep_t *ep)
{
	dofi_msg_ia_t *m = dofi_msg_ia(ep->obj.ia);
	dofi_msg_ep_t *me = dofi_msg_ep(ep);
	uint64_t at;

	if (me->rtu_lazy)
		return;
	me->rtu_lazy = 1;
	if (m->rtu_lazy_n++ > 0)
		return;
	at = dofi_now_ns() + DOFI_RTU_LAZY_NS;
	if (m->rtu_lazy_at < at)
		m->rtu_lazy_at = at;
	dofi_cm_schedule(dofi_msg_rtu_head(m));
}

static void dofi_msg_op_done(dofi_op_t *op, int err)
{
	dofi_ep_t *ep = op->ep;
	dofi_msg_ep_t *me = dofi_msg_ep(ep);
	int recv = op->type == DOFI_OP_CM_RECV;

	if (me != NULL && op == &me->peek_op) {
		/* FI_ENOMSG: nothing waits. The CM looks (the drain). */
		atomic_store(&me->peek_done,
		             err == 0 ? DOFI_PEEK_FOUND : DOFI_PEEK_EMPTY);
		dofi_cm_kick(ep);
		return;
	}
	if (err != 0 && err != FI_ECANCELED)
		dof_info(DOFI_LOG, "EP %p: internal %s: %s", (void *)ep,
		         recv ? "receive" : "send", fi_strerror(err));
	if (!recv || me == NULL)
		return; /* a send: nothing waits for it */
	atomic_store(op == &me->rtu_op ? &me->rtu_done : &me->acc_done,
	             err == 0 ? DOFI_RTU_ARRIVED : DOFI_RTU_FAILED);
	/*
	 * Whoever read it may not hold ia->lock: the CM acts on it (unless
	 * the reader is the CM's own RTU check, which acts on it next).
	 */
	if (err == 0 && dofi_msg_rtu_reading != ep)
		dofi_cm_kick(ep);
}

static void dofi_msg_shutdown(dofi_ep_t *ep);

/* The passive side is connected (and perhaps ended). ia->lock held. */
static void dofi_msg_passive_established(dofi_ep_t *ep)
{
	dofi_msg_ep_t *me = dofi_msg_ep(ep);
	int end = me->end_after_rtu;

	me->end_after_rtu = 0;
	dofi_msg_rtu_set(ep, DOFI_RTU_NONE);
	dofi_cm_up_established(ep, NULL, 0);
	if (end)
		dofi_msg_shutdown(ep);
}

/*
 * Whether the requester's RTU came in, reading the receive CQ ourselves:
 * nobody else may be (sockets has no progress thread on it; the consumer
 * waits on its connection EVD). Only the EVD's CQ the EP is bound to (one
 * of DOFI_CQ_SHARD EPs), once per EQ drain for every EP waiting on it
 * (each read costs libfabric tcp a look at every socket of the CQ),
 * unless all (read on to its end) or fresh (a read now) asks for another.
 * ia->lock held, rtu WAIT.
 */
static int dofi_msg_rtu_arrived(dofi_ep_t *ep, int all, int fresh)
{
	dofi_msg_ep_t *me = dofi_msg_ep(ep);
	uint64_t epoch = dofi_msg_ia(ep->obj.ia)->read_epoch;
	dofi_evd_t *evd = ep->recv_evd;
	uint64_t *mark = dofi_evd_cq_marks(evd, ep->rx_cq);

	/* A read to the end (all) per round also serves every EP. */
	if (atomic_load(&me->rtu_done) == DOFI_RTU_PENDING && mark != NULL &&
	    (fresh || mark[all ? 1 : 0] != epoch)) {
		mark[0] = epoch;
		if (all)
			mark[1] = epoch;
		/*
		 * A consumer polling for connection events reads this CQ
		 * now, as one polling the EVD would: the progress thread
		 * need not wake for the RTU's arrival too.
		 */
		if (!dofi_progress_on_thread)
			dofi_evd_count_poll(ep->recv_evd);
		dofi_msg_rtu_reading = ep;
		dofi_evd_flush_one(evd, ep->rx_cq, all);
		dofi_msg_rtu_reading = NULL;
	}
	return atomic_load(&me->rtu_done) == DOFI_RTU_ARRIVED;
}

/*
 * The passive side's RTU wait: ESTABLISHED once the RTU and FI_CONNECTED
 * are both in; ACCEPT_COMPLETION_ERROR when the receive failed or the
 * wait is over (now != 0). ia->lock held, COMPLETION_PENDING, rtu WAIT.
 */
static void dofi_msg_rtu_check(dofi_ep_t *ep, uint64_t now)
{
	dofi_msg_ep_t *me = dofi_msg_ep(ep);
	int late = now != 0 && now >= ep->deadline;

	/* When late, one more read of the CQ per round (all): the RTU may
	 * have come since the round's first. */
	if (dofi_msg_rtu_arrived(ep, late, 0)) {
		/* FI_CONNECTED comes first; the RTU alone proves it too
		 * (the peer's end may come in its place). */
		if (me->rtu_connected || late || me->end_after_rtu)
			dofi_msg_passive_established(ep);
		return;
	}
	if (atomic_load(&me->rtu_done) == DOFI_RTU_FAILED || late) {
		dof_info(DOFI_LOG,
		         "EP %p: the requester did not take the "
		         "connection (%s; FI_CONNECTED %s, its end %s)",
		         (void *)ep,
		         atomic_load(&me->rtu_done) == DOFI_RTU_FAILED
		                 ? "the connection ended first"
		                 : "no RTU in time",
		         me->rtu_connected ? "seen" : "not seen",
		         me->end_after_rtu ? "seen" : "not seen");
		dofi_cm_up_down(ep,
		                DAT_CONNECTION_EVENT_ACCEPT_COMPLETION_ERROR,
		                NULL, 0);
	}
}

/*
 * The connection ends while the passive side waits for the RTU: if the
 * RTU came first, the requester took the connection and left again; say
 * ESTABLISHED before the end. ia->lock held.
 */
static void dofi_msg_rtu_settle(dofi_ep_t *ep)
{
	if (atomic_load(&ep->state) == DAT_EP_STATE_COMPLETION_PENDING &&
	    dofi_msg_ep(ep)->rtu == DOFI_RTU_WAIT &&
	    dofi_msg_rtu_arrived(ep, 1, 1))
		dofi_msg_passive_established(ep);
}

/*
 * Passive EPs connected in libfabric's view and waiting for the RTU: say
 * ESTABLISHED for those whose RTU is in. ia->lock held.
 */
static void dofi_msg_rtu_settle_all(dofi_ia_t *ia)
{
	dofi_list_t *e, *next, *head = &dofi_msg_ia(ia)->rtu_wait;

	for (e = head->next; e != head; e = next) {
		dofi_msg_ep_t *me =
		        dofi_container_of(e, dofi_msg_ep_t, rtu_link);

		next = e->next;
		if (me->rtu_connected &&
		    atomic_load(&me->ep->state) ==
		            DAT_EP_STATE_COMPLETION_PENDING)
			dofi_msg_rtu_check(me->ep, 0);
	}
}

/*
 * A lazy pass: one read of each receive CQ that RTUs are due on, and
 * ESTABLISHED for those that came. ia->lock held.
 */
static void dofi_msg_rtu_lazy_pass(dofi_ia_t *ia, uint64_t now)
{
	dofi_msg_ia_t *m = dofi_msg_ia(ia);
	uint64_t end, gap;

	m->read_epoch++;
	dofi_msg_rtu_settle_all(ia);
	end = dofi_now_ns();
	gap = 20 * (end - now);
	if (gap < DOFI_RTU_LAZY_NS)
		gap = DOFI_RTU_LAZY_NS;
	/* Well inside the RTU's deadline, where each EP would read alone. */
	if (gap > DOFI_RTU_NS / 8)
		gap = DOFI_RTU_NS / 8;
	m->rtu_lazy_at = end + gap;
}

/* A lazy pass at the next timer check, if any RTU is looked for lazily. */
static void dofi_msg_rtu_soon(dofi_ia_t *ia)
{
	dofi_msg_ia_t *m = dofi_msg_ia(ia);

	if (m->rtu_lazy_n == 0)
		return;
	m->rtu_lazy_at = 0;
	dofi_cm_schedule(dofi_msg_rtu_head(m));
}

/*
 * The consumer looks at connection events (a dequeue or a wait on a
 * connection EVD): every RTU looked for lazily is looked for now, and at
 * every pass from now on. ia->lock held.
 */
static void dofi_msg_rtu_look(dofi_ia_t *ia)
{
	dofi_msg_ia_t *m = dofi_msg_ia(ia);
	dofi_list_t *e, *next, *head = &m->rtu_wait;

	for (e = head->next; e != head && m->rtu_lazy_n > 0; e = next) {
		dofi_msg_ep_t *me =
		        dofi_container_of(e, dofi_msg_ep_t, rtu_link);
		dofi_ep_t *ep = me->ep;

		next = e->next;
		if (!me->rtu_lazy)
			continue;
		me->rtu_lazy = 0;
		m->rtu_lazy_n--;
		if (me->rtu_connected &&
		    atomic_load(&ep->state) == DAT_EP_STATE_COMPLETION_PENDING)
			dofi_msg_rtu_check(ep, 0);
		dofi_cm_schedule(ep); /* watched at every pass now */
	}
}

/* The drain is over (the end goes on, or the connection is gone). */
static void dofi_msg_drain_stop(dofi_msg_ep_t *me)
{
	me->drain_by = 0;
	me->drain_next = 0;
	me->drain_found = 0;
}

/*
 * Whether the peer's end must wait (traits->recv_buffers). A message the
 * peer sent may wait in the provider for a receive: its Send completed
 * when the provider took it, and our end would drop it, where InfiniBand
 * would have held the Send until a receive came. A zero-byte FI_PEEK
 * receive asks whether one waits; while one does, the connection stays
 * up, for receives posted before or now to take it, and the look asks
 * again every DOFI_PEEK_NS, for DOFI_DRAIN_NS at most. ia->lock held.
 */
static int dofi_msg_drain_hold(dofi_ep_t *ep)
{
	dofi_msg_ep_t *me = dofi_msg_ep(ep);
	uint64_t now = dofi_now_ns();
	uint8_t done;

	if (!ep->obj.ia->traits->recv_buffers || ep->fep == NULL ||
	    ep->recv_evd == NULL)
		return 0;
	if (me->drain_by == 0) {
		me->drain_by = now + DOFI_DRAIN_NS;
		if (!atomic_load(&me->peek_op.posted))
			atomic_store(&me->peek_done, DOFI_PEEK_NONE);
	}
	done = atomic_load(&me->peek_done);
	if (done == DOFI_PEEK_NONE) {
		struct fi_msg msg;
		ssize_t rc;

		memset(&msg, 0, sizeof(msg));
		msg.addr = FI_ADDR_UNSPEC;
		msg.context = &me->peek_op;
		me->peek_op.ep = ep;
		me->peek_op.type = DOFI_OP_CM_RECV;
		atomic_store(&me->peek_done, DOFI_PEEK_ASKED);
		atomic_store(&me->peek_op.posted, 1);
		rc = fi_recvmsg(ep->fep, &msg, FI_PEEK);
		if (rc != 0) {
			atomic_store(&me->peek_op.posted, 0);
			atomic_store(&me->peek_done, DOFI_PEEK_EMPTY);
			dof_info(DOFI_LOG,
			         "EP %p: FI_PEEK at the peer's end: %s; "
			         "messages that wait for a receive are lost",
			         (void *)ep, fi_strerror((int)-rc));
		} else {
			/* The answer is in the CQ (sockets reports at once). */
			dofi_evd_flush_cq(ep->recv_evd, 1);
		}
		done = atomic_load(&me->peek_done);
	}
	if (done != DOFI_PEEK_EMPTY && now < me->drain_by) {
		if (done == DOFI_PEEK_FOUND) {
			if (!me->drain_found)
				dof_info(DOFI_LOG,
				         "EP %p: the peer ended the connection "
				         "while a message of its waits for a "
				         "receive: the end waits for one",
				         (void *)ep);
			me->drain_found = 1;
			atomic_store(&me->peek_done, DOFI_PEEK_NONE);
		}
		me->drain_next = now + DOFI_PEEK_NS;
		dofi_cm_schedule(ep);
		return 1;
	}
	if (done == DOFI_PEEK_FOUND)
		dof_warn(DOFI_LOG,
		         "EP %p: a message the peer sent still waits for a "
		         "receive %llu ms after its end: lost with the "
		         "connection",
		         (void *)ep,
		         (unsigned long long)(DOFI_DRAIN_NS / 1000000ull));
	else if (done == DOFI_PEEK_ASKED)
		dof_warn(DOFI_LOG,
		         "EP %p: FI_PEEK has not answered %llu ms after the "
		         "peer's end; a message still waiting is lost",
		         (void *)ep,
		         (unsigned long long)(DOFI_DRAIN_NS / 1000000ull));
	dofi_msg_drain_stop(me);
	return 0;
}

/* The peer ended a connection that was up. ia->lock held. */
static void dofi_msg_peer_end(dofi_ep_t *ep)
{
	if (dofi_msg_drain_hold(ep))
		return;
	dofi_msg_ep(ep)->shutdown_sent = 1; /* the peer's; nothing to send */
	dofi_cm_up_peer_end(ep);
}

/*
 * A look at a peer's end held by the drain: over if our own end came
 * meanwhile; asked again when due (the timers at drain_next, or a kick
 * once FI_PEEK said nothing waits). ia->lock held.
 */
static void dofi_msg_drain_look(dofi_ep_t *ep, int due)
{
	dofi_msg_ep_t *me = dofi_msg_ep(ep);
	DAT_EP_STATE s = atomic_load(&ep->state);

	if (me->drain_by == 0)
		return;
	if (s != DAT_EP_STATE_CONNECTED && s != DAT_EP_STATE_DISCONNECT_PENDING)
		dofi_msg_drain_stop(me);
	else if (due)
		dofi_msg_peer_end(ep);
}

/* ep's end is held no more (reported, or the connection is gone). */
static void dofi_msg_end_unhold(dofi_msg_ep_t *me)
{
	if (me->peer_end_at == 0)
		return;
	me->peer_end_at = 0;
	dofi_list_del(&me->end_link);
}

/*
 * Report the held ends whose RTUs are settled, oldest first, and those
 * held past their bound (at now; 0: not looked at). The RTUs of rtu_wait
 * are in accept order, so an end waits for nothing once the oldest RTU
 * still due was accepted after its mark. ia->lock held.
 */
static void dofi_msg_ends_release(dofi_ia_t *ia, uint64_t now)
{
	dofi_msg_ia_t *m = dofi_msg_ia(ia);

	while (!dofi_list_empty(&m->ends_held)) {
		dofi_msg_ep_t *me = dofi_container_of(m->ends_held.next,
		                                      dofi_msg_ep_t, end_link);
		dofi_ep_t *ep = me->ep;
		DAT_EP_STATE s;

		if (!dofi_list_empty(&m->rtu_wait) &&
		    dofi_container_of(m->rtu_wait.next, dofi_msg_ep_t, rtu_link)
		                    ->rtu_seq <= me->end_mark &&
		    (now == 0 || now < me->peer_end_at))
			break;
		if (now != 0 && now >= me->peer_end_at)
			dof_info(DOFI_LOG,
			         "EP %p: the peer's end waited for other "
			         "connections' RTUs too long; reported now",
			         (void *)ep);
		dofi_msg_end_unhold(me);
		s = atomic_load(&ep->state);
		if (s == DAT_EP_STATE_CONNECTED ||
		    s == DAT_EP_STATE_DISCONNECT_PENDING)
			dofi_msg_peer_end(ep);
		else
			dofi_cm_schedule(ep);
	}
}

/*
 * Whether an end of ours may close the endpoint now (traits->accept_late):
 * not while the passive side's fi_accept may still run, or its CM would
 * lose the end. Its accepted message says it has returned; without one
 * within DOFI_ACC_NS, or once the receive failed, go ahead. Reads the
 * receive CQ itself, as dofi_msg_rtu_arrived does. ia->lock held.
 */
static int dofi_msg_acc_settled(dofi_ep_t *ep, uint64_t now)
{
	dofi_msg_ep_t *me = dofi_msg_ep(ep);
	int late;

	if (!me->acc || me->acc_deadline == 0 || ep->fep == NULL)
		return 1; /* nothing asked, or FI_CONNECTED not seen yet */
	late = now >= me->acc_deadline;
	if (atomic_load(&me->acc_done) == DOFI_RTU_PENDING &&
	    ep->recv_evd != NULL)
		dofi_evd_flush_cq(ep->recv_evd, late);
	if (atomic_load(&me->acc_done) == DOFI_RTU_PENDING && !late)
		return 0;
	if (atomic_load(&me->acc_done) != DOFI_RTU_ARRIVED)
		dof_info(DOFI_LOG,
		         "EP %p: no accepted message from the peer "
		         "(%s); closing all the same",
		         (void *)ep,
		         late ? "not in time" : "the receive failed");
	else
		dof_debug(DOFI_LOG, "EP %p: the peer's accepted message is in",
		          (void *)ep);
	me->acc = 0;
	return 1;
}

/* Whether our first message was sent with a completion not yet read. */
static int dofi_msg_sends_out(dofi_msg_ep_t *me)
{
	return (me->rtu_op.type == DOFI_OP_CM_SEND &&
	        atomic_load(&me->rtu_op.posted)) ||
	       (me->acc_op.type == DOFI_OP_CM_SEND &&
	        atomic_load(&me->acc_op.posted));
}

/*
 * Where closing the endpoint drops what libfabric has not yet written to
 * its socket (close_drops_unsent: sockets, whose RTU injected just before
 * a quick disconnect and free was lost, and the passive side reported
 * ACCEPT_COMPLETION_ERROR for a connection its peer had used), our first
 * message goes with a completion (dofi_dto_send_internal), and the close
 * waits for it, or until late. Reads the transmit CQ, which also drives
 * it. 1 when the endpoint may close. ia->lock held.
 */
static int dofi_msg_sends_settled(dofi_ep_t *ep, int late)
{
	dofi_msg_ep_t *me = dofi_msg_ep(ep);

	if (!dofi_msg_sends_out(me))
		return 1;
	if (ep->req_evd != NULL)
		dofi_evd_flush_cq(ep->req_evd, 1);
	if (!dofi_msg_sends_out(me))
		return 1;
	if (!late)
		return 0;
	dof_info(DOFI_LOG,
	         "EP %p: the connection's first message had not gone when "
	         "its endpoint closed",
	         (void *)ep);
	return 1;
}

/*
 * Before the endpoint closes (EP reset or free): the peer's accepted
 * message, and our first message, settled as above, waiting for them.
 * ia->lock held.
 */
static void dofi_msg_first_wait(dofi_ep_t *ep)
{
	const struct timespec nap = {0, 200000};
	uint64_t until = dofi_now_ns() + DOFI_SENT_NS;

	while (!dofi_msg_acc_settled(ep, dofi_now_ns()) ||
	       !dofi_msg_sends_settled(ep, dofi_now_ns() >= until))
		(void)nanosleep(&nap, NULL);
}

/* ---- active side --------------------------------------------------------- */

static dof_status_t dofi_msg_connect(dofi_ep_t *ep,
                                     const struct sockaddr_in *dst,
                                     DAT_CONN_QUAL qual, const void *pdata,
                                     DAT_COUNT plen)
{
	dofi_ia_t *ia = ep->obj.ia;
	dofi_msg_ia_t *m = dofi_msg_ia(ia);
	dofi_msg_ep_t *me = dofi_msg_ep(ep);
	unsigned char cm[DOFI_CM_HDR_SIZE + 256];
	struct sockaddr_in dest = *dst;
	struct fi_info *info;
	size_t len;
	int rc;

	/*
	 * One fi_info serves every connect of the IA (under ia->lock):
	 * libfabric copies what it needs in fi_endpoint.
	 */
	if (m->conn_info == NULL) {
		info = fi_dupinfo(ia->info);
		if (info != NULL) {
			free(info->dest_addr);
			info->dest_addr = malloc(sizeof(dest));
			if (info->dest_addr == NULL) {
				fi_freeinfo(info);
				info = NULL;
			}
		}
		if (info == NULL)
			return DOF_ERR_NO_MEMORY;
		m->conn_info = info;
	}
	info = m->conn_info;
	dest.sin_port = htons(dofi_cm_port(qual));
	memcpy(info->dest_addr, &dest, sizeof(dest));
	info->dest_addrlen = sizeof(dest);
	/* The provider's queue sizes, unless this EP sets its own. */
	info->tx_attr->size = ia->info->tx_attr->size;
	info->rx_attr->size = ia->info->rx_attr->size;
	/* The accepted message needs a receive CQ that we can read. */
	me->acc = ia->traits->accept_late && ep->recv_evd != NULL &&
	          ep->recv_evd->cq != NULL;
	me->acc_deadline = 0;
	me->shutdown_sent = 0;
	dofi_msg_rtu_set(ep, DOFI_RTU_NONE);
	if (dofi_msg_open(ep, info) != DOF_OK)
		return DOF_ERR_NO_RESOURCE;
	atomic_store(&ep->state, DAT_EP_STATE_ACTIVE_CONNECTION_PENDING);
	/* We can always send the RTU (fi_inject needs no EVD): offer it. */
	len = dofi_msg_pack(cm, DOFI_CM_REQ,
	                    DOFI_CM_F_RTU | (me->acc ? DOFI_CM_F_ACCEPTED : 0),
	                    pdata, plen, ep);
	rc = DOFI_NOPIPE(fi_connect(ep->fep, &dest, cm, len));
	if (rc != 0) {
		/* sockets refuses synchronously: still an event. */
		DAT_EVENT_NUMBER num =
		        rc == -FI_EHOSTUNREACH || rc == -FI_ENETUNREACH ||
		                        rc == -FI_ETIMEDOUT
		                ? DAT_CONNECTION_EVENT_UNREACHABLE
		                : DAT_CONNECTION_EVENT_NON_PEER_REJECTED;

		dof_info(DOFI_LOG, "EP %p: fi_connect: %s", (void *)ep,
		         fi_strerror(-rc));
		if (rc == -FI_EINVAL) {
			(void)dofi_msg_ep_close(ep);
			atomic_store(&ep->state, DAT_EP_STATE_UNCONNECTED);
			return DOF_ERR_BAD_ADDRESS;
		}
		dofi_cm_up_down(ep, num, NULL, 0);
	}
	return DOF_OK;
}

/*
 * Our end (DISCONNECTED is set): tell the peer. ia->lock held. Never
 * waits (0): the end travels on the stream behind the data.
 */
static int dofi_msg_disconnect(dofi_ep_t *ep)
{
	dofi_msg_ep_t *me = dofi_msg_ep(ep);

	dofi_msg_rtu_set(ep, DOFI_RTU_NONE);
	if (ep->fep != NULL && !me->shutdown_sent) {
		me->shutdown_sent = 1;
		/*
		 * tcp flushes what is posted (FI_ECANCELED) on shutdown, and
		 * aborts a connection being made. sockets gets no
		 * fi_shutdown (close_ends_conn): closing the endpoint ends
		 * the connection there, its CM thread closing the socket
		 * once, and the peer sees FI_SHUTDOWN. Not at once: a
		 * consumer thread may still be inside a post that read the
		 * old state, so the timers close it a little later (or EP
		 * reset or free does, first).
		 */
		if (ep->obj.ia->traits->close_ends_conn) {
			me->close_pending = 1;
			me->close_at = dofi_now_ns() + DOFI_CLOSE_NS;
		} else {
			(void)DOFI_NOPIPE(fi_shutdown(ep->fep, 0));
		}
	}
	/* sockets does not flush, nor tcp a connection never made. */
	if (ep->fep != NULL && me->rtu_op.type == DOFI_OP_CM_RECV &&
	    atomic_load(&me->rtu_op.posted))
		(void)fi_cancel(&ep->fep->fid, &me->rtu_op);
	return 0;
}

/* ---- the link watch --------------------------------------------------------
 */

/*
 * The link watch's bound (dapl-ofi(7)): how long a
 * connection with requests outstanding may go without a sign of life from
 * its peer before it ends BROKEN. DAPL_OFI_LINK_TIMEOUT or link_timeout=
 * in the instance data, in milliseconds or with a unit, "3s", "500ms"
 * (dofi_duration_ms); 0 turns the watch off. In ns; 0 when off.
 */
#define DOFI_LINK_TIMEOUT_MS 20000ull
/* Below this, a retransmission or two could pass for a dead peer. */
#define DOFI_LINK_TIMEOUT_MIN_MS 1000ull

static uint64_t dofi_link_timeout_ns(const dofi_ia_t *ia)
{
	const char *env = getenv("DAPL_OFI_LINK_TIMEOUT");
	uint64_t ms = ia->prov->inst.link_timeout_ms;
	const char *from = "link_timeout= in the instance data";

	if (env != NULL && *env != '\0') {
		from = "DAPL_OFI_LINK_TIMEOUT";
		if (dofi_duration_ms(env, &ms) != DOF_OK)
			ms = 1; /* refused below */
	}
	if (ms == DOFI_INSTANCE_UNSET)
		return DOFI_LINK_TIMEOUT_MS * 1000000ull;
	if (ms != 0 && ms < DOFI_LINK_TIMEOUT_MIN_MS) {
		dof_warn(DOFI_LOG,
		         "IA '%s': %s is not 0 or %llu ms or more (a number of "
		         "ms, or with s or ms); using %llu ms",
		         ia->prov->info.ia_name, from, DOFI_LINK_TIMEOUT_MIN_MS,
		         DOFI_LINK_TIMEOUT_MS);
		ms = DOFI_LINK_TIMEOUT_MS;
	}
	return ms * 1000000ull;
}

/*
 * A lost link is reported by nothing below us in time: tcp and sockets
 * carry a connection on kernel TCP sockets, and TCP retransmits unacked
 * data for about 15 minutes before it gives up; libfabric sets no bound.
 * The kernel knows at once, though, whether the peer still answers: each
 * socket's TCP_INFO says whether it waits for an acknowledgement
 * (unacknowledged data, a window or keepalive probe out) and how long ago
 * the last one came.
 *
 * So every connected EP is looked at every bound/4, on the IA's timers,
 * all at the same instants (one wake for all). The look reads two
 * counters; only an EP that has requests outstanding and had no
 * completion since the last look goes on: its sockets are found once
 * (one walk over /proc/self/fd for all such EPs of a pass, matched by
 * their addresses against fi_getname/fi_getpeer), given TCP keepalive
 * (so that an idle socket gets answers too) and asked for TCP_INFO; a
 * silent one is looked at again when its silence would reach the limit.
 * The peer is dead when none of them had an acknowledgement for the
 * bound less DOFI_LINK_SLACK while one waits for one, twice, 200 ms
 * apart. Then
 * dofi_cm_up_link_lost: the oldest request completes with a transport
 * error, the rest are flushed, BROKEN. A peer that is slow, or has no
 * receive posted, keeps acknowledging (its kernel does) and is never
 * taken for dead; an idle connection is not watched.
 */
#define DOFI_LINK_FDS     4
#define DOFI_LINK_CONFIRM (200ull * 1000000ull)
/*
 * The confirmation and the progress thread's longest nap (100 ms): the
 * peer is taken for dead after the bound less this, so that BROKEN comes
 * within the bound.
 */
#define DOFI_LINK_SLACK (DOFI_LINK_CONFIRM + 100ull * 1000000ull)

/* One socket of the process, for the match (declared in dofi_msg_ep_t). */
typedef struct dofi_link_sock dofi_link_sock_t;

static int dofi_link_sock_cmp(const void *a, const void *b)
{
	const dofi_link_sock_t *x = a, *y = b;

	if (x->peer.sin_addr.s_addr != y->peer.sin_addr.s_addr)
		return x->peer.sin_addr.s_addr < y->peer.sin_addr.s_addr ? -1
		                                                         : 1;
	return 0;
}

static int dofi_link_same(const struct sockaddr_in *a,
                          const struct sockaddr_in *b)
{
	return a->sin_addr.s_addr == b->sin_addr.s_addr &&
	       a->sin_port == b->sin_port;
}

/* fd's addresses, when it is a connected IPv4 TCP socket. */
static int dofi_link_sock_of(int fd, dofi_link_sock_t *s)
{
	socklen_t len = sizeof(s->local);
	int type = 0;
	socklen_t tlen = sizeof(type);

	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tlen) != 0 ||
	    type != SOCK_STREAM)
		return 0;
	if (getsockname(fd, (struct sockaddr *)&s->local, &len) != 0 ||
	    s->local.sin_family != AF_INET)
		return 0;
	len = sizeof(s->peer);
	if (getpeername(fd, (struct sockaddr *)&s->peer, &len) != 0 ||
	    s->peer.sin_family != AF_INET)
		return 0;
	s->fd = fd;
	return 1;
}

/* The process's TCP sockets, sorted by peer address; at most once a pass. */
static void dofi_link_scan(dofi_msg_ia_t *m, uint64_t now)
{
	DIR *d;
	struct dirent *e;
	uint32_t n = 0;

	if (m->link_scan_at == now)
		return;
	m->link_scan_at = now;
	m->nlink_socks = 0;
	d = opendir("/proc/self/fd");
	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		dofi_link_sock_t s;
		struct stat st;
		char *end;
		long fd = strtol(e->d_name, &end, 10);

		if (*end != '\0' || end == e->d_name || fd < 0 ||
		    fd == dirfd(d) || fstat((int)fd, &st) != 0 ||
		    !S_ISSOCK(st.st_mode) || !dofi_link_sock_of((int)fd, &s))
			continue;
		if (n == m->link_socks_cap) {
			uint32_t cap = n ? 2 * n : 64;
			dofi_link_sock_t *v =
			        realloc(m->link_socks, cap * sizeof(*v));

			if (v == NULL)
				break;
			m->link_socks = v;
			m->link_socks_cap = cap;
		}
		m->link_socks[n++] = s;
	}
	closedir(d);
	qsort(m->link_socks, n, sizeof(*m->link_socks), dofi_link_sock_cmp);
	m->nlink_socks = n;
}

/*
 * Find ep's sockets: those between its own address and its peer's (tcp:
 * one; sockets: its CM socket and its data connections, which use other
 * ports of the same two hosts, so any socket between the EP's local port
 * or the peer's port). ia->lock held.
 */
static void dofi_link_find(dofi_ep_t *ep, uint64_t now)
{
	dofi_msg_ia_t *m = dofi_msg_ia(ep->obj.ia);
	dofi_msg_ep_t *me = dofi_msg_ep(ep);
	struct sockaddr_in me_addr, peer;
	size_t alen = sizeof(me_addr), plen = sizeof(peer);
	dofi_link_sock_t key, *s, *end;

	me->nlink = 0;
	if (fi_getname(&ep->fep->fid, &me_addr, &alen) != 0 ||
	    fi_getpeer(ep->fep, &peer, &plen) != 0 ||
	    me_addr.sin_family != AF_INET || peer.sin_family != AF_INET)
		return;
	dofi_link_scan(m, now);
	key.peer = peer;
	dof_debug(DOFI_LOG, "EP %p: link watch: EP port %u, peer port %u",
	          (void *)ep, ntohs(me_addr.sin_port), ntohs(peer.sin_port));
	s = bsearch(&key, m->link_socks, m->nlink_socks, sizeof(key),
	            dofi_link_sock_cmp);
	if (s == NULL)
		return;
	while (s > m->link_socks && dofi_link_sock_cmp(s - 1, &key) == 0)
		s--;
	end = m->link_socks + m->nlink_socks;
	for (; s < end && dofi_link_sock_cmp(s, &key) == 0; s++) {
		int exact = dofi_link_same(&s->local, &me_addr) &&
		            dofi_link_same(&s->peer, &peer);

		if (s->local.sin_addr.s_addr != me_addr.sin_addr.s_addr)
			continue;
		if (ep->obj.ia->traits->auto_progress
		            ? !(exact ||
		                s->local.sin_port == me_addr.sin_port ||
		                s->peer.sin_port == peer.sin_port)
		            : !exact)
			continue;
		if (me->nlink == DOFI_LINK_FDS)
			break;
		me->link[me->nlink++] = *s;
		dof_debug(DOFI_LOG, "EP %p: link watch: fd %d, port %u to %u",
		          (void *)ep, s->fd, ntohs(s->local.sin_port),
		          ntohs(s->peer.sin_port));
	}
	dof_debug(DOFI_LOG, "EP %p: link watch: %d sockets", (void *)ep,
	          me->nlink);
}

/* Whether the sockets found are still those (fds are reused). */
static int dofi_link_valid(dofi_msg_ep_t *me)
{
	int i;

	for (i = 0; i < me->nlink; i++) {
		dofi_link_sock_t s;

		if (!dofi_link_sock_of(me->link[i].fd, &s) ||
		    !dofi_link_same(&s.local, &me->link[i].local) ||
		    !dofi_link_same(&s.peer, &me->link[i].peer))
			return 0;
	}
	return me->nlink > 0;
}

/* Keepalive on an idle socket, so that a live peer keeps answering. */
static void dofi_link_keepalive(int fd, uint64_t bound)
{
	int on = 1, idle = (int)(bound / 4000000000ull), intvl, cnt = 127;

	if (idle < 1)
		idle = 1;
	intvl = idle / 2 > 1 ? idle / 2 : 1;
	(void)setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
}

/*
 * Whether ep's peer is silent past the limit: no acknowledgement on any of
 * its sockets for that long while one waits for one. If not, *wait_ns is
 * how long until it could be (UINT64_MAX: nothing waits).
 */
static int dofi_link_silent(dofi_ep_t *ep, uint64_t now, uint64_t *wait_ns)
{
	dofi_msg_ia_t *m = dofi_msg_ia(ep->obj.ia);
	dofi_msg_ep_t *me = dofi_msg_ep(ep);
	uint64_t young = UINT64_MAX, limit = m->link_ns - DOFI_LINK_SLACK;
	int i, waits = 0;

	if (limit < m->link_ns / 2)
		limit = m->link_ns / 2;
	limit /= 1000000ull;
	*wait_ns = UINT64_MAX;
	if (!dofi_link_valid(me)) {
		dofi_link_find(ep, now);
		for (i = 0; i < me->nlink; i++)
			dofi_link_keepalive(me->link[i].fd, m->link_ns);
	}
	for (i = 0; i < me->nlink; i++) {
		struct tcp_info ti;
		socklen_t len = sizeof(ti);

		memset(&ti, 0, sizeof(ti));
		if (getsockopt(me->link[i].fd, IPPROTO_TCP, TCP_INFO, &ti,
		               &len) != 0)
			return 0;
		if (ti.tcpi_unacked > 0 || ti.tcpi_probes > 0 ||
		    ti.tcpi_retransmits > 0)
			waits = 1;
		if (ti.tcpi_last_ack_recv < young)
			young = ti.tcpi_last_ack_recv;
	}
	dof_debug(DOFI_LOG,
	          "EP %p: link watch: %d sockets, waiting %d, last "
	          "acknowledgement %llu ms ago",
	          (void *)ep, me->nlink, waits, (unsigned long long)young);
	if (me->nlink == 0 || !waits)
		return 0;
	if (young >= limit)
		return 1;
	*wait_ns = (limit - young) * 1000000ull;
	return 0;
}

/* ep's look (ia->lock held); returns when to look again. */
static uint64_t dofi_link_check(dofi_ep_t *ep, uint64_t now)
{
	dofi_msg_ia_t *m = dofi_msg_ia(ep->obj.ia);
	dofi_msg_ep_t *me = dofi_msg_ep(ep);
	uint64_t head = atomic_load(&ep->req_pool.head);
	uint32_t seq = atomic_load(&ep->req_seq);
	uint64_t period = m->link_ns / 4, wait;
	uint64_t next = (now / period + 1) * period;

	if (head != me->link_head ||
	    (me->link_idle && seq == me->link_idle_seq)) {
		/* Completions came, or nothing was posted since idle. */
		me->link_head = head;
		me->link_silent_at = 0;
		return next;
	}
	if (dofi_pool_used(&ep->req_pool) == 0) {
		me->link_idle = 1;
		me->link_idle_seq = seq;
		me->link_silent_at = 0;
		return next;
	}
	me->link_idle = 0;
	if (!dofi_link_silent(ep, now, &wait)) {
		me->link_silent_at = 0;
		/* Silent but not for long enough: look when it would be. */
		if (wait < DOFI_LINK_CONFIRM)
			wait = DOFI_LINK_CONFIRM / 4;
		return wait < next - now ? now + wait : next;
	}
	if (me->link_silent_at == 0) {
		/* Once more, a little later, to be sure. */
		me->link_silent_at = now;
		return now + DOFI_LINK_CONFIRM;
	}
	dof_warn(DOFI_LOG,
	         "EP %p: no answer from the peer for %llu ms with requests "
	         "outstanding (the link timeout): connection broken",
	         (void *)ep, (unsigned long long)(m->link_ns / 1000000ull));
	me->link_next = 0;
	dofi_cm_up_link_lost(ep);
	return UINT64_MAX;
}

/*
 * The backend's deadlines of ep: the RTU wait (ep->deadline), a peer's
 * end held for RTUs, our end's close (sockets). With now, act on what is
 * due. ia->lock held.
 */
static uint64_t dofi_msg_ep_timers(dofi_ep_t *ep, uint64_t now, int *poll)
{
	dofi_msg_ia_t *m = dofi_msg_ia(ep->obj.ia);
	dofi_msg_ep_t *me = dofi_msg_ep(ep);
	uint64_t next = UINT64_MAX;
	DAT_EP_STATE s;

	*poll = 0;
	if (me == NULL)
		return next;
	/* The link watch, while the connection is up (first: it may end
	 * the connection, which the rest then sees). */
	if (dofi_msg_ia(ep->obj.ia)->link_ns != 0 && ep->fep != NULL &&
	    atomic_load(&ep->state) == DAT_EP_STATE_CONNECTED) {
		uint64_t period = dofi_msg_ia(ep->obj.ia)->link_ns / 4;

		if (me->link_next == 0) {
			me->link_head = atomic_load(&ep->req_pool.head);
			me->link_idle = 0;
			me->link_silent_at = 0;
			me->nlink = 0;
			me->link_next = (dofi_now_ns() / period + 1) * period;
		} else if (now != 0 && now >= me->link_next) {
			me->link_next = dofi_link_check(ep, now);
			if (me->link_next == UINT64_MAX)
				me->link_next = 0;
		}
	} else {
		me->link_next = 0;
	}
	s = atomic_load(&ep->state);
	/*
	 * The RTU wait: once FI_CONNECTED is in, the RTU's completion may
	 * sit in a CQ nobody reads (the consumer waits for the connection
	 * event): look at every pass, as the wait is short; lazily when
	 * nobody waits for it (dofi_msg_rtu_eager).
	 */
	if (now != 0 && s == DAT_EP_STATE_COMPLETION_PENDING &&
	    me->rtu == DOFI_RTU_WAIT &&
	    ((me->rtu_connected && !me->rtu_lazy) || me->end_after_rtu ||
	     now >= ep->deadline))
		dofi_msg_rtu_check(ep, now);
	/* The head of the RTU wait carries the lazy pass's timer. */
	if (now != 0 && m->rtu_lazy_n > 0 && now >= m->rtu_lazy_at &&
	    m->rtu_wait.next == &me->rtu_link)
		dofi_msg_rtu_lazy_pass(ep->obj.ia, now);
	/* A peer's end held for the RTUs due (dofi_msg_shutdown): at its
	 * bound, it and the ends held before it. */
	if (now != 0 && me->peer_end_at != 0 && now >= me->peer_end_at)
		dofi_msg_ends_release(ep->obj.ia, now);
	/* A peer's end held for messages waiting for receives. */
	dofi_msg_drain_look(ep, now != 0 && now >= me->drain_next);
	/* Our end, once what was in flight is settled. */
	if (now != 0 && me->close_pending && ep->deadline == 0 &&
	    now >= me->close_at &&
	    atomic_load(&ep->state) == DAT_EP_STATE_DISCONNECTED &&
	    dofi_msg_acc_settled(ep, now) &&
	    dofi_msg_sends_settled(ep, now >= me->close_at + DOFI_SENT_NS)) {
		dof_debug(DOFI_LOG,
		          "EP %p: closing the endpoint ends the connection",
		          (void *)ep);
		me->close_pending = 0;
		(void)dofi_msg_ep_close(ep);
		dofi_cm_read_cqs(ep);
	}
	s = atomic_load(&ep->state);
	if (s == DAT_EP_STATE_COMPLETION_PENDING && me->rtu == DOFI_RTU_WAIT) {
		*poll = (me->rtu_connected && !me->rtu_lazy) ||
		        me->end_after_rtu;
		if (ep->deadline != 0 && ep->deadline < next)
			next = ep->deadline;
	}
	if (m->rtu_lazy_n > 0 && m->rtu_wait.next == &me->rtu_link &&
	    m->rtu_lazy_at < next)
		next = m->rtu_lazy_at;
	if (me->peer_end_at != 0 && me->peer_end_at < next)
		next = me->peer_end_at;
	if (me->drain_by != 0 && me->drain_next < next)
		next = me->drain_next;
	if (me->link_next != 0 && me->link_next < next)
		next = me->link_next;
	if (me->close_pending) {
		uint64_t at = me->close_at;

		if ((me->acc && me->acc_deadline > at) ||
		    dofi_msg_sends_out(me))
			*poll = 1; /* the accepted message may come, ours go */
		if (at < next)
			next = at;
	}
	return next;
}

static void dofi_msg_ep_kicked(dofi_ep_t *ep)
{
	dofi_msg_ep_t *me = dofi_msg_ep(ep);

	if (me != NULL && me->rtu == DOFI_RTU_WAIT &&
	    atomic_load(&ep->state) == DAT_EP_STATE_COMPLETION_PENDING)
		dofi_msg_rtu_check(ep, 0);
	/* The first held end, kicked when the oldest RTU was settled. */
	if (me != NULL && me->peer_end_at != 0)
		dofi_msg_ends_release(ep->obj.ia, 0);
	/* A held end's FI_PEEK answered: nothing waits any more? */
	if (me != NULL)
		dofi_msg_drain_look(ep, atomic_load(&me->peek_done) ==
		                                DOFI_PEEK_EMPTY);
}

/* ---- service points ------------------------------------------------------ */

/* Close parked listeners: those due at now (0: all; port: that port's). */
static void dofi_msg_parked_close(dofi_parked_pep_t *p)
{
	dofi_timer_disarm(&p->ia->timers, &p->timer.t);
	dofi_list_del(&p->link);
	(void)DOFI_NOPIPE(fi_close(&p->pep->fid));
	fi_freeinfo(p->info);
	free(p);
}

static void dofi_msg_parked_fire(dofi_cm_timer_t *tm, uint64_t now)
{
	(void)now;
	dofi_msg_parked_close(dofi_container_of(tm, dofi_parked_pep_t, timer));
}

/* Close the parked listeners on port (0: all). ia->lock held. */
static void dofi_msg_close_parked(dofi_ia_t *ia, int port)
{
	dofi_list_t *e, *next, *head = &dofi_msg_ia(ia)->parked;

	for (e = head->next; e != head; e = next) {
		dofi_parked_pep_t *p =
		        dofi_container_of(e, dofi_parked_pep_t, link);

		next = e->next;
		if (port == 0 || p->port == (uint16_t)port)
			dofi_msg_parked_close(p);
	}
}

static void dofi_msg_park_pep(dofi_ia_t *ia, struct fid_pep *pep,
                              struct fi_info *info, uint16_t port)
{
	dofi_parked_pep_t *p = calloc(1, sizeof(*p));

	if (p == NULL) {
		(void)DOFI_NOPIPE(fi_close(&pep->fid));
		fi_freeinfo(info);
		return;
	}
	p->pep = pep;
	p->info = info;
	p->port = port;
	p->ia = ia;
	dofi_timer_init(&p->timer.t);
	p->timer.fire = dofi_msg_parked_fire;
	dofi_list_add_tail(&dofi_msg_ia(ia)->parked, &p->link);
	if (dofi_timer_arm(&ia->timers, &p->timer.t,
	                   dofi_now_ns() + DOFI_PARK_NS) != DOF_OK)
		dofi_msg_parked_close(p);
	else
		dofi_progress_wake(ia);
}

static struct fid_pep *dofi_msg_parked_of(dofi_ia_t *ia, const struct fid *fid)
{
	dofi_list_t *e, *head = &dofi_msg_ia(ia)->parked;

	for (e = head->next; e != head; e = e->next) {
		dofi_parked_pep_t *p =
		        dofi_container_of(e, dofi_parked_pep_t, link);

		if (&p->pep->fid == fid)
			return p->pep;
	}
	return NULL;
}

/*
 * Listen on port qual (0: any); the bound port in *qual. ia->lock held.
 * Gated (sockets), libfabric listens on another port (dofi_gate_port) and
 * the gate on the qualifier's.
 */
static dof_status_t dofi_msg_listen(dofi_sp_t *sp, DAT_CONN_QUAL *qual)
{
	dofi_ia_t *ia = sp->obj.ia;
	int gated = dofi_msg_ia(ia)->gated, err = 0, gfd = -1;
	struct sockaddr_in addr = ia->addr, outer = ia->addr;
	dofi_msg_sp_t *ms;
	struct fi_info *info;
	size_t alen = sizeof(addr);
	int rc;

	/* A parked listener of ours may still hold the port. */
	if (*qual != 0)
		dofi_msg_close_parked(ia, dofi_cm_port(*qual));
	/*
	 * Gated, the qualifier's port listens first, so that a request
	 * sent while libfabric's listener starts (a few threads on sockets)
	 * waits in its backlog instead of being refused.
	 */
	if (gated) {
		outer.sin_port = htons(dofi_cm_port(*qual));
		gfd = dofi_gate_open(&outer, &err);
		if (gfd < 0) {
			dof_info(DOFI_LOG, "listening on conn_qual %llu: %s",
			         (unsigned long long)*qual, strerror(err));
			return err == EADDRINUSE ? DOF_ERR_IN_USE
			                         : DOF_ERR_NO_MEMORY;
		}
	}
	ms = calloc(1, sizeof(*ms));
	info = ms != NULL ? fi_dupinfo(ia->info) : NULL;
	if (info == NULL)
		goto err_mem;
	addr.sin_port = gated ? htons(dofi_gate_port(
	                                &ia->addr, &dofi_msg_ia(ia)->gate_port))
	                      : htons(dofi_cm_port(*qual));
	free(info->src_addr);
	info->src_addr = malloc(sizeof(addr));
	if (info->src_addr == NULL) {
		fi_freeinfo(info);
		goto err_mem;
	}
	memcpy(info->src_addr, &addr, sizeof(addr));
	info->src_addrlen = sizeof(addr);
	/* sockets keeps a shallow copy of info: it lives as long as the pep. */
	ms->info = info;
	rc = DOFI_NOPIPE(fi_passive_ep(ia->fabric, info, &ms->pep, sp));
	if (rc == 0)
		rc = fi_pep_bind(ms->pep, &dofi_msg_ia(ia)->eq->fid, 0);
	if (rc == 0)
		rc = DOFI_NOPIPE(fi_listen(ms->pep));
	if (rc == 0 && (*qual == 0 || gated)) {
		rc = fi_getname(&ms->pep->fid, &addr, &alen);
		*qual = gated ? *qual : ntohs(addr.sin_port);
	}
	if (rc == 0 && gated) {
		ms->gate_lis = dofi_gate_listen(&dofi_msg_ia(ia)->gate, gfd,
		                                &addr, &err);
		gfd = -1; /* the gate's now, or closed */
		if (ms->gate_lis == NULL)
			rc = -FI_ENOMEM;
		else
			*qual = ntohs(outer.sin_port);
	}
	if (rc != 0) {
		if (gfd >= 0)
			close(gfd);
		if (ms->pep != NULL)
			(void)DOFI_NOPIPE(fi_close(&ms->pep->fid));
		fi_freeinfo(ms->info);
		free(ms);
		dof_info(DOFI_LOG, "listening on conn_qual %llu: %s",
		         (unsigned long long)*qual, fi_strerror(-rc));
		if (rc == -FI_EADDRINUSE || rc == -EADDRINUSE ||
		    (!gated && addr.sin_port != 0 && dofi_port_busy(&addr)))
			return DOF_ERR_IN_USE;
		return dofi_fi_status(rc);
	}
	sp->cm = ms;
	return DOF_OK;
err_mem:
	free(ms);
	if (gfd >= 0)
		close(gfd);
	return DOF_ERR_NO_MEMORY;
}

static void dofi_msg_unlisten(dofi_sp_t *sp)
{
	dofi_msg_sp_t *ms = sp->cm;

	if (ms == NULL)
		return;
	if (ms->gate_lis != NULL)
		dofi_gate_unlisten(dofi_msg_ia(sp->obj.ia)->gate, ms->gate_lis);
	if (ms->pep != NULL)
		(void)DOFI_NOPIPE(fi_close(&ms->pep->fid));
	if (ms->info != NULL)
		fi_freeinfo(ms->info);
	free(ms);
	sp->cm = NULL;
}

static int dofi_msg_sp_listens(const dofi_sp_t *sp, const void *fid)
{
	const dofi_msg_sp_t *ms = sp->cm;

	return ms != NULL && ms->pep != NULL && &ms->pep->fid == fid;
}

/* The SP whose listener fid is, or NULL. ia->lock held. */
static dofi_sp_t *dofi_msg_sp_of(dofi_ia_t *ia, const struct fid *fid)
{
	return dofi_cm_sp_search(ia, dofi_msg_sp_listens, fid);
}

/* ---- passive side -------------------------------------------------------- */

static void dofi_msg_cr_release(dofi_cr_t *cr)
{
	dofi_msg_cr_t *mc = cr->cm;
	int rejected = 0;

	if (mc == NULL)
		return;
	if (mc->info != NULL) {
		if (mc->pep != NULL)
			rejected =
			        DOFI_NOPIPE(fi_reject(mc->pep, mc->info->handle,
			                              NULL, 0)) == 0;
		fi_freeinfo(mc->info);
		mc->info = NULL;
	}
	if (mc->pep_info != NULL) {
		/* The listener of a spent RSP: ours to close. */
		if (rejected || mc->rejected) {
			dofi_msg_park_pep(cr->obj.ia, mc->pep, mc->pep_info,
			                  dofi_cm_port(cr->qual));
		} else {
			(void)DOFI_NOPIPE(fi_close(&mc->pep->fid));
			fi_freeinfo(mc->pep_info);
		}
		mc->pep_info = NULL;
	}
	free(mc);
	cr->cm = NULL;
}

/* FI_CONNREQ. ia->lock held. Takes ownership of info. */
static void dofi_msg_connreq(dofi_sp_t *sp, struct fi_info *info,
                             const void *data, size_t len)
{
	dofi_msg_sp_t *ms = sp->cm;
	const unsigned char *pdata;
	dofi_cm_req_t req;
	dofi_msg_cr_t *mc;
	dofi_cm_hdr_t h;
	dofi_cr_t *cr;
	uint8_t type;

	type = dofi_msg_unpack(data, len, &pdata, &req.plen, &h);
	mc = type == DOFI_CM_REQ ? calloc(1, sizeof(*mc)) : NULL;
	if (mc == NULL) {
		if (type != DOFI_CM_REQ)
			dof_warn(DOFI_LOG,
			         "conn_qual %llu: connection request "
			         "without a valid dapl-ofi header (%zu "
			         "bytes); rejected",
			         (unsigned long long)sp->qual, len);
		(void)DOFI_NOPIPE(fi_reject(ms->pep, info->handle, NULL, 0));
		fi_freeinfo(info);
		return;
	}
	req.pdata = pdata;
	req.rdma_in = h.rdma_in;
	req.rdma_out = h.rdma_out;
	memset(&req.remote_addr, 0, sizeof(req.remote_addr));
	req.remote_port = 0;
	if (info->dest_addr != NULL &&
	    info->dest_addrlen >= sizeof(req.remote_addr) &&
	    ((struct sockaddr *)info->dest_addr)->sa_family == AF_INET) {
		memcpy(&req.remote_addr, info->dest_addr,
		       sizeof(req.remote_addr));
		req.remote_port = ntohs(req.remote_addr.sin_port);
		req.remote_addr.sin_port = 0;
	} else {
		req.remote_addr.sin_family = AF_INET;
	}
	mc->pep = ms->pep;
	mc->info = info;
	mc->rtu = (h.flags & DOFI_CM_F_RTU) != 0;
	mc->acc = (h.flags & DOFI_CM_F_ACCEPTED) != 0;
	cr = dofi_cm_up_request(sp, &req, mc);
	if (cr == NULL) {
		(void)DOFI_NOPIPE(fi_reject(ms->pep, info->handle, NULL, 0));
		fi_freeinfo(info);
		free(mc);
		return;
	}
	if (sp->obj.type == DOFI_OBJ_RSP) {
		/* The request keeps the RSP's listener. */
		mc->pep_info = ms->info;
		ms->info = NULL;
		ms->pep = NULL;
		dofi_cm_up_rsp_spent(sp, cr);
	}
}

static dof_status_t dofi_msg_accept(dofi_cr_t *cr, dofi_ep_t *ep,
                                    const void *pdata, DAT_COUNT plen)
{
	dofi_msg_cr_t *mc = cr->cm;
	dofi_msg_ep_t *me = dofi_msg_ep(ep);
	unsigned char cm[DOFI_CM_HDR_SIZE + 256];
	struct fi_info *info;
	size_t len;
	int rc, acc;

	info = mc->info;
	mc->info = NULL;
	/*
	 * The RTU needs the internal receive, so a receive CQ: an EP with no
	 * recv EVD has its receives bound to the IA's null CQ, which nobody
	 * reads. Such a connection goes without an RTU and reports
	 * ESTABLISHED at FI_CONNECTED, as libfabric's CM alone would.
	 * dofi_msg_open drops it too if the receive cannot be posted.
	 */
	dofi_msg_rtu_set(ep, mc->rtu && ep->recv_evd != NULL &&
	                                     ep->recv_evd->cq != NULL
	                             ? DOFI_RTU_WAIT
	                             : DOFI_RTU_NONE);
	me->rtu_connected = 0;
	me->end_after_rtu = 0;
	me->acc = 0; /* the requester waits for it, not we */
	me->shutdown_sent = 0;
	if (dofi_msg_open(ep, info) != DOF_OK) {
		dofi_msg_rtu_set(ep, DOFI_RTU_NONE);
		mc->info = info;
		return DOF_ERR_NO_RESOURCE;
	}
	me->info = info;
	ep->deadline =
	        me->rtu == DOFI_RTU_WAIT ? dofi_now_ns() + DOFI_RTU_NS : 0;
	atomic_store(&ep->state, DAT_EP_STATE_COMPLETION_PENDING);
	acc = mc->acc;
	len = dofi_msg_pack(cm, DOFI_CM_REP,
	                    (me->rtu == DOFI_RTU_WAIT ? DOFI_CM_F_RTU : 0) |
	                            (acc ? DOFI_CM_F_ACCEPTED : 0),
	                    pdata, plen, ep);
	rc = DOFI_NOPIPE(fi_accept(ep->fep, cm, len));
	/* Our first message, before ESTABLISHED lets the consumer send. */
	if (rc == 0 && acc && dofi_dto_send_internal(ep, &me->acc_op) != DOF_OK)
		dof_info(DOFI_LOG,
		         "EP %p: the accepted message cannot be "
		         "sent; the requester waits for it in vain",
		         (void *)ep);
	if (rc != 0) {
		dof_info(DOFI_LOG, "EP %p: fi_accept: %s", (void *)ep,
		         fi_strerror(-rc));
		dofi_cm_up_down(ep,
		                DAT_CONNECTION_EVENT_ACCEPT_COMPLETION_ERROR,
		                NULL, 0);
	}
	return DOF_OK;
}

static void dofi_msg_reject(dofi_cr_t *cr, const void *pdata, DAT_COUNT plen)
{
	dofi_msg_cr_t *mc = cr->cm;
	unsigned char cm[DOFI_CM_HDR_SIZE + 256];
	size_t len;
	int rc;

	if (mc == NULL || mc->info == NULL)
		return;
	len = dofi_msg_pack(cm, DOFI_CM_REJ, 0, pdata, plen, NULL);
	rc = DOFI_NOPIPE(fi_reject(mc->pep, mc->info->handle, cm, len));
	if (rc != 0)
		dof_info(DOFI_LOG, "fi_reject: %s", fi_strerror(-rc));
	mc->rejected = rc == 0;
	fi_freeinfo(mc->info);
	mc->info = NULL;
}

/* ---- EQ events ----------------------------------------------------------- */

static void dofi_msg_connected(dofi_ep_t *ep, const void *data, size_t len)
{
	dofi_msg_ep_t *me = dofi_msg_ep(ep);
	const unsigned char *pdata;
	DAT_COUNT plen;
	DAT_EP_STATE s = atomic_load(&ep->state);
	dofi_cm_hdr_t h;
	uint8_t flags;

	if (s == DAT_EP_STATE_ACTIVE_CONNECTION_PENDING) {
		if (dofi_msg_unpack(data, len, &pdata, &plen, &h) !=
		    DOFI_CM_REP)
			h.type = 0;
		flags = h.flags;
		if (h.type != DOFI_CM_REP) {
			dof_warn(DOFI_LOG,
			         "EP %p: the peer accepted without a "
			         "valid dapl-ofi header; "
			         "disconnecting",
			         (void *)ep);
			dofi_cm_up_down(ep,
			                DAT_CONNECTION_EVENT_NON_PEER_REJECTED,
			                NULL, 0);
			return;
		}
		if (me->acc && (flags & DOFI_CM_F_ACCEPTED)) {
			me->acc_deadline = dofi_now_ns() + DOFI_ACC_NS;
		} else if (me->acc) {
			/*
			 * The peer sends none: take the receive back before
			 * the RTU lets the peer send (a peer without the RTU
			 * may have sent already; its first message is lost).
			 */
			me->acc = 0;
			if (atomic_load(&me->acc_op.posted))
				(void)fi_cancel(&ep->fep->fid, &me->acc_op);
		}
		/*
		 * The RTU goes before ESTABLISHED, so before any DTO of the
		 * consumer's (they need the Connected state).
		 */
		if ((flags & DOFI_CM_F_RTU) &&
		    dofi_dto_send_internal(ep, &me->rtu_op) != DOF_OK) {
			dof_warn(DOFI_LOG,
			         "EP %p: the ready-to-use message "
			         "cannot be sent; disconnecting",
			         (void *)ep);
			dofi_cm_up_down(ep,
			                DAT_CONNECTION_EVENT_NON_PEER_REJECTED,
			                NULL, 0);
			return;
		}
		/* The local port: read when dat_ep_query asks for it. */
		ep->local_unnamed = 1;
		dofi_cm_up_established(ep, pdata, plen);
	} else if (s == DAT_EP_STATE_COMPLETION_PENDING) {
		if (me->rtu == DOFI_RTU_WAIT) {
			me->rtu_connected = 1;
			if (dofi_msg_rtu_eager(ep))
				dofi_msg_rtu_check(ep, 0);
			else
				dofi_msg_rtu_lazy(ep);
			dofi_cm_schedule(ep); /* watched until the RTU */
		} else {
			dofi_msg_passive_established(ep);
		}
	}
}

static void dofi_msg_shutdown(dofi_ep_t *ep)
{
	dofi_msg_ia_t *m = dofi_msg_ia(ep->obj.ia);
	dofi_msg_ep_t *me = dofi_msg_ep(ep);

	dof_debug(DOFI_LOG, "EP %p: FI_SHUTDOWN in state %d", (void *)ep,
	          (int)atomic_load(&ep->state));
	me->acc = 0; /* the peer's end: ours cannot be lost any more */
	dofi_msg_rtu_settle(ep);
	switch (atomic_load(&ep->state)) {
	case DAT_EP_STATE_CONNECTED:
	case DAT_EP_STATE_DISCONNECT_PENDING:
		/*
		 * The peer may have sent an RTU on another connection before
		 * it ended this one (it took both connections, then left
		 * this): the RTU travels on that connection, this end on
		 * the CM's, and the end often comes first. Report the end
		 * after those RTUs are settled (ESTABLISHED, or
		 * ACCEPT_COMPLETION_ERROR at their deadline), as the peer
		 * did things, and after the ends held before it. OFED's
		 * dtestcm takes any connection event for the one it expects.
		 */
		if (dofi_list_empty(&m->rtu_wait) &&
		    dofi_list_empty(&m->ends_held)) {
			dofi_msg_peer_end(ep);
			break;
		}
		if (me->peer_end_at != 0)
			break; /* held already */
		me->end_mark =
		        dofi_list_empty(&m->rtu_wait)
		                ? 0
		                : dofi_container_of(m->rtu_wait.prev,
		                                    dofi_msg_ep_t, rtu_link)
		                          ->rtu_seq;
		me->peer_end_at = dofi_now_ns() + DOFI_ORDER_NS;
		dofi_list_add_tail(&m->ends_held, &me->end_link);
		/* Lazy ones: a lazy pass at the next look. */
		dofi_msg_rtu_soon(ep->obj.ia);
		dofi_cm_schedule(ep);
		dofi_msg_ends_release(ep->obj.ia, 0);
		break;
	case DAT_EP_STATE_ACTIVE_CONNECTION_PENDING:
		me->shutdown_sent = 1;
		dofi_cm_up_down(ep, DAT_CONNECTION_EVENT_NON_PEER_REJECTED,
		                NULL, 0);
		break;
	case DAT_EP_STATE_COMPLETION_PENDING:
		me->shutdown_sent = 1;
		/*
		 * The requester may have taken the connection and left it
		 * again, its RTU still on the way: sockets and verbs carry
		 * the end apart from the data, and it often comes first.
		 * Wait for the RTU (its receive completes, or the wait's
		 * deadline): ESTABLISHED, then the end; without it,
		 * ACCEPT_COMPLETION_ERROR.
		 */
		if (me->rtu == DOFI_RTU_WAIT &&
		    atomic_load(&me->rtu_done) == DOFI_RTU_PENDING) {
			uint64_t by = dofi_now_ns() + DOFI_END_RTU_NS;

			me->end_after_rtu = 1;
			if (ep->deadline == 0 || by < ep->deadline)
				ep->deadline = by;
			dof_debug(DOFI_LOG,
			          "EP %p: the requester ended the connection "
			          "before its RTU came in; waiting for it",
			          (void *)ep);
			dofi_cm_schedule(ep); /* looked at every pass */
			break;
		}
		dofi_cm_up_down(ep,
		                DAT_CONNECTION_EVENT_ACCEPT_COMPLETION_ERROR,
		                NULL, 0);
		break;
	default:
		break; /* already down: our own disconnect, seen again */
	}
}

static void dofi_msg_error(dofi_ia_t *ia, const struct fi_eq_err_entry *err)
{
	const unsigned char *pdata;
	DAT_COUNT plen;
	dofi_ep_t *ep = dofi_map_get(&dofi_msg_ia(ia)->eps, err->fid);
	dofi_msg_ep_t *me;
	dofi_cm_hdr_t h;
	uint8_t type;

	if (ep == NULL) {
		dof_debug(DOFI_LOG, "EQ error %d for an object that is gone",
		          err->err);
		return;
	}
	me = dofi_msg_ep(ep);
	me->acc = 0;
	dofi_msg_rtu_settle(ep);
	switch (atomic_load(&ep->state)) {
	case DAT_EP_STATE_ACTIVE_CONNECTION_PENDING:
		me->shutdown_sent = 1;
		if (err->err == ETIMEDOUT || err->err == EHOSTUNREACH ||
		    err->err == ENETUNREACH || err->err == FI_ETIMEDOUT ||
		    err->err == FI_EHOSTUNREACH) {
			dofi_cm_up_down(ep, DAT_CONNECTION_EVENT_UNREACHABLE,
			                NULL, 0);
			break;
		}
		type = dofi_msg_unpack(err->err_data, err->err_data_size,
		                       &pdata, &plen, &h);
		if (type == DOFI_CM_REJ)
			dofi_cm_up_down(ep, DAT_CONNECTION_EVENT_PEER_REJECTED,
			                pdata, plen);
		else
			dofi_cm_up_down(ep,
			                DAT_CONNECTION_EVENT_NON_PEER_REJECTED,
			                NULL, 0);
		break;
	case DAT_EP_STATE_COMPLETION_PENDING:
		me->shutdown_sent = 1;
		dofi_cm_up_down(ep,
		                DAT_CONNECTION_EVENT_ACCEPT_COMPLETION_ERROR,
		                NULL, 0);
		break;
	case DAT_EP_STATE_CONNECTED:
	case DAT_EP_STATE_DISCONNECT_PENDING:
		dof_info(DOFI_LOG, "EP %p: connection broken: %s", (void *)ep,
		         fi_strerror(err->err));
		me->shutdown_sent = 1;
		dofi_cm_up_down(ep, DAT_CONNECTION_EVENT_BROKEN, NULL, 0);
		break;
	default:
		break;
	}
}

/*
 * Read and handle EQ events, under ia->lock: an EP is found by the fid an
 * event names, and no endpoint may close and reopen at the same address
 * between the read and the look-up.
 */
static int dofi_msg_progress(dofi_ia_t *ia, dofi_evd_t *until)
{
	dofi_msg_ia_t *m = dofi_msg_ia(ia);
	/* fi_eq_cm_entry, then the CM data libfabric carries. */
	union {
		struct fi_eq_cm_entry cm;
		unsigned char raw[sizeof(struct fi_eq_cm_entry) + 512];
	} buf;
	uint32_t event;
	uint64_t epoch;
	int early = 0;
	ssize_t rc;

	pthread_mutex_lock(&ia->lock);
	epoch = ++m->eq_epoch;
	m->read_epoch++;
	m->until = until;
	for (;;) {
		rc = fi_eq_read(m->eq, &event, &buf, sizeof(buf), 0);
		if (rc == -FI_EAVAIL) {
			struct fi_eq_err_entry err;

			memset(&err, 0, sizeof(err));
			if (fi_eq_readerr(m->eq, &err, 0) < 0)
				break;
			dofi_msg_error(ia, &err);
			continue;
		}
		if (rc < 0) {
			/* All read: stale events of closed fids are gone. */
			if (rc == -FI_EAGAIN && m->ntombs > 0)
				dofi_msg_tombs_expire(m, epoch);
			break;
		}
		if ((size_t)rc < sizeof(buf.cm)) {
			dof_warn(DOFI_LOG, "short EQ entry (%zd bytes)", rc);
			continue;
		}
		switch (event) {
		case FI_CONNREQ: {
			dofi_sp_t *sp = dofi_msg_sp_of(ia, buf.cm.fid);

			if (sp == NULL) {
				struct fid_pep *pep =
				        dofi_msg_parked_of(ia, buf.cm.fid);

				dof_debug(DOFI_LOG, "connection request for a "
				                    "closed service point");
				if (pep != NULL)
					(void)DOFI_NOPIPE(fi_reject(
					        pep, buf.cm.info->handle, NULL,
					        0));
				fi_freeinfo(buf.cm.info);
				break;
			}
			dofi_msg_connreq(sp, buf.cm.info, buf.cm.data,
			                 (size_t)rc - sizeof(buf.cm));
			break;
		}
		case FI_CONNECTED: {
			dofi_ep_t *ep = dofi_map_get(&m->eps, buf.cm.fid);

			if (ep != NULL)
				dofi_msg_connected(ep, buf.cm.data,
				                   (size_t)rc - sizeof(buf.cm));
			break;
		}
		case FI_SHUTDOWN: {
			dofi_ep_t *ep = dofi_map_get(&m->eps, buf.cm.fid);

			/*
			 * A peer may end one connection right after another
			 * became established on its side: report the RTUs
			 * that already came in (ESTABLISHED) before this end,
			 * once per drain (one read of each CQ serves all).
			 */
			if (!dofi_list_empty(&m->rtu_wait) &&
			    m->settle_epoch != epoch) {
				m->settle_epoch = epoch;
				dofi_msg_rtu_settle_all(ia);
			}
			if (ep != NULL)
				dofi_msg_shutdown(ep);
			else
				dof_debug(DOFI_LOG, "FI_SHUTDOWN for an "
				                    "endpoint that is gone");
			break;
		}
		default:
			dof_debug(DOFI_LOG, "EQ event %u ignored", event);
			break;
		}
		/*
		 * The event the caller waits for is in: the rest, and the
		 * data progress, wait for its next call.
		 */
		if (until != NULL && atomic_load(&until->count) > 0) {
			early = 1;
			break;
		}
	}
	/* The consumer looks at connection events: the lazy RTUs too. */
	if (!early && m->rtu_lazy_n > 0 && until != NULL &&
	    (until->flags & DAT_EVD_CONNECTION_FLAG))
		dofi_msg_rtu_look(ia);
	dofi_msg_ends_release(ia, 0);
	m->until = NULL;
	pthread_mutex_unlock(&ia->lock);
	return early;
}

static int dofi_msg_wait_fd(dofi_ia_t *ia, int *ready)
{
	dofi_msg_ia_t *m = dofi_msg_ia(ia);
	struct fid *eqf;

	if (m->eq_fd < 0)
		return -1;
	/*
	 * Arm the EQ's fd: libfabric's util EQ sets a signal on each event
	 * and clears it only in fi_trywait, so without this the fd stays
	 * readable and a waiter would spin.
	 */
	eqf = &m->eq->fid;
	if (fi_trywait(ia->fabric, &eqf, 1) == -FI_EAGAIN)
		*ready = 1;
	return m->eq_fd;
}

/* ---- EPs and the IA ------------------------------------------------------ */

/* Close the connection's endpoint; forget the connection. ia->lock held. */
static int dofi_msg_ep_close(dofi_ep_t *ep)
{
	dofi_msg_ia_t *m = dofi_msg_ia(ep->obj.ia);
	dofi_msg_ep_t *me = dofi_msg_ep(ep);
	int stale;

	if (me == NULL)
		return 0;
	dofi_msg_first_wait(ep);
	stale = atomic_load(&me->rtu_op.posted) ||
	        atomic_load(&me->acc_op.posted) ||
	        atomic_load(&me->peek_op.posted);
	if (ep->fep != NULL) {
		const struct fid *fid = &ep->fep->fid;

		(void)dofi_map_del(&m->eps, fid);
		dofi_ep_close_fep(ep);
		if (ep->obj.ia->traits->eq_keeps_closed)
			dofi_msg_tomb_add(m, fid);
	}
	if (me->info != NULL) {
		fi_freeinfo(me->info);
		me->info = NULL;
	}
	me->shutdown_sent = 0;
	me->close_pending = 0;
	dofi_msg_end_unhold(me);
	dofi_msg_drain_stop(me);
	me->end_after_rtu = 0;
	me->acc = 0;
	dofi_msg_rtu_set(ep, DOFI_RTU_NONE);
	return stale;
}

static dof_status_t dofi_msg_ep_init(dofi_ep_t *ep)
{
	dofi_msg_ep_t *me = calloc(1, sizeof(*me));

	if (me == NULL)
		return DOF_ERR_NO_MEMORY;
	me->ep = ep;
	me->rtu_op.ep = ep;
	me->acc_op.ep = ep;
	dofi_list_init(&me->rtu_link);
	dofi_list_init(&me->end_link);
	ep->cm = me;
	return DOF_OK;
}

static void dofi_msg_ep_fini(dofi_ep_t *ep)
{
	if (ep->cm != NULL)
		dofi_msg_end_unhold(dofi_msg_ep(ep));
	free(ep->cm);
	ep->cm = NULL;
}

static dof_status_t dofi_msg_ia_open(dofi_ia_t *ia)
{
	struct fi_eq_attr eq_attr = {.size = 1024, .wait_obj = FI_WAIT_FD};
	dofi_msg_ia_t *m = calloc(1, sizeof(*m));
	int rc;

	if (m == NULL)
		return DOF_ERR_NO_MEMORY;
	m->eq_fd = -1;
	dofi_map_init(&m->eps);
	dofi_list_init(&m->rtu_wait);
	dofi_list_init(&m->ends_held);
	dofi_list_init(&m->parked);
	rc = DOFI_NOPIPE(fi_eq_open(ia->fabric, &eq_attr, &m->eq, NULL));
	if (rc != 0) {
		dof_warn(DOFI_LOG, "fi_eq_open: %s", fi_strerror(-rc));
		dofi_map_fini(&m->eps);
		free(m);
		return DOF_ERR_IO;
	}
	if (fi_control(&m->eq->fid, FI_GETWAIT, &m->eq_fd) != 0)
		m->eq_fd = -1;
	m->gated = dofi_gate_wanted(ia);
	/* Kernel TCP sockets carry the connection: the link watch. */
	if (ia->traits->kernel_tcp)
		m->link_ns = dofi_link_timeout_ns(ia);
	ia->cm = m;
	return DOF_OK;
}

static void dofi_msg_ia_close(dofi_ia_t *ia)
{
	dofi_msg_ia_t *m = dofi_msg_ia(ia);

	if (m == NULL)
		return;
	dofi_gate_close(&dofi_msg_ia(ia)->gate);
	free(m->link_socks);
	dofi_msg_close_parked(ia, 0);
	dofi_msg_tombs_expire(m, UINT64_MAX);
	if (m->eq != NULL)
		fi_close(&m->eq->fid);
	if (m->conn_info != NULL)
		fi_freeinfo(m->conn_info);
	dofi_map_fini(&m->eps);
	free(m);
	ia->cm = NULL;
}

const dofi_cm_ops_t dofi_cm_msg_ops = {
        .name = "msg",
        .ia_open = dofi_msg_ia_open,
        .ia_close = dofi_msg_ia_close,
        .ep_init = dofi_msg_ep_init,
        .ep_fini = dofi_msg_ep_fini,
        .listen = dofi_msg_listen,
        .unlisten = dofi_msg_unlisten,
        .connect = dofi_msg_connect,
        .accept = dofi_msg_accept,
        .reject = dofi_msg_reject,
        .cr_release = dofi_msg_cr_release,
        .disconnect = dofi_msg_disconnect,
        .ep_close = dofi_msg_ep_close,
        .ep_timers = dofi_msg_ep_timers,
        .ep_kicked = dofi_msg_ep_kicked,
        .progress = dofi_msg_progress,
        .wait_fd = dofi_msg_wait_fd,
        .op_done = dofi_msg_op_done,
};
