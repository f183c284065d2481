/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * The RDM connection backend (dofi_cm.h): DAT connections on reliable
 * datagram endpoints (FI_EP_RDM: efa, shm, tcp;ofi_rxm, udp;ofi_rxd),
 * which have no connection manager of their own.
 *
 * Control: TCP channels between IAs carry the protocol of
 * dapl-ofi-rdm-wire(7) (codec: dofi_rdm_wire.c). A PSP or RSP listens on
 * TCP port dofi_cm_port(qual) of the IA's IP, as on tcp. A connect to
 * (ip, qual) goes over the channel to that address, opened by the first
 * connection that needs it and shared by every later one: control
 * sockets grow with peers and qualifiers, not with connections. Every
 * socket is non-blocking and watched by one epoll fd, the backend's wait
 * fd, so the progress thread (or the consumer's waits) drive it. A
 * channel's end (the peer process exited: FIN or RST; a dead host:
 * keepalive and TCP_USER_TIMEOUT at the link bound) ends every connection
 * it carries: BROKEN, with what is posted flushed.
 *
 * Data: one RDM fi_endpoint per connected EP, bound to its domain's AV
 * (FI_AV_TABLE, one per domain: the IA's, or a PZ's own) and the EVDs'
 * CQs. The peer's endpoint address comes in the REQ or REP and is
 * inserted in the AV; ep->peer is where DTOs go. A connection ends here
 * (dofi_rdm_stop) with the EP's state, then its receives taken back and
 * flushed; its endpoint closes DOFI_RDM_CLOSE_NS later, from the timers,
 * or at EP reset or free (a post that read the old state may still be
 * inside libfabric), and its requests are flushed then, once libfabric
 * reads their buffers no more.
 *
 * Everything read from a channel is untrusted: framed and checked by the
 * codec, admitted against the channel's HELLO, matched against the
 * connection it names; a channel that sends garbage is closed.
 */
#include "config.h"

#define DOFI_LOG_COMP "cm"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "dofi_cm.h"
#include "dofi_rdm_wire.h"

/* The link bound by default (dapl-ofi(7), Lost links), and its least. */
#define DOFI_RDM_LINK_MS     20000ull
#define DOFI_RDM_LINK_MIN_MS 1000ull
/* P's wait for the RTU, in link bounds (dofi_rdm_accept). */
#define DOFI_RDM_RTU_BOUNDS  3ull
/*
 * P's wait, once the RTU is in, for its receive of the requester's first
 * message to be read (RDM_EP_FIRST_WAIT): that message went before the
 * RTU, so it is only in flight.
 */
#define DOFI_RDM_FIRST_NS    (2ull * 1000000000ull)
#define DOFI_RDM_EVENTS      64
/*
 * How long after a connection's end its endpoint stays open: posts take
 * no lock of ours, and one that read the state just before the end is
 * out of libfabric by then (a post retrying EAGAIN stops at the end:
 * DOFI_RETRY_POST). As DOFI_CLOSE_NS on MSG fabrics (dofi_cm_msg.c).
 */
#define DOFI_RDM_CLOSE_NS (20ull * 1000000ull)

/* What an epoll entry is (the first member of each). */
enum { RDM_POLL_LISTEN = 1, RDM_POLL_CHAN };

/* A channel's state. */
enum {
	RDM_CHAN_CONNECTING, /* our connect() is under way */
	RDM_CHAN_HELLO,      /* our HELLO sent, the peer's awaited */
	RDM_CHAN_UP,         /* HELLOs exchanged */
	RDM_CHAN_DEAD,       /* closed; freed with its last user */
};

/* A connection's state in the protocol (dofi_rdm_ep_t.st). */
enum {
	RDM_EP_IDLE,     /* no connection */
	RDM_EP_REQ_WAIT, /* active: REQ waits for the channel's HELLO */
	RDM_EP_REQ_SENT, /* active: REQ sent, answer awaited */
	RDM_EP_WARM,     /* active: REP in, the first message to go */
	RDM_EP_REP_SENT, /* passive: REP sent, RTU awaited */
	/* passive: RTU in, ESTABLISHED held until the receive of the
	 * requester's first message is read (dofi_rdm_first_check) */
	RDM_EP_FIRST_WAIT,
	RDM_EP_UP,   /* established */
	RDM_EP_DOWN, /* ended (DREQ sent or received) */
	/* A graceful end waits for the peer's messages (dofi_rdm_drain):
	 * our DREQ sent, its DREP and what that counts awaited; */
	RDM_EP_DRAIN_OUT,
	/* its DREQ received, what that counts awaited, our DREP owed. */
	RDM_EP_DRAIN_IN,
};

typedef struct dofi_rdm_chan {
	int kind; /* RDM_POLL_CHAN: first */
	dofi_list_t link;
	dofi_ia_t *ia;
	int fd;
	int state;
	int active;                /* we dialled it: peer is the dialled */
	int failed;                /* ended; its users not yet told */
	int err;                   /* why (errno; 0: closed by the peer) */
	struct sockaddr_in peer;   /* address:port */
	uint64_t peer_inc;         /* from its HELLO */
	dofi_list_t conns;         /* dofi_rdm_ep_t.chan_link */
	dofi_list_t first_wait;    /* those in RDM_EP_FIRST_WAIT */
	int nref;                  /* connections and requests on it */
	uint32_t ev;               /* epoll events asked */
	size_t in_len;
	unsigned char in[DOFI_RDM_WIRE_MSG_MAX];
	unsigned char *out;
	size_t out_len, out_cap;
} dofi_rdm_chan_t;

typedef struct dofi_rdm_sp {
	int kind; /* RDM_POLL_LISTEN: first */
	int fd;
	dofi_sp_t *sp;
	struct dofi_rdm_sp *next; /* dofi_rdm_ia_t.dead_sps */
} dofi_rdm_sp_t;

/* An AV per domain the IA's connections use; or, where the fabric wants
 * it (traits->av_per_ep), one per connection, owned by its endpoint. */
typedef struct dofi_rdm_av {
	dofi_dom_t *dom;
	struct fid_av *av;
	struct dofi_rdm_av *next;
	int own; /* the connection's own: closed with its endpoint */
} dofi_rdm_av_t;

typedef struct dofi_rdm_ia {
	int epfd;
	uint64_t inc;       /* our incarnation */
	uint64_t next_conn; /* connection ids: a counter */
	uint64_t link_ns;   /* the link bound; 0: keepalive off */
	dofi_list_t chans;
	dofi_map_t conns; /* our connection id -> dofi_ep_t */
	dofi_rdm_av_t *avs;
	struct fi_info *conn_info; /* what endpoints open with */
	int failed;                /* a channel failed: see progress */
	/* Listeners closed while an epoll batch may name them: freed once
	 * it is over. */
	struct dofi_rdm_sp *dead_sps;
} dofi_rdm_ia_t;

typedef struct dofi_rdm_ep {
	dofi_ep_t *ep;
	int st;
	dofi_rdm_chan_t *chan;
	dofi_list_t chan_link;
	dofi_list_t first_link; /* in chan->first_wait (first_linked) */
	int first_linked;
	uint64_t self_conn, peer_conn, peer_inc;
	dofi_rdm_av_t *av;
	fi_addr_t fi_peer; /* inserted in av; FI_ADDR_NOTAVAIL: none */
	uint16_t name_len;
	unsigned char name[DOFI_RDM_WIRE_ADDR_MAX];
	/* The passive side's receive for the active side's first message
	 * (dofi_rdm_warm). */
	dofi_op_t warm_op;
	/* A graceful end's wait (RDM_EP_DRAIN_*): the messages the peer
	 * counted (once want_known), until drain_at; put_off: our own
	 * consumer's end waits too (dofi_cm_up_drained ends it). */
	int want_known, put_off;
	uint64_t want, drain_at;
	/* Ended (dofi_rdm_stop): the endpoint closes at close_at. */
	int close_pending;
	uint64_t close_at;
	/* A REQ waiting for its channel's HELLO. */
	uint64_t qual;
	uint16_t plen;
	unsigned char pdata[DOFI_RDM_WIRE_PDATA_MAX];
} dofi_rdm_ep_t;

typedef struct dofi_rdm_cr {
	dofi_rdm_chan_t *chan;
	uint64_t peer_inc, peer_conn;
	int answered;
	/* The requester gave up (its REJ_CM came): its address may name an
	 * endpoint closed since (dofi_rdm_accept). */
	int gone;
	uint16_t addr_len;
	unsigned char addr[DOFI_RDM_WIRE_ADDR_MAX];
} dofi_rdm_cr_t;

static inline dofi_rdm_ia_t *dofi_rdm_ia(dofi_ia_t *ia)
{
	return ia->cm;
}

static inline dofi_rdm_ep_t *dofi_rdm_ep(dofi_ep_t *ep)
{
	return ep->cm;
}

static inline const void *dofi_rdm_key(uint64_t id)
{
	return (const void *)(uintptr_t)id;
}

/* ---- channels ------------------------------------------------------------ */

static void dofi_rdm_chan_arm(dofi_rdm_chan_t *ch, uint32_t ev)
{
	struct epoll_event e = {.events = ev, .data.ptr = ch};

	if (ch->fd < 0 || ch->ev == ev)
		return;
	if (epoll_ctl(dofi_rdm_ia(ch->ia)->epfd, EPOLL_CTL_MOD, ch->fd, &e) ==
	    0)
		ch->ev = ev;
}

/* The channel ended (err: errno, 0 for the peer's close); its users are
 * told at the next progress (dofi_rdm_reap). ia->lock held. */
static void dofi_rdm_chan_fail(dofi_rdm_chan_t *ch, int err)
{
	if (ch->state == RDM_CHAN_DEAD)
		return;
	if (err != 0 || ch->state != RDM_CHAN_UP || !dofi_list_empty(&ch->conns))
		dof_info(DOFI_LOG, "control channel to %s:%u ended: %s",
		         inet_ntoa(ch->peer.sin_addr), ntohs(ch->peer.sin_port),
		         err ? strerror(err) : "closed by the peer");
	(void)epoll_ctl(dofi_rdm_ia(ch->ia)->epfd, EPOLL_CTL_DEL, ch->fd, NULL);
	close(ch->fd);
	ch->fd = -1;
	ch->state = RDM_CHAN_DEAD;
	ch->err = err;
	ch->failed = 1;
	ch->out_len = 0;
	dofi_rdm_ia(ch->ia)->failed = 1;
	dofi_progress_wake(ch->ia);
}

static void dofi_rdm_chan_put(dofi_rdm_chan_t *ch)
{
	if (--ch->nref > 0 || ch->state != RDM_CHAN_DEAD || ch->failed)
		return;
	dofi_list_del(&ch->link);
	free(ch->out);
	free(ch);
}

/* Write what is queued; what the socket does not take waits for EPOLLOUT. */
static void dofi_rdm_chan_flush(dofi_rdm_chan_t *ch)
{
	while (ch->out_len > 0 && ch->state != RDM_CHAN_DEAD &&
	       ch->state != RDM_CHAN_CONNECTING) {
		ssize_t n = send(ch->fd, ch->out, ch->out_len,
		                 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n <= 0) {
			dofi_rdm_chan_fail(ch, errno);
			return;
		}
		memmove(ch->out, ch->out + n, ch->out_len - (size_t)n);
		ch->out_len -= (size_t)n;
	}
	if (ch->state != RDM_CHAN_DEAD)
		dofi_rdm_chan_arm(ch, ch->out_len > 0 ||
		                                      ch->state ==
		                                              RDM_CHAN_CONNECTING
		                              ? EPOLLIN | EPOLLOUT
		                              : EPOLLIN);
}

