/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * fabtests-dat benchmarks: options, the side channel, waiting with a
 * deadline, setup and teardown, and the fabtests results table.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <dirent.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench_common.h"

#define BENCH_DISCONNECT_WAIT 5 /* seconds for the final disconnect */

bool bench_detail;
unsigned long long bench_empty_polls;
bool bench_yield;

const char *bench_test_name(enum bench_test t)
{
	switch (t) {
	case BENCH_TEST_SEND:
		return "send";
	case BENCH_TEST_WRITE:
		return "write";
	case BENCH_TEST_READ:
		return "read";
	case BENCH_TEST_CM:
		return "cm";
	case BENCH_TEST_WRITEIMM:
		return "writeimm";
	case BENCH_TEST_ATOMIC:
		return "atomic";
	}
	return "?";
}

const char *bench_addr_str(const void *sa, char *buf, size_t len)
{
	const struct sockaddr *a = sa;
	const void *in;

	if (len == 0)
		return buf;
	snprintf(buf, len, "%s", a ? "?" : "none");
	if (!a)
		return buf;
	if (a->sa_family == AF_INET)
		in = &((const struct sockaddr_in *)sa)->sin_addr;
	else if (a->sa_family == AF_INET6)
		in = &((const struct sockaddr_in6 *)sa)->sin6_addr;
	else
		return buf;
	if (!inet_ntop(a->sa_family, in, buf, (socklen_t)len))
		snprintf(buf, len, "?");
	return buf;
}

const char *bench_op_name(enum bench_op op)
{
	switch (op) {
	case BENCH_OP_SEND:
		return "send";
	case BENCH_OP_RECV:
		return "recv";
	case BENCH_OP_WRITE:
		return "write";
	case BENCH_OP_READ:
		return "read";
	case BENCH_OP_WRITE_IMM:
		return "write with immediate data";
	case BENCH_OP_RECV_IMM:
		return "immediate data";
	case BENCH_OP_ATOMIC:
		return "atomic";
	}
	return "?";
}

/* ---- live connections -------------------------------------------------- */

static size_t bench_hash(uintptr_t key, size_t size)
{
	uint64_t h = (uint64_t)key * 0x9e3779b97f4a7c15ULL;

	return (size_t)(h >> 32) & (size - 1);
}

/* Twice the buckets; the old table stays if there is no memory. */
static int bench_conn_grow(struct bench_ctx *ctx)
{
	size_t nsize = ctx->hsize ? ctx->hsize * 2 : 64, i, b;
	struct bench_conn **nt, *c, *next;

	nt = calloc(nsize, sizeof(*nt));
	if (!nt)
		return -ENOMEM;
	for (i = 0; i < ctx->hsize; i++) {
		for (c = ctx->htab[i]; c; c = next) {
			next = c->hnext;
			b = bench_hash(c->key, nsize);
			c->hnext = nt[b];
			nt[b] = c;
		}
	}
	free(ctx->htab);
	ctx->htab = nt;
	ctx->hsize = nsize;
	return 0;
}

int bench_conn_add(struct bench_ctx *ctx, struct bench_conn *conn,
                   uintptr_t key)
{
	size_t b;

	/* Longer chains are only slower: a full table need not grow. */
	if ((ctx->hsize == 0 || ctx->nconns >= ctx->hsize) &&
	    bench_conn_grow(ctx) != 0 && ctx->hsize == 0)
		return -ENOMEM;
	conn->ctx = ctx;
	conn->key = key;
	b = bench_hash(key, ctx->hsize);
	conn->hnext = ctx->htab[b];
	ctx->htab[b] = conn;
	conn->prev = NULL;
	conn->next = ctx->conns;
	if (ctx->conns)
		ctx->conns->prev = conn;
	ctx->conns = conn;
	ctx->nconns++;
	return 0;
}

void bench_conn_del(struct bench_conn *conn)
{
	struct bench_ctx *ctx = conn->ctx;
	struct bench_conn **pp;

	for (pp = &ctx->htab[bench_hash(conn->key, ctx->hsize)]; *pp;
	     pp = &(*pp)->hnext) {
		if (*pp == conn) {
			*pp = conn->hnext;
			break;
		}
	}
	if (conn->prev)
		conn->prev->next = conn->next;
	else
		ctx->conns = conn->next;
	if (conn->next)
		conn->next->prev = conn->prev;
	conn->next = conn->prev = conn->hnext = NULL;
	ctx->nconns--;
}

struct bench_conn *bench_conn_find(struct bench_ctx *ctx, uintptr_t key)
{
	struct bench_conn *c;

	if (!ctx->hsize)
		return NULL;
	for (c = ctx->htab[bench_hash(key, ctx->hsize)]; c; c = c->hnext)
		if (c->key == key)
			return c;
	return NULL;
}

void bench_conns_fini(struct bench_ctx *ctx)
{
	free(ctx->htab);
	ctx->htab = NULL;
	ctx->hsize = 0;
}

/* ---- this process -------------------------------------------------------- */

long bench_rss_kib(void)
{
	char line[256];
	long kib = -1;
	FILE *fp;

	fp = fopen("/proc/self/status", "r");
	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp)) {
		if (strncmp(line, "VmRSS:", 6) == 0) {
			kib = strtol(line + 6, NULL, 10);
			break;
		}
	}
	fclose(fp);
	return kib;
}

long bench_count_fds(void)
{
	struct dirent *de;
	long n = 0;
	DIR *d;

	d = opendir("/proc/self/fd");
	if (!d)
		return -1;
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the directory's own */
}

static int bench_cmp_ul(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a;
	unsigned long y = *(const unsigned long *)b;

	return x < y ? -1 : x > y;
}

/* The inodes of this process's sockets, sorted; their count, or -1. */
static long bench_sock_inodes(unsigned long **out)
{
	char path[300], link[64];
	unsigned long *v = NULL, *nv;
	size_t n = 0, cap = 0;
	struct dirent *de;
	ssize_t len;
	DIR *d;

	d = opendir("/proc/self/fd");
	if (!d)
		return -1;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%s", de->d_name);
		len = readlink(path, link, sizeof(link) - 1);
		if (len <= 0)
			continue;
		link[len] = '\0';
		if (strncmp(link, "socket:[", 8) != 0)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				free(v);
				closedir(d);
				return -1;
			}
			v = nv;
		}
		v[n++] = strtoul(link + 8, NULL, 10);
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof(*v), bench_cmp_ul);
	*out = v;
	return (long)n;
}

int bench_count_tcp(uint16_t port, struct bench_socks *out)
{
	static const char *const files[] = {"/proc/self/net/tcp",
	                                    "/proc/self/net/tcp6"};
	unsigned long *inodes = NULL, ino;
	unsigned int lport, rport, st;
	char line[512], laddr[64], raddr[64];
	long n;
	size_t f;
	FILE *fp;

	memset(out, 0, sizeof(*out));
	n = bench_sock_inodes(&inodes);
	if (n < 0)
		return -1;
	for (f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		fp = fopen(files[f], "r");
		if (!fp)
			continue;
		/* sl local rem st tx:rx tr:when retrnsmt uid timeout inode */
		while (fgets(line, sizeof(line), fp)) {
			if (sscanf(line,
			           " %*s %63[0-9A-Fa-f]:%x %63[0-9A-Fa-f]:%x "
			           "%x "
			           "%*s %*s %*s %*s %*s %lu",
			           laddr, &lport, raddr, &rport, &st,
			           &ino) != 6)
				continue;
			if (n == 0 || !bsearch(&ino, inodes, (size_t)n,
			                       sizeof(*inodes), bench_cmp_ul))
				continue;
			if (st == 0x0A) /* TCP_LISTEN */
				out->listening++;
			else if (lport == port || rport == port)
				out->on_port++;
			else
				out->other++;
		}
		fclose(fp);
	}
	free(inodes);
	return 0;
}

