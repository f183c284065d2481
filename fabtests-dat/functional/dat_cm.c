/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * dat_cm: the connection model of the seed pages.  ESTABLISHED with
 * private data of 0..max bytes both ways and the CR's fields;
 * PEER_REJECTED with private data; NON_PEER_REJECTED when nobody listens;
 * TIMED_OUT when the request is never answered (the Provider's own timer)
 * and the late accept's ACCEPT_COMPLETION_ERROR; DISCONNECTED after
 * graceful and abrupt disconnects from either side; receives flushed on
 * every failure; dat_ep_reset (no-op when Unconnected, reuse after
 * Disconnected); DAT_INVALID_STATE in each disallowed state; dup_connect;
 * cr_handoff; RSP; psp_create_any and PSP errors; the Provider-created EP
 * of DAT_PSP_PROVIDER_FLAG; qos, connect flags and address errors.
 * Single process, two IAs of the same name (client and server side).
 * UNREACHABLE is dat_unreach's.
 */
#include "config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "shared.h"

static struct ft_ia cia, sia; /* client side, server side */
static struct ft_listener L;  /* the server's PSP */
static DAT_COUNT pd_max;      /* max_private_data_size */

static void new_ep(struct ft_ia *ia, struct ft_ep *ep)
{
	DAT_EP_ATTR attr;

	ft_ep_attr_default(ia, &attr);
	FT_DAT_OK(ft_ep_create(ia, ia->pz, &attr, 32, ep));
}

static bool expect_state(DAT_EP_HANDLE ep, DAT_EP_STATE st, const char *what)
{
	int got = ft_ep_state(ep);

	return FT_CHECK(got == (int)st, "%s: EP state %s (expected %s)", what,
	                got < 0 ? "?" : ft_ep_state_str((DAT_EP_STATE)got),
	                ft_ep_state_str(st));
}

static DAT_RETURN connect_to(struct ft_ep *ep, DAT_CONN_QUAL qual,
                             DAT_TIMEOUT us, DAT_COUNT size, const void *pd)
{
	return dat_ep_connect(ep->ep, sia.attr.ia_address_ptr, qual, us, size,
	                      (DAT_PVOID)pd, DAT_QOS_BEST_EFFORT,
	                      DAT_CONNECT_DEFAULT_FLAG);
}

/* A qualifier nobody listens on (one the Provider just gave out). */
/*
 * A qualifier whose port a socket that is none of DAT's listens on (here
 * one of our own, bound to every address): DAT_CONN_QUAL_IN_USE, not a
 * bad parameter (sockets reports the port in use as FI_EINVAL).
 */
static void check_port_in_use(DAT_EVD_HANDLE cr_evd)
{
	struct sockaddr_in a;
	socklen_t alen = sizeof(a);
	DAT_PSP_HANDLE psp = DAT_HANDLE_NULL;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_ANY);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    listen(fd, 1) != 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &alen) != 0) {
		FT_CHECK(false, "a plain TCP listener for the in-use check");
		if (fd >= 0)
			close(fd);
		return;
	}
	FT_DAT_EXPECT(dat_psp_create(sia.ia, ntohs(a.sin_port), cr_evd,
	                             DAT_PSP_CONSUMER_FLAG, &psp),
	              DAT_CONN_QUAL_IN_USE);
	if (psp != DAT_HANDLE_NULL)
		(void)dat_psp_free(psp);
	close(fd);
}

static DAT_CONN_QUAL free_qual(void)
{
	struct ft_listener tmp;
	DAT_CONN_QUAL q;

	FT_DAT_OK(ft_listen(&sia, &tmp));
	q = tmp.qual;
	ft_listener_free(&tmp);
	return q;
}

/* Wait for a CR on evd; returns its handle or NULL (check recorded). */
static DAT_CR_HANDLE get_cr(DAT_EVD_HANDLE evd, DAT_EVENT *ev, const char *what)
{
	DAT_EVENT e;

	if (!ft_expect_event(evd, FT_TIMEOUT_US, DAT_CONNECTION_REQUEST_EVENT,
	                     NULL, &e, what))
		return DAT_HANDLE_NULL;
	if (ev != NULL)
		*ev = e;
	return e.event_data.cr_arrival_event_data.cr_handle;
}

static void post_recvs(struct ft_ep *ep, struct ft_mr *mr, int n,
                       uint64_t cookie0)
{
	DAT_LMR_TRIPLET t;
	DAT_DTO_COOKIE c;
	int i;

	for (i = 0; i < n; i++) {
		t = ft_lmr_iov(mr, 256 * (size_t)i, 256);
		c.as_64 = cookie0 + (uint64_t)i;
		FT_DAT_CHECK(dat_ep_post_recv(ep->ep, 1, &t, c,
		                              DAT_COMPLETION_DEFAULT_FLAG));
	}
}

static void expect_flushed(struct ft_ep *ep, int n, uint64_t cookie0,
                           const char *what)
{
	char desc[160];
	int i;

	for (i = 0; i < n; i++) {
		snprintf(desc, sizeof(desc), "%s: receive %d flushed", what, i);
		ft_expect_dto(ep->recv_evd, FT_TIMEOUT_US, ep->ep,
		              DAT_DTO_RECEIVE, cookie0 + (uint64_t)i,
		              DAT_DTO_ERR_FLUSHED, -1, NULL, desc);
	}
}

/* ---- ESTABLISHED with private data of each size ---------------------------
 */

