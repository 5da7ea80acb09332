#pragma once
// `synth` as a library call (cli/replay_call.hpp has the pattern): a forced-arm sweep from a fabric
// preset (docs/simulator.md), typed options in, the sweep out, written to `out` when one is named;
// no printing.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "ncclbot/core/sweep.hpp"
#include "ncclbot/sim/simulator.hpp"

namespace ncclbot::cli {

struct SynthCallOptions {
  std::string fabric;
  uint64_t seed = sim::kDefaultSeed;
  std::string out;                 // the sweep CSV to write (and its side file); empty: none
  std::string nodes, collectives;  // as the command line gives them: "4,8", "allreduce"; empty: defaults
  int samples = 5;
  uint64_t min_bytes = 8, max_bytes = uint64_t(8) << 30;
  std::optional<int> gpus_per_node;  // nullopt: the preset's
  bool hipipe = false;
  std::string observation = "on", drift = "on", first_use = "on", warmup = "on";
  double noise_scale = 1.0;
  std::optional<double> shift_rate, shift_size, shift_arm_size;  // nullopt: the preset's
  std::optional<std::string> knobs;  // a knob spec, or @FILE holding one; nullopt: algorithm x protocol arms
  std::string deviations = "structured";
  double independent_sigma = sim::kIndependentSigma, adversarial_gain = sim::kAdversarialGain;
  double deviation_scale = 1.0;
};

struct SynthCallResult {
  std::string fabric;  // the preset's name
  uint64_t seed = 0;
  bool observation = true;
  std::string out;  // where it was written; empty: nowhere
  Sweep sweep;
};

// UsageError naming the option on a bad value; InputError on an unknown fabric or an unreadable
// @FILE of knobs.
SynthCallResult synth_call(const SynthCallOptions& options);

// The JSON document `synth --json` prints.
nlohmann::json synth_document(const SynthCallResult& result);

}  // namespace ncclbot::cli
