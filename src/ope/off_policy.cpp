#include "ncclbot/ope/off_policy.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "ncclbot/core/argmin.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/core/names.hpp"
#include "ncclbot/ope/block_bootstrap.hpp"
#include "ncclbot/ope/log_blocks.hpp"
#include "ncclbot/stats/loss_summary.hpp"

namespace ncclbot {

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

OpeContext ope_context(const decision_log::ContextRecord& r) {
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
  return c;
}

std::string ope_arm_problem(const LoggedArms& arms, int arm, const OpeContext& c) {
  if (arm >= 0 && arm_usable(c, arms.arms[size_t(arm)])) return "";
  if (arm >= 0 || !arms.knob_log()) return "an arm NCCL could not run";
  return "an arm the header's knob lists (" + arms.knobs + ") do not give";
}

OpeData ope_data(const DecisionLogData& log) {
  OpeData data;
  data.behaviour = log.policy;
  if (!log.files.empty()) data.arms = logged_arms(log.files.front());  // else the slots
  for (size_t f = 1; f < log.files.size(); ++f) check_same_arms(data.arms, log.files[f]);
  ContextIndex index;
  for (const auto& r : log.contexts) {
    if (index.find(r.collective, r.bytes, r.nodes, r.ranks) >= 0) continue;
    index.add(r.collective, r.bytes, r.nodes, r.ranks);
    data.contexts.push_back(ope_context(r));
  }
  const std::string& first = log.files.empty() ? std::string() : log.files.front().path;
  for (size_t i = 0; i < log.calls.size(); ++i) {
    const auto& r = log.calls[i];
    if (r.graph_replay) {  // no decision of the behaviour's: no estimator takes it
      ++data.graph_replays;
      continue;
    }
    const int x = index.find(r.collective, r.bytes, r.nodes, r.ranks);
    const auto fail = [&](const std::string& why) {
      const auto [path, offset] = decision_log_call_place(log, i);
      throw InputError(path, 0, ope_call_message(r, offset, why));
    };
    if (x < 0) fail("no context record holds its cost table");
    if (const std::string why = ope_call_problem(r, log.policy); !why.empty()) fail(why);
    const int arm = data.arms.index(call_arm(r));
    if (const std::string why = ope_arm_problem(data.arms, arm, data.contexts[size_t(x)]); !why.empty())
      fail(why);
    data.calls.push_back({x, arm, r.propensity, r.latency_us, r.call_index});
  }
  if (data.calls.empty()) throw InputError(first, 0, "the logs hold no measured call");
  return data;
}

std::string ope_call_message(const decision_log::CallRecord& r, uint64_t offset, const std::string& why) {
  return "byte " + std::to_string(offset) + ": call " + std::to_string(r.call_index) + " (" +
         std::to_string(r.bytes) + " B): " + why;
}

std::string ope_call_problem(const decision_log::CallRecord& r, const std::string& behaviour) {
  if (std::isnan(r.propensity))
    return "no probability (behaviour policy '" + behaviour +
           "' cannot state the probability of its choices): off-policy estimates need every one";
  if (!(r.propensity >= kMinPropensity && r.propensity <= 1.0))
    return "probability " + fmt::format("{:.6g}", r.propensity) +
           (r.propensity > 1.0 || r.propensity <= 0.0
                ? std::string(" is out of (0, 1]")
                : " is below the floor of " + fmt::format("{:g}", kMinPropensity) +
                      ": one call would weigh more than a million");
  if (!decision_log::latency_measurable(r.latency_us))
    return "latency " + fmt::format("{:.6g}", r.latency_us) + " us is no collective's time (outside " +
           fmt::format("{:g}", kMinLatencyUs) + " to " + fmt::format("{:g}", kMaxLatencyUs) + " us)";
  return "";
}

std::vector<std::vector<double>> reward_model(const LogBlocks& data) {
  // Two passes over the played arms' sums (an arm never played sums to nothing), rather than a
  // table of every context's every arm: a knob log's list is long and most of it never played.
  const size_t nc = data.contexts.size(), na = data.arms.size();
  double latency = 0, cost = 0;
  for (size_t x = 0; x < nc; ++x)
    for (size_t i = 0; i < na; ++i) {
      if (!data.blocks[x].played(int(i))) continue;
      const ArmSums t = data.blocks[x].total(int(i));
      const int s = data.arms.arms[i].slot();
      const double prior = s < kNumNcclArms ? data.contexts[x].cost_us[s] : -1.0;
      if (prior > 0.0 && t.calls > 0.0) {
        latency += t.r;
        cost += prior * t.calls;
      }
    }
  const double ratio = cost > 0 ? latency / cost : 1.0;
  std::vector<std::vector<double>> q(nc, std::vector<double>(na));
  for (size_t x = 0; x < nc; ++x)
    for (size_t i = 0; i < na; ++i) {
      const ArmSums t = data.blocks[x].played(int(i)) ? data.blocks[x].total(int(i)) : ArmSums{};
      const Arm& a = data.arms.arms[i];
      q[x][i] = !arm_usable(data.contexts[x], a) ? NAN
                : t.calls > 0.0                  ? t.r / t.calls
                                                 : double(data.contexts[x].cost_us[a.slot()]) * ratio;
    }
  return q;
}

std::vector<EstimatorResult> estimate_off_policy(const LogBlocks& data, const TargetProbabilities& target,
                                                 const std::string& target_name, const OpeOptions& options) {
  const size_t nc = data.contexts.size();
  const size_t na = data.arms.size();
  if (target.size() != nc)
    throw UsageError("ope: target probabilities for " + std::to_string(target.size()) +
                     " contexts, the data has " + std::to_string(nc));
  // Support: every arm the target plays in a context must have been played there at least once.
  for (size_t x = 0; x < nc; ++x) {
    if (target[x].size() != na)
      throw UsageError("ope: target probabilities over " + std::to_string(target[x].size()) +
                       " arms, the log has " + std::to_string(na));
    for (size_t i = 0; i < na; ++i)
      if (target[x][i] > 0.0 && !data.blocks[x].played(int(i)))
        throw InputError(
            target_name, 0,
            "plays " + logged_arm_text(data.arms.arms[i]) + " on " + ope_context_text(data.contexts[x]) +
                ", where the log holds no call of it (a zero propensity: no estimate can see it)");
  }
  const auto q = reward_model(data);
  // Per block, with w = pi(a | x) / p: sum w r, calls, sum w, and DR's sum of the direct part plus
  // w times the reward model's residual, sum_a pi(a) [sum r/p - q(a) sum 1/p] over the arms played.
  constexpr size_t kWr = 0, kCalls = 1, kW = 2, kDr = 3, kColumns = 4;
  double total[kColumns] = {}, sw2 = 0;
  std::vector<double> boot(size_t(options.resamples) * kColumns, 0.0), columns;
  for (size_t x = 0; x < nc; ++x) {
    const ContextBlocks& b = data.blocks[x];
    const size_t m = b.blocks();
    if (m == 0) continue;
    double direct = 0.0;
    for (size_t i = 0; i < na; ++i)
      if (target[x][i] > 0.0) direct += target[x][i] * q[x][i];
    columns.assign(kColumns * m, 0.0);
    for (size_t s = 0; s < na; ++s) {
      const std::vector<ArmSums>& arm = b.arms[s];
      if (arm.empty()) continue;
      const double pi = target[x][s];
      for (size_t j = 0; j < m; ++j) {
        const ArmSums& a = arm[j];
        columns[kCalls * m + j] += a.calls;
        columns[kDr * m + j] += a.calls * direct;
        if (pi == 0.0) continue;
        columns[kWr * m + j] += pi * a.r_over_p;
        columns[kW * m + j] += pi * a.inv_p;
        columns[kDr * m + j] += pi * (a.r_over_p - q[x][s] * a.inv_p);
        sw2 += pi * pi * a.inv_p2;
      }
    }
    for (size_t c = 0; c < kColumns; ++c)
      for (size_t j = 0; j < m; ++j) total[c] += columns[c * m + j];
    const std::vector<double> sums =
        block_bootstrap_sums(columns, kColumns, context_seed(options.seed, x), options.resamples,
                             options.threads, options.backend);
    // Each context counts with its logged calls in every resample: its resampled sums are scaled
    // to them, so a resample that draws a short last block more often does not shift the weights of
    // contexts whose latencies differ by orders of magnitude.
    const double n_x = double(b.calls);
    for (size_t r = 0; r < size_t(options.resamples); ++r) {
      const double* t = &sums[r * kColumns];
      const double scale = n_x / t[kCalls];
      for (size_t c = 0; c < kColumns; ++c) boot[r * kColumns + c] += c == kCalls ? n_x : t[c] * scale;
    }
  }
  const auto ips = [&](const double* t) { return t[kWr] / t[kCalls]; };
  const auto snips = [&](const double* t) { return t[kW] > 0 ? t[kWr] / t[kW] : NAN; };
  const auto dr = [&](const double* t) { return t[kDr] / t[kCalls]; };
  const double n_effective = sw2 > 0 ? total[kW] * total[kW] / sw2 : 0.0;
  const double a = (1.0 - options.level) / 2.0;
  // A latency is never below 0, but DR's residual term can take a resample there (calls of the
  // target's arm far below their mean drawn often): an interval end below 0 is reported as 0. NaN
  // stays NaN, for the finiteness check below.
  const auto latency_bound = [](double v) { return v < 0.0 ? 0.0 : v; };
  const auto result = [&](const char* name, auto estimator) {
    std::vector<double> replicates(size_t(options.resamples));
    for (size_t r = 0; r < replicates.size(); ++r) replicates[r] = estimator(&boot[r * kColumns]);
    return EstimatorResult{name, estimator(total), latency_bound(bootstrap_quantile(replicates, a)),
                           latency_bound(bootstrap_quantile(replicates, 1.0 - a)), n_effective};
  };
  std::vector<EstimatorResult> out = {result("IPS", ips), result("SNIPS", snips), result("DR", dr)};
  // Every weight is at most 10^6 and every latency at most 10^9 us (ope_call_problem), so the sums
  // are finite; an interval is undefined only when no resample drew a call the target weighs.
  for (const EstimatorResult& e : out)
    if (!std::isfinite(e.value_us) || !std::isfinite(e.lo) || !std::isfinite(e.hi))
      throw InputError(target_name, 0,
                       e.name +
                           " has no finite estimate or interval: too few logged calls of the arms it plays "
                           "(no bootstrap resample drew one)");
  return out;
}

}  // namespace ncclbot
