/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * dat_hostile: a PSP must survive hostile input on the wire and go on
 * serving.  A server process (a child) listens on a PSP; this process
 * aims garbage TCP connections at the PSP's port, without DAT:
 *
 *   random      random bytes, 1 B to 64 KiB, and one stream of 1 MiB
 *   close       connect and close at once
 *   reset       a few random bytes, then a reset (SO_LINGER 0)
 *   truncated   prefixes of a real connection request
 *   mutated     a real request with 1-3 bytes changed, and every value of
 *               interest (0-3, 0x7f, 0xff) in each of its first 16 bytes
 *   slow        senders holding a few bytes of a request open, kept for
 *               the real connection below
 *
 * The real request is captured from a real client: a DAT client connects
 * to a plain TCP socket of ours and we keep the bytes it sends (whatever
 * the fabric's wire format is).  After each kind the server must still
 * be alive.  Last, with the slow senders still open, a real client
 * connects and exchanges data with the server (every byte checked); the
 * server rejects every other request.  The test fails when the server
 * or the client dies (the children run with the default actions for
 * SIGSEGV, SIGBUS and SIGABRT, which libfabric's psm libraries replace)
 * or the real connection does not come up within its timeout.
 *
 * The process moves into a network namespace of its own when it may
 * (root): nothing outside sees the garbage.
 *
 * Usage: dat_hostile [-D IA] [-k KINDS] [-r SEED]
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "shared.h"

#define REAL_PDATA    "dat_hostile: the real client"
#define CAPTURE_PDATA "dat_hostile: a captured request"
#define MSG_LEN       4096
#define MAX_CAPTURE   4096
#define NSLOW         4
#define SEND_MS       2000 /* how long one garbage stream may take */

static uint64_t seed;
static const char *kinds = "random,big,close,reset,truncated,mutated,slow";
static unsigned char capture[MAX_CAPTURE];
static size_t capture_len;

static int opt_handler(int opt, const char *arg)
{
	if (opt == 'k')
		kinds = arg;
	else if (opt == 'r')
		seed = strtoull(arg, NULL, 0);
	else
		return -1;
	return 0;
}

/* Whether -k names kind (a comma list). */
static bool kind(const char *k)
{
	size_t n = strlen(k);
	const char *p = kinds;

	while ((p = strstr(p, k)) != NULL) {
		if ((p == kinds || p[-1] == ',') && (p[n] == ',' || !p[n]))
			return true;
		p += n;
	}
	return false;
}

/* xorshift64*: the test's own random numbers, repeatable with -r. */
static uint64_t rnd(void)
{
	seed ^= seed >> 12;
	seed ^= seed << 25;
	seed ^= seed >> 27;
	return seed * 2685821657736338717ull;
}

static void rnd_fill(unsigned char *buf, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = (unsigned char)(rnd() >> 56);
}

static void own_namespace(void)
{
	char *up[] = {"ip", "link", "set", "lo", "up", NULL};

	if (unshare(CLONE_NEWNET) != 0) {
		ft_log("note: no network namespace of our own (%s): the "
		       "garbage goes to the IA's address here",
		       strerror(errno));
		return;
	}
	if (ft_run_ip(up) != 0)
		ft_notrun("ip link set lo up failed in our namespace (is "
		          "iproute2 installed?)");
	ft_log("private network namespace with lo up");
}

/* A crash must end the child by its signal: undo libfabric's handlers. */
static void default_signals(void)
{
	signal(SIGSEGV, SIG_DFL);
	signal(SIGBUS, SIG_DFL);
	signal(SIGABRT, SIG_DFL);
	signal(SIGILL, SIG_DFL);
	signal(SIGFPE, SIG_DFL);
}

static bool wait_dto(DAT_EVD_HANDLE evd, DAT_DTOS op, const char *who)
{
	DAT_EVENT ev;
	DAT_RETURN ret = ft_wait(evd, FT_TIMEOUT_US, &ev);

	return FT_CHECK(
	        ret == DAT_SUCCESS &&
	                ev.event_number == DAT_DTO_COMPLETION_EVENT &&
	                ev.event_data.dto_completion_event_data.operation ==
	                        op &&
	                ev.event_data.dto_completion_event_data.status ==
	                        DAT_DTO_SUCCESS,
	        "%s: %s completes: %s", who, ft_dto_op_str(op),
	        ret == DAT_SUCCESS ? ft_event_desc(&ev) : ft_ret_str(ret));
}

/* ---- the server (a child) ------------------------------------------------ */

/*
 * Listen, tell the parent where (IA address, qualifier) through fd, then
 * reject every request but the real client's, which is accepted: a
 * message comes, its bytes go back inverted.  Exits with the result.
 */
static void server(int fd)
{
	struct ft_ia ia;
	struct ft_listener l;
	struct ft_ep ep;
	struct ft_mr mr;
	struct sockaddr_in a;
	DAT_LMR_TRIPLET t;
	DAT_DTO_COOKIE ck = {.as_64 = 1};
	DAT_EVENT ev;
	DAT_RETURN ret;
	uint64_t qual;
	long rejected = 0;
	size_t i;

	ft_ia_open(ft_opts.ia_name, &ia);
	default_signals();
	ft_check_libs();
	FT_DAT_OK(ft_listen(&ia, &l));
	memset(&a, 0, sizeof(a));
	memcpy(&a, ia.attr.ia_address_ptr, sizeof(a));
	qual = l.qual;
	if (write(fd, &a, sizeof(a)) != (ssize_t)sizeof(a) ||
	    write(fd, &qual, sizeof(qual)) != (ssize_t)sizeof(qual))
		FT_FATAL("server: cannot tell the parent its address");
	close(fd);
	ft_log("server: listening at %s, qualifier %llu",
	       ft_addr_str((struct sockaddr *)&a), (unsigned long long)qual);
	FT_DAT_OK(ft_ep_create(&ia, ia.pz, NULL, 8, &ep));
	FT_DAT_OK(
	        ft_mr_create(&ia, ia.pz, MSG_LEN, DAT_MEM_PRIV_ALL_FLAG, &mr));
	for (;;) {
		DAT_CR_PARAM p;
		DAT_CR_HANDLE cr;

		ret = ft_wait(l.cr_evd, DAT_TIMEOUT_INFINITE, &ev);
		if (ret != DAT_SUCCESS)
			FT_FATAL("server: waiting for requests: %s",
			         ft_ret_str(ret));
		if (ev.event_number != DAT_CONNECTION_REQUEST_EVENT)
			continue;
		cr = ev.event_data.cr_arrival_event_data.cr_handle;
		FT_DAT_OK(dat_cr_query(cr, DAT_CR_FIELD_ALL, &p));
		if (p.private_data_size >= (DAT_COUNT)sizeof(REAL_PDATA) &&
		    memcmp(p.private_data, REAL_PDATA, sizeof(REAL_PDATA)) == 0)
			break;
		rejected++;
		FT_DAT_CHECK(dat_cr_reject(cr, 0, NULL));
	}
	ft_log("server: %ld other requests rejected; accepting the real one",
	       rejected);
	t = ft_lmr_iov(&mr, 0, MSG_LEN);
	FT_DAT_OK(dat_ep_post_recv(ep.ep, 1, &t, ck,
	                           DAT_COMPLETION_DEFAULT_FLAG));
	FT_DAT_OK(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle,
	                        ep.ep, 0, NULL));
	if (ft_expect_event(ep.conn_evd, FT_TIMEOUT_US,
	                    DAT_CONNECTION_EVENT_ESTABLISHED, ep.ep, NULL,
	                    "server: the real connection is established") &&
	    wait_dto(ep.recv_evd, DAT_DTO_RECEIVE, "server")) {
		unsigned char *b = mr.buf;

		for (i = 0; i < MSG_LEN; i++)
			b[i] = (unsigned char)~b[i];
		FT_DAT_CHECK(dat_ep_post_send(ep.ep, 1, &t, ck,
		                              DAT_COMPLETION_DEFAULT_FLAG));
		wait_dto(ep.req_evd, DAT_DTO_SEND, "server");
		ft_expect_event(ep.conn_evd, FT_TIMEOUT_US,
		                DAT_CONNECTION_EVENT_DISCONNECTED, ep.ep, NULL,
		                "server: the client disconnects");
	}
	ft_mr_free(&mr);
	ft_ep_free(&ep);
	ft_listener_free(&l);
	ft_ia_close(&ia);
	exit(ft_finish());
}

/* ---- clients (children) -------------------------------------------------- */

/* Connect to to:qual with pdata; with data, exchange a message. */
static void client(const struct sockaddr_in *to, uint64_t qual,
                   const char *pdata, bool data)
{
	struct ft_ia ia;
	struct ft_ep ep;
	struct ft_mr mr;
	DAT_LMR_TRIPLET t;
	DAT_DTO_COOKIE ck = {.as_64 = 2};
	DAT_RETURN ret;
	char pd[64];

	snprintf(pd, sizeof(pd), "%s", pdata);
	ft_ia_open(ft_opts.ia_name, &ia);
	default_signals();
	FT_DAT_OK(ft_ep_create(&ia, ia.pz, NULL, 8, &ep));
	FT_DAT_OK(
	        ft_mr_create(&ia, ia.pz, MSG_LEN, DAT_MEM_PRIV_ALL_FLAG, &mr));
	t = ft_lmr_iov(&mr, 0, MSG_LEN);
	if (data)
		FT_DAT_OK(dat_ep_post_recv(ep.ep, 1, &t, ck,
		                           DAT_COMPLETION_DEFAULT_FLAG));
	ret = dat_ep_connect(ep.ep, (DAT_IA_ADDRESS_PTR)to, qual, FT_TIMEOUT_US,
	                     (DAT_COUNT)strlen(pd) + 1, pd, DAT_QOS_BEST_EFFORT,
	                     DAT_CONNECT_DEFAULT_FLAG);
	FT_DAT_CHECK(ret);
	if (!data) {
		DAT_EVENT ev;

		/* The capture: the other end never answers. Closed before
		 * the exit: shm removes an endpoint's region from /dev/shm
		 * only when the endpoint closes. */
		(void)ft_wait(ep.conn_evd, 3000000, &ev);
		ft_ep_free(&ep);
		ft_mr_free(&mr);
		ft_ia_close(&ia);
		_exit(0);
	}
	if (ft_expect_event(ep.conn_evd, FT_TIMEOUT_US,
	                    DAT_CONNECTION_EVENT_ESTABLISHED, ep.ep, NULL,
	                    "client: the real connection is established")) {
		DAT_LMR_TRIPLET s;
		struct ft_mr smr;
		long bad;
		size_t i;
		unsigned char *b = mr.buf;

		FT_DAT_OK(ft_mr_create(&ia, ia.pz, MSG_LEN,
		                       DAT_MEM_PRIV_ALL_FLAG, &smr));
		ft_fill(smr.buf, MSG_LEN, 0x5eed);
		s = ft_lmr_iov(&smr, 0, MSG_LEN);
		FT_DAT_CHECK(dat_ep_post_send(ep.ep, 1, &s, ck,
		                              DAT_COMPLETION_DEFAULT_FLAG));
		wait_dto(ep.req_evd, DAT_DTO_SEND, "client");
		if (wait_dto(ep.recv_evd, DAT_DTO_RECEIVE, "client")) {
			for (i = 0; i < MSG_LEN; i++)
				b[i] = (unsigned char)~b[i];
			bad = ft_pattern_mismatch(b, MSG_LEN, 0x5eed);
			FT_CHECK(bad < 0,
			         "client: the server's answer is right (first "
			         "bad byte %ld)",
			         bad);
		}
		ft_disconnect_local(&ep, NULL, DAT_CLOSE_GRACEFUL_FLAG);
		ft_mr_free(&smr);
	}
	ft_mr_free(&mr);
	ft_ep_free(&ep);
	ft_ia_close(&ia);
	exit(ft_finish());
}

static pid_t spawn_client(const struct sockaddr_in *to, uint64_t qual,
                          const char *pdata, bool data)
{
	pid_t pid = fork();

	if (pid < 0)
		FT_FATAL("fork: %s", strerror(errno));
	if (pid == 0) {
		alarm(60);
		signal(SIGALRM, SIG_DFL);
		client(to, qual, pdata, data);
	}
	return pid;
}

/* ---- plain TCP ----------------------------------------------------------- */

static long refused;   /* plain connects the PSP's port refused */
static int last_errno; /* and why the last one was */

static int tcp_connect(const struct sockaddr_in *to)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		FT_FATAL("socket: %s", strerror(errno));
	if (connect(fd, (const struct sockaddr *)to, sizeof(*to)) != 0) {
		last_errno = errno;
		refused++;
		close(fd);
		return -1;
	}
	return fd;
}

