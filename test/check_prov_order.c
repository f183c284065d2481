/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * Request completions in posting order (prov/ofi/dofi_dto.c,
 * dofi_dto_order): requests go through the provider's real post calls
 * (dat_ep_post_send/rdma_write/rdma_read) onto a fake libfabric endpoint
 * whose ops table only records the contexts, and their completions are
 * fed back in any order through the real completion code
 * (dofi_dto_complete, dofi_dto_complete_err), both as the consumer's
 * dequeue (no lock) and as the CQ drain (EVD lock held) call it. What
 * comes out must be in posting order. Also the CM's second look at an
 * ended EP (dofi_cm_settle_raced, through the EP's timer and a fake
 * backend): requests that reached the fabric after the end are flushed
 * once. No network, no libfabric call.
 */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check_tests.h"
#include "dofi.h"
#include "dofi_cm.h"
#include "dofi_fast.h"

#define MAXPOST 64

/* ---- a fake fabric ------------------------------------------------------- */

static struct fake {
	dofi_ia_t *ia;
	dofi_ep_t *ep;
	dofi_evd_t *evd;
	dofi_traits_t traits;
	dofi_pz_t pz;
	dofi_lmr_t lmr;
	dofi_lmr_t **chunk;
	struct fid_ep fep;
	unsigned char buf[4096];
	/* What the fabric took, in posting order. */
	dofi_op_t *taken[MAXPOST * 2];
	uint64_t taken_flags[MAXPOST * 2];
	uint32_t ntaken;
	int refuse; /* fail posts with FI_EIO */
	int full;   /* no room: posts answer -FI_EAGAIN */
	/* A post refused for room moves the EP to this state (0: none), as
	 * the connection's end does meanwhile. */
	DAT_EP_STATE end_on_full;
	/* The receives the fabric took: their contexts and segments. */
	dofi_op_t *rx_taken[MAXPOST];
	size_t rx_count[MAXPOST];
	struct iovec rx_last_iov[MAXPOST]; /* each one's last segment */
	uint32_t nrx;
	int breaks; /* cm_break_later calls */
	/* What came out, in order. */
	DAT_EVENT out[MAXPOST * 2];
	uint32_t nout;
} F;

static ssize_t fake_take(void *context, uint64_t flags)
{
	if (F.full) {
		if (F.end_on_full != 0)
			atomic_store(&F.ep->state, F.end_on_full);
		return -FI_EAGAIN;
	}
	if (F.refuse)
		return -FI_EIO;
	ck_assert_uint_lt(F.ntaken, MAXPOST * 2);
	F.taken_flags[F.ntaken] = flags;
	F.taken[F.ntaken++] = context;
	return 0;
}

static ssize_t fake_send(struct fid_ep *ep, const void *buf, size_t len,
                         void *desc, fi_addr_t dest, void *context)
{
	(void)ep, (void)buf, (void)len, (void)desc, (void)dest;
	return fake_take(context, 0);
}

static ssize_t fake_read(struct fid_ep *ep, void *buf, size_t len, void *desc,
                         fi_addr_t src, uint64_t addr, uint64_t key,
                         void *context)
{
	(void)ep, (void)buf, (void)len, (void)desc, (void)src, (void)addr,
	        (void)key;
	return fake_take(context, 0);
}

static ssize_t fake_write(struct fid_ep *ep, const void *buf, size_t len,
                          void *desc, fi_addr_t dest, uint64_t addr,
                          uint64_t key, void *context)
{
	(void)ep, (void)buf, (void)len, (void)desc, (void)dest, (void)addr,
	        (void)key;
	return fake_take(context, 0);
}

static ssize_t fake_writemsg(struct fid_ep *ep, const struct fi_msg_rma *msg,
                             uint64_t flags)
{
	(void)ep;
	return fake_take(msg->context, flags);
}

static ssize_t fake_rx_take(const struct iovec *iov, size_t count,
                            void *context)
{
	ck_assert_uint_lt(F.nrx, MAXPOST);
	F.rx_taken[F.nrx] = context;
	F.rx_count[F.nrx] = count;
	F.rx_last_iov[F.nrx++] = iov[count - 1];
	return 0;
}

static ssize_t fake_recv(struct fid_ep *ep, void *buf, size_t len, void *desc,
                         fi_addr_t src, void *context)
{
	struct iovec iov = {.iov_base = buf, .iov_len = len};

	(void)ep, (void)desc, (void)src;
	return fake_rx_take(&iov, 1, context);
}

static ssize_t fake_recvmsg(struct fid_ep *ep, const struct fi_msg *msg,
                            uint64_t flags)
{
	(void)ep, (void)flags;
	return fake_rx_take(msg->msg_iov, msg->iov_count, msg->context);
}

static struct fi_ops_msg fake_msg_ops = {
        .size = sizeof(struct fi_ops_msg),
        .send = fake_send,
        .recv = fake_recv,
        .recvmsg = fake_recvmsg,
};

static struct fi_ops_rma fake_rma_ops = {
        .size = sizeof(struct fi_ops_rma),
        .read = fake_read,
        .write = fake_write,
        .writemsg = fake_writemsg,
};

/* The CM as the completion code sees it: an error completion breaks. */
static void fake_break_later(dofi_ep_t *ep)
{
	ck_assert_ptr_eq(ep, F.ep);
	F.breaks++;
}

static const dofi_ctl_ops_t fake_ctl = {
        .cm_break_later = fake_break_later,
};

/* An IA, a PZ with one LMR over F.buf, an EVD and a connected EP. */
static void fake_setup(int late_order, uint64_t write_flags)
{
	memset(&F, 0, sizeof(F));
	F.ia = calloc(1, sizeof(*F.ia));
	F.ep = calloc(1, sizeof(*F.ep));
	F.evd = calloc(1, sizeof(*F.evd));
	F.chunk = calloc(DOFI_LMR_CHUNK, sizeof(*F.chunk));
	ck_assert(F.ia && F.ep && F.evd && F.chunk);

	/* The fabric's traits, with the order mode under test. */
	F.traits = *dofi_traits_lookup(NULL);
	F.traits.late_order = (uint8_t)late_order;
	F.ia->traits = &F.traits;
	F.ia->ctl = &fake_ctl;
	F.ia->late_order = (uint8_t)late_order;
	F.ia->write_flags = write_flags;
	F.ia->ia_attr.max_message_size = 1 << 20;
	F.ia->ia_attr.max_rdma_size = 1 << 20;
	F.ia->lmr_chunks[0] = F.chunk;
	F.chunk[1] = &F.lmr;
	F.lmr.lmr_context = 1;
	F.lmr.pz = &F.pz;
	F.lmr.priv = DAT_MEM_PRIV_ALL_FLAG;
	F.lmr.base = (uintptr_t)F.buf;
	F.lmr.length = sizeof(F.buf);

	F.evd->obj.ia = F.ia;
	F.evd->qlen = 4 * MAXPOST;
	F.evd->efd = -1;
	F.evd->cq_fd = -1;
	dofi_lock_init(&F.evd->lock);

	F.fep.msg = &fake_msg_ops;
	F.fep.rma = &fake_rma_ops;
	F.ep->obj.magic = DOFI_MAGIC_LIVE;
	F.ep->obj.type = DOFI_OBJ_EP;
	F.ep->obj.ia = F.ia;
	F.ep->state = DAT_EP_STATE_CONNECTED;
	F.ep->fep = &F.fep;
	F.ep->pz = &F.pz;
	F.ep->req_evd = F.evd;
	F.ep->attr.max_request_iov = 4;
	F.ep->attr.max_rdma_read_iov = 4;
	F.ep->attr.max_rdma_write_iov = 4;
	ck_assert_int_eq(dofi_pool_init(&F.ep->req_pool, 2 * MAXPOST, F.ep,
	                                NULL, NULL, 0, 0),
	                 DOF_OK);
	dofi_dto_order_reset(F.ep);
}

