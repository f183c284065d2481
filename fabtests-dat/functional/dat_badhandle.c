/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * dat_badhandle: every DAT call that takes a handle, with each of its
 * handle arguments (primary and secondary) replaced by a bad one while
 * the others are valid: NULL (where NULL is not a valid value), small
 * integers, misaligned values, addresses in the kernel's half, pointers
 * to random readable memory (one of them with a real provider table in
 * its first word), a live handle of every other type and a freed handle
 * of every type. Each call runs in a forked child with the default
 * actions for the crash signals put back (libfabric's psm libraries catch
 * them and exit(1), which would hide a crash). The parent requires that
 * the child exits normally and that the call returned a
 * DAT_INVALID_HANDLE class code (or the class the call documents for
 * that argument). A child still in its call after 10 s stops itself; the
 * parent logs the child's backtrace (gdb, where installed) and fails the
 * call. Single process, one IA.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dof/dats.h"
#include "shared.h"

enum ht {
	T_IA,
	T_PZ,
	T_LMR,
	T_RMR,
	T_EVD,
	T_CNO,
	T_EP,
	T_PSP,
	T_RSP,
	T_CR,
	T_SRQ,
	T_ANY, /* a generic DAT_HANDLE: every live type is valid */
	T_NTYPES
};

static const char *const type_name[T_NTYPES] = {
        "IA", "PZ",  "LMR", "RMR", "EVD", "CNO",
        "EP", "PSP", "RSP", "CR",  "SRQ", "handle",
};

#define MAXH 4

/* The valid handles a call gets for the arguments not under test. */
static struct {
	DAT_HANDLE live[T_NTYPES];
	DAT_HANDLE freed[T_NTYPES];
	DAT_EVD_HANDLE dto_evd, conn_evd, cr_evd, async_evd;
	DAT_EP_HANDLE ep_free, ep_conn; /* unconnected; connected */
	struct ft_mr mr;
	DAT_LMR_TRIPLET iov;
	DAT_RMR_TRIPLET rmr_iov;
	void *random_mem, *forged_mem;
} g;

/* One handle argument of a call. */
struct harg {
	enum ht type;
	bool null_ok; /* DAT_HANDLE_NULL is a valid value here */
	/* Another class the call documents for a bad value here (0: none). */
	DAT_RETURN alt;
	/* Another class the call documents for NULL here (0: none). */
	DAT_RETURN null_alt;
};

struct call {
	const char *name;
	int nh;
	struct harg arg[MAXH];
	DAT_RETURN (*fn)(DAT_HANDLE *h);
};

/* ---- the calls ----------------------------------------------------------- */

static DAT_RETURN c_ia_openv(DAT_HANDLE *h)
{
	DAT_EVD_HANDLE evd = h[0];
	DAT_IA_HANDLE ia = DAT_HANDLE_NULL;

	return dat_ia_open((DAT_NAME_PTR)ft_opts.ia_name, 8, &evd, &ia);
}

static DAT_RETURN c_ia_close(DAT_HANDLE *h)
{
	return dat_ia_close(h[0], DAT_CLOSE_ABRUPT_FLAG);
}

static DAT_RETURN c_ia_query(DAT_HANDLE *h)
{
	DAT_IA_ATTR a;
	DAT_PROVIDER_ATTR p;
	DAT_EVD_HANDLE evd;

	return dat_ia_query(h[0], &evd, DAT_IA_FIELD_ALL, &a,
	                    DAT_PROVIDER_FIELD_ALL, &p);
}

static DAT_RETURN c_set_context(DAT_HANDLE *h)
{
	DAT_CONTEXT ctx;

	ctx.as_64 = 42;
	return dat_set_consumer_context(h[0], ctx);
}

static DAT_RETURN c_get_context(DAT_HANDLE *h)
{
	DAT_CONTEXT ctx;

	return dat_get_consumer_context(h[0], &ctx);
}

static DAT_RETURN c_get_handle_type(DAT_HANDLE *h)
{
	DAT_HANDLE_TYPE t;

	return dat_get_handle_type(h[0], &t);
}

static DAT_RETURN c_extension_op(DAT_HANDLE *h)
{
	return dat_extension_op(h[0], (DAT_EXTENDED_OP)1, NULL);
}

static DAT_RETURN c_cr_query(DAT_HANDLE *h)
{
	DAT_CR_PARAM p;

	return dat_cr_query(h[0], DAT_CR_FIELD_ALL, &p);
}

static DAT_RETURN c_cr_accept(DAT_HANDLE *h)
{
	return dat_cr_accept(h[0], h[1], 0, NULL);
}

static DAT_RETURN c_cr_reject(DAT_HANDLE *h)
{
	return dat_cr_reject(h[0], 0, NULL);
}

static DAT_RETURN c_cr_handoff(DAT_HANDLE *h)
{
	return dat_cr_handoff(h[0], 4242);
}

static DAT_RETURN c_evd_create(DAT_HANDLE *h)
{
	DAT_EVD_HANDLE evd;

	return dat_evd_create(h[0], 8, h[1], DAT_EVD_DTO_FLAG, &evd);
}

static DAT_RETURN c_evd_query(DAT_HANDLE *h)
{
	DAT_EVD_PARAM p;

	return dat_evd_query(h[0], DAT_EVD_FIELD_ALL, &p);
}

static DAT_RETURN c_evd_modify_cno(DAT_HANDLE *h)
{
	return dat_evd_modify_cno(h[0], h[1]);
}

static DAT_RETURN c_evd_enable(DAT_HANDLE *h)
{
	return dat_evd_enable(h[0]);
}

static DAT_RETURN c_evd_disable(DAT_HANDLE *h)
{
	return dat_evd_disable(h[0]);
}

