#include "plugin/leader_tuner.hpp"

#include "plugin/decision_logs.hpp"
#include "plugin/leader_hub.hpp"
#include "plugin/plugin_log.hpp"
#include "plugin/tuner_comm.hpp"

namespace ncclbot::plugin {

bool become_leader(TunerComm& comm, const PluginConfig& cfg, const LeaderKey& key,
                   const std::shared_ptr<const PolicyEngine>& engine, bool restricted, LeaderHub& hub,
                   DecisionLogs& logs, std::shared_ptr<const KnobSpec> knobs) {
  const CommIdentity& id = comm.id();
  if (!hub.start(cfg, key, engine, id.log, std::move(knobs))) return false;
  const bool over_knobs = hub.knobs() != nullptr;
  // The leader logs the decisions of its own rank (over knob arms as knob calls, as knob mode does).
  bool logs_here = cfg.logs_this_rank();
  if (logs_here && over_knobs && engine->defers_propensity()) {
    logs_here = false;
    if (warn_once("NCCLBOT_LOG knob leader"))
      id.log.warn(
          "NCCLBOT_LOG: %s states its probabilities over knob arms only as integrals, which knob mode does "
          "not compute; no decision log",
          engine->spec().c_str());
  }
  std::shared_ptr<DecisionLog> log = logs_here ? logs.open(cfg, id.log) : nullptr;
  LeaderHub::Joined joined = hub.join(id, log);
  if (!joined.learner) {
    id.log.warn("the leader already knows communicator 0x%llx with another shape; using NCCL's own choices",
                (unsigned long long)id.comm_id);
    return false;
  }
  if (over_knobs) {
    KnobLeaderTuner& leader =
        comm.become<KnobLeaderTuner>(engine, std::static_pointer_cast<KnobLeaderLearner>(joined.learner),
                                     joined.member, restricted, joined.logs ? log : nullptr, cfg.state_path);
    leader.restore_state(id);
    return true;
  }
  LeaderTuner& leader =
      comm.become<LeaderTuner>(CommLearner(engine, std::static_pointer_cast<OnlineLearner>(joined.learner),
                                           joined.logs ? log : nullptr, cfg.state_path),
                               joined.member, restricted);
  leader.learner().restore_state(id);
  return true;
}

}  // namespace ncclbot::plugin
