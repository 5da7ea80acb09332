#include "ncclbot/ope/off_policy.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include <fmt/format.h>

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

// Each call's terms of the three estimators: the weight w, w * r, and DR's direct part plus w times
// the reward model's residual (r the measured latency, q the model).
struct Terms {
  double w, wr, dr;
};

// The three estimates when call i counts c[i] (+ 256 for each entry i in `wrapped`) times, over n
// counted calls; without counts, once each. The counted sums run in four interleaved partial sums
// (call i in sum i mod 4), a fixed order, so they vectorise and stay deterministic.
struct Sums {
  double ips, snips, dr;
};

Sums sums_of(double sw, double swr, double sdr, size_t n) {
  const double dn = double(n);
  return {swr / dn, sw > 0 ? swr / sw : NAN, sdr / dn};
}

Sums estimate_on(const std::vector<Terms>& terms, size_t n) {
  double sw = 0, swr = 0, sdr = 0;
  for (const Terms& t : terms) {
    sw += t.w;
    swr += t.wr;
    sdr += t.dr;
  }
  return sums_of(sw, swr, sdr, n);
}

Sums estimate_on(const std::vector<Terms>& terms, const uint8_t* c, const std::vector<uint32_t>& wrapped,
                 size_t n) {
  double sw[4] = {}, swr[4] = {}, sdr[4] = {};
  const auto add = [&](size_t l, size_t i, double k) {  // call i, counted k times, into sum l
    sw[l] += k * terms[i].w;
    swr[l] += k * terms[i].wr;
    sdr[l] += k * terms[i].dr;
  };
  const size_t m = terms.size();
  size_t i = 0;
  for (; i + 4 <= m; i += 4)
    for (size_t l = 0; l < 4; ++l) add(l, i + l, double(c[i + l]));
  for (size_t l = 0; i < m; ++i, ++l) add(l, i, double(c[i]));
  for (uint32_t j : wrapped) add(0, j, 256.0);  // a call drawn 256 times or more: never seen in practice
  return sums_of((sw[0] + sw[1]) + (sw[2] + sw[3]), (swr[0] + swr[1]) + (swr[2] + swr[3]),
                 (sdr[0] + sdr[1]) + (sdr[2] + sdr[3]), n);
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
  replicates.erase(
      std::remove_if(replicates.begin(), replicates.end(), [](double v) { return !std::isfinite(v); }),
      replicates.end());
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
    const auto fail = [&](const std::string& why) {
      const auto [path, offset] = decision_log_call_place(log, i);
      throw InputError(path, 0,
                       "byte " + std::to_string(offset) + ": call " + std::to_string(r.call_index) + " (" +
                           std::to_string(r.bytes) + " B): " + why);
    };
    if (it == index.end()) fail("no context record holds its cost table");
    if (std::isnan(r.propensity))
      fail("no probability (behaviour policy '" + log.policy +
           "' cannot state the probability of its choices): off-policy estimates need every one");
    if (!(r.propensity >= kMinPropensity && r.propensity <= 1.0))
      fail("probability " + fmt::format("{:.6g}", r.propensity) +
           (r.propensity > 1.0 || r.propensity <= 0.0
                ? std::string(" is out of (0, 1]")
                : " is below the floor of " + fmt::format("{:g}", kMinPropensity) +
                      ": one call would weigh more than a million"));
    if (!data.contexts[size_t(it->second)].mask.has(r.slot)) fail("an arm NCCL could not run");
    if (!(r.latency_us >= kMinLatencyUs && r.latency_us <= kMaxLatencyUs))
      fail("latency " + fmt::format("{:.6g}", r.latency_us) + " us is no collective's time (outside " +
           fmt::format("{:g}", kMinLatencyUs) + " to " + fmt::format("{:g}", kMaxLatencyUs) + " us)");
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
  std::vector<double> direct(nc, 0.0);
  for (size_t x = 0; x < nc; ++x)
    for (int s = 0; s < kNumArms; ++s)
      if (target[x][size_t(s)] > 0.0) direct[x] += target[x][size_t(s)] * q[x][size_t(s)];
  std::vector<Terms> terms(n);
  double sw = 0, sw2 = 0;
  for (size_t i = 0; i < n; ++i) {
    const OpeCall& c = data.calls[i];
    const double wi = target[size_t(c.context)][size_t(c.slot)] / c.propensity, r = c.latency_us;
    terms[i] = {wi, wi * r, direct[size_t(c.context)] + wi * (r - q[size_t(c.context)][size_t(c.slot)])};
    sw += wi;
    sw2 += wi * wi;
  }
  const double n_effective = sw2 > 0 ? sw * sw / sw2 : 0.0;
  const Sums point = estimate_on(terms, n);
  // Resample b draws n calls with replacement from the stream (seed, b); a resample's sums weight
  // each call by how often it was drawn, in call order: the draws land in a one-byte count per
  // call (1 MiB per 10^6 calls, cache-resident; a count passing 255 wraps and is kept aside), and
  // the sums stream over the terms, instead of gathering every drawn call from all over memory.
  std::vector<double> ips(size_t(options.resamples)), snips(ips.size()), dr(ips.size());
  std::vector<uint8_t> count(n);
  std::vector<uint32_t> wrapped;
  for (int b = 0; b < options.resamples; ++b) {
    std::fill(count.begin(), count.end(), uint8_t(0));
    wrapped.clear();
    ResampleStream rs(options.seed, uint64_t(b), ResamplePurpose::bootstrap_indices);
    for (size_t k = 0; k < n; ++k) {
      const uint32_t i = rs.next_below(uint32_t(n));
      if (++count[i] == 0) wrapped.push_back(i);
    }
    const Sums s = estimate_on(terms, count.data(), wrapped, n);
    ips[size_t(b)] = s.ips;
    snips[size_t(b)] = s.snips;
    dr[size_t(b)] = s.dr;
  }
  const double a = (1.0 - options.level) / 2.0;
  const auto result = [&](const char* name, double value, const std::vector<double>& boot) {
    return EstimatorResult{name, value, bootstrap_quantile(boot, a), bootstrap_quantile(boot, 1.0 - a),
                           n_effective};
  };
  std::vector<EstimatorResult> out = {result("IPS", point.ips, ips), result("SNIPS", point.snips, snips),
                                      result("DR", point.dr, dr)};
  // Every weight is at most 10^6 and every latency at most 10^9 us (ope_data), so the sums are
  // finite; an interval is undefined only when no resample drew a call the target weighs.
  for (const EstimatorResult& e : out)
    if (!std::isfinite(e.value_us) || !std::isfinite(e.lo) || !std::isfinite(e.hi))
      throw InputError(target_name, 0,
                       e.name +
                           " has no finite estimate or interval: too few logged calls of the arms it plays "
                           "(no bootstrap resample drew one)");
  return out;
}

}  // namespace ncclbot
