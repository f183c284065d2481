/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * The sockets gate (dofi_cm_msg.c, traits->cm_gate).
 *
 * libfabric's sockets provider (1.17, prov/sockets/src/sock_ep_msg.c)
 * trusts the bytes on its CM sockets. The CM thread of a listener reads an
 * 8-byte header (type, 3 reserved bytes, port, cm_data_sz) from each
 * accepted socket and dispatches on the type without asking whose socket
 * it is: an ACCEPT, REJECT or SHUTDOWN header on a listener's socket
 * dereferences the endpoint such a socket does not have (NULL), and the
 * process dies; a REQ whose cm_data_sz is over 256 frees the socket's
 * handle while it is still registered; and it reads blocking, under its
 * lock, so a sender that stops half-way stops every later request to that
 * listener. No option of the provider bounds any of it.
 *
 * So on sockets a PSP or RSP listens on its port with a socket of ours
 * (the gate), and libfabric's listener on another port of the same
 * address. The gate's thread reads each connection's first message with
 * a deadline, and forwards it only when it is one request as libfabric
 * sends it (type REQ, reserved bytes 0, an IP address, cm_data_sz up to
 * 256) carrying our header of type REQ. From then on it relays the
 * connection: what libfabric sends goes out unchanged, and from the peer
 * only SHUTDOWN headers pass; anything else, or an end on either side,
 * closes both. Connections still sending their request are bounded in
 * number; beyond that new ones are closed at once.
 *
 * What stays open: that other port itself (found by a port scan), the
 * data connections' ports, and an active side's socket to a server
 * (a hostile server kills a sockets client with the same bytes): see
 * dapl-ofi(7). DAPL_OFI_SOCKETS_GATE=0 turns the gate off.
 */
#include "config.h"

#define DOFI_LOG_COMP "cm"

#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dofi_gate.h"

#define DOFI_SOCK_T_REQ      0
#define DOFI_SOCK_T_SHUTDOWN 3
#define DOFI_SOCK_HDR        8  /* type, reserved[3], port, cm_data_sz */
#define DOFI_SOCK_REQ        64 /* header, a 48-byte address, caps */
#define DOFI_SOCK_CM_MAX     256
/* How long a connection may take to send its request. */
#define DOFI_GATE_NS (2ull * 1000000000ull)
/*
 * Connections of an IA still sending their request, at most: well above
 * a burst of real requests (OFED's dtestcm sends 100 at once, and 64
 * refused some of them), each a descriptor for at most DOFI_GATE_NS.
 */
#define DOFI_GATE_PENDING 1024

enum { DOFI_GATE_LIS, DOFI_GATE_PEER, DOFI_GATE_INNER };

typedef struct dofi_gate_conn dofi_gate_conn_t;

/* What an epoll entry of the gate points to. */
typedef struct dofi_gate_end {
	int kind; /* DOFI_GATE_* */
	dofi_gate_conn_t *conn;
} dofi_gate_end_t;

typedef struct dofi_gate_lis {
	dofi_gate_end_t end; /* first: the epoll entry */
	dofi_list_t link;
	int fd;
	struct sockaddr_in inner; /* libfabric's listener */
	int dead;
} dofi_gate_lis_t;

struct dofi_gate_conn {
	dofi_gate_end_t peer_end, inner_end;
	dofi_list_t link;
	int pfd, ifd; /* the peer's socket; ours to libfabric (-1: none) */
	struct sockaddr_in inner;
	uint64_t deadline; /* 0 once the request went through */
	int connecting;    /* ifd's connect is in progress */
	int dead;
	size_t have, need; /* the request, or a SHUTDOWN header */
	unsigned char buf[DOFI_SOCK_REQ + DOFI_SOCK_CM_MAX];
};

typedef struct dofi_gate {
	pthread_t thread;
	pthread_mutex_t lock; /* under ia->lock, never the other way */
	int epfd, stopfd;
	int stop;
	int pending; /* connections still sending their request */
	dofi_list_t lis, conns, dead, dead_lis;
} dofi_gate_t;

int dofi_gate_wanted(const dofi_ia_t *ia)
{
	const char *env = getenv("DAPL_OFI_SOCKETS_GATE");

	if (!ia->traits->cm_gate)
		return 0;
	return env == NULL || strcmp(env, "0") != 0;
}

