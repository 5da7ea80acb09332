#pragma once
// The claims' verdicts counted over draws of the simulator (StudySpec::draws, docs/study.md
// "Draws"): the base run and its variants "draw 2" ... "draw N" each give every claim a verdict
// (results.json "sensitivity"[].claims); this counts, per claim, the draws on which it agrees,
// disagrees, is inconclusive or untestable, and the tally over every (tested claim, draw) pair.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report/report_document.hpp"

namespace ncclbot::report {

// From results.json's "sensitivity" (the baseline first): the entries that are draws (the baseline
// and each variant whose only knob is seed_offset), as
// {"draws": N, "claims": [{"claim", "basis", "agree", "disagree", "inconclusive", "untestable"}],
//  "tally": {"agree", "disagree", "inconclusive"}} over the tested claims. Null when no entry is a
// draw besides the baseline or the study has no claims.
nlohmann::json claims_over_draws(const nlohmann::json& sensitivity);

// "over 10 draws of the simulator: 59 agree, 31 disagree, 60 inconclusive of 150 (claim, draw)
// pairs", the report's headline; empty without "claims_over_draws".
std::string claims_over_draws_headline(const nlohmann::json& results);

// The report's paragraph and table for results.json's "claims_over_draws" (nothing without one).
std::vector<Block> claims_over_draws_section(const nlohmann::json& results);

}  // namespace ncclbot::report
