/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * The registry through the public API, with test/fake_provider.c loaded
 * from a generated dat.conf: open/query/close cycles, load and unload,
 * handle translation, bad handles, list_providers, strerror, contexts.
 * Check runs every test in its own process, so each starts unloaded.
 */
#include "config.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dat2/udat.h>
#include <dat2/dat_ib_extensions.h>
#include <dat2/dat_registry.h>

#include "dof/daterr.h"
#include "dof/dats.h"

#include "check_tests.h"

/* Found by the fake provider with dlsym (linked -export-dynamic). */
struct fakeprov_counters fakeprov_counters;

static char conf_path[CHECK_PATH_MAX];

static void registry_setup(void)
{
	FILE *fp = check_tmp_open(conf_path, "dat-reg-test");

	fprintf(fp,
	        "# unit-test registry\n"
	        "fake u2.0 threadsafe default %s dapl.2.0 \"ok\" \"\"\n"
	        "fake2 u2.0 nonthreadsafe nondefault %s dapl.2.0 \"ok\" \"\"\n"
	        "noreg u2.0 threadsafe default %s dapl.2.0 \"noregister\" "
	        "\"\"\n"
	        "failopen u2.0 threadsafe default %s dapl.2.0 \"failopen\" "
	        "\"\"\n"
	        "nolib u2.0 threadsafe default /nonexistent/libx.so dapl.2.0 "
	        "\"\" \"\"\n"
	        "notprov u2.0 threadsafe default libc.so.6 dapl.2.0 \"\" "
	        "\"\"\n"
	        "newer u2.9 threadsafe default %s dapl.2.0 \"ok\" \"\"\n"
	        "broken u2.0 threadsafe\n",
	        FAKEPROV_PATH, FAKEPROV_PATH, FAKEPROV_PATH, FAKEPROV_PATH,
	        FAKEPROV_PATH);
	fclose(fp);
	setenv("DAT_OVERRIDE", conf_path, 1);
	memset(&fakeprov_counters, 0, sizeof(fakeprov_counters));
}

static void registry_teardown(void)
{
	unlink(conf_path);
}

static int fake_loaded(void)
{
	void *h = dlopen(FAKEPROV_PATH, RTLD_NOW | RTLD_NOLOAD);

	if (h == NULL)
		return 0;
	dlclose(h);
	return 1;
}

static DAT_IA_HANDLE open_ok(const char *name)
{
	DAT_EVD_HANDLE evd = DAT_HANDLE_NULL;
	DAT_IA_HANDLE ia = DAT_HANDLE_NULL;

	ck_assert_uint_eq(dat_ia_open((DAT_NAME_PTR)name, 8, &evd, &ia),
	                  DAT_SUCCESS);
	ck_assert_ptr_nonnull(ia);
	return ia;
}

START_TEST(reg_open_query_close)
{
	DAT_IA_ATTR ia_attr;
	DAT_PROVIDER_ATTR pa;
	DAT_IA_HANDLE ia;

	ck_assert(!fake_loaded());
	ia = open_ok("fake");
	ck_assert(fake_loaded());
	ck_assert_int_eq(fakeprov_counters.init, 1);
	ck_assert_str_eq(fakeprov_counters.last_instance, "ok");
	/* Consumers see a small integer, never the provider's pointer. */
	ck_assert_uint_ge((uintptr_t)ia, 1);
	ck_assert_uint_le((uintptr_t)ia, 65535);
	ck_assert_uint_eq(dat_ia_query(ia, NULL, DAT_IA_FIELD_ALL, &ia_attr,
	                               DAT_PROVIDER_FIELD_ALL, &pa),
	                  DAT_SUCCESS);
	ck_assert_str_eq(ia_attr.adapter_name, "fake-adapter");
	ck_assert_int_eq(ia_attr.max_eps, 7);
	ck_assert_str_eq(pa.provider_name, "fake");
	ck_assert_int_eq(pa.is_thread_safe, DAT_TRUE);
	ck_assert_uint_eq(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG), DAT_SUCCESS);
	ck_assert_int_eq(fakeprov_counters.fini, 1);
	ck_assert(!fake_loaded());
}
END_TEST

