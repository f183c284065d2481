/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * dat_linkloss: a lost link ends a connection with requests outstanding
 * within the link bound (DAPL_OFI_LINK_TIMEOUT), and a link that
 * comes back before it loses nothing.  Client and server run in two
 * network namespaces joined by a veth pair that carries the DAT traffic
 * (fabtests-dat/scripts/linkloss.sh sets them up); the side channel
 * takes a second pair, so the server can set the data link down and up
 * when the client asks (-L IFNAME, the server's end of the data link).
 *
 *   comes back  the client posts RDMA Writes, the link goes down for a
 *               third of the bound and comes back: every write completes
 *               successfully in posting order, no connection event
 *               comes, and the server's memory holds every byte.
 *   no receive  the client sends while the server has no receive
 *               posted, for twice the bound: the peer is alive (its
 *               kernel answers), so no connection event comes; then the
 *               server posts its receives and every send completes.
 *   lost        a few writes complete, the link goes down, more writes
 *               are posted: DAT_CONNECTION_EVENT_BROKEN comes within the
 *               bound (plus 1 s of slack), and the writes complete in
 *               posting order, the first one outstanding with
 *               DAT_DTO_ERR_TRANSPORT and the rest DAT_DTO_ERR_FLUSHED.
 *
 * Usage: dat_linkloss -D IA -s CTRL_ADDR -L IFNAME [-E PORT]     (server)
 *        dat_linkloss -D IA [-E PORT] CTRL_ADDR                   (client)
 * The bound in milliseconds is read from DAT_LINKLOSS_BOUND, else
 * DAPL_OFI_LINK_TIMEOUT: each side's IA must have that bound, by
 * DAPL_OFI_LINK_TIMEOUT or link_timeout= in its dat.conf instance data
 * (linkloss.sh gives the server the one and the client the other).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shared.h"

#define NW       64           /* writes per case */
#define WS       (256 * 1024) /* bytes per write */
#define NW_FIRST 8            /* writes that complete before the link goes */

enum { CMD_DOWN = 1, CMD_UP, CMD_CHECK, CMD_DONE, CMD_RECV };

static const char *ifname;
static long bound_ms;

static int opt_handler(int opt, const char *arg)
{
	if (opt != 'L')
		return -1;
	ifname = arg;
	return 0;
}

static int link_set(const char *state)
{
	char *argv[] = {"ip",           "link",        "set",
	                (char *)ifname, (char *)state, NULL};

	return ft_run_ip(argv);
}

static void server(void)
{
	struct ft_ia ia;
	struct ft_ep ep;
	struct ft_mr mr;
	struct ft_listener l;
	DAT_RMR_TRIPLET t;
	DAT_EVENT ev;
	uint64_t cmd, seed, len;

	if (ifname == NULL)
		FT_FATAL(
		        "the server needs -L IFNAME, its end of the data link");
	ft_ia_open(ft_opts.ia_name, &ia);
	ft_check_libs();
	FT_DAT_OK(ft_ep_create(&ia, ia.pz, NULL, 16, &ep));
	FT_DAT_OK(ft_mr_create(&ia, ia.pz, (size_t)NW * WS,
	                       DAT_MEM_PRIV_ALL_FLAG, &mr));
	if (ft_oob_setup() != 0)
		FT_FATAL("side channel");
	if (!ft_server_connect(&ia, &ep, &l))
		FT_FATAL("no connection");
	t = ft_rmr_iov(&mr, 0, mr.len);
	FT_REQUIRE(ft_oob_send_rmr(&t) == 0, "server: sent the RMR");
	for (;;) {
		uint64_t r = 0;

		if (ft_oob_recv_u64(&cmd) != 0)
			FT_FATAL("server: the side channel ended");
		if (cmd == CMD_DONE)
			break;
		if (cmd == CMD_DOWN || cmd == CMD_UP) {
			r = link_set(cmd == CMD_DOWN ? "down" : "up") == 0;
			FT_CHECK(r, "server: ip link set %s %s", ifname,
			         cmd == CMD_DOWN ? "down" : "up");
		} else if (cmd == CMD_RECV) {
			int i;

			for (i = 0; i < NW; i++) {
				DAT_LMR_TRIPLET lt =
				        ft_lmr_iov(&mr, (size_t)i * WS, WS);
				DAT_DTO_COOKIE c = {.as_64 = (uint64_t)i};

				FT_DAT_CHECK(dat_ep_post_recv(
				        ep.ep, 1, &lt, c,
				        DAT_COMPLETION_DEFAULT_FLAG));
			}
			r = 1;
			for (i = 0; i < NW && r; i++)
				r = ft_expect_dto(
				        ep.recv_evd, FT_TIMEOUT_US, ep.ep,
				        DAT_DTO_RECEIVE, (uint64_t)i,
				        DAT_DTO_SUCCESS, WS, NULL,
				        "server: a late receive takes "
				        "its message");
		} else if (cmd == CMD_CHECK) {
			long bad;

			if (ft_oob_recv_u64(&seed) != 0 ||
			    ft_oob_recv_u64(&len) != 0 || len > mr.len)
				FT_FATAL("server: a bad check request");
			bad = ft_pattern_mismatch(mr.buf, (size_t)len, seed);
			r = (uint64_t)(bad + 1);
			FT_CHECK(bad < 0,
			         "server: the %llu bytes written are all "
			         "there (first bad byte %ld)",
			         (unsigned long long)len, bad);
		}
		if (ft_oob_send_u64(r) != 0)
			FT_FATAL("server: the side channel ended");
	}
	/* The client's end reaches us once the link is back. */
	if (ft_wait(ep.conn_evd, 20000000, &ev) == DAT_SUCCESS)
		ft_log("server: %s", ft_event_desc(&ev));
	ft_oob_close();
	ft_mr_free(&mr);
	ft_ep_free(&ep);
	ft_listener_free(&l);
	ft_ia_close(&ia);
}

static uint64_t command(uint64_t cmd)
{
	uint64_t r = 0;

	if (ft_oob_send_u64(cmd) != 0 || ft_oob_recv_u64(&r) != 0)
		FT_FATAL("client: the side channel ended");
	return r;
}

static void post_writes(struct ft_ep *ep, struct ft_mr *mr,
                        const DAT_RMR_TRIPLET *rt, int first, int n,
                        uint64_t cookie0)
{
	int i;

	for (i = first; i < first + n; i++) {
		DAT_LMR_TRIPLET lt = ft_lmr_iov(mr, (size_t)i * WS, WS);
		DAT_RMR_TRIPLET r = *rt;
		DAT_DTO_COOKIE c = {.as_64 = cookie0 + (uint64_t)i};
		DAT_RETURN ret;

		r.virtual_address += (DAT_VADDR)i * WS;
		r.segment_length = WS;
		ret = dat_ep_post_rdma_write(ep->ep, 1, &lt, c, &r,
		                             DAT_COMPLETION_DEFAULT_FLAG);
		if (ret != DAT_SUCCESS)
			FT_FATAL("dat_ep_post_rdma_write #%d = %s", i,
			         ft_ret_str(ret));
	}
}

/* The link goes down and comes back: nothing is lost. */
static void case_back(struct ft_ep *ep, struct ft_mr *mr,
                      const DAT_RMR_TRIPLET *rt)
{
	DAT_EVENT ev;
	bool ok = true;
	int i;

	ft_log("client: the link goes down for %ld ms and comes back",
	       bound_ms / 3);
	ft_fill(mr->buf, mr->len, 0xbac);
	post_writes(ep, mr, rt, 0, NW, 1000);
	FT_REQUIRE(command(CMD_DOWN) == 1, "client: the link is down");
	usleep((useconds_t)(bound_ms / 3 * 1000));
	FT_REQUIRE(command(CMD_UP) == 1, "client: the link is back");
	for (i = 0; i < NW && ok; i++)
		ok = ft_expect_dto(
		        ep->req_evd, (DAT_TIMEOUT)(bound_ms * 2000 + 10000000),
		        ep->ep, DAT_DTO_RDMA_WRITE, 1000 + (uint64_t)i,
		        DAT_DTO_SUCCESS, WS, &ev,
		        "client: a write across the outage succeeds, "
		        "in posting order");
	FT_CHECK(ok, "client: all %d writes succeeded", NW);
	ft_expect_empty(ep->conn_evd,
	                "client: no connection event for an outage shorter "
	                "than the bound");
	if (ft_oob_send_u64(CMD_CHECK) != 0 || ft_oob_send_u64(0xbac) != 0 ||
	    ft_oob_send_u64((uint64_t)NW * WS) != 0)
		FT_FATAL("client: the side channel ended");
	{
		uint64_t r = 0;

		if (ft_oob_recv_u64(&r) != 0)
			FT_FATAL("client: the side channel ended");
		FT_CHECK(r == 0, "client: the server has every byte");
	}
}

/* Sends to a peer with no receive posted: alive, never BROKEN. */
static void case_norecv(struct ft_ep *ep, struct ft_mr *mr)
{
	DAT_EVENT ev;
	bool ok = true;
	int i;

	ft_log("client: %d sends, no receive posted for %ld ms", NW,
	       2 * bound_ms);
	ft_fill(mr->buf, mr->len, 0x5e9d);
	for (i = 0; i < NW; i++) {
		DAT_LMR_TRIPLET lt = ft_lmr_iov(mr, (size_t)i * WS, WS);
		DAT_DTO_COOKIE c = {.as_64 = 3000 + (uint64_t)i};

		FT_DAT_OK(dat_ep_post_send(ep->ep, 1, &lt, c,
		                           DAT_COMPLETION_DEFAULT_FLAG));
	}
	usleep((useconds_t)(2 * bound_ms * 1000));
	ft_expect_empty(ep->conn_evd,
	                "client: a peer with no receive posted is not "
	                "taken for dead");
	FT_CHECK(ft_oob_send_u64(CMD_RECV) == 0, "client: receives asked");
	for (i = 0; i < NW && ok; i++) {
		ok = ft_wait(ep->req_evd, FT_TIMEOUT_US, &ev) == DAT_SUCCESS &&
		     ev.event_number == DAT_DTO_COMPLETION_EVENT &&
		     ev.event_data.dto_completion_event_data.status ==
		             DAT_DTO_SUCCESS &&
		     ev.event_data.dto_completion_event_data.user_cookie
		                     .as_64 == 3000 + (uint64_t)i;
		FT_CHECK(ok, "client: send #%d completes in order: %s", i,
		         ft_event_desc(&ev));
	}
	{
		uint64_t r = 0;

		if (ft_oob_recv_u64(&r) != 0)
			FT_FATAL("client: the side channel ended");
		FT_CHECK(r == 1, "client: the server took every message");
	}
}

/* The link goes down for good: BROKEN within the bound. */
static void case_lost(struct ft_ep *ep, struct ft_mr *mr,
                      const DAT_RMR_TRIPLET *rt)
{
	DAT_EVENT ev;
	DAT_RETURN ret;
	uint64_t t0, ms, next = 2000 + NW_FIRST;
	int i, transport = 0, flushed = 0, success = 0, order = 1;
	int after_err = 0, bad_after = 0;

	ft_log("client: the link goes down for good");
	ft_fill(mr->buf, mr->len, 0x105e);
	post_writes(ep, mr, rt, 0, NW_FIRST, 2000);
	for (i = 0; i < NW_FIRST; i++)
		ft_expect_dto(ep->req_evd, FT_TIMEOUT_US, ep->ep,
		              DAT_DTO_RDMA_WRITE, 2000 + (uint64_t)i,
		              DAT_DTO_SUCCESS, WS, NULL,
		              "client: a write before the loss succeeds");
	FT_REQUIRE(command(CMD_DOWN) == 1, "client: the link is down");
	t0 = ft_now_us();
	post_writes(ep, mr, rt, NW_FIRST, NW - NW_FIRST, 2000);
	ret = ft_wait(ep->conn_evd, (DAT_TIMEOUT)(bound_ms * 3000 + 10000000),
	              &ev);
	ms = (ft_now_us() - t0) / 1000;
	FT_CHECK(ret == DAT_SUCCESS &&
	                 ev.event_number == DAT_CONNECTION_EVENT_BROKEN,
	         "client: the lost link ends the connection BROKEN (%s)",
	         ret == DAT_SUCCESS ? ft_event_desc(&ev) : ft_ret_str(ret));
	ft_log("client: %s %llu ms after the link went down (bound %ld ms)",
	       ret == DAT_SUCCESS ? ft_event_str(ev.event_number)
	                          : "no connection event",
	       (unsigned long long)ms, bound_ms);
	FT_CHECK(ret == DAT_SUCCESS && (long)ms <= bound_ms + 1000,
	         "client: within the bound: %llu ms <= %ld + 1000 ms",
	         (unsigned long long)ms, bound_ms);
	for (i = NW_FIRST; i < NW; i++) {
		DAT_DTO_COMPLETION_EVENT_DATA *d;

		ret = ft_wait(ep->req_evd, FT_TIMEOUT_US, &ev);
		if (ret != DAT_SUCCESS ||
		    ev.event_number != DAT_DTO_COMPLETION_EVENT) {
			FT_CHECK(false, "client: write #%d completes: %s", i,
			         ret == DAT_SUCCESS ? ft_event_desc(&ev)
			                            : ft_ret_str(ret));
			break;
		}
		d = &ev.event_data.dto_completion_event_data;
		if (d->user_cookie.as_64 != next)
			order = 0;
		next = d->user_cookie.as_64 + 1;
		if (d->status == DAT_DTO_SUCCESS) {
			success++;
			bad_after |= after_err;
		} else if (d->status == DAT_DTO_ERR_TRANSPORT) {
			transport++;
			bad_after |= after_err;
			after_err = 1;
		} else if (d->status == DAT_DTO_ERR_FLUSHED) {
			flushed++;
			after_err = 1;
		} else {
			FT_CHECK(false, "client: write %llu: %s",
			         (unsigned long long)d->user_cookie.as_64,
			         ft_event_desc(&ev));
		}
	}
	ft_log("client: the %d writes outstanding: %d succeeded, %d "
	       "transport error, %d flushed",
	       NW - NW_FIRST, success, transport, flushed);
	FT_CHECK(order, "client: the writes complete in posting order");
	FT_CHECK(transport == 1,
	         "client: the first write outstanding completes with "
	         "DAT_DTO_ERR_TRANSPORT (%d did)",
	         transport);
	FT_CHECK(!bad_after && success + transport + flushed == NW - NW_FIRST,
	         "client: the rest are flushed, after it");
	ft_expect_empty(ep->req_evd, "client: nothing more on the request EVD");
}

static void client(void)
{
	struct ft_ia ia;
	struct ft_ep ep;
	struct ft_mr mr;
	DAT_EP_ATTR attr;
	DAT_RMR_TRIPLET rt;

	ft_ia_open(ft_opts.ia_name, &ia);
	ft_check_libs();
	ft_ep_attr_default(&ia, &attr);
	attr.max_request_dtos = NW + 8;
	FT_DAT_OK(ft_ep_create(&ia, ia.pz, &attr, 2 * NW, &ep));
	FT_DAT_OK(ft_mr_create(&ia, ia.pz, (size_t)NW * WS,
	                       DAT_MEM_PRIV_ALL_FLAG, &mr));
	if (ft_oob_setup() != 0)
		FT_FATAL("side channel");
	if (!ft_client_connect(&ia, &ep))
		FT_FATAL("no connection");
	FT_REQUIRE(ft_oob_recv_rmr(&rt) == 0, "client: received the RMR");
	case_back(&ep, &mr, &rt);
	case_norecv(&ep, &mr);
	case_lost(&ep, &mr, &rt);
	/* The link comes back for the server's end of the story. */
	FT_CHECK(command(CMD_UP) == 1, "client: the link is back");
	(void)ft_oob_send_u64(CMD_DONE);
	ft_oob_close();
	ft_mr_free(&mr);
	ft_ep_free(&ep);
	ft_ia_close(&ia);
}

int main(int argc, char **argv)
{
	static const struct ft_extra_opts extra = {
	        .optstring = "L:",
	        .handler = opt_handler,
	        .usage = "  -L IFNAME the server's end of the data link, which "
	                 "it sets down and up\n",
	};
	const char *b = getenv("DAT_LINKLOSS_BOUND");

	ft_init(argc, argv, "dat_linkloss",
	        "a lost link ends a busy connection within the bound; a link "
	        "back in time loses nothing",
	        &extra);
	if (b == NULL)
		b = getenv("DAPL_OFI_LINK_TIMEOUT");
	bound_ms = b != NULL ? strtol(b, NULL, 10) : 0;
	if (bound_ms <= 0)
		FT_FATAL(
		        "set DAT_LINKLOSS_BOUND or DAPL_OFI_LINK_TIMEOUT (ms)");
	if (ft_is_client())
		client();
	else
		server();
	return ft_finish();
}
