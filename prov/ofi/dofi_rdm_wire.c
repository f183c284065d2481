/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/* The RDM backend's control-channel codec (dofi_rdm_wire.h). */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "dof/log.h"
#include "dofi_rdm_wire.h"

/* As dofi.h names the component, which this leaf does not include. */
#ifndef DOFI_LOG
#define DOFI_LOG "dapl-ofi/cm"
#endif

/* The connection names every type but HELLO starts its body with. */
#define NAMES_SIZE 32
#define BODY       (DOFI_RDM_WIRE_HDR_SIZE + NAMES_SIZE)

/* What each type's body holds, and so its length's bounds. */
typedef struct {
	uint16_t fixed;   /* header and fixed fields: the least length */
	uint8_t has_addr; /* an address, 1..ADDR_MAX bytes */
	uint8_t has_data; /* private data, 0..PDATA_MAX bytes */
	uint16_t flags;   /* the flags it may carry */
} wire_shape_t;

static const wire_shape_t wire_shapes[DOFI_RDM_WIRE_TYPE_MAX + 1] = {
        [DOFI_RDM_WIRE_HELLO] = {DOFI_RDM_WIRE_HDR_SIZE + 10, 0, 0, 0},
        [DOFI_RDM_WIRE_REQ] = {BODY + 14, 1, 1, 0},
        [DOFI_RDM_WIRE_REP] = {BODY + 6, 1, 1, 0},
        [DOFI_RDM_WIRE_RTU] = {BODY, 0, 0, 0},
        [DOFI_RDM_WIRE_REJ_USER] = {BODY + 2, 0, 1, 0},
        [DOFI_RDM_WIRE_REJ_CM] = {BODY + 2, 0, 0, 0},
        [DOFI_RDM_WIRE_DREQ] = {BODY + 8, 0, 0, DOFI_RDM_WIRE_F_ABRUPT},
        [DOFI_RDM_WIRE_DREP] = {BODY + 8, 0, 0, 0},
};

_Static_assert(DOFI_RDM_WIRE_MSG_MAX == BODY + 14 + DOFI_RDM_WIRE_ADDR_MAX +
                                                DOFI_RDM_WIRE_PDATA_MAX,
               "the largest message is a REQ");
_Static_assert(DOFI_RDM_WIRE_MSG_MAX <= UINT16_MAX,
               "a message's length fits its 16-bit field");

static const char *const wire_type_names[DOFI_RDM_WIRE_TYPE_MAX + 1] = {
        [DOFI_RDM_WIRE_HELLO] = "HELLO",
        [DOFI_RDM_WIRE_REQ] = "REQ",
        [DOFI_RDM_WIRE_REP] = "REP",
        [DOFI_RDM_WIRE_RTU] = "RTU",
        [DOFI_RDM_WIRE_REJ_USER] = "REJ_USER",
        [DOFI_RDM_WIRE_REJ_CM] = "REJ_CM",
        [DOFI_RDM_WIRE_DREQ] = "DREQ",
        [DOFI_RDM_WIRE_DREP] = "DREP",
};

static const char *const wire_err_names[DOFI_RDM_WIRE_E_LAST] = {
        [DOFI_RDM_WIRE_E_NONE] = "no fault",
        [DOFI_RDM_WIRE_E_ARG] = "a NULL argument",
        [DOFI_RDM_WIRE_E_MAGIC] = "not a dapl-ofi control message",
        [DOFI_RDM_WIRE_E_VERSION] = "a version this IA does not speak",
        [DOFI_RDM_WIRE_E_TYPE] = "an unknown message type",
        [DOFI_RDM_WIRE_E_FLAGS] = "flags the type does not have",
        [DOFI_RDM_WIRE_E_LENGTH] = "a length outside the type's bounds",
        [DOFI_RDM_WIRE_E_ADDR_LEN] = "an address length out of bounds",
        [DOFI_RDM_WIRE_E_PDATA_LEN] = "private data too long",
        [DOFI_RDM_WIRE_E_SHORT] = "a body longer than the message",
        [DOFI_RDM_WIRE_E_TRAILING] = "bytes after the body",
        [DOFI_RDM_WIRE_E_INCARNATION] = "an incarnation of 0",
        [DOFI_RDM_WIRE_E_CONN_ID] = "connection ids the type forbids",
        [DOFI_RDM_WIRE_E_REASON] = "an unknown reject reason",
        [DOFI_RDM_WIRE_E_VERSIONS] = "an empty version range",
        [DOFI_RDM_WIRE_E_ROOM] = "no room for the message",
        [DOFI_RDM_WIRE_E_NO_HELLO] = "a message before the peer's HELLO",
        [DOFI_RDM_WIRE_E_HELLO_AGAIN] = "a second HELLO",
        [DOFI_RDM_WIRE_E_SENDER] = "not from the channel's peer",
        [DOFI_RDM_WIRE_E_NOT_OURS] = "not for this IA or connection",
        [DOFI_RDM_WIRE_E_STALE] = "from another incarnation of the peer",
        [DOFI_RDM_WIRE_E_PEER_CONN] = "from another connection of the peer",
        [DOFI_RDM_WIRE_E_NO_COMMON] = "no version both sides speak",
};