static void fake_teardown(void)
{
	dofi_pool_fini(&F.ep->req_pool);
	free(F.evd->ring);
	free(F.evd);
	free(F.ep);
	free(F.chunk);
	free(F.ia);
}

/* Post one request as the consumer does: what the post said. */
static DAT_RETURN post_raw(uint8_t type, uint64_t cookie,
                           DAT_COMPLETION_FLAGS flags)
{
	DAT_LMR_TRIPLET seg = {.lmr_context = 1,
	                       .virtual_address = (uintptr_t)F.buf,
	                       .segment_length = 64};
	DAT_RMR_TRIPLET rmt = {.rmr_context = 9,
	                       .virtual_address = 0x10000,
	                       .segment_length = 4096};
	DAT_DTO_COOKIE c = {.as_64 = cookie};

	switch (type) {
	case DOFI_OP_SEND:
		return dofi_ep_post_send(F.ep, 1, &seg, c, flags);
	case DOFI_OP_WRITE:
		return dofi_ep_post_rdma_write(F.ep, 1, &seg, c, &rmt, flags);
	default:
		return dofi_ep_post_rdma_read(F.ep, 1, &seg, c, &rmt, flags);
	}
}

/* Post one request; its op (NULL when the post failed). */
static dofi_op_t *post(uint8_t type, uint64_t cookie, int suppress)
{
	uint32_t before = F.ntaken;
	DAT_RETURN ret;

	ret = post_raw(type, cookie,
	               suppress ? DAT_COMPLETION_SUPPRESS_FLAG
	                        : DAT_COMPLETION_DEFAULT_FLAG);
	if (F.refuse) {
		ck_assert_int_ne(ret, DAT_SUCCESS);
		ck_assert_uint_eq(F.ntaken, before);
		return NULL;
	}
	ck_assert_int_eq(ret, DAT_SUCCESS);
	ck_assert_uint_eq(F.ntaken, before + 1);
	ck_assert_uint_eq(F.taken[before]->cookie.as_64, cookie);
	ck_assert_uint_eq(F.taken[before]->type, type);
	return F.taken[before];
}

/* Move what the EVD's ring holds to F.out. */
static void ring_take(void)
{
	dofi_lock_take(&F.evd->lock);
	while (atomic_load(&F.evd->count) > 0) {
		ck_assert_uint_lt(F.nout, MAXPOST * 2);
		F.out[F.nout++] = F.evd->ring[F.evd->head];
		F.evd->head = (F.evd->head + 1) & (F.evd->cap - 1);
		atomic_store(&F.evd->count, atomic_load(&F.evd->count) - 1);
	}
	dofi_lock_give(&F.evd->lock);
}

/*
 * The fabric completes op (err 0) or fails it (an FI_E* value), read by a
 * dequeue or a CQ drain: both hold the EVD's lock from the read until the
 * event is on the ring or handed back. What dofi_dto_complete(_err)
 * returned, its event in *ev (0: filled); push: put that event on the
 * ring, as a drain does, under the same hold of the lock.
 */
static int complete_as(dofi_op_t *op, int err, DAT_EVENT *ev, int push)
{
	struct fi_cq_data_entry e = {.op_context = op, .len = op->len};
	struct fi_cq_err_entry ee = {.op_context = op, .err = err};
	int r;

	memset(ev, 0, sizeof(*ev));
	dofi_lock_take(&F.evd->lock);
	r = err ? dofi_dto_complete_err(&ee, ev, F.evd)
	        : dofi_dto_complete(&e, ev, F.evd);
	if (r == 0 && push)
		ck_assert_int_eq(dofi_evd_push_locked(F.evd, ev), DOF_OK);
	dofi_lock_give(&F.evd->lock);
	return r;
}

/* As a drain: the event on the ring, then all of the ring to F.out. */
static void complete(dofi_op_t *op, int err)
{
	DAT_EVENT ev;

	(void)complete_as(op, err, &ev, 1);
	ring_take();
}

/* As a dequeue: what came back, the ring left alone. */
static int complete_direct(dofi_op_t *op, DAT_EVENT *ev)
{
	return complete_as(op, 0, ev, 0);
}

static void out_is(uint32_t i, uint64_t cookie, DAT_DTO_COMPLETION_STATUS st)
{
	const DAT_DTO_COMPLETION_EVENT_DATA *d;

	ck_assert_uint_lt(i, F.nout);
	ck_assert_int_eq(F.out[i].event_number, DAT_DTO_COMPLETION_EVENT);
	d = &F.out[i].event_data.dto_completion_event_data;
	ck_assert_uint_eq(d->user_cookie.as_64, cookie);
	ck_assert_int_eq(d->status, st);
	ck_assert_ptr_eq(d->ep_handle, F.ep);
}

struct want {
	uint64_t cookie;
	DAT_DTO_COMPLETION_STATUS st;
};

/* Exactly these events came out, in this order. */
static void outs_are(const struct want *w, uint32_t n)
{
	uint32_t i;

	ck_assert_uint_eq(F.nout, n);
	for (i = 0; i < n; i++)
		out_is(i, w[i].cookie, w[i].st);
}

/* Nothing held or outstanding, every op back in its pool. */
static void all_settled(void)
{
	ck_assert_uint_eq(F.ep->held_head, DOFI_POOL_NONE);
	ck_assert_uint_eq(atomic_load(&F.ep->late_settled),
	                  atomic_load(&F.ep->late_posted));
	ck_assert_uint_eq(dofi_pool_used(&F.ep->req_pool), 0);
	ck_assert_uint_eq(atomic_load(&F.evd->count), 0);
}

/* The events expected, in order; then all must be settled. */
static void end_with(const struct want *w, uint32_t n)
{
	outs_are(w, n);
	all_settled();
	fake_teardown();
}

/* ---- tests --------------------------------------------------------------- */

/*
 * tcp: sends and plain writes complete once sent, reads when answered.
 * S0 R1 S2 W3 R4 S5 complete as S0 S2 W3 S5 R1 R4 and come out in
 * posting order.
 */
START_TEST(order_tcp_reads_late)
{
	static const uint8_t types[] = {DOFI_OP_SEND, DOFI_OP_READ,
	                                DOFI_OP_SEND, DOFI_OP_WRITE,
	                                DOFI_OP_READ, DOFI_OP_SEND};
	static const int arrive[] = {0, 2, 3, 5, 1, 4};
	dofi_op_t *op[6];
	int i;

	fake_setup(DOFI_ORDER_LATE, 0);
	for (i = 0; i < 6; i++)
		op[i] = post(types[i], (uint64_t)i, 0);
	/* Only the reads are late. */
	for (i = 0; i < 6; i++)
		ck_assert_uint_eq(op[i]->late, types[i] == DOFI_OP_READ);
	for (i = 0; i < 6; i++)
		complete(op[arrive[i]], 0);
	ck_assert_uint_eq(F.nout, 6);
	for (i = 0; i < 6; i++)
		out_is((uint32_t)i, (uint64_t)i, DAT_DTO_SUCCESS);
	all_settled();
	fake_teardown();
}
END_TEST

