/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * fabtests-dat benchmarks, DAT mode: the operations on the DAT 2.0 API.
 * One IA, one PZ, one DTO EVD for both the receive and request queues
 * (as the raw mode has one CQ), one connection EVD and, on the server, one
 * CR EVD under a PSP. Completions are taken with dat_evd_dequeue in a busy
 * loop, the DAT counterpart of fi_cq_read polling. dat_cm_rate gives its
 * EPs the default attributes (NULL), and with --evd-per-ep a DTO EVD each.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <dat2/udat.h>
#include <dat2/dat_ib_extensions.h>

#include "bench_common.h"

struct dat_state {
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async_evd;
	DAT_PZ_HANDLE pz;
	DAT_EVD_HANDLE dto_evd;
	DAT_EVD_HANDLE conn_evd;
	DAT_EVD_HANDLE cr_evd;
	DAT_PSP_HANDLE psp;
	DAT_EP_ATTR ep_attr;
	DAT_IA_ATTR ia_attr;
	struct sockaddr_in remote;
	char ia_name[DAT_NAME_MAX_LENGTH];
};

static struct dat_state *dat_st(struct bench_ctx *ctx)
{
	return ctx->priv;
}

static void dat_report(const char *file, int line, const char *call,
                       DAT_RETURN ret)
{
	const char *major = "?", *minor = "?";

	(void)dat_strerror(ret, &major, &minor);
	fprintf(stderr, "%s:%d: %s: %s %s (0x%x)\n", file, line, call, major,
	        minor, (unsigned)ret);
}

#define DAT_ERR(call, ret) dat_report(__FILE__, __LINE__, (call), (ret))

static DAT_COUNT dat_min(DAT_COUNT a, DAT_COUNT b)
{
	return a < b ? a : b;
}

static int dat_resolve(struct bench_ctx *ctx)
{
	struct dat_state *st = dat_st(ctx);
	struct addrinfo hints = {0}, *ai = NULL;
	int ret;

	hints.ai_family = AF_INET;
	ret = getaddrinfo(ctx->opts->dst_addr, NULL, &hints, &ai);
	if (ret) {
		BENCH_ERR("%s: %s", ctx->opts->dst_addr, gai_strerror(ret));
		return -EINVAL;
	}
	memcpy(&st->remote, ai->ai_addr, sizeof(st->remote));
	st->remote.sin_port = 0;
	freeaddrinfo(ai);
	return 0;
}

/* The IB extension attribute the test needs, if the IA lacks it. */
static bool dat_ext_missing(struct bench_ctx *ctx, const DAT_PROVIDER_ATTR *p)
{
	const char *need = ctx->opts->test == BENCH_TEST_WRITEIMM
	                           ? DAT_IB_ATTR_IMMED_DATA
	                   : ctx->opts->test == BENCH_TEST_ATOMIC
	                           ? DAT_IB_ATTR_FETCH_AND_ADD
	                           : NULL;
	DAT_COUNT i;

	if (need == NULL)
		return false;
	for (i = 0; i < p->num_provider_specific_attr; i++)
		if (strcmp(p->provider_specific_attr[i].name, need) == 0 &&
		    strcmp(p->provider_specific_attr[i].value, "TRUE") == 0)
			return false;
	BENCH_ERR("%s does not offer %s", ctx->opts->ia_name, need);
	return true;
}

