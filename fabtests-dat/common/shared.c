/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/* libdatft: options, checks, DAT helpers and the side channel (shared.h). */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "shared.h"

struct ft_opts ft_opts = {
        .ia_name = FT_DEFAULT_IA,
        .oob_port = FT_DEFAULT_OOB_PORT,
        .watchdog = FT_DEFAULT_WATCHDOG,
};

static const char *ft_name = "fabtest";
static atomic_long ft_nchecks;
static atomic_long ft_nfails;
static atomic_long ft_nwarns;
static int ft_oob_fd = -1;

/* ---- output ---------------------------------------------------------------
 */

static void ft_vline(const char *prefix, const char *file, int line,
                     const char *fmt, va_list ap)
{
	flockfile(stdout);
	fputs(prefix, stdout);
	vfprintf(stdout, fmt, ap);
	if (file != NULL)
		fprintf(stdout, " [%s:%d]", file, line);
	fputc('\n', stdout);
	funlockfile(stdout);
}

void ft_log(const char *fmt, ...)
{
	va_list ap;

	if (ft_opts.quiet)
		return;
	va_start(ap, fmt);
	ft_vline("", NULL, 0, fmt, ap);
	va_end(ap);
}

bool ft_check_(bool ok, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	atomic_fetch_add(&ft_nchecks, 1);
	if (!ok)
		atomic_fetch_add(&ft_nfails, 1);
	if (ok && ft_opts.quiet)
		return ok;
	va_start(ap, fmt);
	ft_vline(ok ? "  ok: " : "FAIL: ", ok ? NULL : file, line, fmt, ap);
	va_end(ap);
	return ok;
}

void ft_warn_(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	atomic_fetch_add(&ft_nwarns, 1);
	va_start(ap, fmt);
	ft_vline("WARN: ", file, line, fmt, ap);
	va_end(ap);
}

static void ft_summary(void)
{
	printf("%s: %ld checks, %ld failed, %ld warnings\n", ft_name,
	       atomic_load(&ft_nchecks), atomic_load(&ft_nfails),
	       atomic_load(&ft_nwarns));
	fflush(stdout);
}

void ft_fatal_(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	atomic_fetch_add(&ft_nfails, 1);
	va_start(ap, fmt);
	ft_vline("FATAL: ", file, line, fmt, ap);
	va_end(ap);
	ft_summary();
	fflush(stderr);
	_exit(FT_EXIT_FAIL);
}

void ft_notrun(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ft_vline("NOTRUN: ", NULL, 0, fmt, ap);
	va_end(ap);
	printf("%s: not run\n", ft_name);
	fflush(stdout);
	fflush(stderr);
	_exit(FT_EXIT_NOTRUN);
}

long ft_failures(void)
{
	return atomic_load(&ft_nfails);
}

int ft_finish(void)
{
	if (atomic_load(&ft_nchecks) == 0)
		ft_check_(false, __FILE__, __LINE__,
		          "the test checked something (it checked nothing)");
	ft_summary();
	return atomic_load(&ft_nfails) ? FT_EXIT_FAIL : FT_EXIT_PASS;
}

/* ---- options --------------------------------------------------------------
 */

static void ft_usage(FILE *fp, const char *desc,
                     const struct ft_extra_opts *extra)
{
	fprintf(fp,
	        "Usage: %s [OPTIONS] [SERVER_ADDR]\n"
	        "%s\n\n"
	        "  SERVER_ADDR   run as the client of that server "
	        "(client/server "
	        "tests)\n"
	        "  -D NAME       DAT IA name (default %s)\n"
	        "  -I N          iterations\n"
	        "  -S SIZES      sizes: all, N, N,M,... or A:B (powers of "
	        "two); "
	        "k/m/g suffixes\n"
	        "  -v            verify transferred data\n"
	        "  -E PORT       side channel TCP port (default %d)\n"
	        "  -s ADDR       side channel address the server binds "
	        "(default 127.0.0.1)\n"
	        "  -T SEC        watchdog: fail after SEC seconds (0 none, "
	        "default %d)\n"
	        "  -q            print only failures and the summary\n"
	        "  -h            this help\n"
	        "  (long names: --ia --iterations --sizes --verify --oob-port "
	        "--src-addr\n"
	        "   --timeout --quiet --help)\n"
	        "Exit status: 0 pass, %d not run (feature not offered), other "
	        "fail.\n",
	        ft_name, desc, FT_DEFAULT_IA, FT_DEFAULT_OOB_PORT,
	        FT_DEFAULT_WATCHDOG, FT_EXIT_NOTRUN);
	if (extra != NULL && extra->usage != NULL)
		fprintf(fp, "Test options:\n%s", extra->usage);
}