static void dofi_gate_drop(dofi_gate_t *g, dofi_gate_conn_t *c, const char *why)
{
	if (c->dead)
		return;
	if (why != NULL)
		dof_info(DOFI_LOG, "gate: connection %d dropped: %s", c->pfd,
		         why);
	c->dead = 1;
	if (c->deadline != 0)
		g->pending--;
	(void)epoll_ctl(g->epfd, EPOLL_CTL_DEL, c->pfd, NULL);
	close(c->pfd);
	if (c->ifd >= 0) {
		(void)epoll_ctl(g->epfd, EPOLL_CTL_DEL, c->ifd, NULL);
		close(c->ifd);
	}
	dofi_list_del(&c->link);
	dofi_list_add_tail(&g->dead, &c->link);
}

/* Whether buf (DOFI_SOCK_HDR bytes so far) may begin a request. */
static int dofi_gate_hdr_ok(const unsigned char *b, size_t *need)
{
	size_t cm = ((size_t)b[6] << 8) | b[7];

	if (b[0] != DOFI_SOCK_T_REQ || b[1] != 0 || b[2] != 0 || b[3] != 0 ||
	    cm < DOFI_CM_HDR_SIZE || cm > DOFI_SOCK_CM_MAX)
		return 0;
	*need = DOFI_SOCK_REQ + cm;
	return 1;
}

/* The whole request: an IP address and our header of type REQ. */
static int dofi_gate_req_ok(const unsigned char *b, size_t len)
{
	sa_family_t fam;
	dofi_cm_hdr_t h;

	memcpy(&fam, b + DOFI_SOCK_HDR, sizeof(fam));
	if (fam != AF_INET && fam != AF_INET6)
		return 0;
	return dofi_cm_hdr_unpack(b + DOFI_SOCK_REQ, len - DOFI_SOCK_REQ,
	                          DOFI_SOCK_CM_MAX - DOFI_CM_HDR_SIZE, &h, NULL,
	                          NULL) == DOF_OK &&
	       h.type == DOFI_CM_REQ;
}

static int dofi_gate_send_all(int fd, const void *buf, size_t len)
{
	ssize_t n = send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);

	return n == (ssize_t)len ? 0 : -1;
}

