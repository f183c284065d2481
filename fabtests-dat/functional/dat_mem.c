/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * dat_mem: Protection Zones, LMRs and RMRs.  LMR creation with each
 * privilege set and its query, contexts, parameter errors, LMRs created
 * over another LMR (DAT_MEM_TYPE_LMR) and used for a DTO, RMR bind,
 * rebind and unbind with their completions on the request EVD, RDMA
 * through a bound window, and the PZ rules: objects of one PZ only, a PZ
 * or LMR in use cannot be freed.  Single process, two Endpoints of one IA
 * connected over loopback.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "shared.h"

static struct ft_ia ia;

static bool is_zero(const void *buf, size_t len)
{
	const unsigned char *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != 0)
			return false;
	return true;
}

static void check_pz(void)
{
	DAT_PZ_HANDLE pz2 = DAT_HANDLE_NULL;
	DAT_PZ_PARAM p;
	struct ft_mr mr;

	FT_DAT_CHECK(dat_pz_create(ia.ia, &pz2));
	FT_CHECK(pz2 != ia.pz, "a second PZ is a different handle");
	FT_DAT_CHECK(dat_pz_query(pz2, DAT_PZ_FIELD_ALL, &p));
	FT_CHECK(p.ia_handle == ia.ia, "dat_pz_query: ia_handle");
	FT_DAT_EXPECT(dat_pz_query(pz2, DAT_PZ_FIELD_ALL, NULL),
	              DAT_INVALID_PARAMETER);
	FT_DAT_EXPECT(dat_pz_create(ia.ia, NULL), DAT_INVALID_PARAMETER);
	FT_DAT_CHECK(ft_mr_create(&ia, pz2, 4096, DAT_MEM_PRIV_ALL_FLAG, &mr));
	FT_DAT_EXPECT(dat_pz_free(pz2), DAT_INVALID_STATE);
	ft_mr_free(&mr);
	FT_DAT_CHECK(dat_pz_free(pz2));
}

static void check_lmr_query(struct ft_mr *mr, DAT_PZ_HANDLE pz,
                            DAT_MEM_PRIV_FLAGS priv)
{
	DAT_LMR_PARAM p;
	DAT_VADDR va = (DAT_VADDR)(uintptr_t)mr->buf;

	memset(&p, 0, sizeof(p));
	FT_DAT_CHECK(dat_lmr_query(mr->lmr, DAT_LMR_FIELD_ALL, &p));
	FT_CHECK(p.ia_handle == ia.ia && p.mem_type == DAT_MEM_TYPE_VIRTUAL &&
	                 p.region_desc.for_va == mr->buf &&
	                 p.length == mr->len && p.pz_handle == pz &&
	                 p.mem_priv == priv && p.va_type == DAT_VA_TYPE_VA,
	         "lmr_query priv %#x: ia, type, address, length %llu, pz, "
	         "priv %#x, va_type",
	         (unsigned)priv, (unsigned long long)p.length,
	         (unsigned)p.mem_priv);
	FT_CHECK(p.lmr_context == mr->lmr_ctx && p.rmr_context == mr->rmr_ctx,
	         "lmr_query priv %#x: contexts as created (%#x, %#x)",
	         (unsigned)priv, (unsigned)p.lmr_context,
	         (unsigned)p.rmr_context);
	FT_CHECK(p.registered_address <= va &&
	                 p.registered_address + p.registered_size >=
	                         va + mr->len &&
	                 mr->reg_addr == p.registered_address &&
	                 mr->reg_len == p.registered_size,
	         "lmr_query priv %#x: registered range [%#llx, +%llu) covers "
	         "the region",
	         (unsigned)priv, (unsigned long long)p.registered_address,
	         (unsigned long long)p.registered_size);
}

