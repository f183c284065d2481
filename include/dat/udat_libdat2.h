/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/* uDAT 1.2 on libdat2: the wrappers for the calls 1.2 and 2.0 differ in. */

#ifndef _DAT12_UDAT_LIBDAT2_H_

#if !defined(_DAT12_UDAT_H_)
/* Routed through udat.h, which includes this file last. */
#include <dat/udat.h>
#else

#define _DAT12_UDAT_LIBDAT2_H_

#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * libdat2 exports DAT 2.0's calls, and only those (its 74 symbols under
 * the DAT_2.0 version node). A 1.2 call that differs from its 2.0 form in
 * arguments or in the layout of a structure it passes is a static inline
 * function here, dat12_<call>, that converts and calls the 2.0 entry
 * point; a macro then gives it the 1.2 name, so dat_lmr_create(...) calls
 * dat12_lmr_create(...), and a redeclaration of the 1.2 prototype (a man
 * page synopsis) redeclares the wrapper with the same type.
 *
 * Nothing here is part of the 1.2 API; names begin with dat12_ or DAT12_,
 * and the dat12_v2_ structures repeat libdat2's (DAT 2.0) layouts, which
 * the test suite compares with <dat2/udat.h>.
 *
 * Bounds and limits (dapl-ofi(7)):
 *  - a post, SRQ post or LMR sync copies its 1.2 triplets (24 bytes each)
 *    into 2.0 ones (16 bytes) on the stack: at most DAT12_IOV_MAX (32;
 *    define it before the include to change it) segments, else
 *    DAT_INVALID_PARAMETER for the count. No allocation.
 *  - 2.0 carries segment and message lengths in 32 bits: a triplet longer
 *    than 4 GiB - 1 is DAT_LENGTH_ERROR; an EP attribute size above that
 *    is passed as 4 GiB - 1, beyond the provider's limit, so the provider
 *    refuses it as it would the 1.2 value.
 *  - dat_rmr_bind has no LMR handle in 1.2: the call passes a null one,
 *    and dapl-ofi binds the LMR the triplet's lmr_context names.
 */

#if defined(__cplusplus) || \
        (defined(__STDC_VERSION__) && __STDC_VERSION__ >= 199901L)
#define DAT12_INLINE static inline
#elif defined(__GNUC__)
#define DAT12_INLINE static __inline__
#else
#define DAT12_INLINE static
#endif

#ifndef DAT12_IOV_MAX
#define DAT12_IOV_MAX 32
#endif

#define DAT12_ERROR(type, subtype)                           \
	((DAT_RETURN)(DAT_CLASS_ERROR | (DAT_UINT32)(type) | \
	              (DAT_UINT32)(subtype)))

/* The largest length a 2.0 triplet or EP attribute holds. */
#define DAT12_V2_LENGTH_MAX       ((DAT_VLEN)0xFFFFFFFFUL)

/* libdat2's API version, asked for when a consumer asks for 1.x. */
#define DAT12_V2_VERSION_MAJOR    2
#define DAT12_V2_VERSION_MINOR    0

/* DAT 2.0 layouts (sizes on LP64 in the comments). */

enum dat12_v2_va_type { DAT12_V2_VA_TYPE_VA = 0x0, DAT12_V2_VA_TYPE_ZB = 0x1 };

enum dat12_v2_cno_param_mask { DAT12_V2_CNO_FIELD_ALL = 0x4 };

#define DAT12_V2_PROXY_TYPE_AGENT 0x1

struct dat12_v2_lmr_triplet { /* 16 */
	DAT_VADDR virtual_address;
	DAT_UINT32 segment_length;
	DAT_LMR_CONTEXT lmr_context;
};

struct dat12_v2_rmr_triplet { /* 16 */
	DAT_VADDR virtual_address;
	DAT_UINT32 segment_length;
	DAT_RMR_CONTEXT rmr_context;
};

struct dat12_v2_ep_attr { /* 88 */
	DAT_SERVICE_TYPE service_type;
	DAT_UINT32 max_message_size;
	DAT_UINT32 max_rdma_size;
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
};

struct dat12_v2_comm {
	int domain;
	int type;
	int protocol;
};

struct dat12_v2_ep_param { /* 184 */
	DAT_IA_HANDLE ia_handle;
	DAT_EP_STATE ep_state;
	struct dat12_v2_comm comm;
	DAT_IA_ADDRESS_PTR local_ia_address_ptr;
	DAT_PORT_QUAL local_port_qual;
	DAT_IA_ADDRESS_PTR remote_ia_address_ptr;
	DAT_PORT_QUAL remote_port_qual;
	DAT_PZ_HANDLE pz_handle;
	DAT_EVD_HANDLE recv_evd_handle;
	DAT_EVD_HANDLE request_evd_handle;
	DAT_EVD_HANDLE connect_evd_handle;
	DAT_SRQ_HANDLE srq_handle;
	struct dat12_v2_ep_attr ep_attr;
};

struct dat12_v2_lmr_param {
	DAT_IA_HANDLE ia_handle;
	DAT_MEM_TYPE mem_type;
	DAT_REGION_DESCRIPTION region_desc;
	DAT_VLEN length;
	DAT_PZ_HANDLE pz_handle;
	DAT_MEM_PRIV_FLAGS mem_priv;
	enum dat12_v2_va_type va_type;
	DAT_LMR_CONTEXT lmr_context;
	DAT_RMR_CONTEXT rmr_context;
	DAT_VLEN registered_size;
	DAT_VADDR registered_address;
};

struct dat12_v2_rmr_param {
	DAT_IA_HANDLE ia_handle;
	DAT_PZ_HANDLE pz_handle;
	struct dat12_v2_lmr_triplet lmr_triplet;
	DAT_MEM_PRIV_FLAGS mem_priv;
	DAT_RMR_CONTEXT rmr_context;
	int rmr_scope;
	enum dat12_v2_va_type va_type;
};

struct dat12_v2_cno_param {
	DAT_IA_HANDLE ia_handle;
	int proxy_type;
	union {
		DAT_OS_WAIT_PROXY_AGENT agent;
		int fd;
		DAT_PVOID none;
	} proxy;
};

struct dat12_v2_ia_attr { /* 688 */
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
	DAT_UINT32 max_lmr_block_size;
	DAT_VADDR max_lmr_virtual_address;
	DAT_COUNT max_pzs;
	DAT_UINT32 max_message_size;
	DAT_UINT32 max_rdma_size;
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
	DAT_BOOLEAN zb_supported;
	int extension_supported;
	DAT_COUNT extension_version;
	DAT_COUNT num_transport_attr;
	DAT_NAMED_ATTR *transport_attr;
	DAT_COUNT num_vendor_attr;
	DAT_NAMED_ATTR *vendor_attr;
};