/* The request is in and good: on to libfabric's listener. */
static void dofi_gate_forward(dofi_gate_t *g, dofi_gate_conn_t *c)
{
	struct epoll_event ev = {.events = EPOLLIN};

	if (c->ifd < 0) {
		int one = 1;

		c->ifd = socket(AF_INET,
		                SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (c->ifd < 0) {
			dofi_gate_drop(g, c, "no socket");
			return;
		}
		/*
		 * Its ephemeral port, live or in TIME_WAIT, must not keep a
		 * PSP or RSP from listening there: Linux lets a listener
		 * bind beside it only if both set the option.
		 */
		(void)setsockopt(c->ifd, SOL_SOCKET, SO_REUSEADDR, &one,
		                 sizeof(one));
		if (connect(c->ifd, (struct sockaddr *)&c->inner,
		            sizeof(c->inner)) != 0) {
			if (errno != EINPROGRESS) {
				dofi_gate_drop(g, c, "listener refused");
				return;
			}
			struct epoll_event pe = {.events = 0,
			                         .data.ptr = &c->peer_end};

			/* The peer waits (its fd would keep firing). */
			c->connecting = 1;
			ev.events = EPOLLOUT;
			ev.data.ptr = &c->inner_end;
			if (epoll_ctl(g->epfd, EPOLL_CTL_ADD, c->ifd, &ev) ||
			    epoll_ctl(g->epfd, EPOLL_CTL_MOD, c->pfd, &pe))
				dofi_gate_drop(g, c, "epoll");
			return;
		}
		ev.data.ptr = &c->inner_end;
		if (epoll_ctl(g->epfd, EPOLL_CTL_ADD, c->ifd, &ev)) {
			dofi_gate_drop(g, c, "epoll");
			return;
		}
	}
	if (dofi_gate_send_all(c->ifd, c->buf, c->have) != 0) {
		dofi_gate_drop(g, c, "listener refused");
		return;
	}
	c->deadline = 0;
	g->pending--;
	c->have = 0;
	c->need = DOFI_SOCK_HDR;
}

/* The peer's bytes: its request, then SHUTDOWN headers only. */
static void dofi_gate_peer_in(dofi_gate_t *g, dofi_gate_conn_t *c,
                              uint32_t events)
{
	if (c->connecting) {
		/* Only a hang-up or an error is reported meanwhile. */
		if (events & (EPOLLHUP | EPOLLERR))
			dofi_gate_drop(g, c, "ended early");
		return;
	}
	while (!c->dead) {
		ssize_t n = recv(c->pfd, c->buf + c->have, c->need - c->have,
		                 MSG_DONTWAIT);

		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			dofi_gate_drop(g, c,
			               c->deadline ? "ended early" : NULL);
			return;
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		c->have += (size_t)n;
		if (c->have < c->need)
			continue;
		if (c->deadline == 0) {
			/* A header after the request: SHUTDOWN alone. */
			if (c->buf[0] != DOFI_SOCK_T_SHUTDOWN ||
			    c->buf[6] != 0 || c->buf[7] != 0) {
				dofi_gate_drop(g, c, "not a SHUTDOWN");
				return;
			}
			if (dofi_gate_send_all(c->ifd, c->buf, c->have)) {
				dofi_gate_drop(g, c, NULL);
				return;
			}
			c->have = 0;
		} else if (c->need == DOFI_SOCK_HDR) {
			if (!dofi_gate_hdr_ok(c->buf, &c->need)) {
				dofi_gate_drop(g, c, "not a request");
				return;
			}
		} else {
			if (!dofi_gate_req_ok(c->buf, c->have)) {
				dofi_gate_drop(g, c, "not a dapl-ofi request");
				return;
			}
			dofi_gate_forward(g, c);
		}
	}
}

/* libfabric's bytes: out to the peer as they are. */
static void dofi_gate_inner_in(dofi_gate_t *g, dofi_gate_conn_t *c)
{
	unsigned char buf[512];

	if (c->connecting) {
		int err = 0;
		socklen_t len = sizeof(err);
		struct epoll_event ev = {.events = EPOLLIN,
		                         .data.ptr = &c->inner_end};

		struct epoll_event pe = {.events = EPOLLIN,
		                         .data.ptr = &c->peer_end};

		if (getsockopt(c->ifd, SOL_SOCKET, SO_ERROR, &err, &len) ||
		    err != 0 ||
		    epoll_ctl(g->epfd, EPOLL_CTL_MOD, c->ifd, &ev) != 0 ||
		    epoll_ctl(g->epfd, EPOLL_CTL_MOD, c->pfd, &pe) != 0) {
			dofi_gate_drop(g, c, "listener refused");
			return;
		}
		c->connecting = 0;
		dofi_gate_forward(g, c);
		return;
	}
	while (!c->dead) {
		ssize_t n = recv(c->ifd, buf, sizeof(buf), MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0 || dofi_gate_send_all(c->pfd, buf, (size_t)n)) {
			dofi_gate_drop(g, c, NULL);
			return;
		}
	}
}

static void dofi_gate_accept(dofi_gate_t *g, dofi_gate_lis_t *l)
{
	for (;;) {
		struct epoll_event ev = {.events = EPOLLIN};
		dofi_gate_conn_t *c;
		int fd = accept4(l->fd, NULL, NULL,
		                 SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			/* Out of descriptors, the listener stays readable:
			 * do not spin on it. */
			if (errno == EMFILE || errno == ENFILE) {
				const struct timespec nap = {0, 10000000};

				dof_info(DOFI_LOG, "gate: accept: %s",
				         strerror(errno));
				(void)nanosleep(&nap, NULL);
			}
			return;
		}
		c = g->pending < DOFI_GATE_PENDING ? calloc(1, sizeof(*c))
		                                   : NULL;
		if (c == NULL) {
			dof_info(DOFI_LOG,
			         "gate: %d connections still "
			         "sending their request: one closed",
			         g->pending);
			close(fd);
			continue;
		}
		c->pfd = fd;
		c->ifd = -1;
		c->inner = l->inner;
		c->need = DOFI_SOCK_HDR;
		c->deadline = dofi_now_ns() + DOFI_GATE_NS;
		c->peer_end.kind = DOFI_GATE_PEER;
		c->peer_end.conn = c;
		c->inner_end.kind = DOFI_GATE_INNER;
		c->inner_end.conn = c;
		ev.data.ptr = &c->peer_end;
		if (epoll_ctl(g->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
			close(fd);
			free(c);
			continue;
		}
		g->pending++;
		dofi_list_add_tail(&g->conns, &c->link);
	}
}

/* Drop the connections past their deadline; the next deadline (ms). */
static int dofi_gate_expire(dofi_gate_t *g)
{
	uint64_t now = dofi_now_ns(), next = UINT64_MAX;
	dofi_list_t *e, *n;

	for (e = g->conns.next; e != &g->conns; e = n) {
		dofi_gate_conn_t *c =
		        dofi_container_of(e, dofi_gate_conn_t, link);

		n = e->next;
		if (c->deadline == 0)
			continue;
		if (c->deadline <= now)
			dofi_gate_drop(g, c, "no request in time");
		else if (c->deadline < next)
			next = c->deadline;
	}
	if (next == UINT64_MAX)
		return -1;
	return (int)((next - now) / 1000000ull) + 1;
}

static void dofi_gate_reap(dofi_gate_t *g)
{
	while (!dofi_list_empty(&g->dead)) {
		dofi_list_t *e = g->dead.next;

		dofi_list_del(e);
		free(dofi_container_of(e, dofi_gate_conn_t, link));
	}
	while (!dofi_list_empty(&g->dead_lis)) {
		dofi_list_t *e = g->dead_lis.next;

		dofi_list_del(e);
		free(dofi_container_of(e, dofi_gate_lis_t, link));
	}
}

static void *dofi_gate_thread(void *arg)
{
	dofi_gate_t *g = arg;
	struct epoll_event evs[32];
	int timeout = -1;
	for (;;) {
		int i, n = epoll_wait(g->epfd, evs, 32, timeout);

		pthread_mutex_lock(&g->lock);
		if (g->stop) {
			pthread_mutex_unlock(&g->lock);
			break;
		}
		for (i = 0; i < n; i++) {
			dofi_gate_end_t *end = evs[i].data.ptr;

			if (end == NULL) { /* the wake fd */
				eventfd_t v;

				(void)eventfd_read(g->stopfd, &v);
				continue;
			}
			if (end->kind == DOFI_GATE_LIS) {
				dofi_gate_lis_t *l = (dofi_gate_lis_t *)end;

				if (!l->dead)
					dofi_gate_accept(g, l);
			} else if (end->conn->dead) {
				continue;
			} else if (end->kind == DOFI_GATE_PEER) {
				dofi_gate_peer_in(g, end->conn, evs[i].events);
			} else {
				dofi_gate_inner_in(g, end->conn);
			}
		}
		timeout = dofi_gate_expire(g);
		dofi_gate_reap(g);
		pthread_mutex_unlock(&g->lock);
	}
	return NULL;
}

/*
 * The IA's gate, started at its first listener. ia->lock held. Signals
 * stay with the consumer's threads: the thread blocks them all.
 */
static dofi_gate_t *dofi_gate_get(dofi_gate_t **gp)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
	sigset_t all, old;
	dofi_gate_t *g;
	int rc;

	if (*gp != NULL)
		return *gp;
	g = calloc(1, sizeof(*g));
	if (g == NULL)
		return NULL;
	dofi_list_init(&g->lis);
	dofi_list_init(&g->conns);
	dofi_list_init(&g->dead);
	dofi_list_init(&g->dead_lis);
	g->epfd = epoll_create1(EPOLL_CLOEXEC);
	g->stopfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (g->epfd < 0 || g->stopfd < 0 ||
	    epoll_ctl(g->epfd, EPOLL_CTL_ADD, g->stopfd, &ev) != 0)
		goto err;
	if (pthread_mutex_init(&g->lock, NULL) != 0)
		goto err;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&g->thread, NULL, dofi_gate_thread, g);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		pthread_mutex_destroy(&g->lock);
		goto err;
	}
	*gp = g;
	return g;
