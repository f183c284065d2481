/* SPDX-License-Identifier: BSD-2-Clause */
/* Copyright (c) 2026 dapl-ofi developers */
/*
 * The structures the DAT 1.2 headers hand to libdat2, and the 2.0 ones
 * they stand for: layout12.c measures them through <dat/udat.h>,
 * layout20.c through <dat2/udat.h>, and layout.c compares the two.
 *
 * DAT12_LAYOUT_TYPES(T): T(type in the 1.2 headers, 2.0 type), sizeof.
 * DAT12_LAYOUT_FIELDS(F): F(1.2 type, 2.0 type, member), offset and size.
 * The 1.2 type is either the 1.2 type itself, where the 1.2 call passes it
 * to libdat2 unchanged, or the dat12_v2_ copy of 2.0's that a wrapper in
 * <dat/udat_libdat2.h> converts to.
 */
#ifndef DAT12_TEST_LAYOUT_H
#define DAT12_TEST_LAYOUT_H

#include <stddef.h>

struct dat12_layout {
	const char *name;
	size_t offset;
	size_t size;
};

extern const struct dat12_layout dat12_layout_12[];
extern const struct dat12_layout dat12_layout_20[];

/* clang-format off */
#define DAT12_LAYOUT_TYPES(T) \
	T(DAT_UINT32, DAT_UINT32) \
	T(DAT_UINT64, DAT_UINT64) \
	T(DAT_COUNT, DAT_COUNT) \
	T(DAT_RETURN, DAT_RETURN) \
	T(DAT_HANDLE, DAT_HANDLE) \
	T(DAT_BOOLEAN, DAT_BOOLEAN) \
	T(DAT_TIMEOUT, DAT_TIMEOUT) \
	T(DAT_CONN_QUAL, DAT_CONN_QUAL) \
	T(DAT_VLEN, DAT_VLEN) \
	T(DAT_VADDR, DAT_VADDR) \
	T(DAT_LMR_CONTEXT, DAT_LMR_CONTEXT) \
	T(DAT_RMR_CONTEXT, DAT_RMR_CONTEXT) \
	T(DAT_CONTEXT, DAT_CONTEXT) \
	T(DAT_QOS, DAT_QOS) \
	T(DAT_CONNECT_FLAGS, DAT_CONNECT_FLAGS) \
	T(DAT_CLOSE_FLAGS, DAT_CLOSE_FLAGS) \
	T(DAT_COMPLETION_FLAGS, DAT_COMPLETION_FLAGS) \
	T(DAT_EVD_FLAGS, DAT_EVD_FLAGS) \
	T(DAT_PSP_FLAGS, DAT_PSP_FLAGS) \
	T(DAT_MEM_TYPE, DAT_MEM_TYPE) \
	T(DAT_MEM_PRIV_FLAGS, DAT_MEM_PRIV_FLAGS) \
	T(DAT_EP_STATE, DAT_EP_STATE) \
	T(DAT_HANDLE_TYPE, DAT_HANDLE_TYPE) \
	T(DAT_EVD_STATE, DAT_EVD_STATE) \
	T(DAT_EP_PARAM_MASK, DAT_EP_PARAM_MASK) \
	T(DAT_IA_ATTR_MASK, DAT_IA_ATTR_MASK) \
	T(DAT_PROVIDER_ATTR_MASK, DAT_PROVIDER_ATTR_MASK) \
	T(DAT_EVD_PARAM_MASK, DAT_EVD_PARAM_MASK) \
	T(DAT_LMR_PARAM_MASK, DAT_LMR_PARAM_MASK) \
	T(DAT_RMR_PARAM_MASK, DAT_RMR_PARAM_MASK) \
	T(DAT_CR_PARAM_MASK, DAT_CR_PARAM_MASK) \
	T(DAT_PSP_PARAM_MASK, DAT_PSP_PARAM_MASK) \
	T(DAT_RSP_PARAM_MASK, DAT_RSP_PARAM_MASK) \
	T(DAT_PZ_PARAM_MASK, DAT_PZ_PARAM_MASK) \
	T(DAT_SRQ_PARAM_MASK, DAT_SRQ_PARAM_MASK) \
	T(DAT_NAMED_ATTR, DAT_NAMED_ATTR) \
	T(DAT_PROVIDER_INFO, DAT_PROVIDER_INFO) \
	T(DAT_OS_WAIT_PROXY_AGENT, DAT_OS_WAIT_PROXY_AGENT) \
	T(DAT_SHARED_MEMORY, DAT_SHARED_MEMORY) \
	T(DAT_REGION_DESCRIPTION, DAT_REGION_DESCRIPTION) \
	T(DAT_EVD_PARAM, DAT_EVD_PARAM) \
	T(DAT_CR_PARAM, DAT_CR_PARAM) \
	T(DAT_PSP_PARAM, DAT_PSP_PARAM) \
	T(DAT_RSP_PARAM, DAT_RSP_PARAM) \
	T(DAT_PZ_PARAM, DAT_PZ_PARAM) \
	T(DAT_SRQ_ATTR, DAT_SRQ_ATTR) \
	T(DAT_SRQ_PARAM, DAT_SRQ_PARAM) \
	T(DAT_RMR_BIND_COMPLETION_EVENT_DATA, DAT_RMR_BIND_COMPLETION_EVENT_DATA) \
	T(DAT_CONNECTION_EVENT_DATA, DAT_CONNECTION_EVENT_DATA) \
	T(DAT_SOFTWARE_EVENT_DATA, DAT_SOFTWARE_EVENT_DATA) \
	T(struct dat12_v2_lmr_triplet, DAT_LMR_TRIPLET) \
	T(struct dat12_v2_rmr_triplet, DAT_RMR_TRIPLET) \
	T(struct dat12_v2_ep_attr, DAT_EP_ATTR) \
	T(struct dat12_v2_comm, DAT_COMM) \
	T(struct dat12_v2_ep_param, DAT_EP_PARAM) \
	T(struct dat12_v2_lmr_param, DAT_LMR_PARAM) \
	T(struct dat12_v2_rmr_param, DAT_RMR_PARAM) \
	T(struct dat12_v2_cno_param, DAT_CNO_PARAM) \
	T(struct dat12_v2_ia_attr, DAT_IA_ATTR) \
	T(struct dat12_v2_provider_attr, DAT_PROVIDER_ATTR) \
	T(struct dat12_v2_dto_completion_event_data, DAT_DTO_COMPLETION_EVENT_DATA) \
	T(struct dat12_v2_cr_arrival_event_data, DAT_CR_ARRIVAL_EVENT_DATA) \
	T(struct dat12_v2_asynch_error_event_data, DAT_ASYNCH_ERROR_EVENT_DATA) \
	T(union dat12_v2_event_data, DAT_EVENT_DATA) \
	T(struct dat12_v2_event, DAT_EVENT) \
	T(enum dat12_v2_va_type, DAT_VA_TYPE) \
	T(enum dat12_v2_cno_param_mask, DAT_CNO_PARAM_MASK)

