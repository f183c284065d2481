/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * dat_evd: Event Dispatchers and Consumer Notification Objects.  Creation
 * and query, software events (dat_evd_post_se) and their order, dequeue of
 * an empty EVD, waits with microsecond timeouts (DAT_TIMEOUT_EXPIRED) and
 * thresholds, a waiter woken from another thread, a full EVD refusing a
 * software event, overflow by provider events reported as
 * DAT_ASYNC_ERROR_EVD_OVERFLOW on the async EVD, enable/disable,
 * set/clear unwaitable (DAT_ABORT for a waiter), resize, and CNOs: wait,
 * timeout, trigger on enable and modify_cno, proxy agent, the CNO's file
 * descriptor.  Single process; the overflow part uses two EPs of one IA
 * connected over loopback.
 */
#include "config.h"

#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dat2/dat_registry.h>

#include "shared.h"

/* Exported by libdat2 (dats_get_ia_handle(3)); not in the public headers. */
extern DAT_RETURN DAT_API dats_get_ia_handle(DAT_IA_HANDLE, DAT_IA_HANDLE *);

static struct ft_ia ia;

static DAT_RETURN post_sw(DAT_EVD_HANDLE evd, uintptr_t v)
{
	DAT_EVENT ev;

	memset(&ev, 0, sizeof(ev));
	ev.event_number = DAT_SOFTWARE_EVENT;
	ev.event_data.software_event_data.pointer = (DAT_PVOID)v;
	return dat_evd_post_se(evd, &ev);
}

static bool expect_sw(DAT_EVD_HANDLE evd, uintptr_t v, const char *what)
{
	DAT_EVENT ev;
	DAT_RETURN ret;

	memset(&ev, 0, sizeof(ev));
	ret = dat_evd_dequeue(evd, &ev);
	return FT_CHECK(ret == DAT_SUCCESS &&
	                        ev.event_number == DAT_SOFTWARE_EVENT &&
	                        ev.evd_handle == evd &&
	                        ev.event_data.software_event_data.pointer ==
	                                (DAT_PVOID)v,
	                "%s: dequeue = %s, %s", what, ft_ret_str(ret),
	                ret == DAT_SUCCESS ? ft_event_desc(&ev) : "-");
}

static int evd_state(DAT_EVD_HANDLE evd)
{
	DAT_EVD_PARAM p;

	memset(&p, 0, sizeof(p));
	if (dat_evd_query(evd, DAT_EVD_FIELD_EVD_STATE, &p) != DAT_SUCCESS)
		return -1;
	return (int)p.evd_state;
}

static DAT_COUNT evd_qlen(DAT_EVD_HANDLE evd)
{
	DAT_EVD_PARAM p;

	memset(&p, 0, sizeof(p));
	if (dat_evd_query(evd, DAT_EVD_FIELD_EVD_QLEN, &p) != DAT_SUCCESS)
		return -1;
	return p.evd_qlen;
}

static void check_create(void)
{
	DAT_EVD_HANDLE evd = DAT_HANDLE_NULL, bad;
	DAT_EVD_PARAM p;

	FT_DAT_OK(ft_evd_create(&ia, 8, DAT_EVD_SOFTWARE_FLAG, &evd));
	memset(&p, 0, sizeof(p));
	FT_DAT_CHECK(dat_evd_query(evd, DAT_EVD_FIELD_ALL, &p));
	FT_CHECK(p.ia_handle == ia.ia, "evd_query: ia_handle");
	FT_CHECK(p.evd_qlen >= 8, "evd_query: qlen %d >= 8", (int)p.evd_qlen);
	FT_CHECK((p.evd_state & DAT_EVD_STATE_ENABLED) &&
	                 (p.evd_state & DAT_EVD_STATE_WAITABLE) &&
	                 !(p.evd_state & DAT_EVD_STATE_UNWAITABLE),
	         "a new EVD is enabled and waitable (state %#x)",
	         (unsigned)p.evd_state);
	FT_CHECK(p.cno_handle == DAT_HANDLE_NULL, "evd_query: no CNO");
	FT_CHECK(p.evd_flags == DAT_EVD_SOFTWARE_FLAG, "evd_query: flags %#x",
	         (unsigned)p.evd_flags);
	FT_DAT_EXPECT(dat_evd_query(evd, DAT_EVD_FIELD_ALL, NULL),
	              DAT_INVALID_PARAMETER);
	FT_DAT_CHECK(dat_evd_free(evd));

	FT_DAT_EXPECT(ft_evd_create(&ia, 0, DAT_EVD_SOFTWARE_FLAG, &bad),
	              DAT_INVALID_PARAMETER);
	FT_DAT_EXPECT(ft_evd_create(&ia, ia.attr.max_evd_qlen + 1,
	                            DAT_EVD_SOFTWARE_FLAG, &bad),
	              DAT_INVALID_PARAMETER);
	FT_DAT_EXPECT(ft_evd_create(&ia, 8, (DAT_EVD_FLAGS)0, &bad),
	              DAT_INVALID_PARAMETER);
	FT_DAT_EXPECT(ft_evd_create(&ia, 8, (DAT_EVD_FLAGS)0x8000, &bad),
	              DAT_INVALID_PARAMETER);
	FT_DAT_EXPECT(ft_evd_create(&ia, 8, DAT_EVD_SOFTWARE_FLAG, NULL),
	              DAT_INVALID_PARAMETER);
	FT_DAT_EXPECT(dat_evd_create(DAT_HANDLE_NULL, 8, DAT_HANDLE_NULL,
	                             DAT_EVD_SOFTWARE_FLAG, &bad),
	              DAT_INVALID_HANDLE);
}