/* Acknowledged writes (FI_DELIVERY_COMPLETE) are late too; suppressed
 * writes need no acknowledgement and are not. */
START_TEST(order_acked_writes_late)
{
	static const struct want w[] = {{0, DAT_DTO_SUCCESS},
	                                {1, DAT_DTO_SUCCESS},
	                                {3, DAT_DTO_SUCCESS}};
	dofi_op_t *w0, *s1, *w2, *s3;

	fake_setup(DOFI_ORDER_LATE, FI_DELIVERY_COMPLETE);
	w0 = post(DOFI_OP_WRITE, 0, 0);
	ck_assert_uint_eq(F.taken_flags[0] & FI_DELIVERY_COMPLETE,
	                  FI_DELIVERY_COMPLETE);
	s1 = post(DOFI_OP_SEND, 1, 0);
	w2 = post(DOFI_OP_WRITE, 2, 1); /* suppressed */
	s3 = post(DOFI_OP_SEND, 3, 0);
	ck_assert_uint_eq(w0->late, 1);
	ck_assert_uint_eq(w2->late, 0);
	complete(s3, 0);
	complete(w2, 0);
	complete(s1, 0);
	ck_assert_uint_eq(F.nout, 0); /* all behind w0 */
	complete(w0, 0);
	end_with(w, sizeof(w) / sizeof(w[0]));
}
END_TEST

/* Without an order to keep (verbs), completions come out as they come. */
START_TEST(order_none_passes_through)
{
	dofi_op_t *op[4];
	int i;

	fake_setup(DOFI_ORDER_NONE, 0);
	for (i = 0; i < 4; i++)
		op[i] = post(i % 2 ? DOFI_OP_READ : DOFI_OP_SEND, (uint64_t)i,
		             0);
	for (i = 3; i >= 0; i--) {
		ck_assert_uint_eq(op[i]->late, 0);
		complete(op[i], 0);
		ck_assert_uint_eq(F.nout, 4 - (uint32_t)i);
		out_is(3 - (uint32_t)i, (uint64_t)i, DAT_DTO_SUCCESS);
	}
	all_settled();
	fake_teardown();
}
END_TEST

/*
 * Every request late (shm, rxm, rxd, sockets): one in its turn with
 * nothing held is reported into the caller's event, not through the ring.
 * One that completes before its turn is held; the one whose turn it is
 * then goes through the ring, and the held one after it.
 */
START_TEST(order_all_in_turn_direct)
{
	const struct want w[] = {{1, DAT_DTO_SUCCESS}, {2, DAT_DTO_SUCCESS}};
	dofi_op_t *op[3];
	DAT_EVENT ev;
	int i;

	fake_setup(DOFI_ORDER_ALL, 0);
	for (i = 0; i < 3; i++)
		op[i] = post(DOFI_OP_SEND, (uint64_t)i, 0);
	ck_assert_int_eq(complete_direct(op[0], &ev), 0);
	ck_assert_uint_eq(atomic_load(&F.evd->count), 0);
	ck_assert_int_eq(ev.event_number, DAT_DTO_COMPLETION_EVENT);
	ck_assert_uint_eq(
	        ev.event_data.dto_completion_event_data.user_cookie.as_64, 0);
	ck_assert_int_eq(ev.event_data.dto_completion_event_data.status,
	                 DAT_DTO_SUCCESS);
	ck_assert_uint_eq(atomic_load(&F.ep->late_settled), 1);
	ck_assert_int_eq(complete_direct(op[2], &ev), 1);
	ck_assert_uint_ne(F.ep->held_head, DOFI_POOL_NONE);
	ck_assert_int_eq(complete_direct(op[1], &ev), 1);
	ring_take();
	end_with(w, 2);
}
END_TEST

/*
 * A late request fails: the requests held behind it (completed, but
 * posted after it) are flushed, as on InfiniBand; later ones that were
 * not held yet report their own status.
 */
START_TEST(order_late_failure_flushes_held)
{
	static const struct want w[] = {{0, DAT_DTO_SUCCESS},
	                                {1, DAT_DTO_ERR_TRANSPORT},
	                                {2, DAT_DTO_ERR_FLUSHED},
	                                {3, DAT_DTO_ERR_FLUSHED},
	                                {4, DAT_DTO_SUCCESS}};
	dofi_op_t *s0, *r1, *s2, *w3, *r4;

	fake_setup(DOFI_ORDER_LATE, 0);
	s0 = post(DOFI_OP_SEND, 0, 0);
	r1 = post(DOFI_OP_READ, 1, 0);
	s2 = post(DOFI_OP_SEND, 2, 0);
	w3 = post(DOFI_OP_WRITE, 3, 0);
	r4 = post(DOFI_OP_READ, 4, 0);
	complete(s2, 0);
	complete(w3, 0);
	complete(s0, 0);
	ck_assert_uint_eq(F.nout, 1);
	complete(r1, FI_EIO);
	ck_assert_int_eq(F.ep->dto_error, 1);
	complete(r4, 0);
	end_with(w, sizeof(w) / sizeof(w[0]));
}
END_TEST

/*
 * A dead peer fails every request queued for it (rxd's peer timeout:
 * FI_ECONNREFUSED for each): the first reports the transport error and
 * breaks the connection, the rest are flushed, as on InfiniBand.
 */
START_TEST(order_dead_peer_flushes_rest)
{
	static const struct want w[] = {{0, DAT_DTO_SUCCESS},
	                                {1, DAT_DTO_ERR_TRANSPORT},
	                                {2, DAT_DTO_ERR_FLUSHED},
	                                {3, DAT_DTO_ERR_FLUSHED}};
	dofi_op_t *s0, *s1, *w2, *s3;

	fake_setup(DOFI_ORDER_NONE, 0);
	s0 = post(DOFI_OP_SEND, 0, 0);
	s1 = post(DOFI_OP_SEND, 1, 0);
	w2 = post(DOFI_OP_WRITE, 2, 0);
	s3 = post(DOFI_OP_SEND, 3, 0);
	complete(s0, 0);
	complete(s1, FI_ECONNREFUSED);
	ck_assert_int_eq(F.ep->dto_error, 1);
	ck_assert_int_ge(F.breaks, 1);
	complete(w2, FI_ECONNREFUSED);
	complete(s3, FI_ECONNREFUSED);
	end_with(w, sizeof(w) / sizeof(w[0]));
}
END_TEST

/*
 * Errors of another kind keep their own status, one after another; the
 * first breaks the connection, as a queue pair in error.
 */
START_TEST(order_other_errors_keep_status)
{
	static const struct want w[] = {{0, DAT_DTO_ERR_TRANSPORT},
	                                {1, DAT_DTO_ERR_TRANSPORT}};
	dofi_op_t *s0, *s1;

	fake_setup(DOFI_ORDER_NONE, 0);
	s0 = post(DOFI_OP_SEND, 0, 0);
	s1 = post(DOFI_OP_SEND, 1, 0);
	complete(s0, FI_EIO);
	ck_assert_int_eq(F.breaks, 1);
	complete(s1, FI_EIO);
	end_with(w, sizeof(w) / sizeof(w[0]));
}
END_TEST

