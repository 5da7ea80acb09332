#include "ncclbot/ope/replay_method.hpp"

#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <optional>

#include "ncclbot/core/error.hpp"
#include "ncclbot/core/philox.hpp"
#include "ncclbot/log/decision_log_stream.hpp"
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

ReplayMethodRun::ReplayMethodRun(const LogBlocks& data, const PolicySpec& spec, uint64_t seed)
    : data_(data), spec_(spec), seed_(seed) {
  if (policy_use(spec.config.kind) != PolicyUse::kLive)
    throw UsageError("--policy " + spec.text + ": only policies that can run inside NCCL are targets");
  const size_t nc = data.contexts.size();
  for (size_t x = 0; x < nc; ++x) {
    const OpeContext& ctx = data.contexts[x];
    const ContextBlocks& b = data.blocks[x];
    if (b.calls == 0) continue;
    int usable = 0, played = 0;
    for (size_t i = 0; i < data.arms.size(); ++i) {
      usable += arm_usable(ctx, data.arms.arms[i]);
      played += b.played(int(i));
    }
    if (played != usable || b.p_min >= 1.0)
      throw InputError("--policy " + spec.text, 0,
                       "the replay method needs a randomised behaviour that played every usable arm of "
                       "each context; " +
                           ope_context_text(ctx) + " shows " + std::to_string(played) + " of " +
                           std::to_string(usable) + " arms played" +
                           (b.p_min >= 1.0 ? ", every call with probability 1" : ""));
  }
  contexts_.resize(nc);
}

void ReplayMethodRun::call(int context, int arm, double propensity, double latency_us) {
  const size_t x = size_t(context);
  Context& c = contexts_[x];
  const ContextBlocks& b = data_.blocks[x];
  if (c.seen >= b.calls) return;  // a call the blocks do not hold (a log still being written)
  const uint64_t k = c.seen++;
  if (!c.target) c.target.emplace(spec_, data_.contexts[x], data_.arms);
  StepRandom rng(seed_, uint64_t(x), uint32_t(k));
  if (c.target->select(rng) != arm) return;
  if (!(lane0_uniform(seed_, kRejectionStream | x, k) < b.p_min / propensity)) return;
  c.target->update(arm, latency_us);
  // The accepted latencies' sum, and their deviations' sum and sum of squares from the first one
  // (the shifted-data variance: no cancellation between two large sums).
  if (c.accepted++ == 0) c.shift = latency_us;
  c.sum += latency_us;
  c.dev += latency_us - c.shift;
  c.dev2 += (latency_us - c.shift) * (latency_us - c.shift);
}

ReplayMethodResult ReplayMethodRun::finish(double level) const {
  const size_t nc = contexts_.size();
  ReplayMethodResult out;
  out.accepted_by_context.assign(nc, 0);
  double weighted = 0.0, variance = 0.0, weight = 0.0;
  for (size_t x = 0; x < nc; ++x) {
    const Context& c = contexts_[x];
    out.accepted_by_context[x] = c.accepted;
    if (c.accepted == 0) continue;
    const double n_x = double(data_.blocks[x].calls), a = double(c.accepted);
    const double ss = std::max(0.0, c.dev2 - c.dev * c.dev / a);
    const double var_of_mean = c.accepted > 1 ? ss / (a - 1.0) / a : 0.0;
    weighted += n_x * (c.sum / a);
    variance += n_x * n_x * var_of_mean;
    weight += n_x;
    out.accepted += c.accepted;
    out.calls += data_.blocks[x].calls;
  }
  if (out.accepted == 0)
    throw InputError("--policy " + spec_.text, 0, "the replay method accepted no logged call");
  out.value_us = weighted / weight;
  const double se = std::sqrt(variance) / weight;
  const double z = boost::math::quantile(boost::math::normal(), 0.5 + level / 2.0);
  out.lo = out.value_us - z * se;
  out.hi = out.value_us + z * se;
  out.acceptance_rate = double(out.accepted) / double(out.calls);
  return out;
}

