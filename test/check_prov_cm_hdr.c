/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * The CM private-data header (prov/ofi/dofi_cm_hdr.c): the wire bytes,
 * round trips, and everything a peer could send instead: short, long,
 * each single-byte change, random bytes. A refused message leaves every
 * output as it was.
 */
#include "config.h"

#include <string.h>

#include "check_tests.h"
#include "dofi_cm_hdr.h"

#define MAXP 256 /* the private data the provider takes at most */

static const uint8_t types[] = {DOFI_CM_REQ, DOFI_CM_REP, DOFI_CM_REJ};

/* What unpack should make of b[0..len): an independent statement of the
 * format. 1 and *want filled when valid. */
static int hdr_expect(const unsigned char *b, size_t len, size_t max_pdata,
                      dofi_cm_hdr_t *want)
{
	if (len < 7 || b[0] != 0xda || b[1] != 0x7f || b[2] != 1 || b[3] < 1 ||
	    b[3] > 3 || len - 7 > max_pdata)
		return 0;
	want->type = b[3];
	want->rdma_in = b[4];
	want->rdma_out = b[5];
	want->flags = b[6] & 0x03;
	return 1;
}

/* Outputs preset to a pattern, to see that a refusal leaves them be. */
struct outs {
	dofi_cm_hdr_t h;
	const unsigned char *pdata;
	size_t plen;
};

static const unsigned char sentinel_byte;

static void outs_preset(struct outs *o)
{
	o->h.type = 0xa5;
	o->h.flags = 0xa6;
	o->h.rdma_in = 0xa7;
	o->h.rdma_out = 0xa8;
	o->pdata = &sentinel_byte;
	o->plen = 0x5a5a;
}

static void outs_untouched(const struct outs *o)
{
	ck_assert_uint_eq(o->h.type, 0xa5);
	ck_assert_uint_eq(o->h.flags, 0xa6);
	ck_assert_uint_eq(o->h.rdma_in, 0xa7);
	ck_assert_uint_eq(o->h.rdma_out, 0xa8);
	ck_assert_ptr_eq(o->pdata, &sentinel_byte);
	ck_assert_uint_eq(o->plen, 0x5a5a);
}

/* Unpack b and check the result against hdr_expect. */
static void hdr_check(const unsigned char *b, size_t len, size_t max_pdata)
{
	dofi_cm_hdr_t want;
	struct outs o;
	dof_status_t st;

	outs_preset(&o);
	st = dofi_cm_hdr_unpack(b, len, max_pdata, &o.h, &o.pdata, &o.plen);
	if (!hdr_expect(b, len, max_pdata, &want)) {
		ck_assert_int_eq(st, DOF_ERR_INVALID_PARAM);
		outs_untouched(&o);
		return;
	}
	ck_assert_int_eq(st, DOF_OK);
	ck_assert_uint_eq(o.h.type, want.type);
	ck_assert_uint_eq(o.h.flags, want.flags);
	ck_assert_uint_eq(o.h.rdma_in, want.rdma_in);
	ck_assert_uint_eq(o.h.rdma_out, want.rdma_out);
	ck_assert_ptr_eq(o.pdata, b + 7);
	ck_assert_uint_eq(o.plen, len - 7);
}

/* Unpack must refuse b and leave the outputs alone. */
static void hdr_refused(const unsigned char *b, size_t len, size_t max_pdata)
{
	struct outs o;

	outs_preset(&o);
	ck_assert_int_eq(
	        dofi_cm_hdr_unpack(b, len, max_pdata, &o.h, &o.pdata, &o.plen),
	        DOF_ERR_INVALID_PARAM);
	outs_untouched(&o);
}

