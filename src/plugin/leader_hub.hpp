#pragma once
// The leader's side of the process (rank 0 of an online job with several ranks): its server, started
// once, and the learner of every communicator it decides for, those of its own ranks and those
// followers announce. A communicator starts deciding only once every one of its ranks is present,
// the leader's own included (online_learner.hpp).
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

#include "plugin/comm_identity.hpp"
#include "plugin/decision_log_writer.hpp"
#include "plugin/leader_secret.hpp"
#include "plugin/leader_wire.hpp"
#include "plugin/online_learner.hpp"
#include "plugin/plugin_config.hpp"
#include "plugin/policy_engine.hpp"

namespace ncclbot::plugin {

// How many communicators the leader keeps learners for without being a member (followers' HELLOs
// and requests for them: all NCCL's choice, a few KiB each).
inline constexpr size_t kMaxForeignLearners = 1024;

class LeaderHub {
 public:
  // Starts the server on cfg's address with `engine` for every learner, unless it runs already;
  // false (and one WARN) when it cannot listen.
  // `knobs` (null: one arm per algorithm x protocol): every learner decides over knob arms
  // (KnobLeaderLearner) crossing each context's slots with these lists.
  bool start(const PluginConfig& cfg, const LeaderKey& key, std::shared_ptr<const PolicyEngine> engine,
             const PluginLog& log, std::shared_ptr<const KnobSpec> knobs = nullptr);
  // The lists the learners cross (null: none), fixed by the first start.
  std::shared_ptr<const KnobSpec> knobs();

  struct Joined {
    // OnlineLearner, or KnobLeaderLearner with knob lists; null: the leader knows the communicator
    // with another shape.
    std::shared_ptr<LeaderLearner> learner;
    uint64_t member = 0;  // this rank, as the learner counts it
    bool logs = false;    // `log` was given to the learner for this rank's decisions
  };
  // Counts one more of this process's ranks in communicator `id`. The first one logs its decisions
  // in `log` (may be null); a second one ends the communicator's log (the latencies the profiler
  // reports do not say which rank of the process measured them), with one WARN.
  Joined join(const CommIdentity& id, std::shared_ptr<DecisionLog> log);

 private:
  // nullptr when the communicator is new and the cap on learners for communicators this process has
  // not joined is reached, or its shape contradicts the learner's.
  std::shared_ptr<LeaderLearner> learner_locked(uint64_t comm_id, int nranks, int nnodes, bool local);
  void update_activation_locked(uint64_t comm_id);
  // The server's callbacks (LeaderHandler): run on its thread, never throw.
  static bool on_hello(void* self, const WireHello& h);
  static void on_request(void* self, const WireRequest& r, WireDecisions* d);

  std::mutex mu_;
  bool started_ = false;
  std::shared_ptr<const PolicyEngine> engine_;
  std::shared_ptr<const KnobSpec> knobs_;
  std::map<uint64_t, std::shared_ptr<LeaderLearner>> learners_;  // by comm id
  std::map<uint64_t, int> local_members_;                        // ranks of each communicator in this process
  size_t foreign_learners_ = 0;  // learners of communicators this process has not joined
};

}  // namespace ncclbot::plugin
