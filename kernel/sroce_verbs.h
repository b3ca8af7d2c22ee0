/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sroce: the verbs, as struct ib_device_ops names them (sroce_main.c);
 * each is defined in the file of its object.
 */
#ifndef SROCE_VERBS_H
#define SROCE_VERBS_H

#include "sroce.h"
#include "sroce_compat.h"

int sroce_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma);
void sroce_mmap_free(struct rdma_user_mmap_entry *rentry);
struct ib_mr *sroce_get_dma_mr(struct ib_pd *pd, int access);
struct ib_mr *sroce_reg_user_mr(struct ib_pd *pd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata);
struct ib_mr *sroce_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				  u64 length, u64 iova, int access,
				  struct ib_pd *pd, struct ib_udata *udata);
struct ib_mr *sroce_alloc_mr(struct ib_pd *pd, enum ib_mr_type type,
			     u32 max_num_sg);
int sroce_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset);
int sroce_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
struct ib_dm *sroce_alloc_dm(struct ib_device *ibdev,
			     struct ib_ucontext *uctx,
			     struct ib_dm_alloc_attr *attr,
			     struct uverbs_attr_bundle *attrs);
int sroce_dealloc_dm(struct ib_dm *ibdm, struct uverbs_attr_bundle *attrs);
struct ib_mr *sroce_reg_dm_mr(struct ib_pd *pd, struct ib_dm *ibdm,
			      struct ib_dm_mr_attr *attr,
			      struct uverbs_attr_bundle *attrs);
extern const struct uapi_definition sroce_uapi_defs[];
int sroce_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int sroce_dealloc_mw(struct ib_mw *ibmw);
int sroce_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    SROCE_CREATE_CQ_ARG *arg);
int sroce_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int sroce_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
int sroce_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);
int sroce_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
int sroce_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata);
int sroce_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata);
int sroce_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int sroce_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int sroce_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr);
int sroce_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata);
int sroce_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata);
int sroce_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init);
int sroce_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
int sroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr);
int sroce_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr);
int sroce_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
int sroce_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);

int sroce_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
		       struct ib_udata *udata);
int sroce_query_port(struct ib_device *ibdev, u32 port,
		     struct ib_port_attr *attr);
int sroce_query_pkey(struct ib_device *ibdev, u32 port, u16 index, u16 *pkey);
int sroce_get_port_immutable(struct ib_device *ibdev, u32 port,
			     struct ib_port_immutable *imm);
enum rdma_link_layer sroce_get_link_layer(struct ib_device *ibdev, u32 port);
struct net_device *sroce_get_netdev(struct ib_device *ibdev, u32 port);
void sroce_get_dev_fw_str(struct ib_device *ibdev, char *str);
int sroce_alloc_ucontext(struct ib_ucontext *uctx, struct ib_udata *udata);
void sroce_dealloc_ucontext(struct ib_ucontext *uctx);
int sroce_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int sroce_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int sroce_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata);
int sroce_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata);
int sroce_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		    struct ib_udata *udata);
int sroce_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr);
int sroce_destroy_ah(struct ib_ah *ibah, u32 flags);
int sroce_av_from_ah_attr(struct sroce_dev *sdev, struct sroce_av *av,
			  const struct rdma_ah_attr *attr);

struct rdma_hw_stats *sroce_alloc_hw_port_stats(struct ib_device *ibdev,
						u32 port);
int sroce_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		       u32 port, int index);
/* sroce_restrack.c: rdma resource show -dd, and debugfs */
struct sroce_detail {
	const char *name;
	u32 val;
};

#define SROCE_QP_DETAILS_MAX	32
struct sroce_qp;
unsigned int sroce_qp_details(struct sroce_qp *qp, struct sroce_detail *v);

/* sroce_debugfs.c */
void sroce_debugfs_init(void);
void sroce_debugfs_exit(void);
void sroce_debugfs_dev_add(struct sroce_dev *sdev);
void sroce_debugfs_dev_del(struct sroce_dev *sdev);

int sroce_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp);
int sroce_fill_res_qp_entry_raw(struct sk_buff *msg, struct ib_qp *ibqp);
int sroce_fill_res_cq_entry_raw(struct sk_buff *msg, struct ib_cq *ibcq);
int sroce_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq);
int sroce_fill_res_mr_entry(struct sk_buff *msg, struct ib_mr *ibmr);
int sroce_fill_res_srq_entry(struct sk_buff *msg, struct ib_srq *ibsrq);
struct rdma_hw_stats *sroce_counter_alloc_stats(struct rdma_counter *counter);
int sroce_counter_bind_qp(struct rdma_counter *counter, struct ib_qp *ibqp);
int sroce_counter_unbind_qp(struct ib_qp *ibqp);
int sroce_counter_dealloc(struct rdma_counter *counter);
int sroce_counter_update_stats(struct rdma_counter *counter);
int sroce_process_mad(struct ib_device *ibdev, int mad_flags, u32 port,
		      const struct ib_wc *in_wc, const struct ib_grh *in_grh,
		      const struct ib_mad *in, struct ib_mad *out,
		      size_t *out_mad_size, u16 *out_mad_pkey_index);
void sroce_counters_cleanup(struct sroce_dev *sdev);

#endif /* SROCE_VERBS_H */