static int dat_open(struct bench_ctx *ctx)
{
	struct bench_opts *o = ctx->opts;
	DAT_EVD_HANDLE evd_tmp = DAT_HANDLE_NULL;
	DAT_PROVIDER_ATTR pattr;
	struct dat_state *st;
	DAT_EP_ATTR *a;
	char abuf[64];
	DAT_COUNT qlen, reads;
	DAT_RETURN ret;
	int err = -EIO;

	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	ctx->priv = st;
	st->async_evd = DAT_HANDLE_NULL;

	if (!ctx->server && dat_resolve(ctx) != 0) {
		err = -EINVAL;
		goto err;
	}
	snprintf(st->ia_name, sizeof(st->ia_name), "%s", o->ia_name);
	ret = dat_ia_open(st->ia_name, 8, &st->async_evd, &st->ia);
	if (ret != DAT_SUCCESS) {
		DAT_ERR("dat_ia_open", ret);
		st->ia = DAT_HANDLE_NULL;
		err = DAT_GET_TYPE(ret) == DAT_PROVIDER_NOT_FOUND ? -ENODATA
		                                                  : -EIO;
		goto err;
	}
	ret = dat_ia_query(st->ia, &evd_tmp, DAT_IA_FIELD_ALL, &st->ia_attr,
	                   DAT_PROVIDER_FIELD_PROVIDER_SPECIFIC_ATTR, &pattr);
	if (ret != DAT_SUCCESS) {
		DAT_ERR("dat_ia_query", ret);
		goto err;
	}
	if (dat_ext_missing(ctx, &pattr)) {
		err = -ENODATA;
		goto err;
	}
	BENCH_VERBOSE(ctx, "dat: %s: local address %s", o->ia_name,
	              bench_addr_str(st->ia_attr.ia_address_ptr, abuf,
	                             sizeof(abuf)));
	BENCH_VERBOSE(ctx,
	              "dat: %s: adapter %s, max_dto_per_ep %d, max_evd_qlen "
	              "%d, max_message_size %u, max_rdma_size %u, reads %d/%d",
	              o->ia_name, st->ia_attr.adapter_name,
	              st->ia_attr.max_dto_per_ep, st->ia_attr.max_evd_qlen,
	              st->ia_attr.max_message_size, st->ia_attr.max_rdma_size,
	              st->ia_attr.max_rdma_read_per_ep_in,
	              st->ia_attr.max_rdma_read_per_ep_out);

	ret = dat_pz_create(st->ia, &st->pz);
	if (ret != DAT_SUCCESS) {
		DAT_ERR("dat_pz_create", ret);
		goto err;
	}
	qlen = (DAT_COUNT)bench_cq_size(o);
	if (st->ia_attr.max_evd_qlen > 0)
		qlen = dat_min(qlen, st->ia_attr.max_evd_qlen);
	ret = dat_evd_create(st->ia, qlen, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG,
	                     &st->dto_evd);
	if (ret != DAT_SUCCESS) {
		DAT_ERR("dat_evd_create(DTO)", ret);
		goto err;
	}
	qlen = (DAT_COUNT)bench_eq_size(o);
	if (st->ia_attr.max_evd_qlen > 0)
		qlen = dat_min(qlen, st->ia_attr.max_evd_qlen);
	ret = dat_evd_create(st->ia, qlen, DAT_HANDLE_NULL,
	                     DAT_EVD_CONNECTION_FLAG, &st->conn_evd);
	if (ret != DAT_SUCCESS) {
		DAT_ERR("dat_evd_create(CONNECTION)", ret);
		goto err;
	}
	if (ctx->server) {
		/* Requests come in no faster than the client's connects. */
		qlen = 256;
		if (st->ia_attr.max_evd_qlen > 0)
			qlen = dat_min(qlen, st->ia_attr.max_evd_qlen);
		ret = dat_evd_create(st->ia, qlen, DAT_HANDLE_NULL,
		                     DAT_EVD_CR_FLAG, &st->cr_evd);
		if (ret != DAT_SUCCESS) {
			DAT_ERR("dat_evd_create(CR)", ret);
			goto err;
		}
	}

	a = &st->ep_attr;
	a->service_type = DAT_SERVICE_TYPE_RC;
	a->max_message_size = (DAT_SEG_LENGTH)ctx->max_size;
	a->max_rdma_size = (DAT_SEG_LENGTH)ctx->max_size;
	a->qos = DAT_QOS_BEST_EFFORT;
	a->recv_completion_flags = DAT_COMPLETION_DEFAULT_FLAG;
	a->request_completion_flags = DAT_COMPLETION_DEFAULT_FLAG;
	a->max_recv_dtos = (DAT_COUNT)o->window * 2 + 8;
	a->max_request_dtos = (DAT_COUNT)o->window + 8;
	a->max_recv_iov = 1;
	a->max_request_iov = 1;
	reads = (DAT_COUNT)o->window;
	if (st->ia_attr.max_rdma_read_per_ep_out > 0)
		reads = dat_min(reads, st->ia_attr.max_rdma_read_per_ep_out);
	if (st->ia_attr.max_rdma_read_per_ep_in > 0)
		reads = dat_min(reads, st->ia_attr.max_rdma_read_per_ep_in);
	a->max_rdma_read_in = reads;
	a->max_rdma_read_out = reads;
	a->srq_soft_hw = DAT_HW_DEFAULT;
	a->max_rdma_read_iov = 1;
	a->max_rdma_write_iov = 1;

	ctx->max_window = o->window;
	if (st->ia_attr.max_dto_per_ep > 0 &&
	    st->ia_attr.max_dto_per_ep < o->window * 2 + 8)
		ctx->max_window = (st->ia_attr.max_dto_per_ep - 8) / 2;
	ctx->max_reads = reads;
	ctx->max_msg = st->ia_attr.max_message_size;
	ctx->max_rdma = st->ia_attr.max_rdma_size;
	if (ctx->max_msg && ctx->max_size > ctx->max_msg) {
		BENCH_ERR("size %zu is more than %s's max_message_size %zu",
		          ctx->max_size, o->ia_name, ctx->max_msg);
		err = -ENODATA;
		goto err;
	}
	return 0;
err:
	bench_dat_ops.close(ctx);
	return err;
}

