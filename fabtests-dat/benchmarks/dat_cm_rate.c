/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * dat_cm_rate: connection setup and teardown rate, and what connections
 * cost at scale.
 *
 * The client, one connection at a time: create an endpoint, connect, wait
 * until it is established, disconnect (DAT: and wait for the DISCONNECTED
 * event that DAT reports for it; libfabric reports none), free the
 * endpoint. The server takes connection requests, accepts each on a new
 * endpoint and frees it when the client's disconnect arrives, all from one
 * event loop, so a lost disconnect notice leaks an endpoint until the end
 * of the run instead of stalling the test. usec/xfer is the time of one
 * cycle, Mxfers/sec the cycles per microsecond; bytes and MB/sec are 0.
 *
 * Every EP has the default attributes: DAT's dat_ep_create with no
 * attributes (256 DTOs each way), raw libfabric the same tx and rx sizes.
 *
 * -N COUNT first opens COUNT connections (64 connects in flight) and holds
 * them, established and idle, while it measures the rate; the client
 * prints the setup time and, from VmRSS and /proc/self/fd before and after,
 * memory and file descriptors per connected EP on each side. With
 * --rounds R it then sends one 8-byte message to every held EP and back, R
 * times (per EP), and times an empty dequeue on one EP's DTO EVD (raw: an
 * empty fi_cq_read); --evd-per-ep gives every EP its own DTO EVD (raw: CQ)
 * instead of the shared one. Last, it disconnects and frees the held
 * connections one at a time, as in the rate loop, and prints the total.
 *
 * Between phases the client sends the server a phase end on the side
 * channel with the number of connections it keeps; the server serves
 * connection events until it has exactly that many, established, and
 * answers with its counts, VmRSS and file descriptors.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"

static const char cm_desc[] =
        "Connection rate over DAT (or libfabric with --raw): "
        "connect + accept + disconnect\ncycles, one at a time; with -N, "
        "while holding N connections open, and what\nthose cost: memory "
        "and fds per EP, (--rounds) a message round and an empty\n"
        "dequeue, and their disconnect + free.";

/*
 * Connects in flight while setting up. Few: a connection waits behind
 * the others, and dapl-ofi's passive side gives a requester 5 s for its
 * RTU (ACCEPT_COMPLETION_ERROR after); where every event costs O(N), 64
 * in flight at N = 10,000 ran over that on a busy VM.
 */
#define CM_SETUP_WINDOW 16
#define CM_DEQ_NSEC     200000000 /* the empty dequeue loop runs this long */
#define CM_MSG_SIZE     8

enum {
	CM_CMD_PHASE = 1, /* arg: connections the client keeps */
	CM_CMD_DATA = 2,  /* arg: rounds */
	CM_CMD_QUIT = 3,
};

struct cm_msg {
	uint32_t magic;
	uint32_t cmd;
	uint64_t arg;
};

/* The server's answer to every command. */
struct cm_report {
	uint64_t requests;
	uint64_t established;
	uint64_t disconnected;
	uint64_t live;
	int64_t rss_kib;
	int64_t fds;
	uint64_t leftover;
	int64_t status; /* 0, or the server's negative errno */
	/* TCP sockets (struct bench_socks), -1 if not known. */
	int64_t tcp_listen;
	int64_t tcp_port;
	int64_t tcp_other;
};

/* This process's TCP sockets into rep. */
static void cm_report_socks(struct bench_ctx *ctx, struct cm_report *rep)
{
	struct bench_socks sk;

	if (bench_count_tcp(ctx->opts->cm_port, &sk)) {
		rep->tcp_listen = rep->tcp_port = rep->tcp_other = -1;
		return;
	}
	rep->tcp_listen = sk.listening;
	rep->tcp_port = sk.on_port;
	rep->tcp_other = sk.other;
}

/* The server's event loop state. */
struct cm_srv {
	struct cm_report st;
	uint64_t up; /* established and not yet disconnected */
};

static double cm_usec(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) * 1e6 +
	       (double)(b->tv_nsec - a->tv_nsec) / 1e3;
}

/* Seconds since t0. */
static double cm_since(const struct timespec *t0)
{
	struct timespec now;

	bench_now(&now);
	return cm_usec(t0, &now) / 1e6;
}

/* ---- server -------------------------------------------------------------- */