static void check_lmr(void)
{
	static const DAT_MEM_PRIV_FLAGS privs[] = {
	        DAT_MEM_PRIV_LOCAL_READ_FLAG,
	        DAT_MEM_PRIV_LOCAL_WRITE_FLAG,
	        DAT_MEM_PRIV_LOCAL_READ_FLAG | DAT_MEM_PRIV_REMOTE_READ_FLAG,
	        DAT_MEM_PRIV_LOCAL_WRITE_FLAG | DAT_MEM_PRIV_REMOTE_WRITE_FLAG,
	        DAT_MEM_PRIV_ALL_FLAG,
	};
	enum { N = sizeof(privs) / sizeof(privs[0]) };
	struct ft_mr mr[N];
	DAT_REGION_DESCRIPTION region;
	DAT_LMR_HANDLE lmr;
	DAT_LMR_CONTEXT lctx;
	DAT_RMR_CONTEXT rctx;
	DAT_HANDLE_TYPE type;
	DAT_CONTEXT cctx;
	DAT_LMR_TRIPLET t;
	bool unique = true;
	size_t i, j;
	char buf[64];

	for (i = 0; i < N; i++) {
		FT_DAT_CHECK(ft_mr_create(&ia, ia.pz, 8192 + 100 * i, privs[i],
		                          &mr[i]));
		if (mr[i].lmr != DAT_HANDLE_NULL)
			check_lmr_query(&mr[i], ia.pz, privs[i]);
	}
	for (i = 0; i < N; i++)
		for (j = 0; j < i; j++)
			if (mr[i].lmr_ctx == mr[j].lmr_ctx)
				unique = false;
	FT_CHECK(unique, "the lmr_contexts of %d live LMRs differ", (int)N);
	FT_DAT_CHECK(dat_get_handle_type(mr[0].lmr, &type));
	FT_CHECK(type == DAT_HANDLE_TYPE_LMR, "LMR handle type is LMR");
	cctx.as_ptr = &mr[0];
	FT_DAT_CHECK(dat_set_consumer_context(mr[0].lmr, cctx));
	cctx.as_ptr = NULL;
	FT_DAT_CHECK(dat_get_consumer_context(mr[0].lmr, &cctx));
	FT_CHECK(cctx.as_ptr == &mr[0], "LMR consumer context round trip");

	/* Synchronisation calls are no-ops on coherent memory. */
	t = ft_lmr_iov(&mr[4], 0, 64);
	FT_CHECK(ia.pattr.lmr_sync_req == DAT_FALSE,
	         "lmr_sync_req is FALSE on this cache-coherent host");
	FT_DAT_CHECK(dat_lmr_sync_rdma_read(ia.ia, &t, 1));
	FT_DAT_CHECK(dat_lmr_sync_rdma_write(ia.ia, &t, 1));

	for (i = 0; i < N; i++)
		ft_mr_free(&mr[i]);

	/* Parameter errors. */
	region.for_va = buf;
	FT_DAT_EXPECT(dat_lmr_create(ia.ia, DAT_MEM_TYPE_VIRTUAL, region, 0,
	                             ia.pz, DAT_MEM_PRIV_ALL_FLAG,
	                             DAT_VA_TYPE_VA, &lmr, &lctx, &rctx, NULL,
	                             NULL),
	              DAT_INVALID_PARAMETER);
	FT_DAT_EXPECT(dat_lmr_create(ia.ia, DAT_MEM_TYPE_VIRTUAL, region,
	                             sizeof(buf), ia.pz,
	                             (DAT_MEM_PRIV_FLAGS)0x4000, DAT_VA_TYPE_VA,
	                             &lmr, &lctx, &rctx, NULL, NULL),
	              DAT_INVALID_PARAMETER);
	FT_DAT_EXPECT(dat_lmr_create(ia.ia, DAT_MEM_TYPE_VIRTUAL, region,
	                             sizeof(buf), ia.pz, DAT_MEM_PRIV_ALL_FLAG,
	                             DAT_VA_TYPE_VA, NULL, &lctx, &rctx, NULL,
	                             NULL),
	              DAT_INVALID_PARAMETER);
	FT_DAT_EXPECT(dat_lmr_create(ia.ia, DAT_MEM_TYPE_VIRTUAL, region,
	                             sizeof(buf), ia.async_evd,
	                             DAT_MEM_PRIV_ALL_FLAG, DAT_VA_TYPE_VA,
	                             &lmr, &lctx, &rctx, NULL, NULL),
	              DAT_INVALID_HANDLE);
	FT_DAT_EXPECT(dat_lmr_create(ia.ia, (DAT_MEM_TYPE)0x40, region,
	                             sizeof(buf), ia.pz, DAT_MEM_PRIV_ALL_FLAG,
	                             DAT_VA_TYPE_VA, &lmr, &lctx, &rctx, NULL,
	                             NULL),
	              DAT_INVALID_PARAMETER);
	if ((DAT_VLEN)ia.attr.max_lmr_block_size < (DAT_VLEN)UINT32_MAX)
		FT_DAT_EXPECT(
		        dat_lmr_create(ia.ia, DAT_MEM_TYPE_VIRTUAL, region,
		                       (DAT_VLEN)ia.attr.max_lmr_block_size + 1,
		                       ia.pz, DAT_MEM_PRIV_ALL_FLAG,
		                       DAT_VA_TYPE_VA, &lmr, &lctx, &rctx, NULL,
		                       NULL),
		        DAT_INVALID_PARAMETER);
	if (!ia.attr.zb_supported)
		FT_DAT_EXPECT(dat_lmr_create(ia.ia, DAT_MEM_TYPE_VIRTUAL,
		                             region, sizeof(buf), ia.pz,
		                             DAT_MEM_PRIV_ALL_FLAG,
		                             DAT_VA_TYPE_ZB, &lmr, &lctx, &rctx,
		                             NULL, NULL),
		              DAT_MODEL_NOT_SUPPORTED);
	FT_DAT_EXPECT(dat_lmr_free(DAT_HANDLE_NULL), DAT_INVALID_HANDLE);
	FT_DAT_EXPECT(dat_lmr_query(ia.pz, DAT_LMR_FIELD_ALL, NULL),
	              DAT_INVALID_HANDLE);
}