/* The bytes on the wire are those of the original open-coded header. */
START_TEST(hdr_wire_bytes)
{
	static const unsigned char want[] = {0xda, 0x7f, 0x01, 0x01, 0x04,
	                                     0x08, 0x03, 'h',  'i'};
	dofi_cm_hdr_t h = {.type = DOFI_CM_REQ,
	                   .flags = DOFI_CM_F_RTU | DOFI_CM_F_ACCEPTED,
	                   .rdma_in = 4,
	                   .rdma_out = 8};
	unsigned char buf[16];

	memset(buf, 0xee, sizeof(buf));
	ck_assert_uint_eq(dofi_cm_hdr_pack(buf, sizeof(buf), &h, "hi", 2), 9);
	ck_assert_mem_eq(buf, want, sizeof(want));
	ck_assert_uint_eq(buf[9], 0xee); /* nothing past it */
	/* A REJ with no data and no flags: the header alone. */
	h.type = DOFI_CM_REJ;
	h.flags = 0;
	h.rdma_in = h.rdma_out = 0;
	ck_assert_uint_eq(dofi_cm_hdr_pack(buf, 7, &h, NULL, 0), 7);
	ck_assert_mem_eq(buf, "\xda\x7f\x01\x03\x00\x00\x00", 7);
	ck_assert_uint_eq(DOFI_CM_HDR_SIZE, 7);
}
END_TEST

/* Pack h with plen bytes of pdata, unpack, and compare. */
static void hdr_round_trip_one(const dofi_cm_hdr_t *h,
                               const unsigned char *pdata, size_t plen)
{
	unsigned char buf[7 + MAXP + 8];
	struct outs o;
	size_t n;

	n = dofi_cm_hdr_pack(buf, sizeof(buf), h, pdata, plen);
	ck_assert_uint_eq(n, 7 + plen);
	outs_preset(&o);
	ck_assert_int_eq(
	        dofi_cm_hdr_unpack(buf, n, MAXP, &o.h, &o.pdata, &o.plen),
	        DOF_OK);
	ck_assert_mem_eq(&o.h, h, sizeof(*h));
	ck_assert_uint_eq(o.plen, plen);
	ck_assert_ptr_eq(o.pdata, buf + 7);
	if (plen > 0)
		ck_assert_mem_eq(o.pdata, pdata, plen);
}

/* Every type and flag combination, with data of several lengths. */
START_TEST(hdr_round_trip)
{
	static const size_t lens[] = {0, 1, 7, 48, 49, 200, MAXP};
	unsigned char pdata[MAXP];
	size_t t, l, i;
	unsigned f, r;

	for (i = 0; i < sizeof(pdata); i++)
		pdata[i] = (unsigned char)(i * 7 + 3);
	for (t = 0; t < sizeof(types); t++)
		for (f = 0; f < 4; f++)
			for (l = 0; l < sizeof(lens) / sizeof(lens[0]); l++)
				for (r = 0; r < 256; r += 85) {
					dofi_cm_hdr_t h = {
					        .type = types[t],
					        .flags = (uint8_t)f,
					        .rdma_in = (uint8_t)r,
					        .rdma_out = (uint8_t)(255 - r)};

					hdr_round_trip_one(&h, pdata, lens[l]);
				}
}
END_TEST

