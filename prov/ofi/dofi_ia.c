/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * The IA: fi_getinfo for the dat.conf instance data, fabric, domain, EQ,
 * attributes filled from what libfabric reports, and close (graceful
 * refuses while objects remain; abrupt frees everything).
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "dofi.h"
#include "dofi_cm.h"

#define DOFI_MAX_EVD_QLEN    65536
#define DOFI_RDMA_READ_DEPTH 16

static struct fi_info *dofi_ia_hints(const dofi_prov_t *p,
                                     enum fi_ep_type type, uint64_t order)
{
	struct fi_info *hints = fi_allocinfo();

	if (hints == NULL)
		return NULL;
	hints->ep_attr->type = type;
	hints->caps = FI_MSG | FI_RMA | FI_SEND | FI_RECV | FI_READ | FI_WRITE |
	              FI_REMOTE_READ | FI_REMOTE_WRITE;
	/* Every op context we pass is a struct fi_context2. */
	hints->mode = FI_CONTEXT | FI_CONTEXT2;
	/*
	 * MSG: an IA address is the endpoint's IP. RDM: the provider's own
	 * format (shm's are names, efa's GIDs); the control channel's IP is
	 * the backend's (dofi_cm_rdm.c). RDM providers order what they
	 * are asked for: order, what DAT needs (dofi_ia_open).
	 */
	if (type == FI_EP_MSG) {
		hints->addr_format = FI_SOCKADDR_IN;
	} else {
		hints->tx_attr->msg_order = order;
		hints->rx_attr->msg_order = order;
	}
	/* Modes we honour; FI_MR_ENDPOINT and FI_MR_RAW we do not. */
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
	                              FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->domain_attr->threading = FI_THREAD_SAFE;
	if (p->inst.fi_prov[0] != '\0')
		hints->fabric_attr->prov_name = strdup(p->inst.fi_prov);
	return hints;
}

/* Whether entry cur is the domain, fabric or address want ("": any). */
static int dofi_ia_matches(const struct fi_info *cur, const char *want)
{
	char ip[INET_ADDRSTRLEN] = "";

	if (want[0] == '\0')
		return 1;
	if (cur->src_addr != NULL && cur->addr_format == FI_SOCKADDR_IN)
		inet_ntop(
		        AF_INET,
		        &((const struct sockaddr_in *)cur->src_addr)->sin_addr,
		        ip, sizeof(ip));
	return (cur->domain_attr->name &&
	        strcmp(cur->domain_attr->name, want) == 0) ||
	       (cur->fabric_attr->name &&
	        strcmp(cur->fabric_attr->name, want) == 0) ||
	       strcmp(ip, want) == 0;
}

/*
 * Keep the entry whose domain, fabric or source address matches what
 * dat.conf names ("lo", "mlx5_0", "127.0.0.1"), else the first; free the
 * rest. NULL when a name was given and nothing matches. Any other
 * provider's entry goes before a sockets one: where no provider is named
 * (ofi, "auto") sockets is taken only when nothing else would do, as its
 * connection manager trusts the network (dapl-ofi(7)).
 */
static struct fi_info *dofi_ia_pick(struct fi_info *list, const char *want)
{
	struct fi_info *cur, *pick = NULL, **link;
	int pass;

	for (pass = 0; pass < 2 && pick == NULL; pass++) {
		for (cur = list; cur != NULL && pick == NULL; cur = cur->next) {
			if (pass == 0 && cur->fabric_attr->prov_name != NULL &&
			    strcmp(cur->fabric_attr->prov_name, "sockets") == 0)
				continue;
			if (dofi_ia_matches(cur, want))
				pick = cur;
		}
	}
	if (pick == NULL)
		return NULL;
	/* Unlink the pick, free the others. */
	for (link = &list; *link != pick; link = &(*link)->next)
		;
	*link = pick->next;
	pick->next = NULL;
	if (list != NULL)
		fi_freeinfo(list);
	return pick;
}

/*
 * How many EPs can be connected at once. Where the provider's ep_cnt is a
 * default it does not enforce and each connection holds a socket (tcp,
 * sockets: 10,005 connected where it said 8,192), the process's
 * RLIMIT_NOFILE is the limit; else the provider's own count.
 */
static DAT_COUNT dofi_ia_max_eps(const dofi_ia_t *ia, const struct fi_info *fi)
{
	uint64_t n = fi->domain_attr->ep_cnt;
	struct rlimit rl;

	if (ia->traits->ep_cnt_soft && getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
	    rl.rlim_cur != RLIM_INFINITY)
		n = rl.rlim_cur;
	return (DAT_COUNT)(n > INT32_MAX ? INT32_MAX : n);
}

/* libfabric's CM data limit, from a passive endpoint made for the asking. */
static size_t dofi_ia_cm_data_size(dofi_ia_t *ia)
{
	struct fid_pep *pep;
	size_t size = 0, len = sizeof(size);

	if (fi_passive_ep(ia->fabric, ia->info, &pep, NULL) != 0)
		return 56;
	if (fi_getopt(&pep->fid, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE, &size,
	              &len) != 0)
		size = 56; /* verbs' RDMA CM limit, the smallest we know */
	fi_close(&pep->fid);
	return size;
}

