#pragma once
// `inspect` as a library call (cli/replay_call.hpp has the pattern): what a sweep holds and, when it
// carries the model's prior, how much NCCL's default loses priced on the measured arms; typed options
// in, a typed summary out, no printing.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "ncclbot/stats/loss_summary.hpp"

namespace ncclbot::cli {

struct InspectCallOptions {
  std::string sweep_path;
  std::string nodes, collectives;  // as the command line gives them: "16,32", "allreduce"; empty: all
};

// The losses of one pick per context: their summary and how many are within 1% of the best.
struct PickLosses {
  LossSummary summary;
  long within_1pct = 0;
};

struct InspectCallResult {
  size_t contexts = 0;  // selected
  size_t arms = 0;      // distinct arms over the selected contexts
  int samples = 0;      // per arm
  bool knob_arms = false;
  size_t min_arms = 0, max_arms = 0;  // per context; meaningful when contexts > 0
  uint64_t min_bytes = 0, max_bytes = 0;
  // NCCL's default (AUTO's algorithm and protocol; on a knob sweep at NCCL's own channels and chunk)
  // against the best arm measured; nullopt without a prior.
  std::optional<PickLosses> auto_loss;
  // Knob sweeps: the best arm at NCCL's own channels and chunk against the best arm.
  std::optional<PickLosses> knob_headroom;
};

// UsageError on a bad node or collective list; InputError on a bad sweep or a filter that selects
// nothing.
InspectCallResult inspect_call(const InspectCallOptions& options);

// The JSON document `inspect --json` prints.
nlohmann::json inspect_document(const InspectCallResult& result);

}  // namespace ncclbot::cli
