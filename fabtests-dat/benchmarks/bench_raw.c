/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * fabtests-dat benchmarks, --raw: the same operations directly on
 * libfabric, configured as libfabric's own fabtests benchmarks are: an
 * FI_EP_MSG endpoint of the IA's provider (ofi-tcp -> tcp, ofi-sockets ->
 * sockets), FI_THREAD_DOMAIN, one CQ polled with fi_cq_read and no wait
 * object, one EQ. --raw-thread=safe and --raw-wait=fd switch to what a
 * DAT provider with a progress thread needs, to measure what that costs.
 * dat_cm_rate's EPs take DAT's default sizes (256 each way), and with
 * --evd-per-ep a CQ each.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_rma.h>
#include <sys/uio.h>

#include "bench_common.h"

#define RAW_FI_VERSION FI_VERSION(1, 17)
#define RAW_SRC_ADDR   "127.0.0.1"
/*
 * --evd-per-ep: tcp notices connects and a peer's shutdown only through
 * CQ progress, so an empty look at the EQ reads the CQs of this many of
 * the newest connections (those being set up) and of this many more in
 * turn (the idle ones).
 */
#define RAW_PROGRESS_NEWEST 64
#define RAW_PROGRESS_SWEEP  16

struct raw_state {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_eq *eq;
	struct fid_cq *cq;
	struct fid_pep *pep;
	struct bench_conn *cursor; /* --evd-per-ep: the next CQ to progress */
	uint64_t next_key;
	bool virt_addr;
};

static struct raw_state *raw_st(struct bench_ctx *ctx)
{
	return ctx->priv;
}

#define RAW_ERR(call, ret) \
	BENCH_ERR("%s: %s (%d)", call, fi_strerror((int)-(ret)), (int)(ret))

/* The libfabric provider behind an IA name. */
static const char *raw_prov_name(const char *ia_name)
{
	if (strcmp(ia_name, "ofi-tcp") == 0 || strcmp(ia_name, "ofi") == 0)
		return "tcp";
	if (strncmp(ia_name, "ofi-", 4) == 0)
		return ia_name + 4;
	return ia_name;
}

static int raw_getinfo(struct bench_ctx *ctx, struct fi_info **out)
{
	struct bench_opts *o = ctx->opts;
	struct fi_info *hints;
	char port[8];
	int ret;

	hints = fi_allocinfo();
	if (!hints)
		return -ENOMEM;
	hints->ep_attr->type = FI_EP_MSG;
	hints->caps = FI_MSG | FI_RMA |
	              (o->test == BENCH_TEST_ATOMIC ? FI_ATOMIC : 0);
	hints->mode = 0;
	hints->addr_format = FI_SOCKADDR_IN;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
	                              FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->domain_attr->threading =
	        o->raw_thread_safe ? FI_THREAD_SAFE : FI_THREAD_DOMAIN;
	hints->fabric_attr->prov_name = strdup(raw_prov_name(o->ia_name));
	if (!hints->fabric_attr->prov_name) {
		fi_freeinfo(hints);
		return -ENOMEM;
	}
	snprintf(port, sizeof(port), "%u", o->cm_port);
	if (ctx->server)
		ret = fi_getinfo(RAW_FI_VERSION, RAW_SRC_ADDR, port, FI_SOURCE,
		                 hints, out);
	else
		ret = fi_getinfo(RAW_FI_VERSION, o->dst_addr, port, 0, hints,
		                 out);
	fi_freeinfo(hints);
	if (ret) {
		RAW_ERR("fi_getinfo", ret);
		return ret == -FI_ENODATA ? -ENODATA : -EIO;
	}
	return 0;
}

