/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/* DAT 1.2: types and calls common to the user (uDAT) and kernel (kDAT) API. */

#ifndef _DAT12_DAT_H_

#if !defined(_DAT12_UDAT_H_)
/*
 * This file relies on types that udat.h defines before including it, so a
 * direct include is routed through udat.h, which comes back here.
 */
#include <dat/udat.h>
#else

#define _DAT12_DAT_H_

#include <dat/dat_error.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Names, types, structure members and call signatures are DAT 1.2's.
 * Enumerators and flag bits that DAT 2.0 also has carry 2.0's values,
 * which are what libdat2 takes and returns (dapl-ofi(7) lists the few
 * that 1.2 numbered differently). Calls whose 1.2 form differs from 2.0
 * are static inline wrappers in <dat/udat_libdat2.h>; the comment
 * "(wrapper)" marks them below.
 */

/* Basic types */

typedef char *DAT_NAME_PTR;
#define DAT_NAME_MAX_LENGTH  256

/* Name/value pair for provider, transport and vendor attributes. */
typedef struct dat_named_attr {
	const char *name;
	const char *value;
} DAT_NAMED_ATTR;

typedef enum dat_boolean { DAT_FALSE = 0, DAT_TRUE = 1 } DAT_BOOLEAN;

/* Consumer cookie attached to handles, DTOs and RMR binds. */
typedef union dat_context {
	DAT_PVOID as_ptr;
	DAT_UINT64 as_64;
	DAT_UVERYLONG as_index;
} DAT_CONTEXT;

typedef DAT_CONTEXT DAT_DTO_COOKIE;
typedef DAT_CONTEXT DAT_RMR_COOKIE;

typedef enum dat_completion_flags {
	DAT_COMPLETION_DEFAULT_FLAG = 0x00,
	DAT_COMPLETION_SUPPRESS_FLAG = 0x01, /* no event on success */
	DAT_COMPLETION_SOLICITED_WAIT_FLAG = 0x02,
	DAT_COMPLETION_UNSIGNALLED_FLAG = 0x04,
	DAT_COMPLETION_BARRIER_FENCE_FLAG = 0x08, /* wait for prior reads */
	DAT_COMPLETION_EVD_THRESHOLD_FLAG = 0x10  /* uDAT recv only */
} DAT_COMPLETION_FLAGS;

/* Timeouts are in microseconds. */
typedef DAT_UINT32 DAT_TIMEOUT;
#define DAT_TIMEOUT_INFINITE ((DAT_TIMEOUT)~0)

/* Handles */

typedef DAT_PVOID DAT_HANDLE;
typedef DAT_HANDLE DAT_CR_HANDLE;
typedef DAT_HANDLE DAT_EP_HANDLE;
typedef DAT_HANDLE DAT_EVD_HANDLE;
typedef DAT_HANDLE DAT_IA_HANDLE;
typedef DAT_HANDLE DAT_LMR_HANDLE;
typedef DAT_HANDLE DAT_PSP_HANDLE;
typedef DAT_HANDLE DAT_PZ_HANDLE;
typedef DAT_HANDLE DAT_RMR_HANDLE;
typedef DAT_HANDLE DAT_RSP_HANDLE;
typedef DAT_HANDLE DAT_SRQ_HANDLE;

#define DAT_HANDLE_NULL      ((DAT_HANDLE)NULL)

/* Addressing */

typedef DAT_SOCK_ADDR *DAT_IA_ADDRESS_PTR;

typedef DAT_UINT64 DAT_CONN_QUAL;
typedef DAT_UINT64 DAT_PORT_QUAL;

typedef enum dat_qos {
	DAT_QOS_BEST_EFFORT = 0x00,
	DAT_QOS_HIGH_THROUGHPUT = 0x01,
	DAT_QOS_LOW_LATENCY = 0x02,
	DAT_QOS_ECONOMY = 0x04,
	DAT_QOS_PREMIUM = 0x08
} DAT_QOS;

/* Flags */

typedef enum dat_connect_flags {
	DAT_CONNECT_DEFAULT_FLAG = 0x00,
	DAT_CONNECT_MULTIPATH_FLAG = 0x01
} DAT_CONNECT_FLAGS;

/* The name the 1.2 dat_ep_connect(3DAT) page uses. */
#define DAT_MULTIPATH_FLAG   DAT_CONNECT_MULTIPATH_FLAG

typedef enum dat_close_flags {
	DAT_CLOSE_ABRUPT_FLAG = 0x00,
	DAT_CLOSE_GRACEFUL_FLAG = 0x01
} DAT_CLOSE_FLAGS;

#define DAT_CLOSE_DEFAULT    DAT_CLOSE_ABRUPT_FLAG

/* Event streams an EVD accepts. */
typedef enum dat_evd_flags {
	DAT_EVD_SOFTWARE_FLAG = 0x001,
	DAT_EVD_CR_FLAG = 0x010,
	DAT_EVD_DTO_FLAG = 0x020,
	DAT_EVD_CONNECTION_FLAG = 0x040,
	DAT_EVD_RMR_BIND_FLAG = 0x080,
	DAT_EVD_ASYNC_FLAG = 0x100,
	DAT_EVD_DEFAULT_FLAG = 0x1F0 /* all but software events */
} DAT_EVD_FLAGS;

typedef enum dat_psp_flags {
	DAT_PSP_CONSUMER_FLAG = 0x00, /* consumer supplies the EP */
	DAT_PSP_PROVIDER_FLAG = 0x01  /* provider creates the EP */
} DAT_PSP_FLAGS;

/*
 * Memory
 *
 * Triplets carry 64-bit virtual addresses and lengths in host byte order
 * whatever the pointer size; contexts are 32-bit. The pad member keeps
 * address and length 64-bit aligned; it is not read.
 */