static void dofi_ia_fill_attrs(dofi_ia_t *ia)
{
	const struct fi_info *fi = ia->info;
	DAT_IA_ATTR *a = &ia->ia_attr;
	DAT_PROVIDER_ATTR p;
	DAT_COUNT iov;
	size_t rx_iov;
	size_t n;

	memset(a, 0, sizeof(*a));
	snprintf(a->adapter_name, sizeof(a->adapter_name), "%s %s",
	         fi->fabric_attr->prov_name, fi->domain_attr->name);
	snprintf(a->vendor_name, sizeof(a->vendor_name), "libfabric %s",
	         fi_tostr(&fi->fabric_attr->prov_version, FI_TYPE_VERSION));
	a->hardware_version_major = FI_MAJOR(fi->fabric_attr->prov_version);
	a->hardware_version_minor = FI_MINOR(fi->fabric_attr->prov_version);
	a->firmware_version_major = FI_MAJOR(fi_version());
	a->firmware_version_minor = FI_MINOR(fi_version());
	a->ia_address_ptr = (DAT_IA_ADDRESS_PTR)&ia->addr;
	a->max_eps = dofi_ia_max_eps(ia, fi);
	n = fi->tx_attr->size < fi->rx_attr->size ? fi->tx_attr->size
	                                          : fi->rx_attr->size;
	a->max_dto_per_ep = (DAT_COUNT)(n > INT32_MAX ? INT32_MAX : n);
	a->max_rdma_read_per_ep_in = DOFI_RDMA_READ_DEPTH;
	a->max_rdma_read_per_ep_out = DOFI_RDMA_READ_DEPTH;
	a->max_evds = (DAT_COUNT)(fi->domain_attr->cq_cnt > INT32_MAX
	                                  ? INT32_MAX
	                                  : fi->domain_attr->cq_cnt);
	a->max_evd_qlen = DOFI_MAX_EVD_QLEN;
	/* One receive segment is the sink's (traits->trunc_silent). */
	rx_iov = fi->rx_attr->iov_limit - (ia->trunc_sink ? 1 : 0);
	iov = (DAT_COUNT)(fi->tx_attr->iov_limit < rx_iov
	                          ? fi->tx_attr->iov_limit
	                          : rx_iov);
	a->max_iov_segments_per_dto = iov;
	a->max_lmrs = fi->domain_attr->mr_cnt
	                      ? (DAT_COUNT)fi->domain_attr->mr_cnt
	                      : 1 << 20;
	a->max_lmr_block_size = (DAT_SEG_LENGTH)SIZE_MAX;
	a->max_lmr_virtual_address = (DAT_VADDR)UINTPTR_MAX;
	a->max_pzs = 1 << 16;
	a->max_message_size = fi->ep_attr->max_msg_size > (uint64_t)INT64_MAX
	                              ? (DAT_SEG_LENGTH)INT32_MAX
	                              : fi->ep_attr->max_msg_size;
	if (a->max_message_size > (DAT_SEG_LENGTH)INT32_MAX)
		a->max_message_size = INT32_MAX;
	a->max_rdma_size = a->max_message_size;
	a->max_rmrs = a->max_lmrs;
	a->max_rmr_target_address = (DAT_VADDR)UINTPTR_MAX;
	/* Shared receive queues are ours (dofi_srq.c): memory bounds them. */
	a->max_srqs = DOFI_SRQ_MAX;
	a->max_ep_per_srq = a->max_eps;
	a->max_recv_per_srq = DOFI_SRQ_MAX_RECV;
	a->max_iov_segments_per_rdma_read = (DAT_COUNT)fi->tx_attr->iov_limit;
	a->max_iov_segments_per_rdma_write = (DAT_COUNT)fi->tx_attr->iov_limit;
	a->max_rdma_read_in =
	        (DAT_COUNT)((int64_t)DOFI_RDMA_READ_DEPTH * a->max_eps >
	                                    INT32_MAX
	                            ? INT32_MAX
	                            : DOFI_RDMA_READ_DEPTH * a->max_eps);
	a->max_rdma_read_out = a->max_rdma_read_in;
	a->max_rdma_read_per_ep_in_guaranteed = DAT_TRUE;
	a->max_rdma_read_per_ep_out_guaranteed = DAT_TRUE;
	a->zb_supported = DAT_FALSE;
	a->extension_supported = DAT_EXTENSION_NONE;
	a->extension_version = 0;
	snprintf(ia->names[0], sizeof(ia->names[0]), "%s",
	         fi->fabric_attr->prov_name);
	snprintf(ia->names[1], sizeof(ia->names[1]), "%s",
	         fi->domain_attr->name);
	snprintf(ia->names[2], sizeof(ia->names[2]), "%zu", ia->cm_data_size);
	snprintf(ia->names[3], sizeof(ia->names[3]), "%s, backend %s",
	         fi_tostr(&fi->ep_attr->type, FI_TYPE_EP_TYPE),
	         ia->cm_ops->name);
	ia->transport[0] = (DAT_NAMED_ATTR){"DAT_OFI_PROVIDER", ia->names[0]};
	ia->transport[1] = (DAT_NAMED_ATTR){"DAT_OFI_DOMAIN", ia->names[1]};
	ia->transport[2] =
	        (DAT_NAMED_ATTR){"DAT_OFI_CM_DATA_SIZE", ia->names[2]};
	ia->transport[3] = (DAT_NAMED_ATTR){"DAT_OFI_ENDPOINT", ia->names[3]};
	a->num_transport_attr = 4;
	a->transport_attr = ia->transport;
	a->num_vendor_attr = 0;
	a->vendor_attr = NULL;

	/* DAT_PROVIDER_ATTR has a const member: build it whole, then copy. */
	memset(&p, 0, sizeof(p));
	snprintf(p.provider_name, sizeof(p.provider_name), "dapl-ofi");
	p.provider_version_major = 2;
	p.provider_version_minor = 0;
	p.dapl_version_major = DAT_VERSION_MAJOR;
	p.dapl_version_minor = DAT_VERSION_MINOR;
	p.lmr_mem_types_supported = DAT_MEM_TYPE_VIRTUAL | DAT_MEM_TYPE_LMR;
	p.iov_ownership_on_return = DAT_IOV_CONSUMER;
	p.dat_qos_supported = DAT_QOS_BEST_EFFORT;
	p.completion_flags_supported = DAT_COMPLETION_SUPPRESS_FLAG |
	                               DAT_COMPLETION_UNSIGNALLED_FLAG |
	                               DAT_COMPLETION_SOLICITED_WAIT_FLAG |
	                               DAT_COMPLETION_BARRIER_FENCE_FLAG;
	p.is_thread_safe = ia->prov->info.is_thread_safe;
	p.max_private_data_size =
	        (DAT_COUNT)(ia->cm_data_size - DOFI_CM_HDR_SIZE);
	p.supports_multipath = DAT_FALSE;
	p.ep_creator = DAT_PSP_CREATES_EP_IFASKED;
	p.pz_support = DAT_PZ_UNIQUE;
	p.optimal_buffer_alignment = 64;
	p.srq_supported = DAT_TRUE;
	/* The SRQ's low watermark; not the EPs' high ones. */
	p.srq_watermarks_supported = 1;
	p.srq_ep_pz_difference_supported = DAT_FALSE;
	/* dat_srq_query gives both counts. */
	p.srq_info_supported = 1;
	p.ep_recv_info_supported = 1;
	p.lmr_sync_req = DAT_FALSE;
	p.dto_async_return_guaranteed = DAT_FALSE;
	p.rdma_write_for_rdma_read_req = DAT_FALSE;
	p.rdma_read_lmr_rmr_context_exposure = DAT_FALSE;
	p.rmr_scope_supported = DAT_RMR_SCOPE_EP;
	p.is_signal_safe = DAT_FALSE;
	p.ha_supported = DAT_FALSE;
	p.ha_loadbalancing = DAT_HA_LB_NONE;
	ia->named[0] = (DAT_NAMED_ATTR){"DAT_IB_RDMA_READ", "TRUE"};
	ia->named[1] = (DAT_NAMED_ATTR){"DAT_IB_RDMA_WRITE", "TRUE"};
	ia->named[2] = (DAT_NAMED_ATTR){"DAT_OFI_PROVIDER", ia->names[0]};
	ia->named[3] = (DAT_NAMED_ATTR){"DAT_OFI_DOMAIN", ia->names[1]};
	p.num_provider_specific_attr = 4;
	p.num_provider_specific_attr += dofi_ext_ia_attrs(
	        ia, a, &ia->named[4],
	        (int)(sizeof(ia->named) / sizeof(ia->named[0])) - 4);
	p.provider_specific_attr = ia->named;
	memcpy(&ia->prov_attr, &p, sizeof(p));
	{
		/* Every stream may share an EVD with every other. */
		DAT_BOOLEAN *m =
		        (DAT_BOOLEAN *)(void *)
		                ia->prov_attr.evd_stream_merging_supported;
		int i;

		for (i = 0; i < 36; i++)
			m[i] = DAT_TRUE;
	}
}

