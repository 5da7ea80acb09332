// The replay engine on knob sweeps: a context whose arms set channels and chunk sizes replays with
// the policies' 512-arm capacity, and what it pays is checked against sums taken by hand from the
// latencies' formula, not from the engine or the sweep.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>

#include "ncclbot/core/error.hpp"
#include "ncclbot/core/sweep.hpp"
#include "ncclbot/replay/backend.hpp"
#include "ncclbot/replay/cpu_engine.hpp"
#include "ncclbot/replay/policy_spec.hpp"

using namespace ncclbot;

namespace {

// One AllReduce context whose arms are Ring/Simple at channels 1..64 and chunks 512 B x 1..8 (512
// arms, in Arm order: channels, then chunk), one sample each, all with the same prior. The latency
// of channels c and chunk 512k is 100 + 0.5 (c - 37)^2 + 3 (k - 5)^2 µs: smallest (100) at c = 37,
// k = 5 alone. `extra_chunks` adds chunks 512 x 9.. at channels 1 (more arms). The source line of
// the i-th arm added is 1000 + i.
double latency(int c, int k) {
  return 100.0 + 0.5 * (c - 37) * (c - 37) + 3.0 * (k - 5) * (k - 5);
}

Sweep knob_sweep(int extra_chunks = 0) {
  SweepBuilder b("knobs.csv");
  const Context ctx{"h100", Collective::kAllReduce, 2, 8, 1 << 24};
  long line = 1000;
  for (int c = 1; c <= 64; ++c)
    for (int k = 1; k <= 8; ++k)
      b.add(ctx, Arm{Algo::kRing, Proto::kSimple, uint16_t(c), uint32_t(512 * k)}, 0, float(latency(c, k)),
            50.0f, line++);
  for (int k = 9; k < 9 + extra_chunks; ++k)
    b.add(ctx, Arm{Algo::kRing, Proto::kSimple, 1, uint32_t(512 * k)}, 0, float(latency(1, k)), 50.0f,
          line++);
  return b.build();
}

// Every arm's loss against the best, summed by hand in Arm order.
double sum_of_losses() {
  double sum = 0.0;
  for (int c = 1; c <= 64; ++c)
    for (int k = 1; k <= 8; ++k) sum += double(float(latency(c, k))) / 100.0 - 1.0;
  return sum;
}

ReplayResults replay(const Sweep& s, const std::string& spec, int horizon, int delay = 0, int threads = 1) {
  ReplayJob job;
  job.sweep = &s;
  job.contexts = {0};
  job.configs = {parse_policy_spec(spec)};
  job.seeds = 2;
  job.horizon = horizon;
  job.delay = delay;
  job.threads = threads;
  return run_cpu_replay(job);
}

}  // namespace

TEST(KnobReplay, AViewListsEachContextsArmsInArmOrder) {
  const Sweep s = knob_sweep();
  const SweepView v = s.arm_view();
  ASSERT_EQ(v.arms, 512);
  EXPECT_FALSE(v.slot_shaped());
  EXPECT_EQ(v.arm(0, 0), (Arm{Algo::kRing, Proto::kSimple, 1, 512}));
  EXPECT_EQ(v.arm(0, 8 * 36 + 4), (Arm{Algo::kRing, Proto::kSimple, 37, 2560}));
  EXPECT_EQ(v.mean(0, 8 * 36 + 4), 100.0);
  EXPECT_TRUE(v.valid_arms(0).has(511));
  EXPECT_EQ(v.prior(0, 511), 50.0f);
}

// Every prior is equal, so AUTO plays the first arm (channels 1, chunk 512): loss latency(1, 1) / 100
// - 1 on every call; the oracle plays the best arm, loss 0.
TEST(KnobReplay, AutoAndTheOraclePayTheirArmsLoss) {
  const Sweep s = knob_sweep();
  const ReplayResults a = replay(s, "auto", 40);
  EXPECT_DOUBLE_EQ(a.online[0], latency(1, 1) / 100.0 - 1.0);
  EXPECT_DOUBLE_EQ(a.final_loss[0], latency(1, 1) / 100.0 - 1.0);
  const ReplayResults o = replay(s, "oracle", 40);
  EXPECT_EQ(o.online[0], 0.0);
}

// Explore-then-commit probes the 512 arms once each in order, then keeps the best: at horizon T the
// online loss is the sum of every arm's loss over T, the final loss 0. UCB1 and Thompson sampling
// without a prior (n0 = 0) try every arm once in order first too, so at T = 512 they pay the same.
TEST(KnobReplay, EveryArmOnceInOrderCostsTheSumOfTheLosses) {
  const Sweep s = knob_sweep();
  const ReplayResults etc = replay(s, "etc:m=1", 800);
  EXPECT_NEAR(etc.online[0], sum_of_losses() / 800.0, 1e-12);
  EXPECT_EQ(etc.final_loss[0], 0.0);
  for (const char* spec : {"ucb1:n0=0", "thompson:n0=0", "greedy:n0=0"})
    EXPECT_NEAR(replay(s, spec, 512).online[0], sum_of_losses() / 512.0, 1e-12) << spec;
}

