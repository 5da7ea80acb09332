#pragma once
// Online mode for one communicator: one policy per context (collective, size class), warm-started
// from the cost table NCCL passes in (NCCL's model = the prior), stepping exactly like a replay:
//   call t of a context: StepRandom(seed, stream id, t) -> policy.select -> slot
//   measured latency of that call (profiler or report function) -> policy.update(slot, latency)
//
// Leader mode (memoize on) records every decision by the context's call index, so the leader
// answers a follower's "decision for call t" with exactly what it played (or will play) at its own
// call t, whoever asks first. Each context's calls fall in three spans, fixed once and never moved,
// so every rank reads the same decision for every index (docs/plugin.md "Rank consistency"):
//   [0, memo_base)          NCCL's choice (-1): the first kLeaderStart calls always, and any
//                           answered before the context started
//   [memo_base, retired_at) the policy's decisions, kept for the whole job (no index goes stale)
//   [retired_at, ...)       one fixed decision: the policy's committed arm once the memo reached
//                           its cap, or NCCL's choice once the ranks' cost tables disagreed
// A context starts (the policy decides) only once every rank of the communicator is present and
// the leader holds a cost table of that context from each of them (its own ranks' first calls,
// each follower's requests) with the same usable arms; so no decision can name an arm some rank
// cannot play. Until then every answer is NCCL's choice, and only the highest index answered is
// kept. Calls [0, kLeaderStart) are NCCL's whenever the context starts, so its start is
// deterministic: memo_base = kLeaderStart when every table is in before a call of window 2 is
// answered (in lockstep: with the followers' first requests, at call 0), else the first window
// boundary past every call answered (replay/leader_protocol.hpp; the replay's policy_start). The
// policy's Philox step of call t is t - memo_base (its steps count from the start), unless the
// context was restored from a state file. Disagreeing tables retire the context to NCCL's choice
// before it starts.
//
// Leader mode decides by the protocol of replay/leader_protocol.hpp (docs/plugin.md "Decision
// windows"): the decision of call i is made from the policy state holding the leader's latencies of
// calls [0, leader_feedback_end(i)) of the context and no later one, whoever asks first (the
// leader's own call or a follower's request for i's window). The leader's latencies of a context
// arrive in the order of its own calls, so arrival j is call j's: arrivals are held back in a FIFO
// and absorbed (policy update) just before a fresh decision needs them, or at once when no decision
// still to be made could be kept from them (below the feedback end of the first undecided call, or
// the context retired). The decisions made whose latencies are not absorbed yet are counted by arm
// (PendingPulls) and decided with (select_pending): a window decided from one state spreads its
// exploration like the replay's. The latencies of the calls before the start (NCCL's) are absorbed
// on the same schedule and are never pending, as in the replay. When more than one rank of the communicator
// lives in the leader's process, arrivals no longer say whose call they are: latencies are then absorbed as
// they arrive and nothing counts as pending (the decisions depend on timing, as before this protocol; ranks
// still agree, since every one plays the memo). Local mode (memoize off) absorbs every latency at
// once and decides undelayed.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <type_traits>
#include <utility>
#include <vector>

#include "ncclbot/core/arm.hpp"
#include "ncclbot/core/knob_spec.hpp"
#include "ncclbot/replay/replay.hpp"
#include "plugin/context_key.hpp"
#include "plugin/cost_table.hpp"
#include "plugin/decision_log_writer.hpp"
#include "plugin/feedback_lag.hpp"
#include "plugin/latency_sink.hpp"
#include "plugin/leader_learner.hpp"
#include "plugin/online_learner_context.hpp"
#include "plugin/policy_engine.hpp"