/* One connection event, if any: 1 handled, 0 none, < 0 error. */
static int cm_srv_event(struct bench_ctx *ctx, struct cm_srv *s)
{
	const struct bench_ops *ops = ctx->ops;
	struct bench_conn *conn;
	struct bench_cm_ev ev;
	int ret;

	ret = ops->cm_poll(ctx, &ev);
	if (ret <= 0)
		return ret;
	switch (ev.type) {
	case BENCH_CM_CONNREQ:
		s->st.requests++;
		ret = ops->accept(ctx, ev.req, &conn);
		if (ret)
			return ret;
		break;
	case BENCH_CM_ESTABLISHED:
		s->st.established++;
		s->up++;
		break;
	case BENCH_CM_DISCONNECTED:
		s->st.disconnected++;
		if (s->up)
			s->up--;
		ops->free_conn(ev.conn);
		break;
	case BENCH_CM_REJECTED:
		BENCH_ERR("an accepted connection failed, with %zu "
		          "connections, %llu established",
		          ctx->nconns, (unsigned long long)s->up);
		ops->free_conn(ev.conn);
		return -ECONNABORTED;
	default:
		break;
	}
	return 1;
}

/*
 * Serve connection events until the client has a word on the side channel
 * (keep < 0), or until exactly keep connections are left, all established.
 */
static int cm_srv_serve(struct bench_ctx *ctx, struct cm_srv *s, long keep)
{
	struct bench_deadline d;
	unsigned idle = 0;
	int ret;

	bench_deadline_start_ctx(&d, ctx);
	for (;;) {
		if (keep >= 0 && ctx->nconns == (size_t)keep &&
		    s->up == (uint64_t)keep)
			return 0;
		ret = cm_srv_event(ctx, s);
		if (ret < 0)
			return ret;
		if (ret > 0) {
			d.progress = true;
			continue;
		}
		if (keep < 0 && ++idle % 256 == 0 && bench_oob_word_ready(ctx))
			return 0;
		if (bench_deadline_hit(&d)) {
			if (keep >= 0)
				fprintf(stderr,
				        "%s: %zu connections, %llu established,"
				        " the client keeps %ld\n",
				        ctx->opts->prog, ctx->nconns,
				        (unsigned long long)s->up, keep);
			return bench_deadline_fail(&d, ctx, "connection event");
		}
	}
}

/* Per connection: receives and sends completed in the message rounds. */
struct cm_slot {
	uint32_t recvs;
	uint32_t sends;
};

struct cm_data {
	struct bench_conn **conns;
	struct cm_slot *slot;
	long *pend; /* connections not done, by index */
	long npend;
	long n;
	struct bench_mr mr;
	char *buf;
};

static void cm_data_free(struct bench_ctx *ctx, struct cm_data *dd)
{
	if (dd->mr.handle)
		ctx->ops->dereg(ctx, &dd->mr);
	free(dd->buf);
	free(dd->pend);
	free(dd->slot);
	memset(dd, 0, sizeof(*dd));
}

/* A send buffer, and a receive buffer per connection. */
static int cm_data_setup(struct bench_ctx *ctx, struct cm_data *dd)
{
	size_t len = (size_t)(dd->n + 1) * CM_MSG_SIZE;
	int ret;

	dd->slot = calloc((size_t)dd->n, sizeof(*dd->slot));
	dd->pend = calloc((size_t)dd->n, sizeof(*dd->pend));
	dd->buf = calloc(1, len);
	if (!dd->slot || !dd->pend || !dd->buf)
		return -ENOMEM;
	ret = ctx->ops->reg(ctx, dd->buf, len, &dd->mr);
	if (ret)
		memset(&dd->mr, 0, sizeof(dd->mr));
	return ret;
}

static int cm_post_recv(struct bench_ctx *ctx, struct cm_data *dd, long i)
{
	return ctx->ops->post_recv(dd->conns[i], &dd->mr,
	                           (size_t)(i + 1) * CM_MSG_SIZE, CM_MSG_SIZE,
	                           BENCH_COOKIE(BENCH_TAG_DATA, i));
}

static int cm_post_send(struct bench_ctx *ctx, struct cm_data *dd, long i)
{
	return ctx->ops->post_send(dd->conns[i], &dd->mr, 0, CM_MSG_SIZE,
	                           BENCH_COOKIE(BENCH_TAG_DATA, i));
}