/*
 * FI_EADDRNOTAVAIL (efa: the peer's address left the AV while the op was
 * out) is reported, but breaks nothing: it is no failed connection.
 */
START_TEST(order_addr_gone_no_break)
{
	static const struct want w[] = {{0, DAT_DTO_ERR_TRANSPORT},
	                                {1, DAT_DTO_SUCCESS}};
	dofi_op_t *s0, *s1;

	fake_setup(DOFI_ORDER_NONE, 0);
	s0 = post(DOFI_OP_SEND, 0, 0);
	s1 = post(DOFI_OP_SEND, 1, 0);
	complete(s0, FI_EADDRNOTAVAIL);
	complete(s1, 0);
	ck_assert_int_eq(F.breaks, 0);
	end_with(w, sizeof(w) / sizeof(w[0]));
}
END_TEST

/* A held request's own error keeps its place and its status. */
START_TEST(order_held_error_keeps_place)
{
	static const struct want w[] = {{0, DAT_DTO_SUCCESS},
	                                {1, DAT_DTO_SUCCESS},
	                                {2, DAT_DTO_ERR_TRANSPORT}};
	dofi_op_t *r0, *s1, *s2;

	fake_setup(DOFI_ORDER_LATE, 0);
	r0 = post(DOFI_OP_READ, 0, 0);
	s1 = post(DOFI_OP_SEND, 1, 0);
	s2 = post(DOFI_OP_SEND, 2, 0);
	complete(s2, FI_EIO);
	complete(s1, 0);
	ck_assert_uint_eq(F.nout, 0);
	complete(r0, 0);
	end_with(w, sizeof(w) / sizeof(w[0]));
}
END_TEST

/* A late request the fabric refuses takes its turn without an event:
 * what was posted after it is not held for good. */
START_TEST(order_refused_late_post)
{
	static const struct want w[] = {{0, DAT_DTO_SUCCESS},
	                                {2, DAT_DTO_SUCCESS},
	                                {3, DAT_DTO_SUCCESS}};
	dofi_op_t *r0, *s2, *r3;

	fake_setup(DOFI_ORDER_LATE, 0);
	r0 = post(DOFI_OP_READ, 0, 0);
	F.refuse = 1;
	ck_assert_ptr_null(post(DOFI_OP_READ, 1, 0));
	F.refuse = 0;
	s2 = post(DOFI_OP_SEND, 2, 0);
	r3 = post(DOFI_OP_READ, 3, 0);
	complete(r3, 0);
	complete(s2, 0);
	ck_assert_uint_eq(F.nout, 0);
	complete(r0, 0);
	end_with(w, sizeof(w) / sizeof(w[0]));
}
END_TEST

/*
 * The connection ends: the held list is dropped (its requests stay
 * posted for the flush of requests) and nothing is held after that; the
 * flush reports each posted request once, as flushed.
 */
START_TEST(order_drop_then_flush)
{
	dofi_op_t *op[4];
	int i;

	fake_setup(DOFI_ORDER_LATE, 0);
	op[0] = post(DOFI_OP_READ, 0, 0);
	op[1] = post(DOFI_OP_SEND, 1, 0);
	op[2] = post(DOFI_OP_SEND, 2, 0);
	op[3] = post(DOFI_OP_SEND, 3, 0);
	complete(op[1], 0);
	ck_assert_uint_ne(F.ep->held_head, DOFI_POOL_NONE);
	dofi_dto_order_drop(F.ep);
	ck_assert_uint_eq(F.ep->held_head, DOFI_POOL_NONE);
	complete(op[2], 0); /* not held now, left to the flush */
	ck_assert_uint_eq(F.nout, 0);
	ck_assert_uint_eq(dofi_pool_used(&F.ep->req_pool), 4);
	for (i = 0; i < 4; i++)
		if (atomic_exchange(&op[i]->posted, 0))
			dofi_dto_flush_op(op[i]);
	ring_take();
	ck_assert_uint_eq(F.nout, 4);
	for (i = 0; i < 4; i++)
		out_is((uint32_t)i, (uint64_t)i, DAT_DTO_ERR_FLUSHED);
	/* The fabric's own late entries find nothing to report. */
	complete(op[0], FI_ECANCELED);
	complete(op[3], 0);
	ck_assert_uint_eq(F.nout, 4);
	ck_assert_uint_eq(dofi_pool_used(&F.ep->req_pool), 0);
	fake_teardown();
}
END_TEST

/* The fake's connection backend: no state and no timers of its own. */
static dof_status_t fake_ep_init(dofi_ep_t *ep)
{
	(void)ep;
	return DOF_OK;
}

static uint64_t fake_ep_timers(dofi_ep_t *ep, uint64_t now, int *poll)
{
	(void)ep, (void)now;
	*poll = 0;
	return UINT64_MAX;
}

static const struct dofi_cm_ops fake_cm_ops = {
        .name = "fake",
        .ep_init = fake_ep_init,
        .ep_timers = fake_ep_timers,
};

/* The EP's CM timer fires at now, as the IA's timers run it. */
static void fire_ep_timer(uint64_t now)
{
	pthread_mutex_lock(&F.ia->lock);
	F.ep->timer.fire(&F.ep->timer, now);
	pthread_mutex_unlock(&F.ia->lock);
}

/*
 * Posts that read CONNECTED just before the connection's end reach the
 * fabric after the end flushed the requests (which found none). The test
 * stands in for that end: it posts, then sets the state and race_at as
 * dofi_cm_down_finish does, without the end's own flush. The CM looks
 * again at race_at (dofi_cm_settle_raced, on the EP's timer): nothing
 * before it, then both reported flushed, in posting order. The fabric's
 * own late entries for them find nothing to report: each completes once.
 */
START_TEST(raced_requests_flushed_by_look)
{
	dofi_op_t *op[2];
	uint64_t now;

	fake_setup(DOFI_ORDER_NONE, 0);
	F.ia->cm_ops = &fake_cm_ops;
	F.ia->stop_fd = -1;
	pthread_mutex_init(&F.ia->lock, NULL);
	dofi_timers_init(&F.ia->timers);
	dofi_list_init(&F.ia->watch);
	ck_assert_int_eq(dofi_cm_ep_init(F.ep), DOF_OK);
	op[0] = post(DOFI_OP_SEND, 0, 0);
	op[1] = post(DOFI_OP_WRITE, 1, 0);
	atomic_store(&F.ep->state, DAT_EP_STATE_DISCONNECTED);
	now = dofi_now_ns();
	F.ep->race_at = now + 1000000;
	fire_ep_timer(now);
	ring_take();
	ck_assert_uint_eq(F.nout, 0);
	ck_assert_uint_eq(dofi_pool_used(&F.ep->req_pool), 2);
	fire_ep_timer(F.ep->race_at);
	ring_take();
	ck_assert_uint_eq(F.ep->race_at, 0);
	ck_assert_uint_eq(F.nout, 2);
	out_is(0, 0, DAT_DTO_ERR_FLUSHED);
	out_is(1, 1, DAT_DTO_ERR_FLUSHED);
	ck_assert_uint_eq(dofi_pool_used(&F.ep->req_pool), 0);
	complete(op[0], FI_ECANCELED);
	complete(op[1], 0);
	ck_assert_uint_eq(F.nout, 2);
	dofi_timers_fini(&F.ia->timers);
	pthread_mutex_destroy(&F.ia->lock);
	fake_teardown();
}
END_TEST

