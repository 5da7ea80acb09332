#pragma once
// `model` as a library call (cli/replay_call.hpp has the pattern): NCCL's cost-model prediction for
// every valid arm of one context and AUTO's pick, typed options in, the table out, no printing.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "ncclbot/core/collective.hpp"
#include "ncclbot/model/cost_model.hpp"

namespace ncclbot::cli {

struct ModelCallOptions {
  std::string fabric = "h100-ib-a";
  std::string collective = "allreduce";
  int nodes = 1;
  std::optional<int> gpus_per_node;  // nullopt: the preset's
  uint64_t bytes = 0;
};

struct ModelCallResult {
  std::string fabric;
  Collective collective = Collective::kAllReduce;
  int nodes = 1, gpus_per_node = 1;
  uint64_t bytes = 0;
  model::Topology topology;  // as NCCL sees it
  model::CostTable table;
  int pick = -1;  // AUTO's slot, -1: no valid arm
};

// UsageError naming the option on a bad count, size or collective; InputError on an unknown fabric.
ModelCallResult model_call(const ModelCallOptions& options);

// The JSON document `model --json` prints.
nlohmann::json model_document(const ModelCallResult& result);

}  // namespace ncclbot::cli
