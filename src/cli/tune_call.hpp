#pragma once
// `tune` as a library call (cli/replay_call.hpp has the pattern): typed options in, the report and
// every grid's tuned point out, no command line and no printing. The `ncclbot tune` command parses
// its options into these and prints the result (cli/tune_report.hpp); the Python package calls it
// directly. Sharded and MPI runs (`--phase`/`--shard`, mpirun) stay the command's.
#include <string>
#include <vector>

#include "cli/replay_run_options.hpp"
#include "cli/tune_report.hpp"
#include "ncclbot/core/context_filter.hpp"
#include "ncclbot/tune/tune.hpp"

namespace ncclbot::cli {

// The policies are grids, one per policy.
struct TuneCallOptions : ReplayRunOptions {
  // As the command line gives them: "4,8", "allreduce,allgather"; empty collectives: all.
  std::string tune_nodes = "4,8", score_nodes = "16,32", collectives;
  std::string objective = "mean";
};

struct TuneCallResult {
  TuneReport report;
  std::vector<TunedPolicy> tuned;
};

// The whole tune in this process; UsageError or InputError (one line, naming what is wrong) on bad
// options or input, before any work where the options alone tell.
TuneCallResult tune_call(const TuneCallOptions& options);

// The pieces the command's sharded and MPI forms share with tune_call().
// The contexts of the two phases, as the node lists and collectives select them.
struct TuneFilters {
  ContextFilter tune, score;
};
// Checks the options and parses everything that needs no sweep into `req` (backend, objective) and
// the filters it returns, so that usage errors come before the sweep is read.
TuneFilters check_tune_call(const TuneCallOptions& options, TuneRequest& req);
// Fills in the rest of the request: the sweep's contexts of each phase, the replay sizes, the feedback
// schedule and its charges, and the threads (the node's cores shared by `ranks_per_node` processes
// unless the options name them).
void fill_tune_request(TuneRequest& req, const TuneCallOptions& options, const Sweep& sweep,
                       const TuneFilters& filters, int ranks_per_node);
// The report's setup fields, from the options and the filled request.
TuneReport tune_report_setup(const TuneCallOptions& options, const TuneRequest& req);
// Both phases of the filled request, with a progress line (shown when `show_progress`).
std::vector<TunedPolicy> run_tune_phases(TuneRequest& req, bool show_progress);

}  // namespace ncclbot::cli