/*
 * An order a fabric may complete ops[0..n) (posted in that order) in,
 * into out. sockets (every op late): any. tcp (DOFI_ORDER_LATE): the
 * others complete once sent, in posting order, and a late one (a read,
 * an acknowledged write) only after the others posted before it, which
 * went out on the stream ahead of it; late ones among themselves in any
 * order. The order code relies on that much of tcp.
 */
static void completion_order(dofi_op_t *const *ops, uint32_t n, dofi_op_t **out,
                             uint64_t *rs)
{
	unsigned char done[MAXPOST] = {0};
	uint32_t cand[MAXPOST], i, k, next_rest = 0;

	for (k = 0; k < n; k++) {
		uint32_t nc = 0;

		/* The first other op not done, then every late op not done
		 * with no other op before it still out. */
		while (next_rest < n &&
		       (ops[next_rest]->late || done[next_rest]))
			next_rest++;
		if (next_rest < n)
			cand[nc++] = next_rest;
		for (i = 0; i < n && i <= next_rest; i++)
			if (ops[i]->late && !done[i])
				cand[nc++] = i;
		ck_assert_uint_gt(nc, 0);
		i = cand[check_rand_below(rs, nc)];
		done[i] = 1;
		out[k] = ops[i];
	}
}

/*
 * Random rounds: a mix of sends, writes and reads (some suppressed, some
 * refused by the fabric), completed in an order the fabric may choose,
 * each read either way; what comes out is the posted requests in
 * posting order, the suppressed ones left out. Both fabrics' rules: tcp
 * (reads and acknowledged writes late) and sockets (every request late).
 */
static void order_random_rounds(int late_order, uint64_t seed, int rounds)
{
	static const uint8_t types[] = {DOFI_OP_SEND, DOFI_OP_WRITE,
	                                DOFI_OP_READ};
	uint64_t rs = seed;
	int round;

	for (round = 0; round < rounds; round++) {
		uint64_t wflags = (round & 1) ? FI_DELIVERY_COMPLETE : 0;
		uint32_t n = 1 + check_rand_below(&rs, MAXPOST - 1), i;
		dofi_op_t *op[MAXPOST], *order[MAXPOST];
		uint64_t want[MAXPOST];
		uint32_t nop = 0, nwant = 0;

		fake_setup(late_order, wflags);
		for (i = 0; i < n; i++) {
			uint8_t type = types[check_rand_below(&rs, 3)];
			int sup = check_rand_below(&rs, 8) == 0;
			dofi_op_t *o;

			F.refuse = check_rand_below(&rs, 16) == 0;
			o = post(type, i, sup);
			F.refuse = 0;
			if (o == NULL)
				continue;
			op[nop++] = o;
			if (!sup)
				want[nwant++] = i;
		}
		completion_order(op, nop, order, &rs);
		for (i = 0; i < nop; i++)
			complete(order[i], 0);
		ck_assert_uint_eq(F.nout, nwant);
		for (i = 0; i < nwant; i++)
			out_is(i, want[i], DAT_DTO_SUCCESS);
		all_settled();
		fake_teardown();
	}
}

START_TEST(order_random_tcp)
{
	order_random_rounds(DOFI_ORDER_LATE, 0x7c9, 3000);
}
END_TEST

START_TEST(order_random_sockets)
{
	order_random_rounds(DOFI_ORDER_ALL, 0x50c, 3000);
}
END_TEST

/* ---- a dequeue beside a drain of the same CQ ----------------------------- */

/*
 * A fake CQ holding completions in order. A drain (dofi_evd_flush_cq, as
 * the progress thread or an event poster runs it) gets at most 3 entries
 * a read; its first read then stops until the consumer's dequeue has
 * returned, or 200 ms: the moment a drain holds entries it has taken
 * from the CQ and not yet queued on the ring.
 */
static struct fake_cq {
	struct fid_cq cq;
	struct fi_ops_cq ops;
	dofi_op_t *q[MAXPOST];
	uint32_t head, n;
	pthread_mutex_t lock;
	atomic_int drain_holds, dequeued;
} C;

static _Thread_local int fake_cq_drainer;

static ssize_t fake_cq_read(struct fid_cq *cq, void *buf, size_t count)
{
	struct fi_cq_data_entry *e = buf;
	size_t i, max = fake_cq_drainer ? 3 : count;
	uint64_t end;

	(void)cq;
	pthread_mutex_lock(&C.lock);
	for (i = 0; i < count && i < max && C.head < C.n; i++) {
		memset(&e[i], 0, sizeof(e[i]));
		e[i].op_context = C.q[C.head++];
		e[i].len = 64;
	}
	pthread_mutex_unlock(&C.lock);
	if (fake_cq_drainer && i > 0 && !atomic_exchange(&C.drain_holds, 1)) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		end = (uint64_t)ts.tv_sec * 1000 +
		      (uint64_t)ts.tv_nsec / 1000000 + 200;
		while (!atomic_load(&C.dequeued)) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			if ((uint64_t)ts.tv_sec * 1000 +
			            (uint64_t)ts.tv_nsec / 1000000 >=
			    end)
				break;
			sched_yield();
		}
	}
	return i > 0 ? (ssize_t)i : -FI_EAGAIN;
}

static ssize_t fake_cq_readerr(struct fid_cq *cq, struct fi_cq_err_entry *buf,
                               uint64_t flags)
{
	(void)cq, (void)buf, (void)flags;
	return -FI_EAGAIN;
}

static void *drain_main(void *arg)
{
	(void)arg;
	fake_cq_drainer = 1;
	dofi_evd_flush_cq(F.evd, 1);
	return NULL;
}

/* Completions come out in CQ order when a dequeue meets a drain. */
START_TEST(order_dequeue_beside_drain)
{
	DAT_EVENT ev;
	pthread_t thr;
	uint32_t i;

	fake_setup(DOFI_ORDER_NONE, 0);
	memset(&C, 0, sizeof(C));
	pthread_mutex_init(&C.lock, NULL);
	C.ops.size = sizeof(C.ops);
	C.ops.read = fake_cq_read;
	C.ops.readerr = fake_cq_readerr;
	C.cq.ops = &C.ops;
	F.evd->cq = &C.cq;
	F.evd->flags = DAT_EVD_DTO_FLAG;
	F.evd->obj.magic = DOFI_MAGIC_LIVE;
	F.evd->obj.type = DOFI_OBJ_EVD;
	F.ia->progress_mode = DOFI_PROGRESS_NONE;
	for (i = 0; i < 8; i++)
		C.q[C.n++] = post(DOFI_OP_SEND, i, 0);

	ck_assert_int_eq(pthread_create(&thr, NULL, drain_main, NULL), 0);
	while (!atomic_load(&C.drain_holds))
		sched_yield();
	/* The drain holds sends 0..2: the dequeue must not hand out 3. */
	ck_assert_int_eq(dofi_evd_dequeue(F.evd, &ev), DAT_SUCCESS);
	atomic_store(&C.dequeued, 1);
	F.out[F.nout++] = ev;
	pthread_join(thr, NULL);
	while (dofi_evd_dequeue(F.evd, &ev) == DAT_SUCCESS)
		F.out[F.nout++] = ev;
	ck_assert_uint_eq(F.nout, 8);
	for (i = 0; i < 8; i++)
		out_is(i, i, DAT_DTO_SUCCESS);
	F.evd->cq = NULL;
	pthread_mutex_destroy(&C.lock);
	fake_teardown();
}
END_TEST

