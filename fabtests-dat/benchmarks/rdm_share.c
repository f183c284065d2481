/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * rdm_share: what N connections would cost on an RDM fabric if they shared
 * one libfabric endpoint per process, told apart by tag, instead of taking
 * an endpoint each as dapl-ofi does (DESIGN.md, "Two connection
 * backends"). Raw libfabric only; no DAT. It measures the other option of
 * a design decision, so that both have figures.
 *
 * The program forks a server and a client. Each opens one FI_EP_RDM
 * endpoint (FI_TAGGED, FI_AV_TABLE, one CQ read with fi_cq_read), and the
 * two exchange endpoint names over a socketpair. A "connection" k is then
 * a tag, k: each side posts R tagged receives of 64 bytes for it, as a DAT
 * EP posts its receives. What that costs is read from VmRSS and
 * /proc/self/fd before and after, per connection. The client then sends
 * one 8-byte message on every connection, which the server takes and
 * reposts (a connection's first message). Last, an 8-byte ping-pong runs
 * on connection N while every connection's receives stay posted: each
 * message is matched against those, and each receive taken is posted
 * again, behind the others.
 *
 *   rdm_share -p PROVIDER [-N CONNS] [-R RECVS] [-I ITERS] [-w WARMUP]
 *
 * PROVIDER is libfabric's name: "tcp;ofi_rxm", "shm", "udp;ofi_rxd".
 * rxm's settings are dapl-ofi's unless the environment sets them.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include "bench_common.h"

#define RS_MSG_SIZE 64
#define RS_TIMEOUT  60 /* seconds any wait for a completion may take */

struct rs_opts {
	const char *prov;
	long nconn;
	long nrecv;
	long iters;
	long warmup;
};

struct rs_fab {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
	struct fid_mr *mr;
	void *desc;
	fi_addr_t peer;
	char *bufs;               /* nconn * nrecv receive buffers, then tx */
	struct fi_context2 *ctxs; /* one per receive, then one for sends */
	long nslots;
	long nrecv; /* receives per connection */
	long early; /* a receive that completed while a send was awaited */
	int sock;
};

static double rs_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int rs_fail(const char *what, long rc)
{
	fprintf(stderr, "rdm_share[%d]: %s: %ld (%s)\n", (int)getpid(), what,
	        rc, rc < 0 ? fi_strerror((int)-rc) : "");
	return -1;
}

static int rs_xfer(int sock, const void *out, void *in, size_t len)
{
	if (out && write(sock, out, len) != (ssize_t)len)
		return rs_fail("socketpair write", -errno);
	if (in && read(sock, in, len) != (ssize_t)len)
		return rs_fail("socketpair read", -errno);
	return 0;
}

/* Both sides here; a byte each way. */
static int rs_sync(struct rs_fab *f)
{
	char c = 's';

	return rs_xfer(f->sock, &c, &c, 1);
}

static void *rs_buf(struct rs_fab *f, long slot)
{
	return f->bufs + (size_t)slot * RS_MSG_SIZE;
}

/* Wait for one completion; its slot (context index) in *slot. */
static int rs_wait(struct rs_fab *f, long *slot)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	double end = rs_now_us() + RS_TIMEOUT * 1e6;
	ssize_t n;

	for (;;) {
		n = fi_cq_read(f->cq, &e, 1);
		if (n == 1)
			break;
		if (n == -FI_EAVAIL) {
			memset(&err, 0, sizeof(err));
			(void)fi_cq_readerr(f->cq, &err, 0);
			return rs_fail("completion error", -(long)err.err);
		}
		if (n != -FI_EAGAIN)
			return rs_fail("fi_cq_read", n);
		if (rs_now_us() > end)
			return rs_fail("no completion in time", -FI_ETIMEDOUT);
	}
	*slot = (struct fi_context2 *)e.op_context - f->ctxs;
	return 0;
}

/* A receive; -FI_EAGAIN for a second means the endpoint is full. */
static int rs_post_recv(struct rs_fab *f, long slot, uint64_t tag)
{
	double end = 0;
	ssize_t rc;

	for (;;) {
		rc = fi_trecv(f->ep, rs_buf(f, slot), RS_MSG_SIZE, f->desc,
		              FI_ADDR_UNSPEC, tag, 0, &f->ctxs[slot]);
		if (rc != -FI_EAGAIN)
			break;
		if (end == 0)
			end = rs_now_us() + 1e6;
		else if (rs_now_us() > end)
			break;
		(void)fi_cq_read(f->cq, NULL, 0);
	}
	if (rc == -FI_EAGAIN)
		fprintf(stderr,
		        "rdm_share[%d]: the endpoint takes no receive after "
		        "%ld posted\n",
		        (int)getpid(), slot);
	return rc ? rs_fail("fi_trecv", rc) : 0;
}

static int rs_send(struct rs_fab *f, uint64_t tag)
{
	long tx = f->nslots - 1, slot;
	ssize_t rc;

	do {
		rc = fi_tsend(f->ep, rs_buf(f, tx), 8, f->desc, f->peer, tag,
		              &f->ctxs[tx]);
		if (rc == -FI_EAGAIN)
			(void)fi_cq_read(f->cq, NULL, 0);
	} while (rc == -FI_EAGAIN);
	if (rc)
		return rs_fail("fi_tsend", rc);
	/*
	 * The send's own completion, so that nothing is left in flight. The
	 * peer's answer may complete first (a ping-pong): kept for rs_take.
	 */
	for (;;) {
		if (rs_wait(f, &slot))
			return -1;
		if (slot == tx)
			return 0;
		if (f->early >= 0)
			return rs_fail("two receives completed before a send",
			               slot);
		f->early = slot;
	}
}

/*
 * A receive: posted again for its own connection (slot / nrecv + 1),
 * behind the others. The ping-pong's must be on connection tag.
 */
static int rs_take(struct rs_fab *f, uint64_t tag)
{
	long slot = f->early;

	f->early = -1;
	if (slot < 0 && rs_wait(f, &slot))
		return -1;
	if (slot < 0 || slot >= f->nslots - 1)
		return rs_fail("the send completed, not a receive", slot);
	if (tag != 0 && (uint64_t)(slot / f->nrecv + 1) != tag)
		return rs_fail("a receive of another connection completed",
		               slot / f->nrecv + 1);
	return rs_post_recv(f, slot, (uint64_t)(slot / f->nrecv + 1));
}

static int rs_open(struct rs_fab *f, const struct rs_opts *o)
{
	struct fi_info *hints;
	struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
	struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_TAGGED};
	char name[256], peer[256];
	size_t len = sizeof(name), plen;
	size_t rx = (size_t)(o->nconn * o->nrecv);
	int rc;

	hints = fi_allocinfo();
	if (!hints)
		return rs_fail("fi_allocinfo", -FI_ENOMEM);
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_TAGGED | FI_MSG;
	hints->mode = FI_CONTEXT | FI_CONTEXT2;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
	                              FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->domain_attr->threading = FI_THREAD_DOMAIN;
	hints->fabric_attr->prov_name = strdup(o->prov);
	hints->rx_attr->size = rx;
	rc = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &f->info);
	fi_freeinfo(hints);
	if (rc == -FI_ENODATA)
		fprintf(stderr,
		        "rdm_share[%d]: no '%s' endpoint takes %zu receives "
		        "(N x R)\n",
		        (int)getpid(), o->prov, rx);
	if (rc)
		return rs_fail("fi_getinfo", rc);
	if (f->info->rx_attr->size < rx)
		printf("# %d: the endpoint's receive queue is %zu, below "
		       "the %zu receives posted\n",
		       (int)getpid(), f->info->rx_attr->size, rx);

	rc = fi_fabric(f->info->fabric_attr, &f->fabric, NULL);
	if (rc)
		return rs_fail("fi_fabric", rc);
	rc = fi_domain(f->fabric, f->info, &f->domain, NULL);
	if (rc)
		return rs_fail("fi_domain", rc);
	rc = fi_av_open(f->domain, &av_attr, &f->av, NULL);
	if (rc)
		return rs_fail("fi_av_open", rc);
	rc = fi_cq_open(f->domain, &cq_attr, &f->cq, NULL);
	if (rc)
		return rs_fail("fi_cq_open", rc);
	rc = fi_endpoint(f->domain, f->info, &f->ep, NULL);
	if (rc)
		return rs_fail("fi_endpoint", rc);
	rc = fi_ep_bind(f->ep, &f->av->fid, 0);
	if (!rc)
		rc = fi_ep_bind(f->ep, &f->cq->fid, FI_TRANSMIT | FI_RECV);
	if (!rc)
		rc = fi_enable(f->ep);
	if (rc)
		return rs_fail("fi_ep_bind/fi_enable", rc);

	f->nslots = o->nconn * o->nrecv + 1;
	f->nrecv = o->nrecv;
	f->bufs = calloc((size_t)f->nslots, RS_MSG_SIZE);
	f->ctxs = calloc((size_t)f->nslots, sizeof(*f->ctxs));
	if (!f->bufs || !f->ctxs)
		return rs_fail("calloc", -FI_ENOMEM);
	if (f->info->domain_attr->mr_mode & FI_MR_LOCAL) {
		rc = fi_mr_reg(f->domain, f->bufs,
		               (size_t)f->nslots * RS_MSG_SIZE,
		               FI_SEND | FI_RECV, 0, 0, 0, &f->mr, NULL);
		if (rc)
			return rs_fail("fi_mr_reg", rc);
		f->desc = fi_mr_desc(f->mr);
	}

	rc = fi_getname(&f->ep->fid, name, &len);
	if (rc)
		return rs_fail("fi_getname", rc);
	if (rs_xfer(f->sock, &len, &plen, sizeof(len)) || plen > sizeof(peer) ||
	    rs_xfer(f->sock, name, peer, len == plen ? len : 0) || len != plen)
		return rs_fail("name exchange", -FI_EINVAL);
	if (fi_av_insert(f->av, peer, 1, &f->peer, 0, NULL) != 1)
		return rs_fail("fi_av_insert", -FI_EINVAL);
	return 0;
}

