/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * dat_many_eps: many Endpoints on one set of EVDs.  N client EPs share one
 * request, one receive and one connection EVD; so do the N server EPs.
 * All N connect at once through one PSP (the private data says which
 * server EP accepts), every event names the right EP, each EP's messages
 * arrive in order on it, and the N disconnects are all reported.  Single
 * process, two IAs.  -n N sets the EP count (default 32), -I the messages
 * per EP (default 16).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "shared.h"

static int nep = 32;

static int opt_handler(int opt, const char *arg)
{
	if (opt != 'n')
		return -1;
	nep = atoi(arg);
	return nep > 0 && nep <= 4096 ? 0 : -1;
}

struct side {
	struct ft_ia ia;
	DAT_EVD_HANDLE req, recv, conn;
	DAT_EP_HANDLE *ep;
	struct ft_mr mr;
};

static int ep_index(struct side *s, DAT_EP_HANDLE ep)
{
	int i;

	for (i = 0; i < nep; i++)
		if (s->ep[i] == ep)
			return i;
	return -1;
}

static void side_open(struct side *s, int msgs)
{
	DAT_EP_ATTR attr;
	DAT_COUNT qlen = nep * (msgs + 2) + 16;
	int i;

	ft_ia_open(ft_opts.ia_name, &s->ia);
	if (qlen > s->ia.attr.max_evd_qlen)
		ft_notrun("%d EPs x %d messages need an EVD of %d, the IA "
		          "allows %d",
		          nep, msgs, (int)qlen, (int)s->ia.attr.max_evd_qlen);
	if (nep > s->ia.attr.max_eps)
		ft_notrun("%d EPs asked, the IA allows %d", nep,
		          (int)s->ia.attr.max_eps);
	FT_DAT_OK(ft_evd_create(&s->ia, qlen, DAT_EVD_DTO_FLAG, &s->req));
	FT_DAT_OK(ft_evd_create(&s->ia, qlen, DAT_EVD_DTO_FLAG, &s->recv));
	FT_DAT_OK(ft_evd_create(&s->ia, 2 * nep + 16, DAT_EVD_CONNECTION_FLAG,
	                        &s->conn));
	ft_ep_attr_default(&s->ia, &attr);
	attr.max_recv_dtos = msgs + 2;
	attr.max_request_dtos = msgs + 2;
	s->ep = calloc((size_t)nep, sizeof(*s->ep));
	FT_REQUIRE(s->ep != NULL, "memory for %d EPs", nep);
	for (i = 0; i < nep; i++)
		if (dat_ep_create(s->ia.ia, s->ia.pz, s->recv, s->req, s->conn,
		                  &attr, &s->ep[i]) != DAT_SUCCESS)
			break;
	FT_REQUIRE(i == nep, "%d EPs created on one set of three EVDs", i);
	FT_DAT_OK(ft_mr_create(&s->ia, s->ia.pz, (size_t)nep * msgs * 64,
	                       DAT_MEM_PRIV_ALL_FLAG, &s->mr));
}

static void side_close(struct side *s)
{
	int i, bad = 0;

	for (i = 0; i < nep; i++)
		if (dat_ep_free(s->ep[i]) != DAT_SUCCESS)
			bad++;
	FT_CHECK(bad == 0, "%d EPs freed", nep - bad);
	ft_drain(s->req);
	ft_drain(s->recv);
	ft_drain(s->conn);
	FT_DAT_CHECK(dat_evd_free(s->req));
	FT_DAT_CHECK(dat_evd_free(s->recv));
	FT_DAT_CHECK(dat_evd_free(s->conn));
	ft_mr_free(&s->mr);
	free(s->ep);
	ft_ia_close(&s->ia);
}

