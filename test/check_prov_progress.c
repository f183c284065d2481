/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * The progress thread's device lookup (prov/ofi/dofi_progress.c,
 * dofi_progress_dev): a domain name leads to hwloc's topology only when
 * /sys knows it as a network interface or an RDMA device, itself or
 * without a -suffix (efa's -rdm); shm's domain and names that are no
 * file name lead nowhere. Uses the loopback interface, which every
 * Linux machine has. And an EVD's partner (below).
 */
#include "config.h"

#include <string.h>

#include "check_tests.h"
#include "dofi.h"

START_TEST(progress_dev_interface)
{
	char dev[64];

	ck_assert_int_eq(dofi_progress_dev("lo", dev, sizeof(dev)), 1);
	ck_assert_str_eq(dev, "lo");
}
END_TEST

START_TEST(progress_dev_suffix)
{
	char dev[64];

	/* As efa names a domain after its device. */
	ck_assert_int_eq(dofi_progress_dev("lo-rdm", dev, sizeof(dev)), 1);
	ck_assert_str_eq(dev, "lo");
}
END_TEST

START_TEST(progress_dev_none)
{
	char dev[64], small[2];
	char longname[300];

	ck_assert_int_eq(dofi_progress_dev("shm", dev, sizeof(dev)), 0);
	ck_assert_int_eq(
	        dofi_progress_dev("dapl-ofi-no-such-device", dev, sizeof(dev)),
	        0);
	ck_assert_int_eq(dofi_progress_dev(NULL, dev, sizeof(dev)), 0);
	ck_assert_int_eq(dofi_progress_dev("", dev, sizeof(dev)), 0);
	/* A path is no device name. */
	ck_assert_int_eq(dofi_progress_dev("../net/lo", dev, sizeof(dev)), 0);
	ck_assert_int_eq(dofi_progress_dev("-", dev, sizeof(dev)), 0);
	/* Too long for the buffer, or for a name. */
	ck_assert_int_eq(dofi_progress_dev("lo", small, sizeof(small)), 0);
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	ck_assert_int_eq(dofi_progress_dev(longname, dev, sizeof(dev)), 0);
}
END_TEST

/*
 * An EVD's partner (dofi_ep_partner, dofi_progress_partner_nap): the
 * thread keeps off a receive EVD whose EPs all have their request stream
 * on the EVD the consumer polls, for that EVD's nap, and drives it
 * otherwise. streams is dofi_ep_streams' count, set here by hand.
 */
static void partner_bind(dofi_evd_t *recv, dofi_evd_t *req, int sign)
{
	recv->streams += sign;
	req->streams += sign;
	dofi_ep_partner(recv, req, sign);
	dofi_ep_partner(req, recv, sign);
}

START_TEST(progress_partner_one_pair)
{
	dofi_evd_t rcv, req;

	memset(&rcv, 0, sizeof(rcv));
	memset(&req, 0, sizeof(req));
	/* No EP: nothing to lean on. */
	ck_assert_int_eq(dofi_progress_partner_nap(&rcv), 0);
	partner_bind(&rcv, &req, 1);
	partner_bind(&rcv, &req, 1);
	ck_assert_ptr_eq(rcv.partner, &req);
	ck_assert_int_eq(rcv.partner_eps, 2);
	ck_assert_ptr_eq(req.partner, &rcv);
	/* The request EVD not polled at its last look: drive. */
	ck_assert_int_eq(dofi_progress_partner_nap(&rcv), 0);
	/* Polled: keep off for its nap. */
	req.pt.nap_us = 2000;
	ck_assert_int_eq(dofi_progress_partner_nap(&rcv), 2000);
	/* A waiter or a CNO on the receive EVD: drive it. */
	atomic_store(&rcv.waiters, 1);
	ck_assert_int_eq(dofi_progress_partner_nap(&rcv), 0);
	atomic_store(&rcv.waiters, 0);
	rcv.cno = (dofi_cno_t *)&req; /* any non-NULL */
	ck_assert_int_eq(dofi_progress_partner_nap(&rcv), 0);
	rcv.cno = NULL;
	/* The last EPs go: no partner. */
	partner_bind(&rcv, &req, -1);
	ck_assert_int_eq(dofi_progress_partner_nap(&rcv), 2000);
	partner_bind(&rcv, &req, -1);
	ck_assert_ptr_null(rcv.partner);
	ck_assert_ptr_null(req.partner);
	ck_assert_int_eq(rcv.partner_eps, 0);
	ck_assert_int_eq(dofi_progress_partner_nap(&rcv), 0);
}
END_TEST

START_TEST(progress_partner_mixed)
{
	dofi_evd_t rcv, a, b;

	memset(&rcv, 0, sizeof(rcv));
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	a.pt.nap_us = b.pt.nap_us = 2000;
	/* EPs pair rcv with a and with b: polling a drives only some. */
	partner_bind(&rcv, &a, 1);
	partner_bind(&rcv, &b, 1);
	ck_assert_ptr_eq(rcv.partner, &a);
	ck_assert_int_eq(rcv.partner_eps, 1);
	ck_assert_int_eq(dofi_progress_partner_nap(&rcv), 0);
	/* b's EP leaves: a's EP alone, a polled. */
	partner_bind(&rcv, &b, -1);
	ck_assert_int_eq(dofi_progress_partner_nap(&rcv), 2000);
	/* An EP with both streams on rcv: rcv's own reads only. */
	rcv.streams += 2;
	ck_assert_int_eq(dofi_progress_partner_nap(&rcv), 0);
	rcv.streams -= 2;
	/*
	 * A b EP joins while a's is there, then a's leaves: partner names
	 * one EVD at a time, so b's EP was never counted and the thread
	 * drives rcv from then on (it costs time, never progress).
	 */
	partner_bind(&rcv, &b, 1);
	partner_bind(&rcv, &a, -1);
	ck_assert_ptr_null(rcv.partner);
	ck_assert_int_eq(dofi_progress_partner_nap(&rcv), 0);
	partner_bind(&rcv, &b, -1);
	ck_assert_ptr_null(rcv.partner);
	ck_assert_ptr_null(a.partner);
	ck_assert_ptr_null(b.partner);
	ck_assert_int_eq(rcv.streams, 0);
}
END_TEST

Suite *check_prov_progress_suite(void)
{
	Suite *s = suite_create("prov_progress");
	TCase *tc = tcase_create("dev");
	TCase *tp = tcase_create("partner");

	tcase_add_test(tc, progress_dev_interface);
	tcase_add_test(tc, progress_dev_suffix);
	tcase_add_test(tc, progress_dev_none);
	suite_add_tcase(s, tc);
	tcase_add_test(tp, progress_partner_one_pair);
	tcase_add_test(tp, progress_partner_mixed);
	suite_add_tcase(s, tp);
	return s;
}
