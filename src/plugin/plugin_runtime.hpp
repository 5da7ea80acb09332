#pragma once
// Process-wide state of the plugin shared by the tuner, the profiler and the report function: the
// communicators handed to NCCL, each in its role (tuner_comm.hpp), the learners latencies join
// (by communicator hash), the leader's and the followers' sides of the process, and the decision
// logs. One instance lives for the whole process (never destroyed, so detached network threads and
// late profiler events never see freed memory).
#include <cstddef>
#include <cstdint>
#include <memory>

#include "plugin/decision_logs.hpp"
#include "plugin/follower_hub.hpp"
#include "plugin/leader_hub.hpp"
#include "plugin/learner_directory.hpp"
#include "plugin/live_handles.hpp"
#include "plugin/online_learner.hpp"
#include "plugin/plugin_config.hpp"
#include "plugin/tuner_comm.hpp"
#include "plugin/watch_switch.hpp"

namespace ncclbot::plugin {

class PluginRuntime {
 public:
  static PluginRuntime& instance();

  // Never throw; failures degrade the communicator to pass-through with a warning. finalize_comm
  // frees only a context init_comm handed out and no finalize took back (else warns once).
  // `chunk_hook`: NCCL loaded the v6 tuner, so getChunkSize will be called.
  TunerComm* init_comm(uint64_t comm_id, bool has_comm_id, size_t nranks, size_t nnodes, nccl_logger_t logger,
                       bool chunk_hook = false);
  void finalize_comm(TunerComm* comm);
  // The tuner's calls, answered by the communicator's role (TunerComm).
  void get_coll_info(TunerComm* comm, int coll, size_t bytes, int num_pipe_ops, float** table, int num_algo,
                     int num_proto, int reg_buff, int* nchannels) {
    comm->get_coll_info(coll, bytes, num_pipe_ops, table, num_algo, num_proto, reg_buff, nchannels);
  }
  void get_chunk_size(TunerComm* comm, int coll, size_t bytes, int algo, int proto, size_t* chunk_size) {
    comm->get_chunk_size(coll, bytes, algo, proto, chunk_size);
  }
  void get_coll_info_v2(TunerComm* comm, int coll, size_t bytes, int coll_net, int nvls, int num_pipe_ops,
                        int* algorithm, int* protocol, int* nchannels) {
    comm->get_coll_info_v2(coll, bytes, coll_net, nvls, num_pipe_ops, algorithm, protocol, nchannels);
  }

  // The learner measurements of communicator `comm_id` feed (profiler, report function): the one
  // with that hash, else (ABI v2..v4 tuners pass no hash) the newest of the same shape.
  std::shared_ptr<LatencySink> learner_for(uint64_t comm_id, int nranks, int nnodes) {
    return learners_.find(comm_id, nranks, nnodes);
  }
  // Which calls NCCL instruments (watch_switch.hpp), for the profiler.
  WatchSwitch& watch_switch() { return watch_; }
  // Measured latency of one collective; false when it joins no online context.
  bool report(uint64_t comm_id, int nranks, int nnodes, int coll, uint64_t bytes, int algo, int proto,
              double latency_us);

 private:
  PluginRuntime() = default;
  void setup_table(TunerComm& comm, const PluginConfig& cfg);
  void setup_online(TunerComm& comm, const PluginConfig& cfg, bool chunk_hook);
  // NCCLBOT_KNOBS as this NCCL can play them (chunk lists dropped, one WARN, without getChunkSize);
  // null, with one WARN, when they do not parse (the communicator keeps NCCL's own choices).
  static std::shared_ptr<const KnobSpec> knob_lists(const CommIdentity& id, const PluginConfig& cfg,
                                                    bool chunk_hook);
  // A rank-local learner over knob arms (KnobTuner).
  void setup_knobs(TunerComm& comm, const PluginConfig& cfg,
                   const std::shared_ptr<const PolicyEngine>& engine, const KnobSpec& spec);
  // setup_online's rank-local learner (one rank, or NCCLBOT_AGREEMENT=local).
  void setup_local(TunerComm& comm, const PluginConfig& cfg,
                   const std::shared_ptr<const PolicyEngine>& engine, bool restricted);

  LiveHandles comms_;  // the contexts init_comm handed out, not finalized yet
  LearnerDirectory learners_;
  LeaderHub leader_;
  FollowerHub followers_;
  DecisionLogs decision_logs_;
  WatchSwitch watch_;
};

}  // namespace ncclbot::plugin