static int raw_open(struct bench_ctx *ctx)
{
	struct fi_eq_attr eq_attr = {.wait_obj = FI_WAIT_UNSPEC};
	struct fi_cq_attr cq_attr = {0};
	struct raw_state *st;
	struct fi_info *info;
	char abuf[64];
	size_t txs, rxs;
	int ret;

	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	ctx->priv = st;
	st->next_key = 1;

	ret = raw_getinfo(ctx, &st->info);
	if (ret)
		goto err;
	info = st->info;
	/* RMA addresses are virtual addresses, as DAT's RMR triplets. */
	info->domain_attr->mr_mode |= FI_MR_VIRT_ADDR;
	if (ctx->opts->ep_default) {
		info->tx_attr->size = BENCH_DEF_EP_DTOS;
		info->rx_attr->size = BENCH_DEF_EP_DTOS;
	}
	BENCH_VERBOSE(ctx, "raw: %s: local address %s", ctx->opts->ia_name,
	              bench_addr_str(info->src_addr, abuf, sizeof(abuf)));
	BENCH_VERBOSE(ctx, "raw: provider %s, fabric %s, domain %s, %s",
	              info->fabric_attr->prov_name, info->fabric_attr->name,
	              info->domain_attr->name,
	              info->domain_attr->threading == FI_THREAD_SAFE
	                      ? "FI_THREAD_SAFE"
	                      : "FI_THREAD_DOMAIN");

	ret = fi_fabric(info->fabric_attr, &st->fabric, NULL);
	if (ret) {
		RAW_ERR("fi_fabric", ret);
		goto err;
	}
	eq_attr.size = (size_t)bench_eq_size(ctx->opts);
	ret = fi_eq_open(st->fabric, &eq_attr, &st->eq, NULL);
	if (ret) {
		RAW_ERR("fi_eq_open", ret);
		goto err;
	}
	ret = fi_domain(st->fabric, info, &st->domain, NULL);
	if (ret) {
		RAW_ERR("fi_domain", ret);
		goto err;
	}
	st->virt_addr = (info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) != 0;

	/* The immediate data needs the larger entries. */
	cq_attr.format = ctx->opts->test == BENCH_TEST_WRITEIMM
	                         ? FI_CQ_FORMAT_DATA
	                         : FI_CQ_FORMAT_MSG;
	cq_attr.wait_obj = ctx->opts->raw_wait_fd ? FI_WAIT_FD : FI_WAIT_NONE;
	cq_attr.size = (size_t)bench_cq_size(ctx->opts);
	ret = fi_cq_open(st->domain, &cq_attr, &st->cq, NULL);
	if (ret) {
		RAW_ERR("fi_cq_open", ret);
		goto err;
	}

	txs = info->tx_attr->size;
	rxs = info->rx_attr->size;
	ctx->max_window = (int)(txs < 16 ? 1 : txs - 8);
	if ((rxs - 8) / 2 < (size_t)ctx->max_window)
		ctx->max_window = (int)((rxs - 8) / 2);
	ctx->max_reads = ctx->max_window;
	ctx->max_msg = info->ep_attr->max_msg_size;
	ctx->max_rdma = info->ep_attr->max_msg_size;
	return 0;
err:
	bench_raw_ops.close(ctx);
	return ret < 0 ? ret : -EIO;
}

static void raw_close(struct bench_ctx *ctx)
{
	struct raw_state *st = raw_st(ctx);

	if (!st)
		return;
	while (ctx->conns)
		bench_raw_ops.free_conn(ctx->conns);
	bench_conns_fini(ctx);
	if (st->pep)
		fi_close(&st->pep->fid);
	if (st->cq)
		fi_close(&st->cq->fid);
	if (st->domain)
		fi_close(&st->domain->fid);
	if (st->eq)
		fi_close(&st->eq->fid);
	if (st->fabric)
		fi_close(&st->fabric->fid);
	if (st->info)
		fi_freeinfo(st->info);
	free(st);
	ctx->priv = NULL;
}

static int raw_listen(struct bench_ctx *ctx)
{
	struct raw_state *st = raw_st(ctx);
	int ret;

	ret = fi_passive_ep(st->fabric, st->info, &st->pep, NULL);
	if (ret) {
		RAW_ERR("fi_passive_ep", ret);
		return -EIO;
	}
	ret = fi_pep_bind(st->pep, &st->eq->fid, 0);
	if (ret) {
		RAW_ERR("fi_pep_bind", ret);
		return -EIO;
	}
	ret = fi_listen(st->pep);
	if (ret) {
		RAW_ERR("fi_listen", ret);
		return -EIO;
	}
	if (st->info->src_addr &&
	    st->info->src_addrlen >= sizeof(ctx->fabric_addr))
		memcpy(&ctx->fabric_addr, st->info->src_addr,
		       sizeof(ctx->fabric_addr));
	return 0;
}