static void ft_watchdog_fired(int sig)
{
	static const char msg[] = "FATAL: watchdog: the test did not finish "
	                          "in time (-T)\n";

	(void)sig;
	if (write(STDOUT_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(FT_EXIT_FAIL);
	_exit(FT_EXIT_FAIL);
}

static int ft_parse_size(const char *s, size_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno != 0 || end == s)
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
	if (*end != '\0' && *end != ',' && *end != ':')
		return -1;
	*out = (size_t)v;
	return (int)(end - s);
}

static int ft_size_cmp(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

int ft_parse_sizes(const char *arg, size_t *sizes, int max)
{
	const char *p = arg;
	int n = 0, len;
	size_t a, b;

	if (strcmp(arg, "all") == 0) {
		sizes[n++] = 0;
		for (a = 1; a <= ((size_t)1 << 23) && n < max; a <<= 1)
			sizes[n++] = a;
		return n;
	}
	if (strchr(arg, ':') != NULL) {
		len = ft_parse_size(p, &a);
		if (len < 0 || p[len] != ':')
			return -1;
		p += len + 1;
		len = ft_parse_size(p, &b);
		if (len < 0 || p[len] != '\0' || b < a)
			return -1;
		if (a == 0)
			sizes[n++] = 0;
		for (a = a ? a : 1; a <= b && n < max; a <<= 1)
			sizes[n++] = a;
		return n;
	}
	while (*p != '\0') {
		if (n == max)
			return -1;
		len = ft_parse_size(p, &sizes[n]);
		if (len < 0)
			return -1;
		n++;
		p += len;
		if (*p == ',')
			p++;
		else if (*p != '\0')
			return -1;
	}
	if (n == 0)
		return -1;
	qsort(sizes, (size_t)n, sizeof(*sizes), ft_size_cmp);
	return n;
}

void ft_init(int argc, char **argv, const char *name, const char *desc,
             const struct ft_extra_opts *extra)
{
	ft_init_long(argc, argv, name, desc, extra, NULL);
}

void ft_init_long(int argc, char **argv, const char *name, const char *desc,
                  const struct ft_extra_opts *extra,
                  const struct option *extra_long)
{
	static const struct option common[] = {
	        {"ia", required_argument, NULL, 'D'},
	        {"iterations", required_argument, NULL, 'I'},
	        {"sizes", required_argument, NULL, 'S'},
	        {"verify", no_argument, NULL, 'v'},
	        {"oob-port", required_argument, NULL, 'E'},
	        {"src-addr", required_argument, NULL, 's'},
	        {"timeout", required_argument, NULL, 'T'},
	        {"quiet", no_argument, NULL, 'q'},
	        {"help", no_argument, NULL, 'h'},
	};
	enum { NCOMMON = sizeof(common) / sizeof(common[0]), NMAX = 64 };
	struct option longopts[NCOMMON + NMAX + 1];
	char optstring[128] = "D:I:S:vE:s:T:qh";
	int c, n, nlong = 0;
	long v;

	ft_name = name;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (extra != NULL && extra->optstring != NULL)
		strncat(optstring, extra->optstring,
		        sizeof(optstring) - strlen(optstring) - 1);
	memset(longopts, 0, sizeof(longopts));
	for (n = 0; n < NCOMMON; n++)
		longopts[nlong++] = common[n];
	for (n = 0;
	     extra_long != NULL && extra_long[n].name != NULL && n < NMAX; n++)
		longopts[nlong++] = extra_long[n];
	while ((c = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
		switch (c) {
		case 'D':
			ft_opts.ia_name = optarg;
			break;
		case 'I':
			v = strtol(optarg, NULL, 0);
			if (v <= 0)
				goto bad;
			ft_opts.iterations = v;
			break;
		case 'S':
			n = ft_parse_sizes(optarg, ft_opts.sizes, FT_MAX_SIZES);
			if (n <= 0)
				goto bad;
			ft_opts.nsizes = n;
			break;
		case 'v':
			ft_opts.verify = true;
			break;
		case 'E':
			v = strtol(optarg, NULL, 0);
			if (v <= 0 || v > 65535)
				goto bad;
			ft_opts.oob_port = (uint16_t)v;
			break;
		case 's':
			ft_opts.src_addr = optarg;
			break;
		case 'T':
			v = strtol(optarg, NULL, 0);
			if (v < 0 || v > INT_MAX)
				goto bad;
			ft_opts.watchdog = (int)v;
			break;
		case 'q':
			ft_opts.quiet = true;
			break;
		case 'h':
			ft_usage(stdout, desc, extra);
			exit(FT_EXIT_PASS);
		default:
			if (extra != NULL && extra->handler != NULL &&
			    c != '?' && extra->handler(c, optarg) == 0)
				break;
			goto bad;
		}
	}
	if (optind < argc)
		ft_opts.dst_addr = argv[optind++];
	if (optind < argc)
		goto bad;
	if (ft_opts.watchdog > 0) {
		signal(SIGALRM, ft_watchdog_fired);
		alarm((unsigned)ft_opts.watchdog);
	}
	printf("%s: %s\n", ft_name, desc);
	printf("%s: IA %s, %s%s, pid %d\n", ft_name, ft_opts.ia_name,
	       ft_opts.dst_addr ? "client of " : "server/single process",
	       ft_opts.dst_addr ? ft_opts.dst_addr : "", (int)getpid());
	return;
bad:
	ft_usage(stderr, desc, extra);
	exit(FT_EXIT_FAIL);
}

bool ft_is_client(void)
{
	return ft_opts.dst_addr != NULL;
}

int ft_sizes(const size_t *defaults, int n, size_t max, size_t *out)
{
	const size_t *in = ft_opts.nsizes ? ft_opts.sizes : defaults;
	int cnt = ft_opts.nsizes ? ft_opts.nsizes : n, i, k = 0;
	bool dropped = false;

	for (i = 0; i < cnt && k < FT_MAX_SIZES; i++) {
		if (in[i] > max)
			dropped = true;
		else
			out[k++] = in[i];
	}
	if (dropped && k < FT_MAX_SIZES && (k == 0 || out[k - 1] != max))
		out[k++] = max;
	return k;
}

long ft_iterations(long def)
{
	return ft_opts.iterations ? ft_opts.iterations : def;
}

/* ---- DAT return codes and names
 * ---------------------------------------------- */

bool ft_ret_matches(DAT_RETURN ret, DAT_RETURN expect)
{
	if (DAT_GET_TYPE(expect) == DAT_SUCCESS)
		return DAT_GET_TYPE(ret) == DAT_SUCCESS &&
		       !(ret & DAT_CLASS_ERROR);
	if (DAT_GET_TYPE(ret) != DAT_GET_TYPE(expect))
		return false;
	return DAT_GET_SUBTYPE(expect) == 0 ||
	       DAT_GET_SUBTYPE(ret) == DAT_GET_SUBTYPE(expect);
}

static char *ft_tls_buf(void)
{
	static _Thread_local char bufs[8][192];
	static _Thread_local unsigned idx;

	return bufs[idx++ % 8];
}

const char *ft_ret_str(DAT_RETURN ret)
{
	const char *major = NULL, *minor = NULL;
	char *buf = ft_tls_buf();

	if (dat_strerror(ret, &major, &minor) != DAT_SUCCESS || !major) {
		snprintf(buf, 192, "0x%08x", (unsigned)ret);
		return buf;
	}
	if (minor != NULL && *minor != '\0' && DAT_GET_SUBTYPE(ret) != 0)
		snprintf(buf, 192, "%s (%s)", major, minor);
	else
		snprintf(buf, 192, "%s", major);
	return buf;
}

DAT_RETURN ft_dat_expect_(DAT_RETURN ret, DAT_RETURN expect, bool fatal,
                          const char *expr, const char *file, int line)
{
	bool ok = ft_ret_matches(ret, expect);

	if (ok)
		ft_check_(true, file, line, "%s = %s", expr, ft_ret_str(ret));
	else
		ft_check_(false, file, line, "%s = %s, expected %s", expr,
		          ft_ret_str(ret), ft_ret_str(expect));
	if (!ok && fatal)
		ft_fatal_(file, line, "cannot go on after %s", expr);
	return ret;
}

const char *ft_event_str(DAT_EVENT_NUMBER num)
{
	char *buf;

	switch ((int)num) {
#define FT_EV(x) \
	case x:  \
		return #x
		FT_EV(DAT_DTO_COMPLETION_EVENT);
		FT_EV(DAT_RMR_BIND_COMPLETION_EVENT);
		FT_EV(DAT_CONNECTION_REQUEST_EVENT);
		FT_EV(DAT_CONNECTION_EVENT_ESTABLISHED);
		FT_EV(DAT_CONNECTION_EVENT_PEER_REJECTED);
		FT_EV(DAT_CONNECTION_EVENT_NON_PEER_REJECTED);
		FT_EV(DAT_CONNECTION_EVENT_ACCEPT_COMPLETION_ERROR);
		FT_EV(DAT_CONNECTION_EVENT_DISCONNECTED);
		FT_EV(DAT_CONNECTION_EVENT_BROKEN);
		FT_EV(DAT_CONNECTION_EVENT_TIMED_OUT);
		FT_EV(DAT_CONNECTION_EVENT_UNREACHABLE);
		FT_EV(DAT_ASYNC_ERROR_EVD_OVERFLOW);
		FT_EV(DAT_ASYNC_ERROR_IA_CATASTROPHIC);
		FT_EV(DAT_ASYNC_ERROR_EP_BROKEN);
		FT_EV(DAT_ASYNC_ERROR_TIMED_OUT);
		FT_EV(DAT_ASYNC_ERROR_PROVIDER_INTERNAL_ERROR);
		FT_EV(DAT_HA_DOWN_TO_1);
		FT_EV(DAT_HA_UP_TO_MULTI_PATH);
		FT_EV(DAT_SOFTWARE_EVENT);
#undef FT_EV
	default:
		buf = ft_tls_buf();
		snprintf(buf, 192, "event 0x%x", (unsigned)num);
		return buf;
	}
}

const char *ft_dto_status_str(DAT_DTO_COMPLETION_STATUS st)
{
	static const char *const names[] = {
	        "DAT_DTO_SUCCESS",
	        "DAT_DTO_ERR_FLUSHED",
	        "DAT_DTO_ERR_LOCAL_LENGTH",
	        "DAT_DTO_ERR_LOCAL_EP",
	        "DAT_DTO_ERR_LOCAL_PROTECTION",
	        "DAT_DTO_ERR_BAD_RESPONSE",
	        "DAT_DTO_ERR_REMOTE_ACCESS",
	        "DAT_DTO_ERR_REMOTE_RESPONDER",
	        "DAT_DTO_ERR_TRANSPORT",
	        "DAT_DTO_ERR_RECEIVER_NOT_READY",
	        "DAT_DTO_ERR_PARTIAL_PACKET",
	        "DAT_RMR_OPERATION_FAILED",
	        "DAT_DTO_ERR_LOCAL_MM_ERROR",
	};
	char *buf;

	if ((unsigned)st < sizeof(names) / sizeof(names[0]))
		return names[st];
	buf = ft_tls_buf();
	snprintf(buf, 192, "status %d", (int)st);
	return buf;
}

const char *ft_dto_op_str(DAT_DTOS op)
{
	static const char *const names[] = {
	        "DAT_DTO_SEND",
	        "DAT_DTO_RDMA_WRITE",
	        "DAT_DTO_RDMA_READ",
	        "DAT_DTO_RECEIVE",
	        "DAT_DTO_RECEIVE_WITH_INVALIDATE",
	        "DAT_DTO_BIND_MW",
	        "DAT_DTO_LMR_FMR",
	        "DAT_DTO_LMR_INVALIDATE",
	};
	char *buf;

	if ((unsigned)op < sizeof(names) / sizeof(names[0]))
		return names[op];
	buf = ft_tls_buf();
	snprintf(buf, 192, "op %d", (int)op);
	return buf;
}

const char *ft_ep_state_str(DAT_EP_STATE st)
{
	static const char *const names[] = {
	        "UNCONNECTED",
	        "UNCONFIGURED_UNCONNECTED",
	        "RESERVED",
	        "UNCONFIGURED_RESERVED",
	        "PASSIVE_CONNECTION_PENDING",
	        "UNCONFIGURED_PASSIVE",
	        "ACTIVE_CONNECTION_PENDING",
	        "TENTATIVE_CONNECTION_PENDING",
	        "UNCONFIGURED_TENTATIVE",
	        "CONNECTED",
	        "DISCONNECT_PENDING",
	        "DISCONNECTED",
	        "COMPLETION_PENDING",
	        "CONNECTED_SINGLE_PATH",
	        "CONNECTED_MULTI_PATH",
	};
	char *buf;

	if ((unsigned)st < sizeof(names) / sizeof(names[0]))
		return names[st];
	buf = ft_tls_buf();
	snprintf(buf, 192, "state %d", (int)st);
	return buf;
}

const char *ft_addr_str(const struct sockaddr *sa)
{
	char *buf = ft_tls_buf();
	char host[INET6_ADDRSTRLEN] = "?";

	if (sa == NULL)
		return "(null)";
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)sa;

		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		snprintf(buf, 192, "%s:%u", host, ntohs(in->sin_port));
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)sa;

		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		snprintf(buf, 192, "[%s]:%u", host, ntohs(in6->sin6_port));
	} else {
		snprintf(buf, 192, "(family %d)", sa->sa_family);
	}
	return buf;
}