/*
 * dat_ib_open_query: the registry loads the provider by name, gives the
 * provider the name as the handle and the arguments after it, and hands
 * the consumer an IA handle like dat_ia_open's; dat_ib_close_query frees
 * it and unloads the provider.
 */
START_TEST(reg_extension_open_close)
{
	DAT_IA_ATTR ia_attr, again;
	DAT_PROVIDER_ATTR pa;
	DAT_HANDLE ia = DAT_HANDLE_NULL;

	ck_assert(!fake_loaded());
	ck_assert_uint_eq(dat_ib_open_query("fake", &ia, DAT_IA_FIELD_ALL,
	                                    &ia_attr, DAT_PROVIDER_FIELD_ALL,
	                                    &pa),
	                  DAT_SUCCESS);
	ck_assert(fake_loaded());
	ck_assert_int_eq(fakeprov_counters.ext_open, 1);
	ck_assert_str_eq(ia_attr.adapter_name, "fake-adapter");
	ck_assert_str_eq(pa.provider_name, "fake");
	ck_assert_uint_ge((uintptr_t)ia, 1);
	ck_assert_uint_le((uintptr_t)ia, 65535);
	ck_assert_uint_eq(
	        dat_ia_query(ia, NULL, DAT_IA_FIELD_ALL, &again, 0, NULL),
	        DAT_SUCCESS);
	ck_assert_uint_eq(dat_ib_close_query(ia), DAT_SUCCESS);
	ck_assert_int_eq(fakeprov_counters.ext_close, 1);
	ck_assert(!fake_loaded());
	ck_assert_uint_eq(DAT_GET_TYPE(dat_ib_close_query(ia)),
	                  DAT_INVALID_HANDLE);
	/* An unknown name: nothing loaded, nothing left behind. */
	ck_assert_uint_eq(
	        DAT_GET_TYPE(dat_ib_open_query("nosuch", &ia, DAT_IA_FIELD_ALL,
	                                       &ia_attr, 0, NULL)),
	        DAT_PROVIDER_NOT_FOUND);
	ck_assert_uint_eq(
	        DAT_GET_TYPE(dat_ib_open_query(NULL, &ia, DAT_IA_FIELD_ALL,
	                                       &ia_attr, 0, NULL)),
	        DAT_INVALID_PARAMETER);
	ck_assert_int_eq(fakeprov_counters.fini, 1);
}
END_TEST

START_TEST(reg_repeated_load_unload)
{
	int i;

	for (i = 0; i < 50; i++) {
		DAT_IA_HANDLE ia = open_ok("fake");

		ck_assert(fake_loaded());
		ck_assert_uint_eq(dat_ia_close(ia, i % 2), DAT_SUCCESS);
		ck_assert(!fake_loaded());
	}
	ck_assert_int_eq(fakeprov_counters.init, 50);
	ck_assert_int_eq(fakeprov_counters.fini, 50);
	ck_assert_int_eq(fakeprov_counters.open, 50);
	ck_assert_int_eq(fakeprov_counters.close, 50);
}
END_TEST

START_TEST(reg_refcount_across_names)
{
	DAT_IA_HANDLE a, b, c;

	a = open_ok("fake");
	b = open_ok("fake");
	c = open_ok("fake2");
	ck_assert_ptr_ne(a, b);
	/* One init per IA name, however many opens. */
	ck_assert_int_eq(fakeprov_counters.init, 2);
	ck_assert_uint_eq(dat_ia_close(a, DAT_CLOSE_ABRUPT_FLAG), DAT_SUCCESS);
	ck_assert_int_eq(fakeprov_counters.fini, 0);
	ck_assert_uint_eq(dat_ia_close(b, DAT_CLOSE_ABRUPT_FLAG), DAT_SUCCESS);
	ck_assert_int_eq(fakeprov_counters.fini, 1);
	ck_assert(fake_loaded()); /* fake2 still holds the library */
	ck_assert_uint_eq(dat_ia_close(c, DAT_CLOSE_ABRUPT_FLAG), DAT_SUCCESS);
	ck_assert_int_eq(fakeprov_counters.fini, 2);
	ck_assert(!fake_loaded());
}
END_TEST

