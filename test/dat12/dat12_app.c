/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * dat12_app: a whole DAT 1.2 program, written to <dat/udat.h> and the
 * 1.2 man pages and built with "cc dat12_app.c -ldat". In one process
 * and one IA it connects two Endpoints through a PSP (the passive side
 * reads the private data with dat_cr_query and accepts), rejects a third
 * with the one-argument 1.2 dat_cr_reject, sends a message each way, RDMA
 * writes and reads with 1.2 triplets (lmr_context, pad, virtual_address,
 * segment_length; rmr_context, pad, target_address, segment_length),
 * posts and dequeues a software event, and disconnects gracefully. Each
 * result is checked; any failure ends the run with exit status 1.
 *
 * Usage: dat12_app [IA]   (default ofi-tcp; DAT_OVERRIDE picks dat.conf)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dat/udat.h>

#define APP_BUF_LEN    4096 /* each of the three areas of a side's buffer */
#define APP_TIMEOUT_US (20u * 1000u * 1000u)
#define APP_PDATA      "dat12"

/* One connected Endpoint and what it owns. */
struct app_side {
	const char *name;
	DAT_EP_HANDLE ep;
	DAT_EVD_HANDLE req_evd, recv_evd, conn_evd;
	DAT_LMR_HANDLE lmr;
	DAT_LMR_CONTEXT lmr_context;
	DAT_RMR_CONTEXT rmr_context;
	unsigned char *buf; /* message area, RDMA area A, RDMA area B */
};

static int app_failed;

static int app_fail(const char *what, DAT_RETURN ret)
{
	const char *major = "?", *minor = "?";

	dat_strerror(ret, &major, &minor);
	fprintf(stderr, "dat12_app: FAIL: %s = 0x%08x (%s %s)\n", what,
	        (unsigned)ret, major, minor);
	app_failed = 1;
	return -1;
}

static int app_check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "dat12_app: FAIL: %s\n", what);
		app_failed = 1;
		return -1;
	}
	return 0;
}