static void check_pdata_size(DAT_COUNT size)
{
	struct ft_ep c, s;
	unsigned char *req = malloc((size_t)pd_max + 1);
	unsigned char *rep = malloc((size_t)pd_max + 1);
	DAT_CR_HANDLE cr;
	DAT_CR_PARAM crp;
	DAT_EP_PARAM cp, sp;
	DAT_EVENT ev;
	DAT_HANDLE_TYPE type;
	const struct sockaddr_in *a, *b;
	int st;
	char what[96];

	FT_REQUIRE(req && rep, "memory for private data");
	ft_fill(req, (size_t)pd_max + 1, 1000 + (uint64_t)size);
	ft_fill(rep, (size_t)pd_max + 1, 2000 + (uint64_t)size);
	snprintf(what, sizeof(what), "pdata %d", (int)size);
	new_ep(&cia, &c);
	new_ep(&sia, &s);

	FT_DAT_CHECK(
	        connect_to(&c, L.qual, FT_TIMEOUT_US, size, size ? req : NULL));
	st = ft_ep_state(c.ep);
	FT_CHECK(st == DAT_EP_STATE_ACTIVE_CONNECTION_PENDING,
	         "%s: after dat_ep_connect the EP is ACTIVE_CONNECTION_PENDING "
	         "(%s)",
	         what, st < 0 ? "?" : ft_ep_state_str((DAT_EP_STATE)st));
	cr = get_cr(L.cr_evd, &ev, "connection request arrives");
	if (cr == DAT_HANDLE_NULL)
		goto out;
	FT_CHECK(ev.evd_handle == L.cr_evd &&
	                 ev.event_data.cr_arrival_event_data.sp_handle
	                                 .psp_handle == L.psp &&
	                 ev.event_data.cr_arrival_event_data.conn_qual ==
	                         L.qual &&
	                 ev.event_data.cr_arrival_event_data.truncate_flag ==
	                         DAT_FALSE,
	         "%s: CR event: evd, PSP handle, conn_qual, not truncated",
	         what);
	a = (const void *)
	            ev.event_data.cr_arrival_event_data.local_ia_address_ptr;
	FT_CHECK(a != NULL && a->sin_family == AF_INET,
	         "%s: CR event: local IA address is AF_INET", what);
	FT_DAT_CHECK(dat_get_handle_type(cr, &type));
	FT_CHECK(type == DAT_HANDLE_TYPE_CR, "CR handle type is CR");
	memset(&crp, 0, sizeof(crp));
	FT_DAT_CHECK(dat_cr_query(cr, DAT_CR_FIELD_ALL, &crp));
	FT_CHECK(crp.private_data_size == size,
	         "%s: cr_query private_data_size %d", what,
	         (int)crp.private_data_size);
	FT_CHECK(size == 0 ||
	                 (crp.private_data != NULL &&
	                  memcmp(crp.private_data, req, (size_t)size) == 0),
	         "%s: cr_query private data bytes as sent", what);
	FT_CHECK(crp.local_ep_handle == DAT_HANDLE_NULL,
	         "%s: no local EP for a consumer PSP", what);
	a = (const void *)crp.remote_ia_address_ptr;
	b = (const void *)cia.attr.ia_address_ptr;
	FT_CHECK(a != NULL && a->sin_family == AF_INET &&
	                 a->sin_addr.s_addr == b->sin_addr.s_addr,
	         "%s: cr_query remote address is the client IA's (%s)", what,
	         ft_addr_str((const struct sockaddr *)a));
	FT_DAT_EXPECT(dat_cr_query(cr, DAT_CR_FIELD_ALL, NULL),
	              DAT_INVALID_PARAMETER);
	if (size == pd_max)
		FT_DAT_EXPECT(dat_cr_accept(cr, s.ep, pd_max + 1, rep),
		              DAT_INVALID_PARAMETER);
	FT_DAT_EXPECT(dat_cr_accept(cr, s.ep, 4, NULL), DAT_INVALID_PARAMETER);

	FT_DAT_CHECK(dat_cr_accept(cr, s.ep, size, size ? rep : NULL));
	st = ft_ep_state(s.ep);
	FT_CHECK(st == DAT_EP_STATE_COMPLETION_PENDING ||
	                 st == DAT_EP_STATE_CONNECTED,
	         "%s: after accept the passive EP is COMPLETION_PENDING or "
	         "CONNECTED (%s)",
	         what, st < 0 ? "?" : ft_ep_state_str((DAT_EP_STATE)st));
	ft_expect_event(s.conn_evd, FT_TIMEOUT_US,
	                DAT_CONNECTION_EVENT_ESTABLISHED, s.ep, NULL,
	                "passive side ESTABLISHED");
	if (ft_expect_event(c.conn_evd, FT_TIMEOUT_US,
	                    DAT_CONNECTION_EVENT_ESTABLISHED, c.ep, &ev,
	                    "active side ESTABLISHED")) {
		FT_CHECK(ev.event_data.connect_event_data.private_data_size ==
		                 size,
		         "%s: ESTABLISHED carries %d bytes of the accept's "
		         "private data",
		         what,
		         (int)ev.event_data.connect_event_data
		                 .private_data_size);
		FT_CHECK(size == 0 || (ev.event_data.connect_event_data
		                               .private_data &&
		                       memcmp(ev.event_data.connect_event_data
		                                      .private_data,
		                              rep, (size_t)size) == 0),
		         "%s: the accept's private data bytes arrive", what);
	}
	expect_state(c.ep, DAT_EP_STATE_CONNECTED, "active side");
	expect_state(s.ep, DAT_EP_STATE_CONNECTED, "passive side");

	memset(&cp, 0, sizeof(cp));
	memset(&sp, 0, sizeof(sp));
	FT_DAT_CHECK(dat_ep_query(c.ep, DAT_EP_FIELD_ALL, &cp));
	FT_DAT_CHECK(dat_ep_query(s.ep, DAT_EP_FIELD_ALL, &sp));
	a = (const void *)cp.remote_ia_address_ptr;
	b = (const void *)sia.attr.ia_address_ptr;
	FT_CHECK(a != NULL && a->sin_family == AF_INET &&
	                 a->sin_addr.s_addr == b->sin_addr.s_addr &&
	                 cp.local_ia_address_ptr != NULL,
	         "%s: active ep_query: both addresses, remote is the server "
	         "IA",
	         what);
	FT_CHECK(cp.remote_port_qual == L.qual,
	         "%s: active ep_query: remote_port_qual is the PSP's "
	         "qualifier (%llu)",
	         what, (unsigned long long)cp.remote_port_qual);
	FT_CHECK(crp.remote_port_qual == cp.local_port_qual,
	         "%s: the CR's remote_port_qual (%llu) is the active EP's "
	         "local_port_qual (%llu)",
	         what, (unsigned long long)crp.remote_port_qual,
	         (unsigned long long)cp.local_port_qual);
	FT_CHECK(sp.remote_ia_address_ptr != NULL &&
	                 sp.remote_ia_address_ptr->sa_family == AF_INET &&
	                 sp.local_ia_address_ptr != NULL,
	         "%s: passive ep_query: both addresses AF_INET", what);

	ft_disconnect_local(&c, &s, DAT_CLOSE_GRACEFUL_FLAG);
	expect_state(c.ep, DAT_EP_STATE_DISCONNECTED,
	             "active after disconnect");
	expect_state(s.ep, DAT_EP_STATE_DISCONNECTED,
	             "passive after disconnect");
out:
	ft_ep_free(&c);
	ft_ep_free(&s);
	free(req);
	free(rep);
}

