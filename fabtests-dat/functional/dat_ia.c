/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * dat_ia: the registry and the Interface Adapter.  IA names and the
 * built-in entries, dat_ia_open/query/close and their errors, the IA and
 * Provider attributes a DAT consumer relies on, handle types and consumer
 * contexts, graceful and abrupt close, reopening after the last close.
 * Single process.
 */
#include "config.h"

#include <dirent.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "shared.h"

static const char *const builtins[] = {"ofi", "ofi-tcp", "ofi-sockets"};

static DAT_PROVIDER_INFO *list_registry(DAT_COUNT *count)
{
	DAT_PROVIDER_INFO *info, **ptrs;
	DAT_COUNT n = -1, got = -1, i;
	DAT_RETURN ret;

	ret = dat_registry_list_providers(0, &n, NULL);
	FT_CHECK(DAT_GET_TYPE(ret) == DAT_INVALID_PARAMETER,
	         "dat_registry_list_providers(0) = %s, expected "
	         "DAT_INVALID_PARAMETER with the count",
	         ft_ret_str(ret));
	FT_REQUIRE(n > 0, "the registry counts %d entries", (int)n);
	FT_DAT_EXPECT(dat_registry_list_providers(-1, &got, NULL),
	              DAT_INVALID_PARAMETER);
	FT_DAT_EXPECT(dat_registry_list_providers(1, NULL, NULL),
	              DAT_INVALID_PARAMETER);

	info = calloc((size_t)n, sizeof(*info));
	ptrs = calloc((size_t)n, sizeof(*ptrs));
	FT_REQUIRE(info && ptrs, "memory for %d entries", (int)n);
	for (i = 0; i < n; i++)
		ptrs[i] = &info[i];
	FT_DAT_OK(dat_registry_list_providers(n, &got, ptrs));
	FT_CHECK(got == n, "the list returns %d entries, as counted (%d)",
	         (int)got, (int)n);

	/* A shorter list returns the first entries. */
	if (n > 1) {
		DAT_PROVIDER_INFO one;
		DAT_PROVIDER_INFO *p1 = &one;
		DAT_COUNT k = 0;

		FT_DAT_CHECK(dat_registry_list_providers(1, &k, &p1));
		FT_CHECK(k == 1 && strcmp(one.ia_name, info[0].ia_name) == 0,
		         "max_to_return 1 gives the first entry (%s)",
		         one.ia_name);
	}
	free(ptrs);
	*count = got;
	return info;
}

static void check_registry(const char *ia_name, DAT_BOOLEAN *thread_safe)
{
	DAT_PROVIDER_INFO *info;
	DAT_COUNT n = 0, i, j;
	size_t b;
	bool dup = false, found_ia = false;

	info = list_registry(&n);
	for (i = 0; i < n; i++) {
		ft_log("registry entry %d: %s u%u.%u %s", (int)i,
		       info[i].ia_name, info[i].dapl_version_major,
		       info[i].dapl_version_minor,
		       info[i].is_thread_safe ? "threadsafe" : "nonthreadsafe");
		for (j = 0; j < i; j++)
			if (strcmp(info[i].ia_name, info[j].ia_name) == 0)
				dup = true;
		if (strcmp(info[i].ia_name, ia_name) == 0) {
			found_ia = true;
			*thread_safe = info[i].is_thread_safe;
			FT_CHECK(info[i].dapl_version_major == 2,
			         "entry %s is a DAT 2.x entry (u%u.%u)",
			         ia_name, info[i].dapl_version_major,
			         info[i].dapl_version_minor);
		}
	}
	FT_CHECK(!dup, "no IA name is listed twice");
	FT_CHECK(found_ia, "the IA under test, %s, is listed", ia_name);
	for (b = 0; b < sizeof(builtins) / sizeof(builtins[0]); b++) {
		bool found = false;

		for (i = 0; i < n; i++)
			if (strcmp(info[i].ia_name, builtins[b]) == 0)
				found = true;
		FT_CHECK(found, "built-in IA name %s is listed", builtins[b]);
	}
	free(info);
}