/*
 * Take completions until every connection has `want` receives and sends
 * done. With an EVD (CQ) per EP, sweep over the EVDs of the connections
 * not done yet; with a shared one, read it. reply: the server, which
 * answers each message and reposts its receive while more are to come.
 */
static int cm_data_reap(struct bench_ctx *ctx, struct cm_data *dd,
                        uint32_t want, uint32_t last, bool reply)
{
	const struct bench_ops *ops = ctx->ops;
	bool own = ctx->opts->evd_per_ep;
	struct bench_deadline d;
	struct bench_comp comp;
	struct cm_slot *sl;
	long i, k = 0, j;
	int ret;

	dd->npend = dd->n;
	for (i = 0; i < dd->n; i++)
		dd->pend[i] = i;
	bench_deadline_start_ctx(&d, ctx);
	while (dd->npend) {
		if (k >= dd->npend)
			k = 0;
		i = own ? dd->pend[k] : 0;
		ret = ops->poll_conn(dd->conns[i], &comp);
		if (ret < 0)
			return ret;
		if (ret == 0) {
			k++;
			if (bench_deadline_hit(&d))
				return bench_deadline_fail(
				        &d, ctx, "a message completion");
			continue;
		}
		d.progress = true;
		j = (long)BENCH_COOKIE_IDX(comp.ctx);
		if (j >= dd->n || (own && j != i)) {
			BENCH_ERR("a completion for connection %ld on %ld", j,
			          i);
			return -EPROTO;
		}
		sl = &dd->slot[j];
		if (comp.op == BENCH_OP_RECV) {
			sl->recvs++;
			if (sl->recvs < last) {
				ret = cm_post_recv(ctx, dd, j);
				if (ret)
					return ret;
			}
			if (reply) {
				ret = cm_post_send(ctx, dd, j);
				if (ret)
					return ret;
			}
		} else {
			sl->sends++;
		}
		if (sl->recvs > want || sl->sends > want) {
			BENCH_ERR("connection %ld: more completions than sent",
			          j);
			return -EPROTO;
		}
		if (sl->recvs == want && sl->sends == want) {
			/* Done: out of the sweep (with a shared EVD, the
			 * order of pend[] does not matter). */
			if (own) {
				dd->pend[k] = dd->pend[--dd->npend];
			} else {
				dd->npend--;
			}
		}
	}
	return 0;
}

/* The server's part of the message rounds: answer every message. */
static int cm_srv_data(struct bench_ctx *ctx, long rounds)
{
	struct cm_data dd = {0};
	struct bench_conn *c;
	char go = 'g';
	long i;
	int ret;

	dd.n = (long)ctx->nconns;
	dd.conns = calloc((size_t)dd.n + 1, sizeof(*dd.conns));
	if (!dd.conns)
		return -ENOMEM;
	/* Oldest first, as the client holds them. */
	for (c = ctx->conns, i = dd.n; c; c = c->next)
		dd.conns[--i] = c;
	ret = cm_data_setup(ctx, &dd);
	for (i = 0; !ret && i < dd.n; i++)
		ret = cm_post_recv(ctx, &dd, i);
	if (!ret)
		ret = bench_oob_send(ctx, &go, 1);
	if (!ret)
		ret = cm_data_reap(ctx, &dd, (uint32_t)rounds, (uint32_t)rounds,
		                   true);
	cm_data_free(ctx, &dd);
	free(dd.conns);
	return ret;
}

static int cm_server(struct bench_ctx *ctx)
{
	struct cm_srv s = {0};
	struct cm_msg m;
	int ret;

	for (;;) {
		ret = cm_srv_serve(ctx, &s, -1);
		if (ret)
			return ret;
		ret = bench_oob_recv(ctx, &m, sizeof(m));
		if (ret)
			return ret;
		if (m.magic != BENCH_MAGIC) {
			BENCH_ERR("side channel: out of step");
			return -EPROTO;
		}
		switch (m.cmd) {
		case CM_CMD_PHASE:
			ret = cm_srv_serve(ctx, &s, (long)m.arg);
			break;
		case CM_CMD_DATA:
			ret = cm_srv_data(ctx, (long)m.arg);
			break;
		case CM_CMD_QUIT:
			while (ctx->conns) {
				s.st.leftover++;
				ctx->ops->free_conn(ctx->conns);
			}
			break;
		default:
			BENCH_ERR("side channel: command %u", m.cmd);
			return -EPROTO;
		}
		s.st.live = ctx->nconns;
		s.st.rss_kib = bench_rss_kib();
		s.st.fds = bench_count_fds();
		cm_report_socks(ctx, &s.st);
		s.st.status = ret;
		if (bench_oob_send(ctx, &s.st, sizeof(s.st)) || ret)
			return ret ? ret : -EIO;
		if (m.cmd == CM_CMD_QUIT)
			return 0;
	}
}

