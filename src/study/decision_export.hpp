#pragma once
// The per-context decisions of one policy of a finished study, as a decision table for the NCCL
// tuner plugin: ncclbot's own table format (docs/plugin.md) or NCCL's example CSV tuner format
//   collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks
// A context's decision is the arm the policy's frozen configuration commits to at the horizon on
// that score context. Sizes between two measured ones are split at their geometric mean; the
// smallest measured size extends down to 0 and the largest up to the maximum, and neighbouring rows
// with the same arm are merged. The rows are the table codec's (table/decision_table.hpp), which
// writes them in either format.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "table/decision_table.hpp"

namespace ncclbot::study {

using table::DecisionRow;

struct ExportSelection {
  std::string policy;
  std::vector<std::string> scenarios;  // empty = all
  std::string fabric;                  // empty = all
};

// Throws UsageError for an unknown policy/scenario/fabric, or when two scenarios decide the same
// context differently (choose one with the selection).
std::vector<DecisionRow> decision_rows(const nlohmann::json& results, const ExportSelection& selection);

}  // namespace ncclbot::study
