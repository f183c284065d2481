/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * User-level DAT 1.2 (uDAPL 1.2) API: the public entry point for consumers
 * written to the 1.2 specification. Link with -ldat (libdat.so is
 * libdat2.so: one library serves both APIs).
 *
 * This is source compatibility: a 1.2 program compiles unchanged and runs
 * on libdat2. Where a 1.2 call or structure differs from 2.0, a static
 * inline wrapper in <dat/udat_libdat2.h> converts; nothing is exported
 * for it. A program built against the 1.2 reference headers must be
 * recompiled, not just relinked. dapl-ofi(7) maps each 1.2 difference.
 */

#ifndef _DAT12_UDAT_H_
#define _DAT12_UDAT_H_

#ifdef _UDAT_H_
#error "<dat/udat.h> (DAT 1.2) and <dat2/udat.h> (DAT 2.0) exclude each other"
#endif

#include <dat/udat_config.h>
#include <dat/dat_platform_specific.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Types that dat.h uses but leaves to the user-level header; they must be
 * defined before dat.h is included.
 */

typedef enum dat_mem_type {
	DAT_MEM_TYPE_VIRTUAL = 0x00,
	DAT_MEM_TYPE_LMR = 0x01,
	DAT_MEM_TYPE_SHARED_VIRTUAL = 0x02
} DAT_MEM_TYPE;

typedef enum dat_handle_type {
	DAT_HANDLE_TYPE_CR,
	DAT_HANDLE_TYPE_EP,
	DAT_HANDLE_TYPE_EVD,
	DAT_HANDLE_TYPE_IA,
	DAT_HANDLE_TYPE_LMR,
	DAT_HANDLE_TYPE_PSP,
	DAT_HANDLE_TYPE_PZ,
	DAT_HANDLE_TYPE_RMR,
	DAT_HANDLE_TYPE_RSP,
	DAT_HANDLE_TYPE_CNO,
	DAT_HANDLE_TYPE_SRQ
} DAT_HANDLE_TYPE;

/* Three independent groups: enable, waitability, notification config. */
typedef enum dat_evd_state {
	DAT_EVD_STATE_ENABLED = 0x01,
	DAT_EVD_STATE_DISABLED = 0x02,
	DAT_EVD_STATE_WAITABLE = 0x04,
	DAT_EVD_STATE_UNWAITABLE = 0x08,
	DAT_EVD_STATE_CONFIG_NOTIFY = 0x10,
	DAT_EVD_STATE_CONFIG_SOLICITED = 0x20,
	DAT_EVD_STATE_CONFIG_THRESHOLD = 0x30
} DAT_EVD_STATE;

typedef enum dat_evd_param_mask {
	DAT_EVD_FIELD_IA_HANDLE = 0x01,
	DAT_EVD_FIELD_EVD_QLEN = 0x02,
	DAT_EVD_FIELD_EVD_STATE = 0x04,
	DAT_EVD_FIELD_CNO = 0x08,
	DAT_EVD_FIELD_EVD_FLAGS = 0x10,
	DAT_EVD_FIELD_ALL = 0x1F
} DAT_EVD_PARAM_MASK;

typedef DAT_UINT64 DAT_PROVIDER_ATTR_MASK;

#ifdef __cplusplus
}
#endif

#include <dat/dat.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef DAT_HANDLE DAT_CNO_HANDLE;

struct dat_evd_param {
	DAT_IA_HANDLE ia_handle;
	DAT_COUNT evd_qlen;
	DAT_EVD_STATE evd_state;
	DAT_CNO_HANDLE cno_handle;
	DAT_EVD_FLAGS evd_flags;
};

/* Size in bytes of the opaque name of a shared memory region. */
#define DAT_LMR_COOKIE_SIZE 40
typedef char (*DAT_LMR_COOKIE)[DAT_LMR_COOKIE_SIZE];

/* CNO wait proxy: called with (instance_data, evd) when the CNO fires. */
typedef void(DAT_API *DAT_AGENT_FUNC)(DAT_PVOID, DAT_EVD_HANDLE);

typedef struct dat_os_wait_proxy_agent {
	DAT_PVOID instance_data;
	DAT_AGENT_FUNC proxy_agent_func;
} DAT_OS_WAIT_PROXY_AGENT;

/* A compound literal: C99 and later. */
/* clang-format off */
#define DAT_OS_WAIT_PROXY_AGENT_NULL \
	(DAT_OS_WAIT_PROXY_AGENT){ (DAT_PVOID)NULL, (DAT_AGENT_FUNC)NULL }
