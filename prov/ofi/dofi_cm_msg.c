/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * The connection model on libfabric MSG endpoints (libfabric's own CM):
 * PSP/RSP as passive endpoints on port = conn_qual, CRs from FI_CONNREQ,
 * connect/accept/reject/disconnect, and the EQ events mapped onto the DAT
 * states and events of the seed man pages.
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
 * ia->traits->accept_late): the REQ asks for it (DOFI_CM_F_ACCEPTED), a REP that
 * carries the flag promises it, and the passive side sends it, a
 * zero-byte message before any of the consumer's, once fi_accept has
 * returned. The active side takes it with an internal receive posted
 * before the consumer's, and an end of its own closes the libfabric
 * endpoint only after it came (or DOFI_ACC_NS), so the passive side's CM
 * cannot miss that end.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "dofi.h"

#define DOFI_GRACEFUL_NS (5ull * 1000000000ull)
/*
 * How long an accepting side waits for the requester's RTU. The requester
 * sends it as soon as it sees FI_CONNECTED (its progress thread, or its
 * own wait for the connection event). sockets may lose the FI_SHUTDOWN
 * of a requester that gave up: this bounds the wait then.
 */
#define DOFI_RTU_NS (5ull * 1000000000ull)
/* How long requests in flight at a connection's end may take to finish. */
#define DOFI_FLUSH_NS (2ull * 1000000000ull)
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
 * How long a peer's end of one connection may wait for the RTUs of its
 * other connections that are due (dofi_cm_shutdown).
 */
#define DOFI_ORDER_NS (500ull * 1000000ull)

/*
 * A conn_qual is a port on IP fabrics. Like OFED's rdma_cm provider we use
 * its low 16 bits, so the qualifiers dapltest picks (above 65535) work.
 */
static uint16_t dofi_cm_port(DAT_CONN_QUAL qual)
{
	return (uint16_t)(qual & 0xffff);
}

/*
 * Whether another socket holds addr's port. sockets reports a listen on
 * a port in use as FI_EINVAL, which would say the consumer erred; a bind
 * of our own tells the two apart. Not on the data path.
 */
static int dofi_cm_port_busy(const struct sockaddr_in *addr)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0), busy;

	if (fd < 0)
		return 0;
	busy = bind(fd, (const struct sockaddr *)addr, sizeof(*addr)) != 0 &&
	       errno == EADDRINUSE;
	close(fd);
	return busy;
}

/* ---- our header ---------------------------------------------------------- */

static size_t dofi_cm_pack(unsigned char *buf, uint8_t type, uint8_t flags,
                           const void *pdata, DAT_COUNT len,
                           const dofi_ep_t *ep)
{
	buf[0] = DOFI_CM_MAGIC0;
	buf[1] = DOFI_CM_MAGIC1;
	buf[2] = DOFI_CM_VERSION;
	buf[3] = type;
	buf[4] = ep ? (uint8_t)ep->attr.max_rdma_read_in : 0;
	buf[5] = ep ? (uint8_t)ep->attr.max_rdma_read_out : 0;
	buf[6] = flags;
	if (len > 0)
		memcpy(buf + DOFI_CM_HDR_SIZE, pdata, (size_t)len);
	return DOFI_CM_HDR_SIZE + (size_t)len;
}

/* Our header's type (and its flags), or 0 when the data is not ours. */
static uint8_t dofi_cm_unpack(const void *data, size_t len,
                              const unsigned char **pdata, DAT_COUNT *plen,
                              uint8_t *flags)
{
	const unsigned char *b = data;

	*pdata = NULL;
	*plen = 0;
	*flags = 0;
	if (data == NULL || len < DOFI_CM_HDR_SIZE || b[0] != DOFI_CM_MAGIC0 ||
	    b[1] != DOFI_CM_MAGIC1 || b[2] != DOFI_CM_VERSION ||
	    b[3] < DOFI_CM_REQ || b[3] > DOFI_CM_NOQOS)
		return 0;
	if (len - DOFI_CM_HDR_SIZE > 256)
		return 0; /* larger than any CM data libfabric carries */
	*pdata = b + DOFI_CM_HDR_SIZE;
	*plen = (DAT_COUNT)(len - DOFI_CM_HDR_SIZE);
	*flags = b[6];
	return b[3];
}

static DAT_RETURN dofi_cm_check_pdata(dofi_ia_t *ia, DAT_COUNT len,
                                      const void *pdata, DAT_RETURN_SUBTYPE sub)
{
	if (len < 0 || len > ia->prov_attr.max_private_data_size ||
	    (len > 0 && pdata == NULL)) {
		dof_warn(DOFI_LOG,
		         "private data of %d bytes: 0..%d allowed, "
		         "and a buffer when non-empty",
		         len, ia->prov_attr.max_private_data_size);
		return DAT_ERROR(DAT_INVALID_PARAMETER, sub);
	}
	return DAT_SUCCESS;
}

/* ---- events -------------------------------------------------------------- */

static void dofi_cm_event(dofi_ep_t *ep, DAT_EVENT_NUMBER num,
                          const void *pdata, DAT_COUNT plen)
{
	DAT_EVENT ev;

	if (ep->conn_evd == NULL)
		return;
	memset(&ev, 0, sizeof(ev));
	ev.event_number = num;
	ev.evd_handle = (DAT_EVD_HANDLE)ep->conn_evd;
	ev.event_data.connect_event_data.ep_handle = (DAT_EP_HANDLE)ep;
	if (plen > 0 && pdata != NULL) {
		if (plen > (DAT_COUNT)sizeof(ep->pdata))
			plen = (DAT_COUNT)sizeof(ep->pdata);
		memcpy(ep->pdata, pdata, (size_t)plen);
		ep->pdata_len = plen;
		ev.event_data.connect_event_data.private_data_size = plen;
		ev.event_data.connect_event_data.private_data = ep->pdata;
	}
	dof_debug(DOFI_LOG, "EP %p: connection event %#x", (void *)ep,
	          (unsigned)num);
	(void)dofi_evd_post(ep->conn_evd, &ev);
}

static int dofi_cm_seq_cmp(const void *a, const void *b)
{
	const dofi_op_t *x = *(dofi_op_t *const *)a;
	const dofi_op_t *y = *(dofi_op_t *const *)b;
	int32_t d = (int32_t)(x->seq - y->seq);

	return d < 0 ? -1 : d > 0;
}

/*
 * fn(ep, op) for each op of pool still posted, in posting order (the
 * pool's own order is its free list's); without memory for the sort, in
 * the pool's order.
 */
static void dofi_cm_each_posted(dofi_ep_t *ep, dofi_pool_t *pool,
                                void (*fn)(dofi_ep_t *, dofi_op_t *))
{
	uint32_t i, n = 0, seen = dofi_pool_seen(pool);
	dofi_op_t **v = malloc((seen ? seen : 1) * sizeof(*v));

	for (i = 0; i < seen; i++) {
		if (!atomic_load(&pool->ops[i].posted))
			continue;
		if (v != NULL)
			v[n++] = &pool->ops[i];
		else
			fn(ep, &pool->ops[i]);
	}
	if (v == NULL)
		return;
	qsort(v, n, sizeof(*v), dofi_cm_seq_cmp);
	for (i = 0; i < n; i++)
		fn(ep, v[i]);
	free(v);
}

static void dofi_cm_cancel_recv(dofi_ep_t *ep, dofi_op_t *op)
{
	(void)fi_cancel(&ep->fep->fid, op);
}

/*
 * Cancel every receive still posted to the fi_ep (FI_ECANCELED, reported
 * as DAT_DTO_ERR_FLUSHED) when the connection ends: providers that flush
 * on their own have nothing left to cancel. sockets reports each cancel
 * as it is made, so they are made in posting order.
 */
static void dofi_cm_cancel_recvs(dofi_ep_t *ep)
{
	if (ep->fep == NULL)
		return;
	if (ep->rtu_op.type == DOFI_OP_RTU_RECV &&
	    atomic_load(&ep->rtu_op.posted))
		(void)fi_cancel(&ep->fep->fid, &ep->rtu_op);
	if (dofi_pool_used(&ep->recv_pool) > 0)
		dofi_cm_each_posted(ep, &ep->recv_pool, dofi_cm_cancel_recv);
}

/* Report one request of the flush below. */
static void dofi_cm_flush_request(dofi_ep_t *ep, dofi_op_t *op)
{
	uint8_t posted =
	        atomic_load(&op->posted) ? atomic_exchange(&op->posted, 0) : 0;

	if (posted != 0) {
		dofi_dto_flush_op(op);
		/* An RMR bind's completion that followed it. */
		if (posted == DOFI_POSTED_AFTER)
			dofi_dto_after_flushed(op);
		ep->cq_stale = 1; /* libfabric may still report it */
	}
}

/*
 * Report every request (send, RDMA write or read) still posted as
 * flushed, so each gets its completion on every kind of connection end.
 * tcp flushes them on fi_shutdown. sockets does not: a send it has
 * delivered may complete (successfully) only after the peer's
 * FI_SHUTDOWN, and one in flight whenever sockets gets to it, if ever.
 * So our own disconnect flushes at once, ahead of its event, and any
 * other end of a connection leaves requests DOFI_FLUSH_NS to complete
 * (ep->deadline; dofi_cm_check_timers), then reports the rest here; what
 * libfabric says of them later is dropped, as for any op no longer
 * posted. ia->lock held.
 */
static void dofi_cm_flush_requests(dofi_ep_t *ep)
{
	/* Nothing posted, nothing to pull in: the CQ holds none of ours. */
	if (ep->req_evd != NULL && dofi_pool_used(&ep->req_pool) > 0)
		dofi_evd_flush_cq(ep->req_evd, 1);
	dofi_dto_order_drop(ep);
	if (dofi_pool_used(&ep->req_pool) == 0)
		return;
	dof_info(DOFI_LOG,
	         "EP %p: %d requests still posted after the "
	         "connection ended: flushed",
	         (void *)ep, (int)dofi_pool_used(&ep->req_pool));
	/* In posting order, as an InfiniBand send queue flushes. */
	dofi_cm_each_posted(ep, &ep->req_pool, dofi_cm_flush_request);
}