static void check_software_events(void)
{
	DAT_EVD_HANDLE evd, dto;
	DAT_EVENT ev;
	uintptr_t i;

	FT_DAT_OK(ft_evd_create(&ia, 16, DAT_EVD_SOFTWARE_FLAG, &evd));
	FT_DAT_OK(ft_evd_create(&ia, 16, DAT_EVD_DTO_FLAG, &dto));
	FT_DAT_EXPECT(dat_evd_dequeue(evd, &ev), DAT_QUEUE_EMPTY);
	FT_DAT_EXPECT(dat_evd_dequeue(evd, NULL), DAT_INVALID_PARAMETER);
	FT_DAT_CHECK(post_sw(evd, 0x1234));
	expect_sw(evd, 0x1234, "software event comes back");
	FT_DAT_EXPECT(dat_evd_dequeue(evd, &ev), DAT_QUEUE_EMPTY);

	for (i = 1; i <= 5; i++)
		FT_DAT_CHECK(post_sw(evd, i));
	for (i = 1; i <= 5; i++)
		expect_sw(evd, i, "software events in posting order");

	memset(&ev, 0, sizeof(ev));
	ev.event_number = DAT_DTO_COMPLETION_EVENT;
	FT_DAT_EXPECT(dat_evd_post_se(evd, &ev), DAT_INVALID_PARAMETER);
	FT_DAT_EXPECT(dat_evd_post_se(evd, NULL), DAT_INVALID_PARAMETER);
	FT_DAT_EXPECT(post_sw(dto, 1), DAT_INVALID_PARAMETER);
	FT_DAT_EXPECT(dat_evd_dequeue(dto, &ev), DAT_QUEUE_EMPTY);
	FT_DAT_CHECK(dat_evd_free(dto));
	FT_DAT_CHECK(dat_evd_free(evd));
}

static void check_timeouts_thresholds(void)
{
	DAT_EVD_HANDLE evd;
	DAT_EVENT ev;
	DAT_COUNT nmore = -1, q;
	uint64_t t0, dt;

	FT_DAT_OK(ft_evd_create(&ia, 8, DAT_EVD_SOFTWARE_FLAG, &evd));
	q = evd_qlen(evd);

	t0 = ft_now_us();
	FT_DAT_EXPECT(dat_evd_wait(evd, 200000, 1, &ev, &nmore),
	              DAT_TIMEOUT_EXPIRED);
	dt = ft_now_us() - t0;
	FT_CHECK(dt >= 190000 && dt < 2000000,
	         "a 200000 us wait on an empty EVD took %llu us",
	         (unsigned long long)dt);
	FT_CHECK(nmore == 0, "nmore after the timeout is 0 (%d)", (int)nmore);
	t0 = ft_now_us();
	FT_DAT_EXPECT(dat_evd_wait(evd, 0, 1, &ev, &nmore),
	              DAT_TIMEOUT_EXPIRED);
	dt = ft_now_us() - t0;
	FT_CHECK(dt < 100000, "a 0 us wait returns at once (%llu us)",
	         (unsigned long long)dt);
	t0 = ft_now_us();
	FT_DAT_EXPECT(dat_evd_wait(evd, 1500, 1, &ev, &nmore),
	              DAT_TIMEOUT_EXPIRED);
	dt = ft_now_us() - t0;
	FT_CHECK(dt >= 1400 && dt < 200000,
	         "a 1500 us wait took %llu us (microseconds, not ms)",
	         (unsigned long long)dt);

	/* Thresholds. */
	FT_DAT_CHECK(post_sw(evd, 1));
	FT_DAT_CHECK(post_sw(evd, 2));
	FT_DAT_CHECK(post_sw(evd, 3));
	nmore = -1;
	memset(&ev, 0, sizeof(ev));
	FT_DAT_CHECK(dat_evd_wait(evd, 0, 3, &ev, &nmore));
	FT_CHECK(ev.event_number == DAT_SOFTWARE_EVENT &&
	                 ev.event_data.software_event_data.pointer ==
	                         (DAT_PVOID)1 &&
	                 nmore == 2,
	         "threshold 3 met: the oldest event, nmore 2 (%d)", (int)nmore);
	nmore = -1;
	t0 = ft_now_us();
	FT_DAT_EXPECT(dat_evd_wait(evd, 100000, 3, &ev, &nmore),
	              DAT_TIMEOUT_EXPIRED);
	FT_CHECK(ft_now_us() - t0 >= 90000 && nmore == 2,
	         "threshold 3 with 2 queued times out, nmore 2 (%d)",
	         (int)nmore);
	FT_DAT_CHECK(dat_evd_wait(evd, 0, 2, &ev, &nmore));
	FT_CHECK(ev.event_data.software_event_data.pointer == (DAT_PVOID)2 &&
	                 nmore == 1,
	         "threshold 2 met with 2 queued, nmore 1 (%d)", (int)nmore);
	FT_DAT_CHECK(dat_evd_wait(evd, DAT_TIMEOUT_INFINITE, 1, &ev, &nmore));
	FT_CHECK(ev.event_data.software_event_data.pointer == (DAT_PVOID)3 &&
	                 nmore == 0,
	         "infinite wait with an event queued returns it, nmore 0");

	FT_DAT_EXPECT(dat_evd_wait(evd, 0, 0, &ev, &nmore),
	              DAT_INVALID_PARAMETER);
	FT_DAT_EXPECT(dat_evd_wait(evd, 0, q + 1, &ev, &nmore),
	              DAT_INVALID_PARAMETER);
	FT_DAT_EXPECT(dat_evd_wait(evd, 0, 1, NULL, &nmore),
	              DAT_INVALID_PARAMETER);
	FT_DAT_EXPECT(dat_evd_wait(evd, 0, 1, &ev, NULL),
	              DAT_INVALID_PARAMETER);
	FT_DAT_CHECK(dat_evd_free(evd));
}

/* ---- threads waiting on an EVD ---------------------------------------------
 */

struct waiter {
	DAT_EVD_HANDLE evd;
	DAT_COUNT threshold;
	DAT_TIMEOUT timeout;
	DAT_RETURN ret;
	DAT_EVENT ev;
	DAT_COUNT nmore;
	_Atomic uint64_t done_us;
	atomic_int started;
	pthread_t thr;
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;

	atomic_store(&w->started, 1);
	w->ret = dat_evd_wait(w->evd, w->timeout, w->threshold, &w->ev,
	                      &w->nmore);
	w->done_us = ft_now_us();
	return NULL;
}

