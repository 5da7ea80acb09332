#pragma once
// The per-context decisions of one policy of a finished study, as a decision table for the NCCL
// tuner plugin: ncclbot's own table format (docs/plugin.md) or NCCL's example CSV tuner format
//   collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks
// A context's decision is the arm the policy's frozen configuration commits to at the horizon on
// that score context. Sizes between two measured ones are split at their geometric mean; the
// smallest measured size extends down to 0 and the largest up to the maximum, and neighbouring rows
// with the same arm are merged.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ncclbot::study {

struct DecisionRow {
  std::string fabric, collective;  // collective as NCCL spells it: "AllReduce"
  int nodes = 0, gpus_per_node = 0;
  uint64_t min_bytes = 0, max_bytes = 0;  // inclusive
  std::string algo, proto;                // "Ring", "LL128"
  int channels = 0;                       // 0: NCCL's own
  uint32_t chunk_bytes = 0;               // 0: NCCL's own
};

struct ExportSelection {
  std::string policy;
  std::vector<std::string> scenarios;  // empty = all
  std::string fabric;                  // empty = all
};

// Throws UsageError for an unknown policy/scenario/fabric, or when two scenarios decide the same
// context differently (choose one with the selection).
std::vector<DecisionRow> decision_rows(const nlohmann::json& results, const ExportSelection& selection);

std::string format_ncclbot_table(const std::vector<DecisionRow>& rows, const std::string& comment);
// NCCL's format has no fabric column: rows of two fabrics with the same shape are an error.
std::string format_nccl_csv(const std::vector<DecisionRow>& rows, const std::string& comment);

}  // namespace ncclbot::study
