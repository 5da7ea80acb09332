#include "plugin/comm_learner.hpp"

#include "ncclbot/log/decision_log_format.hpp"
#include "plugin/decision_logs.hpp"
#include "plugin/state_keeping.hpp"

namespace ncclbot::plugin {

void CommLearner::restore_state(const CommIdentity& id) const {
  restore_learner_state<kNumArms>(id, *engine_, nullptr, state_path_, *learner_);
}

void CommLearner::save_state(const CommIdentity& id) const {
  save_learner_state<kNumArms>(id, *engine_, nullptr, state_path_, *learner_);
}

void CommLearner::flush_log(const CommIdentity& id) const {
  if (log_) flush_decision_log(*log_, id.log);
}

void CommLearner::log_totals(const CommIdentity& id) const {
  if (learner_->table_mismatches() > 0)
    id.log.warn(
        "commId 0x%llx: %llu contexts switched to NCCL's choice for every rank because a follower's cost "
        "table "
        "lacked an arm of the leader's",
        (unsigned long long)id.comm_id, (unsigned long long)learner_->table_mismatches());
  id.log.info(
      "tuner finalised: commId 0x%llx, %llu decisions, %llu measured latencies, %llu latencies outside "
      "[%g, %g] us or untimed dropped (not learned from, not logged)",
      (unsigned long long)id.comm_id, (unsigned long long)learner_->decisions(),
      (unsigned long long)learner_->observations(), (unsigned long long)learner_->unmeasurable_latencies(),
      decision_log::kMinLatencyUs, decision_log::kMaxLatencyUs);
  if (const uint64_t lost = learner_->lost_calls(); lost > 0)
    id.log.info(
        "commId 0x%llx: %llu calls whose latency never came (settled once a call %llu later was answered)",
        (unsigned long long)id.comm_id, (unsigned long long)lost,
        (unsigned long long)OnlineLearner::kLostAfter);
  if (const uint64_t unwatched = learner_->unwatched_calls(); unwatched > 0)
    id.log.info("commId 0x%llx: %llu calls run unwatched by the watch rule %s (settled, not learned from)",
                (unsigned long long)id.comm_id, (unsigned long long)unwatched, engine_->spec().c_str());
  const FeedbackLagHistogram lag = learner_->feedback_lag();
  if (lag.count() > 0)
    id.log.info(
        "commId 0x%llx: feedback delay of %llu policy decisions: median %llu, p90 %llu, max %llu "
        "calls (replay --delay D)",
        (unsigned long long)id.comm_id, (unsigned long long)lag.count(),
        (unsigned long long)lag.quantile(0.5), (unsigned long long)lag.quantile(0.9),
        (unsigned long long)lag.max());
}

}  // namespace ncclbot::plugin
