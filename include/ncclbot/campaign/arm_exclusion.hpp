#pragma once
// Why NCCL cannot run one forced arm on one communicator, in words a person can act on. The
// decision itself is the cost model's (model::arm_time_us >= 0, the rules NCCL uses to fill its
// cost table); the explanation is found by asking the same model which single change of the
// topology (NVLS present, a SHARP plugin, one GPU per node, ...) would enable the arm, so the rules
// are never written twice.
#include <optional>
#include <string>

#include "ncclbot/core/collective.hpp"
#include "ncclbot/model/topology.hpp"

namespace ncclbot::campaign {

// nullopt when NCCL can run `slot` for `collective` on `t` at `bytes`; otherwise the reason.
std::optional<std::string> why_arm_left_out(const model::Topology& t, Collective collective, int slot,
                                            uint64_t bytes);

}  // namespace ncclbot::campaign