static void dat_close(struct bench_ctx *ctx)
{
	struct dat_state *st = dat_st(ctx);
	DAT_RETURN ret;

	if (!st)
		return;
	while (ctx->conns)
		bench_dat_ops.free_conn(ctx->conns);
	bench_conns_fini(ctx);
	if (st->psp)
		(void)dat_psp_free(st->psp);
	if (st->cr_evd)
		(void)dat_evd_free(st->cr_evd);
	if (st->conn_evd)
		(void)dat_evd_free(st->conn_evd);
	if (st->dto_evd)
		(void)dat_evd_free(st->dto_evd);
	if (st->pz)
		(void)dat_pz_free(st->pz);
	if (st->ia) {
		ret = dat_ia_close(st->ia, DAT_CLOSE_GRACEFUL_FLAG);
		if (ret != DAT_SUCCESS) {
			DAT_ERR("dat_ia_close(graceful)", ret);
			(void)dat_ia_close(st->ia, DAT_CLOSE_ABRUPT_FLAG);
		}
	}
	free(st);
	ctx->priv = NULL;
}

static int dat_listen(struct bench_ctx *ctx)
{
	struct dat_state *st = dat_st(ctx);
	DAT_RETURN ret;

	ret = dat_psp_create(st->ia, (DAT_CONN_QUAL)ctx->opts->cm_port,
	                     st->cr_evd, DAT_PSP_CONSUMER_FLAG, &st->psp);
	if (ret != DAT_SUCCESS) {
		DAT_ERR("dat_psp_create", ret);
		st->psp = DAT_HANDLE_NULL;
		return -EIO;
	}
	/* Clients connect to the IA's address, as OFED's dtest does. */
	if (st->ia_attr.ia_address_ptr &&
	    st->ia_attr.ia_address_ptr->sa_family == AF_INET)
		memcpy(&ctx->fabric_addr, st->ia_attr.ia_address_ptr,
		       sizeof(ctx->fabric_addr));
	return 0;
}

static int dat_reg(struct bench_ctx *ctx, void *buf, size_t len,
                   struct bench_mr *mr)
{
	struct dat_state *st = dat_st(ctx);
	DAT_REGION_DESCRIPTION region;
	DAT_LMR_HANDLE lmr;
	DAT_LMR_CONTEXT lctx;
	DAT_RMR_CONTEXT rctx;
	DAT_VLEN reg_len;
	DAT_VADDR reg_addr;
	DAT_RETURN ret;