static void check_connect_params(void)
{
	struct ft_ep c;
	unsigned char pd[8] = {0};
	struct sockaddr_un un;
	DAT_EVENT ev;

	new_ep(&cia, &c);
	FT_DAT_EXPECT(connect_to(&c, L.qual, 0, 0, NULL),
	              DAT_INVALID_PARAMETER);
	FT_DAT_EXPECT(connect_to(&c, L.qual, FT_TIMEOUT_US, pd_max + 1, pd),
	              DAT_INVALID_PARAMETER);
	FT_DAT_EXPECT(connect_to(&c, L.qual, FT_TIMEOUT_US, -1, pd),
	              DAT_INVALID_PARAMETER);
	FT_DAT_EXPECT(connect_to(&c, L.qual, FT_TIMEOUT_US, 8, NULL),
	              DAT_INVALID_PARAMETER);
	FT_DAT_EXPECT(dat_ep_connect(c.ep, sia.attr.ia_address_ptr, L.qual,
	                             FT_TIMEOUT_US, 0, NULL,
	                             DAT_QOS_BEST_EFFORT,
	                             (DAT_CONNECT_FLAGS)0x100),
	              DAT_INVALID_PARAMETER);
	if (!cia.pattr.supports_multipath)
		FT_DAT_EXPECT(
		        dat_ep_connect(c.ep, sia.attr.ia_address_ptr, L.qual,
		                       FT_TIMEOUT_US, 0, NULL,
		                       DAT_QOS_BEST_EFFORT,
		                       DAT_CONNECT_MULTIPATH_REQUIRED_FLAG),
		        DAT_MODEL_NOT_SUPPORTED);
	memset(&un, 0, sizeof(un));
	un.sun_family = AF_UNIX;
	snprintf(un.sun_path, sizeof(un.sun_path), "/nonexistent");
	FT_DAT_EXPECT(dat_ep_connect(c.ep, (DAT_IA_ADDRESS_PTR)&un, L.qual,
	                             FT_TIMEOUT_US, 0, NULL,
	                             DAT_QOS_BEST_EFFORT,
	                             DAT_CONNECT_DEFAULT_FLAG),
	              DAT_INVALID_ADDRESS);
	if ((cia.pattr.dat_qos_supported & DAT_QOS_PREMIUM) == 0)
		FT_DAT_EXPECT(dat_ep_connect(c.ep, sia.attr.ia_address_ptr,
		                             L.qual, FT_TIMEOUT_US, 0, NULL,
		                             DAT_QOS_PREMIUM,
		                             DAT_CONNECT_DEFAULT_FLAG),
		              DAT_MODEL_NOT_SUPPORTED);
	expect_state(c.ep, DAT_EP_STATE_UNCONNECTED,
	             "refused connects leave the EP");
	FT_DAT_EXPECT(dat_ep_disconnect(c.ep, DAT_CLOSE_ABRUPT_FLAG),
	              DAT_INVALID_STATE);
	FT_DAT_EXPECT(dat_ep_disconnect(c.ep, (DAT_CLOSE_FLAGS)0x10),
	              DAT_INVALID_PARAMETER);
	FT_DAT_EXPECT(ft_wait(L.cr_evd, 100000, &ev), DAT_TIMEOUT_EXPIRED);
	ft_ep_free(&c);

	/* An EP without a connection EVD cannot connect. */
	{
		DAT_EP_HANDLE ep;
		DAT_EVD_HANDLE evd;

		FT_DAT_OK(ft_evd_create(&cia, 8, DAT_EVD_DTO_FLAG, &evd));
		FT_DAT_OK(dat_ep_create(cia.ia, cia.pz, evd, evd,
		                        DAT_HANDLE_NULL, NULL, &ep));
		FT_DAT_EXPECT(connect_to(&(struct ft_ep){.ep = ep}, L.qual,
		                         FT_TIMEOUT_US, 0, NULL),
		              DAT_INVALID_STATE);
		FT_DAT_CHECK(dat_ep_free(ep));
		FT_DAT_CHECK(dat_evd_free(evd));
	}
}

/* ---- reject, reset and reuse -----------------------------------------------
 */

static void check_reject_reset_reuse(void)
{
	struct ft_ep c, s;
	struct ft_mr mr;
	unsigned char pd[48];
	DAT_CR_HANDLE cr;
	DAT_EVENT ev;
	DAT_LMR_TRIPLET t;
	DAT_DTO_COOKIE ck;
	DAT_RETURN ret;

	ft_fill(pd, sizeof(pd), 77);
	new_ep(&cia, &c);
	new_ep(&sia, &s);
	FT_DAT_OK(ft_mr_create(&cia, cia.pz, 4096, DAT_MEM_PRIV_ALL_FLAG, &mr));

	/* Receives posted while Unconnected; reset there is a no-op. */
	post_recvs(&c, &mr, 2, 0x100);
	FT_DAT_CHECK(dat_ep_reset(c.ep));
	expect_state(c.ep, DAT_EP_STATE_UNCONNECTED, "reset when Unconnected");
	ft_expect_empty(c.recv_evd, "reset when Unconnected flushes nothing");

	FT_DAT_CHECK(connect_to(&c, L.qual, FT_TIMEOUT_US, 0, NULL));
	FT_DAT_EXPECT(connect_to(&c, L.qual, FT_TIMEOUT_US, 0, NULL),
	              DAT_INVALID_STATE);
	FT_DAT_EXPECT(dat_ep_reset(c.ep), DAT_INVALID_STATE);
	cr = get_cr(L.cr_evd, NULL, "request to be rejected");
	if (cr != DAT_HANDLE_NULL) {
		FT_DAT_EXPECT(dat_cr_reject(cr, pd_max + 1, pd),
		              DAT_INVALID_PARAMETER);
		FT_DAT_CHECK(dat_cr_reject(cr, 48, pd));
	}
	if (ft_expect_event(c.conn_evd, FT_TIMEOUT_US,
	                    DAT_CONNECTION_EVENT_PEER_REJECTED, c.ep, &ev,
	                    "a consumer reject gives PEER_REJECTED")) {
		FT_CHECK(
		        ev.event_data.connect_event_data.private_data_size ==
		                        48 &&
		                ev.event_data.connect_event_data.private_data &&
		                memcmp(ev.event_data.connect_event_data
		                               .private_data,
		                       pd, 48) == 0,
		        "PEER_REJECTED carries the reject's 48 bytes of "
		        "private data (%d)",
		        (int)ev.event_data.connect_event_data
		                .private_data_size);
	}
	expect_state(c.ep, DAT_EP_STATE_DISCONNECTED, "after PEER_REJECTED");
	expect_flushed(&c, 2, 0x100, "PEER_REJECTED");
	FT_DAT_EXPECT(connect_to(&c, L.qual, FT_TIMEOUT_US, 0, NULL),
	              DAT_INVALID_STATE);
	t = ft_lmr_iov(&mr, 0, 64);
	ck.as_64 = 1;
	FT_DAT_EXPECT(
	        dat_ep_post_recv(c.ep, 1, &t, ck, DAT_COMPLETION_DEFAULT_FLAG),
	        DAT_INVALID_STATE);
	FT_DAT_EXPECT(
	        dat_ep_post_send(c.ep, 1, &t, ck, DAT_COMPLETION_DEFAULT_FLAG),
	        DAT_INVALID_STATE);
	FT_DAT_CHECK(dat_ep_disconnect(c.ep, DAT_CLOSE_ABRUPT_FLAG));
	usleep(100000);
	ft_expect_empty(c.conn_evd, "disconnecting a Disconnected EP is a "
	                            "no-op");

	/* Reset to Unconnected, then reuse for a connection that works. */
	FT_DAT_CHECK(dat_ep_reset(c.ep));
	expect_state(c.ep, DAT_EP_STATE_UNCONNECTED, "reset after reject");
	post_recvs(&c, &mr, 1, 0x200);
	FT_DAT_CHECK(dat_ep_reset(c.ep));
	if (!ft_connect_local(&cia, &c, &sia, &s, &L))
		goto out;
	FT_DAT_EXPECT(dat_ep_reset(c.ep), DAT_INVALID_STATE);
	FT_DAT_EXPECT(connect_to(&c, L.qual, FT_TIMEOUT_US, 0, NULL),
	              DAT_INVALID_STATE);
	/* The receive posted before the reset of an Unconnected EP is live. */
	{
		struct ft_mr smr;

		FT_DAT_OK(ft_mr_create(&sia, sia.pz, 64, DAT_MEM_PRIV_ALL_FLAG,
		                       &smr));
		ft_fill(smr.buf, 64, 5);
		t = ft_lmr_iov(&smr, 0, 64);
		ck.as_64 = 0x300;
		FT_DAT_CHECK(dat_ep_post_send(s.ep, 1, &t, ck,
		                              DAT_COMPLETION_DEFAULT_FLAG));
		ft_expect_dto(s.req_evd, FT_TIMEOUT_US, s.ep, DAT_DTO_SEND,
		              0x300, DAT_DTO_SUCCESS, 64, NULL,
		              "send on the reused connection");
		ft_expect_dto(
		        c.recv_evd, FT_TIMEOUT_US, c.ep, DAT_DTO_RECEIVE, 0x200,
		        DAT_DTO_SUCCESS, 64, NULL,
		        "receive posted before reset and connect gets it");
		FT_CHECK(ft_pattern_mismatch(mr.buf, 64, 5) < 0,
		         "its data is intact");
		ft_mr_free(&smr);
	}

	/* Abrupt disconnect from the passive side; both see DISCONNECTED. */
	post_recvs(&c, &mr, 3, 0x400);
	ft_disconnect_local(&s, &c, DAT_CLOSE_ABRUPT_FLAG);
	expect_flushed(&c, 3, 0x400, "peer's abrupt disconnect");
	expect_state(c.ep, DAT_EP_STATE_DISCONNECTED,
	             "after the peer's "
	             "disconnect");

	/* Reuse both EPs once more, this time with reset on both sides. */
	FT_DAT_CHECK(dat_ep_reset(c.ep));
	ret = dat_ep_reset(s.ep);
	FT_CHECK(ret == DAT_SUCCESS, "reset the passive EP: %s",
	         ft_ret_str(ret));
	if (ft_connect_local(&cia, &c, &sia, &s, &L))
		ft_disconnect_local(&c, &s, DAT_CLOSE_GRACEFUL_FLAG);
out:
	ft_ep_free(&c);
	ft_ep_free(&s);
	ft_mr_free(&mr);
}

