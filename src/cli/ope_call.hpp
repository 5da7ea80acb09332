#pragma once
// `ope` as a library call (cli/replay_call.hpp has the pattern): off-policy evaluation from the
// plugin's decision logs (docs/ope.md). For each target policy, IPS, SNIPS and DR estimates of its
// mean latency per logged call with block-bootstrap intervals and the effective sample size, the
// replay method's for a learning target where the log allows it, and with a sweep the truth beside
// them; typed options in, typed estimates out, no printing.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "cli/block_bootstrap_options.hpp"
#include "ncclbot/log/decision_log.hpp"
#include "ncclbot/ope/off_policy.hpp"
#include "ncclbot/ope/replay_method.hpp"

namespace ncclbot::cli {

struct OpeCallOptions {
  std::vector<std::string> logs;
  std::vector<std::string> policies;  // auto, a policy spec (evaluated stationary), or table:FILE
  std::string sweep_path;             // a forced-arm sweep of the logged contexts, for the truth; or none
  int resamples = 999;
  uint64_t seed = 0;
  double level = 0.95;
  BlockBootstrapOptions blocks;
};

// What the logs hold, as read.
struct OpeLogSummary {
  uint64_t calls = 0, graph_replays = 0, knob_calls = 0;
  size_t contexts = 0;
  std::string behaviour;
  std::string knobs;  // a knob log's knob lists; empty for a slot log
  size_t arms = 0;    // a knob log's arms
  std::vector<DecisionLogFile> files;
  size_t skipped_latencies = 0, overridden_calls = 0, symmetric_calls = 0, dropped_tail_bytes = 0;
  std::string block_rule, block_rule_text;  // the rule in words, and as --block-length gives it
  uint64_t shortest_block = 0, longest_block = 0;
};

struct OpeTargetResult {
  std::string policy;
  std::optional<double> truth_us;           // with a sweep
  std::vector<EstimatorResult> estimators;  // IPS, SNIPS, DR
  bool learning = false;                    // a policy spec: the replay method was tried
  std::optional<ReplayMethodResult> replay;
  std::string replay_unavailable;          // why not, where the log does not allow it
  std::optional<double> replay_truth_us;   // with a sweep without call dynamics
  bool replay_truth_has_dynamics = false;  // with a sweep that has them: no truth computed
};

struct OpeCallResult {
  OpeLogSummary logs;
  double level = 0.95;
  int resamples = 999;
  std::vector<OpeTargetResult> targets;  // in the order given
};

// UsageError on a bad option or target, InputError on a bad log or sweep, or an estimate that is
// not finite.
OpeCallResult ope_call(const OpeCallOptions& options);

// The JSON document `ope --json` prints.
nlohmann::json ope_document(const OpeCallResult& result);
// The summary `ope` prints (on stderr with --json).
void print_ope(const OpeCallResult& result, std::ostream& os);

}  // namespace ncclbot::cli
