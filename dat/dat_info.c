/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * dat_info: what the DAT registry knows (every IA name, where it came from)
 * and, with -v NAME, what that IA reports once opened.
 */
#include "config.h"

#include <arpa/inet.h>
#include <getopt.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dat2/dat_ib_extensions.h>

#include "datr.h"
#include "dof/log.h"

static void dat_info_usage(FILE *fp)
{
	fprintf(fp,
	        "Usage: dat_info [-f FILE] [-v IA_NAME]\n"
	        "  (no option)        list every IA name: source, library, "
	        "instance data\n"
	        "  -v, --verbose NAME open NAME and print its IA and provider "
	        "attributes\n"
	        "  -f, --file FILE    read FILE instead of the dat.conf lookup "
	        "(as DAT_OVERRIDE)\n"
	        "  -h, --help         this text\n");
}

static int dat_info_list(void)
{
	datr_conf_t conf = {0};
	const char *path = datr_conf_choose_path();
	size_t i;

	if (path != NULL)
		(void)datr_conf_load_file(&conf, path);
	if (datr_conf_add_builtins(&conf) != DOF_OK) {
		fprintf(stderr, "dat_info: out of memory\n");
		datr_conf_cleanup(&conf);
		return 1;
	}
	printf("# dat.conf: %s\n", path ? path : "(none found)");
	printf("%-24s %-28s %-18s %-6s %-13s %-10s %s\n", "# ia_name", "source",
	       "library", "api", "threads", "default", "instance data");
	for (i = 0; i < conf.count; i++) {
		const datr_conf_entry_t *e = &conf.entries[i];
		char src[DATR_FIELD_MAX + 16], api[16];

		datr_conf_entry_where(e, src, sizeof(src));
		snprintf(api, sizeof(api), "u%u.%u", e->api_major,
		         e->api_minor);
		printf("%-24s %-28s %-18s %-6s %-13s %-10s \"%s\"%s\n",
		       e->ia_name, src, e->lib_path, api,
		       e->threadsafe ? "threadsafe" : "nonthreadsafe",
		       e->is_default ? "default" : "nondefault", e->ia_params,
		       e->shadowed ? "  (shadowed)" : "");
	}
	datr_conf_cleanup(&conf);
	return 0;
}

static void dat_info_print_addr(const char *label, DAT_IA_ADDRESS_PTR addr)
{
	char buf[INET6_ADDRSTRLEN] = "?";

	if (addr == NULL) {
		printf("%-40s (none)\n", label);
		return;
	}
	if (addr->sa_family == AF_INET)
		inet_ntop(AF_INET, &((struct sockaddr_in *)addr)->sin_addr, buf,
		          sizeof(buf));
	else if (addr->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)addr)->sin6_addr,
		          buf, sizeof(buf));
	printf("%-40s %s (family %d)\n", label, buf, addr->sa_family);
}

static void dat_info_print_named(const char *what, DAT_COUNT n,
                                 const DAT_NAMED_ATTR *attrs)
{
	DAT_COUNT i;

	printf("%-40s %d\n", what, n);
	for (i = 0; attrs != NULL && i < n; i++)
		printf("    %-36s %s\n", attrs[i].name ? attrs[i].name : "?",
		       attrs[i].value ? attrs[i].value : "?");
}

/* A provider attribute's value, or NULL. */
static const char *dat_info_named(const DAT_PROVIDER_ATTR *pa, const char *n)
{
	DAT_COUNT i;

	for (i = 0; pa->provider_specific_attr != NULL &&
	            i < pa->num_provider_specific_attr;
	     i++)
		if (pa->provider_specific_attr[i].name != NULL &&
		    strcmp(pa->provider_specific_attr[i].name, n) == 0)
			return pa->provider_specific_attr[i].value;
	return NULL;
}

/*
 * The IB extension (dat_ib_extensions.h): each of its attributes, with
 * the value the IA gives or as not offered when it names none.
 */