static void waiter_start(struct waiter *w, DAT_EVD_HANDLE evd,
                         DAT_COUNT threshold, DAT_TIMEOUT timeout)
{
	memset(w, 0, sizeof(*w));
	w->evd = evd;
	w->threshold = threshold;
	w->timeout = timeout;
	FT_REQUIRE(pthread_create(&w->thr, NULL, waiter_main, w) == 0,
	           "start a waiting thread");
	while (!atomic_load(&w->started))
		usleep(1000);
	usleep(100000); /* let it block in dat_evd_wait */
}

static void check_threads(void)
{
	DAT_EVD_HANDLE evd;
	struct waiter w;
	DAT_EVENT ev;
	DAT_COUNT nmore;
	uint64_t t0;

	FT_DAT_OK(ft_evd_create(&ia, 16, DAT_EVD_SOFTWARE_FLAG, &evd));

	/* A waiter is woken by an event posted by another thread. */
	waiter_start(&w, evd, 1, DAT_TIMEOUT_INFINITE);
	FT_DAT_EXPECT(dat_evd_dequeue(evd, &ev), DAT_INVALID_STATE);
	FT_DAT_EXPECT(dat_evd_wait(evd, 0, 1, &ev, &nmore), DAT_INVALID_STATE);
	FT_DAT_EXPECT(dat_evd_resize(evd, 32), DAT_INVALID_STATE);
	FT_DAT_EXPECT(dat_evd_free(evd), DAT_INVALID_STATE);
	t0 = ft_now_us();
	FT_DAT_CHECK(post_sw(evd, 0xabc));
	pthread_join(w.thr, NULL);
	FT_CHECK(w.ret == DAT_SUCCESS &&
	                 w.ev.event_number == DAT_SOFTWARE_EVENT &&
	                 w.ev.event_data.software_event_data.pointer ==
	                         (DAT_PVOID)0xabc,
	         "a blocked waiter gets the event posted by another thread "
	         "(%s) after %llu us",
	         ft_ret_str(w.ret), (unsigned long long)(w.done_us - t0));

	/* A threshold waiter stays blocked until the threshold is met. */
	waiter_start(&w, evd, 3, 5000000);
	FT_DAT_CHECK(post_sw(evd, 1));
	FT_DAT_CHECK(post_sw(evd, 2));
	usleep(100000);
	FT_CHECK(w.done_us == 0, "threshold 3 waiter still blocked with 2 "
	                         "events queued");
	t0 = ft_now_us();
	FT_DAT_CHECK(post_sw(evd, 3));
	pthread_join(w.thr, NULL);
	FT_CHECK(w.ret == DAT_SUCCESS &&
	                 w.ev.event_data.software_event_data.pointer ==
	                         (DAT_PVOID)1 &&
	                 w.nmore == 2 && w.done_us >= t0,
	         "threshold 3 waiter released by the third event (%s, nmore "
	         "%d)",
	         ft_ret_str(w.ret), (int)w.nmore);
	ft_drain(evd);

	/* set_unwaitable releases a blocked waiter with DAT_ABORT. */
	waiter_start(&w, evd, 1, DAT_TIMEOUT_INFINITE);
	FT_DAT_CHECK(dat_evd_set_unwaitable(evd));
	pthread_join(w.thr, NULL);
	FT_CHECK(DAT_GET_TYPE(w.ret) == DAT_ABORT,
	         "dat_evd_set_unwaitable releases the waiter with DAT_ABORT "
	         "(%s)",
	         ft_ret_str(w.ret));
	FT_CHECK(evd_state(evd) >= 0 &&
	                 (evd_state(evd) & DAT_EVD_STATE_UNWAITABLE),
	         "state is UNWAITABLE (%#x)", (unsigned)evd_state(evd));
	FT_DAT_EXPECT(dat_evd_wait(evd, 0, 1, &ev, &nmore), DAT_INVALID_STATE);
	FT_DAT_CHECK(dat_evd_set_unwaitable(evd));
	FT_DAT_CHECK(post_sw(evd, 7));
	expect_sw(evd, 7, "dequeue works while unwaitable");
	FT_DAT_CHECK(dat_evd_clear_unwaitable(evd));
	FT_CHECK(evd_state(evd) >= 0 &&
	                 (evd_state(evd) & DAT_EVD_STATE_WAITABLE) &&
	                 !(evd_state(evd) & DAT_EVD_STATE_UNWAITABLE),
	         "state is WAITABLE again (%#x)", (unsigned)evd_state(evd));
	FT_DAT_CHECK(post_sw(evd, 8));
	FT_DAT_CHECK(dat_evd_wait(evd, 0, 1, &ev, &nmore));
	FT_CHECK(ev.event_data.software_event_data.pointer == (DAT_PVOID)8,
	         "wait works after clear_unwaitable");
	FT_DAT_CHECK(dat_evd_free(evd));
}

