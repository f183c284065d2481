/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * The RDM control channel's codec (prov/ofi/dofi_rdm_wire.c): the bytes
 * of every message as dapl-ofi-rdm-wire(7) lays them out, round trips at
 * the least and the most of every length, each refusal with its reason,
 * every prefix of a message, every length a header can claim, every
 * single-byte change, random bytes, and streams of messages split at
 * every byte. The decoder's verdicts are compared with an independent
 * reading of the format (spec_decode). A refusal or a partial message
 * leaves the outputs it must not set alone.
 */
#include "config.h"

#include <string.h>

#include "check_tests.h"
#include "dof/log.h"
#include "dofi_rdm_wire.h"

#define MAXMSG DOFI_RDM_WIRE_MSG_MAX

/*
 * Assertions for the hot loops: Check's ck_assert_* record every passing
 * one (a write each), which millions of checks cannot afford; these
 * speak only on failure.
 */
#define EQ(a, b)                                                          \
	do {                                                              \
		unsigned long long a_ = (a), b_ = (b);                    \
		if (a_ != b_)                                             \
			ck_abort_msg("%s:%d: %s == %#llx, %s == %#llx",   \
			             __FILE__, __LINE__, #a, a_, #b, b_); \
	} while (0)
#define TRUE(e)                                                            \
	do {                                                               \
		if (!(e))                                                  \
			ck_abort_msg("%s:%d: %s", __FILE__, __LINE__, #e); \
	} while (0)

/* ---- the format, read independently of the codec ------------------------- */

static unsigned be16(const unsigned char *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

static uint64_t be64(const unsigned char *p)
{
	return (uint64_t)be16(p) << 48 | (uint64_t)be16(p + 2) << 32 |
	       (uint64_t)be16(p + 4) << 16 | be16(p + 6);
}

static void set16(unsigned char *p, unsigned v)
{
	p[0] = (unsigned char)(v >> 8);
	p[1] = (unsigned char)v;
}

static void set64(unsigned char *p, uint64_t v)
{
	set16(p, (unsigned)(v >> 48));
	set16(p + 2, (unsigned)(v >> 32) & 0xffff);
	set16(p + 4, (unsigned)(v >> 16) & 0xffff);
	set16(p + 6, (unsigned)v & 0xffff);
}

/* Each type's layout as the man page gives it: the fixed part's length,
 * where the address and data lengths sit (0: the type has none), and
 * the flags it may carry. */
struct shape {
	size_t fixed, alen_at, plen_at;
	unsigned flags;
};

static const struct shape shapes[] = {
        [DOFI_RDM_WIRE_HELLO] = {18, 0, 0, 0},
        [DOFI_RDM_WIRE_REQ] = {54, 50, 52, 0},
        [DOFI_RDM_WIRE_REP] = {46, 42, 44, 0},
        [DOFI_RDM_WIRE_RTU] = {40, 0, 0, 0},
        [DOFI_RDM_WIRE_REJ_USER] = {42, 0, 40, 0},
        [DOFI_RDM_WIRE_REJ_CM] = {42, 0, 0, 0},
        [DOFI_RDM_WIRE_DREQ] = {48, 0, 0, 1},
        [DOFI_RDM_WIRE_DREP] = {48, 0, 0, 0},
};

enum { X_OK, X_BUSY, X_REFUSED };

struct verdict {
	int kind;
	size_t size;             /* X_OK, X_BUSY */
	dofi_rdm_wire_err_t why; /* X_REFUSED */
	dofi_rdm_wire_msg_t m;   /* X_OK */
};

static int refused(struct verdict *v, dofi_rdm_wire_err_t why)
{
	v->kind = X_REFUSED;
	v->why = why;
	return X_REFUSED;
}

/* What the decoder must make of b[0..len). */
static int spec_decode(const unsigned char *b, size_t len, struct verdict *v)
{
	const struct shape *s;
	size_t total, max, alen = 0, plen = 0, need;
	unsigned t;
	uint64_t src, dst;

	memset(v, 0, sizeof(*v));
	if ((len > 0 && b[0] != 0xda) || (len > 1 && b[1] != 0x52))
		return refused(v, DOFI_RDM_WIRE_E_MAGIC);
	if (len > 2 && b[2] != 1)
		return refused(v, DOFI_RDM_WIRE_E_VERSION);
	if (len > 3 && (b[3] < 1 || b[3] > 8))
		return refused(v, DOFI_RDM_WIRE_E_TYPE);
	if (len < 8) {
		v->kind = X_BUSY;
		v->size = 8;
		return X_BUSY;
	}
	t = b[3];
	s = &shapes[t];
	if (be16(b + 4) & ~s->flags)
		return refused(v, DOFI_RDM_WIRE_E_FLAGS);
	total = be16(b + 6);
	max = s->fixed + (s->alen_at ? 256 : 0) + (s->plen_at ? 256 : 0);
	if (total < s->fixed || total > max)
		return refused(v, DOFI_RDM_WIRE_E_LENGTH);
	if (len < total) {
		v->kind = X_BUSY;
		v->size = total;
		return X_BUSY;
	}
	if (s->alen_at) {
		alen = be16(b + s->alen_at);
		if (alen == 0 || alen > 256)
			return refused(v, DOFI_RDM_WIRE_E_ADDR_LEN);
	}
	if (s->plen_at) {
		plen = be16(b + s->plen_at);
		if (plen > 256)
			return refused(v, DOFI_RDM_WIRE_E_PDATA_LEN);
	}
	need = s->fixed + alen + plen;
	if (need > total)
		return refused(v, DOFI_RDM_WIRE_E_SHORT);
	if (need < total)
		return refused(v, DOFI_RDM_WIRE_E_TRAILING);
	src = be64(b + 8);
	if (src == 0 || (t != DOFI_RDM_WIRE_HELLO && be64(b + 16) == 0))
		return refused(v, DOFI_RDM_WIRE_E_INCARNATION);
	if (t != DOFI_RDM_WIRE_HELLO) {
		src = be64(b + 24);
		dst = be64(b + 32);
		if (t == DOFI_RDM_WIRE_REQ      ? src == 0 || dst != 0
		    : t == DOFI_RDM_WIRE_REJ_CM ? src == 0 && dst == 0
		                                : src == 0 || dst == 0)
			return refused(v, DOFI_RDM_WIRE_E_CONN_ID);
	}
	if (t == DOFI_RDM_WIRE_REJ_CM && (be16(b + 40) < 1 || be16(b + 40) > 5))
		return refused(v, DOFI_RDM_WIRE_E_REASON);
	if (t == DOFI_RDM_WIRE_HELLO && (b[16] == 0 || b[16] > b[17]))
		return refused(v, DOFI_RDM_WIRE_E_VERSIONS);

	v->kind = X_OK;
	v->size = total;
	v->m.type = (uint8_t)t;
	v->m.flags = (uint16_t)be16(b + 4);
	v->m.src_inc = be64(b + 8);
	if (t == DOFI_RDM_WIRE_HELLO) {
		v->m.ver_lo = b[16];
		v->m.ver_hi = b[17];
		return X_OK;
	}
	v->m.dst_inc = be64(b + 16);
	v->m.src_conn = be64(b + 24);
	v->m.dst_conn = be64(b + 32);
	v->m.addr_len = (uint16_t)alen;
	v->m.pdata_len = (uint16_t)plen;
	if (s->alen_at)
		v->m.addr = b + s->fixed;
	if (s->plen_at)
		v->m.pdata = b + s->fixed + alen;
	switch (t) {
	case DOFI_RDM_WIRE_REQ:
		v->m.conn_qual = be64(b + 40);
		v->m.rdma_in = b[48];
		v->m.rdma_out = b[49];
		break;
	case DOFI_RDM_WIRE_REP:
		v->m.rdma_in = b[40];
		v->m.rdma_out = b[41];
		break;
	case DOFI_RDM_WIRE_REJ_CM:
		v->m.reason = (uint16_t)be16(b + 40);
		break;
	case DOFI_RDM_WIRE_DREQ:
	case DOFI_RDM_WIRE_DREP:
		v->m.sent = be64(b + 40);
		break;
	}
	return X_OK;
}

/* ---- comparing the codec with the format --------------------------------- */

static void msg_eq(const dofi_rdm_wire_msg_t *a, const dofi_rdm_wire_msg_t *b)
{
	EQ(a->type, b->type);
	EQ(a->flags, b->flags);
	EQ(a->src_inc, b->src_inc);
	EQ(a->dst_inc, b->dst_inc);
	EQ(a->src_conn, b->src_conn);
	EQ(a->dst_conn, b->dst_conn);
	EQ(a->conn_qual, b->conn_qual);
	EQ(a->sent, b->sent);
	EQ(a->rdma_in, b->rdma_in);
	EQ(a->rdma_out, b->rdma_out);
	EQ(a->reason, b->reason);
	EQ(a->ver_lo, b->ver_lo);
	EQ(a->ver_hi, b->ver_hi);
	EQ(a->addr_len, b->addr_len);
	EQ(a->pdata_len, b->pdata_len);
}

static const unsigned char sentinel;

static void msg_preset(dofi_rdm_wire_msg_t *m)
{
	memset(m, 0xa5, sizeof(*m));
	m->addr = &sentinel;
	m->pdata = &sentinel;
}

static void msg_untouched(const dofi_rdm_wire_msg_t *m)
{
	dofi_rdm_wire_msg_t p;

	msg_preset(&p);
	TRUE(memcmp(m, &p, sizeof(p)) == 0);
}

/*
 * Decode b[0..len) and check the verdict against spec_decode, the
 * outputs that must stay as they were, and (accepted) that encoding
 * gives the same bytes back. Returns the verdict's kind.
 */
static int check_one(const unsigned char *b, size_t len)
{
	dofi_rdm_wire_err_t why = DOFI_RDM_WIRE_E_LAST;
	dofi_rdm_wire_msg_t m;
	struct verdict want;
	unsigned char out[MAXMSG + 8];
	size_t size = 0x5a5a, n = 0;
	dof_status_t st;

	spec_decode(b, len, &want);
	msg_preset(&m);
	st = dofi_rdm_wire_decode(b, len, &m, &size, &why);
	switch (want.kind) {
	case X_REFUSED:
		EQ(st, DOF_ERR_INVALID_PARAM);
		EQ(why, want.why);
		EQ(size, 0x5a5a);
		msg_untouched(&m);
		break;
	case X_BUSY:
		EQ(st, DOF_ERR_BUSY);
		EQ(size, want.size);
		TRUE(size > len);
		EQ(why, DOFI_RDM_WIRE_E_LAST);
		msg_untouched(&m);
		break;
	default:
		EQ(st, DOF_OK);
		EQ(size, want.size);
		EQ(why, DOFI_RDM_WIRE_E_LAST);
		msg_eq(&m, &want.m);
		TRUE(m.addr == want.m.addr);
		TRUE(m.pdata == want.m.pdata);
		EQ(dofi_rdm_wire_encode(out, sizeof(out), &m, &n, NULL),
		   DOF_OK);
		EQ(n, size);
		TRUE(memcmp(out, b, n) == 0);
		break;
	}
	return want.kind;
}

/* ---- messages to start from ---------------------------------------------- */

static unsigned char addr_bytes[DOFI_RDM_WIRE_ADDR_MAX];
static unsigned char pdata_bytes[DOFI_RDM_WIRE_PDATA_MAX];

static void bytes_fill(void)
{
	size_t i;

	for (i = 0; i < sizeof(addr_bytes); i++)
		addr_bytes[i] = (unsigned char)(i * 13 + 5);
	for (i = 0; i < sizeof(pdata_bytes); i++)
		pdata_bytes[i] = (unsigned char)(i * 7 + 3);
}

/* A valid message of type t; alen and plen where the type has them. */
static dofi_rdm_wire_msg_t msg_make(unsigned t, size_t alen, size_t plen)
{
	dofi_rdm_wire_msg_t m;

	memset(&m, 0, sizeof(m));
	m.type = (uint8_t)t;
	m.src_inc = UINT64_C(0x1122334455667788);
	if (t == DOFI_RDM_WIRE_HELLO) {
		m.ver_lo = 1;
		m.ver_hi = 1;
		return m;
	}
	m.dst_inc = UINT64_C(0x99aabbccddeeff01);
	m.src_conn = 0x101;
	m.dst_conn = t == DOFI_RDM_WIRE_REQ ? 0 : 0x202;
	switch (t) {
	case DOFI_RDM_WIRE_REQ:
		m.conn_qual = UINT64_C(0x0123456789abcdef);
		/* fall through */
	case DOFI_RDM_WIRE_REP:
		m.rdma_in = 4;
		m.rdma_out = 8;
		m.addr_len = (uint16_t)alen;
		m.addr = addr_bytes;
		/* fall through */
	case DOFI_RDM_WIRE_REJ_USER:
		m.pdata_len = (uint16_t)plen;
		m.pdata = pdata_bytes;
		break;
	case DOFI_RDM_WIRE_REJ_CM:
		m.reason = DOFI_RDM_WIRE_R_NO_LISTENER;
		break;
	case DOFI_RDM_WIRE_DREQ:
	case DOFI_RDM_WIRE_DREP:
		m.sent = 42;
		break;
	}
	return m;
}

static size_t msg_encode(const dofi_rdm_wire_msg_t *m, unsigned char *buf,
                         size_t room)
{
	size_t n = 0;

	EQ(dofi_rdm_wire_encode(buf, room, m, &n, NULL), DOF_OK);
	return n;
}

/* Warnings of refusals off while thousands are made on purpose. */
static void quiet(void)
{
	bytes_fill();
	dof_log_level = DOF_LOG_ERROR;
}

/* ---- the tests ----------------------------------------------------------- */

/* The bytes on the wire, as the man page lays them out. */
START_TEST(wire_bytes)
{
	static const unsigned char hello[] = {
	        0xda, 0x52, 1, 1, 0, 0, 0, 18, /* header */
	        1,    2,    3, 4, 5, 6, 7, 8,  /* incarnation */
	        1,    3};                      /* versions */
	static const unsigned char req[] = {
	        0xda, 0x52, 1,  2, 0, 0, 0,    57,   /* header */
	        0,    0,    0,  0, 0, 0, 0,    0x11, /* src_inc */
	        0,    0,    0,  0, 0, 0, 0,    0x22, /* dst_inc */
	        0,    0,    0,  0, 0, 0, 0,    0x33, /* src_conn */
	        0,    0,    0,  0, 0, 0, 0,    0,    /* dst_conn */
	        0,    0,    0,  0, 0, 0, 0x12, 0x34, /* conn_qual */
	        16,   8,    0,  2, 0, 1,             /* rd, lens */
	        'a',  'd',  'p'};                    /* addr, data */
	static const unsigned char dreq[] = {
	        0xda, 0x52, 1, 7, 0, 1, 0, 48,   /* header, ABRUPT */
	        0,    0,    0, 0, 0, 0, 0, 0x11, /* src_inc */
	        0,    0,    0, 0, 0, 0, 0, 0x22, /* dst_inc */
	        0,    0,    0, 0, 0, 0, 0, 0x33, /* src_conn */
	        0,    0,    0, 0, 0, 0, 0, 0x44, /* dst_conn */
	        0,    0,    0, 1, 0, 0, 0, 2};   /* sent */
	dofi_rdm_wire_msg_t m = {0};
	unsigned char buf[MAXMSG + 1];
	size_t n;

	bytes_fill();
	memset(buf, 0xee, sizeof(buf));
	m.type = DOFI_RDM_WIRE_HELLO;
	m.src_inc = UINT64_C(0x0102030405060708);
	m.ver_lo = 1;
	m.ver_hi = 3;
	n = msg_encode(&m, buf, sizeof(buf));
	ck_assert_uint_eq(n, sizeof(hello));
	ck_assert_mem_eq(buf, hello, n);
	ck_assert_uint_eq(buf[n], 0xee); /* nothing past it */

	memset(&m, 0, sizeof(m));
	m.type = DOFI_RDM_WIRE_REQ;
	m.src_inc = 0x11;
	m.dst_inc = 0x22;
	m.src_conn = 0x33;
	m.conn_qual = 0x1234;
	m.rdma_in = 16;
	m.rdma_out = 8;
	m.addr_len = 2;
	m.addr = (const unsigned char *)"ad";
	m.pdata_len = 1;
	m.pdata = (const unsigned char *)"p";
	n = msg_encode(&m, buf, sizeof(buf));
	ck_assert_uint_eq(n, sizeof(req));
	ck_assert_mem_eq(buf, req, n);
	check_one(req, sizeof(req));

	memset(&m, 0, sizeof(m));
	m.type = DOFI_RDM_WIRE_DREQ;
	m.flags = DOFI_RDM_WIRE_F_ABRUPT;
	m.src_inc = 0x11;
	m.dst_inc = 0x22;
	m.src_conn = 0x33;
	m.dst_conn = 0x44;
	m.sent = UINT64_C(0x100000002);
	n = msg_encode(&m, buf, sizeof(buf));
	ck_assert_uint_eq(n, sizeof(dreq));
	ck_assert_mem_eq(buf, dreq, n);

	/* The fixed sizes of the types without variable parts. */
	ck_assert_uint_eq(
	        msg_encode(&(dofi_rdm_wire_msg_t){.type = DOFI_RDM_WIRE_RTU,
	                                          .src_inc = 1,
	                                          .dst_inc = 1,
	                                          .src_conn = 1,
	                                          .dst_conn = 1},
	                   buf, sizeof(buf)),
	        40);
	ck_assert_uint_eq(DOFI_RDM_WIRE_MSG_MAX, 566);
	ck_assert_uint_ge(DOFI_RDM_WIRE_PDATA_MAX, 64);
}
END_TEST

/* Every type with its lengths at their least and most, and the numbers
 * at their extremes, encoded, decoded, and compared. */
START_TEST(wire_round_trip)
{
	static const size_t alens[] = {1, 2, 32, 255, DOFI_RDM_WIRE_ADDR_MAX};
	static const size_t plens[] = {0, 1, 64, 255, DOFI_RDM_WIRE_PDATA_MAX};
	static const uint64_t nums[] = {1, 0xff, UINT64_C(0x8000000000000000),
	                                UINT64_MAX};
	unsigned char buf[MAXMSG];
	unsigned t;
	size_t a, p, k, n, size;

	quiet();
	for (t = DOFI_RDM_WIRE_HELLO; t <= DOFI_RDM_WIRE_TYPE_MAX; t++)
		for (a = 0; a < 5; a++)
			for (p = 0; p < 5; p++)
				for (k = 0; k < 4; k++) {
					dofi_rdm_wire_msg_t m, d;

					m = msg_make(t, alens[a], plens[p]);
					m.src_inc = nums[k];
					if (t != DOFI_RDM_WIRE_HELLO) {
						m.dst_inc = nums[3 - k];
						m.src_conn = nums[k];
						if (t != DOFI_RDM_WIRE_REQ)
							m.dst_conn =
							        nums[3 - k];
					}
					m.conn_qual = nums[3 - k];
					m.sent = k == 0 ? 0 : nums[k];
					m.rdma_in = (uint8_t)(k * 85);
					m.rdma_out = (uint8_t)(255 - k * 85);
					if (t == DOFI_RDM_WIRE_REJ_CM)
						m.reason = (uint16_t)(1 + k);
					if (t == DOFI_RDM_WIRE_DREQ)
						m.flags = (uint16_t)(k & 1);
					if (t == DOFI_RDM_WIRE_HELLO) {
						m.ver_lo = (uint8_t)(1 + k);
						m.ver_hi =
						        (uint8_t)(k == 3 ? 255
						                         : 1 + 2 * k);
					}
					n = msg_encode(&m, buf, sizeof(buf));
					ck_assert_int_eq(check_one(buf, n),
					                 X_OK);
					ck_assert_int_eq(dofi_rdm_wire_decode(
					                         buf, n, &d,
					                         &size, NULL),
					                 DOF_OK);
					/* What was given, not only its bytes.
					 */
					if (shapes[t].alen_at == 0)
						m.addr_len = 0;
					if (shapes[t].plen_at == 0)
						m.pdata_len = 0;
					if (t != DOFI_RDM_WIRE_REQ)
						m.conn_qual = 0;
					if (t != DOFI_RDM_WIRE_DREQ &&
					    t != DOFI_RDM_WIRE_DREP)
						m.sent = 0;
					if (t != DOFI_RDM_WIRE_REQ &&
					    t != DOFI_RDM_WIRE_REP)
						m.rdma_in = m.rdma_out = 0;
					msg_eq(&d, &m);
					if (m.addr_len > 0)
						ck_assert_mem_eq(d.addr,
						                 addr_bytes,
						                 m.addr_len);
					if (m.pdata_len > 0)
						ck_assert_mem_eq(d.pdata,
						                 pdata_bytes,
						                 m.pdata_len);
				}
}
END_TEST

/*
 * buf[0..n), a valid message, changed at byte off to v (width 8, 16 or
 * 64 bits): decode must refuse it for why and leave its outputs alone,
 * and agree with spec_decode.
 */
static void refuse_bytes(unsigned char *buf, size_t n, size_t off, int width,
                         uint64_t v, dofi_rdm_wire_err_t why)
{
	dofi_rdm_wire_err_t got = DOFI_RDM_WIRE_E_LAST;
	dofi_rdm_wire_msg_t d;
	size_t size = 7;

	if (width == 8)
		buf[off] = (unsigned char)v;
	else if (width == 16)
		set16(buf + off, (unsigned)v);
	else
		set64(buf + off, v);
	msg_preset(&d);
	/* All of the buffer: the message's own length decides its end. */
	ck_assert_int_eq(dofi_rdm_wire_decode(buf, MAXMSG + 8, &d, &size, &got),
	                 DOF_ERR_INVALID_PARAM);
	ck_assert_msg(got == why, "type %u byte %zu = %#llx: why %d, not %d",
	              buf[3], off, (unsigned long long)v, got, why);
	ck_assert_uint_eq(size, 7);
	msg_untouched(&d);
	check_one(buf, MAXMSG + 8);
	check_one(buf, n > off ? n : off + 1);
}

/* The same, from msg_make(t, alen, plen). */
static void refuse_patched(unsigned t, size_t alen, size_t plen, size_t off,
                           int width, uint64_t v, dofi_rdm_wire_err_t why)
{
	dofi_rdm_wire_msg_t m = msg_make(t, alen, plen);
	unsigned char buf[MAXMSG + 8];
	size_t n;

	memset(buf, 0, sizeof(buf));
	n = msg_encode(&m, buf, sizeof(buf));
	refuse_bytes(buf, n, off, width, v, why);
}

/* Every reason the decoder has, each at least once and at its edges. */
START_TEST(wire_refusals)
{
	dofi_rdm_wire_msg_t m;
	unsigned char buf[MAXMSG + 8];
	size_t n;
	unsigned t;

	bytes_fill(); /* the log lines are wanted here: one per refusal */
	/* magic, version, type */
	refuse_patched(2, 4, 0, 0, 8, 0xdb, DOFI_RDM_WIRE_E_MAGIC);
	refuse_patched(2, 4, 0, 1, 8, 0x7f, DOFI_RDM_WIRE_E_MAGIC);
	refuse_patched(2, 4, 0, 2, 8, 0, DOFI_RDM_WIRE_E_VERSION);
	refuse_patched(2, 4, 0, 2, 8, 2, DOFI_RDM_WIRE_E_VERSION);
	refuse_patched(2, 4, 0, 2, 8, 255, DOFI_RDM_WIRE_E_VERSION);
	refuse_patched(2, 4, 0, 3, 8, 0, DOFI_RDM_WIRE_E_TYPE);
	refuse_patched(2, 4, 0, 3, 8, 9, DOFI_RDM_WIRE_E_TYPE);
	refuse_patched(2, 4, 0, 3, 8, 255, DOFI_RDM_WIRE_E_TYPE);
	/* flags: none but ABRUPT, and that only on DREQ */
	refuse_patched(DOFI_RDM_WIRE_REQ, 4, 0, 4, 16, 1,
	               DOFI_RDM_WIRE_E_FLAGS);
	refuse_patched(DOFI_RDM_WIRE_DREP, 0, 0, 4, 16, 1,
	               DOFI_RDM_WIRE_E_FLAGS);
	refuse_patched(DOFI_RDM_WIRE_DREQ, 0, 0, 4, 16, 2,
	               DOFI_RDM_WIRE_E_FLAGS);
	refuse_patched(DOFI_RDM_WIRE_HELLO, 0, 0, 4, 16, 0x8000,
	               DOFI_RDM_WIRE_E_FLAGS);
	/* the length, against each type's bounds */
	for (t = DOFI_RDM_WIRE_HELLO; t <= DOFI_RDM_WIRE_TYPE_MAX; t++) {
		size_t max = shapes[t].fixed + (shapes[t].alen_at ? 256 : 0) +
		             (shapes[t].plen_at ? 256 : 0);

		refuse_patched(t, 1, 0, 6, 16, 0, DOFI_RDM_WIRE_E_LENGTH);
		refuse_patched(t, 1, 0, 6, 16, 8, DOFI_RDM_WIRE_E_LENGTH);
		refuse_patched(t, 1, 0, 6, 16, shapes[t].fixed - 1,
		               DOFI_RDM_WIRE_E_LENGTH);
		refuse_patched(t, 1, 0, 6, 16, max + 1, DOFI_RDM_WIRE_E_LENGTH);
		refuse_patched(t, 1, 0, 6, 16, 0xffff, DOFI_RDM_WIRE_E_LENGTH);
	}
	/* the address: 0, or past the bound (the length in bounds) */
	refuse_patched(DOFI_RDM_WIRE_REQ, 4, 0, 50, 16, 0,
	               DOFI_RDM_WIRE_E_ADDR_LEN);
	refuse_patched(DOFI_RDM_WIRE_REQ, 256, 8, 50, 16, 257,
	               DOFI_RDM_WIRE_E_ADDR_LEN);
	refuse_patched(DOFI_RDM_WIRE_REP, 4, 0, 42, 16, 0,
	               DOFI_RDM_WIRE_E_ADDR_LEN);
	refuse_patched(DOFI_RDM_WIRE_REP, 4, 0, 42, 16, 0xffff,
	               DOFI_RDM_WIRE_E_ADDR_LEN);
	/* private data past the bound, by one and by far */
	refuse_patched(DOFI_RDM_WIRE_REQ, 8, 256, 52, 16, 257,
	               DOFI_RDM_WIRE_E_PDATA_LEN);
	refuse_patched(DOFI_RDM_WIRE_REP, 8, 256, 44, 16, 0xffff,
	               DOFI_RDM_WIRE_E_PDATA_LEN);
	refuse_patched(DOFI_RDM_WIRE_REJ_USER, 0, 256, 40, 16, 257,
	               DOFI_RDM_WIRE_E_PDATA_LEN);
	/* the body against the length: longer, or bytes left over */
	refuse_patched(DOFI_RDM_WIRE_REQ, 4, 4, 50, 16, 5,
	               DOFI_RDM_WIRE_E_SHORT);
	refuse_patched(DOFI_RDM_WIRE_REQ, 4, 4, 52, 16, 5,
	               DOFI_RDM_WIRE_E_SHORT);
	refuse_patched(DOFI_RDM_WIRE_REJ_USER, 0, 0, 40, 16, 1,
	               DOFI_RDM_WIRE_E_SHORT);
	refuse_patched(DOFI_RDM_WIRE_REQ, 4, 4, 50, 16, 3,
	               DOFI_RDM_WIRE_E_TRAILING);
	refuse_patched(DOFI_RDM_WIRE_REP, 4, 4, 44, 16, 0,
	               DOFI_RDM_WIRE_E_TRAILING);
	refuse_patched(DOFI_RDM_WIRE_REJ_USER, 0, 9, 40, 16, 8,
	               DOFI_RDM_WIRE_E_TRAILING);
	/* the length one more than the body, with a byte to show for it */
	refuse_patched(DOFI_RDM_WIRE_RTU, 0, 0, 6, 16, 41,
	               DOFI_RDM_WIRE_E_LENGTH);
	refuse_patched(DOFI_RDM_WIRE_REQ, 4, 4, 6, 16, 63,
	               DOFI_RDM_WIRE_E_TRAILING);
	/* incarnations */
	refuse_patched(DOFI_RDM_WIRE_HELLO, 0, 0, 8, 64, 0,
	               DOFI_RDM_WIRE_E_INCARNATION);
	refuse_patched(DOFI_RDM_WIRE_REQ, 4, 0, 8, 64, 0,
	               DOFI_RDM_WIRE_E_INCARNATION);
	refuse_patched(DOFI_RDM_WIRE_RTU, 0, 0, 16, 64, 0,
	               DOFI_RDM_WIRE_E_INCARNATION);
	/* connection ids */
	refuse_patched(DOFI_RDM_WIRE_REQ, 4, 0, 24, 64, 0,
	               DOFI_RDM_WIRE_E_CONN_ID);
	refuse_patched(DOFI_RDM_WIRE_REQ, 4, 0, 32, 64, 1,
	               DOFI_RDM_WIRE_E_CONN_ID);
	for (t = DOFI_RDM_WIRE_REP; t <= DOFI_RDM_WIRE_TYPE_MAX; t++) {
		if (t == DOFI_RDM_WIRE_REJ_CM)
			continue;
		refuse_patched(t, 4, 0, 24, 64, 0, DOFI_RDM_WIRE_E_CONN_ID);
		refuse_patched(t, 4, 0, 32, 64, 0, DOFI_RDM_WIRE_E_CONN_ID);
	}
	/* REJ_CM: either id alone is fine, not both 0 */
	m = msg_make(DOFI_RDM_WIRE_REJ_CM, 0, 0);
	m.src_conn = 0;
	n = msg_encode(&m, buf, sizeof(buf));
	ck_assert_int_eq(check_one(buf, n), X_OK);
	m.src_conn = 7;
	m.dst_conn = 0;
	n = msg_encode(&m, buf, sizeof(buf));
	ck_assert_int_eq(check_one(buf, n), X_OK);
	refuse_bytes(buf, n, 24, 64, 0, DOFI_RDM_WIRE_E_CONN_ID);
	/* REJ_CM reasons: 1..5 */
	for (t = 0; t <= 0xffff; t += t < 8 ? 1 : 0x1000 - 1) {
		m = msg_make(DOFI_RDM_WIRE_REJ_CM, 0, 0);
		m.reason = 1;
		n = msg_encode(&m, buf, sizeof(buf));
		set16(buf + 40, t);
		if (t >= 1 && t <= 5)
			ck_assert_int_eq(check_one(buf, n), X_OK);
		else
			refuse_bytes(buf, n, 40, 16, t, DOFI_RDM_WIRE_E_REASON);
	}
	/* HELLO versions: lowest 0, or above the highest */
	refuse_patched(DOFI_RDM_WIRE_HELLO, 0, 0, 16, 8, 0,
	               DOFI_RDM_WIRE_E_VERSIONS);
	refuse_patched(DOFI_RDM_WIRE_HELLO, 0, 0, 16, 8, 2,
	               DOFI_RDM_WIRE_E_VERSIONS);
	refuse_patched(DOFI_RDM_WIRE_HELLO, 0, 0, 17, 8, 0,
	               DOFI_RDM_WIRE_E_VERSIONS);
}
END_TEST

/* The decoder's own arguments. */
START_TEST(wire_decode_args)
{
	dofi_rdm_wire_msg_t m = msg_make(DOFI_RDM_WIRE_RTU, 0, 0), d;
	dofi_rdm_wire_err_t why = DOFI_RDM_WIRE_E_LAST;
	unsigned char buf[64];
	size_t n, size = 7;

	n = msg_encode(&m, buf, sizeof(buf));
	msg_preset(&d);
	ck_assert_int_eq(dofi_rdm_wire_decode(NULL, n, &d, &size, &why),
	                 DOF_ERR_INVALID_PARAM);
	ck_assert_int_eq(why, DOFI_RDM_WIRE_E_ARG);
	why = DOFI_RDM_WIRE_E_LAST;
	ck_assert_int_eq(dofi_rdm_wire_decode(buf, n, NULL, &size, &why),
	                 DOF_ERR_INVALID_PARAM);
	ck_assert_int_eq(why, DOFI_RDM_WIRE_E_ARG);
	ck_assert_int_eq(dofi_rdm_wire_decode(buf, n, &d, NULL, NULL),
	                 DOF_ERR_INVALID_PARAM);
	ck_assert_uint_eq(size, 7);
	msg_untouched(&d);
	/* Nothing in yet: a header is wanted, from any pointer. */
	ck_assert_int_eq(dofi_rdm_wire_decode(NULL, 0, &d, &size, NULL),
	                 DOF_ERR_BUSY);
	ck_assert_uint_eq(size, DOFI_RDM_WIRE_HDR_SIZE);
	msg_untouched(&d);
	/* why is optional, and left alone on success. */
	why = DOFI_RDM_WIRE_E_LAST;
	ck_assert_int_eq(dofi_rdm_wire_decode(buf, n, &d, &size, &why), DOF_OK);
	ck_assert_int_eq(why, DOFI_RDM_WIRE_E_LAST);
	ck_assert_uint_eq(size, n);
	ck_assert_int_eq(dofi_rdm_wire_decode(buf, n, &d, &size, NULL), DOF_OK);
	/* The bytes after a message are the next one's: not looked at. */
	memset(buf + n, 0xff, sizeof(buf) - n);
	ck_assert_int_eq(
	        dofi_rdm_wire_decode(buf, sizeof(buf), &d, &size, NULL),
	        DOF_OK);
	ck_assert_uint_eq(size, n);
}
END_TEST

/* Encode m into a buffer of room bytes: refused for why with status st,
 * nothing written, *len untouched. */
static void enc_refused(const dofi_rdm_wire_msg_t *m, size_t room,
                        dof_status_t st, dofi_rdm_wire_err_t why)
{
	unsigned char buf[MAXMSG + 8];
	dofi_rdm_wire_err_t got = DOFI_RDM_WIRE_E_LAST;
	size_t len = 7, i;

	memset(buf, 0xee, sizeof(buf));
	ck_assert_int_eq(dofi_rdm_wire_encode(buf, room, m, &len, &got), st);
	ck_assert_int_eq(got, why);
	ck_assert_uint_eq(len, 7);
	for (i = 0; i < sizeof(buf); i++)
		ck_assert_uint_eq(buf[i], 0xee);
}

/* Encode sends nothing the decoder would refuse, and writes nothing
 * when it refuses. */
START_TEST(wire_encode_refusals)
{
	const dof_status_t inv = DOF_ERR_INVALID_PARAM;
	dofi_rdm_wire_msg_t m, c;
	unsigned char buf[MAXMSG], clean[MAXMSG];
	size_t n, n2, len;
	unsigned t;

	bytes_fill();
	m = msg_make(DOFI_RDM_WIRE_REQ, 32, 64);
	n = msg_encode(&m, buf, sizeof(buf));
	/* room: one short, none, and just enough */
	enc_refused(&m, n - 1, DOF_ERR_OVERFLOW, DOFI_RDM_WIRE_E_ROOM);
	enc_refused(&m, 0, DOF_ERR_OVERFLOW, DOFI_RDM_WIRE_E_ROOM);
	ck_assert_int_eq(dofi_rdm_wire_encode(buf, n, &m, &len, NULL), DOF_OK);
	ck_assert_uint_eq(len, n);
	/* arguments */
	ck_assert_int_eq(dofi_rdm_wire_encode(NULL, n, &m, &len, NULL), inv);
	ck_assert_int_eq(dofi_rdm_wire_encode(buf, n, NULL, &len, NULL), inv);
	ck_assert_int_eq(dofi_rdm_wire_encode(buf, n, &m, NULL, NULL), inv);
	c = m;
	c.addr = NULL;
	enc_refused(&c, MAXMSG, inv, DOFI_RDM_WIRE_E_ARG);
	c = m;
	c.pdata = NULL;
	enc_refused(&c, MAXMSG, inv, DOFI_RDM_WIRE_E_ARG);
	c.pdata_len = 0; /* no data: no pointer needed */
	ck_assert_int_eq(dofi_rdm_wire_encode(buf, MAXMSG, &c, &len, NULL),
	                 DOF_OK);
	/* each field the decoder checks */
	for (t = 0; t < 256; t += t < 10 ? 1 : 245) {
		c = m;
		c.type = (uint8_t)t;
		if (t < 1 || t > 8)
			enc_refused(&c, MAXMSG, inv, DOFI_RDM_WIRE_E_TYPE);
	}
	c = m;
	c.flags = DOFI_RDM_WIRE_F_ABRUPT;
	enc_refused(&c, MAXMSG, inv, DOFI_RDM_WIRE_E_FLAGS);
	c = msg_make(DOFI_RDM_WIRE_DREQ, 0, 0);
	c.flags = 2;
	enc_refused(&c, MAXMSG, inv, DOFI_RDM_WIRE_E_FLAGS);
	c = m;
	c.addr_len = 0;
	enc_refused(&c, MAXMSG, inv, DOFI_RDM_WIRE_E_ADDR_LEN);
	c.addr_len = DOFI_RDM_WIRE_ADDR_MAX + 1;
	enc_refused(&c, MAXMSG, inv, DOFI_RDM_WIRE_E_ADDR_LEN);
	c = m;
	c.pdata_len = DOFI_RDM_WIRE_PDATA_MAX + 1;
	enc_refused(&c, MAXMSG, inv, DOFI_RDM_WIRE_E_PDATA_LEN);
	c = msg_make(DOFI_RDM_WIRE_REJ_USER, 0, 0);
	c.pdata_len = UINT16_MAX;
	enc_refused(&c, MAXMSG, inv, DOFI_RDM_WIRE_E_PDATA_LEN);
	c = m;
	c.src_inc = 0;
	enc_refused(&c, MAXMSG, inv, DOFI_RDM_WIRE_E_INCARNATION);
	c = m;
	c.dst_inc = 0;
	enc_refused(&c, MAXMSG, inv, DOFI_RDM_WIRE_E_INCARNATION);
	c = m;
	c.dst_conn = 1;
	enc_refused(&c, MAXMSG, inv, DOFI_RDM_WIRE_E_CONN_ID);
	c = m;
	c.src_conn = 0;
	enc_refused(&c, MAXMSG, inv, DOFI_RDM_WIRE_E_CONN_ID);
	c = msg_make(DOFI_RDM_WIRE_RTU, 0, 0);
	c.dst_conn = 0;
	enc_refused(&c, MAXMSG, inv, DOFI_RDM_WIRE_E_CONN_ID);
	c = msg_make(DOFI_RDM_WIRE_REJ_CM, 0, 0);
	c.src_conn = c.dst_conn = 0;
	enc_refused(&c, MAXMSG, inv, DOFI_RDM_WIRE_E_CONN_ID);
	c = msg_make(DOFI_RDM_WIRE_REJ_CM, 0, 0);
	c.reason = 0;
	enc_refused(&c, MAXMSG, inv, DOFI_RDM_WIRE_E_REASON);
	c.reason = DOFI_RDM_WIRE_R_MAX + 1;
	enc_refused(&c, MAXMSG, inv, DOFI_RDM_WIRE_E_REASON);
	c = msg_make(DOFI_RDM_WIRE_HELLO, 0, 0);
	c.ver_lo = 0;
	enc_refused(&c, MAXMSG, inv, DOFI_RDM_WIRE_E_VERSIONS);
	c.ver_lo = 3;
	c.ver_hi = 2;
	enc_refused(&c, MAXMSG, inv, DOFI_RDM_WIRE_E_VERSIONS);
	/* Fields a type does not carry are not looked at, nor sent. */
	c = msg_make(DOFI_RDM_WIRE_RTU, 0, 0);
	n = msg_encode(&c, clean, sizeof(clean));
	c.conn_qual = c.sent = 99;
	c.addr_len = c.pdata_len = 9999;
	c.addr = c.pdata = NULL;
	c.reason = 999;
	c.rdma_in = c.ver_lo = 200;
	n2 = msg_encode(&c, buf, sizeof(buf));
	ck_assert_uint_eq(n2, n);
	ck_assert_mem_eq(buf, clean, n);
	c = msg_make(DOFI_RDM_WIRE_HELLO, 0, 0);
	n = msg_encode(&c, clean, sizeof(clean));
	c.dst_inc = c.src_conn = c.dst_conn = 0; /* HELLO has none */
	c.dst_inc = 5;
	n2 = msg_encode(&c, buf, sizeof(buf));
	ck_assert_uint_eq(n2, n);
	ck_assert_mem_eq(buf, clean, n);
}
END_TEST

/* Messages of each type at their least and most. */
static size_t sample(unsigned i, unsigned char *buf, size_t room)
{
	unsigned t = 1 + i % DOFI_RDM_WIRE_TYPE_MAX;
	int big = (i / DOFI_RDM_WIRE_TYPE_MAX) & 1;
	dofi_rdm_wire_msg_t m = msg_make(t, big ? DOFI_RDM_WIRE_ADDR_MAX : 1,
	                                 big ? DOFI_RDM_WIRE_PDATA_MAX : 0);

	return msg_encode(&m, buf, room);
}
#define NSAMPLES (2 * DOFI_RDM_WIRE_TYPE_MAX)

/* Every prefix of every sample, each in a buffer of its own length. */
START_TEST(wire_truncated)
{
	unsigned char whole[MAXMSG];
	unsigned i;
	size_t n, k;

	quiet();
	for (i = 0; i < NSAMPLES; i++) {
		n = sample(i, whole, sizeof(whole));
		for (k = 0; k <= n; k++) {
			unsigned char *b = malloc(k > 0 ? k : 1);
			dofi_rdm_wire_msg_t d;
			size_t size = 0;

			ck_assert_ptr_nonnull(b);
			memcpy(b, whole, k);
			EQ(check_one(b, k), k < n ? X_BUSY : X_OK);
			EQ(dofi_rdm_wire_decode(b, k, &d, &size, NULL),
			   k < n ? DOF_ERR_BUSY : DOF_OK);
			EQ(size, k < 8 ? 8 : n);
			free(b);
		}
	}
}
END_TEST

/* Every length a header can claim, for every type, with only the header
 * in: refused at once when out of the type's bounds, else wait. */
START_TEST(wire_lengths)
{
	unsigned char h[8] = {0xda, 0x52, 1, 0, 0, 0, 0, 0};
	unsigned t, v, waits;

	quiet();
	for (t = DOFI_RDM_WIRE_HELLO; t <= DOFI_RDM_WIRE_TYPE_MAX; t++) {
		size_t max = shapes[t].fixed + (shapes[t].alen_at ? 256 : 0) +
		             (shapes[t].plen_at ? 256 : 0);

		h[3] = (unsigned char)t;
		waits = 0;
		for (v = 0; v <= 0xffff; v++) {
			set16(h + 6, v);
			if (check_one(h, sizeof(h)) == X_BUSY)
				waits++;
		}
		EQ(waits, max - shapes[t].fixed + 1);
		TRUE(max <= DOFI_RDM_WIRE_MSG_MAX);
	}
}
END_TEST

/* Each byte of each sample set to each value. */
START_TEST(wire_every_byte)
{
	unsigned char orig[MAXMSG], b[MAXMSG];
	unsigned i, v, kinds[3] = {0, 0, 0};
	size_t n, pos;

	quiet();
	for (i = 0; i < NSAMPLES; i++) {
		n = sample(i, orig, sizeof(orig));
		for (pos = 0; pos < n; pos++)
			for (v = 0; v < 256; v++) {
				memcpy(b, orig, n);
				b[pos] = (unsigned char)v;
				kinds[check_one(b, n)]++;
			}
	}
	/* All three verdicts came up, many times. */
	ck_assert_uint_gt(kinds[X_OK], 100000);
	ck_assert_uint_gt(kinds[X_BUSY], 300); /* a longer length */
	ck_assert_uint_gt(kinds[X_REFUSED], 10000);
}
END_TEST

/* Random bytes; and valid messages with a few random bytes changed. */
START_TEST(wire_random_garbage)
{
	unsigned char b[MAXMSG + 16];
	uint64_t rs = 0x5eed0fd0f1;
	unsigned i, kinds[3] = {0, 0, 0};

	quiet();
	for (i = 0; i < 200000; i++) {
		size_t len, j, k;

		if (i & 1) {
			len = check_rand_below(&rs, sizeof(b) + 1);
			for (j = 0; j < len; j++)
				b[j] = (unsigned char)check_rand(&rs);
			/* often behind a good magic, version and type */
			if (len >= 4 && (i & 2)) {
				b[0] = 0xda;
				b[1] = 0x52;
				b[2] = 1;
				b[3] = (unsigned char)(1 + i % 8);
			}
		} else {
			dofi_rdm_wire_msg_t m =
			        msg_make(1 + check_rand_below(&rs, 8),
			                 1 + check_rand_below(&rs, 256),
			                 check_rand_below(&rs, 257));

			len = msg_encode(&m, b, sizeof(b));
			k = check_rand_below(&rs, 4);
			for (j = 0; j < k; j++)
				b[check_rand_below(&rs, (uint32_t)len)] =
				        (unsigned char)check_rand(&rs);
			/* sometimes cut, sometimes with bytes after */
			if (check_rand_below(&rs, 4) == 0)
				len = check_rand_below(&rs, (uint32_t)len + 1);
			else if (check_rand_below(&rs, 4) == 0)
				len += check_rand_below(&rs, 17);
		}
		kinds[check_one(b, len)]++;
	}
	ck_assert_uint_gt(kinds[X_OK], 20000);
	ck_assert_uint_gt(kinds[X_BUSY], 1000);
	ck_assert_uint_gt(kinds[X_REFUSED], 50000);
}
END_TEST

/* ---- streams ------------------------------------------------------------- */

/* A stream: every sample, one after another; offs[i] where each starts. */
static size_t stream_make(unsigned char *s, size_t room, size_t *offs)
{
	size_t n = 0;
	unsigned i;

	for (i = 0; i < NSAMPLES; i++) {
		offs[i] = n;
		n += sample(i, s + n, room - n);
	}
	offs[NSAMPLES] = n;
	return n;
}

/*
 * A reader as the backend will have one: a buffer of MSG_MAX bytes,
 * filled from the socket with at most what it has room for, and emptied
 * of each whole message as it comes.
 */
struct reader {
	unsigned char buf[MAXMSG];
	size_t have;
	unsigned got; /* messages decoded */
	int refused;
	const unsigned char *want; /* the stream sent */
	const size_t *offs;
};

/* The socket delivers src[0..n): read it all, as room allows. */
static void reader_feed(struct reader *r, const unsigned char *src, size_t n)
{
	while (n > 0 && !r->refused) {
		size_t take = sizeof(r->buf) - r->have;

		TRUE(take > 0); /* a whole message always fits */
		if (take > n)
			take = n;
		memcpy(r->buf + r->have, src, take);
		r->have += take;
		src += take;
		n -= take;
		for (;;) {
			dofi_rdm_wire_msg_t m;
			unsigned char again[MAXMSG];
			size_t size = 0, len = 0;
			dof_status_t st;

			st = dofi_rdm_wire_decode(r->buf, r->have, &m, &size,
			                          NULL);
			if (st == DOF_ERR_BUSY) {
				TRUE(size > r->have);
				TRUE(size <= MAXMSG);
				break;
			}
			if (st != DOF_OK) {
				r->refused = 1;
				break;
			}
			/* The message sent, byte for byte. */
			EQ(size, r->offs[r->got + 1] - r->offs[r->got]);
			EQ(dofi_rdm_wire_encode(again, sizeof(again), &m, &len,
			                        NULL),
			   DOF_OK);
			TRUE(memcmp(again, r->want + r->offs[r->got], len) ==
			     0);
			r->got++;
			memmove(r->buf, r->buf + size, r->have - size);
			r->have -= size;
		}
	}
}

static void reader_init(struct reader *r, const unsigned char *want,
                        const size_t *offs)
{
	memset(r, 0, sizeof(*r));
	r->want = want;
	r->offs = offs;
}

/* Several messages back to back: in one piece, split in two at every
 * byte, a byte at a time, and in random pieces. */
START_TEST(wire_stream)
{
	static unsigned char s[NSAMPLES * MAXMSG];
	size_t offs[NSAMPLES + 1], n, at, off = 0, size;
	uint64_t rs = 0xfeed;
	struct reader r;
	dofi_rdm_wire_msg_t m;
	unsigned i;

	quiet();
	n = stream_make(s, sizeof(s), offs);
	/* In place, message after message. */
	for (i = 0; i < NSAMPLES; i++) {
		ck_assert_int_eq(
		        dofi_rdm_wire_decode(s + off, n - off, &m, &size, NULL),
		        DOF_OK);
		ck_assert_uint_eq(off, offs[i]);
		off += size;
	}
	ck_assert_uint_eq(off, n);
	for (at = 0; at <= n; at++) {
		reader_init(&r, s, offs);
		reader_feed(&r, s, at);
		/* every message wholly before the split, and no other */
		for (i = 0; i < NSAMPLES && offs[i + 1] <= at; i++)
			;
		ck_assert_uint_eq(r.got, i);
		reader_feed(&r, s + at, n - at);
		ck_assert_int_eq(r.refused, 0);
		ck_assert_uint_eq(r.got, NSAMPLES);
		ck_assert_uint_eq(r.have, 0);
	}
	reader_init(&r, s, offs);
	for (at = 0; at < n; at++)
		reader_feed(&r, s + at, 1);
	ck_assert_uint_eq(r.got, NSAMPLES);
	for (i = 0; i < 1000; i++) {
		reader_init(&r, s, offs);
		for (at = 0; at < n;) {
			size_t k = 1 + check_rand_below(&rs, 2 * MAXMSG);

			if (k > n - at)
				k = n - at;
			reader_feed(&r, s + at, k);
			at += k;
		}
		ck_assert_uint_eq(r.got, NSAMPLES);
		ck_assert_uint_eq(r.have, 0);
	}
}
END_TEST

/* A bad byte at the start of message k: the k before it are read, then
 * the stream is refused, however it arrives. */
START_TEST(wire_stream_garbage)
{
	static unsigned char s[NSAMPLES * MAXMSG];
	size_t offs[NSAMPLES + 1], n, at;
	struct reader r;
	unsigned k;

	quiet();
	n = stream_make(s, sizeof(s), offs);
	for (k = 0; k < NSAMPLES; k++) {
		unsigned char keep = s[offs[k]];

		s[offs[k]] = 0x00;
		for (at = 0; at <= n; at += 7) {
			reader_init(&r, s, offs);
			reader_feed(&r, s, at);
			reader_feed(&r, s + at, n - at);
			ck_assert_int_eq(r.refused, 1);
			ck_assert_uint_eq(r.got, k);
		}
		s[offs[k]] = keep;
	}
}
END_TEST

/* ---- versions, channels, connections ------------------------------------- */

START_TEST(wire_versions)
{
	dofi_rdm_wire_msg_t h = msg_make(DOFI_RDM_WIRE_HELLO, 0, 0);
	dofi_rdm_wire_err_t why = DOFI_RDM_WIRE_E_LAST;
	uint8_t ver = 77;

	ck_assert_int_eq(dofi_rdm_wire_version(&h, &ver, &why), DOF_OK);
	ck_assert_uint_eq(ver, 1);
	ck_assert_int_eq(why, DOFI_RDM_WIRE_E_LAST);
	h.ver_hi = 9; /* a later peer that still speaks 1 */
	ver = 77;
	ck_assert_int_eq(dofi_rdm_wire_version(&h, &ver, NULL), DOF_OK);
	ck_assert_uint_eq(ver, 1);
	h.ver_lo = 2; /* one that no longer does */
	ver = 77;
	ck_assert_int_eq(dofi_rdm_wire_version(&h, &ver, &why),
	                 DOF_ERR_UNSUPPORTED);
	ck_assert_int_eq(why, DOFI_RDM_WIRE_E_NO_COMMON);
	ck_assert_uint_eq(ver, 77);
	h.ver_lo = h.ver_hi = 0;
	ck_assert_int_eq(dofi_rdm_wire_version(&h, &ver, NULL),
	                 DOF_ERR_UNSUPPORTED);
	h = msg_make(DOFI_RDM_WIRE_REQ, 4, 0);
	why = DOFI_RDM_WIRE_E_LAST;
	ck_assert_int_eq(dofi_rdm_wire_version(&h, &ver, &why),
	                 DOF_ERR_INVALID_PARAM);
	ck_assert_int_eq(why, DOFI_RDM_WIRE_E_ARG);
	ck_assert_int_eq(dofi_rdm_wire_version(NULL, &ver, NULL),
	                 DOF_ERR_INVALID_PARAM);
	ck_assert_uint_eq(ver, 77);
}
END_TEST

static void admit_is(const dofi_rdm_wire_msg_t *m, uint64_t self, uint64_t chan,
                     dofi_rdm_wire_err_t want)
{
	dofi_rdm_wire_err_t why = DOFI_RDM_WIRE_E_LAST;

	ck_assert_int_eq(dofi_rdm_wire_admit(m, self, chan, &why),
	                 want == DOFI_RDM_WIRE_E_NONE ? DOF_OK
	                                              : DOF_ERR_INVALID_PARAM);
	ck_assert_int_eq(why, want == DOFI_RDM_WIRE_E_NONE
	                              ? DOFI_RDM_WIRE_E_LAST
	                              : want);
}

START_TEST(wire_admit)
{
	const uint64_t peer = UINT64_C(0x1122334455667788);
	const uint64_t self = UINT64_C(0x99aabbccddeeff01);
	dofi_rdm_wire_msg_t h = msg_make(DOFI_RDM_WIRE_HELLO, 0, 0);
	unsigned t;

	bytes_fill();
	admit_is(&h, self, 0, DOFI_RDM_WIRE_E_NONE);
	admit_is(&h, self, peer, DOFI_RDM_WIRE_E_HELLO_AGAIN);
	admit_is(&h, peer, 0, DOFI_RDM_WIRE_E_NONE); /* our own IA's */
	for (t = DOFI_RDM_WIRE_REQ; t <= DOFI_RDM_WIRE_TYPE_MAX; t++) {
		dofi_rdm_wire_msg_t m = msg_make(t, 4, 0);

		admit_is(&m, self, peer, DOFI_RDM_WIRE_E_NONE);
		admit_is(&m, self, 0, DOFI_RDM_WIRE_E_NO_HELLO);
		/* another incarnation than the channel's: an older one's
		 * REQ, or a restarted peer's on the old channel */
		admit_is(&m, self, peer + 1, DOFI_RDM_WIRE_E_SENDER);
		/* for an earlier IA of ours */
		admit_is(&m, self + 1, peer, DOFI_RDM_WIRE_E_NOT_OURS);
	}
	admit_is(NULL, self, peer, DOFI_RDM_WIRE_E_ARG);
}
END_TEST

static void match_is(const dofi_rdm_wire_conn_t *c,
                     const dofi_rdm_wire_msg_t *m, dofi_rdm_wire_err_t want)
{
	dofi_rdm_wire_err_t why = DOFI_RDM_WIRE_E_LAST;
	dof_status_t st = dofi_rdm_wire_match(c, m, &why);

	ck_assert_int_eq(st, want == DOFI_RDM_WIRE_E_NONE ? DOF_OK
	                     : want == DOFI_RDM_WIRE_E_ARG
	                             ? DOF_ERR_INVALID_PARAM
	                             : DOF_ERR_NOT_FOUND);
	ck_assert_int_eq(why, want == DOFI_RDM_WIRE_E_NONE
	                              ? DOFI_RDM_WIRE_E_LAST
	                              : want);
}

START_TEST(wire_match)
{
	/* msg_make's messages come from connection 0x101 of incarnation
	 * 0x1122..., to our connection 0x202. */
	const dofi_rdm_wire_conn_t up = {.self_conn = 0x202,
	                                 .peer_inc =
	                                         UINT64_C(0x1122334455667788),
	                                 .peer_conn = 0x101};
	dofi_rdm_wire_conn_t c;
	dofi_rdm_wire_msg_t m;
	unsigned t;

	bytes_fill();
	for (t = DOFI_RDM_WIRE_REP; t <= DOFI_RDM_WIRE_TYPE_MAX; t++) {
		m = msg_make(t, 4, 0);
		match_is(&up, &m, DOFI_RDM_WIRE_E_NONE);
		m.dst_conn = 0x203; /* another of ours */
		match_is(&up, &m, DOFI_RDM_WIRE_E_NOT_OURS);
		m = msg_make(t, 4, 0);
		m.src_inc++; /* the peer restarted: an older or a newer one */
		match_is(&up, &m, DOFI_RDM_WIRE_E_STALE);
		m = msg_make(t, 4, 0);
		m.src_conn = 0x102; /* another connection of that peer */
		match_is(&up, &m, DOFI_RDM_WIRE_E_PEER_CONN);
	}
	/* The active side before the REP: the peer's id is still to come. */
	c = up;
	c.peer_conn = 0;
	m = msg_make(DOFI_RDM_WIRE_REP, 4, 0);
	m.src_conn = 0x999;
	match_is(&c, &m, DOFI_RDM_WIRE_E_NONE);
	m.src_inc = 1;
	match_is(&c, &m, DOFI_RDM_WIRE_E_STALE);
	/* A REJ_CM from a side that has no connection... */
	m = msg_make(DOFI_RDM_WIRE_REJ_CM, 0, 0);
	m.src_conn = 0;
	match_is(&up, &m, DOFI_RDM_WIRE_E_NONE);
	/* ...or naming ours by the sender's ids alone (its REQ's). */
	m = msg_make(DOFI_RDM_WIRE_REJ_CM, 0, 0);
	m.dst_conn = 0;
	match_is(&up, &m, DOFI_RDM_WIRE_E_NONE);
	m.src_conn = 0x102;
	match_is(&up, &m, DOFI_RDM_WIRE_E_PEER_CONN);
	m.src_conn = 0x101;
	match_is(&c, &m, DOFI_RDM_WIRE_E_PEER_CONN); /* ids not known */
	/* Only a REJ_CM may come from no connection (not one decoded). */
	m = msg_make(DOFI_RDM_WIRE_DREQ, 0, 0);
	m.src_conn = 0;
	match_is(&up, &m, DOFI_RDM_WIRE_E_PEER_CONN);
	/* A REQ that repeats one held: the same sender ids. */
	m = msg_make(DOFI_RDM_WIRE_REQ, 4, 0);
	match_is(&up, &m, DOFI_RDM_WIRE_E_NONE);
	m.src_conn = 0x102;
	match_is(&up, &m, DOFI_RDM_WIRE_E_PEER_CONN);
	/* Not a connection's message; no arguments. */
	m = msg_make(DOFI_RDM_WIRE_HELLO, 0, 0);
	match_is(&up, &m, DOFI_RDM_WIRE_E_ARG);
	match_is(NULL, &m, DOFI_RDM_WIRE_E_ARG);
	match_is(&up, NULL, DOFI_RDM_WIRE_E_ARG);
}
END_TEST

START_TEST(wire_names)
{
	unsigned i;

	for (i = 0; i < DOFI_RDM_WIRE_E_LAST; i++)
		ck_assert_str_ne(dofi_rdm_wire_strerr(i), "?");
	ck_assert_str_eq(dofi_rdm_wire_strerr(DOFI_RDM_WIRE_E_LAST), "?");
	ck_assert_str_eq(dofi_rdm_wire_type_str(0), "?");
	ck_assert_str_eq(dofi_rdm_wire_type_str(DOFI_RDM_WIRE_REQ), "REQ");
	ck_assert_str_eq(dofi_rdm_wire_type_str(DOFI_RDM_WIRE_DREP), "DREP");
	ck_assert_str_eq(dofi_rdm_wire_type_str(9), "?");
}
END_TEST

Suite *check_prov_rdm_wire_suite(void)
{
	Suite *s = suite_create("prov rdm wire");
	TCase *tc = tcase_create("dofi_rdm_wire");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, wire_bytes);
	tcase_add_test(tc, wire_round_trip);
	tcase_add_test(tc, wire_refusals);
	tcase_add_test(tc, wire_decode_args);
	tcase_add_test(tc, wire_encode_refusals);
	tcase_add_test(tc, wire_truncated);
	tcase_add_test(tc, wire_lengths);
	tcase_add_test(tc, wire_every_byte);
	tcase_add_test(tc, wire_random_garbage);
	tcase_add_test(tc, wire_stream);
	tcase_add_test(tc, wire_stream_garbage);
	tcase_add_test(tc, wire_versions);
	tcase_add_test(tc, wire_admit);
	tcase_add_test(tc, wire_match);
	tcase_add_test(tc, wire_names);
	suite_add_tcase(s, tc);
	return s;
}
