// NCCL's cost model checked against hand calculations from the formulas in docs/simulator.md "The
// formulas" and the constants of tuning_constants.hpp (both from NCCL src/graph/tuning.cc at
// v2.28.9-1; the arithmetic is written next to each expectation), plus every enabling rule listed in
// docs/simulator.md (NCCL src/enqueue.cc).
#include "ncclbot/model/cost_model.hpp"

#include <gtest/gtest.h>

namespace ncclbot::model {
namespace {

// DGX H100: 8 GPUs, 18 NVLink4 links x 20.6 GB/s = 370.8 GB/s, 8 NICs rated 48 GB/s, 16 channels.
Topology h100(int nodes, int ppn = 8) {
  Topology t;
  t.arch = GpuArch::kHopper;
  t.nodes = nodes;
  t.gpus_per_node = ppn;
  t.nvlink_bw = 370.8f;
  t.nic_bw = 48.0f;
  t.nics_per_node = 8;
  return t;
}

void expect_rel(double got, double want, double tol = 1e-5) {
  EXPECT_NEAR(got, want, std::abs(want) * tol + 1e-6) << "want " << want;
}

constexpr Collective kAR = Collective::kAllReduce;
constexpr Collective kAG = Collective::kAllGather;
constexpr Collective kRS = Collective::kReduceScatter;

TEST(CostModelLatency, TreeLLTwoNodesH100IsTheDocumentedCheck) {
  // 6.8 (base Tree/LL) + 2 * ((ppn-1) * NVLink 0.6 + log2(2) * NET 5.0) = 6.8 + 2 * (4.2 + 5.0) = 25.2
  expect_rel(arm_latency_us(h100(2), kAR, Algo::kTree, Proto::kLL), 25.2);
  // NCCL's own log prints 25.21 us for 128 B (nccl #1453): bw = min(0.92 * 16 * 23.175, 16 * 41.4) =
  // 341.136, / 3.8 = 89.77, capped by llMaxBw[Intel row 0][2 nodes] = 39, x0.5 (tree) = 19.5 GB/s;
  // tree correction index log2(128/64) = 1 is 1.0 -> 25.2 + 128 / 19500 = 25.20656
  expect_rel(arm_time_us(h100(2), kAR, Algo::kTree, Proto::kLL, 128), 25.2 + 128.0 / 19500.0);
}

TEST(CostModelLatency, RingOneNode) {
  // AllReduce nsteps = 2 * 7 = 14, no inter steps, no net overhead on one node
  expect_rel(arm_latency_us(h100(1), kAR, Algo::kRing, Proto::kLL), 6.6 + 14 * 0.6);      // 15.0
  expect_rel(arm_latency_us(h100(1), kAR, Algo::kRing, Proto::kLL128), 14.0 + 14 * 1.9);  // 40.6
  expect_rel(arm_latency_us(h100(1), kAR, Algo::kRing, Proto::kSimple), 8.4 + 14 * 3.4);  // 56.0
  // AllGather: nsteps = 7
  expect_rel(arm_latency_us(h100(1), kAG, Algo::kRing, Proto::kLL), 6.6 + 7 * 0.6);  // 10.8
}

TEST(CostModelLatency, RingAcrossNodes) {
  // 16 x 8: nsteps = 254, nInter = 2 * 15 = 30; Simple: max(3.4, 3 * 1.0 net overhead) = 3.4,
  // NET 14 -> 8.4 + 224 * 3.4 + 30 * 14 = 1190.0
  expect_rel(arm_latency_us(h100(16), kAR, Algo::kRing, Proto::kSimple), 1190.0);
  // LL: max(0.6, 1.0) = 1.0, NET 2.7 -> 6.6 + 224 + 81 = 311.6
  expect_rel(arm_latency_us(h100(16), kAR, Algo::kRing, Proto::kLL), 311.6);
  // AllGather 16 x 8: nsteps 127, nInter 15 -> 6.6 + 112 * 1.0 + 15 * 2.7 = 159.1
  expect_rel(arm_latency_us(h100(16), kAG, Algo::kRing, Proto::kLL), 159.1);
  // AMD host: net overhead 2 us, x3 for Simple = 6 > 3.4 -> 8.4 + 224 * 6 + 420 = 1772.4
  Topology amd = h100(16);
  amd.cpu_amd = true;
  expect_rel(arm_latency_us(amd, kAR, Algo::kRing, Proto::kSimple), 1772.4);
  // graph latencyInter 2 us: added once (LL), twice for Simple: 6.6 + 224 + 30 * 4.7 = 371.6
  Topology lat = h100(16);
  lat.latency_inter_us = 2.0f;
  expect_rel(arm_latency_us(lat, kAR, Algo::kRing, Proto::kLL), 371.6);
  expect_rel(arm_latency_us(lat, kAR, Algo::kRing, Proto::kSimple), 8.4 + 224 * 3.4 + 30 * 18.0);
}

TEST(CostModelLatency, RingPlateauFactorForLargeAllReduceAcrossNodes) {
  // bytes / (16 channels * 128 ranks) >= 64 <=> bytes >= 131072: x1.4 -> 1190 * 1.4 = 1666
  const Topology t = h100(16);
  const ArmCost small = arm_cost(t, kAR, Algo::kRing, Proto::kSimple, 131071);
  const ArmCost large = arm_cost(t, kAR, Algo::kRing, Proto::kSimple, 131072);
  expect_rel(small.latency_us, 1190.0);
  expect_rel(large.latency_us, 1666.0);
  // Not on one node, not for other protocols or collectives.
  expect_rel(arm_cost(h100(1), kAR, Algo::kRing, Proto::kSimple, 1 << 30).latency_us, 56.0);
  expect_rel(arm_cost(t, kAR, Algo::kRing, Proto::kLL, 1 << 30).latency_us, 311.6);
}

TEST(CostModelLatency, OtherAlgorithms) {
  // Tree/Simple 16 x 8: 8.4 + 2 * (7 * 4.0 + 4 * 14) = 176.4
  expect_rel(arm_latency_us(h100(16), kAR, Algo::kTree, Proto::kSimple), 176.4);
  // NVLS one node replaces the base: NVLink Simple 25
  expect_rel(arm_latency_us(h100(1), kAR, Algo::kNvls, Proto::kSimple), 25.0);
  // NVLSTree 16 nodes: 0 + 25 + 2 * 4 * 20.9 = 192.2
  expect_rel(arm_latency_us(h100(16), kAR, Algo::kNvlsTree, Proto::kSimple), 192.2);
  // CollNet on 4 x 8: Direct 0 + 2 * (1 * 3.7 + 0.4 * 7) + 31 = 44.0; Chain 2 * 7 * 2.8 + 30 = 69.2
  Topology cn = h100(4);
  cn.collnet_support = true;
  expect_rel(arm_latency_us(cn, kAR, Algo::kCollNetDirect, Proto::kSimple), 44.0);
  expect_rel(arm_latency_us(cn, kAR, Algo::kCollNetChain, Proto::kSimple), 69.2);
  // NVLS across nodes (with CollNet): 25 + NET 18 = 43
  expect_rel(arm_latency_us(cn, kAR, Algo::kNvls, Proto::kSimple), 43.0);
  // PAT 16 x 1: ppn = 1 uses Tree's NET latency (14): 8 + 4 * 14 / 3.5 + 16 * 2.8 = 68.8
  Topology pat = h100(16, 1);
  pat.nics_per_node = 1;
  expect_rel(arm_latency_us(pat, kAG, Algo::kPat, Proto::kSimple), 68.8);
  // PCI inside the node: Ring/LL 6.6 + 14 * 1.0 = 20.6
  Topology pci = h100(1);
  pci.intra_nvlink = false;
  expect_rel(arm_latency_us(pci, kAR, Algo::kRing, Proto::kLL), 20.6);
}

TEST(CostModelBandwidth, RingOneNodeH100) {
  // ring graph: 370.8 / 16 = 23.175 per channel; busBw = 370.8; algBw = busBw * 8 / 14
  expect_rel(arm_alg_bw(h100(1), kAR, Algo::kRing, Proto::kSimple), 370.8 * 8 / 14);
  // LL: min(llMaxBw[Hopper][1 node] = 141, 0.5 * 370.8) = 141
  expect_rel(arm_alg_bw(h100(1), kAR, Algo::kRing, Proto::kLL), 141.0 * 8 / 14);
  // LL128: min(0.92 * 370.8 = 341.136, 16 * 36.7 = 587.2)
  expect_rel(arm_alg_bw(h100(1), kAR, Algo::kRing, Proto::kLL128), 341.136 * 8 / 14);
  // AllGather: ratio 8 / 7
  expect_rel(arm_alg_bw(h100(1), kAG, Algo::kRing, Proto::kSimple), 370.8 * 8 / 7);
}

TEST(CostModelBandwidth, AcrossNodes) {
  // 16 nodes: node bw = min(370.8, 8 * 48 = 384) -> 23.175 per channel
  // Ring/LL: llMaxBw[Intel row 0][>= 3 nodes] = 20.4; ratio 128 / 254
  expect_rel(arm_alg_bw(h100(16), kAR, Algo::kRing, Proto::kLL), 20.4 * 128 / 254);
  // Tree/Simple: min(0.92 * 370.8, 16 * 36) = 341.136, x0.5
  expect_rel(arm_alg_bw(h100(16), kAR, Algo::kTree, Proto::kSimple), 341.136 * 0.5);
  // Tree/LL128: min(341.136 * 120/128 = 319.815, 16 * 29 = 464) x0.5
  expect_rel(arm_alg_bw(h100(16), kAR, Algo::kTree, Proto::kLL128), 341.136 * 120 / 128 * 0.5);
  // Tree/LL: min(341.136 / 3.8 = 89.77, 20.4) x0.5 = 10.2
  expect_rel(arm_alg_bw(h100(16), kAR, Algo::kTree, Proto::kLL), 10.2);
  // AMD host: llMaxBw row 1, >= 3 nodes: 19 -> Tree/LL 9.5
  Topology amd = h100(16);
  amd.cpu_amd = true;
  expect_rel(arm_alg_bw(amd, kAR, Algo::kTree, Proto::kLL), 9.5);
  // A plain TREE pattern costs x0.85
  Topology plain = h100(16);
  plain.tree_pattern_balanced = false;
  expect_rel(arm_alg_bw(plain, kAR, Algo::kTree, Proto::kSimple), 341.136 * 0.5 * 0.85);
  // Fewer NICs than NVLink: 4 x 48 = 192 bottleneck -> Ring/Simple busBw 192
  Topology four = h100(16);
  four.nics_per_node = 4;
  expect_rel(arm_alg_bw(four, kAR, Algo::kRing, Proto::kSimple), 192.0 * 128 / 254);
}

TEST(CostModelBandwidth, NvlsAndNvlsTree) {
  // NVLS 1 node AllReduce: min(23.175 * 0.85 * 15/16 * 2 = 36.94, bwInter 23.175) * 16 = 370.8, x 8/14
  expect_rel(arm_alg_bw(h100(1), kAR, Algo::kNvls, Proto::kSimple), 370.8 * 8 / 14);
  // NVLS 1 node AllGather: 23.175 * 0.85 * 15/16 * 7/8 = 16.1594 per channel, x16, no conversion
  expect_rel(arm_alg_bw(h100(1), kAG, Algo::kNvls, Proto::kSimple), 23.175 * 0.85 * 15 / 16 * 7 / 8 * 16);
  // NVLSTree 16 nodes: bwInter = 384 / 16 = 24 < 36.94 < cap 45.5 -> 384, x 128/254
  expect_rel(arm_alg_bw(h100(16), kAR, Algo::kNvlsTree, Proto::kSimple), 384.0 * 128 / 254);
  // Blackwell NVLS one node of 4: 721.8/16 = 45.1125; 45.1125 * 0.74 * 15/16 * 2 = 62.59 > 45.1125
  Topology bw = h100(1, 4);
  bw.arch = GpuArch::kBlackwell;
  bw.nvlink_bw = 721.8f;
  expect_rel(arm_alg_bw(bw, kAR, Algo::kNvls, Proto::kSimple), 721.8 * 4 / 6);
  // Blackwell NVLSTree 2 nodes with bwInter 4 * 48 / 16 = 12 per channel: 12 * 16 = 192, x 8/14
  bw.nodes = 2;
  bw.nics_per_node = 4;
  expect_rel(arm_alg_bw(bw, kAR, Algo::kNvlsTree, Proto::kSimple), 192.0 * 8 / 14);
  // ... and the per-channel NVLSTree cap binds when the network is faster: 2 nodes Blackwell, cap 96;
  // >= 3 nodes cap 43.8 with bwInter 48 * 16 / 16 = 48 and intra 62.59 -> 43.8 * 16 = 700.8
  bw.nodes = 4;
  bw.nics_per_node = 16;
  expect_rel(arm_alg_bw(bw, kAR, Algo::kNvlsTree, Proto::kSimple), 43.8 * 16 * 16 / 30);
}

TEST(CostModelBandwidth, CollNetAndPat) {
  Topology cn = h100(4);
  cn.collnet_support = true;
  cn.collnet_channels = 8;
  // CollNetDirect AllReduce: bwIntra 370.8/8 = 46.35, x8 = 370.8; GPU/NIC factor 8/8 = 1 -> 1;
  // x0.85 on sm90+ = 315.18; x0.5
  expect_rel(arm_alg_bw(cn, kAR, Algo::kCollNetDirect, Proto::kSimple), 370.8 * 0.85 * 0.5);
  // AllGather: ppn * min(46.35, 0.9 * 384/8 = 43.2) = 345.6, no conversion
  expect_rel(arm_alg_bw(cn, kAG, Algo::kCollNetDirect, Proto::kSimple), 8 * 43.2);
  // CollNetChain AllReduce: 370.8 x0.5
  expect_rel(arm_alg_bw(cn, kAR, Algo::kCollNetChain, Proto::kSimple), 370.8 * 0.5);
  // 4 channels for 8 GPUs: factor 2 -> 2 - 0.5 = 1.5; bus = 4 * 92.7 / 1.5 * 0.85, x0.5
  cn.collnet_channels = 4;
  expect_rel(arm_alg_bw(cn, kAR, Algo::kCollNetDirect, Proto::kSimple), 370.8 / 1.5 * 0.85 * 0.5);
  // PAT 16 x 1 with one NIC: min(370.8, 48) / 16 = 3 per channel, x16 = 48, x0.75 = 36, no conversion
  Topology pat = h100(16, 1);
  pat.nics_per_node = 1;
  expect_rel(arm_alg_bw(pat, kRS, Algo::kPat, Proto::kSimple), 36.0);
}

TEST(CostModelTime, TreeCorrectionBySize) {
  const Topology t = h100(16);
  const double bw = 341.136 * 0.5;
  const double lat = 176.4;
  // 64 KiB: index log2(65536 / 64) = 10 -> Simple factor 0.6
  expect_rel(arm_time_us(t, kAR, Algo::kTree, Proto::kSimple, 65536), lat + 65536 / (1000 * bw * 0.6));
  // 63 B: index -1 -> no correction; 1 GiB: index 24 -> none
  expect_rel(arm_time_us(t, kAR, Algo::kTree, Proto::kSimple, 63), lat + 63 / (1000 * bw));
  expect_rel(arm_time_us(t, kAR, Algo::kTree, Proto::kSimple, 1u << 30),
             lat + double(1u << 30) / (1000 * bw));
  // 256 MiB: index 22 (the last) -> Simple 0.9
  expect_rel(arm_time_us(t, kAR, Algo::kTree, Proto::kSimple, 256u << 20),
             lat + double(256u << 20) / (1000 * bw * 0.9));
  // LL at 64 KiB: index 10 -> 0.6; LL bw 10.2; lat 6.8 + 2 * (7 * 0.6 + 4 * 5) = 55.2
  expect_rel(arm_time_us(t, kAR, Algo::kTree, Proto::kLL, 65536), 55.2 + 65536 / (1000 * 10.2 * 0.6));
}

TEST(CostModelTime, OneNodeRingSimpleAtOneGiB) {
  // 56 + 2^30 / (1000 * 370.8 * 8/14)
  expect_rel(arm_time_us(h100(1), kAR, Algo::kRing, Proto::kSimple, 1u << 30),
             56.0 + double(1u << 30) / (1000 * 370.8 * 8 / 14));
}

TEST(CostModelEnabling, SingleRankHasOnlyRingSimpleAtZero) {
  const CostTable t = predict(h100(1, 1), kAR, 1 << 20);
  for (int s = 0; s < kNumNcclArms; ++s) {
    if (s == arm_slot(Algo::kRing, Proto::kSimple))
      EXPECT_EQ(t.time_us[s], 0.0f);
    else
      EXPECT_EQ(t.time_us[s], -1.0f) << s;
  }
  EXPECT_EQ(auto_pick(t), arm_slot(Algo::kRing, Proto::kSimple));
}

TEST(CostModelEnabling, BroadcastAndReduceAreRingOnly) {
  for (Collective c : {Collective::kBroadcast, Collective::kReduce}) {
    const ArmMask m = predict(h100(4), c, 4096).valid();
    ArmMask want;
    for (Proto p : {Proto::kLL, Proto::kLL128, Proto::kSimple}) want.set(arm_slot(Algo::kRing, p));
    EXPECT_EQ(m.bits, want.bits);
  }
}

TEST(CostModelEnabling, AllGatherReduceScatterHaveNoTree) {
  for (Collective c : {kAG, kRS}) {
    const ArmMask m = predict(h100(1), c, 4096).valid();
    EXPECT_FALSE(m.has(arm_slot(Algo::kTree, Proto::kLL)));
    EXPECT_FALSE(m.has(arm_slot(Algo::kTree, Proto::kSimple)));
    EXPECT_TRUE(m.has(arm_slot(Algo::kRing, Proto::kLL)));
    EXPECT_TRUE(m.has(arm_slot(Algo::kNvls, Proto::kSimple)));  // one node, NVLS support
    EXPECT_FALSE(m.has(arm_slot(Algo::kNvlsTree, Proto::kSimple)));
  }
}

TEST(CostModelEnabling, UntunedCollectivesHaveNoArms) {
  EXPECT_TRUE(predict(h100(2), Collective::kSendRecv, 4096).valid().empty());
  EXPECT_TRUE(predict(h100(2), Collective::kAllToAll, 4096).valid().empty());
  EXPECT_EQ(auto_pick(predict(h100(2), Collective::kSendRecv, 4096)), -1);
}

TEST(CostModelEnabling, NvlsRules) {
  // One node with NVLS: NVLS Simple only; NVLSTree off on a single node.
  ArmMask m = predict(h100(1), kAR, 4096).valid();
  EXPECT_TRUE(m.has(arm_slot(Algo::kNvls, Proto::kSimple)));
  EXPECT_FALSE(m.has(arm_slot(Algo::kNvls, Proto::kLL)));
  EXPECT_FALSE(m.has(arm_slot(Algo::kNvls, Proto::kLL128)));
  EXPECT_FALSE(m.has(arm_slot(Algo::kNvlsTree, Proto::kSimple)));
  // Across nodes without CollNet: NVLSTree yes, NVLS no.
  m = predict(h100(4), kAR, 4096).valid();
  EXPECT_FALSE(m.has(arm_slot(Algo::kNvls, Proto::kSimple)));
  EXPECT_TRUE(m.has(arm_slot(Algo::kNvlsTree, Proto::kSimple)));
  EXPECT_FALSE(m.has(arm_slot(Algo::kNvlsTree, Proto::kLL128)));
  // NVLSTree is AllReduce only.
  EXPECT_FALSE(predict(h100(4), kAG, 4096).valid().has(arm_slot(Algo::kNvlsTree, Proto::kSimple)));
  // With CollNet, NVLS works across nodes.
  Topology cn = h100(4);
  cn.collnet_support = true;
  EXPECT_TRUE(predict(cn, kAR, 4096).valid().has(arm_slot(Algo::kNvls, Proto::kSimple)));
  // No NVLS support, or fewer than 2 channels, or 1 GPU per node: neither.
  Topology off = h100(4);
  off.nvls_support = false;
  m = predict(off, kAR, 4096).valid();
  EXPECT_FALSE(m.has(arm_slot(Algo::kNvlsTree, Proto::kSimple)));
  Topology one_ch = h100(1);
  one_ch.nvls_channels = 1;
  EXPECT_FALSE(predict(one_ch, kAR, 4096).valid().has(arm_slot(Algo::kNvls, Proto::kSimple)));
  EXPECT_FALSE(predict(h100(4, 1), kAR, 4096).valid().has(arm_slot(Algo::kNvlsTree, Proto::kSimple)));
}

TEST(CostModelEnabling, CollNetRules) {
  EXPECT_FALSE(predict(h100(4), kAR, 4096).valid().has(arm_slot(Algo::kCollNetDirect, Proto::kSimple)));
  Topology cn = h100(4);
  cn.collnet_support = true;
  ArmMask m = predict(cn, kAR, 4096).valid();
  EXPECT_TRUE(m.has(arm_slot(Algo::kCollNetDirect, Proto::kSimple)));
  EXPECT_TRUE(m.has(arm_slot(Algo::kCollNetChain, Proto::kSimple)));
  EXPECT_FALSE(m.has(arm_slot(Algo::kCollNetDirect, Proto::kLL)));
  EXPECT_FALSE(m.has(arm_slot(Algo::kCollNetChain, Proto::kLL128)));
  // AllGather: Direct only.
  m = predict(cn, kAG, 4096).valid();
  EXPECT_TRUE(m.has(arm_slot(Algo::kCollNetDirect, Proto::kSimple)));
  EXPECT_FALSE(m.has(arm_slot(Algo::kCollNetChain, Proto::kSimple)));
  // Direct needs an NVSwitch; neither engages on one node.
  cn.nvswitch = false;
  EXPECT_FALSE(predict(cn, kAR, 4096).valid().has(arm_slot(Algo::kCollNetDirect, Proto::kSimple)));
  Topology one = h100(1);
  one.collnet_support = true;
  EXPECT_FALSE(predict(one, kAR, 4096).valid().has(arm_slot(Algo::kCollNetChain, Proto::kSimple)));
}

TEST(CostModelEnabling, PatRules) {
  Topology pat = h100(8, 1);
  pat.nics_per_node = 1;
  EXPECT_TRUE(predict(pat, kAG, 4096).valid().has(arm_slot(Algo::kPat, Proto::kSimple)));
  EXPECT_TRUE(predict(pat, kRS, 4096).valid().has(arm_slot(Algo::kPat, Proto::kSimple)));
  EXPECT_FALSE(predict(pat, kAG, 4096).valid().has(arm_slot(Algo::kPat, Proto::kLL)));
  EXPECT_FALSE(predict(pat, kAR, 4096).valid().has(arm_slot(Algo::kPat, Proto::kSimple)));
  EXPECT_FALSE(predict(h100(8, 2), kAG, 4096).valid().has(arm_slot(Algo::kPat, Proto::kSimple)));
  pat.host_net_device = false;
  EXPECT_FALSE(predict(pat, kAG, 4096).valid().has(arm_slot(Algo::kPat, Proto::kSimple)));
}

TEST(CostModelEnabling, Ll128Gate) {
  Topology t = h100(4);
  EXPECT_TRUE(predict(t, kAR, 4096).valid().has(arm_slot(Algo::kRing, Proto::kLL128)));
  t.ll128_path_ok = false;
  const ArmMask m = predict(t, kAR, 4096).valid();
  EXPECT_FALSE(m.has(arm_slot(Algo::kRing, Proto::kLL128)));
  EXPECT_FALSE(m.has(arm_slot(Algo::kTree, Proto::kLL128)));
  EXPECT_TRUE(m.has(arm_slot(Algo::kRing, Proto::kLL)));
}

TEST(CostModelAuto, PicksTheSmallestWithNcclTieRule) {
  CostTable t;
  for (float& v : t.time_us) v = -1.0f;
  t.time_us[arm_slot(Algo::kRing, Proto::kSimple)] = 5.0f;
  t.time_us[arm_slot(Algo::kNvls, Proto::kSimple)] = 5.0f;  // tie: the lower algorithm index wins
  EXPECT_EQ(auto_pick(t), arm_slot(Algo::kRing, Proto::kSimple));
  t.time_us[arm_slot(Algo::kRing, Proto::kLL)] = 5.0f;  // tie within Ring: the lower protocol wins
  EXPECT_EQ(auto_pick(t), arm_slot(Algo::kRing, Proto::kLL));
  t.time_us[arm_slot(Algo::kPat, Proto::kSimple)] = 4.9f;
  EXPECT_EQ(auto_pick(t), arm_slot(Algo::kPat, Proto::kSimple));
}

TEST(CostModelAuto, SmallAndLargeMessagesOnSixteenH100Nodes) {
  // 8 B: Tree/LL 55.2 us beats NVLSTree 192.2 and Ring/LL 311.6.
  EXPECT_EQ(auto_pick(predict(h100(16), kAR, 8)), arm_slot(Algo::kTree, Proto::kLL));
  // 8 GiB: NVLSTree (lat 192.2, algBw 193.5) beats Ring/Simple (lat 1666, algBw 186.9 x 128/127)
  EXPECT_EQ(auto_pick(predict(h100(16), kAR, 8ull << 30)), arm_slot(Algo::kNvlsTree, Proto::kSimple));
  // One node, 8 GiB: NVLS (lat 25) and Ring/Simple (lat 56) share algBw -> NVLS.
  EXPECT_EQ(auto_pick(predict(h100(1), kAR, 8ull << 30)), arm_slot(Algo::kNvls, Proto::kSimple));
}

}  // namespace
}  // namespace ncclbot::model
