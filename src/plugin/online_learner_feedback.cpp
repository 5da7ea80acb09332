// Feedback (online_learner.hpp): measured latencies held back and absorbed by the policy on the
// protocol's schedule, their decision-log records, and captured calls and graph replays.
#include "plugin/online_learner.hpp"

#include <algorithm>
#include <cmath>

#include "ncclbot/log/decision_log_format.hpp"
#include "ncclbot/replay/leader_protocol.hpp"
#include "plugin/decision_log_writer.hpp"

namespace ncclbot::plugin {

template <int N>
void OnlineLearnerT<N>::absorb_locked(Context& c, int slot, double latency_us, uint64_t call) {
  if (slot >= 0) engine_->update(c.policy, slot, latency_us);  // -1: a report the policy cannot use
  if (!memoize_) settle_answer_locked(c, call);  // whichever arm ran: credited to it, its call settled
  const uint64_t index = c.absorbed++;
  // The decision of that call is no longer pending (calls outside the memo were never counted).
  if (index < c.memo_base || index - c.memo_base >= c.memo.size()) return;
  const int decided = c.memo[size_t(index - c.memo_base)];
  if (decided >= 0 && c.in_flight.count[decided] > 0) {
    --c.in_flight.count[decided];
    --c.in_flight.total;
  }
}

template <int N>
void OnlineLearnerT<N>::release_held_locked(int key, Context& c) {
  if (c.retired_at != UINT64_MAX || absorbs_at_once_locked()) {  // no decision waits for them
    absorb_held_locked(c, UINT64_MAX);
    return;
  }
  // The first call the policy may still decide: past the memo, and, before the context starts,
  // where it would start now (kLeaderStart at the earliest, past every call answered with NCCL's
  // choice). The latencies of the calls before the start reach the policy on the same schedule as
  // the others (arrival j is call j's) and were never pending.
  uint64_t undecided = c.memo_base + c.memo.size();
  if (!started_[key]) undecided = std::max(undecided, policy_start_locked(key));
  absorb_held_locked(c, leader_feedback_end(undecided));
  while (c.held.size() > kMaxHeldLatencies) absorb_held_locked(c, c.absorbed + 1);  // the bound
}

template <int N>
void OnlineLearnerT<N>::log_call_locked(int key, Context& c, int slot, double latency_us,
                                        const RanKnobs& facts) {
  // A latency no decision of this rank is waiting for, or one whose probability is gone: not
  // logged rather than logged without a probability.
  const size_t at = c.pending_head;
  if (c.pending_count == 0 || c.pending[at].lost) {
    if (c.pending_count > 0) pop_pending_locked(c);
    log_->drop();
    return;
  }
  const typename Context::Pending p = pop_pending_locked(c);
  decision_log::CallRecord r;
  r.comm_hash = comm_id_;
  r.call_index = p.index;
  r.bytes = p.bytes;
  r.latency_us = latency_us;
  r.nodes = uint32_t(nnodes_);
  r.ranks = uint32_t(nranks_);
  r.collective = key_collective(key);
  r.nccl_slot = p.nccl_slot;
  r.user_tag = facts.user_tag;
  r.symmetric = facts.symmetric;
  // The probability of the decision, also when NCCL ran another arm (docs/ope.md "Calls NCCL ran
  // otherwise"): such a call names the arm decided, and the readers leave it out and count it.
  r.propensity = p.propensity;
  if constexpr (kKnobs) {
    // A knob call record (version 4, as KnobLearner writes it): the arm that ran and, when NCCL ran
    // another, the arm decided; the probability is over the context's knob arms.
    if (!r.symmetric && (slot < 0 || size_t(slot) >= c.arms.size())) return log_->drop();
    const Arm decided = p.slot >= 0 ? c.arms[size_t(p.slot)] : Arm::of_slot(p.nccl_slot);
    log_->append_knob_call(r, r.symmetric ? decided : c.arms[size_t(slot)], decided);
  } else {
    r.slot = r.symmetric ? -1 : slot;
    r.overridden = !r.symmetric && p.slot != slot;
    r.decided_slot = p.slot;
    if (std::isnan(p.propensity) && !c.contests.empty()) {
      log_->append_deferred(r, c.contests[at]);
      return;
    }
    unsigned char out[decision_log::kCallRecordBytes];
    decision_log::encode(r, out);
    log_->append(out, sizeof out);
  }
}

template <int N>
bool OnlineLearnerT<N>::align_pending_locked(Context& c, uint64_t call) {
  while (c.pending_count > 0 && c.pending[c.pending_head].index < call) {
    pop_pending_locked(c);
    log_->drop();
  }
  return c.pending_count > 0 && c.pending[c.pending_head].index == call;
}

template <int N>
bool OnlineLearnerT<N>::observe(int key, int slot, double latency_us, uint64_t call, const RanKnobs& facts) {
  const bool arm = kKnobs ? slot >= 0 && slot < N : is_nccl_slot(slot);
  if (key < 0 || key >= kNumContextKeys || !(arm || slot == kUnnamedArm)) return false;
  std::lock_guard<std::mutex> lock(mu_);
  return observe_locked(key, slot, latency_us, call, facts);
}

template <int N>
bool OnlineLearnerT<N>::observe_ran(int key, const RanKnobs& ran, double latency_us, uint64_t call) {
  const bool named = ran.algo >= 0 && ran.algo < kNumNcclAlgos && ran.proto >= 0 && ran.proto < kNumProtos;
  if constexpr (!kKnobs) {
    return observe(key, named ? ran.algo * kNumProtos + ran.proto : kUnnamedArm, latency_us, call, ran);
  } else {
    if (key < 0 || key >= kNumContextKeys) return false;
    std::lock_guard<std::mutex> lock(mu_);
    Context* c = contexts_[key].get();
    if (c == nullptr) return false;
    int index = kUnnamedArm;
    if (named && memoize_ && !absorbs_at_once_locked()) {
      // Arrival j is call j's (header comment): its decision and chunk say which knob arm ran.
      hold_captured_locked(*c);
      index = knob_arm_that_ran_locked(*c, c->absorbed + c->held.size(), ran);
    }
    // Elsewhere (local mode is KnobLearner's; a leader holding several ranks cannot tell whose call a
    // latency is) nothing says which chunk ran: the call is settled, nothing learned.
    return observe_locked(key, index, latency_us, call, ran);
  }
}

template <int N>
int OnlineLearnerT<N>::knob_arm_that_ran_locked(const Context& c, uint64_t call, const RanKnobs& ran) const {
  const int decided = memo_decision_locked(c, call);
  if (decided < 0 || size_t(decided) >= c.arms.size())  // NCCL's own choice ran NCCL's own knobs
    return knob_arm_index(c.arms, arm_that_ran(Arm{}, ran, 0));
  const Arm& arm = c.arms[size_t(decided)];
  uint32_t chunk = 0;
  if (arm.chunk_bytes != 0) {
    // The chunk handed over for this call (0: none, NCCL's own ran), when the ring still holds the call;
    // else no arm can be named.
    const typename Context::ChunkSet* e = c.chunks.empty() ? nullptr : &c.chunks[call % Context::kChunkCap];
    if (e == nullptr || e->call != call) return -1;
    chunk = e->chunk;
  }
  return knob_arm_index(c.arms, arm_that_ran(arm, ran, chunk));
}

template <int N>
void OnlineLearnerT<N>::chunk_set(int key, uint64_t call, uint32_t chunk) {
  if (key < 0 || key >= kNumContextKeys) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (Context* c = contexts_[key].get()) set_chunk_locked(*c, call, chunk);
}

template <int N>
bool OnlineLearnerT<N>::observe_locked(int key, int slot, double latency_us, uint64_t call,
                                       const RanKnobs& facts) {
  // A value the log readers would refuse is no measurement: never learned from, never logged.
  const bool measurable = decision_log::latency_measurable(latency_us);
  if (!facts.watched)
    ++unwatched_;  // no latency to measure: its call is settled below like an unmeasurable one's
  else if (!measurable)
    ++unmeasurable_;
  Context* c = contexts_[key].get();
  if (c == nullptr) return false;
  c->steps_at_feedback = c->steps;
  if (memoize_) call = kOldestCall;  // leader mode: arrivals numbered by call
  // With a log, the decision this latency answers is at the pending ring's head: its own call's
  // (local mode with a bound call: the entries of earlier calls whose latencies never came are
  // dropped first; none when the call's decision is gone), or the oldest's.
  const bool own_entry = !log_ || call == kOldestCall || (call != kNoCall && align_pending_locked(*c, call));
  const auto log_call = [&] {
    if (own_entry)
      log_call_locked(key, *c, slot, latency_us, facts);
    else
      log_->drop();
  };
  // Still the answer to its logged decision, whose call is then not logged (unless NCCL ran one of
  // its symmetric kernels: logged so, and left out by the readers): the next latency must meet its
  // own call's decision.
  const bool named = slot != kUnnamedArm;
  if (facts.symmetric && !named && measurable && log_)
    log_call();
  else if ((!measurable || !named) && log_ && own_entry && c->pending_count > 0)
    pop_pending_locked(*c);
  // An arm outside the context's (NCCL ran something the table did not offer): logged as a call
  // NCCL ran otherwise, never learned from.
  if (measurable && named && !c->mask.has(slot) && log_) log_call();
  if (!measurable || !named || !c->mask.has(slot)) {
    // Leader mode: still the report of the leader's next call in this context, which the policy
    // cannot learn from; a placeholder keeps the arrivals numbered by call.
    if (!absorbs_at_once_locked()) {
      hold_captured_locked(*c);
      c->held.push_back({0.0, -1});
      hold_captured_locked(*c);
      release_held_locked(key, *c);
    } else if (!memoize_) {
      settle_answer_locked(*c, call);  // local mode: still the answer to its call
    }
    return false;
  }
  if (absorbs_at_once_locked() && c->held.empty()) {
    absorb_locked(*c, slot, latency_us, call);
  } else {
    hold_captured_locked(*c);
    c->held.push_back({latency_us, slot});
    hold_captured_locked(*c);
    release_held_locked(key, *c);
  }
  ++observations_;
  if (engine_->watches_fewer()) c->watch.learned(slot, N);
  if (log_) log_call();
  return true;
}

template <int N>
bool OnlineLearnerT<N>::watch_next(int key) {
  if (!engine_->watches_fewer() || key < 0 || key >= kNumContextKeys) return true;
  std::lock_guard<std::mutex> lock(mu_);
  const Context* c = contexts_[key].get();
  if (c == nullptr) return true;
  int arm = c->watch.last;
  if (memoize_) {
    const uint64_t next = own_calls_[key];
    if (next >= c->retired_at) return false;  // one fixed decision from here on: nothing to learn
    // The leader's next call may be decided already (a follower asked ahead): its arm, exactly.
    if (next >= c->memo_base && next - c->memo_base < c->memo.size()) arm = memo_decision_locked(*c, next);
  }
  return c->watch.wants(engine_->watch(), engine_->seed(), c->stream_id, c->steps, arm);
}

template <int N>
void OnlineLearnerT<N>::captured(int key, int /*slot: settled by its call index*/) {
  if (key < 0 || key >= kNumContextKeys) return;
  std::lock_guard<std::mutex> lock(mu_);
  Context* c = contexts_[key].get();
  if (c == nullptr || c->next_call + own_calls_[key] == 0) return;
  ++captured_;
  // The captured call: this rank's latest of the context (leader mode), the next call to start
  // (local mode: in a group, not always the newest decided).
  uint64_t index = memoize_ ? own_calls_[key] - 1 : take_unbound_locked(*c);
  if (index == kNoCall) index = c->next_call - 1;
  if (!absorbs_at_once_locked()) {
    // Its place among the arrivals: now, when every earlier call's latency is in, else when they are.
    if (index <= c->absorbed + c->held.size()) {
      if (index == c->absorbed + c->held.size()) c->held.push_back({0.0, -1});
      release_held_locked(key, *c);
    } else {
      c->captured_ahead.insert(std::upper_bound(c->captured_ahead.begin(), c->captured_ahead.end(), index),
                               index);
    }
  } else if (!memoize_) {
    settle_captured_locked(*c, index);  // its decision no longer waits for a latency
  }
  // With a log: its decision leaves the pending ring (the newest entries; a group may have decided
  // more calls of the context after it), so later latencies meet their own calls' decisions.
  for (size_t k = c->pending_count; k-- > 0;) {
    const size_t at = (c->pending_head + k) % Context::kPendingCap;
    if (c->pending[at].index != index) continue;
    for (size_t j = k; j + 1 < c->pending_count; ++j) {
      const size_t to = (c->pending_head + j) % Context::kPendingCap, from = (to + 1) % Context::kPendingCap;
      c->pending[to] = c->pending[from];
      if (!c->contests.empty()) c->contests[to] = c->contests[from];
    }
    --c->pending_count;
    break;
  }
}

template <int N>
void OnlineLearnerT<N>::observe_replay(int key, int slot, uint64_t bytes, double latency_us) {
  if (key < 0 || key >= kNumContextKeys || !is_nccl_slot(slot)) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (contexts_[key] == nullptr) return;
  ++replays_;
  if (!decision_log::latency_measurable(latency_us)) {
    ++unmeasurable_;
    return;
  }
  // A knob log holds knob calls only, as KnobLearner writes it (a replay does not say its knobs).
  if (!log_ || kKnobs) return;
  decision_log::CallRecord r;
  r.comm_hash = comm_id_;
  r.call_index = UINT64_MAX;  // no call of the rank's: the replay of one captured earlier
  r.bytes = bytes;
  r.latency_us = latency_us;
  r.propensity = __builtin_nan("");
  r.nodes = uint32_t(nnodes_);
  r.ranks = uint32_t(nranks_);
  r.collective = key_collective(key);
  r.slot = slot;
  r.nccl_slot = -1;
  r.graph_replay = true;
  unsigned char out[decision_log::kCallRecordBytes];
  decision_log::encode(r, out);
  log_->append(out, sizeof out);
}

// This file's members for both arm capacities (online_learner.hpp): each is compiled here only.
#define NCCLBOT_ONLINE_LEARNER_FEEDBACK_MEMBERS(N_)                                                    \
  template void OnlineLearnerT<N_>::absorb_locked(Context&, int, double, uint64_t);                    \
  template void OnlineLearnerT<N_>::release_held_locked(int, Context&);                                \
  template void OnlineLearnerT<N_>::log_call_locked(int, Context&, int, double, const RanKnobs&);      \
  template bool OnlineLearnerT<N_>::align_pending_locked(Context&, uint64_t);                          \
  template bool OnlineLearnerT<N_>::observe(int, int, double, uint64_t, const RanKnobs&);              \
  template bool OnlineLearnerT<N_>::observe_ran(int, const RanKnobs&, double, uint64_t);               \
  template int OnlineLearnerT<N_>::knob_arm_that_ran_locked(const Context&, uint64_t, const RanKnobs&) \
      const;                                                                                           \
  template void OnlineLearnerT<N_>::chunk_set(int, uint64_t, uint32_t);                                \
  template bool OnlineLearnerT<N_>::observe_locked(int, int, double, uint64_t, const RanKnobs&);       \
  template bool OnlineLearnerT<N_>::watch_next(int);                                                   \
  template void OnlineLearnerT<N_>::captured(int, int);                                                \
  template void OnlineLearnerT<N_>::observe_replay(int, int, uint64_t, double);
NCCLBOT_ONLINE_LEARNER_FEEDBACK_MEMBERS(kNumArms)
NCCLBOT_ONLINE_LEARNER_FEEDBACK_MEMBERS(kKnobReplayArms)
#undef NCCLBOT_ONLINE_LEARNER_FEEDBACK_MEMBERS

}  // namespace ncclbot::plugin