static void check_open_errors(void)
{
	DAT_IA_HANDLE ia = DAT_HANDLE_NULL;
	DAT_EVD_HANDLE evd = DAT_HANDLE_NULL;
	char name[] = "no-such-ia-name-fabtests";
	char longname[DAT_NAME_MAX_LENGTH + 16];

	FT_DAT_EXPECT(dat_ia_open(name, 8, &evd, &ia),
	              DAT_CLASS_ERROR | DAT_PROVIDER_NOT_FOUND |
	                      DAT_NAME_NOT_REGISTERED);
	evd = DAT_HANDLE_NULL;
	FT_DAT_EXPECT(dat_ia_open(NULL, 8, &evd, &ia), DAT_INVALID_PARAMETER);
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	evd = DAT_HANDLE_NULL;
	FT_DAT_EXPECT(dat_ia_open(longname, 8, &evd, &ia),
	              DAT_INVALID_PARAMETER);
	evd = DAT_HANDLE_NULL;
	FT_DAT_EXPECT(dat_ia_open((DAT_NAME_PTR)ft_opts.ia_name, -1, &evd, &ia),
	              DAT_INVALID_PARAMETER);
	FT_DAT_EXPECT(dat_ia_open((DAT_NAME_PTR)ft_opts.ia_name, 8, NULL, &ia),
	              DAT_INVALID_PARAMETER);
}

static void check_attrs(struct ft_ia *ia, DAT_BOOLEAN reg_thread_safe)
{
	const DAT_IA_ATTR *a = &ia->attr;
	const DAT_PROVIDER_ATTR *p = &ia->pattr;
	const char *rr;
	DAT_COUNT i;

	ft_log("adapter '%s', vendor '%s', provider '%s' %u.%u",
	       a->adapter_name, a->vendor_name, p->provider_name,
	       p->provider_version_major, p->provider_version_minor);
	FT_CHECK(a->adapter_name[0] != '\0', "adapter_name is set (%s)",
	         a->adapter_name);
	FT_CHECK(p->provider_name[0] != '\0', "provider_name is set (%s)",
	         p->provider_name);
	FT_CHECK(a->ia_address_ptr != NULL, "ia_address_ptr is set");
	if (a->ia_address_ptr != NULL)
		FT_CHECK(a->ia_address_ptr->sa_family == AF_INET,
		         "ia_address_ptr is AF_INET (%s)",
		         ft_addr_str(a->ia_address_ptr));
	FT_CHECK(p->dapl_version_major == 2 && p->dapl_version_minor == 0,
	         "DAT API version 2.0 (%u.%u)", p->dapl_version_major,
	         p->dapl_version_minor);
	FT_CHECK(p->is_thread_safe == reg_thread_safe,
	         "is_thread_safe (%d) matches the registry entry (%d)",
	         p->is_thread_safe, reg_thread_safe);
	FT_CHECK(p->max_private_data_size >= 48,
	         "max_private_data_size %d >= 48",
	         (int)p->max_private_data_size);
	FT_CHECK(a->max_eps >= 1, "max_eps %d >= 1", (int)a->max_eps);
	FT_CHECK(a->max_dto_per_ep >= 1, "max_dto_per_ep %d >= 1",
	         (int)a->max_dto_per_ep);
	FT_CHECK(a->max_evds >= 1, "max_evds %d >= 1", (int)a->max_evds);
	FT_CHECK(a->max_evd_qlen >= 1, "max_evd_qlen %d >= 1",
	         (int)a->max_evd_qlen);
	FT_CHECK(a->max_iov_segments_per_dto >= 1,
	         "max_iov_segments_per_dto %d >= 1",
	         (int)a->max_iov_segments_per_dto);
	FT_CHECK(a->max_lmrs >= 1, "max_lmrs %d >= 1", (int)a->max_lmrs);
	FT_CHECK(a->max_lmr_block_size > 0, "max_lmr_block_size %u > 0",
	         (unsigned)a->max_lmr_block_size);
	FT_CHECK(a->max_pzs >= 1, "max_pzs %d >= 1", (int)a->max_pzs);
	FT_CHECK(a->max_message_size > 0, "max_message_size %u > 0",
	         (unsigned)a->max_message_size);
	FT_CHECK(a->max_rdma_size > 0, "max_rdma_size %u > 0",
	         (unsigned)a->max_rdma_size);
	FT_CHECK(a->max_rmrs >= 1, "max_rmrs %d >= 1", (int)a->max_rmrs);
	FT_CHECK(a->max_rdma_read_per_ep_in >= 0 &&
	                 a->max_rdma_read_per_ep_out >= 0,
	         "RDMA read limits per EP in %d out %d are not negative",
	         (int)a->max_rdma_read_per_ep_in,
	         (int)a->max_rdma_read_per_ep_out);
	FT_CHECK(p->completion_flags_supported & DAT_COMPLETION_SUPPRESS_FLAG,
	         "completion_flags_supported (%#x) includes SUPPRESS",
	         (unsigned)p->completion_flags_supported);
	FT_CHECK(p->lmr_mem_types_supported & DAT_MEM_TYPE_LMR,
	         "lmr_mem_types_supported (%#x) includes DAT_MEM_TYPE_LMR",
	         (unsigned)p->lmr_mem_types_supported);
	FT_CHECK(p->num_provider_specific_attr >= 0 &&
	                 (p->num_provider_specific_attr == 0 ||
	                  p->provider_specific_attr != NULL),
	         "%d provider-specific attributes, list present",
	         (int)p->num_provider_specific_attr);
	for (i = 0; i < p->num_provider_specific_attr; i++)
		ft_log("provider attribute %s = %s",
		       p->provider_specific_attr[i].name,
		       p->provider_specific_attr[i].value);
	rr = ft_provider_attr(ia, "DAT_IB_RDMA_READ");
	FT_CHECK(rr != NULL,
	         "named provider attribute DAT_IB_RDMA_READ is "
	         "present (%s)",
	         rr ? rr : "absent");
	if (rr != NULL)
		FT_CHECK(strcmp(rr, "TRUE") == 0 || strcmp(rr, "FALSE") == 0,
		         "DAT_IB_RDMA_READ is TRUE or FALSE (%s)", rr);
	FT_CHECK(a->num_transport_attr == 0 || a->transport_attr != NULL,
	         "%d transport attributes, list present",
	         (int)a->num_transport_attr);
}

