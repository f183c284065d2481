/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * dat_bw: bandwidth and message rate with a window of outstanding
 * operations (-W), the client sending, writing or reading.
 *
 * -t send   the server keeps 2 x window receives posted and acknowledges
 *           every window messages it takes (an 8-byte send carrying its
 *           count); the client never has more sends in flight than the
 *           server is known to have receives for, nor more than the window.
 * -t write  the client keeps the window full of RDMA writes into the
 * -t read   server's buffer (or reads from it); the server only polls its
 *           completion queue. After the last completion the client sends
 *           'done' and the server answers, so the time covers data that
 *           has landed.
 * -t writeimm  as -t send with RDMA writes with immediate data: the server
 *           counts the completions that report them (DAT: on receives it
 *           keeps posted; --raw: fi_writedata's CQ entries) and acks.
 * -t atomic as -t write with 64-bit fetch-and-adds of 1 to a counter in
 *           the server's memory; the server checks it went up by as many.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"

static const char bw_desc[] =
        "Bandwidth and message rate over DAT (or libfabric with --raw): "
        "sends (-t send),\nRDMA writes (-t write), RDMA reads (-t read), "
        "RDMA writes with immediate\ndata (-t writeimm) or 64-bit "
        "fetch-and-adds (-t atomic) with -W operations in flight.";

#define BW_ACK_RECVS 4

struct bw_state {
	struct bench_ctx *ctx;
	struct bench_conn *conn;
	struct bench_buf *b;
	size_t size;
	long window;
	struct bench_deadline d;
};

static long bw_min(long a, long b)
{
	return a < b ? a : b;
}

static uint64_t bw_ack_value(struct bw_state *s, uint32_t slot)
{
	uint64_t v;

	memcpy(&v, (char *)s->b->mr.buf + bench_ack_rx_off(s->b, slot),
	       sizeof(v));
	return v;
}

static int bw_post_ack_recv(struct bw_state *s, uint32_t slot)
{
	return s->ctx->ops->post_recv(s->conn, &s->b->mr,
	                              bench_ack_rx_off(s->b, slot), 8,
	                              BENCH_COOKIE(BENCH_TAG_ACK, slot));
}

static int bw_post_ack_send(struct bw_state *s, uint32_t slot, uint64_t v)
{
	memcpy((char *)s->b->mr.buf + bench_ack_tx_off(s->b, slot), &v,
	       sizeof(v));
	return s->ctx->ops->post_send(s->conn, &s->b->mr,
	                              bench_ack_tx_off(s->b, slot), 8,
	                              BENCH_COOKIE(BENCH_TAG_ACK, slot));
}

static int bw_poll(struct bw_state *s, struct bench_comp *c, const char *what)
{
	int ret;

	ret = s->ctx->ops->poll(s->ctx, c);
	if (ret > 0)
		s->d.progress = true;
	else if (ret == 0 && bench_deadline_hit(&s->d))
		return bench_deadline_fail(&s->d, s->ctx, what);
	return ret;
}

/* ---- send ---------------------------------------------------------------- */

/* A data message: a send, or with imm a write with immediate data. */
static int bw_post_data(struct bw_state *s, bool imm, long n)
{
	if (imm)
		return s->ctx->ops->post_writeimm(
		        s->conn, &s->b->mr, s->b->max, s->size, s->b->peer.addr,
		        s->b->peer.key, (uint32_t)n,
		        BENCH_COOKIE(BENCH_TAG_DATA, 0));
	return s->ctx->ops->post_send(s->conn, &s->b->mr, s->b->max, s->size,
	                              BENCH_COOKIE(BENCH_TAG_DATA, 0));
}

/* A receive for the next data message. */
static int bw_post_data_recv(struct bw_state *s, bool imm)
{
	if (imm)
		return s->ctx->ops->post_recv_imm(
		        s->conn, &s->b->mr, 0, BENCH_COOKIE(BENCH_TAG_DATA, 0));
	return s->ctx->ops->post_recv(s->conn, &s->b->mr, 0, s->size,
	                              BENCH_COOKIE(BENCH_TAG_DATA, 0));
}

static int bw_send_client(struct bw_state *s, bool imm, long count,
                          struct timespec *start, struct timespec *end)
{
	long acks_expected = count / s->window + (count % s->window != 0);
	long acks_posted = 0, sent = 0, done = 0, acked = 0, room;
	struct bench_comp c;
	int ret;

	for (; acks_posted < bw_min(BW_ACK_RECVS, acks_expected);
	     acks_posted++) {
		ret = bw_post_ack_recv(s, (uint32_t)acks_posted);
		if (ret)
			return ret;
	}
	ret = bench_oob_sync(s->ctx);
	if (ret)
		return ret;

	room = bw_min(2 * s->window, count);
	bench_deadline_start_ctx(&s->d, s->ctx);
	bench_now(start);
	while (done < count || acked < count) {
		while (sent < room && sent - done < s->window) {
			ret = bw_post_data(s, imm, sent);
			if (ret)
				return ret;
			sent++;
		}
		ret = bw_poll(s, &c, "a send completion or an ack");
		if (ret < 0)
			return ret;
		if (ret == 0)
			continue;
		if (c.op == BENCH_OP_SEND || c.op == BENCH_OP_WRITE ||
		    c.op == BENCH_OP_WRITE_IMM) {
			bench_progress_at(++done);
		} else if (c.op == BENCH_OP_RECV &&
		           BENCH_COOKIE_TAG(c.ctx) == BENCH_TAG_ACK) {
			acked = (long)bw_ack_value(s, BENCH_COOKIE_IDX(c.ctx));
			if (acked > count || acked < 0) {
				BENCH_ERR("bad ack %ld", acked);
				return -EPROTO;
			}
			room = bw_min(acked + 2 * s->window, count);
			if (acks_posted < acks_expected) {
				ret = bw_post_ack_recv(s,
				                       BENCH_COOKIE_IDX(c.ctx));
				if (ret)
					return ret;
				acks_posted++;
			}
		} else {
			BENCH_ERR("unexpected %s completion",
			          bench_op_name(c.op));
			return -EPROTO;
		}
	}
	bench_now(end);
	return 0;
}

static int bw_send_server(struct bw_state *s, bool imm, long count)
{
	long posted, received = 0, acks_sent = 0, acks_pending = 0;
	struct bench_comp c;
	int ret;

	for (posted = 0; posted < bw_min(2 * s->window, count); posted++) {
		ret = bw_post_data_recv(s, imm);
		if (ret)
			return ret;
	}
	ret = bench_oob_sync(s->ctx);
	if (ret)
		return ret;

	bench_deadline_start_ctx(&s->d, s->ctx);
	while (received < count || acks_pending) {
		ret = bw_poll(s, &c, "a message");
		if (ret < 0)
			return ret;
		if (ret == 0)
			continue;
		if (c.op == BENCH_OP_SEND) {
			acks_pending--;
			continue;
		}
		if (imm ? c.op != BENCH_OP_RECV_IMM ||
		                    c.imm != (uint32_t)received
		        : c.op != BENCH_OP_RECV || c.len != s->size) {
			BENCH_ERR("unexpected %s completion of %zu bytes",
			          bench_op_name(c.op), c.len);
			return -EPROTO;
		}
		received++;
		if (posted < count) {
			ret = bw_post_data_recv(s, imm);
			if (ret)
				return ret;
			posted++;
		}
		if (received % s->window != 0 && received != count)
			continue;
		/* An ack slot must be free before it is rewritten. */
		while (acks_pending >= BENCH_ACK_SLOTS) {
			ret = bw_poll(s, &c, "an ack's send completion");
			if (ret < 0)
				return ret;
			if (ret > 0 && c.op != BENCH_OP_SEND) {
				BENCH_ERR("unexpected %s completion",
				          bench_op_name(c.op));
				return -EPROTO;
			}
			if (ret > 0)
				acks_pending--;
		}
		ret = bw_post_ack_send(s, (uint32_t)acks_sent,
		                       (uint64_t)received);
		if (ret)
			return ret;
		acks_sent++;
		acks_pending++;
	}
	return 0;
}

/* ---- RDMA write and read ------------------------------------------------- */

static int bw_rma_client(struct bw_state *s, enum bench_test t, long count,
                         struct timespec *start, struct timespec *end)
{
	const struct bench_ops *ops = s->ctx->ops;
	enum bench_op want = t == BENCH_TEST_READ     ? BENCH_OP_READ
	                     : t == BENCH_TEST_ATOMIC ? BENCH_OP_ATOMIC
	                                              : BENCH_OP_WRITE;
	long sent = 0, done = 0;
	bool ack_sent = false, ack_got = false;
	struct bench_comp c;
	int ret;

	ret = bw_post_ack_recv(s, 0);
	if (ret)
		return ret;
	ret = bench_oob_sync(s->ctx);
	if (ret)
		return ret;

	bench_deadline_start_ctx(&s->d, s->ctx);
	bench_now(start);
	while (done < count) {
		while (sent < count && sent - done < s->window) {
			if (t == BENCH_TEST_READ)
				ret = ops->post_read(
				        s->conn, &s->b->mr, 0, s->size,
				        s->b->peer.addr, s->b->peer.key,
				        BENCH_COOKIE(BENCH_TAG_DATA, 0));
			else if (t == BENCH_TEST_ATOMIC)
				/* The old values land in the tx area. */
				ret = ops->post_fadd(
				        s->conn, &s->b->mr,
				        s->b->max + 8 * (size_t)(sent % 8),
				        s->b->peer.addr, s->b->peer.key,
				        BENCH_COOKIE(BENCH_TAG_DATA, 0));
			else
				ret = ops->post_write(
				        s->conn, &s->b->mr, s->b->max, s->size,
				        s->b->peer.addr, s->b->peer.key,
				        BENCH_COOKIE(BENCH_TAG_DATA, 0));
			if (ret)
				return ret;
			sent++;
		}
		ret = bw_poll(s, &c, "an RDMA completion");
		if (ret < 0)
			return ret;
		if (ret == 0)
			continue;
		if (c.op != want) {
			BENCH_ERR("unexpected %s completion",
			          bench_op_name(c.op));
			return -EPROTO;
		}
		bench_progress_at(++done);
	}
	/* 'done', and the server's answer: what we wrote has landed. */
	ret = bw_post_ack_send(s, 0, (uint64_t)count);
	if (ret)
		return ret;
	while (!ack_sent || !ack_got) {
		ret = bw_poll(s, &c, "the server's answer");
		if (ret < 0)
			return ret;
		if (ret == 0)
			continue;
		if (c.op == BENCH_OP_SEND)
			ack_sent = true;
		else if (c.op == BENCH_OP_RECV)
			ack_got = true;
		else {
			BENCH_ERR("unexpected %s completion",
			          bench_op_name(c.op));
			return -EPROTO;
		}
	}
	bench_now(end);
	return 0;
}

static int bw_rma_server(struct bw_state *s, bool atomic, long count)
{
	volatile uint64_t *counter = (volatile uint64_t *)(void *)s->b->rx;
	uint64_t before = *counter;
	bool ack_sent = false;
	struct bench_comp c;
	int ret;

	ret = bw_post_ack_recv(s, 0);
	if (ret)
		return ret;
	ret = bench_oob_sync(s->ctx);
	if (ret)
		return ret;

	/* Polling our queue is what makes the data land on some fabrics. */
	bench_deadline_start_ctx(&s->d, s->ctx);
	for (;;) {
		ret = bw_poll(s, &c, "the client's 'done'");
		if (ret < 0)
			return ret;
		if (ret > 0)
			break;
	}
	if (c.op != BENCH_OP_RECV ||
	    bw_ack_value(s, BENCH_COOKIE_IDX(c.ctx)) != (uint64_t)count) {
		BENCH_ERR("expected 'done' after %ld operations", count);
		return -EPROTO;
	}
	if (atomic && *counter - before != (uint64_t)count) {
		BENCH_ERR("%ld fetch-and-adds of 1 took the counter from %llu "
		          "to %llu",
		          count, (unsigned long long)before,
		          (unsigned long long)*counter);
		return -EPROTO;
	}
	ret = bw_post_ack_send(s, 0, (uint64_t)count);
	if (ret)
		return ret;
	while (!ack_sent) {
		ret = bw_poll(s, &c, "the answer's send completion");
		if (ret < 0)
			return ret;
		if (ret > 0)
			ack_sent = c.op == BENCH_OP_SEND;
	}
	return 0;
}

static int bw_run(struct bench_ctx *ctx, struct bench_conn *conn,
                  struct bench_buf *b, const struct bench_params *p, long count,
                  struct timespec *start, struct timespec *end)
{
	struct bw_state s = {
	        .ctx = ctx,
	        .conn = conn,
	        .b = b,
	        .size = (size_t)p->size,
	        .window = (long)p->window,
	};
	enum bench_test t = (enum bench_test)p->test;

	if (t == BENCH_TEST_READ && s.window > ctx->max_reads) {
		BENCH_ERR("window %ld is more RDMA reads than the endpoint "
		          "takes (%d): use -W %d",
		          s.window, ctx->max_reads, ctx->max_reads);
		return -EINVAL;
	}
	switch (t) {
	case BENCH_TEST_SEND:
	case BENCH_TEST_WRITEIMM:
		if (ctx->server)
			return bw_send_server(&s, t == BENCH_TEST_WRITEIMM,
			                      count);
		return bw_send_client(&s, t == BENCH_TEST_WRITEIMM, count,
		                      start, end);
	case BENCH_TEST_WRITE:
	case BENCH_TEST_READ:
	case BENCH_TEST_ATOMIC:
		if (ctx->server)
			return bw_rma_server(&s, t == BENCH_TEST_ATOMIC, count);
		return bw_rma_client(&s, t, count, start, end);
	default:
		BENCH_ERR("test %s is not a bandwidth test",
		          bench_test_name(t));
		return -EINVAL;
	}
}

int main(int argc, char **argv)
{
	return bench_main(argc, argv, bw_desc,
	                  (1u << BENCH_TEST_SEND) | (1u << BENCH_TEST_WRITE) |
	                          (1u << BENCH_TEST_READ) |
	                          (1u << BENCH_TEST_WRITEIMM) |
	                          (1u << BENCH_TEST_ATOMIC),
	                  BENCH_TEST_SEND, bw_run, 1, true);
}
