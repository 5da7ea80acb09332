#pragma once
// Computing one unit: replay every grid point of the policy on the scenario's tune contexts, pick
// the best by the study's objective, freeze it, and score it on the score contexts (plus the
// online loss at each horizon of the learning curve).
#include "study/prepared_study.hpp"
#include "study/unit_result.hpp"

namespace ncclbot::study {

struct EngineOptions {
  std::string backend = "cpu";  // already resolved
  int threads = 0;
};

UnitResult compute_unit(const PreparedStudy& study, const WorkUnit& unit, const EngineOptions& engine);

}  // namespace ncclbot::study