namespace ncclbot::plugin {

template <int N>
class StateFileT;

// The most latencies a context holds back (leader mode); beyond it the oldest is absorbed at once.
// The protocol holds fewer than kLeaderPrefetch + kLeaderWindow when the leader's latencies arrive
// in step with its calls; more only when more of them arrive than it made calls.
inline constexpr size_t kMaxHeldLatencies = 4 * kMaxFollowerLead;

struct MemoLimits {
  size_t per_context = size_t(1) << 24;    // decisions kept per context (1 byte each; 2 over knob arms)
  std::atomic<int64_t>* budget = nullptr;  // bytes left for memos in this process, shared by learners
};

// The process-wide memo budget (256 MiB).
std::atomic<int64_t>& process_memo_budget();

// N: the arms a context may hold. kNumArms: one per algorithm x protocol (OnlineLearner, its index
// the slot). kKnobReplayArms: knob arms in leader mode (KnobLeaderLearner, NCCLBOT_KNOBS; docs/plugin.md
// "Knob mode"): each context's arms are its first cost table's usable slots crossed with `knobs`
// (context_knob_arms), each with its slot's cost as the prior, as KnobLearner builds them; the memo
// and the protocol are the same, over arm indices, and the ranks play the arm (decided_arm.hpp).
// Over knob arms a latency is credited to the arm that ran (arm_that_ran): the algorithm, protocol
// and channels NCCL reports and the chunk getChunkSize handed over for that call (chunk_set); the
// state file and the decision log hold slot arms only.
template <int N>
class OnlineLearnerT final : public LeaderLearner {
 public:
  static constexpr bool kKnobs = N > kNumArms;
  using Index = LearnerIndex<N>;
  OnlineLearnerT(uint64_t comm_id, int nranks, int nnodes, std::shared_ptr<const PolicyEngine> engine,
                 bool memoize, MemoLimits limits = {}, KnobSpec knobs = {});
  ~OnlineLearnerT() override;

  uint64_t comm_id() const { return comm_id_; }
  int nranks() const override { return nranks_; }
  int nnodes() const override { return nnodes_; }

