/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * libdatft: helpers shared by the fabtests-dat functional tests and
 * benchmarks.  Link with libdatft.la (and libdat2.la).
 *
 * The API below is stable: functional/ and benchmarks/ both build on it.
 * Add to it; do not change what is here.
 *
 * Conventions, as in libfabric's fabtests:
 *   - Options: -D IA name (default ofi-tcp), -I iterations, -S sizes,
 *     -v verify data (the benchmarks; the functional tests always verify),
 *     -E side channel port, -s side channel bind address,
 *     -T watchdog seconds, -q quiet, -h help.  A positional argument, the
 *     server's host address, makes the program the client of a
 *     client/server test; without it the program is the server.
 *   - Exit codes: FT_EXIT_PASS (0) pass, FT_EXIT_NOTRUN (61, ENODATA) the
 *     fabric or the machine does not offer what the test needs, anything
 *     else (FT_EXIT_FAIL) failure.
 *   - Output: one line per check ("  ok: ..." or "FAIL: ... [file:line]"),
 *     "WARN: ..." for what the spec prefers but this fabric did not do,
 *     and a final line "<test>: N checks, N failed, N warnings" from
 *     ft_finish().  A test that checked nothing fails.
 *
 * Typical use:
 *
 *	int main(int argc, char **argv)
 *	{
 *		struct ft_ia ia;
 *
 *		ft_init(argc, argv, "dat_x", "what it tests", NULL);
 *		ft_ia_open(ft_opts.ia_name, &ia);
 *		FT_DAT_OK(dat_pz_query(ia.pz, DAT_PZ_FIELD_ALL, &p));
 *		FT_CHECK(p.ia_handle == ia.ia, "pz_query gives the IA");
 *		ft_ia_close(&ia);
 *		return ft_finish();
 *	}
 *
 * Thread safety: the check and logging functions may be called from any
 * thread; option parsing, the side channel and the IA helpers are meant
 * for the main thread.
 */

#ifndef FT_SHARED_H
#define FT_SHARED_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <dat2/udat.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- exit codes ---------------------------------------------------------- */

#define FT_EXIT_PASS   0
#define FT_EXIT_FAIL   1
#define FT_EXIT_NOTRUN 61 /* ENODATA, as fabtests' -FI_ENODATA */

/* ---- defaults ------------------------------------------------------------ */

#define FT_DEFAULT_IA       "ofi-tcp"
#define FT_DEFAULT_OOB_PORT 47592
#define FT_DEFAULT_WATCHDOG 120       /* seconds */
#define FT_TIMEOUT_US       10000000u /* default event wait, 10 s */
#define FT_MAX_SIZES        64

/* ---- options ------------------------------------------------------------- */

struct ft_opts {
	const char *ia_name;        /* -D NAME */
	const char *dst_addr;       /* positional: server host; NULL = server */
	const char *src_addr;       /* -s ADDR: side channel bind (server) */
	uint16_t oob_port;          /* -E PORT */
	long iterations;            /* -I N; 0 = test's own default */
	size_t sizes[FT_MAX_SIZES]; /* -S: sizes to run, ascending */
	int nsizes;                 /* 0 = test's own default */
	bool verify;                /* -v */
	bool quiet;                 /* -q: print failures and summary only */
	int watchdog;               /* -T SEC; 0 = none */
};

extern struct ft_opts ft_opts;

/*
 * Test-specific options: optstring (getopt syntax, letters not used by
 * the common set "D:I:S:vE:s:T:qh"), a handler called for each, and
 * usage lines.  The handler gets the option (the letter, or a long
 * option's val, see ft_init_long()) and its argument (NULL when it takes
 * none); it returns 0, or -1 to print usage and fail.
 */
struct ft_extra_opts {
	const char *optstring;
	int (*handler)(int opt, const char *arg);
	const char *usage;
};

/*
 * Parse the command line into ft_opts, set stdout line-buffered, start the
 * watchdog (SIGALRM ends the process with FT_EXIT_FAIL and a message) and
 * print a header naming the test, the IA and the role.  Exits on -h (0)
 * or on a bad option (FT_EXIT_FAIL).  extra may be NULL.
 */
void ft_init(int argc, char **argv, const char *name, const char *desc,
             const struct ft_extra_opts *extra);

/*
 * ft_init() with long options as well: longopts is getopt_long's array,
 * ended by an all-zero entry (may be NULL); give long-only options a val
 * of 256 or more, e.g. {"raw", no_argument, NULL, 256}; extra->handler
 * gets them.  The common options also have long names: --ia,
 * --iterations, --sizes, --verify, --oob-port, --src-addr, --timeout,
 * --quiet, --help.
 */
