/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * libFuzzer target: the RDM control channel's codec
 * (prov/ofi/dofi_rdm_wire.c). The first input byte picks how the rest is
 * read:
 *   even: as a peer's byte stream. Messages are decoded one after another
 *     until one is refused or the bytes run out. A refusal or a partial
 *     message must leave the outputs it must not set alone; an accepted
 *     message must hold what the format allows (by an independent reading
 *     of it), encode back to the same bytes in exactly its room and no
 *     less, and be "need more" at every shorter length. The channel and
 *     connection checks run on every accepted message.
 *   odd: as the fields of a message, any values, written out both by the
 *     encoder and by an independent writer here; the encoder must take
 *     exactly what the decoder takes, and produce the same bytes.
 * Log lines are formatted, at every level, and dropped. Build and run:
 * fuzz/run.sh rdm_wire.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dof/log.h"
#include "dofi_rdm_wire.h"

/* common/log.c's two symbols: everything formatted, nothing written. */
dof_log_level_t dof_log_level = DOF_LOG_TRACE;

void dof_log_printf(dof_log_level_t level, const char *component,
                    const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	(void)level;
	(void)component;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
}

static unsigned be16(const uint8_t *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

/* Whether m, decoded from b[0..size), is what the format allows. */
static int sane(const dofi_rdm_wire_msg_t *m, const uint8_t *b, size_t size)
{
	static const size_t fixed[] = {0, 18, 54, 46, 40, 42, 42, 48, 48};
	unsigned t = m->type;
	int addr = t == 2 || t == 3, data = addr || t == 5;

	if (t < 1 || t > 8 || b[0] != 0xda || b[1] != 0x52 || b[2] != 1 ||
	    b[3] != t || be16(b + 4) != m->flags || be16(b + 6) != size)
		return 0;
	if (m->flags != 0 && !(t == 7 && m->flags == 1))
		return 0;
	if (size != fixed[t] + m->addr_len + m->pdata_len)
		return 0;
	if (m->src_inc == 0 || (t == 1) != (m->dst_inc == 0))
		return 0;
	if (t == 1 ? m->src_conn != 0 || m->dst_conn != 0 || m->ver_lo == 0 ||
	                     m->ver_lo > m->ver_hi
	           : m->ver_lo != 0 || m->ver_hi != 0)
		return 0;
	if (t == 2   ? m->src_conn == 0 || m->dst_conn != 0
	    : t == 6 ? m->src_conn == 0 && m->dst_conn == 0
	             : t != 1 && (m->src_conn == 0 || m->dst_conn == 0))
		return 0;
	if (addr ? m->addr_len < 1 || m->addr_len > 256 ||
	                    m->addr != b + fixed[t]
	         : m->addr_len != 0 || m->addr != NULL)
		return 0;
	if (data ? m->pdata_len > 256 || m->pdata != b + fixed[t] + m->addr_len
	         : m->pdata_len != 0 || m->pdata != NULL)
		return 0;
	if ((t == 6) != (m->reason != 0) || m->reason > 5)
		return 0;
	if ((t != 2 && m->conn_qual != 0) ||
	    (t != 7 && t != 8 && m->sent != 0) ||
	    (!addr && (m->rdma_in != 0 || m->rdma_out != 0)))
		return 0;
	return 1;
}

static const unsigned char mark;

static void preset(dofi_rdm_wire_msg_t *m)
{
	memset(m, 0xa5, sizeof(*m));
	m->addr = &mark;
	m->pdata = &mark;
}

static int untouched(const dofi_rdm_wire_msg_t *m)
{
	dofi_rdm_wire_msg_t p;

	preset(&p);
	return memcmp(m, &p, sizeof(p)) == 0;
}

/* Every shorter length of the accepted message at b must ask for more. */
static void prefixes(const uint8_t *b, size_t size)
{
	dofi_rdm_wire_msg_t m;
	size_t k, need;

	for (k = 0; k < size; k++) {
		if (k > 8 && k < size - 1)
			k = size - 1; /* the header's and the last */
		preset(&m);
		need = 0;
		if (dofi_rdm_wire_decode(b, k, &m, &need, NULL) !=
		            DOF_ERR_BUSY ||
		    need != (k < 8 ? 8 : size) || !untouched(&m))
			abort();
	}
}

/* The round trip: exactly its room, and one byte less refused. */
static void round_trip(const dofi_rdm_wire_msg_t *m, const uint8_t *b,
                       size_t size)
{
	dofi_rdm_wire_err_t why = DOFI_RDM_WIRE_E_LAST;
	unsigned char *out = malloc(size);
	size_t n = 12345;

	if (out == NULL)
		return;
	if (dofi_rdm_wire_encode(out, size - 1, m, &n, &why) !=
	            DOF_ERR_OVERFLOW ||
	    why != DOFI_RDM_WIRE_E_ROOM || n != 12345)
		abort();
	if (dofi_rdm_wire_encode(out, size, m, &n, NULL) != DOF_OK ||
	    n != size || memcmp(out, b, size) != 0)
		abort();
	free(out);
}

/* The input as a stream of messages. */
static void stream(const uint8_t *data, size_t size)
{
	/* What the channel and a connection have learnt so far. */
	const uint64_t self = UINT64_C(0x99aabbccddeeff01);
	dofi_rdm_wire_conn_t conn = {0x202, UINT64_C(0x1122334455667788),
	                             0x101};
	uint64_t chan = 0;
	size_t off = 0;

	for (;;) {
		dofi_rdm_wire_err_t why = DOFI_RDM_WIRE_E_LAST;
		dofi_rdm_wire_msg_t m;
		size_t rest = size - off, msize = 12345;
		dof_status_t st;
		uint8_t ver;

		preset(&m);
		st = dofi_rdm_wire_decode(data + off, rest, &m, &msize, &why);
		if (st == DOF_ERR_BUSY) {
			if (msize <= rest || msize > DOFI_RDM_WIRE_MSG_MAX ||
			    why != DOFI_RDM_WIRE_E_LAST || !untouched(&m))
				abort();
			break;
		}
		if (st != DOF_OK) {
			if (st != DOF_ERR_INVALID_PARAM ||
			    why <= DOFI_RDM_WIRE_E_ARG ||
			    why > DOFI_RDM_WIRE_E_VERSIONS || msize != 12345 ||
			    !untouched(&m))
				abort();
			break;
		}
		if (msize > rest || why != DOFI_RDM_WIRE_E_LAST ||
		    !sane(&m, data + off, msize))
			abort();
		round_trip(&m, data + off, msize);
		prefixes(data + off, msize);

		/* The channel's and the connection's checks: no crash, and
		 * a verdict of their own kinds. */
		st = dofi_rdm_wire_admit(&m, self, chan, &why);
		if (st != DOF_OK && st != DOF_ERR_INVALID_PARAM)
			abort();
		if (m.type == DOFI_RDM_WIRE_HELLO) {
			if ((st == DOF_OK) != (chan == 0))
				abort();
			chan = m.src_inc;
			st = dofi_rdm_wire_version(&m, &ver, NULL);
			if (st == DOF_OK ? ver != 1 || m.ver_lo > 1
			                 : st != DOF_ERR_UNSUPPORTED ||
			                           m.ver_lo <= 1)
				abort();
		} else {
			st = dofi_rdm_wire_match(&conn, &m, &why);
			if (st != DOF_OK && st != DOF_ERR_NOT_FOUND)
				abort();
			/* learn from it, as a backend would */
			conn.peer_inc = m.src_inc;
			if (m.src_conn != 0)
				conn.peer_conn = m.src_conn;
		}
		off += msize;
	}
}

/* ---- the input as fields ------------------------------------------------ */

/* Bytes of the input, zeros when it runs out. */
struct src {
	const uint8_t *p;
	size_t n;
};

static uint64_t take(struct src *s, int bytes)
{
	uint64_t v = 0;

	while (bytes-- > 0) {
		v = v << 8 | (s->n > 0 ? *s->p : 0);
		if (s->n > 0) {
			s->p++;
			s->n--;
		}
	}
	return v;
}

/* m written out by the format's own words (types 1..8, lengths as they
 * are): the length of it. */
static size_t raw_write(const dofi_rdm_wire_msg_t *m, uint8_t *b)
{
	static const size_t fixed[] = {0, 18, 54, 46, 40, 42, 42, 48, 48};
	unsigned t = m->type;
	int addr = t == 2 || t == 3, data = addr || t == 5;
	size_t n = fixed[t] + (addr ? m->addr_len : 0) +
	           (data ? m->pdata_len : 0),
	       i;
	uint8_t *p = b + 40;

	memset(b, 0, n);
	b[0] = 0xda;
	b[1] = 0x52;
	b[2] = 1;
	b[3] = (uint8_t)t;
	b[4] = (uint8_t)(m->flags >> 8);
	b[5] = (uint8_t)m->flags;
	b[6] = (uint8_t)(n >> 8);
	b[7] = (uint8_t)n;
	for (i = 0; i < 8; i++) {
		b[8 + i] = (uint8_t)(m->src_inc >> (56 - 8 * i));
		if (t == 1)
			continue;
		b[16 + i] = (uint8_t)(m->dst_inc >> (56 - 8 * i));
		b[24 + i] = (uint8_t)(m->src_conn >> (56 - 8 * i));
		b[32 + i] = (uint8_t)(m->dst_conn >> (56 - 8 * i));
		if (t == 2)
			p[i] = (uint8_t)(m->conn_qual >> (56 - 8 * i));
		if (t == 7 || t == 8)
			p[i] = (uint8_t)(m->sent >> (56 - 8 * i));
	}
	if (t == 1) {
		b[16] = m->ver_lo;
		b[17] = m->ver_hi;
	}
	if (t == 2)
		p += 8;
	if (addr) {
		p[0] = m->rdma_in;
		p[1] = m->rdma_out;
		p[2] = (uint8_t)(m->addr_len >> 8);
		p[3] = (uint8_t)m->addr_len;
		p[4] = (uint8_t)(m->pdata_len >> 8);
		p[5] = (uint8_t)m->pdata_len;
		memcpy(b + fixed[t], m->addr, m->addr_len);
	}
	if (t == 5) {
		p[0] = (uint8_t)(m->pdata_len >> 8);
		p[1] = (uint8_t)m->pdata_len;
	}
	if (t == 6) {
		p[0] = (uint8_t)(m->reason >> 8);
		p[1] = (uint8_t)m->reason;
	}
	if (data)
		memcpy(b + fixed[t] + (addr ? m->addr_len : 0), m->pdata,
		       m->pdata_len);
	return n;
}

static void fields(const uint8_t *data, size_t size)
{
	static uint8_t bytes[2 * 300];
	/* room for the longest the writer makes: lengths up to 299 */
	static uint8_t enc[DOFI_RDM_WIRE_MSG_MAX], raw[54 + 2 * 300];
	struct src s = {data, size};
	dofi_rdm_wire_err_t why = DOFI_RDM_WIRE_E_LAST, dwhy;
	dofi_rdm_wire_msg_t m, d;
	size_t n = 0, rn, dsize;
	dof_status_t st, dst;

	memset(&m, 0, sizeof(m));
	m.type = (uint8_t)(take(&s, 1) % 10); /* 0 and 9: unknown */
	m.flags = (uint16_t)take(&s, 2);
	m.src_inc = take(&s, 8);
	m.dst_inc = take(&s, 8);
	m.src_conn = take(&s, 8);
	m.dst_conn = take(&s, 8);
	m.conn_qual = take(&s, 8);
	m.sent = take(&s, 8);
	m.rdma_in = (uint8_t)take(&s, 1);
	m.rdma_out = (uint8_t)take(&s, 1);
	m.reason = (uint16_t)take(&s, 2);
	m.ver_lo = (uint8_t)take(&s, 1);
	m.ver_hi = (uint8_t)take(&s, 1);
	m.addr_len = (uint16_t)(take(&s, 2) % 300);
	m.pdata_len = (uint16_t)(take(&s, 2) % 300);
	memset(bytes, 0, sizeof(bytes));
	memcpy(bytes, s.p, s.n < sizeof(bytes) ? s.n : sizeof(bytes));
	m.addr = bytes;
	m.pdata = bytes + 300;

	st = dofi_rdm_wire_encode(enc, sizeof(enc), &m, &n, &why);
	if (m.type < 1 || m.type > 8) {
		if (st != DOF_ERR_INVALID_PARAM || why != DOFI_RDM_WIRE_E_TYPE)
			abort();
		return;
	}
	rn = raw_write(&m, raw);
	dst = dofi_rdm_wire_decode(raw, rn, &d, &dsize, &dwhy);
	if (st == DOF_OK) {
		if (n != rn || memcmp(enc, raw, n) != 0 || dst != DOF_OK ||
		    dsize != n || !sane(&d, raw, n))
			abort();
		stream(raw, rn);
		return;
	}
	/* Refused: so by the decoder too, and for the same reason unless
	 * the length the writer gave is already out of bounds. */
	if (st != DOF_ERR_INVALID_PARAM || dst != DOF_ERR_INVALID_PARAM ||
	    (dwhy != why && dwhy != DOFI_RDM_WIRE_E_LENGTH))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 0 && (data[0] & 1))
		fields(data + 1, size - 1);
	else
		stream(data + (size > 0), size - (size > 0));
	return 0;
}
