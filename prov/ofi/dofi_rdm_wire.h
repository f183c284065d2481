/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * The wire protocol of the RDM backend's control channel: the messages two
 * IAs exchange over TCP to set up and end connections whose data travel
 * on RDM endpoints. This is the codec only, with no I/O: it turns a
 * message into bytes and bytes from the network into a message, checking
 * every field, and says whether a message fits the channel and the
 * connection it names. dapl-ofi-rdm-wire(7) is the reference: byte
 * layouts, the state machine of a connection, the liveness rules.
 *
 * Every message: an 8-byte header, then a body whose layout its type
 * fixes. Integers are big-endian (network order), with no padding:
 *
 *   0    magic 0xda
 *   1    magic 0x52
 *   2    version: DOFI_RDM_WIRE_VERSION (1)
 *   3    type: DOFI_RDM_WIRE_HELLO ... DOFI_RDM_WIRE_DREP
 *   4-5  flags: DOFI_RDM_WIRE_F_ABRUPT on a DREQ, else 0
 *   6-7  length: the whole message, this header included
 *
 * HELLO (18 bytes), the first message each way on a channel:
 *   8-15  the sender IA's incarnation
 *   16    the lowest version it speaks (>= 1)
 *   17    the highest (>= the lowest)
 *
 * Every other type starts its body with the connection's names (32 bytes):
 *   8-15  the sender IA's incarnation (not 0)
 *   16-23 the receiver IA's, as the sender's HELLO exchange learned it
 *         (not 0)
 *   24-31 the sender's id of the connection
 *   32-39 the receiver's id of the connection (0 where not known yet)
 * and then:
 *   REQ       40-47 conn_qual, 48 rdma_in, 49 rdma_out, 50-51 address
 *             length, 52-53 private data length, 54... address, data
 *   REP       40 rdma_in, 41 rdma_out, 42-43 address length, 44-45
 *             private data length, 46... address, data
 *   RTU       nothing (40 bytes in all)
 *   REJ_USER  40-41 private data length, 42... data
 *   REJ_CM    40-41 reason (DOFI_RDM_WIRE_R_*)
 *   DREQ      40-47 messages the sender sent on the connection
 *   DREP      40-47 the same, of the DREQ's receiver
 *
 * Connection ids are 64 bits, chosen by each side and never reused within
 * an incarnation (a counter), so a message about a connection that has
 * ended cannot name a later one. Ids: REQ src not 0 and dst 0; REP, RTU,
 * REJ_USER, DREQ and DREP both not 0; REJ_CM at least one of the two not
 * 0 (src 0: "I have no connection", dst 0: "the one of my REQ").
 *
 * An incarnation is 64 random bits drawn when the IA opens (never 0): a
 * restarted peer is a new peer.
 *
 * The decoder checks in this order and refuses at the first fault: magic,
 * version, type, flags, length within the type's bounds (each as soon as
 * its bytes are in), then, with the whole message: address length,
 * private data length, body against length (short, then trailing
 * bytes), incarnations, ids, the REJ_CM reason, the HELLO versions.
 */
#ifndef DOFI_RDM_WIRE_H
#define DOFI_RDM_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "dof/status.h"

#define DOFI_RDM_WIRE_MAGIC0   0xda
#define DOFI_RDM_WIRE_MAGIC1   0x52
#define DOFI_RDM_WIRE_VERSION  1
#define DOFI_RDM_WIRE_HDR_SIZE 8
/*
 * An RDM endpoint's address (fi_getname) at most: efa's are 32 bytes,
 * tcp;ofi_rxm's and udp;ofi_rxd's a sockaddr (16, or 28 for IPv6), shm's
 * a name libfabric bounds at 256 (19 bytes measured on 1.17).
 */
#define DOFI_RDM_WIRE_ADDR_MAX 256
/*
 * The consumer's private data at most, each way: the IA reports it as
 * max_private_data_size (DAT requires 64 or more).
 */
#define DOFI_RDM_WIRE_PDATA_MAX 256
/* The largest message (a REQ with both at their most): room enough. */
#define DOFI_RDM_WIRE_MSG_MAX                                        \
	(DOFI_RDM_WIRE_HDR_SIZE + 32 + 14 + DOFI_RDM_WIRE_ADDR_MAX + \
	 DOFI_RDM_WIRE_PDATA_MAX)

/* Message types. */
enum {
	DOFI_RDM_WIRE_HELLO = 1,    /* a channel opens: incarnation, versions */
	DOFI_RDM_WIRE_REQ = 2,      /* connect to conn_qual */
	DOFI_RDM_WIRE_REP = 3,      /* the consumer accepted */
	DOFI_RDM_WIRE_RTU = 4,      /* the active side has the connection */
	DOFI_RDM_WIRE_REJ_USER = 5, /* the consumer rejected */
	DOFI_RDM_WIRE_REJ_CM = 6,   /* we refused, with a reason */
	DOFI_RDM_WIRE_DREQ = 7,     /* end the connection */
	DOFI_RDM_WIRE_DREP = 8,     /* ended */
	DOFI_RDM_WIRE_TYPE_MAX = DOFI_RDM_WIRE_DREP
};

