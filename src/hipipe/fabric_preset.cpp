#include "ncclbot/hipipe/fabric_preset.hpp"

#include <toml++/toml.h>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <utility>

#include "io/toml_reader.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/io/output_file.hpp"
#include "ncclbot/io/resource_paths.hpp"

namespace ncclbot::hipipe {

namespace {

// The physical range each preset value must lie in (docs/hipipe.md, "Fabric presets"): wide enough
// for any real interconnect, narrow enough that the chunk-size LP stays well conditioned and no
// makespan runs to hundreds of digits.
constexpr double kMinBandwidthGBps = 0.1, kMaxBandwidthGBps = 100000.0;
constexpr double kMaxLatencyUs = 1e6;

// Largest divisor of n that is at most cap.
int largest_divisor_at_most(int n, int cap) {
  for (int g = std::min(n, cap); g > 1; --g)
    if (n % g == 0) return g;
  return 1;
}

Span read_span(const TomlReader& r, const toml::node& node, const std::string& dim) {
  const std::string span = r.string(node, "dimension '" + dim + "': spans");
  if (span == "gpus") return Span::kGpus;
  if (span == "nodes") return Span::kNodes;
  r.fail(node, "dimension '" + dim + "': spans = \"" + span + "\", expected gpus or nodes");
}

PresetDimension read_dimension(const TomlReader& r, const toml::table& t) {
  r.only_keys(t, "[[dimension]]", {"name", "spans", "max_nodes", "latency_us", "bandwidth_GBps", "source"});
  PresetDimension d;
  d.name = r.string(r.need(t, "name", "[[dimension]] has no name"), "dimension name");
  const std::string what = "dimension '" + d.name + "': ";
  d.span = read_span(r, r.need(t, "spans", what + "missing key 'spans' (\"gpus\" or \"nodes\")"), d.name);
  d.max_nodes = d.span == Span::kGpus ? 1 : 0;
  if (const toml::node* m = r.find(t, "max_nodes"))
    d.max_nodes =
        static_cast<int>(r.integer(*m, what + "max_nodes", d.span == Span::kGpus ? 1 : 0, kMaxNodes));
  d.latency_us = r.number(r.need(t, "latency_us", what + "missing key 'latency_us' (per-step latency)"),
                          what + "latency_us", 0, kMaxLatencyUs);
  d.bandwidth_GBps =
      r.number(r.need(t, "bandwidth_GBps", what + "missing key 'bandwidth_GBps' (per-rank bandwidth)"),
               what + "bandwidth_GBps", kMinBandwidthGBps, kMaxBandwidthGBps);
  d.source = r.string(r.need(t, "source", what + "missing key 'source' (where the numbers come from)"),
                      what + "source");
  return d;
}

void check_dimension_spans(const TomlReader& r, const toml::array& dims,
                           const std::vector<PresetDimension>& ds) {
  bool gpus_taken = false, rest_taken = false;
  for (std::size_t i = 0; i < ds.size(); ++i) {
    const PresetDimension& d = ds[i];
    if (d.span == Span::kGpus && std::exchange(gpus_taken, true))
      r.fail(dims[i], "dimension '" + d.name + "': only one dimension may span GPUs");
    if (d.span == Span::kNodes && d.max_nodes == 0 && std::exchange(rest_taken, true))
      r.fail(dims[i], "dimension '" + d.name + "': only one node dimension may omit max_nodes");
  }
}

}  // namespace

FabricPreset read_fabric_preset(const std::string& path) {
  const TomlReader r(path);
  const toml::table root = r.parse_file();
  r.only_keys(root, "the preset", {"name", "description", "nodes", "gpus_per_node", "dimension"});
  FabricPreset p;
  p.file = path;
  p.name = r.string(r.need(root, "name", "missing key 'name' (the preset's name)"), "'name'");
  if (const toml::node* d = r.find(root, "description")) p.description = r.string(*d, "'description'");
  p.nodes = static_cast<int>(
      r.integer(r.need(root, "nodes", "missing key 'nodes' (default node count)"), "'nodes'", 1, kMaxNodes));
  p.gpus_per_node = static_cast<int>(
      r.integer(r.need(root, "gpus_per_node", "missing key 'gpus_per_node' (default GPUs per node)"),
                "'gpus_per_node'", 1, kMaxGpusPerNode));
  const toml::node* dims_node = r.find(root, "dimension");
  if (!dims_node) r.fail(0, "no [[dimension]] tables");
  const toml::array& dims = r.array(*dims_node, "'dimension' ([[dimension]] tables)");
  if (dims.empty()) r.fail(*dims_node, "no [[dimension]] tables");
  for (const toml::node& node : dims)
    p.dimensions.push_back(read_dimension(r, r.table(node, "[[dimension]]")));
  check_dimension_spans(r, dims, p.dimensions);
  return p;
}

std::string fabric_preset_dir() {
  if (const char* env = std::getenv("NCCLBOT_HIPIPE_FABRICS"); env && *env) return env;
  const std::string& data = resource_paths().data;
  return data.empty() ? std::string() : data + "/hipipe";
}

std::vector<std::string> fabric_preset_names() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(fabric_preset_dir(), ec))
    if (entry.path().extension() == ".toml") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

