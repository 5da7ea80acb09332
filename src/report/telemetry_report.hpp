#pragma once
// The telemetry report (`ncclbot telemetry`, docs/ope.md): the blocks of report.md and report.html
// built from telemetry.json alone (ope/telemetry.hpp), so every number in it can be recomputed.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report/report_document.hpp"

namespace ncclbot::report {

std::vector<Block> build_telemetry_report(const nlohmann::json& telemetry,
                                          const std::vector<std::string>& logs, const nlohmann::json& figures,
                                          const std::string& figures_note);

}  // namespace ncclbot::report