/* Send len bytes, giving up after ms (the peer may stop reading). */
static void tcp_send(int fd, const void *buf, size_t len, int ms)
{
	uint64_t end = ft_now_us() + (uint64_t)ms * 1000;
	size_t done = 0;

	while (done < len && ft_now_us() < end) {
		struct pollfd p = {.fd = fd, .events = POLLOUT};
		ssize_t n = send(fd, (const char *)buf + done, len - done,
		                 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n > 0) {
			done += (size_t)n;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
		    errno != EINTR)
			return; /* the peer closed or reset: fine */
		(void)poll(&p, 1, 50);
	}
}

/* Read and drop what the peer says for up to ms. */
static void tcp_drain(int fd, int ms)
{
	uint64_t end = ft_now_us() + (uint64_t)ms * 1000;
	char buf[512];

	while (ft_now_us() < end) {
		struct pollfd p = {.fd = fd, .events = POLLIN};

		if (poll(&p, 1, 10) > 0 &&
		    recv(fd, buf, sizeof(buf), MSG_DONTWAIT) <= 0)
			return;
	}
}

static void tcp_reset(int fd)
{
	struct linger lg = {.l_onoff = 1, .l_linger = 0};

	(void)setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(fd);
}

/* One garbage connection: send buf, maybe wait for an answer, close. */
static void garbage(const struct sockaddr_in *to, const void *buf, size_t len,
                    int wait_ms, bool reset)
{
	int fd = tcp_connect(to);

	if (fd < 0)
		return;
	if (len > 0)
		tcp_send(fd, buf, len, SEND_MS);
	if (wait_ms > 0)
		tcp_drain(fd, wait_ms);
	if (reset)
		tcp_reset(fd);
	else
		close(fd);
}

