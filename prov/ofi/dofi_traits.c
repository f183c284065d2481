/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * What each libfabric provider does differently, in one table: looked up
 * once when an IA opens (dofi_ia_open) and read through ia->traits. A
 * provider not listed gets the last row, which assumes nothing: no
 * threads of its own, posting order kept, endpoints whose close removes
 * their EQ events, and no SIGPIPE guard needed only where said.
 *
 * Measured on libfabric 1.17 and 2.x; see DESIGN.md and dapl-ofi(7).
 */
#include "config.h"

#include <string.h>

#include "dofi.h"

static const dofi_traits_t dofi_traits_table[] = {
        {
                .prov = "tcp",
                .trunc_ends_conn = 1,
                .late_order = DOFI_ORDER_LATE,
                .cq_pollfd = 1,
                .delivery_write = 1,
                .no_sigpipe = 1,
                .ep_cnt_soft = 1,
                .kernel_tcp = 1,
        },
        {
                .prov = "sockets",
                .auto_progress = 1,
                .late_order = DOFI_ORDER_ALL,
                .close_ends_conn = 1,
                .close_drops_unsent = 1,
                .eq_keeps_closed = 1,
                .accept_late = 1,
                .ep_cnt_soft = 1,
                .cm_gate = 1,
                .kernel_tcp = 1,
                .recv_cancel_busy = 1,
                .recv_buffers = 1,
        },
        {
                .prov = "verbs",
                .no_sigpipe = 1,
        },
        /*
         * RDM fabrics (dofi_cm_rdm.c): their connections are ours, so the
         * MSG CM's rows (eq_keeps_closed, accept_late, ...) mean nothing
         * there. RDMA Reads, and writes asking FI_DELIVERY_COMPLETE,
         * complete on the target's answer, after later sends.
         */
        {
                .prov = "efa",
                .eq_keeps_closed = 1,
                .no_sigpipe = 1,
                .late_order = DOFI_ORDER_LATE,
        },
        {
                /* Over kernel TCP: a write's transmit completion would
                 * hide a target's refusal, as on tcp. */
                .prov = "tcp;ofi_rxm",
                /* Sends over its eager limit complete on the
                 * receiver's read, after later ones. */
                .late_order = DOFI_ORDER_ALL,
                .mr_basic = 1,
                .cq_nowait = 1,
                .av_keep = 1,
                .delivery_write = 1,
                .no_sigpipe = 1,
                /* A read of its queue moves one segment of a large
                 * message (nap_reads). */
                .nap_reads = 64,
        },
        {
                /* Writes are copied into the target by the sender (CMA
                 * or the shared region): done once completed. */
                .prov = "shm",
                /* Large transfers (CMA) complete after later small
                 * ones. */
                .late_order = DOFI_ORDER_ALL,
                .no_sigpipe = 1,
                /* A truncated receive completes with -FI_ETRUNC. */
                .cq_err_negated = 1,
                /* 256 peers an AV: connections past that need AVs of
                 * their own. */
                .av_per_ep = 1,
        },
        {
                .prov = "udp;ofi_rxd",
                /* Sends and writes complete as acknowledgements come,
                 * after later Reads. */
                .late_order = DOFI_ORDER_ALL,
                .no_sigpipe = 1,
                /* A post while a Read is out overtakes requests queued
                 * behind it, and Reads beside large Sends stall. */
                .read_fence = 1,
                /* No CQ fd, and data moves only as its CQ is read. */
                .nap_us = 250,
                /* Its CQ's fd is none of ours to use (nap_us): asked
                 * for none, it opens its udp CQs without one. */
                .cq_nowait = 1,
                /* Its udp CQ must hold a window of packets. */
                .tx_window_room = 1,
                /* A message longer than its receive succeeds, cut. */
                .trunc_silent = 1,
        },
        {
                /* Any other provider: the cautious defaults. */
                .prov = NULL,
                .eq_keeps_closed = 1,
        },
};

const dofi_traits_t *dofi_traits_lookup(const char *prov_name)
{
	const dofi_traits_t *t = dofi_traits_table;

	for (; t->prov != NULL; t++)
		if (prov_name != NULL && strcmp(t->prov, prov_name) == 0)
			break;
	return t;
}
