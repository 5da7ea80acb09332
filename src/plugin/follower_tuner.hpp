#pragma once
// Online mode on every rank but 0 of several: a follower. It plays the leader's decision for each of
// its calls, fetched over its link (follower_link.hpp), and never decides on its own once the
// leader may have counted it. Over knob arms the decision carries the channel count and chunk size,
// played as the leader plays them.
#include <atomic>
#include <cstddef>
#include <memory>

#include "plugin/call_counter.hpp"
#include "plugin/comm_identity.hpp"
#include "plugin/cost_table.hpp"
#include "plugin/follower_link.hpp"
#include "plugin/online_pick.hpp"
#include "plugin/policy_engine.hpp"

namespace ncclbot::plugin {

class FollowerHub;
struct LeaderKey;
struct PluginConfig;
class TunerComm;

class FollowerTuner {
 public:
  // `engine`: the policy the leader runs (named in the init line); `self`: this rank as announced.
  FollowerTuner(std::shared_ptr<const PolicyEngine> engine, std::shared_ptr<FollowerLink> link,
                const WireHello& self, int timeout_ms, bool restricted)
      : engine_(std::move(engine)),
        link_(std::move(link)),
        self_(self),
        timeout_ms_(timeout_ms),
        pick_(restricted) {}

  const PolicyEngine& engine() const { return *engine_; }
  // NCCL's hot path: the leader's decision for this rank's next call of the context, waited for
  // when its window is not in yet (with a WARN per timeout period).
  void get_coll_info(const CommIdentity& id, int coll, size_t bytes, int num_pipe_ops, CostTable table,
                     int reg_buff, int* nchannels);
  // Tuner v6: the chunk of the leader's knob arm for this collective (chunk_handover.hpp).
  void get_chunk_size(const CommIdentity& id, int coll, int algo, int proto, size_t* chunk_size) {
    pick_.hand_over(id, coll, algo, proto, chunk_size);
  }
  // The finalize line: how often the lookahead (docs/plugin.md "Decision windows") was late.
  void log_waits(const CommIdentity& id) const;

 private:
  std::shared_ptr<const PolicyEngine> engine_;
  std::shared_ptr<FollowerLink> link_;
  const WireHello self_;
  const int timeout_ms_;
  FollowerWaits waits_;  // decisions that waited for their window
  std::atomic<bool> warned_gone_{false};
  CallCounter calls_;
  OnlinePick pick_;
};

// Makes `comm` a follower: announces this rank to the leader and, unless the leader cannot have
// counted it, follows the leader's decisions. Otherwise `comm` passes through, with one WARN.
void become_follower(TunerComm& comm, const PluginConfig& cfg, const LeaderKey& key,
                     const std::shared_ptr<const PolicyEngine>& engine, bool restricted, FollowerHub& hub);

}  // namespace ncclbot::plugin