/* Queue m on ch and write. ia->lock held. */
static void dofi_rdm_send(dofi_rdm_chan_t *ch, const dofi_rdm_wire_msg_t *m)
{
	unsigned char buf[DOFI_RDM_WIRE_MSG_MAX];
	size_t len;

	if (ch == NULL || ch->state == RDM_CHAN_DEAD)
		return;
	if (dofi_rdm_wire_encode(buf, sizeof(buf), m, &len, NULL) != DOF_OK)
		return;
	if (ch->out_len + len > ch->out_cap) {
		size_t cap = ch->out_cap ? ch->out_cap * 2 : 4096;
		unsigned char *o;

		while (cap < ch->out_len + len)
			cap *= 2;
		o = realloc(ch->out, cap);
		if (o == NULL) {
			dofi_rdm_chan_fail(ch, ENOMEM);
			return;
		}
		ch->out = o;
		ch->out_cap = cap;
	}
	memcpy(ch->out + ch->out_len, buf, len);
	ch->out_len += len;
	dof_debug(DOFI_LOG, "channel %s:%u: %s sent",
	          inet_ntoa(ch->peer.sin_addr), ntohs(ch->peer.sin_port),
	          dofi_rdm_wire_type_str(m->type));
	dofi_rdm_chan_flush(ch);
}

/* A message about a connection: the names filled in. */
static void dofi_rdm_names(dofi_rdm_wire_msg_t *m, uint8_t type,
                           const dofi_rdm_ia_t *ri, uint64_t peer_inc,
                           uint64_t self_conn, uint64_t peer_conn)
{
	memset(m, 0, sizeof(*m));
	m->type = type;
	m->src_inc = ri->inc;
	m->dst_inc = peer_inc;
	m->src_conn = self_conn;
	m->dst_conn = peer_conn;
}

static void dofi_rdm_send_hello(dofi_rdm_chan_t *ch)
{
	dofi_rdm_wire_msg_t m;

	memset(&m, 0, sizeof(m));
	m.type = DOFI_RDM_WIRE_HELLO;
	m.src_inc = dofi_rdm_ia(ch->ia)->inc;
	m.ver_lo = DOFI_RDM_WIRE_VERSION;
	m.ver_hi = DOFI_RDM_WIRE_VERSION;
	ch->state = RDM_CHAN_HELLO;
	dofi_rdm_send(ch, &m);
}

static void dofi_rdm_send_rej_cm(dofi_rdm_chan_t *ch, uint64_t self_conn,
                                 uint64_t peer_conn, uint16_t reason)
{
	dofi_rdm_wire_msg_t m;

	if (ch == NULL || ch->state != RDM_CHAN_UP)
		return;
	dofi_rdm_names(&m, DOFI_RDM_WIRE_REJ_CM, dofi_rdm_ia(ch->ia),
	               ch->peer_inc, self_conn, peer_conn);
	m.reason = reason;
	dofi_rdm_send(ch, &m);
}

/* Keepalive and TCP_USER_TIMEOUT at the link bound (dapl-ofi(7)). */
static void dofi_rdm_sock_opts(dofi_ia_t *ia, int fd)
{
	uint64_t ns = dofi_rdm_ia(ia)->link_ns;
	int on = 1;

	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
	if (ns != 0) {
		int ms = (int)(ns / 1000000ull);
		int idle = ms / 2000 > 0 ? ms / 2000 : 1;
		int intvl = ms / 10000 > 0 ? ms / 10000 : 1;
		int cnt = 10;
		unsigned int uto = (unsigned int)ms;

		(void)setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
		(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle,
		                 sizeof(idle));
		(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl,
		                 sizeof(intvl));
		(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt,
		                 sizeof(cnt));
		(void)setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &uto,
		                 sizeof(uto));
	}
}

static dofi_rdm_chan_t *dofi_rdm_chan_new(dofi_ia_t *ia, int fd,
                                          const struct sockaddr_in *peer,
                                          int active, int state)
{
	dofi_rdm_chan_t *ch = calloc(1, sizeof(*ch));
	struct epoll_event e = {.events = EPOLLIN, .data.ptr = NULL};

	if (ch == NULL)
		return NULL;
	ch->kind = RDM_POLL_CHAN;
	ch->ia = ia;
	ch->fd = fd;
	ch->peer = *peer;
	ch->active = active;
	ch->state = state;
	dofi_list_init(&ch->conns);
	dofi_list_init(&ch->first_wait);
	e.events = state == RDM_CHAN_CONNECTING ? EPOLLIN | EPOLLOUT : EPOLLIN;
	e.data.ptr = ch;
	ch->ev = e.events;
	if (epoll_ctl(dofi_rdm_ia(ia)->epfd, EPOLL_CTL_ADD, fd, &e) != 0) {
		free(ch);
		return NULL;
	}
	dofi_list_add_tail(&dofi_rdm_ia(ia)->chans, &ch->link);
	return ch;
}

/*
 * The channel to dst (address:port), dialled now if there is none; NULL
 * with *err when it cannot be (an error connect() gave at once).
 */
static dofi_rdm_chan_t *dofi_rdm_chan_to(dofi_ia_t *ia,
                                         const struct sockaddr_in *dst,
                                         int *err)
{
	dofi_rdm_ia_t *ri = dofi_rdm_ia(ia);
	dofi_rdm_chan_t *ch;
	dofi_list_t *e;
	int fd, rc, state = RDM_CHAN_CONNECTING;

	for (e = ri->chans.next; e != &ri->chans; e = e->next) {
		ch = dofi_container_of(e, dofi_rdm_chan_t, link);
		if (ch->active && ch->state != RDM_CHAN_DEAD &&
		    ch->peer.sin_addr.s_addr == dst->sin_addr.s_addr &&
		    ch->peer.sin_port == dst->sin_port)
			return ch;
	}
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		*err = errno;
		return NULL;
	}
	dofi_rdm_sock_opts(ia, fd);
	/*
	 * Its ephemeral port, live or in TIME_WAIT after the channel, must
	 * not keep a PSP or RSP whose conn_qual maps to the same port from
	 * listening there: Linux lets a listener bind beside sockets that
	 * all set SO_REUSEADDR (OFED's dapltest limit test took RSPs from
	 * 0xAffab1e on, port 43806 on, and met one).
	 */
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &(int){1}, sizeof(int));
	do
		rc = connect(fd, (const struct sockaddr *)dst, sizeof(*dst));
	while (rc != 0 && errno == EINTR);
	if (rc != 0 && errno != EINPROGRESS) {
		*err = errno;
		close(fd);
		return NULL;
	}
	if (rc == 0)
		state = RDM_CHAN_HELLO;
	ch = dofi_rdm_chan_new(ia, fd, dst, 1, state);
	if (ch == NULL) {
		close(fd);
		*err = ENOMEM;
		return NULL;
	}
	if (state == RDM_CHAN_HELLO)
		dofi_rdm_send_hello(ch);
	return ch;
}

/* ---- addresses ----------------------------------------------------------- */

/*
 * The AV a new connection's endpoint binds: its domain's, shared by the
 * IA's connections; or, on a fabric whose AV entries cost every
 * endpoint bound to it (traits->av_per_ep), one of its own.
 */
static dofi_rdm_av_t *dofi_rdm_av_get(dofi_ia_t *ia, dofi_dom_t *dom)
{
	dofi_rdm_ia_t *ri = dofi_rdm_ia(ia);
	struct fi_av_attr attr = {.type = FI_AV_TABLE};
	int own = ia->traits->av_per_ep;
	dofi_rdm_av_t *a;
	int rc;

	for (a = own ? NULL : ri->avs; a != NULL; a = a->next)
		if (a->dom == dom)
			return a;
	a = calloc(1, sizeof(*a));
	if (a == NULL)
		return NULL;
	/* One peer: the connection's. */
	if (own)
		attr.count = 1;
	rc = fi_av_open(dom->domain, &attr, &a->av, NULL);
	if (rc != 0) {
		dof_warn(DOFI_LOG, "fi_av_open: %s", fi_strerror(-rc));
		free(a);
		return NULL;
	}
	a->dom = dom;
	a->own = own;
	if (!own) {
		a->next = ri->avs;
		ri->avs = a;
	}
	return a;
}

/* A connection's own AV goes once its endpoint is closed. */
static void dofi_rdm_av_put(dofi_rdm_av_t *a)
{
	if (a == NULL || !a->own)
		return;
	(void)fi_close(&a->av->fid);
	free(a);
}

/* Insert the peer's endpoint address; ep->peer is where DTOs go. */
static dof_status_t dofi_rdm_peer_insert(dofi_ep_t *ep,
                                         const unsigned char *addr,
                                         size_t len)
{
	dofi_rdm_ep_t *re = dofi_rdm_ep(ep);
	fi_addr_t fa = FI_ADDR_NOTAVAIL;
	int rc;

	(void)len; /* the provider knows its addresses' length */
	if (re->av == NULL)
		return DOF_ERR_INVALID_STATE;
	rc = fi_av_insert(re->av->av, addr, 1, &fa, 0, NULL);
	if (rc != 1 || fa == FI_ADDR_NOTAVAIL) {
		dof_warn(DOFI_LOG, "EP %p: the peer's address is refused (%d)",
		         (void *)ep, rc);
		return DOF_ERR_BAD_ADDRESS;
	}
	re->fi_peer = fa;
	ep->peer = fa;
	return DOF_OK;
}

/*
 * Where endpoint addresses are names (FI_ADDR_STR: shm), each endpoint's
 * is the IA's with the IA's incarnation and a number of its own after
 * it, unique in the process: shm takes the name for its shared memory
 * region, and two endpoints cannot share one. The IA's name is the
 * process id alone, and a killed process leaves its regions behind: shm
 * refuses to open a region of that name again while a process with
 * that id lives (FI_EBUSY, libfabric 1.17), so a later process given
 * the same id would fail its connections without the incarnation.
 */
static dof_status_t info_name_set(dofi_rdm_ia_t *ri, dofi_ia_t *ia)
{
	/* Process-wide: the IAs of a process share their base name. */
	static _Atomic uint64_t next_name;
	struct fi_info *info = ri->conn_info;
	const char *base = ia->info->src_addr;
	size_t blen = ia->info->src_addrlen;
	char *name;
	int n;

	if (info->addr_format != FI_ADDR_STR || base == NULL || blen == 0)
		return DOF_OK;
	name = malloc(blen + 48);
	if (name == NULL)
		return DOF_ERR_NO_MEMORY;
	n = snprintf(name, blen + 48, "%.*s_%016llx_%llu",
	             (int)strnlen(base, blen), base,
	             (unsigned long long)ri->inc,
	             (unsigned long long)atomic_fetch_add(&next_name, 1));
	free(info->src_addr);
	info->src_addr = name;
	info->src_addrlen = (size_t)n + 1;
	return DOF_OK;
}

static void dofi_rdm_close_locked(dofi_ep_t *ep, struct fid_ep *fep);