/*
 * The bytes a real client sends to open a connection: a DAT client
 * connects to a plain listener of ours, which keeps what arrives until
 * the line is quiet.
 */
static void capture_request(void)
{
	struct sockaddr_in a;
	socklen_t alen = sizeof(a);
	int lfd, fd, st;
	pid_t pid;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    listen(lfd, 4) != 0 ||
	    getsockname(lfd, (struct sockaddr *)&a, &alen) != 0)
		FT_FATAL("capture listener: %s", strerror(errno));
	pid = spawn_client(&a, ntohs(a.sin_port), CAPTURE_PDATA, false);
	{
		struct pollfd p = {.fd = lfd, .events = POLLIN};

		if (poll(&p, 1, 10000) != 1)
			FT_FATAL("capture: the DAT client never connected");
	}
	fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		FT_FATAL("capture: accept: %s", strerror(errno));
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t n;

		if (poll(&p, 1, capture_len ? 300 : 5000) != 1)
			break;
		n = recv(fd, capture + capture_len,
		         sizeof(capture) - capture_len, 0);
		if (n <= 0)
			break;
		capture_len += (size_t)n;
		if (capture_len == sizeof(capture))
			break;
	}
	close(fd);
	close(lfd);
	(void)waitpid(pid, &st, 0);
	FT_REQUIRE(capture_len > 0,
	           "a real client's connection request captured (%zu bytes)",
	           capture_len);
	FT_CHECK(!WIFSIGNALED(st), "the capturing client ended normally");
}