void ft_init_long(int argc, char **argv, const char *name, const char *desc,
                  const struct ft_extra_opts *extra,
                  const struct option *longopts);

/* True when a server address was given (client role). */
bool ft_is_client(void);

/*
 * Parse a size list as -S takes it: "all", "N", "N,M,...", or "A:B"
 * (powers of two from A to B); N may end in k, m or g.  Returns the
 * count, or -1 on a malformed list.
 */
int ft_parse_sizes(const char *arg, size_t *sizes, int max);

/*
 * The sizes to run: those given with -S, else the n defaults, each capped
 * at max (sizes above max are dropped, max itself is added when one was
 * dropped).  Returns the count written to out (at most FT_MAX_SIZES).
 */
int ft_sizes(const size_t *defaults, int n, size_t max, size_t *out);

/* -I if given, else def. */
long ft_iterations(long def);

/* ---- checks and reporting -------------------------------------------------
 */

/* Print a line (unless -q). */
void ft_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Record a check; prints "  ok: ..." or "FAIL: ... [file:line]". */
bool ft_check_(bool ok, const char *file, int line, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

/* Record a warning: something the spec prefers that this fabric did not do. */
void ft_warn_(const char *file, int line, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* End the process: FT_EXIT_FAIL after a message, with the summary line. */
void ft_fatal_(const char *file, int line, const char *fmt, ...)
        __attribute__((format(printf, 3, 4), noreturn));

/* End the process with FT_EXIT_NOTRUN after saying why. */
void ft_notrun(const char *fmt, ...)
        __attribute__((format(printf, 1, 2), noreturn));

/* Print "<test>: N checks, N failed, N warnings" and return the exit code. */
int ft_finish(void);

/* Number of failed checks so far. */
long ft_failures(void);

#define FT_CHECK(cond, ...) ft_check_(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
#define FT_WARN(...)        ft_warn_(__FILE__, __LINE__, __VA_ARGS__)
#define FT_FATAL(...)       ft_fatal_(__FILE__, __LINE__, __VA_ARGS__)

/* A check that ends the test when it fails. */
#define FT_REQUIRE(cond, ...)                                              \
	do {                                                               \
		if (!ft_check_(!!(cond), __FILE__, __LINE__, __VA_ARGS__)) \
			ft_fatal_(__FILE__, __LINE__, "cannot go on");     \
	} while (0)

/*
 * DAT return codes.  expect is compared by type (DAT_GET_TYPE), and also by
 * subtype when expect has one.  The message names the call and, on a
 * mismatch, both codes through dat_strerror().
 */
bool ft_ret_matches(DAT_RETURN ret, DAT_RETURN expect);
DAT_RETURN ft_dat_expect_(DAT_RETURN ret, DAT_RETURN expect, bool fatal,
                          const char *expr, const char *file, int line);

/* The call must return expect; the test goes on either way. */
#define FT_DAT_EXPECT(call, expect) \
	ft_dat_expect_((call), (expect), false, #call, __FILE__, __LINE__)
/* The call must succeed; the test goes on either way. */
#define FT_DAT_CHECK(call) \
	ft_dat_expect_((call), DAT_SUCCESS, false, #call, __FILE__, __LINE__)
/* The call must succeed or the test ends. */
#define FT_DAT_OK(call) \
	ft_dat_expect_((call), DAT_SUCCESS, true, #call, __FILE__, __LINE__)

/* Names, for messages.  Strings are static or per-thread. */
const char *ft_ret_str(DAT_RETURN ret); /* "DAT_X (DAT_Y)" via dat_strerror */
const char *ft_event_str(DAT_EVENT_NUMBER num);
const char *ft_dto_status_str(DAT_DTO_COMPLETION_STATUS st);
const char *ft_dto_op_str(DAT_DTOS op);
const char *ft_ep_state_str(DAT_EP_STATE st);
const char *ft_addr_str(const struct sockaddr *sa); /* "a.b.c.d:port" */

/* ---- time -----------------------------------------------------------------
 */

/* Monotonic clock in microseconds. */
uint64_t ft_now_us(void);

/* Run ip(8) with argv (argv[0] "ip", NULL-terminated) and wait: 0 when it
 * exited 0, -1 otherwise. */
int ft_run_ip(char *const argv[]);

/* ---- which libraries are loaded ------------------------------------------ */

/*
 * Print the path of every libdat2 / libdaplofi / libfabric mapped into the
 * process (from /proc/self/maps).  If FT_EXPECT_LIBDIR is set in the
 * environment, check that libdat2.so.2 (and, when loaded, libdaplofi.so.2)
 * come from that directory.
 */
void ft_check_libs(void);

/* ---- IA -------------------------------------------------------------------
 */

struct ft_ia {
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async_evd;
	DAT_PZ_HANDLE pz; /* one PZ created at open */
	DAT_IA_ATTR attr;
	DAT_PROVIDER_ATTR pattr;
	char name[DAT_NAME_MAX_LENGTH];
};

/*
 * Open the IA, query every attribute and create a PZ.  An IA the registry
 * cannot open (DAT_PROVIDER_NOT_FOUND) ends the test as not run; any other
 * error ends it as failed.
 */
void ft_ia_open(const char *name, struct ft_ia *ia);

/* Free the PZ and close the IA (abrupt: frees whatever is left). */
void ft_ia_close(struct ft_ia *ia);

/* Named provider attribute value, or NULL when absent. */
const char *ft_provider_attr(const struct ft_ia *ia, const char *name);

/* ---- memory -----------------------------------------------------------------
 */

struct ft_mr {
	void *buf; /* page-aligned, zeroed */
	size_t len;
	DAT_LMR_HANDLE lmr;
	DAT_LMR_CONTEXT lmr_ctx;
	DAT_RMR_CONTEXT rmr_ctx;
	DAT_VLEN reg_len;
	DAT_VADDR reg_addr;
};

/*
 * Allocate len bytes (at least one page) and register them with
 * dat_lmr_create() in pz with priv.  Returns the DAT return code; on
 * failure nothing is left allocated.
 */
DAT_RETURN ft_mr_create(struct ft_ia *ia, DAT_PZ_HANDLE pz, size_t len,
                        DAT_MEM_PRIV_FLAGS priv, struct ft_mr *mr);

/* dat_lmr_free() and free the memory; NULL-safe, idempotent. */
void ft_mr_free(struct ft_mr *mr);

/* Triplets over [off, off+len) of a registered buffer. */
DAT_LMR_TRIPLET ft_lmr_iov(const struct ft_mr *mr, size_t off, size_t len);
DAT_RMR_TRIPLET ft_rmr_iov(const struct ft_mr *mr, size_t off, size_t len);

/* Data patterns: byte i of a seed's pattern is a function of (seed, i). */
void ft_fill(void *buf, size_t len, uint64_t seed);
/* Index of the first byte that differs from the pattern, or -1. */
long ft_pattern_mismatch(const void *buf, size_t len, uint64_t seed);

/*
 * Spin (without calling DAT) until buf holds seed's pattern or timeout_us
 * passes, as a consumer polling for an RDMA Write does.  Returns true when
 * the pattern arrived.
 */
bool ft_poll_pattern(const volatile void *buf, size_t len, uint64_t seed,
                     uint64_t timeout_us);

/* ---- events -----------------------------------------------------------------
 */

/* dat_evd_create(); returns the code, handle in *evd. */
DAT_RETURN ft_evd_create(struct ft_ia *ia, DAT_COUNT qlen, DAT_EVD_FLAGS flags,
                         DAT_EVD_HANDLE *evd);

/* dat_evd_wait() with threshold 1. */
DAT_RETURN ft_wait(DAT_EVD_HANDLE evd, DAT_TIMEOUT us, DAT_EVENT *ev);

/*
 * Wait for the next event on evd and check that it is num (and, for
 * connection events, that it names ep when ep is not NULL).  Records a
 * check described by what; the event is returned in *ev (may be NULL).
 */
bool ft_expect_event(DAT_EVD_HANDLE evd, DAT_TIMEOUT us, DAT_EVENT_NUMBER num,
                     DAT_EP_HANDLE ep, DAT_EVENT *ev, const char *what);

/*
 * Wait for the next event on evd and check that it is a DTO completion of
 * ep (when not NULL) with op, cookie, status, and transfered_length ==
 * len (skipped when len < 0 or status is not DAT_DTO_SUCCESS).
 */
bool ft_expect_dto(DAT_EVD_HANDLE evd, DAT_TIMEOUT us, DAT_EP_HANDLE ep,
                   DAT_DTOS op, uint64_t cookie,
                   DAT_DTO_COMPLETION_STATUS status, long len, DAT_EVENT *ev,
                   const char *what);

/* The check ft_expect_dto makes, of an event already taken. */
bool ft_check_dto(const DAT_EVENT *ev, DAT_EP_HANDLE ep, DAT_DTOS op,
                  uint64_t cookie, DAT_DTO_COMPLETION_STATUS status, long len,
                  const char *what);

/*
 * Poll evd for its next event (into *ev) for up to us, dequeuing `also`
 * meanwhile while *also_n < also_max: its events go to also_ev[*also_n]
 * in order. A single process that holds both ends must drive both IAs;
 * a blocking wait on one leaves the other to its progress thread's
 * timer. What the last dat_evd_dequeue of evd returned.
 */
DAT_RETURN ft_poll_with(DAT_EVD_HANDLE evd, DAT_TIMEOUT us, DAT_EVENT *ev,
                        DAT_EVD_HANDLE also, DAT_EVENT *also_ev, int also_max,
                        int *also_n);

/* Check that evd holds no event (dequeue; an event found is reported). */
bool ft_expect_empty(DAT_EVD_HANDLE evd, const char *what);

/* Dequeue and discard every queued event; returns how many. */
int ft_drain(DAT_EVD_HANDLE evd);

/* One-line description of an event, for messages. */
const char *ft_event_desc(const DAT_EVENT *ev);

/* ---- endpoints and connections --------------------------------------------
 */

/* An Endpoint with its own request, receive and connection EVDs. */
struct ft_ep {
	DAT_EP_HANDLE ep;
	DAT_EVD_HANDLE req_evd, recv_evd, conn_evd;
};

/*
 * Create three EVDs (qlen each) and an Endpoint in pz with attr (NULL for
 * the Provider's defaults).  Returns the first failing code.
 */
DAT_RETURN ft_ep_create(struct ft_ia *ia, DAT_PZ_HANDLE pz,
                        const DAT_EP_ATTR *attr, DAT_COUNT qlen,
                        struct ft_ep *ep);

/* Free the Endpoint and its EVDs; NULL members are skipped. */
void ft_ep_free(struct ft_ep *ep);

/* An EP attribute set sized for tests: RC, the IA's limits clamped. */
void ft_ep_attr_default(const struct ft_ia *ia, DAT_EP_ATTR *attr);

/* A PSP on a qualifier the Provider picks, with its own CR EVD. */
struct ft_listener {
	DAT_EVD_HANDLE cr_evd;
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL qual;
};

DAT_RETURN ft_listen(struct ft_ia *ia, struct ft_listener *l);
void ft_listener_free(struct ft_listener *l);

/*
 * In one process: connect cep (on cia) to the PSP l (on sia), wait for the
 * CR, accept it on sep, and wait for ESTABLISHED on both sides.  Records
 * checks; returns true when both are connected.
 */
bool ft_connect_local(struct ft_ia *cia, struct ft_ep *cep, struct ft_ia *sia,
                      struct ft_ep *sep, struct ft_listener *l);

/*
 * Disconnect a (graceful or abrupt) and wait for DISCONNECTED on a and,
 * when b is not NULL, on its peer b.  Records checks.
 */
bool ft_disconnect_local(struct ft_ep *a, struct ft_ep *b,
                         DAT_CLOSE_FLAGS flags);

/*
 * Client/server connection over the side channel (call ft_oob_setup()
 * first).  Server: ft_listen() into *l, send the IA address and the
 * qualifier, wait for the request, accept it on ep, wait for ESTABLISHED.
 * Client: receive them, connect ep, wait for ESTABLISHED.  Record checks;
 * return true when connected.  The server frees *l with ft_listener_free().
 */
bool ft_server_connect(struct ft_ia *ia, struct ft_ep *ep,
                       struct ft_listener *l);
bool ft_client_connect(struct ft_ia *ia, struct ft_ep *ep);

/* dat_ep_get_status() state, or -1 on error. */
int ft_ep_state(DAT_EP_HANDLE ep);

/* ---- the out-of-band side channel ------------------------------------------
 */

/*
 * A TCP connection between client and server (loopback by default) to
 * exchange what the DAT connection needs: the server's IA address and
 * Connection Qualifier, RMR triplets, and barriers.  The server listens on
 * -s ADDR (default 127.0.0.1) port -E PORT and accepts one client; the
 * client connects to the positional address, retrying until the watchdog.
 * All integers travel in network byte order.  Functions return 0 or -1.
 */
int ft_oob_setup(void);
void ft_oob_close(void);
int ft_oob_send(const void *buf, size_t len);
int ft_oob_recv(void *buf, size_t len);
int ft_oob_sync(void); /* both sides block until both arrive */
int ft_oob_send_u64(uint64_t v);
int ft_oob_recv_u64(uint64_t *v);

/* An IA address (AF_INET or AF_INET6) and a Connection Qualifier. */
int ft_oob_send_addr(const struct sockaddr *addr, DAT_CONN_QUAL qual);
int ft_oob_recv_addr(struct sockaddr_storage *addr, DAT_CONN_QUAL *qual);

/* An RMR triplet (address, length, context). */
int ft_oob_send_rmr(const DAT_RMR_TRIPLET *t);
int ft_oob_recv_rmr(DAT_RMR_TRIPLET *t);

#ifdef __cplusplus
}
#endif

#endif /* FT_SHARED_H */
