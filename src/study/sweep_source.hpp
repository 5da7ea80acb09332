#pragma once
// Producing the sweeps a study names: synthesised from a fabric preset and a seed (the simulator),
// or read from a sweep CSV. Both are deterministic, so a rerun sees the same bytes.
#include "ncclbot/core/sweep.hpp"
#include "study/study_spec.hpp"

namespace ncclbot::study {

// Errors name the study file and the line of the [[sweep]] table.
Sweep produce_sweep(const SweepSource& source, const std::string& study_path);

// A sweep holding the contexts of both (union); used when a scenario tunes on one sweep and scores
// on another. The two must have the same samples per arm and both or neither carry a prior.
Sweep merge_sweeps(const Sweep& a, const Sweep& b);

}  // namespace ncclbot::study
