#pragma once
// The plain-data description of one communicator that NCCL's cost model sees: GPU generation,
// node layout, link bandwidths, and what the topology search and the platform enable. Presets in
// data/fabrics/*.toml fill it; the simulator and `ncclbot model` evaluate it.
#include <cstdint>

#include "ncclbot/core/hd.hpp"

namespace ncclbot::model {

// NCCL's compute-capability rows (NCCL_NUM_COMPCAPS order).
enum class GpuArch : int8_t { kVolta = 0, kAmpere = 1, kHopper = 2, kBlackwell = 3 };

struct Topology {
  GpuArch arch = GpuArch::kHopper;
  int nodes = 1;          // NCCL's nNodes: NVLink domains (an MNNVL rack counts as one node)
  int gpus_per_node = 8;  // ranks per node (ppn)

  // Effective bandwidths as NCCL's topology code rates them (GB/s).
  float nvlink_bw = 370.8f;  // per GPU: links x per-link rate (topo.h: SM90 20.6, SM100 40.1 GB/s)
  float nic_bw = 48.0f;      // per NIC, the speed the inter-node search settles on
  int nics_per_node = 8;     // NICs the communicator's ranks on one node use
  bool intra_nvlink = true;  // typeIntra is NVLink (else PCI): picks hwLat[NVLINK] over hwLat[PCI]

  // Channels the topology search gives each graph.
  int ring_channels = 16;     // ring and tree graphs
  int nvls_channels = 16;     // NVLS and NVLSTree graph (NCCL_NVLS_NCHANNELS)
  int collnet_channels = 16;  // CollNet graphs

  bool nvls_support = true;           // NVSwitch multicast (NVLS) available
  bool collnet_support = false;       // CollNet (SHARP) plugin enabled
  bool nvswitch = true;               // CollNetDirect needs an NVSwitch
  bool tree_pattern_balanced = true;  // maxTreePattern != TREE (a plain TREE costs x0.85)
  bool ll128_path_ok = true;      // typeInter <= PXN (sm90+) / PXB, typeIntra <= NVB, one compute capability
  bool cpu_amd = false;           // llMaxBw row across nodes; NET overhead 2 us instead of 1 us
  bool host_net_device = true;    // PAT needs a host network device
  float latency_inter_us = 0.0f;  // graph latencyInter (added once, twice for Simple)

  NCCLBOT_HD int ranks() const { return nodes * gpus_per_node; }
};

// What one algorithm's graph reports: channels and per-channel bandwidths (GB/s).
struct GraphBw {
  int channels = 0;
  float bw_intra = 0.0f;
  float bw_inter = 0.0f;
};

// The ring/tree/PAT graph. NCCL's search looks for one speed that every hop of a channel sustains,
// so intra and inter speeds are the same: the node's bottleneck (NVLink per GPU, or the sum of its
// NICs across nodes) shared by the channels.
NCCLBOT_HD inline GraphBw ring_graph(const Topology& t) {
  GraphBw g;
  g.channels = t.ring_channels;
  float node_bw = t.nvlink_bw;
  if (t.nodes > 1) {
    const float net = t.nic_bw * float(t.nics_per_node);
    if (net < node_bw) node_bw = net;
  }
  g.bw_intra = node_bw / float(g.channels);
  g.bw_inter = g.bw_intra;
  return g;
}

// NVLS/NVLSTree graph: NVLink speed inside the node; across nodes the NICs' share per channel.
NCCLBOT_HD inline GraphBw nvls_graph(const Topology& t) {
  GraphBw g;
  g.channels = t.nvls_channels;
  g.bw_intra = t.nvlink_bw / float(g.channels);
  g.bw_inter = t.nodes > 1 ? t.nic_bw * float(t.nics_per_node) / float(g.channels) : g.bw_intra;
  return g;
}

// CollNet graphs: NVLink inside the node, the NICs towards the in-network reduction.
NCCLBOT_HD inline GraphBw collnet_graph(const Topology& t) {
  GraphBw g;
  g.channels = t.collnet_channels;
  g.bw_intra = t.nvlink_bw / float(g.channels);
  g.bw_inter = t.nic_bw * float(t.nics_per_node) / float(g.channels);
  return g;
}

}  // namespace ncclbot::model