uint64_t ft_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

extern char **environ;

int ft_run_ip(char *const argv[])
{
	pid_t pid;
	int st;

	if (posix_spawnp(&pid, "ip", NULL, NULL, argv, environ) != 0)
		return -1;
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* ---- libraries --------------------------------------------------------------
 */

void ft_check_libs(void)
{
	const char *want = getenv("FT_EXPECT_LIBDIR");
	char line[4096], seen[8][PATH_MAX];
	char wantreal[PATH_MAX];
	int nseen = 0, i;
	bool have_dat2 = false;
	FILE *fp = fopen("/proc/self/maps", "r");

	if (fp == NULL) {
		FT_WARN("cannot read /proc/self/maps: %s", strerror(errno));
		return;
	}
	if (want != NULL && realpath(want, wantreal) == NULL)
		snprintf(wantreal, sizeof(wantreal), "%s", want);
	while (fgets(line, sizeof(line), fp) != NULL) {
		char *path = strchr(line, '/');
		char *nl;

		if (path == NULL)
			continue;
		nl = strchr(path, '\n');
		if (nl != NULL)
			*nl = '\0';
		if (strstr(path, "libdat2.so") == NULL &&
		    strstr(path, "libdat.so") == NULL &&
		    strstr(path, "libdaplofi") == NULL &&
		    strstr(path, "libfabric.so") == NULL)
			continue;
		for (i = 0; i < nseen; i++)
			if (strcmp(seen[i], path) == 0)
				break;
		if (i < nseen || nseen == 8)
			continue;
		snprintf(seen[nseen++], PATH_MAX, "%s", path);
		ft_log("library: %s", path);
		if (want != NULL && (strstr(path, "libdat2.so") != NULL ||
		                     strstr(path, "libdaplofi") != NULL)) {
			char dir[PATH_MAX], *slash;

			snprintf(dir, sizeof(dir), "%s", path);
			slash = strrchr(dir, '/');
			if (slash != NULL)
				*slash = '\0';
			FT_CHECK(strcmp(dir, wantreal) == 0,
			         "%s comes from FT_EXPECT_LIBDIR %s", path,
			         wantreal);
		}
		if (strstr(path, "libdat2.so") != NULL)
			have_dat2 = true;
	}
	fclose(fp);
	if (want != NULL)
		FT_CHECK(have_dat2, "libdat2.so.2 is mapped into the process");
}

/* ---- IA
 * ------------------------------------------------------------------------- */

void ft_ia_open(const char *name, struct ft_ia *ia)
{
	DAT_RETURN ret;

	memset(ia, 0, sizeof(*ia));
	snprintf(ia->name, sizeof(ia->name), "%s", name);
	ia->async_evd = DAT_HANDLE_NULL;
	ret = dat_ia_open((DAT_NAME_PTR)ia->name, 64, &ia->async_evd, &ia->ia);
	if (DAT_GET_TYPE(ret) == DAT_PROVIDER_NOT_FOUND)
		ft_notrun("dat_ia_open(%s): %s: this IA is not available here",
		          name, ft_ret_str(ret));
	if (ret != DAT_SUCCESS)
		ft_fatal_(__FILE__, __LINE__, "dat_ia_open(%s) = %s", name,
		          ft_ret_str(ret));
	ret = dat_ia_query(ia->ia, NULL, DAT_IA_FIELD_ALL, &ia->attr,
	                   DAT_PROVIDER_FIELD_ALL, &ia->pattr);
	if (ret != DAT_SUCCESS)
		ft_fatal_(__FILE__, __LINE__, "dat_ia_query(%s) = %s", name,
		          ft_ret_str(ret));
	ret = dat_pz_create(ia->ia, &ia->pz);
	if (ret != DAT_SUCCESS)
		ft_fatal_(__FILE__, __LINE__, "dat_pz_create(%s) = %s", name,
		          ft_ret_str(ret));
}

void ft_ia_close(struct ft_ia *ia)
{
	DAT_RETURN ret;

	if (ia->pz != DAT_HANDLE_NULL) {
		ret = dat_pz_free(ia->pz);
		if (ret != DAT_SUCCESS)
			ft_log("note: dat_pz_free at close = %s (the abrupt "
			       "close frees it)",
			       ft_ret_str(ret));
		ia->pz = DAT_HANDLE_NULL;
	}
	if (ia->ia != DAT_HANDLE_NULL) {
		FT_DAT_CHECK(dat_ia_close(ia->ia, DAT_CLOSE_ABRUPT_FLAG));
		ia->ia = DAT_HANDLE_NULL;
	}
}

const char *ft_provider_attr(const struct ft_ia *ia, const char *name)
{
	DAT_COUNT i;

	for (i = 0; i < ia->pattr.num_provider_specific_attr; i++) {
		const DAT_NAMED_ATTR *a = &ia->pattr.provider_specific_attr[i];

		if (a->name != NULL && strcmp(a->name, name) == 0)
			return a->value ? a->value : "";
	}
	return NULL;
}

/* ---- memory
 * ------------------------------------------------------------------- */

DAT_RETURN ft_mr_create(struct ft_ia *ia, DAT_PZ_HANDLE pz, size_t len,
                        DAT_MEM_PRIV_FLAGS priv, struct ft_mr *mr)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t alloc = (len + page - 1) / page * page;
	DAT_REGION_DESCRIPTION region;
	DAT_RETURN ret;
	void *buf;

	memset(mr, 0, sizeof(*mr));
	if (alloc == 0)
		alloc = page;
	if (posix_memalign(&buf, page, alloc) != 0)
		return DAT_CLASS_ERROR | DAT_INSUFFICIENT_RESOURCES |
		       DAT_RESOURCE_MEMORY;
	memset(buf, 0, alloc);
	region.for_va = buf;
	ret = dat_lmr_create(ia->ia, DAT_MEM_TYPE_VIRTUAL, region,
	                     len ? len : 1, pz, priv, DAT_VA_TYPE_VA, &mr->lmr,
	                     &mr->lmr_ctx, &mr->rmr_ctx, &mr->reg_len,
	                     &mr->reg_addr);
	if (ret != DAT_SUCCESS) {
		free(buf);
		memset(mr, 0, sizeof(*mr));
		return ret;
	}
	mr->buf = buf;
	mr->len = len;
	return DAT_SUCCESS;
}