static DAT_RETURN c_evd_wait(DAT_HANDLE *h)
{
	DAT_EVENT ev;
	DAT_COUNT n;

	return dat_evd_wait(h[0], 1000, 1, &ev, &n);
}

static DAT_RETURN c_evd_resize(DAT_HANDLE *h)
{
	return dat_evd_resize(h[0], 32);
}

static DAT_RETURN c_evd_post_se(DAT_HANDLE *h)
{
	DAT_EVENT ev;

	memset(&ev, 0, sizeof(ev));
	ev.event_number = DAT_SOFTWARE_EVENT;
	ev.evd_handle = h[0];
	return dat_evd_post_se(h[0], &ev);
}

static DAT_RETURN c_evd_dequeue(DAT_HANDLE *h)
{
	DAT_EVENT ev;

	return dat_evd_dequeue(h[0], &ev);
}

static DAT_RETURN c_evd_free(DAT_HANDLE *h)
{
	return dat_evd_free(h[0]);
}

static DAT_RETURN c_evd_set_unwaitable(DAT_HANDLE *h)
{
	return dat_evd_set_unwaitable(h[0]);
}

static DAT_RETURN c_evd_clear_unwaitable(DAT_HANDLE *h)
{
	return dat_evd_clear_unwaitable(h[0]);
}

static DAT_RETURN c_cno_create(DAT_HANDLE *h)
{
	DAT_CNO_HANDLE cno;

	return dat_cno_create(h[0], DAT_OS_WAIT_PROXY_AGENT_NULL, &cno);
}

static DAT_RETURN c_cno_modify_agent(DAT_HANDLE *h)
{
	return dat_cno_modify_agent(h[0], DAT_OS_WAIT_PROXY_AGENT_NULL);
}

static DAT_RETURN c_cno_query(DAT_HANDLE *h)
{
	DAT_CNO_PARAM p;

	return dat_cno_query(h[0], DAT_CNO_FIELD_ALL, &p);
}

static DAT_RETURN c_cno_free(DAT_HANDLE *h)
{
	return dat_cno_free(h[0]);
}

static DAT_RETURN c_cno_wait(DAT_HANDLE *h)
{
	DAT_EVD_HANDLE evd;

	return dat_cno_wait(h[0], 1000, &evd);
}

static DAT_RETURN c_ep_create(DAT_HANDLE *h)
{
	DAT_EP_HANDLE ep;

	return dat_ep_create(h[0], h[1], h[2], h[3], g.conn_evd, NULL, &ep);
}

static DAT_RETURN c_ep_create_conn(DAT_HANDLE *h)
{
	DAT_EP_HANDLE ep;

	return dat_ep_create(h[0], g.live[T_PZ], g.dto_evd, g.dto_evd, h[1],
	                     NULL, &ep);
}

static DAT_RETURN c_ep_create_with_srq(DAT_HANDLE *h)
{
	DAT_EP_HANDLE ep;
	DAT_EP_ATTR a;

	memset(&a, 0, sizeof(a));
	a.service_type = DAT_SERVICE_TYPE_RC;
	a.max_recv_dtos = 4;
	a.max_request_dtos = 4;
	return dat_ep_create_with_srq(h[0], h[1], g.dto_evd, g.dto_evd,
	                              g.conn_evd, h[2], &a, &ep);
}

static DAT_RETURN c_ep_query(DAT_HANDLE *h)
{
	DAT_EP_PARAM p;

	return dat_ep_query(h[0], DAT_EP_FIELD_ALL, &p);
}

static DAT_RETURN c_ep_modify(DAT_HANDLE *h)
{
	DAT_EP_PARAM p;

	memset(&p, 0, sizeof(p));
	p.pz_handle = h[1];
	return dat_ep_modify(h[0], DAT_EP_FIELD_PZ_HANDLE, &p);
}

static DAT_RETURN c_ep_modify_evds(DAT_HANDLE *h)
{
	DAT_EP_PARAM p;

	memset(&p, 0, sizeof(p));
	p.recv_evd_handle = h[1];
	p.request_evd_handle = h[2];
	p.connect_evd_handle = h[3];
	return dat_ep_modify(h[0],
	                     DAT_EP_FIELD_RECV_EVD_HANDLE |
	                             DAT_EP_FIELD_REQUEST_EVD_HANDLE |
	                             DAT_EP_FIELD_CONNECT_EVD_HANDLE,
	                     &p);
}

static DAT_RETURN c_ep_connect(DAT_HANDLE *h)
{
	struct sockaddr_in sin;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(0x7f000001);
	return dat_ep_connect(h[0], (DAT_IA_ADDRESS_PTR)&sin, 4242, 1000000, 0,
	                      NULL, DAT_QOS_BEST_EFFORT,
	                      DAT_CONNECT_DEFAULT_FLAG);
}

static DAT_RETURN c_ep_dup_connect(DAT_HANDLE *h)
{
	return dat_ep_dup_connect(h[0], h[1], 1000000, 0, NULL,
	                          DAT_QOS_BEST_EFFORT);
}

static DAT_RETURN c_ep_disconnect(DAT_HANDLE *h)
{
	return dat_ep_disconnect(h[0], DAT_CLOSE_ABRUPT_FLAG);
}

static DAT_RETURN c_ep_post_send(DAT_HANDLE *h)
{
	DAT_DTO_COOKIE c;

	c.as_64 = 1;
	return dat_ep_post_send(h[0], 1, &g.iov, c,
	                        DAT_COMPLETION_DEFAULT_FLAG);
}

