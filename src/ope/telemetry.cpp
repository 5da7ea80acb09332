#include "ncclbot/ope/telemetry.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include "ncclbot/core/names.hpp"
#include "ncclbot/ope/block_bootstrap.hpp"
#include "ncclbot/ope/log_blocks.hpp"
#include "ncclbot/stats/normal_distribution.hpp"

namespace ncclbot {
namespace {

// The value and the percentile interval of the resamples where it is defined (bootstrap_quantile
// leaves out a resample whose share is undefined, its NCCL estimate summing to 0).
nlohmann::json interval(double value, const std::vector<double>& boot, double level) {
  const double a = (1.0 - level) / 2.0;
  return {{"value", value}, {"ci", {bootstrap_quantile(boot, a), bootstrap_quantile(boot, 1.0 - a)}}};
}

// Wilson score interval of k successes in n.
nlohmann::json wilson(size_t k, size_t n, double z) {
  if (n == 0) return {{"value", nullptr}, {"ci", {nullptr, nullptr}}};
  const double p = double(k) / double(n), nn = double(n), z2 = z * z;
  const double centre = (p + z2 / (2 * nn)) / (1 + z2 / nn);
  const double half = z * std::sqrt(p * (1 - p) / nn + z2 / (4 * nn * nn)) / (1 + z2 / nn);
  return {{"value", p}, {"ci", {std::max(0.0, centre - half), std::min(1.0, centre + half)}}};
}

std::string arm_name(int s) {
  return s < 0 ? "none" : std::string(algo_name(slot_algo(s))) + "/" + std::string(proto_name(slot_proto(s)));
}

// Per block of a context: the latencies' sum, the calls, the saving's sum d and the departures from
// NCCL's pick (in a knob log, any arm but NCCL's pick at NCCL's own knobs), one column after another. Per
// call d_i = q(x, nccl) + [a_i = nccl] (r_i - q(x, nccl)) / p_i - r_i; summed over a block, calls q + (sum
// r/p - q sum 1/p over NCCL's arm) - sum r. `qn` is q(x, nccl); without NCCL's arm played (`supported` false)
// d is 0.
constexpr size_t kR = 0, kCalls = 1, kD = 2, kDepartures = 3, kColumns = 4;

std::vector<double> saving_columns(const ContextBlocks& b, int nccl, bool supported, double qn) {
  const size_t m = b.blocks();
  std::vector<double> columns(kColumns * m, 0.0);
  for (int s = 0; s < int(b.arms.size()); ++s) {
    const std::vector<ArmSums>& arm = b.arms[size_t(s)];
    if (arm.empty()) continue;
    for (size_t j = 0; j < m; ++j) {
      columns[kR * m + j] += arm[j].r;
      columns[kCalls * m + j] += arm[j].calls;
      if (s != nccl) columns[kDepartures * m + j] += arm[j].calls;
      if (supported) {
        columns[kD * m + j] += arm[j].calls * qn - arm[j].r;
        if (s == nccl) columns[kD * m + j] += arm[j].r_over_p - qn * arm[j].inv_p;
      }
    }
  }
  return columns;
}

// The context's blocks in log order, in `buckets` equal buckets of whole blocks: each bucket's
// departure share (Wilson) and mean latency (normal interval, its calls taken as independent).
nlohmann::json learning_curve(const ContextBlocks& b, const std::vector<double>& columns, int buckets,
                              double z) {
  const size_t m = b.blocks();
  nlohmann::json curve = nlohmann::json::array();
  const size_t nb = std::min<size_t>(size_t(std::max(1, buckets)), m);
  for (size_t k = 0; k < nb; ++k) {
    const size_t from = k * m / nb, to = (k + 1) * m / nb;
    ArmSums sums_of_bucket;
    double dep = 0;
    for (size_t j = from; j < to; ++j) {
      sums_of_bucket.merge(b.block(j));
      dep += columns[kDepartures * m + j];
    }
    const double calls = sums_of_bucket.calls, s = sums_of_bucket.r, s2 = sums_of_bucket.r2;
    const double mm = calls > 0 ? s / calls : NAN;
    const double var = calls > 1 ? std::max(0.0, (s2 - s * mm) / (calls - 1)) : 0.0;
    const double half = z * std::sqrt(var / std::max(1.0, calls));
    curve.push_back({{"first_call", b.first_index[from]},
                     {"last_call", b.last_index[to - 1]},
                     {"calls", size_t(calls)},
                     {"departure_share", wilson(size_t(dep), size_t(calls), z)},
                     {"mean_latency_us", {{"value", mm}, {"ci", {mm - half, mm + half}}}}});
  }
  return curve;
}

// Running totals over the contexts: point sums, counts and, per bootstrap resample, the time saved
// and NCCL's estimated time (over the contexts that played NCCL's pick).
struct TelemetryTotals {
  std::vector<double> total_saved, total_nccl;
  double sum_saved = 0, sum_actual = 0, sum_actual_supported = 0;
  size_t total_departures = 0, total_calls = 0, unsupported = 0, lost = 0, estimated = 0;
};

// Context x's entry of "per_context" (none when it has no calls), adding its sums to `t`.
std::optional<nlohmann::json> context_telemetry(const LogBlocks& data, size_t x,
                                                const std::vector<std::vector<double>>& q, double z,
                                                const TelemetryOptions& options, TelemetryTotals& t) {
  const int B = options.resamples;
  const size_t nboot = size_t(B);
  const OpeContext& c = data.contexts[x];
  const ContextBlocks& b = data.blocks[x];
  const size_t n = size_t(b.calls), m = b.blocks();
  const int nccl = c.nccl_slot >= 0 ? data.arms.index(Arm::of_slot(c.nccl_slot)) : -1;
  const bool supported = nccl >= 0 && b.played(nccl);
  const std::vector<double> columns =
      saving_columns(b, nccl, supported, supported ? q[x][size_t(nccl)] : 0.0);
  size_t departures = 0;
  double sum_r = 0, sum_d = 0;
  for (size_t j = 0; j < m; ++j) {
    departures += size_t(columns[kDepartures * m + j]);
    sum_r += columns[kR * m + j];
    sum_d += columns[kD * m + j];
  }
  t.total_departures += departures;
  t.total_calls += n;
  if (n == 0) return std::nullopt;
  const double mean_r = sum_r / double(n), mean_d = sum_d / double(n);
  t.sum_actual += sum_r;
  const std::vector<double> sums = block_bootstrap_sums(columns, kColumns, context_seed(options.seed, x), B,
                                                        options.threads, options.backend);
  std::vector<double> br(nboot), bd(nboot), bdep(nboot);
  for (size_t r = 0; r < nboot; ++r) {
    const double* s = &sums[r * kColumns];
    br[r] = s[kR] / s[kCalls];
    bd[r] = s[kD] / s[kCalls];
    bdep[r] = s[kDepartures] / s[kCalls];
    if (supported) {
      t.total_saved[r] += bd[r] * double(n);
      t.total_nccl[r] += (br[r] + bd[r]) * double(n);
    }
  }
  nlohmann::json e = {{"collective", std::string(collective_name(Collective(c.collective)))},
                      {"bytes", c.bytes},
                      {"nodes", c.nodes},
                      {"ranks", c.ranks},
                      {"nccl_arm", arm_name(c.nccl_slot)},
                      {"calls", n},
                      {"blocks", m},
                      {"block_length", b.length},
                      {"departures", departures},
                      {"departure_share", interval(double(departures) / double(n), bdep, options.level)},
                      {"mean_latency_us", interval(mean_r, br, options.level)}};
  if (supported) {
    std::vector<double> bn(nboot), bt(nboot);
    for (int b = 0; b < B; ++b) {
      bn[size_t(b)] = br[size_t(b)] + bd[size_t(b)];
      bt[size_t(b)] = bd[size_t(b)] * double(n);
    }
    e["nccl_estimate_us"] = interval(mean_r + mean_d, bn, options.level);
    e["saved_per_call_us"] = interval(mean_d, bd, options.level);
    e["saved_total_us"] = interval(mean_d * double(n), bt, options.level);
    const double hi = e["saved_per_call_us"]["ci"][1];
    e["lost"] = hi < 0.0;  // the whole interval says slower than NCCL's choice
    t.lost += e["lost"].get<bool>();
    t.sum_saved += sum_d;
    ++t.estimated;
    t.sum_actual_supported += sum_r;
  } else {
    e["unsupported"] = "NCCL's pick " + arm_name(c.nccl_slot) + " was never played here: no estimate";
    ++t.unsupported;
  }
  e["learning_curve"] = learning_curve(b, columns, options.curve_buckets, z);
  return e;
}

}  // namespace

nlohmann::json telemetry(const LogBlocks& data, const TelemetryOptions& options) {
  const size_t nc = data.contexts.size();
  const auto q = reward_model(data);
  const double z = normal_quantile_ieee(0.5 + options.level / 2.0);
  const int B = options.resamples;
  const size_t nboot = size_t(B);
  TelemetryTotals t;
  t.total_saved.assign(nboot, 0.0);
  t.total_nccl.assign(nboot, 0.0);
  nlohmann::json per_context = nlohmann::json::array();
  for (size_t x = 0; x < nc; ++x)
    if (std::optional<nlohmann::json> e = context_telemetry(data, x, q, z, options, t))
      per_context.push_back(std::move(*e));
  std::vector<double> share(nboot);
  for (int b = 0; b < B; ++b)
    share[size_t(b)] = t.total_nccl[size_t(b)] > 0 ? t.total_saved[size_t(b)] / t.total_nccl[size_t(b)] : NAN;
  nlohmann::json doc;
  doc["behaviour"] = data.behaviour;
  doc["calls"] = t.total_calls;
  doc["graph_replays"] = data.graph_replays;                 // logged, left out: no decision of the plugin's
  doc["skipped_latencies"] = skipped_latencies(data.files);  // no measurement: left out, counted
  doc["overridden_calls"] = overridden_calls(data.files);    // NCCL ran another arm: left out, counted
  doc["symmetric_calls"] = symmetric_calls(data.files);      // of those, NCCL's symmetric kernels
  doc["knob_calls"] = data.knob_calls;  // knob mode: those off NCCL's own knobs are departures
  doc["contexts"] = nc;
  doc["level"] = options.level;
  doc["resamples"] = B;
  doc["block_rule"] = data.rule.describe();
  doc["method"] =
      "saved = NCCL's choice's estimated latency minus the measured one (doubly robust estimate of NCCL's "
      "pick, reward model: logged means, else NCCL's cost times the log's latency/cost ratio); percentile "
      "block bootstrap within each context (" +
      data.rule.describe() + ")";
  doc["total"] = {{"calls", t.total_calls},
                  {"departures", t.total_departures},
                  {"departure_share", wilson(t.total_departures, t.total_calls, z)},
                  {"contexts_without_estimate", t.unsupported},
                  {"contexts_lost", t.lost},
                  {"measured_us", t.sum_actual},
                  {"measured_us_of_estimated_contexts", t.sum_actual_supported}};
  // The estimates exist where some context played NCCL's pick; the share, where NCCL's estimated
  // time is not 0. Without them the fields are left out, never written as null.
  if (t.estimated > 0) {
    doc["total"]["nccl_estimate_us"] =
        interval(t.sum_actual_supported + t.sum_saved, t.total_nccl, options.level);
    doc["total"]["saved_us"] = interval(t.sum_saved, t.total_saved, options.level);
    if (t.sum_actual_supported + t.sum_saved != 0.0)
      doc["total"]["saved_share"] =
          interval(t.sum_saved / (t.sum_actual_supported + t.sum_saved), share, options.level);
  }
  doc["per_context"] = per_context;
  return doc;
}

}  // namespace ncclbot
