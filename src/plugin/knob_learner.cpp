#include "plugin/knob_learner.hpp"

#include <algorithm>
#include <atomic>

#include "ncclbot/core/knob_limits.hpp"
#include "ncclbot/log/decision_log_format.hpp"
#include "ncclbot/replay/stream_id.hpp"
#include "plugin/decision_log_writer.hpp"
#include "plugin/knob_seed.hpp"
#include "plugin/state_file.hpp"

namespace ncclbot::plugin {

KnobLearner::KnobLearner(int nranks, int nnodes, std::shared_ptr<const PolicyEngine> engine, KnobSpec spec)
    : nranks_(nranks), nnodes_(nnodes), engine_(std::move(engine)), spec_(std::move(spec)) {}

void KnobLearner::set_decision_log(std::shared_ptr<DecisionLog> log, uint64_t comm_id) {
  std::lock_guard<std::mutex> lock(mu_);
  log_ = std::move(log);
  comm_id_ = comm_id;
}

void KnobLearner::log_call_locked(int key, const Logged& l, const Arm& decided, const Arm& ran,
                                  double latency_us, const RanKnobs& facts) {
  decision_log::CallRecord r;
  r.comm_hash = comm_id_;
  r.call_index = l.call_index;
  r.bytes = l.bytes;
  r.latency_us = latency_us;
  r.propensity = l.propensity;
  r.nodes = uint32_t(nnodes_);
  r.ranks = uint32_t(nranks_);
  r.collective = key_collective(key);
  r.nccl_slot = l.nccl_slot;
  r.symmetric = facts.symmetric;
  r.user_tag = facts.user_tag;
  log_->append_knob_call(r, ran, decided);
}

KnobLearner::Context& KnobLearner::context_locked(int key, uint64_t bytes, const CostTable& table) {
  if (contexts_[key]) return *contexts_[key];
  float slot_prior[kNumArms];
  table.prior(slot_prior);
  contexts_[key] = seed_context(key, bytes, slot_prior);
  return *contexts_[key];
}

std::unique_ptr<KnobLearner::Context> KnobLearner::seed_context(int key, uint64_t bytes,
                                                                const float* slot_prior) const {
  auto c = std::make_unique<Context>();
  c->slots = usable_prior_arms(slot_prior);
  std::copy(slot_prior, slot_prior + kNumNcclArms, c->slot_prior);
  c->bytes = bytes;
  c->prior.resize(size_t(kKnobArms));
  ArmMaskT<kKnobArms> mask;  // more arms than a policy holds: none (NCCL's choice)
  c->crossing =
      seed_knob_policy<kKnobArms>(*engine_, spec_, slot_prior, c->arms, c->prior.data(), mask, c->policy);
  // The replay stream of this context, as OnlineLearner keys it (plugin-check compares call for call).
  const int gpn = nnodes_ > 0 ? nranks_ / nnodes_ : nranks_;
  c->stream_id = replay_stream_id(key_collective(key), nnodes_, gpn, bytes);
  c->waiting.resize(kWaitCap);
  return c;
}

void KnobLearner::export_contexts(KnobStateFile& file) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (int key = 0; key < kNumContextKeys; ++key) {
    const Context* c = contexts_[key].get();
    if (c == nullptr || c->arms.empty()) continue;  // no arms: nothing learned
    file.put(
        KnobStateEntry::of(nranks_, nnodes_, key, c->slots, c->slot_prior, c->steps, c->bytes, c->policy));
  }
}

int KnobLearner::import_contexts(const KnobStateFile& file) {
  std::lock_guard<std::mutex> lock(mu_);
  int restored = 0;
  for (const KnobStateEntry& e : file.entries()) {
    if (e.nranks != uint32_t(nranks_) || e.nnodes != uint32_t(nnodes_) ||
        e.key >= uint32_t(kNumContextKeys) || contexts_[e.key])
      continue;
    float slot_prior[kNumArms];
    prior_of_nccl_costs(e.prior, slot_prior);
    // The arms the file's lists (this learner's) give the context, then its saved policy, which the
    // state file validated against them.
    auto c = seed_context(int(e.key), e.bytes, slot_prior);
    c->policy = e.policy;
    c->steps = e.steps;
    contexts_[e.key] = std::move(c);
    ++restored;
  }
  return restored;
}

