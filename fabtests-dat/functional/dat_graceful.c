/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * dat_graceful: a graceful dat_ep_disconnect right after Sends completed
 * loses none of them. A Send that completed successfully has been
 * delivered (DAT, as an InfiniBand RC queue pair), so the peer, which
 * posted a receive for each, must see every one of them complete
 * successfully, in order and intact, before its connection ends: not
 * flushed by a disconnect that overtook the data (on RDM fabrics the
 * end travels on the control channel, the data on the fabric).
 *
 * Two connections, each of -I messages (default 64, at most 64) of sizes
 * cycling through 1 B .. 128 KiB (more than rxm's 16 KiB eager limit):
 *   1. the client (active side) posts them back to back, waits for their
 *      successful completions and disconnects gracefully at once; the
 *      server (passive side), which does not dequeue a receive before,
 *      waits for DISCONNECTED and then finds all of them in its receive
 *      EVD;
 *   2. the same with the server sending and disconnecting, the client
 *      receiving.
 * -S sets the sizes cycled through.
 *
 * Usage: dat_graceful [-D IA] [-E PORT] [-I K] [-S SIZES]            (server)
 *        dat_graceful [-D IA] [-E PORT] [-I K] [-S SIZES] 127.0.0.1  (client)
 */
#include "config.h"

#include <string.h>

#include "shared.h"

#define K_MAX 64

static struct ft_ia ia;
static struct ft_ep eps[2];
static struct ft_mr sbuf, rbuf;
static size_t sizes[FT_MAX_SIZES];
static int nsizes;
static size_t slot; /* each message's room: the largest size */
static long k;

static size_t msg_len(long i)
{
	return sizes[i % nsizes];
}

static uint64_t msg_seed(int round, long i)
{
	return ((uint64_t)(round + 1) << 32) | (uint64_t)i;
}

static void post_recvs(struct ft_ep *ep)
{
	long i;

	for (i = 0; i < k; i++) {
		DAT_LMR_TRIPLET t = ft_lmr_iov(&rbuf, (size_t)i * slot, slot);
		DAT_DTO_COOKIE c;

		c.as_64 = (uint64_t)i;
		memset((char *)rbuf.buf + (size_t)i * slot, 0, slot);
		FT_DAT_OK(dat_ep_post_recv(ep->ep, 1, &t, c,
		                           DAT_COMPLETION_DEFAULT_FLAG));
	}
}

/* The next Send's completion, which must be successful and in order. */
static bool send_done(struct ft_ep *ep, long i)
{
	return ft_expect_dto(ep->req_evd, FT_TIMEOUT_US, ep->ep, DAT_DTO_SEND,
	                     (uint64_t)i, DAT_DTO_SUCCESS, (long)msg_len(i),
	                     NULL, "a Send completes");
}

/*
 * Post the K Sends back to back, wait for each to complete successfully,
 * then disconnect gracefully at once and wait for DISCONNECTED. A post
 * the fabric has no room for (DAT_INSUFFICIENT_RESOURCES: rxm's queue of
 * segmented Sends) waits for the oldest Send's completion and is tried
 * again, as a consumer would.
 */
static void send_and_end(struct ft_ep *ep, int round, const char *who)
{
	long i, done = 0, ok = 0;

	for (i = 0; i < k; i++) {
		DAT_LMR_TRIPLET t =
		        ft_lmr_iov(&sbuf, (size_t)i * slot, msg_len(i));
		DAT_DTO_COOKIE c;
		DAT_RETURN ret;

		ft_fill((char *)sbuf.buf + (size_t)i * slot, msg_len(i),
		        msg_seed(round, i));
		c.as_64 = (uint64_t)i;
		while ((ret = dat_ep_post_send(ep->ep, 1, &t, c,
		                               DAT_COMPLETION_DEFAULT_FLAG)) !=
		               DAT_SUCCESS &&
		       DAT_GET_TYPE(ret) == DAT_INSUFFICIENT_RESOURCES &&
		       done < i)
			if (send_done(ep, done++))
				ok++;
		FT_REQUIRE(ret == DAT_SUCCESS, "%s: post Send %ld: %s", who, i,
		           ft_ret_str(ret));
	}
	for (; done < k; done++)
		if (send_done(ep, done))
			ok++;
	FT_REQUIRE(ok == k, "%s: %ld of %ld Sends completed successfully", who,
	           ok, k);
	FT_DAT_OK(dat_ep_disconnect(ep->ep, DAT_CLOSE_GRACEFUL_FLAG));
	FT_CHECK(ft_expect_event(ep->conn_evd, FT_TIMEOUT_US,
	                         DAT_CONNECTION_EVENT_DISCONNECTED, ep->ep,
	                         NULL, "the sender's disconnect completes"),
	         "%s: DISCONNECTED after its graceful disconnect", who);
}

/* Wait for the peer's end, then find every message in the receive EVD. */
static void end_and_receive(struct ft_ep *ep, int round, const char *who)
{
	long i, ok = 0, flushed = 0, other = 0;

	FT_CHECK(ft_expect_event(ep->conn_evd, FT_TIMEOUT_US,
	                         DAT_CONNECTION_EVENT_DISCONNECTED, ep->ep,
	                         NULL, "the peer's disconnect arrives"),
	         "%s: DISCONNECTED for the peer's graceful disconnect", who);
	for (i = 0; i < k; i++) {
		DAT_EVENT ev;
		DAT_RETURN ret = dat_evd_dequeue(ep->recv_evd, &ev);
		const DAT_DTO_COMPLETION_EVENT_DATA *d =
		        &ev.event_data.dto_completion_event_data;

		if (ret != DAT_SUCCESS) {
			FT_CHECK(false,
			         "%s: receive %ld completed before "
			         "DISCONNECTED: %s",
			         who, i, ft_ret_str(ret));
			break;
		}
		if (ev.event_number == DAT_DTO_COMPLETION_EVENT &&
		    d->status == DAT_DTO_ERR_FLUSHED) {
			flushed++;
			continue;
		}
		if (ev.event_number == DAT_DTO_COMPLETION_EVENT &&
		    d->status == DAT_DTO_SUCCESS &&
		    d->operation == DAT_DTO_RECEIVE &&
		    d->user_cookie.as_64 == (uint64_t)i &&
		    d->transfered_length == msg_len(i) &&
		    ft_pattern_mismatch((char *)rbuf.buf + (size_t)i * slot,
		                        msg_len(i), msg_seed(round, i)) < 0) {
			ok++;
			continue;
		}
		if (other++ == 0)
			ft_log("%s: receive %ld: %s", who, i,
			       ft_event_desc(&ev));
	}
	FT_CHECK(ok == k,
	         "%s: all %ld receives completed successfully, in order and "
	         "intact, before DISCONNECTED (%ld ok, %ld flushed, %ld "
	         "other)",
	         who, k, ok, flushed, other);
}

static void server(void)
{
	struct ft_listener l;
	DAT_EVENT ev;
	int round;

	FT_DAT_OK(ft_listen(&ia, &l));
	FT_REQUIRE(ft_oob_send_addr(ia.attr.ia_address_ptr, l.qual) == 0,
	           "sent IA address and qualifier");
	for (round = 0; round < 2; round++) {
		struct ft_ep *ep = &eps[round];

		if (round == 0)
			post_recvs(ep);
		FT_REQUIRE(ft_expect_event(l.cr_evd, FT_TIMEOUT_US,
		                           DAT_CONNECTION_REQUEST_EVENT, NULL,
		                           &ev, "the client's request arrives"),
		           "a request");
		FT_DAT_OK(dat_cr_accept(
		        ev.event_data.cr_arrival_event_data.cr_handle, ep->ep,
		        0, NULL));
		FT_REQUIRE(ft_expect_event(ep->conn_evd, FT_TIMEOUT_US,
		                           DAT_CONNECTION_EVENT_ESTABLISHED,
		                           ep->ep, NULL, "server: established"),
		           "connected");
		if (round == 0)
			end_and_receive(ep, round, "server (passive) receives");
		else
			send_and_end(ep, round, "server (passive) sends");
		FT_REQUIRE(ft_oob_sync() == 0, "round %d over", round);
	}
	ft_listener_free(&l);
}

static void client(void)
{
	struct sockaddr_storage ss;
	DAT_CONN_QUAL qual;
	int round;

	FT_REQUIRE(ft_oob_recv_addr(&ss, &qual) == 0,
	           "the server's IA address and qualifier");
	for (round = 0; round < 2; round++) {
		struct ft_ep *ep = &eps[round];

		if (round == 1)
			post_recvs(ep);
		FT_DAT_OK(dat_ep_connect(
		        ep->ep, (DAT_IA_ADDRESS_PTR)&ss, qual, FT_TIMEOUT_US, 0,
		        NULL, DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG));
		FT_REQUIRE(ft_expect_event(ep->conn_evd, FT_TIMEOUT_US,
		                           DAT_CONNECTION_EVENT_ESTABLISHED,
		                           ep->ep, NULL, "client: established"),
		           "connected");
		if (round == 0)
			send_and_end(ep, round, "client (active) sends");
		else
			end_and_receive(ep, round, "client (active) receives");
		FT_REQUIRE(ft_oob_sync() == 0, "round %d over", round);
	}
}

int main(int argc, char **argv)
{
	static const size_t defaults[] = {1, 1000, 4096, 20000, 65536, 131072};
	DAT_EP_ATTR attr;
	int s;

	ft_init(argc, argv, "dat_graceful",
	        "a graceful disconnect right after Sends completed loses none "
	        "of their messages, either side",
	        NULL);
	FT_REQUIRE(ft_oob_setup() == 0, "side channel up");
	ft_ia_open(ft_opts.ia_name, &ia);
	ft_check_libs();
	k = ft_iterations(K_MAX);
	FT_REQUIRE(k > 0 && k <= K_MAX, "-I %ld: 1 to %d messages", k, K_MAX);
	nsizes = ft_sizes(defaults, sizeof(defaults) / sizeof(defaults[0]),
	                  (size_t)ia.attr.max_message_size, sizes);
	FT_REQUIRE(nsizes > 0, "%d sizes", nsizes);
	for (s = 0, slot = 1; s < nsizes; s++)
		if (sizes[s] > slot)
			slot = sizes[s];
	ft_ep_attr_default(&ia, &attr);
	FT_REQUIRE(attr.max_recv_dtos >= k && attr.max_request_dtos >= k,
	           "the EP takes %ld receives and requests", k);
	for (s = 0; s < 2; s++)
		FT_DAT_OK(ft_ep_create(&ia, ia.pz, &attr, 2 * K_MAX + 8,
		                       &eps[s]));
	FT_DAT_OK(ft_mr_create(&ia, ia.pz, slot * (size_t)k,
	                       DAT_MEM_PRIV_ALL_FLAG, &sbuf));
	FT_DAT_OK(ft_mr_create(&ia, ia.pz, slot * (size_t)k,
	                       DAT_MEM_PRIV_ALL_FLAG, &rbuf));

	if (ft_is_client())
		client();
	else
		server();

	FT_CHECK(ft_oob_sync() == 0, "both sides finished");
	ft_oob_close();
	for (s = 0; s < 2; s++)
		ft_ep_free(&eps[s]);
	ft_mr_free(&sbuf);
	ft_mr_free(&rbuf);
	ft_ia_close(&ia);
	return ft_finish();
}