typedef DAT_UINT32 DAT_LMR_CONTEXT;
typedef DAT_UINT32 DAT_RMR_CONTEXT;

typedef DAT_UINT64 DAT_VLEN;
typedef DAT_UINT64 DAT_VADDR;

/* Completed by udat.h. */
typedef struct dat_provider_attr DAT_PROVIDER_ATTR;
typedef struct dat_evd_param DAT_EVD_PARAM;
typedef struct dat_lmr_param DAT_LMR_PARAM;

/* With segment_length 0 the other members are ignored. */
typedef struct dat_lmr_triplet {
	DAT_LMR_CONTEXT lmr_context;
	DAT_UINT32 pad;
	DAT_VADDR virtual_address;
	DAT_VLEN segment_length;
} DAT_LMR_TRIPLET;

typedef struct dat_rmr_triplet {
	DAT_RMR_CONTEXT rmr_context;
	DAT_UINT32 pad;
	DAT_VADDR target_address;
	DAT_VLEN segment_length;
} DAT_RMR_TRIPLET;

typedef enum dat_mem_priv_flags {
	DAT_MEM_PRIV_NONE_FLAG = 0x00,
	DAT_MEM_PRIV_LOCAL_READ_FLAG = 0x01,
	DAT_MEM_PRIV_REMOTE_READ_FLAG = 0x02,
	DAT_MEM_PRIV_LOCAL_WRITE_FLAG = 0x10,
	DAT_MEM_PRIV_REMOTE_WRITE_FLAG = 0x20,
	DAT_MEM_PRIV_ALL_FLAG = 0x33
} DAT_MEM_PRIV_FLAGS;

/* DAT 1.0 names */
#define DAT_MEM_PRIV_READ_FLAG \
	(DAT_MEM_PRIV_LOCAL_READ_FLAG | DAT_MEM_PRIV_REMOTE_READ_FLAG)
#define DAT_MEM_PRIV_WRITE_FLAG \
	(DAT_MEM_PRIV_LOCAL_WRITE_FLAG | DAT_MEM_PRIV_REMOTE_WRITE_FLAG)

/* dat_lmr_query() mask; 0x040 is 2.0's va_type. */
typedef enum dat_lmr_param_mask {
	DAT_LMR_FIELD_IA_HANDLE = 0x001,
	DAT_LMR_FIELD_MEM_TYPE = 0x002,
	DAT_LMR_FIELD_REGION_DESC = 0x004,
	DAT_LMR_FIELD_LENGTH = 0x008,
	DAT_LMR_FIELD_PZ_HANDLE = 0x010,
	DAT_LMR_FIELD_MEM_PRIV = 0x020,
	DAT_LMR_FIELD_LMR_CONTEXT = 0x080,
	DAT_LMR_FIELD_RMR_CONTEXT = 0x100,
	DAT_LMR_FIELD_REGISTERED_SIZE = 0x200,
	DAT_LMR_FIELD_REGISTERED_ADDRESS = 0x400,
	DAT_LMR_FIELD_ALL = 0x7BF
} DAT_LMR_PARAM_MASK;

typedef struct dat_rmr_param {
	DAT_IA_HANDLE ia_handle;
	DAT_PZ_HANDLE pz_handle;
	DAT_LMR_TRIPLET lmr_triplet;
	DAT_MEM_PRIV_FLAGS mem_priv;
	DAT_RMR_CONTEXT rmr_context;
} DAT_RMR_PARAM;

typedef enum dat_rmr_param_mask {
	DAT_RMR_FIELD_IA_HANDLE = 0x01,
	DAT_RMR_FIELD_PZ_HANDLE = 0x02,
	DAT_RMR_FIELD_LMR_TRIPLET = 0x04,
	DAT_RMR_FIELD_MEM_PRIV = 0x08,
	DAT_RMR_FIELD_RMR_CONTEXT = 0x10,
	DAT_RMR_FIELD_ALL = 0x1F
} DAT_RMR_PARAM_MASK;

/* Provider and IA attributes */

/* Who owns a DTO's IOV after completion. */
typedef enum dat_iov_ownership {
	DAT_IOV_CONSUMER = 0x0,
	DAT_IOV_PROVIDER_NOMOD = 0x1, /* provider leaves it unmodified */
	DAT_IOV_PROVIDER_MOD = 0x2    /* provider may have modified it */
} DAT_IOV_OWNERSHIP;

typedef enum dat_ep_creator_for_psp {
	DAT_PSP_CREATES_EP_NEVER,
	DAT_PSP_CREATES_EP_IFASKED,
	DAT_PSP_CREATES_EP_ALWAYS
} DAT_EP_CREATOR_FOR_PSP;

/* DAT_IA_ATTR is in udat.h. */
typedef struct dat_ia_attr DAT_IA_ATTR;

typedef DAT_UINT64 DAT_IA_ATTR_MASK;

