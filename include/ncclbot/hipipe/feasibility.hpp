#pragma once
// Independent validation of a schedule against the network model: sizes sum to the message,
// orders are permutations, every operation lasts exactly its modelled time, a chunk's stages run in
// sequence, and no dimension serves two operations at once (RS and AG share a dimension's links).
#include <string>
#include <vector>

#include "ncclbot/hipipe/schedule.hpp"

namespace ncclbot::hipipe {

// Empty when feasible; otherwise one line per violation (at most `max_reports`).
std::vector<std::string> schedule_violations(const Network& network, double bytes, const Schedule& schedule,
                                             int max_reports = 20);

}  // namespace ncclbot::hipipe
