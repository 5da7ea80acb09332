#pragma once
// Online mode for one communicator: one policy per context (collective, size class), warm-started
// from the cost table NCCL passes in (NCCL's model = the prior), stepping exactly like a replay:
//   call t of a context: StepRandom(seed, stream id, t) -> policy.select -> slot
//   measured latency of that call (profiler or report function) -> policy.update(slot, latency)
// With memoize on (leader mode) every decision is recorded by the context's call index, so the
// leader answers a follower's "decision for call t" with exactly what it played (or will play) at
// its own call t; decisions never depend on which rank asked first.
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "ncclbot/core/arm.hpp"
#include "plugin/context_key.hpp"
#include "plugin/cost_table.hpp"
#include "plugin/policy_engine.hpp"

namespace ncclbot::plugin {

class StateFile;

class OnlineLearner {
 public:
  OnlineLearner(uint64_t comm_id, int nranks, int nnodes, std::shared_ptr<const PolicyEngine> engine,
                bool memoize);

  uint64_t comm_id() const { return comm_id_; }
  int nranks() const { return nranks_; }
  int nnodes() const { return nnodes_; }

  // Decision for this rank's next call of context `key` (slot, or -1 = keep NCCL's choice).
  // `prior` holds the call's costs by slot (kNumArms entries, < 0 = not usable; only NCCL's 21
  // are read) and seeds the context on first use.
  int decide_next(int key, uint64_t bytes, const float* prior);
  // The same, reading the prior from the call's cost table only when the context is new (the
  // getCollInfo hot path: no 21-entry copy per call).
  int decide_next(int key, uint64_t bytes, const CostTable& table);
  // Leader mode: the decision for call `index` of `key`, counted by the calling rank (several
  // ranks of one communicator may live in the leader's process; each has its own count).
  int decide_at(int key, uint64_t bytes, const CostTable& table, uint64_t index);
  // Decisions for calls [start, start + count) of `key`, for a follower (leader mode only).
  void decide_range(int key, uint64_t bytes, const float* prior, uint64_t start, int count, int8_t* out);
  // One measured latency of `slot` in context `key`; ignored for unseen contexts and bad values.
  bool observe(int key, int slot, double latency_us);

  // Leader mode: decisions are NCCL's own (-1) until every rank of the communicator is connected.
  void set_active(bool active);
  bool active() const;

  // Persistence: contexts with their policy state (state_file.hpp keeps the format).
  void export_contexts(StateFile& file) const;
  int import_contexts(const StateFile& file);  // returns how many contexts were restored

  // Statistics for logs and tests.
  uint64_t decisions() const;
  uint64_t observations() const;

 private:
  struct Context {
    ArmMask mask;
    float prior[kNumArms];
    PolicyState policy;
    uint64_t first_bytes = 0;  // nBytes of the context's first call: keys its Philox stream
    uint64_t stream_id = 0;
    uint32_t steps = 0;        // policy selections so far: the Philox step of the next one
    uint64_t next_call = 0;    // this rank's next call index in the context
    uint64_t memo_base = 0;    // call index of memo[0]
    std::vector<int8_t> memo;  // decisions by call index (leader mode)
  };

  Context& context_locked(int key, uint64_t bytes, const float* prior);
  int decide_at_locked(Context& c, uint64_t index);
  int fresh_decision_locked(Context& c);

  const uint64_t comm_id_;
  const int nranks_, nnodes_;
  const std::shared_ptr<const PolicyEngine> engine_;
  const bool memoize_;
  mutable std::mutex mu_;
  bool active_ = true;
  uint64_t decisions_ = 0, observations_ = 0;
  std::unique_ptr<Context> contexts_[kNumContextKeys];
};

}  // namespace ncclbot::plugin
