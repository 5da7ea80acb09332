#pragma once
// A leader's learner of a 2-rank communicator, as the unit tests drive it: one context (AllReduce,
// 4096 bytes), NCCL's table with two usable arms, the leader's own rank and one follower.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "plugin/leader_wire.hpp"
#include "plugin/online_learner.hpp"

namespace ncclbot::plugin::two_rank {

inline constexpr int kKey = 4 * 65 + 13;  // AllReduce, 4096 bytes
inline constexpr uint64_t kBytes = 4096;

inline std::shared_ptr<const PolicyEngine> engine(const char* spec) {
  std::string error;
  auto e = PolicyEngine::create(spec, 5, &error);
  EXPECT_TRUE(e) << error;
  return e;
}

// NCCL's table with two usable arms: Tree/LL (slot 0, 10 us) and Ring/Simple (slot 5, 20 us).
struct Table {
  float t[7][3];
  Table() {
    for (auto& row : t)
      for (float& v : row) v = -1.0f;
    t[0][0] = 10.0f;
    t[1][2] = 20.0f;
  }
  CostTable cost() { return CostTable(reinterpret_cast<float**>(t), 7, 3); }
  std::vector<float> prior() {
    std::vector<float> p(kNumArms, -1.0f);
    p[0] = 10.0f;
    p[5] = 20.0f;
    return p;
  }
};

// A policy of `eng` on Table's two arms (slots 0 and 5) from `prior`, as the learner seeds the
// context, for a test that drives the same policy by hand.
inline PolicyState hand_driven(const PolicyEngine& eng, const std::vector<float>& prior) {
  PolicyState state;
  ArmMask mask;
  mask.set(0);
  mask.set(5);
  eng.reset(state, mask, prior.data());
  return state;
}

// The arm that ran for a decision: NCCL's own pick (Tree/LL, the cheaper in Table) for -1.
inline int ran(int decided) {
  return decided >= 0 ? decided : 0;
}

// The 2-rank communicator's ranks as the leader's learner knows them: its own, and the follower's.
inline const uint64_t kOwn = OnlineLearner::local_member(0);
inline const uint64_t kFollower = OnlineLearner::follower_member(1, 0);

// The leader's learner of a 2-rank communicator with both ranks present (HELLO counted).
inline std::unique_ptr<OnlineLearner> both_present(const char* spec, MemoLimits limits = {}) {
  auto l = std::make_unique<OnlineLearner>(1, 2, 1, engine(spec), true, limits);
  l->add_member(kOwn);
  l->add_member(kFollower);
  return l;
}

// What the follower's request for the window of kLeaderWindow calls at `start` is answered.
inline std::vector<int8_t> window(OnlineLearner& l, uint64_t start, std::vector<float> prior,
                                  uint64_t member = kFollower) {
  std::vector<int8_t> out(kLeaderWindow, int8_t(-2));
  EXPECT_TRUE(l.decide_range(kKey, kBytes, prior.data(), start, kLeaderWindow, out.data(), member));
  return out;
}

// What the follower's requests for the windows of calls [start, start + calls) are answered, asked
// for one after the other (a follower running that far ahead of the leader).
inline std::vector<int8_t> windows(OnlineLearner& l, uint64_t start, uint64_t calls, std::vector<float> prior,
                                   uint64_t member = kFollower) {
  std::vector<int8_t> out;
  for (uint64_t at = start; at < start + calls; at += kLeaderWindow) {
    const auto w = window(l, at, prior, member);
    out.insert(out.end(), w.begin(), w.end());
  }
  return out;
}

// The follower's cost table reaches the leader without asking for anything (as its first request
// would), so a test can start a context at index 0.
inline void hand_in_follower_table(OnlineLearner& l, std::vector<float> prior) {
  int8_t none[1];
  EXPECT_TRUE(l.decide_range(kKey, kBytes, prior.data(), 0, 0, none, kFollower));
}

}  // namespace ncclbot::plugin::two_rank
