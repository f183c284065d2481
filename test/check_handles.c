/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * libdat2's handle checks, with test/fake_provider.c loaded: every export
 * that takes a handle, called with NULL, small integers, misaligned
 * values, kernel-half addresses, pointers to random readable memory, a
 * handle of the wrong kind (an IA where an object belongs and an object
 * where an IA does) and a freed handle. Each call runs in a forked child
 * with the default actions for the crash signals; the call must return
 * DAT_INVALID_HANDLE (with the call's subtype) and the child exit
 * normally. The secondary handles are the provider's to check: the
 * fabtests-dat test dat_badhandle covers those on a real IA.
 */
#include "config.h"

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dat2/udat.h>
#include <dat2/dat_registry.h>

#include "dof/daterr.h"
#include "dof/dats.h"

#include "check_tests.h"

#if defined(__SANITIZE_ADDRESS__)
#define CHECK_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CHECK_UNDER_ASAN 1
#endif
#endif
#ifndef CHECK_UNDER_ASAN
#define CHECK_UNDER_ASAN 0
#endif

static char conf_path[CHECK_PATH_MAX];

static void handles_setup(void)
{
	FILE *fp = check_tmp_open(conf_path, "dat-handles-test");

	fprintf(fp,
	        "fake u2.0 threadsafe default %s dapl.2.0 \"ok\" \"\"\n"
	        "fake2 u2.0 threadsafe nondefault %s dapl.2.0 \"ok\" \"\"\n",
	        FAKEPROV_PATH, FAKEPROV_PATH);
	fclose(fp);
	setenv("DAT_OVERRIDE", conf_path, 1);
}

static void handles_teardown(void)
{
	unlink(conf_path);
}

static DAT_IA_HANDLE open_ok(const char *name)
{
	DAT_EVD_HANDLE evd = DAT_HANDLE_NULL;
	DAT_IA_HANDLE ia = DAT_HANDLE_NULL;

	ck_assert_uint_eq(dat_ia_open((DAT_NAME_PTR)name, 8, &evd, &ia),
	                  DAT_SUCCESS);
	return ia;
}

/* ---- one wrapper per export: the handle under test is h ------------------ */

static DAT_LMR_TRIPLET triplet;

#define W(name, call)                                                 \
	static DAT_RETURN w_##name(DAT_HANDLE h)                      \
	{                                                             \
		union {                                               \
			DAT_IA_ATTR ia;                               \
			DAT_EP_PARAM ep;                              \
			DAT_EVD_PARAM evd;                            \
			DAT_LMR_PARAM lmr;                            \
			DAT_RMR_PARAM rmr;                            \
			DAT_CR_PARAM cr;                              \
			DAT_SRQ_PARAM srq;                            \
			DAT_EVENT ev;                                 \
			char any[1024];                               \
		} out_ = {0};                                         \
		void *o_ = &out_;                                     \
		DAT_DTO_COOKIE ck_ = {.as_64 = 0};                    \
		DAT_RMR_COOKIE rk_ = {.as_64 = 0};                    \
		DAT_CONTEXT cx_ = {.as_64 = 0};                       \
		DAT_REGION_DESCRIPTION rg_ = {.for_va = o_};          \
		(void)o_, (void)ck_, (void)rk_, (void)cx_, (void)rg_; \
		return call;                                          \
	}

/* clang-format off */
W(ia_close, dat_ia_close(h, DAT_CLOSE_ABRUPT_FLAG))
W(ia_query, dat_ia_query(h, o_, DAT_IA_FIELD_ALL, o_, 0, NULL))
W(set_ctx, dat_set_consumer_context(h, cx_))
W(get_ctx, dat_get_consumer_context(h, o_))
W(get_type, dat_get_handle_type(h, o_))
W(ext_op, dat_extension_op(h, (DAT_EXTENDED_OP)1, NULL))
W(cr_query, dat_cr_query(h, DAT_CR_FIELD_ALL, o_))
W(cr_accept, dat_cr_accept(h, NULL, 0, NULL))
W(cr_reject, dat_cr_reject(h, 0, NULL))
W(cr_handoff, dat_cr_handoff(h, 1))
W(evd_create, dat_evd_create(h, 8, NULL, DAT_EVD_DTO_FLAG, o_))
W(evd_query, dat_evd_query(h, DAT_EVD_FIELD_ALL, o_))
W(evd_modify_cno, dat_evd_modify_cno(h, NULL))
W(evd_enable, dat_evd_enable(h))
W(evd_disable, dat_evd_disable(h))
W(evd_wait, dat_evd_wait(h, 0, 1, o_, (DAT_COUNT *)o_ + 128))
W(evd_resize, dat_evd_resize(h, 8))
W(evd_post_se, dat_evd_post_se(h, o_))
W(evd_dequeue, dat_evd_dequeue(h, o_))
W(evd_free, dat_evd_free(h))
W(evd_set_unwaitable, dat_evd_set_unwaitable(h))
W(evd_clear_unwaitable, dat_evd_clear_unwaitable(h))
W(cno_create, dat_cno_create(h, DAT_OS_WAIT_PROXY_AGENT_NULL, o_))
W(cno_modify_agent, dat_cno_modify_agent(h, DAT_OS_WAIT_PROXY_AGENT_NULL))
W(cno_query, dat_cno_query(h, DAT_CNO_FIELD_ALL, o_))
W(cno_free, dat_cno_free(h))
W(cno_wait, dat_cno_wait(h, 0, o_))
W(ep_create, dat_ep_create(h, NULL, NULL, NULL, NULL, NULL, o_))
W(ep_create_with_srq, dat_ep_create_with_srq(h, NULL, NULL, NULL, NULL,
                                              NULL, NULL, o_))
W(ep_query, dat_ep_query(h, DAT_EP_FIELD_ALL, o_))
W(ep_modify, dat_ep_modify(h, 0, o_))
W(ep_connect, dat_ep_connect(h, o_, 1, 0, 0, NULL, DAT_QOS_BEST_EFFORT,
                             DAT_CONNECT_DEFAULT_FLAG))
W(ep_dup_connect, dat_ep_dup_connect(h, NULL, 0, 0, NULL,
                                     DAT_QOS_BEST_EFFORT))
W(ep_disconnect, dat_ep_disconnect(h, DAT_CLOSE_ABRUPT_FLAG))
W(ep_post_send, dat_ep_post_send(h, 1, &triplet, ck_, 0))
W(ep_post_recv, dat_ep_post_recv(h, 1, &triplet, ck_, 0))
W(ep_post_rdma_read, dat_ep_post_rdma_read(h, 1, &triplet, ck_, o_, 0))
W(ep_post_rdma_write, dat_ep_post_rdma_write(h, 1, &triplet, ck_, o_, 0))
W(ep_get_status, dat_ep_get_status(h, o_, NULL, NULL))
W(ep_free, dat_ep_free(h))
W(ep_reset, dat_ep_reset(h))
W(ep_recv_query, dat_ep_recv_query(h, o_, NULL))
W(ep_set_watermark, dat_ep_set_watermark(h, 1, 1))
W(lmr_create, dat_lmr_create(h, DAT_MEM_TYPE_VIRTUAL, rg_, 64, NULL,
                             DAT_MEM_PRIV_ALL_FLAG, DAT_VA_TYPE_VA, o_, NULL,
                             NULL, NULL, NULL))
W(lmr_query, dat_lmr_query(h, DAT_LMR_FIELD_ALL, o_))
W(lmr_free, dat_lmr_free(h))
W(lmr_sync_rdma_read, dat_lmr_sync_rdma_read(h, &triplet, 1))
W(lmr_sync_rdma_write, dat_lmr_sync_rdma_write(h, &triplet, 1))
W(rmr_create, dat_rmr_create(h, o_))
W(rmr_query, dat_rmr_query(h, DAT_RMR_FIELD_ALL, o_))
W(rmr_bind, dat_rmr_bind(h, NULL, &triplet, DAT_MEM_PRIV_ALL_FLAG,
                         DAT_VA_TYPE_VA, NULL, rk_, 0, o_))
W(rmr_free, dat_rmr_free(h))
W(psp_create, dat_psp_create(h, 1, NULL, DAT_PSP_CONSUMER_FLAG, o_))
W(psp_create_any, dat_psp_create_any(h, o_, NULL, DAT_PSP_CONSUMER_FLAG,
                                     (DAT_PSP_HANDLE *)o_ + 8))
W(psp_query, dat_psp_query(h, DAT_PSP_FIELD_ALL, o_))
W(psp_free, dat_psp_free(h))
W(rsp_create, dat_rsp_create(h, 1, NULL, NULL, o_))
W(rsp_query, dat_rsp_query(h, DAT_RSP_FIELD_ALL, o_))
W(rsp_free, dat_rsp_free(h))
W(pz_create, dat_pz_create(h, o_))
W(pz_query, dat_pz_query(h, DAT_PZ_FIELD_ALL, o_))
W(pz_free, dat_pz_free(h))
W(srq_create, dat_srq_create(h, NULL, o_, (DAT_SRQ_HANDLE *)o_ + 64))
W(srq_free, dat_srq_free(h))
W(srq_post_recv, dat_srq_post_recv(h, 1, &triplet, ck_))
W(srq_query, dat_srq_query(h, DAT_SRQ_FIELD_ALL, o_))
W(srq_resize, dat_srq_resize(h, 8))
W(srq_set_lw, dat_srq_set_lw(h, 1))
W(dats_get_ia_handle, dats_get_ia_handle(h, o_))
/* clang-format on */

enum kind { K_IA, K_OBJ, K_ANY };

static const struct hcall {
	const char *name;
	enum kind kind;
	DAT_RETURN_SUBTYPE sub; /* the subtype libdat2 must give */
	DAT_RETURN (*fn)(DAT_HANDLE h);
} hcalls[] = {
/* clang-format off */
#define IA(n)       {"dat_" #n, K_IA, DAT_INVALID_HANDLE_IA, w_##n}
#define OBJ(n, sub) {"dat_" #n, K_OBJ, DAT_INVALID_HANDLE_##sub, w_##n}
#define ANY(n, fn)  {"dat_" #n, K_ANY, 0, w_##fn}
	IA(ia_close), IA(ia_query),
	ANY(set_consumer_context, set_ctx), ANY(get_consumer_context, get_ctx),
	ANY(get_handle_type, get_type), ANY(extension_op, ext_op),
	OBJ(cr_query, CR), OBJ(cr_accept, CR), OBJ(cr_reject, CR),
	OBJ(cr_handoff, CR),
	IA(evd_create), OBJ(evd_query, EVD_REQUEST),
	OBJ(evd_modify_cno, EVD_REQUEST), OBJ(evd_enable, EVD_REQUEST),
	OBJ(evd_disable, EVD_REQUEST), OBJ(evd_wait, EVD_REQUEST),
	OBJ(evd_resize, EVD_REQUEST), OBJ(evd_post_se, EVD_REQUEST),
	OBJ(evd_dequeue, EVD_REQUEST), OBJ(evd_free, EVD_REQUEST),
	OBJ(evd_set_unwaitable, EVD_REQUEST),
	OBJ(evd_clear_unwaitable, EVD_REQUEST),
	IA(cno_create), OBJ(cno_modify_agent, CNO), OBJ(cno_query, CNO),
	OBJ(cno_free, CNO), OBJ(cno_wait, CNO),
	IA(ep_create), IA(ep_create_with_srq), OBJ(ep_query, EP),
	OBJ(ep_modify, EP), OBJ(ep_connect, EP), OBJ(ep_dup_connect, EP),
	OBJ(ep_disconnect, EP), OBJ(ep_post_send, EP), OBJ(ep_post_recv, EP),
	OBJ(ep_post_rdma_read, EP), OBJ(ep_post_rdma_write, EP),
	OBJ(ep_get_status, EP), OBJ(ep_free, EP), OBJ(ep_reset, EP),
	OBJ(ep_recv_query, EP), OBJ(ep_set_watermark, EP),
	IA(lmr_create), OBJ(lmr_query, LMR), OBJ(lmr_free, LMR),
	IA(lmr_sync_rdma_read), IA(lmr_sync_rdma_write),
	OBJ(rmr_create, PZ), OBJ(rmr_query, RMR), OBJ(rmr_bind, RMR),
	OBJ(rmr_free, RMR),
	IA(psp_create), IA(psp_create_any), OBJ(psp_query, PSP),
	OBJ(psp_free, PSP),
	IA(rsp_create), OBJ(rsp_query, RSP), OBJ(rsp_free, RSP),
	IA(pz_create), OBJ(pz_query, PZ), OBJ(pz_free, PZ),
	IA(srq_create), OBJ(srq_free, SRQ), OBJ(srq_post_recv, SRQ),
	OBJ(srq_query, SRQ), OBJ(srq_resize, SRQ), OBJ(srq_set_lw, SRQ),
	IA(dats_get_ia_handle),
#undef IA
#undef OBJ
#undef ANY
        /* clang-format on */
};

#define NHCALLS (sizeof(hcalls) / sizeof(hcalls[0]))

/* ---- the run ------------------------------------------------------------- */

static DAT_RETURN *result;

/* Run c(h) in a child; 1 when it crashed, and *ret its return otherwise. */
static int run_child(const struct hcall *c, DAT_HANDLE h, DAT_RETURN *ret)
{
	static const int sigs[] = {SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE};
	pid_t pid;
	size_t i;
	int st;

	*result = 0xdeadbeef;
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
			signal(sigs[i], SIG_DFL);
		signal(SIGALRM, SIG_DFL);
		alarm(10);
		*result = c->fn(h);
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	*ret = *result;
	return !WIFEXITED(st) || WEXITSTATUS(st) != 0;
}

struct bad {
	const char *what;
	DAT_HANDLE h;
};

START_TEST(handles_every_call_refuses_junk)
{
	DAT_IA_HANDLE ia, closed;
	DAT_PZ_HANDLE pz, freed_pz;
	uint64_t seed = 17, *junk;
	int calls = 0, crashes = 0, wrong = 0;
	size_t i, b;

	result = mmap(NULL, sizeof(*result), PROT_READ | PROT_WRITE,
	              MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(result, MAP_FAILED);
	closed = open_ok("fake");
	ck_assert_uint_eq(dat_ia_close(closed, DAT_CLOSE_ABRUPT_FLAG),
	                  DAT_SUCCESS);
	ia = open_ok("fake");
	ck_assert_uint_eq(dat_pz_create(ia, &pz), DAT_SUCCESS);
	ck_assert_uint_eq(dat_pz_create(ia, &freed_pz), DAT_SUCCESS);
	ck_assert_uint_eq(dat_pz_free(freed_pz), DAT_SUCCESS);
	junk = malloc(256);
	ck_assert_ptr_nonnull(junk);
	for (i = 0; i < 256 / sizeof(*junk); i++)
		junk[i] = check_rand(&seed);

	for (i = 0; i < NHCALLS; i++) {
		const struct hcall *c = &hcalls[i];
		const struct bad bads[] = {
		        {"NULL", DAT_HANDLE_NULL},
		        {"(void *)1", (DAT_HANDLE)(uintptr_t)1},
		        {"(void *)4095", (DAT_HANDLE)(uintptr_t)4095},
		        {"(void *)65535", (DAT_HANDLE)(uintptr_t)65535},
		        {"(void *)0x10007", (DAT_HANDLE)(uintptr_t)0x10007},
		        {"a live PZ + 1", (DAT_HANDLE)((char *)pz + 1)},
		        {"(void *)-8", (DAT_HANDLE)(intptr_t)-8},
		        {"256 random bytes", junk},
		        {"a closed IA", closed},
		        {"a live PZ", pz},
		        /*
		         * The fake provider gives a freed PZ back to malloc:
		         * reading its first word is what AddressSanitizer
		         * reports (dapl-ofi keeps freed objects instead).
		         */
		        {CHECK_UNDER_ASAN ? NULL : "a freed PZ", freed_pz},
		};

		for (b = 0; b < sizeof(bads) / sizeof(bads[0]); b++) {
			DAT_RETURN ret = 0;
			DAT_HANDLE h = bads[b].h;

			if (bads[b].what == NULL)
				continue;
			/* Valid where this call takes it. */
			if (h == ia && c->kind != K_OBJ)
				continue;
			if (h == pz && c->kind != K_IA)
				continue;
			calls++;
			if (run_child(c, h, &ret)) {
				fprintf(stderr, "%s(%s): crashed\n", c->name,
				        bads[b].what);
				crashes++;
				continue;
			}
			if (DAT_GET_TYPE(ret) != DAT_INVALID_HANDLE ||
			    (c->kind != K_ANY &&
			     DAT_GET_SUBTYPE(ret) != c->sub)) {
				fprintf(stderr, "%s(%s): returned %#x\n",
				        c->name, bads[b].what, (unsigned)ret);
				wrong++;
			}
		}
	}
	fprintf(stderr,
	        "check_handles: %d calls with bad handles, %d crashed, %d "
	        "wrong returns\n",
	        calls, crashes, wrong);
	ck_assert_int_eq(crashes, 0);
	ck_assert_int_eq(wrong, 0);
	ck_assert_int_ge(calls, 69 * 9);

	/* The children did nothing to the live objects. */
	ck_assert_uint_eq(dat_pz_free(pz), DAT_SUCCESS);
	ck_assert_uint_eq(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG), DAT_SUCCESS);
	free(junk);
	munmap(result, sizeof(*result));
}
END_TEST

START_TEST(handles_follow_the_open_ias)
{
	DAT_IA_HANDLE a, b;
	DAT_PZ_HANDLE pa, pb;
	DAT_PZ_PARAM param;
	uint64_t *forged;

	/* Two provider tables: objects of each go through. */
	a = open_ok("fake");
	b = open_ok("fake2");
	ck_assert_uint_eq(dat_pz_create(a, &pa), DAT_SUCCESS);
	ck_assert_uint_eq(dat_pz_create(b, &pb), DAT_SUCCESS);
	ck_assert_uint_eq(dat_pz_query(pa, DAT_PZ_FIELD_ALL, &param),
	                  DAT_SUCCESS);
	ck_assert_ptr_eq(param.ia_handle, a);
	ck_assert_uint_eq(dat_pz_query(pb, DAT_PZ_FIELD_ALL, &param),
	                  DAT_SUCCESS);
	ck_assert_ptr_eq(param.ia_handle, b);

	/* Readable memory that starts with a real table goes through to
	 * the provider, which refuses it by its own magic. */
	forged = calloc(8, sizeof(*forged));
	ck_assert_ptr_nonnull(forged);
	memcpy(forged, pb, sizeof(void *));
	ck_assert_uint_eq(DAT_GET_SUBTYPE(dat_pz_free(forged)),
	                  DAT_INVALID_HANDLE_PZ);

	/* Once fake2's last IA is closed its table is no longer accepted,
	 * while fake's still is. */
	ck_assert_uint_eq(dat_pz_free(pb), DAT_SUCCESS);
	ck_assert_uint_eq(dat_ia_close(b, DAT_CLOSE_ABRUPT_FLAG), DAT_SUCCESS);
	ck_assert_uint_eq(
	        DAT_GET_TYPE(dat_pz_query(forged, DAT_PZ_FIELD_ALL, &param)),
	        DAT_INVALID_HANDLE);
	ck_assert_uint_eq(dat_pz_query(pa, DAT_PZ_FIELD_ALL, &param),
	                  DAT_SUCCESS);
	memcpy(forged, pa, sizeof(void *));
	ck_assert_uint_eq(
	        DAT_GET_SUBTYPE(dat_pz_query(forged, DAT_PZ_FIELD_ALL, &param)),
	        DAT_INVALID_HANDLE_PZ);
	ck_assert_uint_eq(dat_pz_free(pa), DAT_SUCCESS);
	ck_assert_uint_eq(dat_ia_close(a, DAT_CLOSE_ABRUPT_FLAG), DAT_SUCCESS);
	/* No IA open: no object handle is accepted. */
	ck_assert_uint_eq(
	        DAT_GET_TYPE(dat_pz_query(forged, DAT_PZ_FIELD_ALL, &param)),
	        DAT_INVALID_HANDLE);
	free(forged);
}
END_TEST

Suite *check_handles_suite(void)
{
	Suite *s = suite_create("handles");
	TCase *tc = tcase_create("bad handles");

	tcase_add_checked_fixture(tc, handles_setup, handles_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, handles_every_call_refuses_junk);
	tcase_add_test(tc, handles_follow_the_open_ias);
	suite_add_tcase(s, tc);
	return s;
}
