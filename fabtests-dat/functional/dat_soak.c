/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * dat_soak: mixed traffic between two processes for a while, checking
 * every completion and every byte.
 *
 * Each side opens -n Endpoints (default 4), each with its own EVDs and a
 * thread of its own. A thread keeps SOAK_RECVS receives posted and, until
 * the duration (-d) is up, posts Sends, RDMA Writes and RDMA Reads of
 * random sizes from 1 B to 256 KiB. A Send carries, when it is 16 bytes
 * or more, its sequence number and a checksum of the rest; its size and
 * every byte follow from (direction, Endpoint, sequence number), so the
 * receiver checks each byte of the message the n-th receive must hold. An
 * RDMA Write fills a slot of the peer's memory; once it completes, an
 * RDMA Read brings the slot back and each byte is compared.
 *
 * Checked, per Endpoint: every cookie completes exactly once (a second
 * completion is a duplicate, one missing at the end is lost); receive
 * completions come in posting order, and so do request completions
 * (dapl-ofi(7) promises that too); after an error completion on a queue,
 * nothing later on it succeeds, and where one EVD takes an Endpoint's
 * completions and connection events (odd Endpoints), nothing succeeds
 * after the connection's end (dat_ep_disconnect(3)); every byte. At the
 * end the two sides exchange how many messages they sent, the client
 * disconnects and the receives still posted must be flushed, in order.
 *
 * -K N: connection ends instead. The program is the survivor of N
 * rounds: each round it starts a peer (itself, as a client), lets the
 * traffic run for a random 0.3 .. 1.5 s, then kills the peer with
 * SIGKILL mid-transfer: each Endpoint's thread goes on until it has a
 * Send, an RDMA Write, an RDMA Read and receives outstanding at once,
 * and takes nothing more until the kill. It then checks what the
 * Endpoints report: the connection's end (BROKEN, or DISCONNECTED) within
 * 1 s of the kill (SOAK_END_LIMIT_US), every cookie once, in posting
 * order per queue, nothing successful after an error. Rounds end early
 * when the duration is up.
 *
 * -C: credit. A thread posts a Send only while it is fewer than
 * SOAK_RECVS / 2 Sends ahead of the receives it has completed. Each side
 * reposts a receive before it posts anything else, so a Send is posted
 * only after the peer posted the receive for it: no message arrives
 * before its receive (the peer's Sends it saw prove the peer's reposts;
 * its own Sends are at most SOAK_RECVS / 2 ahead of those). For rxd,
 * whose handling of such early messages is broken (dapl-ofi(7),
 * Unexpected messages): the run then checks what dapl-ofi(7) promises
 * a consumer that keeps a receive posted for each message.
 *
 * -P (with -K): the peer is parked before it is killed. It runs without
 * dapl-ofi's progress thread (DAPL_OFI_PROGRESS=none); at SIGUSR1 each
 * of its threads stops before its next post or poll, outside any DAT
 * call, and the last one says so on a pipe; then the kill. What the
 * peer had posted is still out, and so is what the survivor posted. For
 * shm, whose endpoints share a spin lock with their peers: a peer killed
 * inside libfabric may leave it held, and the survivor then spins in
 * libfabric for good (fabtests-dat(7)).
 *
 * It prints bytes verified and the out-of-order, lost and duplicate
 * counts, and fails if any of these counts is not 0.
 *
 * Usage: dat_soak [-D IA] [-E PORT] [-d DUR] [-n EPS]         (server)
 *        dat_soak [-D IA] [-E PORT] [-d DUR] [-n EPS] 127.0.0.1 (client)
 *        dat_soak [-D IA] [-E PORT] [-d DUR] -K ROUNDS        (peer kill)
 *        -C on either side (both, for a normal run): credit
 *        -P with -K: the peer parked, then killed
 * DUR is seconds, or a number with s, m or h (-d 10m for a release
 * check). The watchdog (-T) is raised to the duration plus 120 s.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shared.h"

#define SOAK_MAX_EPS  16
#define SOAK_MAX_SIZE (256 * 1024)
#define SOAK_RECVS    64        /* receives kept posted */
#define SOAK_SENDS    32        /* send buffers */
#define SOAK_RDMA     4         /* RDMA slots (write then read back) */
#define SOAK_RING     64        /* request cookies in flight, a power of two */
#define SOAK_CREDIT   (SOAK_RECVS / 2) /* -C: Sends ahead of receives done */
#define SOAK_END_US   45000000u /* what may still complete at the end */
/* Kill mode: from the kill to the connection's end on the survivor
 * (dapl-ofi(7): a killed peer's connections end well within 1 s), and
 * how long the Endpoints may take to have every kind of DTO out. */
#define SOAK_END_LIMIT_US 1000000u
#define SOAK_ARM_US       10000000u
#define SOAK_PARK_US      5000000u /* -P: for the peer to park */

enum { OP_NONE, OP_SEND, OP_WRITE, OP_READ };

struct req {
	uint64_t idx; /* the cookie */
	int op;       /* OP_NONE: free */
	int slot;
	size_t len;
	uint64_t seed;
};

struct side {
	uint64_t recv_posted, recv_max, recv_done, recv_ok;
	uint64_t req_posted, req_max;
	uint64_t recv_expect; /* the message the next receive holds */
	uint64_t recv_slot_idx[SOAK_RECVS];
	int recv_slot_busy[SOAK_RECVS];
	int recv_err, req_err; /* an error seen on the queue */
};

struct soak_ep {
	int id;
	struct ft_ep ep;
	struct ft_mr rbuf, sbuf, wbuf, dbuf, target;
	DAT_RMR_TRIPLET peer_target;
	pthread_t thr;
	struct side s;
	struct req ring[SOAK_RING];
	int send_busy[SOAK_SENDS];
	int rdma_state[SOAK_RDMA]; /* 0 idle, 1 writing, 2 reading */
	uint64_t rdma_seq[SOAK_RDMA];
	size_t rdma_len[SOAK_RDMA];
	uint64_t sends, writes;
	uint64_t rng;
	/* results */
	uint64_t bytes, ooo, lost, dup, bad, after_err, errs;
	uint64_t flushed, failed; /* error completions */
	int conn_ended;
	uint64_t end_us;         /* when the end was dequeued */
	DAT_EVENT_NUMBER end_ev; /* which end */
	atomic_int armed;        /* kill mode: every kind out, waiting */
	/* Kill mode, for a thread that does not arm: when its current pass
	 * of the traffic loop began (0: between passes), when it last took
	 * an event, and why it left the loop (a soak_left). */
	_Atomic uint64_t pass_us, event_us;
	atomic_int left;
	int shared; /* one EVD for receives, requests and connection */
	/* the end of a normal run */
	atomic_llong my_sent, peer_sent; /* -1 until known */
};