static void rs_close(struct rs_fab *f)
{
	if (f->ep)
		fi_close(&f->ep->fid);
	if (f->mr)
		fi_close(&f->mr->fid);
	if (f->cq)
		fi_close(&f->cq->fid);
	if (f->av)
		fi_close(&f->av->fid);
	if (f->domain)
		fi_close(&f->domain->fid);
	if (f->fabric)
		fi_close(&f->fabric->fid);
	if (f->info)
		fi_freeinfo(f->info);
	free(f->bufs);
	free(f->ctxs);
}

/* The connections' receives; their cost per connection, printed. */
static int rs_post_all(struct rs_fab *f, const struct rs_opts *o, bool server,
                       long rss_start, long fds_start)
{
	long rss0, rss1, fds0, fds1, k, r;
	double t0, t1;

	rss0 = bench_rss_kib();
	fds0 = bench_count_fds();
	t0 = rs_now_us();
	for (k = 1; k <= o->nconn; k++)
		for (r = 0; r < o->nrecv; r++)
			if (rs_post_recv(f, (k - 1) * o->nrecv + r,
			                 (uint64_t)k))
				return -1;
	t1 = rs_now_us();
	rss1 = bench_rss_kib();
	fds1 = bench_count_fds();
	printf("%-6s posting  %.3f us per connection (%ld receives each); "
	       "%+.3f KiB per connection (VmRSS %ld -> %ld KiB); %+ld fds\n",
	       server ? "server" : "client", (t1 - t0) / (double)o->nconn,
	       o->nrecv, (double)(rss1 - rss0) / (double)o->nconn, rss0, rss1,
	       fds1 - fds0);
	/* What the endpoint sized for them cost, from before its open. */
	printf("%-6s endpoint and receives: %+ld KiB (VmRSS %ld -> %ld KiB), "
	       "%+.3f KiB per connection; %+ld fds\n",
	       server ? "server" : "client", rss1 - rss_start, rss_start, rss1,
	       (double)(rss1 - rss_start) / (double)o->nconn, fds1 - fds_start);
	return 0;
}

