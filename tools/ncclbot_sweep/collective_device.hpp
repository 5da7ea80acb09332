#pragma once
// The thin layer between the sweep and NCCL + CUDA: everything the sweep asks of a GPU, so the
// tests can run the very same adapter (nccl_device.cpp) against a stand-in libnccl and CUDA runtime
// on the CPU (tests/ncclbot_sweep/standin_*.cpp).
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "ncclbot/core/arm.hpp"
#include "ncclbot/core/collective.hpp"
#include "rank_group.hpp"

namespace ncclbot::sweep_tool {

// NCCL or CUDA failed on this rank outside a call (opening the communicator, filling a buffer).
class DeviceFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class CallOutcome {
  kRan,      // NCCL ran the call; time_us holds its time
  kRefused,  // NCCL refused the forced arm (ncclInvalidArgument / ncclInvalidUsage): not available here
  kFailed,   // anything else: this rank cannot go on
};

struct CallResult {
  CallOutcome outcome = CallOutcome::kRan;
  double time_us = 0.0;
  std::string message;  // NCCL's or CUDA's words when not kRan
};

class CollectiveDevice {
 public:
  virtual ~CollectiveDevice() = default;
  // This rank's send buffer for the context (send_value of buffer_contents.hpp).
  virtual void fill_send(Collective collective, uint64_t bytes) = 0;
  // The receive buffer set to NaN, so a call that writes nothing fails the check.
  virtual void clear_received(uint64_t bytes) = 0;
  // One call between two CUDA events on the rank's stream; arm nullopt = NCCL's own pick (no
  // config). A forced arm goes with algSelection naming it, forceAlgSelection = 1 and, where its
  // channels are set, minCTAs = maxCTAs = channels.
  virtual CallResult call(Collective collective, uint64_t bytes, const std::optional<Arm>& arm) = 0;
  // "" when the receive buffer holds the expected result, else the first wrong element.
  virtual std::string check_received(Collective collective, uint64_t bytes) = 0;
};

// The GPU of group.local_rank() and one NCCL communicator over the group, with buffers of
// max_bytes and the communicator's maxCTAs raised to max_channels where that is above 0.
std::unique_ptr<CollectiveDevice> open_nccl_device(RankGroup& group, uint64_t max_bytes, int max_channels);

}  // namespace ncclbot::sweep_tool
