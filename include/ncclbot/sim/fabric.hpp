#pragma once
// A fabric preset: the hardware NCCL's cost model sees, the measured plateaus the simulator is
// calibrated to, the ranges its hidden deviations are drawn from, and its measurement noise. Presets
// are data files (data/fabrics/NAME.toml); every constant names its source there.
#include <array>
#include <string>
#include <vector>

#include "ncclbot/core/context.hpp"
#include "ncclbot/core/sweep.hpp"
#include "ncclbot/model/topology.hpp"

namespace ncclbot::sim {

// A closed interval a seed draws one value from (lo == hi: fixed).
struct Range {
  double lo = 0.0, hi = 0.0;
};

// The per-call observation model (optional [observation] table; docs/simulator.md "The observation
// model"). Enabled, it replaces [noise] for the samples and gives the sweep its call dynamics;
// disabled (or absent), a sweep is what the [noise]-only simulator made, bit for bit.
struct ObservationModel {
  bool enabled = false;
  // Call-to-call noise, log-normal: sigma = cv_large + (cv_small - cv_large) / (1 + bytes / cv_knee_bytes).
  double cv_small = 0.0, cv_large = 0.0, cv_knee_bytes = 1.0;
  // Spikes: with probability spike_prob a call takes spike_min * U^(-1 / spike_alpha) times as long
  // (Pareto), at most spike_cap times.
  double spike_prob = 0.0, spike_min = 1.0, spike_alpha = 1.0, spike_cap = 1.0;
  SweepDynamics dynamics;  // warm-up, level shifts, first-use cost
};

// The knob model's parameters (optional [knobs] table; docs/simulator.md "Knob model"). Every value
// is an assumption: no public sweep of channels and chunk sizes measures them; the ranges are set so
// that the best knob setting's gain over NCCL's own lands where published tuners report it.
struct KnobParams {
  // Share of the collective's time that compute overlaps; the SMs its channels take slow that compute
  // (AutoCCL, NSDI 2025: channels trade communication against computation, a "sweet spot").
  double compute_overlap = 0.25;
  // Channels that saturate the link, as a share of the graph's channel count, drawn per arm.
  Range channel_saturation{0.35, 1.0};
  // Round trip of one pipeline hop (us) across the network and inside an NVLink domain, drawn per
  // fabric: NCCL_STEPS slots per channel in flight over it bound a channel's rate.
  Range hop_rtt_net_us{2.0, 6.0};
  Range hop_rtt_nvlink_us{1.0, 2.5};
  // Share of the pipeline's fill (stages x chunk / per-channel rate) not hidden by other work, drawn.
  Range fill_share{0.06, 0.11};
};

struct FabricPreset {
  std::string name;
  std::string file;  // where it was loaded from
  std::string description;

  // Hardware as NCCL's model sees it. `gpus_per_host` GPUs share a host (an H100 node, a GB200 compute
  // tray); `nvlink_domain_gpus` GPUs share one NVLink domain, which NCCL counts as one node.
  model::GpuArch arch = model::GpuArch::kHopper;
  int gpus_per_host = 8;
  int nvlink_domain_gpus = 8;
  float nvlink_bw = 0.0f;
  float nic_bw = 0.0f;
  int nics_per_host = 0;
  int ring_channels = 16, nvls_channels = 16, collnet_channels = 16;
  bool nvls_support = true, collnet_support = false, nvswitch = true, tree_pattern_balanced = true;
  bool ll128_path_ok = true, cpu_amd = false, host_net_device = true;
  float latency_inter_us = 0.0f;

  std::vector<int> default_nodes;  // hosts per context in the default sweep

  // Measured plateaus relative to the model's bandwidth (fixed, from measurements).
  double ring_bw_scale_one_node = 1.0;    // Ring on one NVLink domain
  double ring_bw_scale_multi_node = 1.0;  // Ring/Tree across the network
  double nvls_bw_scale = 1.0;             // NVLS inside one NVLink domain (in-switch reduction)
  double nvls_tree_bw_scale = 1.0;        // NVLSTree across nodes
  double launch_overhead_us = 0.0;        // per-collective host overhead the model leaves out

