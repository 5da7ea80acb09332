#include "cli/synth_call.hpp"

#include <cctype>
#include <sstream>

#include "ncclbot/core/context_filter.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/io/output_file.hpp"
#include "ncclbot/io/sweep_csv.hpp"
#include "ncclbot/sim/knob_sweep.hpp"

namespace ncclbot::cli {
namespace {

bool on_off(const std::string& value, const char* option) {
  if (value == "on") return true;
  if (value == "off") return false;
  throw UsageError(std::string(option) + " must be on or off, not '" + value + "'");
}

// Usage errors of the options given with an out-of-range value.
void check_synth_call(const SynthCallOptions& o) {
  const struct {
    const char* name;
    const std::optional<double>& value;
    const char* range;
  } shifts[] = {{"--shift-rate", o.shift_rate, "[0, 0.5)"},
                {"--shift-size", o.shift_size, "[0, 0.9)"},
                {"--shift-arm-size", o.shift_arm_size, "[0, 0.9)"}};
  for (const auto& shift : shifts)
    if (shift.value && !(*shift.value >= 0.0))
      throw UsageError(std::string(shift.name) + " must be in " + shift.range);
  // 0 means "the preset's" only when the option is left out; given, it must be a real count.
  if (o.gpus_per_node && *o.gpus_per_node < 1)
    throw UsageError("--gpus-per-node " + std::to_string(*o.gpus_per_node) +
                     ": must be at least 1 (leave it out for the preset's)");
}

// The simulator's options from the call's.
sim::SynthOptions simulator_options(const SynthCallOptions& opt) {
  sim::SynthOptions o;
  o.seed = opt.seed;
  if (!opt.nodes.empty()) o.nodes = parse_node_list(opt.nodes, "--nodes");
  if (!opt.collectives.empty()) o.collectives = parse_collective_list(opt.collectives, "--collectives");
  o.samples = opt.samples;
  o.min_bytes = opt.min_bytes;
  o.max_bytes = opt.max_bytes;
  o.gpus_per_node = opt.gpus_per_node.value_or(0);
  o.hipipe = opt.hipipe;
  o.observation = on_off(opt.observation, "--observation");
  o.drift = on_off(opt.drift, "--drift");
  o.first_use = on_off(opt.first_use, "--first-use");
  o.warmup = on_off(opt.warmup, "--warmup");
  o.noise_scale = opt.noise_scale;
  o.shift_rate = opt.shift_rate.value_or(-1.0);  // negative: the preset's
  o.shift_size = opt.shift_size.value_or(-1.0);
  o.shift_arm_size = opt.shift_arm_size.value_or(-1.0);
  o.deviations = sim::parse_deviation_model(opt.deviations);
  o.independent_sigma = opt.independent_sigma;
  o.adversarial_gain = opt.adversarial_gain;
  o.deviation_scale = opt.deviation_scale;
  return o;
}

// The knob spec: the value itself, or @FILE whose lines are its items ('#' starts a comment).
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

}  // namespace

SynthCallResult synth_call(const SynthCallOptions& opt) {
  check_synth_call(opt);
  const sim::FabricPreset f = sim::load_fabric(opt.fabric);
  const sim::SynthOptions o = simulator_options(opt);
  SynthCallResult r;
  r.sweep = opt.knobs ? sim::synthesize_knobs(f, o, parse_knob_spec(knob_spec_text(*opt.knobs)))
                      : sim::synthesize(f, o);
  if (!opt.out.empty()) write_sweep_csv(r.sweep, opt.out);
  r.fabric = f.name;
  r.seed = o.seed;
  r.observation = o.observation;
  r.out = opt.out;
  return r;
}

nlohmann::json synth_document(const SynthCallResult& r) {
  return {{"fabric", r.fabric},
          {"seed", r.seed},
          {"contexts", r.sweep.num_contexts()},
          {"samples", r.sweep.samples()},
          {"observation", r.observation},
          {"knob_arms", !r.sweep.slot_shaped()},
          {"out", r.out}};
}

}  // namespace ncclbot::cli
