// The CUDA engine against the CPU engine on fresh seeded random sweeps: every policy kind, per-seed
// and seed-averaged losses, device summaries, raw rows and the command line, all bit-identical.
// Skips when no usable CUDA device exists (CI); `ctest -L gpu` runs it on a GPU machine.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "gpu/random_sweep.hpp"
#include "gpu/skip_without_gpu.hpp"
#include "ncclbot/io/resource_paths.hpp"
#include "ncclbot/io/sweep_csv.hpp"
#include "ncclbot/ope/block_bootstrap.hpp"
#include "ncclbot/replay/cuda_engine.hpp"
#include "ncclbot/replay/device_replay.hpp"
#include "ncclbot/replay/stream_id.hpp"
#include "ncclbot/scale/bootstrap_on_device.hpp"
#include "ncclbot/stats/bootstrap.hpp"
#include "support/decision_log_bytes.hpp"
#include "support/every_mechanism.hpp"
#include "support/run_cli.hpp"

using namespace ncclbot;

namespace {

bool same_bits(const std::vector<double>& a, const std::vector<double>& b, size_t* first_difference) {
  if (a.size() != b.size()) return *first_difference = 0, false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], sizeof(double)) != 0) return *first_difference = i, false;
  return true;
}

#define EXPECT_SAME_BITS(a, b)                                                                         \
  do {                                                                                                 \
    size_t at = 0;                                                                                     \
    EXPECT_TRUE(same_bits(a, b, &at))                                                                  \
        << #a " and " #b " differ at " << at << " (sizes " << (a).size() << ", " << (b).size() << ")"; \
  } while (0)

// Runs `job` on both engines, keeping every replay's outcome and raw rows, and expects the same bits.
void expect_engines_agree(ReplayJob job) {
  job.keep_per_seed = true;
  std::ostringstream cpu_raw, gpu_raw;
  job.raw = &cpu_raw;
  const ReplayResults cpu = run_cpu_replay(job);
  job.raw = &gpu_raw;
  const ReplayResults gpu = run_cuda_replay(job);
  EXPECT_SAME_BITS(gpu.online, cpu.online);
  EXPECT_SAME_BITS(gpu.final_loss, cpu.final_loss);
  EXPECT_SAME_BITS(gpu.online_per_seed, cpu.online_per_seed);
  EXPECT_SAME_BITS(gpu.final_per_seed, cpu.final_per_seed);
  EXPECT_EQ(gpu_raw.str(), cpu_raw.str());  // final slots and the row order too
}

}  // namespace

