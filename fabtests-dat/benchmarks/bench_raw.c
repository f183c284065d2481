/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * fabtests-dat benchmarks, --raw: the same operations directly on
 * libfabric, configured as libfabric's own fabtests benchmarks are: an
 * FI_EP_MSG endpoint of the IA's provider (ofi-tcp -> tcp, ofi-sockets ->
 * sockets), FI_THREAD_DOMAIN, one CQ polled with fi_cq_read and no wait
 * object, one EQ. --raw-thread=safe and --raw-wait=fd switch to what a
 * DAT provider with a progress thread needs, to measure what that costs;
 * --raw-progress=thread adds the thread itself (raw_progress_main).
 * dat_cm_rate's EPs take DAT's default sizes (256 each way), and with
 * --evd-per-ep a CQ each.
 *
 * Where the provider has no MSG endpoint (ofi-rxm -> tcp;ofi_rxm,
 * ofi-shm -> shm, ofi-rxd -> udp;ofi_rxd, ofi-efa -> efa) or
 * --raw-ep=rdm says so, an FI_EP_RDM endpoint per connection, as
 * dapl-ofi has on those fabrics (dofi_cm_rdm.c): bound to one AV
 * (FI_AV_TABLE) and the CQ, asked for what dapl-ofi asks of fi_getinfo
 * there (send after send and after write, else after send alone; rxm's
 * memory in FI_MR_BASIC mode; rxm's FI_OFI_RXM_SAR_LIMIT,
 * FI_OFI_RXM_ENABLE_DYN_RBUF and FI_OFI_RXM_MSG_RX_SIZE as dapl-ofi sets
 * them; writes FI_DELIVERY_COMPLETE where dapl-ofi's are, unless
 * --raw-write says). A connection is made on the side channel: the
 * client sends its endpoint's name (fi_getname) in a REQ, the server
 * opens an endpoint, inserts the name, posts a receive for the client's
 * first message and answers with its own name in a REP; the client
 * inserts that and sends a zero-byte message (dapl-ofi's passive side
 * takes the same one); each side is established once that message has
 * gone (client) or come (server). A BYE from the client ends it.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_rma.h>
#include <sys/uio.h>

#include "bench_common.h"

#define RAW_FI_VERSION FI_VERSION(1, 17)
#define RAW_SRC_ADDR   "127.0.0.1"
/*
 * --evd-per-ep: tcp notices connects and a peer's shutdown only through
 * CQ progress, so an empty look at the EQ reads the CQs of this many of
 * the newest connections (those being set up) and of this many more in
 * turn (the idle ones).
 */
#define RAW_PROGRESS_NEWEST 64
#define RAW_PROGRESS_SWEEP  16

/* RDM: the side channel's connection messages (struct raw_cm_hdr). */
#define RAW_CM_MAGIC 0x4d434452u /* "RDCM" */
#define RAW_NAME_MAX 256
enum { RAW_CM_REQ = 1, RAW_CM_REP, RAW_CM_BYE };

struct raw_cm_hdr {
	uint32_t magic;
	uint32_t type;
	uint64_t id;  /* the client's number for the connection */
	uint32_t len; /* of the endpoint name that follows */
	uint32_t pad;
};

/* RDM: a connection request, the req of a BENCH_CM_CONNREQ. */
struct raw_req {
	uint64_t id;
	size_t len;
	unsigned char name[RAW_NAME_MAX];
};

/* What a connection has besides its endpoint (bench_conn.priv). */
struct raw_conn {
	struct bench_conn *conn;
	struct fid_cq *cq; /* its own (--evd-per-ep), else NULL */
	fi_addr_t peer;    /* RDM: where its operations go; MSG: 0 */
	bool active;       /* RDM: the client's side */
	bool warm;         /* RDM: its first message under way */
	bool bye;          /* RDM: the client's BYE came before that */
	bool unsent;       /* RDM: that message still to be posted */
	struct raw_conn *wnext, *wprev; /* raw_state.warm */
	struct raw_conn *qnext;         /* raw_state.byeq */
	/* --raw-cm=dat, MSG passive side: */
	bool rtu_in; /* the requester's zero-byte message came */
	bool up;     /* FI_CONNECTED came */
};

/*
 * --raw-cm=dat: the private data each way, as long as dapl-ofi's CM
 * header (the content is not looked at).
 */
#define RAW_CM_PDATA 7
static const unsigned char raw_cm_pdata[RAW_CM_PDATA];

struct raw_state {
	fid_t end_pending; /* --raw-cm=dat: an end held for its message */
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_eq *eq;
	struct fid_cq *cq;
	struct fid_pep *pep;
	struct fid_av *av;         /* RDM */
	struct bench_conn *cursor; /* --evd-per-ep: the next CQ to progress */
	struct raw_conn *warm;     /* RDM: first messages under way */
	struct raw_conn *byeq;     /* RDM: ends to report */
	uint64_t next_key;
	uint64_t next_id; /* RDM: the client's connection numbers */
	bool virt_addr;
	bool rdm;
	bool av_keep; /* RDM: leave peers in the AV (rxm, as dapl-ofi) */
	/*
	 * --raw-progress: the second thread, told to end under prog_lock.
	 * Its CQ reads and our endpoint and AV changes take ctl_lock
	 * (recursive): rxm's CQ read crashed beside a concurrent
	 * fi_endpoint or fi_close, FI_THREAD_SAFE or not.
	 */
	pthread_t prog;
	pthread_mutex_t prog_lock;
	pthread_cond_t prog_cond;
	pthread_mutex_t ctl_lock;
	bool prog_on;
	bool prog_stop;
};

static void raw_ctl_lock(struct raw_state *st)
{
	if (st->prog_on)
		pthread_mutex_lock(&st->ctl_lock);
}

static void raw_ctl_unlock(struct raw_state *st)
{
	if (st->prog_on)
		pthread_mutex_unlock(&st->ctl_lock);
}

static struct raw_conn *raw_rc(const struct bench_conn *conn)
{
	return conn->priv;
}

static struct raw_state *raw_st(struct bench_ctx *ctx)
{
	return ctx->priv;
}

#define RAW_ERR(call, ret) \
	BENCH_ERR("%s: %s (%d)", call, fi_strerror((int)-(ret)), (int)(ret))

/* The libfabric provider behind an IA name (dapl-ofi's built-ins). */
static const char *raw_prov_name(const char *ia_name)
{
	static const char *const map[][2] = {
	        {"ofi", "tcp"},
	        {"ofi-tcp", "tcp"},
	        {"ofi-rxm", "tcp;ofi_rxm"},
	        {"ofi-rxd", "udp;ofi_rxd"},
	};
	size_t i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(ia_name, map[i][0]) == 0)
			return map[i][1];
	if (strncmp(ia_name, "ofi-", 4) == 0)
		return ia_name + 4;
	return ia_name;
}

static bool raw_is_rxm(const char *prov)
{
	return prov && strstr(prov, "ofi_rxm") != NULL;
}

static struct fi_info *raw_hints(struct bench_ctx *ctx, enum fi_ep_type type)
{
	struct bench_opts *o = ctx->opts;
	struct fi_info *hints;

	hints = fi_allocinfo();
	if (!hints)
		return NULL;
	hints->ep_attr->type = type;
	hints->caps = FI_MSG | FI_RMA |
	              (o->test == BENCH_TEST_ATOMIC ? FI_ATOMIC : 0);
	hints->mode = 0;
	if (type == FI_EP_MSG)
		hints->addr_format = FI_SOCKADDR_IN;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
	                              FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->domain_attr->threading =
	        o->raw_thread_safe ? FI_THREAD_SAFE : FI_THREAD_DOMAIN;
	hints->fabric_attr->prov_name = strdup(raw_prov_name(o->ia_name));
	if (!hints->fabric_attr->prov_name) {
		fi_freeinfo(hints);
		return NULL;
	}
	return hints;
}

/* Of list, the entry on the loopback (domain or fabric "lo", or source
 * address 127.0.0.1), else the first; the rest freed. */