long bench_raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return -1;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0 &&
		    getrlimit(RLIMIT_NOFILE, &rl) != 0)
			return -1;
	}
	return rl.rlim_cur == RLIM_INFINITY ? -1 : (long)rl.rlim_cur;
}

/* fabtests' iteration counts by size when -I is not given. */
long bench_default_iters(size_t size, bool bw)
{
	if (size >= (1UL << 20))
		return bw ? 200 : 100;
	if (size >= (1UL << 16))
		return bw ? 2000 : 1000;
	return bw ? 20000 : 10000;
}

void bench_usage(const struct bench_opts *o, const char *desc, unsigned tests)
{
	enum bench_test t;

	fprintf(stderr,
	        "Usage:\n"
	        "  %s [OPTIONS]          start the server\n"
	        "  %s [OPTIONS] <addr>   run the client against the server\n"
	        "\n%s\n\nOptions:\n",
	        o->prog, o->prog, desc);
	fprintf(stderr,
	        "  -D <ia_name>    DAT IA name (default ofi-tcp); with --raw "
	        "it "
	        "names the\n"
	        "                  libfabric provider: ofi-tcp -> tcp, "
	        "ofi-sockets -> sockets\n"
	        "  -I <iters>      iterations (default: by size, as fabtests)\n"
	        "  -w <iters>      warm-up iterations (default 10)\n"
	        "  -S <size>       transfer size, a list a,b,c, or 'all' (1 .. "
	        "4m)\n"
	        "  -W <window>     outstanding operations (default %d)\n"
	        "  -p <port>       side-channel TCP port (default %d; -E is "
	        "the same)\n"
	        "  -P <port>       DAT connection qualifier / libfabric port "
	        "(default -p + 1)\n"
	        "  -T <seconds>    give up any wait after this (default %d)\n",
	        BENCH_DEF_WINDOW, BENCH_DEF_OOB_PORT, BENCH_DEF_TIMEOUT);
	if (tests) {
		fprintf(stderr, "  -t <test>       one of:");
		for (t = BENCH_TEST_SEND; t <= BENCH_TEST_LAST; t++)
			if (tests & (1u << t))
				fprintf(stderr, " %s", bench_test_name(t));
		fputc('\n', stderr);
	}
	fprintf(stderr,
	        "  --raw           run the same pattern on libfabric directly\n"
	        "  --raw-wait=fd   raw: CQs with FI_WAIT_FD (default "
	        "FI_WAIT_NONE)\n"
	        "  --raw-thread=safe  raw: FI_THREAD_SAFE (default "
	        "FI_THREAD_DOMAIN)\n"
	        "  --raw-ep=msg|rdm  raw: the endpoint type (default: MSG "
	        "where the provider\n"
	        "                  has it, else RDM: an AV, addresses "
	        "exchanged on the side channel)\n"
	        "  --raw-cm=dat    raw MSG connections do the work DAT's do: "
	        "7 bytes of private\n"
	        "                  data each way, and a zero-byte message "
	        "from the requester\n"
	        "                  that the passive side waits for before "
	        "it counts the\n"
	        "                  connection established (dat_cm_rate; not "
	        "with --rounds)\n"
	        "  --raw-write=delivery  raw: RDMA writes complete once the "
	        "target has them\n"
	        "                  (FI_DELIVERY_COMPLETE, what DAT gives on "
	        "tcp; default transmit,\n"
	        "                  on RDM what DAT asks there)\n"
	        "  --raw-progress=none|idle|thread  raw: a second thread "
	        "(default none); idle\n"
	        "                  only sleeps; thread reads the CQ every "
	        "2 ms, as an application\n"
	        "                  must for an RDMA write to land at a target "
	        "that only polls\n"
	        "                  memory (what DAT's progress thread gives; "
	        "implies\n"
	        "                  --raw-thread=safe)\n"
	        "  --raw-writeimm=two  raw -t writeimm: an RDMA write and an "
	        "empty message\n"
	        "                  with the immediate data, taking a receive "
	        "(fi_senddata; what\n"
	        "                  DAT does on tcp and sockets), instead of "
	        "one fi_writedata\n"
	        "  --yield=on|off  sched_yield() after a poll that finds "
	        "nothing (default: on\n"
	        "                  for ofi-sockets, whose own thread moves "
	        "the data; it also\n"
	        "                  sets FI_SOCKETS_PE_WAITTIME=0 unless "
	        "set)\n"
	        "  -N <count>      dat_cm_rate: hold this many connections "
	        "open (established,\n"
	        "                  idle) while measuring; also the memory per "
	        "EP and their\n"
	        "                  teardown\n"
	        "  --rounds=<n>    dat_cm_rate -N: n rounds of one message to "
	        "every held EP and\n"
	        "                  back, and the cost of an empty dequeue\n"
	        "  --evd-per-ep    dat_cm_rate: each EP its own DTO EVD (raw: "
	        "its own CQ)\n"
	        "  --mem-poll      DAT write ping-pong: wait on memory only, "
	        "no DAT call\n"
	        "  --detail        after each row, a '#detail' line with full "
	        "precision\n"
	        "  -v              verbose setup on stderr\n"
	        "  -h              this text\n");
}

static int bench_parse_size(const char *s, size_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		return -1;
	switch (*end) {
	case 'k':
	case 'K':
		v <<= 10;
		end++;
		break;
	case 'm':
	case 'M':
		v <<= 20;
		end++;
		break;
	case 'g':
	case 'G':
		v <<= 30;
		end++;
		break;
	default:
		break;
	}
	if (*end != '\0' || v == 0 || v > UINT32_MAX)
		return -1;
	*out = (size_t)v;
	return 0;
}

static int bench_parse_sizes(struct bench_opts *o, const char *arg)
{
	char buf[512], *tok, *save = NULL;
	size_t s;

	o->nsizes = 0;
	if (strcmp(arg, "all") == 0) {
		for (s = 1; s <= BENCH_MAX_ALL_SIZE; s <<= 1)
			o->sizes[o->nsizes++] = s;
		return 0;
	}
	if (strlen(arg) >= sizeof(buf))
		return -1;
	strcpy(buf, arg);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (o->nsizes == BENCH_MAX_SIZES ||
		    bench_parse_size(tok, &s) != 0)
			return -1;
		o->sizes[o->nsizes++] = s;
	}
	return o->nsizes ? 0 : -1;
}

static int bench_parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || end == s || *end != '\0' || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

enum {
	BENCH_LOPT_RAW = 256,
	BENCH_LOPT_MEMPOLL,
	BENCH_LOPT_RAW_WAIT,
	BENCH_LOPT_RAW_THREAD,
	BENCH_LOPT_RAW_WRITE,
	BENCH_LOPT_RAW_WRITEIMM,
	BENCH_LOPT_YIELD,
	BENCH_LOPT_DETAIL,
	BENCH_LOPT_LOOPBACK,
	BENCH_LOPT_ROUNDS,
	BENCH_LOPT_EVD_PER_EP,
	BENCH_LOPT_RAW_EP,
	BENCH_LOPT_RAW_CM,
	BENCH_LOPT_RAW_PROGRESS,
};