TEST(CudaEngine, EveryPolicyBitIdenticalToCpu) {
  NCCLBOT_SKIP_WITHOUT_GPU();
  for (uint64_t seed : {1u, 2u, 3u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const Sweep sweep = test::random_sweep(seed, 61, 1 + int(seed) * 3);
    expect_engines_agree(test::random_job(sweep, test::every_policy(), seed, 5, 1 + 97 * int(seed)));
  }
}

// Delayed feedback (replay/replay.hpp): the delayed cursor on the device, every policy, bit for bit.
TEST(CudaEngine, DelayedFeedbackBitIdenticalToCpu) {
  NCCLBOT_SKIP_WITHOUT_GPU();
  const Sweep sweep = test::random_sweep(4, 47, 5);
  for (int delay : {1, 7, 256}) {
    SCOPED_TRACE("delay " + std::to_string(delay));
    ReplayJob job = test::random_job(sweep, test::every_policy(), 4, 5, 600);
    job.delay = delay;
    job.keep_per_seed = true;
    const ReplayResults cpu = run_cpu_replay(job);
    const ReplayResults gpu = run_cuda_replay(job);
    EXPECT_SAME_BITS(gpu.online_per_seed, cpu.online_per_seed);
    EXPECT_SAME_BITS(gpu.final_per_seed, cpu.final_per_seed);
  }
}

// Call dynamics (core/call_dynamics.hpp): warm-up, level shifts and first-use costs on the device,
// undelayed and delayed, with per-call costs, every policy, bit for bit.
TEST(CudaEngine, CallDynamicsBitIdenticalToCpu) {
  NCCLBOT_SKIP_WITHOUT_GPU();
  Sweep sweep = test::random_sweep(6, 43, 5);
  sweep.set_dynamics(test::every_mechanism());
  for (int delay : {0, 7}) {
    SCOPED_TRACE("delay " + std::to_string(delay));
    ReplayJob job = test::random_job(sweep, test::every_policy(), 6, 4, 700);
    job.delay = delay;
    job.keep_per_seed = true;
    // A different per-call cost per config (ReplayJob::call_cost_us), as a study scored as deployed.
    for (size_t c = 0; c < job.configs.size(); ++c) job.call_cost_us.push_back(0.013 * double(c));
    const ReplayResults cpu = run_cpu_replay(job);
    const ReplayResults gpu = run_cuda_replay(job);
    EXPECT_SAME_BITS(gpu.online_per_seed, cpu.online_per_seed);
    EXPECT_SAME_BITS(gpu.final_per_seed, cpu.final_per_seed);
  }
}

// Fresh observations (core/observation_noise.hpp): every call drawn afresh around the truth, with
// log-normal noise and both spike forms, undelayed and delayed, every policy, bit for bit.
TEST(CudaEngine, FreshObservationsBitIdenticalToCpu) {
  NCCLBOT_SKIP_WITHOUT_GPU();
  Sweep sweep = test::random_sweep(8, 41, 4);
  sweep.price_on(test::random_sweep(8, 41, 4));
  std::vector<ObservationNoise> noise(size_t(sweep.num_contexts()));
  for (size_t c = 0; c < noise.size(); ++c) {
    noise[c].sigma = 0.02 * double(c % 7);
    noise[c].spike_prob = 0.05;
    noise[c].spike_alpha = 1.5;
    noise[c].spike_scale = c % 2 ? 0.2 : 2.0;
    noise[c].spike_cap = c % 2 ? 20.0 : 8.0;
    noise[c].shifted = int32_t(c % 2);
  }
  sweep.observe_afresh(noise);
  for (int delay : {0, 5}) {
    SCOPED_TRACE("delay " + std::to_string(delay));
    ReplayJob job = test::random_job(sweep, test::every_policy(), 8, 4, 500);
    job.delay = delay;
    job.keep_per_seed = true;
    const ReplayResults cpu = run_cpu_replay(job);
    const ReplayResults gpu = run_cuda_replay(job);
    EXPECT_SAME_BITS(gpu.online_per_seed, cpu.online_per_seed);
    EXPECT_SAME_BITS(gpu.final_per_seed, cpu.final_per_seed);
  }
}

// Knob sweeps (up to 512 arms per context, replay_knobs.cu: the state in local memory): every
// policy, `@slots` learners, undelayed and delayed, then with call dynamics and fresh draws, bit
// for bit, raw rows (the committed arm indices) too.
TEST(CudaEngine, KnobSweepBitIdenticalToCpu) {
  NCCLBOT_SKIP_WITHOUT_GPU();
  Sweep sweep = test::random_knob_sweep(10, 12, 3);
  const std::vector<PolicySpec> every = test::every_policy();
  const std::vector<PolicySpec> slots_only{parse_policy_spec("ucb1@slots"),
                                           parse_policy_spec("thompson@slots")};
  // Every policy on every context; the `@slots` learners on the contexts with an arm at NCCL's knobs.
  const auto compare = [&](int delay, const std::vector<PolicySpec>& specs,
                           const std::vector<int>& contexts) {
    SCOPED_TRACE("delay " + std::to_string(delay) + ", " + specs.front().text);
    ReplayJob job = test::random_job(sweep, specs, 10, 2, 300);
    if (!contexts.empty()) job.contexts = contexts;
    job.delay = delay;
    expect_engines_agree(job);
  };
  for (int delay : {0, 5}) {
    compare(delay, every, {});
    compare(delay, slots_only, test::contexts_with_nccl_knobs(sweep));
  }
  sweep.set_dynamics(test::every_mechanism());
  sweep.price_on(test::random_knob_sweep(10, 12, 3));
  std::vector<ObservationNoise> noise(size_t(sweep.num_contexts()));
  for (size_t c = 0; c < noise.size(); ++c) {
    noise[c].sigma = 0.03;
    noise[c].spike_prob = 0.05;
    noise[c].spike_alpha = 1.5;
    noise[c].spike_scale = 0.5;
    noise[c].spike_cap = 10.0;
  }
  sweep.observe_afresh(noise);
  compare(0, every, {});
}

TEST(CudaEngine, SweepWithoutPriorAndSubsetOfContexts) {
  NCCLBOT_SKIP_WITHOUT_GPU();
  const Sweep sweep = test::random_sweep(9, 40, 3, false);
  ReplayJob job = test::random_job(sweep, parse_policy_grid("ucb1:c=0.05|0.3,n0=0"), 9, 3, 300);
  job.contexts = {39, 0, 17, 17, 5};  // any order, repeats allowed, as the CPU engine takes them
  const ReplayResults cpu = run_cpu_replay(job);
  const ReplayResults gpu = run_cuda_replay(job);
  EXPECT_SAME_BITS(gpu.online, cpu.online);
  EXPECT_SAME_BITS(gpu.final_loss, cpu.final_loss);
}

// Device summaries equal summarize_losses() of the CPU engine's means, whether the configs run in
// one launch or one launch each (a scratch budget too small for two configs).
TEST(CudaEngine, DeviceSummariesAndChunking) {
  NCCLBOT_SKIP_WITHOUT_GPU();
  const Sweep sweep = test::random_sweep(4, 80, 4);
  const ReplayJob job = test::random_job(sweep, test::every_policy(), 4, 6, 120);
  const ReplayResults cpu = run_cpu_replay(job);
  std::vector<uint64_t> ids;
  for (int c : job.contexts) ids.push_back(context_stream_id(sweep.context(c)));
  std::vector<PolicyConfig> configs;
  for (const auto& p : job.configs) configs.push_back(p.config);
  std::vector<int> fixed(configs.size() * size_t(sweep.num_contexts()), -1);
  for (size_t c = 0; c < configs.size(); ++c)
    for (size_t k = 0; k < job.fixed_slots[c].size(); ++k)
      fixed[c * size_t(sweep.num_contexts()) + k] = job.fixed_slots[c][k];
  // Every replay's outcome comes back too, chunked or not (the one-launch run's equal the CPU
  // engine's in EveryPolicyBitIdenticalToCpu).
  std::vector<DeviceReplayResult> runs;
  for (int64_t budget : {int64_t(1) << 30, int64_t(1)}) {
    SCOPED_TRACE("budget " + std::to_string(budget));
    DeviceReplayRequest q;
    q.sweep = sweep.view();
    q.contexts = job.contexts;
    q.stream_ids = ids;
    q.configs = configs;
    q.fixed_slots = fixed;
    q.seeds = job.seeds;
    q.seed_base = job.seed_base;
    q.horizon = job.horizon;
    q.scratch_budget_bytes = budget;
    q.block = budget == 1 ? 32 : 128;  // the shape must not matter either
    q.keep_per_replay = true;
    const DeviceReplayResult& d = runs.emplace_back(device_replay(q));
    if (budget == 1) {
      EXPECT_EQ(d.launches, int(configs.size()));
    }
    EXPECT_SAME_BITS(d.online_mean, cpu.online);
    EXPECT_SAME_BITS(d.final_mean, cpu.final_loss);
    for (int c = 0; c < cpu.num_configs; ++c) {
      const LossSummary on = summarize_losses(cpu.online_of(c)), fin = summarize_losses(cpu.final_of(c));
      const LossSummary& gon = d.online_summary[size_t(c)];
      const LossSummary& gfin = d.final_summary[size_t(c)];
      EXPECT_SAME_BITS((std::vector<double>{gon.mean, gon.p99, gon.max, gfin.mean, gfin.p99, gfin.max}),
                       (std::vector<double>{on.mean, on.p99, on.max, fin.mean, fin.p99, fin.max}));
      EXPECT_EQ(gon.above_10pct, on.above_10pct);
      EXPECT_EQ(gfin.above_10pct, fin.above_10pct);
    }
  }
  EXPECT_SAME_BITS(runs[1].online, runs[0].online);
  EXPECT_SAME_BITS(runs[1].final_loss, runs[0].final_loss);
  EXPECT_EQ(runs[1].final_slot, runs[0].final_slot);
  EXPECT_EQ(runs[0].online.size(), configs.size() * size_t(job.seeds) * job.contexts.size());
}

// Two blocks of 32 threads for thousands of replays: every thread strides over many of them, and
// the results cannot tell.
TEST(CudaEngine, ManyGridStrideIterationsChangeNothing) {
  NCCLBOT_SKIP_WITHOUT_GPU();
  const Sweep sweep = test::random_sweep(5, 60, 4);
  const ReplayJob job = test::random_job(sweep, parse_policy_grid("ucb1:c=0.2,n0=0|4"), 5, 40, 90);
  const ReplayResults cpu = run_cpu_replay(job);
  std::vector<uint64_t> ids;
  for (int c : job.contexts) ids.push_back(context_stream_id(sweep.context(c)));
  std::vector<PolicyConfig> configs;
  for (const auto& p : job.configs) configs.push_back(p.config);
  DeviceReplayRequest q;
  q.sweep = sweep.view();
  q.contexts = job.contexts;
  q.stream_ids = ids;
  q.configs = configs;
  q.seeds = job.seeds;
  q.seed_base = job.seed_base;
  q.horizon = job.horizon;
  q.block = 32;
  q.max_grid = 2;
  const DeviceReplayResult d = device_replay(q);
  EXPECT_EQ(d.shape.grid, 2);
  EXPECT_GT(int64_t(configs.size()) * job.seeds * int64_t(job.contexts.size()), 30 * d.shape.threads());
  EXPECT_SAME_BITS(d.online_mean, cpu.online);
  EXPECT_SAME_BITS(d.final_mean, cpu.final_loss);
}

// `ncclbot replay --backend cuda` prints what `--backend cpu` prints, but for the backend's name.
TEST(CudaEngine, CommandLineMatchesCpu) {
  NCCLBOT_SKIP_WITHOUT_GPU();
  const std::string dir = test::temp_dir();
  const Sweep sweep = test::random_sweep(5, 50, 4);
  write_sweep_csv(sweep, dir + "/s.csv");
  const std::string args = "replay --sweep '" + dir + "/s.csv' --policy 'ucb1:c=0.1|0.4,n0=0|2' --policy " +
                           "'thompson:n0=1' --seeds 4 --horizon 200 --json --backend ";
  const auto cpu = test::run_cli(args + "cpu");
  const auto gpu = test::run_cli(args + "cuda");
  ASSERT_EQ(cpu.exit_code, 0) << cpu.err;
  ASSERT_EQ(gpu.exit_code, 0) << gpu.err;
  auto jc = nlohmann::json::parse(cpu.out), jg = nlohmann::json::parse(gpu.out);
  EXPECT_EQ(jg["backend"], "cuda");
  jc.erase("backend");
  jg.erase("backend");
  EXPECT_EQ(jg.dump(), jc.dump());
  const auto via_auto = test::run_cli(args + "auto");
  ASSERT_EQ(via_auto.exit_code, 0) << via_auto.err;
  EXPECT_EQ(nlohmann::json::parse(via_auto.out)["backend"], "cuda");
}

// `ncclbot tune --backend cuda` tunes and scores exactly as `--backend cpu` does.
TEST(CudaEngine, TuneMatchesCpu) {
  NCCLBOT_SKIP_WITHOUT_GPU();
  const std::string dir = test::temp_dir();
  write_sweep_csv(test::random_sweep(6, 90, 4), dir + "/s.csv");
  const std::string args = "tune --sweep '" + dir +
                           "/s.csv' --policy 'ucb1:c=0.05|0.2|0.8,n0=0|4' --policy " +
                           "'egreedy:eps=0.05|0.2' --tune-nodes 1,2,4 --score-nodes 8,16,32 --seeds 3 " +
                           "--horizon 150 --json --backend ";
  const auto cpu = test::run_cli(args + "cpu");
  const auto gpu = test::run_cli(args + "cuda");
  ASSERT_EQ(cpu.exit_code, 0) << cpu.err;
  ASSERT_EQ(gpu.exit_code, 0) << gpu.err;
  auto jc = nlohmann::json::parse(cpu.out), jg = nlohmann::json::parse(gpu.out);
  EXPECT_EQ(jg["backend"], "cuda");
  jc.erase("backend");
  jg.erase("backend");
  EXPECT_EQ(jg.dump(), jc.dump());
}

// Bootstrap resamples of contexts on the device equal bootstrap_interval()'s distribution, per
// config and statistic, in one chunk or many (a tiny scratch budget); and the study's intervals on
// the cuda backend (scale/bootstrap_on_device.hpp) equal the library's: estimate, bounds and
// standard error.
TEST(CudaEngine, DeviceBootstrapMatchesStatsBootstrap) {
  NCCLBOT_SKIP_WITHOUT_GPU();
  const Sweep sweep = test::random_sweep(8, 70, 3);
  const ReplayResults cpu =
      run_cpu_replay(test::random_job(sweep, parse_policy_grid("ucb1:c=0.1|0.5,n0=0|1"), 8, 3, 90));
  const uint64_t resamples = 999, seed = 77;
  for (auto stat : {BootstrapStatistic::mean, BootstrapStatistic::p99, BootstrapStatistic::max,
                    BootstrapStatistic::count_above}) {
    BootstrapOptions opt;
    opt.statistic = stat;
    opt.resamples = resamples;
    opt.seed = seed;
    opt.method = IntervalMethod::percentile;
    for (int64_t budget : {int64_t(1) << 30, int64_t(1)}) {
      SCOPED_TRACE(to_string(stat) + " budget " + std::to_string(budget));
      const auto theta = device_bootstrap(cpu.online, cpu.num_configs, stat, resamples, seed, 0.10, budget);
      for (int c = 0; c < cpu.num_configs; ++c) {
        BootstrapOptions keep = opt;
        keep.keep_distribution = true;
        const auto want = bootstrap_interval(cpu.online_of(c), keep).distribution;
        const std::vector<double> got(theta.begin() + long(size_t(c) * resamples),
                                      theta.begin() + long(size_t(c + 1) * resamples));
        EXPECT_SAME_BITS(got, want);
      }
    }
    const BootstrapResult want = bootstrap_interval(cpu.online_of(0), opt);
    const BootstrapResult got = bootstrap_interval_on_device(cpu.online_of(0), opt);
    const std::vector<double> g = {got.estimate, got.low, got.high, got.standard_error},
                              w = {want.estimate, want.low, want.high, want.standard_error};
    EXPECT_SAME_BITS(g, w);
  }
}

// `ncclbot run experiments/quick.toml --backend cuda`: the whole study (tune, score, statistics,
// report) gives the same results.json as `--backend cpu`, but for the backend it names.
TEST(CudaEngine, StudyRunMatchesCpu) {
  NCCLBOT_SKIP_WITHOUT_GPU();
  const std::string dir = test::temp_dir();
  // Found from this test program, as the program finds it: the source tree from a build folder, the
  // bundle's share/ncclbot from a GPU bundle (scripts/gpu-bundle.sh).
  ASSERT_FALSE(resource_paths().experiments.empty()) << "no experiments/ folder found from this test program";
  const std::string study = resource_paths().experiments + "/quick.toml";
  const auto cpu = test::run_cli("run '" + study + "' --out '" + dir + "/cpu' --no-figures --backend cpu");
  const auto gpu = test::run_cli("run '" + study + "' --out '" + dir + "/cuda' --no-figures --backend cuda");
  ASSERT_EQ(cpu.exit_code, 0) << cpu.err;
  ASSERT_EQ(gpu.exit_code, 0) << gpu.err;
  auto read = [](const std::string& path) { return nlohmann::json::parse(std::ifstream(path)); };
  auto jc = read(dir + "/cpu/results.json"), jg = read(dir + "/cuda/results.json");
  EXPECT_EQ(jg["study"]["backend"], "cuda");
  for (auto* j : {&jc, &jg}) {
    j->at("study").erase("backend");
    j->at("study").erase("backend_requested");
  }
  EXPECT_EQ(jg.dump(), jc.dump());
}

// `ncclbot bench --backend cuda` reports steps/s for the GPU, at each block size asked for, and the
// device it ran on (scripts/gpu-check.sh takes the SM count from there).
TEST(CudaEngine, BenchReportsStepsPerSecond) {
  NCCLBOT_SKIP_WITHOUT_GPU();
  const auto r = test::run_cli(
      "bench --backend cuda --policy ucb1 --arms 12 --contexts 64 --seeds 64 --horizon 256 "
      "--repetitions 1 --cuda-block 32 128 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_FALSE(j["device"]["name"].get<std::string>().empty());
  EXPECT_GT(j["device"]["multiprocessors"].get<int>(), 0);
  EXPECT_GE(j["device"]["compute_capability"].get<int>(), 90);
  ASSERT_EQ(j["results"].size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(j["results"][i]["backend"], "cuda");
    EXPECT_EQ(j["results"][i]["block_requested"], i == 0 ? 32 : 128);
    EXPECT_GT(j["results"][i]["steps_per_s"].get<double>(), 0.0);
  }
}

// The block bootstrap of `ope` and `telemetry` (ope/block_bootstrap.hpp) on the device: every
// column's resampled sums bit for bit the CPU's, odd column counts and a short last resample group
// included; and `ope --backend cuda` prints what `--backend cpu` prints.
TEST(CudaEngine, BlockBootstrapOnTheDeviceIsTheCpus) {
  NCCLBOT_SKIP_WITHOUT_GPU();
  for (size_t k : {size_t(1), size_t(4), size_t(5)}) {
    std::vector<double> columns(k * 777);
    for (size_t i = 0; i < columns.size(); ++i) columns[i] = double((i * 2654435761u) % 1000) / 7.0;
    const auto cpu = block_bootstrap_sums(columns, k, 42, 301, 2, ResampleBackend::cpu);
    const auto gpu = block_bootstrap_sums(columns, k, 42, 301, 2, ResampleBackend::cuda);
    EXPECT_SAME_BITS(gpu, cpu);
  }
  // A log written with the format's own encoder: one context, six arms played uniformly.
  const std::string log = test::temp_dir() + "/d.log";
  {
    std::ofstream out(log, std::ios::binary);
    out << test::decision_log_header("policy=random\nseed=7\n") << test::decision_log_context();
    for (int i = 0; i < 5000; ++i)
      out << test::decision_log_call(uint64_t(i), i % 6, 1.0 / 6.0, 10.0 + (i * 7919) % 23 + i % 6);
  }
  const std::string args = "ope --log '" + log + "' --policy auto --policy random --json --backend ";
  const test::CliResult on_cpu = test::run_cli(args + "cpu"), on_gpu = test::run_cli(args + "cuda");
  ASSERT_EQ(on_gpu.exit_code, 0) << on_gpu.err;
  EXPECT_EQ(on_gpu.out, on_cpu.out);
}
