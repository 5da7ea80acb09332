#pragma once
// What the leader's server (leader_hub.hpp) asks of a communicator's learner, whatever its arms are:
// one arm per algorithm x protocol (OnlineLearner) or knob arms (KnobLeaderLearner), both
// online_learner.hpp. Not NCCL's hot path: the tuner roles hold the learner's own type.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "plugin/decided_arm.hpp"
#include "plugin/latency_sink.hpp"

namespace ncclbot::plugin {

class DecisionLog;

class LeaderLearner : public LatencySink {
 public:
  // The ranks whose cost tables a context waits for before it starts, by identity (a rank in the
  // leader's process, or a follower's (rank, ordinal) as in its HELLO).
  static uint64_t local_member(uint32_t ordinal) { return (uint64_t(1) << 63) | ordinal; }
  static uint64_t follower_member(uint32_t rank, uint32_t ordinal) {
    return (uint64_t(rank) << 32) | ordinal;
  }
  // Registering one again changes nothing; followers past nranks members are not kept (the leader's
  // own ranks always are). Returns how many there are.
  virtual size_t add_member(uint64_t member) = 0;
  virtual size_t members() const = 0;
  // Decisions are NCCL's own until every rank of the communicator is connected.
  virtual void set_active(bool active) = 0;
  virtual bool active() const = 0;
  // Decisions for calls [start, start + count) of `key` for follower `member`, whose cost table is
  // `prior` (kNumArms entries): false (nothing decided) when the follower is too far ahead.
  virtual bool decide_window(int key, uint64_t bytes, const float* prior, uint64_t start, int count,
                             DecidedArm* out, uint64_t member) = 0;
  // Logs the decisions of `member`'s calls (null: none); stop_decision_log ends it.
  virtual void set_decision_log(std::shared_ptr<DecisionLog> log, uint64_t member) = 0;
  virtual void stop_decision_log() = 0;
};

}  // namespace ncclbot::plugin