static void dat_info_print_ib_ext(const DAT_IA_ATTR *a,
                                  const DAT_PROVIDER_ATTR *pa)
{
	static const char *const names[] = {
	        "DAT_EXTENSION_INTERFACE",
	        "DAT_IB_TRANSPORT_MTU",
	        DAT_IB_ATTR_IMMED_DATA,
	        DAT_IB_ATTR_FETCH_AND_ADD,
	        DAT_IB_ATTR_CMP_AND_SWAP,
	        DAT_IB_ATTR_COUNTERS,
	        DAT_IB_ATTR_UD,
	        DAT_IB_COLL_BARRIER,
	};
	size_t i;

	if (a->extension_supported != DAT_EXTENSION_IB) {
		printf("## extension: none\n");
		return;
	}
	printf("## extension: InfiniBand, version %d (dat_ib_extensions.h)\n",
	       (int)a->extension_version);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const char *v = dat_info_named(pa, names[i]);

		printf("    %-36s %s\n", names[i], v ? v : "(not offered)");
	}
}

#define P_STR(_s, _f)  printf("%-40s %s\n", #_f, (_s)->_f)
#define P_INT(_s, _f)  printf("%-40s %lld\n", #_f, (long long)(_s)->_f)
#define P_HEX(_s, _f)  printf("%-40s %#llx\n", #_f, (unsigned long long)(_s)->_f)
#define P_BOOL(_s, _f) printf("%-40s %s\n", #_f, (_s)->_f ? "true" : "false")