static void check_query_and_handles(struct ft_ia *ia)
{
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
	DAT_HANDLE_TYPE type;
	DAT_CONTEXT ctx, got;
	DAT_IA_ATTR attr;
	DAT_PZ_PARAM pzp;
	DAT_EVD_PARAM evp;

	FT_DAT_CHECK(dat_ia_query(ia->ia, &async, 0, NULL, 0, NULL));
	FT_CHECK(async == ia->async_evd,
	         "dat_ia_query returns the async EVD dat_ia_open created");
	FT_DAT_EXPECT(
	        dat_ia_query(ia->ia, NULL, DAT_IA_FIELD_ALL, NULL, 0, NULL),
	        DAT_INVALID_PARAMETER);
	FT_DAT_EXPECT(dat_ia_query(DAT_HANDLE_NULL, NULL, DAT_IA_FIELD_ALL,
	                           &attr, 0, NULL),
	              DAT_INVALID_HANDLE);

	FT_DAT_CHECK(dat_get_handle_type(ia->ia, &type));
	FT_CHECK(type == DAT_HANDLE_TYPE_IA, "IA handle type is IA (%d)",
	         (int)type);
	FT_DAT_CHECK(dat_get_handle_type(ia->async_evd, &type));
	FT_CHECK(type == DAT_HANDLE_TYPE_EVD,
	         "async EVD handle type is EVD "
	         "(%d)",
	         (int)type);
	FT_DAT_CHECK(dat_get_handle_type(ia->pz, &type));
	FT_CHECK(type == DAT_HANDLE_TYPE_PZ, "PZ handle type is PZ (%d)",
	         (int)type);
	FT_DAT_EXPECT(dat_get_handle_type(DAT_HANDLE_NULL, &type),
	              DAT_INVALID_HANDLE);

	ctx.as_64 = 0x1234567890abcdefull;
	FT_DAT_CHECK(dat_set_consumer_context(ia->ia, ctx));
	got.as_64 = 0;
	FT_DAT_CHECK(dat_get_consumer_context(ia->ia, &got));
	FT_CHECK(got.as_64 == ctx.as_64, "IA consumer context round trip");
	ctx.as_64 = 0x42;
	FT_DAT_CHECK(dat_set_consumer_context(ia->pz, ctx));
	got.as_64 = 0;
	FT_DAT_CHECK(dat_get_consumer_context(ia->pz, &got));
	FT_CHECK(got.as_64 == 0x42, "PZ consumer context round trip");

	FT_DAT_CHECK(dat_pz_query(ia->pz, DAT_PZ_FIELD_ALL, &pzp));
	FT_CHECK(pzp.ia_handle == ia->ia,
	         "dat_pz_query gives the consumer's IA handle");
	FT_DAT_CHECK(dat_evd_query(ia->async_evd, DAT_EVD_FIELD_ALL, &evp));
	FT_CHECK(evp.ia_handle == ia->ia,
	         "dat_evd_query of the async EVD gives the IA handle");
	FT_CHECK(evp.evd_flags & DAT_EVD_ASYNC_FLAG,
	         "the async EVD has DAT_EVD_ASYNC_FLAG (%#x)",
	         (unsigned)evp.evd_flags);
	FT_CHECK(evp.evd_qlen >= 64, "the async EVD holds >= 64 events (%d)",
	         (int)evp.evd_qlen);
	FT_DAT_EXPECT(dat_evd_free(ia->async_evd), DAT_INVALID_STATE);

	/* Handles of the wrong kind. */
	FT_DAT_EXPECT(dat_pz_query(ia->async_evd, DAT_PZ_FIELD_ALL, &pzp),
	              DAT_INVALID_HANDLE);
	FT_DAT_EXPECT(dat_evd_query(ia->pz, DAT_EVD_FIELD_ALL, &evp),
	              DAT_INVALID_HANDLE);
	FT_DAT_EXPECT(dat_evd_query(ia->ia, DAT_EVD_FIELD_ALL, &evp),
	              DAT_INVALID_HANDLE);
	FT_DAT_EXPECT(dat_pz_free(DAT_HANDLE_NULL), DAT_INVALID_HANDLE);
}

