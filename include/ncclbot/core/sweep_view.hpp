#pragma once
// The read-only, trivially copyable view of a forced-arm sweep that policies, the replay core and
// CUDA kernels take by value. Layout (all row-major, C contexts, R samples per arm):
//   time_us [C][kNumArms][R]  measured latencies, NaN in slots of arms that were not measured
//   mean_us [C][kNumArms]     mean of the R samples (summed in sample order, double), NaN if invalid
//   prior_us[C][kNumArms]     the AUTO model's prediction, -1 where invalid; nullptr if no prior
//   valid   [C]               ArmMask bits of the measured arms
//   first_use_us[C]           one-time cost of an algorithm's first use in a job; nullptr if none
// plus the call dynamics (core/call_dynamics.hpp) the replay applies on top of the samples.
#include <cstdint>
#include <type_traits>

#include "ncclbot/core/arm.hpp"
#include "ncclbot/core/call_dynamics.hpp"
#include "ncclbot/core/hd.hpp"

namespace ncclbot {

struct SweepView {
  int num_contexts = 0;
  int samples = 0;
  const float* time_us = nullptr;
  const double* mean_us = nullptr;
  const float* prior_us = nullptr;
  const uint32_t* valid = nullptr;
  const float* first_use_us = nullptr;
  CallDynamics dynamics;

  NCCLBOT_HD ArmMask mask(int c) const { return ArmMask{valid[c]}; }
  NCCLBOT_HD float sample(int c, int slot, int r) const {
    return time_us[(int64_t(c) * kNumArms + slot) * samples + r];
  }
  NCCLBOT_HD double mean(int c, int slot) const { return mean_us[int64_t(c) * kNumArms + slot]; }
  NCCLBOT_HD bool has_prior() const { return prior_us != nullptr; }
  NCCLBOT_HD float prior(int c, int slot) const { return prior_us[int64_t(c) * kNumArms + slot]; }
  NCCLBOT_HD double first_use(int c) const { return first_use_us ? double(first_use_us[c]) : 0.0; }
  // Whether a replay needs the dynamic path (anything beyond drawing one of the samples).
  NCCLBOT_HD bool dynamic() const { return dynamics.active() || first_use_us != nullptr; }
};

static_assert(std::is_trivially_copyable_v<SweepView>, "SweepView is passed by value to kernels");

}  // namespace ncclbot
