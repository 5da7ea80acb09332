#include "ncclbot/sim/knob_sweep.hpp"

#include <algorithm>
#include <optional>

#include "ncclbot/core/error.hpp"
#include "ncclbot/sim/knob_model.hpp"

namespace ncclbot::sim {
namespace {

// The knob arms of `slot`: the spec's crossing, with NCCL's own setting first whether listed or not.
std::vector<Arm> arms_of_slot(const KnobSpec& spec, int slot) {
  std::vector<Arm> arms = {Arm::of_slot(slot)};
  if (slot == kHiPipeSlot) return arms;
  for (const Arm& a : knob_arms(spec, slot))
    if (!a.default_knobs()) arms.push_back(a);
  return arms;
}

}  // namespace

Sweep synthesize_knobs(const FabricPreset& f, const SynthOptions& options, const KnobSpec& spec) {
  if (options.deviations != DeviationModel::kStructured)
    throw UsageError(
        std::string("deviations = \"") + deviation_model_name(options.deviations) +
        "\" holds for algorithm x protocol sweeps only; a knob sweep keeps the structured deviations");
  if (options.deviation_scale != 1.0)
    throw UsageError("deviations: a knob sweep keeps the structured deviations at the preset's strength");
  const Sweep base = synthesize(f, options);
  const KnobSimulator knobs(with_observation_options(f, options), options.seed);
  SweepBuilder builder("--knobs");
  for (int c = 0; c < base.num_contexts(); ++c) {
    const Context& ctx = base.context(c);
    const auto base_arms = base.arms(c);
    for (int i = 0; i < int(base_arms.size()); ++i) {
      std::optional<float> prior;
      if (base.has_prior()) prior = base.arm_prior(c, i);
      for (const Arm& arm : arms_of_slot(spec, base_arms[size_t(i)].slot())) {
        const double mean = arm.default_knobs() ? 0.0 : knobs.mean_us(ctx, arm);
        for (int r = 0; r < base.samples(); ++r) {
          const float t =
              arm.default_knobs() ? base.arm_sample(c, i, r) : float(knobs.sample_us(ctx, arm, r, mean));
          builder.add(ctx, arm, r, t, prior, 0);
        }
      }
    }
  }
  Sweep sweep = builder.build();
  sweep.set_dynamics(base.dynamics());
  return sweep;
}

}  // namespace ncclbot::sim