static struct fi_info *raw_pick_lo(struct fi_info *list)
{
	struct fi_info *cur, *pick = NULL, **link;
	const struct sockaddr_in *sin;

	for (cur = list; cur && !pick; cur = cur->next) {
		sin = cur->src_addr;
		if ((cur->domain_attr->name &&
		     strcmp(cur->domain_attr->name, "lo") == 0) ||
		    (cur->fabric_attr->name &&
		     strcmp(cur->fabric_attr->name, "lo") == 0) ||
		    (cur->addr_format == FI_SOCKADDR_IN && sin &&
		     cur->src_addrlen >= sizeof(*sin) &&
		     ntohl(sin->sin_addr.s_addr) == INADDR_LOOPBACK))
			pick = cur;
	}
	if (!pick)
		pick = list;
	for (link = &list; *link != pick; link = &(*link)->next)
		;
	*link = pick->next;
	pick->next = NULL;
	if (list)
		fi_freeinfo(list);
	return pick;
}

/*
 * RDM, as dapl-ofi asks on these fabrics (dofi_ia_open): send after send
 * and after write, else send after send alone (what tcp;ofi_rxm and shm
 * grant on 1.17); no address: the loopback entry is picked, and every
 * endpoint takes an address of its own.
 */
static int raw_getinfo_rdm(struct bench_ctx *ctx, struct fi_info **out)
{
	static const uint64_t orders[] = {FI_ORDER_SAS | FI_ORDER_SAW,
	                                  FI_ORDER_SAS};
	struct fi_info *hints, *list = NULL, *info;
	size_t i;
	int ret = -FI_ENODATA;

	for (i = 0; i < sizeof(orders) / sizeof(orders[0]); i++) {
		hints = raw_hints(ctx, FI_EP_RDM);
		if (!hints)
			return -ENOMEM;
		hints->tx_attr->msg_order = orders[i];
		hints->rx_attr->msg_order = orders[i];
		ret = fi_getinfo(RAW_FI_VERSION, NULL, NULL, 0, hints, &list);
		fi_freeinfo(hints);
		if (ret == 0 && list)
			break;
	}
	if (ret || !list) {
		RAW_ERR("fi_getinfo(FI_EP_RDM)", ret);
		return ret == -FI_ENODATA ? -ENODATA : -EIO;
	}
	info = raw_pick_lo(list);
	/* Each endpoint an address of its own: an IP one on any port; a
	 * name (shm's) is made unique per endpoint by the provider. */
	if (info->addr_format == FI_SOCKADDR_IN && info->src_addr &&
	    info->src_addrlen >= sizeof(struct sockaddr_in))
		((struct sockaddr_in *)info->src_addr)->sin_port = 0;
	*out = info;
	return 0;
}

static int raw_getinfo(struct bench_ctx *ctx, struct fi_info **out)
{
	struct bench_opts *o = ctx->opts;
	struct fi_info *hints;
	char port[8];
	int ret;

	if (o->raw_ep == BENCH_RAW_EP_RDM)
		return raw_getinfo_rdm(ctx, out);
	hints = raw_hints(ctx, FI_EP_MSG);
	if (!hints)
		return -ENOMEM;
	snprintf(port, sizeof(port), "%u", o->cm_port);
	if (ctx->server)
		ret = fi_getinfo(RAW_FI_VERSION, RAW_SRC_ADDR, port, FI_SOURCE,
		                 hints, out);
	else
		ret = fi_getinfo(RAW_FI_VERSION, o->dst_addr, port, 0, hints,
		                 out);
	fi_freeinfo(hints);
	/* No MSG endpoint on this provider: RDM, unless told MSG. */
	if (ret == -FI_ENODATA && o->raw_ep == BENCH_RAW_EP_AUTO)
		return raw_getinfo_rdm(ctx, out);
	if (ret) {
		RAW_ERR("fi_getinfo", ret);
		return ret == -FI_ENODATA ? -ENODATA : -EIO;
	}
	return 0;
}

/* The endpoint's local address, as text: an IP, or a name (shm). */
static const char *raw_addr_str(const struct fi_info *info, char *buf,
                                size_t len)
{
	if (info->addr_format == FI_ADDR_STR && info->src_addr) {
		snprintf(buf, len, "%.*s", (int)info->src_addrlen,
		         (const char *)info->src_addr);
		return buf;
	}
	return bench_addr_str(info->src_addr, buf, len);
}

/*
 * RDM: what dapl-ofi asks on the fabric besides fi_getinfo's hints
 * (dofi_ia_open, dofi_traits.c): memory in FI_MR_BASIC mode on rxm (its
 * tcp core would take remote addresses as offsets), RDMA writes
 * FI_DELIVERY_COMPLETE on rxm (DAPL_OFI_WRITE_COMPLETION decides, as it
 * does for DAT) unless --raw-write says, and peers left in the AV on
 * rxm.
 */
static void raw_rdm_as_dat(struct bench_ctx *ctx, struct raw_state *st)
{
	struct bench_opts *o = ctx->opts;
	const char *env = getenv("DAPL_OFI_WRITE_COMPLETION");
	bool rxm = raw_is_rxm(st->info->fabric_attr->prov_name);

	if (rxm)
		st->info->domain_attr->mr_mode = FI_MR_BASIC;
	st->av_keep = rxm;
	if (o->raw_write_set)
		return;
	if (env && strcmp(env, "delivery") == 0)
		o->raw_delivery = true;
	else if (env && strcmp(env, "transmit") == 0)
		o->raw_delivery = false;
	else
		o->raw_delivery = rxm;
}

static int raw_progress_start(struct bench_ctx *ctx);