/* Move everything the EP's CQs hold into its EVDs. ia->lock held. */
static void dofi_cm_read_cqs(dofi_ep_t *ep)
{
	if (ep->recv_evd != NULL)
		dofi_evd_flush_cq(ep->recv_evd, 1);
	if (ep->req_evd != NULL && ep->req_evd != ep->recv_evd)
		dofi_evd_flush_cq(ep->req_evd, 1);
}

/*
 * Close the EP's libfabric endpoint and move what its CQs still hold into
 * the EVDs: nothing may name its ops once the EP is gone. ia->lock held.
 */
static void dofi_cm_close_fep(dofi_ep_t *ep)
{
	int stale;

	if (ep->fep == NULL)
		return;
	/*
	 * Completions of this EP, before its contexts go: any op libfabric
	 * holds (its close cancels them), or one a flush reported ahead of
	 * libfabric. Otherwise none is in a CQ, and nothing need be read.
	 */
	stale = ep->cq_stale || atomic_load(&ep->rtu_op.posted) ||
	        atomic_load(&ep->acc_op.posted) ||
	        dofi_pool_used(&ep->recv_pool) > 0 ||
	        dofi_pool_used(&ep->req_pool) > 0;
	dofi_ep_close_fep(ep);
	ep->cq_stale = 0;
	if (stale)
		dofi_cm_read_cqs(ep);
}

/* End a connection (attempt) locally. ia->lock held. */
static void dofi_cm_down(dofi_ep_t *ep, DAT_EVENT_NUMBER num, const void *pdata,
                         DAT_COUNT plen)
{
	atomic_store(&ep->state, DAT_EP_STATE_DISCONNECTED);
	/* Requests still posted: see dofi_cm_flush_requests. */
	ep->deadline = dofi_pool_used(&ep->req_pool) > 0
	                       ? dofi_now_ns() + DOFI_FLUSH_NS
	                       : 0;
	ep->graceful = 0;
	ep->rtu = DOFI_RTU_NONE;
	if (ep->fep != NULL && !ep->shutdown_sent) {
		ep->shutdown_sent = 1;
		/*
		 * tcp flushes what is posted (FI_ECANCELED) on shutdown, and
		 * aborts a connection being made. sockets gets no
		 * fi_shutdown (close_ends_conn): closing the endpoint ends
		 * the connection there, its CM thread closing the socket
		 * once, and the peer sees FI_SHUTDOWN. Not at once: a
		 * consumer thread may still be inside a post that read the
		 * old state, so dofi_cm_check_timers closes it a little
		 * later (or EP reset or free does, first).
		 */
		if (ep->obj.ia->traits->close_ends_conn) {
			ep->close_pending = 1;
			ep->close_at = dofi_now_ns() + DOFI_CLOSE_NS;
			dofi_progress_wake(ep->obj.ia); /* to its timers */
		} else {
			(void)DOFI_NOPIPE(fi_shutdown(ep->fep, 0));
		}
	}
	/* sockets does not, nor tcp for a connection never made. */
	dofi_cm_cancel_recvs(ep);
	/*
	 * On an EVD shared with the requests, their successful completions
	 * come before the end of the connection (dat_ep_disconnect): with
	 * requests still posted, the event waits for them
	 * (dofi_cm_check_timers).
	 */
	if (ep->deadline != 0 && plen == 0 &&
	    (num == DAT_CONNECTION_EVENT_DISCONNECTED ||
	     num == DAT_CONNECTION_EVENT_BROKEN)) {
		ep->held_event = num;
		return;
	}
	dofi_cm_event(ep, num, pdata, plen);
}

/* ---- ready to use -------------------------------------------------------- */

/* This thread reads a CQ for an RTU check (dofi_cm_rtu_arrived). */
static _Thread_local int dofi_cm_rtu_reading;

void dofi_cm_rtu_complete(dofi_op_t *op, int err)
{
	dofi_ep_t *ep = op->ep;
	int recv = op->type == DOFI_OP_RTU_RECV || op->type == DOFI_OP_ACC_RECV;

	if (err != 0 && err != FI_ECANCELED)
		dof_info(DOFI_LOG, "EP %p: internal %s: %s", (void *)ep,
		         recv ? "receive" : "send", fi_strerror(err));
	if (!recv)
		return; /* a send: nothing waits for it */
	atomic_store(op->type == DOFI_OP_RTU_RECV ? &ep->rtu_done
	                                          : &ep->acc_done,
	             err == 0 ? DOFI_RTU_ARRIVED : DOFI_RTU_FAILED);
	/*
	 * Whoever read it may not hold ia->lock: the CM acts on it (unless
	 * the reader is the CM's own RTU check, which acts on it next).
	 */
	if (err == 0 && !dofi_cm_rtu_reading) {
		if (dofi_progress_off(ep->obj.ia))
			atomic_store(&ep->obj.ia->cm_due, 1);
		dofi_progress_wake(ep->obj.ia);
	}
}

/* The passive side is connected. ia->lock held. */
static void dofi_cm_passive_established(dofi_ep_t *ep)
{
	ep->rtu = DOFI_RTU_NONE;
	ep->deadline = 0;
	atomic_store(&ep->state, DAT_EP_STATE_CONNECTED);
	dofi_cm_event(ep, DAT_CONNECTION_EVENT_ESTABLISHED, NULL, 0);
}

/*
 * Whether the requester's RTU came in, reading the receive CQ ourselves:
 * nobody else may be (sockets has no progress thread on it; the consumer
 * waits on its connection EVD). ia->lock held, rtu WAIT.
 */
static int dofi_cm_rtu_arrived(dofi_ep_t *ep, int all)
{
	if (atomic_load(&ep->rtu_done) == DOFI_RTU_PENDING) {
		/*
		 * A consumer polling for connection events reads this CQ
		 * now, as one polling the EVD would: the progress thread
		 * need not wake for the RTU's arrival too.
		 */
		if (!dofi_progress_on_thread)
			dofi_evd_count_poll(ep->recv_evd);
		dofi_cm_rtu_reading = 1;
		dofi_evd_flush_cq(ep->recv_evd, all);
		dofi_cm_rtu_reading = 0;
	}
	return atomic_load(&ep->rtu_done) == DOFI_RTU_ARRIVED;
}

/*
 * The passive side's RTU wait: ESTABLISHED once the RTU and FI_CONNECTED
 * are both in; ACCEPT_COMPLETION_ERROR when the receive failed or the
 * wait is over (now != 0). ia->lock held, COMPLETION_PENDING, rtu WAIT.
 */
static void dofi_cm_rtu_check(dofi_ep_t *ep, uint64_t now)
{
	int late = now != 0 && now >= ep->deadline;

	/* When late, look at the whole CQ: a full ring may hide the RTU. */
	if (dofi_cm_rtu_arrived(ep, late)) {
		/* FI_CONNECTED comes first; the RTU alone proves it too. */
		if (ep->rtu_connected || late)
			dofi_cm_passive_established(ep);
		return;
	}
	if (atomic_load(&ep->rtu_done) == DOFI_RTU_FAILED || late) {
		dof_info(DOFI_LOG,
		         "EP %p: the requester did not take the "
		         "connection (%s)",
		         (void *)ep,
		         atomic_load(&ep->rtu_done) == DOFI_RTU_FAILED
		                 ? "the connection ended first"
		                 : "no RTU in time");
		dofi_cm_down(ep, DAT_CONNECTION_EVENT_ACCEPT_COMPLETION_ERROR,
		             NULL, 0);
	}
}

/*
 * The connection ends while the passive side waits for the RTU: if the
 * RTU came first, the requester took the connection and left again; say
 * ESTABLISHED before the end. ia->lock held.
 */
static void dofi_cm_rtu_settle(dofi_ep_t *ep)
{
	if (atomic_load(&ep->state) == DAT_EP_STATE_COMPLETION_PENDING &&
	    ep->rtu == DOFI_RTU_WAIT && dofi_cm_rtu_arrived(ep, 1))
		dofi_cm_passive_established(ep);
}

void dofi_cm_break_later(dofi_ep_t *ep)
{
	dofi_ia_t *ia = ep->obj.ia;

	if (ia->traits->trunc_ends_conn)
		return; /* libfabric shuts it down: FI_SHUTDOWN follows */
	atomic_store(&ep->break_pending, 1);
	dofi_progress_wake(ia);
}

/*
 * Passive EPs connected in libfabric's view and waiting for the RTU: say
 * ESTABLISHED for those whose RTU is in. ia->lock held.
 */
static void dofi_cm_rtu_settle_all(dofi_ia_t *ia)
{
	dofi_list_t *e;

	for (e = ia->objs[DOFI_OBJ_EP].next; e != &ia->objs[DOFI_OBJ_EP];
	     e = e->next) {
		dofi_ep_t *ep = dofi_container_of(e, dofi_ep_t, obj.link);

		if (ep->rtu == DOFI_RTU_WAIT && ep->rtu_connected &&
		    atomic_load(&ep->state) == DAT_EP_STATE_COMPLETION_PENDING)
			dofi_cm_rtu_check(ep, 0);
	}
}

/*
 * Whether a passive EP of ia other than ep, accepted for ep's peer host,
 * waits for its RTU: fi_accept has sent the accept, so the requester may
 * have sent the RTU already (FI_CONNECTED may still be unread). ia->lock
 * held.
 */
static int dofi_cm_rtu_due(dofi_ia_t *ia, const dofi_ep_t *ep)
{
	dofi_list_t *e;

	for (e = ia->objs[DOFI_OBJ_EP].next; e != &ia->objs[DOFI_OBJ_EP];
	     e = e->next) {
		const dofi_ep_t *o = dofi_container_of(e, dofi_ep_t, obj.link);

		if (o != ep && o->rtu == DOFI_RTU_WAIT &&
		    atomic_load(&o->state) == DAT_EP_STATE_COMPLETION_PENDING &&
		    o->remote_addr.sin_addr.s_addr ==
		            ep->remote_addr.sin_addr.s_addr)
			return 1;
	}
	return 0;
}

