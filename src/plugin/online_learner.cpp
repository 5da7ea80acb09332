#include "plugin/online_learner.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "ncclbot/core/argmin.hpp"
#include "ncclbot/log/decision_log_format.hpp"
#include "ncclbot/replay/leader_protocol.hpp"
#include "ncclbot/replay/replay.hpp"
#include "plugin/cost_table.hpp"
#include "plugin/decision_log_writer.hpp"
#include "plugin/state_file.hpp"

namespace ncclbot::plugin {
namespace {

constexpr PendingPulls kNothingPending{};  // what a decision that counts nothing pending sees

// Decisions per lock hold in decide_range: a few microseconds even for Thompson sampling.
constexpr int kSlice = 8;

}  // namespace

std::atomic<int64_t>& process_memo_budget() {
  static std::atomic<int64_t> budget{int64_t(256) << 20};
  return budget;
}

OnlineLearner::OnlineLearner(uint64_t comm_id, int nranks, int nnodes,
                             std::shared_ptr<const PolicyEngine> engine, bool memoize, MemoLimits limits)
    : comm_id_(comm_id),
      nranks_(nranks),
      nnodes_(nnodes),
      engine_(std::move(engine)),
      memoize_(memoize),
      limits_{limits.per_context, limits.budget ? limits.budget : &process_memo_budget()} {}

OnlineLearner::~OnlineLearner() {
  limits_.budget->fetch_add(memo_charged_);
}

OnlineLearner::Context& OnlineLearner::context_locked(int key, uint64_t bytes, const float* prior) {
  std::unique_ptr<Context>& c = contexts_[key];
  if (!c) {
    c = std::make_unique<Context>();
    seed_locked(*c, key, bytes, prior);
    c->memo_base = memoize_ ? policy_start_locked(key) : 0;
  }
  return *c;
}

uint64_t OnlineLearner::policy_start_locked(int key) const {
  // Past every call answered with NCCL's choice, at a window's first call, and never before
  // kLeaderStart (docs/plugin.md "Decision windows").
  const uint64_t w = uint64_t(kLeaderWindow);
  const uint64_t answered = (inactive_end_[key] + w - 1) / w * w;
  return answered > uint64_t(kLeaderStart) ? answered : uint64_t(kLeaderStart);
}

void OnlineLearner::seed_locked(Context& c, int key, uint64_t bytes, const float* prior) {
  c.first_bytes = bytes;
  std::memcpy(c.prior, prior, sizeof c.prior);
  c.mask = usable_prior_arms(prior);
  engine_->reset(c.policy, c.mask, c.prior);
  c.steps = 0;
  // The replay stream of this context: what the replay engine uses for the same
  // (collective, nodes, GPUs per node, bytes), so plugin-check can compare call for call.
  const int gpn = nnodes_ > 0 ? nranks_ / nnodes_ : nranks_;
  c.stream_id = replay_stream_id(key_collective(key), nnodes_, gpn, c.first_bytes);
}

size_t OnlineLearner::add_member(uint64_t member) {
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
        c->in_flight = PendingPulls{};
      }
  }
  return members_.size();
}

size_t OnlineLearner::members() const {
  std::lock_guard<std::mutex> lock(mu_);
  return members_.size();
}

bool OnlineLearner::started(int key) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (key < 0 || key >= kNumContextKeys) return false;
  return memoize_ ? started_[key] : active_;
}

