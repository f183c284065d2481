/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * pc_dtest: a consumer written the way OFED's dtest is, built outside the
 * tree with nothing but `cc prog.c $(pkg-config --cflags --libs dat2)`
 * (test/install/pkg-config.sh).  It opens an IA by name, queries it,
 * creates a PZ, the request, receive and connection EVDs and an EP with
 * an attribute set of its own, queries the EP back, then frees all of it
 * and closes the IA.  Every call must succeed; the first that does not
 * ends the program with exit status 1.  No connection is made, so no
 * port is opened.
 *
 * Usage: pc_dtest [-P IA]   (default ofi-tcp)
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <dat2/udat.h>

#define PC_EVD_LEN 32
#define PC_DTOS    16

static int pc_fail(const char *call, DAT_RETURN ret)
{
	const char *major = "?", *minor = "?";

	dat_strerror(ret, &major, &minor);
	fprintf(stderr, "pc_dtest: %s = 0x%08x (%s %s)\n", call, (unsigned)ret,
	        major, minor);
	return 1;
}

#define PC_CALL(_call)                                \
	do {                                          \
		DAT_RETURN _ret = (_call);            \
		if (_ret != DAT_SUCCESS)              \
			return pc_fail(#_call, _ret); \
		printf("pc_dtest: %s: ok\n", #_call); \
	} while (0)

int main(int argc, char **argv)
{
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL, req, rcv, conn;
	DAT_IA_ATTR ia_attr;
	DAT_PROVIDER_ATTR pr_attr;
	DAT_EP_ATTR ep_attr, got;
	DAT_EP_PARAM ep_param;
	DAT_IA_HANDLE ia;
	DAT_PZ_HANDLE pz;
	DAT_EP_HANDLE ep;
	char *name = "ofi-tcp";
	int opt;

	while ((opt = getopt(argc, argv, "P:")) != -1) {
		if (opt != 'P') {
			fprintf(stderr, "usage: %s [-P IA]\n", argv[0]);
			return 2;
		}
		name = optarg;
	}

	PC_CALL(dat_ia_open(name, 8, &async, &ia));
	PC_CALL(dat_ia_query(ia, &async, DAT_IA_ALL, &ia_attr,
	                     DAT_PROVIDER_FIELD_ALL, &pr_attr));
	printf("pc_dtest: %s: adapter %s, provider %s, max EPs %u\n", name,
	       ia_attr.adapter_name, pr_attr.provider_name,
	       (unsigned)ia_attr.max_eps);
	PC_CALL(dat_pz_create(ia, &pz));
	PC_CALL(dat_evd_create(ia, PC_EVD_LEN, DAT_HANDLE_NULL,
	                       DAT_EVD_DTO_FLAG, &req));
	PC_CALL(dat_evd_create(ia, PC_EVD_LEN, DAT_HANDLE_NULL,
	                       DAT_EVD_DTO_FLAG, &rcv));
	PC_CALL(dat_evd_create(ia, PC_EVD_LEN, DAT_HANDLE_NULL,
	                       DAT_EVD_CONNECTION_FLAG, &conn));

	memset(&ep_attr, 0, sizeof(ep_attr));
	ep_attr.service_type = DAT_SERVICE_TYPE_RC;
	ep_attr.max_mtu_size = 4096;
	ep_attr.max_rdma_size = 4096;
	ep_attr.qos = DAT_QOS_BEST_EFFORT;
	ep_attr.recv_completion_flags = DAT_COMPLETION_DEFAULT_FLAG;
	ep_attr.request_completion_flags = DAT_COMPLETION_DEFAULT_FLAG;
	ep_attr.max_recv_dtos = PC_DTOS;
	ep_attr.max_request_dtos = PC_DTOS;
	ep_attr.max_recv_iov = 1;
	ep_attr.max_request_iov = 1;
	ep_attr.max_rdma_read_in = 1;
	ep_attr.max_rdma_read_out = 1;
	ep_attr.srq_soft_hw = DAT_HW_DEFAULT;
	PC_CALL(dat_ep_create(ia, pz, rcv, req, conn, &ep_attr, &ep));
	PC_CALL(dat_ep_query(ep, DAT_EP_FIELD_ALL, &ep_param));
	got = ep_param.ep_attr;
	if (ep_param.ia_handle != ia || ep_param.pz_handle != pz ||
	    got.max_recv_dtos < PC_DTOS || got.max_request_dtos < PC_DTOS) {
		fprintf(stderr,
		        "pc_dtest: dat_ep_query: IA, PZ or queue sizes differ "
		        "from dat_ep_create's (recv %u, request %u DTOs)\n",
		        (unsigned)got.max_recv_dtos,
		        (unsigned)got.max_request_dtos);
		return 1;
	}
	PC_CALL(dat_ep_free(ep));
	PC_CALL(dat_evd_free(conn));
	PC_CALL(dat_evd_free(rcv));
	PC_CALL(dat_evd_free(req));
	PC_CALL(dat_pz_free(pz));
	PC_CALL(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
	printf("pc_dtest: %s: done\n", name);
	return 0;
}