/* Mask bits above 32 are written as shifts, which C89 accepts. */
#define DAT_IA_FIELD_IA_ADAPTER_NAME             ((DAT_IA_ATTR_MASK)0x00000001)
#define DAT_IA_FIELD_IA_VENDOR_NAME              ((DAT_IA_ATTR_MASK)0x00000002)
#define DAT_IA_FIELD_IA_HARDWARE_MAJOR_VERSION   ((DAT_IA_ATTR_MASK)0x00000004)
#define DAT_IA_FIELD_IA_HARDWARE_MINOR_VERSION   ((DAT_IA_ATTR_MASK)0x00000008)
#define DAT_IA_FIELD_IA_FIRMWARE_MAJOR_VERSION   ((DAT_IA_ATTR_MASK)0x00000010)
#define DAT_IA_FIELD_IA_FIRMWARE_MINOR_VERSION   ((DAT_IA_ATTR_MASK)0x00000020)
#define DAT_IA_FIELD_IA_ADDRESS_PTR              ((DAT_IA_ATTR_MASK)0x00000040)
#define DAT_IA_FIELD_IA_MAX_EPS                  ((DAT_IA_ATTR_MASK)0x00000080)
#define DAT_IA_FIELD_IA_MAX_DTO_PER_EP           ((DAT_IA_ATTR_MASK)0x00000100)
#define DAT_IA_FIELD_IA_MAX_RDMA_READ_PER_EP_IN  ((DAT_IA_ATTR_MASK)0x00000200)
#define DAT_IA_FIELD_IA_MAX_RDMA_READ_PER_EP_OUT ((DAT_IA_ATTR_MASK)0x00000400)
#define DAT_IA_FIELD_IA_MAX_EVDS                 ((DAT_IA_ATTR_MASK)0x00000800)
#define DAT_IA_FIELD_IA_MAX_EVD_QLEN             ((DAT_IA_ATTR_MASK)0x00001000)
#define DAT_IA_FIELD_IA_MAX_IOV_SEGMENTS_PER_DTO ((DAT_IA_ATTR_MASK)0x00002000)
#define DAT_IA_FIELD_IA_MAX_LMRS                 ((DAT_IA_ATTR_MASK)0x00004000)
#define DAT_IA_FIELD_IA_MAX_LMR_BLOCK_SIZE       ((DAT_IA_ATTR_MASK)0x00008000)
#define DAT_IA_FIELD_IA_MAX_LMR_VIRTUAL_ADDRESS  ((DAT_IA_ATTR_MASK)0x00010000)
#define DAT_IA_FIELD_IA_MAX_PZS                  ((DAT_IA_ATTR_MASK)0x00020000)
#define DAT_IA_FIELD_IA_MAX_MESSAGE_SIZE         ((DAT_IA_ATTR_MASK)0x00040000)
#define DAT_IA_FIELD_IA_MAX_RDMA_SIZE            ((DAT_IA_ATTR_MASK)0x00080000)
#define DAT_IA_FIELD_IA_MAX_RMRS                 ((DAT_IA_ATTR_MASK)0x00100000)
#define DAT_IA_FIELD_IA_MAX_RMR_TARGET_ADDRESS   ((DAT_IA_ATTR_MASK)0x00200000)
#define DAT_IA_FIELD_IA_MAX_SRQS                 ((DAT_IA_ATTR_MASK)0x00400000)
#define DAT_IA_FIELD_IA_MAX_EP_PER_SRQ           ((DAT_IA_ATTR_MASK)0x00800000)
#define DAT_IA_FIELD_IA_MAX_RECV_PER_SRQ         ((DAT_IA_ATTR_MASK)0x01000000)
#define DAT_IA_FIELD_IA_MAX_IOV_SEGMENTS_PER_RDMA_READ \
	((DAT_IA_ATTR_MASK)0x02000000)
#define DAT_IA_FIELD_IA_MAX_IOV_SEGMENTS_PER_RDMA_WRITE \
	((DAT_IA_ATTR_MASK)0x04000000)
#define DAT_IA_FIELD_IA_MAX_RDMA_READ_IN  ((DAT_IA_ATTR_MASK)0x08000000)
#define DAT_IA_FIELD_IA_MAX_RDMA_READ_OUT ((DAT_IA_ATTR_MASK)0x10000000)
#define DAT_IA_FIELD_IA_MAX_RDMA_READ_PER_EP_IN_GUARANTEED \
	((DAT_IA_ATTR_MASK)0x20000000)
#define DAT_IA_FIELD_IA_MAX_RDMA_READ_PER_EP_OUT_GUARANTEED \
	((DAT_IA_ATTR_MASK)0x40000000)
/* 0x080000000 and 0x100000000 are 2.0's zb_supported and extensions. */
#define DAT_IA_FIELD_IA_NUM_TRANSPORT_ATTR ((DAT_IA_ATTR_MASK)0x04 << 32)
#define DAT_IA_FIELD_IA_TRANSPORT_ATTR     ((DAT_IA_ATTR_MASK)0x08 << 32)
#define DAT_IA_FIELD_IA_NUM_VENDOR_ATTR    ((DAT_IA_ATTR_MASK)0x10 << 32)
#define DAT_IA_FIELD_IA_VENDOR_ATTR        ((DAT_IA_ATTR_MASK)0x20 << 32)
#define DAT_IA_FIELD_ALL \
	(((DAT_IA_ATTR_MASK)0x3C << 32) | (DAT_IA_ATTR_MASK)0x7FFFFFFF)
#define DAT_IA_FIELD_NONE                     ((DAT_IA_ATTR_MASK)0x0)

/* DAT 1.0 and 1.1 names */
#define DAT_IA_ALL                            DAT_IA_FIELD_ALL
#define DAT_IA_FIELD_IA_MAX_MTU_SIZE          DAT_IA_FIELD_IA_MAX_MESSAGE_SIZE
#define DAT_IA_FIELD_IA_MAX_DTO_PER_OP        DAT_IA_FIELD_IA_MAX_DTO_PER_EP
#define max_rdma_read_per_ep                  max_rdma_read_per_ep_in
#define max_mtu_size                          max_message_size

/* Endpoint attributes */

typedef enum dat_service_type {
	DAT_SERVICE_TYPE_RC /* reliable connection */
} DAT_SERVICE_TYPE;

