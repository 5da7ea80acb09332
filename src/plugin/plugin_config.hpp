#pragma once
// The plugin's settings, read from the environment at each communicator's init (so a test or
// plugin-check can change them between inits). Names are a contract (docs/architecture.md
// "Contracts"; docs/plugin.md "Environment").
//   NCCLBOT_MODE      table | online | off            (default: table if NCCLBOT_TABLE is set, else off)
//   NCCLBOT_TABLE     decision table (ncclbot or NCCL example CSV format)
//   NCCLBOT_FABRIC    keep only table rows of this fabric (rows with fabric "*" always apply)
//   NCCLBOT_POLICY    policy spec for online mode, e.g. "ucb1:c=0.5,n0=8"
//   NCCLBOT_SEED      seed of the policy's random stream (default 0)
//   NCCLBOT_KNOBS     knob arms for a rank-local learner: channel and chunk lists as `synth --knobs`
//                     takes them, e.g. "channels=0,8,16;chunk=0,128K" (docs/plugin.md "Knob mode")
//   NCCLBOT_STATE     state file: learned statistics loaded at init, saved at finalize
//   NCCLBOT_LEADER    host:port of the decision leader (online mode with several ranks)
//   NCCLBOT_RANK      this process's rank in the job (default: RANK, OMPI_COMM_WORLD_RANK,
//                     SLURM_PROCID, PMI_RANK); rank 0 serves as the leader
//   NCCLBOT_LEADER_SECRET       the job's secret authenticating leader messages (>= 16 bytes), or
//   NCCLBOT_LEADER_SECRET_FILE  a file holding it, owner-only (`ncclbot secret` writes one)
//   NCCLBOT_LEADER_TIMEOUT_MS  how long a follower waits to connect, and between warnings while it
//                     waits for a decision (default 10000)
//   NCCLBOT_LOG       decision log path (docs/ope.md); %r is replaced by the rank
//   NCCLBOT_LOG_RANKS the rank that logs (default 0) or `all`
//   NCCLBOT_LOG_MAX_MB size at which the run goes on in the next free PATH.N (default 1024)
//   NCCLBOT_AGREEMENT leader | local   local = learn from this rank's own latencies only; safe only
//                     for one-rank communicators or one process driving all decisions (plugin-check)
#include <cstdint>
#include <string>

namespace ncclbot::plugin {

enum class Mode { kOff, kTable, kOnline };
enum class Agreement { kLeader, kLocal };

struct PluginConfig {
  Mode mode = Mode::kOff;
  std::string table_path, fabric, policy_spec, state_path, leader_address, knobs;
  std::string leader_secret, leader_secret_file;
  uint64_t seed = 0;
  int rank = -1;  // -1: unknown
  int leader_timeout_ms = 10000;
  Agreement agreement = Agreement::kLeader;
  std::string log_path;
  int log_rank = 0;  // -1: every rank
  uint64_t log_max_bytes = uint64_t(1024) << 20;
  std::string problems;  // settings that were ignored, for one WARN line
  // The user's restrictions of NCCL itself (NCCL_ALGO, NCCL_PROTO), as set; NCCL removes the arms
  // they exclude from every cost table.
  std::string nccl_algo, nccl_proto;

  // The one arm (algorithm * 3 + protocol) NCCL_ALGO and NCCL_PROTO leave when each names exactly
  // one (no list, no '^' exclusion, no per-collective form), else -1.
  int single_arm_left() const;

  static PluginConfig from_environment();
  // Whether this process's rank writes a decision log (NCCLBOT_LOG, NCCLBOT_LOG_RANKS; an unknown
  // rank counts as rank 0).
  bool logs_this_rank() const {
    return !log_path.empty() && (log_rank < 0 || log_rank == (rank < 0 ? 0 : rank));
  }
};

const char* mode_name(Mode m);

}  // namespace ncclbot::plugin