/* Collect n connection events of kind num; every EP exactly once. */
static void collect_conn(struct side *s, DAT_EVENT_NUMBER num, const char *what)
{
	char *seen = calloc((size_t)nep, 1);
	int i, got = 0, wrong = 0, dup = 0, idx;
	DAT_EVENT ev;

	for (i = 0; i < nep; i++) {
		if (ft_wait(s->conn, FT_TIMEOUT_US, &ev) != DAT_SUCCESS)
			break;
		if (ev.event_number != num) {
			ft_log("%s: unexpected %s", what, ft_event_desc(&ev));
			wrong++;
			continue;
		}
		idx = ep_index(s, ev.event_data.connect_event_data.ep_handle);
		if (idx < 0 || seen[idx])
			dup++;
		else
			seen[idx] = 1;
		got++;
	}
	FT_CHECK(got == nep && wrong == 0 && dup == 0,
	         "%s: %d of %d %s events, one per EP (%d other, %d unknown or "
	         "repeated)",
	         what, got, nep, ft_event_str(num), wrong, dup);
	free(seen);
}

int main(int argc, char **argv)
{
	static const struct ft_extra_opts extra = {
	        "n:", opt_handler,
	        "  -n N          number of EPs (default 32)\n"};
	struct side c, s;
	struct ft_listener L;
	DAT_EVENT ev;
	DAT_LMR_TRIPLET t;
	DAT_DTO_COOKIE ck;
	DAT_CR_PARAM crp;
	int msgs, i, m, idx, accepted = 0, bad_pd = 0;
	int *next, bad_ep = 0, bad_order = 0, bad_data = 0, got = 0, sends = 0;

	ft_init(argc, argv, "dat_many_eps",
	        "many EPs sharing one request, receive and connection EVD",
	        &extra);
	msgs = (int)ft_iterations(16);
	side_open(&c, msgs);
	side_open(&s, msgs);
	ft_check_libs();
	FT_DAT_OK(ft_listen(&s.ia, &L));

	/* Receives first, on every server EP. */
	for (i = 0; i < nep; i++)
		for (m = 0; m < msgs; m++) {
			t = ft_lmr_iov(&s.mr, ((size_t)i * msgs + m) * 64, 64);
			ck.as_64 = ((uint64_t)i << 32) | (uint64_t)m;
			FT_REQUIRE(
			        dat_ep_post_recv(s.ep[i], 1, &t, ck,
			                         DAT_COMPLETION_DEFAULT_FLAG) ==
			                DAT_SUCCESS,
			        "post receive %d on EP %d", m, i);
		}

	/* All connects at once; the private data names the server EP. */
	for (i = 0; i < nep; i++) {
		uint32_t pd = (uint32_t)i;

		FT_REQUIRE(dat_ep_connect(c.ep[i], s.ia.attr.ia_address_ptr,
		                          L.qual, FT_TIMEOUT_US, sizeof(pd),
		                          &pd, DAT_QOS_BEST_EFFORT,
		                          DAT_CONNECT_DEFAULT_FLAG) ==
		                   DAT_SUCCESS,
		           "connect EP %d", i);
	}
	for (i = 0; i < nep; i++) {
		uint32_t pd;

		if (ft_wait(L.cr_evd, FT_TIMEOUT_US, &ev) != DAT_SUCCESS ||
		    ev.event_number != DAT_CONNECTION_REQUEST_EVENT)
			break;
		memset(&crp, 0, sizeof(crp));
		if (dat_cr_query(ev.event_data.cr_arrival_event_data.cr_handle,
		                 DAT_CR_FIELD_ALL, &crp) != DAT_SUCCESS ||
		    crp.private_data_size != sizeof(pd)) {
			bad_pd++;
			continue;
		}
		memcpy(&pd, crp.private_data, sizeof(pd));
		if (pd >= (uint32_t)nep) {
			bad_pd++;
			continue;
		}
		if (dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle,
		                  s.ep[pd], 0, NULL) == DAT_SUCCESS)
			accepted++;
	}
	FT_CHECK(accepted == nep && bad_pd == 0,
	         "%d requests through one PSP accepted on the EP their "
	         "private data names (%d bad)",
	         accepted, bad_pd);
	collect_conn(&s, DAT_CONNECTION_EVENT_ESTABLISHED, "server");
	collect_conn(&c, DAT_CONNECTION_EVENT_ESTABLISHED, "client");

	/* msgs messages per EP, all EPs interleaved. */
	for (m = 0; m < msgs; m++)
		for (i = 0; i < nep; i++) {
			size_t off = ((size_t)i * msgs + m) * 64;

			ft_fill((char *)c.mr.buf + off, 64,
			        ((uint64_t)i << 32) | (uint64_t)m);
			t = ft_lmr_iov(&c.mr, off, 64);
			ck.as_64 = ((uint64_t)i << 32) | (uint64_t)m;
			if (dat_ep_post_send(c.ep[i], 1, &t, ck,
			                     DAT_COMPLETION_DEFAULT_FLAG) ==
			    DAT_SUCCESS)
				sends++;
		}
	FT_CHECK(sends == nep * msgs, "%d sends posted", sends);
	for (i = 0; i < sends; i++) {
		if (ft_wait(c.req, FT_TIMEOUT_US, &ev) != DAT_SUCCESS)
			break;
		idx = (int)(ev.event_data.dto_completion_event_data.user_cookie
		                    .as_64 >>
		            32);
		if (ev.event_data.dto_completion_event_data.status !=
		            DAT_DTO_SUCCESS ||
		    idx >= nep ||
		    ev.event_data.dto_completion_event_data.ep_handle !=
		            c.ep[idx])
			bad_ep++;
	}
	FT_CHECK(i == sends && bad_ep == 0,
	         "%d send completions on the shared request EVD, each naming "
	         "its EP (%d wrong)",
	         i, bad_ep);

	next = calloc((size_t)nep, sizeof(*next));
	bad_ep = 0;
	for (i = 0; i < sends; i++) {
		uint64_t cookie;

		if (ft_wait(s.recv, FT_TIMEOUT_US, &ev) != DAT_SUCCESS)
			break;
		got++;
		cookie = ev.event_data.dto_completion_event_data.user_cookie
		                 .as_64;
		idx = (int)(cookie >> 32);
		m = (int)(cookie & 0xffffffff);
		if (ev.event_data.dto_completion_event_data.status !=
		            DAT_DTO_SUCCESS ||
		    idx >= nep ||
		    ev.event_data.dto_completion_event_data.ep_handle !=
		            s.ep[idx]) {
			bad_ep++;
			continue;
		}
		if (m != next[idx])
			bad_order++;
		next[idx] = m + 1;
		if (ft_pattern_mismatch((char *)s.mr.buf +
		                                ((size_t)idx * msgs + m) * 64,
		                        64, cookie) >= 0)
			bad_data++;
	}
	FT_CHECK(got == sends && bad_ep == 0,
	         "%d receive completions on the shared receive EVD, each "
	         "naming its EP (%d wrong)",
	         got, bad_ep);
	FT_CHECK(bad_order == 0,
	         "each EP's messages arrive in order (%d out "
	         "of order)",
	         bad_order);
	FT_CHECK(bad_data == 0,
	         "each message carries its own EP's data (%d "
	         "wrong)",
	         bad_data);
	free(next);

	for (i = 0; i < nep; i++)
		FT_REQUIRE(
		        dat_ep_disconnect(c.ep[i], DAT_CLOSE_GRACEFUL_FLAG) ==
		                DAT_SUCCESS,
		        "disconnect EP %d", i);
	collect_conn(&c, DAT_CONNECTION_EVENT_DISCONNECTED, "client");
	collect_conn(&s, DAT_CONNECTION_EVENT_DISCONNECTED, "server");
	ft_expect_empty(s.recv, "no receive was left to flush");

	ft_listener_free(&L);
	side_close(&c);
	side_close(&s);
	return ft_finish();
}
