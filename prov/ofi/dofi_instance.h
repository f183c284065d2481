/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * The instance data of a dat.conf line for this provider (its last
 * field, quoted), read when the IA is registered:
 *
 *   PROVIDER [DOMAIN] [KEY=VALUE ...]
 *
 *   PROVIDER  libfabric's provider name ("tcp", "verbs;ofi_rxm"); "auto"
 *             or nothing: any
 *   DOMAIN    a domain or network device name ("lo", "mlx5_0"); any when
 *             left out (the first word with '=' starts the options)
 *   link_timeout=DURATION  how long a connection with requests
 *             outstanding may go unanswered before it ends in BROKEN
 *             (see dapl-ofi(7)); N or Nms is milliseconds, Ns seconds,
 *             0 turns the watch off
 *   ep=msg|rdm  the libfabric endpoint type, where a provider offers
 *             both; left out: MSG where the provider has it, else RDM
 *
 * Words are separated by blanks. The text comes from a file anyone may
 * have written: it is bounded and checked, never trusted.
 */
#ifndef DOFI_INSTANCE_H
#define DOFI_INSTANCE_H

#include <stddef.h>
#include <stdint.h>

#include "dof/status.h"

/* The most of the instance data that is read. */
#define DOFI_INSTANCE_MAX 512
/* A value not given. */
#define DOFI_INSTANCE_UNSET UINT64_MAX

typedef struct dofi_instance {
	char fi_prov[64];         /* "" for any */
	char fi_domain[128];      /* "" for any */
	uint64_t link_timeout_ms; /* DOFI_INSTANCE_UNSET: not given */
	uint8_t ep_type;          /* DOFI_INSTANCE_EP_* */
} dofi_instance_t;

/* dofi_instance_t.ep_type */
enum { DOFI_INSTANCE_EP_ANY, DOFI_INSTANCE_EP_MSG, DOFI_INSTANCE_EP_RDM };

/*
 * Read text (NULL: none) into *out. DOF_OK when all of it was understood;
 * otherwise DOF_ERR_INVALID_PARAM with why (a sentence for the log) and
 * *out holding what was: an unknown key, a bad value, a word too long or
 * text past DOFI_INSTANCE_MAX leaves that part out.
 */
dof_status_t dofi_instance_parse(const char *text, dofi_instance_t *out,
                                 char *why, size_t why_len);
/*
 * A duration as the options and DAPL_OFI_LINK_TIMEOUT take it: digits,
 * then nothing or "ms" (milliseconds) or "s" (seconds), at most
 * UINT32_MAX ms. *ms set only on success.
 */
dof_status_t dofi_duration_ms(const char *s, uint64_t *ms);

#endif /* DOFI_INSTANCE_H */