struct dat12_v2_provider_attr { /* 520 */
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
	DAT_BOOLEAN rdma_read_lmr_rmr_context_exposure;
	int rmr_scope_supported;
	DAT_BOOLEAN is_signal_safe;
	DAT_BOOLEAN ha_supported;
	DAT_UINT32 ha_loadbalancing;
	DAT_COUNT num_provider_specific_attr;
	DAT_NAMED_ATTR *provider_specific_attr;
};

struct dat12_v2_dto_completion_event_data { /* 32 */
	DAT_EP_HANDLE ep_handle;
	DAT_DTO_COOKIE user_cookie;
	DAT_DTO_COMPLETION_STATUS status;
	DAT_UINT32 transfered_length;
	int operation;
	DAT_RMR_CONTEXT rmr_context;
};

struct dat12_v2_cr_arrival_event_data { /* 40 */
	DAT_HANDLE sp_handle;           /* a union of three handles in 2.0 */
	DAT_IA_ADDRESS_PTR local_ia_address_ptr;
	DAT_CONN_QUAL conn_qual;
	DAT_CR_HANDLE cr_handle;
	DAT_BOOLEAN truncate_flag;
};

struct dat12_v2_asynch_error_event_data {
	DAT_HANDLE dat_handle;
	DAT_COUNT reason;
};

union dat12_v2_event_data { /* 40 */
	struct dat12_v2_dto_completion_event_data dto_completion_event_data;
	DAT_RMR_BIND_COMPLETION_EVENT_DATA rmr_completion_event_data;
	struct dat12_v2_cr_arrival_event_data cr_arrival_event_data;
	DAT_CONNECTION_EVENT_DATA connect_event_data;
	struct dat12_v2_asynch_error_event_data asynch_error_event_data;
	DAT_SOFTWARE_EVENT_DATA software_event_data;
};

struct dat12_v2_event {          /* 120 */
	DAT_UINT32 event_number; /* 2.0 numbers are a superset of 1.2's */
	DAT_EVD_HANDLE evd_handle;
	union dat12_v2_event_data event_data;
	DAT_UINT64 event_extension_data[8];
};

/* The 2.0 entry points the wrappers call, with those layouts. */

extern DAT_RETURN DAT_API dat_ia_openv(const DAT_NAME_PTR, DAT_COUNT,
                                       DAT_EVD_HANDLE *, DAT_IA_HANDLE *,
                                       DAT_UINT32, DAT_UINT32, DAT_BOOLEAN);

extern DAT_RETURN DAT_API dat_ia_query(DAT_IA_HANDLE, DAT_EVD_HANDLE *,
                                       DAT_IA_ATTR_MASK,
                                       struct dat12_v2_ia_attr *,
                                       DAT_PROVIDER_ATTR_MASK,
                                       struct dat12_v2_provider_attr *);

extern DAT_RETURN DAT_API dat_cr_reject(DAT_CR_HANDLE, DAT_COUNT,
                                        const DAT_PVOID);

extern DAT_RETURN DAT_API dat_evd_post_se(DAT_EVD_HANDLE,
                                          const struct dat12_v2_event *);

extern DAT_RETURN DAT_API dat_evd_dequeue(DAT_EVD_HANDLE,
                                          struct dat12_v2_event *);

extern DAT_RETURN DAT_API dat_evd_wait(DAT_EVD_HANDLE, DAT_TIMEOUT, DAT_COUNT,
                                       struct dat12_v2_event *, DAT_COUNT *);

extern DAT_RETURN DAT_API dat_ep_create(DAT_IA_HANDLE, DAT_PZ_HANDLE,
                                        DAT_EVD_HANDLE, DAT_EVD_HANDLE,
                                        DAT_EVD_HANDLE,
                                        const struct dat12_v2_ep_attr *,
                                        DAT_EP_HANDLE *);

extern DAT_RETURN DAT_API
dat_ep_create_with_srq(DAT_IA_HANDLE, DAT_PZ_HANDLE, DAT_EVD_HANDLE,
                       DAT_EVD_HANDLE, DAT_EVD_HANDLE, DAT_SRQ_HANDLE,
                       const struct dat12_v2_ep_attr *, DAT_EP_HANDLE *);

extern DAT_RETURN DAT_API dat_ep_query(DAT_EP_HANDLE, DAT_EP_PARAM_MASK,
                                       struct dat12_v2_ep_param *);

extern DAT_RETURN DAT_API dat_ep_modify(DAT_EP_HANDLE, DAT_EP_PARAM_MASK,
                                        const struct dat12_v2_ep_param *);

extern DAT_RETURN DAT_API dat_ep_post_send(DAT_EP_HANDLE, DAT_COUNT,
                                           struct dat12_v2_lmr_triplet *,
                                           DAT_DTO_COOKIE,
                                           DAT_COMPLETION_FLAGS);

extern DAT_RETURN DAT_API dat_ep_post_recv(DAT_EP_HANDLE, DAT_COUNT,
                                           struct dat12_v2_lmr_triplet *,
                                           DAT_DTO_COOKIE,
                                           DAT_COMPLETION_FLAGS);

extern DAT_RETURN DAT_API dat_ep_post_rdma_read(
        DAT_EP_HANDLE, DAT_COUNT, struct dat12_v2_lmr_triplet *, DAT_DTO_COOKIE,
        const struct dat12_v2_rmr_triplet *, DAT_COMPLETION_FLAGS);

extern DAT_RETURN DAT_API dat_ep_post_rdma_write(
        DAT_EP_HANDLE, DAT_COUNT, struct dat12_v2_lmr_triplet *, DAT_DTO_COOKIE,
        const struct dat12_v2_rmr_triplet *, DAT_COMPLETION_FLAGS);

extern DAT_RETURN DAT_API dat_srq_post_recv(DAT_SRQ_HANDLE, DAT_COUNT,
                                            struct dat12_v2_lmr_triplet *,
                                            DAT_DTO_COOKIE);

extern DAT_RETURN DAT_API dat_lmr_create(DAT_IA_HANDLE, DAT_MEM_TYPE,
                                         DAT_REGION_DESCRIPTION, DAT_VLEN,
                                         DAT_PZ_HANDLE, DAT_MEM_PRIV_FLAGS,
                                         enum dat12_v2_va_type,
                                         DAT_LMR_HANDLE *, DAT_LMR_CONTEXT *,
                                         DAT_RMR_CONTEXT *, DAT_VLEN *,
                                         DAT_VADDR *);

