#include "report/claim_tally.hpp"

namespace ncclbot::report {

ClaimTally& ClaimTally::operator+=(const ClaimTally& o) {
  tested += o.tested;
  agree += o.agree;
  disagree += o.disagree;
  inconclusive += o.inconclusive;
  calibrated += o.calibrated;
  calibrated_inside += o.calibrated_inside;
  untestable += o.untestable;
  return *this;
}

ClaimTally tally_claims(const nlohmann::json& claims) {
  ClaimTally n;
  for (const auto& c : claims) {
    const std::string verdict = c.at("verdict");
    if (verdict == "untestable") {
      ++n.untestable;
    } else if (c.at("basis") == "calibrated") {
      ++n.calibrated;
      n.calibrated_inside += verdict == "agree";
    } else {
      ++n.tested;
      n.agree += verdict == "agree";
      n.disagree += verdict == "disagree";
      n.inconclusive += verdict == "inconclusive";
    }
  }
  return n;
}

std::string tally_text(const ClaimTally& n, std::string_view tested_unit) {
  return std::to_string(n.agree) + " agree, " + std::to_string(n.disagree) + " disagree, " +
         std::to_string(n.inconclusive) + " inconclusive of " + std::to_string(n.tested) + " " +
         std::string(tested_unit);
}

}  // namespace ncclbot::report