void ft_mr_free(struct ft_mr *mr)
{
	DAT_RETURN ret;

	if (mr->lmr != DAT_HANDLE_NULL) {
		ret = dat_lmr_free(mr->lmr);
		if (ret != DAT_SUCCESS)
			FT_CHECK(false, "dat_lmr_free = %s", ft_ret_str(ret));
		mr->lmr = DAT_HANDLE_NULL;
	}
	free(mr->buf);
	mr->buf = NULL;
}

DAT_LMR_TRIPLET ft_lmr_iov(const struct ft_mr *mr, size_t off, size_t len)
{
	DAT_LMR_TRIPLET t;

	t.virtual_address = (DAT_VADDR)(uintptr_t)mr->buf + off;
	t.segment_length = (DAT_SEG_LENGTH)len;
	t.lmr_context = mr->lmr_ctx;
	return t;
}

DAT_RMR_TRIPLET ft_rmr_iov(const struct ft_mr *mr, size_t off, size_t len)
{
	DAT_RMR_TRIPLET t;

	t.virtual_address = (DAT_VADDR)(uintptr_t)mr->buf + off;
	t.segment_length = (DAT_SEG_LENGTH)len;
	t.rmr_context = mr->rmr_ctx;
	return t;
}

static inline uint8_t ft_pattern_byte(uint64_t seed, size_t i)
{
	uint64_t h = (uint64_t)i + seed * 0x9E3779B97F4A7C15ull;

	h ^= h >> 29;
	h *= 0xBF58476D1CE4E5B9ull;
	h ^= h >> 32;
	return (uint8_t)h;
}