extern DAT_RETURN DAT_API dat_lmr_query(DAT_LMR_HANDLE, DAT_LMR_PARAM_MASK,
                                        struct dat12_v2_lmr_param *);

extern DAT_RETURN DAT_API dat_lmr_sync_rdma_read(
        DAT_IA_HANDLE, const struct dat12_v2_lmr_triplet *, DAT_VLEN);

extern DAT_RETURN DAT_API dat_lmr_sync_rdma_write(
        DAT_IA_HANDLE, const struct dat12_v2_lmr_triplet *, DAT_VLEN);

extern DAT_RETURN DAT_API dat_rmr_query(DAT_RMR_HANDLE, DAT_RMR_PARAM_MASK,
                                        struct dat12_v2_rmr_param *);

extern DAT_RETURN DAT_API dat_rmr_bind(DAT_RMR_HANDLE, DAT_LMR_HANDLE,
                                       const struct dat12_v2_lmr_triplet *,
                                       DAT_MEM_PRIV_FLAGS,
                                       enum dat12_v2_va_type, DAT_EP_HANDLE,
                                       DAT_RMR_COOKIE, DAT_COMPLETION_FLAGS,
                                       DAT_RMR_CONTEXT *);

extern DAT_RETURN DAT_API dat_cno_query(DAT_CNO_HANDLE,
                                        enum dat12_v2_cno_param_mask,
                                        struct dat12_v2_cno_param *);

/*
 * Conversions. Parameters and locals end in '_' so that no consumer macro
 * can take their names.
 */

/* 1.2 triplets to 2.0 ones; bad_count_ is the subtype for a bad count. */
DAT12_INLINE DAT_RETURN dat12_lmr_triplets_to_v2(
        struct dat12_v2_lmr_triplet *out_, const DAT_LMR_TRIPLET *in_,
        DAT_COUNT n_, DAT_RETURN_SUBTYPE bad_count_)
{
	DAT_COUNT i_;

	if (n_ < 0 || n_ > DAT12_IOV_MAX)
		return DAT12_ERROR(DAT_INVALID_PARAMETER, bad_count_);
	if (in_ == NULL)
		return DAT_SUCCESS;
	for (i_ = 0; i_ < n_; i_++) {
		if (in_[i_].segment_length > DAT12_V2_LENGTH_MAX)
			return DAT12_ERROR(DAT_LENGTH_ERROR, DAT_NO_SUBTYPE);
		out_[i_].virtual_address = in_[i_].virtual_address;
		out_[i_].segment_length = (DAT_UINT32)in_[i_].segment_length;
		out_[i_].lmr_context = in_[i_].lmr_context;
	}
	return DAT_SUCCESS;
}

DAT12_INLINE void
dat12_lmr_triplet_from_v2(DAT_LMR_TRIPLET *out_,
                          const struct dat12_v2_lmr_triplet *in_)
{
	out_->lmr_context = in_->lmr_context;
	out_->pad = 0;
	out_->virtual_address = in_->virtual_address;
	out_->segment_length = in_->segment_length;
}

DAT12_INLINE DAT_RETURN dat12_rmr_triplet_to_v2(
        struct dat12_v2_rmr_triplet *out_, const DAT_RMR_TRIPLET *in_)
{
	if (in_->segment_length > DAT12_V2_LENGTH_MAX)
		return DAT12_ERROR(DAT_LENGTH_ERROR, DAT_NO_SUBTYPE);
	out_->virtual_address = in_->target_address;
	out_->segment_length = (DAT_UINT32)in_->segment_length;
	out_->rmr_context = in_->rmr_context;
	return DAT_SUCCESS;
}

DAT12_INLINE DAT_UINT32 dat12_length_to_v2(DAT_VLEN len_)
{
	return len_ > DAT12_V2_LENGTH_MAX ? (DAT_UINT32)DAT12_V2_LENGTH_MAX
	                                  : (DAT_UINT32)len_;
}

/* The members 1.2 and 2.0 EP attributes share, of one type. */
#define DAT12_EP_ATTR_COPY_SAME(out_, in_)                                    \
	do {                                                                  \
		(out_)->service_type = (in_)->service_type;                   \
		(out_)->qos = (in_)->qos;                                     \
		(out_)->recv_completion_flags = (in_)->recv_completion_flags; \
		(out_)->request_completion_flags =                            \
		        (in_)->request_completion_flags;                      \
		(out_)->max_recv_dtos = (in_)->max_recv_dtos;                 \
		(out_)->max_request_dtos = (in_)->max_request_dtos;           \
		(out_)->max_recv_iov = (in_)->max_recv_iov;                   \
		(out_)->max_request_iov = (in_)->max_request_iov;             \
		(out_)->max_rdma_read_in = (in_)->max_rdma_read_in;           \
		(out_)->max_rdma_read_out = (in_)->max_rdma_read_out;         \
		(out_)->srq_soft_hw = (in_)->srq_soft_hw;                     \
		(out_)->max_rdma_read_iov = (in_)->max_rdma_read_iov;         \
		(out_)->max_rdma_write_iov = (in_)->max_rdma_write_iov;       \
		(out_)->ep_transport_specific_count =                         \
		        (in_)->ep_transport_specific_count;                   \
		(out_)->ep_transport_specific = (in_)->ep_transport_specific; \
		(out_)->ep_provider_specific_count =                          \
		        (in_)->ep_provider_specific_count;                    \
		(out_)->ep_provider_specific = (in_)->ep_provider_specific;   \
	} while (0)

/* The members of 1.2 and 2.0 EP parameters but comm and ep_attr. */
#define DAT12_EP_PARAM_COPY_SAME(out_, in_)                                   \
	do {                                                                  \
		(out_)->ia_handle = (in_)->ia_handle;                         \
		(out_)->ep_state = (in_)->ep_state;                           \
		(out_)->local_ia_address_ptr = (in_)->local_ia_address_ptr;   \
		(out_)->local_port_qual = (in_)->local_port_qual;             \
		(out_)->remote_ia_address_ptr = (in_)->remote_ia_address_ptr; \
		(out_)->remote_port_qual = (in_)->remote_port_qual;           \
		(out_)->pz_handle = (in_)->pz_handle;                         \
		(out_)->recv_evd_handle = (in_)->recv_evd_handle;             \
		(out_)->request_evd_handle = (in_)->request_evd_handle;       \
		(out_)->connect_evd_handle = (in_)->connect_evd_handle;       \
		(out_)->srq_handle = (in_)->srq_handle;                       \
	} while (0)

