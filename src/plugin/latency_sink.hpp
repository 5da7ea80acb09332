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
  // A bound call still waiting when a call this many later in its context has been answered: its
  // latency was lost (its kernel-channel events never arrived), and it is settled unlearned. A
  // margin, as the channels' reports may complete two calls out of order.
  static constexpr uint64_t kLostAfter = 64;
  // A Coll event of context `key` started (NCCL starts them in call order, after the tuner decided
  // the call): the call it is, for observe_ran. A learner that pairs latencies in arrival order
  // answers kOldestCall.
  virtual uint64_t bind_call(int key) = 0;
  // bind_call's rule over a context's calls: the next one no Coll event has taken, from the oldest
  // call still waiting on (earlier ones are settled or let go of) and below the next call to be
  // decided; it advances `bound`. kNoCall when every decided call is taken.
  static uint64_t take_unbound(uint64_t& bound, uint64_t oldest_waiting, uint64_t next_call) {
    const uint64_t call = bound > oldest_waiting ? bound : oldest_waiting;
    if (call >= next_call) return kNoCall;
    bound = call + 1;
    return call;
  }
  // One measured latency of call `call` of context `key`, and what ran (algorithm or protocol -1:
  // NCCL ran something the plugin cannot name). Whether the learner took it as the call's.
  virtual bool observe_ran(int key, const RanKnobs& ran, double latency_us, uint64_t call) = 0;
  // Whether the learner wants the latency of its next call of context `key` (docs/plugin.md "The
  // cost of watching"): the profiler switches NCCL's kernel events for the call it expects next.
  // A policy without a watch rule wants every one.
  virtual bool watch_next(int key) {
    (void)key;
    return true;
  }
  // The call just decided in `key` was captured into a CUDA graph, running `slot`.
  virtual void captured(int key, int slot) = 0;
  // One replay of a captured collective of `slot` in `key`: never a call's latency.
  virtual void observe_replay(int key, int slot, uint64_t bytes, double latency_us) = 0;
};

}  // namespace ncclbot::plugin