/* Open the connection's endpoint, bound to its domain's AV; its address
 * in re->name. ia->lock held. */
static dof_status_t dofi_rdm_open(dofi_ep_t *ep, int passive)
{
	dofi_ia_t *ia = ep->obj.ia;
	dofi_rdm_ia_t *ri = dofi_rdm_ia(ia);
	dofi_rdm_ep_t *re = dofi_rdm_ep(ep);
	struct fid_ep *fep;
	struct fi_info *info;
	size_t len = sizeof(re->name);
	dofi_rdm_av_t *av;
	dof_status_t st;
	int extra;

	if (ep->pz == NULL)
		return DOF_ERR_INVALID_STATE;
	if (ri->conn_info == NULL) {
		ri->conn_info = fi_dupinfo(ia->info);
		if (ri->conn_info == NULL)
			return DOF_ERR_NO_MEMORY;
		/*
		 * Each endpoint has an address of its own: an IP one keeps the
		 * IA's IP on any port; another (shm's name) is the
		 * provider's to choose, or every endpoint would take the
		 * IA's (shm crashes in fi_enable on the second).
		 */
		if (ri->conn_info->src_addr != NULL &&
		    ri->conn_info->addr_format == FI_SOCKADDR_IN &&
		    ri->conn_info->src_addrlen >= sizeof(struct sockaddr_in)) {
			((struct sockaddr_in *)ri->conn_info->src_addr)
			        ->sin_port = 0;
		} else if (ri->conn_info->addr_format != FI_ADDR_STR) {
			free(ri->conn_info->src_addr);
			ri->conn_info->src_addr = NULL;
			ri->conn_info->src_addrlen = 0;
		}
	}
	/* A name (shm's): the IA's, and the connection's number. */
	if (info_name_set(ri, ia) != DOF_OK)
		return DOF_ERR_NO_MEMORY;
	info = ri->conn_info;
	info->tx_attr->size = ia->info->tx_attr->size;
	info->rx_attr->size = ia->info->rx_attr->size;
	/* The last connection's own AV, should it still be there. */
	dofi_rdm_av_put(re->av);
	re->av = NULL;
	av = dofi_rdm_av_get(ia, ep->pz->dom);
	if (av == NULL)
		return DOF_ERR_NO_RESOURCE;
	st = dofi_ep_open_fep(ep, info, &av->av->fid, NULL, &fep, &extra);
	if (st != DOF_OK) {
		dofi_rdm_av_put(av);
		return st;
	}
	if (fi_getname(&fep->fid, re->name, &len) != 0 || len == 0 ||
	    len > sizeof(re->name)) {
		dof_warn(DOFI_LOG, "EP %p: fi_getname of the endpoint failed",
		         (void *)ep);
		dofi_rdm_close_locked(ep, fep);
		dofi_rdm_av_put(av);
		return DOF_ERR_IO;
	}
	re->name_len = (uint16_t)len;
	/* A new connection: nothing of the last one's. No op is posted on
	 * the endpoint yet: nothing counts meanwhile. */
	re->peer_conn = re->peer_inc = 0;
	atomic_store(&ep->msgs_sent, 0);
	atomic_store(&ep->msgs_recvd, 0);
	re->want_known = re->put_off = 0;
	re->fi_peer = FI_ADDR_NOTAVAIL;
	/* The receive for the active side's first message, ahead of any
	 * of the consumer's (dofi_rdm_warm). */
	if (passive && dofi_dto_post_internal_recv(ep, fep, &re->warm_op) !=
	                       DOF_OK) {
		dofi_rdm_close_locked(ep, fep);
		dofi_rdm_av_put(av);
		return DOF_ERR_IO;
	}
	re->self_conn = ++ri->next_conn;
	if (dofi_map_put(&ri->conns, dofi_rdm_key(re->self_conn), ep) !=
	    DOF_OK) {
		dofi_rdm_close_locked(ep, fep);
		dofi_rdm_av_put(av);
		return DOF_ERR_NO_MEMORY;
	}
	re->av = av;
	return dofi_ep_publish_fep(ep, fep);
}

static void dofi_rdm_attach(dofi_ep_t *ep, dofi_rdm_chan_t *ch)
{
	dofi_rdm_ep_t *re = dofi_rdm_ep(ep);

	re->chan = ch;
	ch->nref++;
	dofi_list_add_tail(&ch->conns, &re->chan_link);
}

static void dofi_rdm_first_unlink(dofi_rdm_ep_t *re)
{
	if (!re->first_linked)
		return;
	dofi_list_del(&re->first_link);
	re->first_linked = 0;
}

static void dofi_rdm_detach(dofi_ep_t *ep)
{
	dofi_rdm_ep_t *re = dofi_rdm_ep(ep);
	dofi_rdm_chan_t *ch = re->chan;

	dofi_rdm_first_unlink(re);
	if (ch == NULL)
		return;
	dofi_list_del(&re->chan_link);
	re->chan = NULL;
	dofi_rdm_chan_put(ch);
}

/* The connection's id names nothing any more: messages for it are
 * dropped. ia->lock held. */
static void dofi_rdm_forget(dofi_ep_t *ep)
{
	dofi_rdm_ep_t *re = dofi_rdm_ep(ep);

	if (re->self_conn != 0)
		(void)dofi_map_del(&dofi_rdm_ia(ep->obj.ia)->conns,
		                   dofi_rdm_key(re->self_conn));
	re->self_conn = 0;
	/* The peer's address leaves the AV, unless the fabric keeps
	 * connections by index (traits->av_keep). */
	if (re->av != NULL && re->fi_peer != FI_ADDR_NOTAVAIL &&
	    ep->fep == NULL && !ep->obj.ia->traits->av_keep)
		(void)fi_av_remove(re->av->av, &re->fi_peer, 1, 0);
	if (ep->fep == NULL) {
		re->fi_peer = FI_ADDR_NOTAVAIL;
		/* Its own AV goes with the endpoint bound to it. */
		dofi_rdm_av_put(re->av);
		re->av = NULL;
	}
}

/*
 * Close the fi_ep with its EVDs' locks held: rxm's fi_close races a
 * consumer's fi_cq_read of a CQ it is bound to (a crash on 1.17-1.20),
 * and consumers read CQs under those locks. fep: one opened for ep and
 * never published (dofi_ep_drop_fep); NULL: ep->fep (dofi_ep_close_fep).
 * ia->lock held.
 */
static void dofi_rdm_close_locked(dofi_ep_t *ep, struct fid_ep *fep)
{
	dofi_rdm_ep_t *re = dofi_rdm_ep(ep);
	dofi_evd_t *a = ep->recv_evd, *b = ep->req_evd, *t;

	if (a == b)
		b = NULL;
	if (a == NULL) {
		a = b;
		b = NULL;
	}
	if (a != NULL && b != NULL && (uintptr_t)b < (uintptr_t)a) {
		t = a;
		a = b;
		b = t;
	}
	if (a != NULL)
		dofi_lock_take(&a->lock);
	if (b != NULL)
		dofi_lock_take(&b->lock);
	/* The passive side's first receive goes with the endpoint: what
	 * the close may still say of it is nobody's (dofi_dto_complete_err
	 * drops an op not posted). */
	if (re != NULL)
		(void)atomic_exchange(&re->warm_op.posted, 0);
	if (fep != NULL)
		dofi_ep_drop_fep(ep, fep);
	else
		dofi_ep_close_fep(ep);
	if (b != NULL)
		dofi_lock_give(&b->lock);
	if (a != NULL)
		dofi_lock_give(&a->lock);
}

/*
 * Take the receives still posted back from the endpoint and report them
 * flushed, in posting order, so that nothing more lands in a buffer the
 * consumer is told is flushed. fi_cancel on shm, rxm and rxd (libfabric
 * 1.17) takes a receive off the provider's queue and writes an
 * FI_ECANCELED completion for it, but answers 0 whether it found it or
 * not, so its answer says nothing. Each receive is made ours (posted 0)
 * before its cancel, so that what the provider reports of it is dropped,
 * and the cancels go from the last posted to the first: a message that
 * the provider matches meanwhile (shm delivers what a dead peer had
 * copied already) takes the first receive still posted, never one after
 * a receive cancelled. The completions the cancels wrote are read at
 * once: none outlives the connection. What a provider cannot cancel, a
 * receive a message of several segments has begun to fill (rxm, or shm
 * without CMA), is written to until the endpoint closes. ia->lock held.
 */
static void dofi_rdm_cancel_recvs(dofi_ep_t *ep)
{
	dofi_pool_t *pool = &ep->recv_pool;
	uint32_t i, n, seen = dofi_pool_seen(pool);
	dofi_op_t **v;

	if (dofi_pool_used(pool) == 0)
		return;
	v = dofi_pool_posted(pool, &n);
	if (v == NULL) {
		/* No memory for the sort: in the pool's order. */
		for (i = 0; i < seen; i++) {
			dofi_op_t *op = &pool->ops[i];

			if (atomic_exchange(&op->posted, 0) != 0) {
				(void)fi_cancel(&ep->fep->fid, op);
				dofi_dto_flush_op(op);
			}
		}
		return;
	}
	for (i = n; i-- > 0;) {
		if (atomic_exchange(&v[i]->posted, 0) == 0) {
			v[i] = NULL; /* completed meanwhile, and reported */
			continue;
		}
		(void)fi_cancel(&ep->fep->fid, v[i]);
	}
	if (ep->recv_evd != NULL)
		dofi_evd_flush_one(ep->recv_evd, ep->rx_cq, 1);
	for (i = 0; i < n; i++)
		if (v[i] != NULL)
			dofi_dto_flush_op(v[i]);
	free(v);
}

/*
 * The connection is over here (the EP's state says so: posts are
 * refused): take back and flush what is posted, and close the endpoint
 * DOFI_RDM_CLOSE_NS later (dofi_rdm_ep_timers), or at EP reset or free,
 * whichever comes first. What completed is read first; then receives
 * are flushed (dofi_rdm_cancel_recvs), in posting order, as an
 * InfiniBand queue pair flushes; requests may still complete until the
 * close, which flushes the rest in posting order. Messages about the
 * connection are dropped from now on. ia->lock held.
 */
static void dofi_rdm_stop(dofi_ep_t *ep)
{
	dofi_rdm_ep_t *re = dofi_rdm_ep(ep);

	/* The endpoint stays: only the connection's id goes. */
	dofi_rdm_forget(ep);
	if (ep->fep == NULL || re->close_pending)
		return;
	if (dofi_pool_used(&ep->recv_pool) > 0 ||
	    dofi_pool_used(&ep->req_pool) > 0)
		dofi_cm_read_cqs(ep);
	/* The passive side's first receive, if nothing took it. */
	if (atomic_exchange(&re->warm_op.posted, 0) != 0)
		(void)fi_cancel(&ep->fep->fid, &re->warm_op);
	dofi_dto_order_drop(ep);
	/* On an SRQ: it takes no more receives for the flush to leave. */
	if (ep->srq != NULL)
		dofi_srq_ep_stop(ep);
	dofi_rdm_cancel_recvs(ep);
	/*
	 * Requests are flushed at the close (dofi_rdm_close_fep), once
	 * libfabric has let go of them: rxm cancels no Send and goes on
	 * copying a queued one's segments from the consumer's buffer at
	 * each progress until the endpoint closes, and a consumer may free
	 * a buffer as soon as its request is reported. What libfabric says
	 * later of the flushed receives is read at the close too, before
	 * any op is used again.
	 */
	ep->cq_stale = 1;
	re->close_pending = 1;
	re->close_at = dofi_now_ns() + DOFI_RDM_CLOSE_NS;
	dof_debug(DOFI_LOG,
	          "EP %p: connection over; its endpoint closes in %llu ms",
	          (void *)ep, DOFI_RDM_CLOSE_NS / 1000000ull);
}

