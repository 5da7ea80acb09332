#pragma once
// Online mode on rank 0 of several: the leader. This rank decides by its call index in each context
// from the communicator's learner, which also answers the followers (leader_hub.hpp), so every rank
// plays the same decision for the same call.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "ncclbot/core/knob_spec.hpp"
#include "plugin/call_counter.hpp"
#include "plugin/comm_identity.hpp"
#include "plugin/comm_learner.hpp"
#include "plugin/context_key.hpp"
#include "plugin/cost_table.hpp"
#include "plugin/online_pick.hpp"

namespace ncclbot::plugin {

class DecisionLogs;
class LeaderHub;
struct LeaderKey;
struct PluginConfig;
class TunerComm;

class LeaderTuner {
 public:
  // `member`: this rank as the learner counts it (OnlineLearner::local_member).
  LeaderTuner(CommLearner learner, uint64_t member, bool restricted)
      : learner_(std::move(learner)), member_(member), pick_(restricted) {}

  const CommLearner& learner() const { return learner_; }
  // NCCL's hot path: the learner's decision for this rank's next call of the context.
  void get_coll_info(const CommIdentity& id, int coll, size_t bytes, int /*num_pipe_ops*/, CostTable table,
                     int /*reg_buff*/, int* /*nchannels*/) {
    const int key = context_key(coll, bytes);
    if (key < 0) return;
    const uint64_t index = calls_.next(key);
    pick_.play(id, table, coll, bytes, key, learner_.learner().decide_at(key, bytes, table, index, member_));
  }

 private:
  CommLearner learner_;
  const uint64_t member_;
  CallCounter calls_;
  OnlinePick pick_;
};

// Makes `comm` the leader: starts (or joins) the process's leader server and counts this rank in its
// communicator's learner, then restores the state file. With `knobs` (the process's first leader
// fixes them) the leader learns knob arms instead (KnobLeaderTuner), with no state file or log.
// false (and one WARN) when the communicator passes through instead.
bool become_leader(TunerComm& comm, const PluginConfig& cfg, const LeaderKey& key,
                   const std::shared_ptr<const PolicyEngine>& engine, bool restricted, LeaderHub& hub,
                   DecisionLogs& logs, std::shared_ptr<const KnobSpec> knobs = nullptr);

}  // namespace ncclbot::plugin
