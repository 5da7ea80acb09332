#pragma once
// NCCL 2.28's default tuning constants (`ncclTunerConstantsDefaults`, nccl src/graph/tuning.cc at
// tag v2.28.9-1; docs/simulator.md "The formulas" says where each enters). Indices follow NCCL:
// [algorithm][protocol] with Tree 0 .. PAT 6 and LL 0, LL128 1, Simple 2; hardware links
// NVLINK 0, PCI 1, NET 2; compute-capability rows Volta 0, Ampere 1, Hopper 2, Blackwell 3;
// scale columns 1 node 0, 2 nodes 1, 3 or more nodes 2.
#include "ncclbot/core/arm.hpp"
#include "ncclbot/core/hd.hpp"

namespace ncclbot::model {

inline constexpr int kHwNvlink = 0;
inline constexpr int kHwPci = 1;
inline constexpr int kHwNet = 2;

// Base latency per algorithm and protocol (us), tuning.cc baseLat.
NCCLBOT_HD inline float base_latency_us(int algo, int proto) {
  constexpr float kBase[kNumNcclAlgos][kNumProtos] = {
      {6.8f, 14.0f, 8.4f},  // Tree
      {6.6f, 14.0f, 8.4f},  // Ring
      {0.0f, 0.0f, 0.0f},   // CollNetDirect
      {0.0f, 0.0f, 0.0f},   // CollNetChain
      {0.0f, 0.0f, 0.0f},   // NVLS
      {0.0f, 0.0f, 0.0f},   // NVLSTree
      {8.0f, 8.0f, 8.0f},   // PAT
  };
  return kBase[algo][proto];
}

// Per-hop hardware latency (us), tuning.cc hwLat[NVLINK|PCI|NET][algo][proto].
NCCLBOT_HD inline float hw_latency_us(int hw, int algo, int proto) {
  constexpr float kHw[3][kNumNcclAlgos][kNumProtos] = {
      // NVLINK
      {{0.6f, 1.25f, 4.0f},
       {0.6f, 1.9f, 3.4f},
       {0.0f, 0.0f, 3.7f},
       {0.0f, 0.0f, 2.8f},
       {0.0f, 0.0f, 25.0f},
       {0.0f, 0.0f, 25.0f},
       {0.0f, 0.0f, 4.0f}},
      // PCI
      {{1.0f, 1.9f, 4.0f},
       {1.0f, 2.5f, 5.7f},
       {0.0f, 0.0f, 3.7f},
       {0.0f, 0.0f, 2.8f},
       {0.0f, 0.0f, 0.0f},
       {0.0f, 0.0f, 0.0f},
       {0.0f, 0.0f, 4.0f}},
      // NET
      {{5.0f, 8.5f, 14.0f},
       {2.7f, 4.0f, 14.0f},
       {0.0f, 0.0f, 31.0f},
       {0.0f, 0.0f, 30.0f},
       {0.0f, 0.0f, 18.0f},
       {0.0f, 0.0f, 20.9f},
       {0.0f, 0.0f, 14.0f}},
  };
  return kHw[hw][algo][proto];
}

// Bandwidth caps (GB/s) [row][scale]. llMaxBws rows: on one node the GPU generation; across nodes
// the CPU (row 0 Intel/other, row 1 AMD or mixed). The perChMax* tables are per channel.
NCCLBOT_HD inline float ll_max_bw(int row, int scale) {
  constexpr float k[4][3] = {
      {39.0f, 39.0f, 20.4f}, {87.7f, 22.5f, 19.0f}, {141.0f, 45.0f, 35.0f}, {282.0f, 90.0f, 70.0f}};
  return k[row][scale];
}
NCCLBOT_HD inline float per_ch_max_ring_ll128_bw(int cc, int scale) {
  constexpr float k[4][3] = {
      {20.0f, 20.0f, 20.0f}, {20.0f, 20.0f, 20.0f}, {36.7f, 36.7f, 36.7f}, {73.4f, 34.6f, 73.4f}};
  return k[cc][scale];
}
NCCLBOT_HD inline float per_ch_max_tree_ll128_bw(int cc, int scale) {
  constexpr float k[4][3] = {
      {20.0f, 20.0f, 20.0f}, {20.0f, 20.0f, 20.0f}, {36.7f, 36.7f, 29.0f}, {55.6f, 31.67f, 20.0f}};
  return k[cc][scale];
}
NCCLBOT_HD inline float per_ch_max_tree_bw(int cc, int scale) {
  constexpr float k[4][3] = {
      {26.5f, 18.5f, 10.0f}, {24.0f, 23.6f, 17.8f}, {38.7f, 41.4f, 36.0f}, {70.0f, 42.8f, 24.0f}};
  return k[cc][scale];
}
NCCLBOT_HD inline float per_ch_max_nvls_tree_bw(int cc, int scale) {
  constexpr float k[4][3] = {
      {26.5f, 18.5f, 10.0f}, {24.0f, 23.6f, 17.8f}, {0.0f, 57.7f, 45.5f}, {0.0f, 96.0f, 43.8f}};
  return k[cc][scale];
}

// NVLS efficiency per compute-capability row (tuning.cc nvlsEfficiency): 0 Volta/Ampere (no NVLS),
// 0.85 Hopper, 0.74 Blackwell.
NCCLBOT_HD inline float nvls_efficiency(int cc) {
  constexpr float k[4] = {0.0f, 0.0f, 0.85f, 0.74f};
  return k[cc];
}

// Tree AllReduce bandwidth correction by log2(nBytes/64) for indices 0..22 (64 B .. 256 MiB),
// tuning.cc treeCorrectionFactor[proto][index].
NCCLBOT_HD inline float tree_correction_factor(int proto, int index) {
  constexpr float k[kNumProtos][23] = {
      {1.0f, 1.0f, 1.0f, 1.0f, .9f, .8f, .7f, .7f,  .7f,  .7f,  .6f, .5f,
       .4f,  .4f,  .5f,  .6f,  .7f, .8f, .9f, 1.0f, 1.0f, 1.0f, 1.0f},
      {1.0f, 1.0f, 1.0f, 1.0f, 1.0f, .9f, .8f, .8f, .8f, .7f,  .6f, .6f,
       .6f,  .6f,  .6f,  .6f,  .8f,  .9f, .9f, .9f, .9f, 1.0f, 1.0f},
      {.9f, .9f, .9f, .9f, .9f, .9f, .9f, .8f, .7f, .6f, .6f, .5f,
       .5f, .5f, .5f, .6f, .7f, .8f, .7f, .7f, .8f, .9f, .9f},
  };
  return k[proto][index];
}

// Ring/Simple AllReduce across nodes: the "plateau effect of ring" latency multiplier.
inline constexpr float kRingPlateauLatFactorSm80 = 1.4f;
inline constexpr float kRingPlateauLatFactorOlder = 1.9f;

}  // namespace ncclbot::model
