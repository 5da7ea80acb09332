#include "ncclbot/hipipe/fabric_preset.hpp"

#include <toml++/toml.h>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "io/toml_reader.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/io/output_file.hpp"
#include "ncclbot/io/resource_paths.hpp"

namespace ncclbot::hipipe {

namespace {

template <typename T>
T required(const toml::table& table, std::string_view key, const std::string& file, long line,
           std::string_view what) {
  const TomlReader r(file);
  const toml::node* node = table.get(key);
  if (!node) r.fail(line, "missing key '" + std::string(key) + "' (" + std::string(what) + ")");
  const std::string name = "'" + std::string(key) + "'";
  if constexpr (std::is_same_v<T, std::string>)
    return r.string(*node, name);
  else if constexpr (std::is_same_v<T, double>)
    return r.number(*node, name);
  else
    return static_cast<T>(r.integer(*node, name));
}

// Largest divisor of n that is at most cap.
int largest_divisor_at_most(int n, int cap) {
  for (int g = std::min(n, cap); g > 1; --g)
    if (n % g == 0) return g;
  return 1;
}

}  // namespace

FabricPreset read_fabric_preset(const std::string& path) {
  const toml::table root = TomlReader(path).parse_file();
  FabricPreset p;
  p.file = path;
  p.name = required<std::string>(root, "name", path, 0, "the preset's name");
  if (auto d = root["description"].value<std::string>()) p.description = *d;
  p.nodes = required<int>(root, "nodes", path, 0, "default node count");
  p.gpus_per_node = required<int>(root, "gpus_per_node", path, 0, "default GPUs per node");
  if (p.nodes < 1 || p.gpus_per_node < 1)
    throw InputError(path, 0, "nodes and gpus_per_node must be at least 1");
  const toml::array* dims = root["dimension"].as_array();
  if (!dims || dims->empty()) throw InputError(path, 0, "no [[dimension]] tables");
  bool rest_taken = false;
  for (const toml::node& node : *dims) {
    const long line = toml_line(node);
    const toml::table* t = node.as_table();
    if (!t) throw InputError(path, line, "[[dimension]] must be a table");
    PresetDimension d;
    d.name = required<std::string>(*t, "name", path, line, "the dimension's name");
    const std::string span = required<std::string>(*t, "spans", path, line, "\"gpus\" or \"nodes\"");
    if (span == "gpus") {
      d.span = Span::kGpus;
      d.max_nodes = 1;
    } else if (span == "nodes") {
      d.span = Span::kNodes;
    } else {
      throw InputError(path, line,
                       "dimension '" + d.name + "': spans = \"" + span + "\", expected gpus or nodes");
    }
    if (t->contains("max_nodes")) d.max_nodes = required<int>(*t, "max_nodes", path, line, "");
    if (d.max_nodes < 0 || (d.span == Span::kGpus && d.max_nodes < 1))
      throw InputError(path, line, "dimension '" + d.name + "': max_nodes must be positive");
    d.latency_us = required<double>(*t, "latency_us", path, line, "per-step latency");
    d.bandwidth_GBps = required<double>(*t, "bandwidth_GBps", path, line, "per-rank bandwidth");
    d.source = required<std::string>(*t, "source", path, line, "where the numbers come from");
    if (!std::isfinite(d.latency_us) || d.latency_us < 0)
      throw InputError(path, line, "dimension '" + d.name + "': latency_us must be finite and >= 0");
    if (!std::isfinite(d.bandwidth_GBps) || d.bandwidth_GBps <= 0)
      throw InputError(path, line, "dimension '" + d.name + "': bandwidth_GBps must be finite and > 0");
    if (d.span == Span::kGpus && std::any_of(p.dimensions.begin(), p.dimensions.end(),
                                             [](const PresetDimension& x) { return x.span == Span::kGpus; }))
      throw InputError(path, line, "dimension '" + d.name + "': only one dimension may span GPUs");
    if (d.span == Span::kNodes && d.max_nodes == 0) {
      if (rest_taken)
        throw InputError(path, line,
                         "dimension '" + d.name + "': only one node dimension may omit max_nodes");
      rest_taken = true;
    }
    p.dimensions.push_back(std::move(d));
  }
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
