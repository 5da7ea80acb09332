// Deciding (online_learner.hpp): a fresh policy decision, the leader's memo of decisions by call
// index and its retirement, and the entry points that ask for one or a range of them.
#include "plugin/online_learner.hpp"

#include <algorithm>

#include "ncclbot/replay/leader_protocol.hpp"
#include "ncclbot/replay/replay.hpp"
#include "plugin/cost_table.hpp"

namespace ncclbot::plugin {
namespace {

constexpr PendingPulls kNothingPending{};  // what a decision that counts nothing pending sees

// Decisions per lock hold in decide_range: a few microseconds even for Thompson sampling.
constexpr int kSlice = 8;

}  // namespace

int OnlineLearner::fresh_decision_locked(Context& c, uint64_t index) {
  last_counted_ = false;
  if (c.mask.empty()) return -1;
  lag_.add(index > c.absorbed ? index - c.absorbed : 0);
  // No report for kPendingWithoutFeedback decisions: nothing counts as pending until one comes.
  const bool feedback_flows = c.steps - c.steps_at_feedback < kPendingWithoutFeedback;
  if (!feedback_flows && c.in_flight.total > 0) {
    c.in_flight = PendingPulls{};
    for (size_t k = 0; k < c.awaiting_count; ++k)  // the calls still wait, their decisions no longer count
      if (int8_t& s = c.awaiting[(c.awaiting_head + k) % Context::kAwaitCap]; s >= 0) s = -1;
  }
  // Pending: in local mode the decisions made since the last latency came back, as in a replay with
  // that delay; in leader mode the decisions whose latencies are not absorbed yet; none for a leader
  // with several of the ranks, whose latencies do not say which call they are (undelayed).
  const bool counted = feedback_flows && !(memoize_ && local_ranks_ > 1);
  const PendingPulls& pending = counted ? c.in_flight : kNothingPending;
  const int slot = log_ ? engine_->select_pending_logged(c.policy, c.stream_id, c.steps, pending,
                                                         &last_propensity_, contest_out_)
                        : engine_->select_pending(c.policy, c.stream_id, c.steps, pending);
  ++c.steps;
  if (!is_nccl_slot(slot) || !c.mask.has(slot)) return -1;
  if (counted && c.in_flight.count[slot] < UINT16_MAX) {
    ++c.in_flight.count[slot];
    ++c.in_flight.total;
    last_counted_ = true;
  }
  return slot;
}

void OnlineLearner::await_locked(Context& c, uint64_t index, int slot) {
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
  c.awaiting[(c.awaiting_head + c.awaiting_count) % Context::kAwaitCap] = int8_t(slot);
  ++c.awaiting_count;
}

void OnlineLearner::settle_oldest_locked(Context& c) {
  const auto pop = [&c] {
    const int8_t s = c.awaiting[c.awaiting_head];
    c.awaiting_head = (c.awaiting_head + 1) % Context::kAwaitCap;
    --c.awaiting_count;
    ++c.awaiting_first;
    return s;
  };
  while (c.awaiting_count > 0 && c.awaiting[c.awaiting_head] == Context::kSettled) pop();
  if (c.awaiting_count > 0) unpend(c, pop());
}

void OnlineLearner::settle_call_locked(Context& c, uint64_t call) {
  settle_captured_locked(c, call);
  while (c.awaiting_count > 0) {
    const int8_t s = c.awaiting[c.awaiting_head];
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

uint64_t OnlineLearner::take_unbound_locked(Context& c) {
  return take_unbound(c.bound, c.awaiting_count > 0 ? c.awaiting_first : c.next_call, c.next_call);
}

uint64_t OnlineLearner::bind_call(int key) {
  if (key < 0 || key >= kNumContextKeys) return kNoCall;
  std::lock_guard<std::mutex> lock(mu_);
  if (memoize_) return kOldestCall;
  Context* c = contexts_[key].get();
  return c == nullptr ? kNoCall : take_unbound_locked(*c);
}

void OnlineLearner::settle_captured_locked(Context& c, uint64_t index) {
  if (index < c.awaiting_first || index - c.awaiting_first >= c.awaiting_count) return;
  int8_t& s = c.awaiting[(c.awaiting_head + size_t(index - c.awaiting_first)) % Context::kAwaitCap];
  unpend(c, s);
  s = Context::kSettled;
}

void OnlineLearner::retire_locked(Context& c, int slot) {
  if (c.retired_at != UINT64_MAX) return;
  c.retired_at = c.memo_base + c.memo.size();
  c.retired_slot = slot;
}

// One more memo entry within the per-context cap and the process budget (charged 64 KiB at a time).
// The memo is a deque: it grows in small blocks and never copies what it holds, so a long memo
// never stalls getCollInfo on a reallocation.
bool OnlineLearner::grow_memo_locked(Context& c) {
  constexpr size_t kCharge = 65536;
  if (c.memo.size() >= limits_.per_context) return false;
  if (c.memo.size() % kCharge == 0) {
    if (limits_.budget->fetch_sub(int64_t(kCharge)) < int64_t(kCharge)) {
      limits_.budget->fetch_add(int64_t(kCharge));
      return false;
    }
    memo_charged_ += int64_t(kCharge);
  }
  return true;
}

int OnlineLearner::decide_at_locked(int key, Context* c, uint64_t index) {
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
      retire_locked(*c, (is_nccl_slot(slot) && c->mask.has(slot)) ? slot : -1);
      break;
    }
    const uint64_t next = c->memo_base + c->memo.size();
    // The protocol: call `next` is decided with the leader's latencies of the calls before
    // leader_feedback_end(next), those that have arrived, and none after them.
    absorb_held_locked(*c, leader_feedback_end(next));
    const int8_t slot =
        int8_t(log_ ? logged_memo_decision_locked(*c, next) : fresh_decision_locked(*c, next));
    try {
      c->memo.push_back(slot);
    } catch (...) {  // out of memory: the same retirement as a full memo, for every rank
      retire_locked(*c, -1);
      break;
    }
  }
  if (index >= c->retired_at) return c->retired_slot;
  return c->memo[size_t(index - c->memo_base)];
}

int OnlineLearner::decide_next(int key, uint64_t bytes, const float* prior) {
  if (key < 0 || key >= kNumContextKeys) return -1;
  std::lock_guard<std::mutex> lock(mu_);
  Context& c = context_locked(key, bytes, prior);
  return decide_at_locked(key, &c, c.next_call++);
}

int OnlineLearner::decide_next(int key, uint64_t bytes, const CostTable& table) {
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

int OnlineLearner::decide_at(int key, uint64_t bytes, const CostTable& table, uint64_t index,
                             uint64_t member) {
  if (key < 0 || key >= kNumContextKeys) return -1;
  std::lock_guard<std::mutex> lock(mu_);
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
  if (!log_ || member != log_member_) return decide_at_locked(key, c, index);
  // The logging rank's call: its decision is either made now (fresh, straight into the pending
  // ring) or was made earlier for a follower (its probability waits in the ahead ring).
  const size_t at = pending_slot_locked(*c);
  ThompsonContest* contest = c->contests.empty() ? nullptr : &c->contests[at];
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

bool OnlineLearner::decide_range(int key, uint64_t bytes, const float* prior, uint64_t start, int count,
                                 int8_t* out, uint64_t member) {
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
      if ((c.mask.bits & ~usable_prior_arms(prior).bits) != 0 && c.retired_at == UINT64_MAX) {
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
      out[j] = int8_t(decide_at_locked(key, c, start + uint64_t(j)));
  }
  return true;
}

}  // namespace ncclbot::plugin
