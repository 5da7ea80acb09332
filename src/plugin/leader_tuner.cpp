#include "plugin/leader_tuner.hpp"

#include "plugin/decision_logs.hpp"
#include "plugin/leader_hub.hpp"
#include "plugin/tuner_comm.hpp"

namespace ncclbot::plugin {

bool become_leader(TunerComm& comm, const PluginConfig& cfg, const LeaderKey& key,
                   const std::shared_ptr<const PolicyEngine>& engine, bool restricted, LeaderHub& hub,
                   DecisionLogs& logs) {
  const CommIdentity& id = comm.id();
  if (!hub.start(cfg, key, engine, id.log)) return false;
  // The leader logs the decisions of its own rank.
  std::shared_ptr<DecisionLog> log = cfg.logs_this_rank() ? logs.open(cfg, id.log) : nullptr;
  LeaderHub::Joined joined = hub.join(id, log);
  if (!joined.learner) {
    id.log.warn("the leader already knows communicator 0x%llx with another shape; using NCCL's own choices",
                (unsigned long long)id.comm_id);
    return false;
  }
  LeaderTuner& leader = comm.become<LeaderTuner>(
      CommLearner(engine, joined.learner, joined.logs ? log : nullptr, cfg.state_path), joined.member,
      restricted);
  leader.learner().restore_state(id);
  return true;
}

}  // namespace ncclbot::plugin