const char *dofi_rdm_wire_type_str(unsigned type)
{
	if (type == 0 || type > DOFI_RDM_WIRE_TYPE_MAX)
		return "?";
	return wire_type_names[type];
}

const char *dofi_rdm_wire_strerr(dofi_rdm_wire_err_t why)
{
	if ((unsigned)why >= DOFI_RDM_WIRE_E_LAST)
		return "?";
	return wire_err_names[why];
}

/* ---- bytes: big-endian, one at a time (any alignment) -------------------- */

static void put16(unsigned char *p, uint16_t v)
{
	p[0] = (unsigned char)(v >> 8);
	p[1] = (unsigned char)v;
}

static void put64(unsigned char *p, uint64_t v)
{
	int i;

	for (i = 7; i >= 0; i--) {
		p[i] = (unsigned char)v;
		v >>= 8;
	}
}

static uint16_t get16(const unsigned char *p)
{
	return (uint16_t)((unsigned)p[0] << 8 | p[1]);
}

static uint64_t get64(const unsigned char *p)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

/* ---- checks shared by encode and decode ---------------------------------- */

static int wire_type_known(unsigned type)
{
	return type >= DOFI_RDM_WIRE_HELLO && type <= DOFI_RDM_WIRE_TYPE_MAX;
}

/* The length m takes on the wire; its type known, its lengths checked. */
static size_t wire_size(const dofi_rdm_wire_msg_t *m)
{
	const wire_shape_t *s = &wire_shapes[m->type];

	return s->fixed + (s->has_addr ? m->addr_len : 0) +
	       (s->has_data ? m->pdata_len : 0);
}

/*
 * The checks of a message's fields past its header and lengths, for
 * encode and decode alike, in the decoder's order; text (len bytes)
 * says more for the log. E_NONE when all is well.
 */
static dofi_rdm_wire_err_t wire_check_fields(const dofi_rdm_wire_msg_t *m,
                                             char *text, size_t len)
{
	const char *tn = dofi_rdm_wire_type_str(m->type);
	int ids_ok;

	if (m->src_inc == 0 ||
	    (m->type != DOFI_RDM_WIRE_HELLO && m->dst_inc == 0)) {
		snprintf(text, len,
		         "%s from incarnation %#" PRIx64 " to %#" PRIx64, tn,
		         m->src_inc, m->dst_inc);
		return DOFI_RDM_WIRE_E_INCARNATION;
	}
	switch (m->type) {
	case DOFI_RDM_WIRE_HELLO:
		ids_ok = 1;
		break;
	case DOFI_RDM_WIRE_REQ:
		ids_ok = m->src_conn != 0 && m->dst_conn == 0;
		break;
	case DOFI_RDM_WIRE_REJ_CM:
		ids_ok = m->src_conn != 0 || m->dst_conn != 0;
		break;
	default:
		ids_ok = m->src_conn != 0 && m->dst_conn != 0;
		break;
	}
	if (!ids_ok) {
		snprintf(text, len,
		         "%s from connection %#" PRIx64 " to %#" PRIx64, tn,
		         m->src_conn, m->dst_conn);
		return DOFI_RDM_WIRE_E_CONN_ID;
	}
	if (m->type == DOFI_RDM_WIRE_REJ_CM &&
	    (m->reason == 0 || m->reason > DOFI_RDM_WIRE_R_MAX)) {
		snprintf(text, len, "REJ_CM with reason %u", m->reason);
		return DOFI_RDM_WIRE_E_REASON;
	}
	if (m->type == DOFI_RDM_WIRE_HELLO &&
	    (m->ver_lo == 0 || m->ver_lo > m->ver_hi)) {
		snprintf(text, len, "HELLO speaking versions %u to %u",
		         m->ver_lo, m->ver_hi);
		return DOFI_RDM_WIRE_E_VERSIONS;
	}
	return DOFI_RDM_WIRE_E_NONE;
}

