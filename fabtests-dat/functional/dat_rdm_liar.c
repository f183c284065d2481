/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * dat_rdm_liar: a peer that lies in the counts of its DREQ and DREP, or
 * replays them, cannot hang an RDM connection's end nor take the server
 * down. A DAT server (a PSP on the IA, an EP with receives posted) runs
 * in this process; the liar is a plain TCP client that speaks the RDM
 * backend's control protocol (dapl-ofi-rdm-wire(7), with the provider's
 * own codec) to the PSP's port: HELLO, a REQ carrying the address of a
 * raw libfabric RDM endpoint of the same provider that this process
 * opens, the REP read, the first message on the data path, the RTU; the
 * server reports ESTABLISHED. Then, each on a fresh connection:
 *
 *   1. a graceful DREQ counting 2^63 messages: the server ends within the
 *      link bound (DAPL_OFI_LINK_TIMEOUT, set to 1 s here) and margin,
 *      flushes its receives and answers with a DREP counting 0;
 *   2. the server's own graceful disconnect answered by a DREP counting
 *      2^63: more than the receives posted, so the server ends at once
 *      (well under the two bounds its wait may take), flushes, no more;
 *   3. a graceful DREQ counting the 2 receives posted, with no message
 *      sent: the wait takes the bound (1 s) and ends, flushes, DREP;
 *   4. replays and strays: the DREQ of an ended connection replayed, a
 *      DREP nobody asked for, a DREQ from another incarnation of the
 *      peer on a channel of its own (all dropped: no event, the
 *      connection stays up), and a DREQ on the connection's channel with
 *      an incarnation that is not the channel's (the channel is closed,
 *      the connection ends BROKEN); then an honest DAT client connects to
 *      the same PSP and both exchange data, checked byte by byte.
 *
 * The test applies to RDM fabrics (ofi-rxm, ofi-shm, ofi-rxd, efa); on an
 * IA whose endpoints are FI_EP_MSG it does not run (exit 61).
 *
 * Usage: dat_rdm_liar [-D IA] [-T SEC]
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include "dofi_rdm_wire.h"
#include "shared.h"

#define LINK_MS    1000ull      /* the server's DAPL_OFI_LINK_TIMEOUT */
#define MARGIN_MS  2000ull      /* what a loaded machine may add */
#define AT_ONCE_MS 1000ull      /* "at once": half the wait it skips */
#define QUIET_US   500000u      /* how long "no event" is looked for */
#define NRECV      2            /* receives the server keeps posted */
#define SLOT       4096         /* bytes per receive */
#define LIE        (1ull << 63) /* the count that lies */
#define NHONEST    4            /* messages of the honest connection */

/* ---- the liar's raw RDM endpoint ----------------------------------------- */

static struct {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
	unsigned char name[DOFI_RDM_WIRE_ADDR_MAX];
	size_t name_len;
} raw;

static struct fi_info *raw_getinfo(const char *prov, const char *domain)
{
	struct fi_info *hints = fi_allocinfo(), *info = NULL;
	int rc;

	if (hints == NULL)
		return NULL;
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG;
	hints->mode = FI_CONTEXT | FI_CONTEXT2;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
	                              FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->fabric_attr->prov_name = strdup(prov);
	if (domain != NULL && domain[0] != '\0')
		hints->domain_attr->name = strdup(domain);
	rc = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info);
	fi_freeinfo(hints);
	return rc == 0 ? info : NULL;
}