/* Send len bytes of src (triplet) to rx and check they arrive intact. */
static void send_and_check(struct ft_ep *tx, struct ft_ep *rx,
                           DAT_LMR_TRIPLET *src, struct ft_mr *dst,
                           uint64_t seed, const char *what)
{
	DAT_LMR_TRIPLET r = ft_lmr_iov(dst, 0, dst->len);
	DAT_DTO_COOKIE c;
	char desc[128];

	memset(dst->buf, 0, dst->len);
	c.as_64 = 0x500;
	FT_DAT_CHECK(dat_ep_post_recv(rx->ep, 1, &r, c,
	                              DAT_COMPLETION_DEFAULT_FLAG));
	c.as_64 = 0x501;
	FT_DAT_CHECK(dat_ep_post_send(tx->ep, 1, src, c,
	                              DAT_COMPLETION_DEFAULT_FLAG));
	snprintf(desc, sizeof(desc), "%s: send", what);
	ft_expect_dto(tx->req_evd, FT_TIMEOUT_US, tx->ep, DAT_DTO_SEND, 0x501,
	              DAT_DTO_SUCCESS, src->segment_length, NULL, desc);
	snprintf(desc, sizeof(desc), "%s: receive", what);
	ft_expect_dto(rx->recv_evd, FT_TIMEOUT_US, rx->ep, DAT_DTO_RECEIVE,
	              0x500, DAT_DTO_SUCCESS, src->segment_length, NULL, desc);
	FT_CHECK(ft_pattern_mismatch(dst->buf, src->segment_length, seed) < 0,
	         "%s: data intact", what);
}

