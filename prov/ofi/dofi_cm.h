/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * The seam between the DAT connection model (dofi_cm.c) and a connection
 * backend (dofi_cm_msg.c: libfabric's own MSG CM).
 *
 * dofi_cm.c owns everything DAT defines: EP connection states and their
 * events, PSP/RSP/CR objects, argument checks, the connect timeout, the
 * flushes at a connection's end, and when each of those is checked (a
 * timer heap and a watch list, never a walk over every EP). A backend only
 * carries connection messages and opens and closes the libfabric endpoint
 * of a connection. It is chosen once, when the IA opens, from the
 * endpoint type of the fabric (dofi_ia_backend), and reached only through
 * ia->cm_ops; it reports back through the dofi_cm_up_* calls below.
 *
 * Locks: the order is written down at the top of dofi.h. Upcalls run
 * under ia->lock; a backend's progress takes ia->lock itself, under
 * ia->cm_read_lock.
 *
 * Adding a backend: write a dofi_cm_ops_t in a file of its own, keep every
 * per-connection field it needs in its own struct (ep->cm, ia->cm,
 * sp->cm, cr->cm), report through the upcalls, and return it from
 * dofi_ia_backend (dofi_ia.c) for its endpoint type. Nothing else changes.
 */
#ifndef DOFI_CM_H
#define DOFI_CM_H

#include "dofi.h"
#include "dofi_cm_hdr.h"

/* What a backend tells the generic code about an arriving request. */
typedef struct dofi_cm_req {
	struct sockaddr_in remote_addr; /* port 0 */
	DAT_PORT_QUAL remote_port;
	const void *pdata;
	DAT_COUNT plen;
	uint8_t rdma_in, rdma_out;
} dofi_cm_req_t;

struct dofi_cm_ops {
	const char *name;
	/*
	 * Requests stay posted until the backend closes the connection's
	 * endpoint, which flushes them (dofi_cm_flush_requests leaves them
	 * while ep->fep is open): the provider may still read a Send's
	 * buffer until then (rxm's queued segments, RDM), and a consumer
	 * may free a buffer once its request is reported.
	 */
	uint8_t flush_at_close;
	/* Open the backend's IA state (ia->cm) once the domain is open. */
	dof_status_t (*ia_open)(dofi_ia_t *ia);
	/* Everything of the IA's is gone: close the backend's state. */
	void (*ia_close)(dofi_ia_t *ia);
	/* A new EP's backend state (ep->cm); freed with ep_fini. */
	dof_status_t (*ep_init)(dofi_ep_t *ep);
	void (*ep_fini)(dofi_ep_t *ep);
	/* Listen on *qual (0: any; the one taken is returned). ia->lock. */
	dof_status_t (*listen)(dofi_sp_t *sp, DAT_CONN_QUAL *qual);
	/* Stop listening (PSP/RSP free). ia->lock. */
	void (*unlisten)(dofi_sp_t *sp);
	/*
	 * Open the connection's endpoint and send the request. The generic
	 * code has checked the arguments and set the EP's addresses,
	 * deadline and ACTIVE_CONNECTION_PENDING. ia->lock.
	 */
	dof_status_t (*connect)(dofi_ep_t *ep, const struct sockaddr_in *dst,
	                        DAT_CONN_QUAL qual, const void *pdata,
	                        DAT_COUNT plen);
	/* Accept cr on ep (checked, COMPLETION_PENDING set). ia->lock. */
	dof_status_t (*accept)(dofi_cr_t *cr, dofi_ep_t *ep, const void *pdata,
	                       DAT_COUNT plen);
	/* The consumer rejects cr. ia->lock. */
	void (*reject)(dofi_cr_t *cr, const void *pdata, DAT_COUNT plen);
	/* cr goes away: refuse it if nobody answered. ia->lock. */
	void (*cr_release)(dofi_cr_t *cr);
	/*
	 * Our end of the connection (DISCONNECTED set): tell the peer.
	 * Returns 1 when the backend keeps the receives posted for messages
	 * still under way (only when ep->clean_end: a graceful end with no
	 * request outstanding) and ends it later with dofi_cm_up_drained;
	 * 0 when the generic end goes on now. ia->lock.
	 */
	int (*disconnect)(dofi_ep_t *ep);
	/* Close the connection's libfabric endpoint, if any, and forget the
	 * connection; 1 when its own ops may have left CQ entries. */
	int (*ep_close)(dofi_ep_t *ep);
	/*
	 * The backend's own checks of ep at now (0: none, only say when),
	 * ia->lock held: returns the time it must look again (UINT64_MAX:
	 * never) and sets *poll when it must look at every pass.
	 */
	uint64_t (*ep_timers)(dofi_ep_t *ep, uint64_t now, int *poll);
	/* The EP was kicked (dofi_cm_kick): act on what its ops recorded. */
	void (*ep_kicked)(dofi_ep_t *ep);
	/* Read and handle the backend's events, stopping once until has
	 * one in its ring (NULL: all; returns 1 when it stopped so). Called
	 * with ia->cm_read_lock held; takes ia->lock itself. */
	int (*progress)(dofi_ia_t *ia, dofi_evd_t *until);
	/*
	 * The fd that turns readable when progress has work, armed for a
	 * wait (-1: none, poll). *ready: events are in already.
	 */
	int (*wait_fd)(dofi_ia_t *ia, int *ready);
	/* An internal op of the backend's completed (err 0 or libfabric's).
	 * Completion path: no lock of ours, maybe an EVD's. */
	void (*op_done)(dofi_op_t *op, int err);
};