static dofi_progress_mode_t dofi_progress_mode(const char *fi_prov)
{
	const char *env = getenv("DAPL_OFI_PROGRESS");

	if (env != NULL && strcmp(env, "none") == 0)
		return DOFI_PROGRESS_NONE;
	if (env != NULL && strcmp(env, "thread") == 0)
		return DOFI_PROGRESS_THREAD;
	if (env != NULL && *env != '\0' && strcmp(env, "auto") != 0)
		dof_warn(DOFI_LOG,
		         "DAPL_OFI_PROGRESS='%s' is not "
		         "auto|thread|none; using auto",
		         env);
	(void)fi_prov;
	return DOFI_PROGRESS_AUTO;
}

/*
 * DAPL_OFI_WAIT_HOT: after a wait returned an event, the EVD's waits nap
 * DOFI_WAIT_HOT_NAP_US instead of the fabric's usual nap for this long,
 * where the fabric's queue has no fd to sleep on (tcp with rxm, shm, udp
 * with rxd); 0 (the default) turns it off. A duration as
 * DAPL_OFI_LINK_TIMEOUT takes it ("500ms", "2s", ms without a unit).
 * In ns.
 */
static uint64_t dofi_wait_hot_ns(const char *ia_name)
{
	const char *env = getenv("DAPL_OFI_WAIT_HOT");
	uint64_t ms = 0;

	if (env == NULL || *env == '\0')
		return 0;
	if (dofi_duration_ms(env, &ms) != DOF_OK) {
		dof_warn(DOFI_LOG,
		         "IA '%s': DAPL_OFI_WAIT_HOT='%s' is not a duration "
		         "(ms, or with s or ms); off",
		         ia_name, env);
		return 0;
	}
	return ms * 1000000ull;
}