START_TEST(reg_handle_translation)
{
	DAT_IA_HANDLE ia, raw = NULL, back = NULL;
	DAT_PZ_HANDLE pz;
	DAT_PZ_PARAM param;

	ia = open_ok("fake");
	ck_assert_uint_eq(dats_get_ia_handle(ia, &raw), DAT_SUCCESS);
	ck_assert_uint_gt((uintptr_t)raw, 65535);
	ck_assert_uint_eq(dats_get_ia_handle(raw, &back), DAT_SUCCESS);
	ck_assert_ptr_eq(back, ia);
	/* The provider reports the consumer's handle in queries. */
	ck_assert_uint_eq(dat_pz_create(ia, &pz), DAT_SUCCESS);
	ck_assert_uint_eq(dat_pz_query(pz, DAT_PZ_FIELD_ALL, &param),
	                  DAT_SUCCESS);
	ck_assert_ptr_eq(param.ia_handle, ia);
	ck_assert_uint_eq(dat_pz_free(pz), DAT_SUCCESS);
	ck_assert_uint_eq(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG), DAT_SUCCESS);
	/* Both directions fail once the IA is closed. */
	ck_assert_uint_eq(DAT_GET_TYPE(dats_get_ia_handle(ia, &back)),
	                  DAT_INVALID_HANDLE);
	ck_assert_uint_eq(DAT_GET_TYPE(dats_get_ia_handle(raw, &back)),
	                  DAT_INVALID_HANDLE);
	ck_assert_uint_eq(DAT_GET_TYPE(dats_get_ia_handle(NULL, &back)),
	                  DAT_INVALID_HANDLE);
	ck_assert_uint_eq(DAT_GET_TYPE(dats_get_ia_handle(ia, NULL)),
	                  DAT_INVALID_PARAMETER);
}
END_TEST

START_TEST(reg_stale_handles_not_reused)
{
	DAT_IA_HANDLE first, second;

	first = open_ok("fake");
	ck_assert_uint_eq(dat_ia_close(first, DAT_CLOSE_ABRUPT_FLAG),
	                  DAT_SUCCESS);
	second = open_ok("fake");
	/* The closed index is not handed out again straight away. */
	ck_assert_ptr_ne(first, second);
	ck_assert_uint_eq(
	        DAT_GET_TYPE(dat_ia_close(first, DAT_CLOSE_ABRUPT_FLAG)),
	        DAT_INVALID_HANDLE);
	ck_assert_uint_eq(dat_ia_close(second, DAT_CLOSE_ABRUPT_FLAG),
	                  DAT_SUCCESS);
}
END_TEST