/* The peer ended a connection that was up. ia->lock held. */
static void dofi_cm_peer_end(dofi_ep_t *ep)
{
	ep->shutdown_sent = 1; /* the peer's; nothing to send */
	/*
	 * A transfer failed first: the fabric tore it down. tcp queues the
	 * failed completion with the FI_SHUTDOWN, which may be read first:
	 * read the EP's completions now.
	 */
	dofi_cm_read_cqs(ep);
	dofi_cm_down(ep,
	             ep->dto_error ? DAT_CONNECTION_EVENT_BROKEN
	                           : DAT_CONNECTION_EVENT_DISCONNECTED,
	             NULL, 0);
}

/*
 * Whether an end of ours may close the endpoint now (ia->traits->accept_late):
 * not while the passive side's fi_accept may still run, or its CM would
 * lose the end. Its accepted message says it has returned; without one
 * within DOFI_ACC_NS, or once the receive failed, go ahead. Reads the
 * receive CQ itself, as dofi_cm_rtu_arrived does. ia->lock held.
 */
static int dofi_cm_acc_settled(dofi_ep_t *ep, uint64_t now)
{
	int late;

	if (!ep->acc || ep->acc_deadline == 0 || ep->fep == NULL)
		return 1; /* nothing asked, or FI_CONNECTED not seen yet */
	late = now >= ep->acc_deadline;
	if (atomic_load(&ep->acc_done) == DOFI_RTU_PENDING &&
	    ep->recv_evd != NULL)
		dofi_evd_flush_cq(ep->recv_evd, late);
	if (atomic_load(&ep->acc_done) == DOFI_RTU_PENDING && !late)
		return 0;
	if (atomic_load(&ep->acc_done) != DOFI_RTU_ARRIVED)
		dof_info(DOFI_LOG,
		         "EP %p: no accepted message from the peer "
		         "(%s); closing all the same",
		         (void *)ep,
		         late ? "not in time" : "the receive failed");
	else
		dof_debug(DOFI_LOG, "EP %p: the peer's accepted message is in",
		          (void *)ep);
	ep->acc = 0;
	return 1;
}

/* The same, waiting for it (EP reset or free). ia->lock held. */
static void dofi_cm_acc_wait(dofi_ep_t *ep)
{
	const struct timespec nap = {0, 200000};

	while (!dofi_cm_acc_settled(ep, dofi_now_ns()))
		(void)nanosleep(&nap, NULL);
}

/* ---- active side --------------------------------------------------------- */

static DAT_RETURN dofi_cm_connect(dofi_ep_t *ep, const struct sockaddr_in *dst,
                                  DAT_CONN_QUAL qual, DAT_TIMEOUT timeout,
                                  DAT_COUNT plen, const void *pdata)
{
	dofi_ia_t *ia = ep->obj.ia;
	unsigned char cm[DOFI_CM_HDR_SIZE + 256];
	struct sockaddr_in dest = *dst;
	struct fi_info *info;
	size_t len;
	int rc;

	pthread_mutex_lock(&ia->lock);
	if (atomic_load(&ep->state) != DAT_EP_STATE_UNCONNECTED ||
	    ep->fep != NULL) {
		pthread_mutex_unlock(&ia->lock);
		return DAT_ERROR(DAT_INVALID_STATE,
		                 DAT_INVALID_STATE_EP_CONNECTED);
	}
	/* The endpoint opens in its PZ's domain (as OFED: no PZ, no QP). */
	if (ep->pz == NULL) {
		pthread_mutex_unlock(&ia->lock);
		dof_warn(DOFI_LOG, "dat_ep_connect: the EP needs a PZ");
		return DAT_ERROR(DAT_INVALID_STATE,
		                 DAT_INVALID_STATE_EP_NOTREADY);
	}
	/*
	 * One fi_info serves every connect of the IA (under ia->lock):
	 * libfabric copies what it needs in fi_endpoint.
	 */
	if (ia->conn_info == NULL) {
		info = fi_dupinfo(ia->info);
		if (info != NULL) {
			free(info->dest_addr);
			info->dest_addr = malloc(sizeof(dest));
			if (info->dest_addr == NULL) {
				fi_freeinfo(info);
				info = NULL;
			}
		}
		if (info == NULL) {
			pthread_mutex_unlock(&ia->lock);
			return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES,
			                 DAT_RESOURCE_MEMORY);
		}
		ia->conn_info = info;
	}
	info = ia->conn_info;
	dest.sin_port = htons(dofi_cm_port(qual));
	memcpy(info->dest_addr, &dest, sizeof(dest));
	info->dest_addrlen = sizeof(dest);
	/* The provider's queue sizes, unless this EP sets its own. */
	info->tx_attr->size = ia->info->tx_attr->size;
	info->rx_attr->size = ia->info->rx_attr->size;
	/* The accepted message needs a receive CQ that we can read. */
	ep->acc = ia->traits->accept_late && ep->recv_evd != NULL &&
	          ep->recv_evd->cq != NULL;
	ep->acc_deadline = 0;
	if (dofi_ep_open_fep(ep, info) != DOF_OK) {
		pthread_mutex_unlock(&ia->lock);
		return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_TEP);
	}
	ep->shutdown_sent = 0;
	ep->rtu = DOFI_RTU_NONE;
	ep->remote_addr = dest;
	ep->remote_addr.sin_port = 0;
	ep->remote_qual = qual;
	ep->pdata_len = 0;
	ep->deadline = timeout == DAT_TIMEOUT_INFINITE
	                       ? 0
	                       : dofi_now_ns() + (uint64_t)timeout * 1000;
	atomic_store(&ep->state, DAT_EP_STATE_ACTIVE_CONNECTION_PENDING);
	/* We can always send the RTU (fi_inject needs no EVD): offer it. */
	len = dofi_cm_pack(cm, DOFI_CM_REQ,
	                   DOFI_CM_F_RTU | (ep->acc ? DOFI_CM_F_ACCEPTED : 0),
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
			dofi_ep_close_fep(ep);
			atomic_store(&ep->state, DAT_EP_STATE_UNCONNECTED);
			pthread_mutex_unlock(&ia->lock);
			return DAT_ERROR(DAT_INVALID_ADDRESS,
			                 DAT_INVALID_ADDRESS_MALFORMED);
		}
		dofi_cm_down(ep, num, NULL, 0);
	}
	pthread_mutex_unlock(&ia->lock);
	return DAT_SUCCESS;
}

static DAT_RETURN dofi_cm_connect_args(dofi_ep_t *ep, DAT_TIMEOUT timeout,
                                       DAT_COUNT plen, const void *pdata,
                                       DAT_QOS qos)
{
	DAT_RETURN ret;

	if (timeout == 0) {
		dof_warn(DOFI_LOG, "dat_ep_connect: a timeout of 0 is invalid");
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG4);
	}
	ret = dofi_cm_check_pdata(ep->obj.ia, plen, pdata, DAT_INVALID_ARG5);
	if (ret != DAT_SUCCESS)
		return ret;
	if (qos & ~(DAT_QOS)DAT_QOS_BEST_EFFORT) {
		dof_info(DOFI_LOG, "dat_ep_connect: qos %#x cannot be given",
		         (unsigned)qos);
		return DAT_ERROR(DAT_MODEL_NOT_SUPPORTED, 0);
	}
	if (ep->conn_evd == NULL) {
		dof_warn(DOFI_LOG, "dat_ep_connect: the EP has no connection "
		                   "EVD");
		return DAT_ERROR(DAT_INVALID_STATE,
		                 DAT_INVALID_STATE_EP_EVD_CONNECT);
	}
	return DAT_SUCCESS;
}

DAT_RETURN dofi_ep_connect(DAT_EP_HANDLE h, DAT_IA_ADDRESS_PTR addr,
                           DAT_CONN_QUAL qual, DAT_TIMEOUT timeout,
                           DAT_COUNT plen, const DAT_PVOID pdata, DAT_QOS qos,
                           DAT_CONNECT_FLAGS flags)
{
	dofi_ep_t *ep = dofi_obj_get(h, DOFI_OBJ_EP, __func__);
	struct sockaddr_in dst;
	DAT_RETURN ret;

	if (ep == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	if (addr == NULL || addr->sa_family != AF_INET) {
		dof_warn(DOFI_LOG, "dat_ep_connect: the remote address must be "
		                   "AF_INET");
		return DAT_ERROR(DAT_INVALID_ADDRESS,
		                 DAT_INVALID_ADDRESS_MALFORMED);
	}
	if (dofi_cm_port(qual) == 0) {
		dof_warn(DOFI_LOG,
		         "dat_ep_connect: conn_qual %#llx maps to "
		         "port 0",
		         (unsigned long long)qual);
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	}
	if (flags & (DAT_CONNECT_MULTIPATH_FLAG |
	             DAT_CONNECT_MULTIPATH_REQUIRED_FLAG)) {
		dof_info(DOFI_LOG, "dat_ep_connect: multipath is not offered");
		return DAT_ERROR(DAT_MODEL_NOT_SUPPORTED, 0);
	}
	if (flags & ~(DAT_CONNECT_FLAGS)(DAT_CONNECT_MULTIPATH_FLAG |
	                                 DAT_CONNECT_MULTIPATH_REQUIRED_FLAG))
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG8);
	ret = dofi_cm_connect_args(ep, timeout, plen, pdata, qos);
	if (ret != DAT_SUCCESS)
		return ret;
	memcpy(&dst, addr, sizeof(dst));
	return dofi_cm_connect(ep, &dst, qual, timeout, plen, pdata);
}

