/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * The private provider interface of libibverbs 44 (symbol version
 * IBVERBS_PRIVATE_34), declared by hand because Debian ships no
 * infiniband/driver.h.
 *
 * Everything here is an ABI fact of the libibverbs.so.1 installed on Debian
 * bookworm (rdma-core 44.0): member order, types and the prototypes of the
 * exported helpers. Every size and offset is pinned by the static_asserts at
 * the end of this file (values from the layout probe in
 * shared/reference/libibverbs-44-layout.txt). A newer rdma-core inserts
 * verbs_context_ops members alphabetically, so a newer driver.h does NOT
 * describe this ABI: change nothing here without re-probing.
 */
#ifndef SROCE_VERBS_PRIVATE_H
#define SROCE_VERBS_PRIVATE_H

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <sys/types.h>
#include <time.h>

#include <cstddef>
#include <cstdint>

extern "C" {

/* ---- Device discovery and registration -------------------------------- */

/* ccan's struct list_node: libibverbs links devices and drivers with it. */
struct verbs_list_node {
	verbs_list_node *next;
	verbs_list_node *prev;
};

enum {
	VERBS_MATCH_SENTINEL = 0,
	VERBS_MATCH_PCI = 1,
	VERBS_MATCH_MODALIAS = 2,
	VERBS_MATCH_DRIVER_ID = 3,
};

struct verbs_match_ent {
	void *driver_data;
	union {
		const char *modalias;
		uint64_t driver_id;
	} u;
	uint16_t vendor;
	uint16_t device;
	uint8_t kind;
};

/* What libibverbs learnt about one uverbs device from sysfs and netlink. */
struct verbs_sysfs_dev {
	verbs_list_node entry;
	void *provider_data;
	const verbs_match_ent *match;
	unsigned int flags;
	char sysfs_name[IBV_SYSFS_NAME_MAX];
	dev_t sysfs_cdev;
	char ibdev_name[IBV_SYSFS_NAME_MAX];
	char ibdev_path[IBV_SYSFS_PATH_MAX];
	char modalias[512];
	uint64_t node_guid;
	uint32_t driver_id;
	enum ibv_node_type node_type;
	int ibdev_idx;
	uint32_t num_ports;
	uint32_t abi_ver; /* the kernel driver's uverbs_abi_ver */
	struct timespec time_created;
};

struct verbs_device;

struct verbs_device_ops {
	const char *name;
	uint32_t match_min_abi_version;
	uint32_t match_max_abi_version;
	/* Must not be NULL: libibverbs walks it without a check. */
	const verbs_match_ent *match_table;
	const verbs_device_ops **static_providers;
	/* If set, called after the table match and decides alone. */
	bool (*match_device)(verbs_sysfs_dev *sysfs_dev);
	verbs_context *(*alloc_context)(ibv_device *device, int cmd_fd, void *private_data);
	verbs_context *(*import_context)(ibv_device *device, int cmd_fd);
	verbs_device *(*alloc_device)(verbs_sysfs_dev *sysfs_dev);
	void (*uninit_device)(verbs_device *device);
};

struct verbs_device {
	ibv_device device; /* first: libibverbs converts by cast */
	const verbs_device_ops *ops;
	int refcount; /* atomic_int in C; only libibverbs touches it */
	verbs_list_node entry;
	verbs_sysfs_dev *sysfs;
	uint64_t core_support;
};

/* ---- Objects the core shares with providers ------------------------- */

struct verbs_xrcd {
	ibv_xrcd xrcd;
	uint32_t comp_mask;
	uint32_t handle;
};

struct verbs_srq {
	ibv_srq srq;
	enum ibv_srq_type srq_type;
	verbs_xrcd *xrcd;
	ibv_cq *cq;
	uint32_t srq_num;
};

enum {
	VERBS_QP_XRCD = 1 << 0,
	VERBS_QP_EX = 1 << 1,
};

struct verbs_qp {
	union {
		ibv_qp qp;
		ibv_qp_ex qp_ex;
	};
	uint32_t comp_mask;
	verbs_xrcd *xrcd;
};

struct verbs_cq {
	union {
		ibv_cq cq;
		ibv_cq_ex cq_ex;
	};
};

enum verbs_mr_type {
	VERBS_MR_TYPE_MR,
	VERBS_MR_TYPE_NULL_MR,
	VERBS_MR_TYPE_IMPORTED_MR,
	VERBS_MR_TYPE_DMABUF_MR,
};

/* Device memory: the core's handle next to the public object. */
struct verbs_dm {
	ibv_dm dm;
	uint32_t handle;
};

struct verbs_mr {
	struct ibv_mr ibv_mr;
	enum verbs_mr_type mr_type;
	int access;
};

/* ---- The provider's operations: 76 pointers, this order is the ABI ---- */

struct verbs_context_ops {
	int (*advise_mr)(ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags,
	                 ibv_sge *sg_list, uint32_t num_sges);
	ibv_dm *(*alloc_dm)(ibv_context *context, ibv_alloc_dm_attr *attr);
	ibv_mw *(*alloc_mw)(ibv_pd *pd, enum ibv_mw_type type);
	ibv_mr *(*alloc_null_mr)(ibv_pd *pd);
	ibv_pd *(*alloc_parent_domain)(ibv_context *context, ibv_parent_domain_init_attr *attr);
	ibv_pd *(*alloc_pd)(ibv_context *context);
	ibv_td *(*alloc_td)(ibv_context *context, ibv_td_init_attr *init_attr);
	void (*async_event)(ibv_context *context, ibv_async_event *event);
	int (*attach_counters_point_flow)(ibv_counters *counters, ibv_counter_attach_attr *attr,
	                                  ibv_flow *flow);
	int (*attach_mcast)(ibv_qp *qp, const ibv_gid *gid, uint16_t lid);
	int (*bind_mw)(ibv_qp *qp, ibv_mw *mw, ibv_mw_bind *mw_bind);
	int (*close_xrcd)(ibv_xrcd *xrcd);
	void (*cq_event)(ibv_cq *cq);
	ibv_ah *(*create_ah)(ibv_pd *pd, ibv_ah_attr *attr);
	ibv_counters *(*create_counters)(ibv_context *context, ibv_counters_init_attr *init_attr);
	ibv_cq *(*create_cq)(ibv_context *context, int cqe, ibv_comp_channel *channel,
	                     int comp_vector);
	ibv_cq_ex *(*create_cq_ex)(ibv_context *context, ibv_cq_init_attr_ex *init_attr);
	ibv_flow *(*create_flow)(ibv_qp *qp, ibv_flow_attr *flow_attr);
	ibv_flow_action *(*create_flow_action_esp)(ibv_context *context,
	                                           ibv_flow_action_esp_attr *attr);
	ibv_qp *(*create_qp)(ibv_pd *pd, ibv_qp_init_attr *attr);
	ibv_qp *(*create_qp_ex)(ibv_context *context, ibv_qp_init_attr_ex *qp_init_attr_ex);
	ibv_rwq_ind_table *(*create_rwq_ind_table)(ibv_context *context,
	                                           ibv_rwq_ind_table_init_attr *init_attr);
	ibv_srq *(*create_srq)(ibv_pd *pd, ibv_srq_init_attr *srq_init_attr);
	ibv_srq *(*create_srq_ex)(ibv_context *context, ibv_srq_init_attr_ex *srq_init_attr_ex);
	ibv_wq *(*create_wq)(ibv_context *context, ibv_wq_init_attr *wq_init_attr);
	int (*dealloc_mw)(ibv_mw *mw);
	int (*dealloc_pd)(ibv_pd *pd);
	int (*dealloc_td)(ibv_td *td);
	int (*dereg_mr)(verbs_mr *vmr);
	int (*destroy_ah)(ibv_ah *ah);
	int (*destroy_counters)(ibv_counters *counters);
	int (*destroy_cq)(ibv_cq *cq);
	int (*destroy_flow)(ibv_flow *flow);
	int (*destroy_flow_action)(ibv_flow_action *action);
	int (*destroy_qp)(ibv_qp *qp);
	int (*destroy_rwq_ind_table)(ibv_rwq_ind_table *rwq_ind_table);
	int (*destroy_srq)(ibv_srq *srq);
	int (*destroy_wq)(ibv_wq *wq);
	int (*detach_mcast)(ibv_qp *qp, const ibv_gid *gid, uint16_t lid);
	void (*free_context)(ibv_context *context);
	int (*free_dm)(ibv_dm *dm);
	int (*get_srq_num)(ibv_srq *srq, uint32_t *srq_num);
	ibv_dm *(*import_dm)(ibv_context *context, uint32_t dm_handle);
	ibv_mr *(*import_mr)(ibv_pd *pd, uint32_t mr_handle);
	ibv_pd *(*import_pd)(ibv_context *context, uint32_t pd_handle);
	int (*modify_cq)(ibv_cq *cq, ibv_modify_cq_attr *attr);
	int (*modify_flow_action_esp)(ibv_flow_action *action, ibv_flow_action_esp_attr *attr);
	int (*modify_qp)(ibv_qp *qp, ibv_qp_attr *attr, int attr_mask);
	int (*modify_qp_rate_limit)(ibv_qp *qp, ibv_qp_rate_limit_attr *attr);
	int (*modify_srq)(ibv_srq *srq, ibv_srq_attr *srq_attr, int srq_attr_mask);
	int (*modify_wq)(ibv_wq *wq, ibv_wq_attr *wq_attr);
	ibv_qp *(*open_qp)(ibv_context *context, ibv_qp_open_attr *attr);
	ibv_xrcd *(*open_xrcd)(ibv_context *context, ibv_xrcd_init_attr *xrcd_init_attr);
	int (*poll_cq)(ibv_cq *cq, int num_entries, ibv_wc *wc);
	int (*post_recv)(ibv_qp *qp, ibv_recv_wr *wr, ibv_recv_wr **bad_wr);
	int (*post_send)(ibv_qp *qp, ibv_send_wr *wr, ibv_send_wr **bad_wr);
	int (*post_srq_ops)(ibv_srq *srq, ibv_ops_wr *op, ibv_ops_wr **bad_op);
	int (*post_srq_recv)(ibv_srq *srq, ibv_recv_wr *recv_wr, ibv_recv_wr **bad_recv_wr);
	int (*query_device_ex)(ibv_context *context, const ibv_query_device_ex_input *input,
	                       ibv_device_attr_ex *attr, size_t attr_size);
	int (*query_ece)(ibv_qp *qp, ibv_ece *ece);
	int (*query_port)(ibv_context *context, uint8_t port_num, ibv_port_attr *port_attr);
	int (*query_qp)(ibv_qp *qp, ibv_qp_attr *attr, int attr_mask, ibv_qp_init_attr *init_attr);
	int (*query_qp_data_in_order)(ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags);
	int (*query_rt_values)(ibv_context *context, ibv_values_ex *values);
	int (*query_srq)(ibv_srq *srq, ibv_srq_attr *srq_attr);
	int (*read_counters)(ibv_counters *counters, uint64_t *counters_value, uint32_t ncounters,
	                     uint32_t flags);
	ibv_mr *(*reg_dm_mr)(ibv_pd *pd, ibv_dm *dm, uint64_t dm_offset, size_t length,
	                     unsigned int access);
	ibv_mr *(*reg_dmabuf_mr)(ibv_pd *pd, uint64_t offset, size_t length, uint64_t iova, int fd,
	                         int access);
	ibv_mr *(*reg_mr)(ibv_pd *pd, void *addr, size_t length, uint64_t hca_va, int access);
	int (*req_notify_cq)(ibv_cq *cq, int solicited_only);
	int (*rereg_mr)(verbs_mr *vmr, int flags, ibv_pd *pd, void *addr, size_t length,
	                int access);
	int (*resize_cq)(ibv_cq *cq, int cqe);
	int (*set_ece)(ibv_qp *qp, ibv_ece *ece);
	void (*unimport_dm)(ibv_dm *dm);
	void (*unimport_mr)(ibv_mr *mr);
	void (*unimport_pd)(ibv_pd *pd);
};

/*
 * ---- Command buffers: header + the kernel's struct; udata follows ----
 *
 * Their tags are also the names of libibverbs functions (ibv_alloc_pd(),
 * ibv_query_port() ...), which hide them in C++: always write struct ibv_X.
 */

struct ex_hdr {
	ib_uverbs_cmd_hdr hdr;
	ib_uverbs_ex_cmd_hdr ex_hdr;
};

struct ibv_get_context {
	ib_uverbs_cmd_hdr hdr;
	ib_uverbs_get_context core_payload;
};

struct ibv_query_port {
	ib_uverbs_cmd_hdr hdr;
	ib_uverbs_query_port core_payload;
};

struct ibv_open_xrcd {
	ib_uverbs_cmd_hdr hdr;
	ib_uverbs_open_xrcd core_payload;
};

struct ibv_open_qp {
	ib_uverbs_cmd_hdr hdr;
	ib_uverbs_open_qp core_payload;
};

struct ibv_alloc_pd {
	ib_uverbs_cmd_hdr hdr;
	ib_uverbs_alloc_pd core_payload;
};

struct ibv_reg_mr {
	ib_uverbs_cmd_hdr hdr;
	ib_uverbs_reg_mr core_payload;
};

struct ibv_rereg_mr {
	ib_uverbs_cmd_hdr hdr;
	ib_uverbs_rereg_mr core_payload;
};

struct ibv_alloc_mw {
	ib_uverbs_cmd_hdr hdr;
	ib_uverbs_alloc_mw core_payload;
};

struct ibv_create_cq {
	ib_uverbs_cmd_hdr hdr;
	ib_uverbs_create_cq core_payload;
};

struct ibv_create_cq_ex {
	ex_hdr hdr;
	ib_uverbs_ex_create_cq core_payload;
};

struct ibv_resize_cq {
	ib_uverbs_cmd_hdr hdr;
	ib_uverbs_resize_cq core_payload;
};

struct ibv_create_qp {
	ib_uverbs_cmd_hdr hdr;
	ib_uverbs_create_qp core_payload;
};

struct ibv_create_qp_ex {
	ex_hdr hdr;
	ib_uverbs_ex_create_qp core_payload;
};

struct ibv_modify_qp {
	ib_uverbs_cmd_hdr hdr;
	ib_uverbs_modify_qp core_payload;
};

struct ibv_query_qp {
	ib_uverbs_cmd_hdr hdr;
	ib_uverbs_query_qp core_payload;
};

struct ibv_create_srq {
	ib_uverbs_cmd_hdr hdr;
	ib_uverbs_create_srq core_payload;
};

struct ibv_create_xsrq {
	ib_uverbs_cmd_hdr hdr;
	ib_uverbs_create_xsrq core_payload;
};

struct ibv_modify_srq {
	ib_uverbs_cmd_hdr hdr;
	ib_uverbs_modify_srq core_payload;
};

struct ibv_query_srq {
	ib_uverbs_cmd_hdr hdr;
	ib_uverbs_query_srq core_payload;
};

struct ibv_post_send {
	ib_uverbs_cmd_hdr hdr;
	ib_uverbs_post_send core_payload;
};

struct ibv_post_recv {
	ib_uverbs_cmd_hdr hdr;
	ib_uverbs_post_recv core_payload;
};

/* ---- Exported helpers (IBVERBS_PRIVATE_34); ibv_cmd_* return 0 or errno */

enum {
	VERBS_LOG_LEVEL_NONE,
	VERBS_LOG_ERR,
	VERBS_LOG_WARN,
	VERBS_LOG_INFO,
	VERBS_LOG_DEBUG,
};

void __verbs_log(verbs_context *ctx, uint32_t level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

void verbs_register_driver_34(const verbs_device_ops *ops);

void *_verbs_init_and_alloc_context(ibv_device *device, int cmd_fd, size_t alloc_size,
                                    verbs_context *context_offset, uint32_t driver_id);
void verbs_uninit_context(verbs_context *context);
void verbs_set_ops(verbs_context *vctx, const verbs_context_ops *ops);

int ibv_cmd_get_context(verbs_context *context, struct ibv_get_context *cmd, size_t cmd_size,
                        ib_uverbs_get_context_resp *resp, size_t resp_size);
int ibv_cmd_query_device_any(ibv_context *context, const ibv_query_device_ex_input *input,
                             ibv_device_attr_ex *attr, size_t attr_size,
                             ib_uverbs_ex_query_device_resp *resp, size_t *resp_size);
int ibv_cmd_query_port(ibv_context *context, uint8_t port_num, ibv_port_attr *port_attr,
                       struct ibv_query_port *cmd, size_t cmd_size);

int ibv_cmd_alloc_pd(ibv_context *context, ibv_pd *pd, struct ibv_alloc_pd *cmd, size_t cmd_size,
                     ib_uverbs_alloc_pd_resp *resp, size_t resp_size);
int ibv_cmd_dealloc_pd(ibv_pd *pd);
int ibv_cmd_reg_mr(ibv_pd *pd, void *addr, size_t length, uint64_t hca_va, int access,
                   verbs_mr *vmr, struct ibv_reg_mr *cmd, size_t cmd_size,
                   ib_uverbs_reg_mr_resp *resp, size_t resp_size);
int ibv_cmd_rereg_mr(verbs_mr *vmr, uint32_t flags, void *addr, size_t length, uint64_t hca_va,
                     int access, ibv_pd *pd, struct ibv_rereg_mr *cmd, size_t cmd_sz,
                     ib_uverbs_rereg_mr_resp *resp, size_t resp_sz);
int ibv_cmd_dereg_mr(verbs_mr *vmr);
int ibv_cmd_open_xrcd(ibv_context *context, verbs_xrcd *xrcd, int vxrcd_size,
                      ibv_xrcd_init_attr *attr, struct ibv_open_xrcd *cmd, size_t cmd_size,
                      ib_uverbs_open_xrcd_resp *resp, size_t resp_size);
int ibv_cmd_close_xrcd(verbs_xrcd *xrcd);
int ibv_cmd_open_qp(ibv_context *context, verbs_qp *qp, int vqp_sz, ibv_qp_open_attr *attr,
                    struct ibv_open_qp *cmd, size_t cmd_size, ib_uverbs_create_qp_resp *resp,
                    size_t resp_size);
int ibv_cmd_advise_mr(ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags,
                      ibv_sge *sg_list, uint32_t num_sge);
/* @link: driver attributes chained to the command; we pass none. */
struct ibv_command_buffer;
int ibv_cmd_free_dm(verbs_dm *dm);
int ibv_cmd_reg_dm_mr(ibv_pd *pd, verbs_dm *dm, uint64_t offset, size_t length, unsigned int access,
                      verbs_mr *vmr, ibv_command_buffer *link);
int ibv_cmd_alloc_mw(ibv_pd *pd, enum ibv_mw_type type, ibv_mw *mw, struct ibv_alloc_mw *cmd,
                     size_t cmd_size, ib_uverbs_alloc_mw_resp *resp, size_t resp_size);
int ibv_cmd_dealloc_mw(ibv_mw *mw);

int ibv_cmd_create_cq(ibv_context *context, int cqe, ibv_comp_channel *channel, int comp_vector,
                      ibv_cq *cq, struct ibv_create_cq *cmd, size_t cmd_size,
                      ib_uverbs_create_cq_resp *resp, size_t resp_size);
int ibv_cmd_create_cq_ex(ibv_context *context, const ibv_cq_init_attr_ex *cq_attr, verbs_cq *cq,
                         struct ibv_create_cq_ex *cmd, size_t cmd_size,
                         ib_uverbs_ex_create_cq_resp *resp, size_t resp_size, uint32_t cmd_flags);
int ibv_cmd_resize_cq(ibv_cq *cq, int cqe, struct ibv_resize_cq *cmd, size_t cmd_size,
                      ib_uverbs_resize_cq_resp *resp, size_t resp_size);
int ibv_cmd_destroy_cq(ibv_cq *cq);

int ibv_cmd_create_srq(ibv_pd *pd, ibv_srq *srq, ibv_srq_init_attr *attr,
                       struct ibv_create_srq *cmd, size_t cmd_size, ib_uverbs_create_srq_resp *resp,
                       size_t resp_size);
int ibv_cmd_create_srq_ex(ibv_context *context, verbs_srq *srq, ibv_srq_init_attr_ex *attr_ex,
                          struct ibv_create_xsrq *cmd, size_t cmd_size,
                          ib_uverbs_create_srq_resp *resp, size_t resp_size);
int ibv_cmd_modify_srq(ibv_srq *srq, ibv_srq_attr *srq_attr, int srq_attr_mask,
                       struct ibv_modify_srq *cmd, size_t cmd_size);
int ibv_cmd_query_srq(ibv_srq *srq, ibv_srq_attr *srq_attr, struct ibv_query_srq *cmd,
                      size_t cmd_size);
int ibv_cmd_destroy_srq(ibv_srq *srq);

int ibv_cmd_create_qp_ex2(ibv_context *context, verbs_qp *qp, ibv_qp_init_attr_ex *qp_attr,
                          struct ibv_create_qp_ex *cmd, size_t cmd_size,
                          ib_uverbs_ex_create_qp_resp *resp, size_t resp_size);
int ibv_cmd_query_qp(ibv_qp *qp, ibv_qp_attr *qp_attr, int attr_mask,
                     ibv_qp_init_attr *qp_init_attr, struct ibv_query_qp *cmd, size_t cmd_size);
int ibv_cmd_modify_qp(ibv_qp *qp, ibv_qp_attr *attr, int attr_mask, struct ibv_modify_qp *cmd,
                      size_t cmd_size);
int ibv_cmd_destroy_qp(ibv_qp *qp);

int ibv_cmd_create_ah(ibv_pd *pd, ibv_ah *ah, ibv_ah_attr *attr, ib_uverbs_create_ah_resp *resp,
                      size_t resp_size);
int ibv_cmd_destroy_ah(ibv_ah *ah);
int ibv_cmd_attach_mcast(ibv_qp *qp, const ibv_gid *gid, uint16_t lid);
int ibv_cmd_detach_mcast(ibv_qp *qp, const ibv_gid *gid, uint16_t lid);

} /* extern "C" */

/* ---- Layout pins (x86_64, libibverbs-44-layout.txt) -------------------- */

static_assert(sizeof(verbs_device_ops) == 72);
static_assert(offsetof(verbs_device_ops, match_table) == 16);
static_assert(offsetof(verbs_device_ops, match_device) == 32);
static_assert(offsetof(verbs_device_ops, alloc_context) == 40);
static_assert(offsetof(verbs_device_ops, alloc_device) == 56);
static_assert(offsetof(verbs_device_ops, uninit_device) == 64);

static_assert(sizeof(verbs_match_ent) == 24);
static_assert(offsetof(verbs_match_ent, u) == 8);
static_assert(offsetof(verbs_match_ent, vendor) == 16);
static_assert(offsetof(verbs_match_ent, kind) == 20);

static_assert(IBV_SYSFS_NAME_MAX == 64 && IBV_SYSFS_PATH_MAX == 256);
static_assert(RDMA_DRIVER_UNKNOWN == 0 && RDMA_DRIVER_RXE == 14 && RDMA_DRIVER_SIW == 18);
static_assert(sizeof(verbs_sysfs_dev) == 992);
static_assert(offsetof(verbs_sysfs_dev, provider_data) == 16);
static_assert(offsetof(verbs_sysfs_dev, match) == 24);
static_assert(offsetof(verbs_sysfs_dev, sysfs_name) == 36);
static_assert(offsetof(verbs_sysfs_dev, sysfs_cdev) == 104);
static_assert(offsetof(verbs_sysfs_dev, ibdev_name) == 112);
static_assert(offsetof(verbs_sysfs_dev, ibdev_path) == 176);
static_assert(offsetof(verbs_sysfs_dev, modalias) == 432);
static_assert(offsetof(verbs_sysfs_dev, node_guid) == 944);
static_assert(offsetof(verbs_sysfs_dev, driver_id) == 952);
static_assert(offsetof(verbs_sysfs_dev, node_type) == 956);
static_assert(offsetof(verbs_sysfs_dev, ibdev_idx) == 960);
static_assert(offsetof(verbs_sysfs_dev, num_ports) == 964);
static_assert(offsetof(verbs_sysfs_dev, abi_ver) == 968);
static_assert(offsetof(verbs_sysfs_dev, time_created) == 976);

static_assert(sizeof(ibv_device) == 664);
static_assert(sizeof(verbs_device) == 712);
static_assert(offsetof(verbs_device, device) == 0);
static_assert(offsetof(verbs_device, ops) == 664);
static_assert(offsetof(verbs_device, refcount) == 672);
static_assert(offsetof(verbs_device, entry) == 680);
static_assert(offsetof(verbs_device, sysfs) == 696);
static_assert(offsetof(verbs_device, core_support) == 704);

static_assert(sizeof(verbs_context) == 648);
static_assert(offsetof(verbs_context, priv) == 208);
static_assert(offsetof(verbs_context, context) == 320);

static_assert(sizeof(ibv_cq) == 128);
static_assert(sizeof(ibv_cq_ex) == 288);
static_assert(sizeof(verbs_cq) == 288);
static_assert(sizeof(ibv_qp) == 160);
static_assert(sizeof(ibv_qp_ex) == 352);
static_assert(sizeof(verbs_qp) == 368);
static_assert(offsetof(ibv_qp_ex, qp_base) == 0);
static_assert(offsetof(verbs_qp, comp_mask) == 352);
static_assert(offsetof(verbs_qp, xrcd) == 360);
static_assert(sizeof(verbs_mr) == 56);
static_assert(offsetof(verbs_mr, mr_type) == 48);
static_assert(offsetof(verbs_mr, access) == 52);
static_assert(sizeof(verbs_srq) == 160);
static_assert(offsetof(verbs_srq, srq_type) == 128);
static_assert(offsetof(verbs_srq, xrcd) == 136);
static_assert(offsetof(verbs_srq, cq) == 144);
static_assert(offsetof(verbs_srq, srq_num) == 152);
static_assert(sizeof(verbs_xrcd) == 16);

static_assert(sizeof(ib_uverbs_cmd_hdr) == 8);
static_assert(sizeof(ex_hdr) == 24);
static_assert(sizeof(struct ibv_get_context) == 16);
static_assert(sizeof(struct ibv_query_port) == 24);
static_assert(sizeof(struct ibv_alloc_pd) == 16);
static_assert(sizeof(struct ibv_open_xrcd) == 24);
static_assert(sizeof(struct ibv_open_qp) == 40);
static_assert(sizeof(struct ibv_reg_mr) == 48);
static_assert(sizeof(struct ibv_rereg_mr) ==
              sizeof(ib_uverbs_cmd_hdr) + sizeof(ib_uverbs_rereg_mr));
static_assert(sizeof(struct ibv_create_cq) == 40);
static_assert(sizeof(struct ibv_create_cq_ex) == 56);
static_assert(sizeof(struct ibv_resize_cq) == 24);
static_assert(sizeof(struct ibv_create_qp) == 64);
static_assert(sizeof(struct ibv_create_qp_ex) == 88);
static_assert(sizeof(struct ibv_modify_qp) == 120);
static_assert(sizeof(struct ibv_query_qp) == 24);
static_assert(sizeof(struct ibv_create_srq) == 40);
static_assert(sizeof(struct ibv_create_xsrq) == 56);
static_assert(sizeof(struct ibv_modify_srq) == 24);
static_assert(sizeof(struct ibv_query_srq) == 24);
static_assert(sizeof(struct ibv_post_send) == 32);
static_assert(sizeof(struct ibv_post_recv) == 32);
static_assert(sizeof(struct ibv_alloc_mw) == 24);

static_assert(sizeof(ib_uverbs_get_context_resp) == 8);
static_assert(sizeof(ib_uverbs_create_cq_resp) == 8);
static_assert(sizeof(ib_uverbs_ex_create_cq_resp) == 16);
static_assert(sizeof(ib_uverbs_create_qp_resp) == 32);
static_assert(sizeof(ib_uverbs_ex_create_qp_resp) == 40);
static_assert(sizeof(ib_uverbs_create_srq_resp) == 16);
static_assert(sizeof(ib_uverbs_reg_mr_resp) == 12);
static_assert(sizeof(ib_uverbs_alloc_pd_resp) == 4);
static_assert(sizeof(ib_uverbs_create_ah_resp) == 4);
static_assert(sizeof(ib_uverbs_resize_cq_resp) == 8);
static_assert(sizeof(ib_uverbs_ex_query_device_resp) == 304);
static_assert(sizeof(ib_uverbs_post_send_resp) == 4);

static_assert(sizeof(verbs_context_ops) == 76 * sizeof(void *));
static_assert(sizeof(verbs_context_ops) == 608);
static_assert(offsetof(verbs_context_ops, advise_mr) == 0 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, alloc_dm) == 1 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, alloc_mw) == 2 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, alloc_null_mr) == 3 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, alloc_parent_domain) == 4 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, alloc_pd) == 5 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, alloc_td) == 6 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, async_event) == 7 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, attach_counters_point_flow) == 8 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, attach_mcast) == 9 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, bind_mw) == 10 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, close_xrcd) == 11 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, cq_event) == 12 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, create_ah) == 13 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, create_counters) == 14 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, create_cq) == 15 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, create_cq_ex) == 16 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, create_flow) == 17 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, create_flow_action_esp) == 18 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, create_qp) == 19 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, create_qp_ex) == 20 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, create_rwq_ind_table) == 21 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, create_srq) == 22 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, create_srq_ex) == 23 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, create_wq) == 24 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, dealloc_mw) == 25 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, dealloc_pd) == 26 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, dealloc_td) == 27 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, dereg_mr) == 28 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, destroy_ah) == 29 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, destroy_counters) == 30 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, destroy_cq) == 31 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, destroy_flow) == 32 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, destroy_flow_action) == 33 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, destroy_qp) == 34 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, destroy_rwq_ind_table) == 35 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, destroy_srq) == 36 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, destroy_wq) == 37 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, detach_mcast) == 38 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, free_context) == 39 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, free_dm) == 40 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, get_srq_num) == 41 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, import_dm) == 42 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, import_mr) == 43 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, import_pd) == 44 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, modify_cq) == 45 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, modify_flow_action_esp) == 46 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, modify_qp) == 47 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, modify_qp_rate_limit) == 48 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, modify_srq) == 49 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, modify_wq) == 50 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, open_qp) == 51 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, open_xrcd) == 52 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, poll_cq) == 53 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, post_recv) == 54 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, post_send) == 55 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, post_srq_ops) == 56 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, post_srq_recv) == 57 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, query_device_ex) == 58 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, query_ece) == 59 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, query_port) == 60 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, query_qp) == 61 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, query_qp_data_in_order) == 62 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, query_rt_values) == 63 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, query_srq) == 64 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, read_counters) == 65 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, reg_dm_mr) == 66 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, reg_dmabuf_mr) == 67 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, reg_mr) == 68 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, req_notify_cq) == 69 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, rereg_mr) == 70 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, resize_cq) == 71 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, set_ece) == 72 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, unimport_dm) == 73 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, unimport_mr) == 74 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, unimport_pd) == 75 * sizeof(void *));

#endif /* SROCE_VERBS_PRIVATE_H */
