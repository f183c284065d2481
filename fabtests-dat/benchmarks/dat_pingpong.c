/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * dat_pingpong: ping-pong latency between two processes.
 *
 * -t send   the client sends, the server receives and sends back; each side
 *           has its receive posted before the peer can send.
 * -t write  RDMA write ping-pong as OFED's dtest -W: each side writes into
 *           the peer's buffer and the peer waits for the last byte of it to
 *           change. While waiting it polls memory and its completion queue
 *           (which takes the completions of its own writes); --mem-poll
 *           (DAT only) polls memory alone, so the write has to land with no
 *           DAT call on the target; completions are taken only when the
 *           window (-W) of unreaped writes is full.
 * -t writeimm  RDMA write with immediate data ping-pong: each side waits
 *           for the completion that reports the peer's write and its
 *           immediate data (DAT: a DAT_IB_DTO_EVENT on a receive it keeps
 *           posted; --raw: fi_writedata's CQ entry, no receive).
 * -t atomic 64-bit fetch-and-add ping-pong: each side adds 1 to a counter
 *           in the peer's memory and the peer waits for it to change, as
 *           with -t write.
 *
 * usec/xfer is half the round trip, as in fabtests.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <stdlib.h>

#include "bench_common.h"

static const char pp_desc[] =
        "Ping-pong latency over DAT (or libfabric with --raw): send/recv "
        "(-t send),\nRDMA write with the receiver polling the last byte of "
        "its buffer (-t write),\nRDMA write with immediate data (-t "
        "writeimm) or 64-bit fetch-and-add (-t atomic).";

struct pp_state {
	struct bench_ctx *ctx;
	struct bench_conn *conn;
	struct bench_buf *b;
	size_t size;
	long tx_pending; /* sends or writes not yet completed */
	struct bench_deadline d;
};

/* One look at the completion queue; *recvs counts receives taken. */
static int pp_poll(struct pp_state *s, long *recvs)
{
	struct bench_comp c;
	int ret;

	ret = s->ctx->ops->poll(s->ctx, &c);
	if (ret <= 0)
		return ret;
	if (c.op == BENCH_OP_RECV) {
		if (c.len != s->size) {
			BENCH_ERR("received %zu bytes, expected %zu", c.len,
			          s->size);
			return -EPROTO;
		}
		if (!recvs) {
			BENCH_ERR("unexpected receive");
			return -EPROTO;
		}
		(*recvs)++;
	} else if (c.op == BENCH_OP_RECV_IMM) {
		/* The immediate data numbers the writes. */
		if (!recvs || c.imm != (uint32_t)*recvs) {
			BENCH_ERR("unexpected immediate data %llu",
			          (unsigned long long)c.imm);
			return -EPROTO;
		}
		(*recvs)++;
	} else {
		s->tx_pending--;
	}
	return 1;
}

static int pp_wait_recv(struct pp_state *s)
{
	long got = 0;
	int ret;

	bench_deadline_start_ctx(&s->d, s->ctx);
	while (!got) {
		ret = pp_poll(s, &got);
		if (ret < 0)
			return ret;
		if (ret == 0 && bench_deadline_hit(&s->d))
			return bench_deadline_fail(&s->d, s->ctx, "a receive");
	}
	return 0;
}

/* Wait until at most max sends or writes are outstanding. */
static int pp_reap(struct pp_state *s, long max)
{
	int ret;

	bench_deadline_start_ctx(&s->d, s->ctx);
	while (s->tx_pending > max) {
		ret = pp_poll(s, NULL);
		if (ret < 0)
			return ret;
		if (ret == 0 && bench_deadline_hit(&s->d))
			return bench_deadline_fail(&s->d, s->ctx,
			                           "a send completion");
	}
	return 0;
}

static int pp_send(struct pp_state *s)
{
	int ret;

	if (s->tx_pending >= s->ctx->opts->window) {
		ret = pp_reap(s, s->ctx->opts->window - 1);
		if (ret)
			return ret;
	}
	ret = s->ctx->ops->post_send(s->conn, &s->b->mr, s->b->max, s->size,
	                             BENCH_COOKIE(BENCH_TAG_DATA, 0));
	if (ret)
		return ret;
	s->tx_pending++;
	return 0;
}

static int pp_run_send(struct pp_state *s, long count, struct timespec *start,
                       struct timespec *end)
{
	const struct bench_ops *ops = s->ctx->ops;
	bool client = !s->ctx->server;
	long i;
	int ret;

	ret = ops->post_recv(s->conn, &s->b->mr, 0, s->size,
	                     BENCH_COOKIE(BENCH_TAG_DATA, 0));
	if (ret)
		return ret;
	ret = bench_oob_sync(s->ctx);
	if (ret)
		return ret;

	bench_now(start);
	for (i = 0; i < count; i++) {
		bench_progress_at(i);
		if (client) {
			ret = pp_send(s);
			if (ret)
				return ret;
		}
		ret = pp_wait_recv(s);
		if (ret)
			return ret;
		if (i + 1 < count) {
			ret = ops->post_recv(s->conn, &s->b->mr, 0, s->size,
			                     BENCH_COOKIE(BENCH_TAG_DATA, 0));
			if (ret)
				return ret;
		}
		if (!client) {
			ret = pp_send(s);
			if (ret)
				return ret;
		}
	}
	bench_now(end);
	return pp_reap(s, 0);
}

/* Wait for the peer's write to change our last byte to mark. */
static int pp_wait_mem(struct pp_state *s, unsigned char mark, bool mem_only)
{
	volatile unsigned char *last =
	        (volatile unsigned char *)s->b->rx + s->size - 1;
	int ret;

	bench_deadline_start_ctx(&s->d, s->ctx);
	while (*last != mark) {
		if (!mem_only) {
			ret = pp_poll(s, NULL);
			if (ret < 0)
				return ret;
			if (ret > 0)
				continue;
		}
		if (bench_deadline_hit(&s->d))
			return bench_deadline_fail(&s->d, s->ctx,
			                           "the peer's RDMA write");
	}
	return 0;
}

/* Room in the window for one more write, write with immediate data or
 * atomic. */
static int pp_room(struct pp_state *s)
{
	if (s->tx_pending >= s->ctx->opts->window)
		return pp_reap(s, s->ctx->opts->window - 1);
	return 0;
}

static int pp_write(struct pp_state *s, unsigned char mark)
{
	int ret = pp_room(s);

	if (ret)
		return ret;
	((volatile unsigned char *)s->b->tx)[s->size - 1] = mark;
	ret = s->ctx->ops->post_write(s->conn, &s->b->mr, s->b->max, s->size,
	                              s->b->peer.addr, s->b->peer.key,
	                              BENCH_COOKIE(BENCH_TAG_DATA, 0));
	if (ret)
		return ret;
	s->tx_pending++;
	return 0;
}

static int pp_writeimm(struct pp_state *s, uint32_t imm)
{
	int ret = pp_room(s);

	if (ret)
		return ret;
	ret = s->ctx->ops->post_writeimm(s->conn, &s->b->mr, s->b->max, s->size,
	                                 s->b->peer.addr, s->b->peer.key, imm,
	                                 BENCH_COOKIE(BENCH_TAG_DATA, 0));
	if (ret)
		return ret;
	s->tx_pending++;
	return 0;
}

/* Add 1 to the peer's counter; the old value lands in our tx area. */
static int pp_fadd(struct pp_state *s)
{
	int ret = pp_room(s);

	if (ret)
		return ret;
	ret = s->ctx->ops->post_fadd(s->conn, &s->b->mr, s->b->max,
	                             s->b->peer.addr, s->b->peer.key,
	                             BENCH_COOKIE(BENCH_TAG_DATA, 0));
	if (ret)
		return ret;
	s->tx_pending++;
	return 0;
}

static int pp_run_write(struct pp_state *s, long count, bool mem_only,
                        struct timespec *start, struct timespec *end)
{
	bool client = !s->ctx->server;
	unsigned char mark;
	long i;
	int ret;

	((volatile unsigned char *)s->b->rx)[s->size - 1] = 0;
	ret = bench_oob_sync(s->ctx);
	if (ret)
		return ret;

	bench_now(start);
	for (i = 0; i < count; i++) {
		bench_progress_at(i);
		mark = (unsigned char)(i % 255 + 1);
		if (client) {
			ret = pp_write(s, mark);
			if (ret)
				return ret;
		}
		ret = pp_wait_mem(s, mark, mem_only);
		if (ret)
			return ret;
		if (!client) {
			ret = pp_write(s, mark);
			if (ret)
				return ret;
		}
	}
	bench_now(end);
	return pp_reap(s, 0);
}

/*
 * -t writeimm: the n-th write carries n as its immediate data. Each side
 * keeps one receive posted for the peer's next write (DAT; --raw posts
 * nothing).
 */
static int pp_run_writeimm(struct pp_state *s, long count,
                           struct timespec *start, struct timespec *end)
{
	const struct bench_ops *ops = s->ctx->ops;
	bool client = !s->ctx->server;
	long i, got = 0;
	int ret;

	ret = ops->post_recv_imm(s->conn, &s->b->mr, bench_ack_rx_off(s->b, 0),
	                         BENCH_COOKIE(BENCH_TAG_DATA, 0));
	if (ret)
		return ret;
	ret = bench_oob_sync(s->ctx);
	if (ret)
		return ret;

	bench_now(start);
	for (i = 0; i < count; i++) {
		if (client) {
			ret = pp_writeimm(s, (uint32_t)i);
			if (ret)
				return ret;
		}
		bench_deadline_start_ctx(&s->d, s->ctx);
		while (got <= i) {
			ret = pp_poll(s, &got);
			if (ret < 0)
				return ret;
			if (ret == 0 && bench_deadline_hit(&s->d))
				return bench_deadline_fail(
				        &s->d, s->ctx,
				        "the peer's write with immediate data");
		}
		if (i + 1 < count) {
			ret = ops->post_recv_imm(
			        s->conn, &s->b->mr, bench_ack_rx_off(s->b, 0),
			        BENCH_COOKIE(BENCH_TAG_DATA, 0));
			if (ret)
				return ret;
		}
		if (!client) {
			ret = pp_writeimm(s, (uint32_t)i);
			if (ret)
				return ret;
		}
	}
	bench_now(end);
	return pp_reap(s, 0);
}

/* -t atomic: wait for the peer's fetch-and-add to make our counter n. */
static int pp_wait_count(struct pp_state *s, uint64_t n)
{
	volatile uint64_t *counter = (volatile uint64_t *)(void *)s->b->rx;
	int ret;

	bench_deadline_start_ctx(&s->d, s->ctx);
	while (*counter != n) {
		ret = pp_poll(s, NULL);
		if (ret < 0)
			return ret;
		if (ret > 0)
			continue;
		if (bench_deadline_hit(&s->d))
			return bench_deadline_fail(&s->d, s->ctx,
			                           "the peer's fetch-and-add");
	}
	return 0;
}

static int pp_run_atomic(struct pp_state *s, long count, struct timespec *start,
                         struct timespec *end)
{
	bool client = !s->ctx->server;
	long i;
	int ret;

	*(volatile uint64_t *)(void *)s->b->rx = 0;
	ret = bench_oob_sync(s->ctx);
	if (ret)
		return ret;

	bench_now(start);
	for (i = 0; i < count; i++) {
		if (client) {
			ret = pp_fadd(s);
			if (ret)
				return ret;
		}
		ret = pp_wait_count(s, (uint64_t)i + 1);
		if (ret)
			return ret;
		if (!client) {
			ret = pp_fadd(s);
			if (ret)
				return ret;
		}
	}
	bench_now(end);
	return pp_reap(s, 0);
}

static int pp_run(struct bench_ctx *ctx, struct bench_conn *conn,
                  struct bench_buf *b, const struct bench_params *p, long count,
                  struct timespec *start, struct timespec *end)
{
	struct pp_state s = {
	        .ctx = ctx, .conn = conn, .b = b, .size = (size_t)p->size};

	switch ((enum bench_test)p->test) {
	case BENCH_TEST_SEND:
		return pp_run_send(&s, count, start, end);
	case BENCH_TEST_WRITE:
		return pp_run_write(&s, count,
		                    (p->flags & BENCH_FLAG_MEMPOLL) != 0, start,
		                    end);
	case BENCH_TEST_WRITEIMM:
		return pp_run_writeimm(&s, count, start, end);
	case BENCH_TEST_ATOMIC:
		return pp_run_atomic(&s, count, start, end);
	default:
		BENCH_ERR("test %s is not a ping-pong",
		          bench_test_name((enum bench_test)p->test));
		return -EINVAL;
	}
}

int main(int argc, char **argv)
{
	return bench_main(argc, argv, pp_desc,
	                  (1u << BENCH_TEST_SEND) | (1u << BENCH_TEST_WRITE) |
	                          (1u << BENCH_TEST_WRITEIMM) |
	                          (1u << BENCH_TEST_ATOMIC),
	                  BENCH_TEST_SEND, pp_run, 2, false);
}