/* The address and data lengths against their bounds. */
static dofi_rdm_wire_err_t wire_check_lens(const dofi_rdm_wire_msg_t *m,
                                           char *text, size_t len)
{
	const wire_shape_t *s = &wire_shapes[m->type];
	const char *tn = dofi_rdm_wire_type_str(m->type);

	if (s->has_addr &&
	    (m->addr_len == 0 || m->addr_len > DOFI_RDM_WIRE_ADDR_MAX)) {
		snprintf(text, len,
		         "%s with an address of %u bytes, 1 to %u allowed", tn,
		         m->addr_len, DOFI_RDM_WIRE_ADDR_MAX);
		return DOFI_RDM_WIRE_E_ADDR_LEN;
	}
	if (s->has_data && m->pdata_len > DOFI_RDM_WIRE_PDATA_MAX) {
		snprintf(text, len,
		         "%s with %u bytes of private data, at most %u allowed",
		         tn, m->pdata_len, DOFI_RDM_WIRE_PDATA_MAX);
		return DOFI_RDM_WIRE_E_PDATA_LEN;
	}
	return DOFI_RDM_WIRE_E_NONE;
}

/* ---- encode -------------------------------------------------------------- */

static dof_status_t wire_enc_refuse(const dofi_rdm_wire_msg_t *m,
                                    dofi_rdm_wire_err_t e, const char *text,
                                    dofi_rdm_wire_err_t *why)
{
	dof_warn(DOFI_LOG, "RDM control: not sending %s, %s: %s",
	         m != NULL ? dofi_rdm_wire_type_str(m->type) : "a message",
	         dofi_rdm_wire_strerr(e), text);
	if (why != NULL)
		*why = e;
	return e == DOFI_RDM_WIRE_E_ROOM ? DOF_ERR_OVERFLOW
	                                 : DOF_ERR_INVALID_PARAM;
}

dof_status_t dofi_rdm_wire_encode(void *buf, size_t room,
                                  const dofi_rdm_wire_msg_t *m, size_t *len,
                                  dofi_rdm_wire_err_t *why)
{
	unsigned char *b = buf, *p;
	const wire_shape_t *s;
	dofi_rdm_wire_err_t e;
	char text[128] = "";
	size_t n;

	if (b == NULL || m == NULL || len == NULL)
		return wire_enc_refuse(m, DOFI_RDM_WIRE_E_ARG,
		                       "buf, m or len is NULL", why);
	if (!wire_type_known(m->type)) {
		snprintf(text, sizeof(text), "type %u", m->type);
		return wire_enc_refuse(m, DOFI_RDM_WIRE_E_TYPE, text, why);
	}
	s = &wire_shapes[m->type];
	if ((m->flags & ~s->flags) != 0) {
		snprintf(text, sizeof(text), "flags %#x", m->flags);
		return wire_enc_refuse(m, DOFI_RDM_WIRE_E_FLAGS, text, why);
	}
	e = wire_check_lens(m, text, sizeof(text));
	if (e == DOFI_RDM_WIRE_E_NONE)
		e = wire_check_fields(m, text, sizeof(text));
	if (e != DOFI_RDM_WIRE_E_NONE)
		return wire_enc_refuse(m, e, text, why);
	if ((s->has_addr && m->addr == NULL) ||
	    (s->has_data && m->pdata == NULL && m->pdata_len > 0))
		return wire_enc_refuse(m, DOFI_RDM_WIRE_E_ARG,
		                       "no bytes for a length", why);
	n = wire_size(m);
	if (room < n) {
		snprintf(text, sizeof(text), "%zu bytes for %zu", room, n);
		return wire_enc_refuse(m, DOFI_RDM_WIRE_E_ROOM, text, why);
	}

	b[0] = DOFI_RDM_WIRE_MAGIC0;
	b[1] = DOFI_RDM_WIRE_MAGIC1;
	b[2] = DOFI_RDM_WIRE_VERSION;
	b[3] = m->type;
	put16(b + 4, m->flags);
	put16(b + 6, (uint16_t)n);
	put64(b + 8, m->src_inc);
	if (m->type == DOFI_RDM_WIRE_HELLO) {
		b[16] = m->ver_lo;
		b[17] = m->ver_hi;
		*len = n;
		return DOF_OK;
	}
	put64(b + 16, m->dst_inc);
	put64(b + 24, m->src_conn);
	put64(b + 32, m->dst_conn);
	p = b + BODY;
	switch (m->type) {
	case DOFI_RDM_WIRE_REQ:
		put64(p, m->conn_qual);
		p += 8;
		/* fall through - the rest is a REP's */
	case DOFI_RDM_WIRE_REP:
		p[0] = m->rdma_in;
		p[1] = m->rdma_out;
		put16(p + 2, m->addr_len);
		put16(p + 4, m->pdata_len);
		memcpy(p + 6, m->addr, m->addr_len);
		if (m->pdata_len > 0)
			memcpy(p + 6 + m->addr_len, m->pdata, m->pdata_len);
		break;
	case DOFI_RDM_WIRE_REJ_USER:
		put16(p, m->pdata_len);
		if (m->pdata_len > 0)
			memcpy(p + 2, m->pdata, m->pdata_len);
		break;
	case DOFI_RDM_WIRE_REJ_CM:
		put16(p, m->reason);
		break;
	case DOFI_RDM_WIRE_DREQ:
	case DOFI_RDM_WIRE_DREP:
		put64(p, m->sent);
		break;
	default: /* RTU: the names alone */
		break;
	}
	*len = n;
	return DOF_OK;
}

