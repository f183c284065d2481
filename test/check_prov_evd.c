/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * An EVD's CQs (prov/ofi/dofi_evd.c, dofi_evd_cq_get/_put/_marks): at most
 * DOFI_CQ_SHARD EPs bind one CQ, a further one is opened in the same
 * domain for more, a CQ given back takes EPs again, another PZ's domain
 * gets CQs of its own, and each CQ keeps its own read marks. A fake
 * domain stands in for libfabric's: it hands out CQs and records the
 * sizes asked for. No network, no libfabric call.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "check_tests.h"
#include "dofi.h"

#define FAKE_CQS 16

static struct {
	struct fid_cq cqs[FAKE_CQS];
	size_t sizes[FAKE_CQS];
	enum fi_wait_obj waits[FAKE_CQS];
	int ncq;
	int refuse_big; /* FI_EINVAL for a size above qlen */
	int watched;    /* progress_watch calls */
} C;

static int fake_cq_close(struct fid *fid)
{
	(void)fid;
	return 0;
}

static int fake_cq_control(struct fid *fid, int command, void *arg)
{
	(void)fid, (void)command, (void)arg;
	return -FI_ENOSYS; /* no fd to give */
}

static struct fi_ops fake_cq_fi_ops = {
        .size = sizeof(struct fi_ops),
        .close = fake_cq_close,
        .control = fake_cq_control,
};

static int fake_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
                        struct fid_cq **cq, void *context)
{
	(void)domain, (void)context;
	if (C.refuse_big && attr->size > 8)
		return -FI_EINVAL;
	ck_assert_int_lt(C.ncq, FAKE_CQS);
	C.sizes[C.ncq] = attr->size;
	C.waits[C.ncq] = attr->wait_obj;
	C.cqs[C.ncq].fid.fclass = FI_CLASS_CQ;
	C.cqs[C.ncq].fid.ops = &fake_cq_fi_ops;
	*cq = &C.cqs[C.ncq++];
	return 0;
}

static struct fi_ops_domain fake_domain_ops = {
        .size = sizeof(struct fi_ops_domain),
        .cq_open = fake_cq_open,
};

static void fake_progress_watch(dofi_ia_t *ia)
{
	(void)ia;
	C.watched++;
}

static dofi_ctl_ops_t fake_ctl = {
        .progress_watch = fake_progress_watch,
};

static dofi_ia_t *ia;
static dofi_evd_t *evd;
static struct fid_domain dom1_domain;
static dofi_dom_t dom1;

/* An IA whose two domains open fake CQs, and a DTO EVD of qlen 8. */
static void setup(void)
{
	static dofi_traits_t traits;

	memset(&C, 0, sizeof(C));
	ia = calloc(1, sizeof(*ia));
	ck_assert_ptr_nonnull(ia);
	traits = *dofi_traits_lookup(NULL);
	traits.cq_pollfd = 0;
	traits.cq_nowait = 1; /* FI_WAIT_NONE: no fd to ask for */
	ia->traits = &traits;
	ia->ctl = &fake_ctl;
	ia->dom0.domain = calloc(1, sizeof(struct fid_domain));
	ck_assert_ptr_nonnull(ia->dom0.domain);
	ia->dom0.domain->ops = &fake_domain_ops;
	ia->dom0.index = 0;
	for (int t = 0; t < DOFI_OBJ_LAST; t++)
		dofi_list_init(&ia->objs[t]);
	pthread_mutex_init(&ia->lock, NULL);
	memset(&dom1_domain, 0, sizeof(dom1_domain));
	dom1_domain.ops = &fake_domain_ops;
	memset(&dom1, 0, sizeof(dom1));
	dom1.domain = &dom1_domain;
	dom1.index = 1;
	evd = dofi_evd_internal_create(ia, 8, DAT_EVD_DTO_FLAG);
	ck_assert_ptr_nonnull(evd);
	ck_assert_ptr_nonnull(evd->cq);
	ck_assert_int_eq(C.ncq, 1);
}

static void teardown(void)
{
	dofi_evd_destroy(evd);
	pthread_mutex_destroy(&ia->lock);
	free(ia->dom0.domain);
	free(ia);
}

START_TEST(cq_min_size)
{
	/* qlen 8, but a CQ reads no more than its size: at least 256. */
	ck_assert_uint_ge(C.sizes[0], 256);
}
END_TEST

START_TEST(cq_size_refused)
{
	/* A fabric that refuses the larger size gets the EVD's qlen. */
	dofi_evd_t *e;

	C.refuse_big = 1;
	e = dofi_evd_internal_create(ia, 8, DAT_EVD_DTO_FLAG);
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(C.sizes[C.ncq - 1], 8);
	dofi_evd_destroy(e);
}
END_TEST

