#pragma once
// The scorecard's tally (docs/study.md "Claims"): tested claims counted by verdict; calibrated rows
// (by verdict against their calibration range) and untestable rows are shown, not counted. One rule
// for one run's claims (results.json "against_original") and for the count over draws of the
// simulator (report/claims_over_draws.hpp).
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace ncclbot::report {

struct ClaimTally {
  int tested = 0, agree = 0, disagree = 0, inconclusive = 0;
  int calibrated = 0, calibrated_inside = 0, untestable = 0;
  ClaimTally& operator+=(const ClaimTally& o);
};

// Of rows with "verdict" and "basis".
ClaimTally tally_claims(const nlohmann::json& claims);

// "7 agree, 5 disagree, 3 inconclusive of 15 " + `tested_unit` ("tested claims", "(claim, draw) pairs").
std::string tally_text(const ClaimTally& n, std::string_view tested_unit = "tested claims");

}  // namespace ncclbot::report
