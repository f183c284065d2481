/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * dat_threads: several threads posting at once.  (1) T threads, each with
 * its own connected pair on the shared IAs, run send/receive ping-pongs
 * concurrently.  (2) T threads post sends on one Endpoint while the main
 * thread reaps the shared request EVD: every message arrives once, each
 * thread's messages in its posting order, every completion once.  (3) T
 * threads post RDMA Writes to disjoint ranges through one Endpoint.  Needs
 * (4) T threads post RDMA Writes and Sends in turn on one Endpoint.  Needs
 * a thread-safe IA (is_thread_safe).  Single process, two IAs; -n T sets
 * the thread count (default 4), -I the operations per thread (default
 * 1000).
 */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "shared.h"

static int nthr = 4;
static long iters;
static struct ft_ia ca, sa;
static struct ft_listener L;

static int opt_handler(int opt, const char *arg)
{
	if (opt != 'n')
		return -1;
	nthr = atoi(arg);
	return nthr > 0 && nthr <= 64 ? 0 : -1;
}

/* ---- (1) independent pairs ------------------------------------------------
 */

struct pp {
	int id;
	struct ft_ep c, s;
	struct ft_mr cm, sm;
	long done;
	int errors;
	pthread_t thr;
};

static void *pp_main(void *arg)
{
	struct pp *p = arg;
	DAT_LMR_TRIPLET t;
	DAT_DTO_COOKIE ck;
	DAT_EVENT ev;
	long i;

	for (i = 0; i < iters && p->errors == 0; i++) {
		uint64_t seed = ((uint64_t)p->id << 32) | (uint64_t)i;

		t = ft_lmr_iov(&p->sm, 0, 256);
		ck.as_64 = (uint64_t)i;
		if (dat_ep_post_recv(p->s.ep, 1, &t, ck,
		                     DAT_COMPLETION_DEFAULT_FLAG) !=
		    DAT_SUCCESS)
			p->errors++;
		ft_fill(p->cm.buf, 256, seed);
		t = ft_lmr_iov(&p->cm, 0, 256);
		if (dat_ep_post_send(p->c.ep, 1, &t, ck,
		                     DAT_COMPLETION_DEFAULT_FLAG) !=
		    DAT_SUCCESS)
			p->errors++;
		if (ft_wait(p->c.req_evd, FT_TIMEOUT_US, &ev) != DAT_SUCCESS ||
		    ev.event_data.dto_completion_event_data.status !=
		            DAT_DTO_SUCCESS ||
		    ev.event_data.dto_completion_event_data.user_cookie.as_64 !=
		            (uint64_t)i)
			p->errors++;
		if (ft_wait(p->s.recv_evd, FT_TIMEOUT_US, &ev) != DAT_SUCCESS ||
		    ev.event_data.dto_completion_event_data.status !=
		            DAT_DTO_SUCCESS ||
		    ev.event_data.dto_completion_event_data.user_cookie.as_64 !=
		            (uint64_t)i ||
		    ft_pattern_mismatch(p->sm.buf, 256, seed) >= 0)
			p->errors++;
		p->done++;
	}
	return NULL;
}

static void check_pairs(void)
{
	struct pp *p = calloc((size_t)nthr, sizeof(*p));
	DAT_EP_ATTR attr;
	int i, ok = 0;

	FT_REQUIRE(p != NULL, "memory");
	ft_ep_attr_default(&ca, &attr);
	for (i = 0; i < nthr; i++) {
		p[i].id = i;
		FT_DAT_OK(ft_ep_create(&ca, ca.pz, &attr, 64, &p[i].c));
		FT_DAT_OK(ft_ep_create(&sa, sa.pz, &attr, 64, &p[i].s));
		FT_DAT_OK(ft_mr_create(&ca, ca.pz, 4096, DAT_MEM_PRIV_ALL_FLAG,
		                       &p[i].cm));
		FT_DAT_OK(ft_mr_create(&sa, sa.pz, 4096, DAT_MEM_PRIV_ALL_FLAG,
		                       &p[i].sm));
		if (ft_connect_local(&ca, &p[i].c, &sa, &p[i].s, &L))
			ok++;
	}
	FT_REQUIRE(ok == nthr, "%d pairs connected", ok);
	for (i = 0; i < nthr; i++)
		FT_REQUIRE(pthread_create(&p[i].thr, NULL, pp_main, &p[i]) == 0,
		           "start thread %d", i);
	for (i = 0; i < nthr; i++) {
		pthread_join(p[i].thr, NULL);
		FT_CHECK(p[i].errors == 0 && p[i].done == iters,
		         "thread %d: %ld of %ld ping-pongs on its own pair, %d "
		         "errors",
		         i, p[i].done, iters, p[i].errors);
	}
	for (i = 0; i < nthr; i++) {
		ft_disconnect_local(&p[i].c, &p[i].s, DAT_CLOSE_GRACEFUL_FLAG);
		ft_ep_free(&p[i].c);
		ft_ep_free(&p[i].s);
		ft_mr_free(&p[i].cm);
		ft_mr_free(&p[i].sm);
	}
	free(p);
}

