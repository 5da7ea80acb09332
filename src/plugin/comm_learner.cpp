#include "plugin/comm_learner.hpp"

#include <mutex>

#include "ncclbot/log/decision_log_format.hpp"
#include "plugin/decision_logs.hpp"
#include "plugin/state_file.hpp"

namespace ncclbot::plugin {
namespace {

// State file reads and writes, one at a time in the process (communicators may share the file).
std::mutex& state_file_mutex() {
  static std::mutex* mu = new std::mutex();  // never destroyed, like the runtime
  return *mu;
}

}  // namespace

void CommLearner::restore_state(const CommIdentity& id) const {
  if (state_path_.empty()) return;
  std::lock_guard<std::mutex> lock(state_file_mutex());
  StateFile file(*engine_);
  std::string warning;
  if (!file.load(state_path_, &warning)) {
    id.log.warn("%s", warning.c_str());
    return;
  }
  const int restored = learner_->import_contexts(file);
  // Whether this communicator continues or starts clean (a split or shrunk one is a new shape).
  if (restored > 0)
    id.log.info("commId 0x%llx: restored %d contexts from %s", (unsigned long long)id.comm_id, restored,
                state_path_.c_str());
  else
    id.log.info("commId 0x%llx: %s holds no context of %d ranks on %d nodes: starts clean",
                (unsigned long long)id.comm_id, state_path_.c_str(), id.nranks, id.nnodes);
}

void CommLearner::save_state(const CommIdentity& id) const {
  if (state_path_.empty()) return;
  std::lock_guard<std::mutex> lock(state_file_mutex());
  StateFile file(*engine_);
  learner_->export_contexts(file);
  std::string warning;
  if (!file.save(state_path_, &warning)) id.log.warn("state not saved: %s", warning.c_str());
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