START_TEST(reg_bad_handles)
{
	DAT_IA_ATTR attr;
	DAT_PZ_HANDLE pz;
	DAT_HANDLE_TYPE type;
	DAT_CONTEXT ctx;
	DAT_IA_HANDLE ia;
	DAT_RETURN ret;

	ctx.as_64 = 0;
	/* NULL, unknown index, closed IA: DAT_INVALID_HANDLE, no crash. */
	ret = dat_ia_close(DAT_HANDLE_NULL, DAT_CLOSE_ABRUPT_FLAG);
	ck_assert_uint_eq(DAT_GET_TYPE(ret), DAT_INVALID_HANDLE);
	ck_assert_uint_eq(DAT_GET_SUBTYPE(ret), DAT_INVALID_HANDLE_IA);
	ret = dat_ia_close((DAT_IA_HANDLE)(uintptr_t)4242,
	                   DAT_CLOSE_ABRUPT_FLAG);
	ck_assert_uint_eq(DAT_GET_TYPE(ret), DAT_INVALID_HANDLE);
	ret = dat_ia_query((DAT_IA_HANDLE)(uintptr_t)3, NULL, DAT_IA_FIELD_ALL,
	                   &attr, 0, NULL);
	ck_assert_uint_eq(DAT_GET_TYPE(ret), DAT_INVALID_HANDLE);
	ret = dat_pz_create((DAT_IA_HANDLE)(uintptr_t)1, &pz);
	ck_assert_uint_eq(DAT_GET_TYPE(ret), DAT_INVALID_HANDLE);

	ia = open_ok("fake");
	ck_assert_uint_eq(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG), DAT_SUCCESS);
	ck_assert_uint_eq(DAT_GET_TYPE(dat_ia_query(ia, NULL, DAT_IA_FIELD_ALL,
	                                            &attr, 0, NULL)),
	                  DAT_INVALID_HANDLE);
	ck_assert_uint_eq(DAT_GET_TYPE(dat_pz_create(ia, &pz)),
	                  DAT_INVALID_HANDLE);
	ck_assert_uint_eq(DAT_GET_TYPE(dat_get_handle_type(ia, &type)),
	                  DAT_INVALID_HANDLE);
	ck_assert_uint_eq(DAT_GET_TYPE(dat_set_consumer_context(ia, ctx)),
	                  DAT_INVALID_HANDLE);

	/* Object calls refuse NULL and IA indices before dereferencing. */
	ck_assert_uint_eq(DAT_GET_TYPE(dat_pz_free(DAT_HANDLE_NULL)),
	                  DAT_INVALID_HANDLE);
	ck_assert_uint_eq(DAT_GET_TYPE(dat_ep_free(DAT_HANDLE_NULL)),
	                  DAT_INVALID_HANDLE);
	ck_assert_uint_eq(DAT_GET_SUBTYPE(dat_ep_post_send(
	                          (DAT_EP_HANDLE)(uintptr_t)1, 0, NULL,
	                          (DAT_DTO_COOKIE)(DAT_UINT64)0, 0)),
	                  DAT_INVALID_HANDLE_EP);
	/*
	 * OFED's dtestcm -c N, N > burst and not a multiple of it, connects
	 * past the end of its EP array: the word after it is NULL or a
	 * malloc chunk header (0x21). Both must fail with the EP subtype,
	 * and it is the consumer's bug, not ours.
	 */
	ret = dat_ep_connect(DAT_HANDLE_NULL, NULL, 0, 0, 0, NULL,
	                     DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG);
	ck_assert_uint_eq(DAT_GET_TYPE(ret), DAT_INVALID_HANDLE);
	ck_assert_uint_eq(DAT_GET_SUBTYPE(ret), DAT_INVALID_HANDLE_EP);
	ret = dat_ep_connect((DAT_EP_HANDLE)(uintptr_t)0x21, NULL, 0, 0, 0,
	                     NULL, DAT_QOS_BEST_EFFORT,
	                     DAT_CONNECT_DEFAULT_FLAG);
	ck_assert_uint_eq(DAT_GET_TYPE(ret), DAT_INVALID_HANDLE);
	ck_assert_uint_eq(DAT_GET_SUBTYPE(ret), DAT_INVALID_HANDLE_EP);
	ck_assert_uint_eq(DAT_GET_TYPE(dat_evd_dequeue(DAT_HANDLE_NULL, NULL)),
	                  DAT_INVALID_HANDLE);
	ck_assert_uint_eq(DAT_GET_TYPE(dat_get_handle_type(NULL, &type)),
	                  DAT_INVALID_HANDLE);
	ck_assert_uint_eq(DAT_GET_TYPE(dat_get_consumer_context(NULL, &ctx)),
	                  DAT_INVALID_HANDLE);
	ck_assert_uint_eq(DAT_GET_TYPE(dat_extension_op(NULL, 0)),
	                  DAT_INVALID_HANDLE);
}
END_TEST

START_TEST(reg_bad_parameters)
{
	DAT_EVD_HANDLE evd = DAT_HANDLE_NULL;
	DAT_IA_HANDLE ia;
	char longname[DAT_NAME_MAX_LENGTH + 10];

	ck_assert_uint_eq(DAT_GET_TYPE(dat_ia_open(NULL, 8, &evd, &ia)),
	                  DAT_INVALID_PARAMETER);
	ck_assert_uint_eq(DAT_GET_TYPE(dat_ia_open("fake", 8, NULL, &ia)),
	                  DAT_INVALID_PARAMETER);
	ck_assert_uint_eq(DAT_GET_TYPE(dat_ia_open("fake", 8, &evd, NULL)),
	                  DAT_INVALID_PARAMETER);
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	ck_assert_uint_eq(DAT_GET_TYPE(dat_ia_open(longname, 8, &evd, &ia)),
	                  DAT_INVALID_PARAMETER);
	ck_assert_uint_eq(DAT_GET_TYPE(dat_ia_openv("fake", 8, &evd, &ia, 2, 0,
	                                            (DAT_BOOLEAN)7)),
	                  DAT_INVALID_PARAMETER);
	ia = open_ok("fake");
	ck_assert_uint_eq(DAT_GET_TYPE(dat_ia_close(ia, (DAT_CLOSE_FLAGS)5)),
	                  DAT_INVALID_PARAMETER);
	ck_assert_uint_eq(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG), DAT_SUCCESS);
}
END_TEST

