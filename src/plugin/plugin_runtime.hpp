#pragma once
// Process-wide state of the plugin shared by the tuner, the profiler and the report function:
// the communicators' learners (joined on the communicator hash), the leader server or the link to
// it, and the policy engines. One instance lives for the whole process (never destroyed, so
// detached network threads and late profiler events never see freed memory).
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "plugin/context_key.hpp"
#include "plugin/decision_log_writer.hpp"
#include "plugin/decision_table.hpp"
#include "plugin/follower_link.hpp"
#include "plugin/live_handles.hpp"
#include "plugin/online_learner.hpp"
#include "plugin/plugin_config.hpp"
#include "plugin/plugin_log.hpp"

namespace ncclbot::plugin {

enum class Role { kPassThrough, kTable, kLocal, kLeader, kFollower };

const char* role_name(Role r);

// What NCCL's tuner context points at: one communicator.
struct TunerComm {
  uint64_t comm_id = 0;  // 0 for tuner ABI v2..v4, which do not pass it
  int nranks = 1, nnodes = 1;
  bool has_comm_id = false;
  PluginLog log;
  Role role = Role::kPassThrough;
  std::string state_path;
  // table mode
  std::shared_ptr<const DecisionTable> table;
  std::vector<const DecisionRow*> rows;
  // online mode
  std::shared_ptr<const PolicyEngine> engine;
  std::shared_ptr<OnlineLearner> learner;     // local and leader roles
  std::shared_ptr<DecisionLog> decision_log;  // NCCLBOT_LOG (local role)
  uint64_t member = 0;                        // leader role: this rank, as the learner knows it
  std::shared_ptr<FollowerLink> link;         // follower role
  WireHello self;                             // follower role: this rank, as announced to the leader
  FollowerWaits waits;                        // follower role: decisions that waited for their window
  std::atomic<bool> warned_gone{false};
  int timeout_ms = 10000;
  std::mutex mu;                    // follower call counters
  std::vector<uint64_t> next_call;  // leader / follower: this rank's call index per context key
  std::atomic<bool> warned_unusable{false};
  bool restricted = false;  // NCCL_ALGO or NCCL_PROTO set (online roles): name the arms left
  // Contexts whose first decision was logged (one INFO line each, so NCCL's log shows the plugin
  // being consulted without a line per call).
  std::atomic<uint64_t> logged_keys[(kNumContextKeys + 63) / 64] = {};
};

// How many communicators the leader keeps learners for without being a member (followers' HELLOs
// and requests for them: all NCCL's choice, a few KiB each).
inline constexpr size_t kMaxForeignLearners = 1024;

class PluginRuntime {
 public:
  static PluginRuntime& instance();

  // Never throw; failures degrade the communicator to pass-through with a warning. finalize_comm
  // frees only a context init_comm handed out and no finalize took back (else warns once).
  TunerComm* init_comm(uint64_t comm_id, bool has_comm_id, size_t nranks, size_t nnodes,
                       nccl_logger_t logger);
  void finalize_comm(TunerComm* comm);
  void get_coll_info(TunerComm* comm, int coll, size_t bytes, int num_pipe_ops, float** table, int num_algo,
                     int num_proto, int reg_buff, int* nchannels);
  // Tuner v6: the chunk size for the arm NCCL runs. Table mode only: the row getCollInfo's search
  // stops at for that arm (deciding_row; the call's numPipeOps and regBuff unknown here, so any),
  // when it names the arm and gives chunk_bytes; otherwise NCCL's value stays.
  void get_chunk_size(TunerComm* comm, int coll, size_t bytes, int algo, int proto, size_t* chunk_size) const;
  // Tuner v2: no cost table; only table mode can answer (algorithm and protocol directly).
  void get_coll_info_v2(TunerComm* comm, int coll, size_t bytes, int coll_net, int nvls, int num_pipe_ops,
                        int* algorithm, int* protocol, int* nchannels);

  // The learner measurements of communicator `comm_id` feed (profiler, report function): the one
  // with that hash, else (ABI v2..v4 tuners pass no hash) the newest of the same shape.
  std::shared_ptr<OnlineLearner> learner_for(uint64_t comm_id, int nranks, int nnodes);
  // Measured latency of one collective; false when it joins no online context.
  bool report(uint64_t comm_id, int nranks, int nnodes, int coll, uint64_t bytes, int algo, int proto,
              double latency_us);

 private:
  PluginRuntime() = default;
  void setup_online(TunerComm& comm, const PluginConfig& cfg);
  // setup_online with several ranks: rank 0 leads (false when the communicator passes through), the
  // others follow. Each takes mu_ itself.
  bool setup_leader_role(TunerComm& comm, const PluginConfig& cfg, const LeaderKey& key,
                         const std::shared_ptr<const PolicyEngine>& engine);
  void setup_follower_role(TunerComm& comm, const PluginConfig& cfg, const LeaderKey& key);
  bool start_leader(const PluginConfig& cfg, const LeaderKey& key, std::shared_ptr<const PolicyEngine> engine,
                    const PluginLog& log);
  // nullptr when the communicator is new and the cap on learners for communicators this process
  // has not joined is reached, or its shape contradicts the learner's.
  std::shared_ptr<OnlineLearner> leader_learner_locked(uint64_t comm_id, int nranks, int nnodes, bool local);
  void update_activation_locked(uint64_t comm_id);
  std::shared_ptr<FollowerLink> follower_link(const PluginConfig& cfg, const LeaderKey& key,
                                              std::string* error);
  // The leader server's callbacks (LeaderHandler): run on its thread, never throw.
  static bool on_hello(void* self, const WireHello& h);
  static void on_request(void* self, const WireRequest& r, WireDecisions* d);
  void load_state(TunerComm& comm);
  void save_state(TunerComm& comm);
  // The process's decision log for `cfg` (opened on first use, one per path), or nullptr.
  std::shared_ptr<DecisionLog> decision_log(const PluginConfig& cfg, const PluginLog& log);

  std::mutex mu_;
  LiveHandles comms_;  // the contexts init_comm handed out, not finalized yet
  std::multimap<uint64_t, std::weak_ptr<OnlineLearner>> live_;  // by comm id (0 = unknown)
  // Leader role.
  bool leader_started_ = false;
  std::shared_ptr<const PolicyEngine> leader_engine_;
  std::map<uint64_t, std::shared_ptr<OnlineLearner>> leader_learners_;
  std::map<uint64_t, int> local_members_;  // ranks of each communicator in this process
  size_t foreign_learners_ = 0;            // learners of communicators this process has not joined
  // Follower role.
  std::shared_ptr<FollowerLink> link_;
  std::string link_address_;
  std::map<uint64_t, uint32_t> follower_ordinals_;  // ranks of each communicator this process holds
  std::mutex state_mu_;                             // state file writes
  std::map<std::string, std::shared_ptr<DecisionLog>> decision_logs_;  // by expanded path
};

}  // namespace ncclbot::plugin