static void check_default_ep(struct ft_ia *ia)
{
	struct ft_ep ep;
	DAT_EP_PARAM param;
	DAT_HANDLE_TYPE type;

	FT_DAT_OK(ft_ep_create(ia, ia->pz, NULL, 16, &ep));
	FT_DAT_CHECK(dat_get_handle_type(ep.ep, &type));
	FT_CHECK(type == DAT_HANDLE_TYPE_EP, "EP handle type is EP");
	memset(&param, 0, sizeof(param));
	FT_DAT_CHECK(dat_ep_query(ep.ep, DAT_EP_FIELD_ALL, &param));
	FT_CHECK(param.ia_handle == ia->ia, "dat_ep_query: ia_handle");
	FT_CHECK(param.ep_state == DAT_EP_STATE_UNCONNECTED,
	         "dat_ep_query: a new EP is UNCONNECTED (%s)",
	         ft_ep_state_str(param.ep_state));
	FT_CHECK(param.pz_handle == ia->pz, "dat_ep_query: pz_handle");
	FT_CHECK(param.recv_evd_handle == ep.recv_evd &&
	                 param.request_evd_handle == ep.req_evd &&
	                 param.connect_evd_handle == ep.conn_evd,
	         "dat_ep_query: the three EVD handles");
	FT_CHECK(param.local_ia_address_ptr != NULL &&
	                 param.local_ia_address_ptr->sa_family == AF_INET,
	         "dat_ep_query: local address is AF_INET");
	FT_CHECK(param.ep_attr.service_type == DAT_SERVICE_TYPE_RC,
	         "default attributes: service type RC");
	FT_CHECK(param.ep_attr.max_message_size > 0 &&
	                 param.ep_attr.max_recv_dtos > 0 &&
	                 param.ep_attr.max_request_dtos > 0 &&
	                 param.ep_attr.max_recv_iov > 0 &&
	                 param.ep_attr.max_request_iov > 0,
	         "default attributes usable: msg %u recv %d req %d iov %d/%d",
	         (unsigned)param.ep_attr.max_message_size,
	         (int)param.ep_attr.max_recv_dtos,
	         (int)param.ep_attr.max_request_dtos,
	         (int)param.ep_attr.max_recv_iov,
	         (int)param.ep_attr.max_request_iov);
	FT_CHECK(param.ep_attr.max_message_size <= ia->attr.max_message_size,
	         "default max_message_size within the IA's");
	FT_CHECK(param.srq_handle == DAT_HANDLE_NULL, "no SRQ");
	FT_DAT_EXPECT(dat_ep_query(ep.ep, DAT_EP_FIELD_ALL, NULL),
	              DAT_INVALID_PARAMETER);
	FT_DAT_EXPECT(dat_ep_query(ep.req_evd, DAT_EP_FIELD_ALL, &param),
	              DAT_INVALID_HANDLE);
	/* An EVD in use by an EP cannot be freed. */
	FT_DAT_EXPECT(dat_evd_free(ep.conn_evd), DAT_INVALID_STATE);
	ft_ep_free(&ep);
}

