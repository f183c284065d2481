/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * The listener gate (dofi_gate.c): where the fabric's own listener trusts
 * whatever connects to it (traits->cm_gate: sockets), a PSP or RSP listens
 * on its port with a socket of ours, and a thread lets through only
 * well-formed connection requests to the fabric's listener on another
 * port. Used by the MSG backend (dofi_cm_msg.c).
 */
#ifndef DOFI_GATE_H
#define DOFI_GATE_H

#include <netinet/in.h>
#include <stdint.h>

#include "dofi.h"

typedef struct dofi_gate dofi_gate_t;
typedef struct dofi_gate_lis dofi_gate_lis_t;

/* Whether ia's listeners go behind a gate (its fabric's trait, unless
 * DAPL_OFI_SOCKETS_GATE=0). */
int dofi_gate_wanted(const dofi_ia_t *ia);
/*
 * A free port of addr's address for the fabric's listener behind the
 * gate, above the kernel's ephemeral range, going down from *last (the
 * last one taken, updated); 0 (any) when there is none.
 */
uint16_t dofi_gate_port(const struct sockaddr_in *addr, uint16_t *last);
/*
 * The gate's socket for a port, listening from this call on: addr (port
 * 0: any; the port taken goes back in addr). The fd, or -1 with *err
 * (EADDRINUSE: the port is taken).
 */
int dofi_gate_open(struct sockaddr_in *addr, int *err);
/*
 * Pass what comes to fd (dofi_gate_open's; closed here on failure) to the
 * fabric's listener at inner, starting the gate *gp at the first. NULL
 * with *err on failure. ia->lock held.
 */
dofi_gate_lis_t *dofi_gate_listen(dofi_gate_t **gp, int fd,
                                  const struct sockaddr_in *inner, int *err);
/* Stop listening; the connections it let in go on. ia->lock held. */
void dofi_gate_unlisten(dofi_gate_t *g, dofi_gate_lis_t *l);
/* The IA closes: stop the gate's thread, close everything; *gp NULL. */
void dofi_gate_close(dofi_gate_t **gp);
/* Whether another socket holds addr's port. */
int dofi_port_busy(const struct sockaddr_in *addr);

#endif /* DOFI_GATE_H */