// With a feedback delay a policy with pending pulls tries the arms without a pull first, in order,
// so the first 512 calls are the same probes.
TEST(KnobReplay, DelayedFeedbackProbesEachArmOnce) {
  const Sweep s = knob_sweep();
  EXPECT_NEAR(replay(s, "ucb1:n0=0", 512, 7).online[0], sum_of_losses() / 512.0, 1e-12);
}

TEST(KnobReplay, ResultsDoNotDependOnTheThreadCount) {
  const Sweep s = knob_sweep();
  for (const char* spec : {"ucb1", "thompson", "egreedy", "swucb", "ducb", "random"}) {
    const ReplayResults one = replay(s, spec, 700, 0, 1), two = replay(s, spec, 700, 0, 2);
    EXPECT_EQ(one.online, two.online) << spec;
    EXPECT_EQ(one.final_loss, two.final_loss) << spec;
    EXPECT_GE(one.online[0], 0.0) << spec;
  }
}

// A context with 513 arms is past the engine's 512: an InputError at the line of the 513th arm in
// Arm order, channels 64 and chunk 4096 (the 512th added, line 1511), naming the limit.
TEST(KnobReplay, MoreArmsThanTheEngineHoldsAreRefusedAtTheFirstArmPastTheLimit) {
  const Sweep s = knob_sweep(1);
  try {
    replay(s, "ucb1", 10);
    FAIL() << "513 arms replayed";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("knobs.csv:1511:"), std::string::npos) << what;
    EXPECT_NE(what.find("513 arms"), std::string::npos) << what;
    EXPECT_NE(what.find("at most 512"), std::string::npos) << what;
  }
}

// tune and a study resolve their backend before they hold every job: a job with a config in the
// conservative wrapper goes to the CPU and says which; any other keeps CUDA, on a slot sweep or a
// knob sweep (the kernels hold kKnobReplayArms arms per context).
TEST(KnobReplay, AJobTheKernelsCannotHoldReplaysOnTheCpu) {
  SweepBuilder b("slots.csv");
  b.add(Context{"h100", Collective::kAllReduce, 1, 8, 1024}, Arm::of_slot(arm_slot(Algo::kRing, Proto::kLL)),
        0, 5.0f, std::nullopt, 2);
  const Sweep slots = b.build(), knobs = knob_sweep();
  ReplayJob job;
  job.sweep = &slots;
  job.configs = {parse_policy_spec("ucb1")};
  std::ostringstream log;
  EXPECT_EQ(backend_for_job(ReplayBackend::kCuda, job, log), ReplayBackend::kCuda);
  EXPECT_EQ(log.str(), "");
  job.configs.push_back(parse_policy_spec("ucb1@conservative"));
  EXPECT_EQ(backend_for_job(ReplayBackend::kCuda, job, log), ReplayBackend::kCpu);
  EXPECT_NE(log.str().find(
                "@conservative:alpha=0.05,delta=0.05,noise=0.1,worst=10 runs in the conservative wrapper"),
            std::string::npos)
      << log.str();
  EXPECT_EQ(backend_for_job(ReplayBackend::kCpu, job, log), ReplayBackend::kCpu);
  job.configs.pop_back();
  job.sweep = &knobs;
  log.str("");
  EXPECT_EQ(backend_for_job(ReplayBackend::kCuda, job, log), ReplayBackend::kCuda);
  EXPECT_EQ(log.str(), "");
}

// Scoring as deployed charges the plugin's measured per-call costs, which are those of slot contexts:
// a knob sweep is refused rather than undercharged; a cost of 0 (AUTO's) is no charge and passes.
TEST(KnobReplay, AKnobSweepIsNotScoredAsDeployed) {
  const Sweep knobs = knob_sweep();
  ReplayJob job;
  job.sweep = &knobs;
  job.contexts = {0};
  job.configs = {parse_policy_spec("ucb1"), parse_policy_spec("auto")};
  job.call_cost_us = {0.0431, 0.0};
  try {
    run_cpu_replay(job);
    FAIL() << "a knob sweep was charged slot-mode costs";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("a knob sweep is not scored as deployed"), std::string::npos)
        << e.what();
  }
  job.call_cost_us = {0.0, 0.0};
  EXPECT_NO_THROW(run_cpu_replay(job));
}
