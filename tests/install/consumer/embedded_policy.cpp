// Another tuner embedding ncclbot's UCB1 from the installed headers alone (ncclbot::policy): three
// arms of 15, 12 and 10 us, the model (prior) preferring the slowest. Prints the arm it settles on
// and how often it played each; the 10 us arm (slot 2, Tree/Simple) must win.
#include <cstdio>

#include "ncclbot/policy/policy.hpp"

int main() {
  using namespace ncclbot;
  const float prior[kNumArms] = {9.0f, 11.0f, 13.0f};  // slots 0..2; the rest are never used
  float prior_all[kNumArms];
  for (int s = 0; s < kNumArms; ++s) prior_all[s] = s < 3 ? prior[s] : -1.0f;
  const double latency_us[3] = {15.0, 12.0, 10.0};
  PolicyConfig cfg;
  cfg.kind = PolicyKind::kUcb1;
  cfg.c = 0.1;
  cfg.n0 = 1.0;
  AnyPolicy policy = make_policy(cfg);
  PolicyContext ctx;
  for (int s = 0; s < 3; ++s) ctx.mask.set(s);
  ctx.prior_us = prior_all;
  policy_reset(policy, ctx);
  int plays[3] = {0, 0, 0};
  for (uint32_t t = 0; t < 400; ++t) {
    StepRandom rng(7, 42, t);
    const int slot = policy_select(policy, rng);
    if (slot < 0 || slot > 2) return 1;
    ++plays[slot];
    policy_update(policy, slot, latency_us[slot]);
  }
  StepRandom final_rng(7, 42, 400);
  const int committed = policy_commit(policy, final_rng);
  std::printf("committed %d plays %d %d %d\n", committed, plays[0], plays[1], plays[2]);
  return committed == 2 && plays[2] > plays[0] + plays[1] ? 0 : 1;
}