	region.for_va = buf;
	/* Peers get access only where the test does RDMA (as --raw). */
	ret = dat_lmr_create(
	        st->ia, DAT_MEM_TYPE_VIRTUAL, region, len, st->pz,
	        ctx->opts->test == BENCH_TEST_ATOMIC
	                ? DAT_MEM_PRIV_ALL_FLAG | DAT_IB_MEM_PRIV_REMOTE_ATOMIC
	        : bench_test_rdma(ctx->opts->test)
	                ? DAT_MEM_PRIV_ALL_FLAG
	                : DAT_MEM_PRIV_LOCAL_READ_FLAG |
	                          DAT_MEM_PRIV_LOCAL_WRITE_FLAG,
	        DAT_VA_TYPE_VA, &lmr, &lctx, &rctx, &reg_len, &reg_addr);
	if (ret != DAT_SUCCESS) {
		DAT_ERR("dat_lmr_create", ret);
		return -EIO;
	}
	mr->buf = buf;
	mr->len = len;
	mr->handle = lmr;
	mr->lkey = lctx;
	mr->rkey = rctx;
	mr->raddr = (uint64_t)(uintptr_t)buf;
	mr->desc = NULL;
	return 0;
}

static void dat_dereg(struct bench_ctx *ctx, struct bench_mr *mr)
{
	DAT_RETURN ret;

	(void)ctx;
	if (!mr->handle)
		return;
	ret = dat_lmr_free(mr->handle);
	if (ret != DAT_SUCCESS)
		DAT_ERR("dat_lmr_free", ret);
	mr->handle = NULL;
}

/*
 * A new EP on the shared DTO EVD, or (--evd-per-ep) on one of its own
 * kept in conn->priv; with the default attributes (NULL) where the
 * program asks for them.
 */
static int dat_ep_new(struct bench_ctx *ctx, struct bench_conn **out)
{
	struct dat_state *st = dat_st(ctx);
	DAT_EVD_HANDLE evd = st->dto_evd;
	struct bench_conn *conn;
	DAT_EP_HANDLE ep;
	DAT_RETURN ret;
	int err = -EIO;

	conn = calloc(1, sizeof(*conn));
	if (!conn)
		return -ENOMEM;
	if (ctx->opts->evd_per_ep) {
		ret = dat_evd_create(st->ia, BENCH_EP_EVD_QLEN, DAT_HANDLE_NULL,
		                     DAT_EVD_DTO_FLAG, &evd);
		if (ret != DAT_SUCCESS) {
			DAT_ERR("dat_evd_create(DTO, per EP)", ret);
			goto err_free;
		}
		conn->priv = evd;
	}
	ret = dat_ep_create(st->ia, st->pz, evd, evd, st->conn_evd,
	                    ctx->opts->ep_default ? NULL : &st->ep_attr, &ep);
	if (ret != DAT_SUCCESS) {
		DAT_ERR("dat_ep_create", ret);
		goto err_evd;
	}
	conn->ep = ep;
	err = bench_conn_add(ctx, conn, (uintptr_t)ep);
	if (err)
		goto err_ep;
	*out = conn;
	return 0;
err_ep:
	(void)dat_ep_free(ep);
err_evd:
	if (conn->priv)
		(void)dat_evd_free(conn->priv);
err_free:
	free(conn);
	return err;
}

static int dat_connect(struct bench_ctx *ctx, struct bench_conn **out)
{
	struct dat_state *st = dat_st(ctx);
	struct bench_conn *conn;
	DAT_RETURN ret;
	int err;

	err = dat_ep_new(ctx, &conn);
	if (err)
		return err;
	if (ctx->fabric_addr.sin_addr.s_addr)
		st->remote.sin_addr = ctx->fabric_addr.sin_addr;
	ret = dat_ep_connect(conn->ep, (DAT_IA_ADDRESS_PTR)&st->remote,
	                     (DAT_CONN_QUAL)ctx->opts->cm_port,
	                     (DAT_TIMEOUT)ctx->opts->timeout * 1000000u, 0,
	                     NULL, DAT_QOS_BEST_EFFORT,
	                     DAT_CONNECT_DEFAULT_FLAG);
	if (ret != DAT_SUCCESS) {
		DAT_ERR("dat_ep_connect", ret);
		bench_dat_ops.free_conn(conn);
		return -ECONNREFUSED;
	}
	*out = conn;
	return 0;
}