/* ---- (2) and (3): one Endpoint, many posting threads ------------------------
 */

struct shared_ep {
	struct ft_ep c, s;
	struct ft_mr cm, sm;
	DAT_RMR_TRIPLET remote; /* (3): the server buffer */
	atomic_int go;
};

/* What the posters post: sends, RDMA writes, or both in turn. */
enum { POST_SEND, POST_WRITE, POST_MIX };

/* Whether operation seq of a poster in this mode is an RDMA write. */
static bool is_write(int mode, long seq)
{
	return mode == POST_WRITE || (mode == POST_MIX && seq % 2 == 0);
}

struct poster {
	int id;
	struct shared_ep *se;
	int mode;
	long base, count; /* sequence numbers base .. base+count-1 */
	long posted;
	int errors;
	pthread_t thr;
};

static void *poster_main(void *arg)
{
	struct poster *p = arg;
	struct shared_ep *se = p->se;
	DAT_LMR_TRIPLET t;
	DAT_RMR_TRIPLET r;
	DAT_DTO_COOKIE ck;
	DAT_RETURN ret;
	long i;

	while (!atomic_load(&se->go))
		;
	for (i = p->base; i < p->base + p->count; i++) {
		size_t off = ((size_t)p->id * (size_t)iters + (size_t)i) * 64;
		uint64_t seed = ((uint64_t)p->id << 32) | (uint64_t)i;

		ft_fill((char *)se->cm.buf + off, 64, seed);
		t = ft_lmr_iov(&se->cm, off, 64);
		ck.as_64 = seed;
		do {
			if (is_write(p->mode, i)) {
				r = se->remote;
				r.virtual_address += off;
				r.segment_length = 64;
				ret = dat_ep_post_rdma_write(
				        se->c.ep, 1, &t, ck, &r,
				        DAT_COMPLETION_DEFAULT_FLAG);
			} else {
				ret = dat_ep_post_send(
				        se->c.ep, 1, &t, ck,
				        DAT_COMPLETION_DEFAULT_FLAG);
			}
			/* A full request queue is back-pressure: retry. */
		} while (DAT_GET_TYPE(ret) == DAT_INSUFFICIENT_RESOURCES);
		if (ret != DAT_SUCCESS) {
			p->errors++;
			break;
		}
		p->posted++;
	}
	return NULL;
}

/*
 * nthr threads each post count operations (sequence base .. base+count-1)
 * on the shared EP while the main thread reaps the request EVD.
 */
static void run_posters(struct shared_ep *se, int mode, long base, long count)
{
	static const char *const what[] = {"sends", "RDMA writes",
	                                   "RDMA writes and sends"};
	struct poster *p = calloc((size_t)nthr, sizeof(*p));
	long total = (long)nthr * count, reaped = 0, dup = 0, bad = 0;
	unsigned char *seen = calloc((size_t)nthr * (size_t)iters, 1);
	DAT_EVENT ev;
	int i;

	FT_REQUIRE(p && seen, "memory");
	atomic_store(&se->go, 0);
	for (i = 0; i < nthr; i++) {
		p[i].id = i;
		p[i].se = se;
		p[i].mode = mode;
		p[i].base = base;
		p[i].count = count;
		FT_REQUIRE(pthread_create(&p[i].thr, NULL, poster_main,
		                          &p[i]) == 0,
		           "start poster %d", i);
	}
	atomic_store(&se->go, 1);
	/* The main thread reaps the shared request EVD meanwhile. */
	while (reaped < total) {
		uint64_t c;
		long tid, seq;

		if (ft_wait(se->c.req_evd, FT_TIMEOUT_US, &ev) != DAT_SUCCESS)
			break;
		reaped++;
		c = ev.event_data.dto_completion_event_data.user_cookie.as_64;
		tid = (long)(c >> 32);
		seq = (long)(c & 0xffffffff);
		if (ev.event_data.dto_completion_event_data.status !=
		            DAT_DTO_SUCCESS ||
		    tid >= nthr || seq < base || seq >= base + count ||
		    ev.event_data.dto_completion_event_data.operation !=
		            (is_write(mode, seq) ? DAT_DTO_RDMA_WRITE
		                                 : DAT_DTO_SEND))
			bad++;
		else if (seen[tid * iters + seq]++)
			dup++;
	}
	for (i = 0; i < nthr; i++) {
		pthread_join(p[i].thr, NULL);
		if (p[i].errors != 0 || p[i].posted != count)
			FT_CHECK(false,
			         "%s, poster %d: %ld of %ld posted, %d "
			         "errors",
			         what[mode], i, p[i].posted, count,
			         p[i].errors);
	}
	if (reaped != total || bad != 0 || dup != 0)
		FT_CHECK(false,
		         "%s: %ld of %ld completions reaped by the main "
		         "thread, each once (%ld bad, %ld repeated)",
		         what[mode], reaped, total, bad, dup);
	free(seen);
	free(p);
}