/* ---- client -------------------------------------------------------------- */

struct cm_client {
	struct bench_conn **held;
	long nheld;
	struct cm_report srv0; /* the server before any connection */
	struct cm_report cli0; /* our sockets then */
	long rss0, fds0;
};

/* The server's report, and whether it failed. */
static int cm_report_recv(struct bench_ctx *ctx, struct cm_report *rep)
{
	int ret;

	ret = bench_oob_recv(ctx, rep, sizeof(*rep));
	if (!ret && rep->status) {
		fprintf(stderr, "%s: the server failed (%s)\n", ctx->opts->prog,
		        strerror((int)-rep->status));
		ret = -EIO;
	}
	return ret;
}

/*
 * A command to the server, and its report; for CM_CMD_DATA, only its
 * word that the receives are posted (the report follows the rounds).
 */
static int cm_command(struct bench_ctx *ctx, uint32_t cmd, uint64_t arg,
                      struct cm_report *rep)
{
	struct cm_msg m = {.magic = BENCH_MAGIC, .cmd = cmd, .arg = arg};
	char go;
	int ret;

	ret = bench_oob_send(ctx, &m, sizeof(m));
	if (ret)
		return ret;
	if (cmd != CM_CMD_DATA)
		return cm_report_recv(ctx, rep);
	ret = bench_oob_recv(ctx, &go, 1);
	if (!ret && go != 'g') {
		BENCH_ERR("side channel: out of step");
		ret = -EPROTO;
	}
	return ret;
}

/* Wait for conn's ESTABLISHED, or its DISCONNECTED. */
static int cm_wait_for(struct bench_ctx *ctx, struct bench_conn *conn,
                       enum bench_cm_type want)
{
	struct bench_cm_ev ev;
	int ret;

	ret = bench_wait_cm(ctx, want, &ev);
	if (ret == 0 && ev.conn != conn) {
		BENCH_ERR("a connection event for another connection");
		ret = -EPROTO;
	}
	return ret;
}

/* Disconnect conn (DAT: and wait for its DISCONNECTED), free it. */
static int cm_close_one(struct bench_ctx *ctx, struct bench_conn *conn)
{
	int ret = 0;

	if (ctx->ops->disconnect(conn) > 0)
		ret = cm_wait_for(ctx, conn, BENCH_CM_DISCONNECTED);
	ctx->ops->free_conn(conn);
	return ret;
}

/* count connect + disconnect cycles, one at a time. */
static int cm_cycles(struct bench_ctx *ctx, long count)
{
	struct bench_conn *conn;
	long i;
	int ret;

	for (i = 0; i < count; i++) {
		bench_progress_at(i);
		ret = ctx->ops->connect(ctx, &conn);
		if (ret)
			return ret;
		ret = cm_wait_for(ctx, conn, BENCH_CM_ESTABLISHED);
		if (ret) {
			fprintf(stderr, "%s: connection %ld failed\n",
			        ctx->opts->prog, i);
			ctx->ops->free_conn(conn);
			return ret;
		}
		ret = cm_close_one(ctx, conn);
		if (ret)
			return ret;
	}
	return 0;
}

