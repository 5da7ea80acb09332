#pragma once
// HiPIPE as a simulated arm: the model's predicted time of one collective on a multi-dimensional
// fabric preset, in the units and context terms the simulator uses (us; fabric, collective, nodes,
// GPUs per node, nccl-tests `size` bytes). Only all-reduce is modelled.
#include <cstdint>
#include <string_view>

#include "ncclbot/core/collective.hpp"
#include "ncclbot/hipipe/fabric_preset.hpp"
#include "ncclbot/hipipe/schedulers.hpp"

namespace ncclbot::hipipe {

// UsageError for a collective other than all-reduce, zero bytes, one rank or an unknown fabric.
double hipipe_predicted_time_us(const FabricPreset& fabric, Collective collective, int nodes,
                                int gpus_per_node, std::uint64_t bytes, const SchedulerOptions& options = {});

// Same, by preset name (each preset file is read once per process; thread-safe).
double hipipe_predicted_time_us(std::string_view fabric, Collective collective, int nodes, int gpus_per_node,
                                std::uint64_t bytes, const SchedulerOptions& options = {});

}  // namespace ncclbot::hipipe
