#pragma once
// Off-policy evaluation of NCCL selection policies from the plugin's decision log (docs/ope.md):
// what would a target policy's mean latency per logged call have been, estimated from the calls a
// behaviour policy made and the probabilities it logged. The estimators are the standard ones
// (Dudik et al. 2011; as in the Open Bandit Pipeline and Vowpal Wabbit's --cb_type):
//   w_i   = pi(a_i | x_i) / p_i                     (p_i: the logged propensity)
//   IPS   = 1/n sum w_i r_i
//   SNIPS = sum w_i r_i / sum w_i
//   DR    = 1/n sum [ sum_a pi(a | x_i) q(x_i, a) + w_i (r_i - q(x_i, a_i)) ]
// with r_i the measured latency (us) and q the reward model: the logged mean of (x, a) where the
// log holds calls of it, else NCCL's cost for (x, a) times the log's overall ratio of measured
// latency to NCCL's cost. n_effective = (sum w)^2 / sum w^2. They read the log as blocks of
// sufficient statistics (ope/log_blocks.hpp), in memory that grows with contexts x blocks, not
// with calls. Intervals: percentile block bootstrap within each context (ope/block_bootstrap.hpp;
// any thread count gives the same numbers); the reward model is fit once on all calls.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "ncclbot/core/arm.hpp"
#include "ncclbot/log/decision_log.hpp"
#include "ncclbot/ope/block_bootstrap.hpp"
#include "ncclbot/ope/logged_arms.hpp"

namespace ncclbot {

struct OpeContext {
  int collective = -1;
  uint64_t bytes = 0;
  uint32_t nodes = 0, ranks = 0;
  float cost_us[kNumNcclArms] = {};  // NCCL's cost table on the context's first call (< 0: unusable)
  int nccl_slot = -1;
  ArmMask mask;  // the usable slots: an arm of the log (ope/logged_arms.hpp) is usable when its slot is
};

// Whether arm `a` of a log can run in context `c`: its cost table leaves the arm's slot.
inline bool arm_usable(const OpeContext& c, const Arm& a) {
  return c.mask.has(a.slot());
}

struct OpeCall {
  int context = -1;
  int arm = -1;  // the arm played: its index among the log's arms (OpeData::arms)
  double propensity = 0.0;
  double latency_us = 0.0;
  uint64_t index = 0;  // the call's index in its context on its communicator
};

struct OpeData {
  std::vector<OpeContext> contexts;  // distinct (collective, bytes, nodes, ranks), first seen first
  std::vector<OpeCall> calls;
  LoggedArms arms = slot_logged_arms();  // what OpeCall::arm indexes
  std::string behaviour;
  uint64_t graph_replays = 0;  // logged CUDA-graph replays, left out: no decision of the behaviour's
};

// The smallest logged probability the estimators take. Below it one call's importance weight 1/p
// passes 10^6: a single call would outweigh a million others, and with a latency of 1e308 or a
// denormal propensity the sums overflow. A stated floor, not a measurement.
inline constexpr double kMinPropensity = 1e-6;
// The latencies a collective can have (us), as the plugin and the log readers take them.
using decision_log::kMaxLatencyUs;
using decision_log::kMinLatencyUs;

// The context of a context record: its cost table and the arms it makes usable.
OpeContext ope_context(const decision_log::ContextRecord& r);

// Joins each call to its context's cost table and to its arm among the log's arms. InputError naming
// the file and byte of the call when it has no context record, no propensity (a policy that cannot
// state one), one outside [kMinPropensity, 1], an arm NCCL could not run or that the header's knob
// lists do not give, or a latency outside [kMinLatencyUs, kMaxLatencyUs]. So every weight is at most
// 10^6 and every sum finite. InputError naming a file whose arms differ from the first file's.
OpeData ope_data(const DecisionLogData& log);

// Why call `r` cannot enter an estimate ("" when it can), but for its arm's being usable, which
// its context's cost table says: no probability, one outside [kMinPropensity, 1], a latency outside
// [kMinLatencyUs, kMaxLatencyUs]. `behaviour` is the header's policy.
std::string ope_call_problem(const decision_log::CallRecord& r, const std::string& behaviour);
// Whether ope_call_problem() is "" (without building the message).
inline bool ope_call_usable(const decision_log::CallRecord& r) {
  return r.propensity >= kMinPropensity && r.propensity <= 1.0 &&
         decision_log::latency_measurable(r.latency_us);
}
// The message of an InputError for call `r` at `offset`: "byte N: call K (B B): why".
std::string ope_call_message(const decision_log::CallRecord& r, uint64_t offset, const std::string& why);

// "allreduce 1048576 B on 4 nodes x 32 ranks", for messages.
std::string ope_context_text(const OpeContext& c);

// pi(. | x) for every context of the data, by arm index among the log's arms.
using TargetProbabilities = std::vector<std::vector<double>>;

// Why call `r` cannot be counted at arm index `arm` of `arms` in context `c` (-1: its arm is none of
// the log's), or "" when it can.
std::string ope_arm_problem(const LoggedArms& arms, int arm, const OpeContext& c);

struct EstimatorResult {
  std::string name;  // "IPS", "SNIPS", "DR"
  double value_us = 0.0, lo = 0.0, hi = 0.0, n_effective = 0.0;
};

struct OpeOptions {
  int resamples = 999;
  uint64_t seed = 0;
  double level = 0.95;
  unsigned threads = 0;                            // 0 = all cores; the numbers do not depend on it
  ResampleBackend backend = ResampleBackend::cpu;  // nor on this
};

struct LogBlocks;

// The three estimates of `target`'s mean latency per logged call. InputError (naming the context
// and the arm) when the target plays an arm, in some context, that the log never shows played
// there: no estimate can see it (a zero propensity). `target` holds a probability per arm of the log.
std::vector<EstimatorResult> estimate_off_policy(const LogBlocks& data, const TargetProbabilities& target,
                                                 const std::string& target_name, const OpeOptions& options);

// The linear-interpolation quantile p of the finite bootstrap replicates (NumPy's default; a
// resample whose estimate is undefined, such as SNIPS without a weighted call, is left out), NaN
// when none is finite.
double bootstrap_quantile(std::vector<double> replicates, double p);

// The reward model of DR, by context and arm of the log (NaN where the arm is not usable). An arm never
// played is priced at its slot's cost (NCCL's model does not see knobs) times the log's ratio.
std::vector<std::vector<double>> reward_model(const LogBlocks& data);

}  // namespace ncclbot
