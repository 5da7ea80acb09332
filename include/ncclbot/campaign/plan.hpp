#pragma once
// A forced-arm nccl-tests campaign: one run per (nodes, collective, arm) NCCL can run on the
// fabric, each timing every size with per-iteration output (-I 1 -J), and what it will cost. The
// arms come from the cost model's own enabling rules (campaign/arm_exclusion.hpp), the times from
// its predictions; docs/campaign.md.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ncclbot/campaign/knob_point.hpp"
#include "ncclbot/core/collective.hpp"
#include "ncclbot/sim/fabric.hpp"

namespace ncclbot::campaign {

enum class Launcher { kSrun, kMpirun };

struct PlanOptions {
  std::vector<int> nodes;  // hosts per run
  int gpus_per_node = 0;   // 0: the preset's GPUs per host
  std::vector<Collective> collectives = {Collective::kAllReduce, Collective::kAllGather,
                                         Collective::kReduceScatter};
  uint64_t min_bytes = 8;
  uint64_t max_bytes = uint64_t(8) << 30;
  uint64_t step_factor = 2;
  int iters = 50;
  int warmup = 5;
  std::vector<int> arms;  // slots to consider; empty: all of NCCL's
  // Knob points: every arm runs once per (channel count, chunk size); 0 is NCCL's own value. A chunk
  // size is planned only for the protocols whose grain it fits (knob_point.hpp).
  std::vector<int> channels = {0};
  std::vector<uint64_t> chunk_bytes = {0};
  Launcher launcher = Launcher::kSrun;
  // The NCCL the runs use (MAJOR.MINOR). From 2.31 a run forces its arm for its own collective
  // alone (NCCL_ALGO=AllReduce:Ring): a plain NCCL_ALGO there disables every other algorithm of
  // every function (io/nccl_tests/forced_list.hpp).
  std::string nccl_version = "2.32";
  double startup_s = 30.0;  // per job: allocation, launch and communicator creation
};

struct PlannedRun {
  std::string id;  // n2-allreduce-ring-ll[-ch8][-chunk65536]: file names and the job array's order
  int nodes = 0;
  Collective collective = Collective::kAllReduce;
  int slot = 0;
  KnobPoint knobs;
  std::vector<uint64_t> sizes;  // the sizes the run prints, -b sizes.front() -e sizes.back()
  double seconds = 0.0;         // predicted wall time, start-up included
  std::vector<double> call_us;  // the cost model's time of one call at each of `sizes`
};

struct LeftOut {
  int nodes = 0;
  Collective collective = Collective::kAllReduce;
  int slot = -1;             // -1: sizes, not an arm
  uint64_t chunk_bytes = 0;  // the chunk size left out for this arm; 0: the arm itself
  std::string reason;
};

struct Plan {
  std::string fabric;
  int gpus_per_node = 0;
  PlanOptions options;
  std::vector<PlannedRun> runs;  // by nodes, then collective, slot, channels, chunk size
  std::vector<LeftOut> left_out;
};

Plan make_plan(const sim::FabricPreset& fabric, const PlanOptions& options);

// Whether the runs of `options` force their arm per function (NCCL 2.31 or later).
bool forces_per_function(const PlanOptions& options);
// The NCCL_ALGO and NCCL_PROTO values a run exports: "Ring" and "LL", or from 2.31 on
// "AllReduce:Ring" and "AllReduce:LL".
std::pair<std::string, std::string> forced_values(const PlanOptions& options, const PlannedRun& run);

// nccl-tests' program for a collective: all_reduce_perf, all_gather_perf, ...
std::string test_binary(Collective c);
// "allreduce", "allgather", ...: the lower-case spelling used in ids and the manifest.
std::string collective_key(Collective c);
std::string_view launcher_name(Launcher l);
Launcher parse_launcher(std::string_view s);  // "srun" | "mpirun"; UsageError otherwise

// Cluster time of a set of runs: wall seconds and GPU-hours (seconds x GPUs / 3600).
struct Cost {
  size_t runs = 0;
  double seconds = 0.0, gpu_hours = 0.0;
};
Cost cost_of(const Plan& plan, int nodes);  // nodes = 0: every run

// The same campaign timed by ncclbot-sweep (NCCL >= 2.31, docs/campaign.md "Forced arms per call"),
// as sweep.sh runs it: one launch per node count and collective (each collective has its own sizes),
// and per size every planned arm's call and NCCL's own once per round for 1 + warmup + iters rounds
// (the probe, the warm-up, the timed rounds), one placement per call. NCCL's own call is priced as the
// fastest planned arm's, an assumption of this estimate. ncclbot-sweep sets channels per call but no chunk
// size, so runs with a chunk size stay nccl-tests runs: `runs` counts those, and their time is in `seconds`
// and `gpu_hours` too.
Cost sweep_cost_of(const Plan& plan, int nodes);  // nodes = 0: every node count

}  // namespace ncclbot::campaign