/* An RDM endpoint of the IA's provider, its address in raw.name. */
static void raw_open(const struct ft_ia *ia)
{
	const char *prov = ft_provider_attr(ia, "DAT_OFI_PROVIDER");
	const char *domain = ft_provider_attr(ia, "DAT_OFI_DOMAIN");
	struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
	struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_CONTEXT,
	                             .size = 64,
	                             .wait_obj = FI_WAIT_NONE};
	int rc;

	FT_REQUIRE(prov != NULL, "the IA names its libfabric provider");
	raw.info = raw_getinfo(prov, domain);
	if (raw.info == NULL)
		raw.info = raw_getinfo(prov, NULL);
	FT_REQUIRE(raw.info != NULL, "fi_getinfo finds an RDM endpoint of %s",
	           prov);
	/* Names (shm's): one of our own, as the IA makes its endpoints'. */
	if (raw.info->addr_format == FI_ADDR_STR &&
	    raw.info->src_addr != NULL) {
		char *n = malloc(raw.info->src_addrlen + 64);
		int len;

		FT_REQUIRE(n != NULL, "memory for the endpoint's name");
		len = snprintf(
		        n, raw.info->src_addrlen + 64, "%.*s_liar_%ld",
		        (int)strnlen(raw.info->src_addr, raw.info->src_addrlen),
		        (const char *)raw.info->src_addr, (long)getpid());
		free(raw.info->src_addr);
		raw.info->src_addr = n;
		raw.info->src_addrlen = (size_t)len + 1;
	}
	rc = fi_fabric(raw.info->fabric_attr, &raw.fabric, NULL);
	FT_REQUIRE(rc == 0, "fi_fabric: %s", fi_strerror(-rc));
	rc = fi_domain(raw.fabric, raw.info, &raw.domain, NULL);
	FT_REQUIRE(rc == 0, "fi_domain: %s", fi_strerror(-rc));
	rc = fi_av_open(raw.domain, &av_attr, &raw.av, NULL);
	FT_REQUIRE(rc == 0, "fi_av_open: %s", fi_strerror(-rc));
	rc = fi_cq_open(raw.domain, &cq_attr, &raw.cq, NULL);
	FT_REQUIRE(rc == 0, "fi_cq_open: %s", fi_strerror(-rc));
	rc = fi_endpoint(raw.domain, raw.info, &raw.ep, NULL);
	FT_REQUIRE(rc == 0, "fi_endpoint: %s", fi_strerror(-rc));
	rc = fi_ep_bind(raw.ep, &raw.av->fid, 0);
	FT_REQUIRE(rc == 0, "fi_ep_bind(av): %s", fi_strerror(-rc));
	rc = fi_ep_bind(raw.ep, &raw.cq->fid, FI_TRANSMIT | FI_RECV);
	FT_REQUIRE(rc == 0, "fi_ep_bind(cq): %s", fi_strerror(-rc));
	rc = fi_enable(raw.ep);
	FT_REQUIRE(rc == 0, "fi_enable: %s", fi_strerror(-rc));
	raw.name_len = sizeof(raw.name);
	rc = fi_getname(&raw.ep->fid, raw.name, &raw.name_len);
	FT_REQUIRE(rc == 0 && raw.name_len > 0 &&
	                   raw.name_len <= sizeof(raw.name),
	           "the liar's %s endpoint has an address (%zu bytes)",
	           raw.info->fabric_attr->prov_name, raw.name_len);
}

static void raw_close(void)
{
	if (raw.ep != NULL)
		fi_close(&raw.ep->fid);
	if (raw.cq != NULL)
		fi_close(&raw.cq->fid);
	if (raw.av != NULL)
		fi_close(&raw.av->fid);
	if (raw.domain != NULL)
		fi_close(&raw.domain->fid);
	if (raw.fabric != NULL)
		fi_close(&raw.fabric->fid);
	if (raw.info != NULL)
		fi_freeinfo(raw.info);
	memset(&raw, 0, sizeof(raw));
}

/* Drive the raw endpoint's provider (nothing completes on it). */
static void raw_progress(void)
{
	struct fi_cq_entry e[8];

	(void)fi_cq_read(raw.cq, e, 8);
}

/* ---- the server ------------------------------------------------------------
 */

static struct ft_ia sia, cia;
static struct ft_listener lst;
/* rbuf: the server's memory; sbuf: the honest client's. */
static struct ft_mr rbuf, sbuf;
static DAT_EP_ATTR ep_attr;

static void recvs_post(struct ft_ep *ep, int n, uint64_t base)
{
	int i;

	for (i = 0; i < n; i++) {
		DAT_LMR_TRIPLET t = ft_lmr_iov(&rbuf, (size_t)i * SLOT, SLOT);
		DAT_DTO_COOKIE c;

		c.as_64 = base + (uint64_t)i;
		FT_DAT_OK(dat_ep_post_recv(ep->ep, 1, &t, c,
		                           DAT_COMPLETION_DEFAULT_FLAG));
	}
}