static int raw_open(struct bench_ctx *ctx)
{
	struct fi_eq_attr eq_attr = {.wait_obj = FI_WAIT_UNSPEC};
	struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
	struct fi_cq_attr cq_attr = {0};
	struct raw_state *st;
	struct fi_info *info;
	char abuf[RAW_NAME_MAX];
	size_t txs, rxs;
	int ret;

	/* Its CQ reads would take the data completions of --rounds. */
	if (ctx->opts->raw_cm_dat &&
	    (ctx->opts->rounds || ctx->opts->evd_per_ep)) {
		BENCH_ERR("--raw-cm=dat is for connection cycles alone: not "
		          "with --rounds or --evd-per-ep");
		return -EINVAL;
	}
	/*
	 * What dapl-ofi sets for tcp;ofi_rxm (dapl-ofi(7)) unless the
	 * environment has them, before libfabric reads them: receives
	 * completed in posting order, messages through bounce buffers,
	 * 256 of them posted an endpoint.
	 */
	(void)setenv("FI_OFI_RXM_SAR_LIMIT", "2147483648", 0);
	(void)setenv("FI_OFI_RXM_ENABLE_DYN_RBUF", "0", 0);
	(void)setenv("FI_OFI_RXM_MSG_RX_SIZE", "256", 0);

	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	ctx->priv = st;
	st->next_key = 1;
	st->next_id = 1;

	ret = raw_getinfo(ctx, &st->info);
	if (ret)
		goto err;
	info = st->info;
	st->rdm = info->ep_attr->type == FI_EP_RDM;
	/* RMA addresses are virtual addresses, as DAT's RMR triplets. */
	info->domain_attr->mr_mode |= FI_MR_VIRT_ADDR;
	if (st->rdm)
		raw_rdm_as_dat(ctx, st);
	if (ctx->opts->ep_default) {
		info->tx_attr->size = BENCH_DEF_EP_DTOS;
		info->rx_attr->size = BENCH_DEF_EP_DTOS;
	}
	BENCH_VERBOSE(ctx, "raw: %s: local address %s", ctx->opts->ia_name,
	              raw_addr_str(info, abuf, sizeof(abuf)));
	BENCH_VERBOSE(ctx, "raw: provider %s, fabric %s, domain %s, %s, %s",
	              info->fabric_attr->prov_name, info->fabric_attr->name,
	              info->domain_attr->name,
	              info->domain_attr->threading == FI_THREAD_SAFE
	                      ? "FI_THREAD_SAFE"
	                      : "FI_THREAD_DOMAIN",
	              st->rdm ? "FI_EP_RDM" : "FI_EP_MSG");
	if (st->rdm)
		BENCH_VERBOSE(ctx,
		              "raw: msg_order 0x%llx, mr_mode 0x%llx, writes "
		              "%s, FI_OFI_RXM_SAR_LIMIT=%s "
		              "FI_OFI_RXM_ENABLE_DYN_RBUF=%s "
		              "FI_OFI_RXM_MSG_RX_SIZE=%s",
		              (unsigned long long)info->tx_attr->msg_order,
		              (unsigned long long)info->domain_attr->mr_mode,
		              ctx->opts->raw_delivery ? "FI_DELIVERY_COMPLETE"
		                                      : "transmit complete",
		              getenv("FI_OFI_RXM_SAR_LIMIT"),
		              getenv("FI_OFI_RXM_ENABLE_DYN_RBUF"),
		              getenv("FI_OFI_RXM_MSG_RX_SIZE"));

	ret = fi_fabric(info->fabric_attr, &st->fabric, NULL);
	if (ret) {
		RAW_ERR("fi_fabric", ret);
		goto err;
	}
	if (!st->rdm) {
		eq_attr.size = (size_t)bench_eq_size(ctx->opts);
		ret = fi_eq_open(st->fabric, &eq_attr, &st->eq, NULL);
		if (ret) {
			RAW_ERR("fi_eq_open", ret);
			goto err;
		}
	}
	ret = fi_domain(st->fabric, info, &st->domain, NULL);
	if (ret) {
		RAW_ERR("fi_domain", ret);
		goto err;
	}
	st->virt_addr = (info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) != 0 ||
	                info->domain_attr->mr_mode == FI_MR_BASIC;
	if (st->rdm) {
		ret = fi_av_open(st->domain, &av_attr, &st->av, NULL);
		if (ret) {
			RAW_ERR("fi_av_open", ret);
			goto err;
		}
	}

	/* The immediate data needs the larger entries. */
	cq_attr.format = ctx->opts->test == BENCH_TEST_WRITEIMM
	                         ? FI_CQ_FORMAT_DATA
	                         : FI_CQ_FORMAT_MSG;
	cq_attr.wait_obj = ctx->opts->raw_wait_fd ? FI_WAIT_FD : FI_WAIT_NONE;
	cq_attr.size = (size_t)bench_cq_size(ctx->opts);
	ret = fi_cq_open(st->domain, &cq_attr, &st->cq, NULL);
	if (ret) {
		RAW_ERR("fi_cq_open", ret);
		goto err;
	}

	txs = info->tx_attr->size;
	rxs = info->rx_attr->size;
	ctx->max_window = (int)(txs < 16 ? 1 : txs - 8);
	if ((rxs - 8) / 2 < (size_t)ctx->max_window)
		ctx->max_window = (int)((rxs - 8) / 2);
	ctx->max_reads = ctx->max_window;
	ctx->max_msg = info->ep_attr->max_msg_size;
	ctx->max_rdma = info->ep_attr->max_msg_size;
	ret = raw_progress_start(ctx);
	if (ret)
		goto err;
	return 0;
err:
	bench_raw_ops.close(ctx);
	return ret < 0 ? ret : -EIO;
}

/*
 * --raw-progress: idle sleeps until raw_close; thread reads the CQ with
 * count 0 every BENCH_RAW_PROGRESS_US, which drives the provider and takes
 * no entry from the main thread (tcp, tcp;ofi_rxm, shm).
 */
static void *raw_progress_main(void *arg)
{
	struct bench_ctx *ctx = arg;
	struct raw_state *st = raw_st(ctx);
	bool drive = ctx->opts->raw_progress == BENCH_RAW_PROGRESS_THREAD;
	struct timespec t;

	pthread_mutex_lock(&st->prog_lock);
	while (!st->prog_stop) {
		if (!drive) {
			pthread_cond_wait(&st->prog_cond, &st->prog_lock);
			continue;
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		t.tv_nsec += BENCH_RAW_PROGRESS_US * 1000L;
		if (t.tv_nsec >= 1000000000L) {
			t.tv_sec++;
			t.tv_nsec -= 1000000000L;
		}
		(void)pthread_cond_timedwait(&st->prog_cond, &st->prog_lock,
		                             &t);
		if (st->prog_stop)
			break;
		pthread_mutex_unlock(&st->prog_lock);
		pthread_mutex_lock(&st->ctl_lock);
		(void)fi_cq_read(st->cq, NULL, 0);
		pthread_mutex_unlock(&st->ctl_lock);
		pthread_mutex_lock(&st->prog_lock);
	}
	pthread_mutex_unlock(&st->prog_lock);
	return NULL;
}

static int raw_progress_start(struct bench_ctx *ctx)
{
	struct raw_state *st = raw_st(ctx);
	pthread_mutexattr_t ma;
	pthread_condattr_t ca;
	int ret;

	if (ctx->opts->raw_progress == BENCH_RAW_PROGRESS_NONE)
		return 0;
	pthread_mutex_init(&st->prog_lock, NULL);
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&st->ctl_lock, &ma);
	pthread_mutexattr_destroy(&ma);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&st->prog_cond, &ca);
	pthread_condattr_destroy(&ca);
	ret = pthread_create(&st->prog, NULL, raw_progress_main, ctx);
	if (ret) {
		BENCH_ERR("pthread_create: %s", strerror(ret));
		pthread_mutex_destroy(&st->ctl_lock);
		pthread_cond_destroy(&st->prog_cond);
		pthread_mutex_destroy(&st->prog_lock);
		return -ret;
	}
	st->prog_on = true;
	BENCH_VERBOSE(ctx, "raw: a second thread, %s",
	              ctx->opts->raw_progress == BENCH_RAW_PROGRESS_THREAD
	                      ? "reading the CQ every 2 ms"
	                      : "idle");
	return 0;
}

static void raw_progress_stop(struct raw_state *st)
{
	if (!st->prog_on)
		return;
	pthread_mutex_lock(&st->prog_lock);
	st->prog_stop = true;
	pthread_cond_signal(&st->prog_cond);
	pthread_mutex_unlock(&st->prog_lock);
	pthread_join(st->prog, NULL);
	pthread_mutex_destroy(&st->ctl_lock);
	pthread_cond_destroy(&st->prog_cond);
	pthread_mutex_destroy(&st->prog_lock);
	st->prog_on = false;
}

static void raw_close(struct bench_ctx *ctx)
{
	struct raw_state *st = raw_st(ctx);

	if (!st)
		return;
	raw_progress_stop(st);
	while (ctx->conns)
		bench_raw_ops.free_conn(ctx->conns);
	bench_conns_fini(ctx);
	if (st->pep)
		fi_close(&st->pep->fid);
	if (st->av)
		fi_close(&st->av->fid);
	if (st->cq)
		fi_close(&st->cq->fid);
	if (st->domain)
		fi_close(&st->domain->fid);
	if (st->eq)
		fi_close(&st->eq->fid);
	if (st->fabric)
		fi_close(&st->fabric->fid);
	if (st->info)
		fi_freeinfo(st->info);
	free(st);
	ctx->priv = NULL;
}

static int raw_listen(struct bench_ctx *ctx)
{
	struct raw_state *st = raw_st(ctx);
	int ret;

	/* RDM: requests come on the side channel (raw_cm_poll_rdm). */
	if (st->rdm)
		return 0;
	ret = fi_passive_ep(st->fabric, st->info, &st->pep, NULL);
	if (ret) {
		RAW_ERR("fi_passive_ep", ret);
		return -EIO;
	}
	ret = fi_pep_bind(st->pep, &st->eq->fid, 0);
	if (ret) {
		RAW_ERR("fi_pep_bind", ret);
		return -EIO;
	}
	ret = fi_listen(st->pep);
	if (ret) {
		RAW_ERR("fi_listen", ret);
		return -EIO;
	}
	if (st->info->src_addr &&
	    st->info->src_addrlen >= sizeof(ctx->fabric_addr))
		memcpy(&ctx->fabric_addr, st->info->src_addr,
		       sizeof(ctx->fabric_addr));
	return 0;
}