  // Decision for this rank's next call of context `key` (slot, or -1 = keep NCCL's choice).
  // `prior` holds the call's costs by slot (kNumArms entries, < 0 = not usable; only NCCL's 21
  // are read) and seeds the context on first use.
  int decide_next(int key, uint64_t bytes, const float* prior);
  // The same, reading the prior from the call's cost table only when the context is new (the
  // getCollInfo hot path: no 21-entry copy per call).
  int decide_next(int key, uint64_t bytes, const CostTable& table);
  // Leader mode: the decision for call `index` of `key`, counted by the calling rank (several
  // ranks of one communicator may live in the leader's process; each has its own count), which is
  // `member` (local_member(ordinal)): its table counts towards the context's start.
  int decide_at(int key, uint64_t bytes, const CostTable& table, uint64_t index, uint64_t member);
  // decide_at() as the ranks play it (the knob leader's hot path: one lock for both).
  DecidedArm decide_arm_at(int key, uint64_t bytes, const CostTable& table, uint64_t index, uint64_t member);
  // Decisions for calls [start, start + count) of `key`, for the follower `member`
  // (follower_member(rank, ordinal)) whose cost table is `prior` (leader mode only). Works in short
  // slices, releasing the lock between them, so the leader's own getCollInfo never waits long.
  // false (nothing decided) when the context has started and `start` is more than
  // kMaxFollowerLead past the leader's own calls (or the policy's start) in that context: the
  // follower asks again. Never waits for anyone: before the context starts the answers are NCCL's.
  bool decide_range(int key, uint64_t bytes, const float* prior, uint64_t start, int count, Index* out,
                    uint64_t member);
  // decide_range() with each decision as the ranks play it (the leader's server).
  bool decide_window(int key, uint64_t bytes, const float* prior, uint64_t start, int count, DecidedArm* out,
                     uint64_t member) override;
  // Knob arms: the lists every context's slots are crossed with.
  const KnobSpec& knobs() const { return knobs_; }
  // The arm `index` of context `key` names (NCCL's own for -1 or an unknown context).
  DecidedArm decided_arm(int key, int index) const;
  // Knob arms: getChunkSize handed NCCL the decided chunk for this rank's call `call` of `key` (its
  // latency is credited to the arm with that chunk). A call whose chunk was never handed over ran
  // NCCL's own.
  void chunk_set(int key, uint64_t call, uint32_t chunk);
  // The slot of a collective NCCL ran with an algorithm or protocol the plugin cannot name.
  static constexpr int kUnnamedArm = -1;
  // One measured latency of `slot` in context `key`; ignored for unseen contexts and bad values.
  // kUnnamedArm: NCCL ran something the plugin cannot name; its call is settled, nothing learned or
  // logged.
  // Leader mode: held back until the protocol lets the policy see it (header comment); a report
  // the policy cannot use (an arm outside the context's, a bad value) still counts as the call's.
  // `call`: the call it answers (local mode, from bind_call; kNoCall: none, so it settles nothing and
  // is not logged), or kOldestCall: the oldest waiting (the report function; leader mode).
  // Over knob arms `slot` is an arm index (observe_ran finds it).
  // `facts`: what the profiler said of the call (a symmetric kernel, its tag), for the log.
  bool observe(int key, int slot, double latency_us, uint64_t call = kOldestCall, const RanKnobs& facts = {});
  // Local mode: the oldest call of `key` that no Coll event has taken yet (kNoCall: none waits), so
  // that a latency answers its own call's decision (pending counts, decision log) even when another
  // call's latency never comes (knob_learner.hpp has the same rule). Leader mode numbers arrivals by
  // call (header comment): kOldestCall.
  uint64_t bind_call(int key) override;
  // Whether this rank's next call of `key` should be watched, by the policy's watch rule
  // (context_watch.hpp): every call without one, and of a context not seen yet; none of a retired
  // context (leader mode), whose decisions no longer learn.
  bool watch_next(int key) override;
  // observe() with what ran as the profiler says it (the channel count is not an arm in slot mode).
  // Over knob arms, the arm that ran is found from the call's own decision (leader mode: the arrival's
  // call, numbered as above).
  bool observe_ran(int key, const RanKnobs& ran, double latency_us, uint64_t call) override;
  // CUDA graphs (docs/plugin.md "CUDA graphs"). The call this rank just decided in context `key`
  // was captured into a graph: its latency will never come as that call's (each replay runs the
  // captured arm without asking), so it is settled now as a report the policy cannot use: it stops
  // counting as pending, arrivals stay numbered by call (leader mode), and with a log its decision
  // leaves the pending ring unlogged.
  void captured(int key, int slot) override;
  // One replay of a captured collective of `slot` in `key` (`bytes` as the tuner saw them): logged
  // as a graph replay with no decision and no probability, never fed to the policy, never taken for
  // a call's latency.
  void observe_replay(int key, int slot, uint64_t bytes, double latency_us) override;
  uint64_t captured_calls() const;
  uint64_t graph_replays() const;

  // Records each measured call of this rank's own decisions in `log`: the arm that ran, NCCL's
  // pick, the policy's probability of that arm, the latency; and each context's cost table on its
  // first call (docs/ope.md). Set before the first call. Local mode: the calls of decide_next.
  // Leader mode: the calls of decide_at by `member`, which must be the only rank of the
  // communicator in this process (the latencies observe() gets do not say whose they are): a
  // decision made earlier for a follower keeps its probability until `member` reaches that call.
  // Over knob arms the records are knob calls (version 4); not for a policy that defers its
  // probabilities (PolicyEngine::defers_propensity): the caller says so.
  void set_decision_log(std::shared_ptr<DecisionLog> log, uint64_t member = 0) override;
  // Stops logging (leader mode, when a second rank of the communicator joins this process).
  void stop_decision_log() override;

  // Leader mode: decisions are NCCL's own (-1) until every rank of the communicator is connected.
  void set_active(bool active) override;
  bool active() const override;
  // Leader mode: the ranks whose cost tables a context waits for (LeaderLearner).
  size_t add_member(uint64_t member) override;
  size_t members() const override;
  // Whether the policy decides in context `key` (leader mode: started, see above).
  bool started(int key) const;

  // Persistence: contexts with their policy state (state_file.hpp keeps the format).
  void export_contexts(StateFileT<N>& file) const;
  int import_contexts(const StateFileT<N>& file);  // returns how many contexts were restored