/* Open n connections, CM_SETUP_WINDOW in flight, into held[]. */
static int cm_setup(struct bench_ctx *ctx, struct cm_client *cl, long n)
{
	struct bench_deadline d;
	struct bench_cm_ev ev;
	struct bench_conn *conn;
	struct timespec t0;
	long made = 0, out = 0;
	int ret;

	bench_now(&t0);
	bench_deadline_start_ctx(&d, ctx);
	while (cl->nheld < n) {
		while (made < n && out < CM_SETUP_WINDOW) {
			ret = ctx->ops->connect(ctx, &conn);
			if (ret) {
				fprintf(stderr,
				        "%s: connect %ld of %ld failed (%zu "
				        "connections, %ld fds, RLIMIT_NOFILE "
				        "%ld)\n",
				        ctx->opts->prog, made + 1, n,
				        ctx->nconns, bench_count_fds(),
				        bench_raise_nofile());
				return ret;
			}
			made++;
			out++;
		}
		ret = ctx->ops->cm_poll(ctx, &ev);
		if (ret < 0)
			return ret;
		if (ret == 0) {
			if (bench_deadline_hit(&d))
				return bench_deadline_fail(&d, ctx,
				                           "established");
			continue;
		}
		d.progress = true;
		if (ev.type != BENCH_CM_ESTABLISHED) {
			fprintf(stderr,
			        "%s: connection %ld of %ld failed (%s, after "
			        "%.1f s)\n",
			        ctx->opts->prog, cl->nheld + 1, n,
			        bench_cm_name(ev.type), cm_since(&t0));
			return -ECONNREFUSED;
		}
		cl->held[cl->nheld++] = ev.conn;
		bench_progress_at((long)cl->nheld);
		out--;
	}
	return 0;
}

static void cm_print_mem(const char *side, long n, long rss0, long rss1,
                         long fds0, long fds1)
{
	printf("memory    %-6s %+8.2f KiB/EP (VmRSS %ld -> %ld KiB), "
	       "%.2f fds/connection\n",
	       side, (double)(rss1 - rss0) / (double)n, rss0, rss1,
	       (double)(fds1 - fds0) / (double)n);
	if (bench_detail)
		printf("#scale phase=memory side=%s held=%ld rss0=%ld rss1=%ld "
		       "kib_per_ep=%.4f fds0=%ld fds1=%ld fds_per_conn=%.4f\n",
		       side, n, rss0, rss1, (double)(rss1 - rss0) / (double)n,
		       fds0, fds1, (double)(fds1 - fds0) / (double)n);
}

/*
 * The TCP sockets of a side before and with n connections: those on the
 * connection port (dapl-ofi on RDM fabrics: its control channel; on tcp
 * and sockets the connections themselves), the others (the side channel,
 * what the provider opens: rxm's connections), and the listening ones.
 */
static void cm_print_socks(const struct bench_ctx *ctx, const char *side,
                           long n, const struct cm_report *a,
                           const struct cm_report *b)
{
	if (a->tcp_port < 0 || b->tcp_port < 0)
		return;
	printf("sockets   %-6s TCP on port %u %ld -> %ld, other TCP %ld -> "
	       "%ld (%+.2f/connection), listening %ld -> %ld\n",
	       side, ctx->opts->cm_port, (long)a->tcp_port, (long)b->tcp_port,
	       (long)a->tcp_other, (long)b->tcp_other,
	       (double)(b->tcp_other - a->tcp_other) / (double)n,
	       (long)a->tcp_listen, (long)b->tcp_listen);
	if (bench_detail)
		printf("#scale phase=sockets side=%s held=%ld port=%u "
		       "port_tcp=%ld other_tcp0=%ld other_tcp=%ld "
		       "other_per_conn=%.4f listening=%ld\n",
		       side, n, ctx->opts->cm_port, (long)b->tcp_port,
		       (long)a->tcp_other, (long)b->tcp_other,
		       (double)(b->tcp_other - a->tcp_other) / (double)n,
		       (long)b->tcp_listen);
}

static int cm_client_setup(struct bench_ctx *ctx, struct cm_client *cl)
{
	long n = ctx->opts->held;
	struct timespec t0, t1;
	struct cm_report rep, mine = {0};
	double us;
	int ret;

	bench_progress_begin(ctx->opts, "connections held", n);
	bench_now(&t0);
	ret = cm_setup(ctx, cl, n);
	bench_progress_end();
	if (ret)
		return ret;
	ret = cm_command(ctx, CM_CMD_PHASE, (uint64_t)n, &rep);
	if (ret)
		return ret;
	bench_now(&t1);
	us = cm_usec(&t0, &t1);
	printf("setup     %ld connections in %.2f s: %.2f usec/connection "
	       "(%d connects in flight)\n",
	       n, us / 1e6, us / (double)n, CM_SETUP_WINDOW);
	if (bench_detail)
		printf("#scale phase=setup held=%ld usec=%.1f "
		       "usec_per_conn=%.4f\n",
		       n, us, us / (double)n);
	cm_print_mem("client", n, cl->rss0, bench_rss_kib(), cl->fds0,
	             bench_count_fds());
	cm_print_mem("server", n, (long)cl->srv0.rss_kib, (long)rep.rss_kib,
	             (long)cl->srv0.fds, (long)rep.fds);
	cm_report_socks(ctx, &mine);
	cm_print_socks(ctx, "client", n, &cl->cli0, &mine);
	cm_print_socks(ctx, "server", n, &cl->srv0, &rep);
	fflush(stdout);
	return 0;
}