/* ---- NON_PEER_REJECTED and TIMED_OUT ---------------------------------------
 */

static void check_no_listener(void)
{
	struct ft_ep c;
	struct ft_mr mr;
	DAT_CONN_QUAL qual = free_qual();

	new_ep(&cia, &c);
	FT_DAT_OK(ft_mr_create(&cia, cia.pz, 4096, DAT_MEM_PRIV_ALL_FLAG, &mr));
	post_recvs(&c, &mr, 2, 0x500);
	FT_DAT_CHECK(connect_to(&c, qual, FT_TIMEOUT_US, 8, "nobody!"));
	ft_expect_event(
	        c.conn_evd, FT_TIMEOUT_US,
	        DAT_CONNECTION_EVENT_NON_PEER_REJECTED, c.ep, NULL,
	        "a qualifier nobody listens on gives NON_PEER_REJECTED");
	expect_state(c.ep, DAT_EP_STATE_DISCONNECTED,
	             "after NON_PEER_REJECTED");
	expect_flushed(&c, 2, 0x500, "NON_PEER_REJECTED");
	ft_ep_free(&c);
	ft_mr_free(&mr);
}

static void check_timeout(void)
{
	struct ft_ep c, s;
	struct ft_mr mr, smr;
	DAT_CR_HANDLE cr;
	DAT_EVENT ev;
	DAT_RETURN ret;
	uint64_t t0, dt;

	new_ep(&cia, &c);
	new_ep(&sia, &s);
	FT_DAT_OK(ft_mr_create(&cia, cia.pz, 4096, DAT_MEM_PRIV_ALL_FLAG, &mr));
	FT_DAT_OK(
	        ft_mr_create(&sia, sia.pz, 4096, DAT_MEM_PRIV_ALL_FLAG, &smr));
	post_recvs(&c, &mr, 1, 0x600);
	t0 = ft_now_us();
	FT_DAT_CHECK(connect_to(&c, L.qual, 500000, 0, NULL));
	cr = get_cr(L.cr_evd, NULL, "the request that will not be answered");
	if (ft_expect_event(c.conn_evd, 10000000,
	                    DAT_CONNECTION_EVENT_TIMED_OUT, c.ep, &ev,
	                    "an unanswered request gives TIMED_OUT")) {
		dt = ft_now_us() - t0;
		FT_CHECK(dt >= 400000 && dt < 5000000,
		         "TIMED_OUT after %llu us for a 500000 us timeout",
		         (unsigned long long)dt);
	}
	expect_state(c.ep, DAT_EP_STATE_DISCONNECTED, "after TIMED_OUT");
	expect_flushed(&c, 1, 0x600, "TIMED_OUT");

	/*
	 * Accepting after the requester gave up must not connect: the
	 * accepting EP ends Disconnected, its posted receive flushed
	 * (dat_cr_accept).
	 */
	if (cr != DAT_HANDLE_NULL) {
		post_recvs(&s, &smr, 1, 0x680);
		ret = dat_cr_accept(cr, s.ep, 0, NULL);
		if (ret == DAT_SUCCESS) {
			ft_expect_event(
			        s.conn_evd, FT_TIMEOUT_US,
			        DAT_CONNECTION_EVENT_ACCEPT_COMPLETION_ERROR,
			        s.ep, NULL,
			        "a late accept gives "
			        "ACCEPT_COMPLETION_ERROR");
			expect_state(s.ep, DAT_EP_STATE_DISCONNECTED,
			             "after ACCEPT_COMPLETION_ERROR");
			expect_flushed(&s, 1, 0x680, "late accept");
		} else {
			FT_CHECK(true, "a late accept is refused at once: %s",
			         ft_ret_str(ret));
			FT_DAT_CHECK(dat_cr_reject(cr, 0, NULL));
		}
	}
	usleep(200000);
	ft_expect_empty(c.conn_evd, "the timed-out EP gets no later event");
	ft_ep_free(&c);
	ft_ep_free(&s);
	ft_mr_free(&mr);
	ft_mr_free(&smr);
}

static void check_disconnect_pending_connect(void)
{
	struct ft_ep c;
	struct ft_mr mr;
	DAT_CR_HANDLE cr;

	new_ep(&cia, &c);
	FT_DAT_OK(ft_mr_create(&cia, cia.pz, 4096, DAT_MEM_PRIV_ALL_FLAG, &mr));
	post_recvs(&c, &mr, 2, 0x700);
	FT_DAT_CHECK(connect_to(&c, L.qual, FT_TIMEOUT_US, 0, NULL));
	cr = get_cr(L.cr_evd, NULL, "request to be abandoned");
	FT_DAT_CHECK(dat_ep_disconnect(c.ep, DAT_CLOSE_ABRUPT_FLAG));
	ft_expect_event(c.conn_evd, FT_TIMEOUT_US,
	                DAT_CONNECTION_EVENT_DISCONNECTED, c.ep, NULL,
	                "disconnect while ACTIVE_CONNECTION_PENDING");
	expect_state(c.ep, DAT_EP_STATE_DISCONNECTED, "abandoned connect");
	expect_flushed(&c, 2, 0x700, "abandoned connect");
	if (cr != DAT_HANDLE_NULL)
		FT_DAT_CHECK(dat_cr_reject(cr, 0, NULL));
	usleep(200000);
	ft_drain(c.conn_evd);
	ft_ep_free(&c);
	ft_mr_free(&mr);
}

