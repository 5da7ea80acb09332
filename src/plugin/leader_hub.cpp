#include "plugin/leader_hub.hpp"

#include <string>

#include "plugin/cost_table.hpp"
#include "plugin/leader_server.hpp"

namespace ncclbot::plugin {

bool LeaderHub::start(const PluginConfig& cfg, const LeaderKey& key,
                      std::shared_ptr<const PolicyEngine> engine, const PluginLog& log,
                      std::shared_ptr<const KnobSpec> knobs) {
  std::lock_guard<std::mutex> lock(mu_);
  if (started_) return true;
  knobs_ = std::move(knobs);
  LeaderHandler handler;
  handler.hello = &LeaderHub::on_hello;
  handler.decide = &LeaderHub::on_request;
  handler.ctx = this;
  std::string error;
  engine_ = engine;
  if (!LeaderServer::start(cfg.leader_address, key, handler, LeaderLimits{}, &error)) {
    log.warn("%s; using NCCL's own choices", error.c_str());
    engine_.reset();
    knobs_.reset();
    return false;
  }
  started_ = true;
  log.init_info("decision leader listening on %s (authenticated)", cfg.leader_address.c_str());
  return true;
}

std::shared_ptr<const KnobSpec> LeaderHub::knobs() {
  std::lock_guard<std::mutex> lock(mu_);
  return knobs_;
}

LeaderHub::Joined LeaderHub::join(const CommIdentity& id, std::shared_ptr<DecisionLog> log) {
  std::lock_guard<std::mutex> lock(mu_);
  Joined joined;
  joined.learner = learner_locked(id.comm_id, id.nranks, id.nnodes, true);
  if (!joined.learner) return joined;
  const int local_ranks = ++local_members_[id.comm_id];
  joined.member = LeaderLearner::local_member(uint32_t(local_ranks - 1));
  joined.learner->add_member(joined.member);
  if (log) {
    if (local_ranks == 1) {
      joined.learner->set_decision_log(log, joined.member);
      joined.logs = true;
    } else {
      joined.learner->stop_decision_log();
      id.log.warn(
          "NCCLBOT_LOG: this process holds %d ranks of commId 0x%llx, whose latencies the log cannot "
          "tell apart; its decisions are not logged from here on",
          local_ranks, (unsigned long long)id.comm_id);
    }
  }
  if (knobs_ && local_ranks == 2)
    id.log.warn(
        "NCCLBOT_KNOBS: this process holds 2 or more ranks of commId 0x%llx, whose latencies do not say "
        "which call ran which chunk; the leader learns nothing over knob arms from here on (every rank "
        "still plays its decisions)",
        (unsigned long long)id.comm_id);
  update_activation_locked(id.comm_id);
  return joined;
}

std::shared_ptr<LeaderLearner> LeaderHub::learner_locked(uint64_t comm_id, int nranks, int nnodes,
                                                         bool local) {
  auto it = learners_.find(comm_id);
  if (it != learners_.end()) {
    if (it->second->nranks() != nranks || it->second->nnodes() != nnodes) return nullptr;
    if (local && local_members_[comm_id] == 0 && foreign_learners_ > 0) --foreign_learners_;
    return it->second;
  }
  if (!local && foreign_learners_ >= kMaxForeignLearners) return nullptr;
  // A communicator the leader has not joined (yet): its decisions stay NCCL's own until all of its
  // ranks, the leader's included, are present.
  std::shared_ptr<LeaderLearner> learner;
  if (knobs_)
    learner =
        std::make_shared<KnobLeaderLearner>(comm_id, nranks, nnodes, engine_, true, MemoLimits{}, *knobs_);
  else
    learner = std::make_shared<OnlineLearner>(comm_id, nranks, nnodes, engine_, true);
  learner->set_active(false);
  learners_.emplace(comm_id, learner);
  if (!local) ++foreign_learners_;
  update_activation_locked(comm_id);
  return learner;
}

void LeaderHub::update_activation_locked(uint64_t comm_id) {
  auto it = learners_.find(comm_id);
  if (it == learners_.end()) return;
  const int local = local_members_[comm_id];
  // Sticky: once every rank is present, contexts may start (each once every rank's cost table of it
  // is in); memoised decisions never change.
  if (local > 0 && it->second->members() >= size_t(it->second->nranks()) && !it->second->active())
    it->second->set_active(true);
}

bool LeaderHub::on_hello(void* self, const WireHello& h) {
  auto* hub = static_cast<LeaderHub*>(self);
  try {
    std::lock_guard<std::mutex> l(hub->mu_);
    auto learner = hub->learner_locked(h.comm_id, int(h.nranks), int(h.nnodes), false);
    if (!learner) return false;
    learner->add_member(LeaderLearner::follower_member(h.rank, h.ordinal));  // a repeated HELLO counts once
    hub->update_activation_locked(h.comm_id);
    return true;
  } catch (...) {
    return false;
  }
}

void LeaderHub::on_request(void* self, const WireRequest& r, WireDecisions* d) {
  auto* hub = static_cast<LeaderHub*>(self);
  d->status = DecisionStatus::kLater;
  try {
    std::shared_ptr<LeaderLearner> learner;
    {
      std::lock_guard<std::mutex> l(hub->mu_);
      learner = hub->learner_locked(r.comm_id, int(r.nranks), int(r.nnodes), false);
    }
    if (!learner) return;
    float prior[kNumArms];
    prior_of_nccl_costs(r.prior, prior);
    if (learner->decide_window(int(r.key), r.bytes, prior, r.start, int(r.count), d->arms,
                               LeaderLearner::follower_member(r.rank, r.ordinal)))
      d->status = DecisionStatus::kOk;
  } catch (...) {
    d->status = DecisionStatus::kLater;
  }
}

}  // namespace ncclbot::plugin
