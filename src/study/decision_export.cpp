#include "study/decision_export.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>

#include "ncclbot/core/error.hpp"
#include "ncclbot/core/names.hpp"

namespace ncclbot::study {
namespace {

using nlohmann::json;

struct Key {
  std::string fabric, collective;
  int nodes, gpus_per_node;
  auto operator<=>(const Key&) const = default;
};

// The split point between two measured sizes: floor(sqrt(a*b)) computed without overflow.
uint64_t geometric_split(uint64_t a, uint64_t b) {
  const long double g = std::sqrt(static_cast<long double>(a) * static_cast<long double>(b));
  uint64_t s = static_cast<uint64_t>(g);
  if (s < a) s = a;
  if (s >= b) s = b - 1;
  return s;
}

std::string lower_nccl_name(std::string s, bool is_algo) {
  // NCCL's example tuner spells algorithms collnet_direct, collnet_chain, nvls_tree.
  if (is_algo) {
    if (s == "CollNetDirect") return "collnet_direct";
    if (s == "CollNetChain") return "collnet_chain";
    if (s == "NVLSTree") return "nvls_tree";
  }
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

}  // namespace

std::vector<DecisionRow> decision_rows(const json& results, const ExportSelection& sel) {
  bool policy_known = false;
  for (const auto& p : results.at("policies")) policy_known = policy_known || p.at("name") == sel.policy;
  if (!policy_known) {
    std::string names;
    for (const auto& p : results.at("policies"))
      names += (names.empty() ? "" : ", ") + p.at("name").get<std::string>();
    throw UsageError("--policy: the study has no policy '" + sel.policy + "' (it has: " + names + ")");
  }
  for (const auto& s : sel.scenarios) {
    bool known = false;
    for (const auto& sc : results.at("scenarios")) known = known || sc.at("name") == s;
    if (!known) throw UsageError("--scenario: the study has no scenario '" + s + "'");
  }
  std::map<std::string, const json*> scenario_by_name;
  for (const auto& sc : results.at("scenarios")) scenario_by_name[sc.at("name")] = &sc;

  // Context -> (bytes -> decision), checking that overlapping scenarios agree.
  std::map<Key, std::map<uint64_t, Arm>> cells;
  for (const auto& score : results.at("scores")) {
    if (score.at("policy") != sel.policy) continue;
    const std::string scenario = score.at("scenario");
    if (!sel.scenarios.empty() &&
        std::find(sel.scenarios.begin(), sel.scenarios.end(), scenario) == sel.scenarios.end())
      continue;
    const json& ctxs = scenario_by_name.at(scenario)->at("score").at("context_list");
    const json& decisions = score.at("decisions");
    for (size_t i = 0; i < ctxs.size(); ++i) {
      const json& c = ctxs[i];
      if (!sel.fabric.empty() && c.at("fabric") != sel.fabric) continue;
      const std::string label = decisions.at(i);
      const std::optional<Arm> arm = parse_arm_label(label);
      if (!arm) throw UsageError("results.json: malformed decision '" + label + "'");
      Key k{c.at("fabric"), c.at("collective"), c.at("nodes"), c.at("gpus_per_node")};
      if (arm->algo == Algo::kHiPipe)
        throw UsageError("policy '" + sel.policy + "' chose the simulated HiPIPE arm for " + k.fabric + " " +
                         k.collective + " at " + std::to_string(k.nodes) + " nodes, " +
                         std::to_string(c.at("bytes").get<uint64_t>()) +
                         " B; NCCL cannot run it, so there is no table to export (pick a policy or "
                         "scenario without it)");
      auto [it, inserted] = cells[k].emplace(c.at("bytes").get<uint64_t>(), *arm);
      if (!inserted && it->second != *arm)
        throw UsageError("scenarios decide " + k.fabric + " " + k.collective + " at " +
                         std::to_string(k.nodes) + " nodes, " + std::to_string(it->first) +
                         " B differently; pick one with --scenario");
    }
  }
  if (!sel.fabric.empty() && cells.empty())
    throw UsageError("--fabric: no decisions for fabric '" + sel.fabric + "'");

  std::vector<DecisionRow> rows;
  for (const auto& [k, by_size] : cells) {
    std::vector<std::pair<uint64_t, Arm>> v(by_size.begin(), by_size.end());
    for (size_t i = 0; i < v.size(); ++i) {
      const uint64_t lo = i == 0 ? 0 : geometric_split(v[i - 1].first, v[i].first) + 1;
      const uint64_t hi = i + 1 == v.size() ? UINT64_MAX : geometric_split(v[i].first, v[i + 1].first);
      if (i > 0 && v[i - 1].second == v[i].second) {
        rows.back().max_bytes = hi;  // same arm as the previous size: extend its row
        continue;
      }
      const Arm& a = v[i].second;
      rows.push_back({k.fabric, k.collective, k.nodes, k.gpus_per_node, lo, hi,
                      std::string(algo_name(a.algo)), std::string(proto_name(a.proto)), int(a.channels),
                      a.chunk_bytes});
    }
  }
  return rows;
}

std::string format_ncclbot_table(const std::vector<DecisionRow>& rows, const std::string& comment) {
  // The knob columns (the plugin's table reader takes them: docs/plugin.md) only where some row sets
  // one, so an algorithm x protocol table keeps its columns.
  const bool knobs =
      std::any_of(rows.begin(), rows.end(), [](const DecisionRow& r) { return r.channels || r.chunk_bytes; });
  std::string out = "# " + comment +
                    "\nfabric,collective,nodes,gpus_per_node,min_bytes,max_bytes,algo,proto" +
                    (knobs ? ",channels,chunk_bytes\n" : "\n");
  for (const auto& r : rows) {
    out += r.fabric + "," + r.collective + "," + std::to_string(r.nodes) + "," +
           std::to_string(r.gpus_per_node) + "," + std::to_string(r.min_bytes) + "," +
           std::to_string(r.max_bytes) + "," + r.algo + "," + r.proto;
    if (knobs) out += "," + std::to_string(r.channels) + "," + std::to_string(r.chunk_bytes);
    out += "\n";
  }
  return out;
}

std::string format_nccl_csv(const std::vector<DecisionRow>& rows, const std::string& comment) {
  std::map<std::tuple<std::string, int, int>, std::string> shape_fabric;
  for (const auto& r : rows) {
    const auto key = std::make_tuple(r.collective, r.nodes, r.nodes * r.gpus_per_node);
    auto [it, inserted] = shape_fabric.emplace(key, r.fabric);
    if (!inserted && it->second != r.fabric)
      throw UsageError("NCCL's CSV format has no fabric column, and fabrics '" + it->second + "' and '" +
                       r.fabric + "' both have " + r.collective + " at " + std::to_string(r.nodes) +
                       " nodes; choose one with --fabric");
  }
  for (const auto& r : rows)
    if (r.chunk_bytes != 0)
      throw UsageError("NCCL's CSV format has no chunk size column, and the decisions set one (" +
                       r.collective + " at " + std::to_string(r.nodes) +
                       " nodes: " + std::to_string(r.chunk_bytes) +
                       " B); use --format ncclbot, whose table the plugin reads with its chunk sizes");
  std::string out =
      "# " + comment + "\n# collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks\n";
  for (const auto& r : rows)
    out += lower_nccl_name(r.collective, false) + "," + std::to_string(r.min_bytes) + "," +
           std::to_string(r.max_bytes) + "," + lower_nccl_name(r.algo, true) + "," +
           lower_nccl_name(r.proto, false) + "," + (r.channels ? std::to_string(r.channels) : "-1") + "," +
           std::to_string(r.nodes) + "," + std::to_string(r.nodes * r.gpus_per_node) + "\n";
  return out;
}

}  // namespace ncclbot::study