#define DAT12_LAYOUT_FIELDS(F) \
	F(DAT_NAMED_ATTR, DAT_NAMED_ATTR, name) \
	F(DAT_NAMED_ATTR, DAT_NAMED_ATTR, value) \
	F(DAT_PROVIDER_INFO, DAT_PROVIDER_INFO, ia_name) \
	F(DAT_PROVIDER_INFO, DAT_PROVIDER_INFO, dapl_version_major) \
	F(DAT_PROVIDER_INFO, DAT_PROVIDER_INFO, dapl_version_minor) \
	F(DAT_PROVIDER_INFO, DAT_PROVIDER_INFO, is_thread_safe) \
	F(DAT_OS_WAIT_PROXY_AGENT, DAT_OS_WAIT_PROXY_AGENT, instance_data) \
	F(DAT_OS_WAIT_PROXY_AGENT, DAT_OS_WAIT_PROXY_AGENT, proxy_agent_func) \
	F(DAT_SHARED_MEMORY, DAT_SHARED_MEMORY, virtual_address) \
	F(DAT_SHARED_MEMORY, DAT_SHARED_MEMORY, shared_memory_id) \
	F(DAT_REGION_DESCRIPTION, DAT_REGION_DESCRIPTION, for_va) \
	F(DAT_REGION_DESCRIPTION, DAT_REGION_DESCRIPTION, for_lmr_handle) \
	F(DAT_REGION_DESCRIPTION, DAT_REGION_DESCRIPTION, for_shared_memory) \
	F(DAT_EVD_PARAM, DAT_EVD_PARAM, ia_handle) \
	F(DAT_EVD_PARAM, DAT_EVD_PARAM, evd_qlen) \
	F(DAT_EVD_PARAM, DAT_EVD_PARAM, evd_state) \
	F(DAT_EVD_PARAM, DAT_EVD_PARAM, cno_handle) \
	F(DAT_EVD_PARAM, DAT_EVD_PARAM, evd_flags) \
	F(DAT_CR_PARAM, DAT_CR_PARAM, remote_ia_address_ptr) \
	F(DAT_CR_PARAM, DAT_CR_PARAM, remote_port_qual) \
	F(DAT_CR_PARAM, DAT_CR_PARAM, private_data_size) \
	F(DAT_CR_PARAM, DAT_CR_PARAM, private_data) \
	F(DAT_CR_PARAM, DAT_CR_PARAM, local_ep_handle) \
	F(DAT_PSP_PARAM, DAT_PSP_PARAM, ia_handle) \
	F(DAT_PSP_PARAM, DAT_PSP_PARAM, conn_qual) \
	F(DAT_PSP_PARAM, DAT_PSP_PARAM, evd_handle) \
	F(DAT_PSP_PARAM, DAT_PSP_PARAM, psp_flags) \
	F(DAT_RSP_PARAM, DAT_RSP_PARAM, ia_handle) \
	F(DAT_RSP_PARAM, DAT_RSP_PARAM, conn_qual) \
	F(DAT_RSP_PARAM, DAT_RSP_PARAM, evd_handle) \
	F(DAT_RSP_PARAM, DAT_RSP_PARAM, ep_handle) \
	F(DAT_PZ_PARAM, DAT_PZ_PARAM, ia_handle) \
	F(DAT_SRQ_ATTR, DAT_SRQ_ATTR, max_recv_dtos) \
	F(DAT_SRQ_ATTR, DAT_SRQ_ATTR, max_recv_iov) \
	F(DAT_SRQ_ATTR, DAT_SRQ_ATTR, low_watermark) \
	F(DAT_SRQ_PARAM, DAT_SRQ_PARAM, ia_handle) \
	F(DAT_SRQ_PARAM, DAT_SRQ_PARAM, srq_state) \
	F(DAT_SRQ_PARAM, DAT_SRQ_PARAM, pz_handle) \
	F(DAT_SRQ_PARAM, DAT_SRQ_PARAM, max_recv_dtos) \
	F(DAT_SRQ_PARAM, DAT_SRQ_PARAM, max_recv_iov) \
	F(DAT_SRQ_PARAM, DAT_SRQ_PARAM, low_watermark) \
	F(DAT_SRQ_PARAM, DAT_SRQ_PARAM, available_dto_count) \
	F(DAT_SRQ_PARAM, DAT_SRQ_PARAM, outstanding_dto_count) \
	F(DAT_RMR_BIND_COMPLETION_EVENT_DATA, DAT_RMR_BIND_COMPLETION_EVENT_DATA, rmr_handle) \
	F(DAT_RMR_BIND_COMPLETION_EVENT_DATA, DAT_RMR_BIND_COMPLETION_EVENT_DATA, user_cookie) \
	F(DAT_RMR_BIND_COMPLETION_EVENT_DATA, DAT_RMR_BIND_COMPLETION_EVENT_DATA, status) \
	F(DAT_CONNECTION_EVENT_DATA, DAT_CONNECTION_EVENT_DATA, ep_handle) \
	F(DAT_CONNECTION_EVENT_DATA, DAT_CONNECTION_EVENT_DATA, private_data_size) \
	F(DAT_CONNECTION_EVENT_DATA, DAT_CONNECTION_EVENT_DATA, private_data) \
	F(DAT_SOFTWARE_EVENT_DATA, DAT_SOFTWARE_EVENT_DATA, pointer) \
	F(struct dat12_v2_lmr_triplet, DAT_LMR_TRIPLET, virtual_address) \
	F(struct dat12_v2_lmr_triplet, DAT_LMR_TRIPLET, segment_length) \
	F(struct dat12_v2_lmr_triplet, DAT_LMR_TRIPLET, lmr_context) \
	F(struct dat12_v2_rmr_triplet, DAT_RMR_TRIPLET, virtual_address) \
	F(struct dat12_v2_rmr_triplet, DAT_RMR_TRIPLET, segment_length) \
	F(struct dat12_v2_rmr_triplet, DAT_RMR_TRIPLET, rmr_context) \
	F(struct dat12_v2_ep_attr, DAT_EP_ATTR, service_type) \
	F(struct dat12_v2_ep_attr, DAT_EP_ATTR, max_message_size) \
	F(struct dat12_v2_ep_attr, DAT_EP_ATTR, max_rdma_size) \
	F(struct dat12_v2_ep_attr, DAT_EP_ATTR, qos) \
	F(struct dat12_v2_ep_attr, DAT_EP_ATTR, recv_completion_flags) \
	F(struct dat12_v2_ep_attr, DAT_EP_ATTR, request_completion_flags) \
	F(struct dat12_v2_ep_attr, DAT_EP_ATTR, max_recv_dtos) \
	F(struct dat12_v2_ep_attr, DAT_EP_ATTR, max_request_dtos) \
	F(struct dat12_v2_ep_attr, DAT_EP_ATTR, max_recv_iov) \
	F(struct dat12_v2_ep_attr, DAT_EP_ATTR, max_request_iov) \
	F(struct dat12_v2_ep_attr, DAT_EP_ATTR, max_rdma_read_in) \
	F(struct dat12_v2_ep_attr, DAT_EP_ATTR, max_rdma_read_out) \
	F(struct dat12_v2_ep_attr, DAT_EP_ATTR, srq_soft_hw) \
	F(struct dat12_v2_ep_attr, DAT_EP_ATTR, max_rdma_read_iov) \
	F(struct dat12_v2_ep_attr, DAT_EP_ATTR, max_rdma_write_iov) \
	F(struct dat12_v2_ep_attr, DAT_EP_ATTR, ep_transport_specific_count) \
	F(struct dat12_v2_ep_attr, DAT_EP_ATTR, ep_transport_specific) \
	F(struct dat12_v2_ep_attr, DAT_EP_ATTR, ep_provider_specific_count) \
	F(struct dat12_v2_ep_attr, DAT_EP_ATTR, ep_provider_specific) \
	F(struct dat12_v2_comm, DAT_COMM, domain) \
	F(struct dat12_v2_comm, DAT_COMM, type) \
	F(struct dat12_v2_comm, DAT_COMM, protocol) \
	F(struct dat12_v2_ep_param, DAT_EP_PARAM, ia_handle) \
	F(struct dat12_v2_ep_param, DAT_EP_PARAM, ep_state) \
	F(struct dat12_v2_ep_param, DAT_EP_PARAM, comm) \
	F(struct dat12_v2_ep_param, DAT_EP_PARAM, local_ia_address_ptr) \
	F(struct dat12_v2_ep_param, DAT_EP_PARAM, local_port_qual) \
	F(struct dat12_v2_ep_param, DAT_EP_PARAM, remote_ia_address_ptr) \
	F(struct dat12_v2_ep_param, DAT_EP_PARAM, remote_port_qual) \
	F(struct dat12_v2_ep_param, DAT_EP_PARAM, pz_handle) \
	F(struct dat12_v2_ep_param, DAT_EP_PARAM, recv_evd_handle) \
	F(struct dat12_v2_ep_param, DAT_EP_PARAM, request_evd_handle) \
	F(struct dat12_v2_ep_param, DAT_EP_PARAM, connect_evd_handle) \
	F(struct dat12_v2_ep_param, DAT_EP_PARAM, srq_handle) \
	F(struct dat12_v2_ep_param, DAT_EP_PARAM, ep_attr) \
	F(struct dat12_v2_lmr_param, DAT_LMR_PARAM, ia_handle) \
	F(struct dat12_v2_lmr_param, DAT_LMR_PARAM, mem_type) \
	F(struct dat12_v2_lmr_param, DAT_LMR_PARAM, region_desc) \
	F(struct dat12_v2_lmr_param, DAT_LMR_PARAM, length) \
	F(struct dat12_v2_lmr_param, DAT_LMR_PARAM, pz_handle) \
	F(struct dat12_v2_lmr_param, DAT_LMR_PARAM, mem_priv) \
	F(struct dat12_v2_lmr_param, DAT_LMR_PARAM, va_type) \
	F(struct dat12_v2_lmr_param, DAT_LMR_PARAM, lmr_context) \
	F(struct dat12_v2_lmr_param, DAT_LMR_PARAM, rmr_context) \
	F(struct dat12_v2_lmr_param, DAT_LMR_PARAM, registered_size) \
	F(struct dat12_v2_lmr_param, DAT_LMR_PARAM, registered_address) \
	F(struct dat12_v2_rmr_param, DAT_RMR_PARAM, ia_handle) \
	F(struct dat12_v2_rmr_param, DAT_RMR_PARAM, pz_handle) \
	F(struct dat12_v2_rmr_param, DAT_RMR_PARAM, lmr_triplet) \
	F(struct dat12_v2_rmr_param, DAT_RMR_PARAM, mem_priv) \
	F(struct dat12_v2_rmr_param, DAT_RMR_PARAM, rmr_context) \
	F(struct dat12_v2_rmr_param, DAT_RMR_PARAM, rmr_scope) \
	F(struct dat12_v2_rmr_param, DAT_RMR_PARAM, va_type) \
	F(struct dat12_v2_cno_param, DAT_CNO_PARAM, ia_handle) \
	F(struct dat12_v2_cno_param, DAT_CNO_PARAM, proxy_type) \
	F(struct dat12_v2_cno_param, DAT_CNO_PARAM, proxy) \
	F(struct dat12_v2_cno_param, DAT_CNO_PARAM, proxy.agent) \
	F(struct dat12_v2_cno_param, DAT_CNO_PARAM, proxy.fd) \
	F(struct dat12_v2_ia_attr, DAT_IA_ATTR, adapter_name) \
	F(struct dat12_v2_ia_attr, DAT_IA_ATTR, vendor_name) \
	F(struct dat12_v2_ia_attr, DAT_IA_ATTR, hardware_version_major) \
	F(struct dat12_v2_ia_attr, DAT_IA_ATTR, hardware_version_minor) \
	F(struct dat12_v2_ia_attr, DAT_IA_ATTR, firmware_version_major) \
	F(struct dat12_v2_ia_attr, DAT_IA_ATTR, firmware_version_minor) \
	F(struct dat12_v2_ia_attr, DAT_IA_ATTR, ia_address_ptr) \
	F(struct dat12_v2_ia_attr, DAT_IA_ATTR, max_eps) \
	F(struct dat12_v2_ia_attr, DAT_IA_ATTR, max_dto_per_ep) \
	F(struct dat12_v2_ia_attr, DAT_IA_ATTR, max_rdma_read_per_ep_in) \
	F(struct dat12_v2_ia_attr, DAT_IA_ATTR, max_rdma_read_per_ep_out) \
	F(struct dat12_v2_ia_attr, DAT_IA_ATTR, max_evds) \
	F(struct dat12_v2_ia_attr, DAT_IA_ATTR, max_evd_qlen) \
	F(struct dat12_v2_ia_attr, DAT_IA_ATTR, max_iov_segments_per_dto) \
	F(struct dat12_v2_ia_attr, DAT_IA_ATTR, max_lmrs) \
	F(struct dat12_v2_ia_attr, DAT_IA_ATTR, max_lmr_block_size) \
	F(struct dat12_v2_ia_attr, DAT_IA_ATTR, max_lmr_virtual_address) \
	F(struct dat12_v2_ia_attr, DAT_IA_ATTR, max_pzs) \
	F(struct dat12_v2_ia_attr, DAT_IA_ATTR, max_message_size) \
	F(struct dat12_v2_ia_attr, DAT_IA_ATTR, max_rdma_size) \
	F(struct dat12_v2_ia_attr, DAT_IA_ATTR, max_rmrs) \
	F(struct dat12_v2_ia_attr, DAT_IA_ATTR, max_rmr_target_address) \
	F(struct dat12_v2_ia_attr, DAT_IA_ATTR, max_srqs) \
	F(struct dat12_v2_ia_attr, DAT_IA_ATTR, max_ep_per_srq) \
	F(struct dat12_v2_ia_attr, DAT_IA_ATTR, max_recv_per_srq) \
	F(struct dat12_v2_ia_attr, DAT_IA_ATTR, max_iov_segments_per_rdma_read) \
	F(struct dat12_v2_ia_attr, DAT_IA_ATTR, max_iov_segments_per_rdma_write) \
	F(struct dat12_v2_ia_attr, DAT_IA_ATTR, max_rdma_read_in) \
	F(struct dat12_v2_ia_attr, DAT_IA_ATTR, max_rdma_read_out) \
	F(struct dat12_v2_ia_attr, DAT_IA_ATTR, max_rdma_read_per_ep_in_guaranteed) \
	F(struct dat12_v2_ia_attr, DAT_IA_ATTR, max_rdma_read_per_ep_out_guaranteed) \
	F(struct dat12_v2_ia_attr, DAT_IA_ATTR, zb_supported) \
	F(struct dat12_v2_ia_attr, DAT_IA_ATTR, extension_supported) \
	F(struct dat12_v2_ia_attr, DAT_IA_ATTR, extension_version) \
	F(struct dat12_v2_ia_attr, DAT_IA_ATTR, num_transport_attr) \
	F(struct dat12_v2_ia_attr, DAT_IA_ATTR, transport_attr) \
	F(struct dat12_v2_ia_attr, DAT_IA_ATTR, num_vendor_attr) \
	F(struct dat12_v2_ia_attr, DAT_IA_ATTR, vendor_attr) \
	F(struct dat12_v2_provider_attr, DAT_PROVIDER_ATTR, provider_name) \
	F(struct dat12_v2_provider_attr, DAT_PROVIDER_ATTR, provider_version_major) \
	F(struct dat12_v2_provider_attr, DAT_PROVIDER_ATTR, provider_version_minor) \
	F(struct dat12_v2_provider_attr, DAT_PROVIDER_ATTR, dapl_version_major) \
	F(struct dat12_v2_provider_attr, DAT_PROVIDER_ATTR, dapl_version_minor) \
	F(struct dat12_v2_provider_attr, DAT_PROVIDER_ATTR, lmr_mem_types_supported) \
	F(struct dat12_v2_provider_attr, DAT_PROVIDER_ATTR, iov_ownership_on_return) \
	F(struct dat12_v2_provider_attr, DAT_PROVIDER_ATTR, dat_qos_supported) \
	F(struct dat12_v2_provider_attr, DAT_PROVIDER_ATTR, completion_flags_supported) \
	F(struct dat12_v2_provider_attr, DAT_PROVIDER_ATTR, is_thread_safe) \
	F(struct dat12_v2_provider_attr, DAT_PROVIDER_ATTR, max_private_data_size) \
	F(struct dat12_v2_provider_attr, DAT_PROVIDER_ATTR, supports_multipath) \
	F(struct dat12_v2_provider_attr, DAT_PROVIDER_ATTR, ep_creator) \
	F(struct dat12_v2_provider_attr, DAT_PROVIDER_ATTR, pz_support) \
	F(struct dat12_v2_provider_attr, DAT_PROVIDER_ATTR, optimal_buffer_alignment) \
	F(struct dat12_v2_provider_attr, DAT_PROVIDER_ATTR, evd_stream_merging_supported) \
	F(struct dat12_v2_provider_attr, DAT_PROVIDER_ATTR, srq_supported) \
	F(struct dat12_v2_provider_attr, DAT_PROVIDER_ATTR, srq_watermarks_supported) \
	F(struct dat12_v2_provider_attr, DAT_PROVIDER_ATTR, srq_ep_pz_difference_supported) \
	F(struct dat12_v2_provider_attr, DAT_PROVIDER_ATTR, srq_info_supported) \
	F(struct dat12_v2_provider_attr, DAT_PROVIDER_ATTR, ep_recv_info_supported) \
	F(struct dat12_v2_provider_attr, DAT_PROVIDER_ATTR, lmr_sync_req) \
	F(struct dat12_v2_provider_attr, DAT_PROVIDER_ATTR, dto_async_return_guaranteed) \
	F(struct dat12_v2_provider_attr, DAT_PROVIDER_ATTR, rdma_write_for_rdma_read_req) \
	F(struct dat12_v2_provider_attr, DAT_PROVIDER_ATTR, rdma_read_lmr_rmr_context_exposure) \
	F(struct dat12_v2_provider_attr, DAT_PROVIDER_ATTR, rmr_scope_supported) \
	F(struct dat12_v2_provider_attr, DAT_PROVIDER_ATTR, is_signal_safe) \
	F(struct dat12_v2_provider_attr, DAT_PROVIDER_ATTR, ha_supported) \
	F(struct dat12_v2_provider_attr, DAT_PROVIDER_ATTR, ha_loadbalancing) \
	F(struct dat12_v2_provider_attr, DAT_PROVIDER_ATTR, num_provider_specific_attr) \
	F(struct dat12_v2_provider_attr, DAT_PROVIDER_ATTR, provider_specific_attr) \
	F(struct dat12_v2_dto_completion_event_data, DAT_DTO_COMPLETION_EVENT_DATA, ep_handle) \
	F(struct dat12_v2_dto_completion_event_data, DAT_DTO_COMPLETION_EVENT_DATA, user_cookie) \
	F(struct dat12_v2_dto_completion_event_data, DAT_DTO_COMPLETION_EVENT_DATA, status) \
	F(struct dat12_v2_dto_completion_event_data, DAT_DTO_COMPLETION_EVENT_DATA, transfered_length) \
	F(struct dat12_v2_dto_completion_event_data, DAT_DTO_COMPLETION_EVENT_DATA, operation) \
	F(struct dat12_v2_dto_completion_event_data, DAT_DTO_COMPLETION_EVENT_DATA, rmr_context) \
	F(struct dat12_v2_cr_arrival_event_data, DAT_CR_ARRIVAL_EVENT_DATA, sp_handle) \
	F(struct dat12_v2_cr_arrival_event_data, DAT_CR_ARRIVAL_EVENT_DATA, local_ia_address_ptr) \
	F(struct dat12_v2_cr_arrival_event_data, DAT_CR_ARRIVAL_EVENT_DATA, conn_qual) \
	F(struct dat12_v2_cr_arrival_event_data, DAT_CR_ARRIVAL_EVENT_DATA, cr_handle) \
	F(struct dat12_v2_cr_arrival_event_data, DAT_CR_ARRIVAL_EVENT_DATA, truncate_flag) \
	F(struct dat12_v2_asynch_error_event_data, DAT_ASYNCH_ERROR_EVENT_DATA, dat_handle) \
	F(struct dat12_v2_asynch_error_event_data, DAT_ASYNCH_ERROR_EVENT_DATA, reason) \
	F(union dat12_v2_event_data, DAT_EVENT_DATA, dto_completion_event_data) \
	F(union dat12_v2_event_data, DAT_EVENT_DATA, rmr_completion_event_data) \
	F(union dat12_v2_event_data, DAT_EVENT_DATA, cr_arrival_event_data) \
	F(union dat12_v2_event_data, DAT_EVENT_DATA, connect_event_data) \
	F(union dat12_v2_event_data, DAT_EVENT_DATA, asynch_error_event_data) \
	F(union dat12_v2_event_data, DAT_EVENT_DATA, software_event_data) \
	F(struct dat12_v2_event, DAT_EVENT, event_number) \
	F(struct dat12_v2_event, DAT_EVENT, evd_handle) \
	F(struct dat12_v2_event, DAT_EVENT, event_data) \
	F(struct dat12_v2_event, DAT_EVENT, event_extension_data)
/* clang-format on */

#endif /* DAT12_TEST_LAYOUT_H */
