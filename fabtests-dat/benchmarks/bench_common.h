/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * fabtests-dat benchmarks: what dat_pingpong, dat_bw and dat_cm_rate share.
 *
 * Every benchmark runs one pattern through a small table of operations
 * (struct bench_ops) with two implementations: bench_dat.c on the DAT API
 * (libdat2 and whatever provider the IA name loads) and bench_raw.c directly
 * on libfabric (--raw). The pattern code is the same for both, and so is the
 * cost of the indirect call, so the two modes differ only by the DAT layer.
 *
 * The programs are a server (no address argument) and a client (the
 * server's address). They meet on an out-of-band TCP side channel (-p),
 * where the client sends each test's parameters and both exchange memory
 * keys and synchronise; the fabric connection uses -P (the DAT connection
 * qualifier, or the libfabric listening port with --raw).
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <netinet/in.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#define BENCH_MAX_SIZES    64
#define BENCH_MAX_ALL_SIZE (4UL << 20)
#define BENCH_DEF_OOB_PORT 47592
#define BENCH_DEF_WINDOW   64
#define BENCH_DEF_TIMEOUT  60 /* seconds: any wait gives up after this */
/*
 * Default EP attributes (--ep-default, dat_cm_rate): DAT's dat_ep_create
 * with no attributes gives this many DTOs each way; raw asks libfabric for
 * the same tx and rx sizes.
 */
#define BENCH_DEF_EP_DTOS 256
/* Queue length of an EP's own DTO EVD (raw: CQ) under --evd-per-ep. */
#define BENCH_EP_EVD_QLEN 16

/* Exit status when the fabric does not offer what the test needs. */
#define BENCH_EXIT_NOTRUN 61

enum bench_test {
	BENCH_TEST_SEND,
	BENCH_TEST_WRITE,
	BENCH_TEST_READ,
	BENCH_TEST_CM,
	/*
	 * The IB extension (DAT) and its libfabric counterpart (--raw):
	 * RDMA write with immediate data (dat_ib_post_rdma_write_immed,
	 * fi_writedata) and 64-bit fetch-and-add (dat_ib_post_fetch_and_add,
	 * fi_fetch_atomic).
	 */
	BENCH_TEST_WRITEIMM,
	BENCH_TEST_ATOMIC,
	BENCH_TEST_LAST = BENCH_TEST_ATOMIC
};

/*
 * Whether a test has peers read or write memory (RDMA write, read, the
 * extension's): only then is memory registered for remote access, in both
 * modes. Over DAT that starts the provider's progress thread on fabrics
 * that progress data only when called (see dapl-ofi(7)).
 */
static inline bool bench_test_rdma(enum bench_test t)
{
	return t == BENCH_TEST_WRITE || t == BENCH_TEST_READ ||
	       t == BENCH_TEST_WRITEIMM || t == BENCH_TEST_ATOMIC;
}

enum bench_op {
	BENCH_OP_SEND,
	BENCH_OP_RECV,
	BENCH_OP_WRITE,
	BENCH_OP_READ,
	BENCH_OP_WRITE_IMM, /* ours (raw: reported as BENCH_OP_WRITE) */
	BENCH_OP_RECV_IMM,  /* the peer's, with its immediate data */
	BENCH_OP_ATOMIC,
};

/* --raw-ep: the raw twin's endpoint type. */
enum {
	BENCH_RAW_EP_AUTO, /* MSG where the provider has it, else RDM */
	BENCH_RAW_EP_MSG,
	BENCH_RAW_EP_RDM,
};

/*
 * --raw-progress: a second thread in the raw twin. idle: one that only
 * sleeps (what a second thread alone costs: glibc's system calls take
 * their multi-threaded path). thread: one that drives the CQ every
 * BENCH_RAW_PROGRESS_US, as an application must on a fabric that moves
 * data only when called for an RDMA Write to land at a target that polls
 * memory alone: the guarantee DAT's progress thread gives.
 */
enum {
	BENCH_RAW_PROGRESS_NONE,
	BENCH_RAW_PROGRESS_IDLE,
	BENCH_RAW_PROGRESS_THREAD,
};
#define BENCH_RAW_PROGRESS_US 2000

struct bench_opts {
	const char *prog;
	const char *ia_name;  /* -D */
	const char *dst_addr; /* client: the server's address */
	long iterations;      /* -I; 0: by size, as fabtests */
	long warmup;          /* -w */
	size_t sizes[BENCH_MAX_SIZES];
	int nsizes;
	int window;           /* -W */
	uint16_t oob_port;    /* -p */
	uint16_t cm_port;     /* -P; 0: oob_port + 1 */
	enum bench_test test; /* -t */
	int timeout;          /* -T seconds */
	bool raw;             /* --raw */
	bool verbose;         /* -v */
	bool mem_poll;        /* --mem-poll (DAT write ping-pong) */
	bool loopback;        /* --loopback: both sides in this process */
	bool raw_wait_fd;     /* --raw-wait=fd */
	bool raw_thread_safe; /* --raw-thread=safe */
	bool raw_delivery;    /* --raw-write=delivery */
	bool raw_write_set;   /* --raw-write given (else: as DAT on RDM) */
	int raw_ep;           /* --raw-ep: BENCH_RAW_EP_* */
	bool raw_wimm_two;    /* --raw-writeimm=two */
	bool raw_cm_dat;      /* --raw-cm=dat: DAT's connection work */
	int raw_progress;     /* --raw-progress: BENCH_RAW_PROGRESS_* */
	/* dat_cm_rate's scale options; the server has them from the hello. */
	long held;       /* -N: connections held open, established and idle */
	long rounds;     /* --rounds: of one message to every held EP */
	bool evd_per_ep; /* --evd-per-ep: each EP its own DTO EVD / CQ */
	bool ep_default; /* EPs with default attributes (set by the program) */
};

/*
 * Entries the shared DTO EVD (raw: CQ) holds: room for -W of each kind,
 * or, when dat_cm_rate sends one message to every held EP at once, for a
 * send and a receive completion of each.
 */
static inline long bench_cq_size(const struct bench_opts *o)
{
	if (o->rounds && !o->evd_per_ep)
		return 2 * o->held + 64;
	return (long)o->window * 4 + 64;
}

/*
 * Entries the connection EVD (raw: EQ) holds: dat_cm_rate's server can
 * have a disconnect of every held connection waiting in it.
 */
static inline long bench_eq_size(const struct bench_opts *o)
{
	return o->held + 256;
}

/* One completion, whichever layer produced it. */
struct bench_comp {
	enum bench_op op;
	uint64_t ctx;
	size_t len;   /* BENCH_OP_RECV_IMM: not known over raw tcp */
	uint64_t imm; /* BENCH_OP_RECV_IMM: the immediate data */
};

/* A registered buffer: what the peer needs is raddr and rkey. */
struct bench_mr {
	void *buf;
	size_t len;
	uint64_t raddr;
	uint64_t rkey;
	uint64_t lkey; /* DAT lmr_context */
	void *desc;    /* libfabric fi_mr_desc() */
	void *handle;  /* DAT_LMR_HANDLE or struct fid_mr * */
};

/*
 * A connection; the backend keeps its own data behind priv (under
 * --evd-per-ep, the EP's own DTO EVD or CQ). Every live connection is on
 * its context's list and in its table by key (the EP handle, or the
 * endpoint's fid), so finding the connection an event names, and freeing
 * one, cost the same with 10 or 10,000 open.
 */
struct bench_conn {
	struct bench_ctx *ctx;
	struct bench_conn *next;
	struct bench_conn *prev;
	struct bench_conn *hnext; /* the table's chain */
	uintptr_t key;
	void *ep;   /* DAT_EP_HANDLE or struct fid_ep * */
	void *priv; /* backend data */
	int established;
};

enum bench_cm_type {
	BENCH_CM_NONE,
	BENCH_CM_CONNREQ,
	BENCH_CM_ESTABLISHED,
	BENCH_CM_DISCONNECTED,
	BENCH_CM_REJECTED,
};

struct bench_cm_ev {
	enum bench_cm_type type;
	struct bench_conn *conn; /* ESTABLISHED, DISCONNECTED, REJECTED */
	void *req;               /* CONNREQ: pass to accept */
};

struct bench_ctx;

struct bench_ops {
	const char *name;
	/* IA, or fabric + domain; the CQ/EVDs the benchmark polls. */
	int (*open)(struct bench_ctx *ctx);
	void (*close)(struct bench_ctx *ctx);
	/* Passive side: the PSP, or the passive endpoint; fills
	 * ctx->fabric_addr. */
	int (*listen)(struct bench_ctx *ctx);
	int (*reg)(struct bench_ctx *ctx, void *buf, size_t len,
	           struct bench_mr *mr);
	void (*dereg)(struct bench_ctx *ctx, struct bench_mr *mr);
	/* Active side: a new endpoint, connecting (no wait). */
	int (*connect)(struct bench_ctx *ctx, struct bench_conn **conn);
	/* Passive side: a new endpoint for req, accepting (no wait). */
	int (*accept)(struct bench_ctx *ctx, void *req,
	              struct bench_conn **conn);
	/* One non-blocking look at the connection events. 1 got, 0 none. */
	int (*cm_poll)(struct bench_ctx *ctx, struct bench_cm_ev *ev);
	/* Start a disconnect (no wait); free a connection. */
	int (*disconnect)(struct bench_conn *conn);
	void (*free_conn)(struct bench_conn *conn);
	/* Data path: 0 or a negative errno; poll: 1 got, 0 none, < 0 error. */
	int (*post_send)(struct bench_conn *conn, struct bench_mr *mr,
	                 size_t off, size_t len, uint64_t ctx);
	int (*post_recv)(struct bench_conn *conn, struct bench_mr *mr,
	                 size_t off, size_t len, uint64_t ctx);
	int (*post_write)(struct bench_conn *conn, struct bench_mr *mr,
	                  size_t off, size_t len, uint64_t raddr, uint64_t rkey,
	                  uint64_t ctx);
	int (*post_read)(struct bench_conn *conn, struct bench_mr *mr,
	                 size_t off, size_t len, uint64_t raddr, uint64_t rkey,
	                 uint64_t ctx);
	/*
	 * RDMA write carrying 32 bits of immediate data; the peer's
	 * completion is a BENCH_OP_RECV_IMM. Over DAT it takes a receive the
	 * peer posts with post_recv_imm (raw: nothing, as fi_writedata
	 * takes none on tcp and sockets).
	 */
	int (*post_writeimm)(struct bench_conn *conn, struct bench_mr *mr,
	                     size_t off, size_t len, uint64_t raddr,
	                     uint64_t rkey, uint32_t imm, uint64_t ctx);
	int (*post_recv_imm)(struct bench_conn *conn, struct bench_mr *mr,
	                     size_t off, uint64_t ctx);
	/* Atomically add 1 to the 8 bytes at raddr; the old value lands at
	 * off. */
	int (*post_fadd)(struct bench_conn *conn, struct bench_mr *mr,
	                 size_t off, uint64_t raddr, uint64_t rkey,
	                 uint64_t ctx);
	int (*poll)(struct bench_ctx *ctx, struct bench_comp *comp);
	/* The same on the connection's own EVD/CQ (--evd-per-ep), else on
	 * the shared one. */
	int (*poll_conn)(struct bench_conn *conn, struct bench_comp *comp);
	/* Drive progress without taking completions (may be NULL). */
	void (*progress)(struct bench_ctx *ctx);
};

extern const struct bench_ops bench_dat_ops;
extern const struct bench_ops bench_raw_ops;

struct bench_ctx {
	const struct bench_ops *ops;
	struct bench_opts *opts;
	void *priv;               /* backend state */
	struct bench_conn *conns; /* every live connection, newest first */
	struct bench_conn **htab; /* ... by key */
	size_t hsize;             /* buckets, a power of 2 */
	size_t nconns;            /* ... how many */
	int max_window;           /* outstanding posts the EP takes */
	int max_reads;            /* outstanding RDMA reads the EP takes */
	size_t max_msg;           /* largest send the EP takes */
	size_t max_rdma;          /* largest RDMA the EP takes */
	size_t max_size;          /* largest transfer the client will ask */
	/*
	 * Where the server listens on the fabric (the IA's address in DAT
	 * mode, which need not be the side channel's); sin_addr 0: the
	 * address the client was given.
	 */
	struct sockaddr_in fabric_addr;
	int oob_fd;
	bool oob_watch; /* waits give up when the side channel turns readable */
	bool server;
};

/* What the client tells the server before each test. */
struct bench_params {
	uint32_t magic;
	uint32_t cmd; /* BENCH_CMD_* */
	uint32_t test;
	uint32_t window;
	uint64_t size;
	uint64_t iterations;
	uint64_t warmup;
	uint32_t raw;
	uint32_t flags;
};

#define BENCH_MAGIC        0x44415442u /* "DATB" */
#define BENCH_CMD_RUN      1
#define BENCH_CMD_DONE     2
#define BENCH_FLAG_MEMPOLL 0x1

/* The client's first word on the side channel; the server answers with
 * struct bench_ready once it listens on the fabric. */
struct bench_hello {
	uint32_t magic;
	uint32_t raw;
	uint32_t window;
	uint32_t test;
	uint64_t max_size;
	char ia_name[64];
	uint64_t held;   /* dat_cm_rate -N */
	uint64_t rounds; /* dat_cm_rate --rounds */
	uint32_t flags;  /* BENCH_HELLO_* */
	uint32_t pad;
};

#define BENCH_HELLO_EVD_PER_EP 0x1
#define BENCH_HELLO_RAW_CM_DAT 0x2

struct bench_ready {
	uint32_t magic;
	uint32_t addr; /* network order; 0: use the side channel's */
};

/* Where the peer's buffer is. */
struct bench_rinfo {
	uint64_t addr;
	uint64_t key;
	uint64_t len;
};

/*
 * The live connections of a context: add links conn in (0, or -ENOMEM),
 * del unlinks it, find looks a key up; fini frees the table once no
 * connection is left.
 */
int bench_conn_add(struct bench_ctx *ctx, struct bench_conn *conn,
                   uintptr_t key);
void bench_conn_del(struct bench_conn *conn);
struct bench_conn *bench_conn_find(struct bench_ctx *ctx, uintptr_t key);
void bench_conns_fini(struct bench_ctx *ctx);

/* This process: VmRSS in KiB (-1 if unknown), open file descriptors. */
long bench_rss_kib(void);
long bench_count_fds(void);
/*
 * This process's TCP sockets (from /proc/self/fd and /proc/self/net/tcp,
 * tcp6): listening ones, connected ones with port as their local or
 * remote port (dapl-ofi on RDM: its control channel to a PSP on that
 * port; on MSG fabrics the connections themselves), and the other
 * connected ones. 0, or -1 if /proc cannot tell.
 */
struct bench_socks {
	long listening;
	long on_port;
	long other;
};
int bench_count_tcp(uint16_t port, struct bench_socks *out);
/* Raise RLIMIT_NOFILE's soft limit to the hard one; returns the limit. */
long bench_raise_nofile(void);

/* Option parsing. extra_tests: the -t values the program takes. */
void bench_usage(const struct bench_opts *o, const char *desc, unsigned tests);
int bench_parse(struct bench_opts *o, int argc, char **argv, const char *desc,
                unsigned tests, enum bench_test def_test);
const char *bench_test_name(enum bench_test t);
long bench_default_iters(size_t size, bool bw);

/* The side channel (TCP on loopback or the given address). */
int bench_oob_setup(struct bench_ctx *ctx);
int bench_oob_send(struct bench_ctx *ctx, const void *buf, size_t len);
int bench_oob_recv(struct bench_ctx *ctx, void *buf, size_t len);
int bench_oob_sync(struct bench_ctx *ctx);
/* 1 when the side channel has data (or EOF) to read, 0 if not. */
int bench_oob_readable(struct bench_ctx *ctx);
/*
 * 1 when what the side channel has next is one of the programs' own
 * words (it starts with BENCH_MAGIC), or EOF; 0 if not, or not yet (the
 * raw RDM connection messages share the channel: bench_raw.c).
 */
int bench_oob_word_ready(struct bench_ctx *ctx);
void bench_oob_close(struct bench_ctx *ctx);

/* Setup common to the programs: side channel, open, connect or accept. */
int bench_init(struct bench_ctx *ctx, struct bench_opts *o);
int bench_establish(struct bench_ctx *ctx, struct bench_conn **conn);
void bench_teardown(struct bench_ctx *ctx, struct bench_conn *conn);
int bench_exchange_rinfo(struct bench_ctx *ctx, const struct bench_mr *mr,
                         struct bench_rinfo *peer);

/*
 * The buffer every program registers: the peer writes into rx (and reads
 * from it), we send and write from tx; small slots for acknowledgements.
 */
#define BENCH_ACK_SLOTS 8
struct bench_buf {
	struct bench_mr mr;
	size_t max;
	char *rx;
	char *tx;
	struct bench_rinfo peer;
};
int bench_buf_setup(struct bench_ctx *ctx, struct bench_buf *b);
void bench_buf_free(struct bench_ctx *ctx, struct bench_buf *b);
static inline size_t bench_ack_tx_off(const struct bench_buf *b, unsigned i)
{
	return 2 * b->max + 8 * (i % BENCH_ACK_SLOTS);
}
static inline size_t bench_ack_rx_off(const struct bench_buf *b, unsigned i)
{
	return 2 * b->max + 8 * BENCH_ACK_SLOTS + 8 * (i % BENCH_ACK_SLOTS);
}

/* Completion cookies: a tag in the high half, an index in the low. */
#define BENCH_TAG_DATA         1ULL
#define BENCH_TAG_ACK          2ULL
#define BENCH_COOKIE(tag, idx) (((tag) << 32) | (uint32_t)(idx))
#define BENCH_COOKIE_TAG(c)    ((c) >> 32)
#define BENCH_COOKIE_IDX(c)    ((uint32_t)(c))

/* Server: the next test the client asks for. 1 run, 0 done, < 0 error. */
int bench_next_params(struct bench_ctx *ctx, struct bench_params *p);
int bench_send_params(struct bench_ctx *ctx, uint32_t cmd, size_t size,
                      long iters);

/*
 * One run of a pattern, count iterations, on either side; the client's
 * start and end bound the timed part. bench_drive runs it per size (the
 * client) or per request (the server): a warm-up run, then the timed one,
 * and prints the client's row.
 */
typedef int (*bench_run_fn)(struct bench_ctx *ctx, struct bench_conn *conn,
                            struct bench_buf *b, const struct bench_params *p,
                            long count, struct timespec *start,
                            struct timespec *end);
int bench_drive(struct bench_ctx *ctx, struct bench_conn *conn,
                struct bench_buf *b, bench_run_fn run, int xfers_per_iter,
                bool bw);
/*
 * --loopback (dat_bw -t send): server and client in one process and one
 * thread, each on its own IA (or fabric and domain), no side channel. The
 * loop keeps -W receives and sends posted and polls both sides in turn;
 * on loopback TCP it does the same work every time, whatever else the
 * machine runs, which is what bench-callgrind.sh needs.
 */
int bench_loopback(struct bench_opts *o);
int bench_loopback_runs(struct bench_ctx *s, struct bench_ctx *c,
                        struct bench_conn *sc, struct bench_conn *cc,
                        struct bench_mr *smr, struct bench_mr *cmr);

/* main() of every benchmark program. */
int bench_main(int argc, char **argv, const char *desc, unsigned tests,
               enum bench_test def_test, bench_run_fn run, int xfers_per_iter,
               bool bw);

/* Waiting, with the -T deadline. */
struct bench_deadline {
	struct timespec end;
	unsigned spins;
	int seconds;
	int watch_fd; /* the side channel: readable means the peer quit */
	bool peer_gone;
	bool progress; /* set by the caller: the deadline moves on */
};
void bench_deadline_start(struct bench_deadline *d, int seconds);
/* The -T deadline, and give up early if the peer closes the side channel. */
void bench_deadline_start_ctx(struct bench_deadline *d, struct bench_ctx *ctx);
/*
 * Call once per empty poll: true once the deadline has passed (or the peer
 * has gone). Looks at the clock once every 1024 calls; if the caller has
 * set progress since, the deadline starts again from then.
 */
bool bench_deadline_hit(struct bench_deadline *d);
/* Print why a wait gave up; returns -ETIMEDOUT or -ECONNABORTED. */
int bench_deadline_fail(const struct bench_deadline *d,
                        const struct bench_ctx *ctx, const char *what);
int bench_wait_comp(struct bench_ctx *ctx, struct bench_comp *comp);
const char *bench_cm_name(enum bench_cm_type t);
int bench_wait_cm(struct bench_ctx *ctx, enum bench_cm_type want,
                  struct bench_cm_ev *ev);

/* Timing and the fabtests table. */
static inline void bench_now(struct timespec *ts)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
}
void bench_show_perf(size_t size, long iters, const struct timespec *start,
                     const struct timespec *end, int xfers_per_iter);

