/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * dat_rdma: client/server RDMA between two processes.  The server binds an
 * RMR over the first half of a buffer and sends the client, over the side
 * channel, the RMR triplet and an LMR triplet (the LMR's own rmr_context)
 * for the second half.  For each size (-S, default 1 B .. 1 MiB) the
 * client RDMA-Writes through the RMR and the server finds the bytes by
 * polling its memory, the server fills the window and the client
 * RDMA-Reads it (when DAT_IB_RDMA_READ is TRUE), and the client writes
 * through the LMR context.  Then a write followed by a send: when the
 * server receives the send, the written data is in place.  Last, the
 * server unbinds the RMR and the client's write through the old context
 * completes in error with the server's bytes unchanged.
 *
 * Usage: dat_rdma [-D IA] [-E PORT]            (server)
 *        dat_rdma [-D IA] [-E PORT] 127.0.0.1  (client)
 */
#include "config.h"

#include <string.h>
#include <unistd.h>

#include "shared.h"

enum {
	CMD_WRITTEN = 1,
	CMD_FILLED,
	CMD_OK,
	CMD_BAD,
	CMD_UNBOUND,
	CMD_DONE,
	CMD_GO
};

/*
 * Writes into a target that polls its EVDs once a round and its memory in
 * between, and how long they may take on average: well above what they
 * take (tcp about 0.1 ms, sockets, whose own engine acknowledges writes,
 * about 5 ms), well below a provider that left them to its idle naps.
 */
#define POLL_ROUNDS   40
#define POLL_ROUND_US 20000

static struct ft_ia ia;
static struct ft_ep ep;
static struct ft_mr buf; /* server: the target; client: the source */
static size_t half;
static size_t sizes[FT_MAX_SIZES];
static int nsizes;
static bool have_read;

static uint64_t cmd_recv(void)
{
	uint64_t v = 0;

	FT_REQUIRE(ft_oob_recv_u64(&v) == 0, "side channel message");
	return v;
}

static void cmd_send(uint64_t v)
{
	FT_REQUIRE(ft_oob_send_u64(v) == 0, "side channel message");
}

static DAT_RMR_CONTEXT bind_window(DAT_RMR_HANDLE rmr, size_t len,
                                   DAT_MEM_PRIV_FLAGS priv, uint64_t cookie)
{
	DAT_LMR_TRIPLET w = ft_lmr_iov(&buf, 0, len);
	DAT_RMR_CONTEXT ctx = 0;
	DAT_RMR_COOKIE ck;
	DAT_EVENT ev;

	ck.as_64 = cookie;
	FT_DAT_OK(dat_rmr_bind(rmr, buf.lmr, &w, priv, DAT_VA_TYPE_VA, ep.ep,
	                       ck, DAT_COMPLETION_DEFAULT_FLAG, &ctx));
	if (ft_expect_event(ep.req_evd, FT_TIMEOUT_US,
	                    DAT_RMR_BIND_COMPLETION_EVENT, NULL, &ev,
	                    "server: RMR bind completes"))
		FT_CHECK(ev.event_data.rmr_completion_event_data.rmr_handle ==
		                         rmr &&
		                 ev.event_data.rmr_completion_event_data
		                                 .user_cookie.as_64 == cookie &&
		                 ev.event_data.rmr_completion_event_data
		                                 .status ==
		                         DAT_RMR_BIND_SUCCESS,
		         "server: bind completion names the RMR and cookie");
	return ctx;
}

static void server(void)
{
	struct ft_listener l;
	struct ft_mr note;
	DAT_RMR_HANDLE rmr;
	DAT_RMR_CONTEXT ctx;
	DAT_RMR_TRIPLET win, lmr2;
	DAT_LMR_TRIPLET nt;
	DAT_DTO_COOKIE ck;
	uint64_t v, t0, us;
	int s, r;

	FT_DAT_OK(dat_rmr_create(ia.pz, &rmr));
	FT_DAT_OK(ft_mr_create(&ia, ia.pz, 64, DAT_MEM_PRIV_ALL_FLAG, &note));
	nt = ft_lmr_iov(&note, 0, 64);
	ck.as_64 = 0x51;
	FT_DAT_OK(dat_ep_post_recv(ep.ep, 1, &nt, ck,
	                           DAT_COMPLETION_DEFAULT_FLAG));
	FT_REQUIRE(ft_server_connect(&ia, &ep, &l), "connected");
	ctx = bind_window(rmr, half,
	                  DAT_MEM_PRIV_REMOTE_WRITE_FLAG |
	                          DAT_MEM_PRIV_REMOTE_READ_FLAG,
	                  0x41);
	win.virtual_address = (DAT_VADDR)(uintptr_t)buf.buf;
	win.segment_length = (DAT_SEG_LENGTH)half;
	win.rmr_context = ctx;
	lmr2 = ft_rmr_iov(&buf, half, half);
	FT_REQUIRE(ft_oob_send_rmr(&win) == 0 && ft_oob_send_rmr(&lmr2) == 0,
	           "server: sent the RMR window and the LMR triplet");

	v = cmd_recv();
	nsizes = (int)v;
	for (s = 0; s < nsizes; s++)
		sizes[s] = (size_t)cmd_recv();
	for (s = 0; s < nsizes; s++) {
		size_t len = sizes[s];

		FT_REQUIRE(cmd_recv() == CMD_WRITTEN, "client wrote %zu", len);
		cmd_send(FT_CHECK(ft_poll_pattern(buf.buf, len, 100 + len,
		                                  5000000),
		                  "server: the client's %zu-byte RDMA write "
		                  "through the RMR is in memory",
		                  len)
		                 ? CMD_OK
		                 : CMD_BAD);
		if (have_read) {
			ft_fill(buf.buf, len, 200 + len);
			cmd_send(CMD_FILLED);
			FT_REQUIRE(cmd_recv() == CMD_DONE, "client read %zu",
			           len);
		}
		FT_REQUIRE(cmd_recv() == CMD_WRITTEN, "client wrote %zu", len);
		cmd_send(FT_CHECK(ft_poll_pattern((char *)buf.buf + half, len,
		                                  300 + len, 5000000),
		                  "server: the client's %zu-byte RDMA write "
		                  "through the LMR context is in memory",
		                  len)
		                 ? CMD_OK
		                 : CMD_BAD);
	}

	/* Write then send: the data is there when the message is. */
	memset(buf.buf, 0, half);
	cmd_send(CMD_DONE);
	ft_expect_dto(ep.recv_evd, FT_TIMEOUT_US, ep.ep, DAT_DTO_RECEIVE, 0x51,
	              DAT_DTO_SUCCESS, 8, NULL,
	              "server: the send after the write arrives");
	FT_CHECK(ft_pattern_mismatch(buf.buf, half, 400) < 0,
	         "server: the %zu bytes written before it are all in place",
	         half);

	/*
	 * A target that polls its EVDs now and then and its memory in
	 * between (OFED's dtest -W reaps its own writes so): none of its
	 * calls lands the client's next write; the provider has to, and
	 * soon.
	 */
	t0 = ft_now_us();
	for (r = 1; r <= POLL_ROUNDS; r++) {
		DAT_EVENT e;

		(void)dat_evd_dequeue(ep.recv_evd, &e);
		if (ep.req_evd != ep.recv_evd)
			(void)dat_evd_dequeue(ep.req_evd, &e);
		cmd_send(CMD_GO);
		if (!ft_poll_pattern(buf.buf, 64, 700 + (uint64_t)r, 5000000))
			break;
	}
	us = ft_now_us() - t0;
	FT_CHECK(r > POLL_ROUNDS,
	         "server: %d writes found in memory polled between dequeues "
	         "(%d found)",
	         POLL_ROUNDS, r - 1);
	FT_CHECK(us < POLL_ROUNDS * POLL_ROUND_US,
	         "server: they took %llu us, %llu us a round (< %d)",
	         (unsigned long long)us, (unsigned long long)us / POLL_ROUNDS,
	         POLL_ROUND_US);

	/* Revoke: unbind, and the old context must not work any more. */
	ft_fill(buf.buf, 2 * half, 500);
	(void)bind_window(rmr, 0, DAT_MEM_PRIV_REMOTE_WRITE_FLAG, 0x42);
	cmd_send(CMD_UNBOUND);
	FT_REQUIRE(cmd_recv() == CMD_DONE, "client tried the old context");
	usleep(100000);
	FT_CHECK(ft_pattern_mismatch(buf.buf, 2 * half, 500) < 0,
	         "server: a write through the unbound RMR's old context "
	         "changed nothing");
	FT_DAT_CHECK(dat_rmr_free(rmr));
	(void)dat_ep_disconnect(ep.ep, DAT_CLOSE_ABRUPT_FLAG);
	ft_listener_free(&l);
	ft_mr_free(&note);
}

static void client(void)
{
	static const size_t defaults[] = {1, 64, 4096, 65536, 1 << 20};
	DAT_RMR_TRIPLET win, lmr2, r;
	DAT_LMR_TRIPLET t;
	DAT_DTO_COOKIE ck;
	DAT_EVENT ev;
	DAT_RETURN ret;
	struct ft_mr note;
	int s, rounds;

	FT_REQUIRE(ft_client_connect(&ia, &ep), "connected");
	FT_REQUIRE(ft_oob_recv_rmr(&win) == 0 && ft_oob_recv_rmr(&lmr2) == 0,
	           "client: received the RMR window and the LMR triplet");
	ft_log("client: window %#llx +%u ctx %#x, LMR %#llx +%u ctx %#x",
	       (unsigned long long)win.virtual_address,
	       (unsigned)win.segment_length, (unsigned)win.rmr_context,
	       (unsigned long long)lmr2.virtual_address,
	       (unsigned)lmr2.segment_length, (unsigned)lmr2.rmr_context);
	FT_CHECK(win.segment_length == half && lmr2.segment_length == half,
	         "both ranges are %zu bytes", half);
	nsizes = ft_sizes(defaults, sizeof(defaults) / sizeof(defaults[0]),
	                  half, sizes);
	cmd_send((uint64_t)nsizes);
	for (s = 0; s < nsizes; s++)
		cmd_send(sizes[s]);

	for (s = 0; s < nsizes; s++) {
		size_t len = sizes[s];

		ft_fill(buf.buf, len, 100 + len);
		t = ft_lmr_iov(&buf, 0, len);
		r = win;
		r.segment_length = (DAT_SEG_LENGTH)len;
		ck.as_64 = 0x1000 + (uint64_t)s;
		FT_DAT_CHECK(dat_ep_post_rdma_write(
		        ep.ep, 1, &t, ck, &r, DAT_COMPLETION_DEFAULT_FLAG));
		ft_expect_dto(ep.req_evd, FT_TIMEOUT_US, ep.ep,
		              DAT_DTO_RDMA_WRITE, 0x1000 + (uint64_t)s,
		              DAT_DTO_SUCCESS, (long)len, NULL,
		              "client: RDMA write through the RMR");
		cmd_send(CMD_WRITTEN);
		FT_CHECK(cmd_recv() == CMD_OK,
		         "client: the server saw %zu bytes", len);
		if (have_read) {
			FT_REQUIRE(cmd_recv() == CMD_FILLED, "server filled");
			memset(buf.buf, 0, len);
			ck.as_64 = 0x2000 + (uint64_t)s;
			FT_DAT_CHECK(dat_ep_post_rdma_read(
			        ep.ep, 1, &t, ck, &r,
			        DAT_COMPLETION_DEFAULT_FLAG));
			ft_expect_dto(ep.req_evd, FT_TIMEOUT_US, ep.ep,
			              DAT_DTO_RDMA_READ, 0x2000 + (uint64_t)s,
			              DAT_DTO_SUCCESS, (long)len, NULL,
			              "client: RDMA read through the RMR");
			FT_CHECK(ft_pattern_mismatch(buf.buf, len, 200 + len) <
			                 0,
			         "client: %zu bytes read intact", len);
			cmd_send(CMD_DONE);
		}
		ft_fill(buf.buf, len, 300 + len);
		r = lmr2;
		r.segment_length = (DAT_SEG_LENGTH)len;
		ck.as_64 = 0x3000 + (uint64_t)s;
		FT_DAT_CHECK(dat_ep_post_rdma_write(
		        ep.ep, 1, &t, ck, &r, DAT_COMPLETION_DEFAULT_FLAG));
		ft_expect_dto(ep.req_evd, FT_TIMEOUT_US, ep.ep,
		              DAT_DTO_RDMA_WRITE, 0x3000 + (uint64_t)s,
		              DAT_DTO_SUCCESS, (long)len, NULL,
		              "client: RDMA write through the LMR context");
		cmd_send(CMD_WRITTEN);
		FT_CHECK(cmd_recv() == CMD_OK,
		         "client: the server saw %zu bytes", len);
	}
	if (!have_read)
		FT_WARN("DAT_IB_RDMA_READ is not TRUE: RDMA Read not tested");

	/* Write then send. */
	FT_REQUIRE(cmd_recv() == CMD_DONE, "server ready for write+send");
	FT_DAT_OK(ft_mr_create(&ia, ia.pz, 64, DAT_MEM_PRIV_ALL_FLAG, &note));
	ft_fill(buf.buf, half, 400);
	t = ft_lmr_iov(&buf, 0, half);
	ck.as_64 = 0x4000;
	FT_DAT_CHECK(dat_ep_post_rdma_write(ep.ep, 1, &t, ck, &win,
	                                    DAT_COMPLETION_SUPPRESS_FLAG));
	t = ft_lmr_iov(&note, 0, 8);
	ck.as_64 = 0x4001;
	FT_DAT_CHECK(dat_ep_post_send(ep.ep, 1, &t, ck,
	                              DAT_COMPLETION_DEFAULT_FLAG));
	ft_expect_dto(ep.req_evd, FT_TIMEOUT_US, ep.ep, DAT_DTO_SEND, 0x4001,
	              DAT_DTO_SUCCESS, 8, NULL,
	              "client: send after a suppressed write completes alone");

	/* Writes into a target that polls its memory (see the server). */
	for (rounds = 0; rounds < POLL_ROUNDS; rounds++) {
		if (cmd_recv() != CMD_GO)
			break;
		ft_fill(buf.buf, 64, 700 + (uint64_t)rounds + 1);
		t = ft_lmr_iov(&buf, 0, 64);
		r = win;
		r.segment_length = 64;
		ck.as_64 = 0x6000 + (uint64_t)rounds;
		if (dat_ep_post_rdma_write(ep.ep, 1, &t, ck, &r,
		                           DAT_COMPLETION_DEFAULT_FLAG) !=
		            DAT_SUCCESS ||
		    ft_wait(ep.req_evd, FT_TIMEOUT_US, &ev) != DAT_SUCCESS ||
		    ev.event_number != DAT_DTO_COMPLETION_EVENT ||
		    ev.event_data.dto_completion_event_data.status !=
		            DAT_DTO_SUCCESS)
			break;
	}
	FT_CHECK(rounds == POLL_ROUNDS,
	         "client: %d writes into a target polling its memory "
	         "completed (%d did)",
	         POLL_ROUNDS, rounds);

	/* The old context after the server's unbind. */
	FT_REQUIRE(cmd_recv() == CMD_UNBOUND, "server unbound the RMR");
	ft_fill(buf.buf, 64, 600);
	t = ft_lmr_iov(&buf, 0, 64);
	r = win;
	r.segment_length = 64;
	ck.as_64 = 0x5000;
	ret = dat_ep_post_rdma_write(ep.ep, 1, &t, ck, &r,
	                             DAT_COMPLETION_DEFAULT_FLAG);
	FT_CHECK(ret == DAT_SUCCESS,
	         "client: post through the old context: "
	         "%s",
	         ft_ret_str(ret));
	if (ret == DAT_SUCCESS) {
		memset(&ev, 0, sizeof(ev));
		ret = ft_wait(ep.req_evd, FT_TIMEOUT_US, &ev);
		FT_CHECK(ret == DAT_SUCCESS &&
		                 ev.event_number == DAT_DTO_COMPLETION_EVENT &&
		                 ev.event_data.dto_completion_event_data
		                                 .status != DAT_DTO_SUCCESS,
		         "client: a write through the unbound RMR completes in "
		         "error (%s)",
		         ret == DAT_SUCCESS ? ft_event_desc(&ev)
		                            : ft_ret_str(ret));
		if (ret == DAT_SUCCESS &&
		    ev.event_data.dto_completion_event_data.status !=
		            DAT_DTO_ERR_REMOTE_ACCESS)
			FT_WARN("status %s, DAT_DTO_ERR_REMOTE_ACCESS expected",
			        ft_dto_status_str(
			                ev.event_data.dto_completion_event_data
			                        .status));
	}
	cmd_send(CMD_DONE);
	(void)dat_ep_disconnect(ep.ep, DAT_CLOSE_ABRUPT_FLAG);
	ft_mr_free(&note);
}

int main(int argc, char **argv)
{
	DAT_EP_ATTR attr;
	const char *rr;

	ft_init(argc, argv, "dat_rdma",
	        "client/server RDMA write/read through an RMR and an LMR "
	        "context, write-then-send, revoked RMR",
	        NULL);
	FT_REQUIRE(ft_oob_setup() == 0, "side channel up");
	ft_ia_open(ft_opts.ia_name, &ia);
	ft_check_libs();
	rr = ft_provider_attr(&ia, "DAT_IB_RDMA_READ");
	have_read = rr != NULL && strcmp(rr, "TRUE") == 0;
	half = (size_t)1 << 20;
	if (ft_opts.nsizes)
		half = ft_opts.sizes[ft_opts.nsizes - 1];
	if (half > ia.attr.max_rdma_size)
		half = ia.attr.max_rdma_size;
	if (half < 64)
		half = 64;
	ft_ep_attr_default(&ia, &attr);
	FT_DAT_OK(ft_ep_create(&ia, ia.pz, &attr, 64, &ep));
	FT_DAT_OK(ft_mr_create(&ia, ia.pz, 2 * half, DAT_MEM_PRIV_ALL_FLAG,
	                       &buf));

	if (ft_is_client())
		client();
	else
		server();

	FT_CHECK(ft_oob_sync() == 0, "both sides finished");
	ft_oob_close();
	usleep(50000);
	ft_drain(ep.conn_evd);
	ft_drain(ep.req_evd);
	ft_drain(ep.recv_evd);
	ft_ep_free(&ep);
	ft_mr_free(&buf);
	ft_ia_close(&ia);
	return ft_finish();
}
