#pragma once
// The sweep interchange format: long-form CSV, one row per sample,
//   fabric,collective,nodes,gpus_per_node,bytes,algo,proto,sample,time_us[,prior_us]
// Reading is strict (every problem is an InputError with file:line); writing then reading gives a
// bit-identical Sweep (floats are written in their shortest exact form).
#include <iosfwd>
#include <string>

#include "ncclbot/core/sweep.hpp"

namespace ncclbot {

Sweep read_sweep_csv(const std::string& path);
Sweep parse_sweep_csv(std::istream& in, const std::string& source_name);

void write_sweep_csv(const Sweep& sweep, const std::string& path);
void write_sweep_csv(const Sweep& sweep, std::ostream& out);

}  // namespace ncclbot