static int dat_info_verbose(const char *name)
{
	DAT_EVD_HANDLE async_evd = DAT_HANDLE_NULL;
	DAT_PROVIDER_ATTR pa;
	DAT_IA_HANDLE ia;
	DAT_IA_ATTR ia_attr;
	const char *major, *minor;
	DAT_RETURN ret;

	ret = dat_ia_open((DAT_NAME_PTR)name, 8, &async_evd, &ia);
	if (ret != DAT_SUCCESS) {
		dat_strerror(ret, &major, &minor);
		fprintf(stderr,
		        "dat_info: cannot open IA '%s': %s %s\n"
		        "dat_info: (the registry's warning above says why; a "
		        "missing provider library is reported with the dlopen "
		        "error)\n",
		        name, major, minor);
		return 1;
	}
	memset(&ia_attr, 0, sizeof(ia_attr));
	memset(&pa, 0, sizeof(pa));
	ret = dat_ia_query(ia, NULL, DAT_IA_FIELD_ALL, &ia_attr,
	                   DAT_PROVIDER_FIELD_ALL, &pa);
	if (ret != DAT_SUCCESS) {
		dat_strerror(ret, &major, &minor);
		fprintf(stderr, "dat_info: dat_ia_query(%s): %s %s\n", name,
		        major, minor);
		dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG);
		return 1;
	}
	printf("IA %s\n## IA attributes\n", name);
	P_STR(&ia_attr, adapter_name);
	P_STR(&ia_attr, vendor_name);
	P_INT(&ia_attr, hardware_version_major);
	P_INT(&ia_attr, hardware_version_minor);
	P_INT(&ia_attr, firmware_version_major);
	P_INT(&ia_attr, firmware_version_minor);
	dat_info_print_addr("ia_address_ptr", ia_attr.ia_address_ptr);
	P_INT(&ia_attr, max_eps);
	P_INT(&ia_attr, max_dto_per_ep);
	P_INT(&ia_attr, max_rdma_read_per_ep_in);
	P_INT(&ia_attr, max_rdma_read_per_ep_out);
	P_INT(&ia_attr, max_evds);
	P_INT(&ia_attr, max_evd_qlen);
	P_INT(&ia_attr, max_iov_segments_per_dto);
	P_INT(&ia_attr, max_lmrs);
	P_INT(&ia_attr, max_lmr_block_size);
	P_HEX(&ia_attr, max_lmr_virtual_address);
	P_INT(&ia_attr, max_pzs);
	P_INT(&ia_attr, max_message_size);
	P_INT(&ia_attr, max_rdma_size);
	P_INT(&ia_attr, max_rmrs);
	P_HEX(&ia_attr, max_rmr_target_address);
	P_INT(&ia_attr, max_srqs);
	P_INT(&ia_attr, max_ep_per_srq);
	P_INT(&ia_attr, max_recv_per_srq);
	P_INT(&ia_attr, max_iov_segments_per_rdma_read);
	P_INT(&ia_attr, max_iov_segments_per_rdma_write);
	P_INT(&ia_attr, max_rdma_read_in);
	P_INT(&ia_attr, max_rdma_read_out);
	P_BOOL(&ia_attr, max_rdma_read_per_ep_in_guaranteed);
	P_BOOL(&ia_attr, max_rdma_read_per_ep_out_guaranteed);
	P_BOOL(&ia_attr, zb_supported);
	P_INT(&ia_attr, extension_supported);
	P_INT(&ia_attr, extension_version);
	dat_info_print_named("num_transport_attr", ia_attr.num_transport_attr,
	                     ia_attr.transport_attr);
	dat_info_print_named("num_vendor_attr", ia_attr.num_vendor_attr,
	                     ia_attr.vendor_attr);

	printf("## provider attributes\n");
	P_STR(&pa, provider_name);
	P_INT(&pa, provider_version_major);
	P_INT(&pa, provider_version_minor);
	P_INT(&pa, dapl_version_major);
	P_INT(&pa, dapl_version_minor);
	P_HEX(&pa, lmr_mem_types_supported);
	P_HEX(&pa, iov_ownership_on_return);
	P_HEX(&pa, dat_qos_supported);
	P_HEX(&pa, completion_flags_supported);
	P_BOOL(&pa, is_thread_safe);
	P_INT(&pa, max_private_data_size);
	P_BOOL(&pa, supports_multipath);
	P_INT(&pa, ep_creator);
	P_INT(&pa, pz_support);
	P_INT(&pa, optimal_buffer_alignment);
	P_BOOL(&pa, srq_supported);
	P_INT(&pa, srq_watermarks_supported);
	P_BOOL(&pa, srq_ep_pz_difference_supported);
	P_INT(&pa, srq_info_supported);
	P_INT(&pa, ep_recv_info_supported);
	P_BOOL(&pa, lmr_sync_req);
	P_BOOL(&pa, dto_async_return_guaranteed);
	P_BOOL(&pa, rdma_write_for_rdma_read_req);
	P_BOOL(&pa, rdma_read_lmr_rmr_context_exposure);
	P_HEX(&pa, rmr_scope_supported);
	P_BOOL(&pa, is_signal_safe);
	P_BOOL(&pa, ha_supported);
	P_INT(&pa, ha_loadbalancing);
	dat_info_print_named("num_provider_specific_attr",
	                     pa.num_provider_specific_attr,
	                     pa.provider_specific_attr);
	dat_info_print_ib_ext(&ia_attr, &pa);

	ret = dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG);
	if (ret != DAT_SUCCESS) {
		dat_strerror(ret, &major, &minor);
		fprintf(stderr, "dat_info: dat_ia_close(%s): %s %s\n", name,
		        major, minor);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	        {"verbose", required_argument, NULL, 'v'},
	        {"file", required_argument, NULL, 'f'},
	        {"help", no_argument, NULL, 'h'},
	        {NULL, 0, NULL, 0},
	};
	const char *name = NULL;
	int c;

	while ((c = getopt_long(argc, argv, "v:f:h", opts, NULL)) != -1) {
		switch (c) {
		case 'v':
			name = optarg;
			break;
		case 'f':
			if (setenv("DAT_OVERRIDE", optarg, 1) != 0) {
				perror("dat_info: setenv");
				return 1;
			}
			break;
		case 'h':
			dat_info_usage(stdout);
			return 0;
		default:
			dat_info_usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		dat_info_usage(stderr);
		return 2;
	}
	dof_log_init();
	return name ? dat_info_verbose(name) : dat_info_list();
}
