/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/* DAT 2.0: OS, compiler and processor specific base types. */

#ifndef _DAT_PLATFORM_SPECIFIC_H_
#define _DAT_PLATFORM_SPECIFIC_H_

/*
 * IA addresses are native struct sockaddr storage (AF_INET or AF_INET6),
 * allocated and filled in by the caller and passed as DAT_IA_ADDRESS_PTR.
 */

/* Buffer alignment that gives the best DMA performance. */
#ifndef DAT_OPTIMAL_ALIGNMENT
#define DAT_OPTIMAL_ALIGNMENT 256
#endif

/* Solaris */
#if defined(sun) || defined(__sun) || defined(_sun_) || defined(__solaris__)

#include <sys/types.h>
#include <inttypes.h>
#include <sys/socket.h>
#include <netinet/in.h>

typedef uint32_t DAT_UINT32;
typedef uint64_t DAT_UINT64;
typedef unsigned long long DAT_UVERYLONG;
typedef void *DAT_PVOID;
typedef int DAT_COUNT;
typedef DAT_UINT64 DAT_PADDR;

#define DAT_IA_HANDLE_TO_UL(a) (unsigned long)(a)
#define DAT_UL_TO_IA_HANDLE(a) (DAT_IA_HANDLE)(a)

typedef struct sockaddr DAT_SOCK_ADDR;
typedef struct sockaddr_in6 DAT_SOCK_ADDR6;

#define DAT_AF_INET  AF_INET
#define DAT_AF_INET6 AF_INET6

#define DAT_API
#define DAT_EXPORT extern

/* Linux (user space and kernel) */
#elif defined(__linux__)

#if defined(__KERNEL__)
#include <linux/types.h>
#include <linux/socket.h>
#include <linux/in.h>
#include <linux/in6.h>
#else
#include <sys/types.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/socket.h>
#endif

typedef u_int32_t DAT_UINT32;
typedef u_int64_t DAT_UINT64;
typedef unsigned long long DAT_UVERYLONG;
typedef void *DAT_PVOID;
typedef int DAT_COUNT;
typedef DAT_UINT64 DAT_PADDR;

/* Only when <stdint.h> has not already provided it. */
#ifndef UINT64_C
#define UINT64_C(c) c##ULL
#endif

#define DAT_IA_HANDLE_TO_UL(a) (unsigned long)(a)
#define DAT_UL_TO_IA_HANDLE(a) (DAT_IA_HANDLE)(a)

/* Communicator for DAT_CSP / DAT_EP_PARAM.comm: socket(2) style triple. */
typedef struct dat_comm {
	int domain;
	int type;
	int protocol;
} DAT_COMM;

typedef int DAT_FD;

typedef struct sockaddr DAT_SOCK_ADDR;
typedef struct sockaddr_in6 DAT_SOCK_ADDR6;

#define DAT_AF_INET            AF_INET
#define DAT_AF_INET6           AF_INET6

#define DAT_API
#define DAT_EXPORT extern

/* Windows, 32 and 64 bit */
#elif defined(_MSC_VER) || defined(_WIN32) || defined(_WIN64)

#include <winsock2.h>
#include <ws2tcpip.h>

typedef unsigned __int32 DAT_UINT32;
typedef unsigned __int64 DAT_UINT64;
typedef unsigned long DAT_UVERYLONG;
typedef void *DAT_PVOID;
typedef int DAT_COUNT;
typedef DAT_UINT64 DAT_PADDR;

#if defined(_WIN64)
#define DAT_IA_HANDLE_TO_UL(a) (unsigned long)((DAT_UINT64)(a))
#define DAT_UL_TO_IA_HANDLE(a) (DAT_IA_HANDLE)((DAT_UINT64)(a))
#else
#define DAT_IA_HANDLE_TO_UL(a) (unsigned long)(a)
#define DAT_UL_TO_IA_HANDLE(a) (DAT_IA_HANDLE)(a)
#endif

typedef struct dat_comm {
	int domain;
	int type;
	int protocol;
} DAT_COMM;

typedef int DAT_FD;

typedef struct sockaddr DAT_SOCK_ADDR;
typedef struct sockaddr_in6 DAT_SOCK_ADDR6;

#ifndef UINT64_C
#define UINT64_C(c) c##i64
#endif

#define DAT_AF_INET  AF_INET
#define DAT_AF_INET6 AF_INET6

#if defined(EXPORT_DAT_SYMBOLS)
#define DAT_EXPORT __declspec(dllexport)
#else
#define DAT_EXPORT __declspec(dllimport)
#endif

#define DAT_API __stdcall

#ifndef __inline__
#define __inline__ __inline
#endif

#ifndef INLINE
#define INLINE __inline
#endif

#else
#error "dat_platform_specific.h: unsupported operating system"
#endif

/* Parameter direction annotations; expand to nothing. */
#ifndef IN
#define IN
#endif
#ifndef OUT
#define OUT
#endif
#ifndef INOUT
#define INOUT
#endif

#endif /* _DAT_PLATFORM_SPECIFIC_H_ */