/*
 * Close the endpoint: at the grace period's end, or at EP reset or free.
 * An RDM endpoint reports nothing of what its close drops, and cancels
 * receives in an order of its own (rxm), so what completed is read
 * first, then what is still posted is flushed by us (a post that raced
 * the end), receives and requests each in posting order. Returns 1 when
 * the CQs may still hold entries of the EP's ops. ia->lock held.
 */
static int dofi_rdm_close_fep(dofi_ep_t *ep)
{
	dofi_rdm_ep_t *re = dofi_rdm_ep(ep);
	int owed;

	re->close_pending = 0;
	if (ep->fep == NULL)
		return 0;
	owed = ep->cq_stale || dofi_pool_used(&ep->recv_pool) > 0 ||
	       dofi_pool_used(&ep->req_pool) > 0;
	if (owed)
		dofi_cm_read_cqs(ep);
	dofi_dto_order_drop(ep);
	/* On an SRQ: it takes no more receives for the flush to leave. */
	if (ep->srq != NULL)
		dofi_srq_ep_stop(ep);
	/* The endpoint first: nothing reads a buffer once it is reported. */
	dofi_rdm_close_locked(ep, NULL);
	dofi_pool_flush_posted(&ep->recv_pool);
	dofi_pool_flush_posted(&ep->req_pool);
	ep->cq_stale = owed;
	/* Its peer's address (and the EP's own AV) go with it. */
	dofi_rdm_forget(ep);
	return owed;
}

/* ---- active side --------------------------------------------------------- */

static void dofi_rdm_send_req(dofi_ep_t *ep)
{
	dofi_rdm_ep_t *re = dofi_rdm_ep(ep);
	dofi_rdm_wire_msg_t m;

	dofi_rdm_names(&m, DOFI_RDM_WIRE_REQ, dofi_rdm_ia(ep->obj.ia),
	               re->chan->peer_inc, re->self_conn, 0);
	m.conn_qual = re->qual;
	m.rdma_in = (uint8_t)ep->attr.max_rdma_read_in;
	m.rdma_out = (uint8_t)ep->attr.max_rdma_read_out;
	m.addr_len = re->name_len;
	m.addr = re->name;
	m.pdata_len = re->plen;
	m.pdata = re->pdata;
	re->peer_inc = re->chan->peer_inc;
	re->st = RDM_EP_REQ_SENT;
	dofi_rdm_send(re->chan, &m);
}

static DAT_EVENT_NUMBER dofi_rdm_refusal(int err)
{
	return err == EHOSTUNREACH || err == ENETUNREACH || err == ETIMEDOUT
	               ? DAT_CONNECTION_EVENT_UNREACHABLE
	               : DAT_CONNECTION_EVENT_NON_PEER_REJECTED;
}

static dof_status_t dofi_rdm_connect(dofi_ep_t *ep,
                                     const struct sockaddr_in *dst,
                                     DAT_CONN_QUAL qual, const void *pdata,
                                     DAT_COUNT plen)
{
	dofi_rdm_ep_t *re = dofi_rdm_ep(ep);
	struct sockaddr_in to = *dst;
	dofi_rdm_chan_t *ch;
	dof_status_t st;
	int err = 0;

	if (plen > DOFI_RDM_WIRE_PDATA_MAX)
		return DOF_ERR_INVALID_PARAM;
	st = dofi_rdm_open(ep, 0);
	if (st != DOF_OK)
		return st;
	re->qual = qual;
	re->plen = (uint16_t)(plen > 0 ? plen : 0);
	if (re->plen > 0)
		memcpy(re->pdata, pdata, re->plen);
	re->st = RDM_EP_REQ_WAIT;
	atomic_store(&ep->state, DAT_EP_STATE_ACTIVE_CONNECTION_PENDING);
	to.sin_family = AF_INET;
	to.sin_port = htons(dofi_cm_port(qual));
	ch = dofi_rdm_chan_to(ep->obj.ia, &to, &err);
	if (ch == NULL) {
		dof_info(DOFI_LOG, "EP %p: control channel to %s:%u: %s",
		         (void *)ep, inet_ntoa(to.sin_addr),
		         ntohs(to.sin_port), strerror(err));
		re->st = RDM_EP_DOWN;
		dofi_cm_up_down(ep, dofi_rdm_refusal(err), NULL, 0);
		return DOF_OK;
	}
	dofi_rdm_attach(ep, ch);
	/* Our end of the channel is what the passive side's CR reports. */
	{
		struct sockaddr_in me;
		socklen_t mlen = sizeof(me);

		if (getsockname(ch->fd, (struct sockaddr *)&me, &mlen) == 0) {
			ep->local_qual = ntohs(me.sin_port);
			ep->local_unnamed = 0;
		}
	}
	if (ch->state == RDM_CHAN_UP)
		dofi_rdm_send_req(ep);
	return DOF_OK;
}

/*
 * A graceful end's wait for the messages the peer counted (its DREQ's or
 * DREP's sent, dapl-ofi-rdm-wire(7)) is a wait only a live peer ends:
 * the link bound (DAPL_OFI_LINK_TIMEOUT, 20 s by default, and 20 s when
 * the link watch is off) for the DREQ's receiver, twice that for its
 * sender, which waits for the receiver's wait and then the messages of
 * its DREP. A message that never comes (a count that lies, a Send no
 * receive was posted for) costs this, no more: the end then goes on.
 */
static uint64_t dofi_rdm_drain_ns(dofi_ia_t *ia)
{
	uint64_t ns = dofi_rdm_ia(ia)->link_ns;

	return ns != 0 ? ns : DOFI_RDM_LINK_MS * 1000000ull;
}

/*
 * The end of a graceful end's wait, or of a connection that waited: the
 * connection is over here (dofi_rdm_stop: what completed is read, what
 * is posted flushed), then, where the peer's DREQ waits for it, our DREP
 * with what we sent: counted after the stop, so no request completes
 * successfully after it. ia->lock held.
 */
static void dofi_rdm_down(dofi_ep_t *ep)
{
	dofi_rdm_ep_t *re = dofi_rdm_ep(ep);
	int drep = re->st == RDM_EP_DRAIN_IN;
	uint64_t self = re->self_conn, peer = re->peer_conn;
	dofi_rdm_wire_msg_t m;

	re->st = RDM_EP_DOWN;
	re->want_known = re->put_off = 0;
	dofi_rdm_stop(ep);
	if (drep && re->chan != NULL && re->chan->state == RDM_CHAN_UP) {
		dofi_rdm_names(&m, DOFI_RDM_WIRE_DREP, dofi_rdm_ia(ep->obj.ia),
		               re->peer_inc, self, peer);
		m.sent = atomic_load_explicit(&ep->msgs_sent,
		                              memory_order_relaxed);
		dofi_rdm_send(re->chan, &m);
	}
	dofi_rdm_detach(ep);
}

/* Our end (DISCONNECTED is set): tell the peer; 1 when it waits for the
 * peer's messages first (dofi_cm_ops_t.disconnect). ia->lock held. */
static int dofi_rdm_disconnect(dofi_ep_t *ep)
{
	dofi_rdm_ep_t *re = dofi_rdm_ep(ep);
	dofi_rdm_ia_t *ri = dofi_rdm_ia(ep->obj.ia);
	dofi_rdm_wire_msg_t m;

	if (re == NULL)
		return 0;
	switch (re->st) {
	case RDM_EP_REQ_SENT:
		/* We give up before an answer: the passive side may hold a
		 * request, or be waiting for our RTU. */
		dofi_rdm_send_rej_cm(re->chan, re->self_conn, re->peer_conn,
		                     DOFI_RDM_WIRE_R_TIMED_OUT);
		break;
	case RDM_EP_WARM:
	case RDM_EP_REP_SENT:
	case RDM_EP_FIRST_WAIT:
	case RDM_EP_UP:
		if (re->chan == NULL || re->chan->state != RDM_CHAN_UP)
			break;
		dofi_rdm_names(&m, DOFI_RDM_WIRE_DREQ, ri, re->peer_inc,
		               re->self_conn, re->peer_conn);
		m.sent = atomic_load_explicit(&ep->msgs_sent,
		                              memory_order_relaxed);
		if (ep->clean_end && re->st == RDM_EP_UP) {
			/*
			 * Graceful, every request completed: the peer waits
			 * for the messages counted before it ends, and we
			 * for those its DREP counts, receives still posted.
			 */
			dofi_rdm_send(re->chan, &m);
			re->st = RDM_EP_DRAIN_OUT;
			re->want_known = 0;
			re->put_off = 1;
			re->drain_at = dofi_now_ns() +
			               2 * dofi_rdm_drain_ns(ep->obj.ia);
			return 1;
		}
		m.flags = DOFI_RDM_WIRE_F_ABRUPT;
		dofi_rdm_send(re->chan, &m);
		break;
	case RDM_EP_DRAIN_IN:
		if (ep->clean_end) {
			/* The peer's DREQ came first: our end waits for its
			 * messages too; our DREP counts ours. */
			re->put_off = 1;
			return 1;
		}
		dofi_rdm_down(ep);
		return 0;
	case RDM_EP_DRAIN_OUT:
		/* The wait cut short (EP reset or free). */
		dofi_rdm_down(ep);
		return 0;
	default:
		break;
	}
	re->st = RDM_EP_DOWN;
	dofi_rdm_detach(ep);
	dofi_rdm_stop(ep);
	return 0;
}

/* ---- service points ------------------------------------------------------ */

static dof_status_t dofi_rdm_listen(dofi_sp_t *sp, DAT_CONN_QUAL *qual)
{
	dofi_ia_t *ia = sp->obj.ia;
	struct sockaddr_in addr = ia->addr;
	socklen_t alen = sizeof(addr);
	struct epoll_event e;
	dofi_rdm_sp_t *rs;
	int fd, on = 1, err;

	rs = calloc(1, sizeof(*rs));
	if (rs == NULL)
		return DOF_ERR_NO_MEMORY;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		free(rs);
		return DOF_ERR_NO_RESOURCE;
	}
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
	addr.sin_family = AF_INET;
	addr.sin_port = htons(dofi_cm_port(*qual));
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0 ||
	    listen(fd, 1024) != 0 ||
	    getsockname(fd, (struct sockaddr *)&addr, &alen) != 0) {
		err = errno;
		close(fd);
		free(rs);
		dof_info(DOFI_LOG, "listening on conn_qual %llu: %s",
		         (unsigned long long)*qual, strerror(err));
		return err == EADDRINUSE ? DOF_ERR_IN_USE : DOF_ERR_IO;
	}
	rs->kind = RDM_POLL_LISTEN;
	rs->fd = fd;
	rs->sp = sp;
	e.events = EPOLLIN;
	e.data.ptr = rs;
	if (epoll_ctl(dofi_rdm_ia(ia)->epfd, EPOLL_CTL_ADD, fd, &e) != 0) {
		close(fd);
		free(rs);
		return DOF_ERR_NO_RESOURCE;
	}
	if (*qual == 0)
		*qual = ntohs(addr.sin_port);
	sp->cm = rs;
	return DOF_OK;
}

