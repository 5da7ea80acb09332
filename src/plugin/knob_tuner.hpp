#pragma once
// Online mode over knob arms with a rank-local learner (NCCLBOT_KNOBS; docs/plugin.md "Knob mode"):
// getCollInfo plays the decision's algorithm and protocol into the cost table and its channel count
// into nChannels; getChunkSize (tuner v6) hands NCCL the decision's chunk size, clamped to what NCCL
// can run. NCCL calls getChunkSize after getCollInfo, per channel (nChannels 1 and per-channel bytes
// outside CollNet), up to three times per collective, so it is matched to the pending decision of
// its collective (the latest one whose algorithm and protocol it names), never to its own bytes.
#include <array>
#include <atomic>
#include <cstddef>
#include <memory>

#include "plugin/comm_identity.hpp"
#include "plugin/context_key.hpp"
#include "plugin/cost_table.hpp"
#include "plugin/first_calls.hpp"
#include "plugin/knob_learner.hpp"

namespace ncclbot::plugin {

class KnobTuner {
 public:
  explicit KnobTuner(std::shared_ptr<KnobLearner> learner) : learner_(std::move(learner)) {}

  const std::shared_ptr<KnobLearner>& learner() const { return learner_; }

  // NCCL's hot path.
  void get_coll_info(const CommIdentity& id, int coll, size_t bytes, int /*num_pipe_ops*/, CostTable table,
                     int /*reg_buff*/, int* nchannels) {
    const int key = context_key(coll, bytes);
    if (key < 0) return;
    Pending& p = pending_[size_t(key_collective(key))];
    p.key = -1;
    const KnobDecision d = learner_->decide_next(key, bytes, table);
    if (first_calls_.first(key)) log_first_call(id, table, coll, bytes, d);
    if (d.index < 0) return;
    if (!table.choose(d.arm.slot())) {  // this size's table lacks the arm: NCCL's choice
      if (!warned_unusable_.exchange(true)) warn_unusable(id, coll, bytes, d.arm);
      return;
    }
    if (d.arm.channels > 0 && nchannels != nullptr) *nchannels = int(d.arm.channels);
    p = {key, d};
  }
  // Tuner v6: the pending decision's chunk when NCCL runs its algorithm and protocol.
  void get_chunk_size(const CommIdentity& id, int coll, int algo, int proto, size_t* chunk_size);

  // The finalize line: decisions, latencies learned, calls settled unlearned.
  void log_summary(const CommIdentity& id) const;

 private:
  struct Pending {
    int key = -1;  // -1: none
    KnobDecision decision{};
  };
  void log_first_call(const CommIdentity& id, const CostTable& table, int coll, size_t bytes,
                      const KnobDecision& d) const;
  static void warn_unusable(const CommIdentity& id, int coll, size_t bytes, const Arm& arm);

  std::shared_ptr<KnobLearner> learner_;
  // By collective: NCCL asks for the chunk on the thread that enqueued, after getCollInfo.
  std::array<Pending, kNumKnownCollectives> pending_{};
  FirstCalls first_calls_;
  FirstCalls clamped_;  // contexts whose clamped chunk was logged
  std::atomic<bool> warned_unusable_{false};
};

}  // namespace ncclbot::plugin