static DAT_RETURN c_ep_post_recv(DAT_HANDLE *h)
{
	DAT_DTO_COOKIE c;

	c.as_64 = 2;
	return dat_ep_post_recv(h[0], 1, &g.iov, c,
	                        DAT_COMPLETION_DEFAULT_FLAG);
}

static DAT_RETURN c_ep_post_rdma_read(DAT_HANDLE *h)
{
	DAT_DTO_COOKIE c;

	c.as_64 = 3;
	return dat_ep_post_rdma_read(h[0], 1, &g.iov, c, &g.rmr_iov,
	                             DAT_COMPLETION_DEFAULT_FLAG);
}

static DAT_RETURN c_ep_post_rdma_write(DAT_HANDLE *h)
{
	DAT_DTO_COOKIE c;

	c.as_64 = 4;
	return dat_ep_post_rdma_write(h[0], 1, &g.iov, c, &g.rmr_iov,
	                              DAT_COMPLETION_DEFAULT_FLAG);
}

static DAT_RETURN c_ep_get_status(DAT_HANDLE *h)
{
	DAT_EP_STATE st;
	DAT_BOOLEAN a, b;

	return dat_ep_get_status(h[0], &st, &a, &b);
}

static DAT_RETURN c_ep_free(DAT_HANDLE *h)
{
	return dat_ep_free(h[0]);
}

static DAT_RETURN c_ep_reset(DAT_HANDLE *h)
{
	return dat_ep_reset(h[0]);
}

static DAT_RETURN c_ep_recv_query(DAT_HANDLE *h)
{
	DAT_COUNT a, b;

	return dat_ep_recv_query(h[0], &a, &b);
}

static DAT_RETURN c_ep_set_watermark(DAT_HANDLE *h)
{
	return dat_ep_set_watermark(h[0], 1, 1);
}

static DAT_RETURN c_lmr_create(DAT_HANDLE *h)
{
	DAT_REGION_DESCRIPTION r;
	DAT_LMR_HANDLE lmr;
	DAT_LMR_CONTEXT lc;
	DAT_RMR_CONTEXT rc;
	DAT_VLEN len;
	DAT_VADDR va;

	r.for_va = g.mr.buf;
	return dat_lmr_create(h[0], DAT_MEM_TYPE_VIRTUAL, r, 4096, h[1],
	                      DAT_MEM_PRIV_ALL_FLAG, DAT_VA_TYPE_VA, &lmr, &lc,
	                      &rc, &len, &va);
}

static DAT_RETURN c_lmr_create_shared(DAT_HANDLE *h)
{
	DAT_REGION_DESCRIPTION r;
	DAT_LMR_HANDLE lmr;
	DAT_LMR_CONTEXT lc;
	DAT_RMR_CONTEXT rc;
	DAT_VLEN len;
	DAT_VADDR va;

	r.for_lmr_handle = h[1];
	return dat_lmr_create(h[0], DAT_MEM_TYPE_LMR, r, 4096, g.live[T_PZ],
	                      DAT_MEM_PRIV_ALL_FLAG, DAT_VA_TYPE_VA, &lmr, &lc,
	                      &rc, &len, &va);
}

static DAT_RETURN c_lmr_query(DAT_HANDLE *h)
{
	DAT_LMR_PARAM p;

	return dat_lmr_query(h[0], DAT_LMR_FIELD_ALL, &p);
}

static DAT_RETURN c_lmr_free(DAT_HANDLE *h)
{
	return dat_lmr_free(h[0]);
}

static DAT_RETURN c_lmr_sync_rdma_read(DAT_HANDLE *h)
{
	return dat_lmr_sync_rdma_read(h[0], &g.iov, 1);
}

static DAT_RETURN c_lmr_sync_rdma_write(DAT_HANDLE *h)
{
	return dat_lmr_sync_rdma_write(h[0], &g.iov, 1);
}

static DAT_RETURN c_rmr_create(DAT_HANDLE *h)
{
	DAT_RMR_HANDLE rmr;

	return dat_rmr_create(h[0], &rmr);
}

static DAT_RETURN c_rmr_query(DAT_HANDLE *h)
{
	DAT_RMR_PARAM p;

	return dat_rmr_query(h[0], DAT_RMR_FIELD_ALL, &p);
}

static DAT_RETURN c_rmr_bind(DAT_HANDLE *h)
{
	DAT_RMR_CONTEXT ctx;
	DAT_RMR_COOKIE c;

	c.as_64 = 5;
	return dat_rmr_bind(h[0], h[1], &g.iov, DAT_MEM_PRIV_ALL_FLAG,
	                    DAT_VA_TYPE_VA, h[2], c,
	                    DAT_COMPLETION_DEFAULT_FLAG, &ctx);
}

static DAT_RETURN c_rmr_free(DAT_HANDLE *h)
{
	return dat_rmr_free(h[0]);
}

static DAT_RETURN c_psp_create(DAT_HANDLE *h)
{
	DAT_PSP_HANDLE psp;

	return dat_psp_create(h[0], 4243, h[1], DAT_PSP_CONSUMER_FLAG, &psp);
}

static DAT_RETURN c_psp_create_any(DAT_HANDLE *h)
{
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL q;

	return dat_psp_create_any(h[0], &q, h[1], DAT_PSP_CONSUMER_FLAG, &psp);
}

static DAT_RETURN c_psp_query(DAT_HANDLE *h)
{
	DAT_PSP_PARAM p;

	return dat_psp_query(h[0], DAT_PSP_FIELD_ALL, &p);
}

static DAT_RETURN c_psp_free(DAT_HANDLE *h)
{
	return dat_psp_free(h[0]);
}

static DAT_RETURN c_rsp_create(DAT_HANDLE *h)
{
	DAT_RSP_HANDLE rsp;

	return dat_rsp_create(h[0], 4244, h[1], h[2], &rsp);
}