static int cm_client_rate(struct bench_ctx *ctx)
{
	struct bench_opts *o = ctx->opts;
	long iters = o->iterations ? o->iterations : 1000;
	struct timespec start, end;
	struct cm_report rep;
	int ret;

	ret = cm_cycles(ctx, o->warmup);
	if (!ret)
		ret = cm_command(ctx, CM_CMD_PHASE, (uint64_t)o->held, &rep);
	if (ret)
		return ret;
	bench_progress_begin(o, "connect+disconnect", iters);
	bench_now(&start);
	ret = cm_cycles(ctx, iters);
	bench_now(&end);
	bench_progress_end();
	if (!ret)
		ret = cm_command(ctx, CM_CMD_PHASE, (uint64_t)o->held, &rep);
	if (ret)
		return ret;
	BENCH_VERBOSE(ctx,
	              "server: %llu requests, %llu established, %llu "
	              "disconnects seen, %llu connections live",
	              (unsigned long long)rep.requests,
	              (unsigned long long)rep.established,
	              (unsigned long long)rep.disconnected,
	              (unsigned long long)rep.live);
	bench_show_perf(0, iters, &start, &end, 1);
	return 0;
}

/* ns per empty dequeue (raw: fi_cq_read) on the first held EP's EVD. */
static int cm_client_dequeue(struct bench_ctx *ctx, struct cm_client *cl)
{
	struct bench_conn *conn = cl->held[0];
	struct timespec t0, t1;
	struct bench_comp comp;
	long calls = 0, k;
	double ns;
	int ret;

	bench_now(&t0);
	do {
		for (k = 0; k < 256; k++) {
			ret = conn->ctx->ops->poll_conn(conn, &comp);
			if (ret < 0)
				return ret;
			if (ret > 0) {
				BENCH_ERR("a completion on an idle EVD");
				return -EPROTO;
			}
		}
		calls += 256;
		bench_now(&t1);
	} while (cm_usec(&t0, &t1) * 1e3 < CM_DEQ_NSEC);
	ns = cm_usec(&t0, &t1) * 1e3 / (double)calls;
	printf("dequeue   empty, on %s of %ld connected EPs: %.1f ns per "
	       "call (%ld calls)\n",
	       ctx->opts->evd_per_ep ? "one EP's own DTO EVD"
	                             : "the DTO EVD shared by all",
	       cl->nheld, ns, calls);
	if (bench_detail)
		printf("#scale phase=dequeue held=%ld evd_per_ep=%d ns=%.3f "
		       "calls=%ld\n",
		       cl->nheld, ctx->opts->evd_per_ep, ns, calls);
	return 0;
}

/* rounds of one message to every held EP and back, and the dequeue. */
static int cm_client_data(struct bench_ctx *ctx, struct cm_client *cl)
{
	uint32_t rounds = (uint32_t)ctx->opts->rounds, r;
	struct cm_data dd = {0};
	struct timespec t0, t1;
	struct cm_report rep;
	double us;
	long i;
	int ret;

	dd.n = cl->nheld;
	dd.conns = cl->held;
	ret = cm_data_setup(ctx, &dd);
	for (i = 0; !ret && i < dd.n; i++)
		ret = cm_post_recv(ctx, &dd, i);
	if (!ret)
		ret = cm_command(ctx, CM_CMD_DATA, rounds, &rep);
	if (ret)
		goto out;
	bench_now(&t0);
	for (r = 0; r < rounds && !ret; r++) {
		for (i = 0; i < dd.n && !ret; i++)
			ret = cm_post_send(ctx, &dd, i);
		if (!ret)
			ret = cm_data_reap(ctx, &dd, r + 1, rounds, false);
	}
	bench_now(&t1);
	if (ret)
		goto out;
	ret = cm_report_recv(ctx, &rep);
	if (ret)
		goto out;
	us = cm_usec(&t0, &t1);
	printf("round     one %d-byte message to each of %ld EPs and back "
	       "(%s): %.3f usec/EP (%u rounds)\n",
	       CM_MSG_SIZE, dd.n,
	       ctx->opts->evd_per_ep ? "an EVD per EP" : "one shared EVD",
	       us / (double)rounds / (double)dd.n, rounds);
	if (bench_detail)
		printf("#scale phase=round held=%ld evd_per_ep=%d rounds=%u "
		       "usec=%.1f usec_per_ep=%.5f\n",
		       dd.n, ctx->opts->evd_per_ep, rounds, us,
		       us / (double)rounds / (double)dd.n);
	ret = cm_client_dequeue(ctx, cl);
out:
	dd.conns = NULL;
	cm_data_free(ctx, &dd);
	fflush(stdout);
	return ret;
}