#define APP_CALL(call)                                    \
	do {                                              \
		DAT_RETURN app_ret_ = (call);             \
		if (app_ret_ != DAT_SUCCESS)              \
			return app_fail(#call, app_ret_); \
	} while (0)

#define APP_CHECK(cond)                       \
	do {                                  \
		if (app_check((cond), #cond)) \
			return -1;            \
	} while (0)

static DAT_VADDR app_va(const void *p)
{
	return (DAT_VADDR)(unsigned long)p;
}

/* The next event of an EVD, which must be of the given number. */
static int app_wait(DAT_EVD_HANDLE evd, DAT_EVENT_NUMBER want, DAT_EVENT *ev,
                    const char *what)
{
	DAT_COUNT nmore = 0;
	DAT_RETURN ret;

	ret = dat_evd_wait(evd, APP_TIMEOUT_US, 1, ev, &nmore);
	if (ret != DAT_SUCCESS)
		return app_fail(what, ret);
	if (ev->event_number != want) {
		fprintf(stderr,
		        "dat12_app: FAIL: %s: event 0x%x, expected 0x%x\n",
		        what, (unsigned)ev->event_number, (unsigned)want);
		app_failed = 1;
		return -1;
	}
	return 0;
}

/* A successful DTO completion with the given cookie and length. */
static int app_dto(DAT_EVD_HANDLE evd, DAT_UINT64 cookie, DAT_VLEN len,
                   const char *what)
{
	DAT_EVENT ev;
	const DAT_DTO_COMPLETION_EVENT_DATA *dto =
	        &ev.event_data.dto_completion_event_data;

	if (app_wait(evd, DAT_DTO_COMPLETION_EVENT, &ev, what))
		return -1;
	APP_CHECK(dto->status == DAT_DTO_SUCCESS);
	APP_CHECK(dto->user_cookie.as_64 == cookie);
	APP_CHECK(dto->transfered_length == len);
	return 0;
}

/* The same, reaped with dat_evd_dequeue polling instead of waiting. */
static int app_dto_dequeue(DAT_EVD_HANDLE evd, DAT_UINT64 cookie, DAT_VLEN len)
{
	time_t end = time(NULL) + APP_TIMEOUT_US / 1000000u;
	DAT_EVENT ev;
	DAT_RETURN ret;

	do {
		ret = dat_evd_dequeue(evd, &ev);
	} while (DAT_GET_TYPE(ret) == DAT_QUEUE_EMPTY && time(NULL) < end);
	if (ret != DAT_SUCCESS)
		return app_fail("dat_evd_dequeue (RDMA write)", ret);
	APP_CHECK(ev.event_number == DAT_DTO_COMPLETION_EVENT);
	APP_CHECK(ev.event_data.dto_completion_event_data.status ==
	          DAT_DTO_SUCCESS);
	APP_CHECK(ev.event_data.dto_completion_event_data.user_cookie.as_64 ==
	          cookie);
	APP_CHECK(ev.event_data.dto_completion_event_data.transfered_length ==
	          len);
	return 0;
}

/* A 1.2 LMR triplet over [off, off + len) of a side's buffer. */
static DAT_LMR_TRIPLET app_iov(const struct app_side *s, size_t off,
                               DAT_VLEN len)
{
	DAT_LMR_TRIPLET t;

	t.lmr_context = s->lmr_context;
	t.pad = 0;
	t.virtual_address = app_va(s->buf + off);
	t.segment_length = len;
	return t;
}

static int app_side_open(DAT_IA_HANDLE ia, DAT_PZ_HANDLE pz, struct app_side *s)
{
	DAT_REGION_DESCRIPTION region;
	DAT_EP_ATTR attr;
	DAT_EP_PARAM param;
	DAT_LMR_PARAM lmr_param;
	DAT_VLEN reg_len;
	DAT_VADDR reg_addr;

	APP_CALL(dat_evd_create(ia, 16, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG,
	                        &s->req_evd));
	APP_CALL(dat_evd_create(ia, 16, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG,
	                        &s->recv_evd));
	APP_CALL(dat_evd_create(ia, 8, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG,
	                        &s->conn_evd));

	/* 1.2 attributes: sizes are DAT_VLEN. */
	memset(&attr, 0, sizeof(attr));
	attr.service_type = DAT_SERVICE_TYPE_RC;
	attr.max_message_size = APP_BUF_LEN;
	attr.max_rdma_size = APP_BUF_LEN;
	attr.qos = DAT_QOS_BEST_EFFORT;
	attr.recv_completion_flags = DAT_COMPLETION_DEFAULT_FLAG;
	attr.request_completion_flags = DAT_COMPLETION_DEFAULT_FLAG;
	attr.max_recv_dtos = 8;
	attr.max_request_dtos = 8;
	attr.max_recv_iov = 1;
	attr.max_request_iov = 1;
	attr.max_rdma_read_in = 1;
	attr.max_rdma_read_out = 1;
	APP_CALL(dat_ep_create(ia, pz, s->recv_evd, s->req_evd, s->conn_evd,
	                       &attr, &s->ep));
	APP_CALL(dat_ep_query(s->ep, DAT_EP_FIELD_ALL, &param));
	APP_CHECK(param.ep_state == DAT_EP_STATE_UNCONNECTED);
	APP_CHECK(param.pz_handle == pz);
	APP_CHECK(param.recv_evd_handle == s->recv_evd);
	APP_CHECK(param.ep_attr.max_message_size == APP_BUF_LEN);
	APP_CHECK(param.ep_attr.max_recv_dtos >= 8);

	s->buf = (unsigned char *)calloc(3, APP_BUF_LEN);
	APP_CHECK(s->buf != NULL);
	region.for_va = s->buf;
	/* 1.2: no va_type argument. */
	APP_CALL(dat_lmr_create(ia, DAT_MEM_TYPE_VIRTUAL, region,
	                        3 * APP_BUF_LEN, pz, DAT_MEM_PRIV_ALL_FLAG,
	                        &s->lmr, &s->lmr_context, &s->rmr_context,
	                        &reg_len, &reg_addr));
	APP_CHECK(reg_len >= 3 * APP_BUF_LEN);
	APP_CHECK(reg_addr <= app_va(s->buf));
	APP_CALL(dat_lmr_query(s->lmr, DAT_LMR_FIELD_ALL, &lmr_param));
	APP_CHECK(lmr_param.lmr_context == s->lmr_context);
	APP_CHECK(lmr_param.length == 3 * APP_BUF_LEN);
	APP_CHECK(lmr_param.mem_priv == DAT_MEM_PRIV_ALL_FLAG);
	return 0;
}

static void app_side_close(struct app_side *s)
{
	if (s->lmr != DAT_HANDLE_NULL && dat_lmr_free(s->lmr) != DAT_SUCCESS)
		app_check(0, "dat_lmr_free");
	if (s->ep != DAT_HANDLE_NULL && dat_ep_free(s->ep) != DAT_SUCCESS)
		app_check(0, "dat_ep_free");
	if (s->conn_evd != DAT_HANDLE_NULL &&
	    dat_evd_free(s->conn_evd) != DAT_SUCCESS)
		app_check(0, "dat_evd_free (connection)");
	if (s->recv_evd != DAT_HANDLE_NULL &&
	    dat_evd_free(s->recv_evd) != DAT_SUCCESS)
		app_check(0, "dat_evd_free (receive)");
	if (s->req_evd != DAT_HANDLE_NULL &&
	    dat_evd_free(s->req_evd) != DAT_SUCCESS)
		app_check(0, "dat_evd_free (request)");
	free(s->buf);
}

/* The next connection request on the PSP's EVD, checked. */
static int app_request(DAT_EVD_HANDLE cr_evd, DAT_PSP_HANDLE psp,
                       DAT_CONN_QUAL qual, DAT_CR_HANDLE *cr)
{
	DAT_EVENT ev;
	const DAT_CR_ARRIVAL_EVENT_DATA *arr =
	        &ev.event_data.cr_arrival_event_data;

	if (app_wait(cr_evd, DAT_CONNECTION_REQUEST_EVENT, &ev,
	             "connection request"))
		return -1;
	APP_CHECK(arr->sp_handle.psp_handle == psp);
	APP_CHECK(arr->conn_qual == qual);
	*cr = arr->cr_handle;
	return 0;
}

/* Connect client to server, with the passive side accepting. */
static int app_connect(DAT_IA_ADDRESS_PTR addr, DAT_EVD_HANDLE cr_evd,
                       DAT_PSP_HANDLE psp, DAT_CONN_QUAL qual,
                       struct app_side *cli, struct app_side *srv)
{
	DAT_CR_HANDLE cr;
	DAT_CR_PARAM crp;
	DAT_EVENT ev;

	APP_CALL(dat_ep_connect(cli->ep, addr, qual, APP_TIMEOUT_US,
	                        (DAT_COUNT)sizeof(APP_PDATA),
	                        (DAT_PVOID)APP_PDATA, DAT_QOS_BEST_EFFORT,
	                        DAT_CONNECT_DEFAULT_FLAG));
	if (app_request(cr_evd, psp, qual, &cr))
		return -1;
	APP_CALL(dat_cr_query(cr, DAT_CR_FIELD_ALL, &crp));
	APP_CHECK(crp.private_data_size >= (DAT_COUNT)sizeof(APP_PDATA));
	APP_CHECK(crp.private_data != NULL &&
	          memcmp(crp.private_data, APP_PDATA, sizeof(APP_PDATA)) == 0);
	APP_CALL(dat_cr_accept(cr, srv->ep, 0, NULL));
	if (app_wait(srv->conn_evd, DAT_CONNECTION_EVENT_ESTABLISHED, &ev,
	             "server established"))
		return -1;
	APP_CHECK(ev.event_data.connect_event_data.ep_handle == srv->ep);
	if (app_wait(cli->conn_evd, DAT_CONNECTION_EVENT_ESTABLISHED, &ev,
	             "client established"))
		return -1;
	APP_CHECK(ev.event_data.connect_event_data.ep_handle == cli->ep);
	return 0;
}

/* A third Endpoint asks; the server turns it down (1.2: no private data). */
static int app_reject(DAT_IA_ADDRESS_PTR addr, DAT_EVD_HANDLE cr_evd,
                      DAT_PSP_HANDLE psp, DAT_CONN_QUAL qual,
                      struct app_side *other)
{
	DAT_CR_HANDLE cr;
	DAT_EVENT ev;
	DAT_EP_STATE state;
	DAT_BOOLEAN recv_idle, req_idle;

	APP_CALL(dat_ep_connect(other->ep, addr, qual, APP_TIMEOUT_US, 0, NULL,
	                        DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG));
	if (app_request(cr_evd, psp, qual, &cr))
		return -1;
	APP_CALL(dat_cr_reject(cr));
	if (app_wait(other->conn_evd, DAT_CONNECTION_EVENT_PEER_REJECTED, &ev,
	             "rejected"))
		return -1;
	APP_CALL(dat_ep_get_status(other->ep, &state, &recv_idle, &req_idle));
	APP_CHECK(state == DAT_EP_STATE_DISCONNECTED);
	return 0;
}

/*
 * Server tells the client where its RDMA area A is; the client writes its
 * own area A there, reads it back into its area B, and says it is done.
 */
static int app_traffic(struct app_side *cli, struct app_side *srv)
{
	DAT_LMR_TRIPLET iov;
	DAT_RMR_TRIPLET remote;
	DAT_DTO_COOKIE cookie;
	DAT_RMR_CONTEXT rctx;
	DAT_VADDR raddr;
	size_t i;

	/* Receives first, then the server's advertisement. */
	iov = app_iov(cli, 0, APP_BUF_LEN);
	cookie.as_64 = 11;
	APP_CALL(dat_ep_post_recv(cli->ep, 1, &iov, cookie,
	                          DAT_COMPLETION_DEFAULT_FLAG));
	iov = app_iov(srv, 0, APP_BUF_LEN);
	cookie.as_64 = 21;
	APP_CALL(dat_ep_post_recv(srv->ep, 1, &iov, cookie,
	                          DAT_COMPLETION_DEFAULT_FLAG));

	rctx = srv->rmr_context;
	raddr = app_va(srv->buf + APP_BUF_LEN);
	memcpy(srv->buf, &rctx, sizeof(rctx));
	memcpy(srv->buf + sizeof(rctx), &raddr, sizeof(raddr));
	iov = app_iov(srv, 0, sizeof(rctx) + sizeof(raddr));
	cookie.as_64 = 22;
	APP_CALL(dat_ep_post_send(srv->ep, 1, &iov, cookie,
	                          DAT_COMPLETION_DEFAULT_FLAG));
	if (app_dto(srv->req_evd, 22, sizeof(rctx) + sizeof(raddr),
	            "server send") ||
	    app_dto(cli->recv_evd, 11, sizeof(rctx) + sizeof(raddr),
	            "client receive"))
		return -1;
	memcpy(&rctx, cli->buf, sizeof(rctx));
	memcpy(&raddr, cli->buf + sizeof(rctx), sizeof(raddr));

	/* RDMA write, with a 1.2 RMR triplet; reaped by dequeue. */
	for (i = 0; i < APP_BUF_LEN; i++)
		cli->buf[APP_BUF_LEN + i] = (unsigned char)(i * 7 + 3);
	iov = app_iov(cli, APP_BUF_LEN, APP_BUF_LEN);
	remote.rmr_context = rctx;
	remote.pad = 0;
	remote.target_address = raddr;
	remote.segment_length = APP_BUF_LEN;
	cookie.as_64 = 12;
	APP_CALL(dat_ep_post_rdma_write(cli->ep, 1, &iov, cookie, &remote,
	                                DAT_COMPLETION_DEFAULT_FLAG));
	if (app_dto_dequeue(cli->req_evd, 12, APP_BUF_LEN))
		return -1;

	/* RDMA read of the same bytes into area B. */
	iov = app_iov(cli, 2 * APP_BUF_LEN, APP_BUF_LEN);
	cookie.as_64 = 13;
	APP_CALL(dat_ep_post_rdma_read(cli->ep, 1, &iov, cookie, &remote,
	                               DAT_COMPLETION_DEFAULT_FLAG));
	if (app_dto(cli->req_evd, 13, APP_BUF_LEN, "RDMA read"))
		return -1;
	APP_CHECK(memcmp(cli->buf + APP_BUF_LEN, cli->buf + 2 * APP_BUF_LEN,
	                 APP_BUF_LEN) == 0);

	/* "Done": the server sees the written bytes after this arrives. */
	memcpy(cli->buf, "done", 4);
	iov = app_iov(cli, 0, 4);
	cookie.as_64 = 14;
	APP_CALL(dat_ep_post_send(cli->ep, 1, &iov, cookie,
	                          DAT_COMPLETION_DEFAULT_FLAG));
	if (app_dto(cli->req_evd, 14, 4, "client send") ||
	    app_dto(srv->recv_evd, 21, 4, "server receive"))
		return -1;
	APP_CHECK(memcmp(srv->buf, "done", 4) == 0);
	APP_CHECK(memcmp(srv->buf + APP_BUF_LEN, cli->buf + APP_BUF_LEN,
	                 APP_BUF_LEN) == 0);
	return 0;
}

/*
 * An RMR through the 1.2 bind (no LMR handle: the triplet's lmr_context
 * names the LMR): the server binds a window over its area B, the client
 * writes there through the window's context, the server unbinds.
 */
static int app_rmr(struct app_side *cli, struct app_side *srv, DAT_PZ_HANDLE pz)
{
	DAT_RMR_HANDLE rmr = DAT_HANDLE_NULL;
	DAT_RMR_CONTEXT wctx = 0;
	DAT_RMR_COOKIE rcookie;
	DAT_LMR_TRIPLET win, iov;
	DAT_RMR_TRIPLET remote;
	DAT_DTO_COOKIE cookie;
	DAT_EVENT ev;
	size_t i;

	APP_CALL(dat_rmr_create(pz, &rmr));
	win = app_iov(srv, 2 * APP_BUF_LEN, APP_BUF_LEN);
	rcookie.as_64 = 31;
	APP_CALL(dat_rmr_bind(rmr, &win, DAT_MEM_PRIV_REMOTE_WRITE_FLAG,
	                      srv->ep, rcookie, DAT_COMPLETION_DEFAULT_FLAG,
	                      &wctx));
	if (app_wait(srv->req_evd, DAT_RMR_BIND_COMPLETION_EVENT, &ev,
	             "RMR bind"))
		return -1;
	APP_CHECK(ev.event_data.rmr_completion_event_data.status ==
	          DAT_RMR_BIND_SUCCESS);
	APP_CHECK(ev.event_data.rmr_completion_event_data.rmr_handle == rmr);

	for (i = 0; i < APP_BUF_LEN; i++)
		cli->buf[APP_BUF_LEN + i] = (unsigned char)(i * 5 + 1);
	iov = app_iov(cli, APP_BUF_LEN, APP_BUF_LEN);
	remote.rmr_context = wctx;
	remote.pad = 0;
	remote.target_address = app_va(srv->buf + 2 * APP_BUF_LEN);
	remote.segment_length = APP_BUF_LEN;
	cookie.as_64 = 15;
	APP_CALL(dat_ep_post_rdma_write(cli->ep, 1, &iov, cookie, &remote,
	                                DAT_COMPLETION_DEFAULT_FLAG));
	if (app_dto(cli->req_evd, 15, APP_BUF_LEN, "write through the RMR"))
		return -1;

	/* A context that names no LMR is refused, not taken for an unbind. */
	win.lmr_context = 0;
	APP_CHECK(DAT_GET_TYPE(dat_rmr_bind(
	                  rmr, &win, DAT_MEM_PRIV_REMOTE_WRITE_FLAG, srv->ep,
	                  rcookie, DAT_COMPLETION_DEFAULT_FLAG, &wctx)) ==
	          DAT_INVALID_HANDLE);
	win.lmr_context = srv->lmr_context;

	/* A zero-length triplet unbinds. */
	win.segment_length = 0;
	rcookie.as_64 = 32;
	APP_CALL(dat_rmr_bind(rmr, &win, DAT_MEM_PRIV_REMOTE_WRITE_FLAG,
	                      srv->ep, rcookie, DAT_COMPLETION_DEFAULT_FLAG,
	                      &wctx));
	if (app_wait(srv->req_evd, DAT_RMR_BIND_COMPLETION_EVENT, &ev,
	             "RMR unbind"))
		return -1;
	APP_CALL(dat_rmr_free(rmr));
	/* The write is in once its completion (delivery on tcp) came. */
	APP_CHECK(memcmp(srv->buf + 2 * APP_BUF_LEN, cli->buf + APP_BUF_LEN,
	                 APP_BUF_LEN) == 0);
	return 0;
}

/* A software event through post_se and dequeue. */
static int app_software_event(DAT_IA_HANDLE ia)
{
	DAT_EVD_HANDLE evd;
	DAT_EVENT ev;
	int token = 0;

	APP_CALL(dat_evd_create(ia, 4, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG,
	                        &evd));
	memset(&ev, 0, sizeof(ev));
	ev.event_number = DAT_SOFTWARE_EVENT;
	ev.evd_handle = evd;
	ev.event_data.software_event_data.pointer = &token;
	APP_CALL(dat_evd_post_se(evd, &ev));
	memset(&ev, 0, sizeof(ev));
	APP_CALL(dat_evd_dequeue(evd, &ev));
	APP_CHECK(ev.event_number == DAT_SOFTWARE_EVENT);
	APP_CHECK(ev.evd_handle == evd);
	APP_CHECK(ev.event_data.software_event_data.pointer == &token);
	APP_CHECK(DAT_GET_TYPE(dat_evd_dequeue(evd, &ev)) == DAT_QUEUE_EMPTY);
	APP_CALL(dat_evd_free(evd));
	return 0;
}

static int app_run(const char *name)
{
	struct app_side cli, srv, other;
	DAT_IA_HANDLE ia = DAT_HANDLE_NULL;
	DAT_EVD_HANDLE async_evd = DAT_HANDLE_NULL, cr_evd = DAT_HANDLE_NULL;
	DAT_EVD_HANDLE async_q = DAT_HANDLE_NULL;
	DAT_PZ_HANDLE pz = DAT_HANDLE_NULL;
	DAT_PSP_HANDLE psp = DAT_HANDLE_NULL;
	DAT_IA_ATTR ia_attr;
	DAT_PROVIDER_ATTR prov_attr;
	DAT_CONN_QUAL qual = 0;
	DAT_EVENT ev;
	int rc = -1;

	memset(&cli, 0, sizeof(cli));
	memset(&srv, 0, sizeof(srv));
	memset(&other, 0, sizeof(other));
	cli.name = "client";
	srv.name = "server";
	other.name = "rejected";

	APP_CALL(dat_ia_open((const DAT_NAME_PTR)name, 8, &async_evd, &ia));
	if (dat_ia_query(ia, &async_q, DAT_IA_FIELD_ALL, &ia_attr,
	                 DAT_PROVIDER_FIELD_ALL, &prov_attr) != DAT_SUCCESS ||
	    app_check(ia_attr.ia_address_ptr != NULL, "IA address") ||
	    app_check(ia_attr.max_message_size >= APP_BUF_LEN,
	              "IA max_message_size") ||
	    app_check(async_q == async_evd, "async EVD"))
		goto out;
	printf("dat12_app: IA %s: adapter \"%s\", provider \"%s\", DAT %u.%u "
	       "library under the %d.%d API\n",
	       name, ia_attr.adapter_name, prov_attr.provider_name,
	       (unsigned)prov_attr.dapl_version_major,
	       (unsigned)prov_attr.dapl_version_minor, DAT_VERSION_MAJOR,
	       DAT_VERSION_MINOR);

	if (dat_pz_create(ia, &pz) != DAT_SUCCESS ||
	    dat_evd_create(ia, 8, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &cr_evd) !=
	            DAT_SUCCESS) {
		app_check(0, "dat_pz_create / dat_evd_create (CR)");
		goto out;
	}
	if (app_side_open(ia, pz, &cli) || app_side_open(ia, pz, &srv) ||
	    app_side_open(ia, pz, &other))
		goto out;
	if (dat_psp_create_any(ia, &qual, cr_evd, DAT_PSP_CONSUMER_FLAG,
	                       &psp) != DAT_SUCCESS) {
		app_check(0, "dat_psp_create_any");
		goto out;
	}
	if (app_connect(ia_attr.ia_address_ptr, cr_evd, psp, qual, &cli,
	                &srv) ||
	    app_reject(ia_attr.ia_address_ptr, cr_evd, psp, qual, &other) ||
	    app_traffic(&cli, &srv) || app_rmr(&cli, &srv, pz) ||
	    app_software_event(ia))
		goto out;

	if (dat_ep_disconnect(cli.ep, DAT_CLOSE_GRACEFUL_FLAG) != DAT_SUCCESS ||
	    app_wait(cli.conn_evd, DAT_CONNECTION_EVENT_DISCONNECTED, &ev,
	             "client disconnected") ||
	    app_wait(srv.conn_evd, DAT_CONNECTION_EVENT_DISCONNECTED, &ev,
	             "server disconnected")) {
		app_check(0, "graceful disconnect");
		goto out;
	}
	rc = 0;
out:
	if (psp != DAT_HANDLE_NULL && dat_psp_free(psp) != DAT_SUCCESS)
		app_check(0, "dat_psp_free");
	app_side_close(&other);
	app_side_close(&srv);
	app_side_close(&cli);
	if (cr_evd != DAT_HANDLE_NULL && dat_evd_free(cr_evd) != DAT_SUCCESS)
		app_check(0, "dat_evd_free (CR)");
	if (pz != DAT_HANDLE_NULL && dat_pz_free(pz) != DAT_SUCCESS)
		app_check(0, "dat_pz_free");
	if (ia != DAT_HANDLE_NULL &&
	    dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG) != DAT_SUCCESS)
		app_check(0, "dat_ia_close");
	return rc;
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "ofi-tcp";

	if (app_run(name) != 0 || app_failed) {
		fprintf(stderr, "dat12_app: FAIL on %s\n", name);
		return 1;
	}
	printf("dat12_app: PASS on %s (connect, accept, reject, send/recv, "
	       "RDMA write and read, RMR bind, software event, disconnect)\n",
	       name);
	return 0;
}