static void dofi_rdm_unlisten(dofi_sp_t *sp)
{
	dofi_rdm_sp_t *rs = sp->cm;

	if (rs == NULL)
		return;
	(void)epoll_ctl(dofi_rdm_ia(sp->obj.ia)->epfd, EPOLL_CTL_DEL, rs->fd,
	                NULL);
	close(rs->fd);
	/* An event for it may be in the batch being handled: never reused
	 * before the batch ends (dofi_rdm_progress). */
	rs->sp = NULL;
	rs->fd = -1;
	rs->next = dofi_rdm_ia(sp->obj.ia)->dead_sps;
	dofi_rdm_ia(sp->obj.ia)->dead_sps = rs;
	sp->cm = NULL;
}

/* A connection to a listener: a new channel, our HELLO first. */
static void dofi_rdm_accept_chans(dofi_ia_t *ia, int lfd)
{
	for (;;) {
		struct sockaddr_in peer;
		socklen_t len = sizeof(peer);
		dofi_rdm_chan_t *ch;
		int fd = accept4(lfd, (struct sockaddr *)&peer, &len,
		                 SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0)
			return;
		dofi_rdm_sock_opts(ia, fd);
		ch = dofi_rdm_chan_new(ia, fd, &peer, 0, RDM_CHAN_HELLO);
		if (ch == NULL) {
			close(fd);
			continue;
		}
		dofi_rdm_send_hello(ch);
	}
}

/* ---- passive side -------------------------------------------------------- */

static void dofi_rdm_cr_release(dofi_cr_t *cr)
{
	dofi_rdm_cr_t *rc = cr->cm;

	if (rc == NULL)
		return;
	if (!rc->answered)
		dofi_rdm_send_rej_cm(rc->chan, 0, rc->peer_conn,
		                     DOFI_RDM_WIRE_R_NO_RESOURCE);
	dofi_rdm_chan_put(rc->chan);
	free(rc);
	cr->cm = NULL;
}

static int dofi_rdm_sp_on_port(const dofi_sp_t *sp, const void *qual)
{
	return dofi_cm_port(sp->qual) ==
	       dofi_cm_port(*(const DAT_CONN_QUAL *)qual);
}

static void dofi_rdm_on_req(dofi_rdm_chan_t *ch, const dofi_rdm_wire_msg_t *m)
{
	dofi_ia_t *ia = ch->ia;
	DAT_CONN_QUAL qual = m->conn_qual;
	dofi_cm_req_t req;
	dofi_rdm_cr_t *rc;
	dofi_cr_t *cr;
	dofi_sp_t *sp;

	sp = dofi_cm_sp_search(ia, dofi_rdm_sp_on_port, &qual);
	if (sp == NULL) {
		dof_debug(DOFI_LOG, "conn_qual %llu: nobody listens",
		          (unsigned long long)qual);
		dofi_rdm_send_rej_cm(ch, 0, m->src_conn,
		                     DOFI_RDM_WIRE_R_NO_LISTENER);
		return;
	}
	rc = calloc(1, sizeof(*rc));
	if (rc == NULL) {
		dofi_rdm_send_rej_cm(ch, 0, m->src_conn,
		                     DOFI_RDM_WIRE_R_NO_RESOURCE);
		return;
	}
	rc->chan = ch;
	ch->nref++;
	rc->peer_inc = m->src_inc;
	rc->peer_conn = m->src_conn;
	rc->addr_len = m->addr_len;
	memcpy(rc->addr, m->addr, m->addr_len);
	memset(&req, 0, sizeof(req));
	req.remote_addr = ch->peer;
	req.remote_port = ntohs(ch->peer.sin_port);
	req.remote_addr.sin_port = 0;
	req.pdata = m->pdata;
	req.plen = m->pdata_len;
	req.rdma_in = m->rdma_in;
	req.rdma_out = m->rdma_out;
	cr = dofi_cm_up_request(sp, &req, rc);
	if (cr == NULL) {
		dofi_rdm_send_rej_cm(ch, 0, m->src_conn,
		                     DOFI_RDM_WIRE_R_NO_RESOURCE);
		dofi_rdm_chan_put(ch);
		free(rc);
		return;
	}
	if (sp->obj.type == DOFI_OBJ_RSP)
		dofi_cm_up_rsp_spent(sp, cr);
}

static dof_status_t dofi_rdm_accept(dofi_cr_t *cr, dofi_ep_t *ep,
                                    const void *pdata, DAT_COUNT plen)
{
	dofi_rdm_cr_t *rc = cr->cm;
	dofi_rdm_ep_t *re = dofi_rdm_ep(ep);
	dofi_rdm_wire_msg_t m;
	dof_status_t st;

	if (rc == NULL || rc->answered)
		return DOF_ERR_INVALID_STATE;
	if (plen > DOFI_RDM_WIRE_PDATA_MAX)
		return DOF_ERR_INVALID_PARAM;
	st = dofi_rdm_open(ep, 1);
	if (st != DOF_OK)
		return DOF_ERR_NO_RESOURCE;
	/*
	 * A requester that gave up closed its endpoint: its address is not
	 * inserted. shm (libfabric 1.17) crashed in fi_av_insert of the
	 * name of an endpoint closed in the same process (fabtests-dat's
	 * dat_cm, a late accept: 9 runs in 12).
	 */
	if (!rc->gone &&
	    dofi_rdm_peer_insert(ep, rc->addr, rc->addr_len) != DOF_OK) {
		dofi_rdm_send_rej_cm(rc->chan, 0, rc->peer_conn,
		                     DOFI_RDM_WIRE_R_BAD_ADDRESS);
		rc->answered = 1;
		(void)dofi_map_del(&dofi_rdm_ia(ep->obj.ia)->conns,
		                   dofi_rdm_key(re->self_conn));
		dofi_ep_close_fep(ep);
		return DOF_ERR_BAD_ADDRESS;
	}
	rc->answered = 1;
	re->peer_inc = rc->peer_inc;
	re->peer_conn = rc->peer_conn;
	dofi_rdm_attach(ep, rc->chan);
	atomic_store(&ep->state, DAT_EP_STATE_COMPLETION_PENDING);
	re->st = RDM_EP_REP_SENT;
	/*
	 * The RTU follows the requester's first message, which waits for
	 * the fabric's own connection (rxm opens one per endpoint, with
	 * some 66 MiB of buffers to touch before FI_OFI_RXM_MSG_RX_SIZE was
	 * set, 16 MiB since): 100 accepts at once took 15-23 s on two
	 * cores, past the link bound. The channel tells a dead or
	 * departed requester at once, so the wait is three bounds (60 s by
	 * default, as an InfiniBand CM's retries of a REP take).
	 */
	ep->deadline = dofi_now_ns() +
	               DOFI_RDM_RTU_BOUNDS *
	                       (dofi_rdm_ia(ep->obj.ia)->link_ns
	                                ? dofi_rdm_ia(ep->obj.ia)->link_ns
	                                : DOFI_RDM_LINK_MS * 1000000ull);
	if (rc->gone || rc->chan->state != RDM_CHAN_UP) {
		re->st = RDM_EP_DOWN;
		dofi_cm_up_down(ep,
		                DAT_CONNECTION_EVENT_ACCEPT_COMPLETION_ERROR,
		                NULL, 0);
		return DOF_OK;
	}
	dofi_rdm_names(&m, DOFI_RDM_WIRE_REP, dofi_rdm_ia(ep->obj.ia),
	               re->peer_inc, re->self_conn, re->peer_conn);
	m.rdma_in = (uint8_t)ep->attr.max_rdma_read_in;
	m.rdma_out = (uint8_t)ep->attr.max_rdma_read_out;
	m.addr_len = re->name_len;
	m.addr = re->name;
	m.pdata_len = (uint16_t)(plen > 0 ? plen : 0);
	m.pdata = pdata;
	dofi_rdm_send(rc->chan, &m);
	return DOF_OK;
}

static void dofi_rdm_reject(dofi_cr_t *cr, const void *pdata, DAT_COUNT plen)
{
	dofi_rdm_cr_t *rc = cr->cm;
	dofi_rdm_wire_msg_t m;

	if (rc == NULL || rc->answered)
		return;
	rc->answered = 1;
	if (rc->chan->state != RDM_CHAN_UP)
		return;
	dofi_rdm_names(&m, DOFI_RDM_WIRE_REJ_USER, dofi_rdm_ia(cr->obj.ia),
	               rc->peer_inc, 0, rc->peer_conn);
	/* REJ_USER names both: ours is a fresh id no connection takes. */
	m.src_conn = ++dofi_rdm_ia(cr->obj.ia)->next_conn;
	m.pdata_len = (uint16_t)(plen > 0 && plen <= DOFI_RDM_WIRE_PDATA_MAX
	                                 ? plen
	                                 : 0);
	m.pdata = pdata;
	dofi_rdm_send(rc->chan, &m);
}

/* ---- messages about connections ------------------------------------------ */

/* The EP m names, when it fits it and came on its channel; else NULL. */
static dofi_ep_t *dofi_rdm_find(dofi_rdm_chan_t *ch,
                                const dofi_rdm_wire_msg_t *m)
{
	dofi_ep_t *ep = dofi_map_get(&dofi_rdm_ia(ch->ia)->conns,
	                             dofi_rdm_key(m->dst_conn));
	dofi_rdm_wire_conn_t c;
	dofi_rdm_ep_t *re;

	if (ep == NULL) {
		dof_debug(DOFI_LOG, "%s for connection %llu, which is gone",
		          dofi_rdm_wire_type_str(m->type),
		          (unsigned long long)m->dst_conn);
		return NULL;
	}
	re = dofi_rdm_ep(ep);
	c.self_conn = re->self_conn;
	c.peer_inc = re->peer_inc;
	c.peer_conn = re->peer_conn;
	if (re->chan != ch || dofi_rdm_wire_match(&c, m, NULL) != DOF_OK)
		return NULL;
	return ep;
}

/*
 * The active side's first message on the data path, before the RTU: a
 * zero-byte message the passive side's receive posted ahead of the
 * consumer's takes. It makes the provider set up its path (tcp;ofi_rxm
 * opens its connection) from one side only, before either consumer
 * sends: rxm loses messages when both sides open one at once. It is
 * sent without waiting (fi_inject answers -FI_EAGAIN until the path is
 * up), again at each pass; then the RTU and ESTABLISHED. ia->lock held.
 */