  // Hidden deviations: ranges a seed draws from (physically motivated; see docs/simulator.md).
  Range channel_cap_error;        // per-arm bandwidth error, relative (+-)
  Range latency_error;            // per-arm latency error, relative (+-)
  Range ll_bw_scale;              // LL bandwidth across nodes vs model (llMaxBw is a per-CPU-family constant)
  Range ll128_bw_scale;           // LL128 bandwidth vs model (RoCE: the 128-byte store ordering stalls)
  Range ll128_lat_scale;          // LL128 latency vs model
  Range tree_congestion;          // Tree bandwidth / (1 + c * log2(nodes / tree_congestion_from * 2))
  int tree_congestion_from = 16;  // NCCL nodes at which up/down tree traffic starts to collide
  Range nvls_tree_overhead_us;    // NVLSTree latency added per log2(nodes) at >= nvls_tree_overhead_from
  int nvls_tree_overhead_from = 8;
  Range nvls_tree_bw_loss;  // NVLSTree bandwidth x (1 - d * log2(nodes / from)) at scale
  // A protocol slow path in a band of per-channel slice sizes (bytes / (ranks * ring channels)):
  // `slow_path_proto`, on every algorithm that runs it, loses bandwidth by a drawn factor when
  // |log2(slice) - center| <= width / 2. Being set by the slice, the band moves with scale.
  std::string slow_path_proto = "LL128";
  Range slow_path_slice_log2;
  double slow_path_width_log2 = 2.0;
  Range slow_path_bw_factor;
  int slow_path_from_nodes = 1;

  // Measurement noise: multiplicative log-normal with sigma = sigma_large + sigma_small / (1 +
  // bytes / small_bytes); with probability outlier_prob a sample is slowed by a Pareto factor.
  double sigma_large = 0.01, sigma_small = 0.03, small_bytes = 65536.0;
  double outlier_prob = 0.002, outlier_scale = 0.2, outlier_alpha = 1.5;

  ObservationModel observation;
  KnobParams knobs;

  // The simulated HiPIPE arm (optional [hipipe] table; `synth --hipipe`, docs/hipipe.md): the
  // data/hipipe preset whose dimensions and per-step latencies it uses (empty: no HiPIPE arm on
  // this fabric), and the measured per-NIC plateau relative to nic_bw for its scale-out dimensions.
  std::string hipipe_preset;
  double hipipe_nic_bw_scale = 1.0;

  // Where every value above comes from ([provenance]: "SECTION.KEY" = { basis, source }, one entry
  // per value of [hardware], [sweep], [truth], [deviations], [noise], [observation] and [hipipe];
  // docs/simulator.md "Where each number comes from"), in that section order, keys sorted.
  struct ValueSource {
    std::string key;    // "hardware.nvlink_bw"
    std::string value;  // as the file writes it: "370.8", "[0.0, 0.04]", "true", "\"LL128\""
    std::string basis;  // "measured", "derived" or "assumed"
    std::string source;
  };
  std::vector<ValueSource> provenance;
};

// The folder holding fabrics/*.toml: $NCCLBOT_DATA_DIR if set, else <source>/data.
std::string data_dir();
std::vector<std::string> fabric_names();            // names of the presets found in data_dir()/fabrics
FabricPreset load_fabric(const std::string& name);  // InputError (file:line: reason) on a bad file
FabricPreset load_fabric_file(const std::string& path);
// The same from the file's text (read with a size cap by load_fabric_file); `path` names it in errors.
FabricPreset parse_fabric(const std::string& text, const std::string& path);

// The communicator NCCL sees for `hosts` hosts of `gpus_per_host` GPUs on this fabric; hosts that share
// an NVLink domain form one NCCL node. UsageError if the GPUs do not fill whole domains.
// The simulator's range, stated rather than measured: messages up to 1 TiB per rank (above any
// GPU's memory) and clusters up to 65,536 hosts (above the largest published NCCL jobs).
inline constexpr uint64_t kLargestMessageBytes = uint64_t(1) << 40;
inline constexpr int kLargestHosts = 65536;

model::Topology topology_for(const FabricPreset& f, int hosts, int gpus_per_host);

}  // namespace ncclbot::sim