START_TEST(reg_not_found_and_failures)
{
	DAT_EVD_HANDLE evd = DAT_HANDLE_NULL;
	DAT_IA_HANDLE ia = DAT_HANDLE_NULL;
	DAT_RETURN ret;

	ret = dat_ia_open("nosuch", 8, &evd, &ia);
	ck_assert_uint_eq(DAT_GET_TYPE(ret), DAT_PROVIDER_NOT_FOUND);
	ck_assert_ptr_null(ia);
	/* The library is missing, or is not a provider. */
	ret = dat_ia_open("nolib", 8, &evd, &ia);
	ck_assert_uint_eq(DAT_GET_TYPE(ret), DAT_PROVIDER_NOT_FOUND);
	ret = dat_ia_open("notprov", 8, &evd, &ia);
	ck_assert_uint_eq(DAT_GET_TYPE(ret), DAT_PROVIDER_NOT_FOUND);
	/* A malformed line is skipped, so its name is unknown. */
	ret = dat_ia_open("broken", 8, &evd, &ia);
	ck_assert_uint_eq(DAT_GET_TYPE(ret), DAT_PROVIDER_NOT_FOUND);
	/* init that does not register: fini runs, library unloaded. */
	ret = dat_ia_open("noreg", 8, &evd, &ia);
	ck_assert_uint_eq(DAT_GET_TYPE(ret), DAT_PROVIDER_NOT_FOUND);
	ck_assert_int_eq(fakeprov_counters.init, 1);
	ck_assert(!fake_loaded());
	/* The provider's own failure comes back as it is; then unload. */
	ret = dat_ia_open("failopen", 8, &evd, &ia);
	ck_assert_uint_eq(ret, DAT_ERROR(DAT_INSUFFICIENT_RESOURCES,
	                                 DAT_RESOURCE_DEVICE));
	ck_assert_int_eq(fakeprov_counters.fini, 2);
	ck_assert(!fake_loaded());
	/* A consumer asking for a newer minor than the entry offers. */
	ret = dat_ia_openv("fake", 8, &evd, &ia, 2, 5, DAT_TRUE);
	ck_assert_uint_eq(DAT_GET_TYPE(ret), DAT_PROVIDER_NOT_FOUND);
	ret = dat_ia_openv("fake", 8, &evd, &ia, 1, 2, DAT_TRUE);
	ck_assert_uint_eq(DAT_GET_TYPE(ret), DAT_PROVIDER_NOT_FOUND);
	/* ... while an entry offering 2.9 serves a 2.0 consumer. */
	ia = open_ok("newer");
	ck_assert_uint_eq(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG), DAT_SUCCESS);
}
END_TEST

START_TEST(reg_graceful_close_refused)
{
	DAT_IA_HANDLE ia = open_ok("fake");
	DAT_PZ_HANDLE pz;

	ck_assert_uint_eq(dat_pz_create(ia, &pz), DAT_SUCCESS);
	ck_assert_uint_eq(
	        DAT_GET_TYPE(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG)),
	        DAT_INVALID_STATE);
	/* Still open and usable. */
	ck_assert(fake_loaded());
	ck_assert_uint_eq(dat_pz_free(pz), DAT_SUCCESS);
	ck_assert_uint_eq(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG),
	                  DAT_SUCCESS);
	ck_assert(!fake_loaded());
}
END_TEST