void ft_fill(void *buf, size_t len, uint64_t seed)
{
	uint8_t *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = ft_pattern_byte(seed, i);
}

long ft_pattern_mismatch(const void *buf, size_t len, uint64_t seed)
{
	const uint8_t *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != ft_pattern_byte(seed, i))
			return (long)i;
	return -1;
}

bool ft_poll_pattern(const volatile void *buf, size_t len, uint64_t seed,
                     uint64_t timeout_us)
{
	const volatile uint8_t *p = buf;
	uint64_t deadline = ft_now_us() + timeout_us;
	size_t i = 0;

	for (;;) {
		while (i < len && p[i] == ft_pattern_byte(seed, i))
			i++;
		if (i == len)
			return true;
		if (ft_now_us() > deadline)
			return false;
		sched_yield();
	}
}

/* ---- events
 * ------------------------------------------------------------------ */

DAT_RETURN ft_evd_create(struct ft_ia *ia, DAT_COUNT qlen, DAT_EVD_FLAGS flags,
                         DAT_EVD_HANDLE *evd)
{
	return dat_evd_create(ia->ia, qlen, DAT_HANDLE_NULL, flags, evd);
}

DAT_RETURN ft_wait(DAT_EVD_HANDLE evd, DAT_TIMEOUT us, DAT_EVENT *ev)
{
	DAT_COUNT nmore = 0;

	return dat_evd_wait(evd, us, 1, ev, &nmore);
}

const char *ft_event_desc(const DAT_EVENT *ev)
{
	char *buf = ft_tls_buf();
	const DAT_DTO_COMPLETION_EVENT_DATA *d;
	const DAT_CONNECTION_EVENT_DATA *c;

	switch (ev->event_number) {
	case DAT_DTO_COMPLETION_EVENT:
		d = &ev->event_data.dto_completion_event_data;
		snprintf(buf, 192, "%s ep %p cookie %#llx %s %s len %u",
		         ft_event_str(ev->event_number), d->ep_handle,
		         (unsigned long long)d->user_cookie.as_64,
		         ft_dto_op_str(d->operation),
		         ft_dto_status_str(d->status),
		         (unsigned)d->transfered_length);
		break;
	case DAT_RMR_BIND_COMPLETION_EVENT:
		snprintf(buf, 192, "%s rmr %p cookie %#llx %s",
		         ft_event_str(ev->event_number),
		         ev->event_data.rmr_completion_event_data.rmr_handle,
		         (unsigned long long)ev->event_data
		                 .rmr_completion_event_data.user_cookie.as_64,
		         ft_dto_status_str(
		                 ev->event_data.rmr_completion_event_data
		                         .status));
		break;
	case DAT_CONNECTION_REQUEST_EVENT:
		snprintf(buf, 192, "%s sp %p cr %p qual %llu",
		         ft_event_str(ev->event_number),
		         ev->event_data.cr_arrival_event_data.sp_handle
		                 .psp_handle,
		         ev->event_data.cr_arrival_event_data.cr_handle,
		         (unsigned long long)ev->event_data
		                 .cr_arrival_event_data.conn_qual);
		break;
	case DAT_SOFTWARE_EVENT:
		snprintf(buf, 192, "%s pointer %p",
		         ft_event_str(ev->event_number),
		         ev->event_data.software_event_data.pointer);
		break;
	default:
		if (((unsigned)ev->event_number & 0xff000) == 0x04000) {
			c = &ev->event_data.connect_event_data;
			snprintf(buf, 192, "%s ep %p pdata %d bytes",
			         ft_event_str(ev->event_number), c->ep_handle,
			         (int)c->private_data_size);
		} else if (((unsigned)ev->event_number & 0xff000) == 0x08000) {
			snprintf(buf, 192, "%s handle %p reason %d",
			         ft_event_str(ev->event_number),
			         ev->event_data.asynch_error_event_data
			                 .dat_handle,
			         (int)ev->event_data.asynch_error_event_data
			                 .reason);
		} else {
			snprintf(buf, 192, "%s",
			         ft_event_str(ev->event_number));
		}
		break;
	}
	return buf;
}

bool ft_expect_event(DAT_EVD_HANDLE evd, DAT_TIMEOUT us, DAT_EVENT_NUMBER num,
                     DAT_EP_HANDLE ep, DAT_EVENT *evp, const char *what)
{
	DAT_EVENT ev;
	DAT_RETURN ret;
	bool ok;

	memset(&ev, 0, sizeof(ev));
	ret = ft_wait(evd, us, &ev);
	if (evp != NULL)
		*evp = ev;
	if (ret != DAT_SUCCESS)
		return FT_CHECK(false, "%s: waiting for %s: dat_evd_wait = %s",
		                what, ft_event_str(num), ft_ret_str(ret));
	ok = ev.event_number == num;
	if (ok && ep != NULL && ((unsigned)num & 0xff000) == 0x04000)
		ok = ev.event_data.connect_event_data.ep_handle == ep;
	if (ok)
		return FT_CHECK(true, "%s: %s", what, ft_event_desc(&ev));
	return FT_CHECK(false, "%s: expected %s%s, got %s", what,
	                ft_event_str(num), ep ? " for this EP" : "",
	                ft_event_desc(&ev));
}

bool ft_expect_dto(DAT_EVD_HANDLE evd, DAT_TIMEOUT us, DAT_EP_HANDLE ep,
                   DAT_DTOS op, uint64_t cookie,
                   DAT_DTO_COMPLETION_STATUS status, long len, DAT_EVENT *evp,
                   const char *what)
{
	DAT_EVENT ev;
	DAT_RETURN ret;

	memset(&ev, 0, sizeof(ev));
	ret = ft_wait(evd, us, &ev);
	if (evp != NULL)
		*evp = ev;
	if (ret != DAT_SUCCESS)
		return FT_CHECK(false,
		                "%s: waiting for a %s completion: "
		                "dat_evd_wait = %s",
		                what, ft_dto_op_str(op), ft_ret_str(ret));
	return ft_check_dto(&ev, ep, op, cookie, status, len, what);
}