/* ---- dup_connect, handoff, RSP, PSPs
 * ------------------------------------------- */

static void check_dup_connect(void)
{
	struct ft_ep c1, c2, s1, s2, idle;
	unsigned char pd[8] = "dup-conn";
	DAT_CR_HANDLE cr;
	DAT_CR_PARAM crp;
	DAT_EP_PARAM p;

	new_ep(&cia, &c1);
	new_ep(&cia, &c2);
	new_ep(&cia, &idle);
	new_ep(&sia, &s1);
	new_ep(&sia, &s2);
	FT_DAT_EXPECT(dat_ep_dup_connect(c2.ep, idle.ep, FT_TIMEOUT_US, 0, NULL,
	                                 DAT_QOS_BEST_EFFORT),
	              DAT_INVALID_STATE);
	if (!ft_connect_local(&cia, &c1, &sia, &s1, &L))
		goto out;
	FT_DAT_EXPECT(dat_ep_dup_connect(c2.ep, c1.ep, 0, 0, NULL,
	                                 DAT_QOS_BEST_EFFORT),
	              DAT_INVALID_PARAMETER);
	FT_DAT_EXPECT(dat_ep_dup_connect(c1.ep, c1.ep, FT_TIMEOUT_US, 0, NULL,
	                                 DAT_QOS_BEST_EFFORT),
	              DAT_INVALID_STATE);
	FT_DAT_CHECK(dat_ep_dup_connect(c2.ep, c1.ep, FT_TIMEOUT_US, 8, pd,
	                                DAT_QOS_BEST_EFFORT));
	cr = get_cr(L.cr_evd, NULL, "dup_connect's request reaches the PSP");
	if (cr == DAT_HANDLE_NULL)
		goto out;
	memset(&crp, 0, sizeof(crp));
	FT_DAT_CHECK(dat_cr_query(cr, DAT_CR_FIELD_ALL, &crp));
	FT_CHECK(crp.private_data_size == 8 && crp.private_data &&
	                 memcmp(crp.private_data, pd, 8) == 0,
	         "dup_connect's private data arrives");
	FT_DAT_CHECK(dat_cr_accept(cr, s2.ep, 0, NULL));
	ft_expect_event(s2.conn_evd, FT_TIMEOUT_US,
	                DAT_CONNECTION_EVENT_ESTABLISHED, s2.ep, NULL,
	                "dup_connect: passive ESTABLISHED");
	ft_expect_event(c2.conn_evd, FT_TIMEOUT_US,
	                DAT_CONNECTION_EVENT_ESTABLISHED, c2.ep, NULL,
	                "dup_connect: active ESTABLISHED");
	memset(&p, 0, sizeof(p));
	FT_DAT_CHECK(dat_ep_query(
	        c2.ep, DAT_EP_FIELD_REMOTE_PORT_QUAL | DAT_EP_FIELD_EP_STATE,
	        &p));
	FT_CHECK(p.remote_port_qual == L.qual &&
	                 p.ep_state == DAT_EP_STATE_CONNECTED,
	         "dup_connect: connected to the same qualifier");
	expect_state(c1.ep, DAT_EP_STATE_CONNECTED,
	             "the duplicated EP is unchanged");
	ft_disconnect_local(&c2, &s2, DAT_CLOSE_GRACEFUL_FLAG);
	ft_disconnect_local(&c1, &s1, DAT_CLOSE_GRACEFUL_FLAG);
out:
	ft_ep_free(&c1);
	ft_ep_free(&c2);
	ft_ep_free(&idle);
	ft_ep_free(&s1);
	ft_ep_free(&s2);
}

static void check_handoff(void)
{
	struct ft_listener b;
	struct ft_ep c, s, c2;
	unsigned char pd[16] = "handoff-request";
	DAT_CR_HANDLE cr, cr2;
	DAT_CR_PARAM crp;
	DAT_EVENT ev;
	DAT_CONN_QUAL nobody = free_qual();

	FT_DAT_OK(ft_listen(&sia, &b));
	new_ep(&cia, &c);
	new_ep(&cia, &c2);
	new_ep(&sia, &s);
	FT_DAT_CHECK(connect_to(&c, L.qual, FT_TIMEOUT_US, 16, pd));
	cr = get_cr(L.cr_evd, NULL, "request on the front PSP");
	if (cr == DAT_HANDLE_NULL)
		goto out;
	FT_DAT_EXPECT(dat_cr_handoff(cr, nobody), DAT_INVALID_PARAMETER);
	FT_DAT_CHECK(dat_cr_handoff(cr, b.qual));
	cr2 = get_cr(b.cr_evd, &ev,
	             "the handed-off request arrives on the "
	             "second PSP");
	if (cr2 == DAT_HANDLE_NULL)
		goto out;
	FT_CHECK(ev.event_data.cr_arrival_event_data.sp_handle.psp_handle ==
	                         b.psp &&
	                 ev.event_data.cr_arrival_event_data.conn_qual ==
	                         b.qual,
	         "handed-off CR event names the second PSP and its qualifier");
	memset(&crp, 0, sizeof(crp));
	FT_DAT_CHECK(dat_cr_query(cr2, DAT_CR_FIELD_ALL, &crp));
	FT_CHECK(crp.private_data_size == 16 && crp.private_data &&
	                 memcmp(crp.private_data, pd, 16) == 0,
	         "handed-off CR keeps the private data");
	FT_DAT_CHECK(dat_cr_accept(cr2, s.ep, 0, NULL));
	ft_expect_event(s.conn_evd, FT_TIMEOUT_US,
	                DAT_CONNECTION_EVENT_ESTABLISHED, s.ep, NULL,
	                "handoff: passive ESTABLISHED");
	ft_expect_event(c.conn_evd, FT_TIMEOUT_US,
	                DAT_CONNECTION_EVENT_ESTABLISHED, c.ep, NULL,
	                "handoff: the requester is connected");
	ft_disconnect_local(&c, &s, DAT_CLOSE_GRACEFUL_FLAG);

	/* A failed handoff leaves the CR; reject it. */
	FT_DAT_CHECK(connect_to(&c2, L.qual, FT_TIMEOUT_US, 0, NULL));
	cr = get_cr(L.cr_evd, NULL, "second request on the front PSP");
	if (cr != DAT_HANDLE_NULL) {
		FT_DAT_EXPECT(dat_cr_handoff(cr, nobody),
		              DAT_INVALID_PARAMETER);
		FT_DAT_CHECK(dat_cr_reject(cr, 0, NULL));
		ft_expect_event(c2.conn_evd, FT_TIMEOUT_US,
		                DAT_CONNECTION_EVENT_PEER_REJECTED, c2.ep, NULL,
		                "the CR survives a failed handoff and can be "
		                "rejected");
	}
out:
	ft_ep_free(&c);
	ft_ep_free(&c2);
	ft_ep_free(&s);
	ft_listener_free(&b);
}

/* An RSP on a free qualifier, with its own CR EVD. */
struct rsp {
	DAT_RSP_HANDLE h;
	DAT_EVD_HANDLE evd;
	DAT_CONN_QUAL qual;
};