long OnlineLearner::table_wanted_locked(int key, uint64_t member) const {
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

void OnlineLearner::add_table_locked(int key, long index, uint64_t bytes, const float* prior) {
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
void OnlineLearner::start_locked(int key, bool tables_agree) {
  const Agreement& a = *agreements_[key];
  Context* c = contexts_[key].get();
  if (c == nullptr)
    c = &context_locked(key, a.bytes, a.prior);
  else if (tables_agree && c->mask.bits != a.mask.bits)
    // Restored from a state file for other arms (or seeded by a call of another data type): the
    // policy plays the arms every rank offered, learning afresh.
    seed_locked(*c, key, a.bytes, a.prior);
  if (const uint64_t start = policy_start_locked(key); c->memo_base < start) c->memo_base = start;
  started_[key] = true;
  if (!tables_agree) {
    retire_locked(*c, -1);
    ++mismatches_;
  }
  agreements_[key].reset();
}

int OnlineLearner::fresh_decision_locked(Context& c, uint64_t index) {
  if (c.mask.empty()) return -1;
  lag_.add(index > c.absorbed ? index - c.absorbed : 0);
  // No report for kPendingWithoutFeedback decisions: nothing counts as pending until one comes.
  const bool feedback_flows = c.steps - c.steps_at_feedback < kPendingWithoutFeedback;
  if (!feedback_flows && c.in_flight.total > 0) c.in_flight = PendingPulls{};
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
  }
  return slot;
}

void OnlineLearner::absorb_locked(Context& c, int slot, double latency_us) {
  if (slot >= 0) engine_->update(c.policy, slot, latency_us);  // -1: a report the policy cannot use
  if (!memoize_) settle_local_pending(c, slot);
  const uint64_t index = c.absorbed++;
  // The decision of that call is no longer pending (calls outside the memo were never counted).
  if (index < c.memo_base || index - c.memo_base >= c.memo.size()) return;
  const int decided = c.memo[size_t(index - c.memo_base)];
  if (decided >= 0 && c.in_flight.count[decided] > 0) {
    --c.in_flight.count[decided];
    --c.in_flight.total;
  }
}

void OnlineLearner::release_held_locked(int key, Context& c) {
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
  if (!memoize_) return active_ && c ? fresh_decision_locked(*c, index) : -1;
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

void OnlineLearner::allocate_pending_locked(Context& c) {
  c.pending.resize(Context::kPendingCap);
  if (engine_->defers_propensity()) c.contests.resize(Context::kPendingCap);
}

int OnlineLearner::logged_memo_decision_locked(Context& c, uint64_t index) {
  const bool own = index == logging_index_ && &c == contexts_[logging_key_].get();
  if (own) {  // the logging rank's current call: contest_out_ already points into its pending ring
    last_propensity_ = 1.0;
    logging_fresh_ = true;
    return fresh_decision_locked(c, index);
  }
  if (c.ahead_count == c.ahead.size()) {
    if (c.ahead.size() < Context::kAheadCap) {  // grow, keeping the order (oldest first)
      const size_t cap = c.ahead.empty() ? 64 : 2 * c.ahead.size();
      std::vector<Context::Ahead> grown(cap);
      std::vector<ThompsonContest> grown_contests(engine_->defers_propensity() ? cap : 0);
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
  ThompsonContest* saved = contest_out_;
  contest_out_ = c.ahead_contests.empty() ? nullptr : &c.ahead_contests[at];
  last_propensity_ = 1.0;
  const int slot = fresh_decision_locked(c, index);
  contest_out_ = saved;
  c.ahead[at] = {index, last_propensity_};
  ++c.ahead_count;
  return slot;
}

bool OnlineLearner::take_ahead_locked(Context& c, uint64_t index, double* propensity,
                                      ThompsonContest* contest) {
  while (c.ahead_count > 0) {
    const Context::Ahead a = c.ahead[c.ahead_head];
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

void OnlineLearner::set_decision_log(std::shared_ptr<DecisionLog> log, uint64_t member) {
  std::lock_guard<std::mutex> lock(mu_);
  log_ = std::move(log);
  log_member_ = member;
}

void OnlineLearner::stop_decision_log() {
  std::lock_guard<std::mutex> lock(mu_);
  log_.reset();
  for (auto& c : contexts_)
    if (c) {
      c->pending_count = 0;
      c->ahead_count = 0;
    }
}

int OnlineLearner::log_size_locked(int key, Context& c, uint64_t bytes, const CostTable& table) {
  for (const auto& [size, nccl] : c.logged_sizes)
    if (size == bytes) {
      c.last_logged = {size, nccl};
      return nccl;
    }
  decision_log::ContextRecord r;
  r.comm_hash = comm_id_;
  r.bytes = bytes;
  r.nodes = uint32_t(nnodes_);
  r.ranks = uint32_t(nranks_);
  r.collective = key_collective(key);
  r.nccl_slot = table.nccl_pick_slot();
  float prior[kNumArms];
  table.prior(prior);  // this call's table: what NCCL passed for this size
  for (int s = 0; s < kNumNcclArms; ++s) r.cost_us[s] = prior[s];
  c.logged_sizes.emplace_back(bytes, int8_t(r.nccl_slot));
  c.last_logged = c.logged_sizes.back();
  unsigned char out[decision_log::kContextRecordBytes];
  decision_log::encode(r, out);
  log_->append(out, sizeof out);
  return r.nccl_slot;
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

bool OnlineLearner::observe(int key, int slot, double latency_us) {
  if (key < 0 || key >= kNumContextKeys || !is_nccl_slot(slot)) return false;
  // A value the log readers would refuse is no measurement: never learned from, never logged.
  const bool measurable = decision_log::latency_measurable(latency_us);
  std::lock_guard<std::mutex> lock(mu_);
  if (!measurable) ++unmeasurable_;
  Context* c = contexts_[key].get();
  if (c == nullptr) return false;
  c->steps_at_feedback = c->steps;
  // Still the answer to this rank's oldest logged decision, whose call is then not logged: the
  // next latency must meet its own call's decision.
  if (!measurable && log_ && c->pending_count > 0) pop_pending_locked(*c);
  if (!measurable || !c->mask.has(slot)) {
    // Leader mode: still the report of the leader's next call in this context, which the policy
    // cannot learn from; a placeholder keeps the arrivals numbered by call.
    if (!absorbs_at_once_locked()) {
      hold_captured_locked(*c);
      c->held.push_back({0.0, -1});
      hold_captured_locked(*c);
      release_held_locked(key, *c);
    } else if (!memoize_) {
      settle_local_pending(*c, slot);  // local mode: still the answer to this rank's oldest call
    }
    return false;
  }
  if (absorbs_at_once_locked() && c->held.empty()) {
    absorb_locked(*c, slot, latency_us);
  } else {
    hold_captured_locked(*c);
    c->held.push_back({latency_us, slot});
    hold_captured_locked(*c);
    release_held_locked(key, *c);
  }
  ++observations_;
  if (log_) {
    decision_log::CallRecord r;
    r.comm_hash = comm_id_;
    r.latency_us = latency_us;
    r.nodes = uint32_t(nnodes_);
    r.ranks = uint32_t(nranks_);
    r.collective = key_collective(key);
    r.slot = slot;
    r.propensity = __builtin_nan("");  // a latency no decision of this rank is waiting for
    r.call_index = UINT64_MAX;
    const ThompsonContest* contest = nullptr;
    if (c->pending_count > 0) {
      const size_t at = c->pending_head;
      const Context::Pending p = pop_pending_locked(*c);
      if (p.lost) {  // its probability is gone: not logged rather than logged without it
        log_->drop();
        return true;
      }
      r.call_index = p.index;
      r.bytes = p.bytes;
      r.nccl_slot = p.nccl_slot;
      if (p.slot == slot) {
        r.propensity = p.propensity;
        if (std::isnan(p.propensity) && !c->contests.empty()) contest = &c->contests[at];
      }
    }
    if (contest) {
      log_->append_deferred(r, *contest);
    } else {
      unsigned char out[decision_log::kCallRecordBytes];
      decision_log::encode(r, out);
      log_->append(out, sizeof out);
    }
  }
  return true;
}

void OnlineLearner::set_active(bool active) {
  std::lock_guard<std::mutex> lock(mu_);
  active_ = active;
  if (!active || !memoize_ || members_.size() < size_t(nranks_)) return;
  // Contexts whose tables are all in start now (past every call already answered).
  for (int key = 0; key < kNumContextKeys; ++key)
    if (const Agreement* a = agreements_[key].get();
        a != nullptr && !started_[key] && a->count >= members_.size())
      start_locked(key, true);
}

bool OnlineLearner::active() const {
  std::lock_guard<std::mutex> lock(mu_);
  return active_;
}

void OnlineLearner::captured(int key, int slot) {
  if (key < 0 || key >= kNumContextKeys) return;
  std::lock_guard<std::mutex> lock(mu_);
  Context* c = contexts_[key].get();
  if (c == nullptr || c->next_call + own_calls_[key] == 0) return;
  ++captured_;
  // The captured call: this rank's latest of the context.
  const uint64_t index = memoize_ ? own_calls_[key] - 1 : c->next_call - 1;
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
    settle_local_pending(*c, slot);  // its decision no longer waits for a latency
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

void OnlineLearner::observe_replay(int key, int slot, uint64_t bytes, double latency_us) {
  if (key < 0 || key >= kNumContextKeys || !is_nccl_slot(slot)) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (contexts_[key] == nullptr) return;
  ++replays_;
  if (!decision_log::latency_measurable(latency_us)) {
    ++unmeasurable_;
    return;
  }
  if (!log_) return;
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

uint64_t OnlineLearner::captured_calls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return captured_;
}

uint64_t OnlineLearner::graph_replays() const {
  std::lock_guard<std::mutex> lock(mu_);
  return replays_;
}

uint64_t OnlineLearner::decisions() const {
  std::lock_guard<std::mutex> lock(mu_);
  return decisions_;
}

uint64_t OnlineLearner::observations() const {
  std::lock_guard<std::mutex> lock(mu_);
  return observations_;
}

uint64_t OnlineLearner::unmeasurable_latencies() const {
  std::lock_guard<std::mutex> lock(mu_);
  return unmeasurable_;
}

FeedbackLagHistogram OnlineLearner::feedback_lag() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lag_;
}

uint64_t OnlineLearner::table_mismatches() const {
  std::lock_guard<std::mutex> lock(mu_);
  return mismatches_;
}

uint64_t OnlineLearner::memo_base(int key) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Context* c = key >= 0 && key < kNumContextKeys ? contexts_[key].get() : nullptr;
  return c ? c->memo_base : UINT64_MAX;
}

uint64_t OnlineLearner::retired_at(int key) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Context* c = key >= 0 && key < kNumContextKeys ? contexts_[key].get() : nullptr;
  return c ? c->retired_at : UINT64_MAX;
}

void OnlineLearner::export_contexts(StateFile& file) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (int key = 0; key < kNumContextKeys; ++key) {
    const Context* c = contexts_[key].get();
    if (c == nullptr) continue;
    StateEntry e;
    e.nranks = uint32_t(nranks_);
    e.nnodes = uint32_t(nnodes_);
    e.key = uint32_t(key);
    e.mask = c->mask.bits;
    e.steps = c->steps;
    e.bytes = c->first_bytes;
    std::memcpy(e.prior, c->prior, sizeof e.prior);
    e.policy = c->policy;
    // The latencies still held back are this job's too: the saved state has them (the live policy
    // keeps holding them back).
    for (const Context::Arrival& a : c->held)
      if (a.slot >= 0) engine_->update(e.policy, a.slot, a.latency_us);
    file.put(std::move(e));
  }
}

int OnlineLearner::import_contexts(const StateFile& file) {
  std::lock_guard<std::mutex> lock(mu_);
  int restored = 0;
  for (const StateEntry& e : file.entries()) {
    if (e.nranks != uint32_t(nranks_) || e.nnodes != uint32_t(nnodes_) || e.key >= uint32_t(kNumContextKeys))
      continue;
    if (contexts_[e.key]) continue;
    auto c = std::make_unique<Context>();
    c->mask = ArmMask{e.mask}.nccl_arms();
    std::memcpy(c->prior, e.prior, sizeof e.prior);  // NCCL's 21 slots; the rest are never valid
    for (int s = kNumNcclArms; s < kNumArms; ++s) c->prior[s] = -1.0f;
    c->policy = e.policy;  // validated by the state file against this mask and prior
    c->steps = e.steps;
    c->first_bytes = e.bytes;
    c->memo_base = memoize_ ? policy_start_locked(int(e.key)) : 0;  // NCCL's calls stay so
    const int gpn = nnodes_ > 0 ? nranks_ / nnodes_ : nranks_;
    c->stream_id = replay_stream_id(key_collective(int(e.key)), nnodes_, gpn, c->first_bytes);
    contexts_[e.key] = std::move(c);
    ++restored;
  }
  return restored;
}

}  // namespace ncclbot::plugin