static void check_enable_full_resize(void)
{
	DAT_EVD_HANDLE evd;
	DAT_EVENT ev;
	DAT_COUNT nmore, q, i;
	DAT_RETURN ret;
	bool order = true;

	FT_DAT_OK(ft_evd_create(&ia, 8, DAT_EVD_SOFTWARE_FLAG, &evd));
	FT_DAT_CHECK(dat_evd_disable(evd));
	FT_CHECK(evd_state(evd) >= 0 &&
	                 (evd_state(evd) & DAT_EVD_STATE_DISABLED) &&
	                 !(evd_state(evd) & DAT_EVD_STATE_ENABLED),
	         "state is DISABLED (%#x)", (unsigned)evd_state(evd));
	FT_DAT_CHECK(dat_evd_disable(evd));
	FT_DAT_CHECK(post_sw(evd, 1));
	FT_DAT_CHECK(dat_evd_wait(evd, 0, 1, &ev, &nmore));
	FT_CHECK(ev.event_data.software_event_data.pointer == (DAT_PVOID)1,
	         "a disabled EVD still queues events and can be waited on");
	FT_DAT_CHECK(dat_evd_enable(evd));
	FT_DAT_CHECK(dat_evd_enable(evd));
	FT_CHECK(evd_state(evd) >= 0 &&
	                 (evd_state(evd) & DAT_EVD_STATE_ENABLED),
	         "state is ENABLED (%#x)", (unsigned)evd_state(evd));

	/* A full EVD refuses software events, in order, no loss. */
	q = evd_qlen(evd);
	FT_REQUIRE(q >= 8 && q <= 65536, "queue length %d", (int)q);
	for (i = 0; i < q; i++) {
		ret = post_sw(evd, (uintptr_t)i + 100);
		if (ret != DAT_SUCCESS) {
			FT_CHECK(false, "post %d of %d = %s", (int)i, (int)q,
			         ft_ret_str(ret));
			break;
		}
	}
	FT_DAT_EXPECT(post_sw(evd, 99999), DAT_QUEUE_FULL);
	for (i = 0; i < q; i++) {
		memset(&ev, 0, sizeof(ev));
		if (dat_evd_dequeue(evd, &ev) != DAT_SUCCESS ||
		    ev.event_data.software_event_data.pointer !=
		            (DAT_PVOID)(uintptr_t)(i + 100))
			order = false;
	}
	FT_CHECK(order, "all %d events of the full EVD come back in order",
	         (int)q);
	FT_DAT_EXPECT(dat_evd_dequeue(evd, &ev), DAT_QUEUE_EMPTY);
	FT_DAT_EXPECT(ft_wait(ia.async_evd, 0, &ev), DAT_TIMEOUT_EXPIRED);

	/* Resize keeps queued events; shrinking below them is refused. */
	FT_DAT_CHECK(dat_evd_resize(evd, 64));
	FT_CHECK(evd_qlen(evd) >= 64, "resize to 64: qlen %d",
	         (int)evd_qlen(evd));
	for (i = 0; i < 40; i++)
		post_sw(evd, (uintptr_t)i + 1);
	ret = dat_evd_resize(evd, 4);
	if (ret == DAT_SUCCESS)
		FT_CHECK(evd_qlen(evd) >= 40,
		         "resize to 4 with 40 queued accepted only by "
		         "rounding up to hold them (qlen %d)",
		         (int)evd_qlen(evd));
	else
		FT_CHECK(DAT_GET_TYPE(ret) == DAT_INVALID_STATE,
		         "resize to 4 with 40 queued = %s (expected "
		         "DAT_INVALID_STATE)",
		         ft_ret_str(ret));
	FT_DAT_CHECK(dat_evd_resize(evd, 128));
	FT_CHECK(evd_qlen(evd) >= 128, "resize to 128: qlen %d",
	         (int)evd_qlen(evd));
	order = true;
	for (i = 0; i < 40; i++) {
		memset(&ev, 0, sizeof(ev));
		if (dat_evd_dequeue(evd, &ev) != DAT_SUCCESS ||
		    ev.event_data.software_event_data.pointer !=
		            (DAT_PVOID)(uintptr_t)(i + 1))
			order = false;
	}
	FT_CHECK(order, "the 40 events survive the resizes, in order");
	FT_DAT_EXPECT(dat_evd_dequeue(evd, &ev), DAT_QUEUE_EMPTY);
	FT_DAT_EXPECT(dat_evd_resize(evd, 0), DAT_INVALID_PARAMETER);
	FT_DAT_EXPECT(dat_evd_resize(evd, ia.attr.max_evd_qlen + 1),
	              DAT_INVALID_PARAMETER);
	FT_DAT_CHECK(post_sw(evd, 5));
	FT_DAT_CHECK(dat_evd_free(evd)); /* with an event queued */
}

/* ---- CNO
 * ------------------------------------------------------------------------ */

static atomic_int agent_calls;
static DAT_EVD_HANDLE agent_evd;

static void DAT_API agent_fn(DAT_PVOID data, DAT_EVD_HANDLE evd)
{
	if (data == &agent_calls)
		agent_evd = evd;
	atomic_fetch_add(&agent_calls, 1);
}

struct cno_waiter {
	DAT_CNO_HANDLE cno;
	DAT_EVD_HANDLE evd;
	DAT_RETURN ret;
	pthread_t thr;
};

static void *cno_waiter_main(void *arg)
{
	struct cno_waiter *w = arg;

	w->ret = dat_cno_wait(w->cno, 5000000, &w->evd);
	return NULL;
}