DAT12_INLINE void dat12_ep_attr_to_v2(struct dat12_v2_ep_attr *out_,
                                      const DAT_EP_ATTR *in_)
{
	DAT12_EP_ATTR_COPY_SAME(out_, in_);
	out_->max_message_size = dat12_length_to_v2(in_->max_message_size);
	out_->max_rdma_size = dat12_length_to_v2(in_->max_rdma_size);
}

DAT12_INLINE void dat12_ep_attr_from_v2(DAT_EP_ATTR *out_,
                                        const struct dat12_v2_ep_attr *in_)
{
	DAT12_EP_ATTR_COPY_SAME(out_, in_);
	out_->max_message_size = in_->max_message_size;
	out_->max_rdma_size = in_->max_rdma_size;
}

DAT12_INLINE void dat12_ep_param_to_v2(struct dat12_v2_ep_param *out_,
                                       const DAT_EP_PARAM *in_)
{
	memset(out_, 0, sizeof(*out_));
	DAT12_EP_PARAM_COPY_SAME(out_, in_);
	dat12_ep_attr_to_v2(&out_->ep_attr, &in_->ep_attr);
}

DAT12_INLINE void dat12_ep_param_from_v2(DAT_EP_PARAM *out_,
                                         const struct dat12_v2_ep_param *in_)
{
	DAT12_EP_PARAM_COPY_SAME(out_, in_);
	dat12_ep_attr_from_v2(&out_->ep_attr, &in_->ep_attr);
}

DAT12_INLINE void dat12_ia_attr_from_v2(DAT_IA_ATTR *out_,
                                        const struct dat12_v2_ia_attr *in_)
{
	memcpy(out_->adapter_name, in_->adapter_name,
	       sizeof(out_->adapter_name));
	memcpy(out_->vendor_name, in_->vendor_name, sizeof(out_->vendor_name));
	out_->hardware_version_major = in_->hardware_version_major;
	out_->hardware_version_minor = in_->hardware_version_minor;
	out_->firmware_version_major = in_->firmware_version_major;
	out_->firmware_version_minor = in_->firmware_version_minor;
	out_->ia_address_ptr = in_->ia_address_ptr;
	out_->max_eps = in_->max_eps;
	out_->max_dto_per_ep = in_->max_dto_per_ep;
	out_->max_rdma_read_per_ep_in = in_->max_rdma_read_per_ep_in;
	out_->max_rdma_read_per_ep_out = in_->max_rdma_read_per_ep_out;
	out_->max_evds = in_->max_evds;
	out_->max_evd_qlen = in_->max_evd_qlen;
	out_->max_iov_segments_per_dto = in_->max_iov_segments_per_dto;
	out_->max_lmrs = in_->max_lmrs;
	out_->max_lmr_block_size = in_->max_lmr_block_size;
	out_->max_lmr_virtual_address = in_->max_lmr_virtual_address;
	out_->max_pzs = in_->max_pzs;
	out_->max_message_size = in_->max_message_size;
	out_->max_rdma_size = in_->max_rdma_size;
	out_->max_rmrs = in_->max_rmrs;
	out_->max_rmr_target_address = in_->max_rmr_target_address;
	out_->max_srqs = in_->max_srqs;
	out_->max_ep_per_srq = in_->max_ep_per_srq;
	out_->max_recv_per_srq = in_->max_recv_per_srq;
	out_->max_iov_segments_per_rdma_read =
	        in_->max_iov_segments_per_rdma_read;
	out_->max_iov_segments_per_rdma_write =
	        in_->max_iov_segments_per_rdma_write;
	out_->max_rdma_read_in = in_->max_rdma_read_in;
	out_->max_rdma_read_out = in_->max_rdma_read_out;
	out_->max_rdma_read_per_ep_in_guaranteed =
	        in_->max_rdma_read_per_ep_in_guaranteed;
	out_->max_rdma_read_per_ep_out_guaranteed =
	        in_->max_rdma_read_per_ep_out_guaranteed;
	out_->num_transport_attr = in_->num_transport_attr;
	out_->transport_attr = in_->transport_attr;
	out_->num_vendor_attr = in_->num_vendor_attr;
	out_->vendor_attr = in_->vendor_attr;
}

DAT12_INLINE void
dat12_provider_attr_from_v2(DAT_PROVIDER_ATTR *out_,
                            const struct dat12_v2_provider_attr *in_)
{
	memcpy(out_->provider_name, in_->provider_name,
	       sizeof(out_->provider_name));
	out_->provider_version_major = in_->provider_version_major;
	out_->provider_version_minor = in_->provider_version_minor;
	out_->dapl_version_major = in_->dapl_version_major;
	out_->dapl_version_minor = in_->dapl_version_minor;
	out_->lmr_mem_types_supported = in_->lmr_mem_types_supported;
	out_->iov_ownership_on_return = in_->iov_ownership_on_return;
	out_->dat_qos_supported = in_->dat_qos_supported;
	out_->completion_flags_supported = in_->completion_flags_supported;
	out_->is_thread_safe = in_->is_thread_safe;
	out_->max_private_data_size = in_->max_private_data_size;
	out_->supports_multipath = in_->supports_multipath;
	out_->ep_creator = in_->ep_creator;
	out_->pz_support = in_->pz_support;
	out_->optimal_buffer_alignment = in_->optimal_buffer_alignment;
	memcpy(out_->evd_stream_merging_supported,
	       in_->evd_stream_merging_supported,
	       sizeof(out_->evd_stream_merging_supported));
	out_->srq_supported = in_->srq_supported;
	out_->srq_watermarks_supported = in_->srq_watermarks_supported;
	out_->srq_ep_pz_difference_supported =
	        in_->srq_ep_pz_difference_supported;
	out_->srq_info_supported = in_->srq_info_supported;
	out_->ep_recv_info_supported = in_->ep_recv_info_supported;
	out_->lmr_sync_req = in_->lmr_sync_req;
	out_->dto_async_return_guaranteed = in_->dto_async_return_guaranteed;
	out_->rdma_write_for_rdma_read_req = in_->rdma_write_for_rdma_read_req;
	out_->num_provider_specific_attr = in_->num_provider_specific_attr;
	out_->provider_specific_attr = in_->provider_specific_attr;
}

/*
 * A 2.0 event as 1.2 has it. An async error names the object in 2.0 and
 * the IA in 1.2: the IA is the one that owns the async EVD. Event numbers
 * 1.2 does not have pass through with their data zeroed.
 */