KnobDecision KnobLearner::decide_next(int key, uint64_t bytes, const CostTable& table) {
  if (key < 0 || key >= kNumContextKeys) return {};
  std::lock_guard<std::mutex> lock(mu_);
  Context& c = context_locked(key, bytes, table);
  ++totals_.decisions;
  // With no latency for kPendingWithoutFeedback decisions nothing counts as pending until one comes.
  const bool counted = c.steps - c.steps_at_feedback < kPendingWithoutFeedback;
  if (!counted && c.in_flight.total > 0) {
    c.in_flight = PendingPullsT<kKnobArms>{};
    for (size_t k = 0; k < c.count; ++k) c.waiting[(c.head + k) % kWaitCap].pending = -1;
  }
  KnobDecision d;
  Logged logged{UINT64_MAX, bytes, 1.0, -1};
  if (!c.arms.empty()) {
    int index;
    if (log_) {  // the same decision, with its probability (PolicyEngine::select_pending_logged)
      if (c.logged.empty()) c.logged.resize(kWaitCap);
      logged.nccl_slot = int8_t(
          c.logged_sizes.nccl_pick(*log_, comm_id_, key_collective(key), bytes, nnodes_, nranks_, table));
      logged.call_index = c.steps;
      index = engine_->select_pending_logged(c.policy, c.stream_id, c.steps, c.in_flight, &logged.propensity,
                                             static_cast<ThompsonContestT<kKnobArms>*>(nullptr));
    } else {
      index = engine_->select_pending(c.policy, c.stream_id, c.steps, c.in_flight);
    }
    ++c.steps;
    if (index >= 0 && index < int(c.arms.size())) d = {index, c.arms[size_t(index)]};
    c.watch.last = d.index;
  }
  if (d.index < 0) logged.call_index = UINT64_MAX;        // NCCL's own choice: no decision to log
  if (c.count == kWaitCap) settle_oldest_lost_locked(c);  // its latency never came: let it go
  Waiting w{int16_t(d.index), -1, 0, false};
  if (counted && d.index >= 0 && c.in_flight.count[d.index] < UINT16_MAX) {
    ++c.in_flight.count[d.index];
    ++c.in_flight.total;
    w.pending = int16_t(d.index);
  }
  const size_t at = (c.head + c.count++) % kWaitCap;
  ++c.calls;
  Waiting& entry = c.waiting[at];
  entry = w;
  if (!c.logged.empty()) c.logged[at] = logged;
  if (d.index >= 0) d.chunk_record = &entry.chunk_set;
  return d;
}

void KnobLearner::chunk_set(uint32_t* record, uint32_t chunk) {
  if (record != nullptr) std::atomic_ref<uint32_t>(*record).store(chunk, std::memory_order_relaxed);
}

void KnobLearner::unpend_locked(Context& c, const Waiting& w) {
  if (w.pending >= 0 && c.in_flight.count[w.pending] > 0) {
    --c.in_flight.count[w.pending];
    --c.in_flight.total;
  }
}

KnobLearner::Waiting* KnobLearner::waiting_locked(Context& c, uint64_t call) {
  const uint64_t first = c.calls - c.count;
  if (call < first || call >= c.calls) return nullptr;
  Waiting& w = c.waiting[(c.head + size_t(call - first)) % kWaitCap];
  return w.settled ? nullptr : &w;
}

void KnobLearner::settle_locked(Context& c, Waiting& w) {
  unpend_locked(c, w);
  w.pending = -1;
  w.settled = true;
  while (c.count > 0 && c.waiting[c.head].settled) {
    c.head = (c.head + 1) % kWaitCap;
    --c.count;
  }
}

void KnobLearner::settle_oldest_lost_locked(Context& c) {
  ++totals_.lost;
  ++totals_.unlearned;
  settle_locked(c, c.waiting[c.head]);
}

uint64_t KnobLearner::take_unbound_locked(Context& c) {
  return take_unbound(c.bound, c.calls - c.count, c.calls);
}

