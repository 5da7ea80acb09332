#pragma once
// Local mode over knob arms (NCCLBOT_KNOBS, docs/plugin.md "Knob mode"): one policy per context,
// whose arms are the algorithm x protocol pairs of its first cost table crossed with the knob lists
// (knob_choice.hpp), each with its slot's cost as the prior (NCCL's model does not see knobs), and
// stepping exactly like a replay of a knob sweep:
//   call t of a context: StepRandom(seed, stream id, t) -> policy.select -> arm index
//   its latency (profiler or report function) -> policy.update(index of the arm that ran, latency)
// A profiler latency answers the call its Coll event was bound to when it started (bind_call: Coll
// events start in call order, after the tuner decided the call), so a call whose latency never
// comes (kernel-channel events lost) shifts no other call's pairing: the chunk a latency is credited
// with is its own call's. Such a call is settled unlearned once a call kLostAfter later in its
// context has been answered. A report-function latency answers the oldest call still waiting. The
// arm a latency is credited to is the one that ran (arm_that_ran), which may not be the one decided,
// and a call whose arm is none of the context's is settled without teaching the policy anything.
// Decisions whose latencies have not come back count as pending, as in OnlineLearner's local mode.
// With a decision log (NCCLBOT_LOG) each context's cost table is logged at each new size, and each
// decided call whose latency comes back as a knob call record (version 4, log/decision_log_format.hpp):
// the arm that ran, the arm decided when NCCL ran another, and the decision's probability over the
// context's knob arms.
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "ncclbot/core/knob_spec.hpp"
#include "ncclbot/policy/policy.hpp"
#include "ncclbot/replay/replay.hpp"
#include "plugin/context_key.hpp"
#include "plugin/context_watch.hpp"
#include "plugin/cost_table.hpp"
#include "plugin/decision_log_writer.hpp"
#include "plugin/knob_choice.hpp"
#include "plugin/latency_sink.hpp"
#include "plugin/policy_engine.hpp"

namespace ncclbot::plugin {

template <int N>
class StateFileT;

// The arms a knob context may hold: the replay engine's knob capacity, so both run one policy type.
inline constexpr int kKnobArms = kKnobReplayArms;

struct KnobDecision {
  int index = -1;  // into the context's arms; -1: NCCL's own choice
  Arm arm{};
  // Where the call's handed-over chunk is recorded (KnobLearner::chunk_set); null for NCCL's choice.
  uint32_t* chunk_record = nullptr;
};

class KnobLearner final : public LatencySink {
 public:
  KnobLearner(int nranks, int nnodes, std::shared_ptr<const PolicyEngine> engine, KnobSpec spec);

  // Log every decided call from now on (`comm_id`: the communicator's hash, as OnlineLearner logs
  // it). Not for a policy that defers its probabilities (PolicyEngine::defers_propensity).
  void set_decision_log(std::shared_ptr<DecisionLog> log, uint64_t comm_id);
  const std::shared_ptr<DecisionLog>& decision_log() const { return log_; }

  int nranks() const override { return nranks_; }
  int nnodes() const override { return nnodes_; }
  const PolicyEngine& engine() const { return *engine_; }

  // Decision for this rank's next call of context `key`; the context's arms come from `table` on
  // its first call. NCCL's choice (-1) when the table leaves no arm or more than kKnobArms.
  KnobDecision decide_next(int key, uint64_t bytes, const CostTable& table);
  // getChunkSize handed NCCL the decided chunk `chunk` (clamped to NCCL's own at most) for the call
  // whose decision's chunk_record is `record` (null: NCCL's choice, nothing to record): that call ran
  // it. Without the learner's lock (NCCL's hot path), so only on the thread that made the decision,
  // before its next decision: NCCL asks for the chunk right after getCollInfo, on the thread that
  // enqueues. The record is read under the lock when the call's latency comes, which is after the
  // call ran, so after this store.
  static void chunk_set(uint32_t* record, uint32_t chunk);
  // The oldest call of `key` that no Coll event has taken yet (kNoCall: none waits).
  uint64_t bind_call(int key) override;
  // The latency of call `call` of `key` (kOldestCall: the oldest still waiting), and what ran; false
  // when the context is unknown or the call no longer waits. A bad latency or an arm none of the
  // context's settles the call and teaches nothing.
  bool observe_ran(int key, const RanKnobs& ran, double latency_us, uint64_t call) override;
  // The watch rule's wish for this rank's next call of `key` (context_watch.hpp).
  bool watch_next(int key) override;
  // The next call of `key` to start was captured into a CUDA graph: its latency will never come as
  // the call's, so it is settled now, unlearned. Replays of captured calls are never learned from.
  void captured(int key, int slot) override;
  void observe_replay(int, int, uint64_t, double) override {}

