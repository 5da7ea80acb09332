// `ncclbot bench`: replay throughput (policy steps per second) of a backend, per policy, at 6, 12
// and 21 valid arms, on one thread and on all of them.
#include <CLI/CLI.hpp>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/command.hpp"
#include "ncclbot/bench/bench_sweep.hpp"
#include "ncclbot/bench/harness.hpp"
#include "ncclbot/core/command_streams.hpp"
#include "ncclbot/core/cuda_probe.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/core/parallel_for.hpp"
#include "ncclbot/io/sweep_csv.hpp"
#include "ncclbot/replay/backend.hpp"
#include "ncclbot/sim/simulator.hpp"

namespace ncclbot::cli {
namespace bench_command {

// Every policy the plugin can run, by name (at its defaults), in registry order.
std::vector<std::string> live_policy_names() {
  std::vector<std::string> names;
  for (PolicyKind kind : live_policies()) names.emplace_back(policy_name(kind));
  return names;
}

struct BenchOptions {
  std::string backend = "cpu";
  std::vector<std::string> policies = live_policy_names();
  std::vector<int> arms = {6, 12, 21};
  std::vector<int> threads;
  std::vector<int> cuda_blocks;
  int contexts = 32, samples = 8, seeds = 4, horizon = 4096, delay = 0;
  int repetitions = 5;
  std::string write_sweep;
  std::string observation = "off";
  bool json = false;
};

void add_bench_options(CLI::App& app, BenchOptions& opt) {
  app.add_option("--backend", opt.backend, "cpu or cuda (default cpu)");
  app.add_option("--policy", opt.policies, "policy specs to time (default: every online policy)");
  app.add_option("--arms", opt.arms,
                 "valid arms per context (default 6 12 21; above 21 knob arms, up to 512)");
  app.add_option("--threads", opt.threads, "thread counts to time (default: 1 and all cores)");
  app.add_option("--cuda-block", opt.cuda_blocks,
                 "with --backend cuda: threads per block of the replay kernels to time (default 128)");
  app.add_option("--contexts", opt.contexts, "contexts in the synthetic sweep (default 32)");
  app.add_option("--horizon", opt.horizon, "steps per replay (default 4096)");
  app.add_option("--seeds", opt.seeds, "seeds per context (default 4)");
  app.add_option("--delay", opt.delay, "feedback delay D of every replay (default 0)");
  app.add_option("--repetitions", opt.repetitions, "timed repetitions, median reported (default 5)");
  app.add_option("--write-sweep", opt.write_sweep,
                 "write the synthetic sweep for the first --arms value to this CSV and exit");
  app.add_option("--observation", opt.observation,
                 "on: give the synthetic sweep the default preset's call dynamics (warm-up, level shifts, "
                 "first-use cost; docs/simulator.md), so the replay takes its dynamic path (default off)");
  app.add_flag("--json", opt.json, "print one JSON document on stdout");
}

// The backend asked for, checked against --cuda-block, and resolved to the one that runs.
ReplayBackend bench_backend(const BenchOptions& opt) {
  const ReplayBackend requested = parse_replay_backend(opt.backend);
  if (requested == ReplayBackend::kAuto) throw UsageError("--backend: bench needs cpu or cuda, not auto");
  if (!opt.cuda_blocks.empty() && requested != ReplayBackend::kCuda)
    throw UsageError("--cuda-block needs --backend cuda");
  for (int b : opt.cuda_blocks)
    if (b < 1 || b > 1024) throw UsageError("--cuda-block: " + std::to_string(b) + " is not in 1..1024");
  return resolve_replay_backend(requested, command_err());
}

// CPU thread counts to time, or for the CUDA backend the block sizes (0: the default block).
std::vector<int> bench_widths(const BenchOptions& opt, ReplayBackend backend) {
  std::vector<int> thread_counts = opt.threads;
  if (thread_counts.empty()) {
    thread_counts = {1};
    if (default_thread_count() > 1) thread_counts.push_back(default_thread_count());
  }
  if (backend == ReplayBackend::kCuda)
    thread_counts = opt.cuda_blocks.empty() ? std::vector<int>{0} : opt.cuda_blocks;
  return thread_counts;
}

// The workload, and for the CUDA backend the device the kernels ran on, for the throughput's
// context (scripts/gpu-check.sh reads its SM count: nvidia-smi has no field for it).
nlohmann::json bench_document(const BenchOptions& opt, ReplayBackend backend) {
  nlohmann::json out;
  out["results"] = nlohmann::json::array();
  out["workload"] = {{"contexts", opt.contexts},      {"seeds", opt.seeds},
                     {"horizon", opt.horizon},        {"delay", opt.delay},
                     {"samples", opt.samples},        {"repetitions", opt.repetitions},
                     {"observation", opt.observation}};
  if (backend == ReplayBackend::kCuda) {
    const CudaProbe probe = probe_cuda();
    out["device"] = {{"name", probe.device_name},
                     {"multiprocessors", probe.multiprocessors},
                     {"compute_capability", probe.compute_capability}};
  }
  return out;
}

// Times one policy on one sweep at one width (CPU threads, or the CUDA block asked for, 0: 128):
// appends its row to out["results"] and prints its line.
void time_bench_case(const BenchOptions& opt, ReplayBackend backend, const Sweep& sweep, int arms,
                     const PolicySpec& spec, int width, nlohmann::json& out, std::ostream& human) {
  ReplayJob job;
  job.sweep = &sweep;
  for (int c = 0; c < sweep.num_contexts(); ++c) job.contexts.push_back(c);
  job.configs = {spec};
  job.seeds = opt.seeds;
  job.horizon = opt.horizon;
  job.delay = opt.delay;
  const bool cuda = backend == ReplayBackend::kCuda;
  job.threads = cuda ? 1 : std::max(1, width);
  job.device_block = cuda ? width : 0;
  double sink = 0;
  const BenchTiming t =
      measure([&] { sink += run_replay(job, backend).online[0]; }, BenchSettings{1, opt.repetitions, {}});
  const double steps = double(opt.contexts) * opt.seeds * opt.horizon;
  const double rate = steps / t.median_s;
  out["results"].push_back({{"policy", spec.text},
                            {"arms", arms},
                            {"backend", replay_backend_name(backend)},
                            {"threads", cuda ? 0 : width},
                            {"steps_per_s", rate},
                            {"steps_per_cpu_s", steps / t.median_cpu_s},
                            {"median_s", t.median_s},
                            {"min_s", t.min_s},
                            {"max_s", t.max_s}});
  if (cuda) out["results"].back()["block_requested"] = width > 0 ? width : 128;
  human << std::left << std::setw(34) << spec.text << " arms " << std::setw(3) << arms
        << (cuda ? " block " : " threads ") << (cuda && width == 0 ? 128 : width) << "  "
        << std::setprecision(3) << rate << " steps/s, " << steps / t.median_cpu_s << " per CPU-second"
        << (sink < 0 ? " " : "") << "\n";
}

int run_bench(const BenchOptions& opt) {
  if (opt.observation != "on" && opt.observation != "off")
    throw UsageError("--observation must be on or off, not '" + opt.observation + "'");
  std::optional<SweepDynamics> dynamics;
  if (opt.observation == "on") dynamics = sim::load_fabric(sim::kDefaultFabric).observation.dynamics;
  if (!opt.write_sweep.empty()) {
    write_sweep_csv(make_bench_sweep(opt.arms.at(0), opt.contexts, opt.samples), opt.write_sweep);
    command_err() << "wrote " << opt.write_sweep << "\n";
    return 0;
  }
  const ReplayBackend backend = bench_backend(opt);
  const std::vector<int> widths = bench_widths(opt, backend);
  std::vector<PolicySpec> specs;
  for (const auto& p : opt.policies) specs.push_back(parse_policy_spec(p));

  nlohmann::json out = bench_document(opt, backend);
  std::ostream& human = opt.json ? command_err() : command_out();
  for (int arms : opt.arms) {
    Sweep sweep = make_bench_sweep(arms, opt.contexts, opt.samples);
    if (dynamics) sweep.set_dynamics(*dynamics);
    for (const PolicySpec& spec : specs)
      for (int width : widths) time_bench_case(opt, backend, sweep, arms, spec, width, out, human);
  }
  if (opt.json) command_out() << out.dump(2) << "\n";
  return 0;
}

Action setup(CLI::App& app) {
  auto opt = std::make_shared<BenchOptions>();
  add_bench_options(app, *opt);
  return [opt] { return run_bench(*opt); };
}

const bool registered =
    register_command({"bench", "replay throughput of a backend in steps per second", setup});

}  // namespace bench_command
}  // namespace ncclbot::cli
