#pragma once
// `replay` as a library call (docs/python.md): typed options in, the report and the results out,
// no command line and no printing. The `ncclbot replay` command parses its options into these and
// prints the result (cli/replay_report.hpp); the Python package calls it directly. Sharded and MPI
// runs (`--shard`, mpirun) stay the command's: they write partials, not a result.
#include <optional>
#include <string>
#include <vector>

#include "cli/as_deployed.hpp"
#include "cli/replay_report.hpp"
#include "cli/replay_run_options.hpp"
#include "ncclbot/core/context_filter.hpp"
#include "ncclbot/replay/backend.hpp"
#include "ncclbot/replay/cpu_engine.hpp"
#include "ncclbot/replay/policy_spec.hpp"

namespace ncclbot::cli {

struct ReplayCallOptions : ReplayRunOptions {
  std::string nodes, collectives;  // as the command line gives them: "16,32", "allreduce,allgather"
  std::string raw_path;            // one CSV row per replay, or none
  std::optional<double> budget;    // check every replay against 1 + budget times NCCL's default
};

struct ReplayCallResult {
  ReplayReport report;
  ReplayResults results;
};

// The whole replay in this process; UsageError or InputError (one line, naming what is wrong) on
// bad options or input, before any work where the options alone tell. Warnings go to command_err().
ReplayCallResult replay_call(const ReplayCallOptions& options);

// The pieces the command's sharded and MPI forms share with replay_call().
struct ReplayPlan {
  ReplayBackend backend = ReplayBackend::kCpu;
  ContextFilter filter;
  std::vector<PolicySpec> configs;  // every point of every policy grid
};
// Checks the options and parses them, so that usage errors come before the sweep is read.
ReplayPlan check_replay_call(const ReplayCallOptions& options);
// The job on `sweep` (read from options.sweep_path) and the report's setup: the backend the specs
// allow (plan.backend updated, a warning on command_err() where it changes), the selected contexts,
// the feedback schedule and its charges, the threads (the node's cores shared by `ranks_per_node`
// processes unless the options name them) and each config's frozen decisions (a supervised
// selector's, fit leave-one-out on the contexts).
struct PreparedReplayCall {
  ReplayJob job;
  ReplayReport report;
};
PreparedReplayCall prepare_replay_call(const ReplayCallOptions& options, ReplayPlan& plan, const Sweep& sweep,
                                       int ranks_per_node);

}  // namespace ncclbot::cli