/*
 * RDMA Write completion level. On InfiniBand and iWARP a write completes
 * once the target acknowledged it, so a refused write (no right, out of
 * range, revoked RMR) completes in error. libfabric tcp completes a write
 * once it is sent; only FI_DELIVERY_COMPLETE makes the initiator wait for
 * the target's acknowledgement, so that a refusal (which makes tcp drop the
 * connection) ends the write in error instead of success.
 * DAPL_OFI_WRITE_COMPLETION=delivery|transmit overrides.
 */
static uint64_t dofi_write_flags(const dofi_traits_t *traits)
{
	const char *env = getenv("DAPL_OFI_WRITE_COMPLETION");

	if (env != NULL && strcmp(env, "delivery") == 0)
		return FI_DELIVERY_COMPLETE;
	if (env != NULL && strcmp(env, "transmit") == 0)
		return 0;
	if (env != NULL && *env != '\0')
		dof_warn(DOFI_LOG,
		         "DAPL_OFI_WRITE_COMPLETION='%s' is not "
		         "delivery|transmit; using the default",
		         env);
	return traits->delivery_write ? FI_DELIVERY_COMPLETE : 0;
}

/*
 * What requests on the IA wait for before they are posted (ia->fence,
 * DOFI_FENCE_*), from the fabric's row and the order libfabric granted,
 * and the RDMA Write flags that follow from it. DAPL_OFI_TEST_NO_SAW=1, a
 * test knob, takes FI_ORDER_SAW out of the granted order first, so that
 * a fabric that orders a Send after a Write runs the path that efa needs
 * (dapl-ofi(7), Reliable datagram fabrics).
 */
static void dofi_ia_fence(dofi_ia_t *ia, struct fi_info *info)
{
	const char *env = getenv("DAPL_OFI_TEST_NO_SAW");

	if (env != NULL && *env != '\0' && strcmp(env, "0") != 0) {
		dof_info(DOFI_LOG,
		         "DAPL_OFI_TEST_NO_SAW: FI_ORDER_SAW taken out of %s's "
		         "msg_order (a test knob)",
		         info->fabric_attr->prov_name);
		info->tx_attr->msg_order &= ~(uint64_t)FI_ORDER_SAW;
		info->rx_attr->msg_order &= ~(uint64_t)FI_ORDER_SAW;
	}
	ia->fence = ia->traits->read_fence ? DOFI_FENCE_READ : 0;
	ia->late_order = ia->traits->late_order;
	ia->write_flags = dofi_write_flags(ia->traits);
	ia->quiet_write_flags = 0;
	if (!(info->tx_attr->msg_order & FI_ORDER_SAW)) {
		/* A Send waits for the Writes before it to be delivered. */
		ia->fence |= DOFI_FENCE_WRITE;
		env = getenv("DAPL_OFI_WRITE_COMPLETION");
		if (env != NULL && strcmp(env, "transmit") == 0)
			dof_warn(DOFI_LOG,
			         "%s does not order a Send after an RDMA "
			         "Write: Writes complete on delivery, not as "
			         "DAPL_OFI_WRITE_COMPLETION=transmit asks",
			         info->fabric_attr->prov_name);
		ia->write_flags = FI_DELIVERY_COMPLETE;
		ia->quiet_write_flags = FI_DELIVERY_COMPLETE;
	}
	/* A fence counts the late requests, which must then be numbered. */
	if (ia->fence != 0 && ia->late_order == DOFI_ORDER_NONE)
		ia->late_order = DOFI_ORDER_LATE;
}

/*
 * Whether the IA's receives end in the sink segment (ia->trunc_sink):
 * where the fabric cuts a long message to its receive without saying so
 * (traits->trunc_silent), there is a segment to spare, and the sink needs
 * no descriptor. Otherwise such a truncation goes unreported, as the log
 * says.
 */
static void dofi_ia_trunc_sink(dofi_ia_t *ia, const char *name,
                               const struct fi_info *info)
{
	ia->trunc_sink = 0;
	if (!ia->traits->trunc_silent)
		return;
	if (ia->mr_local || info->rx_attr->iov_limit < 2) {
		dof_info(DOFI_LOG,
		         "IA '%s': %s cuts a message longer than its receive "
		         "without an error, and %s: such a receive completes "
		         "as a success",
		         name, info->fabric_attr->prov_name,
		         ia->mr_local ? "wants a descriptor for every segment"
		                      : "takes one segment a receive");
		return;
	}
	ia->trunc_sink = 1;
}

/*
 * rxd's window of packets in flight to a peer (FI_OFI_RXD_MAX_UNACKED):
 * what dapl-ofi sets unless the user did, and rxd's own default.
 */
#define DOFI_RXD_WINDOW     "64"
#define DOFI_RXD_WINDOW_RXD 128
/* rxm's receive buffers an endpoint posts over tcp (dofi_ia_open). */
#define DOFI_RXM_MSG_RX_SIZE "256"

/*
 * The least transmit queue of the IA's endpoints where the fabric needs
 * room for its window (traits->tx_window_room, rxd): twice the window
 * FI_OFI_RXD_MAX_UNACKED sets (DOFI_RXD_WINDOW unless the user set it;
 * unset, rxd's own), within what the fabric offers. 0 elsewhere.
 */
