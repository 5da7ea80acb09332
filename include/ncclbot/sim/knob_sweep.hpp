#pragma once
// `synth --knobs`: a forced-arm sweep whose arms cross every measured algorithm and protocol with the
// channel and chunk values of a KnobSpec, timed by the knob model (sim/knob_model.hpp).
#include "ncclbot/core/sweep.hpp"
#include "ncclbot/core/knob_spec.hpp"
#include "ncclbot/sim/simulator.hpp"

namespace ncclbot::sim {

// The algorithm x protocol sweep `synthesize(f, options)` writes, widened to knob arms: each of its
// arms with NCCL's own knobs keeps its samples bit for bit (it is always an arm, listed or not), every
// other knob setting of the spec is drawn from the knob model with the same observation options, and
// every knob arm of a slot carries the slot's prior (the cost model does not see knobs). The
// simulated HiPIPE arm stays one arm, and the call dynamics are the base sweep's. An InputError
// (source "--knobs") when a context would hold more arms than a sweep may (kMaxArmsPerContext).
Sweep synthesize_knobs(const FabricPreset& f, const SynthOptions& options, const KnobSpec& spec);

}  // namespace ncclbot::sim