uint64_t KnobLearner::bind_call(int key) {
  if (key < 0 || key >= kNumContextKeys) return kNoCall;
  std::lock_guard<std::mutex> lock(mu_);
  Context* c = contexts_[key].get();
  return c == nullptr ? kNoCall : take_unbound_locked(*c);
}

bool KnobLearner::observe_ran(int key, const RanKnobs& ran, double latency_us, uint64_t call) {
  if (key < 0 || key >= kNumContextKeys) return false;
  std::lock_guard<std::mutex> lock(mu_);
  Context* c = contexts_[key].get();
  if (c == nullptr || c->count == 0) return false;
  if (call == kOldestCall) call = c->calls - c->count;  // the head waits: settled entries leave it
  Waiting* entry = waiting_locked(*c, call);
  if (entry == nullptr) return false;  // no decision waits for it (none made, or given up as lost)
  const size_t at = size_t(entry - c->waiting.data());
  const Waiting w{entry->index, entry->pending,
                  std::atomic_ref<uint32_t>(entry->chunk_set).load(std::memory_order_relaxed), false};
  const Logged logged = c->logged.empty() ? Logged{UINT64_MAX} : c->logged[at];
  settle_locked(*c, *entry);
  // Bound calls kLostAfter or more before this one that still wait: their latencies were lost.
  while (c->count > 0 && c->calls - c->count + kLostAfter <= call && c->calls - c->count < c->bound)
    settle_oldest_lost_locked(*c);
  c->steps_at_feedback = c->steps;
  const bool named = ran.algo >= 0 && ran.algo < kNumNcclAlgos && ran.proto >= 0 && ran.proto < kNumProtos;
  // NCCL's own choice was decided as the arm at NCCL's knobs of whatever NCCL picks.
  const Arm decided = w.index >= 0 ? c->arms[size_t(w.index)] : Arm{};
  const Arm ran_arm = arm_that_ran(decided, ran, w.index >= 0 ? w.chunk_set : 0);
  const int index = named ? knob_arm_index(c->arms, ran_arm) : -1;
  const bool measured = ran.watched && decision_log::latency_measurable(latency_us);
  // Logged whatever ran (a call NCCL ran otherwise, or as one of its symmetric kernels, is flagged,
  // and the readers leave it out), as long as it names an arm or a symmetric kernel, and a measurement.
  if (log_ && measured && logged.call_index != UINT64_MAX &&
      (ran.symmetric || (named && ran_arm.channels <= kMaxChannels)))
    log_call_locked(key, logged, decided, ran_arm, latency_us, ran);
  if (index < 0 || !measured) {
    ++totals_.unlearned;
    if (!ran.watched) ++totals_.unwatched;
    return false;
  }
  engine_->update(c->policy, index, latency_us);
  ++totals_.learned;
  if (engine_->watches_fewer()) c->watch.learned(index, int(c->arms.size()));
  return true;
}

bool KnobLearner::watch_next(int key) {
  if (!engine_->watches_fewer() || key < 0 || key >= kNumContextKeys) return true;
  std::lock_guard<std::mutex> lock(mu_);
  const Context* c = contexts_[key].get();
  return c == nullptr || c->watch.wants(engine_->watch(), engine_->seed(), c->stream_id, c->steps);
}

void KnobLearner::captured(int key, int /*slot*/) {
  if (key < 0 || key >= kNumContextKeys) return;
  std::lock_guard<std::mutex> lock(mu_);
  Context* c = contexts_[key].get();
  if (c == nullptr) return;
  // The next call to start, as a Coll event would take it (in a group, not the newest decided).
  Waiting* w = waiting_locked(*c, take_unbound_locked(*c));
  if (w == nullptr) return;
  settle_locked(*c, *w);
  ++totals_.unlearned;
}

size_t KnobLearner::crossing(int key) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (key < 0 || key >= kNumContextKeys || !contexts_[key]) return 0;
  return contexts_[key]->crossing;
}

KnobLearner::Totals KnobLearner::totals() const {
  std::lock_guard<std::mutex> lock(mu_);
  return totals_;
}

}  // namespace ncclbot::plugin
