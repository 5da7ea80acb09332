// `ncclbot synth`: a forced-arm sweep from a fabric preset (see docs/simulator.md).
#include <CLI/CLI.hpp>
#include <array>
#include <cctype>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/command.hpp"
#include "ncclbot/core/command_streams.hpp"
#include "ncclbot/core/context_filter.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/io/output_file.hpp"
#include "ncclbot/io/sweep_csv.hpp"
#include "ncclbot/sim/knob_sweep.hpp"
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
  std::string knobs;  // a knob spec, or @FILE holding one; empty: algorithm x protocol arms only
  std::string deviations = "structured";
  double independent_sigma = sim::kIndependentSigma, adversarial_gain = sim::kAdversarialGain;
  double deviation_scale = 1.0;
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
  CLI::Option* knobs = nullptr;
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
  SynthOptionHandles handles{
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
  handles.knobs = app.add_option(
      "--knobs", opt.knobs,
      "cross each algorithm and protocol with channel and chunk values, e.g. "
      "'channels=0,8,16;chunk=0,64K,1M' (chunk.LL=, chunk.LL128=, chunk.Simple= for one protocol), or "
      "@FILE holding such a spec (docs/simulator.md, \"Knob model\")");
  app.add_option("--deviations", opt.deviations,
                 "where the truth's errors against the cost model come from: structured (the preset's "
                 "mechanisms), independent (a log-normal factor per context and arm) or adversarial (the "
                 "model's pick slowed by its confidence); docs/simulator.md \"Deviation models\"")
      ->capture_default_str();
  app.add_option("--independent-sigma", opt.independent_sigma, "sigma of --deviations independent, in [0, 2]")
      ->capture_default_str();
  app.add_option("--adversarial-gain", opt.adversarial_gain, "gain of --deviations adversarial, in [0, 100]")
      ->capture_default_str();
  app.add_option("--deviation-scale", opt.deviation_scale,
                 "strength of --deviations structured: 0 none, 1 the preset's, in [0, 4]; errors scale with "
                 "it, factors are raised to its power (docs/simulator.md \"Deviation strength\")")
      ->capture_default_str();
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
  o.deviations = sim::parse_deviation_model(opt.deviations);
  o.independent_sigma = opt.independent_sigma;
  o.adversarial_gain = opt.adversarial_gain;
  o.deviation_scale = opt.deviation_scale;
  return o;
}

// The --knobs value: the spec itself, or @FILE whose lines are its items ('#' starts a comment).
std::string knob_spec_text(const std::string& value) {
  if (value.empty()) throw UsageError("--knobs: empty (give a spec such as channels=0,8;chunk=0,64K)");
  if (value[0] != '@') return value;
  const std::string path = value.substr(1);
  std::string text, joined;
  try {
    text = read_input_file(path, kMaxConfigBytes);
  } catch (const InputError& e) {
    throw UsageError(std::string("--knobs: ") + e.what());
  }
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    line = line.substr(0, line.find('#'));
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.front()))) line.erase(0, 1);
    if (!line.empty()) joined += (joined.empty() ? "" : ";") + line;
  }
  if (joined.empty()) throw UsageError("--knobs " + value + ": the file holds no knob values");
  return joined;
}

// Synthesizes the sweep, writes it and reports what was written.
int run_synth(const SynthCliOptions& opt, bool knobs) {
  const sim::FabricPreset f = sim::load_fabric(opt.fabric);
  const sim::SynthOptions o = synth_options_from(opt);
  const Sweep sweep =
      knobs ? sim::synthesize_knobs(f, o, parse_knob_spec(knob_spec_text(opt.knobs))) : sim::synthesize(f, o);
  write_sweep_csv(sweep, opt.out);
  command_err() << "synth: " << f.name << " seed " << o.seed << ": " << sweep.num_contexts() << " contexts x "
                << sweep.samples() << " samples -> " << opt.out << "\n";
  if (opt.json)
    command_out() << nlohmann::json{{"fabric", f.name},
                                    {"seed", o.seed},
                                    {"contexts", sweep.num_contexts()},
                                    {"samples", sweep.samples()},
                                    {"observation", o.observation},
                                    {"knob_arms", !sweep.slot_shaped()},
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
    return run_synth(*opt, handles.knobs->count() > 0);
  };
}

const bool registered =
    register_command({"synth", "generate a forced-arm sweep from a fabric preset", setup});

}  // namespace synth_command
}  // namespace ncclbot::cli
