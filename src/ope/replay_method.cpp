#include "ncclbot/ope/replay_method.hpp"

#include <boost/math/distributions/normal.hpp>
#include <cmath>

#include "ncclbot/core/error.hpp"
#include "ncclbot/core/philox.hpp"
#include "ncclbot/ope/target_policy.hpp"

namespace ncclbot {
namespace {

// Random streams of the method, apart from the target's own (stream = context index): the
// rejection draws and the truth's sample draws, each on lane 0 of its step.
constexpr uint64_t kRejectionStream = uint64_t(1) << 40;
constexpr uint64_t kTruthStream = uint64_t(2) << 40;

double lane0_uniform(uint64_t seed, uint64_t id, uint64_t step) {
  return uniform_open01(philox_block(seed, id, uint32_t(step), 0).v[0]);
}

}  // namespace

ReplayMethodResult replay_method(const OpeData& data, const PolicySpec& spec, uint64_t seed, double level) {
  if (policy_use(spec.config.kind) != PolicyUse::kLive)
    throw UsageError("--policy " + spec.text + ": only policies that can run inside NCCL are targets");
  const size_t nc = data.contexts.size();
  std::vector<std::vector<size_t>> calls(nc);
  std::vector<double> p_min(nc, 1.0);
  std::vector<ArmMask> played(nc);
  for (size_t i = 0; i < data.calls.size(); ++i) {
    const OpeCall& c = data.calls[i];
    calls[size_t(c.context)].push_back(i);
    p_min[size_t(c.context)] = std::min(p_min[size_t(c.context)], c.propensity);
    played[size_t(c.context)].set(c.slot);
  }
  ReplayMethodResult out;
  out.accepted_by_context.assign(nc, 0);
  double weighted = 0.0, variance = 0.0, weight = 0.0;
  std::vector<double> kept;
  for (size_t x = 0; x < nc; ++x) {
    const OpeContext& ctx = data.contexts[x];
    if (calls[x].empty()) continue;
    if (played[x].bits != ctx.mask.bits || p_min[x] >= 1.0)
      throw InputError("--policy " + spec.text, 0,
                       "the replay method needs a randomised behaviour that played every usable arm of "
                       "each context; " +
                           ope_context_text(ctx) + " shows " + std::to_string(played[x].count()) + " of " +
                           std::to_string(ctx.mask.count()) + " arms played" +
                           (p_min[x] >= 1.0 ? ", every call with probability 1" : ""));
    AnyPolicy target = policy_for_context(spec.config, ctx);
    kept.clear();
    for (size_t k = 0; k < calls[x].size(); ++k) {
      const OpeCall& call = data.calls[calls[x][k]];
      StepRandom rng(seed, uint64_t(x), uint32_t(k));
      if (policy_select(target, rng) != call.slot) continue;
      if (!(lane0_uniform(seed, kRejectionStream | x, k) < p_min[x] / call.propensity)) continue;
      policy_update(target, call.slot, call.latency_us);
      kept.push_back(call.latency_us);
    }
    out.accepted_by_context[x] = kept.size();
    if (kept.empty()) continue;
    double mean = 0.0;
    for (double r : kept) mean += r;
    mean /= double(kept.size());
    double ss = 0.0;
    for (double r : kept) ss += (r - mean) * (r - mean);
    const double n_x = double(calls[x].size());
    const double var_of_mean = kept.size() > 1 ? ss / double(kept.size() - 1) / double(kept.size()) : 0.0;
    weighted += n_x * mean;
    variance += n_x * n_x * var_of_mean;
    weight += n_x;
    out.accepted += kept.size();
    out.calls += calls[x].size();
  }
  if (out.accepted == 0)
    throw InputError("--policy " + spec.text, 0, "the replay method accepted no logged call");
  out.value_us = weighted / weight;
  const double se = std::sqrt(variance) / weight;
  const double z = boost::math::quantile(boost::math::normal(), 0.5 + level / 2.0);
  out.lo = out.value_us - z * se;
  out.hi = out.value_us + z * se;
  out.acceptance_rate = double(out.accepted) / double(out.calls);
  return out;
}

double replay_method_truth(const OpeData& data, const PolicySpec& spec, const ReplayMethodResult& estimate,
                           const ReplayTruthInputs& sweep, int repeats, uint64_t seed) {
  const size_t nc = data.contexts.size();
  std::vector<double> n_x(nc, 0.0);
  for (const OpeCall& c : data.calls) n_x[size_t(c.context)] += 1.0;
  double weighted = 0.0, weight = 0.0;
  for (size_t x = 0; x < nc; ++x) {
    const uint64_t horizon = estimate.accepted_by_context[x];
    if (horizon == 0) continue;
    double sum = 0.0;
    for (int rep = 0; rep < repeats; ++rep) {
      AnyPolicy target = policy_for_context(spec.config, data.contexts[x]);
      const uint64_t id = (uint64_t(rep) << 20) | x;
      for (uint64_t t = 0; t < horizon; ++t) {
        StepRandom rng(seed, id, uint32_t(t));
        const int a = policy_select(target, rng);
        const auto& samples = sweep.samples[x][size_t(a)];
        if (samples.empty()) throw InputError("--sweep", 0, "has no samples of an arm the target plays");
        sum += sweep.arm_mean[x][size_t(a)];
        const size_t r = size_t(lane0_uniform(seed, kTruthStream | id, t) * double(samples.size()));
        policy_update(target, a, double(samples[r < samples.size() ? r : samples.size() - 1]));
      }
    }
    weighted += n_x[x] * sum / (double(repeats) * double(horizon));
    weight += n_x[x];
  }
  return weighted / weight;
}

}  // namespace ncclbot
