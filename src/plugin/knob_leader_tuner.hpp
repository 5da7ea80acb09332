#pragma once
// Online mode over knob arms on rank 0 of several (NCCLBOT_KNOBS with a leader; docs/plugin.md "Knob
// mode"): the leader decides by its call index in each context from the communicator's
// KnobLeaderLearner, which also answers the followers with whole arms, so every rank plays the same
// algorithm, protocol, channel count and chunk size for the same call. The chunk NCCL was handed for
// each of this rank's calls goes back to the learner, which credits the call's latency to the arm
// that ran.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "plugin/call_counter.hpp"
#include "plugin/comm_identity.hpp"
#include "plugin/context_key.hpp"
#include "plugin/cost_table.hpp"
#include "plugin/decision_log_writer.hpp"
#include "plugin/online_learner.hpp"
#include "plugin/online_pick.hpp"

namespace ncclbot::plugin {

class KnobLeaderTuner {
 public:
  // `member`: this rank as the learner counts it (LeaderLearner::local_member).
  // `log`: the decision log the learner writes this rank's calls to (null: none); `state_path`:
  // NCCLBOT_STATE (empty: none).
  KnobLeaderTuner(std::shared_ptr<const PolicyEngine> engine, std::shared_ptr<KnobLeaderLearner> learner,
                  uint64_t member, bool restricted, std::shared_ptr<DecisionLog> log, std::string state_path)
      : engine_(std::move(engine)),
        learner_(std::move(learner)),
        member_(member),
        log_(std::move(log)),
        state_path_(std::move(state_path)),
        pick_(restricted) {}

  const PolicyEngine& engine() const { return *engine_; }
  const std::shared_ptr<KnobLeaderLearner>& learner() const { return learner_; }
  // NCCL's hot path: the learner's arm for this rank's next call of the context.
  void get_coll_info(const CommIdentity& id, int coll, size_t bytes, int /*num_pipe_ops*/, CostTable table,
                     int /*reg_buff*/, int* nchannels) {
    const int key = context_key(coll, bytes);
    if (key < 0) return;
    const uint64_t index = calls_.next(key);
    pick_.play_arm(id, table, coll, bytes, key, learner_->decide_arm_at(key, bytes, table, index, member_),
                   index, nchannels);
  }
  // Tuner v6: the decided chunk, recorded as this call's (its latency is credited with it).
  void get_chunk_size(const CommIdentity& id, int coll, int algo, int proto, size_t* chunk_size) {
    if (const ChunkHandover::Pending* p = pick_.hand_over(id, coll, algo, proto, chunk_size))
      learner_->chunk_set(p->key, p->call, p->arm.chunk_bytes);
  }
  // The finalize lines: the decision log written out, decisions and latencies learned.
  void log_summary(const CommIdentity& id) const;
  // NCCLBOT_STATE, as for the slot leader (CommLearner): restored after the rank joins, saved at
  // finalize.
  void restore_state(const CommIdentity& id) const;
  void save_state(const CommIdentity& id) const;

 private:
  std::shared_ptr<const PolicyEngine> engine_;
  std::shared_ptr<KnobLeaderLearner> learner_;
  const uint64_t member_;
  const std::shared_ptr<DecisionLog> log_;
  const std::string state_path_;
  CallCounter calls_;
  OnlinePick pick_;
};

}  // namespace ncclbot::plugin