static int raw_reg(struct bench_ctx *ctx, void *buf, size_t len,
                   struct bench_mr *mr)
{
	struct raw_state *st = raw_st(ctx);
	struct fid_mr *fmr;
	int ret;

	ret = fi_mr_reg(st->domain, buf, len,
	                FI_SEND | FI_RECV | FI_READ | FI_WRITE |
	                        (bench_test_rdma(ctx->opts->test)
	                                 ? FI_REMOTE_READ | FI_REMOTE_WRITE
	                                 : 0),
	                0, st->next_key++, 0, &fmr, NULL);
	if (ret) {
		RAW_ERR("fi_mr_reg", ret);
		return -EIO;
	}
	mr->buf = buf;
	mr->len = len;
	mr->handle = fmr;
	mr->desc = fi_mr_desc(fmr);
	mr->rkey = fi_mr_key(fmr);
	mr->lkey = 0;
	mr->raddr = st->virt_addr ? (uint64_t)(uintptr_t)buf : 0;
	return 0;
}

static void raw_dereg(struct bench_ctx *ctx, struct bench_mr *mr)
{
	(void)ctx;
	if (mr->handle)
		fi_close(&((struct fid_mr *)mr->handle)->fid);
	mr->handle = NULL;
}

/* An EP's own CQ (--evd-per-ep), set up as the shared one. */
static int raw_cq_open(struct bench_ctx *ctx, struct fid_cq **cq)
{
	struct fi_cq_attr cq_attr = {0};
	int ret;

	cq_attr.format = FI_CQ_FORMAT_MSG;
	cq_attr.wait_obj = ctx->opts->raw_wait_fd ? FI_WAIT_FD : FI_WAIT_NONE;
	cq_attr.size = BENCH_EP_EVD_QLEN;
	ret = fi_cq_open(raw_st(ctx)->domain, &cq_attr, cq, NULL);
	if (ret)
		RAW_ERR("fi_cq_open(per EP)", ret);
	return ret;
}

static int raw_ep_setup(struct bench_ctx *ctx, struct fi_info *info,
                        struct bench_conn **out)
{
	struct raw_state *st = raw_st(ctx);
	struct fid_cq *cq = st->cq;
	struct bench_conn *conn;
	struct fid_ep *ep;
	int ret;

	conn = calloc(1, sizeof(*conn));
	if (!conn)
		return -ENOMEM;
	if (ctx->opts->evd_per_ep) {
		if (raw_cq_open(ctx, &cq)) {
			free(conn);
			return -EIO;
		}
		conn->priv = cq;
	}
	if (ctx->opts->ep_default) {
		info->tx_attr->size = BENCH_DEF_EP_DTOS;
		info->rx_attr->size = BENCH_DEF_EP_DTOS;
	}
	ret = fi_endpoint(st->domain, info, &ep, conn);
	if (ret) {
		RAW_ERR("fi_endpoint", ret);
		if (conn->priv)
			fi_close(&cq->fid);
		free(conn);
		return -EIO;
	}
	conn->ep = ep;
	if (bench_conn_add(ctx, conn, (uintptr_t)&ep->fid)) {
		fi_close(&ep->fid);
		if (conn->priv)
			fi_close(&cq->fid);
		free(conn);
		return -ENOMEM;
	}
	ret = fi_ep_bind(ep, &st->eq->fid, 0);
	if (ret) {
		RAW_ERR("fi_ep_bind(eq)", ret);
		goto err;
	}
	ret = fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV);
	if (ret) {
		RAW_ERR("fi_ep_bind(cq)", ret);
		goto err;
	}
	ret = fi_enable(ep);
	if (ret) {
		RAW_ERR("fi_enable", ret);
		goto err;
	}
	*out = conn;
	return 0;