int bench_parse(struct bench_opts *o, int argc, char **argv, const char *desc,
                unsigned tests, enum bench_test def_test)
{
	static const struct option lopts[] = {
	        {"raw", no_argument, NULL, BENCH_LOPT_RAW},
	        {"mem-poll", no_argument, NULL, BENCH_LOPT_MEMPOLL},
	        {"raw-wait", required_argument, NULL, BENCH_LOPT_RAW_WAIT},
	        {"raw-thread", required_argument, NULL, BENCH_LOPT_RAW_THREAD},
	        {"raw-write", required_argument, NULL, BENCH_LOPT_RAW_WRITE},
	        {"raw-writeimm", required_argument, NULL,
	         BENCH_LOPT_RAW_WRITEIMM},
	        {"yield", required_argument, NULL, BENCH_LOPT_YIELD},
	        {"detail", no_argument, NULL, BENCH_LOPT_DETAIL},
	        {"loopback", no_argument, NULL, BENCH_LOPT_LOOPBACK},
	        {"rounds", required_argument, NULL, BENCH_LOPT_ROUNDS},
	        {"evd-per-ep", no_argument, NULL, BENCH_LOPT_EVD_PER_EP},
	        {"raw-ep", required_argument, NULL, BENCH_LOPT_RAW_EP},
	        {"raw-cm", required_argument, NULL, BENCH_LOPT_RAW_CM},
	        {"raw-progress", required_argument, NULL,
	         BENCH_LOPT_RAW_PROGRESS},
	        {"help", no_argument, NULL, 'h'},
	        {NULL, 0, NULL, 0},
	};
	enum bench_test t;
	long v;
	int c, yield = -1;

	memset(o, 0, sizeof(*o));
	o->prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	o->ia_name = "ofi-tcp";
	o->warmup = 10;
	o->window = BENCH_DEF_WINDOW;
	o->oob_port = BENCH_DEF_OOB_PORT;
	o->timeout = BENCH_DEF_TIMEOUT;
	o->test = def_test;
	o->sizes[0] = 8;
	o->nsizes = 1;

	while ((c = getopt_long(argc, argv, "D:I:w:S:W:p:E:P:t:T:N:vh", lopts,
	                        NULL)) != -1) {
		switch (c) {
		case 'D':
			o->ia_name = optarg;
			break;
		case 'I':
			if (bench_parse_long(optarg, 1, 1L << 40, &v))
				goto bad;
			o->iterations = v;
			break;
		case 'w':
			if (bench_parse_long(optarg, 0, 1L << 30, &v))
				goto bad;
			o->warmup = v;
			break;
		case 'S':
			if (bench_parse_sizes(o, optarg))
				goto bad;
			break;
		case 'W':
			if (bench_parse_long(optarg, 1, 1 << 16, &v))
				goto bad;
			o->window = (int)v;
			break;
		case 'p':
		case 'E': /* the functional tests' spelling */
			if (bench_parse_long(optarg, 1, 65535, &v))
				goto bad;
			o->oob_port = (uint16_t)v;
			break;
		case 'P':
			if (bench_parse_long(optarg, 1, 65535, &v))
				goto bad;
			o->cm_port = (uint16_t)v;
			break;
		case 'T':
			if (bench_parse_long(optarg, 1, 86400, &v))
				goto bad;
			o->timeout = (int)v;
			break;
		case 't':
			for (t = BENCH_TEST_SEND; t <= BENCH_TEST_LAST; t++)
				if ((tests & (1u << t)) &&
				    strcmp(optarg, bench_test_name(t)) == 0)
					break;
			if (t > BENCH_TEST_LAST)
				goto bad;
			o->test = t;
			break;
		case 'N':
			if (bench_parse_long(optarg, 0, 1L << 24, &v))
				goto bad;
			o->held = v;
			break;
		case 'v':
			o->verbose = true;
			break;
		case BENCH_LOPT_ROUNDS:
			if (bench_parse_long(optarg, 0, 1L << 20, &v))
				goto bad;
			o->rounds = v;
			break;
		case BENCH_LOPT_EVD_PER_EP:
			o->evd_per_ep = true;
			break;
		case BENCH_LOPT_RAW_CM:
			if (strcmp(optarg, "dat") == 0)
				o->raw_cm_dat = true;
			else if (strcmp(optarg, "plain") == 0)
				o->raw_cm_dat = false;
			else
				goto bad;
			break;
		case BENCH_LOPT_RAW:
			o->raw = true;
			break;
		case BENCH_LOPT_MEMPOLL:
			o->mem_poll = true;
			break;
		case BENCH_LOPT_RAW_WAIT:
			if (strcmp(optarg, "fd") == 0)
				o->raw_wait_fd = true;
			else if (strcmp(optarg, "none") == 0)
				o->raw_wait_fd = false;
			else
				goto bad;
			break;
		case BENCH_LOPT_RAW_WRITE:
			if (strcmp(optarg, "delivery") == 0)
				o->raw_delivery = true;
			else if (strcmp(optarg, "transmit") == 0)
				o->raw_delivery = false;
			else
				goto bad;
			o->raw_write_set = true;
			break;
		case BENCH_LOPT_RAW_EP:
			if (strcmp(optarg, "msg") == 0)
				o->raw_ep = BENCH_RAW_EP_MSG;
			else if (strcmp(optarg, "rdm") == 0)
				o->raw_ep = BENCH_RAW_EP_RDM;
			else if (strcmp(optarg, "auto") == 0)
				o->raw_ep = BENCH_RAW_EP_AUTO;
			else
				goto bad;
			break;
		case BENCH_LOPT_YIELD:
			if (strcmp(optarg, "on") == 0)
				yield = 1;
			else if (strcmp(optarg, "off") == 0)
				yield = 0;
			else
				goto bad;
			break;
		case BENCH_LOPT_RAW_WRITEIMM:
			if (strcmp(optarg, "two") == 0)
				o->raw_wimm_two = true;
			else if (strcmp(optarg, "one") == 0)
				o->raw_wimm_two = false;
			else
				goto bad;
			break;
		case BENCH_LOPT_RAW_PROGRESS:
			if (strcmp(optarg, "none") == 0)
				o->raw_progress = BENCH_RAW_PROGRESS_NONE;
			else if (strcmp(optarg, "idle") == 0)
				o->raw_progress = BENCH_RAW_PROGRESS_IDLE;
			else if (strcmp(optarg, "thread") == 0)
				o->raw_progress = BENCH_RAW_PROGRESS_THREAD;
			else
				goto bad;
			break;
		case BENCH_LOPT_RAW_THREAD:
			if (strcmp(optarg, "safe") == 0)
				o->raw_thread_safe = true;
			else if (strcmp(optarg, "domain") == 0)
				o->raw_thread_safe = false;
			else
				goto bad;
			break;
		case BENCH_LOPT_DETAIL:
			bench_detail = true;
			break;
		case BENCH_LOPT_LOOPBACK:
			o->loopback = true;
			break;
		case 'h':
			bench_usage(o, desc, tests);
			exit(EXIT_SUCCESS);
		default:
			goto bad;
		}
	}
	if (optind < argc)
		o->dst_addr = argv[optind++];
	if (optind < argc)
		goto bad;
	if (o->cm_port == 0)
		o->cm_port = (uint16_t)(o->oob_port + 1);
	if ((o->held || o->rounds || o->evd_per_ep) &&
	    o->test != BENCH_TEST_CM) {
		fprintf(stderr,
		        "%s: -N, --rounds and --evd-per-ep are dat_cm_rate's\n",
		        o->prog);
		return -1;
	}
	if (o->rounds && !o->held) {
		fprintf(stderr, "%s: --rounds needs -N\n", o->prog);
		return -1;
	}
	/*
	 * sockets moves data in a thread of its own, which spins for 10 ms
	 * after any work (FI_SOCKETS_PE_WAITTIME) and shares the core of
	 * the busy-polling thread (pinned by bench-compare): each message
	 * then waits for the scheduler to switch them, milliseconds, and a
	 * ping-pong of 10000 takes minutes, raw as DAT. Unless told
	 * otherwise, that thread sleeps when idle and the poll loops yield
	 * to it, in both modes.
	 */
	if (yield < 0) {
		yield = strcmp(o->ia_name, "ofi-sockets") == 0 ||
		        strcmp(o->ia_name, "sockets") == 0;
		if (yield)
			(void)setenv("FI_SOCKETS_PE_WAITTIME", "0", 0);
	}
	bench_yield = yield != 0;
	/* An atomic is 8 bytes. */
	if (o->test == BENCH_TEST_ATOMIC) {
		o->sizes[0] = 8;
		o->nsizes = 1;
	}
	if (o->raw_progress == BENCH_RAW_PROGRESS_THREAD) {
		if (o->evd_per_ep) {
			fprintf(stderr,
			        "%s: --raw-progress=thread drives the one "
			        "shared CQ: not with --evd-per-ep\n",
			        o->prog);
			return -1;
		}
		/* Two threads read the CQ. */
		o->raw_thread_safe = true;
	}
	if (o->mem_poll && o->raw) {
		fprintf(stderr, "%s: --mem-poll is for the DAT mode only\n",
		        o->prog);
		return -1;
	}
	return 0;
bad:
	if (c != '?' && c != -1)
		fprintf(stderr, "%s: bad value for -%c\n", o->prog, c);
	else if (c == -1)
		fprintf(stderr, "%s: too many arguments\n", o->prog);
	bench_usage(o, desc, tests);
	return -1;
}

