// `ncclbot synth`: a forced-arm sweep from a fabric preset (see docs/simulator.md).
#include <CLI/CLI.hpp>
#include <array>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "ncclbot/core/context_filter.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/io/sweep_csv.hpp"
#include "ncclbot/sim/simulator.hpp"

namespace ncclbot::cli {
namespace synth_command {

struct SynthCliOptions {
  std::string fabric;
  uint64_t seed = sim::kDefaultSeed;
  std::string out;
  bool json = false;
  std::string nodes, collectives;
  int samples = 5;
  uint64_t min_bytes = 8, max_bytes = uint64_t(8) << 30;
  int gpus_per_node = 0;
  bool hipipe = false;
  std::string observation = "on", drift = "on", first_use = "on", warmup = "on";
  double noise_scale = 1.0;
  double shift_rate = -1.0, shift_size = -1.0, shift_arm_size = -1.0;
};

bool on_off(const std::string& value, const char* option) {
  if (value == "on") return true;
  if (value == "off") return false;
  throw UsageError(std::string(option) + " must be on or off, not '" + value + "'");
}

// One --shift-* option, the value it sets and the range a given value must be in.
struct ShiftOption {
  CLI::Option* option;
  const double* value;
  const char* range;
};

// The registered options whose presence (not only value) the validation needs.
struct SynthOptionHandles {
  CLI::Option* gpus;
  std::array<ShiftOption, 3> shifts;
};

// Declares synth's options on `app`, in --help order, bound to `opt`.
SynthOptionHandles add_synth_options(CLI::App& app, SynthCliOptions& opt) {
  app.add_option("--fabric", opt.fabric,
                 "fabric preset: h100-ib-a, h100-ib-b, h100-roce, gb200-mnnvl, gb200-ib")
      ->required();
  app.add_option("--seed", opt.seed, "seed of the hidden deviations and the noise")->capture_default_str();
  app.add_option("--out", opt.out, "sweep CSV to write")->required();
  app.add_option("--nodes", opt.nodes, "host counts, e.g. 4,8,16,32 (default: the preset's)");
  app.add_option("--collectives", opt.collectives, "default allreduce,allgather,reducescatter");
  app.add_option("--samples", opt.samples, "samples per arm")->capture_default_str();
  app.add_option("--min-bytes", opt.min_bytes, "smallest size (powers of two from here)")
      ->capture_default_str();
  app.add_option("--max-bytes", opt.max_bytes, "largest size")->capture_default_str();
  CLI::Option* gpus =
      app.add_option("--gpus-per-node", opt.gpus_per_node, "GPUs per host (default: the preset's)");
  app.add_flag("--hipipe", opt.hipipe,
               "add the simulated HiPIPE/Simple arm to multi-dimension all-reduce contexts (docs/hipipe.md)");
  app.add_option("--observation", opt.observation,
                 "on: the preset's per-call observation model (docs/simulator.md); off: the [noise]-only "
                 "sweep of before, bit for bit")
      ->capture_default_str();
  app.add_option("--noise-scale", opt.noise_scale, "multiplies the call-to-call cv and the spike probability")
      ->capture_default_str();
  app.add_option("--drift", opt.drift, "level shifts on or off")->capture_default_str();
  app.add_option("--first-use", opt.first_use, "an algorithm's one-time first-use cost on or off")
      ->capture_default_str();
  app.add_option("--warmup", opt.warmup, "job and arm warm-up on or off")->capture_default_str();
  // Each left out keeps the preset's (the value stays -1); given, it must be a real size or rate.
  const SynthOptionHandles handles{
      gpus,
      {{
          {app.add_option("--shift-rate", opt.shift_rate, "level shifts per call (default: the preset's)"),
           &opt.shift_rate, "[0, 0.5)"},
          {app.add_option("--shift-size", opt.shift_size,
                          "half-width of the level all arms share, e.g. 0.2 (default: the preset's)"),
           &opt.shift_size, "[0, 0.9)"},
          {app.add_option(
               "--shift-arm-size", opt.shift_arm_size,
               "half-width of each arm's own part of its level, which can change the best arm (default: "
               "the preset's)"),
           &opt.shift_arm_size, "[0, 0.9)"},
      }}};
  app.add_flag("--json", opt.json, "print one JSON document on stdout");
  return handles;
}

// Usage errors of the options given with an out-of-range value.
void check_synth_options(const SynthCliOptions& opt, const SynthOptionHandles& handles) {
  for (const auto& shift : handles.shifts)
    if (shift.option->count() > 0 && !(*shift.value >= 0.0))
      throw UsageError(shift.option->get_name() + " must be in " + shift.range);
  // 0 means "the preset's" only when the option is left out; given, it must be a real count.
  if (handles.gpus->count() > 0 && opt.gpus_per_node < 1)
    throw UsageError("--gpus-per-node " + std::to_string(opt.gpus_per_node) +
                     ": must be at least 1 (leave it out for the preset's)");
}

// The simulator's options from the command line's.
sim::SynthOptions synth_options_from(const SynthCliOptions& opt) {
  sim::SynthOptions o;
  o.seed = opt.seed;
  if (!opt.nodes.empty()) o.nodes = parse_node_list(opt.nodes, "--nodes");
  if (!opt.collectives.empty()) o.collectives = parse_collective_list(opt.collectives, "--collectives");
  o.samples = opt.samples;
  o.min_bytes = opt.min_bytes;
  o.max_bytes = opt.max_bytes;
  o.gpus_per_node = opt.gpus_per_node;
  o.hipipe = opt.hipipe;
  o.observation = on_off(opt.observation, "--observation");
  o.drift = on_off(opt.drift, "--drift");
  o.first_use = on_off(opt.first_use, "--first-use");
  o.warmup = on_off(opt.warmup, "--warmup");
  o.noise_scale = opt.noise_scale;
  o.shift_rate = opt.shift_rate;
  o.shift_size = opt.shift_size;
  o.shift_arm_size = opt.shift_arm_size;
  return o;
}

// Synthesizes the sweep, writes it and reports what was written.
int run_synth(const SynthCliOptions& opt) {
  const sim::FabricPreset f = sim::load_fabric(opt.fabric);
  const sim::SynthOptions o = synth_options_from(opt);
  const Sweep sweep = sim::synthesize(f, o);
  write_sweep_csv(sweep, opt.out);
  std::cerr << "synth: " << f.name << " seed " << o.seed << ": " << sweep.num_contexts() << " contexts x "
            << sweep.samples() << " samples -> " << opt.out << "\n";
  if (opt.json)
    std::cout << nlohmann::json{{"fabric", f.name},
                                {"seed", o.seed},
                                {"contexts", sweep.num_contexts()},
                                {"samples", sweep.samples()},
                                {"observation", o.observation},
                                {"out", opt.out}}
                     .dump(2)
              << "\n";
  return 0;
}

Action setup(CLI::App& app) {
  auto opt = std::make_shared<SynthCliOptions>();
  const SynthOptionHandles handles = add_synth_options(app, *opt);
  return [opt, handles] {
    check_synth_options(*opt, handles);
    return run_synth(*opt);
  };
}

const bool registered =
    register_command({"synth", "generate a forced-arm sweep from a fabric preset", setup});

}  // namespace synth_command
}  // namespace ncclbot::cli