err:
	bench_raw_ops.free_conn(conn);
	return -EIO;
}

static int raw_connect(struct bench_ctx *ctx, struct bench_conn **out)
{
	struct raw_state *st = raw_st(ctx);
	struct bench_conn *conn;
	int ret;

	/* Connect where the server says it listens. */
	if (ctx->fabric_addr.sin_addr.s_addr && st->info->dest_addr &&
	    st->info->dest_addrlen >= sizeof(struct sockaddr_in))
		((struct sockaddr_in *)st->info->dest_addr)->sin_addr =
		        ctx->fabric_addr.sin_addr;
	ret = raw_ep_setup(ctx, st->info, &conn);
	if (ret)
		return ret;
	ret = fi_connect(conn->ep, st->info->dest_addr, NULL, 0);
	if (ret) {
		RAW_ERR("fi_connect", ret);
		bench_raw_ops.free_conn(conn);
		return -ECONNREFUSED;
	}
	*out = conn;
	return 0;
}

static int raw_accept(struct bench_ctx *ctx, void *req, struct bench_conn **out)
{
	struct fi_info *info = req;
	struct bench_conn *conn;
	int ret;

	ret = raw_ep_setup(ctx, info, &conn);
	if (ret) {
		fi_reject(raw_st(ctx)->pep, info->handle, NULL, 0);
		fi_freeinfo(info);
		return ret;
	}
	fi_freeinfo(info);
	ret = fi_accept(conn->ep, NULL, 0);
	if (ret) {
		RAW_ERR("fi_accept", ret);
		bench_raw_ops.free_conn(conn);
		return -EIO;
	}
	*out = conn;
	return 0;
}

/* The connection an event names, by pointer value only: never follow a
 * fid whose endpoint may already be closed. */
static struct bench_conn *raw_find(struct bench_ctx *ctx, fid_t fid)
{
	return bench_conn_find(ctx, (uintptr_t)fid);
}

/* --evd-per-ep: what an empty look at the EQ progresses. */
static void raw_progress_own(struct bench_ctx *ctx)
{
	struct raw_state *st = raw_st(ctx);
	struct bench_conn *c;
	int i;

	for (c = ctx->conns, i = 0; c && i < RAW_PROGRESS_NEWEST;
	     c = c->next, i++)
		(void)fi_cq_read(c->priv, NULL, 0);
	for (i = 0; i < RAW_PROGRESS_SWEEP && ctx->conns; i++) {
		if (!st->cursor)
			st->cursor = ctx->conns;
		(void)fi_cq_read(st->cursor->priv, NULL, 0);
		st->cursor = st->cursor->next;
	}
}

static int raw_cm_poll(struct bench_ctx *ctx, struct bench_cm_ev *ev)
{
	struct raw_state *st = raw_st(ctx);
	struct fi_eq_cm_entry entry;
	struct fi_eq_err_entry err = {0};
	uint32_t event;
	ssize_t rd;

	rd = fi_eq_read(st->eq, &event, &entry, sizeof(entry), 0);
	if (rd == -FI_EAGAIN) {
		/* tcp notices a peer's shutdown through CQ progress. */
		(void)fi_cq_read(st->cq, NULL, 0);
		if (ctx->opts->evd_per_ep)
			raw_progress_own(ctx);
		return 0;
	}
	if (rd == -FI_EAVAIL) {
		if (fi_eq_readerr(st->eq, &err, 0) < 0) {
			BENCH_ERR("fi_eq_readerr failed");
			return -EIO;
		}
		ev->conn = raw_find(ctx, err.fid);
		if (!ev->conn)
			return 0;
		BENCH_VERBOSE(ctx, "raw: connection error %s",
		              fi_strerror(err.err));
		ev->type = BENCH_CM_REJECTED;
		return 1;
	}
	if (rd < 0) {
		RAW_ERR("fi_eq_read", rd);
		return -EIO;
	}
	memset(ev, 0, sizeof(*ev));
	switch (event) {
	case FI_CONNREQ:
		ev->type = BENCH_CM_CONNREQ;
		ev->req = entry.info;
		return 1;
	case FI_CONNECTED:
		ev->conn = raw_find(ctx, entry.fid);
		if (!ev->conn)
			return 0;
		ev->conn->established = 1;
		ev->type = BENCH_CM_ESTABLISHED;
		return 1;
	case FI_SHUTDOWN:
		ev->conn = raw_find(ctx, entry.fid);
		if (!ev->conn)
			return 0;
		ev->conn->established = 0;
		ev->type = BENCH_CM_DISCONNECTED;
		return 1;
	default:
		BENCH_VERBOSE(ctx, "raw: EQ event %u ignored", event);
		return 0;
	}
}