/* n receives of 64 bytes at the server, receive i into slot i. */
static void post_recvs(struct shared_ep *se, long n)
{
	DAT_LMR_TRIPLET t;
	DAT_DTO_COOKIE ck;
	long i;

	for (i = 0; i < n; i++) {
		t = ft_lmr_iov(&se->sm, (size_t)i * 64, 64);
		ck.as_64 = (uint64_t)i;
		FT_REQUIRE(dat_ep_post_recv(se->s.ep, 1, &t, ck,
		                            DAT_COMPLETION_DEFAULT_FLAG) ==
		                   DAT_SUCCESS,
		           "post receive %ld", i);
	}
}

static void check_one_ep(void)
{
	struct shared_ep se;
	DAT_EP_ATTR attr;
	long total = (long)nthr * iters, i, got = 0, bad = 0, order = 0;
	long k, base, fails0;
	long *next;
	size_t len = (size_t)total * 64;
	DAT_EVENT ev;
	int tid;

	memset(&se, 0, sizeof(se));
	ft_ep_attr_default(&ca, &attr);
	attr.max_request_dtos =
	        ca.attr.max_dto_per_ep < 256 ? ca.attr.max_dto_per_ep : 256;
	attr.max_recv_dtos =
	        ca.attr.max_dto_per_ep < 1024 ? ca.attr.max_dto_per_ep : 1024;
	/* Rounds of k messages per thread, so the receives always suffice. */
	k = attr.max_recv_dtos / nthr;
	if (k > iters)
		k = iters;
	FT_REQUIRE(k >= 1, "%d receives for %d threads",
	           (int)attr.max_recv_dtos, nthr);
	FT_DAT_OK(ft_ep_create(&ca, ca.pz, &attr, (DAT_COUNT)(nthr * k) + 300,
	                       &se.c));
	FT_DAT_OK(ft_ep_create(&sa, sa.pz, &attr, (DAT_COUNT)(nthr * k) + 300,
	                       &se.s));
	FT_DAT_OK(ft_mr_create(&ca, ca.pz, len, DAT_MEM_PRIV_ALL_FLAG, &se.cm));
	FT_DAT_OK(ft_mr_create(&sa, sa.pz, len, DAT_MEM_PRIV_ALL_FLAG, &se.sm));
	FT_REQUIRE(ft_connect_local(&ca, &se.c, &sa, &se.s, &L),
	           "the shared EP is connected");

	next = calloc((size_t)nthr, sizeof(*next));
	fails0 = ft_failures();
	for (base = 0; base < iters; base += k) {
		long cnt = iters - base < k ? iters - base : k;
		long n = (long)nthr * cnt;

		post_recvs(&se, n);
		run_posters(&se, POST_SEND, base, cnt);
		for (i = 0; i < n; i++) {
			unsigned char *b;

			if (ft_wait(se.s.recv_evd, FT_TIMEOUT_US, &ev) !=
			    DAT_SUCCESS)
				break;
			got++;
			b = (unsigned char *)se.sm.buf +
			    ev.event_data.dto_completion_event_data.user_cookie
			                    .as_64 *
			            64;
			/* It must be the next message of one of the threads. */
			for (tid = 0; tid < nthr; tid++)
				if (next[tid] < iters &&
				    ft_pattern_mismatch(
				            b, 64,
				            ((uint64_t)tid << 32) |
				                    (uint64_t)next[tid]) < 0)
					break;
			if (tid < nthr) {
				next[tid]++;
				continue;
			}
			/* Out of order, or not a message at all. */
			order++;
			for (tid = 0; tid < nthr; tid++) {
				long seq;

				for (seq = 0; seq < iters; seq++)
					if (ft_pattern_mismatch(
					            b, 64,
					            ((uint64_t)tid << 32) |
					                    (uint64_t)seq) < 0)
						break;
				if (seq < iters) {
					next[tid] = seq + 1;
					break;
				}
			}
			if (tid == nthr)
				bad++;
		}
		if (i < n)
			break;
	}
	FT_CHECK(
	        ft_failures() == fails0,
	        "%d threads posted %ld sends on one EP, the main thread reaped "
	        "each completion once",
	        nthr, total);
	FT_CHECK(got == total && bad == 0,
	         "the receiver got %ld of %ld messages from %d threads, all "
	         "intact (%ld unknown)",
	         got, total, nthr, bad);
	FT_CHECK(order == 0,
	         "each thread's messages arrive in its posting "
	         "order (%ld out of order)",
	         order);
	free(next);

	/* (3) RDMA writes from many threads to disjoint ranges. */
	memset(se.sm.buf, 0, len);
	se.remote = ft_rmr_iov(&se.sm, 0, len);
	fails0 = ft_failures();
	run_posters(&se, POST_WRITE, 0, iters);
	FT_CHECK(ft_failures() == fails0,
	         "%d threads posted %ld RDMA writes on one EP, each completion "
	         "reaped once",
	         nthr, total);
	bad = 0;
	for (tid = 0; tid < nthr; tid++)
		for (i = 0; i < iters; i++)
			if (!ft_poll_pattern(
			            (char *)se.sm.buf +
			                    ((size_t)tid * (size_t)iters +
			                     (size_t)i) *
			                            64,
			            64, ((uint64_t)tid << 32) | (uint64_t)i,
			            2000000))
				bad++;
	FT_CHECK(bad == 0,
	         "RDMA writes from %d threads all landed in their "
	         "ranges (%ld missing)",
	         nthr, bad);

	/*
	 * (4) Both in turn from each thread: on tcp a send completes once
	 * sent and an acknowledged write only on the target's answer, so
	 * completions wait for each other to keep posting order.
	 */
	fails0 = ft_failures();
	got = 0;
	for (base = 0; base < iters; base += k) {
		long cnt = iters - base < k ? iters - base : k;
		long sends = 0;

		for (i = base; i < base + cnt; i++)
			sends += !is_write(POST_MIX, i);
		sends *= nthr;
		post_recvs(&se, sends);
		run_posters(&se, POST_MIX, base, cnt);
		for (i = 0; i < sends; i++) {
			if (ft_wait(se.s.recv_evd, FT_TIMEOUT_US, &ev) !=
			            DAT_SUCCESS ||
			    ev.event_data.dto_completion_event_data.status !=
			            DAT_DTO_SUCCESS)
				break;
			got++;
		}
		if (i < sends)
			break;
	}
	/* Each thread's odd operations are the sends. */
	FT_CHECK(ft_failures() == fails0 && got == (long)nthr * (iters / 2),
	         "%d threads posted %ld RDMA writes and sends in turn on one "
	         "EP: each completion reaped once, %ld of %ld messages "
	         "received",
	         nthr, total, got, (long)nthr * (iters / 2));

	ft_disconnect_local(&se.c, &se.s, DAT_CLOSE_GRACEFUL_FLAG);
	ft_ep_free(&se.c);
	ft_ep_free(&se.s);
	ft_mr_free(&se.cm);
	ft_mr_free(&se.sm);
}

int main(int argc, char **argv)
{
	static const struct ft_extra_opts extra = {
	        "n:", opt_handler,
	        "  -n N          number of threads (default 4)\n"};

	ft_init(argc, argv, "dat_threads",
	        "several threads posting at once: own pairs, one shared EP "
	        "(send, RDMA write, both)",
	        &extra);
	iters = ft_iterations(1000);
	ft_ia_open(ft_opts.ia_name, &ca);
	ft_ia_open(ft_opts.ia_name, &sa);
	ft_check_libs();
	if (!ca.pattr.is_thread_safe)
		ft_notrun("IA %s is not thread-safe (is_thread_safe FALSE)",
		          ca.name);
	FT_CHECK(ca.pattr.is_thread_safe, "IA %s is thread-safe", ca.name);
	FT_DAT_OK(ft_listen(&sa, &L));
	check_pairs();
	check_one_ep();
	ft_listener_free(&L);
	ft_ia_close(&sa);
	ft_ia_close(&ca);
	return ft_finish();
}
