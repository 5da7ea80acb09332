#include "plugin/tuner_comm.hpp"

namespace ncclbot::plugin {

const char* role_name(Role r) {
  switch (r) {
    case Role::kTable:
      return "table";
    case Role::kLocal:
      return "online (rank-local learner)";
    case Role::kLeader:
      return "online (leader)";
    case Role::kFollower:
      return "online (follower)";
    case Role::kKnobLocal:
      return "online (rank-local learner over knob arms)";
    case Role::kKnobLeader:
      return "online (leader over knob arms)";
    default:
      return "off (NCCL's own choices)";
  }
}

void TunerComm::get_coll_info(int coll, size_t bytes, int num_pipe_ops, float** cost_table, int num_algo,
                              int num_proto, int reg_buff, int* nchannels) {
  if (std::holds_alternative<PassThroughTuner>(roles_)) return;
  const CostTable table(cost_table, num_algo, num_proto);
  if (!table.present()) return;
  // Each role takes the table view by value: a copy of its own stays in registers across its calls.
  std::visit([&](auto& r) { r.get_coll_info(id_, coll, bytes, num_pipe_ops, table, reg_buff, nchannels); },
             roles_);
}

const CommLearner* TunerComm::learner() const {
  if (const auto* local = std::get_if<LocalTuner>(&roles_)) return &local->learner();
  if (const auto* leader = std::get_if<LeaderTuner>(&roles_)) return &leader->learner();
  return nullptr;
}

std::shared_ptr<LatencySink> TunerComm::latency_sink() const {
  if (const CommLearner* l = learner()) return l->shared_learner();
  if (const auto* k = std::get_if<KnobTuner>(&roles_)) return k->learner();
  if (const auto* l = std::get_if<KnobLeaderTuner>(&roles_)) return l->learner();
  return nullptr;
}

void TunerComm::save_state() const {
  if (const CommLearner* l = learner())
    l->save_state(id_);
  else if (const auto* k = std::get_if<KnobTuner>(&roles_))
    k->save_state(id_);
  else if (const auto* kl = std::get_if<KnobLeaderTuner>(&roles_))
    kl->save_state(id_);
}

const PolicyEngine* TunerComm::engine() const {
  if (const CommLearner* l = learner()) return &l->engine();
  if (const auto* f = std::get_if<FollowerTuner>(&roles_)) return &f->engine();
  if (const auto* k = std::get_if<KnobTuner>(&roles_)) return &k->learner()->engine();
  if (const auto* l = std::get_if<KnobLeaderTuner>(&roles_)) return &l->engine();
  return nullptr;
}

bool TunerComm::watches_fewer() const {
  const PolicyEngine* e = engine();
  return e != nullptr && e->watches_fewer();
}

std::string TunerComm::describe(const std::string& table_path) const {
  if (const auto* t = std::get_if<TableTuner>(&roles_))
    return ", table " + table_path + " (" + std::to_string(t->rows_applied()) + " rows apply)";
  const PolicyEngine* e = engine();
  return e ? ", policy " + e->spec() + ", seed " + std::to_string(e->seed()) : std::string();
}

void TunerComm::log_summary() const {
  if (const CommLearner* l = learner()) l->log_totals(id_);
  if (const auto* f = std::get_if<FollowerTuner>(&roles_)) f->log_waits(id_);
  if (const auto* k = std::get_if<KnobTuner>(&roles_)) k->log_summary(id_);
  if (const auto* l = std::get_if<KnobLeaderTuner>(&roles_)) l->log_summary(id_);
}

}  // namespace ncclbot::plugin