DAT12_INLINE void dat12_event_from_v2(DAT_EVENT *out_,
                                      const struct dat12_v2_event *in_)
{
	const union dat12_v2_event_data *d_ = &in_->event_data;
	DAT_EVENT_DATA *o_ = &out_->event_data;
	DAT_EVD_PARAM evd_param_;

	memset(out_, 0, sizeof(*out_));
	out_->event_number = (DAT_EVENT_NUMBER)in_->event_number;
	out_->evd_handle = in_->evd_handle;
	switch (in_->event_number) {
	case DAT_DTO_COMPLETION_EVENT:
		o_->dto_completion_event_data.ep_handle =
		        d_->dto_completion_event_data.ep_handle;
		o_->dto_completion_event_data.user_cookie =
		        d_->dto_completion_event_data.user_cookie;
		o_->dto_completion_event_data.status =
		        d_->dto_completion_event_data.status;
		o_->dto_completion_event_data.transfered_length =
		        d_->dto_completion_event_data.transfered_length;
		break;
	case DAT_RMR_BIND_COMPLETION_EVENT:
		o_->rmr_completion_event_data = d_->rmr_completion_event_data;
		break;
	case DAT_CONNECTION_REQUEST_EVENT:
		o_->cr_arrival_event_data.sp_handle.psp_handle =
		        d_->cr_arrival_event_data.sp_handle;
		o_->cr_arrival_event_data.local_ia_address_ptr =
		        d_->cr_arrival_event_data.local_ia_address_ptr;
		o_->cr_arrival_event_data.conn_qual =
		        d_->cr_arrival_event_data.conn_qual;
		o_->cr_arrival_event_data.cr_handle =
		        d_->cr_arrival_event_data.cr_handle;
		break;
	case DAT_CONNECTION_EVENT_ESTABLISHED:
	case DAT_CONNECTION_EVENT_PEER_REJECTED:
	case DAT_CONNECTION_EVENT_NON_PEER_REJECTED:
	case DAT_CONNECTION_EVENT_ACCEPT_COMPLETION_ERROR:
	case DAT_CONNECTION_EVENT_DISCONNECTED:
	case DAT_CONNECTION_EVENT_BROKEN:
	case DAT_CONNECTION_EVENT_TIMED_OUT:
	case DAT_CONNECTION_EVENT_UNREACHABLE:
		o_->connect_event_data = d_->connect_event_data;
		break;
	case DAT_ASYNC_ERROR_EVD_OVERFLOW:
	case DAT_ASYNC_ERROR_IA_CATASTROPHIC:
	case DAT_ASYNC_ERROR_EP_BROKEN:
	case DAT_ASYNC_ERROR_TIMED_OUT:
	case DAT_ASYNC_ERROR_PROVIDER_INTERNAL_ERROR:
		if (dat_evd_query(in_->evd_handle, DAT_EVD_FIELD_IA_HANDLE,
		                  &evd_param_) == DAT_SUCCESS)
			o_->asynch_error_event_data.ia_handle =
			        evd_param_.ia_handle;
		break;
	case DAT_SOFTWARE_EVENT:
		o_->software_event_data = d_->software_event_data;
		break;
	default:
		break;
	}
}

/* A 1.2 event as 2.0 has it (for dat_evd_post_se). */
DAT12_INLINE void dat12_event_to_v2(struct dat12_v2_event *out_,
                                    const DAT_EVENT *in_)
{
	const DAT_EVENT_DATA *d_ = &in_->event_data;
	union dat12_v2_event_data *o_ = &out_->event_data;

	memset(out_, 0, sizeof(*out_));
	out_->event_number = (DAT_UINT32)in_->event_number;
	out_->evd_handle = in_->evd_handle;
	switch (in_->event_number) {
	case DAT_DTO_COMPLETION_EVENT:
		o_->dto_completion_event_data.ep_handle =
		        d_->dto_completion_event_data.ep_handle;
		o_->dto_completion_event_data.user_cookie =
		        d_->dto_completion_event_data.user_cookie;
		o_->dto_completion_event_data.status =
		        d_->dto_completion_event_data.status;
		o_->dto_completion_event_data.transfered_length =
		        dat12_length_to_v2(d_->dto_completion_event_data
		                                   .transfered_length);
		break;
	case DAT_RMR_BIND_COMPLETION_EVENT:
		o_->rmr_completion_event_data = d_->rmr_completion_event_data;
		break;
	case DAT_CONNECTION_REQUEST_EVENT:
		o_->cr_arrival_event_data.sp_handle =
		        d_->cr_arrival_event_data.sp_handle.psp_handle;
		o_->cr_arrival_event_data.local_ia_address_ptr =
		        d_->cr_arrival_event_data.local_ia_address_ptr;
		o_->cr_arrival_event_data.conn_qual =
		        d_->cr_arrival_event_data.conn_qual;
		o_->cr_arrival_event_data.cr_handle =
		        d_->cr_arrival_event_data.cr_handle;
		break;
	case DAT_ASYNC_ERROR_EVD_OVERFLOW:
	case DAT_ASYNC_ERROR_IA_CATASTROPHIC:
	case DAT_ASYNC_ERROR_EP_BROKEN:
	case DAT_ASYNC_ERROR_TIMED_OUT:
	case DAT_ASYNC_ERROR_PROVIDER_INTERNAL_ERROR:
		o_->asynch_error_event_data.dat_handle =
		        d_->asynch_error_event_data.ia_handle;
		break;
	case DAT_SOFTWARE_EVENT:
		o_->software_event_data = d_->software_event_data;
		break;
	default: /* the connection events */
		o_->connect_event_data = d_->connect_event_data;
		break;
	}
}

/* The wrappers, in the order of dat.h and udat.h. */

DAT12_INLINE DAT_RETURN dat12_ia_openv(const DAT_NAME_PTR name_,
                                       DAT_COUNT qlen_,
                                       DAT_EVD_HANDLE *async_evd_,
                                       DAT_IA_HANDLE *ia_, DAT_UINT32 major_,
                                       DAT_UINT32 minor_,
                                       DAT_BOOLEAN thread_safety_)
{
	if (major_ == 1) {
		major_ = DAT12_V2_VERSION_MAJOR;
		minor_ = DAT12_V2_VERSION_MINOR;
	}
	return dat_ia_openv(name_, qlen_, async_evd_, ia_, major_, minor_,
	                    thread_safety_);
}