bool ft_check_dto(const DAT_EVENT *ev, DAT_EP_HANDLE ep, DAT_DTOS op,
                  uint64_t cookie, DAT_DTO_COMPLETION_STATUS status, long len,
                  const char *what)
{
	const DAT_DTO_COMPLETION_EVENT_DATA *d =
	        &ev->event_data.dto_completion_event_data;
	bool ok;

	ok = ev->event_number == DAT_DTO_COMPLETION_EVENT &&
	     (ep == NULL || d->ep_handle == ep) && d->operation == op &&
	     d->user_cookie.as_64 == cookie && d->status == status &&
	     (len < 0 || status != DAT_DTO_SUCCESS ||
	      (long)d->transfered_length == len);
	if (ok)
		return FT_CHECK(true, "%s: %s", what, ft_event_desc(ev));
	return FT_CHECK(false,
	                "%s: expected DTO completion %s cookie %#llx %s len "
	                "%ld, got %s",
	                what, ft_dto_op_str(op), (unsigned long long)cookie,
	                ft_dto_status_str(status), len, ft_event_desc(ev));
}

DAT_RETURN ft_poll_with(DAT_EVD_HANDLE evd, DAT_TIMEOUT us, DAT_EVENT *ev,
                        DAT_EVD_HANDLE also, DAT_EVENT *also_ev, int also_max,
                        int *also_n)
{
	uint64_t end = ft_now_us() + us;
	DAT_RETURN ret;

	memset(ev, 0, sizeof(*ev));
	while ((ret = dat_evd_dequeue(evd, ev)) != DAT_SUCCESS &&
	       ft_now_us() < end)
		if (*also_n < also_max &&
		    dat_evd_dequeue(also, &also_ev[*also_n]) == DAT_SUCCESS)
			(*also_n)++;
	return ret;
}

bool ft_expect_empty(DAT_EVD_HANDLE evd, const char *what)
{
	DAT_EVENT ev;
	DAT_RETURN ret;

	memset(&ev, 0, sizeof(ev));
	ret = dat_evd_dequeue(evd, &ev);
	if (DAT_GET_TYPE(ret) == DAT_QUEUE_EMPTY)
		return FT_CHECK(true, "%s: no event queued", what);
	if (ret == DAT_SUCCESS)
		return FT_CHECK(false, "%s: expected no event, found %s", what,
		                ft_event_desc(&ev));
	return FT_CHECK(false, "%s: dat_evd_dequeue = %s", what,
	                ft_ret_str(ret));
}

int ft_drain(DAT_EVD_HANDLE evd)
{
	DAT_EVENT ev;
	int n = 0;

	while (dat_evd_dequeue(evd, &ev) == DAT_SUCCESS)
		n++;
	return n;
}

/* ---- endpoints
 * ------------------------------------------------------------------ */

void ft_ep_attr_default(const struct ft_ia *ia, DAT_EP_ATTR *a)
{
	const DAT_IA_ATTR *ia_attr = &ia->attr;

#define FT_MIN(x, y) ((x) < (y) ? (x) : (y))
	memset(a, 0, sizeof(*a));
	a->service_type = DAT_SERVICE_TYPE_RC;
	a->max_message_size = ia_attr->max_message_size;
	a->max_rdma_size = ia_attr->max_rdma_size;
	a->qos = DAT_QOS_BEST_EFFORT;
	a->recv_completion_flags = DAT_COMPLETION_DEFAULT_FLAG;
	a->request_completion_flags = DAT_COMPLETION_DEFAULT_FLAG;
	a->max_recv_dtos = FT_MIN(64, ia_attr->max_dto_per_ep);
	a->max_request_dtos = FT_MIN(64, ia_attr->max_dto_per_ep);
	a->max_recv_iov = FT_MIN(4, ia_attr->max_iov_segments_per_dto);
	a->max_request_iov = FT_MIN(4, ia_attr->max_iov_segments_per_dto);
	a->max_rdma_read_in = FT_MIN(4, ia_attr->max_rdma_read_per_ep_in);
	a->max_rdma_read_out = FT_MIN(4, ia_attr->max_rdma_read_per_ep_out);
	a->srq_soft_hw = DAT_HW_DEFAULT;
	a->max_rdma_read_iov =
	        FT_MIN(4, ia_attr->max_iov_segments_per_rdma_read);
	a->max_rdma_write_iov =
	        FT_MIN(4, ia_attr->max_iov_segments_per_rdma_write);
	if (a->max_rdma_read_iov <= 0)
		a->max_rdma_read_iov = 1;
	if (a->max_rdma_write_iov <= 0)
		a->max_rdma_write_iov = 1;
#undef FT_MIN
}

DAT_RETURN ft_ep_create(struct ft_ia *ia, DAT_PZ_HANDLE pz,
                        const DAT_EP_ATTR *attr, DAT_COUNT qlen,
                        struct ft_ep *ep)
{
	DAT_RETURN ret;

	memset(ep, 0, sizeof(*ep));
	ret = ft_evd_create(ia, qlen, DAT_EVD_DTO_FLAG | DAT_EVD_RMR_BIND_FLAG,
	                    &ep->req_evd);
	if (ret != DAT_SUCCESS)
		goto err;
	ret = ft_evd_create(ia, qlen, DAT_EVD_DTO_FLAG, &ep->recv_evd);
	if (ret != DAT_SUCCESS)
		goto err;
	ret = ft_evd_create(ia, 16, DAT_EVD_CONNECTION_FLAG, &ep->conn_evd);
	if (ret != DAT_SUCCESS)
		goto err;
	ret = dat_ep_create(ia->ia, pz, ep->recv_evd, ep->req_evd, ep->conn_evd,
	                    attr, &ep->ep);
	if (ret != DAT_SUCCESS)
		goto err;
	return DAT_SUCCESS;
err:
	ft_ep_free(ep);
	return ret;
}

void ft_ep_free(struct ft_ep *ep)
{
	DAT_RETURN ret;

	if (ep->ep != DAT_HANDLE_NULL) {
		ret = dat_ep_free(ep->ep);
		if (ret != DAT_SUCCESS)
			FT_CHECK(false, "dat_ep_free = %s", ft_ret_str(ret));
		ep->ep = DAT_HANDLE_NULL;
	}
	if (ep->req_evd != DAT_HANDLE_NULL)
		FT_DAT_CHECK(dat_evd_free(ep->req_evd));
	if (ep->recv_evd != DAT_HANDLE_NULL)
		FT_DAT_CHECK(dat_evd_free(ep->recv_evd));
	if (ep->conn_evd != DAT_HANDLE_NULL)
		FT_DAT_CHECK(dat_evd_free(ep->conn_evd));
	ep->req_evd = ep->recv_evd = ep->conn_evd = DAT_HANDLE_NULL;
}