/* libfabric gives no local event for our own shutdown: nothing to wait. */
static int raw_disconnect(struct bench_conn *conn)
{
	int ret;

	ret = fi_shutdown(conn->ep, 0);
	if (ret && ret != -FI_ENOTCONN)
		RAW_ERR("fi_shutdown", ret);
	conn->established = 0;
	return 0;
}

static void raw_free_conn(struct bench_conn *conn)
{
	struct raw_state *st = raw_st(conn->ctx);

	if (st->cursor == conn)
		st->cursor = conn->next;
	bench_conn_del(conn);
	fi_close(&((struct fid_ep *)conn->ep)->fid);
	if (conn->priv)
		fi_close(&((struct fid_cq *)conn->priv)->fid);
	free(conn);
}

static int raw_post_send(struct bench_conn *conn, struct bench_mr *mr,
                         size_t off, size_t len, uint64_t ctx)
{
	ssize_t ret;

	ret = fi_send(conn->ep, (char *)mr->buf + off, len, mr->desc, 0,
	              (void *)(uintptr_t)ctx);
	if (ret) {
		RAW_ERR("fi_send", ret);
		return -EIO;
	}
	return 0;
}

static int raw_post_recv(struct bench_conn *conn, struct bench_mr *mr,
                         size_t off, size_t len, uint64_t ctx)
{
	ssize_t ret;

	ret = fi_recv(conn->ep, (char *)mr->buf + off, len, mr->desc, 0,
	              (void *)(uintptr_t)ctx);
	if (ret) {
		RAW_ERR("fi_recv", ret);
		return -EIO;
	}
	return 0;
}

static int raw_post_write(struct bench_conn *conn, struct bench_mr *mr,
                          size_t off, size_t len, uint64_t raddr, uint64_t rkey,
                          uint64_t ctx)
{
	struct iovec iov = {(char *)mr->buf + off, len};
	struct fi_rma_iov rma = {raddr, len, rkey};
	struct fi_msg_rma msg = {
	        .msg_iov = &iov,
	        .desc = &mr->desc,
	        .iov_count = 1,
	        .rma_iov = &rma,
	        .rma_iov_count = 1,
	        .context = (void *)(uintptr_t)ctx,
	};
	ssize_t ret;

	/* What DAT asks for on tcp (DAPL_OFI_WRITE_COMPLETION=delivery). */
	if (conn->ctx->opts->raw_delivery)
		ret = fi_writemsg(conn->ep, &msg,
		                  FI_COMPLETION | FI_DELIVERY_COMPLETE);
	else
		ret = fi_write(conn->ep, (char *)mr->buf + off, len, mr->desc,
		               0, raddr, rkey, (void *)(uintptr_t)ctx);
	if (ret) {
		RAW_ERR("fi_write", ret);
		return -EIO;
	}
	return 0;
}

static int raw_post_read(struct bench_conn *conn, struct bench_mr *mr,
                         size_t off, size_t len, uint64_t raddr, uint64_t rkey,
                         uint64_t ctx)
{
	ssize_t ret;

	ret = fi_read(conn->ep, (char *)mr->buf + off, len, mr->desc, 0, raddr,
	              rkey, (void *)(uintptr_t)ctx);
	if (ret) {
		RAW_ERR("fi_read", ret);
		return -EIO;
	}
	return 0;
}

/* The context of --raw-writeimm=two's write halves: read and dropped. */
static char raw_wimm_sink;