static void rsp_create(struct rsp *r, struct ft_ep *ep)
{
	r->qual = free_qual();
	r->h = DAT_HANDLE_NULL;
	FT_DAT_OK(ft_evd_create(&sia, 8, DAT_EVD_CR_FLAG, &r->evd));
	FT_DAT_CHECK(dat_rsp_create(sia.ia, r->qual, ep->ep, r->evd, &r->h));
}

static void rsp_destroy(struct rsp *r)
{
	if (r->h != DAT_HANDLE_NULL)
		FT_DAT_CHECK(dat_rsp_free(r->h));
	ft_drain(r->evd);
	FT_DAT_CHECK(dat_evd_free(r->evd));
}

static void check_rsp(void)
{
	struct ft_ep c, c2, c3, s, t, u;
	struct ft_mr mr, smr;
	struct rsp r1, r2, r3;
	DAT_RSP_HANDLE dummy;
	DAT_RSP_PARAM rp;
	DAT_CR_PARAM crp;
	DAT_CR_HANDLE cr;
	DAT_EVENT ev;
	DAT_LMR_TRIPLET lt;
	DAT_DTO_COOKIE ck;
	DAT_HANDLE_TYPE type;
	DAT_RETURN ret;

	new_ep(&cia, &c);
	new_ep(&cia, &c2);
	new_ep(&cia, &c3);
	new_ep(&sia, &s);
	new_ep(&sia, &t);
	new_ep(&sia, &u);
	FT_DAT_OK(ft_mr_create(&sia, sia.pz, 4096, DAT_MEM_PRIV_ALL_FLAG, &mr));
	FT_DAT_OK(
	        ft_mr_create(&cia, cia.pz, 4096, DAT_MEM_PRIV_ALL_FLAG, &smr));

	/* An RSP reserves s for one request. */
	rsp_create(&r1, &s);
	if (r1.h == DAT_HANDLE_NULL)
		goto out;
	FT_DAT_CHECK(dat_get_handle_type(r1.h, &type));
	FT_CHECK(type == DAT_HANDLE_TYPE_RSP, "RSP handle type is RSP");
	expect_state(s.ep, DAT_EP_STATE_RESERVED, "rsp_create");
	memset(&rp, 0, sizeof(rp));
	FT_DAT_CHECK(dat_rsp_query(r1.h, DAT_RSP_FIELD_ALL, &rp));
	FT_CHECK(rp.ia_handle == sia.ia && rp.conn_qual == r1.qual &&
	                 rp.evd_handle == r1.evd && rp.ep_handle == s.ep,
	         "rsp_query: ia, qualifier, EVD, EP");
	FT_DAT_EXPECT(dat_rsp_create(sia.ia, r1.qual, t.ep, r1.evd, &dummy),
	              DAT_CONN_QUAL_IN_USE);
	FT_DAT_EXPECT(dat_rsp_create(sia.ia, free_qual(), s.ep, r1.evd, &dummy),
	              DAT_INVALID_STATE);
	FT_DAT_EXPECT(dat_ep_free(s.ep), DAT_INVALID_STATE);
	FT_DAT_EXPECT(dat_ep_disconnect(s.ep, DAT_CLOSE_ABRUPT_FLAG),
	              DAT_INVALID_STATE);
	lt = ft_lmr_iov(&mr, 0, 64);
	ck.as_64 = 0x800;
	FT_DAT_CHECK(dat_ep_post_recv(s.ep, 1, &lt, ck,
	                              DAT_COMPLETION_DEFAULT_FLAG));

	FT_DAT_CHECK(connect_to(&c, r1.qual, FT_TIMEOUT_US, 0, NULL));
	cr = get_cr(r1.evd, &ev, "request on the RSP");
	if (cr == DAT_HANDLE_NULL)
		goto out;
	r1.h = DAT_HANDLE_NULL; /* the RSP destroyed itself */
	FT_CHECK(ev.event_data.cr_arrival_event_data.sp_handle.rsp_handle ==
	                 DAT_HANDLE_NULL,
	         "RSP CR event: the service point handle is DAT_HANDLE_NULL "
	         "(the RSP is gone) (%p)",
	         ev.event_data.cr_arrival_event_data.sp_handle.rsp_handle);
	FT_CHECK(ev.event_data.cr_arrival_event_data.conn_qual == r1.qual,
	         "RSP CR event: the RSP's qualifier");
	memset(&crp, 0, sizeof(crp));
	FT_DAT_CHECK(dat_cr_query(cr, DAT_CR_FIELD_ALL, &crp));
	FT_CHECK(crp.local_ep_handle == s.ep,
	         "cr_query: local_ep_handle is the reserved EP");
	expect_state(s.ep, DAT_EP_STATE_PASSIVE_CONNECTION_PENDING,
	             "request on the RSP");
	FT_DAT_EXPECT(dat_ep_free(s.ep), DAT_INVALID_STATE);
	ret = dat_cr_accept(cr, t.ep, 0, NULL);
	FT_CHECK(DAT_GET_TYPE(ret) == DAT_INVALID_HANDLE ||
	                 DAT_GET_TYPE(ret) == DAT_INVALID_PARAMETER,
	         "accepting an RSP request on another EP is refused: %s",
	         ft_ret_str(ret));
	FT_DAT_CHECK(dat_cr_accept(cr, DAT_HANDLE_NULL, 0, NULL));
	ft_expect_event(s.conn_evd, FT_TIMEOUT_US,
	                DAT_CONNECTION_EVENT_ESTABLISHED, s.ep, NULL,
	                "RSP: the reserved EP is ESTABLISHED");
	ft_expect_event(c.conn_evd, FT_TIMEOUT_US,
	                DAT_CONNECTION_EVENT_ESTABLISHED, c.ep, NULL,
	                "RSP: the requester is ESTABLISHED");
	ft_fill(smr.buf, 64, 8);
	lt = ft_lmr_iov(&smr, 0, 64);
	ck.as_64 = 0x801;
	FT_DAT_CHECK(dat_ep_post_send(c.ep, 1, &lt, ck,
	                              DAT_COMPLETION_DEFAULT_FLAG));
	ft_expect_dto(c.req_evd, FT_TIMEOUT_US, c.ep, DAT_DTO_SEND, 0x801,
	              DAT_DTO_SUCCESS, 64, NULL, "RSP: send");
	ft_expect_dto(s.recv_evd, FT_TIMEOUT_US, s.ep, DAT_DTO_RECEIVE, 0x800,
	              DAT_DTO_SUCCESS, 64, NULL,
	              "RSP: the receive posted while Reserved gets it");
	FT_CHECK(ft_pattern_mismatch(mr.buf, 64, 8) < 0, "RSP: data intact");
	ft_disconnect_local(&c, &s, DAT_CLOSE_GRACEFUL_FLAG);

	/* The RSP served one request: the next finds nobody listening. */
	FT_DAT_CHECK(connect_to(&c2, r1.qual, 2000000, 0, NULL));
	ft_expect_event(c2.conn_evd, 5000000,
	                DAT_CONNECTION_EVENT_NON_PEER_REJECTED, c2.ep, NULL,
	                "a second request to a used RSP's qualifier");
	ret = ft_wait(r1.evd, 0, &ev);
	FT_CHECK(ret != DAT_SUCCESS,
	         "no request reaches the used RSP's EVD (%s)",
	         ret == DAT_SUCCESS ? ft_event_desc(&ev) : "none");

	/* rsp_free returns the EP to Unconnected. */
	rsp_create(&r2, &t);
	expect_state(t.ep, DAT_EP_STATE_RESERVED, "second RSP");
	if (r2.h != DAT_HANDLE_NULL)
		FT_DAT_CHECK(dat_rsp_free(r2.h));
	r2.h = DAT_HANDLE_NULL;
	expect_state(t.ep, DAT_EP_STATE_UNCONNECTED, "after rsp_free");
	rsp_destroy(&r2);

	/* A rejected RSP request returns the EP to Unconnected. */
	rsp_create(&r3, &u);
	FT_DAT_CHECK(connect_to(&c3, r3.qual, FT_TIMEOUT_US, 0, NULL));
	cr = get_cr(r3.evd, NULL, "request on the RSP to be rejected");
	r3.h = DAT_HANDLE_NULL;
	if (cr != DAT_HANDLE_NULL) {
		FT_DAT_CHECK(dat_cr_reject(cr, 0, NULL));
		ft_expect_event(c3.conn_evd, FT_TIMEOUT_US,
		                DAT_CONNECTION_EVENT_PEER_REJECTED, c3.ep, NULL,
		                "RSP reject gives PEER_REJECTED");
		expect_state(u.ep, DAT_EP_STATE_UNCONNECTED,
		             "the reserved EP after a reject");
	}
	rsp_destroy(&r3);
out:
	rsp_destroy(&r1);
	ft_ep_free(&c);
	ft_ep_free(&c2);
	ft_ep_free(&c3);
	ft_ep_free(&s);
	ft_ep_free(&t);
	ft_ep_free(&u);
	ft_mr_free(&mr);
	ft_mr_free(&smr);
}