/* ---- decode -------------------------------------------------------------- */

static dof_status_t wire_dec_refuse(dofi_rdm_wire_err_t e, const char *text,
                                    dofi_rdm_wire_err_t *why)
{
	dof_warn(DOFI_LOG, "RDM control: message refused, %s: %s",
	         dofi_rdm_wire_strerr(e), text);
	if (why != NULL)
		*why = e;
	return DOF_ERR_INVALID_PARAM;
}

/*
 * The header's bytes that are in (len of them, maybe fewer than 8):
 * E_NONE while none is wrong, and *total the length once it is in.
 */
static dofi_rdm_wire_err_t wire_check_hdr(const unsigned char *b, size_t len,
                                          size_t *total, char *text,
                                          size_t tlen)
{
	const wire_shape_t *s;
	size_t max;
	uint16_t v;

	if ((len > 0 && b[0] != DOFI_RDM_WIRE_MAGIC0) ||
	    (len > 1 && b[1] != DOFI_RDM_WIRE_MAGIC1)) {
		if (len > 1)
			snprintf(text, tlen, "it starts %02x %02x", b[0], b[1]);
		else
			snprintf(text, tlen, "it starts %02x", b[0]);
		return DOFI_RDM_WIRE_E_MAGIC;
	}
	if (len > 2 && b[2] != DOFI_RDM_WIRE_VERSION) {
		snprintf(text, tlen, "version %u, this IA speaks %u", b[2],
		         DOFI_RDM_WIRE_VERSION);
		return DOFI_RDM_WIRE_E_VERSION;
	}
	if (len > 3 && !wire_type_known(b[3])) {
		snprintf(text, tlen, "type %u", b[3]);
		return DOFI_RDM_WIRE_E_TYPE;
	}
	if (len < DOFI_RDM_WIRE_HDR_SIZE)
		return DOFI_RDM_WIRE_E_NONE;
	s = &wire_shapes[b[3]];
	v = get16(b + 4);
	if ((v & ~s->flags) != 0) {
		snprintf(text, tlen, "%s with flags %#x",
		         dofi_rdm_wire_type_str(b[3]), v);
		return DOFI_RDM_WIRE_E_FLAGS;
	}
	v = get16(b + 6);
	max = s->fixed + (s->has_addr ? DOFI_RDM_WIRE_ADDR_MAX : 0) +
	      (s->has_data ? DOFI_RDM_WIRE_PDATA_MAX : 0);
	if (v < s->fixed || v > max) {
		snprintf(text, tlen, "%s of %u bytes, %u to %zu allowed",
		         dofi_rdm_wire_type_str(b[3]), v, s->fixed, max);
		return DOFI_RDM_WIRE_E_LENGTH;
	}
	*total = v;
	return DOFI_RDM_WIRE_E_NONE;
}