static struct ft_ia ia;
static struct soak_ep eps[SOAK_MAX_EPS];
static int neps = 4;
static double duration_s = 10;
static long kill_rounds;
static int credit; /* -C */
static int park;   /* -P; the peer: -p FD, the pipe to say it parked on */
static int park_fd = -1;
static volatile sig_atomic_t park_now; /* the peer: SIGUSR1 came */
static atomic_int parked;              /* the peer: threads stopped */
static int is_client;
static atomic_int stopping;  /* no new requests */
static atomic_int killed;    /* kill mode: the peer is gone */
static atomic_int arm;       /* kill mode: get ready for the kill */
static uint64_t deadline_us; /* of the traffic */
static char **self_argv;

/* ---- patterns ------------------------------------------------------------ */

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xBF58476D1CE4E5B9ull;
	x ^= x >> 27;
	x *= 0x94D049BB133111EBull;
	x ^= x >> 31;
	return x;
}

/* The seed of message seq from side dir on Endpoint id (kind 0: a Send,
 * 1: an RDMA Write). */
static uint64_t msg_seed(int dir, int id, int kind, uint64_t seq)
{
	return mix64(((uint64_t)dir << 62) ^ ((uint64_t)kind << 60) ^
	             ((uint64_t)id << 48) ^ seq);
}

/* 1 B .. 256 KiB, most of them small: a power of two picked first. */
static size_t msg_size(uint64_t seed)
{
	uint64_t h = mix64(seed ^ 0x5157);
	unsigned bits = (unsigned)(h % 19); /* 0 .. 18 */

	return 1 + (size_t)((h >> 8) % ((uint64_t)1 << bits));
}

