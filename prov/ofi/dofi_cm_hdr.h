/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * Our CM private-data header: 7 bytes before the consumer's private
 * data, both ways, in every connection message. On the wire:
 *
 *   byte 0  DOFI_CM_MAGIC0 (0xda)
 *   byte 1  DOFI_CM_MAGIC1 (0x7f)
 *   byte 2  DOFI_CM_VERSION (1)
 *   byte 3  type: DOFI_CM_REQ 1, DOFI_CM_REP 2, DOFI_CM_REJ 3
 *   byte 4  the sender's max_rdma_read_in (low 8 bits)
 *   byte 5  the sender's max_rdma_read_out (low 8 bits)
 *   byte 6  flags: DOFI_CM_F_RTU 0x01, DOFI_CM_F_ACCEPTED 0x02
 *   7...    the consumer's private data
 *
 * At most 7 bytes so that verbs keeps 48 of its 56 for the consumer.
 * Type 4 (a reject for want of QoS) was never sent and is refused now.
 */
#ifndef DOFI_CM_HDR_H
#define DOFI_CM_HDR_H

#include <stddef.h>
#include <stdint.h>

#include "dof/status.h"

/*
 * Each constant under #ifndef: dofi.h may define the same macros, with
 * the same values, until it takes them from here.
 */
#ifndef DOFI_CM_HDR_SIZE
#define DOFI_CM_HDR_SIZE 7
#endif
#ifndef DOFI_CM_MAGIC0
#define DOFI_CM_MAGIC0 0xda
#endif
#ifndef DOFI_CM_MAGIC1
#define DOFI_CM_MAGIC1 0x7f
#endif
#ifndef DOFI_CM_VERSION
#define DOFI_CM_VERSION 1
#endif

/*
 * Message types. dofi.h declares these as enumerators (with NOQOS), which
 * #ifndef cannot see: after dofi.h they are its; without it, ours. (So
 * until dofi.h includes this header instead, include dofi.h first.)
 */
#ifndef DOFI_CM_REQ
#define DOFI_CM_REQ 1 /* connect */
#endif
#ifndef DOFI_CM_REP
#define DOFI_CM_REP 2 /* accept */
#endif
#ifndef DOFI_CM_REJ
#define DOFI_CM_REJ 3 /* consumer reject */
#endif

/*
 * Flags. RTU: in a REQ, "I will send a ready-to-use message if you ask";
 * in a REP, "send it: I report ESTABLISHED only once it arrives".
 * ACCEPTED: in a REQ, "my fabric's accept may miss my end of the
 * connection while it runs: I keep the connection until your accepted
 * message comes"; in a REP, "I send it, a zero-byte message, my first,
 * once my accept has returned". Peers that leave a flag unset do without.
 */
#ifndef DOFI_CM_F_RTU
#define DOFI_CM_F_RTU 0x01
#endif
#ifndef DOFI_CM_F_ACCEPTED
#define DOFI_CM_F_ACCEPTED 0x02
#endif
/* The flags this version knows; unpack drops the others. */
#define DOFI_CM_F_KNOWN (DOFI_CM_F_RTU | DOFI_CM_F_ACCEPTED)

_Static_assert(DOFI_CM_HDR_SIZE == 7 && DOFI_CM_MAGIC0 == 0xda &&
                       DOFI_CM_MAGIC1 == 0x7f && DOFI_CM_VERSION == 1,
               "the CM header's wire format is fixed");
_Static_assert(DOFI_CM_REQ == 1 && DOFI_CM_REP == 2 && DOFI_CM_REJ == 3,
               "the CM message types are fixed");
_Static_assert(DOFI_CM_F_RTU == 0x01 && DOFI_CM_F_ACCEPTED == 0x02,
               "the CM header's flags are fixed");

/* A header, unpacked. */
typedef struct dofi_cm_hdr {
	uint8_t type;     /* DOFI_CM_REQ/REP/REJ */
	uint8_t flags;    /* DOFI_CM_F_* */
	uint8_t rdma_in;  /* the sender's max_rdma_read_in */
	uint8_t rdma_out; /* the sender's max_rdma_read_out */
} dofi_cm_hdr_t;

/*
 * Write h and plen bytes of pdata to buf. Returns the bytes written
 * (DOFI_CM_HDR_SIZE + plen), or 0 and writes nothing when buf or h is
 * NULL, h->type is not a known type, room < DOFI_CM_HDR_SIZE + plen, or
 * pdata is NULL with plen > 0. h->flags go out as given.
 */
size_t dofi_cm_hdr_pack(unsigned char *buf, size_t room, const dofi_cm_hdr_t *h,
                        const void *pdata, size_t plen);

/*
 * Check and read a message of len bytes from the network. DOF_OK sets
 * *h, *pdata (data + DOFI_CM_HDR_SIZE: never NULL, even when *plen is 0)
 * and *plen; pdata and plen may be NULL when not wanted. Flag bits this
 * version does not know are accepted and cleared, so that a later
 * version can offer more to a peer running this one. Otherwise
 * DOF_ERR_INVALID_PARAM and no output is touched: data or h NULL, len
 * shorter than the header, a wrong magic or version, an unknown type, or
 * more than max_pdata bytes of private data.
 */
dof_status_t dofi_cm_hdr_unpack(const void *data, size_t len, size_t max_pdata,
                                dofi_cm_hdr_t *h, const unsigned char **pdata,
                                size_t *plen);

#endif /* DOFI_CM_HDR_H */