/*
 * DREQ: the sender's requests were flushed, not completed, so the
 * receiver must not wait for the messages counted in the DREQ.
 */
#define DOFI_RDM_WIRE_F_ABRUPT 0x0001

/* REJ_CM reasons, and the event each gives (dapl-ofi-rdm-wire(7)). */
enum {
	DOFI_RDM_WIRE_R_NO_LISTENER = 1,  /* no PSP/RSP for conn_qual */
	DOFI_RDM_WIRE_R_NO_RESOURCE = 2,  /* the request could not be taken */
	DOFI_RDM_WIRE_R_BAD_ADDRESS = 3,  /* the endpoint address is unusable */
	DOFI_RDM_WIRE_R_TIMED_OUT = 4,    /* the active side gave up */
	DOFI_RDM_WIRE_R_UNKNOWN_CONN = 5, /* no such connection here */
	DOFI_RDM_WIRE_R_MAX = DOFI_RDM_WIRE_R_UNKNOWN_CONN
};

/*
 * Why a message was refused (why outputs; dofi_rdm_wire_strerr). The
 * first group is the decoder's, in the order it checks; then the
 * encoder's and the channel and connection checks'.
 */
typedef enum {
	DOFI_RDM_WIRE_E_NONE = 0,
	DOFI_RDM_WIRE_E_ARG,         /* a NULL argument (our own fault) */
	DOFI_RDM_WIRE_E_MAGIC,       /* not our magic */
	DOFI_RDM_WIRE_E_VERSION,     /* a version we do not speak */
	DOFI_RDM_WIRE_E_TYPE,        /* an unknown type */
	DOFI_RDM_WIRE_E_FLAGS,       /* flags the type does not have */
	DOFI_RDM_WIRE_E_LENGTH,      /* length outside the type's bounds */
	DOFI_RDM_WIRE_E_ADDR_LEN,    /* address length 0 or too long */
	DOFI_RDM_WIRE_E_PDATA_LEN,   /* private data too long */
	DOFI_RDM_WIRE_E_SHORT,       /* the body needs more than length */
	DOFI_RDM_WIRE_E_TRAILING,    /* bytes after the body */
	DOFI_RDM_WIRE_E_INCARNATION, /* an incarnation of 0 */
	DOFI_RDM_WIRE_E_CONN_ID,     /* a connection id 0 where needed, or
	                                not 0 where it must be */
	DOFI_RDM_WIRE_E_REASON,      /* an unknown REJ_CM reason */
	DOFI_RDM_WIRE_E_VERSIONS,    /* a HELLO's version range is empty */
	DOFI_RDM_WIRE_E_ROOM,        /* encode: the buffer is too small */
	DOFI_RDM_WIRE_E_NO_HELLO,    /* a message before the peer's HELLO */
	DOFI_RDM_WIRE_E_HELLO_AGAIN, /* a second HELLO on a channel */
	DOFI_RDM_WIRE_E_SENDER,      /* not from the channel's incarnation */
	DOFI_RDM_WIRE_E_NOT_OURS,    /* for another incarnation of ours */
	DOFI_RDM_WIRE_E_STALE,       /* from an older incarnation of the
	                                connection's peer */
	DOFI_RDM_WIRE_E_PEER_CONN,   /* not the peer's id of the connection */
	DOFI_RDM_WIRE_E_NO_COMMON,   /* no version both sides speak */
	DOFI_RDM_WIRE_E_LAST
} dofi_rdm_wire_err_t;

/*
 * A message, decoded or to encode. Fields a type does not carry are 0
 * (NULL) when decoded and ignored when encoded. addr and pdata point into
 * the decoded buffer (pdata at where the data would be even when
 * pdata_len is 0, for the types that carry data).
 */
typedef struct dofi_rdm_wire_msg {
	uint8_t type;       /* DOFI_RDM_WIRE_HELLO ... DREP */
	uint16_t flags;     /* DOFI_RDM_WIRE_F_ABRUPT (DREQ) */
	uint64_t src_inc;   /* the sender IA's incarnation */
	uint64_t dst_inc;   /* the receiver IA's (not HELLO) */
	uint64_t src_conn;  /* the sender's id of the connection */
	uint64_t dst_conn;  /* the receiver's (0: not known yet) */
	uint64_t conn_qual; /* REQ */
	uint64_t sent;      /* DREQ, DREP: messages sent on the connection */
	uint8_t rdma_in;    /* REQ, REP: the sender's max_rdma_read_in */
	uint8_t rdma_out;   /* REQ, REP: its max_rdma_read_out */
	uint16_t reason;    /* REJ_CM: DOFI_RDM_WIRE_R_* */
	uint8_t ver_lo;     /* HELLO: lowest version spoken */
	uint8_t ver_hi;     /* HELLO: highest */
	uint16_t addr_len;  /* REQ, REP: 1..DOFI_RDM_WIRE_ADDR_MAX */
	uint16_t pdata_len; /* REQ, REP, REJ_USER: 0..PDATA_MAX */
	const unsigned char *addr;
	const unsigned char *pdata;
} dofi_rdm_wire_msg_t;