err:
	dof_warn(DOFI_LOG, "gate: cannot start: %s", strerror(errno));
	if (g->epfd >= 0)
		close(g->epfd);
	if (g->stopfd >= 0)
		close(g->stopfd);
	free(g);
	return NULL;
}

/*
 * A port for libfabric's listener behind the gate: above Linux's
 * ephemeral range (ip_local_port_range), where neither connections nor
 * the qualifiers applications pick from that range (dapltest's 43806 and
 * up) land; 0 (any) when that range reaches 65535 or all are taken.
 * A qualifier later wanted by a PSP could otherwise be held by an inner
 * listener. ia->lock held.
 */
uint16_t dofi_gate_port(const struct sockaddr_in *addr, uint16_t *last)
{
	unsigned lo = 32768, hi = 60999, n;
	struct sockaddr_in a = *addr;
	FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");

	if (f != NULL) {
		if (fscanf(f, "%u %u", &lo, &hi) != 2)
			hi = 60999;
		fclose(f);
	}
	if (hi >= 65535)
		return 0;
	for (n = 0; n <= 65535 - (hi + 1); n++) {
		uint16_t port = *last > hi + 1 ? *last - 1 : 65535;

		*last = port;
		a.sin_port = htons(port);
		if (!dofi_port_busy(&a))
			return port;
	}
	return 0;
}

