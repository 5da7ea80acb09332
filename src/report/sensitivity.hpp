#pragma once
// "Conclusions vs assumptions": a study run again under each of its [[variant]]s (docs/study.md,
// "Variants and sensitivity"). results.json's "sensitivity" holds one entry per run, the base
// run first as "baseline": the policies ranked by the study's objective over the pooled score
// contexts, and the primary family's Holm decisions. The report turns those entries into a table
// and one sentence per hypothesis saying whether its decision holds under every variant.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report/report_document.hpp"

namespace ncclbot::report {

// The figure file the figure script draws from "sensitivity" (figures/NAME).
inline constexpr const char* kSensitivityFigure = "sensitivity.png";

// One entry, from a run's results.json: {"variant", "folder", "knobs", "ranking", "objective",
// "primary": [{"id", "hypothesis", "a", "b", "metric", "mean_diff", "p_holm", "reject"}],
// "claims": [{"claim", "basis", "verdict"}] when the study has claims}.
// The primary family is the one named "primary", else the first one.
nlohmann::json sensitivity_entry(const nlohmann::json& results, const std::string& variant,
                                 const std::string& folder, const nlohmann::json& knobs);

// The section for report.md/report.html (`figure` is the figure's index entry, or null).
std::vector<Block> sensitivity_section(const nlohmann::json& results, const nlohmann::json& figure);

// One sentence for "What this says": how many primary decisions hold under every variant.
std::string sensitivity_summary(const nlohmann::json& results);

}  // namespace ncclbot::report