static size_t dofi_ia_tx_size_min(const dofi_ia_t *ia,
                                  const struct fi_info *info)
{
	const char *env = getenv("FI_OFI_RXD_MAX_UNACKED");
	unsigned long window = DOFI_RXD_WINDOW_RXD;
	size_t min;

	if (!ia->traits->tx_window_room)
		return 0;
	if (env != NULL && *env != '\0') {
		char *end;
		unsigned long v = strtoul(env, &end, 0);

		if (*end == '\0' && v > 0 && v <= UINT16_MAX)
			window = v;
	}
	min = 2 * (size_t)window;
	return min < info->tx_attr->size ? min : info->tx_attr->size;
}

/*
 * The connection backend for an endpoint type, or NULL: the one place
 * that names the backends.
 */
static const dofi_cm_ops_t *dofi_ia_backend(enum fi_ep_type type)
{
	switch (type) {
	case FI_EP_MSG:
		return &dofi_cm_msg_ops;
	case FI_EP_RDM:
		return &dofi_cm_rdm_ops;
	default:
		return NULL;
	}
}

/* The layers above for those below (dofi_ctl_ops_t in dofi.h). */
static const dofi_ctl_ops_t dofi_ia_ctl = {
        .cm_progress = dofi_cm_progress,
        .cm_progress_until = dofi_cm_progress_until,
        .cm_progress_events = dofi_cm_progress_events,
        .cm_timers_pending = dofi_cm_timers_pending,
        .cm_wait_fd = dofi_cm_wait_fd,
        .cm_break_later = dofi_cm_break_later,
        .cm_op_done = dofi_cm_op_done,
        .cm_ep_init = dofi_cm_ep_init,
        .cm_ep_teardown = dofi_cm_ep_teardown,
        .cm_ep_fini = dofi_cm_ep_fini,
        .cm_kick = dofi_cm_kick,
        .progress_need = dofi_progress_need,
        .progress_watch = dofi_progress_watch,
        .srq_recv_done = dofi_srq_recv_done,
};

/*
 * rxm in libfabric 1.14 to 2.0 loops for good closing a connection that
 * holds a message partly received in segments (a peer killed
 * mid-message): say so where it applies (dapl-ofi(7), Reliable datagram
 * fabrics, gives the workaround).
 */
static void dofi_ia_rxm_sar_note(const char *name, const struct fi_info *info)
{
	if (strstr(info->fabric_attr->prov_name, "ofi_rxm") == NULL ||
	    fi_version() >= FI_VERSION(2, 1) ||
	    getenv("FI_OFI_RXM_BUFFER_SIZE") != NULL)
		return;
	dof_info(DOFI_LOG,
	         "IA '%s': libfabric %u.%u's rxm hangs closing a connection "
	         "while a message above 16 KiB is partly received (a peer "
	         "killed mid-message; fixed in 2.1): FI_OFI_RXM_BUFFER_SIZE "
	         "at the largest message size avoids it",
	         name, FI_MAJOR(fi_version()), FI_MINOR(fi_version()));
}

/* The consumer's async EVD behind h, or NULL (logged) if it is none. */
static dofi_evd_t *dofi_ia_given_async(DAT_EVD_HANDLE h)
{
	dofi_evd_t *evd = dofi_obj_get(h, DOFI_OBJ_EVD, "dofi_ia_open");

	if (evd != NULL && !(evd->flags & DAT_EVD_ASYNC_FLAG)) {
		dof_warn(DOFI_LOG,
		         "dat_ia_open: EVD %p was not created with "
		         "DAT_EVD_ASYNC_FLAG",
		         (void *)evd);
		return NULL;
	}
	return evd;
}

