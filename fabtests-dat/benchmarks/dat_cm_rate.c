/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * dat_cm_rate: connection setup and teardown rate.
 *
 * The client, one connection at a time: create an endpoint, connect, wait
 * until it is established, disconnect (DAT: and wait for the DISCONNECTED
 * event that DAT reports for it; libfabric reports none), free the
 * endpoint. The server takes connection requests, accepts each on a new
 * endpoint and frees it when the client's disconnect arrives, all from one
 * event loop, so a lost disconnect notice leaks an endpoint until the end
 * of the run instead of stalling the test.
 *
 * usec/xfer is the time of one cycle, Mxfers/sec the cycles per
 * microsecond; bytes and MB/sec are 0.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <stdlib.h>

#include "bench_common.h"

static const char cm_desc[] =
        "Connection rate over DAT (or libfabric with --raw): "
        "connect + accept + disconnect\ncycles, one at a time.";

struct cm_stats {
	uint64_t requests;
	uint64_t established;
	uint64_t disconnected;
	uint64_t leftover;
};

static int cm_client(struct bench_ctx *ctx, long count, struct timespec *start,
                     struct timespec *end)
{
	const struct bench_ops *ops = ctx->ops;
	struct bench_conn *conn;
	struct bench_cm_ev ev;
	struct cm_stats st;
	char c = 'e';
	long i;
	int ret;

	ret = bench_oob_sync(ctx);
	if (ret)
		return ret;
	bench_now(start);
	for (i = 0; i < count; i++) {
		ret = ops->connect(ctx, &conn);
		if (ret)
			return ret;
		ret = bench_wait_cm(ctx, BENCH_CM_ESTABLISHED, &ev);
		if (ret == 0 && ev.conn != conn) {
			BENCH_ERR("established: not the connection asked for");
			ret = -EPROTO;
		}
		if (ret) {
			fprintf(stderr, "%s: connection %ld failed\n",
			        ctx->opts->prog, i);
			ops->free_conn(conn);
			return ret;
		}
		if (ops->disconnect(conn) > 0) {
			ret = bench_wait_cm(ctx, BENCH_CM_DISCONNECTED, &ev);
			if (ret) {
				ops->free_conn(conn);
				return ret;
			}
		}
		ops->free_conn(conn);
	}
	bench_now(end);

	ret = bench_oob_send(ctx, &c, 1);
	if (!ret)
		ret = bench_oob_recv(ctx, &st, sizeof(st));
	if (!ret)
		BENCH_VERBOSE(ctx,
		              "server: %llu requests, %llu established, %llu "
		              "disconnects seen, %llu endpoints left over",
		              (unsigned long long)st.requests,
		              (unsigned long long)st.established,
		              (unsigned long long)st.disconnected,
		              (unsigned long long)st.leftover);
	return ret;
}

static int cm_server(struct bench_ctx *ctx)
{
	const struct bench_ops *ops = ctx->ops;
	struct cm_stats st = {0};
	struct bench_deadline d;
	struct bench_cm_ev ev;
	struct bench_conn *conn;
	unsigned idle = 0;
	char c;
	int ret;

	ret = bench_oob_sync(ctx);
	if (ret)
		return ret;
	bench_deadline_start_ctx(&d, ctx);
	for (;;) {
		ret = ops->cm_poll(ctx, &ev);
		if (ret < 0)
			return ret;
		if (ret == 0) {
			/* The client's end of run comes by the side channel. */
			if (++idle % 256 == 0 && bench_oob_readable(ctx))
				break;
			if (bench_deadline_hit(&d))
				return bench_deadline_fail(
				        &d, ctx, "a connection event");
			continue;
		}
		d.progress = true;
		switch (ev.type) {
		case BENCH_CM_CONNREQ:
			st.requests++;
			ret = ops->accept(ctx, ev.req, &conn);
			if (ret)
				return ret;
			break;
		case BENCH_CM_ESTABLISHED:
			st.established++;
			break;
		case BENCH_CM_DISCONNECTED:
			st.disconnected++;
			ops->free_conn(ev.conn);
			break;
		case BENCH_CM_REJECTED:
			BENCH_ERR("an accepted connection failed");
			ops->free_conn(ev.conn);
			return -ECONNABORTED;
		default:
			break;
		}
	}
	ret = bench_oob_recv(ctx, &c, 1);
	if (ret)
		return ret;
	if (c != 'e') {
		BENCH_ERR("side channel: out of step");
		return -EPROTO;
	}
	while (ctx->conns) {
		st.leftover++;
		ops->free_conn(ctx->conns);
	}
	return bench_oob_send(ctx, &st, sizeof(st));
}

static int cm_run(struct bench_ctx *ctx, struct bench_conn *conn,
                  struct bench_buf *b, const struct bench_params *p, long count,
                  struct timespec *start, struct timespec *end)
{
	(void)conn;
	(void)b;
	(void)p;
	if (ctx->server)
		return cm_server(ctx);
	return cm_client(ctx, count, start, end);
}

int main(int argc, char **argv)
{
	return bench_main(argc, argv, cm_desc, 0, BENCH_TEST_CM, cm_run, 1,
	                  false);
}
