// A [[sweep]] with a preset: the fabric simulator (src/sim) with the preset file and the seed.
#include "study/sweep_synthesis.hpp"

#include "ncclbot/core/error.hpp"
#include "ncclbot/sim/fabric.hpp"
#include "ncclbot/sim/knob_sweep.hpp"
#include "ncclbot/sim/simulator.hpp"

namespace ncclbot::study {

Sweep synthesise_sweep(const SweepSource& source, const std::string& study_path) {
  sim::FabricPreset preset;
  try {
    preset = sim::load_fabric(source.preset);
  } catch (const InputError& e) {
    throw InputError(study_path, source.line, "sweep '" + source.name + "': " + e.what());
  } catch (const UsageError& e) {
    throw InputError(study_path, source.line, "sweep '" + source.name + "': " + e.what());
  }
  sim::SynthOptions o;
  o.seed = source.seed;
  o.nodes = source.nodes;
  if (!source.collectives.empty()) o.collectives = source.collectives;
  if (source.samples > 0) o.samples = source.samples;
  o.hipipe = source.hipipe;
  o.observation = source.observation;
  o.noise_scale = source.noise_scale;
  o.drift = source.drift;
  o.first_use = source.first_use;
  o.warmup = source.warmup;
  o.shift_rate = source.shift_rate;
  o.shift_size = source.shift_size;
  o.shift_arm_size = source.shift_arm_size;
  o.deviations = sim::parse_deviation_model(source.deviations);
  const auto synth = [&](const sim::SynthOptions& opt) {
    if (!source.knobs.empty()) return sim::synthesize_knobs(preset, opt, parse_knob_spec(source.knobs));
    return sim::synthesize(preset, opt);
  };
  try {
    Sweep sweep = synth(o);
    if (source.price_on_truth) {
      // The same contexts and arms with every sample at the true latency: the observation model on
      // with no noise (its call dynamics are not in the samples), one sample.
      sim::SynthOptions truth = o;
      truth.observation = true;
      truth.noise_scale = 0.0;
      truth.samples = 1;
      sweep.price_on(synth(truth));
      if (source.observe_afresh) sweep.observe_afresh(sim::fresh_observations(preset, o, sweep.contexts()));
    }
    return sweep;
  } catch (const InputError& e) {
    throw InputError(study_path, source.line, "sweep '" + source.name + "': " + e.what());
  } catch (const UsageError& e) {
    throw InputError(study_path, source.line, "sweep '" + source.name + "': " + e.what());
  }
}

}  // namespace ncclbot::study