static void check_lmr_sharing(struct ft_ep *a, struct ft_ep *b)
{
	struct ft_mr base, dst;
	DAT_REGION_DESCRIPTION region;
	DAT_LMR_HANDLE shared = DAT_HANDLE_NULL, other = DAT_HANDLE_NULL;
	DAT_LMR_CONTEXT lctx = 0, lctx2 = 0;
	DAT_RMR_CONTEXT rctx = 0;
	DAT_VLEN rlen = 0;
	DAT_VADDR raddr = 0;
	DAT_PZ_HANDLE pz2 = DAT_HANDLE_NULL;
	DAT_LMR_PARAM p;
	DAT_LMR_TRIPLET t;

	FT_DAT_OK(ft_mr_create(&ia, ia.pz, 8192, DAT_MEM_PRIV_ALL_FLAG, &base));
	FT_DAT_OK(ft_mr_create(&ia, ia.pz, 8192, DAT_MEM_PRIV_ALL_FLAG, &dst));
	ft_fill(base.buf, 8192, 31);
	region.for_lmr_handle = base.lmr;
	FT_DAT_CHECK(dat_lmr_create(ia.ia, DAT_MEM_TYPE_LMR, region, 8192,
	                            ia.pz, DAT_MEM_PRIV_ALL_FLAG,
	                            DAT_VA_TYPE_VA, &shared, &lctx, &rctx,
	                            &rlen, &raddr));
	if (shared == DAT_HANDLE_NULL)
		goto out;
	memset(&p, 0, sizeof(p));
	FT_DAT_CHECK(dat_lmr_query(shared, DAT_LMR_FIELD_ALL, &p));
	FT_CHECK(p.mem_type == DAT_MEM_TYPE_LMR &&
	                 p.region_desc.for_lmr_handle == base.lmr &&
	                 p.lmr_context == lctx && p.pz_handle == ia.pz,
	         "shared LMR query: type LMR, the base LMR, its own context");
	FT_CHECK(raddr <= (DAT_VADDR)(uintptr_t)base.buf &&
	                 raddr + rlen >= (DAT_VADDR)(uintptr_t)base.buf + 8192,
	         "shared LMR covers the base LMR's memory");
	FT_DAT_EXPECT(dat_lmr_free(base.lmr), DAT_INVALID_STATE);

	/* A DTO through the shared LMR's own context reads the same bytes. */
	t.virtual_address = (DAT_VADDR)(uintptr_t)base.buf;
	t.segment_length = 4096;
	t.lmr_context = lctx;
	send_and_check(a, b, &t, &dst, 31, "send from a DAT_MEM_TYPE_LMR LMR");

	/* Sharing into another PZ is what DAT_MEM_TYPE_LMR is for. */
	FT_DAT_CHECK(dat_pz_create(ia.ia, &pz2));
	FT_DAT_CHECK(dat_lmr_create(ia.ia, DAT_MEM_TYPE_LMR, region, 8192, pz2,
	                            DAT_MEM_PRIV_LOCAL_READ_FLAG,
	                            DAT_VA_TYPE_VA, &other, &lctx2, NULL, NULL,
	                            NULL));
	if (other != DAT_HANDLE_NULL) {
		FT_DAT_CHECK(dat_lmr_query(other, DAT_LMR_FIELD_PZ_HANDLE, &p));
		FT_CHECK(p.pz_handle == pz2, "LMR shared into a second PZ");
		FT_DAT_CHECK(dat_lmr_free(other));
	}
	FT_DAT_CHECK(dat_pz_free(pz2));
	FT_DAT_CHECK(dat_lmr_free(shared));
out:
	ft_mr_free(&dst);
	ft_mr_free(&base);
}

