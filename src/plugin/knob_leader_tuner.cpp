#include "plugin/knob_leader_tuner.hpp"

#include "plugin/decision_logs.hpp"
#include "plugin/state_keeping.hpp"

namespace ncclbot::plugin {

void KnobLeaderTuner::restore_state(const CommIdentity& id) const {
  restore_learner_state<kKnobReplayArms>(id, *engine_, &learner_->knobs(), state_path_, *learner_);
}

void KnobLeaderTuner::save_state(const CommIdentity& id) const {
  save_learner_state<kKnobReplayArms>(id, *engine_, &learner_->knobs(), state_path_, *learner_);
}

void KnobLeaderTuner::log_summary(const CommIdentity& id) const {
  if (log_) flush_decision_log(*log_, id.log);
  if (learner_->table_mismatches() > 0)
    id.log.warn(
        "commId 0x%llx: %llu contexts switched to NCCL's choice for every rank because a follower's cost "
        "table lacked an arm of the leader's",
        (unsigned long long)id.comm_id, (unsigned long long)learner_->table_mismatches());
  id.log.info("knob leader: commId 0x%llx, %llu decisions, %llu latencies learned over knob arms",
              (unsigned long long)id.comm_id, (unsigned long long)learner_->decisions(),
              (unsigned long long)learner_->observations());
}

}  // namespace ncclbot::plugin