/* ---- the side channel ---------------------------------------------------- */

static int bench_oob_server(struct bench_ctx *ctx)
{
	struct sockaddr_in sin = {0};
	struct pollfd pfd;
	int one = 1, lfd, fd;

	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0) {
		BENCH_ERR("socket: %s", strerror(errno));
		return -errno;
	}
	(void)setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_ANY);
	sin.sin_port = htons(ctx->opts->oob_port);
	if (bind(lfd, (struct sockaddr *)&sin, sizeof(sin)) != 0 ||
	    listen(lfd, 1) != 0) {
		BENCH_ERR("side channel on port %u: %s", ctx->opts->oob_port,
		          strerror(errno));
		close(lfd);
		return -EADDRINUSE;
	}
	pfd.fd = lfd;
	pfd.events = POLLIN;
	if (poll(&pfd, 1, ctx->opts->timeout * 1000) != 1) {
		BENCH_ERR("no client on the side channel within %d s",
		          ctx->opts->timeout);
		close(lfd);
		return -ETIMEDOUT;
	}
	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	close(lfd);
	if (fd < 0) {
		BENCH_ERR("accept: %s", strerror(errno));
		return -EIO;
	}
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	ctx->oob_fd = fd;
	return 0;
}

static int bench_oob_client(struct bench_ctx *ctx)
{
	struct addrinfo hints = {0}, *ai = NULL;
	struct bench_deadline d;
	char port[8];
	int one = 1, fd = -1, ret;

	hints.ai_family = AF_INET;
	hints.ai_socktype = SOCK_STREAM;
	snprintf(port, sizeof(port), "%u", ctx->opts->oob_port);
	ret = getaddrinfo(ctx->opts->dst_addr, port, &hints, &ai);
	if (ret) {
		BENCH_ERR("%s: %s", ctx->opts->dst_addr, gai_strerror(ret));
		return -EINVAL;
	}
	bench_deadline_start(&d, ctx->opts->timeout);
	for (;;) {
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			ret = -errno;
			break;
		}
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
			ret = 0;
			break;
		}
		ret = -errno;
		close(fd);
		fd = -1;
		if (ret != -ECONNREFUSED && ret != -EAGAIN) {
			break;
		}
		/* The server may not be up yet. */
		d.spins = 1023;
		if (bench_deadline_hit(&d))
			break;
		usleep(10000);
	}
	freeaddrinfo(ai);
	if (ret) {
		BENCH_ERR("side channel to %s:%u: %s", ctx->opts->dst_addr,
		          ctx->opts->oob_port, strerror(-ret));
		return ret;
	}
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	ctx->oob_fd = fd;
	return 0;
}

int bench_oob_setup(struct bench_ctx *ctx)
{
	return ctx->server ? bench_oob_server(ctx) : bench_oob_client(ctx);
}