/* clang-format on */

/*
 * Special async EVD handle values: EXISTS is passed to dat_ia_open() to
 * share the async EVD of an earlier open of the same IA; OUT_OF_SCOPE is
 * what dat_ia_query() then reports for it.
 */
#define DAT_EVD_ASYNC_EXISTS ((DAT_EVD_HANDLE)0x1)
#define DAT_EVD_OUT_OF_SCOPE ((DAT_EVD_HANDLE)0x2)

/* Memory region descriptions for dat_lmr_create(). */

typedef struct dat_shared_memory {
	DAT_PVOID virtual_address;
	DAT_LMR_COOKIE shared_memory_id;
} DAT_SHARED_MEMORY;

typedef union dat_region_description {
	DAT_PVOID for_va;
	DAT_LMR_HANDLE for_lmr_handle;
	DAT_SHARED_MEMORY for_shared_memory;
} DAT_REGION_DESCRIPTION;

struct dat_lmr_param {
	DAT_IA_HANDLE ia_handle;
	DAT_MEM_TYPE mem_type;
	DAT_REGION_DESCRIPTION region_desc;
	DAT_VLEN length;
	DAT_PZ_HANDLE pz_handle;
	DAT_MEM_PRIV_FLAGS mem_priv;
	DAT_LMR_CONTEXT lmr_context;
	DAT_RMR_CONTEXT rmr_context;
	DAT_VLEN registered_size;
	DAT_VADDR registered_address;
};

/* Consumer notification objects (CNO). */

typedef struct dat_cno_param {
	DAT_IA_HANDLE ia_handle;
	DAT_OS_WAIT_PROXY_AGENT agent;
} DAT_CNO_PARAM;

typedef enum dat_cno_param_mask {
	DAT_CNO_FIELD_IA_HANDLE = 0x1,
	DAT_CNO_FIELD_AGENT = 0x2,
	DAT_CNO_FIELD_ALL = 0x3
} DAT_CNO_PARAM_MASK;

/* Interface adapter attributes, returned by dat_ia_query(). */

struct dat_ia_attr {
	char adapter_name[DAT_NAME_MAX_LENGTH];
	char vendor_name[DAT_NAME_MAX_LENGTH];
	DAT_UINT32 hardware_version_major;
	DAT_UINT32 hardware_version_minor;
	DAT_UINT32 firmware_version_major;
	DAT_UINT32 firmware_version_minor;
	DAT_IA_ADDRESS_PTR ia_address_ptr;
	DAT_COUNT max_eps;
	DAT_COUNT max_dto_per_ep;
	DAT_COUNT max_rdma_read_per_ep_in;
	DAT_COUNT max_rdma_read_per_ep_out;
	DAT_COUNT max_evds;
	DAT_COUNT max_evd_qlen;
	DAT_COUNT max_iov_segments_per_dto;
	DAT_COUNT max_lmrs;
	DAT_VLEN max_lmr_block_size;
	DAT_VADDR max_lmr_virtual_address;
	DAT_COUNT max_pzs;
	DAT_VLEN max_message_size;
	DAT_VLEN max_rdma_size;
	DAT_COUNT max_rmrs;
	DAT_VADDR max_rmr_target_address;
	DAT_COUNT max_srqs;
	DAT_COUNT max_ep_per_srq;
	DAT_COUNT max_recv_per_srq;
	DAT_COUNT max_iov_segments_per_rdma_read;
	DAT_COUNT max_iov_segments_per_rdma_write;
	DAT_COUNT max_rdma_read_in;
	DAT_COUNT max_rdma_read_out;
	DAT_BOOLEAN max_rdma_read_per_ep_in_guaranteed;
	DAT_BOOLEAN max_rdma_read_per_ep_out_guaranteed;
	DAT_COUNT num_transport_attr;
	DAT_NAMED_ATTR *transport_attr;
	DAT_COUNT num_vendor_attr;
	DAT_NAMED_ATTR *vendor_attr;
};

/* Provider attributes, returned by dat_ia_query(). */

typedef enum dat_pz_support { DAT_PZ_UNIQUE, DAT_PZ_SHAREABLE } DAT_PZ_SUPPORT;

#ifdef __cplusplus
}
#endif

