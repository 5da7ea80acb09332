#include "cli/bench_call.hpp"

#include <algorithm>

#include "ncclbot/bench/bench_sweep.hpp"
#include "ncclbot/bench/harness.hpp"
#include "ncclbot/core/command_streams.hpp"
#include "ncclbot/core/cuda_probe.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/core/parallel_for.hpp"
#include "ncclbot/replay/backend.hpp"
#include "ncclbot/sim/simulator.hpp"

namespace ncclbot::cli {
namespace {

// The backend asked for, checked against the CUDA blocks, and resolved to the one that runs.
ReplayBackend bench_backend(const BenchCallOptions& opt) {
  const ReplayBackend requested = parse_replay_backend(opt.backend);
  if (requested == ReplayBackend::kAuto) throw UsageError("--backend: bench needs cpu or cuda, not auto");
  if (!opt.cuda_blocks.empty() && requested != ReplayBackend::kCuda)
    throw UsageError("--cuda-block needs --backend cuda");
  for (int b : opt.cuda_blocks)
    if (b < 1 || b > 1024) throw UsageError("--cuda-block: " + std::to_string(b) + " is not in 1..1024");
  return resolve_replay_backend(requested, command_err());
}

// CPU thread counts to time, or for the CUDA backend the block sizes (0: the default block).
std::vector<int> bench_widths(const BenchCallOptions& opt, ReplayBackend backend) {
  std::vector<int> thread_counts = opt.threads;
  if (thread_counts.empty()) {
    thread_counts = {1};
    if (default_thread_count() > 1) thread_counts.push_back(default_thread_count());
  }
  if (backend == ReplayBackend::kCuda)
    thread_counts = opt.cuda_blocks.empty() ? std::vector<int>{0} : opt.cuda_blocks;
  return thread_counts;
}

// Times one policy on one sweep at one width (CPU threads, or the CUDA block asked for, 0: 128).
BenchRow time_bench_case(const BenchCallOptions& opt, ReplayBackend backend, const Sweep& sweep, int arms,
                         const PolicySpec& spec, int width) {
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
  volatile double sink = 0;
  const BenchTiming t = measure([&] { sink = sink + run_replay(job, backend).online[0]; },
                                BenchSettings{1, opt.repetitions, {}});
  const double steps = double(opt.contexts) * opt.seeds * opt.horizon;
  BenchRow row;
  row.policy = spec.text;
  row.arms = arms;
  row.backend = std::string(replay_backend_name(backend));
  row.threads = cuda ? 0 : width;
  if (cuda) row.block = width > 0 ? width : 128;
  row.steps_per_s = steps / t.median_s;
  row.steps_per_cpu_s = steps / t.median_cpu_s;
  row.median_s = t.median_s;
  row.min_s = t.min_s;
  row.max_s = t.max_s;
  return row;
}

}  // namespace

std::vector<std::string> live_policy_names() {
  std::vector<std::string> names;
  for (PolicyKind kind : live_policies()) names.emplace_back(policy_name(kind));
  return names;
}

std::optional<SweepDynamics> bench_dynamics(const std::string& observation) {
  if (observation != "on" && observation != "off")
    throw UsageError("--observation must be on or off, not '" + observation + "'");
  if (observation == "off") return std::nullopt;
  return sim::load_fabric(sim::kDefaultFabric).observation.dynamics;
}

BenchCallResult bench_call(const BenchCallOptions& opt) {
  const std::optional<SweepDynamics> dynamics = bench_dynamics(opt.observation);
  const ReplayBackend backend = bench_backend(opt);
  const std::vector<int> widths = bench_widths(opt, backend);
  std::vector<PolicySpec> specs;
  for (const auto& p : opt.policies) specs.push_back(parse_policy_spec(p));
  BenchCallResult r;
  r.workload = {{"contexts", opt.contexts},      {"seeds", opt.seeds},
                {"horizon", opt.horizon},        {"delay", opt.delay},
                {"samples", opt.samples},        {"repetitions", opt.repetitions},
                {"observation", opt.observation}};
  // The device, for the throughput's context (scripts/gpu-check.sh reads its SM count: nvidia-smi
  // has no field for it).
  if (backend == ReplayBackend::kCuda) {
    const CudaProbe probe = probe_cuda();
    r.device = {{"name", probe.device_name},
                {"multiprocessors", probe.multiprocessors},
                {"compute_capability", probe.compute_capability}};
  }
  for (int arms : opt.arms) {
    Sweep sweep = make_bench_sweep(arms, opt.contexts, opt.samples);
    if (dynamics) sweep.set_dynamics(*dynamics);
    for (const PolicySpec& spec : specs)
      for (int width : widths) {
        r.rows.push_back(time_bench_case(opt, backend, sweep, arms, spec, width));
        if (opt.on_row) opt.on_row(r.rows.back());
      }
  }
  return r;
}

nlohmann::json bench_document(const BenchCallResult& r) {
  nlohmann::json out;
  out["results"] = nlohmann::json::array();
  out["workload"] = r.workload;
  if (!r.device.is_null()) out["device"] = r.device;
  for (const BenchRow& row : r.rows) {
    out["results"].push_back({{"policy", row.policy},
                              {"arms", row.arms},
                              {"backend", row.backend},
                              {"threads", row.threads},
                              {"steps_per_s", row.steps_per_s},
                              {"steps_per_cpu_s", row.steps_per_cpu_s},
                              {"median_s", row.median_s},
                              {"min_s", row.min_s},
                              {"max_s", row.max_s}});
    if (row.block) out["results"].back()["block_requested"] = *row.block;
  }
  return out;
}

}  // namespace ncclbot::cli