/* The n receives posted from base come back flushed, in order. */
static void recvs_flushed(struct ft_ep *ep, int n, uint64_t base,
                          const char *what)
{
	char w[160];
	int i;

	for (i = 0; i < n; i++) {
		snprintf(w, sizeof(w), "%s: receive %d flushed", what, i);
		ft_expect_dto(ep->recv_evd, 2 * FT_TIMEOUT_US / 10, ep->ep,
		              DAT_DTO_RECEIVE, base + (uint64_t)i,
		              DAT_DTO_ERR_FLUSHED, -1, NULL, w);
	}
}

/* No event on evd for QUIET_US (the wait drives progress meanwhile). */
static void quiet(DAT_EVD_HANDLE evd, const char *what)
{
	DAT_EVENT ev;
	DAT_RETURN ret = ft_wait(evd, QUIET_US, &ev);

	FT_CHECK(ft_ret_matches(ret, DAT_TIMEOUT_EXPIRED), "%s: %s", what,
	         ret == DAT_SUCCESS ? ft_event_desc(&ev) : ft_ret_str(ret));
}

static void state_is(struct ft_ep *ep, DAT_EP_STATE want, const char *what)
{
	int st = ft_ep_state(ep->ep);

	FT_CHECK(st == (int)want, "%s: EP %s", what,
	         st < 0 ? "state unknown" : ft_ep_state_str(st));
}

static uint64_t ms_since(uint64_t t0_us)
{
	return (ft_now_us() - t0_us) / 1000;
}

/* ---- the liar's control channel --------------------------------------- */

struct chan {
	int fd;
	uint64_t inc;     /* the liar's incarnation on this channel */
	uint64_t srv_inc; /* the server's, from its HELLO */
	size_t in_len;
	unsigned char in[2 * DOFI_RDM_WIRE_MSG_MAX];
	unsigned char cur[DOFI_RDM_WIRE_MSG_MAX]; /* the last message read */
};

/* One connection as the liar knows it. */
struct conn {
	struct chan *ch;
	uint64_t self, peer; /* the liar's id, the server's */
	struct ft_ep sep;    /* the server's EP */
};

static uint64_t next_conn = 0x1000;

