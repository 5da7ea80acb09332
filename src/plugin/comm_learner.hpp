#pragma once
// The learner a local or leader role decides with, and what belongs to it: the policy engine, the
// decision log (NCCLBOT_LOG) and the state file (NCCLBOT_STATE), and the lines the communicator's
// finalize says about them.
#include <memory>
#include <string>

#include "plugin/comm_identity.hpp"
#include "plugin/decision_log_writer.hpp"
#include "plugin/online_learner.hpp"
#include "plugin/policy_engine.hpp"

namespace ncclbot::plugin {

class CommLearner {
 public:
  // `log` may be null (no decision log for this rank), `state_path` empty (no state file).
  CommLearner(std::shared_ptr<const PolicyEngine> engine, std::shared_ptr<OnlineLearner> learner,
              std::shared_ptr<DecisionLog> log, std::string state_path)
      : engine_(std::move(engine)),
        learner_(std::move(learner)),
        log_(std::move(log)),
        state_path_(std::move(state_path)) {}

  OnlineLearner& learner() const { return *learner_; }
  const std::shared_ptr<OnlineLearner>& shared_learner() const { return learner_; }
  const PolicyEngine& engine() const { return *engine_; }

  // The contexts the state file holds for this communicator's shape, and one line saying how many.
  void restore_state(const CommIdentity& id) const;
  void save_state(const CommIdentity& id) const;
  // Writes out the decision log's buffer; warns when records were dropped or writes failed.
  void flush_log(const CommIdentity& id) const;
  // The finalize lines: contexts retired on disagreeing tables, decisions, latencies, feedback delay.
  void log_totals(const CommIdentity& id) const;

 private:
  std::shared_ptr<const PolicyEngine> engine_;
  std::shared_ptr<OnlineLearner> learner_;
  std::shared_ptr<DecisionLog> log_;
  std::string state_path_;
};

}  // namespace ncclbot::plugin
