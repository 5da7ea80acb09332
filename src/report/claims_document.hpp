#pragma once
// results.json "against_original": each [[claim]] of the study (a published finding) beside the
// number this study measured for it, whether the two agree in the direction the claim states, and
// the likely cause when they do not (study_spec.hpp, Claim).
#include <nlohmann/json.hpp>
#include <vector>

#include "study/prepared_study.hpp"
#include "study/significance.hpp"
#include "study/unit_result.hpp"

namespace ncclbot::report {

// [{"claim", "paper", "measured", "values", "agrees", "why"}, ...]; `units` is scenario-major. A
// claim no score context matches, or one of basis "untestable", has "agrees": null and "untestable" (the
// reason) instead.
nlohmann::json against_original(const study::PreparedStudy& study,
                                const std::vector<study::UnitResult>& units,
                                const study::SignificanceResult& significance);

}  // namespace ncclbot::report