static DAT_RETURN c_rsp_query(DAT_HANDLE *h)
{
	DAT_RSP_PARAM p;

	return dat_rsp_query(h[0], DAT_RSP_FIELD_ALL, &p);
}

static DAT_RETURN c_rsp_free(DAT_HANDLE *h)
{
	return dat_rsp_free(h[0]);
}

static DAT_RETURN c_pz_create(DAT_HANDLE *h)
{
	DAT_PZ_HANDLE pz;

	return dat_pz_create(h[0], &pz);
}

static DAT_RETURN c_pz_query(DAT_HANDLE *h)
{
	DAT_PZ_PARAM p;

	return dat_pz_query(h[0], DAT_PZ_FIELD_ALL, &p);
}

static DAT_RETURN c_pz_free(DAT_HANDLE *h)
{
	return dat_pz_free(h[0]);
}

static DAT_RETURN c_srq_create(DAT_HANDLE *h)
{
	DAT_SRQ_ATTR a;
	DAT_SRQ_HANDLE srq;

	memset(&a, 0, sizeof(a));
	a.max_recv_dtos = 8;
	a.max_recv_iov = 1;
	return dat_srq_create(h[0], h[1], &a, &srq);
}

static DAT_RETURN c_srq_free(DAT_HANDLE *h)
{
	return dat_srq_free(h[0]);
}

static DAT_RETURN c_srq_post_recv(DAT_HANDLE *h)
{
	DAT_DTO_COOKIE c;

	c.as_64 = 6;
	return dat_srq_post_recv(h[0], 1, &g.iov, c);
}

static DAT_RETURN c_srq_query(DAT_HANDLE *h)
{
	DAT_SRQ_PARAM p;

	return dat_srq_query(h[0], DAT_SRQ_FIELD_ALL, &p);
}

static DAT_RETURN c_srq_resize(DAT_HANDLE *h)
{
	return dat_srq_resize(h[0], 16);
}

static DAT_RETURN c_srq_set_lw(DAT_HANDLE *h)
{
	return dat_srq_set_lw(h[0], 1);
}

static DAT_RETURN c_dats_get_ia_handle(DAT_HANDLE *h)
{
	DAT_IA_HANDLE out;

	return dats_get_ia_handle(h[0], &out);
}

/* Shorthands for the table. */
/* clang-format off */
#define H(t)       {T_##t, false, 0, 0}
#define HN(t)      {T_##t, true, 0, 0}
#define HA(t, alt) {T_##t, false, alt, 0}
/* NULL asks for the request's own EP: without one, a bad parameter. */
#define HNP(t)     {T_##t, false, 0, DAT_INVALID_PARAMETER}
/* An SRQ EP's PZ must be its SRQ's: NULL is a bad parameter. */
#define HSRQPZ     {T_PZ, false, 0, DAT_INVALID_PARAMETER}
/* clang-format on */

