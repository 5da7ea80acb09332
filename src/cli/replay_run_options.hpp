#pragma once
// What the replay and tune calls share (cli/replay_call.hpp, cli/tune_call.hpp): the sweep, the
// policies, the replay sizes, the feedback schedule, the threads and the backend.
#include <cstdint>
#include <string>
#include <vector>

#include "cli/as_deployed.hpp"

namespace ncclbot::cli {

struct ReplayRunOptions {
  std::string sweep_path;
  std::vector<std::string> policies;  // specs; grids expand to every point
  int seeds = 1;
  uint64_t seed = 0;
  int horizon = 0;
  FeedbackOptions feedback;  // delay, window, policy start, --as-deployed and its charges
  int threads = 0;           // 0: all cores
  std::string backend = "cpu";
};

}  // namespace ncclbot::cli