int bench_oob_send(struct bench_ctx *ctx, const void *buf, size_t len)
{
	const char *p = buf;
	ssize_t n;

	while (len) {
		n = send(ctx->oob_fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			BENCH_ERR("side channel send: %s",
			          n < 0 ? strerror(errno) : "closed");
			return -EIO;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int bench_oob_recv(struct bench_ctx *ctx, void *buf, size_t len)
{
	struct pollfd pfd = {.fd = ctx->oob_fd, .events = POLLIN};
	char *p = buf;
	ssize_t n;
	int r;

	while (len) {
		r = poll(&pfd, 1, ctx->opts->timeout * 1000);
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0) {
			BENCH_ERR("side channel: peer silent for %d s",
			          ctx->opts->timeout);
			return -ETIMEDOUT;
		}
		n = recv(ctx->oob_fd, p, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			BENCH_ERR("side channel recv: %s",
			          n < 0 ? strerror(errno) : "peer closed");
			return -EIO;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int bench_oob_sync(struct bench_ctx *ctx)
{
	char c = 's';
	int ret;

	ret = bench_oob_send(ctx, &c, 1);
	if (!ret)
		ret = bench_oob_recv(ctx, &c, 1);
	if (!ret && c != 's') {
		BENCH_ERR("side channel: out of step");
		ret = -EPROTO;
	}
	return ret;
}

int bench_oob_readable(struct bench_ctx *ctx)
{
	struct pollfd pfd = {.fd = ctx->oob_fd, .events = POLLIN};

	return poll(&pfd, 1, 0) == 1;
}

int bench_oob_word_ready(struct bench_ctx *ctx)
{
	uint32_t magic;
	ssize_t n;

	n = recv(ctx->oob_fd, &magic, sizeof(magic), MSG_PEEK | MSG_DONTWAIT);
	if (n == 0)
		return 1; /* EOF: the reader says so */
	return n == (ssize_t)sizeof(magic) && magic == BENCH_MAGIC;
}

void bench_oob_close(struct bench_ctx *ctx)
{
	if (ctx->oob_fd >= 0)
		close(ctx->oob_fd);
	ctx->oob_fd = -1;
}

/* ---- waiting ------------------------------------------------------------- */

void bench_deadline_start(struct bench_deadline *d, int seconds)
{
	bench_now(&d->end);
	d->end.tv_sec += seconds;
	d->seconds = seconds;
	d->spins = 0;
	d->watch_fd = -1;
	d->peer_gone = false;
	d->progress = false;
}

void bench_deadline_start_ctx(struct bench_deadline *d, struct bench_ctx *ctx)
{
	bench_deadline_start(d, ctx->opts->timeout);
	if (ctx->oob_watch)
		d->watch_fd = ctx->oob_fd;
}

bool bench_deadline_hit(struct bench_deadline *d)
{
	struct timespec now;
	struct pollfd pfd;
	char c;

	if (++d->spins < 1024)
		return false;
	d->spins = 0;
	if (d->watch_fd >= 0) {
		/* End of file, not data: the next request may be queued. */
		pfd.fd = d->watch_fd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, 0) == 1 &&
		    ((pfd.revents & (POLLHUP | POLLERR)) ||
		     recv(d->watch_fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0)) {
			d->peer_gone = true;
			return true;
		}
	}
	bench_now(&now);
	if (d->progress) {
		d->progress = false;
		d->end = now;
		d->end.tv_sec += d->seconds;
		return false;
	}
	return now.tv_sec > d->end.tv_sec ||
	       (now.tv_sec == d->end.tv_sec && now.tv_nsec >= d->end.tv_nsec);
}

int bench_deadline_fail(const struct bench_deadline *d,
                        const struct bench_ctx *ctx, const char *what)
{
	if (d->peer_gone) {
		fprintf(stderr, "%s: the peer quit while waiting for %s\n",
		        ctx->opts->prog, what);
		return -ECONNABORTED;
	}
	fprintf(stderr, "%s: no %s within %d s\n", ctx->opts->prog, what,
	        ctx->opts->timeout);
	return -ETIMEDOUT;
}

int bench_wait_comp(struct bench_ctx *ctx, struct bench_comp *comp)
{
	struct bench_deadline d;
	int ret;

	bench_deadline_start_ctx(&d, ctx);
	for (;;) {
		ret = ctx->ops->poll(ctx, comp);
		if (ret)
			return ret < 0 ? ret : 0;
		if (bench_deadline_hit(&d))
			return bench_deadline_fail(&d, ctx, "completion");
	}
}

const char *bench_cm_name(enum bench_cm_type t)
{
	switch (t) {
	case BENCH_CM_NONE:
		return "none";
	case BENCH_CM_CONNREQ:
		return "connection request";
	case BENCH_CM_ESTABLISHED:
		return "established";
	case BENCH_CM_DISCONNECTED:
		return "disconnected";
	case BENCH_CM_REJECTED:
		return "rejected";
	}
	return "?";
}

int bench_wait_cm(struct bench_ctx *ctx, enum bench_cm_type want,
                  struct bench_cm_ev *ev)
{
	struct bench_deadline d;
	int ret;

	bench_deadline_start_ctx(&d, ctx);
	for (;;) {
		ret = ctx->ops->cm_poll(ctx, ev);
		if (ret < 0)
			return ret;
		if (ret > 0) {
			if (ev->type == want)
				return 0;
			BENCH_ERR("waiting for %s, got %s", bench_cm_name(want),
			          bench_cm_name(ev->type));
			return -EPROTO;
		}
		if (bench_deadline_hit(&d))
			return bench_deadline_fail(&d, ctx,
			                           bench_cm_name(want));
	}
}

/* ---- setup and teardown -------------------------------------------------- */

static int bench_hello(struct bench_ctx *ctx)
{
	struct bench_opts *o = ctx->opts;
	struct bench_hello h = {0};
	int i, ret;

	if (!ctx->server) {
		h.magic = BENCH_MAGIC;
		h.raw = o->raw;
		h.window = (uint32_t)o->window;
		h.test = o->test;
		for (i = 0; i < o->nsizes; i++)
			if (o->sizes[i] > h.max_size)
				h.max_size = o->sizes[i];
		snprintf(h.ia_name, sizeof(h.ia_name), "%s", o->ia_name);
		h.held = (uint64_t)o->held;
		h.rounds = (uint64_t)o->rounds;
		h.flags = (o->evd_per_ep ? BENCH_HELLO_EVD_PER_EP : 0) |
		          (o->raw_cm_dat ? BENCH_HELLO_RAW_CM_DAT : 0);
		ctx->max_size = h.max_size;
		return bench_oob_send(ctx, &h, sizeof(h));
	}
	ret = bench_oob_recv(ctx, &h, sizeof(h));
	if (ret)
		return ret;
	h.ia_name[sizeof(h.ia_name) - 1] = '\0';
	if (h.magic != BENCH_MAGIC || h.max_size == 0 ||
	    h.max_size > UINT32_MAX || h.window == 0 || h.window > 65536 ||
	    h.held > (1ULL << 24) || h.rounds > (1ULL << 20)) {
		BENCH_ERR("side channel: not a client of this benchmark");
		return -EPROTO;
	}
	if ((bool)h.raw != o->raw) {
		BENCH_ERR("the client runs %s, the server %s: give both or "
		          "neither --raw",
		          h.raw ? "raw" : "DAT", o->raw ? "raw" : "DAT");
		return -EPROTO;
	}
	if (strcmp(h.ia_name, o->ia_name) != 0)
		fprintf(stderr,
		        "%s: warning: client uses -D %s, server -D %s\n",
		        o->prog, h.ia_name, o->ia_name);
	o->window = (int)h.window;
	o->test = (enum bench_test)h.test;
	o->held = (long)h.held;
	o->rounds = (long)h.rounds;
	o->evd_per_ep = (h.flags & BENCH_HELLO_EVD_PER_EP) != 0;
	o->raw_cm_dat = (h.flags & BENCH_HELLO_RAW_CM_DAT) != 0;
	ctx->max_size = h.max_size;
	return 0;
}

/*
 * -v: which libdat2, provider and libfabric this process runs on, from
 * /proc/self/maps, so a result always says what it measured.
 */
static void bench_print_libs(struct bench_ctx *ctx)
{
	static const char *const names[] = {"/libdat2.", "/libdaplofi.",
	                                    "/libfabric."};
	char line[512], seen[3][256] = {{0}};
	FILE *fp;
	size_t i;

	if (!ctx->opts->verbose)
		return;
	fp = fopen("/proc/self/maps", "r");
	if (!fp)
		return;
	while (fgets(line, sizeof(line), fp)) {
		char *path = strchr(line, '/');

		if (!path)
			continue;
		path[strcspn(path, "\n")] = '\0';
		for (i = 0; i < 3; i++) {
			if (strstr(path, names[i]) && !seen[i][0]) {
				snprintf(seen[i], sizeof(seen[i]), "%s", path);
				fprintf(stderr, "# lib %s\n", path);
			}
		}
	}
	fclose(fp);
}

int bench_init(struct bench_ctx *ctx, struct bench_opts *o)
{
	struct bench_ready ready = {.magic = BENCH_MAGIC};
	char ip[INET_ADDRSTRLEN];
	int ret;

	memset(ctx, 0, sizeof(*ctx));
	ctx->opts = o;
	ctx->oob_fd = -1;
	ctx->server = o->dst_addr == NULL;
	ctx->ops = o->raw ? &bench_raw_ops : &bench_dat_ops;

	/*
	 * Client: side channel, hello, open, wait for 'ready', (connect).
	 * Server: side channel, hello, open, listen, 'ready', (accept).
	 */
	ret = bench_oob_setup(ctx);
	if (ret)
		return ret;
	ret = bench_hello(ctx);
	if (ret)
		goto err_oob;
	ret = ctx->ops->open(ctx);
	if (ret)
		goto err_oob;
	bench_print_libs(ctx);
	if (o->window > ctx->max_window) {
		BENCH_ERR("window %d is more than the endpoint takes (%d): "
		          "use -W",
		          o->window, ctx->max_window);
		ret = -EINVAL;
		goto err_close;
	}
	if (ctx->server) {
		ret = ctx->ops->listen(ctx);
		if (ret)
			goto err_close;
		ready.addr = ctx->fabric_addr.sin_addr.s_addr;
		ret = bench_oob_send(ctx, &ready, sizeof(ready));
	} else {
		ret = bench_oob_recv(ctx, &ready, sizeof(ready));
		if (!ret && ready.magic != BENCH_MAGIC)
			ret = -EPROTO;
		ctx->fabric_addr.sin_family = AF_INET;
		ctx->fabric_addr.sin_addr.s_addr = ready.addr;
	}
	if (ret)
		goto err_close;
	if (ready.addr)
		BENCH_VERBOSE(ctx, "the server listens on %s port/qual %u",
		              inet_ntop(AF_INET, &ready.addr, ip, sizeof(ip)),
		              o->cm_port);
	ctx->oob_watch = true;
	return 0;
err_close:
	ctx->ops->close(ctx);
err_oob:
	bench_oob_close(ctx);
	return ret;
}

int bench_establish(struct bench_ctx *ctx, struct bench_conn **out)
{
	struct bench_conn *conn = NULL;
	struct bench_cm_ev ev;
	int ret;

	if (ctx->server) {
		ret = bench_wait_cm(ctx, BENCH_CM_CONNREQ, &ev);
		if (ret)
			return ret;
		ret = ctx->ops->accept(ctx, ev.req, &conn);
	} else {
		ret = ctx->ops->connect(ctx, &conn);
	}
	if (ret)
		return ret;
	ret = bench_wait_cm(ctx, BENCH_CM_ESTABLISHED, &ev);
	if (ret) {
		ctx->ops->free_conn(conn);
		return ret;
	}
	*out = conn;
	return 0;
}

void bench_teardown(struct bench_ctx *ctx, struct bench_conn *conn)
{
	struct bench_cm_ev ev;
	int saved = ctx->opts->timeout;

	if (conn) {
		/* Nothing in flight on either side before disconnecting. */
		(void)bench_oob_sync(ctx);
		ctx->oob_watch = false;
		if (ctx->ops->disconnect(conn) > 0) {
			ctx->opts->timeout = BENCH_DISCONNECT_WAIT;
			if (bench_wait_cm(ctx, BENCH_CM_DISCONNECTED, &ev))
				fprintf(stderr,
				        "%s: warning: no disconnect event\n",
				        ctx->opts->prog);
			ctx->opts->timeout = saved;
		}
		ctx->ops->free_conn(conn);
	}
	ctx->ops->close(ctx);
	bench_oob_close(ctx);
}

int bench_exchange_rinfo(struct bench_ctx *ctx, const struct bench_mr *mr,
                         struct bench_rinfo *peer)
{
	struct bench_rinfo mine = {
	        .addr = mr->raddr, .key = mr->rkey, .len = mr->len};
	int ret;

	ret = bench_oob_send(ctx, &mine, sizeof(mine));
	if (!ret)
		ret = bench_oob_recv(ctx, peer, sizeof(*peer));
	return ret;
}

int bench_buf_setup(struct bench_ctx *ctx, struct bench_buf *b)
{
	size_t len;
	void *p;
	int ret;

	memset(b, 0, sizeof(*b));
	b->max = (ctx->max_size + 63) & ~(size_t)63;
	len = 2 * b->max + 16 * BENCH_ACK_SLOTS;
	if (posix_memalign(&p, 4096, len))
		return -ENOMEM;
	memset(p, 0, len);
	b->rx = p;
	b->tx = (char *)p + b->max;
	ret = ctx->ops->reg(ctx, p, len, &b->mr);
	if (ret) {
		free(p);
		return ret;
	}
	ret = bench_exchange_rinfo(ctx, &b->mr, &b->peer);
	if (ret) {
		ctx->ops->dereg(ctx, &b->mr);
		free(p);
		return ret;
	}
	if (b->peer.len < 2 * b->max) {
		BENCH_ERR("the peer registered %llu bytes, need %zu",
		          (unsigned long long)b->peer.len, 2 * b->max);
		bench_buf_free(ctx, b);
		return -EPROTO;
	}
	return 0;
}

void bench_buf_free(struct bench_ctx *ctx, struct bench_buf *b)
{
	if (b->mr.handle)
		ctx->ops->dereg(ctx, &b->mr);
	free(b->rx);
	b->rx = NULL;
}

int bench_send_params(struct bench_ctx *ctx, uint32_t cmd, size_t size,
                      long iters)
{
	struct bench_params p = {
	        .magic = BENCH_MAGIC,
	        .cmd = cmd,
	        .test = ctx->opts->test,
	        .window = (uint32_t)ctx->opts->window,
	        .size = size,
	        .iterations = (uint64_t)iters,
	        .warmup = (uint64_t)ctx->opts->warmup,
	        .raw = ctx->opts->raw,
	        .flags = ctx->opts->mem_poll ? BENCH_FLAG_MEMPOLL : 0,
	};

	return bench_oob_send(ctx, &p, sizeof(p));
}

int bench_next_params(struct bench_ctx *ctx, struct bench_params *p)
{
	int ret;

	ret = bench_oob_recv(ctx, p, sizeof(*p));
	if (ret)
		return ret;
	if (p->magic != BENCH_MAGIC ||
	    (p->cmd != BENCH_CMD_RUN && p->cmd != BENCH_CMD_DONE)) {
		BENCH_ERR("side channel: bad parameters");
		return -EPROTO;
	}
	if (p->cmd == BENCH_CMD_DONE)
		return 0;
	if (p->size > ctx->max_size || p->iterations == 0 ||
	    p->iterations > (1ULL << 40) || p->warmup > (1ULL << 30) ||
	    p->window != (uint32_t)ctx->opts->window) {
		BENCH_ERR("side channel: parameters out of range");
		return -EPROTO;
	}
	return 1;
}

static char *bench_size_str(char *str, size_t n, long long size);

/* What a progress line calls a timed run: "write 64k bytes". */
static void bench_run_name(const struct bench_opts *o, size_t size, char *str,
                           size_t n)
{
	char s[32];

	snprintf(str, n, "%s %s bytes", bench_test_name(o->test),
	         bench_size_str(s, sizeof(s), (long long)size));
}

int bench_drive(struct bench_ctx *ctx, struct bench_conn *conn,
                struct bench_buf *b, bench_run_fn run, int xfers_per_iter,
                bool bw)
{
	struct bench_opts *o = ctx->opts;
	struct bench_params p;
	struct timespec start, end;
	char what[64];
	long iters;
	int i, ret;

	if (ctx->server) {
		while ((ret = bench_next_params(ctx, &p)) > 0) {
			if (p.warmup) {
				ret = run(ctx, conn, b, &p, (long)p.warmup,
				          &start, &end);
				if (ret)
					return ret;
			}
			ret = run(ctx, conn, b, &p, (long)p.iterations, &start,
			          &end);
			if (ret)
				return ret;
		}
		return ret;
	}
	for (i = 0; i < o->nsizes; i++) {
		if (o->iterations)
			iters = o->iterations;
		else if (o->test == BENCH_TEST_CM)
			iters = 1000;
		else
			iters = bench_default_iters(o->sizes[i], bw);
		ret = bench_send_params(ctx, BENCH_CMD_RUN, o->sizes[i], iters);
		if (ret)
			return ret;
		memset(&p, 0, sizeof(p));
		p.test = o->test;
		p.window = (uint32_t)o->window;
		p.size = o->sizes[i];
		p.iterations = (uint64_t)iters;
		p.warmup = (uint64_t)o->warmup;
		p.flags = o->mem_poll ? BENCH_FLAG_MEMPOLL : 0;
		if (o->warmup) {
			ret = run(ctx, conn, b, &p, o->warmup, &start, &end);
			if (ret)
				return ret;
		}
		bench_run_name(o, o->sizes[i], what, sizeof(what));
		bench_progress_begin(o, what, iters);
		ret = run(ctx, conn, b, &p, iters, &start, &end);
		bench_progress_end();
		if (ret)
			return ret;
		bench_show_perf(o->test == BENCH_TEST_CM ? 0 : o->sizes[i],
		                iters, &start, &end, xfers_per_iter);
	}
	return bench_send_params(ctx, BENCH_CMD_DONE, 0, 0);
}

/* ---- one process, both sides --------------------------------------------- */

static int bench_lb_open(struct bench_ctx *ctx, struct bench_opts *o,
                         bool server, size_t max_size)
{
	int ret;

	memset(ctx, 0, sizeof(*ctx));
	ctx->opts = o;
	ctx->oob_fd = -1;
	ctx->server = server;
	ctx->ops = o->raw ? &bench_raw_ops : &bench_dat_ops;
	ctx->max_size = max_size;
	ret = ctx->ops->open(ctx);
	if (ret)
		return ret;
	bench_print_libs(ctx);
	if (o->window > ctx->max_window) {
		BENCH_ERR("window %d is more than the endpoint takes (%d): "
		          "use -W",
		          o->window, ctx->max_window);
		return -EINVAL;
	}
	return 0;
}

/* Connect c to s, both polled from this thread. */
static int bench_lb_connect(struct bench_ctx *s, struct bench_ctx *c,
                            struct bench_conn **sc, struct bench_conn **cc)
{
	struct bench_deadline d;
	struct bench_cm_ev ev;
	int ret, up = 0;

	ret = s->ops->listen(s);
	if (ret)
		return ret;
	c->fabric_addr = s->fabric_addr;
	ret = c->ops->connect(c, cc);
	if (ret)
		return ret;
	bench_deadline_start(&d, s->opts->timeout);
	while (up < 2) {
		ret = s->ops->cm_poll(s, &ev);
		if (ret > 0 && ev.type == BENCH_CM_CONNREQ) {
			ret = s->ops->accept(s, ev.req, sc);
		} else if (ret > 0 && ev.type == BENCH_CM_ESTABLISHED) {
			up++;
			ret = 0;
		} else if (ret > 0) {
			BENCH_ERR("loopback: unexpected connection event");
			return -EPROTO;
		}
		if (ret < 0)
			return ret;
		ret = c->ops->cm_poll(c, &ev);
		if (ret > 0 && ev.type == BENCH_CM_ESTABLISHED) {
			up++;
		} else if (ret > 0) {
			BENCH_ERR("loopback: the connection failed");
			return -ECONNREFUSED;
		}
		if (ret < 0)
			return ret;
		if (bench_deadline_hit(&d))
			return bench_deadline_fail(&d, s, "the connection");
	}
	return 0;
}

/* count messages from c to s, -W of each kind in flight. */
static int bench_lb_run(struct bench_ctx *s, struct bench_ctx *c,
                        struct bench_conn *sc, struct bench_conn *cc,
                        struct bench_mr *smr, struct bench_mr *cmr, size_t size,
                        long count)
{
	long window = s->opts->window;
	long posted = 0, rdone = 0, sent = 0, sdone = 0;
	struct bench_deadline d;
	struct bench_comp comp;
	int ret, got;

	bench_deadline_start(&d, s->opts->timeout);
	while (rdone < count || sdone < count) {
		while (posted < count && posted - rdone < window) {
			ret = s->ops->post_recv(
			        sc, smr, 0, size,
			        BENCH_COOKIE(BENCH_TAG_DATA, 0));
			if (ret)
				return ret;
			posted++;
		}
		while (sent < posted && sent - sdone < window) {
			ret = c->ops->post_send(
			        cc, cmr, 0, size,
			        BENCH_COOKIE(BENCH_TAG_DATA, 0));
			if (ret)
				return ret;
			sent++;
		}
		got = 0;
		ret = c->ops->poll(c, &comp);
		if (ret < 0)
			return ret;
		if (ret > 0) {
			if (comp.op != BENCH_OP_SEND)
				return -EPROTO;
			sdone++;
			got = 1;
		}
		ret = s->ops->poll(s, &comp);
		if (ret < 0)
			return ret;
		if (ret > 0) {
			if (comp.op != BENCH_OP_RECV || comp.len != size)
				return -EPROTO;
			bench_progress_at(++rdone);
			got = 1;
		}
		if (got)
			d.progress = true;
		else if (bench_deadline_hit(&d))
			return bench_deadline_fail(&d, s,
			                           "a loopback completion");
	}
	return 0;
}

int bench_loopback_runs(struct bench_ctx *s, struct bench_ctx *c,
                        struct bench_conn *sc, struct bench_conn *cc,
                        struct bench_mr *smr, struct bench_mr *cmr)
{
	struct bench_opts *o = s->opts;
	struct timespec start, end;
	char what[64];
	long iters;
	int i, ret;

	for (i = 0; i < o->nsizes; i++) {
		iters = o->iterations ? o->iterations
		                      : bench_default_iters(o->sizes[i], true);
		ret = bench_lb_run(s, c, sc, cc, smr, cmr, o->sizes[i],
		                   o->warmup);
		if (ret)
			return ret;
		bench_run_name(o, o->sizes[i], what, sizeof(what));
		bench_progress_begin(o, what, iters);
		bench_now(&start);
		ret = bench_lb_run(s, c, sc, cc, smr, cmr, o->sizes[i], iters);
		bench_now(&end);
		bench_progress_end();
		if (ret)
			return ret;
		bench_show_perf(o->sizes[i], iters, &start, &end, 1);
	}
	return 0;
}

int bench_loopback(struct bench_opts *o)
{
	struct bench_opts os = *o, oc = *o;
	struct bench_ctx s, c;
	struct bench_conn *sc = NULL, *cc = NULL;
	struct bench_mr smr = {0}, cmr = {0};
	size_t max = 0;
	void *sbuf = NULL, *cbuf = NULL;
	int i, ret, sv[2];

	if (o->dst_addr || o->test != BENCH_TEST_SEND) {
		BENCH_ERR("--loopback takes -t send and no address");
		return -EINVAL;
	}
	for (i = 0; i < o->nsizes; i++)
		if (o->sizes[i] > max)
			max = o->sizes[i];
	os.dst_addr = NULL;
	oc.dst_addr = "127.0.0.1";
	memset(&s, 0, sizeof(s));
	memset(&c, 0, sizeof(c));
	s.oob_fd = c.oob_fd = -1;
	ret = bench_lb_open(&s, &os, true, max);
	if (ret)
		goto out;
	ret = bench_lb_open(&c, &oc, false, max);
	if (ret)
		goto out;
	/*
	 * The two sides' side channel, in this process: the raw twin on an
	 * RDM fabric exchanges endpoint names on it (bench_raw.c); DAT
	 * needs none.
	 */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
		ret = -errno;
		goto out;
	}
	s.oob_fd = sv[0];
	c.oob_fd = sv[1];
	ret = bench_lb_connect(&s, &c, &sc, &cc);
	if (ret)
		goto out;
	if (posix_memalign(&sbuf, 4096, max) ||
	    posix_memalign(&cbuf, 4096, max)) {
		ret = -ENOMEM;
		goto out;
	}
	memset(sbuf, 0, max);
	memset(cbuf, 0, max);
	ret = s.ops->reg(&s, sbuf, max, &smr);
	if (!ret)
		ret = c.ops->reg(&c, cbuf, max, &cmr);
	if (!ret)
		ret = bench_loopback_runs(&s, &c, sc, cc, &smr, &cmr);
out:
	if (cmr.handle)
		c.ops->dereg(&c, &cmr);
	if (smr.handle)
		s.ops->dereg(&s, &smr);
	if (c.priv)
		c.ops->close(&c);
	if (s.priv)
		s.ops->close(&s);
	bench_oob_close(&c);
	bench_oob_close(&s);
	free(sbuf);
	free(cbuf);
	return ret;
}

int bench_main(int argc, char **argv, const char *desc, unsigned tests,
               enum bench_test def_test, bench_run_fn run, int xfers_per_iter,
               bool bw)
{
	struct bench_opts o;
	struct bench_ctx ctx;
	struct bench_conn *conn = NULL;
	struct bench_buf b;
	int ret;

	if (bench_parse(&o, argc, argv, desc, tests, def_test))
		return EXIT_FAILURE;
	if (o.loopback) {
		if (!bw) {
			BENCH_ERR("--loopback is for dat_bw -t send");
			return EXIT_FAILURE;
		}
		ret = bench_loopback(&o);
		if (ret == -ENODATA)
			return BENCH_EXIT_NOTRUN;
		if (ret)
			fprintf(stderr, "%s: failed (%s)\n", o.prog,
			        strerror(-ret));
		return ret ? EXIT_FAILURE : EXIT_SUCCESS;
	}
	ret = bench_init(&ctx, &o);
	if (ret)
		return ret == -ENODATA ? BENCH_EXIT_NOTRUN : EXIT_FAILURE;
	memset(&b, 0, sizeof(b));
	if (o.test != BENCH_TEST_CM) {
		ret = bench_establish(&ctx, &conn);
		if (ret)
			goto out;
		ret = bench_buf_setup(&ctx, &b);
		if (ret)
			goto out;
	}
	ret = bench_drive(&ctx, conn, &b, run, xfers_per_iter, bw);
out:
	/*
	 * A failed run may leave transfers posted on the buffer: the
	 * connections go first (their endpoints close, and the fabric reads
	 * the buffer no more), then the buffer.
	 */
	if (ret)
		while (ctx.conns)
			ctx.ops->free_conn(ctx.conns);
	if (b.rx)
		bench_buf_free(&ctx, &b);
	bench_teardown(&ctx, ret ? NULL : conn);
	if (ret && conn)
		fprintf(stderr, "%s: failed (%s)\n", o.prog, strerror(-ret));
	return ret ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* ---- the fabtests table -------------------------------------------------- */

static char *bench_size_str(char *str, size_t n, long long size)
{
	long long base = 1, frac = 0;
	const char *mag = "";

	if (size >= (1LL << 30)) {
		base = 1LL << 30;
		mag = "g";
	} else if (size >= (1LL << 20)) {
		base = 1LL << 20;
		mag = "m";
	} else if (size >= (1LL << 10)) {
		base = 1LL << 10;
		mag = "k";
	}
	if (size / base < 10)
		frac = (size % base) * 10 / base;
	if (frac)
		snprintf(str, n, "%lld.%lld%s", size / base, frac, mag);
	else
		snprintf(str, n, "%lld%s", size / base, mag);
	return str;
}

static char *bench_cnt_str(char *str, size_t n, long long cnt)
{
	if (cnt >= 1000000000)
		snprintf(str, n, "%lldb", cnt / 1000000000);
	else if (cnt >= 1000000)
		snprintf(str, n, "%lldm", cnt / 1000000);
	else if (cnt >= 1000)
		snprintf(str, n, "%lldk", cnt / 1000);
	else
		snprintf(str, n, "%lld", cnt);
	return str;
}

void bench_show_perf(size_t size, long iters, const struct timespec *start,
                     const struct timespec *end, int xfers_per_iter)
{
	static bool header = true;
	char s1[32], s2[32], s3[32];
	long long bytes = (long long)iters * (long long)size * xfers_per_iter;
	double usec = (double)(end->tv_sec - start->tv_sec) * 1e6 +
	              (double)(end->tv_nsec - start->tv_nsec) / 1e3;
	double per_xfer;

	if (usec <= 0)
		usec = 1e-3;
	per_xfer = usec / (double)iters / xfers_per_iter;
	if (header) {
		printf("%-8s%-8s%-8s%8s %10s%13s%13s\n", "bytes", "iters",
		       "total", "time", "MB/sec", "usec/xfer", "Mxfers/sec");
		header = false;
	}
	printf("%-8s%-8s%-8s%8.2fs%10.2f%11.2f%11.2f\n",
	       bench_size_str(s1, sizeof(s1), (long long)size),
	       bench_cnt_str(s2, sizeof(s2), iters),
	       bench_size_str(s3, sizeof(s3), bytes), usec / 1e6,
	       (double)bytes / usec, per_xfer, 1.0 / per_xfer);
	if (bench_detail)
		printf("#detail size=%zu iters=%ld usec=%.3f mb_per_sec=%.4f "
		       "usec_per_xfer=%.5f mxfers_per_sec=%.6f "
		       "empty_polls=%llu\n",
		       size, iters, usec, (double)bytes / usec, per_xfer,
		       1.0 / per_xfer, bench_empty_polls);
	fflush(stdout);
}

/* ---- progress on a terminal ---------------------------------------------- */

atomic_long bench_progress_count;

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond; /* on CLOCK_MONOTONIC; signalled to quit */
	pthread_t thread;
	bool started; /* the thread runs */
	bool active;  /* between begin and end */
	bool shown;   /* a progress line is on the terminal */
	bool quit;
	const char *prog;
	char what[64];
	long total;
	struct timespec t0;
} bench_prog = {.lock = PTHREAD_MUTEX_INITIALIZER};

static double bench_secs_since(const struct timespec *t0)
{
	struct timespec now;

	bench_now(&now);
	return (double)(now.tv_sec - t0->tv_sec) +
	       (double)(now.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Called with the lock held: one line, written over the last one. */
static void bench_progress_show(void)
{
	long done = atomic_load_explicit(&bench_progress_count,
	                                 memory_order_relaxed);
	double secs = bench_secs_since(&bench_prog.t0);
	char s1[32], s2[32], left[32] = "";

	if (done > 0 && done < bench_prog.total)
		snprintf(left, sizeof(left), ", about %.0f s left",
		         secs * (double)(bench_prog.total - done) /
		                 (double)done);
	fprintf(stderr, "\r%s %s: %s of %s (%ld%%), %.0f s%s\033[K",
	        bench_prog.prog, bench_prog.what,
	        bench_cnt_str(s1, sizeof(s1), done),
	        bench_cnt_str(s2, sizeof(s2), bench_prog.total),
	        bench_prog.total > 0 ? done * 100 / bench_prog.total : 0, secs,
	        left);
	bench_prog.shown = true;
}

static void *bench_progress_main(void *arg)
{
	struct timespec next;

	(void)arg;
	pthread_mutex_lock(&bench_prog.lock);
	bench_now(&next);
	while (!bench_prog.quit) {
		next.tv_sec++;
		while (!bench_prog.quit &&
		       pthread_cond_timedwait(&bench_prog.cond,
		                              &bench_prog.lock,
		                              &next) != ETIMEDOUT)
			;
		/* Only runs that take more than a second show. */
		if (!bench_prog.quit && bench_prog.active &&
		    bench_secs_since(&bench_prog.t0) >= 1.0)
			bench_progress_show();
	}
	pthread_mutex_unlock(&bench_prog.lock);
	return NULL;
}

static void bench_progress_stop(void)
{
	pthread_mutex_lock(&bench_prog.lock);
	bench_prog.quit = true;
	pthread_cond_signal(&bench_prog.cond);
	pthread_mutex_unlock(&bench_prog.lock);
	pthread_join(bench_prog.thread, NULL);
}

/* The thread, once; false if it cannot run (then nothing shows). */
static bool bench_progress_start(void)
{
	pthread_condattr_t attr;
	bool ok;

	if (bench_prog.started)
		return true;
	if (pthread_condattr_init(&attr))
		return false;
	ok = !pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) &&
	     !pthread_cond_init(&bench_prog.cond, &attr);
	pthread_condattr_destroy(&attr);
	if (!ok)
		return false;
	if (pthread_create(&bench_prog.thread, NULL, bench_progress_main,
	                   NULL)) {
		pthread_cond_destroy(&bench_prog.cond);
		return false;
	}
	bench_prog.started = true;
	atexit(bench_progress_stop);
	return true;
}

void bench_progress_begin(const struct bench_opts *o, const char *what,
                          long total)
{
	bench_progress_at(0);
	if (!isatty(STDERR_FILENO) || !bench_progress_start())
		return;
	pthread_mutex_lock(&bench_prog.lock);
	bench_prog.prog = o->prog;
	snprintf(bench_prog.what, sizeof(bench_prog.what), "%s", what);
	bench_prog.total = total;
	bench_now(&bench_prog.t0);
	bench_prog.active = true;
	pthread_mutex_unlock(&bench_prog.lock);
}

void bench_progress_end(void)
{
	if (!bench_prog.started)
		return;
	pthread_mutex_lock(&bench_prog.lock);
	bench_prog.active = false;
	if (bench_prog.shown)
		fputs("\r\033[K", stderr);
	bench_prog.shown = false;
	pthread_mutex_unlock(&bench_prog.lock);
}
