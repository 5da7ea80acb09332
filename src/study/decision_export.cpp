#include "study/decision_export.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>

#include "ncclbot/core/error.hpp"
#include "ncclbot/core/name_table.hpp"
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
      DecisionRow row;
      row.fabric = k.fabric;
      row.collective = collective_index(k.collective);
      if (row.collective < 0) throw UsageError("results.json: unknown collective '" + k.collective + "'");
      row.nodes = k.nodes;
      row.gpus_per_node = k.gpus_per_node;
      row.min_bytes = lo;
      row.max_bytes = hi;
      row.algo = int(a.algo);
      row.proto = int(a.proto);
      row.channels = int(a.channels);
      row.chunk_bytes = a.chunk_bytes;
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

}  // namespace ncclbot::study