DAT12_INLINE DAT_RETURN dat12_ia_query(DAT_IA_HANDLE ia_,
                                       DAT_EVD_HANDLE *async_evd_,
                                       DAT_IA_ATTR_MASK ia_mask_,
                                       DAT_IA_ATTR *ia_attr_,
                                       DAT_PROVIDER_ATTR_MASK prov_mask_,
                                       DAT_PROVIDER_ATTR *prov_attr_)
{
	struct dat12_v2_ia_attr ia2_;
	struct dat12_v2_provider_attr prov2_;
	DAT_RETURN ret_;

	memset(&ia2_, 0, sizeof(ia2_));
	memset(&prov2_, 0, sizeof(prov2_));
	ret_ = dat_ia_query(ia_, async_evd_, ia_mask_,
	                    ia_attr_ != NULL ? &ia2_ : NULL, prov_mask_,
	                    prov_attr_ != NULL ? &prov2_ : NULL);
	if (ret_ != DAT_SUCCESS)
		return ret_;
	if (ia_attr_ != NULL)
		dat12_ia_attr_from_v2(ia_attr_, &ia2_);
	if (prov_attr_ != NULL)
		dat12_provider_attr_from_v2(prov_attr_, &prov2_);
	return ret_;
}

DAT12_INLINE DAT_RETURN dat12_cr_reject(DAT_CR_HANDLE cr_)
{
	return dat_cr_reject(cr_, 0, NULL);
}

DAT12_INLINE DAT_RETURN dat12_evd_post_se(DAT_EVD_HANDLE evd_,
                                          const DAT_EVENT *event_)
{
	struct dat12_v2_event ev2_;

	if (event_ == NULL)
		return dat_evd_post_se(evd_, NULL);
	dat12_event_to_v2(&ev2_, event_);
	return dat_evd_post_se(evd_, &ev2_);
}

DAT12_INLINE DAT_RETURN dat12_evd_dequeue(DAT_EVD_HANDLE evd_,
                                          DAT_EVENT *event_)
{
	struct dat12_v2_event ev2_;
	DAT_RETURN ret_;

	if (event_ == NULL)
		return dat_evd_dequeue(evd_, NULL);
	memset(&ev2_, 0, sizeof(ev2_));
	ret_ = dat_evd_dequeue(evd_, &ev2_);
	if (ret_ == DAT_SUCCESS)
		dat12_event_from_v2(event_, &ev2_);
	return ret_;
}

DAT12_INLINE DAT_RETURN dat12_ep_create(DAT_IA_HANDLE ia_, DAT_PZ_HANDLE pz_,
                                        DAT_EVD_HANDLE recv_evd_,
                                        DAT_EVD_HANDLE request_evd_,
                                        DAT_EVD_HANDLE connect_evd_,
                                        DAT_EP_ATTR *attr_, DAT_EP_HANDLE *ep_)
{
	struct dat12_v2_ep_attr attr2_;

	memset(&attr2_, 0, sizeof(attr2_));
	if (attr_ != NULL)
		dat12_ep_attr_to_v2(&attr2_, attr_);
	return dat_ep_create(ia_, pz_, recv_evd_, request_evd_, connect_evd_,
	                     attr_ != NULL ? &attr2_ : NULL, ep_);
}

DAT12_INLINE DAT_RETURN dat12_ep_query(DAT_EP_HANDLE ep_,
                                       DAT_EP_PARAM_MASK mask_,
                                       DAT_EP_PARAM *param_)
{
	struct dat12_v2_ep_param param2_;
	DAT_RETURN ret_;

	if (param_ == NULL)
		return dat_ep_query(ep_, mask_, NULL);
	memset(&param2_, 0, sizeof(param2_));
	ret_ = dat_ep_query(ep_, mask_, &param2_);
	if (ret_ == DAT_SUCCESS)
		dat12_ep_param_from_v2(param_, &param2_);
	return ret_;
}

DAT12_INLINE DAT_RETURN dat12_ep_modify(DAT_EP_HANDLE ep_,
                                        DAT_EP_PARAM_MASK mask_,
                                        const DAT_EP_PARAM *param_)
{
	struct dat12_v2_ep_param param2_;

	if (param_ == NULL)
		return dat_ep_modify(ep_, mask_, NULL);
	dat12_ep_param_to_v2(&param2_, param_);
	return dat_ep_modify(ep_, mask_, &param2_);
}

/*
 * Posts: a send and a receive differ only in the entry point, and so do
 * an RDMA read and write, and the two LMR syncs.
 */
typedef DAT_RETURN(DAT_API *dat12_v2_post_func)(DAT_EP_HANDLE, DAT_COUNT,
                                                struct dat12_v2_lmr_triplet *,
                                                DAT_DTO_COOKIE,
                                                DAT_COMPLETION_FLAGS);

typedef DAT_RETURN(DAT_API *dat12_v2_rdma_func)(
        DAT_EP_HANDLE, DAT_COUNT, struct dat12_v2_lmr_triplet *, DAT_DTO_COOKIE,
        const struct dat12_v2_rmr_triplet *, DAT_COMPLETION_FLAGS);

typedef DAT_RETURN(DAT_API *dat12_v2_sync_func)(
        DAT_IA_HANDLE, const struct dat12_v2_lmr_triplet *, DAT_VLEN);

DAT12_INLINE DAT_RETURN dat12_post(dat12_v2_post_func post_, DAT_EP_HANDLE ep_,
                                   DAT_COUNT num_segments_,
                                   DAT_LMR_TRIPLET *local_iov_,
                                   DAT_DTO_COOKIE cookie_,
                                   DAT_COMPLETION_FLAGS flags_)
{
	struct dat12_v2_lmr_triplet iov2_[DAT12_IOV_MAX];
	DAT_RETURN ret_;

	ret_ = dat12_lmr_triplets_to_v2(iov2_, local_iov_, num_segments_,
	                                DAT_INVALID_ARG2);
	if (ret_ != DAT_SUCCESS)
		return ret_;
	return post_(ep_, num_segments_, local_iov_ != NULL ? iov2_ : NULL,
	             cookie_, flags_);
}

DAT12_INLINE DAT_RETURN dat12_rdma(dat12_v2_rdma_func rdma_, DAT_EP_HANDLE ep_,
                                   DAT_COUNT num_segments_,
                                   DAT_LMR_TRIPLET *local_iov_,
                                   DAT_DTO_COOKIE cookie_,
                                   const DAT_RMR_TRIPLET *remote_iov_,
                                   DAT_COMPLETION_FLAGS flags_)
{
	struct dat12_v2_lmr_triplet iov2_[DAT12_IOV_MAX];
	struct dat12_v2_rmr_triplet remote2_;
	DAT_RETURN ret_;

	ret_ = dat12_lmr_triplets_to_v2(iov2_, local_iov_, num_segments_,
	                                DAT_INVALID_ARG2);
	if (ret_ == DAT_SUCCESS && remote_iov_ != NULL)
		ret_ = dat12_rmr_triplet_to_v2(&remote2_, remote_iov_);
	if (ret_ != DAT_SUCCESS)
		return ret_;
	return rdma_(ep_, num_segments_, local_iov_ != NULL ? iov2_ : NULL,
	             cookie_, remote_iov_ != NULL ? &remote2_ : NULL, flags_);
}