DAT_RETURN dofi_ia_open(const DAT_NAME_PTR name, DAT_COUNT qlen,
                        DAT_EVD_HANDLE *async_evd, DAT_IA_HANDLE *ia_out)
{
	struct fi_info *hints, *info = NULL;
	const dofi_cm_ops_t *cm_ops;
	dofi_prov_t *p;
	dofi_ia_t *ia;
	DAT_RETURN ret;
	int rc = -FI_ENODATA, i;

	if (name == NULL || async_evd == NULL || ia_out == NULL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, 0);
	if (qlen < 0)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	/*
	 * The consumer's async EVD is checked before anything is opened: a
	 * bad handle costs no fabric, domain or socket, and nothing of the
	 * library runs beyond this check. It is looked up again where it is
	 * taken, below: the consumer may free it while the fabric opens.
	 */
	if (*async_evd != DAT_HANDLE_NULL &&
	    dofi_ia_given_async(*async_evd) == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE,
		                 DAT_INVALID_HANDLE_EVD_ASYNC);
	p = dofi_prov_find(name);
	if (p == NULL)
		return DAT_ERROR(DAT_PROVIDER_NOT_FOUND,
		                 DAT_NAME_NOT_REGISTERED);
	/*
	 * tcp;ofi_rxm completes receives out of posting order where it
	 * places messages straight into them (dynamic receive buffers) or
	 * above its SAR limit (rendezvous); DAT completes them in order.
	 * Both off, up to DAT's largest message, unless the user set them
	 * (dapl-ofi(7), Reliable datagram fabrics).
	 */
	(void)setenv("FI_OFI_RXM_SAR_LIMIT", "2147483648", 0);
	(void)setenv("FI_OFI_RXM_ENABLE_DYN_RBUF", "0", 0);
	/*
	 * Over tcp, rxm posts FI_OFI_RXM_MSG_RX_SIZE buffers of 16 KiB to
	 * each endpoint's shared receive context, 4096 by default: 64 MiB
	 * an endpoint, all of it touched when the endpoint opens, so
	 * dtestcm's 100 connections took 22 s and 6.9 GB in each process.
	 * A DAT endpoint has one peer, whose eager messages and segments
	 * wait there until taken; when none is free tcp stops reading the
	 * socket (back-pressure, not loss). 256 (4 MiB), unless the user
	 * set it (dapl-ofi(7), Reliable datagram fabrics).
	 */
	(void)setenv("FI_OFI_RXM_MSG_RX_SIZE", DOFI_RXM_MSG_RX_SIZE, 0);
	/*
	 * udp;ofi_rxd sends up to its window of 1472-byte datagrams at
	 * once, 128 by default: more than a UDP socket's default receive
	 * buffer holds (212992 bytes, some 90 such datagrams), so most
	 * large transfers lose datagrams and wait for retransmissions. 64,
	 * unless the user set it (dapl-ofi(7), Reliable datagram fabrics).
	 */
	(void)setenv("FI_OFI_RXD_MAX_UNACKED", DOFI_RXD_WINDOW, 0);

	/*
	 * The endpoint type the instance data names; else MSG where the
	 * provider has it (tcp, sockets, verbs), then RDM (efa, shm,
	 * tcp;ofi_rxm, udp;ofi_rxd): first with the ordering DAT needs,
	 * send after send and after RDMA Write, then with send after send
	 * alone (efa, shm; dapl-ofi(7), Ordering).
	 */
	for (i = 0; i < 3; i++) {
		enum fi_ep_type type = i == 0 ? FI_EP_MSG : FI_EP_RDM;
		uint64_t order = i == 1 ? FI_ORDER_SAS | FI_ORDER_SAW
		                        : FI_ORDER_SAS;

		if ((p->inst.ep_type == DOFI_INSTANCE_EP_MSG && i > 0) ||
		    (p->inst.ep_type == DOFI_INSTANCE_EP_RDM && i == 0))
			continue;
		hints = dofi_ia_hints(p, type, order);
		if (hints == NULL)
			return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES,
			                 DAT_RESOURCE_MEMORY);
		rc = fi_getinfo(DOFI_FI_VERSION, NULL, NULL, 0, hints, &info);
		fi_freeinfo(hints);
		if (rc == 0 && info != NULL)
			break;
	}
	if (rc != 0 || info == NULL) {
		dof_warn(DOFI_LOG,
		         "IA '%s': no libfabric MSG or RDM fabric for provider "
		         "'%s' domain '%s' (fi_getinfo: %s)",
		         name, p->inst.fi_prov[0] ? p->inst.fi_prov : "(any)",
		         p->inst.fi_domain[0] ? p->inst.fi_domain : "(any)",
		         fi_strerror(-rc));
		return DAT_ERROR(DAT_PROVIDER_NOT_FOUND,
		                 DAT_NAME_NOT_REGISTERED);
	}

	ia = dofi_obj_alloc(NULL, DOFI_OBJ_IA, sizeof(*ia), &p->table);
	if (ia == NULL) {
		fi_freeinfo(info);
		return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES,
		                 DAT_RESOURCE_MEMORY);
	}
	ia->obj.ia = ia;
	ia->prov = p;
	ia->ctl = &dofi_ia_ctl;
	ia->stop_fd = -1;
	pthread_mutex_init(&ia->lock, NULL);
	pthread_mutex_init(&ia->defer_lock, NULL);
	for (i = 0; i < DOFI_OBJ_LAST; i++)
		dofi_list_init(&ia->objs[i]);
	ia->info = dofi_ia_pick(info, p->inst.fi_domain);
	if (ia->info == NULL) {
		dof_warn(DOFI_LOG,
		         "IA '%s': libfabric provider '%s' has no domain, "
		         "netdev or address '%s'",
		         name, p->inst.fi_prov[0] ? p->inst.fi_prov : "(any)",
		         p->inst.fi_domain);
		fi_freeinfo(info);
		pthread_mutex_destroy(&ia->defer_lock);
		pthread_mutex_destroy(&ia->lock);
		dofi_obj_free(ia);
		return DAT_ERROR(DAT_PROVIDER_NOT_FOUND,
		                 DAT_NAME_NOT_REGISTERED);
	}
	ia->info = dofi_ext_info(ia, ia->info);
	info = ia->info;
	/*
	 * sockets sends its fi_info across the wire with a connection request
	 * and the peer dereferences the nic pointer in it: keep none.
	 */
	if (info->nic != NULL) {
		fi_close(&info->nic->fid);
		info->nic = NULL;
	}
	ia->mr_local = (info->domain_attr->mr_mode & FI_MR_LOCAL) != 0;
	ia->prov_key = (info->domain_attr->mr_mode & FI_MR_PROV_KEY) != 0;
	/*
	 * DAT peers exchange virtual addresses. Providers with 0-based
	 * offsets by default (tcp, sockets) take FI_MR_VIRT_ADDR when it is
	 * set before fi_domain(); fabtests-dat checks that it holds.
	 */
	info->domain_attr->mr_mode |= FI_MR_VIRT_ADDR;
	ia->virt_addr = 1;
	ia->traits = dofi_traits_lookup(info->fabric_attr->prov_name);
	dofi_ia_rxm_sar_note(name, info);
	/*
	 * A utility provider opens its core's domain from a fresh
	 * fi_getinfo, which drops FI_MR_VIRT_ADDR where the core does not
	 * list it (tcp;ofi_rxm on 1.17: RMA lands at twice the address).
	 * The basic mode is the one the core then takes as asked: virtual
	 * addresses, with the provider's keys.
	 */
	if (ia->traits->mr_basic) {
		info->domain_attr->mr_mode = FI_MR_BASIC;
		ia->prov_key = 1;
	}
	dofi_ia_fence(ia, info);
	ia->tx_size_min = dofi_ia_tx_size_min(ia, info);
	dofi_ia_trunc_sink(ia, name, info);
	if (!ia->traits->no_sigpipe)
		dofi_nopipe_need();

	rc = DOFI_NOPIPE(fi_fabric(info->fabric_attr, &ia->fabric, NULL));
	if (rc != 0)
		goto err_fi;
	rc = dofi_dom_open(ia, &ia->dom0);
	if (rc != 0)
		goto err_fi;
	cm_ops = dofi_ia_backend(info->ep_attr->type);
	if (cm_ops == NULL) {
		dof_warn(DOFI_LOG,
		         "IA '%s': no connection backend for endpoint type %d",
		         name, (int)info->ep_attr->type);
		ret = DAT_ERROR(DAT_PROVIDER_NOT_FOUND,
		                DAT_NAME_NOT_REGISTERED);
		goto err_close;
	}
	if (dofi_cm_ia_open(ia, cm_ops) != DOF_OK) {
		ret = DAT_ERROR(DAT_INSUFFICIENT_RESOURCES, 0);
		goto err_close;
	}
	if (info->src_addr != NULL && info->addr_format == FI_SOCKADDR_IN &&
	    info->src_addrlen >= sizeof(struct sockaddr_in)) {
		memcpy(&ia->addr, info->src_addr, sizeof(ia->addr));
		ia->addr.sin_port = 0;
	} else if (ia->addr.sin_family != AF_INET) {
		/* Unless the backend chose one (RDM: its channel's IP). */
		ia->addr.sin_family = AF_INET;
	}
	/* The backend may know its limit (RDM: its own protocol's). */
	if (ia->cm_data_size == 0)
		ia->cm_data_size = dofi_ia_cm_data_size(ia);
	if (ia->cm_data_size > 256 + DOFI_CM_HDR_SIZE)
		ia->cm_data_size = 256 + DOFI_CM_HDR_SIZE;
	dofi_ia_fill_attrs(ia);

	if (*async_evd == DAT_HANDLE_NULL) {
		ia->async_evd = dofi_evd_internal_create(
		        ia, qlen > 8 ? qlen : 8, DAT_EVD_ASYNC_FLAG);
		if (ia->async_evd == NULL) {
			ret = DAT_ERROR(DAT_INSUFFICIENT_RESOURCES,
			                DAT_RESOURCE_MEMORY);
			goto err_close;
		}
		ia->async_evd_ours = 1;
	} else {
		ia->async_evd = dofi_ia_given_async(*async_evd);
		if (ia->async_evd == NULL) {
			ret = DAT_ERROR(DAT_INVALID_HANDLE,
			                DAT_INVALID_HANDLE_EVD_ASYNC);
			goto err_close;
		}
		atomic_fetch_add(&ia->async_evd->nref, 1);
	}

	ia->progress_mode = dofi_progress_mode(info->fabric_attr->prov_name);
	ia->wait_hot_ns = dofi_wait_hot_ns(name);
	if (dofi_progress_start(ia) != DOF_OK) {
		ret = DAT_ERROR(DAT_INSUFFICIENT_RESOURCES, 0);
		goto err_close;
	}
	{
		char a[INET_ADDRSTRLEN];

		inet_ntop(AF_INET, &ia->addr.sin_addr, a, sizeof(a));
		dof_info(DOFI_LOG,
		         "IA '%s' open: %s domain %s, address %s, CM data %zu",
		         name, info->fabric_attr->prov_name,
		         info->domain_attr->name, a, ia->cm_data_size);
	}
	if (ia->async_evd_ours)
		*async_evd = (DAT_EVD_HANDLE)ia->async_evd;
	*ia_out = (DAT_IA_HANDLE)ia;
	return DAT_SUCCESS;