DAT_RETURN dofi_ep_dup_connect(DAT_EP_HANDLE h, DAT_EP_HANDLE dup_h,
                               DAT_TIMEOUT timeout, DAT_COUNT plen,
                               const DAT_PVOID pdata, DAT_QOS qos)
{
	dofi_ep_t *ep = dofi_obj_get(h, DOFI_OBJ_EP, __func__);
	dofi_ep_t *dup = dofi_obj_get(dup_h, DOFI_OBJ_EP, __func__);
	struct sockaddr_in dst;
	DAT_CONN_QUAL qual;
	DAT_RETURN ret;

	if (ep == NULL || dup == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	ret = dofi_cm_connect_args(ep, timeout, plen, pdata, qos);
	if (ret != DAT_SUCCESS)
		return ret;
	pthread_mutex_lock(&ep->obj.ia->lock);
	if (atomic_load(&dup->state) != DAT_EP_STATE_CONNECTED) {
		pthread_mutex_unlock(&ep->obj.ia->lock);
		return DAT_ERROR(DAT_INVALID_STATE,
		                 DAT_INVALID_STATE_EP_UNCONNECTED);
	}
	dst = dup->remote_addr;
	qual = dup->remote_qual;
	pthread_mutex_unlock(&ep->obj.ia->lock);
	return dofi_cm_connect(ep, &dst, qual, timeout, plen, pdata);
}

/* Request the shutdown once posted requests have completed. lock held. */
static int dofi_cm_requests_done(dofi_ep_t *ep)
{
	if (dofi_pool_used(&ep->req_pool) == 0)
		return 1;
	/* Pull completions into the ring so the count is true. */
	if (ep->req_evd != NULL)
		dofi_evd_flush_cq(ep->req_evd, 1);
	return dofi_pool_used(&ep->req_pool) == 0;
}

DAT_RETURN dofi_ep_disconnect(DAT_EP_HANDLE h, DAT_CLOSE_FLAGS flags)
{
	dofi_ep_t *ep = dofi_obj_get(h, DOFI_OBJ_EP, __func__);
	DAT_RETURN ret = DAT_SUCCESS;
	dofi_ia_t *ia;

	if (ep == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	if (flags != DAT_CLOSE_ABRUPT_FLAG && flags != DAT_CLOSE_GRACEFUL_FLAG)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	ia = ep->obj.ia;
	pthread_mutex_lock(&ia->lock);
	switch (atomic_load(&ep->state)) {
	case DAT_EP_STATE_CONNECTED:
		if (flags == DAT_CLOSE_GRACEFUL_FLAG &&
		    !dofi_cm_requests_done(ep)) {
			/* Outstanding requests finish first. */
			atomic_store(&ep->state,
			             DAT_EP_STATE_DISCONNECT_PENDING);
			ep->graceful = 1;
			ep->deadline = dofi_now_ns() + DOFI_GRACEFUL_NS;
			break;
		}
		/* Ours: what is posted is flushed now, ahead of the event. */
		dofi_cm_flush_requests(ep);
		dofi_cm_down(ep, DAT_CONNECTION_EVENT_DISCONNECTED, NULL, 0);
		break;
	case DAT_EP_STATE_DISCONNECT_PENDING:
		if (flags == DAT_CLOSE_ABRUPT_FLAG) {
			dofi_cm_flush_requests(ep);
			dofi_cm_down(ep, DAT_CONNECTION_EVENT_DISCONNECTED,
			             NULL, 0);
		}
		break;
	case DAT_EP_STATE_ACTIVE_CONNECTION_PENDING:
	case DAT_EP_STATE_COMPLETION_PENDING:
		/* Abort the establishment; posted receives are flushed. */
		dofi_cm_down(ep, DAT_CONNECTION_EVENT_DISCONNECTED, NULL, 0);
		break;
	case DAT_EP_STATE_DISCONNECTED:
		break; /* no-op */
	default:
		dof_warn(DOFI_LOG,
		         "dat_ep_disconnect: EP state %d allows no "
		         "disconnect",
		         (int)atomic_load(&ep->state));
		ret = DAT_ERROR(DAT_INVALID_STATE,
		                DAT_INVALID_STATE_EP_UNCONNECTED);
		break;
	}
	pthread_mutex_unlock(&ia->lock);
	return ret;
}

void dofi_cm_check_timers(dofi_ia_t *ia)
{
	uint64_t now = dofi_now_ns();
	dofi_list_t *e;

	pthread_mutex_lock(&ia->lock);
	if (ia->parked != NULL)
		dofi_cm_close_parked(ia, -1);
	for (e = ia->objs[DOFI_OBJ_EP].next; e != &ia->objs[DOFI_OBJ_EP];
	     e = e->next) {
		dofi_ep_t *ep = dofi_container_of(e, dofi_ep_t, obj.link);
		DAT_EP_STATE s = atomic_load(&ep->state);

		if (atomic_load(&ep->break_pending) &&
		    atomic_exchange(&ep->break_pending, 0) &&
		    (s == DAT_EP_STATE_CONNECTED ||
		     s == DAT_EP_STATE_DISCONNECT_PENDING)) {
			/* As tcp and InfiniBand do after a truncation. */
			dof_info(DOFI_LOG,
			         "EP %p: a receive was too small for its "
			         "message: connection broken",
			         (void *)ep);
			ep->dto_error = 1;
			dofi_cm_down(ep, DAT_CONNECTION_EVENT_BROKEN, NULL, 0);
		} else if (s == DAT_EP_STATE_DISCONNECT_PENDING &&
		           ep->graceful &&
		           (dofi_cm_requests_done(ep) || now >= ep->deadline)) {
			dofi_cm_flush_requests(ep);
			dofi_cm_down(ep, DAT_CONNECTION_EVENT_DISCONNECTED,
			             NULL, 0);
		} else if (s == DAT_EP_STATE_DISCONNECTED &&
		           ep->deadline != 0 &&
		           (dofi_cm_requests_done(ep) || now >= ep->deadline)) {
			ep->deadline = 0;
			dofi_cm_flush_requests(ep);
			if (ep->held_event != 0) {
				dofi_cm_event(ep, ep->held_event, NULL, 0);
				ep->held_event = 0;
			}
		} else if (s == DAT_EP_STATE_ACTIVE_CONNECTION_PENDING &&
		           ep->deadline != 0 && now >= ep->deadline) {
			dof_info(DOFI_LOG, "EP %p: connect timed out",
			         (void *)ep);
			dofi_cm_down(ep, DAT_CONNECTION_EVENT_TIMED_OUT, NULL,
			             0);
		} else if (s == DAT_EP_STATE_COMPLETION_PENDING &&
		           ep->rtu == DOFI_RTU_WAIT) {
			dofi_cm_rtu_check(ep, now);
		}
		/* A peer's end held for the RTUs due (dofi_cm_shutdown). */
		if (ep->peer_end_at != 0 &&
		    (now >= ep->peer_end_at || !dofi_cm_rtu_due(ia, ep))) {
			ep->peer_end_at = 0;
			s = atomic_load(&ep->state);
			if (s == DAT_EP_STATE_CONNECTED ||
			    s == DAT_EP_STATE_DISCONNECT_PENDING)
				dofi_cm_peer_end(ep);
		}
		/* Our end, once what was in flight is settled. */
		if (ep->close_pending && ep->deadline == 0 &&
		    now >= ep->close_at &&
		    atomic_load(&ep->state) == DAT_EP_STATE_DISCONNECTED &&
		    dofi_cm_acc_settled(ep, now)) {
			dof_debug(DOFI_LOG,
			          "EP %p: closing the endpoint ends "
			          "the connection",
			          (void *)ep);
			ep->close_pending = 0;
			dofi_cm_close_fep(ep);
		}
	}
	pthread_mutex_unlock(&ia->lock);
}

/* ---- service points ------------------------------------------------------ */

static dofi_sp_t *dofi_sp_find(dofi_ia_t *ia, DAT_CONN_QUAL qual)
{
	int t;

	for (t = DOFI_OBJ_PSP; t <= DOFI_OBJ_RSP; t++) {
		dofi_list_t *e;

		for (e = ia->objs[t].next; e != &ia->objs[t]; e = e->next) {
			dofi_sp_t *sp =
			        dofi_container_of(e, dofi_sp_t, obj.link);

			if (dofi_cm_port(sp->qual) == dofi_cm_port(qual))
				return sp;
		}
	}
	return NULL;
}

/* Listen on port qual (0: any); the bound port in *qual. */
static DAT_RETURN dofi_sp_listen(dofi_ia_t *ia, dofi_sp_t *sp,
                                 DAT_CONN_QUAL *qual)
{
	struct sockaddr_in addr = ia->addr;
	struct fi_info *info;
	size_t alen = sizeof(addr);
	int rc;

	/* A parked listener of ours may still hold the port. */
	if (*qual != 0)
		dofi_cm_close_parked(ia, dofi_cm_port(*qual));
	info = fi_dupinfo(ia->info);
	if (info == NULL)
		return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES,
		                 DAT_RESOURCE_MEMORY);
	addr.sin_port = htons(dofi_cm_port(*qual));
	free(info->src_addr);
	info->src_addr = malloc(sizeof(addr));
	if (info->src_addr == NULL) {
		fi_freeinfo(info);
		return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES,
		                 DAT_RESOURCE_MEMORY);
	}
	memcpy(info->src_addr, &addr, sizeof(addr));
	info->src_addrlen = sizeof(addr);
	/* sockets keeps a shallow copy of info: it lives as long as the pep. */
	sp->info = info;
	rc = DOFI_NOPIPE(fi_passive_ep(ia->fabric, info, &sp->pep, sp));
	if (rc == 0)
		rc = fi_pep_bind(sp->pep, &ia->eq->fid, 0);
	if (rc == 0)
		rc = DOFI_NOPIPE(fi_listen(sp->pep));
	if (rc == 0 && *qual == 0) {
		rc = fi_getname(&sp->pep->fid, &addr, &alen);
		*qual = ntohs(addr.sin_port);
	}
	if (rc != 0) {
		if (sp->pep != NULL)
			(void)DOFI_NOPIPE(fi_close(&sp->pep->fid));
		sp->pep = NULL;
		fi_freeinfo(sp->info);
		sp->info = NULL;
		dof_info(DOFI_LOG, "listening on conn_qual %llu: %s",
		         (unsigned long long)*qual, fi_strerror(-rc));
		if (rc == -FI_EADDRINUSE || rc == -EADDRINUSE ||
		    (addr.sin_port != 0 && dofi_cm_port_busy(&addr)))
			return DAT_ERROR(DAT_CONN_QUAL_IN_USE, 0);
		return dofi_fi_to_dat(rc);
	}
	return DAT_SUCCESS;
}

