#include "ncclbot/sim/simulator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "ncclbot/core/argmin.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/core/names.hpp"
#include "ncclbot/hipipe/simulated_arm.hpp"
#include "ncclbot/model/cost_model.hpp"
#include "sim/sim_random.hpp"

namespace ncclbot::sim {
namespace {

using random::draw;
using random::key_for;
using random::unit;

double log2d(double x) {
  return std::log2(x);
}

// A standard normal draw from the first two random words of `x` (Box-Muller).
double standard_normal(const r123::Philox4x32::ctr_type& x) {
  return std::sqrt(-2.0 * std::log(unit(x[0]))) * std::cos(6.283185307179586 * unit(x[1]));
}

// Log-normal call-to-call noise and rare heavy-tailed slow calls (observation_noise) applied to
// `truth`, from the four random words `x` of one sample.
double noisy(const FabricPreset& f, const Context& ctx, const r123::Philox4x32::ctr_type& x, double truth) {
  const ObservationNoise n = observation_noise(f, ctx);
  double t = truth * std::exp(n.sigma * standard_normal(x));
  if (unit(x[2]) < n.spike_prob) t *= spike_factor(n, std::pow(unit(x[3]), -1.0 / n.spike_alpha));
  return t;
}

// The counter of sample r of slot `slot` on `ctx` in stream `stream`.
r123::Philox4x32::ctr_type sample_counter(uint32_t stream, const Context& ctx, int slot, int r) {
  return {{(stream << 24) | (uint32_t(ctx.collective) << 16) | uint32_t(slot),
           (uint32_t(ctx.nodes) << 16) | uint32_t(ctx.gpus_per_node), uint32_t(ctx.bytes),
           (uint32_t(ctx.bytes >> 32) & 0xffu) | (uint32_t(r) << 8)}};
}

// The errors of the alternative deviation models (SynthOptions::deviations) on one context's
// structure-free truths `truth` (NaN where invalid), in place.
void apply_deviation_model(const FabricPreset& f, const SynthOptions& o, const Context& ctx,
                           const model::CostTable& table, ArmMask mask, double* truth) {
  if (o.deviations == DeviationModel::kIndependent) {
    const auto key = key_for(o.seed, f.name);
    r123::Philox4x32 rng;
    for (int s = 0; s < kNumNcclArms; ++s) {
      if (!mask.has(s)) continue;
      const auto x = rng(sample_counter(random::kStreamIndependentDeviation, ctx, s, 0), key);
      truth[s] *= std::exp(o.independent_sigma * standard_normal(x));
    }
  } else if (o.deviations == DeviationModel::kAdversarial) {
    const int pick = nccl_argmin(mask, [&](int s) { return table.time_us[s]; });
    if (pick < 0) return;
    double second = 0.0;
    for (int s = 0; s < kNumNcclArms; ++s)
      if (mask.has(s) && s != pick && (second == 0.0 || double(table.time_us[s]) < second))
        second = double(table.time_us[s]);
    const double gap = second > 0.0 ? second / double(table.time_us[pick]) - 1.0 : 0.0;
    truth[pick] *= 1.0 + o.adversarial_gain * std::min(gap, 1.0);
  }
}

}  // namespace

DeviationModel parse_deviation_model(const std::string& text) {
  std::string valid;
  for (DeviationModel m : kDeviationModels) {
    if (text == deviation_model_name(m)) return m;
    valid += std::string(valid.empty() ? "" : ", ") + deviation_model_name(m);
  }
  throw UsageError("deviations: unknown model '" + text + "' (valid: " + valid + ")");
}

ObservationNoise observation_noise(const FabricPreset& f, const Context& ctx) {
  ObservationNoise n;
  if (f.observation.enabled) {
    // Call-to-call noise calibrated to per-iteration variation (docs/simulator.md), and spikes: one
    // call now and then takes several times as long (a preempted proxy thread, a congested link).
    const ObservationModel& o = f.observation;
    n.sigma = o.cv_large + (o.cv_small - o.cv_large) / (1.0 + double(ctx.bytes) / o.cv_knee_bytes);
    n.spike_prob = o.spike_prob;
    n.spike_alpha = o.spike_alpha;
    n.spike_scale = o.spike_min;
    n.spike_cap = o.spike_cap;
    return n;
  }
  // Log-normal noise, wider for small messages (launch and polling jitter dominate there), and rare
  // heavy-tailed outliers (Pareto), e.g. a preempted proxy thread or a congested link.
  n.sigma = f.sigma_large + f.sigma_small / (1.0 + double(ctx.bytes) / f.small_bytes);
  n.spike_prob = f.outlier_prob;
  n.spike_alpha = f.outlier_alpha;
  n.spike_scale = f.outlier_scale;
  n.spike_cap = 20.0;
  n.shifted = 1;
  return n;
}

std::vector<ObservationNoise> fresh_observations(const FabricPreset& preset, const SynthOptions& options,
                                                 const std::vector<Context>& contexts) {
  const FabricPreset f = with_observation_options(preset, options);
  std::vector<ObservationNoise> out;
  out.reserve(contexts.size());
  for (const Context& ctx : contexts) out.push_back(observation_noise(f, ctx));
  return out;
}

Deviations draw_deviations(const FabricPreset& f, uint64_t seed) {
  auto u = [&](uint32_t what) { return random::uniform(seed, f.name, random::kStreamDeviation, what); };
  Deviations d;
  for (int s = 0; s < kNumNcclArms; ++s) {  // HiPIPE has no hidden deviations (hipipe/simulated_arm.hpp)
    // A symmetric error of drawn magnitude and sign per arm.
    const double cap = draw(f.channel_cap_error, u(100 + s));
    const double lat = draw(f.latency_error, u(200 + s));
    d.cap_error[s] = (u(300 + s) < 0.5 ? -cap : cap);
    d.lat_error[s] = (u(400 + s) < 0.5 ? -lat : lat);
  }
  d.ll128_bw = draw(f.ll128_bw_scale, u(1));
  d.ll_bw = draw(f.ll_bw_scale, u(8));
  d.ll128_lat = draw(f.ll128_lat_scale, u(2));
  d.tree_congestion = draw(f.tree_congestion, u(3));
  d.nvls_tree_overhead_us = draw(f.nvls_tree_overhead_us, u(4));
  d.nvls_tree_bw_loss = draw(f.nvls_tree_bw_loss, u(5));
  d.slow_slice_log2 = draw(f.slow_path_slice_log2, u(6));
  d.slow_bw_factor = draw(f.slow_path_bw_factor, u(7));
  return d;
}

Deviations scaled_deviations(const Deviations& d, double scale) {
  if (scale == 1.0) return d;
  Deviations out = d;
  for (int s = 0; s < kNumArms; ++s) {
    out.cap_error[s] = scale * d.cap_error[s];
    out.lat_error[s] = scale * d.lat_error[s];
  }
  out.ll_bw = std::pow(d.ll_bw, scale);
  out.ll128_bw = std::pow(d.ll128_bw, scale);
  out.ll128_lat = std::pow(d.ll128_lat, scale);
  out.tree_congestion = scale * d.tree_congestion;
  out.nvls_tree_overhead_us = scale * d.nvls_tree_overhead_us;
  out.nvls_tree_bw_loss = scale * d.nvls_tree_bw_loss;
  out.slow_bw_factor = std::pow(d.slow_bw_factor, scale);
  return out;
}

TruthParts truth_parts(const FabricPreset& f, const Deviations& d, const Context& ctx, int slot) {
  const model::Topology topo = topology_for(f, ctx.nodes, ctx.gpus_per_node);
  const Algo a = slot_algo(slot);
  const Proto p = slot_proto(slot);
  const model::ArmCost cost = model::arm_cost(topo, ctx.collective, a, p, ctx.bytes);
  TruthParts parts;
  parts.launch_us = f.launch_overhead_us;
  if (!(cost.alg_bw > 0.0f)) return parts;
  parts.valid = true;
  double lat = cost.latency_us;
  double bw = cost.alg_bw;
  const int nodes = topo.nodes;
  // Measured plateaus (fixed calibration, not hidden): what the hardware sustains vs NCCL's rating.
  if (a == Algo::kNvls)
    bw *= nodes == 1 ? f.nvls_bw_scale : f.ring_bw_scale_multi_node;
  else if (a == Algo::kNvlsTree)
    bw *= f.nvls_tree_bw_scale;
  else
    bw *= nodes == 1 ? f.ring_bw_scale_one_node : f.ring_bw_scale_multi_node;

  // Hidden deviations.
  bw *= 1.0 + d.cap_error[slot];  // per-channel caps off by some percent
  lat *= 1.0 + d.lat_error[slot];
  if (p == Proto::kLL && nodes > 1) bw *= d.ll_bw;  // LL's host-side flag traffic vs llMaxBw's CPU row
  if (p == Proto::kLL128 && nodes > 1) {  // LL128 relies on 128-byte store ordering through the NIC path
    bw *= d.ll128_bw;
    lat *= d.ll128_lat;
  }
  if (a == Algo::kTree && nodes >= f.tree_congestion_from)  // up/down tree flows collide in the spine
    bw /= 1.0 + d.tree_congestion * (log2d(double(nodes) / f.tree_congestion_from) + 1.0);
  if (a == Algo::kNvlsTree && nodes >= f.nvls_tree_overhead_from) {
    // NVLSTree's multicast-then-tree handoff costs per tree level, and its heads contend at scale.
    const double levels = log2d(double(nodes) / f.nvls_tree_overhead_from) + 1.0;
    lat += d.nvls_tree_overhead_us * log2d(double(nodes));
    bw *= std::max(0.3, 1.0 - d.nvls_tree_bw_loss * levels);
  }
  double slow = 1.0;
  if (proto_name(p) == f.slow_path_proto && nodes >= f.slow_path_from_nodes) {
    // A protocol slow path for a band of per-channel slices (buffer slots wrap, flags are polled
    // across the NIC).
    const double slice =
        double(std::max<uint64_t>(ctx.bytes, 1)) / (double(topo.ranks()) * topo.ring_channels);
    const double dist = std::abs(log2d(slice) - d.slow_slice_log2);
    // Every step stalls, so the whole transfer (its latency and bandwidth terms) slows down.
    if (dist <= f.slow_path_width_log2 / 2.0) slow = 1.0 / d.slow_bw_factor;
  }
  parts.slow = slow;
  parts.latency_us = lat;
  parts.bw_gbps = bw;
  return parts;
}

double true_time_us(const FabricPreset& f, const Deviations& d, const Context& ctx, int slot) {
  const TruthParts p = truth_parts(f, d, ctx, slot);
  if (!p.valid) return std::numeric_limits<double>::quiet_NaN();
  return p.launch_us + p.slow * (p.latency_us + double(ctx.bytes) / (1000.0 * p.bw_gbps));
}

double sample_time_us(const FabricPreset& f, uint64_t seed, const Context& ctx, int slot, int r,
                      double truth) {
  r123::Philox4x32 rng;
  return noisy(f, ctx, rng(sample_counter(random::kStreamNoise, ctx, slot, r), key_for(seed, f.name)), truth);
}

double sample_arm_time_us(const FabricPreset& f, uint64_t seed, const Context& ctx, const Arm& arm, int r,
                          double truth) {
  if (arm.default_knobs()) return sample_time_us(f, seed, ctx, arm.slot(), r, truth);
  // Channel and chunk arms draw from their own stream, keyed also by the knobs, so every arm is its own
  // measurement and NCCL's own setting keeps the samples it always had.
  auto key = key_for(seed, f.name);
  key[0] ^= uint32_t(arm.channels) * 0x9E3779B9u;
  key[1] ^= arm.chunk_bytes * 0x85EBCA6Bu;
  r123::Philox4x32 rng;
  return noisy(f, ctx, rng(sample_counter(random::kStreamKnobNoise, ctx, arm.slot(), r), key), truth);
}

FabricPreset with_observation_options(const FabricPreset& preset, const SynthOptions& o) {
  if (!(o.noise_scale >= 0.0 && o.noise_scale <= 100.0)) throw UsageError("noise scale must be in [0, 100]");
  FabricPreset f = preset;
  ObservationModel& ob = f.observation;
  if (!o.observation) ob.enabled = false;
  if (!ob.enabled) return f;
  ob.cv_small *= o.noise_scale;
  ob.cv_large *= o.noise_scale;
  ob.spike_prob = std::min(0.5, ob.spike_prob * o.noise_scale);
  if (o.shift_rate >= 0.0) {
    if (o.shift_rate >= 0.5) throw UsageError("shift rate must be in [0, 0.5)");
    ob.dynamics.call.shift_rate = float(o.shift_rate);
  }
  if (o.shift_size >= 0.0) {
    if (o.shift_size >= 0.9) throw UsageError("shift size must be in [0, 0.9)");
    ob.dynamics.call.shift_size = float(o.shift_size);
  }
  if (o.shift_arm_size >= 0.0) {
    if (o.shift_arm_size >= 0.9) throw UsageError("shift arm size must be in [0, 0.9)");
    ob.dynamics.call.shift_arm_size = float(o.shift_arm_size);
  }
  if (!o.drift)
    ob.dynamics.call.shift_rate = ob.dynamics.call.shift_size = ob.dynamics.call.shift_arm_size = 0.0f;
  if (!o.first_use) ob.dynamics.first_use_base_us = ob.dynamics.first_use_per_host_us = 0.0;
  if (!o.warmup) {
    ob.dynamics.call.job_warmup = ob.dynamics.call.arm_warmup = 0.0f;
    ob.dynamics.call.job_warmup_calls = ob.dynamics.call.arm_warmup_calls = 0;
  }
  return f;
}

hipipe::ArmFabric hipipe_arm_fabric(const FabricPreset& f) {
  hipipe::ArmFabric a;
  a.name = f.name;
  a.file = f.file;
  a.hipipe_preset = f.hipipe_preset;
  a.nvlink_bw = double(f.nvlink_bw);
  a.nic_bw = double(f.nic_bw);
  a.nics_per_host = double(f.nics_per_host);
  a.gpus_per_host = double(f.gpus_per_host);
  a.ring_bw_scale_one_node = f.ring_bw_scale_one_node;
  a.nic_bw_scale = f.hipipe_nic_bw_scale;
  a.launch_overhead_us = f.launch_overhead_us;
  return a;
}

Sweep synthesize(const FabricPreset& preset, const SynthOptions& o) {
  const FabricPreset f = with_observation_options(preset, o);
  if (o.samples < 1 || o.samples > 100000) throw UsageError("--samples must be in [1, 100000]");
  if (o.min_bytes < 1 || o.min_bytes > o.max_bytes || o.max_bytes > kLargestMessageBytes)
    throw UsageError("byte range must satisfy 1 <= min <= max <= 2^40");
  const int gpus = o.gpus_per_node > 0 ? o.gpus_per_node : f.gpus_per_host;
  const std::vector<int>& nodes = o.nodes.empty() ? f.default_nodes : o.nodes;
  std::vector<Context> contexts;
  for (Collective c : o.collectives)
    for (int n : nodes) {
      const model::Topology t = topology_for(f, n, gpus);  // validates the shape
      if (t.ranks() < 2)
        throw UsageError("fabric " + f.name + ": a sweep needs at least 2 ranks per context");
      for (uint64_t b = 1; b <= o.max_bytes; b *= 2)
        if (b >= o.min_bytes) contexts.push_back(Context{f.name, c, n, gpus, b});
    }
  std::sort(contexts.begin(), contexts.end());
  contexts.erase(std::unique(contexts.begin(), contexts.end()), contexts.end());

  if (!(o.independent_sigma >= 0.0 && o.independent_sigma <= 2.0) ||
      !(o.adversarial_gain >= 0.0 && o.adversarial_gain <= 100.0))
    throw UsageError(
        "deviations: the independent sigma must be in [0, 2] and the adversarial gain in [0, 100]");
  if (!(o.deviation_scale >= 0.0 && o.deviation_scale <= kMaxDeviationScale))
    throw UsageError("deviations: the structured deviations' scale must be in [0, " +
                     std::to_string(int(kMaxDeviationScale)) + "]");
  // The alternative models start from the truth without the preset's structured deviations.
  const bool structured = o.deviations == DeviationModel::kStructured;
  if (!structured && o.deviation_scale != 1.0)
    throw UsageError(
        "deviations: a scale of the structured deviations holds for deviations = \"structured\" only");
  const Deviations d =
      structured ? scaled_deviations(draw_deviations(f, o.seed), o.deviation_scale) : Deviations{};
  std::optional<hipipe::SimulatedArm> hipipe;
  if (o.hipipe) hipipe = hipipe::load_simulated_arm(hipipe_arm_fabric(f));
  const size_t C = contexts.size();
  const int R = o.samples;
  std::vector<float> time(C * kNumArms * size_t(R), std::numeric_limits<float>::quiet_NaN());
  std::vector<float> prior(C * kNumArms, -1.0f);
  std::vector<uint32_t> valid(C, 0u);
  for (size_t c = 0; c < C; ++c) {
    const Context& ctx = contexts[c];
    const model::Topology t = topology_for(f, ctx.nodes, ctx.gpus_per_node);
    const model::CostTable table = model::predict(t, ctx.collective, ctx.bytes);
    ArmMask mask;
    double truth[kNumNcclArms];
    for (int s = 0; s < kNumNcclArms; ++s) {
      truth[s] = true_time_us(f, d, ctx, s);
      if (table.time_us[s] < 0.0f || !std::isfinite(truth[s])) continue;
      mask.set(s);
      prior[c * kNumArms + s] = table.time_us[s];
    }
    if (!structured) apply_deviation_model(f, o, ctx, table, mask, truth);
    for (int s = 0; s < kNumNcclArms; ++s)
      if (mask.has(s))
        for (int r = 0; r < R; ++r)
          time[(c * kNumArms + s) * R + r] = float(sample_time_us(f, o.seed, ctx, s, r, truth[s]));
    if (hipipe && hipipe::simulated_arm_applies(*hipipe, ctx)) {
      const hipipe::SimulatedArmTimes h = hipipe::simulated_arm_times(*hipipe, ctx);  // once per context: LPs
      const int s = kHiPipeSlot;
      mask.set(s);
      prior[c * kNumArms + s] = float(h.prior_us);
      for (int r = 0; r < R; ++r)
        time[(c * kNumArms + s) * R + r] = float(sample_time_us(f, o.seed, ctx, s, r, h.truth_us));
    }
    valid[c] = mask.bits;
  }
  Sweep sweep(std::move(contexts), R, std::move(time), std::move(valid), std::move(prior));
  if (f.observation.enabled) sweep.set_dynamics(f.observation.dynamics);
  return sweep;
}

Sweep default_sweep() {
  SynthOptions o;
  o.seed = kDefaultSeed;
  return synthesize(load_fabric(kDefaultFabric), o);
}

}  // namespace ncclbot::sim