/* Sizes are DAT_VLEN (64-bit) here; libdat2 holds 32 bits of them. */
typedef struct dat_ep_attr {
	DAT_SERVICE_TYPE service_type;
	DAT_VLEN max_message_size;
	DAT_VLEN max_rdma_size;
	DAT_QOS qos;
	DAT_COMPLETION_FLAGS recv_completion_flags;
	DAT_COMPLETION_FLAGS request_completion_flags;
	DAT_COUNT max_recv_dtos;
	DAT_COUNT max_request_dtos;
	DAT_COUNT max_recv_iov;
	DAT_COUNT max_request_iov;
	DAT_COUNT max_rdma_read_in;
	DAT_COUNT max_rdma_read_out;
	DAT_COUNT srq_soft_hw;
	DAT_COUNT max_rdma_read_iov;
	DAT_COUNT max_rdma_write_iov;
	DAT_COUNT ep_transport_specific_count;
	DAT_NAMED_ATTR *ep_transport_specific;
	DAT_COUNT ep_provider_specific_count;
	DAT_NAMED_ATTR *ep_provider_specific;
} DAT_EP_ATTR;

/* Endpoint parameters */

/* DAT 1.x name */
#define DAT_EP_STATE_ERROR                    DAT_EP_STATE_DISCONNECTED

typedef enum dat_ep_state {
	DAT_EP_STATE_UNCONNECTED,
	DAT_EP_STATE_UNCONFIGURED_UNCONNECTED,
	DAT_EP_STATE_RESERVED,
	DAT_EP_STATE_UNCONFIGURED_RESERVED,
	DAT_EP_STATE_PASSIVE_CONNECTION_PENDING,
	DAT_EP_STATE_UNCONFIGURED_PASSIVE,
	DAT_EP_STATE_ACTIVE_CONNECTION_PENDING,
	DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING,
	DAT_EP_STATE_UNCONFIGURED_TENTATIVE,
	DAT_EP_STATE_CONNECTED,
	DAT_EP_STATE_DISCONNECT_PENDING,
	DAT_EP_STATE_DISCONNECTED,
	DAT_EP_STATE_COMPLETION_PENDING
} DAT_EP_STATE;

typedef struct dat_ep_param {
	DAT_IA_HANDLE ia_handle;
	DAT_EP_STATE ep_state;
	DAT_IA_ADDRESS_PTR local_ia_address_ptr;
	DAT_PORT_QUAL local_port_qual;
	DAT_IA_ADDRESS_PTR remote_ia_address_ptr;
	DAT_PORT_QUAL remote_port_qual;
	DAT_PZ_HANDLE pz_handle;
	DAT_EVD_HANDLE recv_evd_handle;
	DAT_EVD_HANDLE request_evd_handle;
	DAT_EVD_HANDLE connect_evd_handle;
	DAT_SRQ_HANDLE srq_handle;
	DAT_EP_ATTR ep_attr;
} DAT_EP_PARAM;

/* dat_ep_query()/dat_ep_modify() mask; 0x4 is 2.0's comm. */
typedef DAT_UINT64 DAT_EP_PARAM_MASK;

#define DAT_EP_FIELD_IA_HANDLE                ((DAT_EP_PARAM_MASK)0x00000001)
#define DAT_EP_FIELD_EP_STATE                 ((DAT_EP_PARAM_MASK)0x00000002)
#define DAT_EP_FIELD_LOCAL_IA_ADDRESS_PTR     ((DAT_EP_PARAM_MASK)0x00000008)
#define DAT_EP_FIELD_LOCAL_PORT_QUAL          ((DAT_EP_PARAM_MASK)0x00000010)
#define DAT_EP_FIELD_REMOTE_IA_ADDRESS_PTR    ((DAT_EP_PARAM_MASK)0x00000020)
#define DAT_EP_FIELD_REMOTE_PORT_QUAL         ((DAT_EP_PARAM_MASK)0x00000040)
#define DAT_EP_FIELD_PZ_HANDLE                ((DAT_EP_PARAM_MASK)0x00000080)
#define DAT_EP_FIELD_RECV_EVD_HANDLE          ((DAT_EP_PARAM_MASK)0x00000100)
#define DAT_EP_FIELD_REQUEST_EVD_HANDLE       ((DAT_EP_PARAM_MASK)0x00000200)
#define DAT_EP_FIELD_CONNECT_EVD_HANDLE       ((DAT_EP_PARAM_MASK)0x00000400)
#define DAT_EP_FIELD_SRQ_HANDLE               ((DAT_EP_PARAM_MASK)0x00000800)
/* DAT_EP_ATTR members */
#define DAT_EP_FIELD_EP_ATTR_SERVICE_TYPE     ((DAT_EP_PARAM_MASK)0x00001000)
#define DAT_EP_FIELD_EP_ATTR_MAX_MESSAGE_SIZE ((DAT_EP_PARAM_MASK)0x00002000)
#define DAT_EP_FIELD_EP_ATTR_MAX_RDMA_SIZE    ((DAT_EP_PARAM_MASK)0x00004000)
#define DAT_EP_FIELD_EP_ATTR_QOS              ((DAT_EP_PARAM_MASK)0x00008000)
#define DAT_EP_FIELD_EP_ATTR_RECV_COMPLETION_FLAGS \
	((DAT_EP_PARAM_MASK)0x00010000)
#define DAT_EP_FIELD_EP_ATTR_REQUEST_COMPLETION_FLAGS \
	((DAT_EP_PARAM_MASK)0x00020000)
