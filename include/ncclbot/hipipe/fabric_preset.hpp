#pragma once
// Multi-dimensional fabric presets for the HiPIPE model, read from TOML files (data/hipipe/*.toml)
// so the numbers and their sources live beside each other. A preset describes its dimensions in
// terms of a job's shape: a dimension spans GPUs of a node (optionally a multi-node NVLink domain)
// or groups of nodes; the actual group sizes follow from the job's nodes and GPUs per node.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ncclbot/hipipe/network.hpp"

namespace ncclbot::hipipe {

enum class Span { kGpus, kNodes };

struct PresetDimension {
  std::string name;
  Span span = Span::kGpus;
  // kGpus: the NVLink domain spans up to this many nodes (1 = one node). kNodes: a group holds up
  // to this many nodes (0 = all nodes left over by the dimensions before it).
  int max_nodes = 0;
  double latency_us = 0;
  double bandwidth_GBps = 0;
  std::string source;
};

struct FabricPreset {
  std::string name, description, file;
  int nodes = 0;  // default job shape
  int gpus_per_node = 0;
  std::vector<PresetDimension> dimensions;
};

// Parses and validates a preset file; InputError names the file, line and reason.
FabricPreset read_fabric_preset(const std::string& path);

// Where preset files live: $NCCLBOT_HIPIPE_FABRICS if set, else <source>/data/hipipe.
std::string fabric_preset_dir();

// `name_or_path`: a preset name (h100-ib-a, ...) or a path to a .toml file. UsageError lists the
// known names when the name is unknown.
// The largest cluster a preset (or hipipe's --nodes, --gpus-per-node) may describe.
inline constexpr int64_t kMaxNodes = 1000000, kMaxGpusPerNode = 1024;

FabricPreset load_fabric_preset(std::string_view name_or_path);
std::vector<std::string> fabric_preset_names();

// The network for a job of `nodes` x `gpus_per_node` ranks: each dimension gets the largest group
// that divides what is left (at most max_nodes nodes); dimensions of size 1 are dropped. UsageError
// when the job has one rank, a non-positive shape, or nodes that no dimension spans.
Network build_network(const FabricPreset& preset, int nodes, int gpus_per_node);

}  // namespace ncclbot::hipipe
