// The learner's contexts and who they wait for: construction, seeding, the ranks and their first
// cost tables before a context starts (leader mode), and its counters.
#include "plugin/online_learner.hpp"

#include <cstring>

#include "ncclbot/replay/leader_protocol.hpp"
#include "ncclbot/replay/replay.hpp"
#include "plugin/knob_seed.hpp"

namespace ncclbot::plugin {

std::atomic<int64_t>& process_memo_budget() {
  static std::atomic<int64_t> budget{int64_t(256) << 20};
  return budget;
}

template <int N>
OnlineLearnerT<N>::OnlineLearnerT(uint64_t comm_id, int nranks, int nnodes,
                                  std::shared_ptr<const PolicyEngine> engine, bool memoize, MemoLimits limits,
                                  KnobSpec knobs)
    : comm_id_(comm_id),
      nranks_(nranks),
      nnodes_(nnodes),
      engine_(std::move(engine)),
      memoize_(memoize),
      limits_{limits.per_context, limits.budget ? limits.budget : &process_memo_budget()},
      knobs_(std::move(knobs)) {}

template <int N>
OnlineLearnerT<N>::~OnlineLearnerT() {
  limits_.budget->fetch_add(memo_charged_);
}

template <int N>
typename OnlineLearnerT<N>::Context& OnlineLearnerT<N>::context_locked(int key, uint64_t bytes,
                                                                       const float* prior) {
  std::unique_ptr<Context>& c = contexts_[key];
  if (!c) {
    c = std::make_unique<Context>();
    seed_locked(*c, key, bytes, prior);
    c->memo_base = memoize_ ? policy_start_locked(key) : 0;
  }
  return *c;
}

template <int N>
uint64_t OnlineLearnerT<N>::policy_start_locked(int key) const {
  // Past every call answered with NCCL's choice, at a window's first call, and never before
  // kLeaderStart (docs/plugin.md "Decision windows").
  const uint64_t w = uint64_t(kLeaderWindow);
  const uint64_t answered = (inactive_end_[key] + w - 1) / w * w;
  return answered > uint64_t(kLeaderStart) ? answered : uint64_t(kLeaderStart);
}

template <int N>
void OnlineLearnerT<N>::seed_locked(Context& c, int key, uint64_t bytes, const float* prior) {
  c.first_bytes = bytes;
  c.slots = usable_prior_arms(prior);
  std::memcpy(c.slot_prior, prior, sizeof c.slot_prior);
  if constexpr (kKnobs) {
    // The arms KnobLearner builds from the same table and lists; more than N keep NCCL's choice.
    seed_knob_policy<N>(*engine_, knobs_, prior, c.arms, c.prior, c.mask, c.policy);
  } else {
    std::memcpy(c.prior, prior, sizeof c.prior);
    c.mask = c.slots;
    engine_->reset(c.policy, c.mask, c.prior);
  }
  c.steps = 0;
  // The replay stream of this context: what the replay engine uses for the same
  // (collective, nodes, GPUs per node, bytes), so plugin-check can compare call for call.
  const int gpn = nnodes_ > 0 ? nranks_ / nnodes_ : nranks_;
  c.stream_id = replay_stream_id(key_collective(key), nnodes_, gpn, c.first_bytes);
}

template <int N>
void OnlineLearnerT<N>::renumber_arms_locked(Context& c, const std::vector<Arm>& before) {
  const auto renumbered = [&](int i) {
    return i >= 0 && size_t(i) < before.size() ? knob_arm_index(c.arms, before[size_t(i)]) : -1;
  };
  for (auto& a : c.held) a.slot = renumbered(a.slot);  // -1: not an arm of the new set, learns nothing
  for (size_t k = 0; k < c.pending_count; ++k) {
    auto& p = c.pending[(c.pending_head + k) % Context::kPendingCap];
    p.slot = Index(renumbered(p.slot));
  }
  for (size_t k = 0; k < c.awaiting_count; ++k)
    if (Index& s = c.awaiting[(c.awaiting_head + k) % Context::kAwaitCap]; s >= 0) s = Index(renumbered(s));
  c.in_flight = PendingPullsT<N>{};  // a fresh policy: nothing of the old arms is pending on it
}

template <int N>
size_t OnlineLearnerT<N>::add_member(uint64_t member) {
  std::lock_guard<std::mutex> lock(mu_);
  // The leader's own ranks always join: a context must never start without their tables.
  const bool local = (member >> 63) != 0;
  if ((local || members_.size() < size_t(nranks_)) && members_.emplace(member, members_.size()).second &&
      local && ++local_ranks_ == 2) {
    // A second rank of the communicator here: latencies no longer say whose call they are, so the
    // hold-back ends (header comment). What is held goes to the policy now, in order.
    for (auto& c : contexts_)
      if (c) {
        absorb_held_locked(*c, UINT64_MAX);
        c->in_flight = PendingPullsT<N>{};
      }
  }
  return members_.size();
}

template <int N>
size_t OnlineLearnerT<N>::members() const {
  std::lock_guard<std::mutex> lock(mu_);
  return members_.size();
}

template <int N>
bool OnlineLearnerT<N>::started(int key) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (key < 0 || key >= kNumContextKeys) return false;
  return memoize_ ? started_[key] : active_;
}