static int raw_reg(struct bench_ctx *ctx, void *buf, size_t len,
                   struct bench_mr *mr)
{
	struct raw_state *st = raw_st(ctx);
	struct fid_mr *fmr;
	int ret;

	ret = fi_mr_reg(st->domain, buf, len,
	                FI_SEND | FI_RECV | FI_READ | FI_WRITE |
	                        (bench_test_rdma(ctx->opts->test)
	                                 ? FI_REMOTE_READ | FI_REMOTE_WRITE
	                                 : 0),
	                0, st->next_key++, 0, &fmr, NULL);
	if (ret) {
		RAW_ERR("fi_mr_reg", ret);
		return -EIO;
	}
	mr->buf = buf;
	mr->len = len;
	mr->handle = fmr;
	mr->desc = fi_mr_desc(fmr);
	mr->rkey = fi_mr_key(fmr);
	mr->lkey = 0;
	mr->raddr = st->virt_addr ? (uint64_t)(uintptr_t)buf : 0;
	return 0;
}

static void raw_dereg(struct bench_ctx *ctx, struct bench_mr *mr)
{
	(void)ctx;
	if (mr->handle)
		fi_close(&((struct fid_mr *)mr->handle)->fid);
	mr->handle = NULL;
}

/* An EP's own CQ (--evd-per-ep), set up as the shared one. */
static int raw_cq_open(struct bench_ctx *ctx, struct fid_cq **cq)
{
	struct fi_cq_attr cq_attr = {0};
	int ret;

	cq_attr.format = FI_CQ_FORMAT_MSG;
	cq_attr.wait_obj = ctx->opts->raw_wait_fd ? FI_WAIT_FD : FI_WAIT_NONE;
	cq_attr.size = BENCH_EP_EVD_QLEN;
	ret = fi_cq_open(raw_st(ctx)->domain, &cq_attr, cq, NULL);
	if (ret)
		RAW_ERR("fi_cq_open(per EP)", ret);
	return ret;
}

/* A connection's memory: the bench_conn and our raw_conn behind it. */
static struct bench_conn *raw_conn_new(void)
{
	struct bench_conn *conn;
	struct raw_conn *rc;

	conn = calloc(1, sizeof(*conn));
	rc = calloc(1, sizeof(*rc));
	if (!conn || !rc) {
		free(conn);
		free(rc);
		return NULL;
	}
	conn->priv = rc;
	rc->conn = conn;
	return conn;
}

/*
 * A new endpoint on info, bound to the EQ (MSG) or the AV (RDM) and to the
 * shared CQ or (--evd-per-ep) one of its own, in the table under key
 * (MSG: the endpoint's fid; RDM: the connection's number).
 */
static int raw_ep_setup_locked(struct bench_ctx *ctx, struct fi_info *info,
                               uint64_t key, struct bench_conn **out)
{
	struct raw_state *st = raw_st(ctx);
	struct fid_cq *cq = st->cq;
	struct bench_conn *conn;
	struct raw_conn *rc;
	struct fid_ep *ep;
	int ret;

	conn = raw_conn_new();
	if (!conn)
		return -ENOMEM;
	rc = raw_rc(conn);
	if (ctx->opts->evd_per_ep) {
		if (raw_cq_open(ctx, &cq)) {
			free(rc);
			free(conn);
			return -EIO;
		}
		rc->cq = cq;
	}
	if (ctx->opts->ep_default) {
		info->tx_attr->size = BENCH_DEF_EP_DTOS;
		info->rx_attr->size = BENCH_DEF_EP_DTOS;
	}
	ret = fi_endpoint(st->domain, info, &ep, conn);
	if (ret) {
		RAW_ERR("fi_endpoint", ret);
		if (rc->cq)
			fi_close(&cq->fid);
		free(rc);
		free(conn);
		return -EIO;
	}
	conn->ep = ep;
	if (bench_conn_add(ctx, conn, st->rdm ? key : (uintptr_t)&ep->fid)) {
		fi_close(&ep->fid);
		if (rc->cq)
			fi_close(&cq->fid);
		free(rc);
		free(conn);
		return -ENOMEM;
	}
	ret = st->rdm ? fi_ep_bind(ep, &st->av->fid, 0)
	              : fi_ep_bind(ep, &st->eq->fid, 0);
	if (ret) {
		RAW_ERR(st->rdm ? "fi_ep_bind(av)" : "fi_ep_bind(eq)", ret);
		goto err;
	}
	ret = fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV);
	if (ret) {
		RAW_ERR("fi_ep_bind(cq)", ret);
		goto err;
	}
	ret = fi_enable(ep);
	if (ret) {
		RAW_ERR("fi_enable", ret);
		goto err;
	}
	*out = conn;
	return 0;
err:
	bench_raw_ops.free_conn(conn);
	return -EIO;
}

static int raw_ep_setup(struct bench_ctx *ctx, struct fi_info *info,
                        uint64_t key, struct bench_conn **out)
{
	struct raw_state *st = raw_st(ctx);
	int ret;

	raw_ctl_lock(st);
	ret = raw_ep_setup_locked(ctx, info, key, out);
	raw_ctl_unlock(st);
	return ret;
}

/* ---- RDM: connections over the side channel ------------------------------ */

