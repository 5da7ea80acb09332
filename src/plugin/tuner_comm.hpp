#pragma once
// What NCCL's tuner context points at: one communicator, playing exactly one role, chosen at init
// from the settings (plugin_runtime.cpp). Each role is a type of its own holding only its own state;
// a std::variant holds the one in play, so a call dispatches with a switch on the role (no
// allocation, no virtual call on NCCL's hot path).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <variant>

#include "plugin/comm_identity.hpp"
#include "plugin/follower_tuner.hpp"
#include "plugin/knob_leader_tuner.hpp"
#include "plugin/knob_tuner.hpp"
#include "plugin/leader_tuner.hpp"
#include "plugin/local_tuner.hpp"
#include "plugin/pass_through_tuner.hpp"
#include "plugin/table_tuner.hpp"

namespace ncclbot::plugin {

// In the order of TunerComm's variant.
enum class Role { kPassThrough, kTable, kLocal, kLeader, kFollower, kKnobLocal, kKnobLeader };

const char* role_name(Role r);

class TunerComm {
 public:
  explicit TunerComm(CommIdentity id) : id_(std::move(id)) {}
  TunerComm(const TunerComm&) = delete;
  TunerComm& operator=(const TunerComm&) = delete;

  const CommIdentity& id() const { return id_; }
  Role role() const { return Role(roles_.index()); }
  // Replaces the pass-through role the communicator starts with by role R, built from `args`.
  template <class R, class... Args>
  R& become(Args&&... args) {
    return roles_.template emplace<R>(std::forward<Args>(args)...);
  }

  // NCCL's hot path (tuner v3..v6): the role's pick written into `cost_table`, and `nchannels`. The
  // roles' own hot paths are inline, so this compiles into one function with a switch on the role.
  void get_coll_info(int coll, size_t bytes, int num_pipe_ops, float** cost_table, int num_algo,
                     int num_proto, int reg_buff, int* nchannels);
  // Tuner v6: table mode (TableTuner) and the roles that play knob arms answer it.
  void get_chunk_size(int coll, size_t bytes, int algo, int proto, size_t* chunk_size) {
    if (const auto* t = std::get_if<TableTuner>(&roles_))
      t->get_chunk_size(id_, coll, bytes, algo, proto, chunk_size);
    else if (auto* k = std::get_if<KnobTuner>(&roles_))
      k->get_chunk_size(id_, coll, algo, proto, chunk_size);
    else if (auto* f = std::get_if<FollowerTuner>(&roles_))
      f->get_chunk_size(id_, coll, algo, proto, chunk_size);
    else if (auto* l = std::get_if<KnobLeaderTuner>(&roles_))
      l->get_chunk_size(id_, coll, algo, proto, chunk_size);
  }
  // Tuner v2: only table mode answers it.
  void get_coll_info_v2(int coll, size_t bytes, int coll_net, int nvls, int num_pipe_ops, int* algorithm,
                        int* protocol, int* nchannels) const {
    if (const auto* t = std::get_if<TableTuner>(&roles_))
      t->get_coll_info_v2(id_, coll, bytes, coll_net, nvls, num_pipe_ops, algorithm, protocol, nchannels);
  }

  // The learner of the local and leader roles; nullptr for the others.
  const CommLearner* learner() const;
  // Where the profiler's and the report function's latencies go: the learner of the local, leader
  // and knob roles; nullptr for the others.
  std::shared_ptr<LatencySink> latency_sink() const;
  // The policy of every role that runs or follows one (local, leader, follower, knob); else nullptr.
  const PolicyEngine* engine() const;
  // Whether that policy has a watch rule (the profiler then switches kernel events call by call).
  bool watches_fewer() const;
  // What the init line adds after the mode: the table and its rows, or the policy and seed.
  std::string describe(const std::string& table_path) const;
  // Every learner role's NCCLBOT_STATE, at finalize.
  void save_state() const;
  // The role's own finalize lines (decisions and latencies, or a follower's waits).
  void log_summary() const;

 private:
  CommIdentity id_;
  std::variant<PassThroughTuner, TableTuner, LocalTuner, LeaderTuner, FollowerTuner, KnobTuner,
               KnobLeaderTuner>
      roles_;
};

}  // namespace ncclbot::plugin
