#pragma once
// `tune` split over separate processes (Slurm job arrays, shell loops), in two rounds because
// scoring needs the tune phase's choice (docs/scale-out.md):
//   tune ... --phase tune --shard I/N --out part.I         grid points on the tune contexts, slice I
//   merge part.* --out choice.json                          each policy's frozen point
//   tune ... --phase score --choice choice.json --shard I/N --out spart.I
//   merge spart.*                                           prints what the unsharded tune prints
// The partials are replay partials (scale/replay_partial.hpp) with every seed's losses, the same
// ones MPI ranks exchange for tune. Their identity is the replay job's plus "phase" and "tune" (the
// grids, objective, node options and both context lists) and, in the score phase, "choice" (the
// frozen points with their tune metrics): partials of another tune, of the other phase, or scored
// from another choice are foreign.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "cli/tune_report.hpp"
#include "ncclbot/replay/tune.hpp"
#include "ncclbot/scale/replay_partial.hpp"

namespace ncclbot::cli {

// The "tune" block of both phases' identities.
nlohmann::json tune_setup_json(const TuneRequest& request, const TuneReport& report);

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

// `merge` of tune partials: the tune phase writes the choice file to `out_path` (required); the
// score phase prints the tune report. Returns the exit code.
int merge_tune_partials(const std::vector<ReplayPartial>& parts, const std::string& out_path, bool json);

}  // namespace ncclbot::cli