static const struct call calls[] = {
        {"dat_ia_open(async_evd)", 1, {HN(EVD)}, c_ia_openv},
        {"dat_ia_close", 1, {H(IA)}, c_ia_close},
        {"dat_ia_query", 1, {H(IA)}, c_ia_query},
        {"dat_set_consumer_context", 1, {H(ANY)}, c_set_context},
        {"dat_get_consumer_context", 1, {H(ANY)}, c_get_context},
        {"dat_get_handle_type", 1, {H(ANY)}, c_get_handle_type},
        {"dat_extension_op", 1, {H(ANY)}, c_extension_op},
        {"dat_cr_query", 1, {H(CR)}, c_cr_query},
        {"dat_cr_accept", 2, {H(CR), HNP(EP)}, c_cr_accept},
        {"dat_cr_reject", 1, {H(CR)}, c_cr_reject},
        {"dat_cr_handoff", 1, {H(CR)}, c_cr_handoff},
        {"dat_evd_create", 2, {H(IA), HN(CNO)}, c_evd_create},
        {"dat_evd_query", 1, {H(EVD)}, c_evd_query},
        {"dat_evd_modify_cno", 2, {H(EVD), HN(CNO)}, c_evd_modify_cno},
        {"dat_evd_enable", 1, {H(EVD)}, c_evd_enable},
        {"dat_evd_disable", 1, {H(EVD)}, c_evd_disable},
        {"dat_evd_wait", 1, {H(EVD)}, c_evd_wait},
        {"dat_evd_resize", 1, {H(EVD)}, c_evd_resize},
        {"dat_evd_post_se", 1, {H(EVD)}, c_evd_post_se},
        {"dat_evd_dequeue", 1, {H(EVD)}, c_evd_dequeue},
        {"dat_evd_free", 1, {H(EVD)}, c_evd_free},
        {"dat_evd_set_unwaitable", 1, {H(EVD)}, c_evd_set_unwaitable},
        {"dat_evd_clear_unwaitable", 1, {H(EVD)}, c_evd_clear_unwaitable},
        {"dat_cno_create", 1, {H(IA)}, c_cno_create},
        {"dat_cno_modify_agent", 1, {H(CNO)}, c_cno_modify_agent},
        {"dat_cno_query", 1, {H(CNO)}, c_cno_query},
        {"dat_cno_free", 1, {H(CNO)}, c_cno_free},
        {"dat_cno_wait", 1, {H(CNO)}, c_cno_wait},
        {"dat_ep_create", 4, {H(IA), HN(PZ), HN(EVD), HN(EVD)}, c_ep_create},
        {"dat_ep_create(connect_evd)", 2, {H(IA), HN(EVD)}, c_ep_create_conn},
        {"dat_ep_create_with_srq",
         3,
         {H(IA), HSRQPZ, H(SRQ)},
         c_ep_create_with_srq},
        {"dat_ep_query", 1, {H(EP)}, c_ep_query},
        {"dat_ep_modify(pz)", 2, {H(EP), H(PZ)}, c_ep_modify},
        {"dat_ep_modify(evds)",
         4,
         {H(EP), HN(EVD), HN(EVD), HN(EVD)},
         c_ep_modify_evds},
        {"dat_ep_connect", 1, {H(EP)}, c_ep_connect},
        {"dat_ep_dup_connect", 2, {H(EP), H(EP)}, c_ep_dup_connect},
        {"dat_ep_disconnect", 1, {H(EP)}, c_ep_disconnect},
        {"dat_ep_post_send", 1, {H(EP)}, c_ep_post_send},
        {"dat_ep_post_recv", 1, {H(EP)}, c_ep_post_recv},
        {"dat_ep_post_rdma_read", 1, {H(EP)}, c_ep_post_rdma_read},
        {"dat_ep_post_rdma_write", 1, {H(EP)}, c_ep_post_rdma_write},
        {"dat_ep_get_status", 1, {H(EP)}, c_ep_get_status},
        {"dat_ep_free", 1, {H(EP)}, c_ep_free},
        {"dat_ep_reset", 1, {H(EP)}, c_ep_reset},
        {"dat_ep_recv_query", 1, {H(EP)}, c_ep_recv_query},
        {"dat_ep_set_watermark", 1, {H(EP)}, c_ep_set_watermark},
        {"dat_lmr_create", 2, {H(IA), H(PZ)}, c_lmr_create},
        {"dat_lmr_create(shared)", 2, {H(IA), H(LMR)}, c_lmr_create_shared},
        {"dat_lmr_query", 1, {H(LMR)}, c_lmr_query},
        {"dat_lmr_free", 1, {H(LMR)}, c_lmr_free},
        {"dat_lmr_sync_rdma_read", 1, {H(IA)}, c_lmr_sync_rdma_read},
        {"dat_lmr_sync_rdma_write", 1, {H(IA)}, c_lmr_sync_rdma_write},
        {"dat_rmr_create", 1, {H(PZ)}, c_rmr_create},
        {"dat_rmr_query", 1, {H(RMR)}, c_rmr_query},
        {"dat_rmr_bind", 3, {H(RMR), HN(LMR), H(EP)}, c_rmr_bind},
        {"dat_rmr_free", 1, {H(RMR)}, c_rmr_free},
        {"dat_psp_create", 2, {H(IA), H(EVD)}, c_psp_create},
        {"dat_psp_create_any", 2, {H(IA), H(EVD)}, c_psp_create_any},
        {"dat_psp_query", 1, {H(PSP)}, c_psp_query},
        {"dat_psp_free", 1, {H(PSP)}, c_psp_free},
        {"dat_rsp_create", 3, {H(IA), H(EP), H(EVD)}, c_rsp_create},
        {"dat_rsp_query", 1, {H(RSP)}, c_rsp_query},
        {"dat_rsp_free", 1, {H(RSP)}, c_rsp_free},
        {"dat_pz_create", 1, {H(IA)}, c_pz_create},
        {"dat_pz_query", 1, {H(PZ)}, c_pz_query},
        {"dat_pz_free", 1, {H(PZ)}, c_pz_free},
        {"dat_srq_create", 2, {H(IA), H(PZ)}, c_srq_create},
        {"dat_srq_free", 1, {H(SRQ)}, c_srq_free},
        {"dat_srq_post_recv", 1, {H(SRQ)}, c_srq_post_recv},
        {"dat_srq_query", 1, {H(SRQ)}, c_srq_query},
        {"dat_srq_resize", 1, {H(SRQ)}, c_srq_resize},
        {"dat_srq_set_lw", 1, {H(SRQ)}, c_srq_set_lw},
        {"dats_get_ia_handle", 1, {H(IA)}, c_dats_get_ia_handle},
};

#define NCALLS (sizeof(calls) / sizeof(calls[0]))

/* The valid value of handle argument i of a call. */
static DAT_HANDLE valid_arg(const struct call *c, int i)
{
	enum ht t = c->arg[i].type;

	if (c->fn == c_ia_openv)
		return DAT_HANDLE_NULL; /* the provider makes the async EVD */
	if (t == T_EVD) {
		if (c->fn == c_psp_create || c->fn == c_psp_create_any ||
		    c->fn == c_rsp_create)
			return g.cr_evd;
		if (c->fn == c_ep_create_conn ||
		    (c->fn == c_ep_modify_evds && i == 3))
			return g.conn_evd;
		if (c->fn == c_ep_create || c->fn == c_ep_modify_evds)
			return g.dto_evd;
		return g.live[T_EVD];
	}
	if (t == T_EP) {
		/* Calls that want an unconnected EP. */
		if (c->fn == c_rsp_create || c->fn == c_cr_accept ||
		    c->fn == c_ep_modify || c->fn == c_ep_modify_evds ||
		    (c->fn == c_ep_dup_connect && i == 0))
			return g.ep_free;
		return g.ep_conn;
	}
	if (t == T_ANY)
		return g.live[T_EP];
	return g.live[t];
}

/* ---- bad values ---------------------------------------------------------- */

struct bad {
	const char *what;
	DAT_HANDLE h;
};

#define MAXBAD 48