dof_status_t dofi_rdm_wire_decode(const void *buf, size_t len,
                                  dofi_rdm_wire_msg_t *m, size_t *size,
                                  dofi_rdm_wire_err_t *why)
{
	const unsigned char *b = buf, *p;
	dofi_rdm_wire_msg_t d;
	dofi_rdm_wire_err_t e;
	char text[128] = "";
	size_t total = DOFI_RDM_WIRE_HDR_SIZE, body;

	if ((b == NULL && len > 0) || m == NULL || size == NULL)
		return wire_dec_refuse(DOFI_RDM_WIRE_E_ARG,
		                       "buf, m or size is NULL", why);
	e = wire_check_hdr(b, len, &total, text, sizeof(text));
	if (e != DOFI_RDM_WIRE_E_NONE)
		return wire_dec_refuse(e, text, why);
	if (len < total) {
		*size = total;
		return DOF_ERR_BUSY;
	}

	memset(&d, 0, sizeof(d));
	d.type = b[3];
	d.flags = get16(b + 4);
	d.src_inc = get64(b + 8);
	body = wire_shapes[d.type].fixed;
	if (d.type == DOFI_RDM_WIRE_HELLO) {
		d.ver_lo = b[16];
		d.ver_hi = b[17];
	} else {
		d.dst_inc = get64(b + 16);
		d.src_conn = get64(b + 24);
		d.dst_conn = get64(b + 32);
	}
	p = b + BODY;
	switch (d.type) {
	case DOFI_RDM_WIRE_REQ:
		d.conn_qual = get64(p);
		p += 8;
		/* fall through - the rest is a REP's */
	case DOFI_RDM_WIRE_REP:
		d.rdma_in = p[0];
		d.rdma_out = p[1];
		d.addr_len = get16(p + 2);
		d.pdata_len = get16(p + 4);
		break;
	case DOFI_RDM_WIRE_REJ_USER:
		d.pdata_len = get16(p);
		break;
	case DOFI_RDM_WIRE_REJ_CM:
		d.reason = get16(p);
		break;
	case DOFI_RDM_WIRE_DREQ:
	case DOFI_RDM_WIRE_DREP:
		d.sent = get64(p);
		break;
	default: /* HELLO, RTU */
		break;
	}
	e = wire_check_lens(&d, text, sizeof(text));
	if (e != DOFI_RDM_WIRE_E_NONE)
		return wire_dec_refuse(e, text, why);
	/* Both lengths bounded above: no sum can wrap. */
	body = wire_size(&d);
	if (body != total) {
		snprintf(text, sizeof(text),
		         "%s of %zu bytes whose body makes %zu",
		         dofi_rdm_wire_type_str(d.type), total, body);
		return wire_dec_refuse(body > total ? DOFI_RDM_WIRE_E_SHORT
		                                    : DOFI_RDM_WIRE_E_TRAILING,
		                       text, why);
	}
	e = wire_check_fields(&d, text, sizeof(text));
	if (e != DOFI_RDM_WIRE_E_NONE)
		return wire_dec_refuse(e, text, why);
	if (wire_shapes[d.type].has_addr)
		d.addr = b + wire_shapes[d.type].fixed;
	if (wire_shapes[d.type].has_data)
		d.pdata = b + wire_shapes[d.type].fixed + d.addr_len;
	*m = d;
	*size = total;
	return DOF_OK;
}

/* ---- the channel and the connection -------------------------------------- */

dof_status_t dofi_rdm_wire_version(const dofi_rdm_wire_msg_t *hello,
                                   uint8_t *ver, dofi_rdm_wire_err_t *why)
{
	if (hello == NULL || ver == NULL ||
	    hello->type != DOFI_RDM_WIRE_HELLO) {
		if (why != NULL)
			*why = DOFI_RDM_WIRE_E_ARG;
		return DOF_ERR_INVALID_PARAM;
	}
	/* We speak 1..DOFI_RDM_WIRE_VERSION. */
	if (hello->ver_lo > DOFI_RDM_WIRE_VERSION || hello->ver_hi < 1 ||
	    hello->ver_lo > hello->ver_hi) {
		dof_warn(DOFI_LOG,
		         "RDM control: peer incarnation %#" PRIx64
		         " speaks versions %u to %u, this IA 1 to %u",
		         hello->src_inc, hello->ver_lo, hello->ver_hi,
		         DOFI_RDM_WIRE_VERSION);
		if (why != NULL)
			*why = DOFI_RDM_WIRE_E_NO_COMMON;
		return DOF_ERR_UNSUPPORTED;
	}
	*ver = hello->ver_hi < DOFI_RDM_WIRE_VERSION ? hello->ver_hi
	                                             : DOFI_RDM_WIRE_VERSION;
	return DOF_OK;
}