/* A post that found the queue full: progress, and once more. */
#define RAW_RETRY(conn, call)                                                \
	__extension__({                                                     \
		ssize_t r_;                                                  \
		while ((r_ = (call)) == -FI_EAGAIN)                          \
			raw_progress((conn)->ctx);                           \
		r_;                                                          \
	})

static void raw_progress(struct bench_ctx *ctx);

/*
 * --raw-writeimm=two: what dapl-ofi does on tcp and sockets, where
 * fi_writedata takes no receive at the target. An RDMA write with no
 * completion of its own (an inject where it fits), then an empty message
 * carrying the immediate data and the write's length as its CQ data,
 * which the target takes a receive for; with --raw-write=delivery the
 * message completes once the target has it.
 */
static int raw_post_writeimm_two(struct bench_conn *conn, struct bench_mr *mr,
                                 size_t off, size_t len, uint64_t raddr,
                                 uint64_t rkey, uint32_t imm, uint64_t ctx)
{
	struct raw_state *st = raw_st(conn->ctx);
	struct fi_msg msg = {
	        .context = (void *)(uintptr_t)ctx,
	        .data = (uint64_t)imm | (uint64_t)len << 32,
	};
	void *buf = (char *)mr->buf + off;
	ssize_t ret;

	if (len <= st->info->tx_attr->inject_size)
		ret = RAW_RETRY(conn, fi_inject_write(conn->ep, buf, len, 0,
		                                      raddr, rkey));
	else
		ret = RAW_RETRY(conn, fi_write(conn->ep, buf, len, mr->desc, 0,
		                               raddr, rkey, &raw_wimm_sink));
	if (ret) {
		RAW_ERR("fi_write", ret);
		return -EIO;
	}
	ret = RAW_RETRY(conn,
	                fi_sendmsg(conn->ep, &msg,
	                           FI_COMPLETION | FI_REMOTE_CQ_DATA |
	                                   (conn->ctx->opts->raw_delivery
	                                            ? FI_DELIVERY_COMPLETE
	                                            : 0)));
	if (ret) {
		RAW_ERR("fi_senddata", ret);
		return -EIO;
	}
	return 0;
}

static int raw_post_writeimm(struct bench_conn *conn, struct bench_mr *mr,
                             size_t off, size_t len, uint64_t raddr,
                             uint64_t rkey, uint32_t imm, uint64_t ctx)
{
	struct iovec iov = {(char *)mr->buf + off, len};
	struct fi_rma_iov rma = {raddr, len, rkey};
	struct fi_msg_rma msg = {
	        .msg_iov = &iov,
	        .desc = &mr->desc,
	        .iov_count = 1,
	        .rma_iov = &rma,
	        .rma_iov_count = 1,
	        .context = (void *)(uintptr_t)ctx,
	        .data = imm,
	};
	ssize_t ret;

	if (conn->ctx->opts->raw_wimm_two)
		return raw_post_writeimm_two(conn, mr, off, len, raddr, rkey,
		                             imm, ctx);
	if (conn->ctx->opts->raw_delivery)
		ret = fi_writemsg(conn->ep, &msg,
		                  FI_COMPLETION | FI_REMOTE_CQ_DATA |
		                          FI_DELIVERY_COMPLETE);
	else
		ret = fi_writedata(conn->ep, iov.iov_base, len, mr->desc, imm,
		                   0, raddr, rkey, (void *)(uintptr_t)ctx);
	if (ret) {
		RAW_ERR("fi_writedata", ret);
		return -EIO;
	}
	return 0;
}

/* fi_writedata takes no receive on tcp and sockets; --raw-writeimm=two's
 * message takes one, of 8 bytes as DAT's. */
static int raw_post_recv_imm(struct bench_conn *conn, struct bench_mr *mr,
                             size_t off, uint64_t ctx)
{
	if (conn->ctx->opts->raw_wimm_two)
		return raw_post_recv(conn, mr, off, 8, ctx);
	return 0;
}