static void check_srq(struct ft_ia *ia)
{
	DAT_SRQ_ATTR sa = {.max_recv_dtos = 16,
	                   .max_recv_iov = 1,
	                   .low_watermark = DAT_SRQ_LW_DEFAULT};
	DAT_SRQ_HANDLE srq = DAT_HANDLE_NULL;
	DAT_RETURN ret;

	ret = dat_srq_create(ia->ia, ia->pz, &sa, &srq);
	if (!ia->pattr.srq_supported) {
		FT_CHECK(DAT_GET_TYPE(ret) == DAT_MODEL_NOT_SUPPORTED,
		         "srq_supported is FALSE and dat_srq_create = %s "
		         "(expected DAT_MODEL_NOT_SUPPORTED)",
		         ft_ret_str(ret));
	} else {
		FT_CHECK(ret == DAT_SUCCESS,
		         "srq_supported is TRUE and dat_srq_create = %s",
		         ft_ret_str(ret));
		if (ret == DAT_SUCCESS)
			FT_DAT_CHECK(dat_srq_free(srq));
	}
}

/* Threads of this process: entries of /proc/self/task; -1 unknown. */
static int count_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/*
 * dapl-ofi on tcp in its default progress mode (auto): no thread of its
 * own until memory is opened to peers (see dapl-ofi(7)); one from then
 * on. before: threads counted before the IA was opened.
 */
/* The process has want threads, after what. */
static void expect_threads(int want, const char *what)
{
	int n = count_threads();

	FT_CHECK(n == want,
	         "tcp, auto progress: %d threads after %s, expected %d", n,
	         what, want);
}

static void check_progress_thread(struct ft_ia *ia, int before)
{
	const char *prov = ft_provider_attr(ia, "DAT_OFI_PROVIDER");
	const char *mode = getenv("DAPL_OFI_PROGRESS");
	struct ft_mr local, remote;

	if (prov == NULL || strcmp(prov, "tcp") != 0 || before < 0 ||
	    (mode != NULL && *mode != '\0' && strcmp(mode, "auto") != 0))
		return; /* other fabrics and modes start it with the IA */
	expect_threads(before, "dat_ia_open (no progress thread until it "
	                       "is needed)");
	if (FT_DAT_CHECK(ft_mr_create(ia, ia->pz, 4096,
	                              DAT_MEM_PRIV_LOCAL_READ_FLAG |
	                                      DAT_MEM_PRIV_LOCAL_WRITE_FLAG,
	                              &local)) != DAT_SUCCESS)
		return;
	expect_threads(before, "a local-only LMR");
	if (FT_DAT_CHECK(ft_mr_create(ia, ia->pz, 4096,
	                              DAT_MEM_PRIV_REMOTE_WRITE_FLAG |
	                                      DAT_MEM_PRIV_LOCAL_WRITE_FLAG,
	                              &remote)) == DAT_SUCCESS) {
		expect_threads(
		        before + 1,
		        "an LMR open to RDMA Write (the progress thread)");
		ft_mr_free(&remote);
	}
	ft_mr_free(&local);
}

