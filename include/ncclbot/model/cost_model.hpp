#pragma once
// NCCL 2.28's analytic cost model (ncclTopoTuneModel + ncclTopoGetAlgoTime, nccl src/graph/tuning.cc
// at v2.28.9-1, and the cost table's enabling rules of nccl src/enqueue.cc; written out in
// docs/simulator.md "The formulas"). For every arm it gives a latency (us) and an algorithm
// bandwidth (GB/s); the predicted time is lat * latCount + nBytes / (1000 * bw), and AUTO takes the
// argmin with NCCL's tie rule. Arithmetic is in float, as NCCL's is. Header-only, no allocation:
// usable from the CPU engine, CUDA kernels and the tuner plugin.
#include <cstdint>

#include "ncclbot/core/argmin.hpp"
#include "ncclbot/core/arm.hpp"
#include "ncclbot/core/collective.hpp"
#include "ncclbot/core/hd.hpp"
#include "ncclbot/model/topology.hpp"
#include "ncclbot/model/tuning_constants.hpp"

namespace ncclbot::model {

// NCCL's log2i: floor(log2(n)), -1 for n == 0.
NCCLBOT_HD inline int log2_floor(uint64_t n) {
  int l = -1;
  while (n != 0) {
    n >>= 1;
    ++l;
  }
  return l;
}

// Column of the per-scale tables: 1 node, 2 nodes, 3 or more nodes.
NCCLBOT_HD inline int scale_index(int nodes) {
  return nodes <= 2 ? nodes - 1 : 2;
}

// Steps of the ring schedule: 2(n-1) for AllReduce, n-1 for AllGather/ReduceScatter, n otherwise.
NCCLBOT_HD inline int ring_steps(Collective c, int ranks) {
  if (c == Collective::kAllReduce) return 2 * (ranks - 1);
  if (c == Collective::kAllGather || c == Collective::kReduceScatter) return ranks - 1;
  return ranks;
}

NCCLBOT_HD inline bool is_tuned_collective(Collective c) {
  return c == Collective::kBroadcast || c == Collective::kReduce || c == Collective::kAllGather ||
         c == Collective::kReduceScatter || c == Collective::kAllReduce;
}

// LL128 platform gate (docs/simulator.md "The formulas", table and pick): on by default only with
// typeIntra <= NVB, typeInter <= PXN on sm90+ (PXB before) and one compute capability
// (Topology::ll128_path_ok), and sm70 or later, which every GpuArch row is.
NCCLBOT_HD inline bool ll128_enabled(const Topology& t) {
  return t.ll128_path_ok;
}

// Structural enabling rules: which (algo, proto) NCCL puts in the cost table at all (docs/simulator.md,
// the enabling rules and "The formulas"). Arms that pass here can still get bandwidth 0 and so -1.
NCCLBOT_HD inline bool arm_enabled(const Topology& t, Collective c, Algo a, Proto p) {
  if (!is_tuned_collective(c) || int(a) >= kNumNcclAlgos) return false;  // HiPIPE is not NCCL's
  // With one rank the table holds only Ring/Simple (at cost 0).
  if (t.ranks() == 1) return a == Algo::kRing && p == Proto::kSimple;
  if (p == Proto::kLL128 && !ll128_enabled(t)) return false;
  const bool ar = c == Collective::kAllReduce;
  const bool ag_rs = c == Collective::kAllGather || c == Collective::kReduceScatter;
  switch (a) {
    case Algo::kRing:
      return true;
    case Algo::kTree:  // Broadcast/Reduce are ring-only; AllGather/ReduceScatter have no tree
      return ar;
    case Algo::kCollNetDirect:  // Simple only, needs CollNet, an NVSwitch, and a network to reduce in
      return (ar || ag_rs) && p == Proto::kSimple && t.collnet_support && t.nvswitch && t.nodes > 1;
    case Algo::kCollNetChain:
      return ar && p == Proto::kSimple && t.collnet_support && t.nodes > 1;
    case Algo::kNvls:  // Simple only, >= 2 channels and >= 2 GPUs in the NVLink domain; across
                       // nodes NVLS reduces through CollNet
      return (ar || ag_rs) && p == Proto::kSimple && t.nvls_support && t.nvls_channels >= 2 &&
             t.gpus_per_node >= 2 && (t.nodes == 1 || t.collnet_support);
    case Algo::kNvlsTree:  // AllReduce only, off on a single node
      return ar && p == Proto::kSimple && t.nvls_support && t.nvls_channels >= 2 && t.gpus_per_node >= 2 &&
             t.nodes > 1;
    case Algo::kPat:  // AllGather/ReduceScatter, Simple only, 1 GPU per node, a host net device
      return ag_rs && p == Proto::kSimple && t.gpus_per_node == 1 && t.host_net_device;
    case Algo::kHiPipe:  // simulated only; excluded above
      return false;
  }
  return false;
}

NCCLBOT_HD inline GraphBw graph_for(const Topology& t, Algo a) {
  if (a == Algo::kNvls || a == Algo::kNvlsTree) return nvls_graph(t);
  if (a == Algo::kCollNetDirect || a == Algo::kCollNetChain) return collnet_graph(t);
  return ring_graph(t);
}

// Algorithm bandwidth (GB/s) of an enabled arm (docs/simulator.md "The formulas", bandwidth); 0 means
// "not usable" (cost -1).
NCCLBOT_HD inline float arm_alg_bw(const Topology& t, Collective c, Algo a, Proto p) {
  const int cc = int(t.arch);
  const int nodes = t.nodes;
  const int ppn = t.gpus_per_node;
  const int ranks = t.ranks();
  const int scale = scale_index(nodes);
  const GraphBw g = graph_for(t, a);
  const bool collnet = a == Algo::kCollNetDirect || a == Algo::kCollNetChain;
  const int nsteps = ring_steps(c, ranks);

  float bw = (nodes <= 2 || collnet) ? g.bw_intra : g.bw_inter;
  if (a == Algo::kNvls || a == Algo::kNvlsTree) {
    const float share = c == Collective::kAllReduce ? 2.0f : float(ppn - 1) / float(ppn);
    float intra = g.bw_intra * nvls_efficiency(cc) * float(g.channels - 1) / float(g.channels) * share;
    bw = intra < g.bw_inter ? intra : g.bw_inter;
    if (a == Algo::kNvlsTree) {
      const float cap = per_ch_max_nvls_tree_bw(cc, scale);
      if (cap < bw) bw = cap;
    }
  }
  float bus = float(g.channels) * bw;

  const int ll_row = nodes == 1 ? cc : (t.cpu_amd ? 1 : 0);
  const float ll_max = ll_max_bw(ll_row, scale);
  auto fmin = [](float x, float y) { return x < y ? x : y; };
  if (a == Algo::kRing && p == Proto::kLL) bus = fmin(ll_max, bus * 0.5f);
  if (a == Algo::kRing && p == Proto::kLL128)
    bus = fmin(bus * 0.92f, float(g.channels) * per_ch_max_ring_ll128_bw(cc, scale));
  if (a == Algo::kTree && c == Collective::kAllReduce)
    bus = fmin(bus * 0.92f, float(g.channels) * per_ch_max_tree_bw(cc, scale));
  if (a == Algo::kTree && p == Proto::kLL) bus = fmin(bus * 1.0f / 3.8f, ll_max);
  if (a == Algo::kTree && p == Proto::kLL128)
    bus = fmin(bus * (nodes == 1 ? 7.0f / 9.0f : 120.0f / 128.0f),
               float(g.channels) * per_ch_max_tree_ll128_bw(cc, scale));
  if (a == Algo::kTree && !t.tree_pattern_balanced) bus *= 0.85f;
  if (a == Algo::kPat) bus *= 0.75f;
  if (collnet && p != Proto::kSimple) bus = 0.0f;
  if (a == Algo::kCollNetDirect && p == Proto::kSimple) {
    if (c == Collective::kAllGather || c == Collective::kReduceScatter) {
      bus = float(ppn) * fmin(g.bw_intra, g.bw_inter * 0.9f);
    } else {
      // CollNetDirect needs a NIC per GPU for full speed: divide by the GPU/NIC ratio, halfway.
      float factor = float(ppn) / float(g.channels);
      factor -= (factor - 1.0f) / 2.0f;
      bus /= factor;
      if (cc >= int(GpuArch::kHopper)) bus *= 0.85f;
    }
  }
  // Bus bandwidth -> algorithm bandwidth, except for non-ring AllGather/ReduceScatter.
  const bool ag_rs = c == Collective::kAllGather || c == Collective::kReduceScatter;
  if (!(a != Algo::kRing && ag_rs)) {
    const bool ring_like = a == Algo::kRing || a == Algo::kNvls || a == Algo::kNvlsTree;
    const float ratio = ring_like ? float(ranks) / float(nsteps) : 0.5f;
    bus *= ratio;
  }
  return bus;
}

// Latency (us) of an enabled arm (docs/simulator.md "The formulas", latency).
NCCLBOT_HD inline float arm_latency_us(const Topology& t, Collective c, Algo a, Proto p) {
  const int ai = int(a), pi = int(p);
  const int nodes = t.nodes;
  const int ppn = t.gpus_per_node;
  const int ranks = t.ranks();
  const int nsteps = ring_steps(c, ranks);
  const float intra = hw_latency_us(t.intra_nvlink ? kHwNvlink : kHwPci, ai, pi);
  // With one GPU per node the network latency is fully exposed: use Tree's NET entry.
  float inter = hw_latency_us(kHwNet, ppn == 1 ? int(Algo::kTree) : ai, pi) + t.latency_inter_us;
  if (p == Proto::kSimple) inter += t.latency_inter_us;  // the flush adds latencyInter once more
  const float log_nodes = float(log2_floor(uint64_t(nodes)));

  float lat = base_latency_us(ai, pi);
  switch (a) {
    case Algo::kRing:
      if (c == Collective::kBroadcast || c == Collective::kReduce) {
        lat += float(nsteps) * (nodes > 1 ? inter : intra);
      } else {
        // Inter-node rings still launch every step through the network proxy: intra steps cost at
        // least the net overhead (1 us Intel, 2 us AMD; x3 for Simple; 0 on one node).
        float net_overhead = 0.0f;
        if (nodes > 1) {
          net_overhead = t.cpu_amd ? 2.0f : 1.0f;
          if (p == Proto::kSimple) net_overhead *= 3.0f;
        }
        const float step = intra > net_overhead ? intra : net_overhead;
        const int inter_steps = c == Collective::kAllReduce ? 2 * (nodes - 1) : nodes - 1;
        lat += float(nsteps - inter_steps) * step + float(inter_steps) * inter;
      }
      break;
    case Algo::kTree:
      if (c == Collective::kAllReduce) lat += 2.0f * (float(ppn - 1) * intra + log_nodes * inter);
      break;
    case Algo::kNvls:  // replaces the base latency
      lat = intra + (nodes > 1 ? inter : 0.0f);
      break;
    case Algo::kNvlsTree:
      lat += intra + 2.0f * log_nodes * inter;
      break;
    case Algo::kCollNetDirect:
      lat += 2.0f * (float(ppn - 1 < 1 ? ppn - 1 : 1) * intra + float(ppn - 1) * 0.4f) + inter;
      break;
    case Algo::kCollNetChain:
      lat += 2.0f * float(ppn - 1) * intra + inter;
      break;
    case Algo::kPat:
      lat += log_nodes * inter / 3.5f + float(ranks) * 2.8f;
      break;
    case Algo::kHiPipe:  // never enabled: not one of NCCL's algorithms
      break;
  }
  return lat;
}

// The two parts of one arm's prediction, kept apart so the simulator can perturb each.
struct ArmCost {
  float latency_us = 0.0f;  // already multiplied by the size-dependent factors (ring plateau)
  float alg_bw = 0.0f;      // GB/s, with the Tree AllReduce size correction applied
};

// Latency and bandwidth for one message size, or alg_bw == 0 when the arm cannot run.
NCCLBOT_HD inline ArmCost arm_cost(const Topology& t, Collective c, Algo a, Proto p, uint64_t bytes) {
  ArmCost out;
  if (!arm_enabled(t, c, a, p)) return out;
  if (t.ranks() == 1) {
    out.alg_bw = 1.0f;  // marks valid; the time is 0 (one rank: Ring/Simple at 0)
    return out;
  }
  float bw = arm_alg_bw(t, c, a, p);
  float lat = arm_latency_us(t, c, a, p);
  // Tree AllReduce bandwidth correction by size (64 B .. 256 MiB).
  const int log_size = log2_floor(bytes >> 6);
  if (a == Algo::kTree && c == Collective::kAllReduce && log_size >= 0 && log_size < 23)
    bw *= tree_correction_factor(int(p), log_size);
  // "Plateau effect of ring": Ring/Simple AllReduce across nodes once each rank's channel slice is
  // >= 64 B; x1.4 on sm80 and later (every row modelled here), x1.9 before.
  if (a == Algo::kRing && p == Proto::kSimple && t.nodes > 1 && c == Collective::kAllReduce &&
      bytes / uint64_t(t.ring_channels * t.ranks()) >= 64)
    lat *= t.arch >= GpuArch::kAmpere ? kRingPlateauLatFactorSm80 : kRingPlateauLatFactorOlder;
  out.latency_us = lat;
  out.alg_bw = bw;
  return out;
}

// time_us = lat * latCount + nBytes / (1000 * bw); -1 when bw == 0. For a single operation latCount
// is 1 for every algorithm (numPipeOps for Ring, ceil(numPipeOps / batch) for the others).
NCCLBOT_HD inline float arm_time_us(const Topology& t, Collective c, Algo a, Proto p, uint64_t bytes) {
  if (t.ranks() == 1) return arm_enabled(t, c, a, p) ? 0.0f : -1.0f;
  const ArmCost k = arm_cost(t, c, a, p, bytes);
  if (!(k.alg_bw > 0.0f)) return -1.0f;
  return k.latency_us + float(bytes) / (1000.0f * k.alg_bw);
}

// The tuner's cost table: [algo * 3 + proto] -> predicted us, -1 (NCCL_ALGO_PROTO_IGNORE) if invalid.
// NCCL's 21 slots only: the simulated HiPIPE arm has no entry in NCCL's model.
struct CostTable {
  float time_us[kNumNcclArms];

  NCCLBOT_HD ArmMask valid() const {
    ArmMask m;
    for (int s = 0; s < kNumNcclArms; ++s)
      if (time_us[s] >= 0.0f) m.set(s);
    return m;
  }
};

NCCLBOT_HD inline CostTable predict(const Topology& t, Collective c, uint64_t bytes) {
  CostTable table;
  for (int s = 0; s < kNumNcclArms; ++s)
    table.time_us[s] = arm_time_us(t, c, slot_algo(s), slot_proto(s), bytes);
  return table;
}

// AUTO's pick: smallest time with a strict '<' over slots in order (ties to the lower algorithm,
// then the lower protocol); -1 when nothing is valid.
NCCLBOT_HD inline int auto_pick(const CostTable& table) {
  ArmMask all;
  all.bits = (1u << kNumNcclArms) - 1u;
  return nccl_argmin(all, [&](int s) { return table.time_us[s]; });
}

}  // namespace ncclbot::model