static int rs_run(struct rs_fab *f, const struct rs_opts *o, bool server)
{
	uint64_t last = (uint64_t)o->nconn;
	long rss_start = bench_rss_kib(), fds_start = bench_count_fds();
	double t0, t1;
	long k, i;

	if (rs_open(f, o) || rs_sync(f))
		return -1;
	/*
	 * The buffers are the program's, not the connections': touched, and
	 * left out of the endpoint's figure.
	 */
	memset(f->bufs, 0, (size_t)f->nslots * RS_MSG_SIZE);
	memset(f->ctxs, 0, (size_t)f->nslots * sizeof(*f->ctxs));
	rss_start +=
	        (long)(((size_t)f->nslots * (RS_MSG_SIZE + sizeof(*f->ctxs)) +
	                1023) /
	               1024);
	if (rs_post_all(f, o, server, rss_start, fds_start) || rs_sync(f))
		return -1;

	/* A first message on every connection, client to server, taken in
	 * whatever order they come. */
	t0 = rs_now_us();
	for (k = 1; k <= o->nconn; k++)
		if (server ? rs_take(f, 0) : rs_send(f, (uint64_t)k))
			return -1;
	t1 = rs_now_us();
	if (rs_sync(f))
		return -1;
	if (server)
		printf("server   first message on each: %.3f us per "
		       "connection\n",
		       (t1 - t0) / (double)o->nconn);

	/* Ping-pong on connection N, all connections' receives posted. */
	for (i = 0; i < o->warmup + o->iters; i++) {
		if (i == o->warmup)
			t0 = rs_now_us();
		if (server) {
			if (rs_take(f, last) || rs_send(f, last))
				return -1;
		} else {
			if (rs_send(f, last) || rs_take(f, last))
				return -1;
		}
	}
	t1 = rs_now_us();
	if (!server)
		printf("client   8 B ping-pong on connection %ld: %.3f us one "
		       "way (%ld round trips, %ld receives posted each side)\n",
		       o->nconn, (t1 - t0) / (double)o->iters / 2.0, o->iters,
		       o->nconn * o->nrecv);
	fflush(stdout);
	return rs_sync(f);
}