template <int N>
long OnlineLearnerT<N>::table_wanted_locked(int key, uint64_t member) const {
  // Tables are gathered only for communicators the leader belongs to (one of its own ranks is a
  // member): the others never start, and a stranger's communicators must cost nothing.
  if (!memoize_ || started_[key] || members_.empty() || (members_.rbegin()->first >> 63) == 0) return -1;
  const auto m = members_.find(member);
  if (m == members_.end()) return -1;
  const Agreement* a = agreements_[key].get();
  const size_t word = m->second / 64, bit = m->second % 64;
  if (a != nullptr && word < a->seen.size() && ((a->seen[word] >> bit) & 1) != 0) return -1;
  return long(m->second);
}

template <int N>
void OnlineLearnerT<N>::add_table_locked(int key, long index, uint64_t bytes, const float* prior) {
  std::unique_ptr<Agreement>& a = agreements_[key];
  const ArmMask mask = usable_prior_arms(prior);
  if (!a) {
    a = std::make_unique<Agreement>();
    a->mask = mask;
    std::memcpy(a->prior, prior, sizeof a->prior);
    a->bytes = bytes;
  } else if (a->mask.bits != mask.bits) {
    return start_locked(key, false);  // some rank cannot play an arm another can: NCCL's choice
  }
  const size_t word = size_t(index) / 64;
  if (a->seen.size() <= word) a->seen.resize(word + 1, 0);
  a->seen[word] |= uint64_t(1) << (size_t(index) % 64);
  ++a->count;
  if (active_ && a->count >= members_.size() && members_.size() >= size_t(nranks_)) start_locked(key, true);
}

// Starts context `key` at policy_start_locked (kLeaderStart when every table came in time): with
// the policy when every rank's table offered the same arms, else retired to NCCL's choice for
// everyone.
template <int N>
void OnlineLearnerT<N>::start_locked(int key, bool tables_agree) {
  const Agreement& a = *agreements_[key];
  Context* c = contexts_[key].get();
  if (c == nullptr)
    c = &context_locked(key, a.bytes, a.prior);
  else if (tables_agree && c->slots.bits != a.mask.bits) {
    // Restored from a state file for other arms (or seeded by a call of another data type): the
    // policy plays the arms every rank offered, learning afresh.
    const std::vector<Arm> before = c->arms;
    seed_locked(*c, key, a.bytes, a.prior);
    if constexpr (kKnobs) renumber_arms_locked(*c, before);
  }
  if (const uint64_t start = policy_start_locked(key); c->memo_base < start) c->memo_base = start;
  started_[key] = true;
  if (!tables_agree) {
    retire_locked(*c, -1);
    ++mismatches_;
  }
  agreements_[key].reset();
}

template <int N>
void OnlineLearnerT<N>::set_active(bool active) {
  std::lock_guard<std::mutex> lock(mu_);
  active_ = active;
  if (!active || !memoize_ || members_.size() < size_t(nranks_)) return;
  // Contexts whose tables are all in start now (past every call already answered).
  for (int key = 0; key < kNumContextKeys; ++key)
    if (const Agreement* a = agreements_[key].get();
        a != nullptr && !started_[key] && a->count >= members_.size())
      start_locked(key, true);
}

template <int N>
bool OnlineLearnerT<N>::active() const {
  std::lock_guard<std::mutex> lock(mu_);
  return active_;
}

template <int N>
uint64_t OnlineLearnerT<N>::captured_calls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return captured_;
}