static int dat_accept(struct bench_ctx *ctx, void *req, struct bench_conn **out)
{
	struct bench_conn *conn;
	DAT_RETURN ret;
	int err;

	err = dat_ep_new(ctx, &conn);
	if (err) {
		(void)dat_cr_reject(req, 0, NULL);
		return err;
	}
	ret = dat_cr_accept(req, conn->ep, 0, NULL);
	if (ret != DAT_SUCCESS) {
		DAT_ERR("dat_cr_accept", ret);
		bench_dat_ops.free_conn(conn);
		return -EIO;
	}
	*out = conn;
	return 0;
}

static struct bench_conn *dat_find(struct bench_ctx *ctx, DAT_EP_HANDLE ep)
{
	return bench_conn_find(ctx, (uintptr_t)ep);
}

/* A connection request from the CR EVD: 1, 0 when there is none. */
static int dat_cr_poll(struct dat_state *st, struct bench_cm_ev *ev)
{
	DAT_EVENT e;
	DAT_RETURN ret;

	ret = dat_evd_dequeue(st->cr_evd, &e);
	if (DAT_GET_TYPE(ret) == DAT_QUEUE_EMPTY)
		return 0;
	if (ret != DAT_SUCCESS) {
		DAT_ERR("dat_evd_dequeue(CR)", ret);
		return -EIO;
	}
	if (e.event_number != DAT_CONNECTION_REQUEST_EVENT) {
		BENCH_ERR("CR EVD: event 0x%x", (unsigned)e.event_number);
		return -EPROTO;
	}
	ev->type = BENCH_CM_CONNREQ;
	ev->req = e.event_data.cr_arrival_event_data.cr_handle;
	return 1;
}

/*
 * Connection events first, then requests: a server that took requests
 * first, with a client that connects again as soon as it is connected,
 * could find one waiting at every call and leave the ends of connections
 * unread; their EPs were never freed, every lookup grew longer, and the
 * server fell further behind (dat_cm_rate: now and then a whole run at
 * 300-600 us per connection instead of 30).
 */
static int dat_cm_poll(struct bench_ctx *ctx, struct bench_cm_ev *ev)
{
	struct dat_state *st = dat_st(ctx);
	DAT_EVENT e;
	DAT_RETURN ret;

	memset(ev, 0, sizeof(*ev));
	ret = dat_evd_dequeue(st->conn_evd, &e);
	if (DAT_GET_TYPE(ret) == DAT_QUEUE_EMPTY)
		return st->cr_evd ? dat_cr_poll(st, ev) : 0;
	if (ret != DAT_SUCCESS) {
		DAT_ERR("dat_evd_dequeue(CONNECTION)", ret);
		return -EIO;
	}
	ev->conn = dat_find(ctx, e.event_data.connect_event_data.ep_handle);
	if (!ev->conn) {
		BENCH_VERBOSE(ctx, "dat: event 0x%x for an EP no longer here",
		              (unsigned)e.event_number);
		return 0;
	}
	switch (e.event_number) {
	case DAT_CONNECTION_EVENT_ESTABLISHED:
		ev->conn->established = 1;
		ev->type = BENCH_CM_ESTABLISHED;
		return 1;
	case DAT_CONNECTION_EVENT_DISCONNECTED:
	case DAT_CONNECTION_EVENT_BROKEN:
		ev->conn->established = 0;
		ev->type = BENCH_CM_DISCONNECTED;
		return 1;
	case DAT_CONNECTION_EVENT_PEER_REJECTED:
	case DAT_CONNECTION_EVENT_NON_PEER_REJECTED:
	case DAT_CONNECTION_EVENT_ACCEPT_COMPLETION_ERROR:
	case DAT_CONNECTION_EVENT_TIMED_OUT:
	case DAT_CONNECTION_EVENT_UNREACHABLE:
		BENCH_VERBOSE(ctx, "dat: connection event 0x%x",
		              (unsigned)e.event_number);
		ev->type = BENCH_CM_REJECTED;
		return 1;
	default:
		BENCH_ERR("connection EVD: event 0x%x",
		          (unsigned)e.event_number);
		return -EPROTO;
	}
}

