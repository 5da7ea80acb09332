// The host side of the CUDA engine, without a GPU: the job checks, the flattening of a ReplayJob
// into a device request, and the translation of the device's outputs back into ReplayResults and
// --raw rows. Fed with the CPU engine's own per-replay outcomes, the translation must give back the
// CPU engine's results and raw file exactly, so the device path differs only in who computed them.
#include "ncclbot/replay/cuda_engine.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "gpu/random_sweep.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/replay/stream_id.hpp"

using namespace ncclbot;

TEST(CudaEngineHost, RejectsWhatTheCpuEngineRejects) {
  const Sweep sweep = test::random_sweep(1, 6, 2);
  const ReplayJob good = test::random_job(sweep, parse_policy_grid("ucb1"), 1, 2, 10);
  auto rejects = [](const ReplayJob& job) {
    DeviceReplayInputs in;
    EXPECT_THROW(prepare_device_replay(job, in), UsageError);
  };
  ReplayJob j = good;
  j.sweep = nullptr;
  rejects(j);
  j = good;
  j.configs.clear();
  rejects(j);
  j = good;
  j.contexts.clear();
  rejects(j);
  j = good;
  j.seeds = 0;
  rejects(j);
  j = good;
  j.horizon = 0;
  rejects(j);
  j = good;
  j.contexts.push_back(6);
  rejects(j);
  j = good;
  j.fixed_slots = {{1, 2}};  // frozen decisions for 2 of 6 contexts
  rejects(j);
}

TEST(CudaEngineHost, FlattensTheJob) {
  const Sweep sweep = test::random_sweep(2, 9, 3);
  ReplayJob job = test::random_job(sweep, parse_policy_grid("knn:k=3"), 2, 4, 25);
  job.configs.push_back(parse_policy_spec("ucb1"));
  job.fixed_slots.push_back({});
  job.contexts = {8, 1, 1};
  DeviceReplayInputs in;
  prepare_device_replay(job, in);
  const DeviceReplayRequest& q = in.request;
  ASSERT_EQ(q.contexts.size(), 3u);
  EXPECT_EQ(q.contexts[0], 8);
  for (size_t i = 0; i < 3; ++i)
    EXPECT_EQ(q.stream_ids[i], context_stream_id(sweep.context(job.contexts[i])));
  ASSERT_EQ(q.configs.size(), 2u);
  EXPECT_EQ(q.configs[0].kind, PolicyKind::kKnn);
  EXPECT_EQ(q.configs[1].kind, PolicyKind::kUcb1);
  ASSERT_EQ(q.fixed_slots.size(), 2u * 9u);  // [config][sweep context]
  for (size_t c = 0; c < 9; ++c) {
    EXPECT_EQ(q.fixed_slots[c], job.fixed_slots[0][c]);
    EXPECT_EQ(q.fixed_slots[9 + c], -1);  // ucb1 has no frozen decisions
  }
  EXPECT_EQ(q.seeds, 4);
  EXPECT_EQ(q.seed_base, 2u);
  EXPECT_EQ(q.horizon, 25);
  EXPECT_FALSE(q.keep_per_replay);
  EXPECT_EQ(q.block, 128);  // the default
  job.keep_per_seed = true;
  job.device_block = 64;
  prepare_device_replay(job, in);
  EXPECT_TRUE(in.request.keep_per_replay);
  EXPECT_EQ(in.request.block, 64);
  EXPECT_EQ(in.request.sweep.time_us, sweep.view().time_us);  // host arrays, uploaded by device_replay
}

TEST(CudaEngineHost, DeviceOutputsBecomeTheCpuEnginesResults) {
  const Sweep sweep = test::random_sweep(3, 23, 4);
  ReplayJob job = test::random_job(sweep, test::every_policy(), 3, 3, 60);
  job.keep_per_seed = true;
  std::ostringstream cpu_raw;
  job.raw = &cpu_raw;
  const ReplayResults cpu = run_cpu_replay(job);

  // What device_replay() would return: per-replay outcomes [config][seed][context], the final slot
  // read back from the CPU engine's raw rows (config, context, seed order).
  const int n_cfg = cpu.num_configs, n_ctx = cpu.num_contexts, n_seed = cpu.seeds;
  DeviceReplayResult d;
  d.online_mean = cpu.online;
  d.final_mean = cpu.final_loss;
  d.online = cpu.online_per_seed;
  d.final_loss = cpu.final_per_seed;
  d.final_slot.resize(d.online.size());
  std::istringstream rows(cpu_raw.str());
  std::string line;
  for (int cfg = 0; cfg < n_cfg; ++cfg)
    for (int i = 0; i < n_ctx; ++i)
      for (int s = 0; s < n_seed; ++s) {
        ASSERT_TRUE(std::getline(rows, line));
        d.final_slot[(size_t(cfg) * n_seed + size_t(s)) * n_ctx + size_t(i)] =
            std::stoi(line.substr(line.rfind(',') + 1));
      }

  std::ostringstream gpu_raw;
  job.raw = &gpu_raw;
  const ReplayResults got = replay_results_from_device(job, std::move(d));
  EXPECT_EQ(got.num_configs, n_cfg);
  EXPECT_EQ(got.num_contexts, n_ctx);
  EXPECT_EQ(got.seeds, n_seed);
  EXPECT_EQ(got.online, cpu.online);
  EXPECT_EQ(got.final_loss, cpu.final_loss);
  EXPECT_EQ(got.online_per_seed, cpu.online_per_seed);
  EXPECT_EQ(got.final_per_seed, cpu.final_per_seed);
  EXPECT_EQ(gpu_raw.str(), cpu_raw.str());
}
