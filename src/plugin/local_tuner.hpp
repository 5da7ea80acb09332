#pragma once
// Online mode with a rank-local learner: one rank per communicator, or NCCLBOT_AGREEMENT=local. The
// learner decides each call at once and learns from this rank's own latencies.
#include <cstddef>

#include "plugin/comm_identity.hpp"
#include "plugin/comm_learner.hpp"
#include "plugin/context_key.hpp"
#include "plugin/cost_table.hpp"
#include "plugin/online_pick.hpp"

namespace ncclbot::plugin {

class LocalTuner {
 public:
  LocalTuner(CommLearner learner, bool restricted) : learner_(std::move(learner)), pick_(restricted) {}

  const CommLearner& learner() const { return learner_; }
  // NCCL's hot path: the learner's next decision of the call's context, played into `table`.
  void get_coll_info(const CommIdentity& id, int coll, size_t bytes, int /*num_pipe_ops*/, CostTable table,
                     int /*reg_buff*/, int* /*nchannels*/) {
    const int key = context_key(coll, bytes);
    if (key < 0) return;
    pick_.play(id, table, coll, bytes, key, learner_.learner().decide_next(key, bytes, table));
  }

 private:
  CommLearner learner_;
  OnlinePick pick_;
};

}  // namespace ncclbot::plugin
