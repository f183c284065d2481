/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * ia_cycles: N whole IA lifecycles, for a leak check under valgrind
 * (scripts/ci.sh runs 100 on ofi-tcp). Each cycle opens the IA and
 * creates a PZ, a request and a receive EVD (DTO), a connection EVD, an
 * EP on them and an LMR over a heap buffer, then frees them in reverse
 * order and closes the IA gracefully, so nothing is left for the close
 * to reclaim. Every call must succeed; the first that does not ends the
 * run with exit status 1.
 *
 * Usage: ia_cycles [-D IA] [-n CYCLES]   (defaults ofi-tcp, 100)
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dat2/udat.h>

#define CYCLE_BUF_LEN 65536

static int cycle_fail(unsigned cycle, const char *call, DAT_RETURN ret)
{
	const char *major = "?", *minor = "?";

	dat_strerror(ret, &major, &minor);
	fprintf(stderr, "ia_cycles: cycle %u: %s = 0x%08x (%s %s)\n", cycle,
	        call, (unsigned)ret, major, minor);
	return -1;
}

#define CYCLE_CALL(_call)                                       \
	do {                                                    \
		DAT_RETURN _ret = (_call);                      \
		if (_ret != DAT_SUCCESS)                        \
			return cycle_fail(cycle, #_call, _ret); \
	} while (0)

static int cycle_run(const char *name, unsigned cycle, void *buf)
{
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL, req, recv, conn;
	DAT_REGION_DESCRIPTION region;
	DAT_RMR_CONTEXT rmr_ctx;
	DAT_LMR_CONTEXT lmr_ctx;
	DAT_VLEN reg_len;
	DAT_VADDR reg_addr;
	DAT_IA_HANDLE ia;
	DAT_PZ_HANDLE pz;
	DAT_EP_HANDLE ep;
	DAT_LMR_HANDLE lmr;

	CYCLE_CALL(dat_ia_open((const DAT_NAME_PTR)name, 16, &async, &ia));
	CYCLE_CALL(dat_pz_create(ia, &pz));
	CYCLE_CALL(dat_evd_create(ia, 64, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG,
	                          &req));
	CYCLE_CALL(dat_evd_create(ia, 64, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG,
	                          &recv));
	CYCLE_CALL(dat_evd_create(ia, 16, DAT_HANDLE_NULL,
	                          DAT_EVD_CONNECTION_FLAG, &conn));
	CYCLE_CALL(dat_ep_create(ia, pz, recv, req, conn, NULL, &ep));
	region.for_va = buf;
	CYCLE_CALL(dat_lmr_create(ia, DAT_MEM_TYPE_VIRTUAL, region,
	                          CYCLE_BUF_LEN, pz, DAT_MEM_PRIV_ALL_FLAG,
	                          DAT_VA_TYPE_VA, &lmr, &lmr_ctx, &rmr_ctx,
	                          &reg_len, &reg_addr));
	CYCLE_CALL(dat_lmr_free(lmr));
	CYCLE_CALL(dat_ep_free(ep));
	CYCLE_CALL(dat_evd_free(conn));
	CYCLE_CALL(dat_evd_free(recv));
	CYCLE_CALL(dat_evd_free(req));
	CYCLE_CALL(dat_pz_free(pz));
	CYCLE_CALL(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
	return 0;
}

int main(int argc, char **argv)
{
	const char *name = "ofi-tcp";
	unsigned long cycles = 100, i;
	void *buf;
	int opt;

	while ((opt = getopt(argc, argv, "D:n:")) != -1) {
		switch (opt) {
		case 'D':
			name = optarg;
			break;
		case 'n':
			cycles = strtoul(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr, "usage: %s [-D IA] [-n CYCLES]\n",
			        argv[0]);
			return 2;
		}
	}
	buf = calloc(1, CYCLE_BUF_LEN);
	if (buf == NULL)
		return 1;
	for (i = 0; i < cycles; i++) {
		if (cycle_run(name, (unsigned)i, buf) != 0) {
			free(buf);
			return 1;
		}
	}
	free(buf);
	printf("ia_cycles: %lu lifecycles of %s\n", cycles, name);
	return 0;
}
