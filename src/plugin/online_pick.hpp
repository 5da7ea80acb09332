#pragma once
// How an online role (local, leader, follower) plays its decision into NCCL's cost table: the
// chosen entry set to 0, and one INFO line at each context's first call naming NCCL's pick and
// ncclbot's (and, with NCCL_ALGO / NCCL_PROTO set, the arms the table leaves).
#include <atomic>
#include <cstddef>

#include "plugin/comm_identity.hpp"
#include "plugin/cost_table.hpp"
#include "plugin/first_calls.hpp"

namespace ncclbot::plugin {

class OnlinePick {
 public:
  // `restricted`: NCCL_ALGO or NCCL_PROTO is set, so the first-call lines name the arms left.
  explicit OnlinePick(bool restricted) : restricted_(restricted) {}

  // Plays decision `slot` (-1: NCCL's own) of context `key`; a decided arm this rank's table lacks
  // keeps NCCL's choice, with one WARN per communicator. NCCL's hot path.
  void play(const CommIdentity& id, CostTable& table, int coll, size_t bytes, int key, int slot) {
    if (first_calls_.first(key)) log_first_call(id, table, coll, bytes, slot);
    if (slot >= 0 && !table.choose(slot) && !warned_unusable_.exchange(true))
      warn_unusable(id, coll, bytes, slot);
  }

 private:
  void log_first_call(const CommIdentity& id, const CostTable& table, int coll, size_t bytes, int slot) const;
  static void warn_unusable(const CommIdentity& id, int coll, size_t bytes, int slot);

  const bool restricted_;
  FirstCalls first_calls_;
  std::atomic<bool> warned_unusable_{false};
};

}  // namespace ncclbot::plugin