static void check_cno(void)
{
	DAT_CNO_HANDLE cno;
	DAT_EVD_HANDLE evd, evd2, got;
	DAT_CNO_PARAM cp;
	DAT_EVD_PARAM ep;
	DAT_OS_WAIT_PROXY_AGENT agent;
	DAT_HANDLE_TYPE type;
	struct cno_waiter cw;
	DAT_RETURN ret;
	uint64_t t0, dt;

	FT_DAT_OK(dat_cno_create(ia.ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	FT_DAT_CHECK(dat_get_handle_type(cno, &type));
	FT_CHECK(type == DAT_HANDLE_TYPE_CNO, "CNO handle type is CNO");
	memset(&cp, 0, sizeof(cp));
	FT_DAT_CHECK(dat_cno_query(cno, DAT_CNO_FIELD_ALL, &cp));
	FT_CHECK(cp.ia_handle == ia.ia && cp.proxy_type == DAT_PROXY_TYPE_NONE,
	         "cno_query: ia_handle, proxy type NONE (%d)",
	         (int)cp.proxy_type);
	FT_DAT_CHECK(
	        dat_evd_create(ia.ia, 8, cno, DAT_EVD_SOFTWARE_FLAG, &evd));
	FT_DAT_CHECK(dat_evd_query(evd, DAT_EVD_FIELD_CNO, &ep));
	FT_CHECK(ep.cno_handle == cno, "evd_query: the EVD's CNO");

	t0 = ft_now_us();
	FT_DAT_EXPECT(dat_cno_wait(cno, 100000, &got), DAT_TIMEOUT_EXPIRED);
	dt = ft_now_us() - t0;
	FT_CHECK(dt >= 90000 && dt < 2000000,
	         "a 100000 us CNO wait took %llu us", (unsigned long long)dt);
	FT_DAT_EXPECT(dat_cno_wait(cno, 0, NULL), DAT_INVALID_PARAMETER);

	FT_DAT_CHECK(post_sw(evd, 21));
	got = DAT_HANDLE_NULL;
	FT_DAT_CHECK(dat_cno_wait(cno, 1000000, &got));
	FT_CHECK(got == evd, "dat_cno_wait names the EVD with the event");
	expect_sw(evd, 21, "the event stays on the EVD after the CNO wait");

	/* Another thread blocked on the CNO is woken. */
	memset(&cw, 0, sizeof(cw));
	cw.cno = cno;
	FT_REQUIRE(pthread_create(&cw.thr, NULL, cno_waiter_main, &cw) == 0,
	           "start a CNO waiter");
	usleep(100000);
	FT_DAT_CHECK(post_sw(evd, 22));
	pthread_join(cw.thr, NULL);
	FT_CHECK(cw.ret == DAT_SUCCESS && cw.evd == evd,
	         "a thread blocked in dat_cno_wait is woken by an event (%s)",
	         ft_ret_str(cw.ret));
	expect_sw(evd, 22, "its event is on the EVD");

	/* A disabled EVD does not trigger; enabling it does. */
	FT_DAT_CHECK(dat_evd_disable(evd));
	FT_DAT_CHECK(post_sw(evd, 23));
	FT_DAT_EXPECT(dat_cno_wait(cno, 100000, &got), DAT_TIMEOUT_EXPIRED);
	FT_DAT_CHECK(dat_evd_enable(evd));
	got = DAT_HANDLE_NULL;
	FT_DAT_CHECK(dat_cno_wait(cno, 1000000, &got));
	FT_CHECK(got == evd, "enabling an EVD with queued events triggers "
	                     "its CNO");
	expect_sw(evd, 23, "the event queued while disabled");

	/* modify_cno attaches and detaches. */
	FT_DAT_CHECK(ft_evd_create(&ia, 8, DAT_EVD_SOFTWARE_FLAG, &evd2));
	FT_DAT_CHECK(dat_evd_modify_cno(evd2, cno));
	FT_DAT_CHECK(dat_evd_query(evd2, DAT_EVD_FIELD_CNO, &ep));
	FT_CHECK(ep.cno_handle == cno, "modify_cno: evd_query shows the CNO");
	FT_DAT_CHECK(post_sw(evd2, 24));
	got = DAT_HANDLE_NULL;
	FT_DAT_CHECK(dat_cno_wait(cno, 1000000, &got));
	FT_CHECK(got == evd2, "the CNO names the newly attached EVD");
	expect_sw(evd2, 24, "its event");
	FT_DAT_CHECK(dat_evd_modify_cno(evd2, DAT_HANDLE_NULL));
	FT_DAT_CHECK(post_sw(evd2, 25));
	FT_DAT_EXPECT(dat_cno_wait(cno, 100000, &got), DAT_TIMEOUT_EXPIRED);
	expect_sw(evd2, 25, "a detached EVD keeps its event");
	FT_DAT_EXPECT(dat_evd_modify_cno(evd2, ia.pz), DAT_INVALID_HANDLE);

	FT_DAT_EXPECT(dat_cno_free(cno), DAT_INVALID_STATE);
	FT_DAT_CHECK(dat_evd_free(evd));
	FT_DAT_CHECK(dat_evd_free(evd2));

	/* Proxy agent. */
	agent.instance_data = &agent_calls;
	agent.proxy_agent_func = agent_fn;
	FT_DAT_CHECK(dat_cno_modify_agent(cno, agent));
	memset(&cp, 0, sizeof(cp));
	FT_DAT_CHECK(dat_cno_query(cno, DAT_CNO_FIELD_ALL, &cp));
	FT_CHECK(cp.proxy_type == DAT_PROXY_TYPE_AGENT &&
	                 cp.proxy.agent.proxy_agent_func == agent_fn &&
	                 cp.proxy.agent.instance_data == &agent_calls,
	         "cno_query after modify_agent: the agent (type %d)",
	         (int)cp.proxy_type);
	FT_DAT_CHECK(
	        dat_evd_create(ia.ia, 8, cno, DAT_EVD_SOFTWARE_FLAG, &evd));
	FT_DAT_CHECK(post_sw(evd, 26));
	ret = dat_cno_wait(cno, 1000000, &got);
	FT_CHECK(ret == DAT_SUCCESS && got == evd,
	         "CNO with an agent still wakes its waiter (%s)",
	         ft_ret_str(ret));
	t0 = ft_now_us();
	while (atomic_load(&agent_calls) == 0 && ft_now_us() - t0 < 2000000)
		usleep(1000);
	FT_CHECK(atomic_load(&agent_calls) > 0 && agent_evd == evd,
	         "the proxy agent was called with its data and the EVD (%d "
	         "calls)",
	         atomic_load(&agent_calls));
	ft_drain(evd);
	FT_DAT_CHECK(dat_cno_modify_agent(cno, DAT_OS_WAIT_PROXY_AGENT_NULL));
	FT_DAT_CHECK(dat_cno_query(cno, DAT_CNO_FIELD_ALL, &cp));
	FT_CHECK(cp.proxy_type == DAT_PROXY_TYPE_NONE,
	         "agent removed: proxy type NONE");
	FT_DAT_CHECK(dat_evd_free(evd));
	FT_DAT_CHECK(dat_cno_free(cno));
}

static void check_cno_fd(void)
{
	DAT_IA_HANDLE raw = DAT_HANDLE_NULL;
	DAT_CNO_HANDLE cno = DAT_HANDLE_NULL;
	DAT_EVD_HANDLE evd, got;
	const DAT_PROVIDER *prov;
	DAT_CNO_PARAM cp;
	DAT_FD fd = -1;
	DAT_RETURN ret;
	struct pollfd pfd;

	/*
	 * dat_cno_fd_create is not exported by libdat2 (nor by OFED's); a
	 * consumer reaches it through the Provider's table of the raw IA.
	 */
	FT_DAT_CHECK(dats_get_ia_handle(ia.ia, &raw));
	if (raw == DAT_HANDLE_NULL)
		return;
	prov = DAT_HANDLE_TO_PROVIDER(raw);
	if (prov->cno_fd_create_func == NULL) {
		FT_WARN("the Provider has no cno_fd_create: CNO file "
		        "descriptors not offered");
		return;
	}
	ret = DAT_CNO_FD_CREATE(raw, &fd, &cno);
	if (DAT_GET_TYPE(ret) == DAT_NOT_IMPLEMENTED ||
	    DAT_GET_TYPE(ret) == DAT_MODEL_NOT_SUPPORTED) {
		FT_WARN("cno_fd_create = %s: CNO file descriptors not offered",
		        ft_ret_str(ret));
		return;
	}
	FT_CHECK(ret == DAT_SUCCESS && fd >= 0, "cno_fd_create = %s, fd %d",
	         ft_ret_str(ret), (int)fd);
	if (ret != DAT_SUCCESS)
		return;
	memset(&cp, 0, sizeof(cp));
	FT_DAT_CHECK(dat_cno_query(cno, DAT_CNO_FIELD_ALL, &cp));
	FT_CHECK(cp.proxy_type == DAT_PROXY_TYPE_FD && cp.proxy.fd == fd,
	         "cno_query: proxy type FD with the same fd (%d, %d)",
	         (int)cp.proxy_type, (int)cp.proxy.fd);
	FT_DAT_CHECK(
	        dat_evd_create(ia.ia, 8, cno, DAT_EVD_SOFTWARE_FLAG, &evd));
	pfd.fd = fd;
	pfd.events = POLLIN;
	pfd.revents = 0;
	FT_CHECK(poll(&pfd, 1, 0) == 0, "the CNO fd is not readable while "
	                                "nothing happened");
	got = DAT_HANDLE_NULL;
	ret = DAT_CNO_TRIGGER(cno, &got);
	FT_CHECK(ret == DAT_QUEUE_EMPTY && got == DAT_HANDLE_NULL,
	         "cno_trigger with nothing triggered = %s (DAT_QUEUE_EMPTY)",
	         ft_ret_str(ret));
	FT_DAT_CHECK(post_sw(evd, 31));
	pfd.revents = 0;
	FT_CHECK(poll(&pfd, 1, 2000) == 1 && (pfd.revents & POLLIN),
	         "the CNO fd becomes readable after an event");
	ret = DAT_CNO_TRIGGER(cno, &got);
	FT_CHECK(ret == DAT_SUCCESS && got == evd,
	         "cno_trigger names the EVD (%s)", ft_ret_str(ret));
	got = DAT_HANDLE_NULL;
	FT_DAT_CHECK(dat_cno_wait(cno, 1000000, &got));
	FT_CHECK(got == evd, "dat_cno_wait on the fd CNO names the EVD");
	expect_sw(evd, 31, "its event");
	/* Level-triggered: once the EVD is empty, trigger says so and the
	 * fd is quiet again. */
	got = DAT_HANDLE_NULL;
	ret = DAT_CNO_TRIGGER(cno, &got);
	pfd.revents = 0;
	FT_CHECK(ret == DAT_QUEUE_EMPTY && poll(&pfd, 1, 0) == 0,
	         "after the event is taken: cno_trigger = %s, fd quiet",
	         ft_ret_str(ret));
	FT_DAT_CHECK(dat_evd_free(evd));
	FT_DAT_CHECK(dat_cno_free(cno));
}

/*
 * Wait on cno until want holds an event, as OFED's dtest -c does: a
 * dat_cno_wait of up to a second, then a dequeue of the EVD the caller
 * wants, whichever EVD the CNO named. Send completions (other) are taken
 * on the way and must be successes. True when *ev is want's event before
 * deadline_us.
 */
static bool cno_collect(DAT_CNO_HANDLE cno, DAT_EVD_HANDLE want,
                        DAT_EVD_HANDLE other, uint64_t deadline_us,
                        DAT_EVENT *ev)
{
	DAT_EVD_HANDLE got;
	DAT_EVENT o;

	while (ft_now_us() < deadline_us) {
		got = DAT_HANDLE_NULL;
		(void)dat_cno_wait(cno, 1000000, &got);
		while (dat_evd_dequeue(other, &o) == DAT_SUCCESS) {
			const DAT_DTO_COMPLETION_EVENT_DATA *d =
			        &o.event_data.dto_completion_event_data;

			if (o.event_number != DAT_DTO_COMPLETION_EVENT ||
			    d->status != DAT_DTO_SUCCESS) {
				FT_CHECK(false, "cno: a send failed (%s)",
				         ft_event_desc(&o));
				return false;
			}
		}
		if (dat_evd_dequeue(want, ev) == DAT_SUCCESS)
			return true;
	}
	return false;
}

/*
 * Large messages back and forth between two EPs whose EVDs all feed one
 * CNO, the consumer waiting on nothing but the CNO (OFED's dtest -c): on
 * a fabric that moves data only when called (tcp, rxm, shm), the CNO
 * wait must drive it as briskly as dat_evd_wait does. Where the CQs have
 * no wait object (rxm), it slept 100 ms between looks: 16 round trips of
 * 4 MiB took about 40 s there (5 s now), OFED's dtest -c past 180 s.
 */
#define CNO_DTO_LEN    (4u << 20)
#define CNO_DTO_ROUNDS 16
#define CNO_DTO_MAX_US 20000000u

static void check_cno_dto(void)
{
	struct ft_listener l;
	struct ft_ep a, b;
	struct ft_mr mr;
	DAT_CNO_HANDLE cno;
	DAT_EP_ATTR attr;
	DAT_LMR_TRIPLET t;
	DAT_DTO_COOKIE c;
	DAT_EVENT ev;
	uint64_t t0, deadline, us;
	size_t len = CNO_DTO_LEN;
	int i, done = 0;

	if (ia.attr.max_message_size < len) {
		FT_WARN("max_message_size %llu < %zu: not tested",
		        (unsigned long long)ia.attr.max_message_size, len);
		return;
	}
	ft_ep_attr_default(&ia, &attr);
	attr.max_message_size = len;
	FT_DAT_OK(dat_cno_create(ia.ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	FT_DAT_OK(ft_ep_create(&ia, ia.pz, &attr, 16, &a));
	FT_DAT_OK(ft_ep_create(&ia, ia.pz, &attr, 16, &b));
	FT_DAT_OK(dat_evd_modify_cno(a.req_evd, cno));
	FT_DAT_OK(dat_evd_modify_cno(a.recv_evd, cno));
	FT_DAT_OK(dat_evd_modify_cno(b.req_evd, cno));
	FT_DAT_OK(dat_evd_modify_cno(b.recv_evd, cno));
	/* a sends from the first quarter, b from the second; b receives into
	 * the third, a into the fourth. */
	FT_DAT_OK(
	        ft_mr_create(&ia, ia.pz, 4 * len, DAT_MEM_PRIV_ALL_FLAG, &mr));
	FT_DAT_OK(ft_listen(&ia, &l));
	if (!ft_connect_local(&ia, &a, &ia, &b, &l))
		goto out;
	t0 = ft_now_us();
	deadline = t0 + CNO_DTO_MAX_US;
	for (i = 0; i < CNO_DTO_ROUNDS; i++) {
		c.as_64 = (uint64_t)i;
		t = ft_lmr_iov(&mr, 3 * len, len);
		if (dat_ep_post_recv(a.ep, 1, &t, c,
		                     DAT_COMPLETION_DEFAULT_FLAG) !=
		    DAT_SUCCESS)
			break;
		t = ft_lmr_iov(&mr, 2 * len, len);
		if (dat_ep_post_recv(b.ep, 1, &t, c,
		                     DAT_COMPLETION_DEFAULT_FLAG) !=
		    DAT_SUCCESS)
			break;
		t = ft_lmr_iov(&mr, 0, len);
		if (dat_ep_post_send(a.ep, 1, &t, c,
		                     DAT_COMPLETION_DEFAULT_FLAG) !=
		    DAT_SUCCESS)
			break;
		if (!cno_collect(cno, b.recv_evd, a.req_evd, deadline, &ev) ||
		    ev.event_data.dto_completion_event_data.transfered_length !=
		            len)
			break;
		t = ft_lmr_iov(&mr, len, len);
		if (dat_ep_post_send(b.ep, 1, &t, c,
		                     DAT_COMPLETION_DEFAULT_FLAG) !=
		    DAT_SUCCESS)
			break;
		if (!cno_collect(cno, a.recv_evd, b.req_evd, deadline, &ev) ||
		    ev.event_data.dto_completion_event_data.transfered_length !=
		            len)
			break;
		done++;
	}
	us = ft_now_us() - t0;
	ft_log("cno: %d round trips of %zu bytes in %llu ms", done, len,
	       (unsigned long long)(us / 1000));
	FT_CHECK(done == CNO_DTO_ROUNDS,
	         "%d of %d round trips of %zu-byte messages through CNO "
	         "waits alone within %u s",
	         done, CNO_DTO_ROUNDS, len, CNO_DTO_MAX_US / 1000000);
	(void)dat_ep_disconnect(a.ep, DAT_CLOSE_ABRUPT_FLAG);
	(void)dat_ep_disconnect(b.ep, DAT_CLOSE_ABRUPT_FLAG);
	usleep(50000);
out:
	ft_ep_free(&a);
	ft_ep_free(&b);
	ft_mr_free(&mr);
	ft_listener_free(&l);
	FT_DAT_CHECK(dat_cno_free(cno));
}

/*
 * More receive completions than the receive EVD's length: none may be lost
 * silently.  Either every completion is delivered (the Provider holds them,
 * as if it had rounded the length up) or DAT_ASYNC_ERROR_EVD_OVERFLOW names
 * the EVD on the async EVD.
 */
static void check_dto_no_silent_loss(void)
{
	struct ft_listener l;
	struct ft_ep a, b;
	DAT_EVD_HANDLE small;
	DAT_EP_ATTR attr;
	struct ft_mr mr;
	DAT_LMR_TRIPLET t;
	DAT_DTO_COOKIE c;
	DAT_EVENT ev;
	DAT_COUNT q, n, i;
	int sent = 0, delivered = 0, in_order = 1;
	bool overflow = false;

	FT_DAT_OK(ft_evd_create(&ia, 4, DAT_EVD_DTO_FLAG, &small));
	q = evd_qlen(small);
	n = q + 4;
	if (n > ia.attr.max_dto_per_ep) {
		FT_WARN("max_dto_per_ep %d < %d: not tested",
		        (int)ia.attr.max_dto_per_ep, (int)n);
		dat_evd_free(small);
		return;
	}
	ft_ep_attr_default(&ia, &attr);
	attr.max_recv_dtos = n;
	attr.max_request_dtos = n;
	FT_DAT_OK(ft_ep_create(&ia, ia.pz, &attr, n + 8, &a));
	FT_DAT_OK(ft_ep_create(&ia, ia.pz, &attr, n + 8, &b));
	/* b receives into the small EVD. */
	FT_DAT_OK(dat_ep_free(b.ep));
	FT_DAT_OK(dat_ep_create(ia.ia, ia.pz, small, b.req_evd, b.conn_evd,
	                        &attr, &b.ep));
	FT_DAT_OK(ft_mr_create(&ia, ia.pz, 64 * (size_t)n,
	                       DAT_MEM_PRIV_ALL_FLAG, &mr));
	for (i = 0; i < n; i++) {
		t = ft_lmr_iov(&mr, 64 * (size_t)i, 64);
		c.as_64 = (uint64_t)i;
		FT_DAT_CHECK(dat_ep_post_recv(b.ep, 1, &t, c,
		                              DAT_COMPLETION_DEFAULT_FLAG));
	}
	FT_DAT_OK(ft_listen(&ia, &l));
	if (!ft_connect_local(&ia, &a, &ia, &b, &l))
		goto out;
	for (i = 0; i < n; i++) {
		t = ft_lmr_iov(&mr, 0, 8);
		c.as_64 = 1000 + (uint64_t)i;
		if (dat_ep_post_send(a.ep, 1, &t, c,
		                     DAT_COMPLETION_DEFAULT_FLAG) ==
		    DAT_SUCCESS)
			sent++;
	}
	FT_CHECK(sent == n,
	         "posted %d sends towards a receive EVD of "
	         "length %d",
	         sent, (int)q);
	for (i = 0; i < sent; i++)
		if (ft_wait(a.req_evd, FT_TIMEOUT_US, &ev) != DAT_SUCCESS)
			break;
	FT_CHECK(i == sent, "%d send completions", (int)i);
	usleep(200000);
	while (ft_wait(small, 500000, &ev) == DAT_SUCCESS) {
		if (ev.event_data.dto_completion_event_data.user_cookie.as_64 !=
		    (uint64_t)delivered)
			in_order = 0;
		delivered++;
	}
	while (ft_wait(ia.async_evd, 0, &ev) == DAT_SUCCESS)
		if (ev.event_number == DAT_ASYNC_ERROR_EVD_OVERFLOW &&
		    ev.event_data.asynch_error_event_data.dat_handle == small)
			overflow = true;
	FT_CHECK(delivered == n || overflow,
	         "%d completions for an EVD of length %d: %d delivered%s, "
	         "none lost silently",
	         (int)n, (int)q, delivered,
	         overflow ? ", overflow reported" : "");
	if (!overflow)
		FT_CHECK(in_order, "the %d delivered completions are in order",
		         delivered);
out:
	(void)dat_ep_disconnect(a.ep, DAT_CLOSE_ABRUPT_FLAG);
	(void)dat_ep_disconnect(b.ep, DAT_CLOSE_ABRUPT_FLAG);
	usleep(50000);
	FT_DAT_CHECK(dat_ep_free(b.ep));
	b.ep = DAT_HANDLE_NULL;
	ft_ep_free(&a);
	ft_ep_free(&b);
	ft_drain(small);
	FT_DAT_CHECK(dat_evd_free(small));
	ft_mr_free(&mr);
	ft_listener_free(&l);
	ft_drain(ia.async_evd);
}

/*
 * Connection requests beyond the length of the PSP's EVD: the Provider
 * reports DAT_ASYNC_ERROR_EVD_OVERFLOW naming that EVD on the async EVD,
 * and the overflowed EVD cannot be waited on any more.  Last in the test:
 * both IAs are closed abruptly afterwards.
 */
static void check_overflow(void)
{
	struct ft_ia cli;
	DAT_EVD_HANDLE small, cevd;
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL qual;
	DAT_EP_HANDLE *eps;
	DAT_EVENT ev;
	DAT_COUNT q, n, i, nmore;
	DAT_RETURN ret;
	int connected = 0;

	ft_ia_open(ft_opts.ia_name, &cli);
	FT_DAT_OK(ft_evd_create(&ia, 2, DAT_EVD_CR_FLAG, &small));
	q = evd_qlen(small);
	n = q + 2;
	FT_DAT_OK(dat_psp_create_any(ia.ia, &qual, small, DAT_PSP_CONSUMER_FLAG,
	                             &psp));
	FT_DAT_OK(
	        ft_evd_create(&cli, 2 * n + 8, DAT_EVD_CONNECTION_FLAG, &cevd));
	eps = calloc((size_t)n, sizeof(*eps));
	FT_REQUIRE(eps != NULL, "memory");
	ft_log("overflow: CR EVD of length %d, %d requests", (int)q, (int)n);
	for (i = 0; i < n; i++) {
		FT_DAT_OK(dat_ep_create(cli.ia, cli.pz, DAT_HANDLE_NULL,
		                        DAT_HANDLE_NULL, cevd, NULL, &eps[i]));
		if (dat_ep_connect(eps[i], ia.attr.ia_address_ptr, qual,
		                   FT_TIMEOUT_US, 0, NULL, DAT_QOS_BEST_EFFORT,
		                   DAT_CONNECT_DEFAULT_FLAG) == DAT_SUCCESS)
			connected++;
	}
	FT_CHECK(connected == n, "%d connection requests sent", connected);
	ret = ft_wait(ia.async_evd, 5000000, &ev);
	FT_CHECK(ret == DAT_SUCCESS &&
	                 ev.event_number == DAT_ASYNC_ERROR_EVD_OVERFLOW &&
	                 ev.event_data.asynch_error_event_data.dat_handle ==
	                         small,
	         "%d requests on a CR EVD of length %d: %s on the async EVD "
	         "naming it",
	         (int)n, (int)q,
	         ret == DAT_SUCCESS ? ft_event_desc(&ev) : ft_ret_str(ret));
	if (ret == DAT_SUCCESS)
		FT_CHECK(ev.evd_handle == ia.async_evd &&
		                 ev.event_data.asynch_error_event_data.reason ==
		                         DAT_EVD_OVERFLOW_ERROR,
		         "overflow event: evd_handle is the async EVD, reason "
		         "DAT_EVD_OVERFLOW_ERROR");
	/*
	 * dapl-ofi reports the overflow but loses nothing: the requests
	 * past qlen are kept, and the EVD stays usable.
	 */
	{
		int got = 0;

		/* The last requests may still be on their way (sockets). */
		while (got < (int)n && dat_evd_wait(small, 5000000, 1, &ev,
		                                    &nmore) == DAT_SUCCESS)
			got += ev.event_number == DAT_CONNECTION_REQUEST_EVENT;
		FT_CHECK(got == (int)n,
		         "the overflowed EVD still delivers every request "
		         "(%d of %d)",
		         got, (int)n);
	}
	free(eps);
	/* Everything else goes with the abrupt closes. */
	ft_ia_close(&cli);
}

int main(int argc, char **argv)
{
	ft_init(argc, argv, "dat_evd",
	        "EVD create/query, software events, timeouts, thresholds, "
	        "unwaitable, overflow, CNO",
	        NULL);
	ft_ia_open(ft_opts.ia_name, &ia);
	ft_check_libs();
	check_create();
	check_software_events();
	check_timeouts_thresholds();
	check_threads();
	check_enable_full_resize();
	check_cno();
	check_cno_fd();
	check_cno_dto();
	check_dto_no_silent_loss();
	check_overflow();
	ft_ia_close(&ia);
	return ft_finish();
}