/*
 * Write m to buf (room bytes; DOFI_RDM_WIRE_MSG_MAX always suffice).
 * DOF_OK sets *len to the bytes written. Otherwise nothing is written,
 * *why (may be NULL) says why and a line is logged:
 * DOF_ERR_INVALID_PARAM for a message the decoder would refuse (or a NULL
 * argument, addr or pdata NULL with a length), DOF_ERR_OVERFLOW when room
 * is short.
 */
dof_status_t dofi_rdm_wire_encode(void *buf, size_t room,
                                  const dofi_rdm_wire_msg_t *m, size_t *len,
                                  dofi_rdm_wire_err_t *why);

/*
 * Read the message at the start of buf[0..len), which may hold only its
 * first bytes, or more than it (the next message's), as a stream reader
 * has them:
 *   DOF_OK: a whole message; *m is set and *size is its length: consume
 *     that many bytes.
 *   DOF_ERR_BUSY: nothing wrong so far, but more bytes are needed: *size
 *     (> len) is the length of the message as far as known (the header's
 *     when fewer than DOFI_RDM_WIRE_HDR_SIZE bytes are in); *m untouched.
 *   DOF_ERR_INVALID_PARAM: refused, with a line logged and *why (may be
 *     NULL) set; *m and *size untouched. A refused byte stream cannot be
 *     framed again: close the channel.
 * A fault is found as soon as the bytes that show it are in; no more than
 * DOFI_RDM_WIRE_MSG_MAX bytes are ever needed.
 */
dof_status_t dofi_rdm_wire_decode(const void *buf, size_t len,
                                  dofi_rdm_wire_msg_t *m, size_t *size,
                                  dofi_rdm_wire_err_t *why);

/*
 * The version a channel speaks, from the peer's HELLO: the highest both
 * speak. DOF_OK sets *ver; DOF_ERR_UNSUPPORTED (E_NO_COMMON, logged)
 * when there is none, DOF_ERR_INVALID_PARAM when hello is not a HELLO.
 */
dof_status_t dofi_rdm_wire_version(const dofi_rdm_wire_msg_t *hello,
                                   uint8_t *ver, dofi_rdm_wire_err_t *why);

/*
 * Whether a decoded message m may be taken on a channel: self_inc is our
 * IA's incarnation, chan_inc the incarnation the peer's HELLO on this
 * channel announced (0 before it came). A HELLO comes first and once;
 * every later message is from chan_inc and to self_inc. DOF_OK, or
 * DOF_ERR_INVALID_PARAM with *why (E_NO_HELLO, E_HELLO_AGAIN, E_SENDER,
 * E_NOT_OURS) and a line logged: a peer that breaks these is broken or
 * hostile, close the channel. Pure: the caller keeps chan_inc.
 */
dof_status_t dofi_rdm_wire_admit(const dofi_rdm_wire_msg_t *m,
                                 uint64_t self_inc, uint64_t chan_inc,
                                 dofi_rdm_wire_err_t *why);

/* What the backend holds of one connection, to check messages against. */
typedef struct dofi_rdm_wire_conn {
	uint64_t self_conn; /* our id of it */
	uint64_t peer_inc;  /* the peer IA's incarnation */
	uint64_t peer_conn; /* the peer's id; 0 until its REP (active side) */
} dofi_rdm_wire_conn_t;

/*
 * Whether m, admitted on its channel, belongs to connection c, the one
 * the backend found under m->dst_conn (or, for a REJ_CM with dst_conn 0,
 * under the sender's ids). DOF_OK, or DOF_ERR_NOT_FOUND with *why and a
 * line logged: E_NOT_OURS (m names another id of ours), E_STALE (m is
 * from another incarnation than the connection's peer: an older one,
 * since the connection's end, or a replay), E_PEER_CONN (from another
 * connection of that peer). Such a message is dropped; the connection
 * goes on. Which messages a connection takes in which state is the
 * backend's (dapl-ofi-rdm-wire(7)); so is finding a REQ that repeats
 * one it holds (the same src_inc and src_conn).
 */
dof_status_t dofi_rdm_wire_match(const dofi_rdm_wire_conn_t *c,
                                 const dofi_rdm_wire_msg_t *m,
                                 dofi_rdm_wire_err_t *why);

/* A message type's name ("REQ"), "?" when unknown. */
const char *dofi_rdm_wire_type_str(unsigned type);
/* A refusal's reason as words for a log line. */
const char *dofi_rdm_wire_strerr(dofi_rdm_wire_err_t why);

#endif /* DOFI_RDM_WIRE_H */