ReplayMethodResult replay_method(const OpeData& data, const PolicySpec& spec, uint64_t seed, double level) {
  const LogBlocks blocks = log_blocks(data, BlockRule{});
  ReplayMethodRun run(blocks, spec, seed);
  for (const OpeCall& c : data.calls) run.call(c.context, c.arm, c.propensity, c.latency_us);
  return run.finish(level);
}

namespace {

// Feeds a second pass over the logs to every run.
class ReplaySink final : public DecisionLogSink {
 public:
  ReplaySink(const LogBlocks& data, std::vector<ReplayMethodRun*> runs)
      : index_(data.contexts), arms_(data.arms), runs_(runs) {}
  void context(const decision_log::ContextRecord&, const std::string&, uint64_t) override {}
  void call(const decision_log::CallRecord& r, const std::string&, uint64_t) override {
    if (r.graph_replay) return;  // no decision of the behaviour's, as in the blocks
    const int x = index_.find(r.collective, r.bytes, r.nodes, r.ranks);
    const int arm = arms_.index(call_arm(r));
    if (x < 0 || arm < 0) return;  // a context or an arm the blocks do not hold (a log still being written)
    for (ReplayMethodRun* run : runs_) run->call(x, arm, r.propensity, r.latency_us);
  }

 private:
  ContextIndex index_;
  const LoggedArms& arms_;
  std::vector<ReplayMethodRun*> runs_;
};

}  // namespace

std::vector<ReplayMethodOutcome> replay_methods(const std::vector<std::string>& paths, const LogBlocks& data,
                                                const std::vector<PolicySpec>& specs, uint64_t seed,
                                                double level) {
  std::vector<ReplayMethodOutcome> out(specs.size());
  std::vector<std::optional<ReplayMethodRun>> runs(specs.size());
  std::vector<ReplayMethodRun*> live;
  for (size_t i = 0; i < specs.size(); ++i) {
    try {
      live.push_back(&runs[i].emplace(data, specs[i], seed));
    } catch (const InputError& e) {
      out[i].unavailable = e.what();
    }
  }
  if (live.empty()) return out;
  ReplaySink sink(data, live);
  stream_decision_logs(paths, sink);
  for (size_t i = 0; i < specs.size(); ++i) {
    if (!runs[i]) continue;
    try {
      out[i].result = runs[i]->finish(level);
    } catch (const InputError& e) {
      out[i].unavailable = e.what();
    }
  }
  return out;
}

double replay_method_truth(const LogBlocks& data, const PolicySpec& spec, const ReplayMethodResult& estimate,
                           const ReplayTruthInputs& sweep, int repeats, uint64_t seed) {
  const size_t nc = data.contexts.size();
  std::vector<double> n_x(nc, 0.0);
  for (size_t x = 0; x < nc; ++x) n_x[x] = double(data.blocks[x].calls);
  double weighted = 0.0, weight = 0.0;
  for (size_t x = 0; x < nc; ++x) {
    const uint64_t horizon = estimate.accepted_by_context[x];
    if (horizon == 0) continue;
    double sum = 0.0;
    for (int rep = 0; rep < repeats; ++rep) {
      ContextPolicy target(spec, data.contexts[x], data.arms);
      const uint64_t id = (uint64_t(rep) << 20) | x;
      for (uint64_t t = 0; t < horizon; ++t) {
        StepRandom rng(seed, id, uint32_t(t));
        const int a = target.select(rng);
        if (a < 0 || sweep.samples[x][size_t(a)].empty())
          throw InputError("--sweep", 0, "has no samples of an arm the target plays");
        const auto& samples = sweep.samples[x][size_t(a)];
        sum += sweep.arm_mean[x][size_t(a)];
        const size_t r = size_t(lane0_uniform(seed, kTruthStream | id, t) * double(samples.size()));
        target.update(a, double(samples[r < samples.size() ? r : samples.size() - 1]));
      }
    }
    weighted += n_x[x] * sum / (double(repeats) * double(horizon));
    weight += n_x[x];
  }
  return weighted / weight;
}

}  // namespace ncclbot