START_TEST(reg_contexts_and_types)
{
	DAT_IA_HANDLE ia = open_ok("fake");
	DAT_CONTEXT in, out;
	DAT_HANDLE_TYPE type;
	DAT_PZ_HANDLE pz;

	in.as_64 = 0x1122334455667788ULL;
	ck_assert_uint_eq(dat_set_consumer_context(ia, in), DAT_SUCCESS);
	out.as_64 = 0;
	ck_assert_uint_eq(dat_get_consumer_context(ia, &out), DAT_SUCCESS);
	ck_assert_uint_eq(out.as_64, in.as_64);
	ck_assert_uint_eq(dat_get_handle_type(ia, &type), DAT_SUCCESS);
	ck_assert_int_eq(type, DAT_HANDLE_TYPE_IA);

	ck_assert_uint_eq(dat_pz_create(ia, &pz), DAT_SUCCESS);
	in.as_ptr = &type;
	ck_assert_uint_eq(dat_set_consumer_context(pz, in), DAT_SUCCESS);
	ck_assert_uint_eq(dat_get_consumer_context(pz, &out), DAT_SUCCESS);
	ck_assert_ptr_eq(out.as_ptr, &type);
	ck_assert_uint_eq(dat_get_handle_type(pz, &type), DAT_SUCCESS);
	ck_assert_int_eq(type, DAT_HANDLE_TYPE_PZ);

	/* A call the provider left NULL in its table. */
	ck_assert_uint_eq(DAT_GET_TYPE(dat_evd_free((DAT_EVD_HANDLE)pz)),
	                  DAT_NOT_IMPLEMENTED);
	ck_assert_uint_eq(dat_pz_free(pz), DAT_SUCCESS);
	ck_assert_uint_eq(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG), DAT_SUCCESS);
}
END_TEST

START_TEST(reg_list_providers)
{
	DAT_PROVIDER_INFO infos[32], *ptrs[32];
	DAT_COUNT n = -1, i;
	int seen_fake = 0, seen_tcp = 0, seen_broken = 0;

	for (i = 0; i < 32; i++)
		ptrs[i] = &infos[i];
	/* Count only: the count, and (per spec, as OFED) an error. */
	ck_assert_uint_eq(dat_registry_list_providers(0, &n, NULL),
	                  DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG1));
	/* 7 valid file entries + 8 built-ins. */
	ck_assert_int_eq(n, 15);
	ck_assert_uint_eq(dat_registry_list_providers(32, &n, ptrs),
	                  DAT_SUCCESS);
	ck_assert_int_eq(n, 15);
	for (i = 0; i < n; i++) {
		seen_fake += strcmp(infos[i].ia_name, "fake") == 0;
		seen_tcp += strcmp(infos[i].ia_name, "ofi-tcp") == 0;
		seen_broken += strcmp(infos[i].ia_name, "broken") == 0;
	}
	ck_assert_int_eq(seen_fake, 1);
	ck_assert_int_eq(seen_tcp, 1);
	ck_assert_int_eq(seen_broken, 0);
	ck_assert_str_eq(infos[0].ia_name, "fake");
	ck_assert_int_eq(infos[0].is_thread_safe, DAT_TRUE);
	ck_assert_int_eq(infos[1].is_thread_safe, DAT_FALSE);
	ck_assert_uint_eq(infos[0].dapl_version_major, 2);

	ck_assert_uint_eq(dat_registry_list_providers(3, &n, ptrs),
	                  DAT_SUCCESS);
	ck_assert_int_eq(n, 3);
	ck_assert_uint_eq(
	        DAT_GET_TYPE(dat_registry_list_providers(3, NULL, ptrs)),
	        DAT_INVALID_PARAMETER);
	ck_assert_uint_eq(
	        DAT_GET_TYPE(dat_registry_list_providers(3, &n, NULL)),
	        DAT_INVALID_PARAMETER);
	ck_assert_uint_eq(
	        DAT_GET_TYPE(dat_registry_list_providers(-1, &n, ptrs)),
	        DAT_INVALID_PARAMETER);
}
END_TEST

static const DAT_PROVIDER dummy_table = {.device_name = "dummy"};

/* A provider linked into the program, registered without dat.conf. */
static int linked_ia;
static DAT_RETURN linked_open(const DAT_NAME_PTR name, DAT_COUNT qlen,
                              DAT_EVD_HANDLE *evd, DAT_IA_HANDLE *ia)
{
	(void)name;
	(void)qlen;
	(void)evd;
	*ia = (DAT_IA_HANDLE)&linked_ia;
	return DAT_SUCCESS;
}

static DAT_RETURN linked_close(DAT_IA_HANDLE ia, DAT_CLOSE_FLAGS flags)
{
	(void)flags;
	return ia == (DAT_IA_HANDLE)&linked_ia
	               ? DAT_SUCCESS
	               : DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
}