static void rs_usage(void)
{
	fprintf(stderr, "usage: rdm_share -p PROVIDER [-N CONNS] [-R RECVS] "
	                "[-I ITERS] [-w WARMUP]\n");
}

int main(int argc, char **argv)
{
	struct rs_opts o = {
	        .nconn = 1, .nrecv = 1, .iters = 10000, .warmup = 1000};
	struct rs_fab f;
	int sv[2], opt, status, rc;
	pid_t pid;

	while ((opt = getopt(argc, argv, "p:N:R:I:w:h")) != -1) {
		switch (opt) {
		case 'p':
			o.prov = optarg;
			break;
		case 'N':
			o.nconn = strtol(optarg, NULL, 0);
			break;
		case 'R':
			o.nrecv = strtol(optarg, NULL, 0);
			break;
		case 'I':
			o.iters = strtol(optarg, NULL, 0);
			break;
		case 'w':
			o.warmup = strtol(optarg, NULL, 0);
			break;
		default:
			rs_usage();
			return 2;
		}
	}
	if (!o.prov || o.nconn < 1 || o.nrecv < 1 || o.iters < 1 ||
	    o.warmup < 0) {
		rs_usage();
		return 2;
	}
	/* dapl-ofi's rxm settings (dofi_ia.c), as bench_raw.c sets them. */
	(void)setenv("FI_OFI_RXM_SAR_LIMIT", "2147483648", 0);
	(void)setenv("FI_OFI_RXM_ENABLE_DYN_RBUF", "0", 0);
	(void)setenv("FI_OFI_RXM_MSG_RX_SIZE", "256", 0);
	printf("# rdm_share -p '%s' -N %ld -R %ld -I %ld -w %ld: one RDM "
	       "endpoint a side, a tag a connection\n",
	       o.prov, o.nconn, o.nrecv, o.iters, o.warmup);
	fflush(stdout);

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return rs_fail("socketpair", -errno) ? 1 : 0;
	pid = fork();
	if (pid < 0)
		return 1;
	memset(&f, 0, sizeof(f));
	f.early = -1;
	f.sock = pid == 0 ? sv[1] : sv[0];
	close(pid == 0 ? sv[0] : sv[1]);
	rc = rs_run(&f, &o, pid != 0);
	rs_close(&f);
	close(f.sock);
	if (pid == 0)
		_exit(rc ? 1 : 0);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		rc = -1;
	return rc ? 1 : 0;
}