START_TEST(shards_fill_and_spill)
{
	struct fid_cq *cq, *next;
	uint32_t i;

	for (i = 0; i < DOFI_CQ_SHARD; i++)
		ck_assert_ptr_eq(dofi_evd_cq_get(evd, &ia->dom0), evd->cq);
	ck_assert_int_eq(C.ncq, 1);
	/* One more EP: a second CQ of the same EVD, in the same domain. */
	next = dofi_evd_cq_get(evd, &ia->dom0);
	ck_assert_ptr_nonnull(next);
	ck_assert_ptr_ne(next, evd->cq);
	ck_assert_int_eq(C.ncq, 2);
	ck_assert_ptr_nonnull(evd->xcq);
	ck_assert_ptr_eq(evd->xcq->cq, next);
	ck_assert_ptr_eq(evd->xcq->dom, &ia->dom0);
	ck_assert_uint_eq(evd->xcq->neps, 1);
	ck_assert_int_ge(C.watched, 2);
	/* A place freed in the first: the next EP takes it. */
	dofi_evd_cq_put(evd, evd->cq);
	ck_assert_ptr_eq(dofi_evd_cq_get(evd, &ia->dom0), evd->cq);
	/* Then the second again, not a third. */
	cq = dofi_evd_cq_get(evd, &ia->dom0);
	ck_assert_ptr_eq(cq, next);
	ck_assert_uint_eq(evd->xcq->neps, 2);
	ck_assert_int_eq(C.ncq, 2);
	dofi_evd_cq_put(evd, next);
	dofi_evd_cq_put(evd, next);
	ck_assert_uint_eq(evd->xcq->neps, 0);
	/* Giving back more than was taken, or a CQ not the EVD's, is
	 * harmless. */
	dofi_evd_cq_put(evd, next);
	ck_assert_uint_eq(evd->xcq->neps, 0);
	dofi_evd_cq_put(evd, &C.cqs[FAKE_CQS - 1]);
	dofi_evd_cq_put(evd, NULL);
}
END_TEST

START_TEST(shards_per_domain)
{
	struct fid_cq *a, *b;

	/* Another PZ's domain: a CQ of its own, also counted. */
	a = dofi_evd_cq_get(evd, &dom1);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_ne(a, evd->cq);
	b = dofi_evd_cq_get(evd, &dom1);
	ck_assert_ptr_eq(a, b);
	ck_assert_uint_eq(evd->xcq->neps, 2);
	ck_assert_ptr_eq(evd->xcq->dom, &dom1);
	/* The IA's domain still binds its own CQ. */
	ck_assert_ptr_eq(dofi_evd_cq_get(evd, &ia->dom0), evd->cq);
	ck_assert_uint_eq(evd->cq_neps, 1);
}
END_TEST

START_TEST(marks_per_cq)
{
	struct fid_cq *x;
	uint64_t *m0, *m1;
	uint32_t i;

	for (i = 0; i <= DOFI_CQ_SHARD; i++)
		x = dofi_evd_cq_get(evd, &ia->dom0);
	m0 = dofi_evd_cq_marks(evd, evd->cq);
	m1 = dofi_evd_cq_marks(evd, x);
	ck_assert_ptr_nonnull(m0);
	ck_assert_ptr_nonnull(m1);
	ck_assert_ptr_ne(m0, m1);
	m0[0] = 7;
	ck_assert_uint_eq(m1[0], 0);
	ck_assert_ptr_null(dofi_evd_cq_marks(evd, &C.cqs[FAKE_CQS - 1]));
}
END_TEST

START_TEST(shard_wait_objects)
{
	/* Where the fabric's CQs wait on a poll list (tcp), the EVD's first
	 * CQ in a domain keeps it; one more CQ of the domain takes an fd. */
	const dofi_traits_t *saved = ia->traits;
	dofi_traits_t pollfd = *saved;
	dofi_evd_t *e;
	uint32_t i;

	pollfd.cq_pollfd = 1;
	pollfd.cq_nowait = 0;
	ia->traits = &pollfd;
	e = dofi_evd_internal_create(ia, 8, DAT_EVD_DTO_FLAG);
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(C.waits[C.ncq - 1], FI_WAIT_POLLFD);
	for (i = 0; i < DOFI_CQ_SHARD_LIST; i++)
		ck_assert_ptr_eq(dofi_evd_cq_get(e, &ia->dom0), e->cq);
	/* Fewer EPs on a list than on an fd. */
	ck_assert_ptr_ne(dofi_evd_cq_get(e, &ia->dom0), e->cq);
	ck_assert_int_eq(C.waits[C.ncq - 1], FI_WAIT_FD);
	for (i = 1; i < DOFI_CQ_SHARD; i++)
		ck_assert_ptr_eq(dofi_evd_cq_get(e, &ia->dom0), e->xcq->cq);
	ck_assert_ptr_nonnull(dofi_evd_cq_get(e, &ia->dom0));
	ck_assert_ptr_nonnull(e->xcq->next);
	ck_assert_int_eq(C.waits[C.ncq - 1], FI_WAIT_FD);
	/* Another PZ's domain: its first CQ takes the list again. */
	ck_assert_ptr_nonnull(dofi_evd_cq_get(e, &dom1));
	ck_assert_int_eq(C.waits[C.ncq - 1], FI_WAIT_POLLFD);
	dofi_evd_destroy(e);
	ia->traits = saved;
}
END_TEST

START_TEST(no_cq_no_bind)
{
	/* An EVD without a CQ (connection events only) gives none. */
	dofi_evd_t *e =
	        dofi_evd_internal_create(ia, 4, DAT_EVD_CONNECTION_FLAG);

	ck_assert_ptr_nonnull(e);
	ck_assert_ptr_null(dofi_evd_cq_get(e, &ia->dom0));
	dofi_evd_cq_put(e, NULL);
	dofi_evd_destroy(e);
}
END_TEST

Suite *check_prov_evd_suite(void)
{
	Suite *s = suite_create("prov_evd");
	TCase *tc = tcase_create("cqs");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, cq_min_size);
	tcase_add_test(tc, cq_size_refused);
	tcase_add_test(tc, shards_fill_and_spill);
	tcase_add_test(tc, shards_per_domain);
	tcase_add_test(tc, marks_per_cq);
	tcase_add_test(tc, shard_wait_objects);
	tcase_add_test(tc, no_cq_no_bind);
	suite_add_tcase(s, tc);
	return s;
}