template <int N>
uint64_t OnlineLearnerT<N>::graph_replays() const {
  std::lock_guard<std::mutex> lock(mu_);
  return replays_;
}

template <int N>
uint64_t OnlineLearnerT<N>::decisions() const {
  std::lock_guard<std::mutex> lock(mu_);
  return decisions_;
}

template <int N>
uint64_t OnlineLearnerT<N>::observations() const {
  std::lock_guard<std::mutex> lock(mu_);
  return observations_;
}

template <int N>
uint64_t OnlineLearnerT<N>::lost_calls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lost_;
}

template <int N>
uint64_t OnlineLearnerT<N>::unwatched_calls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return unwatched_;
}

template <int N>
uint64_t OnlineLearnerT<N>::unmeasurable_latencies() const {
  std::lock_guard<std::mutex> lock(mu_);
  return unmeasurable_;
}

template <int N>
FeedbackLagHistogram OnlineLearnerT<N>::feedback_lag() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lag_;
}

template <int N>
uint64_t OnlineLearnerT<N>::table_mismatches() const {
  std::lock_guard<std::mutex> lock(mu_);
  return mismatches_;
}

template <int N>
uint64_t OnlineLearnerT<N>::memo_base(int key) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Context* c = key >= 0 && key < kNumContextKeys ? contexts_[key].get() : nullptr;
  return c ? c->memo_base : UINT64_MAX;
}

template <int N>
uint64_t OnlineLearnerT<N>::retired_at(int key) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Context* c = key >= 0 && key < kNumContextKeys ? contexts_[key].get() : nullptr;
  return c ? c->retired_at : UINT64_MAX;
}

// This file's members for both arm capacities (online_learner.hpp): each is compiled here only.
#define NCCLBOT_ONLINE_LEARNER_MEMBERS(N_)                                                                   \
  template OnlineLearnerT<N_>::~OnlineLearnerT();                                                            \
  template OnlineLearnerT<N_>::OnlineLearnerT(uint64_t, int, int, std::shared_ptr<const PolicyEngine>, bool, \
                                              MemoLimits, KnobSpec);                                         \
  template OnlineLearnerT<N_>::Context& OnlineLearnerT<N_>::context_locked(int, uint64_t, const float*);     \
  template uint64_t OnlineLearnerT<N_>::policy_start_locked(int) const;                                      \
  template void OnlineLearnerT<N_>::seed_locked(Context&, int, uint64_t, const float*);                      \
  template size_t OnlineLearnerT<N_>::add_member(uint64_t);                                                  \
  template size_t OnlineLearnerT<N_>::members() const;                                                       \
  template bool OnlineLearnerT<N_>::started(int) const;                                                      \
  template long OnlineLearnerT<N_>::table_wanted_locked(int, uint64_t) const;                                \
  template void OnlineLearnerT<N_>::add_table_locked(int, long, uint64_t, const float*);                     \
  template void OnlineLearnerT<N_>::start_locked(int, bool);                                                 \
  template void OnlineLearnerT<N_>::set_active(bool);                                                        \
  template bool OnlineLearnerT<N_>::active() const;                                                          \
  template uint64_t OnlineLearnerT<N_>::captured_calls() const;                                              \
  template uint64_t OnlineLearnerT<N_>::graph_replays() const;                                               \
  template uint64_t OnlineLearnerT<N_>::decisions() const;                                                   \
  template uint64_t OnlineLearnerT<N_>::observations() const;                                                \
  template uint64_t OnlineLearnerT<N_>::lost_calls() const;                                                  \
  template uint64_t OnlineLearnerT<N_>::unmeasurable_latencies() const;                                      \
  template uint64_t OnlineLearnerT<N_>::unwatched_calls() const;                                             \
  template FeedbackLagHistogram OnlineLearnerT<N_>::feedback_lag() const;                                    \
  template uint64_t OnlineLearnerT<N_>::table_mismatches() const;                                            \
  template uint64_t OnlineLearnerT<N_>::memo_base(int) const;                                                \
  template uint64_t OnlineLearnerT<N_>::retired_at(int) const;
NCCLBOT_ONLINE_LEARNER_MEMBERS(kNumArms)
NCCLBOT_ONLINE_LEARNER_MEMBERS(kKnobReplayArms)
#undef NCCLBOT_ONLINE_LEARNER_MEMBERS

}  // namespace ncclbot::plugin
