#pragma once
// Online loss against the horizon, out to horizons no study replays in full (docs/study.md "Loss vs
// horizon"): one replay per (config, context, seed) at the longest horizon, read at every shorter
// one on the way. A policy never reads its horizon, so the first h calls of that replay are the
// calls of a replay of horizon h, and each value is bit for bit the online loss such a replay gives
// (ReplayCursorT reports each call's loss to an observer with loss(); the sum is the cursor's own,
// in the same order), first-use charges included: a communicator's first uses before h are charged
// at h as the engines charge them (replay/first_use.hpp). CPU only; deterministic for any thread
// count.
#include <vector>

#include "ncclbot/replay/cpu_engine.hpp"

namespace ncclbot {

struct HorizonCurve {
  std::vector<int> horizons;
  // online[config][h][i]: the mean over the job's seeds of the online loss of the first
  // horizons[h] calls on job.contexts[i] (as ReplayResults::online_of gives at that horizon).
  std::vector<std::vector<std::vector<double>>> online;
};

// `horizons` strictly increasing, >= 1; the job's own horizon is ignored. Everything else of the
// job applies (feedback schedule, per-call costs, fixed slots, threads) and is checked as every
// engine checks it (check_replay_job); a UsageError names what is wrong.
HorizonCurve replay_horizon_curve(const ReplayJob& job, const std::vector<int>& horizons);

}  // namespace ncclbot
