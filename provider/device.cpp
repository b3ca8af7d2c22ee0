// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libsroce: the rdma-core provider for sroce devices. Registration with
 * libibverbs, device matching and allocation, the per-open context, device
 * and port queries, and the one operations table.
 */
#include "objects.h"
#include "sysfs.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

namespace sroce
{

namespace
{

/* GET_CONTEXT: the kernel describes itself in our udata. */
using AllocContextResp = WithUdata<ib_uverbs_get_context_resp, sroce_alloc_ucontext_resp>;
static_assert(udata_packed<AllocContextResp>());

/* Refuses a kernel whose rings this provider would misread. */
bool caps_compatible(const sroce_alloc_ucontext_resp &caps)
{
	return caps.abi_version == SROCE_UVERBS_ABI_VERSION &&
	       caps.ring_hdr_size == SROCE_RING_HDR_SIZE &&
	       caps.send_wqe_hdr_size == SROCE_SEND_WQE_HDR_SIZE &&
	       caps.recv_wqe_hdr_size == SROCE_RECV_WQE_HDR_SIZE && caps.cqe_size == SROCE_CQE_SIZE;
}

void fill_fw_ver(ibv_context *ibctx, const ib_uverbs_ex_query_device_resp &resp,
                 ibv_device_attr *attr)
{
	char buf[sizeof(attr->fw_ver)];
	const uint64_t raw = resp.base.fw_ver;

	if (sysfs_read(ibctx->device->ibdev_path, "fw_ver", buf, sizeof(buf)) > 0) {
		snprintf(attr->fw_ver, sizeof(attr->fw_ver), "%s", buf);
		return;
	}
	snprintf(attr->fw_ver, sizeof(attr->fw_ver), "%u.%u.%u", unsigned(raw >> 32) & 0xffff,
	         unsigned(raw >> 16) & 0xffff, unsigned(raw) & 0xffff);
}

void free_context(ibv_context *ibctx)
{
	Context *ctx = to_ctx(ibctx);

	verbs_uninit_context(&ctx->vctx);
	zfree(ctx);
}

constexpr verbs_context_ops make_context_ops()
{
	verbs_context_ops ops{};

	ops.advise_mr = ibv_cmd_advise_mr; /* ODP prefetch: the kernel's */
	ops.alloc_dm = alloc_dm;
	ops.alloc_mw = alloc_mw;
	ops.alloc_parent_domain = alloc_parent_domain;
	ops.alloc_pd = alloc_pd;
	ops.alloc_td = alloc_td;
	ops.attach_mcast = ibv_cmd_attach_mcast;
	ops.bind_mw = bind_mw;
	ops.close_xrcd = close_xrcd;
	ops.create_ah = create_ah;
	ops.create_cq = create_cq;
	ops.create_cq_ex = create_cq_ex;
	ops.create_qp = create_qp;
	ops.create_qp_ex = create_qp_ex;
	ops.create_srq = create_srq;
	ops.create_srq_ex = create_srq_ex;
	ops.dealloc_mw = dealloc_mw;
	ops.dealloc_pd = dealloc_pd;
	ops.dealloc_td = dealloc_td;
	ops.dereg_mr = dereg_mr;
	ops.destroy_ah = destroy_ah;
	ops.destroy_cq = destroy_cq;
	ops.destroy_qp = destroy_qp;
	ops.destroy_srq = destroy_srq;
	ops.detach_mcast = ibv_cmd_detach_mcast;
	ops.free_context = free_context;
	ops.free_dm = free_dm;
	ops.get_srq_num = get_srq_num;
	ops.modify_qp = modify_qp;
	ops.modify_srq = modify_srq;
	ops.open_qp = open_qp;
	ops.open_xrcd = open_xrcd;
	ops.poll_cq = poll_cq;
	ops.post_recv = post_recv;
	ops.post_send = post_send;
	ops.post_srq_recv = post_srq_recv;
	ops.query_device_ex = query_device_ex;
	ops.query_port = query_port;
	ops.query_rt_values = query_rt_values;
	ops.query_qp = query_qp;
	ops.query_srq = query_srq;
	ops.reg_dm_mr = reg_dm_mr;
	ops.reg_mr = reg_mr;
	ops.req_notify_cq = req_notify_cq;
	ops.rereg_mr = rereg_mr;
	ops.resize_cq = resize_cq;
	return ops;
}

constexpr verbs_context_ops context_ops = make_context_ops();

static_assert(!context_ops.create_wq && !context_ops.import_dm,
              "not supported: left to libibverbs' EOPNOTSUPP stubs");

verbs_context *alloc_context(ibv_device *ibdev, int cmd_fd, void * /* private_data */)
{
	struct ibv_get_context cmd;
	AllocContextResp resp{};
	Context *ctx;
	int err;

	ctx = static_cast<Context *>(_verbs_init_and_alloc_context(
	    ibdev, cmd_fd, sizeof(Context),
	    reinterpret_cast<verbs_context *>(offsetof(Context, vctx)), RDMA_DRIVER_UNKNOWN));
	if (!ctx)
		return nullptr;
	auto undo = on_scope_exit([ctx] { free_context(&ctx->vctx.context); });

	memset(&cmd, 0, sizeof(cmd));
	err = ibv_cmd_get_context(&ctx->vctx, &cmd, sizeof(cmd), resp.ibv(), resp.size());
	if (err) {
		errno = err;
		return nullptr;
	}
	if (!caps_compatible(resp.drv)) {
		__verbs_log(&ctx->vctx, VERBS_LOG_ERR,
		            "libsroce: %s: kernel ABI %u (ring %u, send %u, recv %u, cqe %u) does "
		            "not match this provider's %u\n",
		            ibdev->name, resp.drv.abi_version, resp.drv.ring_hdr_size,
		            resp.drv.send_wqe_hdr_size, resp.drv.recv_wqe_hdr_size,
		            resp.drv.cqe_size, SROCE_UVERBS_ABI_VERSION);
		errno = EPROTONOSUPPORT;
		return nullptr;
	}
	ctx->caps = resp.drv;
	ctx->page_size = size_t(sysconf(_SC_PAGESIZE));
	verbs_set_ops(&ctx->vctx, &context_ops);
	undo.dismiss();
	return &ctx->vctx;
}

verbs_device *alloc_device(verbs_sysfs_dev * /* sysfs_dev */)
{
	Device *dev = zalloc<Device>();

	return dev ? &dev->vdev : nullptr;
}

void uninit_device(verbs_device *vdev)
{
	zfree(to_dev(&vdev->device));
}

/*
 * An empty match table: sroce has no driver id, PCI id or modalias, so
 * match_device() decides. The table must still exist, because libibverbs
 * walks every provider's table when matching a device by driver id.
 */
constexpr verbs_match_ent match_table[] = {
    {nullptr, {nullptr}, 0, 0, VERBS_MATCH_SENTINEL},
};

constexpr verbs_device_ops make_device_ops()
{
	verbs_device_ops ops{};

	ops.name = "sroce";
	ops.match_min_abi_version = SROCE_UVERBS_ABI_VERSION;
	ops.match_max_abi_version = SROCE_UVERBS_ABI_VERSION;
	ops.match_table = match_table;
	ops.match_device = match_device;
	ops.alloc_context = alloc_context;
	ops.alloc_device = alloc_device;
	ops.uninit_device = uninit_device;
	return ops;
}

constexpr verbs_device_ops device_ops = make_device_ops();

static_assert(device_ops.match_table[0].kind == VERBS_MATCH_SENTINEL);

__attribute__((constructor)) void register_driver()
{
	verbs_register_driver_34(&device_ops);
}

} /* namespace */

int query_device_ex(ibv_context *ibctx, const ibv_query_device_ex_input *input,
                    ibv_device_attr_ex *attr, size_t attr_size)
{
	ib_uverbs_ex_query_device_resp resp{};
	size_t resp_size = sizeof(resp);
	int err;

	err = ibv_cmd_query_device_any(ibctx, input, attr, attr_size, &resp, &resp_size);
	if (err)
		return err;
	fill_fw_ver(ibctx, resp, &attr->orig_attr);
	return 0;
}

int query_port(ibv_context *ibctx, uint8_t port, ibv_port_attr *attr)
{
	struct ibv_query_port cmd;

	memset(&cmd, 0, sizeof(cmd));
	return ibv_cmd_query_port(ibctx, port, attr, &cmd, sizeof(cmd));
}

} /* namespace sroce */