DAT12_INLINE DAT_RETURN dat12_lmr_sync(dat12_v2_sync_func sync_,
                                       DAT_IA_HANDLE ia_,
                                       const DAT_LMR_TRIPLET *segments_,
                                       DAT_VLEN num_segments_)
{
	struct dat12_v2_lmr_triplet iov2_[DAT12_IOV_MAX];
	DAT_RETURN ret_;

	if (num_segments_ > (DAT_VLEN)DAT12_IOV_MAX)
		return DAT12_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	ret_ = dat12_lmr_triplets_to_v2(
	        iov2_, segments_, (DAT_COUNT)num_segments_, DAT_INVALID_ARG3);
	if (ret_ != DAT_SUCCESS)
		return ret_;
	return sync_(ia_, segments_ != NULL ? iov2_ : NULL, num_segments_);
}

DAT12_INLINE DAT_RETURN dat12_ep_post_send(DAT_EP_HANDLE ep_,
                                           DAT_COUNT num_segments_,
                                           DAT_LMR_TRIPLET *local_iov_,
                                           DAT_DTO_COOKIE cookie_,
                                           DAT_COMPLETION_FLAGS flags_)
{
	return dat12_post(dat_ep_post_send, ep_, num_segments_, local_iov_,
	                  cookie_, flags_);
}

DAT12_INLINE DAT_RETURN dat12_ep_post_recv(DAT_EP_HANDLE ep_,
                                           DAT_COUNT num_segments_,
                                           DAT_LMR_TRIPLET *local_iov_,
                                           DAT_DTO_COOKIE cookie_,
                                           DAT_COMPLETION_FLAGS flags_)
{
	return dat12_post(dat_ep_post_recv, ep_, num_segments_, local_iov_,
	                  cookie_, flags_);
}

DAT12_INLINE DAT_RETURN dat12_ep_post_rdma_read(
        DAT_EP_HANDLE ep_, DAT_COUNT num_segments_, DAT_LMR_TRIPLET *local_iov_,
        DAT_DTO_COOKIE cookie_, const DAT_RMR_TRIPLET *remote_iov_,
        DAT_COMPLETION_FLAGS flags_)
{
	return dat12_rdma(dat_ep_post_rdma_read, ep_, num_segments_, local_iov_,
	                  cookie_, remote_iov_, flags_);
}

DAT12_INLINE DAT_RETURN dat12_ep_post_rdma_write(
        DAT_EP_HANDLE ep_, DAT_COUNT num_segments_, DAT_LMR_TRIPLET *local_iov_,
        DAT_DTO_COOKIE cookie_, const DAT_RMR_TRIPLET *remote_iov_,
        DAT_COMPLETION_FLAGS flags_)
{
	return dat12_rdma(dat_ep_post_rdma_write, ep_, num_segments_,
	                  local_iov_, cookie_, remote_iov_, flags_);
}

DAT12_INLINE DAT_RETURN dat12_ep_create_with_srq(
        DAT_IA_HANDLE ia_, DAT_PZ_HANDLE pz_, DAT_EVD_HANDLE recv_evd_,
        DAT_EVD_HANDLE request_evd_, DAT_EVD_HANDLE connect_evd_,
        DAT_SRQ_HANDLE srq_, const DAT_EP_ATTR *attr_, DAT_EP_HANDLE *ep_)
{
	struct dat12_v2_ep_attr attr2_;

	memset(&attr2_, 0, sizeof(attr2_));
	if (attr_ != NULL)
		dat12_ep_attr_to_v2(&attr2_, attr_);
	return dat_ep_create_with_srq(ia_, pz_, recv_evd_, request_evd_,
	                              connect_evd_, srq_,
	                              attr_ != NULL ? &attr2_ : NULL, ep_);
}

DAT12_INLINE DAT_RETURN dat12_lmr_query(DAT_LMR_HANDLE lmr_,
                                        DAT_LMR_PARAM_MASK mask_,
                                        DAT_LMR_PARAM *param_)
{
	struct dat12_v2_lmr_param param2_;
	DAT_RETURN ret_;

	if (param_ == NULL)
		return dat_lmr_query(lmr_, mask_, NULL);
	memset(&param2_, 0, sizeof(param2_));
	ret_ = dat_lmr_query(lmr_, mask_, &param2_);
	if (ret_ != DAT_SUCCESS)
		return ret_;
	param_->ia_handle = param2_.ia_handle;
	param_->mem_type = param2_.mem_type;
	param_->region_desc = param2_.region_desc;
	param_->length = param2_.length;
	param_->pz_handle = param2_.pz_handle;
	param_->mem_priv = param2_.mem_priv;
	param_->lmr_context = param2_.lmr_context;
	param_->rmr_context = param2_.rmr_context;
	param_->registered_size = param2_.registered_size;
	param_->registered_address = param2_.registered_address;
	return ret_;
}

DAT12_INLINE DAT_RETURN
dat12_lmr_sync_rdma_read(DAT_IA_HANDLE ia_, const DAT_LMR_TRIPLET *segments_,
                         DAT_VLEN num_segments_)
{
	return dat12_lmr_sync(dat_lmr_sync_rdma_read, ia_, segments_,
	                      num_segments_);
}

DAT12_INLINE DAT_RETURN
dat12_lmr_sync_rdma_write(DAT_IA_HANDLE ia_, const DAT_LMR_TRIPLET *segments_,
                          DAT_VLEN num_segments_)
{
	return dat12_lmr_sync(dat_lmr_sync_rdma_write, ia_, segments_,
	                      num_segments_);
}

DAT12_INLINE DAT_RETURN dat12_rmr_query(DAT_RMR_HANDLE rmr_,
                                        DAT_RMR_PARAM_MASK mask_,
                                        DAT_RMR_PARAM *param_)
{
	struct dat12_v2_rmr_param param2_;
	DAT_RETURN ret_;

	if (param_ == NULL)
		return dat_rmr_query(rmr_, mask_, NULL);
	memset(&param2_, 0, sizeof(param2_));
	ret_ = dat_rmr_query(rmr_, mask_, &param2_);
	if (ret_ != DAT_SUCCESS)
		return ret_;
	param_->ia_handle = param2_.ia_handle;
	param_->pz_handle = param2_.pz_handle;
	dat12_lmr_triplet_from_v2(&param_->lmr_triplet, &param2_.lmr_triplet);
	param_->mem_priv = param2_.mem_priv;
	param_->rmr_context = param2_.rmr_context;
	return ret_;
}