/*
 * A fabric that does not order a Send after an RDMA Write (efa; ia->fence
 * DOFI_FENCE_WRITE, set up as dofi_ia_open does where the granted
 * msg_order lacks FI_ORDER_SAW): every Write, suppressed or not, asks
 * FI_DELIVERY_COMPLETE and is late, and a Send is not handed to libfabric
 * until the Writes before it have completed. A Read or a Write posted
 * meanwhile does not wait.
 */
static struct {
	pthread_t thr;
	DAT_RETURN ret;
	_Atomic int done;
} S;

static void *saw_send(void *arg)
{
	DAT_LMR_TRIPLET seg = {.lmr_context = 1,
	                       .virtual_address = (uintptr_t)F.buf,
	                       .segment_length = 64};
	DAT_DTO_COOKIE c = {.as_64 = (uint64_t)(uintptr_t)arg};

	S.ret = dofi_ep_post_send(F.ep, 1, &seg, c,
	                          DAT_COMPLETION_DEFAULT_FLAG);
	atomic_store(&S.done, 1);
	return NULL;
}

static uint32_t taken_now(void)
{
	return __atomic_load_n(&F.ntaken, __ATOMIC_ACQUIRE);
}

static void nap_ms(long ms)
{
	struct timespec ts = {.tv_sec = 0, .tv_nsec = ms * 1000000L};

	nanosleep(&ts, NULL);
}

START_TEST(order_saw_fence_send_waits)
{
	static const struct want w[] = {{1, DAT_DTO_SUCCESS},
	                                {2, DAT_DTO_SUCCESS},
	                                {3, DAT_DTO_SUCCESS},
	                                {4, DAT_DTO_SUCCESS}};
	dofi_op_t *w0, *w1, *r2, *s3, *w4;

	fake_setup(DOFI_ORDER_NONE, 0);
	F.ia->fence = DOFI_FENCE_WRITE;
	F.ia->late_order = DOFI_ORDER_LATE;
	F.ia->write_flags = FI_DELIVERY_COMPLETE;
	F.ia->quiet_write_flags = FI_DELIVERY_COMPLETE;
	w0 = post(DOFI_OP_WRITE, 0, 1); /* suppressed: delivered all the same */
	ck_assert_uint_eq(F.taken_flags[0] & FI_DELIVERY_COMPLETE,
	                  FI_DELIVERY_COMPLETE);
	w1 = post(DOFI_OP_WRITE, 1, 0);
	ck_assert_uint_eq(F.taken_flags[1] & FI_DELIVERY_COMPLETE,
	                  FI_DELIVERY_COMPLETE);
	ck_assert_uint_eq(w0->late, 1);
	ck_assert_uint_eq(w1->late, 1);
	r2 = post(DOFI_OP_READ, 2, 0); /* a Read does not wait */
	ck_assert(dofi_fence_due(F.ep, DOFI_FENCE_WAITS(DOFI_OP_SEND)));
	ck_assert(!dofi_fence_due(F.ep, DOFI_FENCE_WAITS(DOFI_OP_WRITE)));

	memset(&S, 0, sizeof(S));
	ck_assert_int_eq(
	        pthread_create(&S.thr, NULL, saw_send, (void *)(uintptr_t)3),
	        0);
	nap_ms(50);
	ck_assert_uint_eq(taken_now(), 3); /* the Send waits */
	ck_assert_int_eq(atomic_load(&S.done), 0);
	complete(w0, 0);
	nap_ms(50);
	ck_assert_uint_eq(taken_now(), 3); /* still: w1 is out */
	complete(w1, 0);
	pthread_join(S.thr, NULL);
	ck_assert_int_eq(S.ret, DAT_SUCCESS);
	ck_assert_uint_eq(taken_now(), 4);
	s3 = F.taken[3];
	ck_assert_uint_eq(s3->type, DOFI_OP_SEND);
	/* A Read before it is not waited for: the Send went before r2
	 * completed. A Write after it does not wait either. */
	w4 = post(DOFI_OP_WRITE, 4, 0);
	complete(s3, 0);
	complete(w4, 0);
	ck_assert_uint_eq(F.nout, 1); /* w1; the rest behind r2 */
	complete(r2, 0);
	end_with(w, sizeof(w) / sizeof(w[0]));
}
END_TEST

/* Where the fabric orders a Send after a Write (no fence), the Send goes
 * at once behind an outstanding Write. */
START_TEST(order_saw_granted_no_wait)
{
	static const struct want w[] = {{0, DAT_DTO_SUCCESS},
	                                {1, DAT_DTO_SUCCESS}};
	dofi_op_t *w0, *s1;

	fake_setup(DOFI_ORDER_LATE, FI_DELIVERY_COMPLETE);
	w0 = post(DOFI_OP_WRITE, 0, 0);
	ck_assert(!dofi_fence_due(F.ep, DOFI_FENCE_WAITS(DOFI_OP_SEND)));
	s1 = post(DOFI_OP_SEND, 1, 0);
	complete(s1, 0);
	complete(w0, 0);
	end_with(w, sizeof(w) / sizeof(w[0]));
}
END_TEST

/* ---- requests the fabric has no room for (dofi_defer.c) ----------------- */

/* The EP with defer slots, as dofi_ep_alloc_pools makes it. */
static void defer_setup(int late_order, uint64_t write_flags)
{
	fake_setup(late_order, write_flags);
	dofi_pool_fini(&F.ep->req_pool);
	ck_assert_int_eq(dofi_pool_init(&F.ep->req_pool, 2 * MAXPOST, F.ep,
	                                NULL, NULL, 0,
	                                dofi_defer_bytes(2 * MAXPOST, 4)),
	                 DOF_OK);
	dofi_defer_init(F.ep, 4);
}

/* Post one request while the fabric may be full: what the post said. */
static DAT_RETURN post_ret(uint8_t type, uint64_t cookie)
{
	return post_raw(type, cookie, DAT_COMPLETION_DEFAULT_FLAG);
}

static void taken_are(const uint64_t *cookies, uint32_t n)
{
	uint32_t i;

	ck_assert_uint_eq(F.ntaken, n);
	for (i = 0; i < n; i++)
		ck_assert_uint_eq(F.taken[i]->cookie.as_64, cookies[i]);
}

/*
 * With no room, posts succeed and wait, later ones behind them even once
 * there is room; the next post sends them all, in posting order.
 */