#include <dat/udat_vendor_specific.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * evd_stream_merging_supported[i][j] is DAT_TRUE when event streams i and
 * j may feed one EVD. Index order: software event, connection request,
 * DTO completion, connection event, RMR bind completion, async event.
 */
struct dat_provider_attr {
	char provider_name[DAT_NAME_MAX_LENGTH];
	DAT_UINT32 provider_version_major;
	DAT_UINT32 provider_version_minor;
	DAT_UINT32 dapl_version_major;
	DAT_UINT32 dapl_version_minor;
	DAT_MEM_TYPE lmr_mem_types_supported;
	DAT_IOV_OWNERSHIP iov_ownership_on_return;
	DAT_QOS dat_qos_supported;
	DAT_COMPLETION_FLAGS completion_flags_supported;
	DAT_BOOLEAN is_thread_safe;
	DAT_COUNT max_private_data_size;
	DAT_BOOLEAN supports_multipath;
	DAT_EP_CREATOR_FOR_PSP ep_creator;
	DAT_PZ_SUPPORT pz_support;
	DAT_UINT32 optimal_buffer_alignment;
	DAT_BOOLEAN evd_stream_merging_supported[6][6];
	DAT_BOOLEAN srq_supported;
	DAT_COUNT srq_watermarks_supported;
	DAT_BOOLEAN srq_ep_pz_difference_supported;
	DAT_COUNT srq_info_supported;
	DAT_COUNT ep_recv_info_supported;
	DAT_BOOLEAN lmr_sync_req;
	DAT_BOOLEAN dto_async_return_guaranteed;
	DAT_BOOLEAN rdma_write_for_rdma_read_req;
	DAT_COUNT num_provider_specific_attr;
	DAT_NAMED_ATTR *provider_specific_attr;
};

/*
 * DAT_PROVIDER_ATTR_MASK bits, one per dat_provider_attr field; the last
 * two have 2.0's values (0x01000000..0x10000000 are 2.0-only fields).
 */
#define DAT_PROVIDER_FIELD_PROVIDER_NAME ((DAT_PROVIDER_ATTR_MASK)0x00000001)
#define DAT_PROVIDER_FIELD_PROVIDER_VERSION_MAJOR \
	((DAT_PROVIDER_ATTR_MASK)0x00000002)
#define DAT_PROVIDER_FIELD_PROVIDER_VERSION_MINOR \
	((DAT_PROVIDER_ATTR_MASK)0x00000004)
#define DAT_PROVIDER_FIELD_DAPL_VERSION_MAJOR \
	((DAT_PROVIDER_ATTR_MASK)0x00000008)
#define DAT_PROVIDER_FIELD_DAPL_VERSION_MINOR \
	((DAT_PROVIDER_ATTR_MASK)0x00000010)
#define DAT_PROVIDER_FIELD_LMR_MEM_TYPE_SUPPORTED \
	((DAT_PROVIDER_ATTR_MASK)0x00000020)
#define DAT_PROVIDER_FIELD_IOV_OWNERSHIP ((DAT_PROVIDER_ATTR_MASK)0x00000040)
#define DAT_PROVIDER_FIELD_DAT_QOS_SUPPORTED \
	((DAT_PROVIDER_ATTR_MASK)0x00000080)
#define DAT_PROVIDER_FIELD_COMPLETION_FLAGS_SUPPORTED \
	((DAT_PROVIDER_ATTR_MASK)0x00000100)
#define DAT_PROVIDER_FIELD_IS_THREAD_SAFE ((DAT_PROVIDER_ATTR_MASK)0x00000200)
#define DAT_PROVIDER_FIELD_MAX_PRIVATE_DATA_SIZE \
	((DAT_PROVIDER_ATTR_MASK)0x00000400)
#define DAT_PROVIDER_FIELD_SUPPORTS_MULTIPATH \
	((DAT_PROVIDER_ATTR_MASK)0x00000800)
#define DAT_PROVIDER_FIELD_EP_CREATOR ((DAT_PROVIDER_ATTR_MASK)0x00001000)
#define DAT_PROVIDER_FIELD_PZ_SUPPORT ((DAT_PROVIDER_ATTR_MASK)0x00002000)
#define DAT_PROVIDER_FIELD_OPTIMAL_BUFFER_ALIGNMENT \
	((DAT_PROVIDER_ATTR_MASK)0x00004000)
#define DAT_PROVIDER_FIELD_EVD_STREAM_MERGING_SUPPORTED \
	((DAT_PROVIDER_ATTR_MASK)0x00008000)