#define DAT_EP_FIELD_EP_ATTR_MAX_RECV_DTOS      ((DAT_EP_PARAM_MASK)0x00040000)
#define DAT_EP_FIELD_EP_ATTR_MAX_REQUEST_DTOS   ((DAT_EP_PARAM_MASK)0x00080000)
#define DAT_EP_FIELD_EP_ATTR_MAX_RECV_IOV       ((DAT_EP_PARAM_MASK)0x00100000)
#define DAT_EP_FIELD_EP_ATTR_MAX_REQUEST_IOV    ((DAT_EP_PARAM_MASK)0x00200000)
#define DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_IN   ((DAT_EP_PARAM_MASK)0x00400000)
#define DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_OUT  ((DAT_EP_PARAM_MASK)0x00800000)
#define DAT_EP_FIELD_EP_ATTR_SRQ_SOFT_HW        ((DAT_EP_PARAM_MASK)0x01000000)
#define DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_IOV  ((DAT_EP_PARAM_MASK)0x02000000)
#define DAT_EP_FIELD_EP_ATTR_MAX_RDMA_WRITE_IOV ((DAT_EP_PARAM_MASK)0x04000000)
#define DAT_EP_FIELD_EP_ATTR_NUM_TRANSPORT_ATTR ((DAT_EP_PARAM_MASK)0x08000000)
#define DAT_EP_FIELD_EP_ATTR_TRANSPORT_SPECIFIC_ATTR \
	((DAT_EP_PARAM_MASK)0x10000000)
#define DAT_EP_FIELD_EP_ATTR_NUM_PROVIDER_ATTR ((DAT_EP_PARAM_MASK)0x20000000)
#define DAT_EP_FIELD_EP_ATTR_PROVIDER_SPECIFIC_ATTR \
	((DAT_EP_PARAM_MASK)0x40000000)
#define DAT_EP_FIELD_EP_ATTR_ALL          ((DAT_EP_PARAM_MASK)0x7FFFF000)
#define DAT_EP_FIELD_ALL                  ((DAT_EP_PARAM_MASK)0x7FFFFFFB)

/* DAT 1.0 and 1.1 name */
#define DAT_EP_FIELD_EP_ATTR_MAX_MTU_SIZE DAT_EP_FIELD_EP_ATTR_MAX_MESSAGE_SIZE

/* Watermarks */
#define DAT_WATERMARK_INFINITE            ((DAT_COUNT)~0)
#define DAT_HW_DEFAULT                    DAT_WATERMARK_INFINITE
#define DAT_SRQ_LW_DEFAULT                0x0

/* Shared receive queues */

typedef enum dat_srq_state {
	DAT_SRQ_STATE_OPERATIONAL = 1,
	DAT_SRQ_STATE_ERROR = 0
} DAT_SRQ_STATE;

#define DAT_VALUE_UNKNOWN                 (((DAT_COUNT)~0) - 1)

typedef struct dat_srq_attr {
	DAT_COUNT max_recv_dtos;
	DAT_COUNT max_recv_iov;
	DAT_COUNT low_watermark;
} DAT_SRQ_ATTR;

typedef struct dat_srq_param {
	DAT_IA_HANDLE ia_handle;
	DAT_SRQ_STATE srq_state;
	DAT_PZ_HANDLE pz_handle;
	DAT_COUNT max_recv_dtos;
	DAT_COUNT max_recv_iov;
	DAT_COUNT low_watermark;
	DAT_COUNT available_dto_count;
	DAT_COUNT outstanding_dto_count;
} DAT_SRQ_PARAM;

typedef enum dat_srq_param_mask {
	DAT_SRQ_FIELD_IA_HANDLE = 0x001,
	DAT_SRQ_FIELD_SRQ_STATE = 0x002,
	DAT_SRQ_FIELD_PZ_HANDLE = 0x004,
	DAT_SRQ_FIELD_MAX_RECV_DTO = 0x008,
	DAT_SRQ_FIELD_MAX_RECV_IOV = 0x010,
	DAT_SRQ_FIELD_LOW_WATERMARK = 0x020,
	DAT_SRQ_FIELD_AVAILABLE_DTO_COUNT = 0x040,
	DAT_SRQ_FIELD_OUTSTANDING_DTO_COUNT = 0x080,
	DAT_SRQ_FIELD_ALL = 0x0FF
} DAT_SRQ_PARAM_MASK;

/* Protection zones */

typedef struct dat_pz_param {
	DAT_IA_HANDLE ia_handle;
} DAT_PZ_PARAM;

typedef enum dat_pz_param_mask {
	DAT_PZ_FIELD_IA_HANDLE = 0x01,
	DAT_PZ_FIELD_ALL = 0x01
} DAT_PZ_PARAM_MASK;

/* Service points: public (PSP) and reserved (RSP) */

typedef struct dat_psp_param {
	DAT_IA_HANDLE ia_handle;
	DAT_CONN_QUAL conn_qual;
	DAT_EVD_HANDLE evd_handle;
	DAT_PSP_FLAGS psp_flags;
} DAT_PSP_PARAM;

typedef enum dat_psp_param_mask {
	DAT_PSP_FIELD_IA_HANDLE = 0x01,
	DAT_PSP_FIELD_CONN_QUAL = 0x02,
	DAT_PSP_FIELD_EVD_HANDLE = 0x04,
	DAT_PSP_FIELD_PSP_FLAGS = 0x08,
	DAT_PSP_FIELD_ALL = 0x0F
} DAT_PSP_PARAM_MASK;

typedef struct dat_rsp_param {
	DAT_IA_HANDLE ia_handle;
	DAT_CONN_QUAL conn_qual;
	DAT_EVD_HANDLE evd_handle;
	DAT_EP_HANDLE ep_handle;
} DAT_RSP_PARAM;

typedef enum dat_rsp_param_mask {
	DAT_RSP_FIELD_IA_HANDLE = 0x01,
	DAT_RSP_FIELD_CONN_QUAL = 0x02,
	DAT_RSP_FIELD_EVD_HANDLE = 0x04,
	DAT_RSP_FIELD_EP_HANDLE = 0x08,
	DAT_RSP_FIELD_ALL = 0x0F
} DAT_RSP_PARAM_MASK;

