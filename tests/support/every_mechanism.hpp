#pragma once
// Call dynamics with every mechanism on (core/call_dynamics.hpp), at strengths that act within a
// few hundred calls: for tests that compare two paths through the replay with all of them active.
#include "ncclbot/core/sweep.hpp"

namespace ncclbot::test {

inline SweepDynamics every_mechanism() {
  SweepDynamics d;
  d.call.job_warmup = 0.2f;
  d.call.job_warmup_calls = 5;
  d.call.arm_warmup = 0.3f;
  d.call.arm_warmup_calls = 4;
  d.call.shift_rate = 0.01f;
  d.call.shift_size = 0.2f;
  d.call.shift_arm_size = 0.15f;
  d.first_use_base_us = 500.0;
  d.first_use_per_host_us = 12.5;
  return d;
}

}  // namespace ncclbot::test