/* DAT reports our own disconnect too: the caller waits for it. */
static int dat_disconnect(struct bench_conn *conn)
{
	DAT_RETURN ret;

	if (!conn->established)
		return 0;
	ret = dat_ep_disconnect(conn->ep, DAT_CLOSE_ABRUPT_FLAG);
	if (ret != DAT_SUCCESS) {
		/* The peer's disconnect may have come first. */
		if (DAT_GET_TYPE(ret) != DAT_INVALID_STATE)
			DAT_ERR("dat_ep_disconnect", ret);
		return 0;
	}
	return 1;
}

static void dat_free_conn(struct bench_conn *conn)
{
	DAT_RETURN ret;

	bench_conn_del(conn);
	ret = dat_ep_free(conn->ep);
	if (ret != DAT_SUCCESS)
		DAT_ERR("dat_ep_free", ret);
	if (conn->priv) {
		ret = dat_evd_free(conn->priv);
		if (ret != DAT_SUCCESS)
			DAT_ERR("dat_evd_free(DTO, per EP)", ret);
	}
	free(conn);
}

static int dat_post_send(struct bench_conn *conn, struct bench_mr *mr,
                         size_t off, size_t len, uint64_t ctx)
{
	DAT_LMR_TRIPLET iov;
	DAT_DTO_COOKIE ck;
	DAT_RETURN ret;

	iov.virtual_address = (DAT_VADDR)(uintptr_t)((char *)mr->buf + off);
	iov.segment_length = (DAT_SEG_LENGTH)len;
	iov.lmr_context = (DAT_LMR_CONTEXT)mr->lkey;
	ck.as_64 = ctx;
	ret = dat_ep_post_send(conn->ep, 1, &iov, ck,
	                       DAT_COMPLETION_DEFAULT_FLAG);
	if (ret != DAT_SUCCESS) {
		DAT_ERR("dat_ep_post_send", ret);
		return -EIO;
	}
	return 0;
}

static int dat_post_recv(struct bench_conn *conn, struct bench_mr *mr,
                         size_t off, size_t len, uint64_t ctx)
{
	DAT_LMR_TRIPLET iov;
	DAT_DTO_COOKIE ck;
	DAT_RETURN ret;

	iov.virtual_address = (DAT_VADDR)(uintptr_t)((char *)mr->buf + off);
	iov.segment_length = (DAT_SEG_LENGTH)len;
	iov.lmr_context = (DAT_LMR_CONTEXT)mr->lkey;
	ck.as_64 = ctx;
	ret = dat_ep_post_recv(conn->ep, 1, &iov, ck,
	                       DAT_COMPLETION_DEFAULT_FLAG);
	if (ret != DAT_SUCCESS) {
		DAT_ERR("dat_ep_post_recv", ret);
		return -EIO;
	}
	return 0;
}

/* The local and the remote triplet of an RDMA operation. */
static void dat_rdma_iov(const struct bench_mr *mr, size_t off, size_t len,
                         uint64_t raddr, uint64_t rkey, DAT_LMR_TRIPLET *iov,
                         DAT_RMR_TRIPLET *rem)
{
	iov->virtual_address = (DAT_VADDR)(uintptr_t)((char *)mr->buf + off);
	iov->segment_length = (DAT_SEG_LENGTH)len;
	iov->lmr_context = (DAT_LMR_CONTEXT)mr->lkey;
	rem->virtual_address = raddr;
	rem->segment_length = (DAT_SEG_LENGTH)len;
	rem->rmr_context = (DAT_RMR_CONTEXT)rkey;
}