static bool chan_send(struct chan *ch, const dofi_rdm_wire_msg_t *m)
{
	unsigned char buf[DOFI_RDM_WIRE_MSG_MAX];
	size_t len, off = 0;

	if (dofi_rdm_wire_encode(buf, sizeof(buf), m, &len, NULL) != DOF_OK)
		return false;
	while (off < len) {
		ssize_t n = send(ch->fd, buf + off, len - off, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		off += (size_t)n;
	}
	return true;
}

/*
 * The next message within ms: 1 (in *m, pointing into ch->cur), 0 none
 * in time, -1 the channel closed, -2 bytes the codec refuses.
 */
static int chan_recv(struct chan *ch, dofi_rdm_wire_msg_t *m, int ms)
{
	uint64_t end = ft_now_us() + (uint64_t)ms * 1000;

	for (;;) {
		struct pollfd p = {.fd = ch->fd, .events = POLLIN};
		size_t size = 0;
		dof_status_t st = DOF_ERR_BUSY;
		uint64_t now;
		ssize_t n;

		if (ch->in_len > 0)
			st = dofi_rdm_wire_decode(ch->in, ch->in_len, m, &size,
			                          NULL);
		if (st == DOF_OK) {
			memcpy(ch->cur, ch->in, size);
			memmove(ch->in, ch->in + size, ch->in_len - size);
			ch->in_len -= size;
			return dofi_rdm_wire_decode(ch->cur, size, m, &size,
			                            NULL) == DOF_OK
			               ? 1
			               : -2;
		}
		if (st != DOF_ERR_BUSY)
			return -2;
		now = ft_now_us();
		if (now >= end)
			return 0;
		/* The raw endpoint's provider moves only when called. */
		raw_progress();
		if (poll(&p, 1, end - now > 10000 ? 10 : 1) <= 0)
			continue;
		n = recv(ch->fd, ch->in + ch->in_len,
		         sizeof(ch->in) - ch->in_len, MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			return -1;
		ch->in_len += (size_t)n;
	}
}

/* Nothing from the server on ch for ms, and ch still open. */
static void chan_quiet(struct chan *ch, int ms, const char *what)
{
	dofi_rdm_wire_msg_t m;
	int r = chan_recv(ch, &m, ms);

	FT_CHECK(r == 0, "%s: %s", what,
	         r == 1    ? dofi_rdm_wire_type_str(m.type)
	         : r == -1 ? "the channel closed"
	         : r == -2 ? "bytes the codec refuses"
	                   : "nothing; the channel stays open");
}

static void names(dofi_rdm_wire_msg_t *m, uint8_t type, const struct conn *c)
{
	memset(m, 0, sizeof(*m));
	m->type = type;
	m->src_inc = c->ch->inc;
	m->dst_inc = c->ch->srv_inc;
	m->src_conn = c->self;
	m->dst_conn = c->peer;
}

/* A channel to the PSP's port: our HELLO, the server's. */
static bool chan_open(struct chan *ch, uint64_t inc)
{
	struct sockaddr_in to;
	dofi_rdm_wire_msg_t m;
	int on = 1, r;

	memset(ch, 0, sizeof(*ch));
	ch->inc = inc;
	memcpy(&to, sia.attr.ia_address_ptr, sizeof(to));
	to.sin_port = htons((uint16_t)(lst.qual & 0xffff));
	ch->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (!FT_CHECK(ch->fd >= 0 && connect(ch->fd, (struct sockaddr *)&to,
	                                     sizeof(to)) == 0,
	              "liar: TCP connection to the PSP at %s",
	              ft_addr_str((struct sockaddr *)&to)))
		return false;
	(void)setsockopt(ch->fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
	memset(&m, 0, sizeof(m));
	m.type = DOFI_RDM_WIRE_HELLO;
	m.src_inc = inc;
	m.ver_lo = m.ver_hi = DOFI_RDM_WIRE_VERSION;
	if (!FT_CHECK(chan_send(ch, &m), "liar: HELLO sent"))
		return false;
	/* The server's progress reads the channel: a wait drives it. */
	r = chan_recv(ch, &m, 100);
	if (r == 0) {
		quiet(lst.cr_evd, "liar: no request event before a REQ");
		r = chan_recv(ch, &m, 5000);
	}
	if (!FT_CHECK(r == 1 && m.type == DOFI_RDM_WIRE_HELLO,
	              "liar: the server's HELLO (%d, %s)", r,
	              r == 1 ? dofi_rdm_wire_type_str(m.type) : "none"))
		return false;
	ch->srv_inc = m.src_inc;
	return true;
}

static void chan_close(struct chan *ch)
{
	if (ch->fd >= 0)
		close(ch->fd);
	ch->fd = -1;
}

/*
 * A connection the way an RDM peer makes one: REQ with the raw
 * endpoint's address, the server's consumer accepts on a new EP, REP,
 * the first message on the data path, RTU; the server reports
 * ESTABLISHED; then NRECV receives are posted on its EP.
 */
static bool conn_open(struct conn *c, struct chan *ch)
{
	dofi_rdm_wire_msg_t m;
	DAT_EVENT ev;
	fi_addr_t fa = FI_ADDR_NOTAVAIL;
	uint64_t end;
	ssize_t rc;
	int r;

	memset(c, 0, sizeof(*c));
	c->ch = ch;
	c->self = ++next_conn;
	FT_DAT_OK(ft_ep_create(&sia, sia.pz, &ep_attr, 16, &c->sep));
	names(&m, DOFI_RDM_WIRE_REQ, c);
	m.dst_conn = 0;
	m.conn_qual = lst.qual;
	m.addr = raw.name;
	m.addr_len = (uint16_t)raw.name_len;
	if (!FT_CHECK(chan_send(ch, &m), "liar: REQ sent"))
		return false;
	if (!ft_expect_event(lst.cr_evd, FT_TIMEOUT_US,
	                     DAT_CONNECTION_REQUEST_EVENT, NULL, &ev,
	                     "server: the liar's request arrives"))
		return false;
	if (FT_DAT_CHECK(
	            dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle,
	                          c->sep.ep, 0, NULL)) != DAT_SUCCESS)
		return false;
	r = chan_recv(ch, &m, 5000);
	if (!FT_CHECK(r == 1 && m.type == DOFI_RDM_WIRE_REP &&
	                      m.dst_conn == c->self && m.src_conn != 0,
	              "liar: REP for its connection (%d, %s)", r,
	              r == 1 ? dofi_rdm_wire_type_str(m.type) : "none"))
		return false;
	c->peer = m.src_conn;
	if (!FT_CHECK(fi_av_insert(raw.av, m.addr, 1, &fa, 0, NULL) == 1,
	              "liar: the server's endpoint address inserted"))
		return false;
	/* The first message, as an honest peer's: the server's warm receive
	 * takes it. The server's provider answers only when driven. */
	end = ft_now_us() + 10 * 1000000ull;
	do {
		rc = fi_inject(raw.ep, NULL, 0, fa);
		if (rc == -FI_EAGAIN) {
			raw_progress();
			(void)dat_evd_dequeue(c->sep.recv_evd, &ev);
			usleep(1000);
		}
	} while (rc == -FI_EAGAIN && ft_now_us() < end);
	if (!FT_CHECK(rc == 0, "liar: the first message goes (%s)",
	              fi_strerror((int)-rc)))
		return false;
	names(&m, DOFI_RDM_WIRE_RTU, c);
	if (!FT_CHECK(chan_send(ch, &m), "liar: RTU sent"))
		return false;
	if (!ft_expect_event(c->sep.conn_evd, FT_TIMEOUT_US,
	                     DAT_CONNECTION_EVENT_ESTABLISHED, c->sep.ep, NULL,
	                     "server: ESTABLISHED with the liar"))
		return false;
	recvs_post(&c->sep, NRECV, c->self << 8);
	return true;
}

static void conn_free(struct conn *c)
{
	ft_ep_free(&c->sep);
}

/* The server's DREP for c, counting what it sent (nothing). */
static void drep_expect(struct conn *c, const char *what)
{
	dofi_rdm_wire_msg_t m;
	int r = chan_recv(c->ch, &m, 2000);

	FT_CHECK(r == 1 && m.type == DOFI_RDM_WIRE_DREP &&
	                 m.src_conn == c->peer && m.dst_conn == c->self &&
	                 m.dst_inc == c->ch->inc && m.sent == 0,
	         "%s: the liar gets a DREP counting 0 (%d, %s, sent %llu)",
	         what, r, r == 1 ? dofi_rdm_wire_type_str(m.type) : "none",
	         r == 1 ? (unsigned long long)m.sent : 0ull);
}

/* The server reports DISCONNECTED within ms of t0; returns the time. */
static uint64_t disconnected_within(struct conn *c, uint64_t t0, uint64_t ms,
                                    const char *what)
{
	char w[160];
	uint64_t took;

	snprintf(w, sizeof(w), "%s: server DISCONNECTED", what);
	ft_expect_event(c->sep.conn_evd, (DAT_TIMEOUT)((ms + 5000) * 1000),
	                DAT_CONNECTION_EVENT_DISCONNECTED, c->sep.ep, NULL, w);
	took = ms_since(t0);
	FT_CHECK(took <= ms, "%s: DISCONNECTED after %llu ms (bound %llu ms)",
	         what, (unsigned long long)took, (unsigned long long)ms);
	return took;
}

/* ---- the cases ---------------------------------------------------------- */

/*
 * 1 and 3: a graceful DREQ counting sent messages, none of which was
 * sent: the server waits the link bound at most, then ends, flushes
 * what is posted and answers with a DREP counting 0.
 */
static void case_dreq(uint64_t inc, uint64_t sent, const char *what)
{
	struct chan ch;
	struct conn c;
	dofi_rdm_wire_msg_t m;
	uint64_t t0, took;

	ft_log("case: %s", what);
	if (!chan_open(&ch, inc)) {
		chan_close(&ch);
		return;
	}
	if (conn_open(&c, &ch)) {
		names(&m, DOFI_RDM_WIRE_DREQ, &c);
		m.sent = sent;
		t0 = ft_now_us();
		FT_CHECK(chan_send(&ch, &m), "%s: sent", what);
		took = disconnected_within(&c, t0, LINK_MS + MARGIN_MS, what);
		ft_log("  (after %llu ms; the bound is %llu ms)",
		       (unsigned long long)took, (unsigned long long)LINK_MS);
		recvs_flushed(&c.sep, NRECV, c.self << 8, what);
		drep_expect(&c, what);
		state_is(&c.sep, DAT_EP_STATE_DISCONNECTED, what);
	}
	conn_free(&c);
	chan_close(&ch);
}

/* 2: the server's graceful end answered by a DREP counting 2^63. */
static void case_drep_lie(uint64_t inc)
{
	const char *what = "2: DREP counting 2^63";
	struct chan ch;
	struct conn c;
	dofi_rdm_wire_msg_t m;
	uint64_t t0;
	int r;

	ft_log("case: %s", what);
	if (!chan_open(&ch, inc)) {
		chan_close(&ch);
		return;
	}
	if (conn_open(&c, &ch)) {
		FT_DAT_CHECK(
		        dat_ep_disconnect(c.sep.ep, DAT_CLOSE_GRACEFUL_FLAG));
		r = chan_recv(&ch, &m, 2000);
		FT_CHECK(r == 1 && m.type == DOFI_RDM_WIRE_DREQ &&
		                 m.flags == 0 && m.sent == 0 &&
		                 m.dst_conn == c.self && m.src_conn == c.peer,
		         "%s: the server's graceful DREQ counts 0 (%d, %s)",
		         what, r,
		         r == 1 ? dofi_rdm_wire_type_str(m.type) : "none");
		names(&m, DOFI_RDM_WIRE_DREP, &c);
		m.sent = LIE;
		t0 = ft_now_us();
		FT_CHECK(chan_send(&ch, &m), "%s: sent", what);
		disconnected_within(&c, t0, AT_ONCE_MS, what);
		recvs_flushed(&c.sep, NRECV, c.self << 8, what);
		chan_quiet(&ch, 300, "after the DREP: nothing more");
	}
	conn_free(&c);
	chan_close(&ch);
}

/* The honest connection: data both ways, every byte checked. */
static void honest(void)
{
	struct ft_ep cep, sep;
	DAT_EVENT ev;
	int i;

	ft_log("case 4e: an honest client on the same PSP");
	FT_DAT_OK(ft_ep_create(&cia, cia.pz, &ep_attr, 16, &cep));
	FT_DAT_OK(ft_ep_create(&sia, sia.pz, &ep_attr, 16, &sep));
	if (!ft_connect_local(&cia, &cep, &sia, &sep, &lst))
		goto out;
	memset(rbuf.buf, 0, rbuf.len);
	recvs_post(&sep, NHONEST, 0x500);
	for (i = 0; i < NHONEST; i++) {
		DAT_LMR_TRIPLET t = ft_lmr_iov(&sbuf, (size_t)i * SLOT, SLOT);
		DAT_DTO_COOKIE ck;

		ft_fill((char *)sbuf.buf + (size_t)i * SLOT, SLOT, 0x600 + i);
		ck.as_64 = 0x600 + (uint64_t)i;
		FT_DAT_CHECK(dat_ep_post_send(cep.ep, 1, &t, ck,
		                              DAT_COMPLETION_DEFAULT_FLAG));
	}
	for (i = 0; i < NHONEST; i++) {
		ft_expect_dto(cep.req_evd, FT_TIMEOUT_US, cep.ep, DAT_DTO_SEND,
		              0x600 + (uint64_t)i, DAT_DTO_SUCCESS, SLOT, &ev,
		              "honest: the client's Send completes");
		ft_expect_dto(sep.recv_evd, FT_TIMEOUT_US, sep.ep,
		              DAT_DTO_RECEIVE, 0x500 + (uint64_t)i,
		              DAT_DTO_SUCCESS, SLOT, &ev,
		              "honest: the server receives it");
		FT_CHECK(
		        ft_pattern_mismatch((char *)rbuf.buf + (size_t)i * SLOT,
		                            SLOT, 0x600 + i) < 0,
		        "honest: message %d intact", i);
	}
	/* And back: the server sends from its memory, the client receives
	 * into its own. */
	{
		DAT_LMR_TRIPLET t = ft_lmr_iov(&rbuf, 0, SLOT);
		DAT_LMR_TRIPLET r = ft_lmr_iov(&sbuf, 0, SLOT);
		DAT_DTO_COOKIE ck;

		memset(sbuf.buf, 0, SLOT);
		ck.as_64 = 0x700;
		FT_DAT_CHECK(dat_ep_post_recv(cep.ep, 1, &r, ck,
		                              DAT_COMPLETION_DEFAULT_FLAG));
		ft_fill(rbuf.buf, SLOT, 0x701);
		ck.as_64 = 0x701;
		FT_DAT_CHECK(dat_ep_post_send(sep.ep, 1, &t, ck,
		                              DAT_COMPLETION_DEFAULT_FLAG));
		ft_expect_dto(sep.req_evd, FT_TIMEOUT_US, sep.ep, DAT_DTO_SEND,
		              0x701, DAT_DTO_SUCCESS, SLOT, &ev,
		              "honest: the server's Send completes");
		ft_expect_dto(cep.recv_evd, FT_TIMEOUT_US, cep.ep,
		              DAT_DTO_RECEIVE, 0x700, DAT_DTO_SUCCESS, SLOT,
		              &ev, "honest: the client receives it");
		FT_CHECK(ft_pattern_mismatch(sbuf.buf, SLOT, 0x701) < 0,
		         "honest: the server's message intact");
	}
	ft_disconnect_local(&cep, &sep, DAT_CLOSE_GRACEFUL_FLAG);
out:
	ft_ep_free(&cep);
	ft_ep_free(&sep);
}

/* 4: replays, strays and another incarnation; then an honest client. */
static void case_replays(uint64_t inc)
{
	struct chan ch, ch2;
	struct conn c1, c2;
	dofi_rdm_wire_msg_t dreq, m;
	uint64_t t0, inc2 = inc ^ 0x5a5a5a5a00000000ull;
	int r;

	ft_log("case 4a: a DREQ replayed after the end");
	if (!chan_open(&ch, inc)) {
		chan_close(&ch);
		honest();
		return;
	}
	if (!conn_open(&c1, &ch))
		goto out1;
	names(&dreq, DOFI_RDM_WIRE_DREQ, &c1);
	dreq.sent = 0;
	t0 = ft_now_us();
	FT_CHECK(chan_send(&ch, &dreq), "4a: honest DREQ counting 0 sent");
	disconnected_within(&c1, t0, AT_ONCE_MS, "4a: DREQ counting 0");
	recvs_flushed(&c1.sep, NRECV, c1.self << 8, "4a");
	drep_expect(&c1, "4a");
	FT_CHECK(chan_send(&ch, &dreq), "4a: the DREQ replayed");
	quiet(c1.sep.conn_evd, "4a: no event for the replay");
	quiet(c1.sep.recv_evd, "4a: no completion for the replay");
	state_is(&c1.sep, DAT_EP_STATE_DISCONNECTED, "4a: after the replay");
	chan_quiet(&ch, 200, "4a: no answer to the replay");

	ft_log("case 4b: a DREP nobody asked for");
	if (!conn_open(&c2, &ch))
		goto out2;
	names(&m, DOFI_RDM_WIRE_DREP, &c2);
	m.sent = 5;
	FT_CHECK(chan_send(&ch, &m), "4b: DREP counting 5 sent");
	quiet(c2.sep.conn_evd, "4b: no event for the DREP");
	quiet(c2.sep.recv_evd, "4b: receives stay posted");
	state_is(&c2.sep, DAT_EP_STATE_CONNECTED, "4b: after the DREP");
	chan_quiet(&ch, 200, "4b: no answer to the DREP");
	/* A DREP for the ended connection, too. */
	names(&m, DOFI_RDM_WIRE_DREP, &c1);
	m.sent = LIE;
	FT_CHECK(chan_send(&ch, &m), "4b: DREP for the ended connection");
	quiet(c2.sep.conn_evd, "4b: no event for it");
	state_is(&c2.sep, DAT_EP_STATE_CONNECTED, "4b: after it");

	ft_log("case 4c: a DREQ from another incarnation of the peer");
	if (chan_open(&ch2, inc2)) {
		names(&m, DOFI_RDM_WIRE_DREQ, &c2);
		m.src_inc = inc2;
		m.sent = 0;
		FT_CHECK(chan_send(&ch2, &m),
		         "4c: DREQ for a connection of another "
		         "incarnation sent");
		quiet(c2.sep.conn_evd, "4c: no event for it");
		state_is(&c2.sep, DAT_EP_STATE_CONNECTED, "4c: after it");
		chan_quiet(&ch2, 200, "4c: no answer on its channel");
		chan_close(&ch2);
		quiet(c2.sep.conn_evd, "4c: its channel's end ends nothing");
		state_is(&c2.sep, DAT_EP_STATE_CONNECTED,
		         "4c: after its channel's end");
	} else {
		chan_close(&ch2);
	}

	ft_log("case 4d: a DREQ with an incarnation not the channel's");
	names(&m, DOFI_RDM_WIRE_DREQ, &c2);
	m.src_inc = inc2;
	m.sent = 0;
	t0 = ft_now_us();
	FT_CHECK(chan_send(&ch, &m), "4d: sent on the connection's channel");
	ft_expect_event(c2.sep.conn_evd, 5 * 1000000u,
	                DAT_CONNECTION_EVENT_BROKEN, c2.sep.ep, NULL,
	                "4d: the server closes the channel: BROKEN");
	FT_CHECK(ms_since(t0) <= AT_ONCE_MS, "4d: BROKEN after %llu ms",
	         (unsigned long long)ms_since(t0));
	recvs_flushed(&c2.sep, NRECV, c2.self << 8, "4d");
	r = chan_recv(&ch, &m, 2000);
	FT_CHECK(r == -1, "4d: the liar's channel is closed (%d)", r);
out2:
	conn_free(&c2);
out1:
	conn_free(&c1);
	chan_close(&ch);
	honest();
}

static bool ia_is_rdm(const struct ft_ia *ia, const char **what)
{
	DAT_COUNT i;

	*what = "no DAT_OFI_ENDPOINT attribute";
	for (i = 0; i < ia->attr.num_transport_attr; i++) {
		const DAT_NAMED_ATTR *a = &ia->attr.transport_attr[i];

		if (strcmp(a->name, "DAT_OFI_ENDPOINT") != 0)
			continue;
		*what = a->value;
		return strncmp(a->value, "FI_EP_RDM", 9) == 0;
	}
	return false;
}

int main(int argc, char **argv)
{
	const char *kind;
	uint64_t inc;
	char link[32];

	ft_init(argc, argv, "dat_rdm_liar",
	        "a peer lying in its DREQ/DREP counts cannot hang an RDM "
	        "connection's end",
	        NULL);
	snprintf(link, sizeof(link), "%llu", (unsigned long long)LINK_MS);
	setenv("DAPL_OFI_LINK_TIMEOUT", link, 1);
	ft_ia_open(ft_opts.ia_name, &sia);
	if (!ia_is_rdm(&sia, &kind)) {
		ft_ia_close(&sia);
		ft_notrun("dat_rdm_liar applies to RDM fabrics (the RDM "
		          "backend's control protocol); IA %s: %s",
		          ft_opts.ia_name, kind);
	}
	/* The honest client's IA; a second IA also starts the progress
	 * threads. */
	ft_ia_open(ft_opts.ia_name, &cia);
	ft_ep_attr_default(&sia, &ep_attr);
	FT_DAT_OK(ft_mr_create(&sia, sia.pz, NHONEST * SLOT,
	                       DAT_MEM_PRIV_ALL_FLAG, &rbuf));
	FT_DAT_OK(ft_mr_create(&cia, cia.pz, NHONEST * SLOT,
	                       DAT_MEM_PRIV_ALL_FLAG, &sbuf));
	FT_DAT_OK(ft_listen(&sia, &lst));
	raw_open(&sia);
	inc = ((uint64_t)getpid() << 32) ^ ft_now_us();
	if (inc == 0)
		inc = 1;

	case_dreq(inc, LIE, "1: DREQ counting 2^63");
	case_drep_lie(inc);
	case_dreq(inc, NRECV, "3: DREQ counting the 2 receives, none sent");
	case_replays(inc);

	raw_close();
	ft_listener_free(&lst);
	ft_mr_free(&sbuf);
	ft_mr_free(&rbuf);
	ft_ia_close(&cia);
	ft_ia_close(&sia);
	return ft_finish();
}
