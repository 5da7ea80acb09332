// The decision log's bookkeeping (online_learner.hpp): the pending ring of the logging rank's
// decisions, the ahead ring of those made earlier for followers, and each size's cost table.
#include "plugin/online_learner.hpp"

#include <cmath>
#include <vector>

#include "ncclbot/log/decision_log_format.hpp"
#include "plugin/decision_log_writer.hpp"

namespace ncclbot::plugin {

template <int N>
void OnlineLearnerT<N>::allocate_pending_locked(Context& c) {
  c.pending.resize(Context::kPendingCap);
  if (engine_->defers_propensity()) c.contests.resize(Context::kPendingCap);
}

template <int N>
int OnlineLearnerT<N>::logged_memo_decision_locked(Context& c, uint64_t index) {
  const bool own = index == logging_index_ && &c == contexts_[logging_key_].get();
  if (own) {  // the logging rank's current call: contest_out_ already points into its pending ring
    last_propensity_ = 1.0;
    logging_fresh_ = true;
    return fresh_decision_locked(c, index);
  }
  if (c.ahead_count == c.ahead.size()) {
    if (c.ahead.size() < Context::kAheadCap) {  // grow, keeping the order (oldest first)
      const size_t cap = c.ahead.empty() ? 64 : 2 * c.ahead.size();
      std::vector<typename Context::Ahead> grown(cap);
      std::vector<ThompsonContestT<N>> grown_contests(engine_->defers_propensity() ? cap : 0);
      for (size_t i = 0; i < c.ahead_count; ++i) {
        const size_t from = (c.ahead_head + i) % c.ahead.size();
        grown[i] = c.ahead[from];
        if (!grown_contests.empty()) grown_contests[i] = c.ahead_contests[from];
      }
      c.ahead.swap(grown);
      c.ahead_contests.swap(grown_contests);
      c.ahead_head = 0;
    } else {  // full: the oldest decision's call will go unlogged
      c.ahead_head = (c.ahead_head + 1) % c.ahead.size();
      --c.ahead_count;
    }
  }
  const size_t at = (c.ahead_head + c.ahead_count) % c.ahead.size();
  ThompsonContestT<N>* saved = contest_out_;
  contest_out_ = c.ahead_contests.empty() ? nullptr : &c.ahead_contests[at];
  last_propensity_ = 1.0;
  const int slot = fresh_decision_locked(c, index);
  contest_out_ = saved;
  c.ahead[at] = {index, last_propensity_};
  ++c.ahead_count;
  return slot;
}

template <int N>
bool OnlineLearnerT<N>::take_ahead_locked(Context& c, uint64_t index, double* propensity,
                                          ThompsonContestT<N>* contest) {
  while (c.ahead_count > 0) {
    const typename Context::Ahead a = c.ahead[c.ahead_head];
    if (a.index > index) break;
    const size_t at = c.ahead_head;
    c.ahead_head = (c.ahead_head + 1) % c.ahead.size();
    --c.ahead_count;
    if (a.index < index) continue;  // a call the logging rank has passed (never its own)
    if (std::isnan(a.propensity) && contest && !c.ahead_contests.empty()) *contest = c.ahead_contests[at];
    *propensity = a.propensity;
    return true;
  }
  return false;
}

template <int N>
void OnlineLearnerT<N>::set_decision_log(std::shared_ptr<DecisionLog> log, uint64_t member) {
  std::lock_guard<std::mutex> lock(mu_);
  log_ = std::move(log);
  log_member_ = member;
}

template <int N>
void OnlineLearnerT<N>::stop_decision_log() {
  std::lock_guard<std::mutex> lock(mu_);
  log_.reset();
  for (auto& c : contexts_)
    if (c) {
      c->pending_count = 0;
      c->ahead_count = 0;
    }
}

// This file's members for both arm capacities (online_learner.hpp): each is compiled here only.
#define NCCLBOT_ONLINE_LEARNER_LOG_MEMBERS(N_)                                                             \
  template void OnlineLearnerT<N_>::allocate_pending_locked(Context&);                                     \
  template int OnlineLearnerT<N_>::logged_memo_decision_locked(Context&, uint64_t);                        \
  template bool OnlineLearnerT<N_>::take_ahead_locked(Context&, uint64_t, double*, ThompsonContestT<N_>*); \
  template void OnlineLearnerT<N_>::set_decision_log(std::shared_ptr<DecisionLog>, uint64_t);              \
  template void OnlineLearnerT<N_>::stop_decision_log();
NCCLBOT_ONLINE_LEARNER_LOG_MEMBERS(kNumArms)
NCCLBOT_ONLINE_LEARNER_LOG_MEMBERS(kKnobReplayArms)
#undef NCCLBOT_ONLINE_LEARNER_LOG_MEMBERS

}  // namespace ncclbot::plugin
