// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * devinfo: device, port, GID and P_Key queries. The limits checked are the
 * floor sroce promises (at least rxe's): max_qp_wr, 32 SGEs, 32767 CQEs,
 * 128 outstanding RDMA reads/atomics; the exact values are printed as info
 * lines for comparison between devices.
 */
#include "commands.h"
#include "report.h"
#include "verbs_util.h"

#include <cstdio>
#include <cstring>
#include <endian.h>

namespace vc
{

namespace
{

struct DevinfoOptions {
	const char *device = nullptr;
	int want_state = -1; /* IBV_PORT_ACTIVE / IBV_PORT_DOWN, -1: any */
	long want_mtu = 0;   /* bytes, 0: any */
	long min_qp_wr = 16384;
};

void print_device_attr(Report &r, const ibv_device_attr &a)
{
	r.info("fw_ver %s", a.fw_ver);
	r.info("node_guid 0x%016llx sys_image_guid 0x%016llx",
	       (unsigned long long)be64toh(a.node_guid),
	       (unsigned long long)be64toh(a.sys_image_guid));
	r.info("vendor_id 0x%x vendor_part_id %u hw_ver 0x%x", a.vendor_id, a.vendor_part_id,
	       a.hw_ver);
	r.info("max_mr_size 0x%llx page_size_cap 0x%llx", (unsigned long long)a.max_mr_size,
	       (unsigned long long)a.page_size_cap);
	r.info("max_qp %d max_qp_wr %d device_cap_flags 0x%08x", a.max_qp, a.max_qp_wr,
	       a.device_cap_flags);
	r.info("max_sge %d max_sge_rd %d max_cq %d max_cqe %d", a.max_sge, a.max_sge_rd, a.max_cq,
	       a.max_cqe);
	r.info("max_mr %d max_pd %d max_mw %d max_ah %d", a.max_mr, a.max_pd, a.max_mw, a.max_ah);
	r.info("max_qp_rd_atom %d max_qp_init_rd_atom %d max_res_rd_atom %d max_ee_rd_atom %d",
	       a.max_qp_rd_atom, a.max_qp_init_rd_atom, a.max_res_rd_atom, a.max_ee_rd_atom);
	r.info("atomic_cap %d max_srq %d max_srq_wr %d max_srq_sge %d", a.atomic_cap, a.max_srq,
	       a.max_srq_wr, a.max_srq_sge);
	r.info("max_mcast_grp %d max_mcast_qp_attach %d max_total_mcast_qp_attach %d",
	       a.max_mcast_grp, a.max_mcast_qp_attach, a.max_total_mcast_qp_attach);
	r.info("max_pkeys %u local_ca_ack_delay %u phys_port_cnt %u max_fmr %d max_map_per_fmr %d",
	       a.max_pkeys, a.local_ca_ack_delay, a.phys_port_cnt, a.max_fmr, a.max_map_per_fmr);
}

void check_device_attr(Report &r, const ibv_device_attr &a, const DevinfoOptions &opt)
{
	r.check(a.phys_port_cnt == 1, "device.phys_port_cnt", "phys_port_cnt %u (want 1)",
	        a.phys_port_cnt);
	r.check(a.max_qp_wr >= opt.min_qp_wr, "device.max_qp_wr", "max_qp_wr %d (want >= %ld)",
	        a.max_qp_wr, opt.min_qp_wr);
	r.check(a.max_sge >= 32, "device.max_sge", "max_sge %d (want >= 32)", a.max_sge);
	r.check(a.max_cqe >= 32767, "device.max_cqe", "max_cqe %d (want >= 32767)", a.max_cqe);
	r.check(a.max_qp_rd_atom >= 128, "device.max_qp_rd_atom", "max_qp_rd_atom %d (want >= 128)",
	        a.max_qp_rd_atom);
	r.check(a.max_qp_init_rd_atom >= 128, "device.max_qp_init_rd_atom",
	        "max_qp_init_rd_atom %d (want >= 128)", a.max_qp_init_rd_atom);
	r.check(a.max_qp > 0 && a.max_cq > 0 && a.max_mr > 0 && a.max_pd > 0 && a.max_ah > 0,
	        "device.max_objects",
	        "max_qp %d max_cq %d max_mr %d max_pd %d max_ah %d (want > 0)", a.max_qp, a.max_cq,
	        a.max_mr, a.max_pd, a.max_ah);
	r.check(a.max_pkeys >= 1, "device.max_pkeys", "max_pkeys %u (want >= 1)", a.max_pkeys);
	r.check(a.node_guid != 0, "device.node_guid", "node_guid 0x%016llx (want nonzero)",
	        (unsigned long long)be64toh(a.node_guid));
	r.check(a.max_mr_size > 0, "device.max_mr_size", "max_mr_size 0x%llx (want > 0)",
	        (unsigned long long)a.max_mr_size);
}

void check_device_ex(Report &r, ibv_context *ctx, const ibv_device_attr &a)
{
	ibv_device_attr_ex ax{};
	int ret = ibv_query_device_ex(ctx, nullptr, &ax);

	if (!r.expect_ok("query_device_ex", ret, "ibv_query_device_ex"))
		return;
	r.check(std::memcmp(&ax.orig_attr, &a, sizeof(a)) == 0, "query_device_ex.orig_attr",
	        "orig_attr of ibv_query_device_ex equals ibv_query_device's attributes");
	r.info("device_cap_flags_ex 0x%llx odp general_caps 0x%llx completion_timestamp_mask "
	       "0x%llx hca_core_clock %llu",
	       (unsigned long long)ax.device_cap_flags_ex,
	       (unsigned long long)ax.odp_caps.general_caps,
	       (unsigned long long)ax.completion_timestamp_mask,
	       (unsigned long long)ax.hca_core_clock);
	r.info("max_wq_type_rq %u raw_packet_caps 0x%x max_dm_size %llu pci_atomic_caps fetch_add "
	       "0x%x",
	       ax.max_wq_type_rq, ax.raw_packet_caps, (unsigned long long)ax.max_dm_size,
	       ax.pci_atomic_caps.fetch_add);
}

void check_port(Report &r, ibv_context *ctx, const DevinfoOptions &opt, ibv_port_attr *out)
{
	ibv_port_attr &p = *out;
	int ret = ibv_query_port(ctx, 1, &p);

	if (!r.expect_ok("query_port", ret, "ibv_query_port(port 1)"))
		return;
	r.info("port 1: state %s phys_state %u link_layer %u max_mtu %d active_mtu %d",
	       ibv_port_state_str(p.state), p.phys_state, p.link_layer, mtu_bytes(p.max_mtu),
	       mtu_bytes(p.active_mtu));
	r.info("port 1: gid_tbl_len %d pkey_tbl_len %u port_cap_flags 0x%08x port_cap_flags2 "
	       "0x%x max_msg_sz 0x%x",
	       p.gid_tbl_len, p.pkey_tbl_len, p.port_cap_flags, p.port_cap_flags2, p.max_msg_sz);
	r.info("port 1: active_width %u active_speed %u max_vl_num %u lid %u sm_lid %u lmc %u "
	       "bad_pkey_cntr %u qkey_viol_cntr %u subnet_timeout %u",
	       p.active_width, p.active_speed, p.max_vl_num, p.lid, p.sm_lid, p.lmc,
	       p.bad_pkey_cntr, p.qkey_viol_cntr, p.subnet_timeout);

	r.check(p.link_layer == IBV_LINK_LAYER_ETHERNET, "port.link_layer",
	        "link layer %u (want Ethernet, %u)", p.link_layer, IBV_LINK_LAYER_ETHERNET);
	r.check(p.max_mtu == IBV_MTU_4096, "port.max_mtu", "max_mtu %d (want 4096)",
	        mtu_bytes(p.max_mtu));
	r.check(p.active_mtu <= p.max_mtu && mtu_bytes(p.active_mtu) > 0, "port.active_mtu_valid",
	        "active_mtu %d is a valid MTU <= max_mtu", mtu_bytes(p.active_mtu));
	r.check(p.gid_tbl_len > 0, "port.gid_tbl_len", "gid_tbl_len %d (want > 0)", p.gid_tbl_len);
	r.check(p.pkey_tbl_len >= 1, "port.pkey_tbl_len", "pkey_tbl_len %u (want >= 1)",
	        p.pkey_tbl_len);
	if (opt.want_state >= 0) {
		r.check(p.state == opt.want_state, "port.state", "state %s (want %s)",
		        ibv_port_state_str(p.state),
		        ibv_port_state_str(ibv_port_state(opt.want_state)));
		/* IBA 14.2.5.6: 5 LinkUp; down is Polling (2) or Disabled (3). */
		bool up = p.phys_state == 5;
		r.check(up == (opt.want_state == IBV_PORT_ACTIVE), "port.phys_state",
		        "phys_state %u (want %s)", p.phys_state,
		        opt.want_state == IBV_PORT_ACTIVE ? "5, LinkUp" : "not LinkUp");
	}
	if (opt.want_mtu)
		r.check(mtu_bytes(p.active_mtu) == opt.want_mtu, "port.active_mtu",
		        "active_mtu %d (want %ld)", mtu_bytes(p.active_mtu), opt.want_mtu);
}

void check_gids(Report &r, ibv_context *ctx, const ibv_port_attr &p)
{
	int valid = 0, v1 = 0, v2 = 0;
	ibv_gid gid{};
	int ret;

	for (int i = 0; i < p.gid_tbl_len; i++) {
		ibv_gid_entry e{};

		if (ibv_query_gid_ex(ctx, 1, uint32_t(i), &e, 0))
			continue;
		valid++;
		if (e.gid_type == IBV_GID_TYPE_ROCE_V2)
			v2++;
		else
			v1++;
		r.info("gid[%d] %s %s", i, gid_text(e.gid).c_str(),
		       e.gid_type == IBV_GID_TYPE_ROCE_V2 ? "RoCE v2" : "RoCE v1/IB");
	}
	r.info("GIDs: %d valid (%d RoCE v2, %d other)", valid, v2, v1);
	if (p.state != IBV_PORT_ACTIVE)
		return;
	r.check(v2 > 0, "gid.roce_v2", "%d RoCE v2 GIDs on an active port (want >= 1)", v2);
	ret = ibv_query_gid(ctx, 1, 0, &gid);
	if (r.check(ret == 0, "gid.query_index0", "ibv_query_gid(port 1, index 0) returned %d",
	            ret))
		/* The default GID: link-local, from the netdev's MAC (fe80::/64). */
		r.check(gid.raw[0] == 0xfe && gid.raw[1] == 0x80, "gid.default",
		        "GID 0 %s is the link-local default GID", gid_text(gid).c_str());
}

void check_pkey(Report &r, ibv_context *ctx)
{
	__be16 pkey = 0;
	int ret = ibv_query_pkey(ctx, 1, 0, &pkey);

	if (!r.check(ret == 0, "pkey.query", "ibv_query_pkey(port 1, index 0) returned %d", ret))
		return;
	r.check(be16toh(pkey) == 0xffff, "pkey.default", "P_Key[0] 0x%04x (want 0xffff)",
	        be16toh(pkey));
}

} /* namespace */

int cmd_devinfo(int argc, char **argv)
{
	DevinfoOptions opt;
	std::string why;
	Args args;
	Report r("devinfo");
	ibv_device_attr a{};
	ibv_port_attr p{};
	int ret;

	if (!args.parse(argc, argv, {{"state", true}, {"mtu", true}, {"min-qp-wr", true}}, &why))
		return usage_error("devinfo", why);
	if (args.num_positional() != 1)
		return usage_error("devinfo", "want exactly one device name");
	opt.device = args.positional(0);
	if (!args.number("mtu", 0, 256, 4096, &opt.want_mtu, &why) ||
	    !args.number("min-qp-wr", 16384, 1, 1L << 30, &opt.min_qp_wr, &why))
		return usage_error("devinfo", why);
	if (const char *s = args.value("state")) {
		if (!std::strcmp(s, "active"))
			opt.want_state = IBV_PORT_ACTIVE;
		else if (!std::strcmp(s, "down"))
			opt.want_state = IBV_PORT_DOWN;
		else
			return usage_error("devinfo", "--state active or --state down");
	}

	ContextPtr ctx = open_device(opt.device, &why);
	if (!ctx) {
		r.fail("open", "%s", why.c_str());
		return r.finish();
	}
	r.pass("open", "ibv_open_device(%s)", opt.device);
	r.check(ctx->device->node_type == IBV_NODE_CA, "device.node_type", "node type %s (want CA)",
	        ibv_node_type_str(ctx->device->node_type));
	r.check(ctx->device->transport_type == IBV_TRANSPORT_IB, "device.transport",
	        "transport type %d (want IB, %d)", ctx->device->transport_type, IBV_TRANSPORT_IB);

	ret = ibv_query_device(ctx.get(), &a);
	if (r.expect_ok("query_device", ret, "ibv_query_device")) {
		print_device_attr(r, a);
		check_device_attr(r, a, opt);
		check_device_ex(r, ctx.get(), a);
	}
	check_port(r, ctx.get(), opt, &p);
	if (p.gid_tbl_len > 0)
		check_gids(r, ctx.get(), p);
	check_pkey(r, ctx.get());
	return r.finish();
}

} /* namespace vc */