START_TEST(hdr_pack_refuses)
{
	dofi_cm_hdr_t h = {.type = DOFI_CM_REP};
	unsigned char buf[64];

	memset(buf, 0xee, sizeof(buf));
	/* Too little room, by one. */
	ck_assert_uint_eq(dofi_cm_hdr_pack(buf, 6, &h, NULL, 0), 0);
	ck_assert_uint_eq(dofi_cm_hdr_pack(buf, 9, &h, "abc", 3), 0);
	ck_assert_uint_eq(dofi_cm_hdr_pack(buf, 10, &h, "abc", 3), 10);
	memset(buf, 0xee, sizeof(buf));
	/* A length that would wrap DOFI_CM_HDR_SIZE + plen. */
	ck_assert_uint_eq(
	        dofi_cm_hdr_pack(buf, sizeof(buf), &h, "x", SIZE_MAX - 3), 0);
	ck_assert_uint_eq(dofi_cm_hdr_pack(buf, SIZE_MAX, &h, NULL, 1), 0);
	ck_assert_uint_eq(dofi_cm_hdr_pack(NULL, 64, &h, NULL, 0), 0);
	ck_assert_uint_eq(dofi_cm_hdr_pack(buf, 64, NULL, NULL, 0), 0);
	/* Types we would refuse ourselves: never sent. */
	h.type = 0;
	ck_assert_uint_eq(dofi_cm_hdr_pack(buf, 64, &h, NULL, 0), 0);
	h.type = 4; /* the old NOQOS */
	ck_assert_uint_eq(dofi_cm_hdr_pack(buf, 64, &h, NULL, 0), 0);
	h.type = 255;
	ck_assert_uint_eq(dofi_cm_hdr_pack(buf, 64, &h, NULL, 0), 0);
	/* Nothing written by any refusal. */
	for (size_t i = 0; i < sizeof(buf); i++)
		ck_assert_uint_eq(buf[i], 0xee);
}
END_TEST

START_TEST(hdr_unpack_null)
{
	unsigned char buf[7] = {0xda, 0x7f, 1, 1, 0, 0, 0};
	struct outs o;
	dofi_cm_hdr_t h;

	hdr_refused(NULL, 7, MAXP);
	outs_preset(&o);
	ck_assert_int_eq(
	        dofi_cm_hdr_unpack(buf, 7, MAXP, NULL, &o.pdata, &o.plen),
	        DOF_ERR_INVALID_PARAM);
	outs_untouched(&o);
	/* pdata and plen are optional. */
	ck_assert_int_eq(dofi_cm_hdr_unpack(buf, 7, MAXP, &h, NULL, NULL),
	                 DOF_OK);
	ck_assert_uint_eq(h.type, DOFI_CM_REQ);
}
END_TEST

/* Every length short of the header, of a valid message. */
START_TEST(hdr_truncated)
{
	unsigned char buf[16];
	dofi_cm_hdr_t h = {.type = DOFI_CM_REQ, .flags = 1};
	size_t len;

	ck_assert_uint_eq(dofi_cm_hdr_pack(buf, sizeof(buf), &h, "abcd", 4),
	                  11);
	for (len = 0; len < 7; len++)
		hdr_refused(buf, len, MAXP);
	for (len = 7; len <= 11; len++)
		hdr_check(buf, len, MAXP);
}
END_TEST

/* Private data beyond max_pdata, at each limit around the length. */
START_TEST(hdr_oversized)
{
	unsigned char buf[7 + MAXP + 1], pdata[MAXP + 1];
	dofi_cm_hdr_t h = {.type = DOFI_CM_REP};
	size_t n, max;

	memset(pdata, 'p', sizeof(pdata));
	n = dofi_cm_hdr_pack(buf, sizeof(buf), &h, pdata, sizeof(pdata));
	ck_assert_uint_eq(n, sizeof(buf));
	for (max = 0; max <= MAXP + 2; max++)
		hdr_check(buf, n, max); /* valid only when max >= MAXP + 1 */
	/* No data: fine with none allowed. */
	hdr_check(buf, 7, 0);
	/* A length near SIZE_MAX (only compared, never read that far). */
	hdr_refused(buf, SIZE_MAX, MAXP);
}
END_TEST

/* Types and flags in detail: NOQOS is gone; unknown flags are dropped. */
START_TEST(hdr_types_flags)
{
	unsigned char b[7] = {0xda, 0x7f, 1, 0, 0, 0, 0};
	dofi_cm_hdr_t h;
	unsigned v;

	for (v = 0; v < 256; v++) {
		b[3] = (unsigned char)v;
		ck_assert_int_eq(dofi_cm_hdr_unpack(b, 7, MAXP, &h, NULL, NULL),
		                 v >= 1 && v <= 3 ? DOF_OK
		                                  : DOF_ERR_INVALID_PARAM);
	}
	b[3] = DOFI_CM_REP;
	for (v = 0; v < 256; v++) {
		b[6] = (unsigned char)v;
		ck_assert_int_eq(dofi_cm_hdr_unpack(b, 7, MAXP, &h, NULL, NULL),
		                 DOF_OK);
		ck_assert_uint_eq(h.flags, v & DOFI_CM_F_KNOWN);
	}
}
END_TEST

