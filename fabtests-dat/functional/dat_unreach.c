/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * dat_unreach: DAT_CONNECTION_EVENT_UNREACHABLE.  The process moves into
 * a network namespace of its own (nothing in it reaches beyond the
 * machine: it has only a loopback device), brings lo up and adds an
 * "unreachable" route for 127.66.0.1 to its local table, so a connect
 * there fails with "no route to host" at once, without a packet sent.
 * The IA opened inside the namespace must report UNREACHABLE, move the
 * EP to Disconnected and flush its receives; a connect to a qualifier
 * nobody listens on at 127.0.0.1 in the same namespace still gives
 * NON_PEER_REJECTED.  Not run without the privilege to make a namespace
 * (root or CAP_SYS_ADMIN) or without ip(8).
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include "shared.h"

#define UNREACH_ADDR "127.66.0.1"

static void make_namespace(void)
{
	char *up[] = {"ip", "link", "set", "lo", "up", NULL};
	char *route[] = {
	        "ip",    "route", "add", "unreachable", UNREACH_ADDR "/32",
	        "table", "local", NULL};

	if (unshare(CLONE_NEWNET) != 0)
		ft_notrun("unshare(CLONE_NEWNET): %s: a private network "
		          "namespace needs root or CAP_SYS_ADMIN",
		          strerror(errno));
	if (ft_run_ip(up) != 0)
		ft_notrun("ip link set lo up failed (is iproute2 installed?)");
	if (ft_run_ip(route) != 0)
		ft_notrun("ip route add unreachable %s failed", UNREACH_ADDR);
	ft_log("private network namespace: lo up, unreachable route to %s",
	       UNREACH_ADDR);
}

int main(int argc, char **argv)
{
	struct ft_ia ia;
	struct ft_ep ep;
	struct ft_listener tmp;
	struct ft_mr mr;
	struct sockaddr_in to;
	DAT_LMR_TRIPLET t;
	DAT_DTO_COOKIE ck;
	DAT_CONN_QUAL qual;
	DAT_RETURN ret;
	int i;

	ft_init(argc, argv, "dat_unreach",
	        "UNREACHABLE for a host with no route, in a private network "
	        "namespace",
	        NULL);
	make_namespace(); /* before libfabric sees any interface */
	ft_ia_open(ft_opts.ia_name, &ia);
	ft_check_libs();
	ft_log("IA address in the namespace: %s",
	       ft_addr_str(ia.attr.ia_address_ptr));

	/* A listener's free qualifier, then nobody listening on it. */
	FT_DAT_OK(ft_listen(&ia, &tmp));
	qual = tmp.qual;
	ft_listener_free(&tmp);

	FT_DAT_OK(ft_ep_create(&ia, ia.pz, NULL, 16, &ep));
	FT_DAT_OK(ft_mr_create(&ia, ia.pz, 4096, DAT_MEM_PRIV_ALL_FLAG, &mr));
	for (i = 0; i < 2; i++) {
		t = ft_lmr_iov(&mr, 1024 * (size_t)i, 1024);
		ck.as_64 = 0x100 + (uint64_t)i;
		FT_DAT_CHECK(dat_ep_post_recv(ep.ep, 1, &t, ck,
		                              DAT_COMPLETION_DEFAULT_FLAG));
	}
	memset(&to, 0, sizeof(to));
	to.sin_family = AF_INET;
	inet_pton(AF_INET, UNREACH_ADDR, &to.sin_addr);
	ret = dat_ep_connect(ep.ep, (DAT_IA_ADDRESS_PTR)&to, qual,
	                     FT_TIMEOUT_US, 0, NULL, DAT_QOS_BEST_EFFORT,
	                     DAT_CONNECT_DEFAULT_FLAG);
	FT_CHECK(ret == DAT_SUCCESS,
	         "dat_ep_connect to %s = %s (the outcome is an event)",
	         UNREACH_ADDR, ft_ret_str(ret));
	if (ret == DAT_SUCCESS) {
		ft_expect_event(ep.conn_evd, FT_TIMEOUT_US,
		                DAT_CONNECTION_EVENT_UNREACHABLE, ep.ep, NULL,
		                "a host with no route gives UNREACHABLE");
		FT_CHECK(ft_ep_state(ep.ep) == DAT_EP_STATE_DISCONNECTED,
		         "the EP is Disconnected after UNREACHABLE");
		for (i = 0; i < 2; i++)
			ft_expect_dto(ep.recv_evd, FT_TIMEOUT_US, ep.ep,
			              DAT_DTO_RECEIVE, 0x100 + (uint64_t)i,
			              DAT_DTO_ERR_FLUSHED, -1, NULL,
			              "UNREACHABLE flushes the receives");
		FT_DAT_CHECK(dat_ep_reset(ep.ep));
	}

	/* The namespace works for local traffic: nobody listens here. */
	FT_DAT_CHECK(dat_ep_connect(ep.ep, ia.attr.ia_address_ptr, qual,
	                            FT_TIMEOUT_US, 0, NULL, DAT_QOS_BEST_EFFORT,
	                            DAT_CONNECT_DEFAULT_FLAG));
	ft_expect_event(ep.conn_evd, FT_TIMEOUT_US,
	                DAT_CONNECTION_EVENT_NON_PEER_REJECTED, ep.ep, NULL,
	                "no listener at 127.0.0.1 in the namespace gives "
	                "NON_PEER_REJECTED");

	ft_mr_free(&mr);
	ft_ep_free(&ep);
	ft_ia_close(&ia);
	return ft_finish();
}