const char *bench_op_name(enum bench_op op);
/* SA (a struct sockaddr, IPv4 or IPv6, or NULL) as text in BUF: "none"
 * for NULL, "?" for another family; returns BUF. */
const char *bench_addr_str(const void *sa, char *buf, size_t len);

/*
 * Progress of a long run, on a terminal only: between begin and end, a
 * thread of its own prints on stderr, once a second, how far the count
 * the loop stores has got (what, done of total, seconds so far and left),
 * and end wipes the line before the row is printed. When stderr is not a
 * terminal, begin does nothing and no thread is started. The loop's
 * store is one relaxed atomic store per iteration, on either side.
 */
extern atomic_long bench_progress_count;
static inline void bench_progress_at(long done)
{
	atomic_store_explicit(&bench_progress_count, done,
	                      memory_order_relaxed);
}
void bench_progress_begin(const struct bench_opts *o, const char *what,
                          long total);
void bench_progress_end(void);

/* --detail: a '#detail key=value ...' line after each row. */
extern bool bench_detail;
/* Polls that found nothing, since the start (the backends count them). */
extern unsigned long long bench_empty_polls;
/* --yield: give the CPU away after a poll that found nothing. */
extern bool bench_yield;

/* A poll found nothing: count it, and yield where asked to. */
static inline void bench_poll_empty(void)
{
	bench_empty_polls++;
	if (bench_yield)
		sched_yield();
}

#define BENCH_ERR(...)                                          \
	do {                                                    \
		fprintf(stderr, "%s:%d: ", __FILE__, __LINE__); \
		fprintf(stderr, __VA_ARGS__);                   \
		fputc('\n', stderr);                            \
	} while (0)

#define BENCH_VERBOSE(ctx, ...)                       \
	do {                                          \
		if ((ctx)->opts->verbose) {           \
			fprintf(stderr, "# ");        \
			fprintf(stderr, __VA_ARGS__); \
			fputc('\n', stderr);          \
		}                                     \
	} while (0)

#endif /* BENCH_COMMON_H */
