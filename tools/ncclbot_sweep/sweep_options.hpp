#pragma once
// ncclbot-sweep's command line: the contexts (collectives x sizes) and arms (algorithms x protocols x
// channel counts) to time, how often, in what seeded order, and where the sweep goes.
#include <cstdint>
#include <string>
#include <vector>

#include "ncclbot/core/arm.hpp"
#include "ncclbot/core/collective.hpp"

namespace ncclbot::sweep_tool {

struct SweepOptions {
  std::vector<Collective> collectives;
  std::vector<uint64_t> bytes;
  std::vector<Arm> arms;  // the cross product, in Arm order; chunk_bytes 0 (no per-call chunk in NCCL)
  int iterations = 20;
  int warmup = 5;
  uint64_t seed = 1;
  std::string fabric = "local";
  std::string out;  // the sweep CSV; the side files sit beside it (side_files.hpp)
  bool help = false;
  std::string help_text;
};

// UsageError naming the option and the value on bad input (an algorithm NCCL does not know, channels
// above 64, a size that is no whole number of floats, ...).
SweepOptions parse_sweep_options(int argc, const char* const* argv);

}  // namespace ncclbot::sweep_tool
