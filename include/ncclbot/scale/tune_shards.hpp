#pragma once
// `tune` split across processes (docs/scale-out.md). Separate processes (Slurm job arrays, shell
// loops) run it in two rounds because scoring needs the tune phase's choice:
//   tune ... --phase tune --shard I/N --out part.I         grid points on the tune contexts, slice I
//   merge part.* --out choice.json                          each policy's frozen point
//   tune ... --phase score --choice choice.json --shard I/N --out spart.I
//   merge spart.*                                           prints what the unsharded tune prints
// The partials are replay partials (scale/replay_partial.hpp) with every seed's losses, the same
// ones MPI ranks exchange for tune (tune_engine_on_ranks). Their identity is the replay job's plus
// "phase" and "tune" (the grids, objective, node options and both context lists) and, in the score
// phase, "choice" (the frozen points with their tune metrics): partials of another tune, of the
// other phase, or scored from another choice are foreign.
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "ncclbot/scale/process_group.hpp"
#include "ncclbot/scale/replay_partial.hpp"
#include "ncclbot/scale/shard.hpp"
#include "ncclbot/tune/tune.hpp"

namespace ncclbot {

// The "tune" block of both phases' identities: the request's grids, objective and contexts, the
// node options' text as the user gave it, and the --as-deployed mode (left out when empty).
nlohmann::json tune_setup_json(const TuneRequest& request, const std::string& tune_nodes,
                               const std::string& score_nodes, const std::string& as_deployed);

// Identity of a partial of `phase` ("tune" or "score"): replay_identity(job) for command "tune",
// plus phase, setup and (score phase) the choice's "policies".
nlohmann::json tune_partial_identity(const ReplayJob& job, std::string_view sweep_sha256,
                                     std::string_view backend, std::string_view phase,
                                     const nlohmann::json& setup,
                                     const nlohmann::json& choice_policies = nullptr);

// The choice file: {"format", "identity" (the tune phase's), "policies": [{"grid", "tuned",
// "chosen", "objective": [per point], "tune": {"online", "final"}}]}.
nlohmann::json tune_choice_document(const nlohmann::json& tune_identity,
                                    const std::vector<TunedPolicy>& policies);

// Reads a choice file for the tune whose tune-phase identity is `tune_identity`; throws InputError
// naming `path` when it is no choice file or a foreign one (naming the first field that differs).
nlohmann::json read_tune_choice(const std::string& path, const nlohmann::json& tune_identity);

// The frozen policies of a choice's "policies" (score metrics still empty).
std::vector<TunedPolicy> policies_from_choice(const nlohmann::json& policies, const std::string& source);

// One shard of one phase, as a partial: its bytes (encode_replay_partial) and its unit counts.
struct TuneShardPartial {
  std::string bytes;
  size_t total_units = 0;  // of the phase's whole job
  size_t units = 0;        // of this shard
};

// Replays shard `shard` of phase `phase` ("tune" or "score") of `request` (backend already
// resolved); `setup` is tune_setup_json(). The score phase first reads the choice file
// `choice_path` (read_tune_choice) and replays its frozen points.
TuneShardPartial replay_tune_shard(const TuneRequest& request, std::string_view phase, ShardSpec shard,
                                   std::string_view sweep_sha256, const nlohmann::json& setup,
                                   const std::string& choice_path);

// Merged tune partials: the tune phase's policies with their chosen points, or the score phase's
// frozen policies with their score metrics.
struct MergedTunePartials {
  std::string phase;  // "tune" or "score"
  std::vector<TunedPolicy> policies;
};

// `merge` of tune partials (every shard of one phase, any order): the tune phase chooses each
// policy's point and writes the choice file to `out_path` (required), the score phase records the
// frozen points' scores (`out_path` must be empty, a usage error otherwise). Throws InputError
// naming the first partial for a partial of no known phase or a malformed header.
MergedTunePartials merge_tune_phase_partials(const std::vector<ReplayPartial>& parts,
                                             const std::string& out_path);

// The replay engine of a tune whose two phases are split across the ranks of `group`
// (TuneRequest::engine): run_replay_on_ranks() under the replay identity for command "tune".
std::function<ReplayResults(const ReplayJob&)> tune_engine_on_ranks(ProcessGroup& group,
                                                                    std::string sweep_sha256,
                                                                    ReplayBackend backend);

}  // namespace ncclbot