static void dofi_rdm_warm(dofi_ep_t *ep)
{
	dofi_rdm_ep_t *re = dofi_rdm_ep(ep);
	dofi_rdm_wire_msg_t rtu;
	ssize_t rc;

	if (re->st != RDM_EP_WARM || ep->fep == NULL)
		return;
	rc = fi_inject(ep->fep, NULL, 0, ep->peer);
	if (rc == -FI_EAGAIN) {
		if (ep->tx_cq != NULL)
			(void)fi_cq_read(ep->tx_cq, NULL, 0);
		dofi_cm_schedule(ep); /* polled until it goes */
		return;
	}
	if (rc != 0 || re->chan == NULL) {
		dof_info(DOFI_LOG, "EP %p: the first message: %s", (void *)ep,
		         fi_strerror((int)-rc));
		dofi_rdm_send_rej_cm(re->chan, re->self_conn, re->peer_conn,
		                     DOFI_RDM_WIRE_R_BAD_ADDRESS);
		re->st = RDM_EP_DOWN;
		dofi_rdm_detach(ep);
		dofi_cm_up_down(ep, DAT_CONNECTION_EVENT_NON_PEER_REJECTED,
		                NULL, 0);
		return;
	}
	dofi_rdm_names(&rtu, DOFI_RDM_WIRE_RTU, dofi_rdm_ia(ep->obj.ia),
	               re->peer_inc, re->self_conn, re->peer_conn);
	dofi_rdm_send(re->chan, &rtu);
	re->st = RDM_EP_UP;
	dofi_cm_up_established(ep, re->pdata, re->plen);
}

static void dofi_rdm_on_rep(dofi_rdm_chan_t *ch, const dofi_rdm_wire_msg_t *m)
{
	dofi_ep_t *ep = dofi_rdm_find(ch, m);
	dofi_rdm_ep_t *re = ep ? dofi_rdm_ep(ep) : NULL;

	if (ep == NULL || re->st != RDM_EP_REQ_SENT ||
	    atomic_load(&ep->state) != DAT_EP_STATE_ACTIVE_CONNECTION_PENDING) {
		dofi_rdm_send_rej_cm(ch, 0, m->src_conn,
		                     DOFI_RDM_WIRE_R_TIMED_OUT);
		return;
	}
	re->peer_conn = m->src_conn;
	if (dofi_rdm_peer_insert(ep, m->addr, m->addr_len) != DOF_OK) {
		dofi_rdm_send_rej_cm(ch, re->self_conn, re->peer_conn,
		                     DOFI_RDM_WIRE_R_BAD_ADDRESS);
		re->st = RDM_EP_DOWN;
		dofi_rdm_detach(ep);
		dofi_cm_up_down(ep, DAT_CONNECTION_EVENT_NON_PEER_REJECTED,
		                NULL, 0);
		return;
	}
	re->plen = m->pdata_len;
	if (re->plen > 0)
		memcpy(re->pdata, m->pdata, re->plen);
	re->st = RDM_EP_WARM;
	dofi_rdm_warm(ep);
}

/*
 * The passive side, its RTU in (RDM_EP_FIRST_WAIT): ESTABLISHED once the
 * receive posted ahead of the consumer's for the requester's first
 * message (warm_op) has been read, so that the consumer then has every
 * receive the IA reports (max_dto_per_ep), as on MSG, where ESTABLISHED
 * waits for the RTU's receive (DOFI_RTU_WAIT). Reading the CQs also
 * drives the provider. At the bound (ep->deadline), or when the
 * connection ends first (force: the RTU showed that the requester took
 * it), ESTABLISHED comes without it. ia->lock held.
 */
static void dofi_rdm_first_check(dofi_ep_t *ep, uint64_t now, int force)
{
	dofi_rdm_ep_t *re = dofi_rdm_ep(ep);

	if (re->st != RDM_EP_FIRST_WAIT ||
	    atomic_load(&ep->state) != DAT_EP_STATE_COMPLETION_PENDING)
		return;
	if (atomic_load(&re->warm_op.posted) != 0)
		dofi_cm_read_cqs(ep);
	if (atomic_load(&re->warm_op.posted) != 0) {
		if (!force && now < ep->deadline)
			return;
		dof_info(DOFI_LOG,
		         "EP %p: the requester's first message not read %s: "
		         "established without it",
		         (void *)ep,
		         force ? "before a later connection event"
		               : "within its bound");
	}
	dofi_rdm_first_unlink(re);
	re->st = RDM_EP_UP;
	dofi_cm_up_established(ep, NULL, 0);
}

/* The passive side's RTU: ESTABLISHED, once the first message is read. */
static void dofi_rdm_on_rtu(dofi_ep_t *ep)
{
	dofi_rdm_ep_t *re = dofi_rdm_ep(ep);
	uint64_t now = dofi_now_ns();

	if (re->st != RDM_EP_REP_SENT ||
	    atomic_load(&ep->state) != DAT_EP_STATE_COMPLETION_PENDING)
		return;
	re->st = RDM_EP_FIRST_WAIT;
	/* No receive of the consumer's to make room for: at once. */
	if (ep->recv_evd == NULL || ep->srq != NULL) {
		dofi_rdm_first_check(ep, now, 1);
		return;
	}
	if (now + DOFI_RDM_FIRST_NS < ep->deadline)
		ep->deadline = now + DOFI_RDM_FIRST_NS;
	dofi_rdm_first_check(ep, now, 0);
	if (re->st != RDM_EP_FIRST_WAIT)
		return;
	dof_debug(DOFI_LOG,
	          "EP %p: RTU in before the requester's first message: "
	          "ESTABLISHED waits for it",
	          (void *)ep);
	dofi_list_add_tail(&re->chan->first_wait, &re->first_link);
	re->first_linked = 1;
	dofi_cm_schedule(ep);
}

/*
 * A message of the channel other than an RTU, or its end, may give a
 * connection event: the ESTABLISHED of the RTUs before it come first, in
 * the channel's order, as they did before the wait (OFED's dtestcm takes
 * the next connection event for the one it expects). ia->lock held.
 */
static void dofi_rdm_chan_settle(dofi_rdm_chan_t *ch)
{
	while (!dofi_list_empty(&ch->first_wait)) {
		dofi_rdm_ep_t *re = dofi_container_of(
		        ch->first_wait.next, dofi_rdm_ep_t, first_link);

		dofi_rdm_first_unlink(re);
		dofi_rdm_first_check(re->ep, 0, 1);
	}
}

/* The connection ends because the peer said so, or its channel did. */
static void dofi_rdm_end(dofi_ep_t *ep, int broken)
{
	dofi_rdm_ep_t *re = dofi_rdm_ep(ep);
	int st = re->st;

	if (re->put_off) {
		/* Our end waited for the peer's messages: no more. */
		dof_info(DOFI_LOG,
		         "EP %p: the control channel ended during a graceful "
		         "end: not waiting for the peer's messages",
		         (void *)ep);
		dofi_rdm_down(ep);
		dofi_cm_up_drained(ep);
		return;
	}
	re->st = RDM_EP_DOWN;
	dofi_rdm_detach(ep);
	switch (atomic_load(&ep->state)) {
	case DAT_EP_STATE_ACTIVE_CONNECTION_PENDING:
		dofi_cm_up_down(ep,
		                broken && st == RDM_EP_REQ_WAIT
		                        ? dofi_rdm_refusal(broken)
		                        : DAT_CONNECTION_EVENT_NON_PEER_REJECTED,
		                NULL, 0);
		break;
	case DAT_EP_STATE_COMPLETION_PENDING:
		dofi_cm_up_down(ep,
		                DAT_CONNECTION_EVENT_ACCEPT_COMPLETION_ERROR,
		                NULL, 0);
		break;
	case DAT_EP_STATE_CONNECTED:
	case DAT_EP_STATE_DISCONNECT_PENDING:
		if (broken) {
			dof_info(DOFI_LOG, "EP %p: the peer is gone: "
			                   "connection broken",
			         (void *)ep);
			/* Posts see the end before the flushes. */
			atomic_store(&ep->state, DAT_EP_STATE_DISCONNECTED);
			atomic_store_explicit(&ep->dto_error, 1,
			                      memory_order_release);
			dofi_rdm_stop(ep);
			dofi_cm_up_link_lost(ep);
		} else {
			dofi_cm_up_peer_end(ep);
		}
		break;
	default:
		break;
	}
}

/*
 * A graceful end's wait (RDM_EP_DRAIN_*): the peer counted the messages
 * it sent whose Sends completed; those travel on the data path, which a
 * DREQ on the control channel can overtake. Its receives stay posted
 * until as many have completed here (read from the CQs, which also
 * drives the provider's progress), or until drain_at: at each pass of
 * the CM (ep_timers, poll), never blocking. Then the end goes on: the
 * peer's (DRAIN_IN, not put off: DISCONNECTED as for any peer's end) or
 * ours (dofi_cm_up_drained). ia->lock held.
 */
static void dofi_rdm_drain(dofi_ep_t *ep, uint64_t now)
{
	dofi_rdm_ep_t *re = dofi_rdm_ep(ep);
	uint64_t got;

	dofi_cm_read_cqs(ep);
	got = atomic_load_explicit(&ep->msgs_recvd, memory_order_relaxed);
	if (re->want_known && got >= re->want) {
		if (got > re->want)
			dof_info(DOFI_LOG,
			         "EP %p: %llu messages received, more than "
			         "the %llu the peer counted",
			         (void *)ep, (unsigned long long)got,
			         (unsigned long long)re->want);
	} else if (re->want_known && re->st == RDM_EP_DRAIN_OUT &&
	           ep->srq == NULL &&
	           re->want - got > dofi_pool_used(&ep->recv_pool)) {
		/* No receive can be posted any more: they cannot come. */
		dof_info(DOFI_LOG,
		         "EP %p: the peer counted %llu messages; %llu came "
		         "and %u receives are posted: not waiting",
		         (void *)ep, (unsigned long long)re->want,
		         (unsigned long long)got,
		         (unsigned)dofi_pool_used(&ep->recv_pool));
	} else if (now >= re->drain_at) {
		if (re->want_known)
			dof_info(DOFI_LOG,
			         "EP %p: %llu of the %llu messages the peer "
			         "counted came before the graceful end's "
			         "bound",
			         (void *)ep, (unsigned long long)got,
			         (unsigned long long)re->want);
		else
			dof_info(DOFI_LOG,
			         "EP %p: no DREP before the graceful end's "
			         "bound",
			         (void *)ep);
	} else {
		return;
	}
	if (re->put_off) {
		dofi_rdm_down(ep);
		dofi_cm_up_drained(ep);
	} else {
		/* The peer's end, as for any: its disconnect upcall comes to
		 * dofi_rdm_disconnect, which sends our DREP. */
		dofi_cm_up_peer_end(ep);
	}
}

