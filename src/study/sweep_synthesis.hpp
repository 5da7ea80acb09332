#pragma once
// The seam to the fabric simulator: a [[sweep]] with a preset becomes a synthesised sweep.
#include "ncclbot/core/sweep.hpp"
#include "study/study_spec.hpp"

namespace ncclbot::study {

// Errors (unknown preset, bad options) name the study file and the [[sweep]] line.
Sweep synthesise_sweep(const SweepSource& source, const std::string& study_path);

}  // namespace ncclbot::study