static const DAT_PROVIDER linked_table = {
        .device_name = "linked",
        .ia_open_func = linked_open,
        .ia_close_func = linked_close,
};

START_TEST(reg_linked_in_provider)
{
	DAT_PROVIDER_INFO info;
	DAT_IA_HANDLE ia, raw;

	memset(&info, 0, sizeof(info));
	strcpy(info.ia_name, "linked-in");
	info.dapl_version_major = 2;
	ck_assert_uint_eq(dat_registry_add_provider(&linked_table, &info),
	                  DAT_SUCCESS);
	ia = open_ok("linked-in");
	ck_assert_uint_eq(dats_get_ia_handle(ia, &raw), DAT_SUCCESS);
	ck_assert_ptr_eq(raw, &linked_ia);
	/* Not removable while an IA of it is open. */
	ck_assert_uint_eq(DAT_GET_TYPE(dat_registry_remove_provider(
	                          &linked_table, &info)),
	                  DAT_PROVIDER_IN_USE);
	ck_assert_uint_eq(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG), DAT_SUCCESS);
	ck_assert_uint_eq(dat_registry_remove_provider(&linked_table, &info),
	                  DAT_SUCCESS);
	ck_assert(!fake_loaded());
}
END_TEST

START_TEST(reg_add_remove_direct)
{
	DAT_PROVIDER_INFO info;

	memset(&info, 0, sizeof(info));
	strcpy(info.ia_name, "linked-in");
	ck_assert_uint_eq(dat_registry_add_provider(&dummy_table, &info),
	                  DAT_SUCCESS);
	ck_assert_uint_eq(
	        DAT_GET_TYPE(dat_registry_add_provider(&dummy_table, &info)),
	        DAT_PROVIDER_ALREADY_REGISTERED);
	ck_assert_uint_eq(dat_registry_remove_provider(&dummy_table, &info),
	                  DAT_SUCCESS);
	ck_assert_uint_eq(
	        DAT_GET_TYPE(dat_registry_remove_provider(&dummy_table, &info)),
	        DAT_PROVIDER_NOT_FOUND);
	ck_assert_uint_eq(DAT_GET_TYPE(dat_registry_add_provider(NULL, &info)),
	                  DAT_INVALID_PARAMETER);
	ck_assert_uint_eq(
	        DAT_GET_TYPE(dat_registry_add_provider(&dummy_table, NULL)),
	        DAT_INVALID_PARAMETER);
	memset(info.ia_name, 'x', sizeof(info.ia_name)); /* no terminator */
	ck_assert_uint_eq(
	        DAT_GET_TYPE(dat_registry_add_provider(&dummy_table, &info)),
	        DAT_INVALID_PARAMETER);
}
END_TEST