/* Connection requests; remote EP attributes travel in private data. */

typedef struct dat_cr_param {
	DAT_IA_ADDRESS_PTR remote_ia_address_ptr;
	DAT_PORT_QUAL remote_port_qual;
	DAT_COUNT private_data_size;
	DAT_PVOID private_data;
	DAT_EP_HANDLE local_ep_handle; /* RSP's or provider-created EP */
} DAT_CR_PARAM;

typedef enum dat_cr_param_mask {
	DAT_CR_FIELD_REMOTE_IA_ADDRESS_PTR = 0x01,
	DAT_CR_FIELD_REMOTE_PORT_QUAL = 0x02,
	DAT_CR_FIELD_PRIVATE_DATA_SIZE = 0x04,
	DAT_CR_FIELD_PRIVATE_DATA = 0x08,
	DAT_CR_FIELD_LOCAL_EP_HANDLE = 0x10,
	DAT_CR_FIELD_ALL = 0x1F
} DAT_CR_PARAM_MASK;

/* Events */

/* DAT 1.x names */
#define DAT_DTO_LENGTH_ERROR              DAT_DTO_ERR_LOCAL_LENGTH
#define DAT_DTO_FAILURE                   DAT_DTO_ERR_FLUSHED

typedef enum dat_dto_completion_status {
	DAT_DTO_SUCCESS = 0,
	DAT_DTO_ERR_FLUSHED = 1,
	DAT_DTO_ERR_LOCAL_LENGTH = 2,
	DAT_DTO_ERR_LOCAL_EP = 3,
	DAT_DTO_ERR_LOCAL_PROTECTION = 4,
	DAT_DTO_ERR_BAD_RESPONSE = 5,
	DAT_DTO_ERR_REMOTE_ACCESS = 6,
	DAT_DTO_ERR_REMOTE_RESPONDER = 7,
	DAT_DTO_ERR_TRANSPORT = 8,
	DAT_DTO_ERR_RECEIVER_NOT_READY = 9,
	DAT_DTO_ERR_PARTIAL_PACKET = 10,
	DAT_RMR_OPERATION_FAILED = 11
} DAT_DTO_COMPLETION_STATUS;

/* RMR binds complete with DTO status codes. */
#define DAT_RMR_BIND_SUCCESS              DAT_DTO_SUCCESS
#define DAT_RMR_BIND_FAILURE              DAT_DTO_ERR_FLUSHED
#define DAT_RMR_BIND_COMPLETION_STATUS    DAT_DTO_COMPLETION_STATUS

/* transfered_length is valid only on DAT_DTO_SUCCESS. */
typedef struct dat_dto_completion_event_data {
	DAT_EP_HANDLE ep_handle;
	DAT_DTO_COOKIE user_cookie;
	DAT_DTO_COMPLETION_STATUS status;
	DAT_VLEN transfered_length;
} DAT_DTO_COMPLETION_EVENT_DATA;

typedef struct dat_rmr_bind_completion_event_data {
	DAT_RMR_HANDLE rmr_handle;
	DAT_RMR_COOKIE user_cookie;
	DAT_RMR_BIND_COMPLETION_STATUS status;
} DAT_RMR_BIND_COMPLETION_EVENT_DATA;

typedef union dat_sp_handle {
	DAT_RSP_HANDLE rsp_handle;
	DAT_PSP_HANDLE psp_handle;
} DAT_SP_HANDLE;

typedef struct dat_cr_arrival_event_data {
	DAT_SP_HANDLE sp_handle; /* DAT_HANDLE_NULL for an RSP (now freed) */
	DAT_IA_ADDRESS_PTR local_ia_address_ptr;
	DAT_CONN_QUAL conn_qual;
	DAT_CR_HANDLE cr_handle; /* to accept or reject */
} DAT_CR_ARRIVAL_EVENT_DATA;

typedef struct dat_connection_event_data {
	DAT_EP_HANDLE ep_handle;
	DAT_COUNT private_data_size;
	DAT_PVOID private_data;
} DAT_CONNECTION_EVENT_DATA;

/* The IA whose async EVD reports the error. */
typedef struct dat_asynch_error_event_data {
	DAT_IA_HANDLE ia_handle;
} DAT_ASYNCH_ERROR_EVENT_DATA;

typedef struct dat_software_event_data {
	DAT_PVOID pointer;
} DAT_SOFTWARE_EVENT_DATA;

typedef enum dat_event_number {
	DAT_DTO_COMPLETION_EVENT = 0x00001,
	DAT_RMR_BIND_COMPLETION_EVENT = 0x01001,
	DAT_CONNECTION_REQUEST_EVENT = 0x02001,
	DAT_CONNECTION_EVENT_ESTABLISHED = 0x04001,
	DAT_CONNECTION_EVENT_PEER_REJECTED = 0x04002,
	DAT_CONNECTION_EVENT_NON_PEER_REJECTED = 0x04003,
	DAT_CONNECTION_EVENT_ACCEPT_COMPLETION_ERROR = 0x04004,
	DAT_CONNECTION_EVENT_DISCONNECTED = 0x04005,
	DAT_CONNECTION_EVENT_BROKEN = 0x04006,
	DAT_CONNECTION_EVENT_TIMED_OUT = 0x04007,
	DAT_CONNECTION_EVENT_UNREACHABLE = 0x04008,
	DAT_ASYNC_ERROR_EVD_OVERFLOW = 0x08001,
	DAT_ASYNC_ERROR_IA_CATASTROPHIC = 0x08002,
	DAT_ASYNC_ERROR_EP_BROKEN = 0x08003,
	DAT_ASYNC_ERROR_TIMED_OUT = 0x08004,
	DAT_ASYNC_ERROR_PROVIDER_INTERNAL_ERROR = 0x08005,
	DAT_SOFTWARE_EVENT = 0x10001
} DAT_EVENT_NUMBER;

