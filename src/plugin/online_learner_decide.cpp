// Deciding (online_learner.hpp): a fresh policy decision, the leader's memo of decisions by call
// index and its retirement, and the entry points that ask for one or a range of them.
#include "plugin/online_learner.hpp"

#include <algorithm>

#include "ncclbot/replay/leader_protocol.hpp"
#include "ncclbot/replay/replay.hpp"
#include "plugin/cost_table.hpp"

namespace ncclbot::plugin {
namespace {

// Decisions per lock hold in decide_range: a few microseconds even for Thompson sampling.
constexpr int kSlice = 8;

}  // namespace

template <int N>
int OnlineLearnerT<N>::memo_decision_locked(const Context& c, uint64_t index) const {
  if (index < c.memo_base) return -1;
  if (index >= c.retired_at) return c.retired_slot;
  return index - c.memo_base < c.memo.size() ? int(c.memo[size_t(index - c.memo_base)]) : -1;
}

template <int N>
DecidedArm OnlineLearnerT<N>::decided_arm_locked(int key, int index) const {
  if constexpr (kKnobs) {
    const Context* c = contexts_[key].get();
    if (c == nullptr || index < 0 || size_t(index) >= c->arms.size()) return DecidedArm{};
    return DecidedArm::of(c->arms[size_t(index)]);
  } else {
    (void)key;
    return DecidedArm::of_slot(index);
  }
}

template <int N>
DecidedArm OnlineLearnerT<N>::decided_arm(int key, int index) const {
  if (key < 0 || key >= kNumContextKeys) return DecidedArm{};
  std::lock_guard<std::mutex> lock(mu_);
  return decided_arm_locked(key, index);
}

template <int N>
bool OnlineLearnerT<N>::decide_window(int key, uint64_t bytes, const float* prior, uint64_t start, int count,
                                      DecidedArm* out, uint64_t member) {
  if (count < 0 || count > kLeaderWindow) return false;
  Index indices[kLeaderWindow];
  if (!decide_range(key, bytes, prior, start, count, indices, member)) return false;
  // A context's arms are fixed once it has started, and only a started context decides an arm.
  std::lock_guard<std::mutex> lock(mu_);
  for (int j = 0; j < count; ++j) out[j] = decided_arm_locked(key, indices[j]);
  return true;
}

template <int N>
int OnlineLearnerT<N>::fresh_decision_locked(Context& c, uint64_t index) {
  last_counted_ = false;
  if (c.mask.empty()) return -1;
  lag_.add(index > c.absorbed ? index - c.absorbed : 0);
  // No report for kPendingWithoutFeedback decisions: nothing counts as pending until one comes.
  const bool feedback_flows = c.steps - c.steps_at_feedback < kPendingWithoutFeedback;
  if (!feedback_flows && c.in_flight.total > 0) {
    c.in_flight = PendingPullsT<N>{};
    for (size_t k = 0; k < c.awaiting_count; ++k)  // the calls still wait, their decisions no longer count
      if (Index& s = c.awaiting[(c.awaiting_head + k) % Context::kAwaitCap]; s >= 0) s = -1;
  }
  // Pending: in local mode the decisions made since the last latency came back, as in a replay with
  // that delay; in leader mode the decisions whose latencies are not absorbed yet; none for a leader
  // with several of the ranks, whose latencies do not say which call they are (undelayed).
  const bool counted = feedback_flows && !(memoize_ && local_ranks_ > 1);
  static constexpr PendingPullsT<N> kNothingPending{};  // what a decision that counts nothing pending sees
  const PendingPullsT<N>& pending = counted ? c.in_flight : kNothingPending;
  const int slot = log_ ? engine_->select_pending_logged(c.policy, c.stream_id, c.steps, pending,
                                                         &last_propensity_, contest_out_)
                        : engine_->select_pending(c.policy, c.stream_id, c.steps, pending);
  ++c.steps;
  if (!playable(c, slot)) return c.watch.last = -1;
  c.watch.last = slot;
  if (counted && c.in_flight.count[slot] < UINT16_MAX) {
    ++c.in_flight.count[slot];
    ++c.in_flight.total;
    last_counted_ = true;
  }
  return slot;
}

template <int N>
void OnlineLearnerT<N>::await_locked(Context& c, uint64_t index, int slot) {
  if (c.awaiting.empty()) {
    c.awaiting.resize(Context::kAwaitCap);
    c.awaiting_first = index;
  }
  if (c.awaiting_count == Context::kAwaitCap) {  // the oldest call's latency never came: let it go
    unpend(c, c.awaiting[c.awaiting_head]);
    c.awaiting_head = (c.awaiting_head + 1) % Context::kAwaitCap;
    --c.awaiting_count;
    ++c.awaiting_first;
  }
  if (c.awaiting_count == 0) c.awaiting_first = index;
  c.awaiting[(c.awaiting_head + c.awaiting_count) % Context::kAwaitCap] = Index(slot);
  ++c.awaiting_count;
}

template <int N>
void OnlineLearnerT<N>::settle_oldest_locked(Context& c) {
  const auto pop = [&c] {
    const Index s = c.awaiting[c.awaiting_head];
    c.awaiting_head = (c.awaiting_head + 1) % Context::kAwaitCap;
    --c.awaiting_count;
    ++c.awaiting_first;
    return s;
  };
  while (c.awaiting_count > 0 && c.awaiting[c.awaiting_head] == Context::kSettled) pop();
  if (c.awaiting_count > 0) unpend(c, pop());
}

template <int N>
void OnlineLearnerT<N>::settle_call_locked(Context& c, uint64_t call) {
  settle_captured_locked(c, call);
  while (c.awaiting_count > 0) {
    const Index s = c.awaiting[c.awaiting_head];
    const bool lost = c.awaiting_first + kLostAfter <= call && c.awaiting_first < c.bound;
    if (s != Context::kSettled && !lost) break;
    if (s != Context::kSettled) {
      unpend(c, s);
      ++lost_;
    }
    c.awaiting_head = (c.awaiting_head + 1) % Context::kAwaitCap;
    --c.awaiting_count;
    ++c.awaiting_first;
  }
}

template <int N>
uint64_t OnlineLearnerT<N>::take_unbound_locked(Context& c) {
  return take_unbound(c.bound, c.awaiting_count > 0 ? c.awaiting_first : c.next_call, c.next_call);
}

template <int N>
uint64_t OnlineLearnerT<N>::bind_call(int key) {
  if (key < 0 || key >= kNumContextKeys) return kNoCall;
  std::lock_guard<std::mutex> lock(mu_);
  if (memoize_) return kOldestCall;
  Context* c = contexts_[key].get();
  return c == nullptr ? kNoCall : take_unbound_locked(*c);
}

template <int N>
void OnlineLearnerT<N>::settle_captured_locked(Context& c, uint64_t index) {
  if (index < c.awaiting_first || index - c.awaiting_first >= c.awaiting_count) return;
  Index& s = c.awaiting[(c.awaiting_head + size_t(index - c.awaiting_first)) % Context::kAwaitCap];
  unpend(c, s);
  s = Context::kSettled;
}

template <int N>
void OnlineLearnerT<N>::retire_locked(Context& c, int slot) {
  if (c.retired_at != UINT64_MAX) return;
  c.retired_at = c.memo_base + c.memo.size();
  c.retired_slot = slot;
}

// One more memo entry within the per-context cap and the process budget (charged 64 Ki entries at a
// time, of sizeof(Index) bytes each). The memo is a deque: it grows in small blocks and never copies
// what it holds, so a long memo never stalls getCollInfo on a reallocation.
template <int N>
bool OnlineLearnerT<N>::grow_memo_locked(Context& c) {
  constexpr size_t kEntries = 65536;
  constexpr int64_t kCharge = int64_t(kEntries * sizeof(Index));
  if (c.memo.size() >= limits_.per_context) return false;
  if (c.memo.size() % kEntries == 0) {
    if (limits_.budget->fetch_sub(kCharge) < kCharge) {
      limits_.budget->fetch_add(kCharge);
      return false;
    }
    memo_charged_ += kCharge;
  }
  return true;
}

template <int N>
int OnlineLearnerT<N>::decide_at_locked(int key, Context* c, uint64_t index) {
  ++decisions_;
  if (!memoize_) {
    const int slot = active_ && c ? fresh_decision_locked(*c, index) : -1;
    if (c) await_locked(*c, index, last_counted_ && slot >= 0 ? slot : -1);
    return slot;
  }
  if (index < uint64_t(kLeaderStart)) return -1;  // NCCL's own, whenever the context starts
  if (!started_[key] || c == nullptr) {
    if (index + 1 > inactive_end_[key]) inactive_end_[key] = index + 1;
    return -1;
  }
  if (index < c->memo_base) return -1;
  while (c->memo_base + c->memo.size() <= index && index < c->retired_at) {
    if (!grow_memo_locked(*c)) {
      // Memo full: from here on every rank plays the arm the policy has settled on.
      StepRandom rng(engine_->seed(), c->stream_id, uint32_t(c->steps));
      const int slot = policy_commit(c->policy, rng);
      retire_locked(*c, playable(*c, slot) ? slot : -1);
      break;
    }
    const uint64_t next = c->memo_base + c->memo.size();
    // The protocol: call `next` is decided with the leader's latencies of the calls before
    // leader_feedback_end(next), those that have arrived, and none after them.
    absorb_held_locked(*c, leader_feedback_end(next));
    const Index slot = Index(log_ ? logged_memo_decision_locked(*c, next) : fresh_decision_locked(*c, next));
    try {
      c->memo.push_back(slot);
    } catch (...) {  // out of memory: the same retirement as a full memo, for every rank
      retire_locked(*c, -1);
      break;
    }
  }
  return memo_decision_locked(*c, index);
}

template <int N>
int OnlineLearnerT<N>::decide_next(int key, uint64_t bytes, const float* prior) {
  if (key < 0 || key >= kNumContextKeys) return -1;
  std::lock_guard<std::mutex> lock(mu_);
  Context& c = context_locked(key, bytes, prior);
  return decide_at_locked(key, &c, c.next_call++);
}

template <int N>
int OnlineLearnerT<N>::decide_next(int key, uint64_t bytes, const CostTable& table) {
  if (key < 0 || key >= kNumContextKeys) return -1;
  std::lock_guard<std::mutex> lock(mu_);
  Context* c = contexts_[key].get();
  if (c == nullptr) {
    float prior[kNumArms];
    table.prior(prior);
    c = &context_locked(key, bytes, prior);
  }
  const uint64_t index = c->next_call++;
  if (!log_) return decide_at_locked(key, c, index);
  const size_t at = pending_slot_locked(*c);
  last_propensity_ = 1.0;  // NCCL's own choice, when the policy does not decide
  // A deferred propensity's contest goes straight into the ring, beside its decision.
  contest_out_ = c->contests.empty() ? nullptr : &c->contests[at];
  const int slot = decide_at_locked(key, c, index);
  contest_out_ = nullptr;
  push_pending_locked(key, *c, at, index, bytes, last_propensity_, false, slot, table);
  return slot;
}

template <int N>
int OnlineLearnerT<N>::decide_at(int key, uint64_t bytes, const CostTable& table, uint64_t index,
                                 uint64_t member) {
  if (key < 0 || key >= kNumContextKeys) return -1;
  std::lock_guard<std::mutex> lock(mu_);
  return own_call_locked(key, bytes, table, index, member);
}

template <int N>
DecidedArm OnlineLearnerT<N>::decide_arm_at(int key, uint64_t bytes, const CostTable& table, uint64_t index,
                                            uint64_t member) {
  if (key < 0 || key >= kNumContextKeys) return DecidedArm{};
  std::lock_guard<std::mutex> lock(mu_);
  return decided_arm_locked(key, own_call_locked(key, bytes, table, index, member));
}

template <int N>
int OnlineLearnerT<N>::own_call_locked(int key, uint64_t bytes, const CostTable& table, uint64_t index,
                                       uint64_t member) {
  Context* c = contexts_[key].get();
  if (c == nullptr || !started_[key]) {
    // Until the context starts, this rank's first table of it is one the start waits for (read
    // from NCCL's table only then: the hot path copies nothing).
    const long wanted = table_wanted_locked(key, member);
    if (c == nullptr || wanted >= 0) {
      float prior[kNumArms];
      table.prior(prior);
      if (c == nullptr) c = &context_locked(key, bytes, prior);
      if (wanted >= 0) add_table_locked(key, wanted, bytes, prior);
    }
  }
  if (index + 1 > own_calls_[key]) own_calls_[key] = index + 1;
  if constexpr (kKnobs) set_chunk_locked(*c, index, 0);  // NCCL's own until getChunkSize hands one over
  if (!log_ || member != log_member_) return decide_at_locked(key, c, index);
  // The logging rank's call: its decision is either made now (fresh, straight into the pending
  // ring) or was made earlier for a follower (its probability waits in the ahead ring).
  const size_t at = pending_slot_locked(*c);
  ThompsonContestT<N>* contest = c->contests.empty() ? nullptr : &c->contests[at];
  logging_key_ = key;
  logging_index_ = index;
  logging_fresh_ = false;
  last_propensity_ = 1.0;
  contest_out_ = contest;
  const int slot = decide_at_locked(key, c, index);
  contest_out_ = nullptr;
  logging_index_ = UINT64_MAX;
  double propensity = 1.0;  // NCCL's choice, or the arm a retired context settled on
  bool lost = false;
  if (logging_fresh_) {
    propensity = last_propensity_;
  } else if (started_[key] && index >= c->memo_base && index < c->memo_base + c->memo.size() &&
             index < c->retired_at) {
    lost = !take_ahead_locked(*c, index, &propensity, contest);
  }
  push_pending_locked(key, *c, at, index, bytes, propensity, lost, slot, table);
  return slot;
}

template <int N>
bool OnlineLearnerT<N>::decide_range(int key, uint64_t bytes, const float* prior, uint64_t start, int count,
                                     Index* out, uint64_t member) {
  if (key < 0 || key >= kNumContextKeys || count < 0 || start > (uint64_t(1) << 62)) return false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (const long wanted = table_wanted_locked(key, member); wanted >= 0)
      add_table_locked(key, wanted, bytes, prior);
    // Before the context starts the answers are NCCL's choice, stored nowhere (past kLeaderStart
    // they move the policy's start later), so nobody ever waits for anyone. Once started, the memo
    // may grow only kMaxFollowerLead past the leader's own count (or past where the policy started).
    if (started_[key]) {
      Context& c = *contexts_[key];
      const uint64_t reference = std::max(own_calls_[key], c.memo_base);
      if (start > reference + kMaxFollowerLead) return false;
      if ((c.slots.bits & ~usable_prior_arms(prior).bits) != 0 && c.retired_at == UINT64_MAX) {
        // A later call of this rank lacks an arm the policy may pick: NCCL's choice from here on,
        // for every rank (the indices already decided cannot change).
        retire_locked(c, -1);
        ++mismatches_;
      }
    }
  }
  for (int i = 0; i < count; i += kSlice) {
    std::lock_guard<std::mutex> lock(mu_);
    Context* c = contexts_[key].get();
    for (int j = i; j < count && j < i + kSlice; ++j)
      out[j] = Index(decide_at_locked(key, c, start + uint64_t(j)));
  }
  return true;
}