/* Every bad value for an argument of type t. */
static int bad_values(const struct harg *a, struct bad *out)
{
	static char names[2][T_NTYPES][32];
	int n = 0, u;

	if (!a->null_ok)
		out[n++] = (struct bad){"NULL", DAT_HANDLE_NULL};
	/* 1 is the open IA's handle, valid where an IA or any handle goes. */
	if (g.live[T_IA] != (DAT_HANDLE)(uintptr_t)1 ||
	    (a->type != T_IA && a->type != T_ANY))
		out[n++] = (struct bad){"(void *)1", (DAT_HANDLE)(uintptr_t)1};
	out[n++] = (struct bad){"(void *)65535 (no open IA)",
	                        (DAT_HANDLE)(uintptr_t)65535};
	out[n++] = (struct bad){"(void *)4095", (DAT_HANDLE)(uintptr_t)4095};
	out[n++] =
	        (struct bad){"(void *)0x10007", (DAT_HANDLE)(uintptr_t)0x10007};
	out[n++] = (struct bad){"a live EP + 1 (misaligned)",
	                        (DAT_HANDLE)((char *)g.live[T_EP] + 1)};
	out[n++] = (struct bad){"a live EVD + 4 (misaligned)",
	                        (DAT_HANDLE)((char *)g.dto_evd + 4)};
	out[n++] = (struct bad){"(void *)-1", (DAT_HANDLE)(intptr_t)-1};
#if defined(__x86_64__) || defined(__aarch64__)
	/* Where the library can tell a kernel address (dapl-ofi(7)). */
	out[n++] = (struct bad){"a kernel address",
	                        (DAT_HANDLE)(uintptr_t)0xffff888000001000ull};
#endif
	out[n++] = (struct bad){"256 random bytes", g.random_mem};
	out[n++] = (struct bad){"random bytes behind a real provider table",
	                        g.forged_mem};
	for (u = 0; u < T_NTYPES; u++) {
		if (u == T_ANY)
			continue;
		if (a->type != T_ANY && u != (int)a->type) {
			snprintf(names[0][u], sizeof(names[0][u]),
			         "a live %s handle", type_name[u]);
			out[n++] = (struct bad){names[0][u], g.live[u]};
		}
		snprintf(names[1][u], sizeof(names[1][u]), "a freed %s handle",
		         type_name[u]);
		out[n++] = (struct bad){names[1][u], g.freed[u]};
	}
	return n;
}

/* ---- running one call in a child ----------------------------------------- */

static DAT_RETURN *shared_ret;
static bool show_logs;

enum outcome { OK, CRASHED, WRONG };

/* A child still in its call after 10 s stops itself, for a backtrace. */
static void hang_stop(int sig)
{
	(void)sig;
	raise(SIGSTOP);
}

/* The stopped child's threads, as gdb shows them, into the log. */
static void hang_backtrace(pid_t pid)
{
	char cmd[256];

	fflush(stdout);
	fflush(stderr);
	snprintf(cmd, sizeof(cmd),
	         "command -v gdb >/dev/null 2>&1 || "
	         "{ echo '    (no gdb here for a backtrace)'; exit 0; }; "
	         "timeout 60 gdb -q -batch -nx -p %d "
	         "-ex 'thread apply all bt' 2>&1 | sed 's/^/    /'",
	         (int)pid);
	if (system(cmd) != 0)
		printf("    (the backtrace failed)\n");
	fflush(stdout);
}

static enum outcome run_one(const struct call *c, int arg, const struct bad *b)
{
	static const int sigs[] = {SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE};
	DAT_HANDLE h[MAXH];
	DAT_RETURN ret;
	size_t s;
	pid_t pid;
	int st, i;

	for (i = 0; i < c->nh; i++)
		h[i] = valid_arg(c, i);
	h[arg] = b->h;
	*shared_ret = 0xdeadbeef;
	pid = fork();
	if (pid < 0)
		ft_fatal_(__FILE__, __LINE__, "fork: %s", strerror(errno));
	if (pid == 0) {
		/* Crashes must kill the child, whoever caught them before. */
		for (s = 0; s < sizeof(sigs) / sizeof(sigs[0]); s++)
			signal(sigs[s], SIG_DFL);
		signal(SIGALRM, hang_stop);
		alarm(10);
		if (!show_logs) {
			int fd = open("/dev/null", O_WRONLY);

			if (fd >= 0)
				dup2(fd, 2);
		}
		*shared_ret = c->fn(h);
		_exit(0);
	}
	while (waitpid(pid, &st, WUNTRACED) < 0 && errno == EINTR)
		;
	if (WIFSTOPPED(st)) {
		FT_CHECK(false,
		         "%s, handle %d (%s) = %s: the child was still in the "
		         "call after 10 s; its threads:",
		         c->name, arg + 1, type_name[c->arg[arg].type],
		         b->what);
		hang_backtrace(pid);
		kill(pid, SIGKILL);
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		return CRASHED;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		FT_CHECK(false, "%s, handle %d (%s) = %s: the child %s %d",
		         c->name, arg + 1, type_name[c->arg[arg].type], b->what,
		         WIFSIGNALED(st) ? "died of signal" : "exited with",
		         WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
		return CRASHED;
	}
	ret = *shared_ret;
	if (DAT_GET_TYPE(ret) == DAT_INVALID_HANDLE ||
	    (c->arg[arg].alt != 0 &&
	     DAT_GET_TYPE(ret) == DAT_GET_TYPE(c->arg[arg].alt)) ||
	    (b->h == DAT_HANDLE_NULL && c->arg[arg].null_alt != 0 &&
	     DAT_GET_TYPE(ret) == DAT_GET_TYPE(c->arg[arg].null_alt)))
		return OK;
	FT_CHECK(false, "%s, handle %d (%s) = %s: returned %s", c->name,
	         arg + 1, type_name[c->arg[arg].type], b->what,
	         ft_ret_str(ret));
	return WRONG;
}

/* ---- the objects --------------------------------------------------------- */

static DAT_CR_HANDLE get_cr(struct ft_listener *l, DAT_EP_HANDLE cep,
                            DAT_IA_ADDRESS_PTR addr)
{
	DAT_EVENT ev;

	FT_DAT_OK(dat_ep_connect(cep, addr, l->qual, FT_TIMEOUT_US, 0, NULL,
	                         DAT_QOS_BEST_EFFORT,
	                         DAT_CONNECT_DEFAULT_FLAG));
	FT_REQUIRE(ft_expect_event(l->cr_evd, FT_TIMEOUT_US,
	                           DAT_CONNECTION_REQUEST_EVENT, NULL, &ev,
	                           "a connection request arrives"),
	           "a CR to test with");
	return ev.event_data.cr_arrival_event_data.cr_handle;
}

static void make_objects(struct ft_ia *ia, struct ft_listener *l,
                         struct ft_ep *cep, struct ft_ep *cep2,
                         struct ft_ep *sep, struct ft_ep *xep)
{
	DAT_IA_HANDLE ia2 = DAT_HANDLE_NULL;
	DAT_EVD_HANDLE evd2 = DAT_HANDLE_NULL, async2 = DAT_HANDLE_NULL;
	DAT_CNO_HANDLE cno2;
	DAT_PZ_HANDLE pz2;
	DAT_RMR_HANDLE rmr2;
	DAT_PSP_HANDLE psp2;
	DAT_RSP_HANDLE rsp;
	DAT_EP_HANDLE ep2;
	DAT_SRQ_HANDLE srq2;
	DAT_SRQ_ATTR sa;
	struct ft_mr mr2;
	DAT_CR_HANDLE cr2;
	DAT_CONN_QUAL q2;
	uint64_t *w;
	size_t i;

