#pragma once
// The sweep interchange format: long-form CSV, one row per sample,
//   fabric,collective,nodes,gpus_per_node,bytes,algo,proto,sample,time_us[,prior_us]
// preceded, when the sweep carries call dynamics (core/call_dynamics.hpp, a simulated sweep), by
//   # dynamics: job_warmup=F job_warmup_calls=N arm_warmup=F arm_warmup_calls=N shift_rate=F
//               shift_size=F shift_arm_size=F first_use_base_us=F first_use_per_host_us=F
// (one line; without shift_arm_size, as written before levels had a shared part, shift_size is
// each arm's own part)
// Other lines starting with '#' are comments. Reading is strict (every problem is an InputError with
// file:line); writing then reading gives a bit-identical Sweep (floats are written in their shortest exact
// form).
#include <iosfwd>
#include <string>

#include "ncclbot/core/sweep.hpp"

namespace ncclbot {

Sweep read_sweep_csv(const std::string& path);
Sweep parse_sweep_csv(std::istream& in, const std::string& source_name);

void write_sweep_csv(const Sweep& sweep, const std::string& path);
void write_sweep_csv(const Sweep& sweep, std::ostream& out);

}  // namespace ncclbot
