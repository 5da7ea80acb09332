// `ncclbot plan`: a forced-arm nccl-tests campaign for a cluster (campaign.toml, run.sh,
// run.sbatch) with the arms NCCL can run there, the ones left out and why, and what it costs;
// `ncclbot plan --status DIR` says which of a campaign's runs are done, missing or failed. The
// library calls: cli/plan_call.hpp.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "cli/plan_call.hpp"
#include "ncclbot/core/command_streams.hpp"
#include "ncclbot/core/error.hpp"

namespace ncclbot::cli {
namespace plan_command {

// The command's options: the library calls' (cli/plan_call.hpp), --status and --json.
struct PlanCliOptions {
  PlanCallOptions call;
  std::string status;
  bool json = false;
};

std::string hours(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", seconds / 3600.0);
  return buf;
}

void print_plan(const nlohmann::json& j, std::ostream& os) {
  os << "plan: " << j["fabric"].get<std::string>() << ", " << j["gpus_per_node"] << " GPUs per node, sizes "
     << j["min_bytes"] << ".." << j["max_bytes"] << " B (x" << j["step_factor"] << "), " << j["iters"]
     << " timed iterations after " << j["warmup"] << " warm-up, launcher " << j["launcher"].get<std::string>()
     << "\n";
  os << "forcing for NCCL " << j["nccl_version"].get<std::string>() << ": "
     << (j["forced_per_function"].get<bool>()
             ? "each run names its own collective (NCCL_ALGO=AllReduce:Ring); a plain value would leave "
               "every other collective no algorithm from 2.31 on"
             : "plain NCCL_ALGO/NCCL_PROTO values (one collective per nccl-tests run)")
     << "\n";
  if (j["channels"] != nlohmann::json::array({0}) || j["chunk_bytes"] != nlohmann::json::array({0}))
    os << "knob points: channels " << j["channels"].dump() << " x chunk_bytes " << j["chunk_bytes"].dump()
       << " (0: NCCL's own; one run per arm and knob point)\n";
  os << "runs: " << j["runs"].size() << " (one per nodes, collective and arm; one job array task each)\n";
  os << "left out: " << j["left_out"].size() << "\n";
  for (const auto& l : j["left_out"])
    os << "  " << l["nodes"] << " nodes " << l["collective"].get<std::string>() << " "
       << l["reason"].get<std::string>() << "\n";
  os << "expected cluster time (cost model x calls x sizes + " << j["startup_s"] << " s start-up per job):\n";
  char line[128];
  std::snprintf(line, sizeof line, "  %6s %6s %10s %10s\n", "nodes", "runs", "wall h", "GPU-hours");
  os << line;
  for (const auto& c : j["cost"]["by_nodes"]) {
    std::snprintf(line, sizeof line, "  %6d %6zu %10s %10.2f\n", c["nodes"].get<int>(),
                  c["runs"].get<size_t>(), hours(c["seconds"].get<double>()).c_str(),
                  c["gpu_hours"].get<double>());
    os << line;
  }
  const auto& t = j["cost"]["total"];
  std::snprintf(line, sizeof line, "  %6s %6zu %10s %10.2f\n", "total", t["runs"].get<size_t>(),
                hours(t["seconds"].get<double>()).c_str(), t["gpu_hours"].get<double>());
  os << line;
  const auto& s = j["cost"]["ncclbot_sweep"];
  os << "with ncclbot-sweep (NCCL >= 2.31: every arm of a node count and collective in one launch, call by "
        "call): "
     << hours(s["seconds"].get<double>()) << " h wall, " << hours(s["gpu_hours"].get<double>() * 3600.0)
     << " GPU-hours";
  if (s["nccl_tests_runs"].get<size_t>() > 0)
    os << " (" << s["nccl_tests_runs"].get<size_t>() << " runs with a chunk size still by nccl-tests)";
  os << "\n";
}

// One line per run or launch of a campaign folder (its id after `label`), then their states counted under
// `what`.
void print_states(const std::string& what, const std::vector<PlanRunState>& states, const std::string& label,
                  std::ostream& os) {
  size_t counts[3] = {0, 0, 0};
  for (const PlanRunState& s : states) {
    ++counts[int(s.state)];
    os << "  " << campaign::run_state_name(s.state) << "  " << label << s.id
       << (s.reason.empty() ? "" : ": " + s.reason) << "\n";
  }
  os << what << ": " << counts[0] << " done, " << counts[1] << " missing, " << counts[2] << " failed\n";
}

// The state of each run (and sweep.sh launch) of a campaign folder, and their counts.
void print_status(const PlanStatusResult& r, std::ostream& os) {
  print_states(std::to_string(r.runs.size()) + " runs", r.runs, "", os);
  if (!r.sweeps.empty())
    print_states("sweep.sh, " + std::to_string(r.sweeps.size()) + " launches", r.sweeps, "sweep ", os);
}

Action setup(CLI::App& app) {
  auto opt = std::make_shared<PlanCliOptions>();
  app.add_option("--fabric", opt->call.fabric, "fabric preset of the cluster (data/fabrics/NAME.toml)");
  app.add_option("--nodes", opt->call.nodes, "node counts, e.g. 2,4,8");
  app.add_option("--gpus-per-node", opt->call.gpus_per_node, "GPUs (ranks) per node (default: the preset's)");
  app.add_option("--collectives", opt->call.collectives, "default allreduce,allgather,reducescatter");
  app.add_option("--min-bytes", opt->call.min_bytes, "smallest size, nccl-tests -b (default 8)");
  app.add_option("--max-bytes", opt->call.max_bytes, "largest size, nccl-tests -e (default 8G)");
  app.add_option("--step-factor", opt->call.step_factor, "size factor, nccl-tests -f (default 2)");
  app.add_option("--iters", opt->call.iters, "timed iterations per size, nccl-tests -n (default 50)");
  app.add_option("--warmup", opt->call.warmup, "warm-up iterations, nccl-tests -w (default 5)");
  app.add_option("--arms", opt->call.arms,
                 "only these arms: ALGO/PROTO or ALGO, comma-separated (default: all)");
  app.add_option("--channels", opt->call.channels,
                 "channel counts to force (NCCL_MIN_CTAS = NCCL_MAX_CTAS), 0 = NCCL's own (default 0)");
  app.add_option(
      "--chunk-bytes", opt->call.chunk_bytes,
      "chunk sizes to force through ncclbot's tuner plugin (NCCL 2.30.3+), 0 = NCCL's own (default 0)");
  app.add_option("--launcher", opt->call.launcher, "srun (default) or mpirun");
  app.add_option(
      "--nccl-version", opt->call.nccl_version,
      "the NCCL the runs use (default 2.32); from 2.31 each run forces its arm for its own collective");
  app.add_option("--startup-s", opt->call.startup_s,
                 "start-up seconds per job in the cost estimate (default 30)");
  app.add_option("--out", opt->call.out, "campaign folder to write");
  app.add_option("--status", opt->status,
                 "report each run of this campaign folder as done, missing or failed");
  app.add_flag("--json", opt->json, "print one JSON document on stdout");
  return [opt] {
    std::ostream& os = opt->json ? command_err() : command_out();
    if (!opt->status.empty()) {
      if (!opt->call.out.empty() || !opt->call.fabric.empty())
        throw UsageError("--status takes no other plan options");
      const PlanStatusResult r = plan_status_call(opt->status);
      print_status(r, os);
      if (opt->json) command_out() << plan_status_document(r).dump(2) << "\n";
      return 0;
    }
    const PlanCallResult r = plan_call(opt->call);
    const std::string& out = r.out;
    const nlohmann::json j = plan_document(r);
    print_plan(j, os);
    os << "wrote " << out << "/campaign.toml, run.sh, run.sbatch; run `bash " << out
       << "/run.sbatch` (Slurm) or `bash " << out << "/run.sh`, then `ncclbot ingest " << out << "`\n";
    if (r.sweep_launches > 0)
      os << "wrote " << out << "/sweep.sh and sweep.sbatch: the same arms by ncclbot-sweep in "
         << r.sweep_launches << (r.sweep_launches == 1 ? " launch" : " launches")
         << " (one per node count and collective; runs with a chunk size stay run.sh's), "
            "each writing "
         << out << "/sweeps/NAME.csv\n";
    if (opt->json) command_out() << j.dump(2) << "\n";
    return 0;
  };
}

const bool registered = register_command(
    {"plan", "write a forced-arm nccl-tests campaign (manifest, Slurm array, script) and its cost", setup});

}  // namespace plan_command
}  // namespace ncclbot::cli