dof_status_t dofi_rdm_wire_admit(const dofi_rdm_wire_msg_t *m,
                                 uint64_t self_inc, uint64_t chan_inc,
                                 dofi_rdm_wire_err_t *why)
{
	dofi_rdm_wire_err_t e = DOFI_RDM_WIRE_E_NONE;

	if (m == NULL)
		e = DOFI_RDM_WIRE_E_ARG;
	else if (m->type == DOFI_RDM_WIRE_HELLO)
		e = chan_inc != 0 ? DOFI_RDM_WIRE_E_HELLO_AGAIN
		                  : DOFI_RDM_WIRE_E_NONE;
	else if (chan_inc == 0)
		e = DOFI_RDM_WIRE_E_NO_HELLO;
	else if (m->src_inc != chan_inc)
		e = DOFI_RDM_WIRE_E_SENDER;
	else if (m->dst_inc != self_inc)
		e = DOFI_RDM_WIRE_E_NOT_OURS;
	if (e == DOFI_RDM_WIRE_E_NONE)
		return DOF_OK;
	if (m != NULL)
		dof_warn(DOFI_LOG,
		         "RDM control: %s from incarnation %#" PRIx64
		         " to %#" PRIx64 " refused on a channel of %#" PRIx64
		         " to %#" PRIx64 ": %s",
		         dofi_rdm_wire_type_str(m->type), m->src_inc,
		         m->dst_inc, chan_inc, self_inc,
		         dofi_rdm_wire_strerr(e));
	if (why != NULL)
		*why = e;
	return DOF_ERR_INVALID_PARAM;
}

/* Whether m's sender ids fit what c knows of the peer's. */
static int wire_peer_conn_ok(const dofi_rdm_wire_conn_t *c,
                             const dofi_rdm_wire_msg_t *m)
{
	if (m->dst_conn == 0) /* c was found by the sender's ids */
		return c->peer_conn != 0 && m->src_conn == c->peer_conn;
	if (c->peer_conn == 0) /* not known yet: the REP says */
		return 1;
	/* A REJ_CM from a side that has no connection names none. */
	return m->src_conn == c->peer_conn ||
	       (m->type == DOFI_RDM_WIRE_REJ_CM && m->src_conn == 0);
}

dof_status_t dofi_rdm_wire_match(const dofi_rdm_wire_conn_t *c,
                                 const dofi_rdm_wire_msg_t *m,
                                 dofi_rdm_wire_err_t *why)
{
	dofi_rdm_wire_err_t e = DOFI_RDM_WIRE_E_NONE;

	if (c == NULL || m == NULL || m->type == DOFI_RDM_WIRE_HELLO) {
		if (why != NULL)
			*why = DOFI_RDM_WIRE_E_ARG;
		return DOF_ERR_INVALID_PARAM;
	}
	if (m->dst_conn != 0 && m->dst_conn != c->self_conn)
		e = DOFI_RDM_WIRE_E_NOT_OURS;
	else if (m->src_inc != c->peer_inc)
		e = DOFI_RDM_WIRE_E_STALE;
	else if (!wire_peer_conn_ok(c, m))
		e = DOFI_RDM_WIRE_E_PEER_CONN;
	if (e == DOFI_RDM_WIRE_E_NONE)
		return DOF_OK;
	dof_info(DOFI_LOG,
	         "RDM control: %s from connection %#" PRIx64
	         " of incarnation %#" PRIx64 " to %#" PRIx64
	         " dropped: connection %#" PRIx64 " is with %#" PRIx64
	         " of %#" PRIx64 ": %s",
	         dofi_rdm_wire_type_str(m->type), m->src_conn, m->src_inc,
	         m->dst_conn, c->self_conn, c->peer_conn, c->peer_inc,
	         dofi_rdm_wire_strerr(e));
	if (why != NULL)
		*why = e;
	return DOF_ERR_NOT_FOUND;
}
