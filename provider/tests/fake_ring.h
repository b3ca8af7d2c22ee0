/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Rings in plain memory for the provider's unit tests, and a hand for the
 * kernel's side of them (consuming WQEs, producing CQEs, setting flags).
 */
#ifndef SROCE_PROVIDER_TESTS_FAKE_RING_H
#define SROCE_PROVIDER_TESTS_FAKE_RING_H

#include "datapath.h"

#include <cstdint>
#include <cstring>
#include <vector>

namespace sroce_test
{

class FakeRing
{
      public:
	FakeRing(uint32_t num_entries, uint32_t stride)
	    : mem_((SROCE_RING_HDR_SIZE + size_t(num_entries) * stride + 7) / 8, 0),
	      num_entries_(num_entries), stride_(stride)
	{
	}

	sroce::Ring view()
	{
		sroce::Ring r;

		r.hdr = hdr();
		r.num_entries = num_entries_;
		r.stride = stride_;
		return r;
	}

	sroce_ring_hdr *hdr() { return reinterpret_cast<sroce_ring_hdr *>(mem_.data()); }
	void *entry(uint32_t idx) { return sroce_ring_entry(hdr(), idx, num_entries_, stride_); }

	/* The kernel's hand: indices and flags as the kernel would write them. */
	void set_prod(uint32_t v) { hdr()->prod = v; }
	void set_cons(uint32_t v) { hdr()->cons = v; }
	void set_kflags(uint32_t v) { hdr()->kflags = v; }
	uint32_t prod() { return hdr()->prod; }
	uint32_t cons() { return hdr()->cons; }
	uint32_t uflags() { return hdr()->uflags; }

	/* Starts both indices at @idx (to test wrap-around). */
	void start_at(uint32_t idx)
	{
		hdr()->prod = idx;
		hdr()->cons = idx;
	}

      private:
	std::vector<uint64_t> mem_;
	uint32_t num_entries_;
	uint32_t stride_;
};

/* A WorkQueue over a FakeRing, as create_qp would set it up. */
inline void attach(sroce::WorkQueue &wq, FakeRing &ring, uint32_t max_sge, uint32_t max_inline)
{
	wq.pr.ring = ring.view();
	wq.pr.sync_from_ring();
	wq.max_sge = max_sge;
	wq.max_inline = max_inline;
}

inline void attach(sroce::Cq &cq, FakeRing &ring)
{
	cq.cq.ring = ring.view();
	cq.cq.sync_from_ring();
}

inline sroce_send_wqe *send_wqe(FakeRing &ring, uint32_t idx)
{
	return static_cast<sroce_send_wqe *>(ring.entry(idx));
}

inline sroce_recv_wqe *recv_wqe(FakeRing &ring, uint32_t idx)
{
	return static_cast<sroce_recv_wqe *>(ring.entry(idx));
}

} /* namespace sroce_test */

#endif /* SROCE_PROVIDER_TESTS_FAKE_RING_H */