  // Persistence (NCCLBOT_STATE): the contexts with their policy state; how many were restored (a
  // context already decided in is kept).
  void export_contexts(StateFileT<kKnobArms>& file) const;
  int import_contexts(const StateFileT<kKnobArms>& file);
  const KnobSpec& spec() const { return spec_; }

  // How many arms the lists give context `key` (0 before its first call), kept or not: a context
  // given more than kKnobArms keeps NCCL's choices.
  size_t crossing(int key) const;
  struct Totals {
    uint64_t decisions = 0;
    uint64_t learned = 0;  // latencies the policy learned from
    // Calls settled without teaching the policy: the arm that ran is none of its context's, the
    // latency is no measurement, or the call was captured into a graph.
    uint64_t unlearned = 0;
    uint64_t lost = 0;  // of those, calls whose latency never came (kLostAfter later calls answered)
    uint64_t unwatched =
        0;  // of those, calls NCCL ran unwatched (the watch rule switched its kernel events off)
  };
  Totals totals() const;

 private:
  struct Waiting {
    int16_t index;       // the decided arm; -1: NCCL's choice
    int16_t pending;     // the index counted pending for it; -1: none
    uint32_t chunk_set;  // the chunk getChunkSize handed over; 0: none (atomic_ref access)
    bool settled;        // answered (or given up) out of order: waits to leave the ring's head
  };
  // What the log needs of a waiting call (a ring beside `waiting`, kept only with a log).
  struct Logged {
    uint64_t call_index = 0;  // the policy's step of the context; UINT64_MAX: not logged
    uint64_t bytes = 0;
    double propensity = 0.0;
    int8_t nccl_slot = -1;
  };
  struct Context {
    std::vector<Arm> arms;
    size_t crossing = 0;  // the arms the lists give the context, kept or not
    ArmMask slots;        // the usable slots of its first cost table, and their costs (the state file's)
    float slot_prior[kNumNcclArms] = {};
    uint64_t bytes = 0;  // nBytes of its first call (keys its Philox stream)
    std::vector<float> prior;
    AnyPolicyT<kKnobArms> policy;
    PendingPullsT<kKnobArms> in_flight{};
    uint64_t stream_id = 0;
    uint64_t steps = 0;
    uint64_t steps_at_feedback = 0;
    ContextWatch watch;            // with a watch rule
    std::vector<Waiting> waiting;  // a ring of kWaitCap, oldest at `head`
    size_t head = 0, count = 0;
    uint64_t calls = 0;          // calls decided, each with an entry: the one at `head` is call calls - count
    uint64_t bound = 0;          // the next call a Coll event takes
    std::vector<Logged> logged;  // with a log: beside `waiting`
    LoggedSizes logged_sizes;    // with a log
  };
  static constexpr size_t kWaitCap = 2048;

  Context& context_locked(int key, uint64_t bytes, const CostTable& table);
  // A context as its first call's table (`slot_prior`, by slot) seeds it.
  std::unique_ptr<Context> seed_context(int key, uint64_t bytes, const float* slot_prior) const;
  void unpend_locked(Context& c, const Waiting& w);
  // The entry of call `call` while it waits (in the ring and not settled), else null.
  Waiting* waiting_locked(Context& c, uint64_t call);
  // Entry `w` is answered or given up: off the pending counts; settled entries leave the head.
  void settle_locked(Context& c, Waiting& w);
  // The oldest waiting call's latency never came: settled unlearned and counted lost (count > 0).
  void settle_oldest_lost_locked(Context& c);
  // The next call no Coll event has taken (kNoCall: none), which the caller takes.
  static uint64_t take_unbound_locked(Context& c);
  // `facts`: what the profiler said of the call (a symmetric kernel: `ran` not read; its tag).
  void log_call_locked(int key, const Logged& l, const Arm& decided, const Arm& ran, double latency_us,
                       const RanKnobs& facts);

  const int nranks_, nnodes_;
  const std::shared_ptr<const PolicyEngine> engine_;
  const KnobSpec spec_;
  mutable std::mutex mu_;
  Totals totals_;
  std::unique_ptr<Context> contexts_[kNumContextKeys];
  std::shared_ptr<DecisionLog> log_;
  uint64_t comm_id_ = 0;
};

}  // namespace ncclbot::plugin
