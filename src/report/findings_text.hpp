#pragma once
// The "what this says" paragraph, generated from results.json alone, so every number it quotes is
// in that file. It names the significant differences and says plainly which are not significant,
// and when the number of scenarios makes significance impossible.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ncclbot::report {

// `results` must hold study, pooled, hypotheses and families (findings itself is not read).
std::vector<std::string> findings_text(const nlohmann::json& results);

}  // namespace ncclbot::report