	g.live[T_IA] = ia->ia;
	g.live[T_PZ] = ia->pz;
	FT_DAT_OK(ft_mr_create(ia, ia->pz, 4096, DAT_MEM_PRIV_ALL_FLAG, &g.mr));
	g.live[T_LMR] = g.mr.lmr;
	g.iov = ft_lmr_iov(&g.mr, 0, 64);
	g.rmr_iov = ft_rmr_iov(&g.mr, 0, 64);
	FT_DAT_OK(dat_rmr_create(ia->pz, &g.live[T_RMR]));
	FT_DAT_OK(dat_cno_create(ia->ia, DAT_OS_WAIT_PROXY_AGENT_NULL,
	                         &g.live[T_CNO]));
	memset(&sa, 0, sizeof(sa));
	sa.max_recv_dtos = 8;
	sa.max_recv_iov = 1;
	FT_DAT_OK(dat_srq_create(ia->ia, ia->pz, &sa, &g.live[T_SRQ]));
	FT_DAT_OK(ft_ep_create(ia, ia->pz, NULL, 16, sep));
	FT_DAT_OK(ft_ep_create(ia, ia->pz, NULL, 16, cep));
	FT_DAT_OK(ft_ep_create(ia, ia->pz, NULL, 16, cep2));
	FT_DAT_OK(ft_ep_create(ia, ia->pz, NULL, 16, xep));
	g.dto_evd = sep->req_evd;
	g.conn_evd = sep->conn_evd;
	g.live[T_EVD] = sep->recv_evd;
	g.ep_free = sep->ep;
	FT_DAT_OK(ft_listen(ia, l));
	g.cr_evd = l->cr_evd;
	g.live[T_PSP] = l->psp;
	FT_DAT_OK(dat_rsp_create(ia->ia, l->qual + 1, xep->ep, g.cr_evd, &rsp));
	g.live[T_RSP] = rsp;
	/* A pending CR (never answered) and a connected EP pair. */
	g.live[T_CR] = get_cr(l, cep->ep, ia->attr.ia_address_ptr);
	cr2 = get_cr(l, cep2->ep, ia->attr.ia_address_ptr);
	FT_DAT_OK(dat_ep_create(ia->ia, ia->pz, g.dto_evd, g.dto_evd,
	                        g.conn_evd, NULL, &g.ep_conn));
	FT_DAT_OK(dat_cr_accept(cr2, g.ep_conn, 0, NULL));
	FT_REQUIRE(ft_expect_event(g.conn_evd, FT_TIMEOUT_US,
	                           DAT_CONNECTION_EVENT_ESTABLISHED, g.ep_conn,
	                           NULL, "the passive EP connects"),
	           "a connected EP");
	FT_REQUIRE(ft_expect_event(cep2->conn_evd, FT_TIMEOUT_US,
	                           DAT_CONNECTION_EVENT_ESTABLISHED, cep2->ep,
	                           NULL, "the active EP connects"),
	           "a connected EP");
	g.live[T_EP] = g.ep_conn;