START_TEST(defer_post_queues_in_order)
{
	static const uint64_t order[] = {0, 1, 2, 3};
	static const struct want w[] = {{0, DAT_DTO_SUCCESS},
	                                {1, DAT_DTO_SUCCESS},
	                                {2, DAT_DTO_SUCCESS},
	                                {3, DAT_DTO_SUCCESS}};
	uint32_t i;

	defer_setup(DOFI_ORDER_NONE, 0);
	F.full = 1;
	ck_assert_int_eq(post_ret(DOFI_OP_SEND, 0), DAT_SUCCESS);
	ck_assert_uint_eq(F.ep->deferring, 1);
	ck_assert_uint_eq(atomic_load(&F.ia->defer_neps), 1);
	ck_assert_int_eq(post_ret(DOFI_OP_WRITE, 1), DAT_SUCCESS);
	F.full = 0;
	/* Room now, but the queue is not empty: behind it. */
	ck_assert_int_eq(post_ret(DOFI_OP_SEND, 2), DAT_SUCCESS);
	ck_assert_uint_eq(F.ntaken, 3);
	ck_assert_uint_eq(F.ep->deferring, 0);
	ck_assert_int_eq(post_ret(DOFI_OP_SEND, 3), DAT_SUCCESS);
	taken_are(order, 4);
	/* Nothing waits: the IA's list empties at the next look. */
	ck_assert_int_eq(dofi_defer_kick(F.ia), 0);
	ck_assert_uint_eq(atomic_load(&F.ia->defer_neps), 0);
	ck_assert_int_eq(dofi_defer_kick(F.ia), 0);
	for (i = 0; i < 4; i++)
		complete(F.taken[i], 0);
	end_with(w, sizeof(w) / sizeof(w[0]));
}
END_TEST

/* Whoever reads completions posts the waiting requests once there is
 * room (dofi_defer_kick), in order. */
START_TEST(defer_kick_posts_waiting)
{
	static const uint64_t order[] = {5, 6, 7};
	static const struct want w[] = {{5, DAT_DTO_SUCCESS},
	                                {6, DAT_DTO_SUCCESS},
	                                {7, DAT_DTO_SUCCESS}};
	uint32_t i;

	defer_setup(DOFI_ORDER_NONE, 0);
	F.full = 1;
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(post_ret(DOFI_OP_SEND, 5 + i), DAT_SUCCESS);
	ck_assert_uint_eq(F.ntaken, 0);
	ck_assert_int_eq(dofi_defer_kick(F.ia), 1); /* still full */
	ck_assert_uint_eq(F.ntaken, 0);
	F.full = 0;
	ck_assert_int_eq(dofi_defer_kick(F.ia), 0);
	taken_are(order, 3);
	ck_assert_uint_eq(F.ep->deferring, 0);
	ck_assert_uint_eq(atomic_load(&F.ia->defer_neps), 0);
	for (i = 0; i < 3; i++)
		complete(F.taken[i], 0);
	end_with(w, sizeof(w) / sizeof(w[0]));
}
END_TEST

/*
 * The connection's end forgets the queue: its requests stay posted for
 * the flush, and nothing of it reaches the fabric afterwards; a waiting
 * request the fabric then refuses for good breaks the connection.
 */
START_TEST(defer_drop_and_refusal)
{
	defer_setup(DOFI_ORDER_NONE, 0);
	F.full = 1;
	ck_assert_int_eq(post_ret(DOFI_OP_SEND, 1), DAT_SUCCESS);
	ck_assert_int_eq(post_ret(DOFI_OP_SEND, 2), DAT_SUCCESS);
	/* Refused for good: the connection breaks; later posts queue. */
	F.full = 0;
	F.refuse = 1;
	(void)dofi_defer_kick(F.ia);
	ck_assert_int_eq(F.breaks, 1);
	ck_assert_int_eq(atomic_load(&F.ep->dto_error), 1);
	ck_assert_uint_eq(atomic_load(&F.ia->defer_neps), 0);
	ck_assert_int_eq(post_ret(DOFI_OP_SEND, 3), DAT_SUCCESS);
	ck_assert_uint_eq(F.ntaken, 0);
	/* The end. */
	F.refuse = 0;
	atomic_store(&F.ep->state, DAT_EP_STATE_DISCONNECTED);
	dofi_defer_drop(F.ep);
	ck_assert_uint_eq(F.ep->deferring, 0);
	ck_assert_uint_eq(F.ep->defer_head, DOFI_POOL_NONE);
	ck_assert_uint_eq(dofi_pool_used(&F.ep->req_pool), 3);
	(void)dofi_defer_kick(F.ia);
	ck_assert_uint_eq(F.ntaken, 0);
	fake_teardown();
}
END_TEST

/*
 * A Send fenced behind a Write (no FI_ORDER_SAW) while requests wait for
 * room waits in the queue, not in its post, and goes once the Write has
 * completed.
 */
START_TEST(defer_fenced_send_waits_in_queue)
{
	static const uint64_t order[] = {0, 1};
	static const struct want w[] = {{0, DAT_DTO_SUCCESS},
	                                {1, DAT_DTO_SUCCESS}};

	defer_setup(DOFI_ORDER_NONE, 0);
	F.ia->fence = DOFI_FENCE_WRITE;
	F.ia->late_order = DOFI_ORDER_LATE;
	F.ia->write_flags = FI_DELIVERY_COMPLETE;
	F.ia->quiet_write_flags = FI_DELIVERY_COMPLETE;
	F.full = 1;
	ck_assert_int_eq(post_ret(DOFI_OP_WRITE, 0), DAT_SUCCESS);
	ck_assert(dofi_fence_due(F.ep, DOFI_FENCE_WAITS(DOFI_OP_SEND)));
	/* Returns at once (dofi_dto_fence would wait 20 s). */
	ck_assert_int_eq(post_ret(DOFI_OP_SEND, 1), DAT_SUCCESS);
	F.full = 0;
	ck_assert_int_eq(dofi_defer_kick(F.ia), 1); /* the Send waits */
	ck_assert_uint_eq(F.ntaken, 1);
	ck_assert_uint_eq(F.taken_flags[0] & FI_DELIVERY_COMPLETE,
	                  FI_DELIVERY_COMPLETE);
	complete(F.taken[0], 0);
	ck_assert_int_eq(dofi_defer_kick(F.ia), 0);
	taken_are(order, 2);
	complete(F.taken[1], 0);
	end_with(w, sizeof(w) / sizeof(w[0]));
}
END_TEST

/*
 * The connection's end comes while a post waits for room: the post gives
 * DAT_INVALID_STATE, as its first check would have, with the subtype of
 * the state the EP is in, and its op goes back to the pool; nothing
 * reached the fabric.
 */
static void defer_end_while_posting(DAT_EP_STATE end, DAT_RETURN want)
{
	defer_setup(DOFI_ORDER_NONE, 0);
	F.full = 1;
	F.end_on_full = end;
	ck_assert_int_eq(post_ret(DOFI_OP_SEND, 1), want);
	ck_assert_uint_eq(F.ntaken, 0);
	ck_assert_uint_eq(dofi_pool_used(&F.ep->req_pool), 0);
	ck_assert_uint_eq(F.ep->deferring, 0);
	ck_assert_uint_eq(atomic_load(&F.ia->defer_neps), 0);
	fake_teardown();
}

START_TEST(defer_end_pending_while_posting)
{
	defer_end_while_posting(
	        DAT_EP_STATE_DISCONNECT_PENDING,
	        DAT_ERROR(DAT_INVALID_STATE, DAT_INVALID_STATE_EP_DISCPENDING));
}
END_TEST

START_TEST(defer_end_while_posting_disconnected)
{
	defer_end_while_posting(DAT_EP_STATE_DISCONNECTED,
	                        DAT_ERROR(DAT_INVALID_STATE,
	                                  DAT_INVALID_STATE_EP_DISCONNECTED));
}
END_TEST

