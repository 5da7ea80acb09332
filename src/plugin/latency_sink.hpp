#pragma once
// What the profiler and the report function hand a communicator's learner: they name a
// communicator, not a tuner context, and find its learner through the LearnerDirectory. OnlineLearner
// (one arm per algorithm and protocol) and KnobLearner (knob arms) both take them.
#include <cstdint>

#include "plugin/knob_choice.hpp"

namespace ncclbot::plugin {

class LatencySink {
 public:
  virtual ~LatencySink() = default;
  // The communicator's shape, for a latency whose reporter knows no communicator hash.
  virtual int nranks() const = 0;
  virtual int nnodes() const = 0;
  // What a latency answers: a call the profiler bound when its Coll event started (bind_call), the
  // oldest call still waiting (kOldestCall: the report function, which names no call), or none
  // (kNoCall: a collective no decision was waiting for).
  static constexpr uint64_t kNoCall = UINT64_MAX, kOldestCall = UINT64_MAX - 1;
  // A Coll event of context `key` started (NCCL starts them in call order, after the tuner decided
  // the call): the call it is, for observe_ran. A learner that pairs latencies in arrival order
  // answers kOldestCall.
  virtual uint64_t bind_call(int key) = 0;
  // One measured latency of call `call` of context `key`, and what ran (algorithm or protocol -1:
  // NCCL ran something the plugin cannot name). Whether the learner took it as the call's.
  virtual bool observe_ran(int key, const RanKnobs& ran, double latency_us, uint64_t call) = 0;
  // The call just decided in `key` was captured into a CUDA graph, running `slot`.
  virtual void captured(int key, int slot) = 0;
  // One replay of a captured collective of `slot` in `key`: never a call's latency.
  virtual void observe_replay(int key, int slot, uint64_t bytes, double latency_us) = 0;
};

}  // namespace ncclbot::plugin