#define DAT_PROVIDER_FIELD_SRQ_SUPPORTED ((DAT_PROVIDER_ATTR_MASK)0x00010000)
#define DAT_PROVIDER_FIELD_SRQ_WATERMARKS_SUPPORTED \
	((DAT_PROVIDER_ATTR_MASK)0x00020000)
#define DAT_PROVIDER_FIELD_SRQ_EP_PZ_DIFFERENCE_SUPPORTED \
	((DAT_PROVIDER_ATTR_MASK)0x00040000)
#define DAT_PROVIDER_FIELD_SRQ_INFO_SUPPORTED \
	((DAT_PROVIDER_ATTR_MASK)0x00080000)
#define DAT_PROVIDER_FIELD_EP_RECV_INFO_SUPPORTED \
	((DAT_PROVIDER_ATTR_MASK)0x00100000)
#define DAT_PROVIDER_FIELD_LMR_SYNC_REQ ((DAT_PROVIDER_ATTR_MASK)0x00200000)
#define DAT_PROVIDER_FIELD_DTO_ASYNC_RETURN_GUARANTEED \
	((DAT_PROVIDER_ATTR_MASK)0x00400000)
#define DAT_PROVIDER_FIELD_RDMA_WRITE_FOR_RDMA_READ_REQ \
	((DAT_PROVIDER_ATTR_MASK)0x00800000)
#define DAT_PROVIDER_FIELD_NUM_PROVIDER_SPECIFIC_ATTR \
	((DAT_PROVIDER_ATTR_MASK)0x20000000)
#define DAT_PROVIDER_FIELD_PROVIDER_SPECIFIC_ATTR \
	((DAT_PROVIDER_ATTR_MASK)0x40000000)
#define DAT_PROVIDER_FIELD_ALL  ((DAT_PROVIDER_ATTR_MASK)0x60FFFFFF)
#define DAT_PROVIDER_FIELD_NONE ((DAT_PROVIDER_ATTR_MASK)0x0)

/*
 * User-level calls; the common API is in dat.h. A call marked (wrapper)
 * is defined in <dat/udat_libdat2.h> with the 1.2 signature shown.
 */

/*
 * (wrapper) ia, mem_type, region, length, pz, privileges, lmr,
 * lmr_context, rmr_context, registered_length, registered_address:
 * dat_lmr_create, without 2.0's va_type (always a virtual address)
 */

/* ia, min_qlen, cno, flags, evd */
extern DAT_RETURN DAT_API dat_evd_create(DAT_IA_HANDLE, DAT_COUNT,
                                         DAT_CNO_HANDLE, DAT_EVD_FLAGS,
                                         DAT_EVD_HANDLE *);

/* evd, cno */
extern DAT_RETURN DAT_API dat_evd_modify_cno(DAT_EVD_HANDLE, DAT_CNO_HANDLE);

/* ia, agent, cno */
extern DAT_RETURN DAT_API dat_cno_create(DAT_IA_HANDLE, DAT_OS_WAIT_PROXY_AGENT,
                                         DAT_CNO_HANDLE *);

/* cno, agent */
extern DAT_RETURN DAT_API dat_cno_modify_agent(DAT_CNO_HANDLE,
                                               DAT_OS_WAIT_PROXY_AGENT);

/* (wrapper) cno, mask, param: dat_cno_query */

/* cno */
extern DAT_RETURN DAT_API dat_cno_free(DAT_CNO_HANDLE);

/* cno, timeout, evd */
extern DAT_RETURN DAT_API dat_cno_wait(DAT_CNO_HANDLE, DAT_TIMEOUT,
                                       DAT_EVD_HANDLE *);

/* evd */
extern DAT_RETURN DAT_API dat_evd_enable(DAT_EVD_HANDLE);

/* (wrapper) evd, timeout, threshold, event, nmore: dat_evd_wait */

/* evd */
extern DAT_RETURN DAT_API dat_evd_disable(DAT_EVD_HANDLE);

/* evd */
extern DAT_RETURN DAT_API dat_evd_set_unwaitable(DAT_EVD_HANDLE);

/* evd */
extern DAT_RETURN DAT_API dat_evd_clear_unwaitable(DAT_EVD_HANDLE);

#ifdef __cplusplus
}
#endif

#include <dat/udat_libdat2.h>

#endif /* _DAT12_UDAT_H_ */