static DAT_RETURN dofi_sp_create(dofi_ia_t *ia, dofi_obj_type_t type,
                                 DAT_CONN_QUAL *qual, DAT_EVD_HANDLE evd_h,
                                 DAT_PSP_FLAGS flags, dofi_ep_t *ep,
                                 dofi_sp_t **out)
{
	dofi_evd_t *evd = dofi_obj_get(evd_h, DOFI_OBJ_EVD, "dat_sp_create");
	dofi_sp_t *sp;
	DAT_RETURN ret;

	if (evd == NULL || evd->obj.ia != ia || !(evd->flags & DAT_EVD_CR_FLAG))
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EVD_CR);
	if (*qual != 0 && dofi_cm_port(*qual) == 0)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	sp = dofi_obj_alloc(ia, type, sizeof(*sp), ia->obj.provider);
	if (sp == NULL)
		return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES,
		                 DAT_RESOURCE_MEMORY);
	pthread_mutex_lock(&ia->lock);
	if (*qual != 0 && dofi_sp_find(ia, *qual) != NULL &&
	    dofi_sp_find(ia, *qual) != sp) {
		ret = DAT_ERROR(DAT_CONN_QUAL_IN_USE, 0);
		goto err;
	}
	if (ep != NULL &&
	    (atomic_load(&ep->state) != DAT_EP_STATE_UNCONNECTED ||
	     ep->sp != NULL)) {
		ret = DAT_ERROR(DAT_INVALID_STATE,
		                DAT_INVALID_STATE_EP_CONNECTED);
		goto err;
	}
	ret = dofi_sp_listen(ia, sp, qual);
	if (ret != DAT_SUCCESS)
		goto err;
	sp->qual = *qual;
	sp->evd = evd;
	sp->flags = flags;
	sp->ep = ep;
	atomic_fetch_add(&evd->nref, 1);
	if (ep != NULL) {
		ep->sp = sp;
		ep->local_qual = *qual;
		atomic_store(&ep->state, DAT_EP_STATE_RESERVED);
	}
	pthread_mutex_unlock(&ia->lock);
	*out = sp;
	return DAT_SUCCESS;
err:
	dofi_obj_free(sp);
	pthread_mutex_unlock(&ia->lock);
	return ret;
}

/* Both PSP calls: *qual 0 listens on any port and returns the one taken. */
static DAT_RETURN dofi_psp_open(DAT_IA_HANDLE h, DAT_CONN_QUAL *qual,
                                DAT_EVD_HANDLE evd, DAT_PSP_FLAGS flags,
                                DAT_PSP_HANDLE *out, const char *func)
{
	dofi_ia_t *ia = dofi_obj_get(h, DOFI_OBJ_IA, func);
	dofi_sp_t *sp;
	DAT_RETURN ret;

	if (ia == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	if (out == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG5);
	if (flags != DAT_PSP_CONSUMER_FLAG && flags != DAT_PSP_PROVIDER_FLAG)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG4);
	ret = dofi_sp_create(ia, DOFI_OBJ_PSP, qual, evd, flags, NULL, &sp);
	if (ret == DAT_SUCCESS)
		*out = (DAT_PSP_HANDLE)sp;
	return ret;
}

DAT_RETURN dofi_psp_create(DAT_IA_HANDLE h, DAT_CONN_QUAL qual,
                           DAT_EVD_HANDLE evd, DAT_PSP_FLAGS flags,
                           DAT_PSP_HANDLE *out)
{
	if (qual == 0) {
		dof_warn(DOFI_LOG, "dat_psp_create: conn_qual 0 is not a port; "
		                   "use dat_psp_create_any");
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	}
	return dofi_psp_open(h, &qual, evd, flags, out, __func__);
}