  // Statistics for logs and tests.
  uint64_t decisions() const;
  uint64_t observations() const;
  // Latencies outside decision_log::latency_measurable (a wrapped timer, a reported 1e300): dropped,
  // neither learned from nor logged.
  uint64_t unmeasurable_latencies() const;
  // Local mode: calls whose latency never came (settled kLostAfter calls later).
  uint64_t lost_calls() const;
  // Calls NCCL ran unwatched (the watch rule switched its kernel events off): settled unlearned.
  uint64_t unwatched_calls() const;
  // Contexts retired because the ranks' cost tables had other usable arms (before the context
  // started, or a follower's later table lacked one of the policy's arms).
  uint64_t table_mismatches() const;
  // How late the latencies reached the policy, over every decision the policy made
  // (feedback_lag.hpp; leader mode: the leader's policy, whoever asked for the decision).
  FeedbackLagHistogram feedback_lag() const;
  // The first call index of `key` decided by the policy and the first retired one (leader mode;
  // UINT64_MAX when not set).
  uint64_t memo_base(int key) const;
  uint64_t retired_at(int key) const;

 private:
  using Context = LearnerContext<N>;
  using Agreement = LearnerAgreement;

  Context& context_locked(int key, uint64_t bytes, const float* prior);
  // observe() with the lock held; `facts`: what the profiler said of the call (a symmetric kernel,
  // the call's tag) for the decision log.
  bool observe_locked(int key, int slot, double latency_us, uint64_t call, const RanKnobs& facts);
  // Knob arms: the index of the arm this rank's call `call` of `c` ran, given what NCCL reported
  // (-1: none of the context's arms, or the call's chunk is no longer known).
  int knob_arm_that_ran_locked(const Context& c, uint64_t call, const RanKnobs& ran) const;
  // Knob arms: the chunk handed over for this rank's call `call` (0 when its decision is made).
  static void set_chunk_locked(Context& c, uint64_t call, uint32_t chunk) {
    if (c.chunks.empty()) c.chunks.resize(Context::kChunkCap);
    c.chunks[call % Context::kChunkCap] = {call, chunk};
  }
  // decide_at() with the lock held (`key` valid).
  int own_call_locked(int key, uint64_t bytes, const CostTable& table, uint64_t index, uint64_t member);
  // decided_arm() with the lock held (`key` valid).
  DecidedArm decided_arm_locked(int key, int index) const;
  // The decision the memo holds for call `index` (-1: NCCL's own).
  int memo_decision_locked(const Context& c, uint64_t index) const;
  void seed_locked(Context& c, int key, uint64_t bytes, const float* prior);
  // The member's index when its table of `key` is still wanted for the context's start, else -1.
  long table_wanted_locked(int key, uint64_t member) const;
  void add_table_locked(int key, long index, uint64_t bytes, const float* prior);
  void start_locked(int key, bool tables_agree);
  // Knob arms: a context reseeded on another arm set (start_locked) had indices of `before` in its
  // held latencies and its rings: they name the same arms in the new set, or none (-1).
  void renumber_arms_locked(Context& c, const std::vector<Arm>& before);
  // Leader mode: where context `key` would start now (header comment).
  uint64_t policy_start_locked(int key) const;
  int decide_at_locked(int key, Context* c, uint64_t index);
  int fresh_decision_locked(Context& c, uint64_t index);
  // Whether the policy's answer `i` is an arm the ranks can play (else NCCL's choice).
  static bool playable(const Context& c, int i) {
    if (i < 0 || i >= N || !c.mask.has(i)) return false;
    if constexpr (kKnobs)
      return size_t(i) < c.arms.size();
    else
      return is_nccl_slot(i);
  }
  // Leader mode: whether latencies skip the hold-back (several ranks of the communicator here).
  bool absorbs_at_once_locked() const { return !memoize_ || local_ranks_ > 1; }
  // Local mode: one decision of `slot` is no longer pending (a call NCCL decided was never counted,
  // and the count never goes below 0).
  static void unpend(Context& c, int slot) {
    if (slot >= 0 && slot < N && c.in_flight.count[slot] > 0) {
      --c.in_flight.count[slot];
      --c.in_flight.total;
    }
  }
  // Local mode: call `index` was decided, its decision counted pending on `slot` (-1: none).
  void await_locked(Context& c, uint64_t index, int slot);
  // Local mode: a latency (or a report the policy cannot use) came back. Latencies come back in
  // call order, so it answers the oldest call still waiting, whose decision is settled whichever
  // arm NCCL ran (captured calls, whose latency never comes, are passed over).
  static void settle_oldest_locked(Context& c);
  // Local mode: the latency of call `call` (from bind_call) came back: its decision is settled, and
  // bound calls kLostAfter or more before it that still wait are settled as lost (counted).
  void settle_call_locked(Context& c, uint64_t call);
  // Local mode: the next call no Coll event has taken (kNoCall: none), which the caller takes.
  static uint64_t take_unbound_locked(Context& c);
  // settle_call_locked, or settle_oldest_locked for kOldestCall; nothing for kNoCall.
  void settle_answer_locked(Context& c, uint64_t call) {
    if (call == kOldestCall)
      settle_oldest_locked(c);
    else if (call != kNoCall)
      settle_call_locked(c, call);
  }
  // Local mode with a log: the pending ring's entries of calls before `call` are dropped (their
  // latencies never came, or came out of order); whether the head is then call `call`'s.
  bool align_pending_locked(Context& c, uint64_t call);
  // Local mode: call `index` was captured into a CUDA graph: its decision is settled now.
  static void settle_captured_locked(Context& c, uint64_t index);
  // Updates the policy with the latency of the context's next call (`absorbed`), and takes that
  // call's decision off the pending counts.
  void absorb_locked(Context& c, int slot, double latency_us, uint64_t call = kOldestCall);
  // Absorbs held latencies while fewer than `end` are absorbed.
  void absorb_held_locked(Context& c, uint64_t end) {
    while (c.absorbed < end && !c.held.empty()) {
      const typename Context::Arrival a = c.held.front();
      c.held.pop_front();
      absorb_locked(c, a.slot, a.latency_us);
    }
  }
  // Absorbs the held latencies no decision still to be made may go without (header comment).
  void release_held_locked(int key, Context& c);
  // Leader mode: a placeholder for each captured call the arrivals have reached.
  static void hold_captured_locked(Context& c) {
    while (!c.captured_ahead.empty() && c.captured_ahead.front() <= c.absorbed + c.held.size()) {
      if (c.captured_ahead.front() == c.absorbed + c.held.size()) c.held.push_back({0.0, -1});
      c.captured_ahead.pop_front();
    }
  }
  // Leader mode with a log: the memo's next decision, made for call `index`, with its probability
  // kept for the logging rank (in its pending ring when that is its current call, else ahead).
  int logged_memo_decision_locked(Context& c, uint64_t index);
  // The decision-log record of the latency of `slot` that came back for this rank's oldest logged
  // call (with its decision's probability; flagged when NCCL ran another arm than decided, or one
  // of its symmetric kernels: facts.symmetric, slot kUnnamedArm), with the call's tag.
  void log_call_locked(int key, Context& c, int slot, double latency_us, const RanKnobs& facts);
  // Takes the oldest logged decision off the ring (pending_count > 0).
  static typename Context::Pending pop_pending_locked(Context& c) {
    const typename Context::Pending p = c.pending[c.pending_head];
    c.pending_head = (c.pending_head + 1) % Context::kPendingCap;
    --c.pending_count;
    return p;
  }
  // The ring slot a decision of the logging rank's call goes to (allocating the ring once).
  size_t pending_slot_locked(Context& c) {
    if (c.pending.empty()) allocate_pending_locked(c);
    if (c.pending_count == Context::kPendingCap) {  // the oldest was never measured: let it go
      c.pending_head = (c.pending_head + 1) % Context::kPendingCap;
      --c.pending_count;
    }
    return (c.pending_head + c.pending_count) % Context::kPendingCap;
  }
  void allocate_pending_locked(Context& c);
  // Files the logging rank's decision `slot` (-1: NCCL's own) for call `index` of `bytes` at ring
  // slot `at`, with its probability (lost: gone with a full ahead ring) and NCCL's pick for that size
  // (logging its cost table the first time). Inline: it is on every logged call's path.
  void push_pending_locked(int key, Context& c, size_t at, uint64_t index, uint64_t bytes, double propensity,
                           bool lost, int slot, const CostTable& table) {
    const int nccl = logged_nccl_slot_locked(key, c, bytes, table);
    // NCCL's own choice is decided as NCCL's pick at NCCL's knobs (over knob arms, that arm's index).
    int decided = slot >= 0 ? slot : nccl;
    if constexpr (kKnobs)
      if (slot < 0) decided = nccl >= 0 ? knob_arm_index(c.arms, Arm::of_slot(nccl)) : -1;
    c.pending[at] = {index, bytes, propensity, Index(decided), int8_t(nccl), lost};
    ++c.pending_count;
  }
  // The probability of the memo's decision for call `index`, taken from the ahead ring with its
  // contest (into `contest`, when deferred); false when the ring lost it.
  bool take_ahead_locked(Context& c, uint64_t index, double* propensity, ThompsonContestT<N>* contest);
  // NCCL's pick for this call's size, logging the size's cost table the first time it is seen.
  int logged_nccl_slot_locked(int key, Context& c, uint64_t bytes, const CostTable& table) {
    return c.logged_sizes.nccl_pick(*log_, comm_id_, key_collective(key), bytes, nnodes_, nranks_, table);
  }
  void retire_locked(Context& c, int slot);
  bool grow_memo_locked(Context& c);

