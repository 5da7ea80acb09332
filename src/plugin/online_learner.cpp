// The learner's contexts and who they wait for: construction, seeding, the ranks and their first
// cost tables before a context starts (leader mode), and its counters.
#include "plugin/online_learner.hpp"

#include <cstring>

#include "ncclbot/replay/leader_protocol.hpp"
#include "ncclbot/replay/replay.hpp"

namespace ncclbot::plugin {

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

uint64_t OnlineLearner::lost_calls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lost_;
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

}  // namespace ncclbot::plugin