DAT_RETURN dofi_psp_create_any(DAT_IA_HANDLE h, DAT_CONN_QUAL *qual,
                               DAT_EVD_HANDLE evd, DAT_PSP_FLAGS flags,
                               DAT_PSP_HANDLE *out)
{
	DAT_CONN_QUAL q = 0;
	DAT_RETURN ret;

	if (qual == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	ret = dofi_psp_open(h, &q, evd, flags, out, __func__);
	if (ret == DAT_SUCCESS)
		*qual = q; /* set only on success */
	return ret;
}

DAT_RETURN dofi_psp_query(DAT_PSP_HANDLE h, DAT_PSP_PARAM_MASK mask,
                          DAT_PSP_PARAM *p)
{
	dofi_sp_t *sp = dofi_obj_get(h, DOFI_OBJ_PSP, __func__);

	if (sp == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PSP);
	if (p == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	(void)mask;
	p->ia_handle = dofi_ia_consumer_handle(sp->obj.ia);
	p->conn_qual = sp->qual;
	p->evd_handle = (DAT_EVD_HANDLE)sp->evd;
	p->psp_flags = sp->flags;
	return DAT_SUCCESS;
}

DAT_RETURN dofi_rsp_create(DAT_IA_HANDLE h, DAT_CONN_QUAL qual,
                           DAT_EP_HANDLE ep_h, DAT_EVD_HANDLE evd,
                           DAT_RSP_HANDLE *out)
{
	dofi_ia_t *ia = dofi_obj_get(h, DOFI_OBJ_IA, __func__);
	dofi_ep_t *ep;
	dofi_sp_t *sp;
	DAT_RETURN ret;

	if (ia == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	ep = dofi_obj_get(ep_h, DOFI_OBJ_EP, __func__);
	if (ep == NULL || ep->obj.ia != ia)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	if (out == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG5);
	if (qual == 0)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	ret = dofi_sp_create(ia, DOFI_OBJ_RSP, &qual, evd, 0, ep, &sp);
	if (ret == DAT_SUCCESS)
		*out = (DAT_RSP_HANDLE)sp;
	return ret;
}

DAT_RETURN dofi_rsp_query(DAT_RSP_HANDLE h, DAT_RSP_PARAM_MASK mask,
                          DAT_RSP_PARAM *p)
{
	dofi_sp_t *sp = dofi_obj_get(h, DOFI_OBJ_RSP, __func__);

	if (sp == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_RSP);
	if (p == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	(void)mask;
	p->ia_handle = dofi_ia_consumer_handle(sp->obj.ia);
	p->conn_qual = sp->qual;
	p->evd_handle = (DAT_EVD_HANDLE)sp->evd;
	p->ep_handle = (DAT_EP_HANDLE)sp->ep;
	return DAT_SUCCESS;
}

/* ia->lock held. */
/*
 * sockets sends a reject from the listener's own CM thread, later; closing
 * the listener stops that thread, and the reject never leaves (the
 * requester times out). A spent RSP's listener that rejected is therefore
 * closed DOFI_PARK_NS later (dofi_cm_check_timers), or as soon as a new
 * listener wants its port. Requests reaching it meanwhile are refused.
 */
#define DOFI_PARK_NS (500ull * 1000000ull)

static void dofi_cm_park_pep(dofi_ia_t *ia, struct fid_pep *pep,
                             struct fi_info *info, uint16_t port)
{
	dofi_parked_pep_t *p = malloc(sizeof(*p));

	if (p == NULL) {
		(void)DOFI_NOPIPE(fi_close(&pep->fid));
		fi_freeinfo(info);
		return;
	}
	p->pep = pep;
	p->info = info;
	p->port = port;
	p->close_at = dofi_now_ns() + DOFI_PARK_NS;
	p->next = ia->parked;
	ia->parked = p;
}

void dofi_cm_close_parked(dofi_ia_t *ia, int port)
{
	dofi_parked_pep_t **pp = &ia->parked;
	uint64_t now = port < 0 ? dofi_now_ns() : 0;

	while (*pp != NULL) {
		dofi_parked_pep_t *p = *pp;

		if (port < 0 ? now < p->close_at
		             : port != 0 && p->port != (uint16_t)port) {
			pp = &p->next;
			continue;
		}
		*pp = p->next;
		(void)DOFI_NOPIPE(fi_close(&p->pep->fid));
		fi_freeinfo(p->info);
		free(p);
	}
}

static struct fid_pep *dofi_cm_parked_of(dofi_ia_t *ia, const struct fid *fid)
{
	dofi_parked_pep_t *p;

	for (p = ia->parked; p != NULL; p = p->next)
		if (&p->pep->fid == fid)
			return p->pep;
	return NULL;
}

void dofi_cm_cr_destroy(dofi_cr_t *cr)
{
	int rejected = 0;

	if (cr->info != NULL) {
		if (cr->pep != NULL)
			rejected =
			        DOFI_NOPIPE(fi_reject(cr->pep, cr->info->handle,
			                              NULL, 0)) == 0;
		fi_freeinfo(cr->info);
		cr->info = NULL;
	}
	if (cr->pep_info != NULL) {
		/* The listener of a spent RSP: ours to close. */
		if (rejected || cr->rejected) {
			dofi_cm_park_pep(cr->obj.ia, cr->pep, cr->pep_info,
			                 dofi_cm_port(cr->qual));
		} else {
			(void)DOFI_NOPIPE(fi_close(&cr->pep->fid));
			fi_freeinfo(cr->pep_info);
		}
		cr->pep_info = NULL;
	}
	cr->pep = NULL;
	if (cr->ep != NULL && cr->sp != NULL &&
	    cr->sp->obj.type == DOFI_OBJ_PSP) {
		/* A provider-made EP the consumer never accepted on. */
		dofi_ep_t *ep = cr->ep;

		cr->ep = NULL;
		ep->cr = NULL;
		dofi_ep_destroy(ep);
	} else if (cr->ep != NULL) {
		/* A rejected RSP request frees its EP for other use. */
		cr->ep->cr = NULL;
		if (atomic_load(&cr->ep->state) ==
		    DAT_EP_STATE_PASSIVE_CONNECTION_PENDING) {
			atomic_store(&cr->ep->state, DAT_EP_STATE_UNCONNECTED);
			if (cr->ep->sp != NULL && cr->ep->sp->ep == cr->ep)
				cr->ep->sp->ep = NULL;
			cr->ep->sp = NULL;
		}
	}
	if (cr->sp != NULL)
		cr->sp->nref--;
	dofi_obj_free(cr);
}

/* ia->lock held. */
void dofi_cm_sp_destroy(dofi_sp_t *sp)
{
	dofi_ia_t *ia = sp->obj.ia;
	dofi_list_t *e, *next;

	for (e = ia->objs[DOFI_OBJ_CR].next; e != &ia->objs[DOFI_OBJ_CR];
	     e = next) {
		dofi_cr_t *cr = dofi_container_of(e, dofi_cr_t, obj.link);

		next = e->next;
		if (cr->sp == sp)
			dofi_cm_cr_destroy(cr);
	}
	if (sp->pep != NULL)
		(void)DOFI_NOPIPE(fi_close(&sp->pep->fid));
	if (sp->info != NULL)
		fi_freeinfo(sp->info);
	if (sp->ep != NULL) {
		if (atomic_load(&sp->ep->state) == DAT_EP_STATE_RESERVED)
			atomic_store(&sp->ep->state, DAT_EP_STATE_UNCONNECTED);
		if (sp->ep->sp == sp)
			sp->ep->sp = NULL;
	}
	if (sp->evd != NULL)
		atomic_fetch_sub(&sp->evd->nref, 1);
	dofi_obj_free(sp);
}

static DAT_RETURN dofi_sp_free(DAT_HANDLE h, dofi_obj_type_t type,
                               DAT_RETURN_SUBTYPE sub, const char *func)
{
	dofi_sp_t *sp = dofi_obj_get(h, type, func);
	dofi_ia_t *ia;

	if (sp == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, sub);
	ia = sp->obj.ia;
	pthread_mutex_lock(&ia->lock);
	dofi_cm_sp_destroy(sp);
	pthread_mutex_unlock(&ia->lock);
	return DAT_SUCCESS;
}

DAT_RETURN dofi_psp_free(DAT_PSP_HANDLE h)
{
	return dofi_sp_free(h, DOFI_OBJ_PSP, DAT_INVALID_HANDLE_PSP, __func__);
}

DAT_RETURN dofi_rsp_free(DAT_RSP_HANDLE h)
{
	return dofi_sp_free(h, DOFI_OBJ_RSP, DAT_INVALID_HANDLE_RSP, __func__);
}

/* ---- passive side -------------------------------------------------------- */

static void dofi_cr_announce(dofi_cr_t *cr)
{
	dofi_sp_t *sp = cr->sp;
	DAT_EVENT ev;

	memset(&ev, 0, sizeof(ev));
	ev.event_number = DAT_CONNECTION_REQUEST_EVENT;
	ev.evd_handle = (DAT_EVD_HANDLE)sp->evd;
	if (sp->obj.type == DOFI_OBJ_RSP)
		/* The RSP is spent by this request (see dofi_cm_connreq). */
		ev.event_data.cr_arrival_event_data.sp_handle.rsp_handle =
		        DAT_HANDLE_NULL;
	else
		ev.event_data.cr_arrival_event_data.sp_handle.psp_handle =
		        (DAT_PSP_HANDLE)sp;
	ev.event_data.cr_arrival_event_data.local_ia_address_ptr =
	        (DAT_IA_ADDRESS_PTR)&sp->obj.ia->addr;
	ev.event_data.cr_arrival_event_data.conn_qual = sp->qual;
	ev.event_data.cr_arrival_event_data.cr_handle = (DAT_CR_HANDLE)cr;
	ev.event_data.cr_arrival_event_data.truncate_flag = DAT_FALSE;
	(void)dofi_evd_post(sp->evd, &ev);
}

/* FI_CONNREQ. ia->lock held. Takes ownership of info. */
static void dofi_cm_connreq(dofi_ia_t *ia, dofi_sp_t *sp, struct fi_info *info,
                            const void *data, size_t len)
{
	const unsigned char *pdata;
	DAT_COUNT plen;
	dofi_cr_t *cr;
	uint8_t type, flags;

	type = dofi_cm_unpack(data, len, &pdata, &plen, &flags);
	if (type != DOFI_CM_REQ) {
		dof_warn(DOFI_LOG,
		         "conn_qual %llu: connection request "
		         "without a valid dapl-ofi header (%zu "
		         "bytes); rejected",
		         (unsigned long long)sp->qual, len);
		(void)DOFI_NOPIPE(fi_reject(sp->pep, info->handle, NULL, 0));
		fi_freeinfo(info);
		return;
	}
	cr = dofi_obj_alloc_locked(ia, DOFI_OBJ_CR, sizeof(*cr),
	                           ia->obj.provider);
	if (cr == NULL) {
		(void)DOFI_NOPIPE(fi_reject(sp->pep, info->handle, NULL, 0));
		fi_freeinfo(info);
		return;
	}
	cr->sp = sp;
	cr->qual = sp->qual;
	cr->pep = sp->pep;
	cr->info = info;
	sp->nref++;
	memcpy(cr->pdata, pdata, (size_t)plen);
	cr->pdata_len = plen;
	cr->rdma_in = ((const unsigned char *)data)[4];
	cr->rdma_out = ((const unsigned char *)data)[5];
	cr->rtu = (flags & DOFI_CM_F_RTU) != 0;
	cr->acc = (flags & DOFI_CM_F_ACCEPTED) != 0;
	if (info->dest_addr != NULL &&
	    info->dest_addrlen >= sizeof(cr->remote_addr) &&
	    ((struct sockaddr *)info->dest_addr)->sa_family == AF_INET) {
		memcpy(&cr->remote_addr, info->dest_addr,
		       sizeof(cr->remote_addr));
		cr->remote_port = ntohs(cr->remote_addr.sin_port);
		cr->remote_addr.sin_port = 0;
	} else {
		cr->remote_addr.sin_family = AF_INET;
	}
	if (sp->obj.type == DOFI_OBJ_RSP &&
	    (sp->ep == NULL ||
	     atomic_load(&sp->ep->state) != DAT_EP_STATE_RESERVED)) {
		/* An RSP serves one request: later ones find nobody. */
		dof_info(DOFI_LOG,
		         "conn_qual %llu: the RSP's EP is taken; "
		         "request refused",
		         (unsigned long long)sp->qual);
		(void)DOFI_NOPIPE(fi_reject(sp->pep, info->handle, NULL, 0));
		cr->info = NULL;
		fi_freeinfo(info);
		dofi_cm_cr_destroy(cr);
		return;
	}
	if (sp->obj.type == DOFI_OBJ_RSP) {
		cr->ep = sp->ep;
		sp->ep->cr = cr;
		atomic_store(&sp->ep->state,
		             DAT_EP_STATE_PASSIVE_CONNECTION_PENDING);
	} else if (sp->flags == DAT_PSP_PROVIDER_FLAG) {
		DAT_RETURN ret;
		dofi_ep_t *ep;

		pthread_mutex_unlock(&ia->lock);
		ep = dofi_ep_alloc(ia, NULL, NULL, NULL, NULL, NULL, &ret);
		pthread_mutex_lock(&ia->lock);
		if (ep != NULL) {
			cr->ep = ep;
			ep->cr = cr;
			atomic_store(&ep->state,
			             DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING);
		}
	}
	dof_debug(DOFI_LOG,
	          "conn_qual %llu: connection request, %d bytes of "
	          "private data",
	          (unsigned long long)sp->qual, plen);
	dofi_cr_announce(cr);
	if (sp->obj.type == DOFI_OBJ_RSP) {
		/*
		 * An RSP is spent by its request: it goes away, the request
		 * keeps its listener until it is accepted or rejected.
		 */
		cr->pep_info = sp->info;
		sp->info = NULL;
		sp->pep = NULL;
		sp->ep->sp = NULL;
		sp->ep = NULL;
		cr->sp = NULL;
		sp->nref--;
		dofi_cm_sp_destroy(sp);
	}
}

DAT_RETURN dofi_cr_query(DAT_CR_HANDLE h, DAT_CR_PARAM_MASK mask,
                         DAT_CR_PARAM *p)
{
	dofi_cr_t *cr = dofi_obj_get(h, DOFI_OBJ_CR, __func__);

	if (cr == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CR);
	if (p == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	(void)mask;
	p->remote_ia_address_ptr = (DAT_IA_ADDRESS_PTR)&cr->remote_addr;
	p->remote_port_qual = cr->remote_port;
	p->private_data_size = cr->pdata_len;
	p->private_data = cr->pdata;
	p->local_ep_handle = (DAT_EP_HANDLE)cr->ep;
	return DAT_SUCCESS;
}

DAT_RETURN dofi_cr_accept(DAT_CR_HANDLE h, DAT_EP_HANDLE ep_h, DAT_COUNT plen,
                          const DAT_PVOID pdata)
{
	dofi_cr_t *cr = dofi_obj_get(h, DOFI_OBJ_CR, __func__);
	unsigned char cm[DOFI_CM_HDR_SIZE + 256];
	struct fi_info *info;
	DAT_RETURN ret;
	dofi_ia_t *ia;
	dofi_ep_t *ep;
	DAT_EP_STATE s;
	size_t len;
	int rc, acc;

	if (cr == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CR);
	ia = cr->obj.ia;
	ret = dofi_cm_check_pdata(ia, plen, pdata, DAT_INVALID_ARG3);
	if (ret != DAT_SUCCESS)
		return ret;
	if (ep_h != DAT_HANDLE_NULL) {
		ep = dofi_obj_get(ep_h, DOFI_OBJ_EP, __func__);
		if (ep == NULL || ep->obj.ia != ia)
			return DAT_ERROR(DAT_INVALID_HANDLE,
			                 DAT_INVALID_HANDLE_EP);
	} else {
		ep = cr->ep;
		if (ep == NULL) {
			dof_warn(DOFI_LOG, "dat_cr_accept: no EP given and "
			                   "none came with the request");
			return DAT_ERROR(DAT_INVALID_PARAMETER,
			                 DAT_INVALID_ARG2);
		}
	}
	pthread_mutex_lock(&ia->lock);
	if (atomic_load(&cr->obj.magic) != DOFI_MAGIC_LIVE) {
		pthread_mutex_unlock(&ia->lock);
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CR);
	}
	if (cr->ep != NULL && ep != cr->ep &&
	    (cr->sp == NULL || cr->sp->obj.type == DOFI_OBJ_RSP)) {
		pthread_mutex_unlock(&ia->lock);
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	}
	s = atomic_load(&ep->state);
	if (!(s == DAT_EP_STATE_UNCONNECTED ||
	      (ep == cr->ep &&
	       (s == DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING ||
	        s == DAT_EP_STATE_PASSIVE_CONNECTION_PENDING))) ||
	    ep->fep != NULL) {
		pthread_mutex_unlock(&ia->lock);
		return DAT_ERROR(DAT_INVALID_STATE,
		                 DAT_INVALID_STATE_EP_CONNECTED);
	}
	if (ep->conn_evd == NULL || ep->pz == NULL) {
		pthread_mutex_unlock(&ia->lock);
		dof_warn(DOFI_LOG, "dat_cr_accept: the EP needs a PZ and a "
		                   "connection EVD");
		return DAT_ERROR(DAT_INVALID_STATE,
		                 DAT_INVALID_STATE_EP_NOTREADY);
	}
	info = cr->info;
	cr->info = NULL;
	/*
	 * The RTU needs the internal receive, so a receive CQ: an EP with no
	 * recv EVD has its receives bound to the IA's null CQ, which nobody
	 * reads. Such a connection goes without an RTU and reports
	 * ESTABLISHED at FI_CONNECTED, as libfabric's CM alone would.
	 * dofi_ep_open_fep drops it too if the receive cannot be posted.
	 */
	ep->rtu = cr->rtu && ep->recv_evd != NULL && ep->recv_evd->cq != NULL
	                  ? DOFI_RTU_WAIT
	                  : DOFI_RTU_NONE;
	ep->rtu_connected = 0;
	ep->acc = 0; /* the requester waits for it, not we */
	if (dofi_ep_open_fep(ep, info) != DOF_OK) {
		ep->rtu = DOFI_RTU_NONE;
		cr->info = info;
		pthread_mutex_unlock(&ia->lock);
		return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_TEP);
	}
	ep->info = info;
	ep->shutdown_sent = 0;
	ep->remote_addr = cr->remote_addr;
	ep->remote_qual = cr->remote_port;
	ep->local_qual = cr->qual;
	ep->pdata_len = 0;
	ep->deadline =
	        ep->rtu == DOFI_RTU_WAIT ? dofi_now_ns() + DOFI_RTU_NS : 0;
	atomic_store(&ep->state, DAT_EP_STATE_COMPLETION_PENDING);
	acc = cr->acc;
	len = dofi_cm_pack(cm, DOFI_CM_REP,
	                   (ep->rtu == DOFI_RTU_WAIT ? DOFI_CM_F_RTU : 0) |
	                           (acc ? DOFI_CM_F_ACCEPTED : 0),
	                   pdata, plen, ep);
	rc = DOFI_NOPIPE(fi_accept(ep->fep, cm, len));
	/* Our first message, before ESTABLISHED lets the consumer send. */
	if (rc == 0 && acc &&
	    dofi_dto_send_internal(ep, &ep->acc_op, DOFI_OP_ACC_SEND) != DOF_OK)
		dof_info(DOFI_LOG,
		         "EP %p: the accepted message cannot be "
		         "sent; the requester waits for it in vain",
		         (void *)ep);
	if (cr->ep == ep)
		cr->ep = NULL;
	ep->cr = NULL;
	dofi_cm_cr_destroy(cr);
	if (rc != 0) {
		dof_info(DOFI_LOG, "EP %p: fi_accept: %s", (void *)ep,
		         fi_strerror(-rc));
		dofi_cm_down(ep, DAT_CONNECTION_EVENT_ACCEPT_COMPLETION_ERROR,
		             NULL, 0);
	}
	pthread_mutex_unlock(&ia->lock);
	return DAT_SUCCESS;
}

DAT_RETURN dofi_cr_reject(DAT_CR_HANDLE h, DAT_COUNT plen,
                          const DAT_PVOID pdata)
{
	dofi_cr_t *cr = dofi_obj_get(h, DOFI_OBJ_CR, __func__);
	unsigned char cm[DOFI_CM_HDR_SIZE + 256];
	DAT_RETURN ret;
	dofi_ia_t *ia;
	size_t len;

	if (cr == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CR);
	ia = cr->obj.ia;
	ret = dofi_cm_check_pdata(ia, plen, pdata, DAT_INVALID_ARG2);
	if (ret != DAT_SUCCESS)
		return ret;
	pthread_mutex_lock(&ia->lock);
	if (atomic_load(&cr->obj.magic) != DOFI_MAGIC_LIVE) {
		pthread_mutex_unlock(&ia->lock);
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CR);
	}
	len = dofi_cm_pack(cm, DOFI_CM_REJ, 0, pdata, plen, NULL);
	if (cr->info != NULL) {
		int rc = DOFI_NOPIPE(
		        fi_reject(cr->pep, cr->info->handle, cm, len));

		if (rc != 0)
			dof_info(DOFI_LOG, "fi_reject: %s", fi_strerror(-rc));
		cr->rejected = rc == 0;
		fi_freeinfo(cr->info);
		cr->info = NULL;
	}
	dofi_cm_cr_destroy(cr);
	pthread_mutex_unlock(&ia->lock);
	return DAT_SUCCESS;
}

DAT_RETURN dofi_cr_handoff(DAT_CR_HANDLE h, DAT_CONN_QUAL qual)
{
	dofi_cr_t *cr = dofi_obj_get(h, DOFI_OBJ_CR, __func__);
	dofi_sp_t *to;
	dofi_ia_t *ia;

	if (cr == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CR);
	ia = cr->obj.ia;
	pthread_mutex_lock(&ia->lock);
	to = dofi_sp_find(ia, qual);
	if (to == NULL || to == cr->sp) {
		pthread_mutex_unlock(&ia->lock);
		dof_warn(DOFI_LOG,
		         "dat_cr_handoff: no other service point on "
		         "conn_qual %llu",
		         (unsigned long long)qual);
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	}
	if (cr->ep != NULL && cr->sp != NULL &&
	    cr->sp->obj.type == DOFI_OBJ_PSP) {
		dofi_ep_t *ep = cr->ep;

		cr->ep = NULL;
		ep->cr = NULL;
		dofi_ep_destroy(ep);
	} else if (cr->ep != NULL) {
		atomic_store(&cr->ep->state, DAT_EP_STATE_RESERVED);
		cr->ep->cr = NULL;
		cr->ep = NULL;
	}
	/* The request stays bound to the first listener's libfabric pep. */
	if (cr->sp != NULL)
		cr->sp->nref--;
	cr->sp = to;
	to->nref++;
	if (to->obj.type == DOFI_OBJ_RSP && to->ep != NULL &&
	    to->ep->cr == NULL) {
		cr->ep = to->ep;
		to->ep->cr = cr;
		atomic_store(&to->ep->state,
		             DAT_EP_STATE_PASSIVE_CONNECTION_PENDING);
	}
	dofi_cr_announce(cr);
	pthread_mutex_unlock(&ia->lock);
	return DAT_SUCCESS;
}

/* ---- EQ events ----------------------------------------------------------- */

/*
 * The live EP whose libfabric endpoint raised an event, or NULL. The fid
 * is only compared, never dereferenced: a provider may report events of
 * an endpoint already closed (sockets does). ia->lock held, and held
 * since the event was read, so no endpoint closed and reopened at the
 * same address in between.
 */
static dofi_ep_t *dofi_cm_ep_of(dofi_ia_t *ia, const struct fid *fid)
{
	dofi_list_t *e;

	for (e = ia->objs[DOFI_OBJ_EP].next; e != &ia->objs[DOFI_OBJ_EP];
	     e = e->next) {
		dofi_ep_t *ep = dofi_container_of(e, dofi_ep_t, obj.link);

		if (ep->fep != NULL && &ep->fep->fid == fid)
			return ep;
	}
	return NULL;
}

static dofi_sp_t *dofi_cm_sp_of(dofi_ia_t *ia, const struct fid *fid)
{
	int t;

	for (t = DOFI_OBJ_PSP; t <= DOFI_OBJ_RSP; t++) {
		dofi_list_t *e;

		for (e = ia->objs[t].next; e != &ia->objs[t]; e = e->next) {
			dofi_sp_t *sp =
			        dofi_container_of(e, dofi_sp_t, obj.link);

			if (sp->pep != NULL && &sp->pep->fid == fid)
				return sp;
		}
	}
	return NULL;
}

static void dofi_cm_connected(dofi_ia_t *ia, dofi_ep_t *ep, const void *data,
                              size_t len)
{
	const unsigned char *pdata;
	DAT_COUNT plen;
	DAT_EP_STATE s = atomic_load(&ep->state);
	uint8_t type, flags;

	if (s == DAT_EP_STATE_ACTIVE_CONNECTION_PENDING) {
		type = dofi_cm_unpack(data, len, &pdata, &plen, &flags);
		if (type != DOFI_CM_REP) {
			dof_warn(DOFI_LOG,
			         "EP %p: the peer accepted without a "
			         "valid dapl-ofi header; "
			         "disconnecting",
			         (void *)ep);
			dofi_cm_down(ep, DAT_CONNECTION_EVENT_NON_PEER_REJECTED,
			             NULL, 0);
			return;
		}
		if (ep->acc && (flags & DOFI_CM_F_ACCEPTED)) {
			ep->acc_deadline = dofi_now_ns() + DOFI_ACC_NS;
		} else if (ep->acc) {
			/*
			 * The peer sends none: take the receive back before
			 * the RTU lets the peer send (a peer without the RTU
			 * may have sent already; its first message is lost).
			 */
			ep->acc = 0;
			if (atomic_load(&ep->acc_op.posted))
				(void)fi_cancel(&ep->fep->fid, &ep->acc_op);
		}
		/*
		 * The RTU goes before ESTABLISHED, so before any DTO of the
		 * consumer's (they need the Connected state).
		 */
		if ((flags & DOFI_CM_F_RTU) &&
		    dofi_dto_send_internal(ep, &ep->rtu_op, DOFI_OP_RTU_SEND) !=
		            DOF_OK) {
			dof_warn(DOFI_LOG,
			         "EP %p: the ready-to-use message "
			         "cannot be sent; disconnecting",
			         (void *)ep);
			dofi_cm_down(ep, DAT_CONNECTION_EVENT_NON_PEER_REJECTED,
			             NULL, 0);
			return;
		}
		/* The local port: read when dat_ep_query asks for it. */
		ep->local_unnamed = 1;
		ep->deadline = 0;
		atomic_store(&ep->state, DAT_EP_STATE_CONNECTED);
		dofi_cm_event(ep, DAT_CONNECTION_EVENT_ESTABLISHED, pdata,
		              plen);
	} else if (s == DAT_EP_STATE_COMPLETION_PENDING) {
		if (ep->rtu == DOFI_RTU_WAIT) {
			ep->rtu_connected = 1;
			dofi_cm_rtu_check(ep, 0);
		} else {
			dofi_cm_passive_established(ep);
		}
	}
	(void)ia;
}

static void dofi_cm_shutdown(dofi_ep_t *ep)
{
	dof_debug(DOFI_LOG, "EP %p: FI_SHUTDOWN in state %d", (void *)ep,
	          (int)atomic_load(&ep->state));
	ep->acc = 0; /* the peer's end: ours cannot be lost any more */
	dofi_cm_rtu_settle(ep);
	switch (atomic_load(&ep->state)) {
	case DAT_EP_STATE_CONNECTED:
	case DAT_EP_STATE_DISCONNECT_PENDING:
		/*
		 * The peer may have sent an RTU on another connection before
		 * it ended this one (it took both connections, then left
		 * this): the RTU travels on that connection, this end on
		 * the CM's, and the end often comes first. Report the end
		 * after those ESTABLISHED, as the peer did things, unless
		 * the RTUs take longer than DOFI_ORDER_NS
		 * (dofi_cm_check_timers).
		 */
		if (dofi_cm_rtu_due(ep->obj.ia, ep)) {
			ep->peer_end_at = dofi_now_ns() + DOFI_ORDER_NS;
			break;
		}
		dofi_cm_peer_end(ep);
		break;
	case DAT_EP_STATE_ACTIVE_CONNECTION_PENDING:
		ep->shutdown_sent = 1;
		dofi_cm_down(ep, DAT_CONNECTION_EVENT_NON_PEER_REJECTED, NULL,
		             0);
		break;
	case DAT_EP_STATE_COMPLETION_PENDING:
		ep->shutdown_sent = 1;
		dofi_cm_down(ep, DAT_CONNECTION_EVENT_ACCEPT_COMPLETION_ERROR,
		             NULL, 0);
		break;
	default:
		break; /* already down: our own disconnect, seen again */
	}
}

static void dofi_cm_error(dofi_ia_t *ia, const struct fi_eq_err_entry *err)
{
	const unsigned char *pdata;
	DAT_COUNT plen;
	dofi_ep_t *ep = dofi_cm_ep_of(ia, err->fid);
	uint8_t type, flags;

	if (ep == NULL) {
		dof_debug(DOFI_LOG, "EQ error %d for an object that is gone",
		          err->err);
		return;
	}
	ep->acc = 0;
	dofi_cm_rtu_settle(ep);
	switch (atomic_load(&ep->state)) {
	case DAT_EP_STATE_ACTIVE_CONNECTION_PENDING:
		ep->shutdown_sent = 1;
		if (err->err == ETIMEDOUT || err->err == EHOSTUNREACH ||
		    err->err == ENETUNREACH || err->err == FI_ETIMEDOUT ||
		    err->err == FI_EHOSTUNREACH) {
			dofi_cm_down(ep, DAT_CONNECTION_EVENT_UNREACHABLE, NULL,
			             0);
			break;
		}
		type = dofi_cm_unpack(err->err_data, err->err_data_size, &pdata,
		                      &plen, &flags);
		if (type == DOFI_CM_REJ)
			dofi_cm_down(ep, DAT_CONNECTION_EVENT_PEER_REJECTED,
			             pdata, plen);
		else
			dofi_cm_down(ep, DAT_CONNECTION_EVENT_NON_PEER_REJECTED,
			             NULL, 0);
		break;
	case DAT_EP_STATE_COMPLETION_PENDING:
		ep->shutdown_sent = 1;
		dofi_cm_down(ep, DAT_CONNECTION_EVENT_ACCEPT_COMPLETION_ERROR,
		             NULL, 0);
		break;
	case DAT_EP_STATE_CONNECTED:
	case DAT_EP_STATE_DISCONNECT_PENDING:
		dof_info(DOFI_LOG, "EP %p: connection broken: %s", (void *)ep,
		         fi_strerror(err->err));
		ep->shutdown_sent = 1;
		dofi_cm_down(ep, DAT_CONNECTION_EVENT_BROKEN, NULL, 0);
		break;
	default:
		break;
	}
}

void dofi_cm_progress(dofi_ia_t *ia)
{
	dofi_cm_progress_until(ia, NULL);
}

void dofi_cm_progress_until(dofi_ia_t *ia, dofi_evd_t *until)
{
	/* fi_eq_cm_entry, then the CM data libfabric carries. */
	union {
		struct fi_eq_cm_entry cm;
		unsigned char raw[sizeof(struct fi_eq_cm_entry) + 512];
	} buf;
	uint32_t event;
	uint64_t epoch;
	int early = 0;
	ssize_t rc;

	if (pthread_mutex_trylock(&ia->eq_lock) != 0)
		return; /* another thread is reading it */
	/* Read and handle under the lock: see dofi_cm_ep_of. */
	pthread_mutex_lock(&ia->lock);
	epoch = ++ia->eq_epoch;
	for (;;) {
		rc = fi_eq_read(ia->eq, &event, &buf, sizeof(buf), 0);
		if (rc == -FI_EAVAIL) {
			struct fi_eq_err_entry err;

			memset(&err, 0, sizeof(err));
			if (fi_eq_readerr(ia->eq, &err, 0) < 0)
				break;
			dofi_cm_error(ia, &err);
			continue;
		}
		if (rc < 0) {
			/* All read: stale events of closed fids are gone. */
			if (rc == -FI_EAGAIN && ia->ntombs > 0)
				dofi_ep_tombs_expire(ia, epoch);
			break;
		}
		if ((size_t)rc < sizeof(buf.cm)) {
			dof_warn(DOFI_LOG, "short EQ entry (%zd bytes)", rc);
			continue;
		}
		switch (event) {
		case FI_CONNREQ: {
			dofi_sp_t *sp = dofi_cm_sp_of(ia, buf.cm.fid);

			if (sp == NULL) {
				struct fid_pep *pep =
				        dofi_cm_parked_of(ia, buf.cm.fid);

				dof_debug(DOFI_LOG, "connection request for a "
				                    "closed service point");
				if (pep != NULL)
					(void)DOFI_NOPIPE(fi_reject(
					        pep, buf.cm.info->handle, NULL,
					        0));
				fi_freeinfo(buf.cm.info);
				break;
			}
			dofi_cm_connreq(ia, sp, buf.cm.info, buf.cm.data,
			                (size_t)rc - sizeof(buf.cm));
			break;
		}
		case FI_CONNECTED: {
			dofi_ep_t *ep = dofi_cm_ep_of(ia, buf.cm.fid);

			if (ep != NULL)
				dofi_cm_connected(ia, ep, buf.cm.data,
				                  (size_t)rc - sizeof(buf.cm));
			break;
		}
		case FI_SHUTDOWN: {
			dofi_ep_t *ep = dofi_cm_ep_of(ia, buf.cm.fid);

			/*
			 * A peer may end one connection right after another
			 * became established on its side: report the RTUs
			 * that already came in (ESTABLISHED) before this end.
			 */
			dofi_cm_rtu_settle_all(ia);
			if (ep != NULL)
				dofi_cm_shutdown(ep);
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
		 * data progress below, wait for its next call.
		 */
		if (until != NULL && atomic_load(&until->count) > 0) {
			early = 1;
			break;
		}
	}
	/*
	 * With no progress thread, whoever waits for connection events
	 * also moves data, so that a peer's disconnect is seen.
	 */
	if (dofi_progress_off(ia) && !early) {
		dofi_list_t *e;

		for (e = ia->objs[DOFI_OBJ_EVD].next;
		     e != &ia->objs[DOFI_OBJ_EVD]; e = e->next)
			dofi_evd_progress(
			        dofi_container_of(e, dofi_evd_t, obj.link));
	}
	pthread_mutex_unlock(&ia->lock);
	pthread_mutex_unlock(&ia->eq_lock);
	dofi_cm_check_timers(ia);
}

/* EP free/reset, IA close. ia->lock held. */
void dofi_cm_ep_teardown(dofi_ep_t *ep)
{
	if (ep->cr != NULL) {
		dofi_cr_t *cr = ep->cr;

		ep->cr = NULL;
		if (cr->ep == ep)
			cr->ep = NULL;
	}
	if (ep->sp != NULL) {
		if (ep->sp->ep == ep)
			ep->sp->ep = NULL;
		ep->sp = NULL;
	}
	/* The end may be ours, maybe the first (EP free when connected). */
	dofi_cm_acc_wait(ep);
	dofi_cm_close_fep(ep);
	ep->shutdown_sent = 0;
	ep->close_pending = 0;
	ep->peer_end_at = 0;
	ep->acc = 0;
	ep->deadline = 0;
	ep->held_event = 0;
	ep->graceful = 0;
	ep->rtu = DOFI_RTU_NONE;
	/* A new connection starts unbroken. */
	ep->dto_error = 0;
	atomic_store(&ep->break_pending, 0);
}