DAT12_INLINE DAT_RETURN dat12_rmr_bind(
        DAT_RMR_HANDLE rmr_, const DAT_LMR_TRIPLET *lmr_triplet_,
        DAT_MEM_PRIV_FLAGS mem_priv_, DAT_EP_HANDLE ep_, DAT_RMR_COOKIE cookie_,
        DAT_COMPLETION_FLAGS flags_, DAT_RMR_CONTEXT *context_)
{
	struct dat12_v2_lmr_triplet triplet2_;
	DAT_RETURN ret_;

	if (lmr_triplet_ == NULL)
		return dat_rmr_bind(rmr_, DAT_HANDLE_NULL, NULL, mem_priv_,
		                    DAT12_V2_VA_TYPE_VA, ep_, cookie_, flags_,
		                    context_);
	/* No LMR handle: the provider finds the LMR by its lmr_context. */
	ret_ = dat12_lmr_triplets_to_v2(&triplet2_, lmr_triplet_, 1,
	                                DAT_INVALID_ARG2);
	if (ret_ != DAT_SUCCESS)
		return ret_;
	return dat_rmr_bind(rmr_, DAT_HANDLE_NULL, &triplet2_, mem_priv_,
	                    DAT12_V2_VA_TYPE_VA, ep_, cookie_, flags_,
	                    context_);
}

DAT12_INLINE DAT_RETURN dat12_srq_post_recv(DAT_SRQ_HANDLE srq_,
                                            DAT_COUNT num_segments_,
                                            DAT_LMR_TRIPLET *local_iov_,
                                            DAT_DTO_COOKIE cookie_)
{
	struct dat12_v2_lmr_triplet iov2_[DAT12_IOV_MAX];
	DAT_RETURN ret_;

	ret_ = dat12_lmr_triplets_to_v2(iov2_, local_iov_, num_segments_,
	                                DAT_INVALID_ARG2);
	if (ret_ != DAT_SUCCESS)
		return ret_;
	return dat_srq_post_recv(srq_, num_segments_,
	                         local_iov_ != NULL ? iov2_ : NULL, cookie_);
}

DAT12_INLINE DAT_RETURN dat12_lmr_create(
        DAT_IA_HANDLE ia_, DAT_MEM_TYPE mem_type_,
        DAT_REGION_DESCRIPTION region_, DAT_VLEN length_, DAT_PZ_HANDLE pz_,
        DAT_MEM_PRIV_FLAGS privileges_, DAT_LMR_HANDLE *lmr_,
        DAT_LMR_CONTEXT *lmr_context_, DAT_RMR_CONTEXT *rmr_context_,
        DAT_VLEN *registered_length_, DAT_VADDR *registered_address_)
{
	return dat_lmr_create(ia_, mem_type_, region_, length_, pz_,
	                      privileges_, DAT12_V2_VA_TYPE_VA, lmr_,
	                      lmr_context_, rmr_context_, registered_length_,
	                      registered_address_);
}

DAT12_INLINE DAT_RETURN dat12_cno_query(DAT_CNO_HANDLE cno_,
                                        DAT_CNO_PARAM_MASK mask_,
                                        DAT_CNO_PARAM *param_)
{
	struct dat12_v2_cno_param param2_;
	DAT_RETURN ret_;

	(void)mask_; /* 2.0 numbers its CNO fields differently: ask for all */
	if (param_ == NULL)
		return dat_cno_query(cno_, DAT12_V2_CNO_FIELD_ALL, NULL);
	memset(&param2_, 0, sizeof(param2_));
	ret_ = dat_cno_query(cno_, DAT12_V2_CNO_FIELD_ALL, &param2_);
	if (ret_ != DAT_SUCCESS)
		return ret_;
	param_->ia_handle = param2_.ia_handle;
	if (param2_.proxy_type == DAT12_V2_PROXY_TYPE_AGENT) {
		param_->agent = param2_.proxy.agent;
	} else {
		param_->agent.instance_data = NULL;
		param_->agent.proxy_agent_func = NULL;
	}
	return ret_;
}

DAT12_INLINE DAT_RETURN dat12_evd_wait(DAT_EVD_HANDLE evd_,
                                       DAT_TIMEOUT timeout_,
                                       DAT_COUNT threshold_, DAT_EVENT *event_,
                                       DAT_COUNT *nmore_)
{
	struct dat12_v2_event ev2_;
	DAT_RETURN ret_;

	if (event_ == NULL)
		return dat_evd_wait(evd_, timeout_, threshold_, NULL, nmore_);
	memset(&ev2_, 0, sizeof(ev2_));
	ret_ = dat_evd_wait(evd_, timeout_, threshold_, &ev2_, nmore_);
	if (ret_ == DAT_SUCCESS)
		dat12_event_from_v2(event_, &ev2_);
	return ret_;
}

/* The 1.2 names. */
#define dat_ia_openv            dat12_ia_openv
#define dat_ia_query            dat12_ia_query
#define dat_cr_reject           dat12_cr_reject
#define dat_evd_post_se         dat12_evd_post_se
#define dat_evd_dequeue         dat12_evd_dequeue
#define dat_ep_create           dat12_ep_create
#define dat_ep_query            dat12_ep_query
#define dat_ep_modify           dat12_ep_modify
#define dat_ep_post_send        dat12_ep_post_send
#define dat_ep_post_recv        dat12_ep_post_recv
#define dat_ep_post_rdma_read   dat12_ep_post_rdma_read
#define dat_ep_post_rdma_write  dat12_ep_post_rdma_write
#define dat_ep_create_with_srq  dat12_ep_create_with_srq
#define dat_lmr_query           dat12_lmr_query
#define dat_lmr_sync_rdma_read  dat12_lmr_sync_rdma_read
#define dat_lmr_sync_rdma_write dat12_lmr_sync_rdma_write
#define dat_rmr_query           dat12_rmr_query
#define dat_rmr_bind            dat12_rmr_bind
#define dat_srq_post_recv       dat12_srq_post_recv
#define dat_lmr_create          dat12_lmr_create
#define dat_cno_query           dat12_cno_query
#define dat_evd_wait            dat12_evd_wait

#ifdef __cplusplus
}
#endif

#endif /* _DAT12_UDAT_H_ */

#endif /* _DAT12_UDAT_LIBDAT2_H_ */
