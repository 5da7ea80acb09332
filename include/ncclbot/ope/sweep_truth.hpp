#pragma once
// The truth beside the off-policy estimates, from a forced-arm sweep of the logged contexts
// (`ncclbot ope --sweep`, docs/ope.md): a stationary or table target's mean latency per logged call,
//   truth = 1/n sum over logged calls t of sum_a pi(a | x_t) mean(x_t, a) level_t(a)
// with mean the sweep's mean of (x, a) and level the multiplier the sweep's call dynamics put on
// the arm's mean at call t (1 on a sweep without dynamics); and, for a learning target, what the
// replay method's truth (ope/replay_method.hpp) draws from: the sweep's means and samples of the
// logged contexts. A logged context is found in the sweep by its collective, bytes, nodes and GPUs
// per node.
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "ncclbot/core/arm.hpp"
#include "ncclbot/core/sweep.hpp"
#include "ncclbot/core/sweep_view.hpp"
#include "ncclbot/ope/log_blocks.hpp"
#include "ncclbot/ope/off_policy.hpp"
#include "ncclbot/ope/replay_method.hpp"

namespace ncclbot {

// The sweep context of each logged context (collective, bytes, nodes, GPUs per node); InputError
// naming `path` (the sweep's) where the sweep holds none.
std::vector<int> sweep_contexts(const LogBlocks& data, const Sweep& sweep, const std::string& path);

// Per logged context x and arm a of the log (ope/logged_arms.hpp), the same arm's index in sweep
// context where[x] of the sweep's arm view (Sweep::arm_index), -1 where the sweep did not measure
// it. A slot log's arms are found in a knob sweep at NCCL's own knobs; a knob log's arms off NCCL's
// knobs are in no slot sweep.
std::vector<std::vector<int>> sweep_arms(const LogBlocks& data, const Sweep& sweep,
                                         const std::vector<int>& where);

// Per logged context and arm, the sum over its logged calls t of what the sweep's call dynamics
// multiply the arm's mean by at call t: level_t[a] x job_warm(t) (core/call_dynamics.hpp), with the
// change points of the replay stream plugin-check drove the plugin with (the log's seed, the sweep
// context's stream id; call t of a context is logged as its call index t). The calls' count where
// the sweep has no dynamics. Arm warm-up depends on the target's own plays, so under it there is no
// truth to give; a first-use cost is charged to a choice's loss, never to a measured latency.
std::vector<std::vector<double>> logged_level_sums(const LogBlocks& data, const Sweep& sweep,
                                                   const std::vector<int>& where,
                                                   const std::vector<std::vector<int>>& arms,
                                                   const std::string& path);

// A log's truth from a sweep: the sweep, where each logged context and arm is in it, their calls'
// levels, and (made once, on the first learning target) what the replay method's truth draws from.
// No sweep: nothing.
struct SweepTruth {
  std::optional<Sweep> sweep;
  std::vector<int> where;
  std::vector<std::vector<int>> arms;       // sweep_arms()
  std::vector<std::vector<double>> levels;  // logged_level_sums()
  std::optional<ReplayTruthInputs> replay_truth;
};

// The truth: the sum over logged calls of pi(a | x) times the sweep's mean of (x, a) times the
// call's level (logged_level_sums), over n. InputError naming `path` when the target plays an arm
// the sweep did not measure.
double truth_us(const LogBlocks& data, const TargetProbabilities& pi, const SweepTruth& truth,
                const std::string& path);

// The sweep's means and samples of the logged contexts and arms, for the replay method's truth.
ReplayTruthInputs replay_truth_inputs(const LogBlocks& data, const SweepTruth& truth);

// Reads the sweep at `sweep_path`, unless it is empty, and finds the logged contexts, their arms
// and their calls' levels in it.
SweepTruth read_sweep_truth(const std::string& sweep_path, const LogBlocks& data);

}  // namespace ncclbot