START_TEST(reg_strerror_all_codes)
{
	static const DAT_RETURN majors[] = {
	        DAT_SUCCESS,
	        DAT_ABORT,
	        DAT_CONN_QUAL_IN_USE,
	        DAT_INSUFFICIENT_RESOURCES,
	        DAT_INTERNAL_ERROR,
	        DAT_INVALID_HANDLE,
	        DAT_INVALID_PARAMETER,
	        DAT_INVALID_STATE,
	        DAT_LENGTH_ERROR,
	        DAT_MODEL_NOT_SUPPORTED,
	        DAT_PROVIDER_NOT_FOUND,
	        DAT_PRIVILEGES_VIOLATION,
	        DAT_PROTECTION_VIOLATION,
	        DAT_QUEUE_EMPTY,
	        DAT_QUEUE_FULL,
	        DAT_TIMEOUT_EXPIRED,
	        DAT_PROVIDER_ALREADY_REGISTERED,
	        DAT_PROVIDER_IN_USE,
	        DAT_INVALID_ADDRESS,
	        DAT_INTERRUPTED_CALL,
	        DAT_CONN_QUAL_UNAVAILABLE,
	        DAT_RESERVED_LMR,
	        DAT_PORT_IN_USE,
	        DAT_COMM_NOT_SUPPORTED,
	        DAT_NOT_IMPLEMENTED,
	};
	const char *maj, *min;
	size_t i;
	unsigned s;

	for (i = 0; i < sizeof(majors) / sizeof(majors[0]); i++) {
		maj = min = NULL;
		ck_assert_uint_eq(dat_strerror(majors[i], &maj, &min),
		                  DAT_SUCCESS);
		ck_assert_ptr_nonnull(maj);
		ck_assert_ptr_nonnull(min);
		ck_assert_msg(strncmp(maj, "DAT_", 4) == 0, "%s", maj);
	}
	ck_assert_uint_eq(dat_strerror(DAT_INVALID_HANDLE, &maj, &min),
	                  DAT_SUCCESS);
	ck_assert_str_eq(maj, "DAT_INVALID_HANDLE");
	/* Every minor code, from the first to the last of the enum. */
	for (s = DAT_SUB_INTERRUPTED; s <= DAT_THREAD_SAFETY_NOT_FOUND; s++) {
		ck_assert_uint_eq(dat_strerror(DAT_ERROR(DAT_INTERNAL_ERROR, s),
		                               &maj, &min),
		                  DAT_SUCCESS);
		ck_assert_msg(strncmp(min, "DAT_", 4) == 0, "%u: %s", s, min);
	}
	ck_assert_uint_eq(dat_strerror(DAT_ERROR(DAT_INVALID_HANDLE,
	                                         DAT_INVALID_HANDLE_EP),
	                               &maj, &min),
	                  DAT_SUCCESS);
	ck_assert_str_eq(min, "DAT_INVALID_HANDLE_EP");
	ck_assert_uint_eq(dat_strerror(DAT_ERROR(DAT_PROVIDER_NOT_FOUND,
	                                         DAT_NAME_NOT_REGISTERED),
	                               &maj, NULL),
	                  DAT_SUCCESS);
	ck_assert_str_eq(maj, "DAT_PROVIDER_NOT_FOUND");
	/* Unknown codes are an invalid parameter, not a crash. */
	ck_assert_uint_eq(DAT_GET_TYPE(dat_strerror(0x00ff0000, &maj, &min)),
	                  DAT_INVALID_PARAMETER);
	ck_assert_uint_eq(DAT_GET_TYPE(dat_strerror(0x0000ffff, &maj, &min)),
	                  DAT_INVALID_PARAMETER);
	ck_assert_uint_eq(DAT_GET_TYPE(dat_strerror(DAT_SUCCESS, NULL, &min)),
	                  DAT_INVALID_PARAMETER);
}
END_TEST

START_TEST(reg_no_conf_builtins_only)
{
	DAT_PROVIDER_INFO infos[16], *ptrs[16];
	DAT_COUNT n, i;

	for (i = 0; i < 16; i++)
		ptrs[i] = &infos[i];
	setenv("DAT_OVERRIDE", "/nonexistent/dat.conf", 1);
	ck_assert_uint_eq(dat_registry_list_providers(16, &n, ptrs),
	                  DAT_SUCCESS);
	ck_assert_int_eq(n, 8);
	ck_assert_str_eq(infos[0].ia_name, "ofi");
	ck_assert_str_eq(infos[6].ia_name, "ofi-rxm");
	ck_assert_str_eq(infos[7].ia_name, "ofi-rxd");
}
END_TEST

Suite *check_registry_suite(void)
{
	Suite *s = suite_create("registry");
	TCase *tc = tcase_create("fake provider");

	tcase_add_checked_fixture(tc, registry_setup, registry_teardown);
	tcase_add_test(tc, reg_open_query_close);
	tcase_add_test(tc, reg_repeated_load_unload);
	tcase_add_test(tc, reg_extension_open_close);
	tcase_add_test(tc, reg_refcount_across_names);
	tcase_add_test(tc, reg_handle_translation);
	tcase_add_test(tc, reg_stale_handles_not_reused);
	tcase_add_test(tc, reg_bad_handles);
	tcase_add_test(tc, reg_bad_parameters);
	tcase_add_test(tc, reg_not_found_and_failures);
	tcase_add_test(tc, reg_graceful_close_refused);
	tcase_add_test(tc, reg_contexts_and_types);
	tcase_add_test(tc, reg_list_providers);
	tcase_add_test(tc, reg_add_remove_direct);
	tcase_add_test(tc, reg_linked_in_provider);
	tcase_add_test(tc, reg_strerror_all_codes);
	tcase_add_test(tc, reg_no_conf_builtins_only);
	suite_add_tcase(s, tc);
	return s;
}