/* ---- the attack ---------------------------------------------------------- */

static pid_t server_pid;
static bool server_dead;

/* The server must still run after each kind of garbage. */
static void check_alive(const char *after)
{
	int st;

	if (server_dead)
		return;
	usleep(200000);
	if (waitpid(server_pid, &st, WNOHANG) == server_pid) {
		server_dead = true;
		FT_CHECK(false, "the server survives %s: it %s %d", after,
		         WIFSIGNALED(st) ? "died of signal" : "exited with",
		         WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
		return;
	}
	FT_CHECK(refused == 0,
	         "the server survives %s (%ld plain connects refused%s%s)",
	         after, refused, refused ? ", the last: " : "",
	         refused ? strerror(last_errno) : "");
	refused = 0;
}

static void attack(const struct sockaddr_in *to)
{
	static unsigned char buf[1 << 20];
	static const unsigned char vals[] = {0, 1, 2, 3, 0x7f, 0xff};
	size_t i, v, len, step;
	int k;

	if (kind("random")) {
		for (k = 0; k < 24; k++) {
			len = 1 + (size_t)(rnd() % 65536);
			rnd_fill(buf, len);
			garbage(to, buf, len, 20, false);
		}
		check_alive("random bytes (24 streams up to 64 KiB)");
	}
	if (kind("big") && !server_dead) {
		rnd_fill(buf, sizeof(buf));
		garbage(to, buf, sizeof(buf), 100, false);
		check_alive("one stream of 1 MiB of random bytes");
	}
	if (kind("close") && !server_dead) {
		for (k = 0; k < 8; k++)
			garbage(to, NULL, 0, 0, false);
		for (k = 0; k < 8; k++)
			garbage(to, NULL, 0, 0, true);
		check_alive("connect-and-close and connect-and-reset");
	}
	if (kind("reset") && !server_dead) {
		for (k = 0; k < 16; k++) {
			len = 1 + (size_t)(rnd() % 64);
			rnd_fill(buf, len);
			garbage(to, buf, len, 10, true);
		}
		check_alive("resets after random bytes");
	}
	if (kind("truncated") && !server_dead) {
		step = capture_len > 48 ? capture_len / 24 : 1;
		for (len = 1; len < capture_len; len += len < 16 ? 1 : step)
			garbage(to, capture, len, 20, false);
		check_alive("truncated requests");
	}
	if (!kind("mutated") || server_dead)
		return;
	for (i = 0; i < capture_len && i < 16; i++) {
		for (v = 0; v < sizeof(vals); v++) {
			memcpy(buf, capture, capture_len);
			buf[i] = vals[v];
			garbage(to, buf, capture_len, 20, false);
		}
	}
	for (k = 0; k < 48; k++) {
		int n = 1 + (int)(rnd() % 3);

		memcpy(buf, capture, capture_len);
		while (n-- > 0)
			buf[rnd() % capture_len] = (unsigned char)rnd();
		garbage(to, buf, capture_len, 20, (k & 1) != 0);
	}
	/* A real request followed by garbage on the same connection. */
	memcpy(buf, capture, capture_len);
	rnd_fill(buf + capture_len, 4096);
	garbage(to, buf, capture_len + 4096, 100, false);
	check_alive("mutated requests");
}

int main(int argc, char **argv)
{
	static const struct ft_extra_opts extra = {
	        .optstring = "k:r:",
	        .handler = opt_handler,
	        .usage =
	                "  -k LIST   kinds of garbage, a comma list (default "
	                "all: random,big,\n"
	                "            close,reset,truncated,mutated,slow)\n"
	                "  -r SEED   seed of the garbage (default: the time)\n",
	};
	struct sockaddr_in to;
	uint64_t qual;
	int pfd[2], slow[NSLOW], st, k;
	pid_t cpid;

	ft_init(argc, argv, "dat_hostile",
	        "a PSP survives garbage on its port and still serves a real "
	        "client",
	        &extra);
	if (seed == 0)
		seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	ft_log("seed %llu (-r to repeat)", (unsigned long long)seed);
	signal(SIGPIPE, SIG_IGN);
	own_namespace();

	if (pipe(pfd) != 0)
		FT_FATAL("pipe: %s", strerror(errno));
	server_pid = fork();
	if (server_pid < 0)
		FT_FATAL("fork: %s", strerror(errno));
	if (server_pid == 0) {
		close(pfd[0]);
		alarm(ft_opts.watchdog > 0 ? (unsigned)ft_opts.watchdog : 120);
		signal(SIGALRM, SIG_DFL);
		server(pfd[1]);
	}
	close(pfd[1]);
	if (read(pfd[0], &to, sizeof(to)) != (ssize_t)sizeof(to) ||
	    read(pfd[0], &qual, sizeof(qual)) != (ssize_t)sizeof(qual))
		FT_FATAL("the server did not say where it listens");
	close(pfd[0]);
	to.sin_port = htons((uint16_t)qual);
	ft_log("garbage goes to %s", ft_addr_str((struct sockaddr *)&to));

	capture_request();
	ft_log("captured request: %zu bytes", capture_len);
	attack(&to);

	/* Half-open senders stay while the real client connects. */
	for (k = 0; k < NSLOW; k++) {
		slow[k] = kind("slow") ? tcp_connect(&to) : -1;
		if (slow[k] >= 0)
			tcp_send(slow[k], capture, k == 0 ? 1 : 3 + (size_t)k,
			         100);
	}
	cpid = spawn_client(&to, qual, REAL_PDATA, true);
	if (waitpid(cpid, &st, 0) == cpid)
		FT_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		         "the real client connects and exchanges data with "
		         "%d slow senders open (client %s %d)",
		         NSLOW, WIFSIGNALED(st) ? "signal" : "exit",
		         WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	for (k = 0; k < NSLOW; k++)
		if (slow[k] >= 0)
			close(slow[k]);
	if (!server_dead) {
		if (ft_failures() > 0)
			kill(server_pid, SIGKILL);
		if (waitpid(server_pid, &st, 0) == server_pid)
			FT_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
			         "the server ends well (%s %d)",
			         WIFSIGNALED(st) ? "signal" : "exit",
			         WIFSIGNALED(st) ? WTERMSIG(st)
			                         : WEXITSTATUS(st));
	}
	return ft_finish();
}