static int dat_post_write(struct bench_conn *conn, struct bench_mr *mr,
                          size_t off, size_t len, uint64_t raddr, uint64_t rkey,
                          uint64_t ctx)
{
	DAT_LMR_TRIPLET iov;
	DAT_RMR_TRIPLET rem;
	DAT_DTO_COOKIE ck;
	DAT_RETURN ret;

	dat_rdma_iov(mr, off, len, raddr, rkey, &iov, &rem);
	ck.as_64 = ctx;
	ret = dat_ep_post_rdma_write(conn->ep, 1, &iov, ck, &rem,
	                             DAT_COMPLETION_DEFAULT_FLAG);
	if (ret != DAT_SUCCESS) {
		DAT_ERR("dat_ep_post_rdma_write", ret);
		return -EIO;
	}
	return 0;
}

static int dat_post_read(struct bench_conn *conn, struct bench_mr *mr,
                         size_t off, size_t len, uint64_t raddr, uint64_t rkey,
                         uint64_t ctx)
{
	DAT_LMR_TRIPLET iov;
	DAT_RMR_TRIPLET rem;
	DAT_DTO_COOKIE ck;
	DAT_RETURN ret;

	dat_rdma_iov(mr, off, len, raddr, rkey, &iov, &rem);
	ck.as_64 = ctx;
	ret = dat_ep_post_rdma_read(conn->ep, 1, &iov, ck, &rem,
	                            DAT_COMPLETION_DEFAULT_FLAG);
	if (ret != DAT_SUCCESS) {
		DAT_ERR("dat_ep_post_rdma_read", ret);
		return -EIO;
	}
	return 0;
}

static int dat_post_writeimm(struct bench_conn *conn, struct bench_mr *mr,
                             size_t off, size_t len, uint64_t raddr,
                             uint64_t rkey, uint32_t imm, uint64_t ctx)
{
	DAT_LMR_TRIPLET iov;
	DAT_RMR_TRIPLET rem;
	DAT_DTO_COOKIE ck;
	DAT_RETURN ret;

	dat_rdma_iov(mr, off, len, raddr, rkey, &iov, &rem);
	ck.as_64 = ctx;
	ret = dat_ib_post_rdma_write_immed(conn->ep, 1, &iov, ck, &rem, imm,
	                                   DAT_COMPLETION_DEFAULT_FLAG);
	if (ret != DAT_SUCCESS) {
		DAT_ERR("dat_ib_post_rdma_write_immed", ret);
		return -EIO;
	}
	return 0;
}

/* The receive a write with immediate data takes: 8 bytes at off. */
static int dat_post_recv_imm(struct bench_conn *conn, struct bench_mr *mr,
                             size_t off, uint64_t ctx)
{
	return dat_post_recv(conn, mr, off, 8, ctx);
}

static int dat_post_fadd(struct bench_conn *conn, struct bench_mr *mr,
                         size_t off, uint64_t raddr, uint64_t rkey,
                         uint64_t ctx)
{
	DAT_LMR_TRIPLET iov;
	DAT_RMR_TRIPLET rem;
	DAT_DTO_COOKIE ck;
	DAT_RETURN ret;

	dat_rdma_iov(mr, off, 8, raddr, rkey, &iov, &rem);
	ck.as_64 = ctx;
	ret = dat_ib_post_fetch_and_add(conn->ep, 1, &iov, ck, &rem,
	                                DAT_COMPLETION_DEFAULT_FLAG);
	if (ret != DAT_SUCCESS) {
		DAT_ERR("dat_ib_post_fetch_and_add", ret);
		return DAT_GET_TYPE(ret) == DAT_MODEL_NOT_SUPPORTED ? -ENODATA
		                                                    : -EIO;
	}
	return 0;
}

