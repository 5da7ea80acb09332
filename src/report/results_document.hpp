#pragma once
// results.json: every number the report shows, with what is needed to recompute it — the
// per-context losses behind each interval, the per-scenario differences behind each test, the
// seeds and resample counts, and the recorded inputs (study file digest, sweep digests, version).
#include <nlohmann/json.hpp>
#include <vector>

#include "study/prepared_study.hpp"
#include "study/significance.hpp"
#include "study/unit_result.hpp"

namespace ncclbot::report {

inline constexpr const char* kResultsSchema = "ncclbot-study-results/1";

// `units` is scenario-major (units[s * policies + p]).
nlohmann::json build_results(const study::PreparedStudy& study, const std::vector<study::UnitResult>& units,
                             const study::SignificanceResult& significance, const std::string& backend);

}  // namespace ncclbot::report