DAT_RETURN ft_listen(struct ft_ia *ia, struct ft_listener *l)
{
	DAT_RETURN ret;

	memset(l, 0, sizeof(*l));
	ret = ft_evd_create(ia, 16, DAT_EVD_CR_FLAG, &l->cr_evd);
	if (ret != DAT_SUCCESS)
		return ret;
	ret = dat_psp_create_any(ia->ia, &l->qual, l->cr_evd,
	                         DAT_PSP_CONSUMER_FLAG, &l->psp);
	if (ret != DAT_SUCCESS) {
		dat_evd_free(l->cr_evd);
		memset(l, 0, sizeof(*l));
	}
	return ret;
}

void ft_listener_free(struct ft_listener *l)
{
	if (l->psp != DAT_HANDLE_NULL)
		FT_DAT_CHECK(dat_psp_free(l->psp));
	if (l->cr_evd != DAT_HANDLE_NULL)
		FT_DAT_CHECK(dat_evd_free(l->cr_evd));
	memset(l, 0, sizeof(*l));
}

int ft_ep_state(DAT_EP_HANDLE ep)
{
	DAT_EP_STATE st;
	DAT_BOOLEAN ri, qi;

	if (dat_ep_get_status(ep, &st, &ri, &qi) != DAT_SUCCESS)
		return -1;
	return (int)st;
}

bool ft_connect_local(struct ft_ia *cia, struct ft_ep *cep, struct ft_ia *sia,
                      struct ft_ep *sep, struct ft_listener *l)
{
	DAT_EVENT ev;
	DAT_CR_HANDLE cr;
	DAT_RETURN ret;
	bool ok;

	(void)sia;
	ret = dat_ep_connect(cep->ep, cia->attr.ia_address_ptr, l->qual,
	                     FT_TIMEOUT_US, 0, NULL, DAT_QOS_BEST_EFFORT,
	                     DAT_CONNECT_DEFAULT_FLAG);
	if (!ft_check_(ret == DAT_SUCCESS, __FILE__, __LINE__,
	               "connect: dat_ep_connect = %s", ft_ret_str(ret)))
		return false;
	if (!ft_expect_event(l->cr_evd, FT_TIMEOUT_US,
	                     DAT_CONNECTION_REQUEST_EVENT, NULL, &ev,
	                     "connect: request arrives"))
		return false;
	cr = ev.event_data.cr_arrival_event_data.cr_handle;
	ret = dat_cr_accept(cr, sep->ep, 0, NULL);
	if (!ft_check_(ret == DAT_SUCCESS, __FILE__, __LINE__,
	               "connect: dat_cr_accept = %s", ft_ret_str(ret)))
		return false;
	ok = ft_expect_event(sep->conn_evd, FT_TIMEOUT_US,
	                     DAT_CONNECTION_EVENT_ESTABLISHED, sep->ep, NULL,
	                     "connect: passive side established");
	ok &= ft_expect_event(cep->conn_evd, FT_TIMEOUT_US,
	                      DAT_CONNECTION_EVENT_ESTABLISHED, cep->ep, NULL,
	                      "connect: active side established");
	return ok;
}

bool ft_disconnect_local(struct ft_ep *a, struct ft_ep *b,
                         DAT_CLOSE_FLAGS flags)
{
	DAT_RETURN ret;
	bool ok;

	ret = dat_ep_disconnect(a->ep, flags);
	if (!ft_check_(ret == DAT_SUCCESS, __FILE__, __LINE__,
	               "disconnect (%s): dat_ep_disconnect = %s",
	               flags == DAT_CLOSE_GRACEFUL_FLAG ? "graceful" : "abrupt",
	               ft_ret_str(ret)))
		return false;
	ok = ft_expect_event(a->conn_evd, FT_TIMEOUT_US,
	                     DAT_CONNECTION_EVENT_DISCONNECTED, a->ep, NULL,
	                     "disconnect: local side disconnected");
	if (b != NULL)
		ok &= ft_expect_event(b->conn_evd, FT_TIMEOUT_US,
		                      DAT_CONNECTION_EVENT_DISCONNECTED, b->ep,
		                      NULL, "disconnect: peer disconnected");
	return ok;
}

bool ft_server_connect(struct ft_ia *ia, struct ft_ep *ep,
                       struct ft_listener *l)
{
	DAT_EVENT ev;
	DAT_RETURN ret;

	ret = ft_listen(ia, l);
	if (!ft_check_(ret == DAT_SUCCESS, __FILE__, __LINE__,
	               "server: dat_psp_create_any = %s", ft_ret_str(ret)))
		return false;
	if (!ft_check_(ft_oob_send_addr(ia->attr.ia_address_ptr, l->qual) == 0,
	               __FILE__, __LINE__,
	               "server: sent IA address %s and qualifier %llu",
	               ft_addr_str(ia->attr.ia_address_ptr),
	               (unsigned long long)l->qual))
		return false;
	if (!ft_expect_event(l->cr_evd, FT_TIMEOUT_US,
	                     DAT_CONNECTION_REQUEST_EVENT, NULL, &ev,
	                     "server: connection request arrives"))
		return false;
	ret = dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle,
	                    ep->ep, 0, NULL);
	if (!ft_check_(ret == DAT_SUCCESS, __FILE__, __LINE__,
	               "server: dat_cr_accept = %s", ft_ret_str(ret)))
		return false;
	return ft_expect_event(ep->conn_evd, FT_TIMEOUT_US,
	                       DAT_CONNECTION_EVENT_ESTABLISHED, ep->ep, NULL,
	                       "server: connection established");
}

bool ft_client_connect(struct ft_ia *ia, struct ft_ep *ep)
{
	struct sockaddr_storage ss;
	DAT_CONN_QUAL qual;
	DAT_RETURN ret;

	(void)ia;
	if (!ft_check_(ft_oob_recv_addr(&ss, &qual) == 0, __FILE__, __LINE__,
	               "client: received the server's IA address and "
	               "qualifier"))
		return false;
	ft_log("client: server IA address %s, qualifier %llu",
	       ft_addr_str((struct sockaddr *)&ss), (unsigned long long)qual);
	ret = dat_ep_connect(ep->ep, (DAT_IA_ADDRESS_PTR)&ss, qual,
	                     FT_TIMEOUT_US, 0, NULL, DAT_QOS_BEST_EFFORT,
	                     DAT_CONNECT_DEFAULT_FLAG);
	if (!ft_check_(ret == DAT_SUCCESS, __FILE__, __LINE__,
	               "client: dat_ep_connect = %s", ft_ret_str(ret)))
		return false;
	return ft_expect_event(ep->conn_evd, FT_TIMEOUT_US,
	                       DAT_CONNECTION_EVENT_ESTABLISHED, ep->ep, NULL,
	                       "client: connection established");
}