static const char *dat_dto_status_name(DAT_DTO_COMPLETION_STATUS s)
{
	switch (s) {
	case DAT_DTO_SUCCESS:
		return "success";
	case DAT_DTO_ERR_FLUSHED:
		return "flushed";
	case DAT_DTO_ERR_LOCAL_LENGTH:
		return "local length";
	case DAT_DTO_ERR_LOCAL_EP:
		return "local EP";
	case DAT_DTO_ERR_LOCAL_PROTECTION:
		return "local protection";
	case DAT_DTO_ERR_REMOTE_ACCESS:
		return "remote access";
	case DAT_DTO_ERR_TRANSPORT:
		return "transport";
	default:
		return "error";
	}
}

static int dat_poll_evd(DAT_EVD_HANDLE evd, struct bench_comp *comp)
{
	const DAT_DTO_COMPLETION_EVENT_DATA *d;
	DAT_EVENT e;
	DAT_RETURN ret;

	ret = dat_evd_dequeue(evd, &e);
	if (ret != DAT_SUCCESS) {
		if (DAT_GET_TYPE(ret) == DAT_QUEUE_EMPTY) {
			bench_poll_empty();
			return 0;
		}
		DAT_ERR("dat_evd_dequeue(DTO)", ret);
		return -EIO;
	}
	if (e.event_number != DAT_DTO_COMPLETION_EVENT &&
	    e.event_number != (DAT_EVENT_NUMBER)DAT_IB_DTO_EVENT) {
		BENCH_ERR("DTO EVD: event 0x%x", (unsigned)e.event_number);
		return -EPROTO;
	}
	d = &e.event_data.dto_completion_event_data;
	if (d->status != DAT_DTO_SUCCESS) {
		BENCH_ERR("DTO completion: %s (%d), operation %d",
		          dat_dto_status_name(d->status), (int)d->status,
		          (int)d->operation);
		return -EIO;
	}
	comp->ctx = d->user_cookie.as_64;
	comp->len = d->transfered_length;
	if (e.event_number == (DAT_EVENT_NUMBER)DAT_IB_DTO_EVENT) {
		const DAT_IB_EXTENSION_EVENT_DATA *x =
		        (const void *)e.event_extension_data;

		comp->op = x->type == DAT_IB_RDMA_WRITE_IMMED_DATA
		                   ? BENCH_OP_RECV_IMM
		           : x->type == DAT_IB_RDMA_WRITE_IMMED
		                   ? BENCH_OP_WRITE_IMM
		                   : BENCH_OP_ATOMIC;
		comp->imm = x->val.immed.data;
		return 1;
	}
	switch (d->operation) {
	case DAT_DTO_RECEIVE:
	case DAT_DTO_RECEIVE_WITH_INVALIDATE:
		comp->op = BENCH_OP_RECV;
		break;
	case DAT_DTO_RDMA_WRITE:
		comp->op = BENCH_OP_WRITE;
		break;
	case DAT_DTO_RDMA_READ:
		comp->op = BENCH_OP_READ;
		break;
	default:
		comp->op = BENCH_OP_SEND;
		break;
	}
	return 1;
}

static int dat_poll(struct bench_ctx *ctx, struct bench_comp *comp)
{
	return dat_poll_evd(dat_st(ctx)->dto_evd, comp);
}

static int dat_poll_conn(struct bench_conn *conn, struct bench_comp *comp)
{
	return dat_poll_evd(
	        conn->priv ? conn->priv : dat_st(conn->ctx)->dto_evd, comp);
}

const struct bench_ops bench_dat_ops = {
        .name = "dat",
        .open = dat_open,
        .close = dat_close,
        .listen = dat_listen,
        .reg = dat_reg,
        .dereg = dat_dereg,
        .connect = dat_connect,
        .accept = dat_accept,
        .cm_poll = dat_cm_poll,
        .disconnect = dat_disconnect,
        .free_conn = dat_free_conn,
        .post_send = dat_post_send,
        .post_recv = dat_post_recv,
        .post_write = dat_post_write,
        .post_read = dat_post_read,
        .post_writeimm = dat_post_writeimm,
        .post_recv_imm = dat_post_recv_imm,
        .post_fadd = dat_post_fadd,
        .poll = dat_poll,
        .poll_conn = dat_poll_conn,
        .progress = NULL,
};
