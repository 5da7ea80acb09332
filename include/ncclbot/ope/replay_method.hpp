#pragma once
// Learning targets from a decision log: the replay method (Li, Chu, Langford, Wang, WSDM 2011,
// "Unbiased offline evaluation of contextual-bandit-based news article recommendation
// algorithms"), with the rejection step that extends it to non-uniform behaviour policies (Dudik,
// Erhan, Langford, Li, Statistical Science 2014, section 5). Per logged context, in call order:
//   the target decides a_t (warm-started from the logged cost table, as the plugin would, drawing
//   its randomness from (seed, context, call));
//   the call is accepted when a_t equals the logged arm a_i and an independent uniform u_i is
//   below p_min / p_i (p_i: the logged propensity; p_min: the smallest propensity logged in that
//   context); then the target is updated with the logged latency and the latency counts.
// Given the history, a call is accepted with arm a with probability pi_t(a) * p_i(a) * p_min / p_i(a)
// = pi_t(a) * p_min, whatever the behaviour: the accepted calls are a run of the target itself,
// provided p_min is below the behaviour's probability of every arm of the context at every call
// (true of random and of epsilon-greedy, whose smallest probability is eps_t / K). A context's
// value is the mean latency over its accepted calls: the target's mean latency over its first A_x
// calls there, A_x the accepted count (about p_min times the logged calls), not over all n_x.
// The log allows the method only where every usable arm of a context was played there; a context
// where none was accepted has no value. The overall value weights contexts by their logged calls.
// Interval: normal, from each context's sample variance of accepted latencies over A_x (treating
// them as independent; when the target changes arms their spread also holds the arms' differences,
// so the interval errs wide). A log is read twice: once into blocks (ope/log_blocks.hpp, which give
// each context's calls, smallest propensity and arms played), then once more, for every target at
// once, feeding the calls in log order; memory grows with contexts x targets, not with calls.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ncclbot/ope/log_blocks.hpp"
#include "ncclbot/ope/off_policy.hpp"
#include "ncclbot/ope/target_policy.hpp"
#include "ncclbot/policy/policy.hpp"
#include "ncclbot/replay/policy_spec.hpp"

namespace ncclbot {

struct ReplayMethodResult {
  double value_us = 0.0, lo = 0.0, hi = 0.0;
  uint64_t accepted = 0, calls = 0;           // over the contexts with a value
  double acceptance_rate = 0.0;               // accepted / calls
  std::vector<uint64_t> accepted_by_context;  // A_x (0 where the context has no value)
};

// One target's run over the calls of `data`, fed in log order. The constructor throws InputError
// naming the context when the log does not allow the method (an arm never played there, a
// deterministic behaviour), finish() when no call at all was accepted. Calls past a context's
// count in `data` are left out (a log still being written when it is read again).
class ReplayMethodRun {
 public:
  ReplayMethodRun(const LogBlocks& data, const PolicySpec& spec, uint64_t seed);
  void call(int context, int arm, double propensity, double latency_us);  // arm: among the log's
  ReplayMethodResult finish(double level) const;

 private:
  struct Context {
    std::optional<ContextPolicy> target;  // made on the context's first call
    uint64_t seen = 0, accepted = 0;
    double shift = 0.0, sum = 0.0, dev = 0.0, dev2 = 0.0;
  };
  const LogBlocks& data_;
  PolicySpec spec_;
  uint64_t seed_;
  std::vector<Context> contexts_;
};

// The replay-method estimate of `spec` (a live policy) on calls in memory.
ReplayMethodResult replay_method(const OpeData& data, const PolicySpec& spec, uint64_t seed, double level);

// The estimates of every target in `specs` from one more pass over the logs `data` was read from;
// a target the log does not allow gets the reason instead.
struct ReplayMethodOutcome {
  std::optional<ReplayMethodResult> result;
  std::string unavailable;
};
std::vector<ReplayMethodOutcome> replay_methods(const std::vector<std::string>& paths, const LogBlocks& data,
                                                const std::vector<PolicySpec>& specs, uint64_t seed,
                                                double level);

// The truth of that estimate from a forced-arm sweep: per context, the target's mean latency over
// its first A_x calls, each call's latency drawn from the sweep's samples of the arm it plays,
// averaged over `repeats` independent runs, weighted as the estimate is. `arm_mean[x][a]` and
// `samples[x][a][r]` are the sweep's mean and sample r of logged context x and arm a of the log.
struct ReplayTruthInputs {
  std::vector<std::vector<double>> arm_mean;
  std::vector<std::vector<std::vector<float>>> samples;  // [context][arm][r]
};
double replay_method_truth(const LogBlocks& data, const PolicySpec& spec, const ReplayMethodResult& estimate,
                           const ReplayTruthInputs& sweep, int repeats, uint64_t seed);

}  // namespace ncclbot
