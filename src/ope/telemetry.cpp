#include "ncclbot/ope/telemetry.hpp"

#include <algorithm>
#include <cmath>

#include "ncclbot/core/names.hpp"
#include "ncclbot/stats/normal_distribution.hpp"
#include "ncclbot/stats/resample_stream.hpp"

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

}  // namespace

nlohmann::json telemetry(const OpeData& data, const TelemetryOptions& options) {
  const size_t nc = data.contexts.size();
  const auto q = reward_model(data);
  const double z = normal_quantile_ieee(0.5 + options.level / 2.0);
  // Per context, its calls in index order.
  std::vector<std::vector<size_t>> calls(nc);
  for (size_t i = 0; i < data.calls.size(); ++i) calls[size_t(data.calls[i].context)].push_back(i);
  for (auto& v : calls)
    std::stable_sort(v.begin(), v.end(),
                     [&](size_t a, size_t b) { return data.calls[a].index < data.calls[b].index; });

  std::vector<double> d(data.calls.size(), 0.0);
  std::vector<bool> supported(nc, false);
  for (size_t x = 0; x < nc; ++x) {
    const int nccl = data.contexts[x].nccl_slot;
    for (size_t i : calls[x]) supported[x] = supported[x] || data.calls[i].slot == nccl;
    if (!supported[x]) continue;
    const double qn = q[x][size_t(nccl)];
    for (size_t i : calls[x]) {
      const OpeCall& c = data.calls[i];
      d[i] = qn + (c.slot == nccl ? (c.latency_us - qn) / c.propensity : 0.0) - c.latency_us;
    }
  }

  const int B = options.resamples;
  const size_t nboot = size_t(B);
  // boot_saved[x][b]: context x's mean saving in resample b; totals add them up weighted by calls.
  std::vector<double> total_saved(size_t(B), 0.0), total_nccl(size_t(B), 0.0);
  nlohmann::json per_context = nlohmann::json::array();
  double sum_saved = 0, sum_actual = 0, sum_actual_supported = 0;
  size_t total_departures = 0, total_calls = 0, unsupported = 0, lost = 0;
  for (size_t x = 0; x < nc; ++x) {
    const OpeContext& c = data.contexts[x];
    const std::vector<size_t>& idx = calls[x];
    const size_t n = idx.size();
    size_t departures = 0;
    double mean_r = 0, mean_d = 0;
    for (size_t i : idx) {
      departures += data.calls[i].slot != c.nccl_slot;
      mean_r += data.calls[i].latency_us;
      mean_d += d[i];
    }
    total_departures += departures;
    total_calls += n;
    if (n == 0) continue;
    mean_r /= double(n);
    mean_d /= double(n);
    sum_actual += mean_r * double(n);
    std::vector<double> br(nboot), bd(nboot), bdep(nboot);
    for (int b = 0; b < B; ++b) {
      ResampleStream rs(options.seed ^ (uint64_t(x) * 0x9e3779b97f4a7c15ull), uint64_t(b),
                        ResamplePurpose::bootstrap_indices);
      double sr = 0, sd = 0, sdep = 0;
      for (size_t k = 0; k < n; ++k) {
        const size_t i = idx[rs.next_below(uint32_t(n))];
        sr += data.calls[i].latency_us;
        sd += d[i];
        sdep += data.calls[i].slot != c.nccl_slot;
      }
      br[size_t(b)] = sr / double(n);
      bd[size_t(b)] = sd / double(n);
      bdep[size_t(b)] = sdep / double(n);
      if (supported[x]) {
        total_saved[size_t(b)] += sd;
        total_nccl[size_t(b)] += sr + sd;
      }
    }
    nlohmann::json e = {{"collective", std::string(collective_name(Collective(c.collective)))},
                        {"bytes", c.bytes},
                        {"nodes", c.nodes},
                        {"ranks", c.ranks},
                        {"nccl_arm", arm_name(c.nccl_slot)},
                        {"calls", n},
                        {"departures", departures},
                        {"departure_share", interval(double(departures) / double(n), bdep, options.level)},
                        {"mean_latency_us", interval(mean_r, br, options.level)}};
    if (supported[x]) {
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
      lost += e["lost"].get<bool>();
      sum_saved += mean_d * double(n);
      sum_actual_supported += mean_r * double(n);
    } else {
      e["unsupported"] = "NCCL's pick " + arm_name(c.nccl_slot) + " was never played here: no estimate";
      ++unsupported;
    }
    // Learning curve: the context's calls in index order, in equal buckets.
    nlohmann::json curve = nlohmann::json::array();
    const size_t nb = std::min<size_t>(size_t(std::max(1, options.curve_buckets)), n);
    for (size_t k = 0; k < nb; ++k) {
      const size_t from = k * n / nb, to = (k + 1) * n / nb;
      size_t dep = 0;
      double s = 0, s2 = 0;
      for (size_t j = from; j < to; ++j) {
        const OpeCall& call = data.calls[idx[j]];
        dep += call.slot != c.nccl_slot;
        s += call.latency_us;
        s2 += call.latency_us * call.latency_us;
      }
      const double m = to > from ? s / double(to - from) : NAN;
      const double var = to - from > 1 ? std::max(0.0, (s2 - s * m) / double(to - from - 1)) : 0.0;
      const double half = z * std::sqrt(var / double(std::max<size_t>(1, to - from)));
      curve.push_back({{"first_call", data.calls[idx[from]].index},
                       {"last_call", data.calls[idx[to - 1]].index},
                       {"calls", to - from},
                       {"departure_share", wilson(dep, to - from, z)},
                       {"mean_latency_us", {{"value", m}, {"ci", {m - half, m + half}}}}});
    }
    e["learning_curve"] = curve;
    per_context.push_back(e);
  }
  std::vector<double> share(nboot);
  for (int b = 0; b < B; ++b)
    share[size_t(b)] = total_nccl[size_t(b)] > 0 ? total_saved[size_t(b)] / total_nccl[size_t(b)] : NAN;
  nlohmann::json doc;
  doc["behaviour"] = data.behaviour;
  doc["calls"] = total_calls;
  doc["contexts"] = nc;
  doc["level"] = options.level;
  doc["resamples"] = B;
  doc["method"] =
      "saved = NCCL's choice's estimated latency minus the measured one (doubly robust estimate of NCCL's "
      "pick, reward model: logged means, else NCCL's cost times the log's latency/cost ratio); percentile "
      "bootstrap over calls within each context";
  doc["total"] = {{"calls", total_calls},
                  {"departures", total_departures},
                  {"departure_share", wilson(total_departures, total_calls, z)},
                  {"contexts_without_estimate", unsupported},
                  {"contexts_lost", lost},
                  {"measured_us", sum_actual},
                  {"measured_us_of_estimated_contexts", sum_actual_supported}};
  // The estimates exist where some context played NCCL's pick; the share, where NCCL's estimated
  // time is not 0. Without them the fields are left out, never written as null.
  if (std::count(supported.begin(), supported.end(), true) > 0) {
    doc["total"]["nccl_estimate_us"] = interval(sum_actual_supported + sum_saved, total_nccl, options.level);
    doc["total"]["saved_us"] = interval(sum_saved, total_saved, options.level);
    if (sum_actual_supported + sum_saved != 0.0)
      doc["total"]["saved_share"] =
          interval(sum_saved / (sum_actual_supported + sum_saved), share, options.level);
  }
  doc["per_context"] = per_context;
  return doc;
}

}  // namespace ncclbot
