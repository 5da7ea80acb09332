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
  // One measured latency of a call of context `key`, and what ran (algorithm or protocol -1: NCCL
  // ran something the plugin cannot name). Whether the learner took it as a call's.
  virtual bool observe_ran(int key, const RanKnobs& ran, double latency_us) = 0;
  // The call just decided in `key` was captured into a CUDA graph, running `slot`.
  virtual void captured(int key, int slot) = 0;
  // One replay of a captured collective of `slot` in `key`: never a call's latency.
  virtual void observe_replay(int key, int slot, uint64_t bytes, double latency_us) = 0;
};

}  // namespace ncclbot::plugin