static void check_rmr(struct ft_ep *a, struct ft_ep *b, struct ft_ep *idle)
{
	struct ft_mr target, src, ro;
	DAT_RMR_HANDLE rmr = DAT_HANDLE_NULL, rmr2 = DAT_HANDLE_NULL;
	DAT_RMR_CONTEXT ctx = 0, ctx2 = 0, dummy;
	DAT_PZ_HANDLE pz2 = DAT_HANDLE_NULL;
	DAT_LMR_TRIPLET win, l;
	DAT_RMR_TRIPLET r;
	DAT_RMR_PARAM rp;
	DAT_RMR_COOKIE rc;
	DAT_DTO_COOKIE c;
	DAT_HANDLE_TYPE type;
	DAT_EVENT ev;
	struct ft_mr pz2mr;

	FT_DAT_OK(ft_mr_create(&ia, ia.pz, 16384, DAT_MEM_PRIV_ALL_FLAG,
	                       &target));
	FT_DAT_OK(ft_mr_create(&ia, ia.pz, 16384, DAT_MEM_PRIV_ALL_FLAG, &src));
	FT_DAT_OK(ft_mr_create(&ia, ia.pz, 4096, DAT_MEM_PRIV_LOCAL_READ_FLAG,
	                       &ro));

	FT_DAT_CHECK(dat_rmr_create(ia.pz, &rmr));
	FT_REQUIRE(rmr != DAT_HANDLE_NULL, "an RMR to work with");
	FT_DAT_CHECK(dat_get_handle_type(rmr, &type));
	FT_CHECK(type == DAT_HANDLE_TYPE_RMR, "RMR handle type is RMR");
	memset(&rp, 0, sizeof(rp));
	FT_DAT_CHECK(dat_rmr_query(rmr, DAT_RMR_FIELD_ALL, &rp));
	FT_CHECK(rp.ia_handle == ia.ia && rp.pz_handle == ia.pz,
	         "rmr_query of an unbound RMR: ia and pz");
	FT_DAT_EXPECT(dat_rmr_create(ia.pz, NULL), DAT_INVALID_PARAMETER);

	win = ft_lmr_iov(&target, 4096, 4096);
	rc.as_64 = 0x77;
	FT_DAT_EXPECT(dat_rmr_bind(rmr, target.lmr, &win,
	                           DAT_MEM_PRIV_REMOTE_WRITE_FLAG,
	                           DAT_VA_TYPE_VA, idle->ep, rc,
	                           DAT_COMPLETION_DEFAULT_FLAG, &ctx),
	              DAT_INVALID_STATE);

	/* Bind a window and use it. */
	FT_DAT_CHECK(dat_rmr_bind(
	        rmr, target.lmr, &win,
	        DAT_MEM_PRIV_REMOTE_WRITE_FLAG | DAT_MEM_PRIV_REMOTE_READ_FLAG,
	        DAT_VA_TYPE_VA, a->ep, rc, DAT_COMPLETION_DEFAULT_FLAG, &ctx));
	if (ft_expect_event(a->req_evd, FT_TIMEOUT_US,
	                    DAT_RMR_BIND_COMPLETION_EVENT, NULL, &ev,
	                    "bind completes on the request EVD"))
		FT_CHECK(ev.event_data.rmr_completion_event_data.rmr_handle ==
		                         rmr &&
		                 ev.event_data.rmr_completion_event_data
		                                 .user_cookie.as_64 == 0x77 &&
		                 ev.event_data.rmr_completion_event_data
		                                 .status ==
		                         DAT_RMR_BIND_SUCCESS,
		         "bind completion: rmr handle, cookie 0x77, success");
	FT_CHECK(ctx != target.rmr_ctx,
	         "the RMR context (%#x) differs from the LMR's (%#x)",
	         (unsigned)ctx, (unsigned)target.rmr_ctx);
	memset(&rp, 0, sizeof(rp));
	FT_DAT_CHECK(dat_rmr_query(rmr, DAT_RMR_FIELD_ALL, &rp));
	FT_CHECK(rp.rmr_context == ctx &&
	                 rp.lmr_triplet.virtual_address ==
	                         win.virtual_address &&
	                 rp.lmr_triplet.segment_length == 4096 &&
	                 (rp.mem_priv & DAT_MEM_PRIV_REMOTE_WRITE_FLAG),
	         "rmr_query of the bound RMR: context, window, rights");
	FT_DAT_EXPECT(dat_lmr_free(target.lmr), DAT_INVALID_STATE);

	ft_fill(src.buf, 4096, 77);
	l = ft_lmr_iov(&src, 0, 4096);
	r.virtual_address = win.virtual_address;
	r.segment_length = 4096;
	r.rmr_context = ctx;
	c.as_64 = 0x601;
	FT_DAT_CHECK(dat_ep_post_rdma_write(b->ep, 1, &l, c, &r,
	                                    DAT_COMPLETION_DEFAULT_FLAG));
	ft_expect_dto(b->req_evd, FT_TIMEOUT_US, b->ep, DAT_DTO_RDMA_WRITE,
	              0x601, DAT_DTO_SUCCESS, 4096, NULL,
	              "RDMA write through the bound RMR");
	FT_CHECK(ft_poll_pattern((char *)target.buf + 4096, 4096, 77, 5000000),
	         "RDMA write landed in the window");
	FT_CHECK(is_zero(target.buf, 4096) &&
	                 is_zero((char *)target.buf + 8192, 8192),
	         "bytes outside the window are untouched");
	memset(src.buf, 0, 4096);
	c.as_64 = 0x602;
	FT_DAT_CHECK(dat_ep_post_rdma_read(b->ep, 1, &l, c, &r,
	                                   DAT_COMPLETION_DEFAULT_FLAG));
	ft_expect_dto(b->req_evd, FT_TIMEOUT_US, b->ep, DAT_DTO_RDMA_READ,
	              0x602, DAT_DTO_SUCCESS, 4096, NULL,
	              "RDMA read through the bound RMR");
	FT_CHECK(ft_pattern_mismatch(src.buf, 4096, 77) < 0,
	         "RDMA read returned the window's bytes");

	/* Rebind moves the window and changes the context. */
	win = ft_lmr_iov(&target, 8192, 4096);
	rc.as_64 = 0x78;
	FT_DAT_CHECK(dat_rmr_bind(
	        rmr, target.lmr, &win, DAT_MEM_PRIV_REMOTE_WRITE_FLAG,
	        DAT_VA_TYPE_VA, a->ep, rc, DAT_COMPLETION_DEFAULT_FLAG, &ctx2));
	if (ft_expect_event(a->req_evd, FT_TIMEOUT_US,
	                    DAT_RMR_BIND_COMPLETION_EVENT, NULL, &ev,
	                    "rebind completes"))
		FT_CHECK(ev.event_data.rmr_completion_event_data.user_cookie
		                                 .as_64 == 0x78 &&
		                 ev.event_data.rmr_completion_event_data
		                                 .status ==
		                         DAT_RMR_BIND_SUCCESS,
		         "rebind completion: cookie 0x78, success");
	FT_CHECK(ctx2 != ctx, "rebind gives a new context (%#x, was %#x)",
	         (unsigned)ctx2, (unsigned)ctx);
	ft_fill(src.buf, 4096, 78);
	r.virtual_address = win.virtual_address;
	r.rmr_context = ctx2;
	c.as_64 = 0x603;
	FT_DAT_CHECK(dat_ep_post_rdma_write(b->ep, 1, &l, c, &r,
	                                    DAT_COMPLETION_DEFAULT_FLAG));
	ft_expect_dto(b->req_evd, FT_TIMEOUT_US, b->ep, DAT_DTO_RDMA_WRITE,
	              0x603, DAT_DTO_SUCCESS, 4096, NULL,
	              "RDMA write through the moved window");
	FT_CHECK(ft_poll_pattern((char *)target.buf + 8192, 4096, 78, 5000000),
	         "RDMA write landed in the moved window");

	/* Bind errors, each refused synchronously. */
	FT_DAT_CHECK(dat_rmr_create(ia.pz, &rmr2));
	win = ft_lmr_iov(&target, 12288, 8192);
	FT_DAT_EXPECT(dat_rmr_bind(rmr2, target.lmr, &win,
	                           DAT_MEM_PRIV_REMOTE_WRITE_FLAG,
	                           DAT_VA_TYPE_VA, a->ep, rc,
	                           DAT_COMPLETION_DEFAULT_FLAG, &dummy),
	              DAT_LENGTH_ERROR);
	win = ft_lmr_iov(&ro, 0, 4096);
	FT_DAT_EXPECT(dat_rmr_bind(rmr2, ro.lmr, &win,
	                           DAT_MEM_PRIV_REMOTE_WRITE_FLAG,
	                           DAT_VA_TYPE_VA, a->ep, rc,
	                           DAT_COMPLETION_DEFAULT_FLAG, &dummy),
	              DAT_PRIVILEGES_VIOLATION);
	win = ft_lmr_iov(&target, 0, 4096);
	FT_DAT_EXPECT(dat_rmr_bind(rmr2, target.lmr, &win,
	                           (DAT_MEM_PRIV_FLAGS)0x4000, DAT_VA_TYPE_VA,
	                           a->ep, rc, DAT_COMPLETION_DEFAULT_FLAG,
	                           &dummy),
	              DAT_INVALID_PARAMETER);
	FT_DAT_EXPECT(dat_rmr_bind(rmr2, target.lmr, NULL,
	                           DAT_MEM_PRIV_REMOTE_WRITE_FLAG,
	                           DAT_VA_TYPE_VA, a->ep, rc,
	                           DAT_COMPLETION_DEFAULT_FLAG, &dummy),
	              DAT_INVALID_PARAMETER);

	/* The PZs of RMR, LMR and EP must agree. */
	FT_DAT_CHECK(dat_pz_create(ia.ia, &pz2));
	FT_DAT_CHECK(
	        ft_mr_create(&ia, pz2, 4096, DAT_MEM_PRIV_ALL_FLAG, &pz2mr));
	win = ft_lmr_iov(&pz2mr, 0, 4096);
	FT_DAT_EXPECT(dat_rmr_bind(rmr2, pz2mr.lmr, &win,
	                           DAT_MEM_PRIV_REMOTE_WRITE_FLAG,
	                           DAT_VA_TYPE_VA, a->ep, rc,
	                           DAT_COMPLETION_DEFAULT_FLAG, &dummy),
	              DAT_PROTECTION_VIOLATION);
	FT_DAT_CHECK(dat_rmr_free(rmr2));
	rmr2 = DAT_HANDLE_NULL;
	FT_DAT_CHECK(dat_rmr_create(pz2, &rmr2));
	win = ft_lmr_iov(&target, 0, 4096);
	FT_DAT_EXPECT(dat_rmr_bind(rmr2, target.lmr, &win,
	                           DAT_MEM_PRIV_REMOTE_WRITE_FLAG,
	                           DAT_VA_TYPE_VA, a->ep, rc,
	                           DAT_COMPLETION_DEFAULT_FLAG, &dummy),
	              DAT_PROTECTION_VIOLATION);
	FT_DAT_EXPECT(dat_pz_free(pz2), DAT_INVALID_STATE);
	FT_DAT_CHECK(dat_rmr_free(rmr2));
	ft_mr_free(&pz2mr);
	FT_DAT_CHECK(dat_pz_free(pz2));
	ft_expect_empty(a->req_evd, "refused binds post no completion");

	/* Unbind: a bind of length 0. */
	win = ft_lmr_iov(&target, 0, 0);
	rc.as_64 = 0x79;
	FT_DAT_CHECK(dat_rmr_bind(rmr, target.lmr, &win,
	                          DAT_MEM_PRIV_REMOTE_WRITE_FLAG,
	                          DAT_VA_TYPE_VA, a->ep, rc,
	                          DAT_COMPLETION_DEFAULT_FLAG, &dummy));
	if (ft_expect_event(a->req_evd, FT_TIMEOUT_US,
	                    DAT_RMR_BIND_COMPLETION_EVENT, NULL, &ev,
	                    "unbind (length 0) completes"))
		FT_CHECK(ev.event_data.rmr_completion_event_data.user_cookie
		                                 .as_64 == 0x79 &&
		                 ev.event_data.rmr_completion_event_data
		                                 .status ==
		                         DAT_RMR_BIND_SUCCESS,
		         "unbind completion: cookie 0x79, success");
	FT_DAT_EXPECT(dat_pz_free(ia.pz), DAT_INVALID_STATE);
	FT_DAT_CHECK(dat_rmr_free(rmr));
	ft_mr_free(&ro);
	ft_mr_free(&src);
	ft_mr_free(&target);
}