  const uint64_t comm_id_;
  const int nranks_, nnodes_;
  const std::shared_ptr<const PolicyEngine> engine_;
  const bool memoize_;
  const MemoLimits limits_;
  const KnobSpec knobs_;  // knob arms: the lists each context's slots are crossed with
  mutable std::mutex mu_;
  bool active_ = true;
  uint64_t decisions_ = 0, observations_ = 0, mismatches_ = 0, captured_ = 0, replays_ = 0, unmeasurable_ = 0,
           lost_ = 0, unwatched_ = 0;
  FeedbackLagHistogram lag_;
  std::shared_ptr<DecisionLog> log_;
  bool last_counted_ = false;                   // the last fresh decision counts as pending
  double last_propensity_ = 1.0;                // of the last fresh decision (with a log)
  ThompsonContestT<N>* contest_out_ = nullptr;  // where its contest goes, when the integral is deferred
  // Leader mode with a log: the rank whose calls are logged, and the call it is deciding now
  // (UINT64_MAX when none), whose fresh decision goes straight into its pending ring.
  uint64_t log_member_ = 0;
  int logging_key_ = -1;
  uint64_t logging_index_ = UINT64_MAX;
  bool logging_fresh_ = false;  // the logging rank's current call was decided fresh
  int64_t memo_charged_ = 0;    // bytes taken from the budget
  size_t local_ranks_ = 0;      // members in the leader's own process
  std::unique_ptr<Context> contexts_[kNumContextKeys];
  // Leader mode: per context, the calls answered before it started (the policy starts after them),
  // the leader's own call count (how far followers may ask ahead), whether it started, and the
  // tables gathered for its start.
  uint64_t inactive_end_[kNumContextKeys] = {};
  uint64_t own_calls_[kNumContextKeys] = {};
  bool started_[kNumContextKeys] = {};
  std::unique_ptr<Agreement> agreements_[kNumContextKeys];
  std::map<uint64_t, size_t> members_;  // identity -> index into Agreement::seen
};

using OnlineLearner = OnlineLearnerT<kNumArms>;
using KnobLeaderLearner = OnlineLearnerT<kKnobReplayArms>;

}  // namespace ncclbot::plugin