static void check_psp(void)
{
	struct ft_listener a, b;
	DAT_PSP_HANDLE p2;
	DAT_PSP_PARAM pp;
	DAT_EVD_HANDLE dto_evd;
	DAT_CONN_QUAL q;
	DAT_HANDLE_TYPE type;

	FT_DAT_OK(ft_listen(&sia, &a));
	FT_DAT_OK(ft_listen(&sia, &b));
	FT_CHECK(a.qual != b.qual,
	         "two psp_create_any give two qualifiers (%llu, %llu)",
	         (unsigned long long)a.qual, (unsigned long long)b.qual);
	FT_DAT_CHECK(dat_get_handle_type(a.psp, &type));
	FT_CHECK(type == DAT_HANDLE_TYPE_PSP, "PSP handle type is PSP");
	memset(&pp, 0, sizeof(pp));
	FT_DAT_CHECK(dat_psp_query(a.psp, DAT_PSP_FIELD_ALL, &pp));
	FT_CHECK(pp.ia_handle == sia.ia && pp.conn_qual == a.qual &&
	                 pp.evd_handle == a.cr_evd &&
	                 pp.psp_flags == DAT_PSP_CONSUMER_FLAG,
	         "psp_query: ia, the qualifier chosen, EVD, flags");
	FT_DAT_EXPECT(dat_psp_create(sia.ia, a.qual, b.cr_evd,
	                             DAT_PSP_CONSUMER_FLAG, &p2),
	              DAT_CONN_QUAL_IN_USE);
	check_port_in_use(b.cr_evd);
	FT_DAT_OK(ft_evd_create(&sia, 8, DAT_EVD_DTO_FLAG, &dto_evd));
	FT_DAT_EXPECT(dat_psp_create_any(sia.ia, &q, dto_evd,
	                                 DAT_PSP_CONSUMER_FLAG, &p2),
	              DAT_INVALID_HANDLE);
	FT_DAT_EXPECT(dat_psp_create_any(sia.ia, NULL, b.cr_evd,
	                                 DAT_PSP_CONSUMER_FLAG, &p2),
	              DAT_INVALID_PARAMETER);
	FT_DAT_EXPECT(dat_psp_create_any(sia.ia, &q, b.cr_evd,
	                                 (DAT_PSP_FLAGS)0x10, &p2),
	              DAT_INVALID_PARAMETER);
	FT_DAT_EXPECT(dat_evd_free(a.cr_evd), DAT_INVALID_STATE);
	FT_DAT_CHECK(dat_evd_free(dto_evd));
	q = a.qual;
	ft_listener_free(&a);
	FT_DAT_OK(ft_evd_create(&sia, 8, DAT_EVD_CR_FLAG, &a.cr_evd));
	FT_DAT_CHECK(dat_psp_create(sia.ia, q, a.cr_evd, DAT_PSP_CONSUMER_FLAG,
	                            &a.psp));
	FT_CHECK(a.psp != DAT_HANDLE_NULL,
	         "a freed PSP's qualifier can be listened on again");
	a.qual = q;
	ft_listener_free(&a);
	ft_listener_free(&b);
}

static void check_provider_ep(void)
{
	DAT_EVD_HANDLE evd;
	DAT_PSP_HANDLE psp = DAT_HANDLE_NULL;
	DAT_CONN_QUAL q;
	DAT_CR_HANDLE cr;
	DAT_CR_PARAM crp;
	DAT_EP_PARAM p;
	struct ft_ep c, mine;
	DAT_EP_HANDLE pep;
	DAT_RETURN ret;

	FT_DAT_OK(ft_evd_create(&sia, 16, DAT_EVD_CR_FLAG, &evd));
	ret = dat_psp_create_any(sia.ia, &q, evd, DAT_PSP_PROVIDER_FLAG, &psp);
	if (sia.pattr.ep_creator == DAT_PSP_CREATES_EP_NEVER) {
		FT_CHECK(DAT_GET_TYPE(ret) == DAT_MODEL_NOT_SUPPORTED,
		         "ep_creator NEVER: DAT_PSP_PROVIDER_FLAG gives %s",
		         ft_ret_str(ret));
		FT_DAT_CHECK(dat_evd_free(evd));
		return;
	}
	FT_CHECK(ret == DAT_SUCCESS,
	         "ep_creator %d: PSP with DAT_PSP_PROVIDER_FLAG = %s",
	         (int)sia.pattr.ep_creator, ft_ret_str(ret));
	if (ret != DAT_SUCCESS) {
		dat_evd_free(evd);
		return;
	}
	/* EVDs for the Provider's EP, given to it with dat_ep_modify. */
	new_ep(&sia, &mine);
	FT_DAT_CHECK(dat_ep_free(mine.ep));
	mine.ep = DAT_HANDLE_NULL;
	new_ep(&cia, &c);
	FT_DAT_CHECK(connect_to(&c, q, FT_TIMEOUT_US, 0, NULL));
	cr = get_cr(evd, NULL, "request on a provider-EP PSP");
	if (cr == DAT_HANDLE_NULL)
		goto out;
	memset(&crp, 0, sizeof(crp));
	FT_DAT_CHECK(dat_cr_query(cr, DAT_CR_FIELD_ALL, &crp));
	pep = crp.local_ep_handle;
	FT_CHECK(pep != DAT_HANDLE_NULL,
	         "cr_query: the Provider created an EP");
	if (pep == DAT_HANDLE_NULL) {
		FT_DAT_CHECK(dat_cr_reject(cr, 0, NULL));
		goto out;
	}
	expect_state(pep, DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING,
	             "provider-created EP");
	memset(&p, 0, sizeof(p));
	FT_DAT_CHECK(dat_ep_query(pep, DAT_EP_FIELD_ALL, &p));
	FT_CHECK(p.ia_handle == sia.ia, "provider-created EP: its IA");
	p.pz_handle = sia.pz;
	p.recv_evd_handle = mine.recv_evd;
	p.request_evd_handle = mine.req_evd;
	p.connect_evd_handle = mine.conn_evd;
	FT_DAT_CHECK(dat_ep_modify(pep,
	                           DAT_EP_FIELD_PZ_HANDLE |
	                                   DAT_EP_FIELD_RECV_EVD_HANDLE |
	                                   DAT_EP_FIELD_REQUEST_EVD_HANDLE |
	                                   DAT_EP_FIELD_CONNECT_EVD_HANDLE,
	                           &p));
	FT_DAT_CHECK(dat_cr_accept(cr, DAT_HANDLE_NULL, 0, NULL));
	ft_expect_event(c.conn_evd, FT_TIMEOUT_US,
	                DAT_CONNECTION_EVENT_ESTABLISHED, c.ep, NULL,
	                "provider-created EP: requester ESTABLISHED");
	ft_expect_event(mine.conn_evd, FT_TIMEOUT_US,
	                DAT_CONNECTION_EVENT_ESTABLISHED, pep, NULL,
	                "provider-created EP: ESTABLISHED on the EVD given by "
	                "dat_ep_modify");
	mine.ep = pep;
	ft_disconnect_local(&mine, &c, DAT_CLOSE_GRACEFUL_FLAG);
out:
	ft_ep_free(&c);
	ft_ep_free(&mine);
	FT_DAT_CHECK(dat_psp_free(psp));
	ft_drain(evd);
	FT_DAT_CHECK(dat_evd_free(evd));
}