typedef union dat_event_data {
	DAT_DTO_COMPLETION_EVENT_DATA dto_completion_event_data;
	DAT_RMR_BIND_COMPLETION_EVENT_DATA rmr_completion_event_data;
	DAT_CR_ARRIVAL_EVENT_DATA cr_arrival_event_data;
	DAT_CONNECTION_EVENT_DATA connect_event_data;
	DAT_ASYNCH_ERROR_EVENT_DATA asynch_error_event_data;
	DAT_SOFTWARE_EVENT_DATA software_event_data;
} DAT_EVENT_DATA;

typedef struct dat_event {
	DAT_EVENT_NUMBER event_number;
	DAT_EVD_HANDLE evd_handle;
	DAT_EVENT_DATA event_data;
} DAT_EVENT;

/* Registry entry, as returned by dat_registry_list_providers(). */
typedef struct dat_provider_info {
	char ia_name[DAT_NAME_MAX_LENGTH];
	DAT_UINT32 dapl_version_major;
	DAT_UINT32 dapl_version_minor;
	DAT_BOOLEAN is_thread_safe;
} DAT_PROVIDER_INFO;

/*
 * Calls
 *
 * The comment above each prototype names its arguments in order. A call
 * marked (wrapper) is defined in <dat/udat_libdat2.h> with the 1.2
 * signature shown.
 */

/* IA */

/*
 * (wrapper) name, async_evd_min_qlen, async_evd (in/out), ia, major,
 * minor, thread_safety; a 1.x version is served by libdat2's 2.0
 */
#define dat_ia_open(name, qlen, async_evd, ia)                             \
	dat_ia_openv((name), (qlen), (async_evd), (ia), DAT_VERSION_MAJOR, \
	             DAT_VERSION_MINOR, DAT_THREADSAFE)

/* (wrapper) ia, async_evd, ia_attr_mask, ia_attr, provider_attr_mask,
 * provider_attr */

/* ia, close_flags */
extern DAT_RETURN DAT_API dat_ia_close(DAT_IA_HANDLE, DAT_CLOSE_FLAGS);

/* Any handle */

/* handle, context */
extern DAT_RETURN DAT_API dat_set_consumer_context(DAT_HANDLE, DAT_CONTEXT);

/* handle, context */
extern DAT_RETURN DAT_API dat_get_consumer_context(DAT_HANDLE, DAT_CONTEXT *);

/* handle, type; DAT_HANDLE_TYPE is in udat.h */
extern DAT_RETURN DAT_API dat_get_handle_type(DAT_HANDLE, DAT_HANDLE_TYPE *);

/* CR */

/* cr, mask, param */
extern DAT_RETURN DAT_API dat_cr_query(DAT_CR_HANDLE, DAT_CR_PARAM_MASK,
                                       DAT_CR_PARAM *);

/* cr, ep, private_data_size, private_data */
extern DAT_RETURN DAT_API dat_cr_accept(DAT_CR_HANDLE, DAT_EP_HANDLE, DAT_COUNT,
                                        const DAT_PVOID);

/* (wrapper) cr; 1.2 sends no private data with a reject */

/* cr, handoff conn_qual */
extern DAT_RETURN DAT_API dat_cr_handoff(DAT_CR_HANDLE, DAT_CONN_QUAL);

/* EVD (creation and waiting are in udat.h) */

/* evd, min_qlen */
extern DAT_RETURN DAT_API dat_evd_resize(DAT_EVD_HANDLE, DAT_COUNT);

/* (wrapper) evd, event: dat_evd_post_se */

/* (wrapper) evd, event: dat_evd_dequeue */

/* evd, mask, param */
extern DAT_RETURN DAT_API dat_evd_query(DAT_EVD_HANDLE, DAT_EVD_PARAM_MASK,
                                        DAT_EVD_PARAM *);

/* evd */
extern DAT_RETURN DAT_API dat_evd_free(DAT_EVD_HANDLE);

/* EP */

/*
 * (wrapper) ia, pz, recv_evd, request_evd, connect_evd, attr, ep:
 * dat_ep_create (attr is not const, as the 1.2 page gives it)
 */

/* (wrapper) ep, mask, param: dat_ep_query and dat_ep_modify */

/* ep, remote_addr, remote_conn_qual, timeout, pdata_size, pdata, qos,
 * flags */
extern DAT_RETURN DAT_API dat_ep_connect(DAT_EP_HANDLE, DAT_IA_ADDRESS_PTR,
                                         DAT_CONN_QUAL, DAT_TIMEOUT, DAT_COUNT,
                                         const DAT_PVOID, DAT_QOS,
                                         DAT_CONNECT_FLAGS);

/* ep, dup_ep, timeout, pdata_size, pdata, qos */
extern DAT_RETURN DAT_API dat_ep_dup_connect(DAT_EP_HANDLE, DAT_EP_HANDLE,
                                             DAT_TIMEOUT, DAT_COUNT,
                                             const DAT_PVOID, DAT_QOS);

/* ep, close_flags */
extern DAT_RETURN DAT_API dat_ep_disconnect(DAT_EP_HANDLE, DAT_CLOSE_FLAGS);

/*
 * (wrapper) ep, num_segments, local_iov, cookie, flags: dat_ep_post_send
 * and dat_ep_post_recv; ep, num_segments, local_iov, cookie, remote_iov,
 * flags: dat_ep_post_rdma_read and dat_ep_post_rdma_write
 */