err_fi:
	dof_warn(DOFI_LOG, "IA '%s': libfabric %s setup failed: %s", name,
	         info->fabric_attr->prov_name, fi_strerror(-rc));
	ret = dofi_status_to_dat(dofi_fi_status(rc));
err_close:
	if (ia->async_evd_ours)
		dofi_evd_destroy(ia->async_evd);
	else if (ia->async_evd != NULL)
		atomic_fetch_sub(&ia->async_evd->nref, 1); /* the consumer's */
	dofi_cm_ia_close(ia);
	dofi_dom_close(&ia->dom0);
	if (ia->fabric)
		fi_close(&ia->fabric->fid);
	fi_freeinfo(ia->info);
	pthread_mutex_destroy(&ia->defer_lock);
	pthread_mutex_destroy(&ia->lock);
	dofi_obj_free(ia);
	return ret;
}

DAT_RETURN dofi_ia_query(DAT_IA_HANDLE h, DAT_EVD_HANDLE *async_evd,
                         DAT_IA_ATTR_MASK ia_mask, DAT_IA_ATTR *ia_attr,
                         DAT_PROVIDER_ATTR_MASK prov_mask,
                         DAT_PROVIDER_ATTR *prov_attr)
{
	dofi_ia_t *ia = dofi_obj_get(h, DOFI_OBJ_IA, __func__);

	if (ia == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	if ((ia_mask && ia_attr == NULL) || (prov_mask && prov_attr == NULL))
		return DAT_ERROR(DAT_INVALID_PARAMETER, 0);
	if (async_evd != NULL)
		*async_evd = (DAT_EVD_HANDLE)ia->async_evd;
	if (ia_mask && ia_attr != NULL)
		*ia_attr = ia->ia_attr;
	if (prov_mask && prov_attr != NULL)
		memcpy(prov_attr, &ia->prov_attr, sizeof(*prov_attr));
	return DAT_SUCCESS;
}

/* Whether the consumer still owns objects (the internal async EVD aside). */
static int dofi_ia_busy(dofi_ia_t *ia)
{
	int t;

	for (t = DOFI_OBJ_PZ; t < DOFI_OBJ_LAST; t++) {
		dofi_list_t *e;

		for (e = ia->objs[t].next; e != &ia->objs[t]; e = e->next) {
			dofi_obj_t *o = dofi_container_of(e, dofi_obj_t, link);

			if (ia->async_evd_ours && o == &ia->async_evd->obj)
				continue;
			if (t == DOFI_OBJ_CR)
				continue; /* pending requests go with the IA */
			return 1;
		}
	}
	return 0;
}

static void dofi_ia_release_all(dofi_ia_t *ia)
{
	dofi_list_t *e;

	/* Connections first: they reference EVDs, PZs and LMRs. */
	while (!dofi_list_empty(&ia->objs[DOFI_OBJ_EP])) {
		e = ia->objs[DOFI_OBJ_EP].next;
		dofi_ep_destroy(dofi_container_of(e, dofi_ep_t, obj.link));
	}
	dofi_srq_release_all(ia);
	while (!dofi_list_empty(&ia->objs[DOFI_OBJ_CR])) {
		e = ia->objs[DOFI_OBJ_CR].next;
		dofi_cm_cr_destroy(dofi_container_of(e, dofi_cr_t, obj.link));
	}
	while (!dofi_list_empty(&ia->objs[DOFI_OBJ_PSP])) {
		e = ia->objs[DOFI_OBJ_PSP].next;
		dofi_cm_sp_destroy(dofi_container_of(e, dofi_sp_t, obj.link));
	}
	while (!dofi_list_empty(&ia->objs[DOFI_OBJ_RSP])) {
		e = ia->objs[DOFI_OBJ_RSP].next;
		dofi_cm_sp_destroy(dofi_container_of(e, dofi_sp_t, obj.link));
	}
	dofi_mem_release_all(ia);
	while (!dofi_list_empty(&ia->objs[DOFI_OBJ_EVD])) {
		e = ia->objs[DOFI_OBJ_EVD].next;
		dofi_evd_destroy(dofi_container_of(e, dofi_evd_t, obj.link));
	}
	while (!dofi_list_empty(&ia->objs[DOFI_OBJ_CNO])) {
		dofi_cno_t *cno;

		e = ia->objs[DOFI_OBJ_CNO].next;
		cno = dofi_container_of(e, dofi_cno_t, obj.link);
		close(cno->efd);
		pthread_mutex_destroy(&cno->lock);
		dofi_obj_free(cno);
	}
	while (!dofi_list_empty(&ia->objs[DOFI_OBJ_PZ])) {
		e = ia->objs[DOFI_OBJ_PZ].next;
		dofi_obj_free(dofi_container_of(e, dofi_pz_t, obj.link));
	}
}

DAT_RETURN dofi_ia_close(DAT_IA_HANDLE h, DAT_CLOSE_FLAGS flags)
{
	dofi_ia_t *ia = dofi_obj_get(h, DOFI_OBJ_IA, __func__);

	if (ia == NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	if (flags != DAT_CLOSE_ABRUPT_FLAG && flags != DAT_CLOSE_GRACEFUL_FLAG)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	pthread_mutex_lock(&ia->lock);
	if (flags == DAT_CLOSE_GRACEFUL_FLAG && dofi_ia_busy(ia)) {
		pthread_mutex_unlock(&ia->lock);
		dof_warn(DOFI_LOG, "dat_ia_close graceful: the IA still has "
		                   "objects; free them or close abruptly");
		return DAT_ERROR(DAT_INVALID_STATE,
		                 DAT_INVALID_STATE_IA_IN_USE);
	}
	pthread_mutex_unlock(&ia->lock);

	/* The progress thread touches EVDs and EPs: stop it first. */
	dofi_progress_stop(ia);
	pthread_mutex_lock(&ia->lock);
	if (!ia->async_evd_ours && ia->async_evd != NULL)
		atomic_fetch_sub(&ia->async_evd->nref, 1);
	dofi_ia_release_all(ia);
	pthread_mutex_unlock(&ia->lock);

	dofi_cm_ia_close(ia);
	while (ia->dom0.next != NULL) {
		dofi_dom_t *d = ia->dom0.next;

		ia->dom0.next = d->next;
		dofi_dom_close(d);
		free(d);
	}
	dofi_dom_close(&ia->dom0);
	fi_close(&ia->fabric->fid);
	fi_freeinfo(ia->info);
	{
		unsigned i;

		for (i = 0; i < 256; i++)
			free(ia->lmr_chunks[i]);
	}
	pthread_mutex_destroy(&ia->defer_lock);
	pthread_mutex_destroy(&ia->lock);
	dofi_obj_free(ia);
	return DAT_SUCCESS;
}
