// The AutoCCL-style search (policy/autoccl.hpp): a schedule worked out by hand from the rules in its
// header, and coordinate descent finding the best arm of a unimodal family from any random start.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "ncclbot/core/sweep.hpp"
#include "ncclbot/policy/autoccl.hpp"
#include "ncclbot/replay/replay.hpp"

using namespace ncclbot;

namespace {

std::vector<int> trace(const Sweep& s, int pretrain, int train, int horizon, uint64_t seed,
                       ReplayOutcome* out = nullptr) {
  ReplayTask task;
  task.sweep = s.arm_view();
  task.context = 0;
  task.seed = seed;
  task.stream_id = 5;
  task.horizon = horizon;
  AutocclPolicyT<64> p{};
  p.params = {pretrain, train};
  std::vector<int> picks;
  const ReplayOutcome o = replay_one(p, task, [&](int, int slot, float) { picks.push_back(slot); });
  if (out) *out = o;
  return picks;
}

void append(std::vector<int>& v, int arm, int times) {
  for (int i = 0; i < times; ++i) v.push_back(arm);
}

}  // namespace

// Tree/LL at NCCL's knobs (index 0, 25 µs) and Ring/Simple at channels 0, 4, 8, 16 (indices 1-4:
// 20, 18, 12, 15 µs), one sample each; Ring's prior is lower, so NCCL's default is index 1.
// pretrain 40 and train 20 over 2 subspaces: P = 20, T = 10, a sampling round of P / 5 = 4 arms.
//   calls 1-10: the default (5 warm-up, 5 kept);
//   Tree's sampling round: its one arm x 5; Ring's: its four arms x 5 each;
//   Tree's turn: no unvisited arm, so its descents end at once: its best x 10 (25 µs does not beat
//   the combined best, the default's 20);
//   Ring's turn: likewise: its best (8 channels, 12 µs) x 10, now the combined best;
//   then every subspace is done: index 3 for good.
TEST(Autoccl, ScheduleWorkedByHand) {
  SweepBuilder b("autoccl.csv");
  const Context ctx{"h100", Collective::kAllReduce, 2, 8, 1 << 24};
  b.add(ctx, Arm{Algo::kTree, Proto::kLL, 0, 0}, 0, 25.0f, 9.0f, 1);
  const float ring[] = {20.0f, 18.0f, 12.0f, 15.0f};
  const uint16_t channels[] = {0, 4, 8, 16};
  for (int i = 0; i < 4; ++i)
    b.add(ctx, Arm{Algo::kRing, Proto::kSimple, channels[i], 0}, 0, ring[i], 5.0f, 2 + i);
  const Sweep s = b.build();
  std::vector<int> want;
  append(want, 1, 10);
  append(want, 0, 5);
  for (int arm : {1, 2, 3, 4}) append(want, arm, 5);
  append(want, 0, 10);
  append(want, 3, 10);
  append(want, 3, 20);
  ReplayOutcome out;
  EXPECT_EQ(trace(s, 40, 20, int(want.size()), 1, &out), want);
  EXPECT_EQ(out.final_slot, 3);
}

// Ring/Simple at channels 1..8, latency 10 + (c - 6)^2 µs: one subspace, P = 10 (a sampling round of
// 2 arms from a random start), T = 40. From every start the descent ends at 6 channels, and the
// search plays at most 10 + 10 + 40 + 10 calls before it settles.
TEST(Autoccl, DescentFindsTheBestOfAUnimodalFamilyFromAnyStart) {
  SweepBuilder b("autoccl.csv");
  const Context ctx{"h100", Collective::kAllReduce, 2, 8, 1 << 24};
  for (int c = 1; c <= 8; ++c)
    b.add(ctx, Arm{Algo::kRing, Proto::kSimple, uint16_t(c), 0}, 0, float(10 + (c - 6) * (c - 6)), 5.0f, c);
  const Sweep s = b.build();
  for (uint64_t seed = 0; seed < 20; ++seed) {
    ReplayOutcome out;
    const std::vector<int> picks = trace(s, 10, 40, 400, seed, &out);
    EXPECT_EQ(out.final_slot, 5) << "seed " << seed;
    for (size_t t = 70; t < picks.size(); ++t) ASSERT_EQ(picks[t], 5) << "seed " << seed << " call " << t;
  }
}

// While every subspace waits for latencies, select() repeats its last waiting pass's answer instead
// of scoring every arm again. It must decide exactly as the full pass: against a twin that forgets
// that answer before every call, on 60 knob arms of 3 algorithm x protocol subspaces, with the
// latencies held back 0 to 400 calls (the plugin's leader holds them back too), every decision and
// every committed arm are the same, and the shortcut is taken.
TEST(Autoccl, AWaitingPassGivesWhatAFullPassWould) {
  constexpr int kArms = 60;
  const int slots[] = {arm_slot(Algo::kTree, Proto::kLL), arm_slot(Algo::kRing, Proto::kLL128),
                       arm_slot(Algo::kRing, Proto::kSimple)};
  const uint16_t channels[] = {0, 2, 4, 8, 16, 32};
  const uint32_t chunk[] = {0, 15360, 30720, 61440};  // multiples of LL128's 1920 B and Simple's 512 B
  Arm arms[kArms];
  float prior[kArms];
  int k = 0;
  for (int s : slots)
    for (uint16_t c : channels)
      for (int x = 0; x < 4 && k < kArms; ++x) {
        if (slot_proto(s) == Proto::kLL && x > 0) continue;  // LL: NCCL's chunk only
        arms[k] = Arm{slot_algo(s), slot_proto(s), c, chunk[x]};
        prior[k++] = 10.0f + float(s);
      }
  PolicyContextT<kArms> ctx;
  ctx.mask = ArmMaskT<kArms>{};
  for (int j = 0; j < k; ++j) ctx.mask.set(j);
  ctx.prior_us = prior;
  ctx.arms = arms;
  int shortcuts = 0;
  for (int delay : {0, 7, 40, 400}) {
    auto fast = std::make_unique<AutocclPolicyT<kArms>>();
    fast->params = {120, 60};
    fast->reset(ctx);
    auto full = std::make_unique<AutocclPolicyT<kArms>>(*fast);
    std::vector<int> played;
    for (int t = 0; t < 3000; ++t) {
      StepRandom r1(9, 77, uint32_t(t)), r2(9, 77, uint32_t(t));
      full->idle_best = -1;  // the full pass every call
      const int a = fast->select(r1);
      shortcuts += fast->idle_best >= 0 && fast->idle_updates == fast->updates;
      ASSERT_EQ(a, full->select(r2)) << "delay " << delay << " call " << t;
      played.push_back(a);
      if (t >= delay) {
        const int j = played[size_t(t - delay)];
        const double us = 10.0 + double((j * 37) % 11) + 0.25 * double(t % 5);
        fast->update(j, us);
        full->update(j, us);
      }
      StepRandom c1(9, 78, uint32_t(t)), c2(9, 78, uint32_t(t));
      ASSERT_EQ(fast->commit(c1), full->commit(c2)) << "delay " << delay << " call " << t;
    }
  }
  EXPECT_GT(shortcuts, 100);
}
