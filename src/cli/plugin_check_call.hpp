#pragma once
// `plugin-check` as a library call (cli/replay_call.hpp has the pattern): the built tuner plugin,
// loaded as NCCL loads it and driven with a sweep, checked to make the replay engine's decisions
// call for call (local mode, or leader mode over several processes; plugin_check/plugin_check.hpp);
// typed options in, the totals and every first difference out.
#include <nlohmann/json.hpp>
#include <string>

#include "ncclbot/core/sweep.hpp"
#include "ncclbot/replay/policy_spec.hpp"
#include "plugin_check/plugin_check.hpp"

namespace ncclbot::cli {

// The check's settings (the plugin, the sweep, seed, horizon, delay, feed, log, ranks, ...) and the
// policy and contexts to check.
struct PluginCheckCallOptions : plugin_check::CheckSettings {
  std::string policy;              // one policy spec that runs inside NCCL
  std::string nodes, collectives;  // as the command line gives them; empty: every context
};

struct PluginCheckCallResult {
  Sweep sweep;
  PolicySpec spec;
  plugin_check::CheckTotals totals;
  bool equal = false;  // every decision equal, every latency joined, no rank failed
};

// UsageError on a bad option or a policy that cannot run inside NCCL; InputError on a bad sweep or
// one without the prior NCCL's cost table comes from.
PluginCheckCallResult plugin_check_call(const PluginCheckCallOptions& options);

// The JSON document `plugin-check --json` prints.
nlohmann::json plugin_check_document(const PluginCheckCallResult& result,
                                     const PluginCheckCallOptions& options);

}  // namespace ncclbot::cli
