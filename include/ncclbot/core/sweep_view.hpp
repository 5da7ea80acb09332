#pragma once
// The read-only, trivially copyable view of a forced-arm sweep that policies, the replay core and
// CUDA kernels take by value. Each context has `arms` arm indices (A); in a slot-shaped sweep (every
// arm at NCCL's own channels and chunk size) A = kNumArms and index s is NCCL's slot s, in a knob
// sweep index s is the s-th arm of the context's list, in Arm order, and arm_table names it.
// Layout (all row-major, C contexts, R samples per arm, W = ceil(A / 32) words):
//   time_us [C][A][R]    measured latencies, NaN at indices that were not measured
//   mean_us [C][A]       each arm's price: the mean of its R samples (summed in sample order, double),
//                        or its true latency where the sweep is priced on the truth (Sweep::price_on);
//                        NaN if invalid
//   prior_us[C][A]       the AUTO model's prediction, -1 where invalid; nullptr if no prior
//   valid   [C][W]       bits of the measured indices (one ArmMask word per context when A = 24)
//   arm_table[C][A]      the arm at each index; nullptr in a slot-shaped sweep
//   first_use_us[C]      one-time cost of an algorithm's first use in a job; nullptr if none
//   fresh[C]             each context's call-to-call noise when observations are drawn afresh; nullptr if not
// plus the call dynamics (core/call_dynamics.hpp) the replay applies on top of the samples.
#include <cstdint>
#include <type_traits>

#include "ncclbot/core/arm.hpp"
#include "ncclbot/core/arm_index_set.hpp"
#include "ncclbot/core/call_dynamics.hpp"
#include "ncclbot/core/hd.hpp"
#include "ncclbot/core/observation_noise.hpp"

namespace ncclbot {

// The valid indices of one context of a view, read in place (what nccl_argmin() takes).
struct ValidArms {
  const uint32_t* words;
  NCCLBOT_HD bool has(int s) const { return (words[s >> 5] >> (s & 31)) & 1u; }
};

struct SweepView {
  int num_contexts = 0;
  int samples = 0;
  int arms = kNumArms;  // A: arm indices per context
  const float* time_us = nullptr;
  const double* mean_us = nullptr;
  const float* prior_us = nullptr;
  const uint32_t* valid = nullptr;
  const Arm* arm_table = nullptr;
  const float* first_use_us = nullptr;
  // Per context, or null: a replay draws each call's latency afresh from this noise around the arm's
  // price (mean_us, the simulator's truth) instead of picking one of the stored samples.
  const ObservationNoise* fresh = nullptr;
  CallDynamics dynamics;

  NCCLBOT_HD int valid_words() const { return (arms + 31) / 32; }
  NCCLBOT_HD bool slot_shaped() const { return arm_table == nullptr; }
  // The measured slots of context c of a slot-shaped view.
  NCCLBOT_HD ArmMask mask(int c) const { return ArmMask{valid[c]}; }
  NCCLBOT_HD ValidArms valid_arms(int c) const { return ValidArms{valid + int64_t(c) * valid_words()}; }
  // The valid indices of context c in a set with room for N >= A arms.
  template <int N>
  NCCLBOT_HD ArmMaskT<N> mask_of(int c) const {
    if constexpr (N <= 32) {
      return ArmMask{valid[c]};
    } else {
      ArmIndexSet<N> m = ArmIndexSet<N>::none();
      const ValidArms v = valid_arms(c);
      for (int i = 0; i < valid_words(); ++i) m.words[i] = v.words[i];
      return m;
    }
  }
  NCCLBOT_HD Arm arm(int c, int s) const {
    return arm_table ? arm_table[int64_t(c) * arms + s] : Arm::of_slot(s);
  }
  NCCLBOT_HD float sample(int c, int slot, int r) const {
    return time_us[(int64_t(c) * arms + slot) * samples + r];
  }
  NCCLBOT_HD double mean(int c, int slot) const { return mean_us[int64_t(c) * arms + slot]; }
  NCCLBOT_HD bool has_prior() const { return prior_us != nullptr; }
  NCCLBOT_HD float prior(int c, int slot) const { return prior_us[int64_t(c) * arms + slot]; }
  NCCLBOT_HD double first_use(int c) const { return first_use_us ? double(first_use_us[c]) : 0.0; }
  // Whether a replay needs the dynamic path (anything beyond drawing one of the samples).
  NCCLBOT_HD bool dynamic() const { return dynamics.active() || first_use_us != nullptr; }
};

static_assert(std::is_trivially_copyable_v<SweepView>, "SweepView is passed by value to kernels");

}  // namespace ncclbot