/* The peer's DREQ: its end, with the messages it sent counted. */
static void dofi_rdm_on_dreq(dofi_rdm_chan_t *ch, dofi_ep_t *ep,
                             const dofi_rdm_wire_msg_t *m)
{
	dofi_rdm_ep_t *re = dofi_rdm_ep(ep);
	dofi_rdm_ia_t *ri = dofi_rdm_ia(ch->ia);
	int abrupt = (m->flags & DOFI_RDM_WIRE_F_ABRUPT) != 0;
	DAT_EP_STATE s = atomic_load(&ep->state);
	dofi_rdm_wire_msg_t drep;

	if (re->st == RDM_EP_DRAIN_IN)
		return; /* a second DREQ: nothing new */
	dofi_rdm_names(&drep, DOFI_RDM_WIRE_DREP, ri, re->peer_inc,
	               re->self_conn, re->peer_conn);
	if (re->st == RDM_EP_DRAIN_OUT) {
		/*
		 * Both ended at once: its DREQ counts what its DREP would.
		 * Ours is final (nothing outstanding, posts refused): it
		 * goes now, for the peer's own wait.
		 */
		drep.sent = atomic_load_explicit(&ep->msgs_sent,
		                                 memory_order_relaxed);
		dofi_rdm_send(ch, &drep);
		if (!re->want_known) {
			re->want_known = 1;
			re->want = abrupt ? 0 : m->sent;
		}
		dofi_rdm_drain(ep, dofi_now_ns());
		return;
	}
	if (!abrupt && re->st == RDM_EP_UP &&
	    (s == DAT_EP_STATE_CONNECTED ||
	     s == DAT_EP_STATE_DISCONNECT_PENDING)) {
		/* Not before the messages it counted are in. */
		re->st = RDM_EP_DRAIN_IN;
		re->want = m->sent;
		re->want_known = 1;
		re->put_off = 0;
		re->drain_at = dofi_now_ns() + dofi_rdm_drain_ns(ep->obj.ia);
		dofi_rdm_drain(ep, dofi_now_ns());
		if (re->st == RDM_EP_DRAIN_IN)
			dofi_cm_schedule(ep);
		return;
	}
	/* Abrupt: its requests were flushed; nothing to wait for. */
	drep.sent = atomic_load_explicit(&ep->msgs_sent, memory_order_relaxed);
	dofi_rdm_send(ch, &drep);
	/* What the peer sent before is in our CQs first. */
	dofi_cm_read_cqs(ep);
	dofi_rdm_end(ep, 0);
}

/* The requester of the unanswered CR that conn names on ch gave up.
 * ia->lock held. */
static void dofi_rdm_cr_gone(dofi_rdm_chan_t *ch, uint64_t conn)
{
	dofi_list_t *crs = &ch->ia->objs[DOFI_OBJ_CR], *e;

	for (e = crs->next; e != crs; e = e->next) {
		dofi_rdm_cr_t *rc =
		        dofi_container_of(e, dofi_cr_t, obj.link)->cm;

		if (rc != NULL && rc->chan == ch && rc->peer_conn == conn &&
		    !rc->answered)
			rc->gone = 1;
	}
}

static void dofi_rdm_on_conn_msg(dofi_rdm_chan_t *ch,
                                 const dofi_rdm_wire_msg_t *m)
{
	dofi_rdm_ep_t *re;
	dofi_ep_t *ep;

	if (m->type == DOFI_RDM_WIRE_REJ_CM && m->dst_conn == 0) {
		/* The requester gave up before an answer: its CR stays until
		 * the consumer answers it, and that answer is dropped. */
		dof_debug(DOFI_LOG, "a requester gave up (REJ_CM %u)",
		          m->reason);
		dofi_rdm_cr_gone(ch, m->src_conn);
		return;
	}
	ep = dofi_rdm_find(ch, m);
	if (ep == NULL) {
		if (m->type == DOFI_RDM_WIRE_RTU)
			dofi_rdm_send_rej_cm(ch, 0, m->src_conn,
			                     DOFI_RDM_WIRE_R_UNKNOWN_CONN);
		return;
	}
	re = dofi_rdm_ep(ep);
	if (m->type != DOFI_RDM_WIRE_RTU)
		dofi_rdm_chan_settle(ch);
	switch (m->type) {
	case DOFI_RDM_WIRE_RTU:
		dofi_rdm_on_rtu(ep);
		break;
	case DOFI_RDM_WIRE_REJ_USER:
		if (re->st == RDM_EP_REQ_SENT &&
		    atomic_load(&ep->state) ==
		            DAT_EP_STATE_ACTIVE_CONNECTION_PENDING) {
			re->st = RDM_EP_DOWN;
			dofi_rdm_detach(ep);
			dofi_cm_up_down(ep, DAT_CONNECTION_EVENT_PEER_REJECTED,
			                m->pdata, m->pdata_len);
		}
		break;
	case DOFI_RDM_WIRE_REJ_CM:
		dof_debug(DOFI_LOG, "EP %p: REJ_CM reason %u", (void *)ep,
		          m->reason);
		dofi_rdm_end(ep, 0);
		break;
	case DOFI_RDM_WIRE_DREQ:
		dofi_rdm_on_dreq(ch, ep, m);
		break;
	default:
		/* DREP: what the peer sent, if our end waits for it (else
		 * our end is over already). */
		if (re->st == RDM_EP_DRAIN_OUT && !re->want_known) {
			re->want = m->sent;
			re->want_known = 1;
			dofi_rdm_drain(ep, dofi_now_ns());
		}
		break;
	}
}

static void dofi_rdm_on_hello(dofi_rdm_chan_t *ch,
                              const dofi_rdm_wire_msg_t *m)
{
	dofi_list_t *e, *next;
	uint8_t ver;

	if (dofi_rdm_wire_version(m, &ver, NULL) != DOF_OK) {
		dofi_rdm_chan_fail(ch, EPROTO);
		return;
	}
	ch->peer_inc = m->src_inc;
	ch->state = RDM_CHAN_UP;
	/* The requests that waited for it. */
	for (e = ch->conns.next; e != &ch->conns; e = next) {
		dofi_rdm_ep_t *re =
		        dofi_container_of(e, dofi_rdm_ep_t, chan_link);

		next = e->next;
		if (re->st == RDM_EP_REQ_WAIT)
			dofi_rdm_send_req(re->ep);
	}
}

/* One message from ch, decoded. ia->lock held. */
static void dofi_rdm_handle(dofi_rdm_chan_t *ch, const dofi_rdm_wire_msg_t *m)
{
	dofi_rdm_ia_t *ri = dofi_rdm_ia(ch->ia);

	if (dofi_rdm_wire_admit(m, ri->inc,
	                        ch->state == RDM_CHAN_UP ? ch->peer_inc : 0,
	                        NULL) != DOF_OK) {
		dofi_rdm_chan_fail(ch, EPROTO);
		return;
	}
	dof_debug(DOFI_LOG, "channel %s:%u: %s received",
	          inet_ntoa(ch->peer.sin_addr), ntohs(ch->peer.sin_port),
	          dofi_rdm_wire_type_str(m->type));
	switch (m->type) {
	case DOFI_RDM_WIRE_HELLO:
		dofi_rdm_on_hello(ch, m);
		break;
	case DOFI_RDM_WIRE_REQ:
		dofi_rdm_on_req(ch, m);
		break;
	case DOFI_RDM_WIRE_REP:
		dofi_rdm_on_rep(ch, m);
		break;
	default:
		dofi_rdm_on_conn_msg(ch, m);
		break;
	}
}

/* Read what ch has and handle every whole message. ia->lock held. */
static void dofi_rdm_chan_read(dofi_rdm_chan_t *ch)
{
	for (;;) {
		ssize_t n = recv(ch->fd, ch->in + ch->in_len,
		                 sizeof(ch->in) - ch->in_len, MSG_DONTWAIT);
		size_t off = 0;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			dofi_rdm_chan_fail(ch, n == 0 ? 0 : errno);
			return;
		}
		ch->in_len += (size_t)n;
		while (ch->state != RDM_CHAN_DEAD && off < ch->in_len) {
			dofi_rdm_wire_msg_t m;
			size_t size = 0;
			dof_status_t st = dofi_rdm_wire_decode(
			        ch->in + off, ch->in_len - off, &m, &size, NULL);

			if (st == DOF_ERR_BUSY)
				break;
			if (st != DOF_OK) {
				dofi_rdm_chan_fail(ch, EPROTO);
				return;
			}
			/* m points into in: handle it before moving. */
			dofi_rdm_handle(ch, &m);
			off += size;
		}
		if (ch->state == RDM_CHAN_DEAD)
			return;
		memmove(ch->in, ch->in + off, ch->in_len - off);
		ch->in_len -= off;
	}
}

/* Our connect() finished. */
static void dofi_rdm_chan_connected(dofi_rdm_chan_t *ch)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(ch->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
		err = errno;
	if (err != 0) {
		dofi_rdm_chan_fail(ch, err);
		return;
	}
	dofi_rdm_send_hello(ch);
}

/* Tell the users of failed channels; free those nobody uses. */
static void dofi_rdm_reap(dofi_ia_t *ia)
{
	dofi_rdm_ia_t *ri = dofi_rdm_ia(ia);
	dofi_list_t *e, *next;

	if (!ri->failed)
		return;
	ri->failed = 0;
	for (e = ri->chans.next; e != &ri->chans; e = next) {
		dofi_rdm_chan_t *ch =
		        dofi_container_of(e, dofi_rdm_chan_t, link);

		next = e->next;
		if (!ch->failed)
			continue;
		ch->nref++; /* held while its connections go */
		dofi_rdm_chan_settle(ch);
		while (!dofi_list_empty(&ch->conns)) {
			dofi_rdm_ep_t *re = dofi_container_of(
			        ch->conns.next, dofi_rdm_ep_t, chan_link);

			dofi_rdm_end(re->ep, ch->err ? ch->err : ECONNRESET);
		}
		ch->failed = 0;
		next = e->next;
		dofi_rdm_chan_put(ch);
	}
}

static void dofi_rdm_free_sps(dofi_rdm_ia_t *ri)
{
	while (ri->dead_sps != NULL) {
		dofi_rdm_sp_t *rs = ri->dead_sps;

		ri->dead_sps = rs->next;
		free(rs);
	}
}

static int dofi_rdm_progress(dofi_ia_t *ia, dofi_evd_t *until)
{
	dofi_rdm_ia_t *ri = dofi_rdm_ia(ia);
	struct epoll_event evs[DOFI_RDM_EVENTS];
	int n, i, early = 0;

	pthread_mutex_lock(&ia->lock);
	dofi_rdm_reap(ia);
	do {
		n = epoll_wait(ri->epfd, evs, DOFI_RDM_EVENTS, 0);
		for (i = 0; i < n; i++) {
			int kind = *(int *)evs[i].data.ptr;

			if (kind == RDM_POLL_LISTEN) {
				dofi_rdm_sp_t *rs = evs[i].data.ptr;

				if (rs->fd >= 0)
					dofi_rdm_accept_chans(ia, rs->fd);
				/* A listener freed in this batch. */
				continue;
			} else {
				dofi_rdm_chan_t *ch = evs[i].data.ptr;

				if (ch->state == RDM_CHAN_DEAD)
					continue;
				if (ch->state == RDM_CHAN_CONNECTING &&
				    (evs[i].events &
				     (EPOLLOUT | EPOLLERR | EPOLLHUP))) {
					dofi_rdm_chan_connected(ch);
					continue;
				}
				if (evs[i].events & EPOLLOUT)
					dofi_rdm_chan_flush(ch);
				if (ch->state != RDM_CHAN_DEAD &&
				    (evs[i].events &
				     (EPOLLIN | EPOLLERR | EPOLLHUP)))
					dofi_rdm_chan_read(ch);
			}
		}
		dofi_rdm_reap(ia);
		if (until != NULL && atomic_load(&until->count) > 0) {
			early = 1;
			break;
		}
	} while (n == DOFI_RDM_EVENTS);
	dofi_rdm_free_sps(ri);
	pthread_mutex_unlock(&ia->lock);
	return early;
}

