#pragma once
// Computing one unit: replay every grid point of the policy on the scenario's tune contexts, pick
// the best by the study's objective, freeze it, and score it on the score contexts (plus the
// online loss at each horizon of the learning curve).
#include <functional>
#include <vector>

#include "study/prepared_study.hpp"
#include "study/unit_result.hpp"

namespace ncclbot::study {

struct EngineOptions {
  std::string backend = "cpu";  // already resolved
  int threads = 0;
};

UnitResult compute_unit(const PreparedStudy& study, const WorkUnit& unit, const EngineOptions& engine);

// Several units at once, each with the bytes compute_unit() gives it: the units of one scenario
// share one replay job per phase (all their grids on the tune contexts, all their chosen configs
// on the score contexts, and again at each shorter horizon of the learning curve), so a device
// backend runs a few large launches per scenario instead of a few small ones per unit.
// done(k, result) receives units[k]'s result as its scenario finishes.
void compute_units_together(const PreparedStudy& study, const std::vector<const WorkUnit*>& units,
                            const EngineOptions& engine,
                            const std::function<void(size_t, UnitResult&&)>& done);

// The units of a run or a run-units rank, as its backend does them best: together on the CUDA
// backend (checkpoints as each scenario finishes), one at a time on the CPU (its job per unit
// already fills the cores, and a killed run loses at most one unit). done(k, result) as above.
void compute_units(const PreparedStudy& study, const std::vector<const WorkUnit*>& units,
                   const EngineOptions& engine, const std::function<void(size_t, UnitResult&&)>& done);

}  // namespace ncclbot::study
