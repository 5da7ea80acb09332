#include "ncclbot/ope/off_policy.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "ncclbot/core/argmin.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/core/names.hpp"
#include "ncclbot/stats/loss_summary.hpp"
#include "ncclbot/stats/resample_stream.hpp"

namespace ncclbot {
namespace {

using ContextKey = std::tuple<int, uint64_t, uint32_t, uint32_t>;

std::string slot_text(int s) {
  return std::string(algo_name(slot_algo(s))) + "/" + std::string(proto_name(slot_proto(s)));
}

// The three estimates on the calls `index[0..n)` (a resample) with weights w and model q.
struct Sums {
  double ips, snips, dr, n_effective;
};

Sums estimate_on(const OpeData& data, const std::vector<std::array<double, kNumArms>>& q,
                 const std::vector<double>& direct, const std::vector<double>& w, const uint32_t* index,
                 size_t n) {
  double sw = 0, sw2 = 0, swr = 0, sdr = 0;
  for (size_t k = 0; k < n; ++k) {
    const size_t i = index ? index[k] : k;
    const OpeCall& call = data.calls[i];
    const double wi = w[i], r = call.latency_us;
    sw += wi;
    sw2 += wi * wi;
    swr += wi * r;
    sdr += direct[size_t(call.context)] + wi * (r - q[size_t(call.context)][size_t(call.slot)]);
  }
  const double dn = double(n);
  return {swr / dn, sw > 0 ? swr / sw : NAN, sdr / dn, sw2 > 0 ? sw * sw / sw2 : 0.0};
}

}  // namespace

std::string ope_context_text(const OpeContext& c) {
  const std::string coll = c.collective >= 0 && c.collective < kNumCollectives
                               ? std::string(collective_name(Collective(c.collective)))
                               : "collective " + std::to_string(c.collective);
  return coll + " " + std::to_string(c.bytes) + " B on " + std::to_string(c.nodes) + " nodes x " +
         std::to_string(c.ranks) + " ranks";
}

double bootstrap_quantile(std::vector<double> replicates, double p) {
  if (replicates.empty()) return NAN;
  std::sort(replicates.begin(), replicates.end());
  return quantile_linear_sorted(replicates, p);
}

OpeData ope_data(const DecisionLogData& log) {
  OpeData data;
  data.behaviour = log.policy;
  std::map<ContextKey, int> index;
  for (const auto& r : log.contexts) {
    const ContextKey key{r.collective, r.bytes, r.nodes, r.ranks};
    if (index.count(key)) continue;
    OpeContext c;
    c.collective = r.collective;
    c.bytes = r.bytes;
    c.nodes = r.nodes;
    c.ranks = r.ranks;
    c.nccl_slot = r.nccl_slot;
    for (int s = 0; s < kNumNcclArms; ++s) {
      c.cost_us[s] = r.cost_us[s];
      if (usable_cost(r.cost_us[s])) c.mask.set(s);
    }
    index[key] = int(data.contexts.size());
    data.contexts.push_back(c);
  }
  const std::string& first = log.files.empty() ? std::string() : log.files.front().path;
  for (size_t i = 0; i < log.calls.size(); ++i) {
    const auto& r = log.calls[i];
    const auto it = index.find(ContextKey{r.collective, r.bytes, r.nodes, r.ranks});
    const std::string where = "call " + std::to_string(i) + " (" + std::to_string(r.bytes) + " B)";
    if (it == index.end()) throw InputError(first, 0, where + ": no context record holds its cost table");
    if (!(r.propensity > 0.0 && r.propensity <= 1.0))
      throw InputError(
          first, 0,
          where + ": propensity " + std::to_string(r.propensity) + " (behaviour policy '" + log.policy +
              "' " +
              (std::isnan(r.propensity) ? "cannot state the probability of its choices" : "out of (0, 1]") +
              "): off-policy estimates need the probability of every logged choice");
    if (!data.contexts[size_t(it->second)].mask.has(r.slot) || !(r.latency_us > 0.0) ||
        !std::isfinite(r.latency_us))
      throw InputError(first, 0, where + ": an arm NCCL could not run, or a latency that is no time");
    data.calls.push_back({it->second, r.slot, r.propensity, r.latency_us, r.call_index});
  }
  if (data.calls.empty()) throw InputError(first, 0, "the logs hold no measured call");
  return data;
}

std::vector<std::array<double, kNumArms>> reward_model(const OpeData& data) {
  const size_t nc = data.contexts.size();
  std::vector<std::array<double, kNumArms>> sum(nc), count(nc), q(nc);
  double latency = 0, cost = 0;
  for (auto& a : sum) a.fill(0.0);
  for (auto& a : count) a.fill(0.0);
  for (const OpeCall& c : data.calls) {
    sum[size_t(c.context)][size_t(c.slot)] += c.latency_us;
    count[size_t(c.context)][size_t(c.slot)] += 1.0;
    const double prior = data.contexts[size_t(c.context)].cost_us[c.slot];
    if (prior > 0.0) {
      latency += c.latency_us;
      cost += prior;
    }
  }
  const double ratio = cost > 0 ? latency / cost : 1.0;
  for (size_t x = 0; x < nc; ++x)
    for (int s = 0; s < kNumArms; ++s) {
      const bool usable = data.contexts[x].mask.has(s);
      q[x][size_t(s)] = !usable                     ? NAN
                        : count[x][size_t(s)] > 0.0 ? sum[x][size_t(s)] / count[x][size_t(s)]
                                                    : double(data.contexts[x].cost_us[s]) * ratio;
    }
  return q;
}

std::vector<EstimatorResult> estimate_off_policy(const OpeData& data, const TargetProbabilities& target,
                                                 const std::string& target_name, const OpeOptions& options) {
  const size_t nc = data.contexts.size(), n = data.calls.size();
  if (target.size() != nc)
    throw UsageError("ope: target probabilities for " + std::to_string(target.size()) +
                     " contexts, the data has " + std::to_string(nc));
  // Support: every arm the target plays in a context must have been played there at least once.
  std::vector<ArmMask> seen(nc);
  for (const OpeCall& c : data.calls) seen[size_t(c.context)].set(c.slot);
  for (size_t x = 0; x < nc; ++x)
    for (int s = 0; s < kNumArms; ++s)
      if (target[x][size_t(s)] > 0.0 && !seen[x].has(s))
        throw InputError(
            target_name, 0,
            "plays " + slot_text(s) + " on " + ope_context_text(data.contexts[x]) +
                ", where the log holds no call of it (a zero propensity: no estimate can see it)");
  const auto q = reward_model(data);
  std::vector<double> direct(nc, 0.0), w(n);
  for (size_t x = 0; x < nc; ++x)
    for (int s = 0; s < kNumArms; ++s)
      if (target[x][size_t(s)] > 0.0) direct[x] += target[x][size_t(s)] * q[x][size_t(s)];
  for (size_t i = 0; i < n; ++i) {
    const OpeCall& c = data.calls[i];
    w[i] = target[size_t(c.context)][size_t(c.slot)] / c.propensity;
  }
  const Sums point = estimate_on(data, q, direct, w, nullptr, n);
  std::vector<double> ips(size_t(options.resamples)), snips(ips.size()), dr(ips.size());
  std::vector<uint32_t> idx(n);
  for (int b = 0; b < options.resamples; ++b) {
    ResampleStream rs(options.seed, uint64_t(b), ResamplePurpose::bootstrap_indices);
    for (size_t k = 0; k < n; ++k) idx[k] = rs.next_below(uint32_t(n));
    const Sums s = estimate_on(data, q, direct, w, idx.data(), n);
    ips[size_t(b)] = s.ips;
    snips[size_t(b)] = s.snips;
    dr[size_t(b)] = s.dr;
  }
  const double a = (1.0 - options.level) / 2.0;
  const auto result = [&](const char* name, double value, const std::vector<double>& boot) {
    std::vector<double> finite;
    for (double v : boot)
      if (std::isfinite(v)) finite.push_back(v);
    return EstimatorResult{name, value, bootstrap_quantile(finite, a), bootstrap_quantile(finite, 1.0 - a),
                           point.n_effective};
  };
  return {result("IPS", point.ips, ips), result("SNIPS", point.snips, snips), result("DR", point.dr, dr)};
}

}  // namespace ncclbot