FabricPreset load_fabric_preset(std::string_view name_or_path) {
  const std::string arg(name_or_path);
  if (arg.find('/') != std::string::npos || (arg.size() > 5 && arg.ends_with(".toml"))) {
    if (!input_path_exists(arg)) throw InputError(arg, 0, "no such fabric file");
    return read_fabric_preset(arg);
  }
  const std::string path = fabric_preset_dir() + "/" + arg + ".toml";
  if (!input_path_exists(path)) {
    std::string known;
    for (const auto& n : fabric_preset_names()) known += (known.empty() ? "" : ", ") + n;
    throw UsageError("unknown HiPIPE fabric '" + arg + "' (known: " + known + "; or give a .toml path)");
  }
  FabricPreset p = read_fabric_preset(path);
  if (p.name != arg) throw InputError(path, 0, "name = \"" + p.name + "\" does not match the file name");
  return p;
}

Network build_network(const FabricPreset& preset, int nodes, int gpus_per_node) {
  if (nodes < 1 || gpus_per_node < 1)
    throw UsageError("nodes (" + std::to_string(nodes) + ") and GPUs per node (" +
                     std::to_string(gpus_per_node) + ") must be at least 1");
  if (static_cast<long long>(nodes) * gpus_per_node < 2)
    throw UsageError("one rank: an all-reduce over a single GPU has nothing to schedule");
  Network net;
  net.name = preset.name;
  int nodes_left = nodes;
  // GPU dimension first (it may absorb nodes of a multi-node NVLink domain), then node dimensions
  // with a cap, then the one that takes the rest.
  std::vector<std::pair<const PresetDimension*, int>> sized;
  for (const auto& d : preset.dimensions)
    if (d.span == Span::kGpus) {
      const int domain_nodes = largest_divisor_at_most(nodes_left, d.max_nodes);
      nodes_left /= domain_nodes;
      sized.emplace_back(&d, gpus_per_node * domain_nodes);
    }
  for (const auto& d : preset.dimensions)
    if (d.span == Span::kNodes && d.max_nodes > 0) {
      const int g = largest_divisor_at_most(nodes_left, d.max_nodes);
      nodes_left /= g;
      sized.emplace_back(&d, g);
    }
  for (const auto& d : preset.dimensions)
    if (d.span == Span::kNodes && d.max_nodes == 0) {
      sized.emplace_back(&d, nodes_left);
      nodes_left = 1;
    }
  if (nodes_left > 1)
    throw UsageError("fabric '" + preset.name + "' cannot place " + std::to_string(nodes) +
                     " nodes: no dimension takes the remaining factor " + std::to_string(nodes_left));
  // Keep the file's dimension order (innermost first) for the default schedule.
  for (const auto& d : preset.dimensions)
    for (const auto& [dim, size] : sized)
      if (dim == &d && size > 1) net.dimensions.push_back({d.name, size, d.latency_us, d.bandwidth_GBps});
  validate_network(net);
  return net;
}

}  // namespace ncclbot::hipipe