static void check_state_errors(void)
{
	struct ft_ep c, s, other;
	struct ft_mr mr;
	DAT_LMR_TRIPLET t;
	DAT_RMR_TRIPLET r;
	DAT_DTO_COOKIE ck;
	DAT_CR_HANDLE cr;
	DAT_RSP_HANDLE rsp;

	new_ep(&cia, &c);
	new_ep(&sia, &s);
	new_ep(&cia, &other);
	FT_DAT_OK(ft_mr_create(&cia, cia.pz, 4096, DAT_MEM_PRIV_ALL_FLAG, &mr));
	t = ft_lmr_iov(&mr, 0, 64);
	r = ft_rmr_iov(&mr, 0, 64);
	ck.as_64 = 9;
	FT_DAT_EXPECT(
	        dat_ep_post_send(c.ep, 1, &t, ck, DAT_COMPLETION_DEFAULT_FLAG),
	        DAT_INVALID_STATE);
	FT_DAT_EXPECT(dat_ep_post_rdma_write(c.ep, 1, &t, ck, &r,
	                                     DAT_COMPLETION_DEFAULT_FLAG),
	              DAT_INVALID_STATE);
	FT_DAT_EXPECT(dat_ep_post_rdma_read(c.ep, 1, &t, ck, &r,
	                                    DAT_COMPLETION_DEFAULT_FLAG),
	              DAT_INVALID_STATE);
	if (!ft_connect_local(&cia, &c, &sia, &s, &L))
		goto out;
	/* A CR cannot be accepted on a connected EP; it survives. */
	FT_DAT_CHECK(connect_to(&other, L.qual, FT_TIMEOUT_US, 0, NULL));
	cr = get_cr(L.cr_evd, NULL, "a request while the EP is connected");
	if (cr != DAT_HANDLE_NULL) {
		FT_DAT_EXPECT(dat_cr_accept(cr, s.ep, 0, NULL),
		              DAT_INVALID_STATE);
		FT_DAT_CHECK(dat_cr_reject(cr, 0, NULL));
		ft_expect_event(other.conn_evd, FT_TIMEOUT_US,
		                DAT_CONNECTION_EVENT_PEER_REJECTED, other.ep,
		                NULL, "that request, rejected");
	}
	FT_DAT_EXPECT(dat_rsp_create(sia.ia, free_qual(), s.ep, L.cr_evd, &rsp),
	              DAT_INVALID_STATE);
	FT_DAT_EXPECT(dat_ep_reset(s.ep), DAT_INVALID_STATE);
	ft_disconnect_local(&c, &s, DAT_CLOSE_GRACEFUL_FLAG);
	FT_DAT_EXPECT(
	        dat_ep_post_send(c.ep, 1, &t, ck, DAT_COMPLETION_DEFAULT_FLAG),
	        DAT_INVALID_STATE);
	FT_DAT_EXPECT(dat_ep_post_rdma_write(c.ep, 1, &t, ck, &r,
	                                     DAT_COMPLETION_DEFAULT_FLAG),
	              DAT_INVALID_STATE);
	FT_DAT_EXPECT(
	        dat_ep_post_recv(c.ep, 1, &t, ck, DAT_COMPLETION_DEFAULT_FLAG),
	        DAT_INVALID_STATE);
	FT_DAT_EXPECT(dat_rsp_create(sia.ia, free_qual(), s.ep, L.cr_evd, &rsp),
	              DAT_INVALID_STATE);
out:
	ft_ep_free(&c);
	ft_ep_free(&s);
	ft_ep_free(&other);
	ft_mr_free(&mr);
}

int main(int argc, char **argv)
{
	DAT_COUNT sizes[6];
	int i, n = 0;

	ft_init(argc, argv, "dat_cm",
	        "connection model: every seed event, private data, reject, "
	        "reset/reuse, dup_connect, handoff, RSP, PSPs",
	        NULL);
	ft_ia_open(ft_opts.ia_name, &cia);
	ft_ia_open(ft_opts.ia_name, &sia);
	ft_check_libs();
	pd_max = cia.pattr.max_private_data_size;
	if (sia.pattr.max_private_data_size < pd_max)
		pd_max = sia.pattr.max_private_data_size;
	FT_CHECK(pd_max >= 48, "max_private_data_size %d >= 48", (int)pd_max);
	FT_DAT_OK(ft_listen(&sia, &L));
	ft_log("server PSP on qualifier %llu, server IA %s",
	       (unsigned long long)L.qual,
	       ft_addr_str(sia.attr.ia_address_ptr));

	sizes[n++] = 0;
	sizes[n++] = 1;
	sizes[n++] = 48;
	if (pd_max > 48)
		sizes[n++] = pd_max - 1;
	if (pd_max > 48)
		sizes[n++] = pd_max;
	for (i = 0; i < n; i++)
		check_pdata_size(sizes[i]);
	check_connect_params();
	check_reject_reset_reuse();
	check_no_listener();
	check_timeout();
	check_disconnect_pending_connect();
	check_dup_connect();
	check_handoff();
	check_rsp();
	check_psp();
	check_provider_ep();
	check_state_errors();

	ft_listener_free(&L);
	ft_ia_close(&sia);
	ft_ia_close(&cia);
	return ft_finish();
}