/*
 * An IA opened with the consumer's async EVD (one of another IA's) uses
 * it; a handle that is no async EVD is refused before anything opens.
 */
static void check_given_async_evd(struct ft_ia *a)
{
	DAT_EVD_HANDLE shared = DAT_HANDLE_NULL, dto = DAT_HANDLE_NULL;
	DAT_EVD_HANDLE given, got = DAT_HANDLE_NULL;
	DAT_IA_HANDLE c = DAT_HANDLE_NULL;
	DAT_IA_ATTR attr;

	FT_DAT_OK(ft_evd_create(a, 8, DAT_EVD_ASYNC_FLAG, &shared));
	FT_DAT_OK(ft_evd_create(a, 8, DAT_EVD_DTO_FLAG, &dto));
	given = dto;
	FT_DAT_EXPECT(dat_ia_open((DAT_NAME_PTR)ft_opts.ia_name, 8, &given, &c),
	              DAT_INVALID_HANDLE);
	FT_CHECK(c == DAT_HANDLE_NULL && given == dto,
	         "a refused open leaves its outputs alone");
	given = shared;
	if (FT_DAT_CHECK(dat_ia_open((DAT_NAME_PTR)ft_opts.ia_name, 8, &given,
	                             &c)) == DAT_SUCCESS) {
		FT_CHECK(given == shared, "the given async EVD handle is kept");
		FT_DAT_CHECK(dat_ia_query(c, &got, DAT_IA_FIELD_IA_ADDRESS_PTR,
		                          &attr, 0, NULL));
		FT_CHECK(got == shared,
		         "dat_ia_query gives the async EVD the open was given");
		FT_DAT_EXPECT(dat_evd_free(shared), DAT_INVALID_STATE);
		FT_DAT_CHECK(dat_ia_close(c, DAT_CLOSE_GRACEFUL_FLAG));
	}
	FT_DAT_CHECK(dat_evd_free(dto));
	FT_DAT_CHECK(dat_evd_free(shared));
}

static void check_two_opens(void)
{
	struct ft_ia a, b;

	ft_ia_open(ft_opts.ia_name, &a);
	ft_ia_open(ft_opts.ia_name, &b);
	FT_CHECK(a.ia != b.ia, "two opens of %s give two IA handles",
	         ft_opts.ia_name);
	FT_CHECK(a.async_evd != b.async_evd, "each open has its own async EVD");
	FT_CHECK(b.attr.ia_address_ptr != NULL &&
	                 b.attr.ia_address_ptr->sa_family == AF_INET,
	         "second IA address is AF_INET");
	ft_ia_close(&b);
	check_given_async_evd(&a);
	/* The first IA is untouched by the second's close. */
	FT_DAT_CHECK(dat_ia_query(a.ia, NULL, DAT_IA_FIELD_IA_ADDRESS_PTR,
	                          &a.attr, 0, NULL));
	ft_ia_close(&a);
}