/* ---- receives ending in the sink (ia->trunc_sink) ------------------------ */

#define SINK_RECVS 4

static struct iovec sink_iov[SINK_RECVS * 2];
static void *sink_desc[SINK_RECVS * 2];

/* The fake fabric's EP with a receive queue of SINK_RECVS receives of one
 * segment each, and the sink's slot if sink. */
static void sink_setup(int sink)
{
	fake_setup(DOFI_ORDER_NONE, 0);
	F.ia->trunc_sink = (uint8_t)sink;
	F.ep->recv_sink = (uint8_t)sink;
	F.ep->recv_evd = F.evd;
	F.ep->attr.max_recv_iov = 1;
	F.ep->attr.max_recv_dtos = SINK_RECVS;
	ck_assert_int_eq(dofi_pool_init(&F.ep->recv_pool, SINK_RECVS, F.ep,
	                                sink_iov, sink_desc, 1 + (uint32_t)sink,
	                                0),
	                 DOF_OK);
}

static void sink_teardown(void)
{
	ck_assert_uint_eq(dofi_pool_used(&F.ep->recv_pool), 0);
	dofi_pool_fini(&F.ep->recv_pool);
	fake_teardown();
}

/* Post a receive of len bytes; the op the fabric took. */
static dofi_op_t *sink_post(uint64_t cookie, size_t len)
{
	DAT_LMR_TRIPLET seg = {.lmr_context = 1,
	                       .virtual_address = (uintptr_t)F.buf,
	                       .segment_length = len};
	DAT_DTO_COOKIE c = {.as_64 = cookie};
	uint32_t before = F.nrx;

	ck_assert_int_eq(dofi_ep_post_recv(F.ep, 1, &seg, c,
	                                   DAT_COMPLETION_DEFAULT_FLAG),
	                 DAT_SUCCESS);
	ck_assert_uint_eq(F.nrx, before + 1);
	return F.rx_taken[before];
}

/* The fabric completes receive op with len bytes; its event. */
static void sink_complete(dofi_op_t *op, size_t len, DAT_EVENT *ev)
{
	struct fi_cq_data_entry e = {
	        .op_context = op, .flags = FI_RECV | FI_MSG, .len = len};

	memset(ev, 0, sizeof(*ev));
	dofi_lock_take(&F.evd->lock);
	ck_assert_int_eq(dofi_dto_complete(&e, ev, F.evd), 0);
	dofi_lock_give(&F.evd->lock);
}

static void sink_event_is(const DAT_EVENT *ev, uint64_t cookie,
                          DAT_DTO_COMPLETION_STATUS st, DAT_SEG_LENGTH len)
{
	const DAT_DTO_COMPLETION_EVENT_DATA *d =
	        &ev->event_data.dto_completion_event_data;

	ck_assert_int_eq(ev->event_number, DAT_DTO_COMPLETION_EVENT);
	ck_assert_uint_eq(d->user_cookie.as_64, cookie);
	ck_assert_int_eq(d->status, st);
	ck_assert_uint_eq(d->transfered_length, len);
}

/*
 * Where the fabric cuts a long message silently (rxd), each receive ends
 * in the IA's sink: a message that fits completes as it is, one that
 * spilled into the sink completes with DAT_DTO_ERR_LOCAL_LENGTH, the
 * connection breaks, and no later receive succeeds.
 */
START_TEST(sink_reports_overrun)
{
	dofi_op_t *r0, *r1, *r2;
	DAT_EVENT ev;

	sink_setup(1);
	r0 = sink_post(0x10, 16);
	ck_assert_uint_eq(F.rx_count[0], 2);
	ck_assert_ptr_eq(F.rx_last_iov[0].iov_base, F.ia->recv_sink);
	ck_assert_uint_eq(F.rx_last_iov[0].iov_len, sizeof(F.ia->recv_sink));
	r1 = sink_post(0x11, 16);
	ck_assert_uint_eq(F.rx_count[1], 2);
	/* A message of exactly the receive's length. */
	sink_complete(r0, 16, &ev);
	sink_event_is(&ev, 0x10, DAT_DTO_SUCCESS, 16);
	ck_assert_int_eq(F.breaks, 0);
	r2 = sink_post(0x12, 16);
	/* One byte more: it spilled. */
	sink_complete(r1, 17, &ev);
	sink_event_is(&ev, 0x11, DAT_DTO_ERR_LOCAL_LENGTH, 16);
	ck_assert_int_eq(F.breaks, 1);
	ck_assert_int_eq(atomic_load(&F.ep->dto_error), 1);
	/* What the fabric still places after it does not succeed. */
	sink_complete(r2, 4, &ev);
	sink_event_is(&ev, 0x12, DAT_DTO_ERR_FLUSHED, 0);
	sink_teardown();
}
END_TEST

/* Elsewhere a receive is the consumer's segments only (the fast post). */
START_TEST(sink_absent_elsewhere)
{
	dofi_op_t *r0;
	DAT_EVENT ev;

	sink_setup(0);
	r0 = sink_post(0x20, 16);
	ck_assert_uint_eq(F.rx_count[0], 1);
	ck_assert_ptr_eq(F.rx_last_iov[0].iov_base, F.buf);
	ck_assert_uint_eq(F.rx_last_iov[0].iov_len, 16);
	sink_complete(r0, 12, &ev);
	sink_event_is(&ev, 0x20, DAT_DTO_SUCCESS, 12);
	ck_assert_int_eq(F.breaks, 0);
	sink_teardown();
}
END_TEST

Suite *check_prov_order_suite(void)
{
	Suite *s = suite_create("prov posting order");
	TCase *tc = tcase_create("dofi_dto_order");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, order_tcp_reads_late);
	tcase_add_test(tc, order_acked_writes_late);
	tcase_add_test(tc, order_none_passes_through);
	tcase_add_test(tc, order_all_in_turn_direct);
	tcase_add_test(tc, order_late_failure_flushes_held);
	tcase_add_test(tc, order_held_error_keeps_place);
	tcase_add_test(tc, order_dead_peer_flushes_rest);
	tcase_add_test(tc, order_other_errors_keep_status);
	tcase_add_test(tc, order_addr_gone_no_break);
	tcase_add_test(tc, order_refused_late_post);
	tcase_add_test(tc, order_drop_then_flush);
	tcase_add_test(tc, raced_requests_flushed_by_look);
	tcase_add_test(tc, order_random_tcp);
	tcase_add_test(tc, order_random_sockets);
	tcase_add_test(tc, order_dequeue_beside_drain);
	tcase_add_test(tc, order_saw_fence_send_waits);
	tcase_add_test(tc, order_saw_granted_no_wait);
	tcase_add_test(tc, defer_post_queues_in_order);
	tcase_add_test(tc, defer_kick_posts_waiting);
	tcase_add_test(tc, defer_drop_and_refusal);
	tcase_add_test(tc, defer_fenced_send_waits_in_queue);
	tcase_add_test(tc, defer_end_pending_while_posting);
	tcase_add_test(tc, defer_end_while_posting_disconnected);
	tcase_add_test(tc, sink_reports_overrun);
	tcase_add_test(tc, sink_absent_elsewhere);
	suite_add_tcase(s, tc);
	return s;
}
