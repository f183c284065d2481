/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * The sockets gate's port (prov/ofi/dofi_gate.c, dofi_gate_open): it
 * listens from the call on, so a request sent before libfabric's listener
 * and the gate's thread are up is queued, not refused, and a second open
 * of a taken port says EADDRINUSE. Loopback only; no libfabric call.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check_tests.h"
#include "dofi_gate.h"

static struct sockaddr_in lo_any(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET};

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

START_TEST(gate_open_listens_at_once)
{
	struct sockaddr_in a = lo_any();
	int err = 0, fd, c;

	fd = dofi_gate_open(&a, &err);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_ne(ntohs(a.sin_port), 0); /* the port taken */
	/* No gate thread and no fabric listener: the kernel queues it. */
	c = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(c, 0);
	ck_assert_msg(connect(c, (struct sockaddr *)&a, sizeof(a)) == 0,
	              "connect to the gate's port: %s", strerror(errno));
	close(c);
	close(fd);
}
END_TEST

START_TEST(gate_open_taken_port)
{
	struct sockaddr_in a = lo_any(), b;
	int err = 0, fd, fd2;

	fd = dofi_gate_open(&a, &err);
	ck_assert_int_ge(fd, 0);
	b = a;
	err = 0;
	fd2 = dofi_gate_open(&b, &err);
	ck_assert_int_eq(fd2, -1);
	ck_assert_int_eq(err, EADDRINUSE);
	close(fd);
}
END_TEST

Suite *check_prov_gate_suite(void)
{
	Suite *s = suite_create("prov_gate");
	TCase *tc = tcase_create("open");

	tcase_add_test(tc, gate_open_listens_at_once);
	tcase_add_test(tc, gate_open_taken_port);
	suite_add_tcase(s, tc);
	return s;
}
