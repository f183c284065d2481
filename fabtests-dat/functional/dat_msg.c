/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * dat_msg: client/server send/receive between two processes, as fi_msg is
 * for libfabric.  The server publishes its IA address and a qualifier
 * from dat_psp_create_any over the side channel; the client connects with
 * 48 bytes of private data and the server accepts with 48 of its own, each
 * side checking the other's; each side checks that dat_ep_query names the
 * other's IA address; then a ping-pong of every size (-S, default 1 B ..
 * 1 MiB) -I times (default 10), every byte checked; the client disconnects
 * gracefully and both see DISCONNECTED. The EPs' queues and their EVDs
 * hold one entry, all a ping-pong needs (OFED's dtestsrq asks no more):
 * a fabric whose own queues follow them must still move every size (udp
 * with rxd lost completions in queues so small, and hung).
 *
 * Usage: dat_msg [-D IA] [-E PORT]            (server)
 *        dat_msg [-D IA] [-E PORT] 127.0.0.1  (client)
 */
#include "config.h"

#include <netinet/in.h>
#include <string.h>

#include "shared.h"

#define PD_LEN 48

static struct ft_ia ia;
static struct ft_ep ep;
static struct ft_mr sbuf, rbuf;
static size_t sizes[FT_MAX_SIZES];
static int nsizes;
static long iters;
static uint64_t rx_posted, rx_done; /* receive cookies: a running count */

static void post_recv(void)
{
	DAT_LMR_TRIPLET t = ft_lmr_iov(&rbuf, 0, rbuf.len);
	DAT_DTO_COOKIE c;
	DAT_RETURN ret;

	c.as_64 = rx_posted++;
	ret = dat_ep_post_recv(ep.ep, 1, &t, c, DAT_COMPLETION_DEFAULT_FLAG);
	if (ret != DAT_SUCCESS)
		FT_FATAL("dat_ep_post_recv = %s", ft_ret_str(ret));
}

static bool send_msg(size_t len, uint64_t cookie)
{
	DAT_LMR_TRIPLET t = ft_lmr_iov(&sbuf, 0, len);
	DAT_DTO_COOKIE c;
	DAT_EVENT ev;
	DAT_RETURN ret;

	c.as_64 = cookie;
	ret = dat_ep_post_send(ep.ep, len ? 1 : 0, &t, c,
	                       DAT_COMPLETION_DEFAULT_FLAG);
	if (ret != DAT_SUCCESS)
		return FT_CHECK(false, "post send %zu: %s", len,
		                ft_ret_str(ret));
	ret = ft_wait(ep.req_evd, FT_TIMEOUT_US, &ev);
	if (ret != DAT_SUCCESS || ev.event_number != DAT_DTO_COMPLETION_EVENT ||
	    ev.event_data.dto_completion_event_data.status != DAT_DTO_SUCCESS ||
	    ev.event_data.dto_completion_event_data.user_cookie.as_64 !=
	            cookie ||
	    ev.event_data.dto_completion_event_data.operation != DAT_DTO_SEND)
		return FT_CHECK(false, "send %zu completes: %s", len,
		                ret == DAT_SUCCESS ? ft_event_desc(&ev)
		                                   : ft_ret_str(ret));
	return true;
}

static bool recv_msg(size_t len)
{
	uint64_t cookie = rx_done++;
	DAT_EVENT ev;
	DAT_RETURN ret = ft_wait(ep.recv_evd, FT_TIMEOUT_US, &ev);

	if (ret != DAT_SUCCESS || ev.event_number != DAT_DTO_COMPLETION_EVENT ||
	    ev.event_data.dto_completion_event_data.status != DAT_DTO_SUCCESS ||
	    ev.event_data.dto_completion_event_data.user_cookie.as_64 !=
	            cookie ||
	    ev.event_data.dto_completion_event_data.operation !=
	            DAT_DTO_RECEIVE ||
	    ev.event_data.dto_completion_event_data.transfered_length != len)
		return FT_CHECK(false, "receive %zu: %s", len,
		                ret == DAT_SUCCESS ? ft_event_desc(&ev)
		                                   : ft_ret_str(ret));
	return true;
}

static void check_peer_address(void)
{
	struct sockaddr_storage peer;
	DAT_CONN_QUAL dummy;
	DAT_EP_PARAM p;
	const struct sockaddr_in *a, *b;

	FT_REQUIRE(ft_oob_send_addr(ia.attr.ia_address_ptr, 0) == 0 &&
	                   ft_oob_recv_addr(&peer, &dummy) == 0,
	           "IA addresses swapped over the side channel");
	memset(&p, 0, sizeof(p));
	FT_DAT_CHECK(dat_ep_query(ep.ep, DAT_EP_FIELD_ALL, &p));
	a = (const void *)p.remote_ia_address_ptr;
	b = (const void *)&peer;
	FT_CHECK(a != NULL && a->sin_family == AF_INET &&
	                 a->sin_addr.s_addr == b->sin_addr.s_addr,
	         "ep_query's remote address %s is the peer's IA address %s",
	         ft_addr_str(p.remote_ia_address_ptr),
	         ft_addr_str((const struct sockaddr *)&peer));
	FT_CHECK(p.ep_state == DAT_EP_STATE_CONNECTED, "ep_query: CONNECTED");
}

static void server(void)
{
	struct ft_listener l;
	unsigned char pd[PD_LEN];
	DAT_CR_PARAM crp;
	DAT_EVENT ev;
	DAT_CR_HANDLE cr;
	uint64_t v;
	int s;
	long i;

	FT_REQUIRE(ft_oob_recv_u64(&v) == 0, "the client's size count");
	nsizes = (int)v;
	FT_REQUIRE(nsizes > 0 && nsizes <= FT_MAX_SIZES, "%d sizes", nsizes);
	for (s = 0; s < nsizes; s++) {
		FT_REQUIRE(ft_oob_recv_u64(&v) == 0, "size %d", s);
		sizes[s] = (size_t)v;
	}
	FT_REQUIRE(ft_oob_recv_u64(&v) == 0, "iterations");
	iters = (long)v;
	post_recv();
	FT_DAT_OK(ft_listen(&ia, &l));
	FT_REQUIRE(ft_oob_send_addr(ia.attr.ia_address_ptr, l.qual) == 0,
	           "sent IA address %s and qualifier %llu",
	           ft_addr_str(ia.attr.ia_address_ptr),
	           (unsigned long long)l.qual);
	FT_REQUIRE(ft_expect_event(l.cr_evd, FT_TIMEOUT_US,
	                           DAT_CONNECTION_REQUEST_EVENT, NULL, &ev,
	                           "the client's request arrives"),
	           "a request");
	cr = ev.event_data.cr_arrival_event_data.cr_handle;
	memset(&crp, 0, sizeof(crp));
	FT_DAT_CHECK(dat_cr_query(cr, DAT_CR_FIELD_ALL, &crp));
	FT_CHECK(crp.private_data_size == PD_LEN && crp.private_data &&
	                 ft_pattern_mismatch(crp.private_data, PD_LEN, 48) < 0,
	         "the request carries the client's %d bytes of private data",
	         PD_LEN);
	FT_CHECK(crp.remote_ia_address_ptr != NULL &&
	                 crp.remote_ia_address_ptr->sa_family == AF_INET,
	         "cr_query: the requester's address %s",
	         ft_addr_str(crp.remote_ia_address_ptr));
	ft_fill(pd, PD_LEN, 49);
	FT_DAT_OK(dat_cr_accept(cr, ep.ep, PD_LEN, pd));
	FT_REQUIRE(ft_expect_event(ep.conn_evd, FT_TIMEOUT_US,
	                           DAT_CONNECTION_EVENT_ESTABLISHED, ep.ep,
	                           NULL, "server: connection established"),
	           "connected");
	check_peer_address();

	for (s = 0; s < nsizes; s++) {
		int bad = 0;

		FT_REQUIRE(sizes[s] <= rbuf.len, "size %zu fits the buffer",
		           sizes[s]);
		for (i = 0; i < iters; i++) {
			uint64_t seed = ((uint64_t)s << 32) | (uint64_t)i;

			if (!recv_msg(sizes[s]) ||
			    ft_pattern_mismatch(rbuf.buf, sizes[s], seed) >= 0)
				bad++;
			memcpy(sbuf.buf, rbuf.buf, sizes[s]);
			post_recv();
			if (!send_msg(sizes[s], seed))
				bad++;
			if (bad)
				break;
		}
		FT_CHECK(bad == 0,
		         "server: %ld x %zu bytes received intact "
		         "and echoed",
		         iters, sizes[s]);
		if (bad)
			break;
	}
	ft_expect_event(ep.conn_evd, FT_TIMEOUT_US,
	                DAT_CONNECTION_EVENT_DISCONNECTED, ep.ep, NULL,
	                "server: the client's disconnect arrives");
	ft_expect_dto(ep.recv_evd, FT_TIMEOUT_US, ep.ep, DAT_DTO_RECEIVE,
	              rx_posted - 1, DAT_DTO_ERR_FLUSHED, -1, NULL,
	              "server: the last posted receive is flushed");
	ft_listener_free(&l);
}

static void client(void)
{
	static const size_t defaults[] = {1, 64, 4096, 65536, 1 << 20};
	struct sockaddr_storage ss;
	unsigned char pd[PD_LEN];
	DAT_CONN_QUAL qual;
	DAT_EVENT ev;
	int s;
	long i;

	nsizes = ft_sizes(defaults, sizeof(defaults) / sizeof(defaults[0]),
	                  rbuf.len, sizes);
	iters = ft_iterations(10);
	FT_REQUIRE(ft_oob_send_u64((uint64_t)nsizes) == 0, "send sizes");
	for (s = 0; s < nsizes; s++)
		FT_REQUIRE(ft_oob_send_u64(sizes[s]) == 0, "send size");
	FT_REQUIRE(ft_oob_send_u64((uint64_t)iters) == 0, "send iterations");
	post_recv();
	FT_REQUIRE(ft_oob_recv_addr(&ss, &qual) == 0,
	           "the server's IA address and qualifier");
	ft_log("server IA %s qualifier %llu", ft_addr_str((void *)&ss),
	       (unsigned long long)qual);
	ft_fill(pd, PD_LEN, 48);
	FT_DAT_OK(dat_ep_connect(ep.ep, (DAT_IA_ADDRESS_PTR)&ss, qual,
	                         FT_TIMEOUT_US, PD_LEN, pd, DAT_QOS_BEST_EFFORT,
	                         DAT_CONNECT_DEFAULT_FLAG));
	FT_REQUIRE(ft_expect_event(ep.conn_evd, FT_TIMEOUT_US,
	                           DAT_CONNECTION_EVENT_ESTABLISHED, ep.ep, &ev,
	                           "client: connection established"),
	           "connected");
	FT_CHECK(ev.event_data.connect_event_data.private_data_size == PD_LEN &&
	                 ev.event_data.connect_event_data.private_data &&
	                 ft_pattern_mismatch(
	                         ev.event_data.connect_event_data.private_data,
	                         PD_LEN, 49) < 0,
	         "ESTABLISHED carries the server's %d bytes of private data",
	         PD_LEN);
	check_peer_address();

	for (s = 0; s < nsizes; s++) {
		int bad = 0;

		for (i = 0; i < iters; i++) {
			uint64_t seed = ((uint64_t)s << 32) | (uint64_t)i;

			ft_fill(sbuf.buf, sizes[s], seed);
			if (!send_msg(sizes[s], seed))
				bad++;
			if (!recv_msg(sizes[s]) ||
			    ft_pattern_mismatch(rbuf.buf, sizes[s], seed) >= 0)
				bad++;
			post_recv();
			if (bad)
				break;
		}
		FT_CHECK(bad == 0, "client: %ld x %zu bytes ping-ponged intact",
		         iters, sizes[s]);
		if (bad)
			break;
	}
	ft_disconnect_local(&ep, NULL, DAT_CLOSE_GRACEFUL_FLAG);
	ft_expect_dto(ep.recv_evd, FT_TIMEOUT_US, ep.ep, DAT_DTO_RECEIVE,
	              rx_posted - 1, DAT_DTO_ERR_FLUSHED, -1, NULL,
	              "client: the last posted receive is flushed");
}

int main(int argc, char **argv)
{
	DAT_EP_ATTR attr;
	size_t max;

	ft_init(argc, argv, "dat_msg",
	        "client/server send/receive ping-pong with private data and "
	        "the side channel",
	        NULL);
	FT_REQUIRE(ft_oob_setup() == 0, "side channel up");
	ft_ia_open(ft_opts.ia_name, &ia);
	ft_check_libs();
	ft_ep_attr_default(&ia, &attr);
	/* One request and one receive out at a time: queues of one. */
	attr.max_request_dtos = 1;
	attr.max_recv_dtos = 1;
	FT_DAT_OK(ft_ep_create(&ia, ia.pz, &attr, 1, &ep));
	max = ia.attr.max_message_size;
	if (max > ((size_t)16 << 20))
		max = (size_t)16 << 20;
	if (ft_opts.nsizes && ft_opts.sizes[ft_opts.nsizes - 1] < max)
		max = ft_opts.sizes[ft_opts.nsizes - 1];
	if (!ft_opts.nsizes && max > ((size_t)1 << 20))
		max = (size_t)1 << 20;
	FT_DAT_OK(ft_mr_create(&ia, ia.pz, max, DAT_MEM_PRIV_ALL_FLAG, &sbuf));
	FT_DAT_OK(ft_mr_create(&ia, ia.pz, max, DAT_MEM_PRIV_ALL_FLAG, &rbuf));

	if (ft_is_client())
		client();
	else
		server();

	FT_CHECK(ft_oob_sync() == 0, "both sides finished");
	ft_oob_close();
	ft_ep_free(&ep);
	ft_mr_free(&sbuf);
	ft_mr_free(&rbuf);
	ft_ia_close(&ia);
	return ft_finish();
}