static int dofi_rdm_wait_fd(dofi_ia_t *ia, int *ready)
{
	dofi_rdm_ia_t *ri = dofi_rdm_ia(ia);

	if (ri->failed)
		*ready = 1;
	return ri->epfd;
}

/* ---- EPs and the IA ------------------------------------------------------ */

static uint64_t dofi_rdm_ep_timers(dofi_ep_t *ep, uint64_t now, int *poll)
{
	dofi_rdm_ep_t *re = dofi_rdm_ep(ep);

	*poll = 0;
	/* A graceful end waiting for the peer's messages: every pass. */
	if (re != NULL &&
	    (re->st == RDM_EP_DRAIN_OUT || re->st == RDM_EP_DRAIN_IN)) {
		if (now != 0)
			dofi_rdm_drain(ep, now);
		if (re->st == RDM_EP_DRAIN_OUT || re->st == RDM_EP_DRAIN_IN) {
			*poll = 1;
			return re->drain_at;
		}
	}
	/* An ended connection's endpoint, at the grace period's end. */
	if (re != NULL && re->close_pending) {
		if (now == 0 || now < re->close_at)
			return re->close_at;
		dof_debug(DOFI_LOG,
		          "EP %p: closing the ended connection's endpoint",
		          (void *)ep);
		if (dofi_rdm_close_fep(ep))
			dofi_cm_read_cqs(ep);
		ep->cq_stale = 0;
		return UINT64_MAX;
	}
	if (re != NULL && re->st == RDM_EP_FIRST_WAIT &&
	    atomic_load(&ep->state) == DAT_EP_STATE_COMPLETION_PENDING) {
		if (now != 0)
			dofi_rdm_first_check(ep, now, 0);
		*poll = re->st == RDM_EP_FIRST_WAIT;
		return *poll ? ep->deadline : UINT64_MAX;
	}
	if (re != NULL && re->st == RDM_EP_WARM &&
	    atomic_load(&ep->state) == DAT_EP_STATE_ACTIVE_CONNECTION_PENDING) {
		if (now != 0)
			dofi_rdm_warm(ep);
		*poll = re->st == RDM_EP_WARM;
		return UINT64_MAX;
	}
	if (re == NULL || re->st != RDM_EP_REP_SENT ||
	    atomic_load(&ep->state) != DAT_EP_STATE_COMPLETION_PENDING ||
	    ep->deadline == 0)
		return UINT64_MAX;
	/*
	 * The active side's first message needs our provider's progress
	 * (rxm accepts its connection only when called): at every pass
	 * until the RTU.
	 */
	*poll = 1;
	if (now != 0 && ep->rx_cq != NULL)
		(void)fi_cq_read(ep->rx_cq, NULL, 0);
	if (now != 0 && now >= ep->deadline) {
		dof_info(DOFI_LOG, "EP %p: no RTU from the requester in time",
		         (void *)ep);
		/* The state first, then the backend's end (DREQ, flushes). */
		dofi_cm_up_down(ep,
		                DAT_CONNECTION_EVENT_ACCEPT_COMPLETION_ERROR,
		                NULL, 0);
		return UINT64_MAX;
	}
	return ep->deadline;
}

static void dofi_rdm_ep_kicked(dofi_ep_t *ep)
{
	(void)ep;
}

/*
 * The passive side's receive of the first message was read: whoever read
 * it may not hold ia->lock, so the CM looks (an ESTABLISHED it may hold:
 * dofi_rdm_first_check).
 */
static void dofi_rdm_op_done(dofi_op_t *op, int err)
{
	dofi_rdm_ep_t *re = dofi_rdm_ep(op->ep);

	(void)err;
	if (re != NULL && op == &re->warm_op)
		dofi_cm_kick(op->ep);
}

/* Close the connection's endpoint; forget the connection. ia->lock held. */
static int dofi_rdm_ep_close(dofi_ep_t *ep)
{
	dofi_rdm_ep_t *re = dofi_rdm_ep(ep);
	int stale = 0;

	if (re == NULL)
		return 0;
	/* Freed or reset while up: the peer hears of it. */
	if (re->st != RDM_EP_DOWN && re->st != RDM_EP_IDLE)
		dofi_rdm_disconnect(ep);
	dofi_rdm_detach(ep);
	stale = dofi_rdm_close_fep(ep);
	dofi_rdm_forget(ep);
	re->fi_peer = FI_ADDR_NOTAVAIL;
	re->self_conn = re->peer_conn = re->peer_inc = 0;
	re->st = RDM_EP_IDLE;
	return stale;
}

static dof_status_t dofi_rdm_ep_init(dofi_ep_t *ep)
{
	dofi_rdm_ep_t *re = calloc(1, sizeof(*re));

	if (re == NULL)
		return DOF_ERR_NO_MEMORY;
	re->ep = ep;
	re->warm_op.ep = ep;
	re->fi_peer = FI_ADDR_NOTAVAIL;
	dofi_list_init(&re->chan_link);
	ep->cm = re;
	return DOF_OK;
}

static void dofi_rdm_ep_fini(dofi_ep_t *ep)
{
	if (ep->cm != NULL) {
		dofi_rdm_detach(ep);
		dofi_rdm_forget(ep);
	}
	free(ep->cm);
	ep->cm = NULL;
}

/* The link bound: DAPL_OFI_LINK_TIMEOUT, else link_timeout=, in ns. */
static uint64_t dofi_rdm_link_ns(const dofi_ia_t *ia)
{
	const char *env = getenv("DAPL_OFI_LINK_TIMEOUT");
	uint64_t ms = ia->prov->inst.link_timeout_ms;

	if (env != NULL && *env != '\0' && dofi_duration_ms(env, &ms) != DOF_OK)
		ms = 1; /* refused below */
	if (ms == DOFI_INSTANCE_UNSET)
		ms = DOFI_RDM_LINK_MS;
	if (ms != 0 && ms < DOFI_RDM_LINK_MIN_MS) {
		dof_warn(DOFI_LOG,
		         "IA '%s': the link timeout is not 0 or %llu ms or "
		         "more; using %llu ms",
		         ia->prov->info.ia_name, DOFI_RDM_LINK_MIN_MS,
		         DOFI_RDM_LINK_MS);
		ms = DOFI_RDM_LINK_MS;
	}
	return ms * 1000000ull;
}

/*
 * The IP of the IA's control channel where the fabric's addresses are
 * not IP (shm, efa): the instance data's domain word when it is an IPv4
 * address or an interface with one; else loopback for shm, the first
 * interface that is up and not loopback for the others, loopback last.
 */
static void dofi_rdm_ip(dofi_ia_t *ia)
{
	const char *want = ia->prov->inst.fi_domain;
	const char *prov = ia->info->fabric_attr->prov_name;
	struct ifaddrs *ifs = NULL, *i;
	struct in_addr a, found = {.s_addr = htonl(INADDR_LOOPBACK)};
	int have = 0;

	if (ia->info->addr_format == FI_SOCKADDR_IN)
		return; /* dofi_ia_open takes the fabric's own */
	if (want[0] != '\0' && inet_pton(AF_INET, want, &a) == 1) {
		found = a;
		have = 1;
	}
	if (!have && (prov == NULL || strcmp(prov, "shm") != 0 ||
	              want[0] != '\0') &&
	    getifaddrs(&ifs) == 0) {
		for (i = ifs; i != NULL && !have; i = i->ifa_next) {
			if (i->ifa_addr == NULL ||
			    i->ifa_addr->sa_family != AF_INET ||
			    !(i->ifa_flags & IFF_UP))
				continue;
			if (want[0] != '\0' ? strcmp(i->ifa_name, want) != 0
			                    : (i->ifa_flags & IFF_LOOPBACK))
				continue;
			found = ((struct sockaddr_in *)(void *)i->ifa_addr)
			                ->sin_addr;
			have = 1;
		}
		freeifaddrs(ifs);
	}
	ia->addr.sin_family = AF_INET;
	ia->addr.sin_addr = found;
	ia->addr.sin_port = 0;
}

static dof_status_t dofi_rdm_ia_open(dofi_ia_t *ia)
{
	dofi_rdm_ia_t *ri = calloc(1, sizeof(*ri));
	uint64_t order = ia->info->tx_attr->msg_order;

	if (ri == NULL)
		return DOF_ERR_NO_MEMORY;
	ri->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (ri->epfd < 0) {
		free(ri);
		return DOF_ERR_NO_RESOURCE;
	}
	while (ri->inc == 0)
		if (getrandom(&ri->inc, sizeof(ri->inc), 0) !=
		    (ssize_t)sizeof(ri->inc))
			ri->inc = (uint64_t)dofi_now_ns() ^
			          ((uint64_t)getpid() << 32);
	dofi_list_init(&ri->chans);
	dofi_map_init(&ri->conns);
	ia->cm = ri;
	ri->link_ns = dofi_rdm_link_ns(ia);
	/* Our own protocol's limit: max_private_data_size is 256. */
	ia->cm_data_size = DOFI_RDM_WIRE_PDATA_MAX + DOFI_CM_HDR_SIZE;
	dofi_rdm_ip(ia);
	if (!(order & FI_ORDER_SAW))
		dof_info(DOFI_LOG,
		         "%s orders no send after an RDMA Write (msg_order "
		         "%#llx): see dapl-ofi(7), Ordering",
		         ia->info->fabric_attr->prov_name,
		         (unsigned long long)order);
	return DOF_OK;
}

static void dofi_rdm_ia_close(dofi_ia_t *ia)
{
	dofi_rdm_ia_t *ri = dofi_rdm_ia(ia);

	if (ri == NULL)
		return;
	while (!dofi_list_empty(&ri->chans)) {
		dofi_rdm_chan_t *ch =
		        dofi_container_of(ri->chans.next, dofi_rdm_chan_t, link);

		dofi_list_del(&ch->link);
		if (ch->fd >= 0)
			close(ch->fd);
		free(ch->out);
		free(ch);
	}
	while (ri->avs != NULL) {
		dofi_rdm_av_t *a = ri->avs;

		ri->avs = a->next;
		(void)fi_close(&a->av->fid);
		free(a);
	}
	if (ri->conn_info != NULL)
		fi_freeinfo(ri->conn_info);
	dofi_rdm_free_sps(ri);
	dofi_map_fini(&ri->conns);
	close(ri->epfd);
	free(ri);
	ia->cm = NULL;
}

const dofi_cm_ops_t dofi_cm_rdm_ops = {
        .name = "rdm",
        .flush_at_close = 1,
        .ia_open = dofi_rdm_ia_open,
        .ia_close = dofi_rdm_ia_close,
        .ep_init = dofi_rdm_ep_init,
        .ep_fini = dofi_rdm_ep_fini,
        .listen = dofi_rdm_listen,
        .unlisten = dofi_rdm_unlisten,
        .connect = dofi_rdm_connect,
        .accept = dofi_rdm_accept,
        .reject = dofi_rdm_reject,
        .cr_release = dofi_rdm_cr_release,
        .disconnect = dofi_rdm_disconnect,
        .ep_close = dofi_rdm_ep_close,
        .ep_timers = dofi_rdm_ep_timers,
        .ep_kicked = dofi_rdm_ep_kicked,
        .progress = dofi_rdm_progress,
        .wait_fd = dofi_rdm_wait_fd,
        .op_done = dofi_rdm_op_done,
};