extern const dofi_cm_ops_t dofi_cm_msg_ops;
extern const dofi_cm_ops_t dofi_cm_rdm_ops;

/* A conn_qual's key: its low 16 bits, a port on IP fabrics (as OFED's
 * rdma_cm provider), so the qualifiers dapltest picks (above 65535) work. */
static inline uint16_t dofi_cm_port(DAT_CONN_QUAL qual)
{
	return (uint16_t)(qual & 0xffff);
}

/* ---- upcalls: backend -> connection model (ia->lock held) ---------------- */

/*
 * A connection request arrived at sp. Returns the CR, announced on the
 * PSP's or RSP's EVD, with its backend state still to be set by the
 * caller in cr->cm; NULL when it was refused (no memory, RSP taken): the
 * backend then refuses it on the wire.
 */
dofi_cr_t *dofi_cm_up_request(dofi_sp_t *sp, const dofi_cm_req_t *req,
                              void *be);
/* The connection is up: CONNECTED and ESTABLISHED (with the peer's
 * private data, active side). */
void dofi_cm_up_established(dofi_ep_t *ep, const void *pdata, DAT_COUNT plen);
/*
 * The connection attempt or the connection ended: num is the DAT event
 * (PEER_REJECTED with the peer's private data, NON_PEER_REJECTED,
 * UNREACHABLE, ACCEPT_COMPLETION_ERROR, BROKEN, DISCONNECTED).
 */
void dofi_cm_up_down(dofi_ep_t *ep, DAT_EVENT_NUMBER num, const void *pdata,
                     DAT_COUNT plen);
/*
 * A graceful end the backend's disconnect put off (it returned 1) may
 * go on: flush what is still posted and report DISCONNECTED.
 */
void dofi_cm_up_drained(dofi_ep_t *ep);
/* An RSP was spent by cr's request: it goes, cr keeps the listener. */
void dofi_cm_up_rsp_spent(dofi_sp_t *sp, dofi_cr_t *cr);
/* The peer ended a connection that was up: DISCONNECTED, or BROKEN
 * after a transfer failed. */
void dofi_cm_up_peer_end(dofi_ep_t *ep);
/*
 * The peer of a connection that was up cannot be reached while requests
 * are outstanding (the backend's link watch): as InfiniBand after its
 * retries, the oldest request completes with DAT_DTO_ERR_TRANSPORT, the
 * rest are flushed in posting order, and the connection ends BROKEN.
 */
void dofi_cm_up_link_lost(dofi_ep_t *ep);
/* Something of ep's changed that needs a look at some time: schedule. */
void dofi_cm_schedule(dofi_ep_t *ep);
/* The first PSP or RSP of ia that match(sp, arg) takes, or NULL. */
dofi_sp_t *dofi_cm_sp_search(dofi_ia_t *ia,
                             int (*match)(const dofi_sp_t *, const void *),
                             const void *arg);
/* Move what the EP's CQs hold into its EVDs. */
void dofi_cm_read_cqs(dofi_ep_t *ep);

/*
 * Completion path, no lock of ours: ep needs the CM's attention (an
 * internal message or a truncated receive). Lock-free; the CM acts at
 * its next pass (the progress thread is woken; without one, the next
 * dequeue).
 */
void dofi_cm_kick(dofi_ep_t *ep);

#endif /* DOFI_CM_H */