/* Each byte of a valid message (header and data) set to each value. */
START_TEST(hdr_every_byte_mutation)
{
	unsigned char orig[7 + 5], b[sizeof(orig)];
	dofi_cm_hdr_t h = {.type = DOFI_CM_REQ,
	                   .flags = DOFI_CM_F_RTU,
	                   .rdma_in = 16,
	                   .rdma_out = 8};
	size_t pos;
	unsigned v;

	ck_assert_uint_eq(dofi_cm_hdr_pack(orig, sizeof(orig), &h, "12345", 5),
	                  sizeof(orig));
	for (pos = 0; pos < sizeof(orig); pos++)
		for (v = 0; v < 256; v++) {
			memcpy(b, orig, sizeof(b));
			b[pos] = (unsigned char)v;
			hdr_check(b, sizeof(b), MAXP);
			hdr_check(b, sizeof(b), 4); /* data too long */
		}
}
END_TEST

/* Random bytes, half of them behind a valid magic and version. */
START_TEST(hdr_random_garbage)
{
	unsigned char b[7 + MAXP + 16], buf[7 + MAXP + 16];
	uint64_t rs = 0x0c0ffee;
	uint32_t i, ok = 0;

	for (i = 0; i < 100000; i++) {
		size_t len = check_rand_below(&rs, sizeof(b) + 1), j;
		/* Mostly the provider's limit, sometimes any. */
		size_t max = MAXP;
		dofi_cm_hdr_t h;
		const unsigned char *pd;
		size_t pl, n;

		if (check_rand_below(&rs, 4) == 0)
			max = check_rand_below(&rs, 300);
		for (j = 0; j < len; j++)
			b[j] = (unsigned char)check_rand(&rs);
		if (len >= 4 && (i & 1)) {
			b[0] = 0xda;
			b[1] = 0x7f;
			b[2] = 1;
			if (i & 2)
				b[3] = (unsigned char)(1 + i % 3);
		}
		hdr_check(b, len, max);
		if (dofi_cm_hdr_unpack(b, len, max, &h, &pd, &pl) != DOF_OK)
			continue;
		/* Re-packed, the same bytes but for unknown flags. */
		ok++;
		n = dofi_cm_hdr_pack(buf, sizeof(buf), &h, pd, pl);
		ck_assert_uint_eq(n, len);
		ck_assert_mem_eq(buf, b, 6);
		ck_assert_uint_eq(buf[6], b[6] & DOFI_CM_F_KNOWN);
		if (len > 7)
			ck_assert_mem_eq(buf + 7, b + 7, len - 7);
	}
	/* The mix reaches the valid side often enough to mean something. */
	ck_assert_uint_gt(ok, 10000);
}
END_TEST

Suite *check_prov_cm_hdr_suite(void)
{
	Suite *s = suite_create("prov cm header");
	TCase *tc = tcase_create("dofi_cm_hdr");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, hdr_wire_bytes);
	tcase_add_test(tc, hdr_round_trip);
	tcase_add_test(tc, hdr_pack_refuses);
	tcase_add_test(tc, hdr_unpack_null);
	tcase_add_test(tc, hdr_truncated);
	tcase_add_test(tc, hdr_oversized);
	tcase_add_test(tc, hdr_types_flags);
	tcase_add_test(tc, hdr_every_byte_mutation);
	tcase_add_test(tc, hdr_random_garbage);
	suite_add_tcase(s, tc);
	return s;
}
