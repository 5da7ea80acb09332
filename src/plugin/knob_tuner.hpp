#pragma once
// Online mode over knob arms with a rank-local learner (NCCLBOT_KNOBS; docs/plugin.md "Knob mode"):
// getCollInfo plays the decision's algorithm and protocol into the cost table and its channel count
// into nChannels; getChunkSize (tuner v6) hands NCCL the decision's chunk size (chunk_handover.hpp).
#include <atomic>
#include <cstddef>
#include <memory>
#include <string>

#include "plugin/chunk_handover.hpp"
#include "plugin/comm_identity.hpp"
#include "plugin/context_key.hpp"
#include "plugin/cost_table.hpp"
#include "plugin/first_calls.hpp"
#include "plugin/knob_learner.hpp"

namespace ncclbot::plugin {

class KnobTuner {
 public:
  // `state_path`: NCCLBOT_STATE (empty: none).
  KnobTuner(std::shared_ptr<KnobLearner> learner, std::string state_path)
      : learner_(std::move(learner)), state_path_(std::move(state_path)) {}

  const std::shared_ptr<KnobLearner>& learner() const { return learner_; }

  // NCCL's hot path.
  void get_coll_info(const CommIdentity& id, int coll, size_t bytes, int /*num_pipe_ops*/, CostTable table,
                     int /*reg_buff*/, int* nchannels) {
    const int key = context_key(coll, bytes);
    if (key < 0) return;
    chunks_.clear(key_collective(key));
    const KnobDecision d = learner_->decide_next(key, bytes, table);
    if (first_calls_.first(key)) log_first_call(id, table, coll, bytes, d);
    if (d.index < 0) return;
    if (!table.choose(d.arm.slot())) {  // this size's table lacks the arm: NCCL's choice
      if (!warned_unusable_.exchange(true)) warn_unusable(id, coll, bytes, d.arm);
      return;
    }
    if (d.arm.channels > 0 && nchannels != nullptr) *nchannels = int(d.arm.channels);
    chunks_.expect(key_collective(key), {key, d.arm, 0, d.chunk_record});
  }
  // Tuner v6: the pending decision's chunk when NCCL runs its algorithm and protocol.
  void get_chunk_size(const CommIdentity& id, int coll, int algo, int proto, size_t* chunk_size);

  // The finalize line: decisions, latencies learned, calls settled unlearned.
  void log_summary(const CommIdentity& id) const;
  // NCCLBOT_STATE: the contexts the file holds for this shape and these lists, and at finalize
  // this communicator's.
  void restore_state(const CommIdentity& id) const;
  void save_state(const CommIdentity& id) const;

 private:
  void log_first_call(const CommIdentity& id, const CostTable& table, int coll, size_t bytes,
                      const KnobDecision& d) const;
  static void warn_unusable(const CommIdentity& id, int coll, size_t bytes, const Arm& arm);

  std::shared_ptr<KnobLearner> learner_;
  const std::string state_path_;
  ChunkHandover chunks_;
  FirstCalls first_calls_;
  std::atomic<bool> warned_unusable_{false};
};

}  // namespace ncclbot::plugin
