// The host side of the CUDA engine, without a GPU: the job checks, the flattening of a ReplayJob
// into a device request, and the translation of the device's outputs back into ReplayResults and
// --raw rows. Fed with the CPU engine's own per-replay outcomes, the translation must give back the
// CPU engine's results and raw file exactly, so the device path differs only in who computed them.
#include "ncclbot/replay/cuda_engine.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

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

// A knob sweep goes to the device as the CPU engine's tasks see it: its arm view (arms by index, the
// arm table beside them), with each config's `@slots` flag.
TEST(CudaEngineHost, FlattensAKnobJob) {
  const Sweep sweep = test::random_knob_sweep(5, 8, 2);
  ReplayJob job =
      test::random_job(sweep, {parse_policy_spec("ucb1"), parse_policy_spec("thompson@slots")}, 5, 2, 30);
  job.contexts = test::contexts_with_nccl_knobs(sweep);
  ASSERT_GE(job.contexts.size(), 4u);  // the two with every arm, the two with NCCL's knobs only, ...
  DeviceReplayInputs in;
  prepare_device_replay(job, in);
  const DeviceReplayRequest& q = in.request;
  const SweepView arms = sweep.arm_view();
  EXPECT_EQ(q.sweep.arms, 512);  // the widest context: every arm of random_knob_sweep
  EXPECT_EQ(q.sweep.arm_table, arms.arm_table);
  EXPECT_EQ(q.sweep.time_us, arms.time_us);
  EXPECT_EQ(q.sweep.valid, arms.valid);
  ASSERT_EQ(q.slots_only.size(), 2u);
  EXPECT_EQ(q.slots_only[0], 0);
  EXPECT_EQ(q.slots_only[1], 1);
  // No config keeps to NCCL's knobs: no flags at all.
  job.configs = {parse_policy_spec("ucb1")};
  job.fixed_slots.resize(1);
  prepare_device_replay(job, in);
  EXPECT_TRUE(in.request.slots_only.empty());

  // What device_replay() uploads, counted by hand: 8 contexts x 512 arm indices x 2 samples, one
  // 32-bit word per 32 indices.
  const DeviceSweepExtents n = device_sweep_extents(q.sweep);
  EXPECT_EQ(n.time_us, 8u * 512u * 2u);
  EXPECT_EQ(n.mean_us, 8u * 512u);
  EXPECT_EQ(n.prior_us, 8u * 512u);
  EXPECT_EQ(n.valid, 8u * 16u);
  EXPECT_EQ(n.arm_table, 8u * 512u);
  EXPECT_EQ(n.first_use_us, 0u);
  EXPECT_EQ(n.fresh, 0u);
  // A slot sweep: 24 slots per context, one word of valid bits, no arm table.
  const Sweep slots = test::random_sweep(1, 6, 3, false);
  const DeviceSweepExtents m = device_sweep_extents(slots.view());
  EXPECT_EQ(m.time_us, 6u * 24u * 3u);
  EXPECT_EQ(m.mean_us, 6u * 24u);
  EXPECT_EQ(m.prior_us, 0u);
  EXPECT_EQ(m.valid, 6u);
  EXPECT_EQ(m.arm_table, 0u);
}

// device_replay()'s own checks, run before anything touches the device.
TEST(CudaEngineHost, TheDeviceCallRefusesWhatItCannotHold) {
  const Sweep sweep = test::random_knob_sweep(6, 5, 1);
  ReplayJob job = test::random_job(sweep, {parse_policy_spec("ucb1@slots")}, 6, 2, 10);
  job.contexts = test::contexts_with_nccl_knobs(sweep);
  DeviceReplayInputs in;
  prepare_device_replay(job, in);
  EXPECT_NO_THROW(check_device_replay_request(in.request));
  const auto refused = [&](DeviceReplayRequest q, const std::string& why) {
    try {
      check_device_replay_request(q);
      ADD_FAILURE() << "accepted; expected: " << why;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  DeviceReplayRequest q = in.request;
  q.sweep.arms = 513;
  refused(q, "the kernels hold at most 512 arms per context, not 513");
  q.sweep.arms = 0;
  refused(q, "at most 512 arms per context, not 0");
  q = in.request;
  q.sweep.arm_table = nullptr;  // read as a slot sweep of 512 slots
  refused(q, "one arm per algorithm and protocol slot (24), not 512");
  q = in.request;
  const std::vector<uint8_t> two_flags{1, 0};
  q.slots_only = two_flags;
  refused(q, "slots_only must have one flag per config");
  q = in.request;
  const std::vector<int> outside{0, 5};
  const std::vector<uint64_t> ids{1, 2};
  q.contexts = outside;
  q.stream_ids = ids;
  refused(q, "context out of range");
  q = in.request;
  q.delay = kMaxReplayDelay + 1;
  refused(q, "delay or decision window out of range");
}

namespace {

// What the device's outputs for `job` become, fed with the CPU engine's own per-replay outcomes.
void check_device_outputs_translate(ReplayJob job) {
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

}  // namespace

TEST(CudaEngineHost, DeviceOutputsBecomeTheCpuEnginesResults) {
  const Sweep sweep = test::random_sweep(3, 23, 4);
  check_device_outputs_translate(test::random_job(sweep, test::every_policy(), 3, 3, 60));
}

// On a knob sweep the final slot is an index into the context's arms (up to 512), as on the CPU.
TEST(CudaEngineHost, DeviceOutputsOfAKnobSweepBecomeTheCpuEnginesResults) {
  const Sweep sweep = test::random_knob_sweep(3, 9, 2);
  check_device_outputs_translate(test::random_job(sweep, test::every_policy(), 3, 2, 60));
}