static uint64_t checksum(const uint8_t *p, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

/* Message: the pattern, then (16 bytes or more) the sequence number and
 * the checksum of bytes 16.. over its first 16. */
static void msg_fill(uint8_t *p, size_t len, uint64_t seed, uint64_t seq)
{
	ft_fill(p, len, seed);
	if (len >= 16) {
		uint64_t sum = checksum(p + 16, len - 16);

		memcpy(p, &seq, 8);
		memcpy(p + 8, &sum, 8);
	}
}

/* 0 when p holds message seq; else a note in why. */
static int msg_check(uint8_t *p, size_t len, uint64_t seed, uint64_t seq,
                     char *why, size_t wlen)
{
	long bad;

	if (len >= 16) {
		uint64_t got_seq, got_sum;

		memcpy(&got_seq, p, 8);
		memcpy(&got_sum, p + 8, 8);
		if (got_seq != seq) {
			snprintf(why, wlen, "holds message %llu, not %llu",
			         (unsigned long long)got_seq,
			         (unsigned long long)seq);
			return -1;
		}
		if (got_sum != checksum(p + 16, len - 16)) {
			snprintf(why, wlen, "message %llu: bad checksum",
			         (unsigned long long)seq);
			return -1;
		}
		/* The header checked: the pattern's own first bytes back. */
		ft_fill(p, 16, seed);
	}
	bad = ft_pattern_mismatch(p, len, seed);
	if (bad >= 0) {
		snprintf(why, wlen, "message %llu: byte %ld differs",
		         (unsigned long long)seq, bad);
		return -1;
	}
	return 0;
}

/*
 * What a read-back that differs holds, for the failure's line: the first
 * byte that differs, how many do, the last one, and how many of them are
 * 0 (the read-back lands on zeros: 0 where nothing was read).
 */
static void rdma_diff_note(const uint8_t *p, size_t len, uint64_t seed,
                           long first, char *why, size_t wlen)
{
	uint8_t *want = malloc(len);
	size_t i, n = 0, zeros = 0, last = (size_t)first;

	if (want == NULL) {
		snprintf(why, wlen, "byte %ld of %zu differs", first, len);
		return;
	}
	ft_fill(want, len, seed);
	for (i = (size_t)first; i < len; i++) {
		if (p[i] == want[i])
			continue;
		n++;
		zeros += p[i] == 0;
		last = i;
	}
	snprintf(why, wlen,
	         "byte %ld of %zu differs (0x%02x, not 0x%02x); %zu bytes "
	         "differ, up to byte %zu, %zu of them 0",
	         first, len, p[first], want[first], n, last, zeros);
	free(want);
}

/* ---- posting ------------------------------------------------------------- */

static uint64_t rnd(struct soak_ep *e)
{
	e->rng = e->rng * 6364136223846793005ull + 1442695040888963407ull;
	return e->rng >> 33;
}

/*
 * -P's peer: once SIGUSR1 has come, stop here, before a post or a poll,
 * for good (the kill comes next); the last thread to stop writes a byte
 * to the survivor's pipe.
 */
static void park_point(void)
{
	if (!park_now)
		return;
	if (atomic_fetch_add(&parked, 1) + 1 == neps) {
		char c = 'p';

		if (write(park_fd, &c, 1) != 1)
			ft_log("dat_soak: writing to the park pipe: %s",
			       strerror(errno));
	}
	for (;;)
		pause();
}

static void on_sigusr1(int sig)
{
	(void)sig;
	park_now = 1;
}

static void post_recv(struct soak_ep *e)
{
	uint64_t idx = e->s.recv_posted;
	int slot = (int)(idx % SOAK_RECVS);
	DAT_LMR_TRIPLET t;
	DAT_DTO_COOKIE ck;
	DAT_RETURN ret;

	park_point();
	if (e->s.recv_slot_busy[slot])
		return;
	t = ft_lmr_iov(&e->rbuf, (size_t)slot * SOAK_MAX_SIZE, SOAK_MAX_SIZE);
	ck.as_64 = idx;
	ret = dat_ep_post_recv(e->ep.ep, 1, &t, ck,
	                       DAT_COMPLETION_DEFAULT_FLAG);
	if (ret != DAT_SUCCESS) {
		if (!atomic_load(&killed) && !e->conn_ended)
			FT_CHECK(0, "EP %d: dat_ep_post_recv = %s", e->id,
			         ft_ret_str(ret));
		e->errs++;
		return;
	}
	e->s.recv_slot_busy[slot] = 1;
	e->s.recv_slot_idx[slot] = idx;
	e->s.recv_posted++;
}

/* Post one request of kind op; 0 when posted. */
static int post_req(struct soak_ep *e, int op, int slot, size_t len,
                    uint64_t seed)
{
	uint64_t idx = e->s.req_posted;
	struct req *r = &e->ring[idx % SOAK_RING];
	DAT_LMR_TRIPLET t;
	DAT_RMR_TRIPLET rt;
	DAT_DTO_COOKIE ck;
	DAT_RETURN ret;

	park_point();
	if (r->op != OP_NONE)
		return -1; /* its cookie is still out */
	ck.as_64 = idx;
	rt = e->peer_target;
	rt.virtual_address += (DAT_VADDR)slot * SOAK_MAX_SIZE;
	rt.segment_length = (DAT_SEG_LENGTH)len;
	switch (op) {
	case OP_SEND:
		t = ft_lmr_iov(&e->sbuf, (size_t)slot * SOAK_MAX_SIZE, len);
		ret = dat_ep_post_send(e->ep.ep, 1, &t, ck,
		                       DAT_COMPLETION_DEFAULT_FLAG);
		break;
	case OP_WRITE:
		t = ft_lmr_iov(&e->wbuf, (size_t)slot * SOAK_MAX_SIZE, len);
		ret = dat_ep_post_rdma_write(e->ep.ep, 1, &t, ck, &rt,
		                             DAT_COMPLETION_DEFAULT_FLAG);
		break;
	default:
		t = ft_lmr_iov(&e->dbuf, (size_t)slot * SOAK_MAX_SIZE, len);
		ret = dat_ep_post_rdma_read(e->ep.ep, 1, &t, ck, &rt,
		                            DAT_COMPLETION_DEFAULT_FLAG);
		break;
	}
	if (ret != DAT_SUCCESS) {
		if (!atomic_load(&killed) && !e->conn_ended)
			FT_CHECK(0, "EP %d: posting request %llu = %s", e->id,
			         (unsigned long long)idx, ft_ret_str(ret));
		e->errs++;
		return -1;
	}
	r->idx = idx;
	r->op = op;
	r->slot = slot;
	r->len = len;
	r->seed = seed;
	e->s.req_posted++;
	return 0;
}

/* Start something new, if there is room: a Send, an RDMA Write, or the
 * read-back of a written slot. */
static void post_some(struct soak_ep *e)
{
	int dir = is_client, i, choice = (int)(rnd(e) % 3);

	/* A written slot is read back first. */
	for (i = 0; i < SOAK_RDMA; i++)
		if (e->rdma_state[i] == 3 &&
		    post_req(e, OP_READ, i, e->rdma_len[i],
		             msg_seed(dir, e->id, 1, e->rdma_seq[i])) == 0)
			e->rdma_state[i] = 2;
	if (choice < 2) {
		int slot = (int)(e->sends % SOAK_SENDS);
		uint64_t seed = msg_seed(dir, e->id, 0, e->sends);
		size_t len = msg_size(seed);

		if (e->send_busy[slot])
			return;
		/* -C: the peer may not have the receive for it yet. */
		if (credit && e->sends >= e->s.recv_done + SOAK_CREDIT)
			return;
		msg_fill((uint8_t *)e->sbuf.buf + (size_t)slot * SOAK_MAX_SIZE,
		         len, seed, e->sends);
		if (post_req(e, OP_SEND, slot, len, seed) == 0) {
			e->send_busy[slot] = 1;
			e->sends++;
		}
	} else {
		for (i = 0; i < SOAK_RDMA && e->rdma_state[i] != 0; i++)
			;
		if (i == SOAK_RDMA)
			return;
		{
			uint64_t seed = msg_seed(dir, e->id, 1, e->writes);
			size_t len = msg_size(seed);

			/* The read-back lands on zeros, not on old data. */
			memset((uint8_t *)e->dbuf.buf +
			               (size_t)i * SOAK_MAX_SIZE,
			       0, len);
			ft_fill((uint8_t *)e->wbuf.buf +
			                (size_t)i * SOAK_MAX_SIZE,
			        len, seed);
			if (post_req(e, OP_WRITE, i, len, seed) == 0) {
				e->rdma_state[i] = 1;
				e->rdma_seq[i] = e->writes++;
				e->rdma_len[i] = len;
			}
		}
	}
}

/* ---- completions --------------------------------------------------------- */

/*
 * A success after the connection's end on an EVD that has both. After
 * our own dat_ep_disconnect that breaks dat_ep_disconnect(3). When the
 * peer died, DAT promises nothing: a warning (sockets may report a
 * message that came in before the end only after it).
 */
static void late_success(struct soak_ep *e, const char *what, uint64_t idx)
{
	if (atomic_load(&killed)) {
		FT_WARN("EP %d: %s %llu succeeded after the connection's end "
		        "(the peer was killed)",
		        e->id, what, (unsigned long long)idx);
		return;
	}
	e->after_err++;
	FT_CHECK(0, "EP %d: %s %llu succeeded after the connection's end",
	         e->id, what, (unsigned long long)idx);
}

static void on_recv(struct soak_ep *e, const DAT_DTO_COMPLETION_EVENT_DATA *d)
{
	uint64_t idx = d->user_cookie.as_64;
	int slot = (int)(idx % SOAK_RECVS);
	char why[128];

	if (idx >= e->s.recv_posted || !e->s.recv_slot_busy[slot] ||
	    e->s.recv_slot_idx[slot] != idx) {
		e->dup++;
		FT_CHECK(0,
		         "EP %d: receive %llu completed again (or never "
		         "posted)",
		         e->id, (unsigned long long)idx);
		return;
	}
	e->s.recv_slot_busy[slot] = 0;
	e->s.recv_done++;
	if (e->s.recv_done > 1 && idx < e->s.recv_max) {
		if (e->ooo++ < 5)
			FT_CHECK(0,
			         "EP %d: receive %llu completed after receive "
			         "%llu",
			         e->id, (unsigned long long)idx,
			         (unsigned long long)e->s.recv_max);
	}
	if (idx > e->s.recv_max || e->s.recv_done == 1)
		e->s.recv_max = idx;
	if (d->status != DAT_DTO_SUCCESS) {
		e->s.recv_err = 1;
		if (d->status == DAT_DTO_ERR_FLUSHED)
			e->flushed++;
		else
			e->failed++;
		return;
	}
	if (e->s.recv_err) {
		e->after_err++;
		FT_CHECK(0, "EP %d: receive %llu succeeded after an error",
		         e->id, (unsigned long long)idx);
	} else if (e->shared && e->conn_ended) {
		late_success(e, "receive", idx);
	}
	/* Receive idx holds message idx of the peer. */
	{
		uint64_t seed = msg_seed(!is_client, e->id, 0, idx);
		size_t len = msg_size(seed);
		uint8_t *p =
		        (uint8_t *)e->rbuf.buf + (size_t)slot * SOAK_MAX_SIZE;

		if (d->transfered_length != len) {
			e->bad++;
			FT_CHECK(0, "EP %d: receive %llu: %llu bytes, not %zu",
			         e->id, (unsigned long long)idx,
			         (unsigned long long)d->transfered_length, len);
		} else if (msg_check(p, len, seed, idx, why, sizeof(why))) {
			e->bad++;
			FT_CHECK(0, "EP %d: receive %llu %s", e->id,
			         (unsigned long long)idx, why);
		} else {
			e->bytes += len;
		}
	}
	e->s.recv_ok++;
}

static void on_req(struct soak_ep *e, const DAT_DTO_COMPLETION_EVENT_DATA *d)
{
	uint64_t idx = d->user_cookie.as_64;
	struct req *r = &e->ring[idx % SOAK_RING];
	int ok = d->status == DAT_DTO_SUCCESS;

	if (idx >= e->s.req_posted || r->op == OP_NONE || r->idx != idx) {
		e->dup++;
		FT_CHECK(0,
		         "EP %d: request %llu completed again (or never "
		         "posted)",
		         e->id, (unsigned long long)idx);
		return;
	}
	if (idx < e->s.req_max) {
		if (e->ooo++ < 5)
			FT_CHECK(0,
			         "EP %d: request %llu (%s) completed after "
			         "request %llu",
			         e->id, (unsigned long long)idx,
			         ft_dto_op_str(d->operation),
			         (unsigned long long)e->s.req_max);
	} else {
		e->s.req_max = idx;
	}
	if (!ok) {
		e->s.req_err = 1;
		if (d->status == DAT_DTO_ERR_FLUSHED)
			e->flushed++;
		else
			e->failed++;
	} else if (e->s.req_err) {
		e->after_err++;
		FT_CHECK(0, "EP %d: request %llu succeeded after an error",
		         e->id, (unsigned long long)idx);
	} else if (e->shared && e->conn_ended) {
		late_success(e, "request", idx);
	}
	switch (r->op) {
	case OP_SEND:
		e->send_busy[r->slot] = 0;
		break;
	case OP_WRITE:
		e->rdma_state[r->slot] = ok ? 3 : 0;
		break;
	default:
		e->rdma_state[r->slot] = 0;
		if (ok) {
			const uint8_t *p = (uint8_t *)e->dbuf.buf +
			                   (size_t)r->slot * SOAK_MAX_SIZE;
			long bad = ft_pattern_mismatch(p, r->len, r->seed);

			if (bad >= 0) {
				char why[160];

				rdma_diff_note(p, r->len, r->seed, bad, why,
				               sizeof(why));
				e->bad++;
				FT_CHECK(0, "EP %d: RDMA Read %llu: %s", e->id,
				         (unsigned long long)idx, why);
			} else {
				e->bytes += r->len;
			}
		}
		break;
	}
	r->op = OP_NONE;
}

static int req_outstanding(const struct soak_ep *e)
{
	int i, n = 0;

	for (i = 0; i < SOAK_RING; i++)
		n += e->ring[i].op != OP_NONE;
	return n;
}

static int recv_outstanding(const struct soak_ep *e)
{
	int i, n = 0;

	for (i = 0; i < SOAK_RECVS; i++)
		n += e->s.recv_slot_busy[i];
	return n;
}

/*
 * Name what is still out at the end, each with its cookie, and the last
 * ones posted: a lost completion then says which DTO it was. How many.
 */
static int report_outstanding(const struct soak_ep *e, const char *when)
{
	static const char *const kind[] = {"?", "Send", "RDMA Write",
	                                   "RDMA Read"};
	int i, n = req_outstanding(e) + recv_outstanding(e);

	if (n == 0)
		return 0;
	ft_log("EP %d, %s: %d DTOs never completed; %llu requests and %llu "
	       "receives were posted, %llu flushed, %llu failed",
	       e->id, when, n, (unsigned long long)e->s.req_posted,
	       (unsigned long long)e->s.recv_posted,
	       (unsigned long long)e->flushed, (unsigned long long)e->failed);
	for (i = 0; i < SOAK_RING; i++)
		if (e->ring[i].op != OP_NONE)
			ft_log("  %s, cookie %llu, %zu bytes",
			       kind[e->ring[i].op],
			       (unsigned long long)e->ring[i].idx,
			       e->ring[i].len);
	for (i = 0; i < SOAK_RECVS; i++)
		if (e->s.recv_slot_busy[i])
			ft_log("  receive, cookie %llu",
			       (unsigned long long)e->s.recv_slot_idx[i]);
	return n;
}

/* Whether a Send, an RDMA Write, an RDMA Read and a receive are all out
 * (posted, their completions not yet taken). */
static int all_kinds_out(const struct soak_ep *e)
{
	int i, have[4] = {0, 0, 0, 0};

	for (i = 0; i < SOAK_RING; i++)
		have[e->ring[i].op] = 1;
	return have[OP_SEND] && have[OP_WRITE] && have[OP_READ] &&
	       recv_outstanding(e) > 0;
}

/*
 * Kill mode: once the kill is near, the first moment every kind of DTO
 * is out, this thread stops taking completions until the peer is dead:
 * the kill finds all of them outstanding here.
 */
static void wait_for_kill(struct soak_ep *e)
{
	if (!atomic_load(&arm) || atomic_load(&e->armed) || !all_kinds_out(e))
		return;
	atomic_store(&e->armed, 1);
	while (!atomic_load(&killed))
		usleep(100);
}

/* One event of e's EVDs. 1 when it was a completion of a receive. */
static int on_event(struct soak_ep *e, const DAT_EVENT *ev)
{
	const DAT_DTO_COMPLETION_EVENT_DATA *d =
	        &ev->event_data.dto_completion_event_data;

	if (kill_rounds)
		atomic_store_explicit(&e->event_us, ft_now_us(),
		                      memory_order_relaxed);

	switch (ev->event_number) {
	case DAT_DTO_COMPLETION_EVENT:
		if (d->operation == DAT_DTO_RECEIVE) {
			on_recv(e, d);
			return 1;
		}
		on_req(e, d);
		return 0;
	case DAT_CONNECTION_EVENT_DISCONNECTED:
	case DAT_CONNECTION_EVENT_BROKEN:
		if (!e->conn_ended) {
			e->end_us = ft_now_us();
			e->end_ev = ev->event_number;
		}
		e->conn_ended = 1;
		/* fall through */
	default:
		if (!atomic_load(&killed) && !atomic_load(&stopping))
			FT_CHECK(0, "EP %d: %s mid-run", e->id,
			         ft_event_desc(ev));
		return 0;
	}
}

/* Take what an EVD holds; how many events. */
static int drain_evd(struct soak_ep *e, DAT_EVD_HANDLE evd, int repost)
{
	DAT_EVENT ev;
	int n = 0;

	while (dat_evd_dequeue(evd, &ev) == DAT_SUCCESS) {
		n++;
		if (on_event(e, &ev) && repost && !e->s.recv_err &&
		    !e->conn_ended)
			post_recv(e);
	}
	return n;
}

/* Take what the EVDs hold; 1 when anything came. wait_us > 0: wait that
 * long on the receive EVD when nothing did. */
static int poll_once(struct soak_ep *e, int repost, DAT_TIMEOUT wait_us)
{
	DAT_EVENT ev;
	int got;

	park_point();
	got = drain_evd(e, e->ep.recv_evd, repost);
	if (!e->shared) {
		got += drain_evd(e, e->ep.req_evd, repost);
		got += drain_evd(e, e->ep.conn_evd, repost);
	}
	/* Now and then wait instead: the progress thread drives the CQs
	 * meanwhile, and a dequeue may meet it. */
	if (!got && wait_us > 0 &&
	    ft_wait(e->ep.recv_evd, wait_us, &ev) == DAT_SUCCESS) {
		got = 1;
		if (on_event(e, &ev) && repost && !e->s.recv_err &&
		    !e->conn_ended)
			post_recv(e);
	}
	return got > 0;
}

/*
 * Now and then a consumer is busy elsewhere for a moment: the progress
 * thread then drives its CQs, and its next dequeue meets it there.
 */
static void pause_some(struct soak_ep *e, unsigned one_in)
{
	if (rnd(e) % one_in == 0)
		usleep((useconds_t)(rnd(e) % 2000));
}

/* Why a thread left its traffic loop (soak_ep.left). */
enum soak_left {
	LEFT_NOT,
	LEFT_STOPPING,
	LEFT_END,
	LEFT_REQ_ERR,
	LEFT_RECV_ERR,
	LEFT_DEADLINE,
};

static const char *left_desc(int left)
{
	static const char *const desc[] = {
	        "it is still in its traffic loop",
	        "it left its traffic loop: told to stop",
	        "it left its traffic loop: the connection ended",
	        "it left its traffic loop: a request failed",
	        "it left its traffic loop: a receive failed",
	        "it left its traffic loop: the run's time was up",
	};

	return left >= LEFT_NOT && left <= LEFT_DEADLINE ? desc[left] : "?";
}

static void *ep_main(void *arg)
{
	struct soak_ep *e = arg;
	unsigned idle = 0;
	uint64_t end;
	int left = LEFT_NOT;

	/* Traffic until the duration is up (or the peer is killed). */
	while (left == LEFT_NOT) {
		left = atomic_load(&stopping)       ? LEFT_STOPPING
		       : e->conn_ended              ? LEFT_END
		       : e->s.req_err               ? LEFT_REQ_ERR
		       : e->s.recv_err              ? LEFT_RECV_ERR
		       : ft_now_us() >= deadline_us ? LEFT_DEADLINE
		                                    : LEFT_NOT;
		if (left != LEFT_NOT)
			break;
		if (kill_rounds)
			atomic_store_explicit(&e->pass_us, ft_now_us(),
			                      memory_order_relaxed);
		post_some(e);
		if (kill_rounds)
			wait_for_kill(e);
		if (poll_once(e, 1, (idle++ % 64) == 63 ? 200 : 0))
			idle = 0;
		pause_some(e, 512);
		if (kill_rounds)
			atomic_store_explicit(&e->pass_us, 0,
			                      memory_order_relaxed);
	}
	atomic_store(&e->left, left);
	/* What is out completes (kill mode: fails or is flushed). */
	end = ft_now_us() + SOAK_END_US;
	while (req_outstanding(e) > 0 && ft_now_us() < end) {
		poll_once(e, !kill_rounds, 0);
		pause_some(e, 8);
	}
	atomic_store(&e->my_sent, (long long)e->sends);
	if (kill_rounds) {
		while (recv_outstanding(e) > 0 && ft_now_us() < end) {
			poll_once(e, 0, 0);
			pause_some(e, 8);
		}
		return NULL;
	}
	/* Every message the peer sent arrives. */
	while (ft_now_us() < end) {
		long long want = atomic_load(&e->peer_sent);

		if (want >= 0 && e->s.recv_done >= (uint64_t)want)
			break;
		poll_once(e, 1, 1000);
	}
	return NULL;
}

/* ---- setup and the end --------------------------------------------------- */

static void ep_setup(struct soak_ep *e, int id)
{
	DAT_EP_ATTR attr;
	const DAT_MEM_PRIV_FLAGS priv = DAT_MEM_PRIV_ALL_FLAG;
	size_t big = (size_t)SOAK_MAX_SIZE;
	int i;

	memset(e, 0, sizeof(*e));
	e->id = id;
	e->rng = mix64((uint64_t)id * 7919 + (uint64_t)getpid());
	atomic_store(&e->my_sent, -1);
	atomic_store(&e->peer_sent, -1);
	ft_ep_attr_default(&ia, &attr);
	attr.max_recv_dtos = SOAK_RECVS;
	attr.max_request_dtos = SOAK_RING;
	attr.max_message_size = big;
	attr.max_rdma_size = big;
	FT_REQUIRE(ia.attr.max_message_size >= big &&
	                   ia.attr.max_rdma_size >= big,
	           "the IA takes 256 KiB messages and RDMA");
	/*
	 * Odd Endpoints: one EVD for all three streams, where completions
	 * that happened before the connection's end come before its event
	 * (dat_ep_disconnect(3)), and where posting that event reads the
	 * CQ while this thread dequeues.
	 */
	e->shared = id % 2;
	if (e->shared) {
		DAT_EVD_HANDLE evd;

		FT_DAT_OK(ft_evd_create(
		        &ia, 4 * SOAK_RING,
		        DAT_EVD_DTO_FLAG | DAT_EVD_CONNECTION_FLAG, &evd));
		e->ep.recv_evd = e->ep.req_evd = e->ep.conn_evd = evd;
		FT_DAT_OK(dat_ep_create(ia.ia, ia.pz, evd, evd, evd, &attr,
		                        &e->ep.ep));
	} else {
		FT_DAT_OK(
		        ft_ep_create(&ia, ia.pz, &attr, 4 * SOAK_RING, &e->ep));
	}
	FT_DAT_OK(ft_mr_create(&ia, ia.pz, SOAK_RECVS * big, priv, &e->rbuf));
	FT_DAT_OK(ft_mr_create(&ia, ia.pz, SOAK_SENDS * big, priv, &e->sbuf));
	FT_DAT_OK(ft_mr_create(&ia, ia.pz, SOAK_RDMA * big, priv, &e->wbuf));
	FT_DAT_OK(ft_mr_create(&ia, ia.pz, SOAK_RDMA * big, priv, &e->dbuf));
	FT_DAT_OK(ft_mr_create(&ia, ia.pz, SOAK_RDMA * big, priv, &e->target));
	/* Receives first: the peer's first Sends find them. */
	for (i = 0; i < SOAK_RECVS; i++)
		post_recv(e);
}

static void ep_free(struct soak_ep *e)
{
	if (e->shared) {
		FT_DAT_CHECK(dat_ep_free(e->ep.ep));
		FT_DAT_CHECK(dat_evd_free(e->ep.recv_evd));
	} else {
		ft_ep_free(&e->ep);
	}
	ft_mr_free(&e->rbuf);
	ft_mr_free(&e->sbuf);
	ft_mr_free(&e->wbuf);
	ft_mr_free(&e->dbuf);
	ft_mr_free(&e->target);
}

/* Connect every Endpoint and swap the RDMA targets. */
static void connect_all(void)
{
	int i;

	for (i = 0; i < neps; i++) {
		struct ft_listener l;
		DAT_RMR_TRIPLET t = ft_rmr_iov(&eps[i].target, 0,
		                               SOAK_RDMA * SOAK_MAX_SIZE);

		if (is_client) {
			FT_REQUIRE(ft_client_connect(&ia, &eps[i].ep),
			           "EP %d connected", i);
			FT_REQUIRE(ft_oob_send_rmr(&t) == 0 &&
			                   ft_oob_recv_rmr(
			                           &eps[i].peer_target) == 0,
			           "EP %d: RDMA targets swapped", i);
		} else {
			memset(&l, 0, sizeof(l));
			FT_REQUIRE(ft_server_connect(&ia, &eps[i].ep, &l),
			           "EP %d connected", i);
			ft_listener_free(&l);
			FT_REQUIRE(ft_oob_recv_rmr(&eps[i].peer_target) == 0 &&
			                   ft_oob_send_rmr(&t) == 0,
			           "EP %d: RDMA targets swapped", i);
		}
	}
}

static void start_threads(void)
{
	int i;

	for (i = 0; i < neps; i++)
		FT_REQUIRE(pthread_create(&eps[i].thr, NULL, ep_main,
		                          &eps[i]) == 0,
		           "thread %d started", i);
}

/* Totals over the Endpoints; prints them. */
struct totals {
	uint64_t bytes, ooo, lost, dup, bad, after_err, recvs, reqs;
	uint64_t flushed, failed;
};

static void add_totals(struct totals *t, const struct soak_ep *e)
{
	t->bytes += e->bytes;
	t->ooo += e->ooo;
	t->lost += e->lost;
	t->dup += e->dup;
	t->bad += e->bad;
	t->after_err += e->after_err;
	t->recvs += e->s.recv_done;
	t->reqs += e->s.req_posted;
	t->flushed += e->flushed;
	t->failed += e->failed;
}

static void print_totals(const char *what, const struct totals *t)
{
	printf("%s: %llu bytes verified, %llu receives and %llu requests "
	       "completed (%llu flushed, %llu failed); out-of-order %llu, "
	       "lost %llu, duplicate %llu, corrupt %llu, success after "
	       "error %llu\n",
	       what, (unsigned long long)t->bytes, (unsigned long long)t->recvs,
	       (unsigned long long)t->reqs, (unsigned long long)t->flushed,
	       (unsigned long long)t->failed, (unsigned long long)t->ooo,
	       (unsigned long long)t->lost, (unsigned long long)t->dup,
	       (unsigned long long)t->bad, (unsigned long long)t->after_err);
}

static void check_totals(const char *what, const struct totals *t)
{
	FT_CHECK(t->ooo == 0, "%s: out-of-order completions: %llu", what,
	         (unsigned long long)t->ooo);
	FT_CHECK(t->lost == 0, "%s: lost completions: %llu", what,
	         (unsigned long long)t->lost);
	FT_CHECK(t->dup == 0, "%s: duplicate completions: %llu", what,
	         (unsigned long long)t->dup);
	FT_CHECK(t->bad == 0, "%s: corrupt or mis-sized data: %llu", what,
	         (unsigned long long)t->bad);
	FT_CHECK(t->after_err == 0, "%s: successes after an error: %llu", what,
	         (unsigned long long)t->after_err);
	FT_CHECK(t->bytes > 0, "%s: %llu bytes verified", what,
	         (unsigned long long)t->bytes);
}

/* After the traffic: how many Sends each side made, then the end. */
static void normal_end(void)
{
	int i;

	for (i = 0; i < neps; i++) {
		while (atomic_load(&eps[i].my_sent) < 0)
			usleep(1000);
		FT_REQUIRE(ft_oob_send_u64(
		                   (uint64_t)atomic_load(&eps[i].my_sent)) == 0,
		           "EP %d: Sends counted", i);
	}
	for (i = 0; i < neps; i++) {
		uint64_t v = 0;

		FT_REQUIRE(ft_oob_recv_u64(&v) == 0, "EP %d: peer's Sends", i);
		atomic_store(&eps[i].peer_sent, (long long)v);
	}
	for (i = 0; i < neps; i++) {
		struct soak_ep *e = &eps[i];
		long long want;

		pthread_join(e->thr, NULL);
		want = atomic_load(&e->peer_sent);
		e->lost += (uint64_t)req_outstanding(e);
		if (e->s.recv_done < (uint64_t)want)
			e->lost += (uint64_t)want - e->s.recv_done;
		FT_CHECK(e->s.recv_done == (uint64_t)want,
		         "EP %d: %llu of the peer's %lld messages received", i,
		         (unsigned long long)e->s.recv_done, want);
	}
	atomic_store(&stopping, 1);
	FT_REQUIRE(ft_oob_sync() == 0, "both sides done");
	/* The receives left are flushed, in posting order. */
	for (i = 0; i < neps; i++) {
		struct soak_ep *e = &eps[i];
		uint64_t end = ft_now_us() + SOAK_END_US;
		int left = recv_outstanding(e);

		if (is_client)
			FT_DAT_CHECK(dat_ep_disconnect(
			        e->ep.ep, DAT_CLOSE_GRACEFUL_FLAG));
		while ((recv_outstanding(e) > 0 || !e->conn_ended) &&
		       ft_now_us() < end)
			poll_once(e, 0, 1000);
		FT_CHECK(e->conn_ended, "EP %d: the connection ended", i);
		FT_CHECK(recv_outstanding(e) == 0,
		         "EP %d: the %d receives left were flushed (%d not)", i,
		         left, recv_outstanding(e));
		(void)report_outstanding(e, "at the end");
		e->lost += (uint64_t)recv_outstanding(e);
	}
}

static void run_normal(void)
{
	struct totals t;
	int i;

	ft_ia_open(ft_opts.ia_name, &ia);
	for (i = 0; i < neps; i++)
		ep_setup(&eps[i], i);
	FT_REQUIRE(ft_oob_setup() == 0, "side channel");
	connect_all();
	FT_REQUIRE(ft_oob_sync() == 0, "both sides connected");
	deadline_us = ft_now_us() + (uint64_t)(duration_s * 1e6);
	start_threads();
	normal_end();
	memset(&t, 0, sizeof(t));
	for (i = 0; i < neps; i++)
		add_totals(&t, &eps[i]);
	print_totals(is_client ? "client" : "server", &t);
	check_totals(is_client ? "client" : "server", &t);
	ft_oob_close();
	for (i = 0; i < neps; i++)
		ep_free(&eps[i]);
	ft_ia_close(&ia);
}

/* ---- kill mode ----------------------------------------------------------- */

/* Start the peer; -P: *park_rd is the end of the pipe it says it
 * parked on. */
static pid_t start_peer(long round, int *park_rd)
{
	char port[16], n[16], pfd[16];
	int pp[2] = {-1, -1};
	pid_t pid;

	if (park) {
		FT_REQUIRE(pipe(pp) == 0,
		           "round %ld: a pipe for the peer to say it parked",
		           round);
		(void)fcntl(pp[0], F_SETFD, FD_CLOEXEC);
	}

	snprintf(port, sizeof(port), "%u", ft_opts.oob_port);
	snprintf(n, sizeof(n), "%d", neps);
	pid = fork();
	if (pid == 0) {
		/* A client for an hour: it is killed long before. */
		char *argv[] = {self_argv[0], "-q", "-D", NULL,   "-E", port,
		                "-n",         n,    "-d", "3600", "-T", "3700",
		                "127.0.0.1",  NULL, NULL, NULL,   NULL};
		int fd = open("/dev/null", O_WRONLY), a = 12;

		argv[3] = (char *)ft_opts.ia_name;
		/* Its Sends keep to the credit too. */
		if (credit)
			argv[a++] = "-C";
		/* Parked at SIGUSR1; no thread of dapl-ofi's in libfabric
		 * meanwhile. */
		if (park) {
			snprintf(pfd, sizeof(pfd), "%d", pp[1]);
			argv[a++] = "-p";
			argv[a++] = pfd;
			setenv("DAPL_OFI_PROGRESS", "none", 1);
		}
		argv[a] = "127.0.0.1";
		/* Never outlives the survivor (its watchdog, say). */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (fd >= 0) {
			dup2(fd, 1);
			close(fd);
		}
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	if (park) {
		close(pp[1]);
		*park_rd = pp[0];
	}
	return pid;
}

/*
 * shm names an endpoint's region in /dev/shm after its process's pid and
 * removes it when the endpoint closes; a killed peer leaves its regions
 * behind (dapl-ofi(7)), some 16 MiB each. Remove the dead peer's.
 */
static void shm_leftovers(pid_t peer)
{
	char pre[32], path[300];
	struct dirent *d;
	size_t len;
	DIR *dir;
	int n = 0;

	len = (size_t)snprintf(pre, sizeof(pre), "%d_", (int)peer);
	dir = opendir("/dev/shm");
	if (dir == NULL)
		return;
	while ((d = readdir(dir)) != NULL) {
		if (strncmp(d->d_name, pre, len) != 0)
			continue;
		snprintf(path, sizeof(path), "/dev/shm/%s", d->d_name);
		if (unlink(path) == 0)
			n++;
	}
	closedir(dir);
	if (n > 0)
		ft_log("the killed peer's shared memory regions removed: %d",
		       n);
}

/* -P: have the peer park, and wait for it to say so on fd. */
static void park_peer(pid_t peer, int fd, long round)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	uint64_t t0 = ft_now_us();
	char c = 0;
	int n;

	kill(peer, SIGUSR1);
	n = poll(&p, 1, (int)(SOAK_PARK_US / 1000));
	FT_CHECK(n == 1 && read(fd, &c, 1) == 1 && c == 'p',
	         "round %ld: the peer parked outside DAT calls (%llu us)",
	         round, (unsigned long long)(ft_now_us() - t0));
	close(fd);
}

/* Kill mode, over the rounds: the slowest end, and how the ends came. */
static uint64_t worst_end_us; /* over the rounds */
static long broken_ends, disc_ends;

static int kill_round(long round, struct totals *all)
{
	struct totals t;
	pid_t peer;
	int i, status, armed;
	long delay_ms;
	uint64_t kill_us, arm_end, slowest = 0;
	int park_rd = -1;

	atomic_store(&stopping, 0);
	atomic_store(&killed, 0);
	atomic_store(&arm, 0);
	peer = start_peer(round, &park_rd);
	FT_REQUIRE(peer > 0, "round %ld: peer started", round);
	ft_ia_open(ft_opts.ia_name, &ia);
	for (i = 0; i < neps; i++)
		ep_setup(&eps[i], i);
	FT_REQUIRE(ft_oob_setup() == 0, "side channel");
	connect_all();
	FT_REQUIRE(ft_oob_sync() == 0, "both sides connected");
	deadline_us = ft_now_us() + 3600000000ull;
	start_threads();
	delay_ms = 300 + (long)(mix64((uint64_t)round ^ ft_now_us()) % 1200);
	usleep((useconds_t)delay_ms * 1000);
	/* Each thread stops once it has every kind of DTO out. */
	atomic_store(&arm, 1);
	arm_end = ft_now_us() + SOAK_ARM_US;
	do {
		for (armed = 0, i = 0; i < neps; i++)
			armed += atomic_load(&eps[i].armed);
		if (armed < neps)
			usleep(200);
	} while (armed < neps && ft_now_us() < arm_end);
	for (i = 0; i < neps; i++) {
		struct soak_ep *e = &eps[i];
		uint64_t now = ft_now_us(), pass, ev;

		if (atomic_load(&e->armed)) {
			FT_CHECK(1,
			         "round %ld, EP %d: a Send, an RDMA Write, an "
			         "RDMA Read and receives outstanding at the "
			         "kill",
			         round, i);
			continue;
		}
		/* What the thread was doing, for the log. */
		pass = atomic_load_explicit(&e->pass_us, memory_order_relaxed);
		ev = atomic_load_explicit(&e->event_us, memory_order_relaxed);
		FT_CHECK(0,
		         "round %ld, EP %d: a Send, an RDMA Write, an RDMA "
		         "Read and receives outstanding at the kill (not "
		         "within %u ms of asking: %s; %s; its last event "
		         "%llu ms ago)",
		         round, i, SOAK_ARM_US / 1000,
		         left_desc(atomic_load(&e->left)),
		         pass == 0 ? "between passes of it"
		         : now - pass > 1000000
		                 ? "inside one pass for over a second "
		                   "(a call that does not return)"
		                 : "inside a pass",
		         ev == 0 ? 0ull
		                 : (unsigned long long)((now - ev) / 1000));
	}
	if (park)
		park_peer(peer, park_rd, round);
	kill_us = ft_now_us();
	kill(peer, SIGKILL);
	atomic_store(&killed, 1);
	waitpid(peer, &status, 0);
	shm_leftovers(peer);
	atomic_store(&stopping, 1);
	memset(&t, 0, sizeof(t));
	for (i = 0; i < neps; i++) {
		struct soak_ep *e = &eps[i];
		uint64_t end = ft_now_us() + SOAK_END_US;
		DAT_EVENT ev;

		pthread_join(e->thr, NULL);
		/* The end of the connection is reported. */
		while (!e->conn_ended && ft_now_us() < end)
			if (ft_wait(e->ep.conn_evd, 1000000, &ev) ==
			    DAT_SUCCESS)
				on_event(e, &ev);
		FT_CHECK(e->conn_ended, "round %ld, EP %d: the end reported",
		         round, i);
		if (e->conn_ended) {
			uint64_t took = e->end_us - kill_us;

			FT_CHECK(took <= SOAK_END_LIMIT_US,
			         "round %ld, EP %d: %s %llu us after the kill "
			         "(at most %u)",
			         round, i, ft_event_str(e->end_ev),
			         (unsigned long long)took, SOAK_END_LIMIT_US);
			if (took > slowest)
				slowest = took;
			if (e->end_ev == DAT_CONNECTION_EVENT_BROKEN)
				broken_ends++;
			else
				disc_ends++;
		}
		/* Anything reported late is still counted. */
		poll_once(e, 0, 0);
		e->lost += (uint64_t)report_outstanding(e, "after the kill");
		add_totals(&t, e);
	}
	if (slowest > worst_end_us)
		worst_end_us = slowest;
	ft_log("round %ld: peer killed after %ld ms; every connection's end "
	       "within %llu us",
	       round, delay_ms, (unsigned long long)slowest);
	print_totals("  this round", &t);
	all->bytes += t.bytes;
	all->ooo += t.ooo;
	all->lost += t.lost;
	all->dup += t.dup;
	all->bad += t.bad;
	all->after_err += t.after_err;
	all->recvs += t.recvs;
	all->reqs += t.reqs;
	all->flushed += t.flushed;
	all->failed += t.failed;
	ft_oob_close();
	for (i = 0; i < neps; i++)
		ep_free(&eps[i]);
	ft_ia_close(&ia);
	return 0;
}

static void run_kill(void)
{
	struct totals all;
	uint64_t end = ft_now_us() + (uint64_t)(duration_s * 1e6);
	long r;

	memset(&all, 0, sizeof(all));
	/* A peer that dies leaves a socket: no SIGPIPE. */
	signal(SIGPIPE, SIG_IGN);
	for (r = 0; r < kill_rounds; r++) {
		kill_round(r, &all);
		if (ft_now_us() >= end)
			break;
	}
	printf("peer kill, %ld rounds: ", r < kill_rounds ? r + 1 : r);
	print_totals("survivor", &all);
	printf("connection ends: %ld BROKEN, %ld DISCONNECTED; the slowest "
	       "%llu us after the kill (limit %u)\n",
	       broken_ends, disc_ends, (unsigned long long)worst_end_us,
	       SOAK_END_LIMIT_US);
	check_totals("survivor", &all);
}

/* ---- options ------------------------------------------------------------- */

static int opt(int o, const char *arg)
{
	char *end;
	double v;

	switch (o) {
	case 'd':
		v = strtod(arg, &end);
		if (end == arg || v <= 0)
			return -1;
		if (*end == 'm')
			v *= 60;
		else if (*end == 'h')
			v *= 3600;
		else if (*end != 's' && *end != '\0')
			return -1;
		duration_s = v;
		return 0;
	case 'n':
		neps = atoi(arg);
		return neps >= 1 && neps <= SOAK_MAX_EPS ? 0 : -1;
	case 'K':
		kill_rounds = atol(arg);
		return kill_rounds >= 1 ? 0 : -1;
	case 'C':
		credit = 1;
		return 0;
	case 'P':
		park = 1;
		return 0;
	case 'p':
		park_fd = atoi(arg);
		return park_fd > 2 ? 0 : -1;
	default:
		return -1;
	}
}

int main(int argc, char **argv)
{
	static const struct ft_extra_opts extra = {
	        .optstring = "d:n:K:CPp:",
	        .handler = opt,
	        .usage = "  -d DUR        how long the traffic runs: seconds, "
	                 "or N[s|m|h] (default 10 s;\n"
	                 "                CI: 60 s; release checks: -d 10m "
	                 "or more)\n"
	                 "  -n EPS        Endpoints, one thread each "
	                 "(default 4)\n"
	                 "  -K ROUNDS     peer kill: start a peer, kill it "
	                 "mid-transfer, check the\n"
	                 "                survivor's completions; ROUNDS "
	                 "times, within the duration\n"
	                 "  -C            credit: Sends only into receives "
	                 "the peer has posted\n"
	                 "                (the peer of -K gets it too)\n"
	                 "  -P            with -K: park the peer outside "
	                 "DAT calls, then kill it\n",
	};
	unsigned need;

	self_argv = argv;
	ft_init(argc, argv, "dat_soak",
	        "mixed DTOs on several Endpoints and threads: exactly once, "
	        "posting order, every byte",
	        &extra);
	is_client = ft_is_client();
	FT_REQUIRE(!(kill_rounds && is_client),
	           "-K runs alone: no server address");
	FT_REQUIRE(!park || kill_rounds, "-P goes with -K");
	/* -P's peer: parks at SIGUSR1 (park_point). */
	if (park_fd >= 0) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_sigusr1;
		sa.sa_flags = SA_RESTART;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGUSR1, &sa, NULL);
	}
	/* The watchdog outlasts the traffic. */
	need = (unsigned)duration_s + 120;
	if (ft_opts.watchdog > 0 && (unsigned)ft_opts.watchdog < need)
		alarm(need);
	if (kill_rounds)
		run_kill();
	else
		run_normal();
	return ft_finish();
}
