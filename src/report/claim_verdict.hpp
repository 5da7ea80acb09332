#pragma once
// The three-way verdict of a claim against this study's numbers (docs/study.md "Claims"): a claim
// agrees only when the uncertainty of what was measured lies wholly inside what the claim allows,
// disagrees when it lies wholly outside, and is inconclusive when it straddles the edge.
#include <vector>

#include "ncclbot/stats/equivalence_test.hpp"

namespace ncclbot::report {

enum class Verdict { kAgree, kDisagree, kInconclusive };

// "agree", "disagree", "inconclusive".
const char* verdict_name(Verdict v);

// What a claim allows for one statistic: the closed range [low, high] (either end may be infinite).
struct Region {
  double low, high;
};

// The interval [low, high] against a region: inside it, agree; no point in common, disagree;
// otherwise inconclusive.
Verdict interval_verdict(double low, double high, const Region& allowed);

// The region of a figure within a relative band: [figure (1 - band), figure (1 + band)].
Region band_region(double figure, double band);

// The region a difference b - a must lie in for "b lower" (below 0) or "b higher" (above 0).
Region direction_region(bool b_lower);

// A region cut to one side of `pivot` (exclusive): below it when `below`, else above it. A ratio
// claimed to fall keeps only the part of its band under 1, and one claimed to rise the part above.
Region side_of(const Region& r, double pivot, bool below);

// The parts of one claim together: agree when every part agrees, disagree when any part disagrees,
// otherwise inconclusive.
Verdict combine(const std::vector<Verdict>& parts);

// A claim of equivalence within a margin (TOST; `one_sided` for "no worse than", the upper test
// alone): agree when its test rejects at alpha, i.e. the (1 - 2 alpha) interval is inside the margin;
// disagree when that interval lies wholly beyond the margin; otherwise inconclusive.
Verdict equivalence_verdict(const EquivalenceResult& r, double margin, double alpha, bool one_sided);

}  // namespace ncclbot::report
