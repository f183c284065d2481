/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/* DAT 1.2: OS, compiler and processor specific base types. */

#ifndef _DAT12_PLATFORM_SPECIFIC_H_
#define _DAT12_PLATFORM_SPECIFIC_H_

/*
 * The DAT 1.2 headers give the 1.2 source API over libdat2, the DAT 2.0
 * library; see <dat/udat.h> and dapl-ofi(7). They compile as C89 and
 * later (and as C++), so this file uses <stdint.h> rather than the BSD
 * u_intN_t types that strict ISO modes hide.
 */
#if !defined(__linux__)
#error "<dat/dat_platform_specific.h>: the DAT 1.2 headers support Linux only"
#endif

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>

/* Buffer alignment that gives the best DMA performance. */
#ifndef DAT_OPTIMAL_ALIGNMENT
#define DAT_OPTIMAL_ALIGNMENT 256
#endif

typedef uint32_t DAT_UINT32;
typedef uint64_t DAT_UINT64;
#ifdef __GNUC__
__extension__ typedef unsigned long long DAT_UVERYLONG;
#else
typedef unsigned long long DAT_UVERYLONG;
#endif
typedef void *DAT_PVOID;
typedef int DAT_COUNT;
typedef DAT_UINT64 DAT_PADDR;

#define DAT_IA_HANDLE_TO_UL(a) (unsigned long)(a)
#define DAT_UL_TO_IA_HANDLE(a) (DAT_IA_HANDLE)(a)

/* IA addresses are struct sockaddr (AF_INET or AF_INET6). */
typedef struct sockaddr DAT_SOCK_ADDR;
typedef struct sockaddr_in6 DAT_SOCK_ADDR6;

#define DAT_AF_INET  AF_INET
#define DAT_AF_INET6 AF_INET6

#define DAT_API
#define DAT_EXPORT extern

/* Parameter direction annotations, as the 1.2 man pages write them. */
#ifndef IN
#define IN
#endif
#ifndef OUT
#define OUT
#endif
#ifndef INOUT
#define INOUT
#endif

#endif /* _DAT12_PLATFORM_SPECIFIC_H_ */