static int raw_post_fadd(struct bench_conn *conn, struct bench_mr *mr,
                         size_t off, uint64_t raddr, uint64_t rkey,
                         uint64_t ctx)
{
	/* libfabric reads the operand until completion: a constant. */
	static const uint64_t one = 1;
	ssize_t ret;

	ret = fi_fetch_atomic(conn->ep, &one, 1, NULL, (char *)mr->buf + off,
	                      mr->desc, 0, raddr, rkey, FI_UINT64, FI_SUM,
	                      (void *)(uintptr_t)ctx);
	if (ret) {
		RAW_ERR("fi_fetch_atomic", ret);
		return -EIO;
	}
	return 0;
}

static int raw_poll_cq(struct fid_cq *cq, struct bench_comp *comp)
{
	struct fi_cq_data_entry e;
	struct fi_cq_err_entry err = {0};
	ssize_t ret;

	/* Read as the CQ's format, FI_CQ_FORMAT_MSG but for writeimm: an
	 * fi_cq_msg_entry is the start of an fi_cq_data_entry. */
	ret = fi_cq_read(cq, &e, 1);
	if (ret == 1 && e.op_context == &raw_wimm_sink)
		return 0; /* --raw-writeimm=two: a write half */
	if (ret == 1) {
		comp->ctx = (uint64_t)(uintptr_t)e.op_context;
		comp->len = e.len;
		if (e.flags & FI_REMOTE_WRITE) {
			/* fi_writedata's data at the target */
			comp->op = BENCH_OP_RECV_IMM;
			comp->imm = e.data;
		} else if ((e.flags & (FI_RECV | FI_REMOTE_CQ_DATA)) ==
		           (FI_RECV | FI_REMOTE_CQ_DATA)) {
			/* --raw-writeimm=two: its message */
			comp->op = BENCH_OP_RECV_IMM;
			comp->imm = (uint32_t)e.data;
			comp->len = (size_t)(e.data >> 32);
		} else if (e.flags & FI_ATOMIC)
			comp->op = BENCH_OP_ATOMIC;
		else if (e.flags & FI_RECV)
			comp->op = BENCH_OP_RECV;
		else if (e.flags & FI_READ)
			comp->op = BENCH_OP_READ;
		else if (e.flags & FI_WRITE)
			comp->op = BENCH_OP_WRITE;
		else
			comp->op = BENCH_OP_SEND;
		return 1;
	}
	if (ret == -FI_EAGAIN) {
		bench_poll_empty();
		return 0;
	}
	if (ret == -FI_EAVAIL) {
		if (fi_cq_readerr(cq, &err, 0) == 1)
			BENCH_ERR("completion error: %s (prov_errno %d)",
			          fi_strerror(err.err), err.prov_errno);
		else
			BENCH_ERR("fi_cq_readerr failed");
		return -EIO;
	}
	RAW_ERR("fi_cq_read", ret);
	return -EIO;
}

static int raw_poll(struct bench_ctx *ctx, struct bench_comp *comp)
{
	return raw_poll_cq(raw_st(ctx)->cq, comp);
}

static int raw_poll_conn(struct bench_conn *conn, struct bench_comp *comp)
{
	return raw_poll_cq(conn->priv ? conn->priv : raw_st(conn->ctx)->cq,
	                   comp);
}

static void raw_progress(struct bench_ctx *ctx)
{
	(void)fi_cq_read(raw_st(ctx)->cq, NULL, 0);
}

const struct bench_ops bench_raw_ops = {
        .name = "raw",
        .open = raw_open,
        .close = raw_close,
        .listen = raw_listen,
        .reg = raw_reg,
        .dereg = raw_dereg,
        .connect = raw_connect,
        .accept = raw_accept,
        .cm_poll = raw_cm_poll,
        .disconnect = raw_disconnect,
        .free_conn = raw_free_conn,
        .post_send = raw_post_send,
        .post_recv = raw_post_recv,
        .post_write = raw_post_write,
        .post_read = raw_post_read,
        .post_writeimm = raw_post_writeimm,
        .post_recv_imm = raw_post_recv_imm,
        .post_fadd = raw_post_fadd,
        .poll = raw_poll,
        .poll_conn = raw_poll_conn,
        .progress = raw_progress,
};
