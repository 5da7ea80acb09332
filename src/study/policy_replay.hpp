#pragma once
// What the study needs from the replay engine (include/ncclbot/replay): the concrete configurations
// of a policy spec's grid, and per-context losses of configurations replayed over seeds. This is
// the only place the study talks to the engines.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ncclbot/core/sweep.hpp"
#include "ncclbot/deployed/observation_cost.hpp"
#include "study/unit_result.hpp"

namespace ncclbot::study {

struct ReplaySettings {
  int seeds = 1;
  uint64_t seed = 1;  // replay seed of seed index s is seed + s
  int horizon = 1;
  int delay = 0;                   // feedback delay D (replay/replay.hpp)
  int window = 1;                  // decision window W (replay/replay.hpp)
  int policy_start = 0;            // calls of NCCL's own pick first (replay/replay.hpp)
  bool charge_call_costs = false;  // every config pays the plugin's measured per-call cost
  // What watching a call costs as deployed (deployed/observation_cost.hpp); nullopt charges nothing.
  std::optional<ObservationCharge> observation;
  std::string backend = "cpu";  // resolved: cpu or cuda
  int threads = 0;              // 0 = all cores
};

// Canonical specs of every grid point of `spec` (a spec without `|` gives one). A bad spec is a
// UsageError listing the valid policies or keys.
std::vector<std::string> expand_policy_grid(const std::string& spec);

// Per context (in `contexts` order), averaged over the seeds.
struct ConfigLosses {
  std::vector<double> online;
  std::vector<double> final_loss;
  std::vector<int>
      final_slot;  // score_configs with final slots only: most frequent over seeds, ties to the lowest slot
  std::vector<double> watched;  // the fraction of calls watched (replay/replay.hpp)
};

// Tuning: every config on the tune contexts. Supervised selectors are fitted on the same contexts
// and scored leave-one-out, so a grid point is judged out of sample, not on its training fit.
std::vector<ConfigLosses> tune_configs(const Sweep& sweep, const std::vector<int>& tune_contexts,
                                       const std::vector<std::string>& configs,
                                       const ReplaySettings& settings);

// Scoring frozen configs on the score contexts (supervised selectors fitted on all tune contexts),
// all in one replay job; each config's losses are what scoring it alone gives.
std::vector<ConfigLosses> score_configs(const Sweep& sweep, const std::vector<int>& tune_contexts,
                                        const std::vector<int>& score_contexts,
                                        const std::vector<std::string>& configs,
                                        const ReplaySettings& settings, bool with_final_slots);

// Mean online loss of each frozen config at each of `horizons` over `contexts` (a subset of the score
// contexts) and `seeds` seeds: one replay per context and seed at the longest horizon
// (replay/horizon_curve.hpp), on the CPU. Supervised selectors are fitted on all tune contexts.
std::vector<std::vector<double>> loss_vs_horizon(const Sweep& sweep, const std::vector<int>& tune_contexts,
                                                 const std::vector<int>& contexts,
                                                 const std::vector<std::string>& configs,
                                                 const ReplaySettings& settings,
                                                 const std::vector<int>& horizons, int seeds);

// The conservative promise of `config` (a spec run @conservative; std::invalid_argument otherwise)
// checked against its own alpha on `contexts` over `seeds` seeds at `horizon` calls, on the CPU
// (replay/budget_check.hpp), with the settings' feedback schedule.
PromiseCheck check_promise(const Sweep& sweep, const std::vector<int>& tune_contexts,
                           const std::vector<int>& contexts, const std::string& config,
                           const ReplaySettings& settings, int seeds, int horizon);

// "cpu" or "cuda" for a requested cpu | cuda | auto (UsageError when cuda is demanded but unusable).
std::string resolve_backend(const std::string& requested);

}  // namespace ncclbot::study