	/* One freed handle of each type. */
	FT_DAT_OK(dat_ia_open((DAT_NAME_PTR)ft_opts.ia_name, 8, &async2, &ia2));
	FT_DAT_OK(dat_ia_close(ia2, DAT_CLOSE_ABRUPT_FLAG));
	g.freed[T_IA] = ia2;
	FT_DAT_OK(dat_pz_create(ia->ia, &pz2));
	FT_DAT_OK(dat_pz_free(pz2));
	g.freed[T_PZ] = pz2;
	FT_DAT_OK(ft_mr_create(ia, ia->pz, 4096, DAT_MEM_PRIV_ALL_FLAG, &mr2));
	g.freed[T_LMR] = mr2.lmr;
	ft_mr_free(&mr2);
	FT_DAT_OK(dat_rmr_create(ia->pz, &rmr2));
	FT_DAT_OK(dat_rmr_free(rmr2));
	g.freed[T_RMR] = rmr2;
	FT_DAT_OK(ft_evd_create(ia, 8, DAT_EVD_DTO_FLAG, &evd2));
	FT_DAT_OK(dat_evd_free(evd2));
	g.freed[T_EVD] = evd2;
	FT_DAT_OK(dat_cno_create(ia->ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno2));
	FT_DAT_OK(dat_cno_free(cno2));
	g.freed[T_CNO] = cno2;
	FT_DAT_OK(dat_srq_create(ia->ia, ia->pz, &sa, &srq2));
	FT_DAT_OK(dat_srq_free(srq2));
	g.freed[T_SRQ] = srq2;
	FT_DAT_OK(dat_ep_create(ia->ia, ia->pz, g.dto_evd, g.dto_evd,
	                        g.conn_evd, NULL, &ep2));
	FT_DAT_OK(dat_ep_free(ep2));
	g.freed[T_EP] = ep2;
	FT_DAT_OK(dat_psp_create_any(ia->ia, &q2, g.cr_evd,
	                             DAT_PSP_CONSUMER_FLAG, &psp2));
	FT_DAT_OK(dat_psp_free(psp2));
	g.freed[T_PSP] = psp2;
	/* The RSP goes, and the CR on the PSP is rejected: both freed. */
	FT_DAT_OK(dat_ep_create(ia->ia, ia->pz, g.dto_evd, g.dto_evd,
	                        g.conn_evd, NULL, &ep2));
	FT_DAT_OK(dat_rsp_create(ia->ia, l->qual + 2, ep2, g.cr_evd, &rsp));
	FT_DAT_OK(dat_rsp_free(rsp));
	g.freed[T_RSP] = rsp;
	FT_DAT_OK(dat_ep_free(ep2));
	{
		struct ft_ep cep3;

		FT_DAT_OK(ft_ep_create(ia, ia->pz, NULL, 16, &cep3));
		cr2 = get_cr(l, cep3.ep, ia->attr.ia_address_ptr);
		FT_DAT_OK(dat_cr_reject(cr2, 0, NULL));
		g.freed[T_CR] = cr2;
		(void)ft_expect_event(cep3.conn_evd, FT_TIMEOUT_US,
		                      DAT_CONNECTION_EVENT_PEER_REJECTED,
		                      cep3.ep, NULL,
		                      "the rejected EP hears so");
		ft_ep_free(&cep3);
	}

	/* Readable memory that is no handle: random, and random behind a
	 * real provider table (what libdat2 alone cannot tell). */
	g.random_mem = malloc(256);
	g.forged_mem = malloc(256);
	FT_REQUIRE(g.random_mem && g.forged_mem, "256 bytes twice");
	srandom(0x5eed);
	w = g.random_mem;
	for (i = 0; i < 256 / sizeof(*w); i++)
		w[i] = ((uint64_t)random() << 33) ^ ((uint64_t)random() << 2) ^
		       (uint64_t)random();
	memcpy(g.forged_mem, g.random_mem, 256);
	memcpy(g.forged_mem, g.live[T_EP], sizeof(void *));
}

static void check_live_objects(void)
{
	DAT_HANDLE_TYPE t;
	int u;

	/* The objects are what the test thinks, and alive. */
	for (u = 0; u < T_NTYPES; u++)
		if (u != T_ANY)
			FT_DAT_CHECK(dat_get_handle_type(g.live[u], &t));
}

int main(int argc, char **argv)
{
	struct ft_ep cep, cep2, sep, xep;
	struct ft_listener l;
	struct ft_ia ia;
	long calls_made = 0, crashes = 0, wrong = 0;
	size_t ci;
	int a;

	ft_init(argc, argv, "dat_badhandle",
	        "every handle-taking DAT call with bad handles, each in a "
	        "child",
	        NULL);
	show_logs = getenv("DAT_BADHANDLE_LOGS") != NULL;
	shared_ret = mmap(NULL, sizeof(*shared_ret), PROT_READ | PROT_WRITE,
	                  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	FT_REQUIRE(shared_ret != MAP_FAILED, "a shared result word");
	ft_ia_open(ft_opts.ia_name, &ia);
	g.async_evd = ia.async_evd;
	make_objects(&ia, &l, &cep, &cep2, &sep, &xep);
	check_live_objects();

	for (ci = 0; ci < NCALLS; ci++) {
		const struct call *c = &calls[ci];
		long before = crashes + wrong;

		for (a = 0; a < c->nh; a++) {
			struct bad bad[MAXBAD];
			int nb = bad_values(&c->arg[a], bad), b;

			for (b = 0; b < nb; b++) {
				enum outcome o = run_one(c, a, &bad[b]);

				calls_made++;
				crashes += o == CRASHED;
				wrong += o == WRONG;
			}
		}
		if (crashes + wrong == before)
			ft_log("  ok: %s: every bad handle refused", c->name);
	}
	/* The children changed nothing here. */
	check_live_objects();

	printf("dat_badhandle %s: %ld calls with bad handles, %ld crashed, "
	       "%ld wrong returns\n",
	       ft_opts.ia_name, calls_made, crashes, wrong);
	FT_CHECK(crashes == 0, "no call crashed or hung (%ld of %ld did)",
	         crashes, calls_made);
	FT_CHECK(wrong == 0,
	         "every call returned DAT_INVALID_HANDLE (%ld did "
	         "not)",
	         wrong);

	(void)dat_ep_disconnect(cep2.ep, DAT_CLOSE_ABRUPT_FLAG);
	(void)dat_ep_disconnect(g.ep_conn, DAT_CLOSE_ABRUPT_FLAG);
	ft_ia_close(&ia); /* abrupt: frees every object left */
	return ft_finish();
}