/* ---- side channel
 * ---------------------------------------------------------------- */

int ft_oob_setup(void)
{
	struct addrinfo hints, *res = NULL;
	char port[16];
	int fd, one = 1, rc;
	uint64_t deadline;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	snprintf(port, sizeof(port), "%u", ft_opts.oob_port);
	if (!ft_is_client()) {
		const char *addr =
		        ft_opts.src_addr ? ft_opts.src_addr : "127.0.0.1";
		int lfd;

		hints.ai_flags = AI_PASSIVE;
		rc = getaddrinfo(addr, port, &hints, &res);
		if (rc != 0) {
			ft_log("side channel: %s: %s", addr, gai_strerror(rc));
			return -1;
		}
		lfd = socket(res->ai_family, SOCK_STREAM, 0);
		if (lfd < 0)
			goto err_res;
		setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(lfd, res->ai_addr, res->ai_addrlen) < 0 ||
		    listen(lfd, 1) < 0) {
			ft_log("side channel: bind/listen %s:%s: %s", addr,
			       port, strerror(errno));
			close(lfd);
			goto err_res;
		}
		ft_log("side channel: listening on %s:%s", addr, port);
		fd = accept(lfd, NULL, NULL);
		close(lfd);
		if (fd < 0)
			goto err_res;
	} else {
		rc = getaddrinfo(ft_opts.dst_addr, port, &hints, &res);
		if (rc != 0) {
			ft_log("side channel: %s: %s", ft_opts.dst_addr,
			       gai_strerror(rc));
			return -1;
		}
		deadline = ft_now_us() + 60000000u;
		for (;;) {
			fd = socket(res->ai_family, SOCK_STREAM, 0);
			if (fd < 0)
				goto err_res;
			if (connect(fd, res->ai_addr, res->ai_addrlen) == 0)
				break;
			close(fd);
			if (ft_now_us() > deadline) {
				ft_log("side channel: cannot connect to %s:%s",
				       ft_opts.dst_addr, port);
				goto err_res;
			}
			usleep(20000);
		}
	}
	freeaddrinfo(res);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	ft_oob_fd = fd;
	ft_log("side channel: connected");
	return 0;
err_res:
	freeaddrinfo(res);
	return -1;
}

void ft_oob_close(void)
{
	if (ft_oob_fd >= 0)
		close(ft_oob_fd);
	ft_oob_fd = -1;
}

int ft_oob_send(const void *buf, size_t len)
{
	const char *p = buf;
	ssize_t n;

	while (len > 0) {
		n = send(ft_oob_fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int ft_oob_recv(void *buf, size_t len)
{
	char *p = buf;
	ssize_t n;

	while (len > 0) {
		n = recv(ft_oob_fd, p, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int ft_oob_sync(void)
{
	char c = 's';

	if (ft_oob_send(&c, 1) != 0 || ft_oob_recv(&c, 1) != 0)
		return -1;
	return c == 's' ? 0 : -1;
}

static uint64_t ft_htonll(uint64_t v)
{
	return ((uint64_t)htonl((uint32_t)v) << 32) |
	       htonl((uint32_t)(v >> 32));
}

int ft_oob_send_u64(uint64_t v)
{
	v = ft_htonll(v);
	return ft_oob_send(&v, sizeof(v));
}

int ft_oob_recv_u64(uint64_t *v)
{
	if (ft_oob_recv(v, sizeof(*v)) != 0)
		return -1;
	*v = ft_htonll(*v);
	return 0;
}

/* wire: family (u16), port (u16, network order), address (16), qual (u64) */
int ft_oob_send_addr(const struct sockaddr *addr, DAT_CONN_QUAL qual)
{
	uint8_t msg[20];
	uint16_t fam = htons((uint16_t)addr->sa_family);

	memset(msg, 0, sizeof(msg));
	memcpy(msg, &fam, 2);
	if (addr->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)addr;

		memcpy(msg + 2, &in->sin_port, 2);
		memcpy(msg + 4, &in->sin_addr, 4);
	} else if (addr->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)addr;

		memcpy(msg + 2, &in6->sin6_port, 2);
		memcpy(msg + 4, &in6->sin6_addr, 16);
	} else {
		return -1;
	}
	if (ft_oob_send(msg, sizeof(msg)) != 0)
		return -1;
	return ft_oob_send_u64(qual);
}

int ft_oob_recv_addr(struct sockaddr_storage *addr, DAT_CONN_QUAL *qual)
{
	uint8_t msg[20];
	uint16_t fam;
	uint64_t q;

	if (ft_oob_recv(msg, sizeof(msg)) != 0 || ft_oob_recv_u64(&q) != 0)
		return -1;
	memset(addr, 0, sizeof(*addr));
	memcpy(&fam, msg, 2);
	fam = ntohs(fam);
	if (fam == AF_INET) {
		struct sockaddr_in *in = (void *)addr;

		in->sin_family = AF_INET;
		memcpy(&in->sin_port, msg + 2, 2);
		memcpy(&in->sin_addr, msg + 4, 4);
	} else if (fam == AF_INET6) {
		struct sockaddr_in6 *in6 = (void *)addr;

		in6->sin6_family = AF_INET6;
		memcpy(&in6->sin6_port, msg + 2, 2);
		memcpy(&in6->sin6_addr, msg + 4, 16);
	} else {
		return -1;
	}
	*qual = q;
	return 0;
}

int ft_oob_send_rmr(const DAT_RMR_TRIPLET *t)
{
	if (ft_oob_send_u64(t->virtual_address) != 0 ||
	    ft_oob_send_u64(t->segment_length) != 0 ||
	    ft_oob_send_u64(t->rmr_context) != 0)
		return -1;
	return 0;
}

int ft_oob_recv_rmr(DAT_RMR_TRIPLET *t)
{
	uint64_t va, len, ctx;

	if (ft_oob_recv_u64(&va) != 0 || ft_oob_recv_u64(&len) != 0 ||
	    ft_oob_recv_u64(&ctx) != 0)
		return -1;
	t->virtual_address = va;
	t->segment_length = (DAT_SEG_LENGTH)len;
	t->rmr_context = (DAT_RMR_CONTEXT)ctx;
	return 0;
}