// This file's members for both arm capacities (online_learner.hpp): each is compiled here only.
#define NCCLBOT_ONLINE_LEARNER_DECIDE_MEMBERS(N_)                                                          \
  template int OnlineLearnerT<N_>::memo_decision_locked(const Context&, uint64_t) const;                   \
  template DecidedArm OnlineLearnerT<N_>::decided_arm_locked(int, int) const;                              \
  template DecidedArm OnlineLearnerT<N_>::decided_arm(int, int) const;                                     \
  template bool OnlineLearnerT<N_>::decide_window(int, uint64_t, const float*, uint64_t, int, DecidedArm*, \
                                                  uint64_t);                                               \
  template int OnlineLearnerT<N_>::fresh_decision_locked(Context&, uint64_t);                              \
  template void OnlineLearnerT<N_>::await_locked(Context&, uint64_t, int);                                 \
  template void OnlineLearnerT<N_>::settle_oldest_locked(Context&);                                        \
  template void OnlineLearnerT<N_>::settle_call_locked(Context&, uint64_t);                                \
  template uint64_t OnlineLearnerT<N_>::take_unbound_locked(Context&);                                     \
  template uint64_t OnlineLearnerT<N_>::bind_call(int);                                                    \
  template void OnlineLearnerT<N_>::settle_captured_locked(Context&, uint64_t);                            \
  template void OnlineLearnerT<N_>::retire_locked(Context&, int);                                          \
  template bool OnlineLearnerT<N_>::grow_memo_locked(Context&);                                            \
  template int OnlineLearnerT<N_>::decide_at_locked(int, Context*, uint64_t);                              \
  template int OnlineLearnerT<N_>::decide_next(int, uint64_t, const float*);                               \
  template int OnlineLearnerT<N_>::decide_next(int, uint64_t, const CostTable&);                           \
  template int OnlineLearnerT<N_>::decide_at(int, uint64_t, const CostTable&, uint64_t, uint64_t);         \
  template DecidedArm OnlineLearnerT<N_>::decide_arm_at(int, uint64_t, const CostTable&, uint64_t,         \
                                                        uint64_t);                                         \
  template int OnlineLearnerT<N_>::own_call_locked(int, uint64_t, const CostTable&, uint64_t, uint64_t);   \
  template bool OnlineLearnerT<N_>::decide_range(int, uint64_t, const float*, uint64_t, int, Index*,       \
                                                 uint64_t);
NCCLBOT_ONLINE_LEARNER_DECIDE_MEMBERS(kNumArms)
NCCLBOT_ONLINE_LEARNER_DECIDE_MEMBERS(kKnobReplayArms)
#undef NCCLBOT_ONLINE_LEARNER_DECIDE_MEMBERS

}  // namespace ncclbot::plugin