int main(int argc, char **argv)
{
	struct ft_listener l;
	struct ft_ep a, b, idle;
	DAT_EP_ATTR attr;

	ft_init(argc, argv, "dat_mem",
	        "PZ, LMR (privileges, contexts, DAT_MEM_TYPE_LMR), RMR bind/"
	        "unbind, PZ rules",
	        NULL);
	ft_ia_open(ft_opts.ia_name, &ia);
	ft_check_libs();
	check_pz();
	check_lmr();

	ft_ep_attr_default(&ia, &attr);
	FT_DAT_OK(ft_ep_create(&ia, ia.pz, &attr, 64, &a));
	FT_DAT_OK(ft_ep_create(&ia, ia.pz, &attr, 64, &b));
	FT_DAT_OK(ft_ep_create(&ia, ia.pz, &attr, 64, &idle));
	FT_DAT_OK(ft_listen(&ia, &l));
	FT_REQUIRE(ft_connect_local(&ia, &b, &ia, &a, &l),
	           "two EPs of %s connected", ia.name);

	check_lmr_sharing(&b, &a);
	check_rmr(&a, &b, &idle);

	ft_disconnect_local(&b, &a, DAT_CLOSE_GRACEFUL_FLAG);
	ft_listener_free(&l);
	ft_ep_free(&idle);
	ft_ep_free(&b);
	ft_ep_free(&a);
	ft_ia_close(&ia);
	return ft_finish();
}