/* ep, state, recv_idle, request_idle */
extern DAT_RETURN DAT_API dat_ep_get_status(DAT_EP_HANDLE, DAT_EP_STATE *,
                                            DAT_BOOLEAN *, DAT_BOOLEAN *);

/* ep */
extern DAT_RETURN DAT_API dat_ep_free(DAT_EP_HANDLE);

/* ep */
extern DAT_RETURN DAT_API dat_ep_reset(DAT_EP_HANDLE);

/* (wrapper) ia, pz, recv_evd, request_evd, connect_evd, srq, attr, ep:
 * dat_ep_create_with_srq */

/* ep, nbufs_allocated, bufs_alloc_span */
extern DAT_RETURN DAT_API dat_ep_recv_query(DAT_EP_HANDLE, DAT_COUNT *,
                                            DAT_COUNT *);

/* ep, soft_high_watermark, hard_high_watermark */
extern DAT_RETURN DAT_API dat_ep_set_watermark(DAT_EP_HANDLE, DAT_COUNT,
                                               DAT_COUNT);

/* LMR (creation is in udat.h) */

/* (wrapper) lmr, mask, param: dat_lmr_query */

/* lmr */
extern DAT_RETURN DAT_API dat_lmr_free(DAT_LMR_HANDLE);

/* (wrapper) ia, segments, num_segments: dat_lmr_sync_rdma_read and
 * dat_lmr_sync_rdma_write */

/* RMR */

/* pz, rmr */
extern DAT_RETURN DAT_API dat_rmr_create(DAT_PZ_HANDLE, DAT_RMR_HANDLE *);

/* (wrapper) rmr, mask, param: dat_rmr_query */

/* (wrapper) rmr, lmr_triplet, mem_priv, ep, cookie, flags, context:
 * dat_rmr_bind */

/* rmr */
extern DAT_RETURN DAT_API dat_rmr_free(DAT_RMR_HANDLE);

/* PSP */

/* ia, conn_qual, evd, flags, psp */
extern DAT_RETURN DAT_API dat_psp_create(DAT_IA_HANDLE, DAT_CONN_QUAL,
                                         DAT_EVD_HANDLE, DAT_PSP_FLAGS,
                                         DAT_PSP_HANDLE *);

/* ia, conn_qual (out), evd, flags, psp */
extern DAT_RETURN DAT_API dat_psp_create_any(DAT_IA_HANDLE, DAT_CONN_QUAL *,
                                             DAT_EVD_HANDLE, DAT_PSP_FLAGS,
                                             DAT_PSP_HANDLE *);

/* psp, mask, param */
extern DAT_RETURN DAT_API dat_psp_query(DAT_PSP_HANDLE, DAT_PSP_PARAM_MASK,
                                        DAT_PSP_PARAM *);

/* psp */
extern DAT_RETURN DAT_API dat_psp_free(DAT_PSP_HANDLE);

/* RSP */

/* ia, conn_qual, ep, evd, rsp */
extern DAT_RETURN DAT_API dat_rsp_create(DAT_IA_HANDLE, DAT_CONN_QUAL,
                                         DAT_EP_HANDLE, DAT_EVD_HANDLE,
                                         DAT_RSP_HANDLE *);

/* rsp, mask, param */
extern DAT_RETURN DAT_API dat_rsp_query(DAT_RSP_HANDLE, DAT_RSP_PARAM_MASK,
                                        DAT_RSP_PARAM *);

/* rsp */
extern DAT_RETURN DAT_API dat_rsp_free(DAT_RSP_HANDLE);

/* PZ */

/* ia, pz */
extern DAT_RETURN DAT_API dat_pz_create(DAT_IA_HANDLE, DAT_PZ_HANDLE *);

/* pz, mask, param */
extern DAT_RETURN DAT_API dat_pz_query(DAT_PZ_HANDLE, DAT_PZ_PARAM_MASK,
                                       DAT_PZ_PARAM *);

/* pz */
extern DAT_RETURN DAT_API dat_pz_free(DAT_PZ_HANDLE);

/* SRQ */

/* ia, pz, attr, srq */
extern DAT_RETURN DAT_API dat_srq_create(DAT_IA_HANDLE, DAT_PZ_HANDLE,
                                         DAT_SRQ_ATTR *, DAT_SRQ_HANDLE *);

/* srq */
extern DAT_RETURN DAT_API dat_srq_free(DAT_SRQ_HANDLE);

/* (wrapper) srq, num_segments, local_iov, cookie: dat_srq_post_recv */

/* srq, mask, param */
extern DAT_RETURN DAT_API dat_srq_query(DAT_SRQ_HANDLE, DAT_SRQ_PARAM_MASK,
                                        DAT_SRQ_PARAM *);

/* srq, max_recv_dtos */
extern DAT_RETURN DAT_API dat_srq_resize(DAT_SRQ_HANDLE, DAT_COUNT);

/* srq, low_watermark */
extern DAT_RETURN DAT_API dat_srq_set_lw(DAT_SRQ_HANDLE, DAT_COUNT);

/* Registry and error strings */

/* max_to_return, entries_returned, list (array of pointers) */
extern DAT_RETURN DAT_API dat_registry_list_providers(DAT_COUNT, DAT_COUNT *,
                                                      DAT_PROVIDER_INFO *[]);

/* status, major_message, minor_message */
extern DAT_RETURN DAT_API dat_strerror(DAT_RETURN, const char **,
                                       const char **);

#ifdef __cplusplus
}
#endif

#endif /* _DAT12_UDAT_H_ */

#endif /* _DAT12_DAT_H_ */