static int cm_client_teardown(struct bench_ctx *ctx, struct cm_client *cl)
{
	struct timespec t0, t1, t2;
	struct cm_report rep;
	long n = cl->nheld, i;
	double us, cus;
	int ret = 0;

	/* Oldest first; the ones not closed stay for bench_teardown. */
	bench_now(&t0);
	for (i = 0; i < n; i++) {
		ret = cm_close_one(ctx, cl->held[i]);
		if (ret)
			break;
	}
	cl->nheld = 0;
	if (ret)
		return ret;
	bench_now(&t1);
	ret = cm_command(ctx, CM_CMD_PHASE, 0, &rep);
	if (ret)
		return ret;
	bench_now(&t2);
	us = cm_usec(&t0, &t2);
	cus = cm_usec(&t0, &t1);
	printf("teardown  %ld connections in %.3f s: %.2f usec/connection "
	       "(the client's part %.3f s)\n",
	       n, us / 1e6, us / (double)n, cus / 1e6);
	if (bench_detail)
		printf("#scale phase=teardown held=%ld usec=%.1f "
		       "client_usec=%.1f usec_per_conn=%.4f\n",
		       n, us, cus, us / (double)n);
	fflush(stdout);
	return 0;
}

static int cm_client(struct bench_ctx *ctx)
{
	struct bench_opts *o = ctx->opts;
	struct cm_client cl = {0};
	struct cm_report rep;
	int ret;

	if (o->held) {
		cl.held = calloc((size_t)o->held, sizeof(*cl.held));
		if (!cl.held)
			return -ENOMEM;
		printf("# %ld connections held (established, idle), default "
		       "EP attributes, %s\n",
		       o->held,
		       o->evd_per_ep ? "a DTO EVD per EP" : "one DTO EVD");
	}
	/* Both sides before any connection. */
	ret = cm_command(ctx, CM_CMD_PHASE, 0, &cl.srv0);
	cl.rss0 = bench_rss_kib();
	cl.fds0 = bench_count_fds();
	cm_report_socks(ctx, &cl.cli0);
	if (!ret && o->held)
		ret = cm_client_setup(ctx, &cl);
	if (!ret)
		ret = cm_client_rate(ctx);
	if (!ret && o->rounds)
		ret = cm_client_data(ctx, &cl);
	if (!ret && cl.nheld)
		ret = cm_client_teardown(ctx, &cl);
	if (!ret)
		ret = cm_command(ctx, CM_CMD_QUIT, 0, &rep);
	if (!ret && rep.leftover) {
		fprintf(stderr, "%s: the server had %llu endpoints left over\n",
		        o->prog, (unsigned long long)rep.leftover);
		ret = -EPROTO;
	}
	free(cl.held);
	return ret;
}

int main(int argc, char **argv)
{
	struct bench_opts o;
	struct bench_ctx ctx;
	long lim;
	int ret;

	if (bench_parse(&o, argc, argv, cm_desc, 0, BENCH_TEST_CM))
		return EXIT_FAILURE;
	o.ep_default = true;
	/* A connection is a socket or more: large -N needs the hard limit. */
	lim = bench_raise_nofile();
	ret = bench_init(&ctx, &o);
	if (ret)
		return ret == -ENODATA ? BENCH_EXIT_NOTRUN : EXIT_FAILURE;
	BENCH_VERBOSE(&ctx, "RLIMIT_NOFILE %ld, %ld fds open", lim,
	              bench_count_fds());
	ret = ctx.server ? cm_server(&ctx) : cm_client(&ctx);
	bench_teardown(&ctx, NULL);
	if (ret)
		fprintf(stderr, "%s: failed (%s)\n", o.prog, strerror(-ret));
	return ret ? EXIT_FAILURE : EXIT_SUCCESS;
}