/* A connection message, whole, or -EIO (the peer has gone). */
static int raw_cm_send(struct bench_ctx *ctx, uint32_t type, uint64_t id,
                       const void *name, size_t len)
{
	unsigned char buf[sizeof(struct raw_cm_hdr) + RAW_NAME_MAX];
	struct raw_cm_hdr h = {.magic = RAW_CM_MAGIC,
	                       .type = type,
	                       .id = id,
	                       .len = (uint32_t)len};
	size_t n = sizeof(h) + len, off = 0;
	ssize_t w;

	if (len > RAW_NAME_MAX)
		return -EINVAL;
	memcpy(buf, &h, sizeof(h));
	if (len)
		memcpy(buf + sizeof(h), name, len);
	/* Quietly: a BYE at the end may find the peer gone already. */
	while (off < n) {
		w = send(ctx->oob_fd, buf + off, n - off, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -EIO;
		off += (size_t)w;
	}
	return 0;
}

/*
 * The next connection message on the side channel, if one is there: 1
 * (h and name filled), 0 when what comes next is not one (the program's
 * own words stay unread), < 0 on error.
 */
static int raw_cm_recv(struct bench_ctx *ctx, struct raw_cm_hdr *h,
                       unsigned char *name)
{
	ssize_t n;
	int ret;

	/* Its magic is enough: the rest is on its way. */
	n = recv(ctx->oob_fd, &h->magic, sizeof(h->magic),
	         MSG_PEEK | MSG_DONTWAIT);
	if (n < (ssize_t)sizeof(h->magic) || h->magic != RAW_CM_MAGIC)
		return 0;
	ret = bench_oob_recv(ctx, h, sizeof(*h));
	if (ret)
		return ret;
	if (h->len > RAW_NAME_MAX || h->type < RAW_CM_REQ ||
	    h->type > RAW_CM_BYE) {
		BENCH_ERR("side channel: a bad connection message");
		return -EPROTO;
	}
	if (h->len) {
		ret = bench_oob_recv(ctx, name, h->len);
		if (ret)
			return ret;
	}
	return 1;
}

/* An endpoint name into the AV: rc->peer. */
static int raw_peer_insert(struct bench_ctx *ctx, struct raw_conn *rc,
                           const void *name)
{
	int ret;

	raw_ctl_lock(raw_st(ctx));
	ret = fi_av_insert(raw_st(ctx)->av, name, 1, &rc->peer, 0, NULL);
	raw_ctl_unlock(raw_st(ctx));
	if (ret != 1 || rc->peer == FI_ADDR_NOTAVAIL) {
		/* shm: at most 256 peers in an AV (SMR_MAX_PEERS, 1.17). */
		if (ret >= 0)
			BENCH_ERR("fi_av_insert: the peer's address is "
			          "refused, with %zu connections",
			          ctx->nconns);
		else
			RAW_ERR("fi_av_insert", ret);
		rc->peer = FI_ADDR_NOTAVAIL;
		return -EIO;
	}
	return 0;
}

static void raw_warm_add(struct raw_state *st, struct raw_conn *rc)
{
	rc->warm = true;
	rc->wprev = NULL;
	rc->wnext = st->warm;
	if (st->warm)
		st->warm->wprev = rc;
	st->warm = rc;
}

static void raw_warm_del(struct raw_state *st, struct raw_conn *rc)
{
	if (!rc->warm)
		return;
	if (rc->wprev)
		rc->wprev->wnext = rc->wnext;
	else
		st->warm = rc->wnext;
	if (rc->wnext)
		rc->wnext->wprev = rc->wprev;
	rc->wnext = rc->wprev = NULL;
	rc->warm = false;
}

/* The endpoint's name, for the peer. */
static int raw_getname(struct bench_conn *conn, unsigned char *name,
                       size_t *len)
{
	int ret;

	*len = RAW_NAME_MAX;
	ret = fi_getname(&((struct fid_ep *)conn->ep)->fid, name, len);
	if (ret || *len == 0 || *len > RAW_NAME_MAX) {
		RAW_ERR("fi_getname", ret ? ret : -FI_ETOOSMALL);
		return -EIO;
	}
	return 0;
}

/* Client: an endpoint, and its name to the server in a REQ. */
static int raw_connect_rdm(struct bench_ctx *ctx, struct bench_conn **out)
{
	struct raw_state *st = raw_st(ctx);
	unsigned char name[RAW_NAME_MAX];
	struct bench_conn *conn;
	uint64_t id = st->next_id++;
	size_t len;
	int ret;

	ret = raw_ep_setup(ctx, st->info, id, &conn);
	if (ret)
		return ret;
	raw_rc(conn)->active = true;
	raw_rc(conn)->peer = FI_ADDR_NOTAVAIL;
	ret = raw_getname(conn, name, &len);
	if (!ret)
		ret = raw_cm_send(ctx, RAW_CM_REQ, id, name, len);
	if (ret) {
		bench_raw_ops.free_conn(conn);
		return ret;
	}
	*out = conn;
	return 0;
}

/*
 * Server: an endpoint for the request, the client's name in the AV, a
 * receive for its first message, and our name back in a REP.
 */
static int raw_accept_rdm(struct bench_ctx *ctx, struct raw_req *req,
                          struct bench_conn **out)
{
	struct raw_state *st = raw_st(ctx);
	unsigned char name[RAW_NAME_MAX];
	struct bench_conn *conn;
	struct raw_conn *rc;
	size_t len;
	ssize_t r;
	int ret;

	ret = raw_ep_setup(ctx, st->info, req->id, &conn);
	if (ret) {
		free(req);
		return ret;
	}
	rc = raw_rc(conn);
	ret = raw_peer_insert(ctx, rc, req->name);
	free(req);
	if (ret)
		goto err;
	r = fi_recv(conn->ep, NULL, 0, NULL, FI_ADDR_UNSPEC, rc);
	if (r) {
		RAW_ERR("fi_recv(first message)", r);
		ret = -EIO;
		goto err;
	}
	raw_warm_add(st, rc);
	ret = raw_getname(conn, name, &len);
	if (!ret)
		ret = raw_cm_send(ctx, RAW_CM_REP, conn->key, name, len);
	if (ret)
		goto err;
	*out = conn;
	return 0;
err:
	bench_raw_ops.free_conn(conn);
	return ret;
}

/*
 * Client: the connection's first message, once. -FI_EAGAIN: later (shm
 * answers so until the peer has taken our endpoint in, which takes its
 * progress: the server's calls, in this thread with --loopback).
 */
static int raw_warm_send(struct raw_conn *rc)
{
	ssize_t r;

	r = fi_send(rc->conn->ep, NULL, 0, NULL, rc->peer, rc);
	if (r == -FI_EAGAIN) {
		(void)fi_cq_read(rc->cq ? rc->cq : raw_st(rc->conn->ctx)->cq,
		                 NULL, 0);
		return 0;
	}
	if (r) {
		RAW_ERR("fi_send(first message)", r);
		return -EIO;
	}
	rc->unsent = false;
	return 0;
}

/* Client: the server's REP: its name in the AV, our first message. */
static int raw_rep_rdm(struct bench_ctx *ctx, const struct raw_cm_hdr *h,
                       const unsigned char *name)
{
	struct bench_conn *conn = bench_conn_find(ctx, (uintptr_t)h->id);
	struct raw_conn *rc;

	if (!conn || raw_rc(conn)->peer != FI_ADDR_NOTAVAIL) {
		BENCH_ERR("side channel: a REP for no connection (%llu)",
		          (unsigned long long)h->id);
		return -EPROTO;
	}
	rc = raw_rc(conn);
	if (raw_peer_insert(ctx, rc, name))
		return -EIO;
	rc->unsent = true;
	raw_warm_add(raw_st(ctx), rc);
	return raw_warm_send(rc);
}

/* The completion of a first message from cq, if any: 1 and *done. */
static int raw_warm_read(struct raw_state *st, struct fid_cq *cq,
                         struct raw_conn **done)
{
	struct fi_cq_msg_entry e;
	struct fi_cq_err_entry err = {0};
	struct raw_conn *rc;
	ssize_t n;

	n = fi_cq_read(cq, &e, 1);
	if (n == -FI_EAGAIN)
		return 0;
	if (n == -FI_EAVAIL) {
		if (fi_cq_readerr(cq, &err, 0) == 1)
			BENCH_ERR("a connection's first message: %s "
			          "(prov_errno %d)",
			          fi_strerror(err.err), err.prov_errno);
		return -EIO;
	}
	if (n < 0) {
		RAW_ERR("fi_cq_read", n);
		return -EIO;
	}
	for (rc = st->warm; rc && rc != e.op_context; rc = rc->wnext)
		;
	if (!rc) {
		BENCH_ERR("a completion while connections are set up");
		return -EPROTO;
	}
	*done = rc;
	return 1;
}

/*
 * RDM connection events: an end to report, a first message sent or
 * received (ESTABLISHED), a connection message on the side channel.
 */
static int raw_cm_poll_rdm(struct bench_ctx *ctx, struct bench_cm_ev *ev)
{
	struct raw_state *st = raw_st(ctx);
	unsigned char name[RAW_NAME_MAX];
	struct raw_conn *rc = NULL, *w;
	struct bench_conn *conn;
	struct raw_cm_hdr h;
	struct raw_req *req;
	int ret = 0;

	memset(ev, 0, sizeof(*ev));
	if (st->byeq) {
		rc = st->byeq;
		st->byeq = rc->qnext;
		rc->conn->established = 0;
		ev->conn = rc->conn;
		ev->type = BENCH_CM_DISCONNECTED;
		return 1;
	}
	/* First messages the provider had no room for yet. */
	for (w = st->warm; w; w = w->wnext)
		if (w->unsent && (ret = raw_warm_send(w)) < 0)
			return ret;
	if (st->warm && !ctx->opts->evd_per_ep) {
		ret = raw_warm_read(st, st->cq, &rc);
	} else {
		for (w = st->warm; w && ret == 0; w = w->wnext)
			ret = raw_warm_read(st, w->cq, &rc);
	}
	if (ret < 0)
		return ret;
	if (ret > 0) {
		raw_warm_del(st, rc);
		rc->conn->established = 1;
		if (rc->bye) {
			rc->qnext = st->byeq;
			st->byeq = rc;
		}
		ev->conn = rc->conn;
		ev->type = BENCH_CM_ESTABLISHED;
		return 1;
	}
	ret = raw_cm_recv(ctx, &h, name);
	if (ret <= 0)
		return ret;
	switch (h.type) {
	case RAW_CM_REQ:
		req = calloc(1, sizeof(*req));
		if (!req)
			return -ENOMEM;
		req->id = h.id;
		req->len = h.len;
		memcpy(req->name, name, h.len);
		ev->type = BENCH_CM_CONNREQ;
		ev->req = req;
		return 1;
	case RAW_CM_REP:
		ret = raw_rep_rdm(ctx, &h, name);
		return ret < 0 ? ret : 0;
	default: /* RAW_CM_BYE */
		conn = bench_conn_find(ctx, (uintptr_t)h.id);
		if (!conn)
			return 0;
		if (!conn->established) {
			/* Its first message is still to be taken. */
			raw_rc(conn)->bye = true;
			return 0;
		}
		conn->established = 0;
		ev->conn = conn;
		ev->type = BENCH_CM_DISCONNECTED;
		return 1;
	}
}

static int raw_connect(struct bench_ctx *ctx, struct bench_conn **out)
{
	struct raw_state *st = raw_st(ctx);
	struct bench_conn *conn;
	int ret;

	if (st->rdm)
		return raw_connect_rdm(ctx, out);
	/* Connect where the server says it listens. */
	if (ctx->fabric_addr.sin_addr.s_addr && st->info->dest_addr &&
	    st->info->dest_addrlen >= sizeof(struct sockaddr_in))
		((struct sockaddr_in *)st->info->dest_addr)->sin_addr =
		        ctx->fabric_addr.sin_addr;
	ret = raw_ep_setup(ctx, st->info, 0, &conn);
	if (ret)
		return ret;
	raw_rc(conn)->active = true;
	ret = fi_connect(conn->ep, st->info->dest_addr,
	                 ctx->opts->raw_cm_dat ? raw_cm_pdata : NULL,
	                 ctx->opts->raw_cm_dat ? RAW_CM_PDATA : 0);
	if (ret) {
		RAW_ERR("fi_connect", ret);
		bench_raw_ops.free_conn(conn);
		return -ECONNREFUSED;
	}
	*out = conn;
	return 0;
}

static int raw_accept(struct bench_ctx *ctx, void *req, struct bench_conn **out)
{
	struct fi_info *info = req;
	struct bench_conn *conn;
	int ret;

	if (raw_st(ctx)->rdm)
		return raw_accept_rdm(ctx, req, out);
	ret = raw_ep_setup(ctx, info, 0, &conn);
	if (ret) {
		fi_reject(raw_st(ctx)->pep, info->handle, NULL, 0);
		fi_freeinfo(info);
		return ret;
	}
	fi_freeinfo(info);
	/* --raw-cm=dat: the receive for the requester's message, first. */
	if (ctx->opts->raw_cm_dat) {
		ret = (int)fi_recv(conn->ep, NULL, 0, NULL, 0,
		                   &((struct fid_ep *)conn->ep)->fid);
		if (ret) {
			RAW_ERR("fi_recv", ret);
			bench_raw_ops.free_conn(conn);
			return -EIO;
		}
	}
	ret = fi_accept(conn->ep, ctx->opts->raw_cm_dat ? raw_cm_pdata : NULL,
	                ctx->opts->raw_cm_dat ? RAW_CM_PDATA : 0);
	if (ret) {
		RAW_ERR("fi_accept", ret);
		bench_raw_ops.free_conn(conn);
		return -EIO;
	}
	*out = conn;
	return 0;
}

/* The connection an event names, by pointer value only: never follow a
 * fid whose endpoint may already be closed. */
static struct bench_conn *raw_find(struct bench_ctx *ctx, fid_t fid)
{
	return bench_conn_find(ctx, (uintptr_t)fid);
}

/* --evd-per-ep: what an empty look at the EQ progresses. */
static void raw_progress_own(struct bench_ctx *ctx)
{
	struct raw_state *st = raw_st(ctx);
	struct bench_conn *c;
	int i;

	for (c = ctx->conns, i = 0; c && i < RAW_PROGRESS_NEWEST;
	     c = c->next, i++)
		(void)fi_cq_read(raw_rc(c)->cq, NULL, 0);
	for (i = 0; i < RAW_PROGRESS_SWEEP && ctx->conns; i++) {
		if (!st->cursor)
			st->cursor = ctx->conns;
		(void)fi_cq_read(raw_rc(st->cursor)->cq, NULL, 0);
		st->cursor = st->cursor->next;
	}
}

/*
 * --raw-cm=dat: read the shared CQ, where only the connections' own
 * zero-byte messages complete (dat_cm_rate without --rounds). A passive
 * side's that came after FI_CONNECTED makes its connection established
 * (1, in ev). A context is an endpoint's fid, looked up, never followed:
 * its connection may be gone (errors, such as receives flushed at a
 * close, are read and dropped).
 */
static int raw_cm_rtu_read(struct bench_ctx *ctx, struct bench_cm_ev *ev)
{
	struct raw_state *st = raw_st(ctx);
	struct fi_cq_msg_entry e;
	struct bench_conn *conn;
	struct raw_conn *rc;
	ssize_t rd;

	for (;;) {
		rd = fi_cq_read(st->cq, &e, 1);
		if (rd == -FI_EAVAIL) {
			struct fi_cq_err_entry err = {0};

			if (fi_cq_readerr(st->cq, &err, 0) < 0)
				return -EIO;
			continue;
		}
		if (rd == -FI_EAGAIN)
			return 0;
		if (rd < 0) {
			RAW_ERR("fi_cq_read", rd);
			return -EIO;
		}
		if (!(e.flags & FI_RECV))
			continue; /* the active side's send */
		conn = raw_find(ctx, (fid_t)e.op_context);
		if (!conn)
			continue;
		rc = raw_rc(conn);
		rc->rtu_in = true;
		if (rc->up && !conn->established) {
			memset(ev, 0, sizeof(*ev));
			conn->established = 1;
			ev->conn = conn;
			ev->type = BENCH_CM_ESTABLISHED;
			return 1;
		}
	}
}

/* --raw-cm=dat: FI_CONNECTED on conn. 1: established now (in ev). */
static int raw_cm_dat_connected(struct bench_ctx *ctx, struct bench_conn *conn,
                                struct bench_cm_ev *ev)
{
	struct raw_conn *rc = raw_rc(conn);
	int ret;

	if (rc->active) {
		/* The requester's zero-byte message, before anything else. */
		ret = (int)fi_send(conn->ep, NULL, 0, NULL, 0,
		                   &((struct fid_ep *)conn->ep)->fid);
		if (ret) {
			RAW_ERR("fi_send", ret);
			return -EIO;
		}
	} else {
		rc->up = true;
		if (!rc->rtu_in)
			return raw_cm_rtu_read(ctx, ev);
	}
	conn->established = 1;
	ev->type = BENCH_CM_ESTABLISHED;
	return 1;
}

static int raw_cm_poll(struct bench_ctx *ctx, struct bench_cm_ev *ev)
{
	struct raw_state *st = raw_st(ctx);
	struct fi_eq_cm_entry entry;
	struct fi_eq_err_entry err = {0};
	uint32_t event;
	ssize_t rd;

	if (st->rdm)
		return raw_cm_poll_rdm(ctx, ev);
	if (st->end_pending) {
		struct bench_conn *c = raw_find(ctx, st->end_pending);
		int ret;

		if (c && !c->established) {
			ret = raw_cm_rtu_read(ctx, ev);
			if (ret != 0)
				return ret;
		}
		st->end_pending = NULL;
		if (!c)
			return 0;
		/* Established or not (no message came), it has ended. */
		memset(ev, 0, sizeof(*ev));
		c->established = 0;
		ev->conn = c;
		ev->type = BENCH_CM_DISCONNECTED;
		return 1;
	}
	rd = fi_eq_read(st->eq, &event, &entry, sizeof(entry), 0);
	if (rd == -FI_EAGAIN) {
		if (ctx->opts->raw_cm_dat)
			return raw_cm_rtu_read(ctx, ev);
		/* tcp notices a peer's shutdown through CQ progress. */
		(void)fi_cq_read(st->cq, NULL, 0);
		if (ctx->opts->evd_per_ep)
			raw_progress_own(ctx);
		return 0;
	}
	if (rd == -FI_EAVAIL) {
		if (fi_eq_readerr(st->eq, &err, 0) < 0) {
			BENCH_ERR("fi_eq_readerr failed");
			return -EIO;
		}
		ev->conn = raw_find(ctx, err.fid);
		if (!ev->conn)
			return 0;
		BENCH_VERBOSE(ctx, "raw: connection error %s",
		              fi_strerror(err.err));
		ev->type = BENCH_CM_REJECTED;
		return 1;
	}
	if (rd < 0) {
		RAW_ERR("fi_eq_read", rd);
		return -EIO;
	}
	memset(ev, 0, sizeof(*ev));
	switch (event) {
	case FI_CONNREQ:
		ev->type = BENCH_CM_CONNREQ;
		ev->req = entry.info;
		return 1;
	case FI_CONNECTED:
		ev->conn = raw_find(ctx, entry.fid);
		if (!ev->conn)
			return 0;
		if (ctx->opts->raw_cm_dat)
			return raw_cm_dat_connected(ctx, ev->conn, ev);
		ev->conn->established = 1;
		ev->type = BENCH_CM_ESTABLISHED;
		return 1;
	case FI_SHUTDOWN:
		ev->conn = raw_find(ctx, entry.fid);
		if (!ev->conn)
			return 0;
		/*
		 * --raw-cm=dat: a passive side's end before its requester's
		 * message was taken (libfabric has read it by now): the end
		 * waits for the next look, the message goes first.
		 */
		if (ctx->opts->raw_cm_dat && !ev->conn->established &&
		    !raw_rc(ev->conn)->active) {
			st->end_pending = entry.fid;
			return raw_cm_rtu_read(ctx, ev);
		}
		ev->conn->established = 0;
		ev->type = BENCH_CM_DISCONNECTED;
		return 1;
	default:
		BENCH_VERBOSE(ctx, "raw: EQ event %u ignored", event);
		return 0;
	}
}

/*
 * libfabric gives no local event for our own shutdown: nothing to wait.
 * RDM: the client's BYE tells the server; the endpoint closes with the
 * connection.
 */
static int raw_disconnect(struct bench_conn *conn)
{
	int ret;

	if (raw_st(conn->ctx)->rdm) {
		if (raw_rc(conn)->active && conn->established)
			(void)raw_cm_send(conn->ctx, RAW_CM_BYE, conn->key,
			                  NULL, 0);
		conn->established = 0;
		return 0;
	}
	ret = fi_shutdown(conn->ep, 0);
	if (ret && ret != -FI_ENOTCONN)
		RAW_ERR("fi_shutdown", ret);
	conn->established = 0;
	return 0;
}

static void raw_free_conn(struct bench_conn *conn)
{
	struct raw_state *st = raw_st(conn->ctx);
	struct raw_conn *rc = raw_rc(conn), **pp;

	if (st->cursor == conn)
		st->cursor = conn->next;
	raw_warm_del(st, rc);
	for (pp = &st->byeq; *pp; pp = &(*pp)->qnext) {
		if (*pp == rc) {
			*pp = rc->qnext;
			break;
		}
	}
	bench_conn_del(conn);
	raw_ctl_lock(st);
	fi_close(&((struct fid_ep *)conn->ep)->fid);
	/* As dapl-ofi: a peer leaves the AV with its connection, but on
	 * rxm, which keeps connections by AV index. */
	if (st->rdm && !st->av_keep && rc->peer != FI_ADDR_NOTAVAIL)
		(void)fi_av_remove(st->av, &rc->peer, 1, 0);
	if (rc->cq)
		fi_close(&rc->cq->fid);
	raw_ctl_unlock(st);
	free(rc);
	free(conn);
}

/* Progress on a connection's CQ (its own, or the shared one). */
static void raw_progress_conn(struct bench_conn *conn)
{
	struct raw_conn *rc = raw_rc(conn);

	(void)fi_cq_read(rc->cq ? rc->cq : raw_st(conn->ctx)->cq, NULL, 0);
}

/*
 * A post, again while libfabric has no room (-FI_EAGAIN: rxm's bounce
 * buffers, full with segments of large sends), with progress between
 * tries, as dapl-ofi does (DOFI_RETRY), until the -T deadline (or the
 * peer's end). The first try is all the common case costs.
 */
#define RAW_POST(conn, call)                                                \
	__extension__({                                                     \
		struct bench_deadline d_;                                   \
		bool s_ = false;                                            \
		ssize_t r_;                                                 \
		while ((r_ = (call)) == -FI_EAGAIN) {                       \
			if (!s_) {                                          \
				bench_deadline_start_ctx(&d_, (conn)->ctx); \
				s_ = true;                                  \
			}                                                   \
			raw_progress_conn(conn);                            \
			if (bench_deadline_hit(&d_))                        \
				break;                                      \
		}                                                           \
		r_;                                                         \
	})

static int raw_post_send(struct bench_conn *conn, struct bench_mr *mr,
                         size_t off, size_t len, uint64_t ctx)
{
	ssize_t ret;

	ret = RAW_POST(conn,
	               fi_send(conn->ep, (char *)mr->buf + off, len, mr->desc,
	                       raw_rc(conn)->peer, (void *)(uintptr_t)ctx));
	if (ret) {
		RAW_ERR("fi_send", ret);
		return -EIO;
	}
	return 0;
}

static int raw_post_recv(struct bench_conn *conn, struct bench_mr *mr,
                         size_t off, size_t len, uint64_t ctx)
{
	ssize_t ret;

	ret = RAW_POST(conn, fi_recv(conn->ep, (char *)mr->buf + off, len,
	                             mr->desc, 0, (void *)(uintptr_t)ctx));
	if (ret) {
		RAW_ERR("fi_recv", ret);
		return -EIO;
	}
	return 0;
}

static int raw_post_write(struct bench_conn *conn, struct bench_mr *mr,
                          size_t off, size_t len, uint64_t raddr, uint64_t rkey,
                          uint64_t ctx)
{
	struct iovec iov = {(char *)mr->buf + off, len};
	struct fi_rma_iov rma = {raddr, len, rkey};
	struct fi_msg_rma msg = {
	        .msg_iov = &iov,
	        .desc = &mr->desc,
	        .iov_count = 1,
	        .rma_iov = &rma,
	        .rma_iov_count = 1,
	        .context = (void *)(uintptr_t)ctx,
	        .addr = raw_rc(conn)->peer,
	};
	ssize_t ret;

	/* What DAT asks for on tcp (DAPL_OFI_WRITE_COMPLETION=delivery). */
	if (conn->ctx->opts->raw_delivery)
		ret = RAW_POST(conn, fi_writemsg(conn->ep, &msg,
		                                 FI_COMPLETION |
		                                         FI_DELIVERY_COMPLETE));
	else
		ret = RAW_POST(conn,
		               fi_write(conn->ep, (char *)mr->buf + off, len,
		                        mr->desc, raw_rc(conn)->peer, raddr,
		                        rkey, (void *)(uintptr_t)ctx));
	if (ret) {
		RAW_ERR("fi_write", ret);
		return -EIO;
	}
	return 0;
}

static int raw_post_read(struct bench_conn *conn, struct bench_mr *mr,
                         size_t off, size_t len, uint64_t raddr, uint64_t rkey,
                         uint64_t ctx)
{
	ssize_t ret;

	ret = RAW_POST(conn, fi_read(conn->ep, (char *)mr->buf + off, len,
	                             mr->desc, raw_rc(conn)->peer, raddr, rkey,
	                             (void *)(uintptr_t)ctx));
	if (ret) {
		RAW_ERR("fi_read", ret);
		return -EIO;
	}
	return 0;
}

/* The context of --raw-writeimm=two's write halves: read and dropped. */
static char raw_wimm_sink;

/* A post that found the queue full: progress, and once more. */
#define RAW_RETRY(conn, call)                                                \
	__extension__({                                                     \
		ssize_t r_;                                                  \
		while ((r_ = (call)) == -FI_EAGAIN)                          \
			raw_progress((conn)->ctx);                           \
		r_;                                                          \
	})

static void raw_progress(struct bench_ctx *ctx);

/*
 * --raw-writeimm=two: what dapl-ofi does on tcp and sockets, where
 * fi_writedata takes no receive at the target. An RDMA write with no
 * completion of its own (an inject where it fits), then an empty message
 * carrying the immediate data and the write's length as its CQ data,
 * which the target takes a receive for; with --raw-write=delivery the
 * message completes once the target has it.
 */
static int raw_post_writeimm_two(struct bench_conn *conn, struct bench_mr *mr,
                                 size_t off, size_t len, uint64_t raddr,
                                 uint64_t rkey, uint32_t imm, uint64_t ctx)
{
	struct raw_state *st = raw_st(conn->ctx);
	struct fi_msg msg = {
	        .context = (void *)(uintptr_t)ctx,
	        .data = (uint64_t)imm | (uint64_t)len << 32,
	        .addr = raw_rc(conn)->peer,
	};
	void *buf = (char *)mr->buf + off;
	ssize_t ret;

	if (len <= st->info->tx_attr->inject_size)
		ret = RAW_RETRY(conn,
		                fi_inject_write(conn->ep, buf, len,
		                                raw_rc(conn)->peer, raddr, rkey));
	else
		ret = RAW_RETRY(conn,
		                fi_write(conn->ep, buf, len, mr->desc,
		                         raw_rc(conn)->peer, raddr, rkey,
		                         &raw_wimm_sink));
	if (ret) {
		RAW_ERR("fi_write", ret);
		return -EIO;
	}
	ret = RAW_RETRY(conn,
	                fi_sendmsg(conn->ep, &msg,
	                           FI_COMPLETION | FI_REMOTE_CQ_DATA |
	                                   (conn->ctx->opts->raw_delivery
	                                            ? FI_DELIVERY_COMPLETE
	                                            : 0)));
	if (ret) {
		RAW_ERR("fi_senddata", ret);
		return -EIO;
	}
	return 0;
}

static int raw_post_writeimm(struct bench_conn *conn, struct bench_mr *mr,
                             size_t off, size_t len, uint64_t raddr,
                             uint64_t rkey, uint32_t imm, uint64_t ctx)
{
	struct iovec iov = {(char *)mr->buf + off, len};
	struct fi_rma_iov rma = {raddr, len, rkey};
	struct fi_msg_rma msg = {
	        .msg_iov = &iov,
	        .desc = &mr->desc,
	        .iov_count = 1,
	        .rma_iov = &rma,
	        .rma_iov_count = 1,
	        .context = (void *)(uintptr_t)ctx,
	        .data = imm,
	        .addr = raw_rc(conn)->peer,
	};
	ssize_t ret;

	if (conn->ctx->opts->raw_wimm_two)
		return raw_post_writeimm_two(conn, mr, off, len, raddr, rkey,
		                             imm, ctx);
	if (conn->ctx->opts->raw_delivery)
		ret = fi_writemsg(conn->ep, &msg,
		                  FI_COMPLETION | FI_REMOTE_CQ_DATA |
		                          FI_DELIVERY_COMPLETE);
	else
		ret = fi_writedata(conn->ep, iov.iov_base, len, mr->desc, imm,
		                   raw_rc(conn)->peer, raddr, rkey,
		                   (void *)(uintptr_t)ctx);
	if (ret) {
		RAW_ERR("fi_writedata", ret);
		return -EIO;
	}
	return 0;
}

/* fi_writedata takes no receive on tcp and sockets; --raw-writeimm=two's
 * message takes one, of 8 bytes as DAT's. */
static int raw_post_recv_imm(struct bench_conn *conn, struct bench_mr *mr,
                             size_t off, uint64_t ctx)
{
	if (conn->ctx->opts->raw_wimm_two)
		return raw_post_recv(conn, mr, off, 8, ctx);
	return 0;
}

static int raw_post_fadd(struct bench_conn *conn, struct bench_mr *mr,
                         size_t off, uint64_t raddr, uint64_t rkey,
                         uint64_t ctx)
{
	/* libfabric reads the operand until completion: a constant. */
	static const uint64_t one = 1;
	ssize_t ret;

	ret = fi_fetch_atomic(conn->ep, &one, 1, NULL, (char *)mr->buf + off,
	                      mr->desc, raw_rc(conn)->peer, raddr, rkey,
	                      FI_UINT64, FI_SUM, (void *)(uintptr_t)ctx);
	if (ret) {
		RAW_ERR("fi_fetch_atomic", ret);
		return -EIO;
	}
	return 0;
}

static int raw_poll_cq(struct fid_cq *cq, struct bench_comp *comp)
{
	struct fi_cq_data_entry e;
	struct fi_cq_err_entry err = {0};
	ssize_t ret;

	/* Read as the CQ's format, FI_CQ_FORMAT_MSG but for writeimm: an
	 * fi_cq_msg_entry is the start of an fi_cq_data_entry. */
	ret = fi_cq_read(cq, &e, 1);
	if (ret == 1 && e.op_context == &raw_wimm_sink)
		return 0; /* --raw-writeimm=two: a write half */
	if (ret == 1) {
		comp->ctx = (uint64_t)(uintptr_t)e.op_context;
		comp->len = e.len;
		if (e.flags & FI_REMOTE_WRITE) {
			/* fi_writedata's data at the target */
			comp->op = BENCH_OP_RECV_IMM;
			comp->imm = e.data;
		} else if ((e.flags & (FI_RECV | FI_REMOTE_CQ_DATA)) ==
		           (FI_RECV | FI_REMOTE_CQ_DATA)) {
			/* --raw-writeimm=two: its message */
			comp->op = BENCH_OP_RECV_IMM;
			comp->imm = (uint32_t)e.data;
			comp->len = (size_t)(e.data >> 32);
		} else if (e.flags & FI_ATOMIC)
			comp->op = BENCH_OP_ATOMIC;
		else if (e.flags & FI_RECV)
			comp->op = BENCH_OP_RECV;
		else if (e.flags & FI_READ)
			comp->op = BENCH_OP_READ;
		else if (e.flags & FI_WRITE)
			comp->op = BENCH_OP_WRITE;
		else
			comp->op = BENCH_OP_SEND;
		return 1;
	}
	if (ret == -FI_EAGAIN) {
		bench_poll_empty();
		return 0;
	}
	if (ret == -FI_EAVAIL) {
		if (fi_cq_readerr(cq, &err, 0) == 1)
			BENCH_ERR("completion error: %s (prov_errno %d)",
			          fi_strerror(err.err), err.prov_errno);
		else
			BENCH_ERR("fi_cq_readerr failed");
		return -EIO;
	}
	RAW_ERR("fi_cq_read", ret);
	return -EIO;
}

static int raw_poll(struct bench_ctx *ctx, struct bench_comp *comp)
{
	return raw_poll_cq(raw_st(ctx)->cq, comp);
}

static int raw_poll_conn(struct bench_conn *conn, struct bench_comp *comp)
{
	struct raw_conn *rc = raw_rc(conn);

	return raw_poll_cq(rc->cq ? rc->cq : raw_st(conn->ctx)->cq, comp);
}

static void raw_progress(struct bench_ctx *ctx)
{
	(void)fi_cq_read(raw_st(ctx)->cq, NULL, 0);
}

const struct bench_ops bench_raw_ops = {
        .name = "raw",
        .open = raw_open,
        .close = raw_close,
        .listen = raw_listen,
        .reg = raw_reg,
        .dereg = raw_dereg,
        .connect = raw_connect,
        .accept = raw_accept,
        .cm_poll = raw_cm_poll,
        .disconnect = raw_disconnect,
        .free_conn = raw_free_conn,
        .post_send = raw_post_send,
        .post_recv = raw_post_recv,
        .post_write = raw_post_write,
        .post_read = raw_post_read,
        .post_writeimm = raw_post_writeimm,
        .post_recv_imm = raw_post_recv_imm,
        .post_fadd = raw_post_fadd,
        .poll = raw_poll,
        .poll_conn = raw_poll_conn,
        .progress = raw_progress,
};