static void check_close(void)
{
	struct ft_ia ia;
	DAT_IA_HANDLE stale;
	DAT_EVD_HANDLE evd;
	DAT_CNO_HANDLE cno;
	struct ft_mr mr;
	struct ft_ep ep;
	struct ft_listener l;
	DAT_RMR_HANDLE rmr;
	DAT_IA_ATTR attr;

	/* Graceful close refuses while a PZ is left; the IA stays usable. */
	ft_ia_open(ft_opts.ia_name, &ia);
	FT_DAT_EXPECT(dat_ia_close(ia.ia, DAT_CLOSE_GRACEFUL_FLAG),
	              DAT_INVALID_STATE);
	FT_DAT_CHECK(dat_ia_query(ia.ia, NULL, DAT_IA_FIELD_IA_ADDRESS_PTR,
	                          &attr, 0, NULL));
	FT_DAT_EXPECT(dat_ia_close(ia.ia, (DAT_CLOSE_FLAGS)7),
	              DAT_INVALID_PARAMETER);
	FT_DAT_CHECK(dat_pz_free(ia.pz));
	ia.pz = DAT_HANDLE_NULL;
	FT_DAT_CHECK(dat_ia_close(ia.ia, DAT_CLOSE_GRACEFUL_FLAG));
	stale = ia.ia;
	FT_DAT_EXPECT(
	        dat_ia_query(stale, NULL, DAT_IA_FIELD_ALL, &attr, 0, NULL),
	        DAT_INVALID_HANDLE);
	FT_DAT_EXPECT(dat_ia_close(stale, DAT_CLOSE_ABRUPT_FLAG),
	              DAT_INVALID_HANDLE);
	FT_DAT_EXPECT(dat_pz_create(stale, &ia.pz), DAT_INVALID_HANDLE);

	/* Abrupt close frees everything left: EVD, CNO, LMR, RMR, EP, PSP. */
	ft_ia_open(ft_opts.ia_name, &ia);
	FT_DAT_CHECK(ft_evd_create(&ia, 8, DAT_EVD_SOFTWARE_FLAG, &evd));
	FT_DAT_CHECK(dat_cno_create(ia.ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	FT_DAT_CHECK(
	        ft_mr_create(&ia, ia.pz, 4096, DAT_MEM_PRIV_ALL_FLAG, &mr));
	FT_DAT_CHECK(dat_rmr_create(ia.pz, &rmr));
	FT_DAT_CHECK(ft_ep_create(&ia, ia.pz, NULL, 16, &ep));
	FT_DAT_CHECK(ft_listen(&ia, &l));
	FT_DAT_EXPECT(dat_ia_close(ia.ia, DAT_CLOSE_GRACEFUL_FLAG),
	              DAT_INVALID_STATE);
	FT_DAT_CHECK(dat_ia_close(ia.ia, DAT_CLOSE_ABRUPT_FLAG));
	free(mr.buf);

	/* The provider library is unloaded after the last close; reopen. */
	ft_ia_open(ft_opts.ia_name, &ia);
	FT_CHECK(ia.attr.ia_address_ptr != NULL,
	         "reopening %s after the last close works", ft_opts.ia_name);
	ft_ia_close(&ia);
}

static void check_strerror(void)
{
	static const DAT_RETURN codes[] = {
	        DAT_SUCCESS,
	        DAT_CLASS_ERROR | DAT_INVALID_HANDLE | DAT_INVALID_HANDLE_EP,
	        DAT_CLASS_ERROR | DAT_INVALID_STATE |
	                DAT_INVALID_STATE_EP_UNCONNECTED,
	        DAT_CLASS_ERROR | DAT_TIMEOUT_EXPIRED,
	        DAT_CLASS_ERROR | DAT_PROVIDER_NOT_FOUND,
	};
	size_t i;

	for (i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		const char *major = NULL, *minor = NULL;

		FT_CHECK(dat_strerror(codes[i], &major, &minor) ==
		                         DAT_SUCCESS &&
		                 major != NULL && minor != NULL,
		         "dat_strerror(%#x) = '%s' / '%s'", (unsigned)codes[i],
		         major ? major : "(null)", minor ? minor : "(null)");
	}
}

int main(int argc, char **argv)
{
	struct ft_ia ia;
	DAT_BOOLEAN reg_ts = DAT_FALSE;
	int before;

	ft_init(argc, argv, "dat_ia",
	        "registry, IA names and built-ins, IA/provider attributes, "
	        "handles, close",
	        NULL);
	check_registry(ft_opts.ia_name, &reg_ts);
	check_strerror();

	before = count_threads();
	ft_ia_open(ft_opts.ia_name, &ia);
	check_progress_thread(&ia, before);
	ft_check_libs();
	check_open_errors();
	check_attrs(&ia, reg_ts);
	check_query_and_handles(&ia);
	check_default_ep(&ia);
	check_srq(&ia);
	ft_ia_close(&ia);

	check_two_opens();
	check_close();
	return ft_finish();
}