/*
 * The gate's socket for a port, listening at once: addr (port 0: any;
 * the port taken goes back in addr). A request that comes before the
 * fabric's listener is up waits in its backlog, not refused. The fd, or
 * -1 with *err set (EADDRINUSE: the port is taken).
 */
int dofi_gate_open(struct sockaddr_in *addr, int *err)
{
	socklen_t alen = sizeof(*addr);
	int one = 1, fd;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)addr, sizeof(*addr)) != 0 ||
	    listen(fd, SOMAXCONN) != 0 ||
	    getsockname(fd, (struct sockaddr *)addr, &alen) != 0) {
		*err = errno;
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/*
 * Pass what comes to fd (from dofi_gate_open, closed here on failure) to
 * libfabric's listener at inner. Returns the listener, or NULL with *err
 * set. ia->lock held.
 */
dofi_gate_lis_t *dofi_gate_listen(dofi_gate_t **gp, int fd,
                                  const struct sockaddr_in *inner, int *err)
{
	dofi_gate_t *g = dofi_gate_get(gp);
	struct epoll_event ev = {.events = EPOLLIN};
	dofi_gate_lis_t *l;

	*err = ENOMEM;
	if (g == NULL || (l = calloc(1, sizeof(*l))) == NULL) {
		close(fd);
		return NULL;
	}
	l->end.kind = DOFI_GATE_LIS;
	l->inner = *inner;
	l->fd = fd;
	ev.data.ptr = &l->end;
	pthread_mutex_lock(&g->lock);
	if (epoll_ctl(g->epfd, EPOLL_CTL_ADD, l->fd, &ev) != 0) {
		*err = errno;
		pthread_mutex_unlock(&g->lock);
		close(l->fd);
		free(l);
		return NULL;
	}
	dofi_list_add_tail(&g->lis, &l->link);
	pthread_mutex_unlock(&g->lock);
	return l;
}

/* Stop listening; the connections it let in go on. ia->lock held. */
void dofi_gate_unlisten(dofi_gate_t *g, dofi_gate_lis_t *l)
{
	pthread_mutex_lock(&g->lock);
	(void)epoll_ctl(g->epfd, EPOLL_CTL_DEL, l->fd, NULL);
	close(l->fd);
	l->dead = 1;
	dofi_list_del(&l->link);
	dofi_list_add_tail(&g->dead_lis, &l->link);
	pthread_mutex_unlock(&g->lock);
	/* The thread frees it after the events it may hold for it. */
	(void)eventfd_write(g->stopfd, 1);
}

/* The IA closes: stop the thread, close everything. */
void dofi_gate_close(dofi_gate_t **gp)
{
	dofi_gate_t *g = *gp;

	if (g == NULL)
		return;
	pthread_mutex_lock(&g->lock);
	g->stop = 1;
	pthread_mutex_unlock(&g->lock);
	(void)eventfd_write(g->stopfd, 1);
	pthread_join(g->thread, NULL);
	while (!dofi_list_empty(&g->conns))
		dofi_gate_drop(g,
		               dofi_container_of(g->conns.next,
		                                 dofi_gate_conn_t, link),
		               NULL);
	while (!dofi_list_empty(&g->lis)) {
		dofi_gate_lis_t *l =
		        dofi_container_of(g->lis.next, dofi_gate_lis_t, link);

		close(l->fd);
		dofi_list_del(&l->link);
		dofi_list_add_tail(&g->dead_lis, &l->link);
	}
	dofi_gate_reap(g);
	close(g->epfd);
	close(g->stopfd);
	pthread_mutex_destroy(&g->lock);
	free(g);
	*gp = NULL;
}

/*
 * Whether another socket holds addr's port. sockets reports a listen on
 * a port in use as FI_EINVAL, which would say the consumer erred; a bind
 * of our own tells the two apart. Not on the data path.
 */
int dofi_port_busy(const struct sockaddr_in *addr)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0), busy;

	if (fd < 0)
		return 0;
	busy = bind(fd, (const struct sockaddr *)addr, sizeof(*addr)) != 0 &&
	       errno == EADDRINUSE;
	close(fd);
	return busy;
}
