#include "report/claim_verdict.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ncclbot::report {

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::kAgree:
      return "agree";
    case Verdict::kDisagree:
      return "disagree";
    case Verdict::kInconclusive:
      return "inconclusive";
  }
  return "inconclusive";
}

Verdict interval_verdict(double low, double high, const Region& allowed) {
  if (low >= allowed.low && high <= allowed.high) return Verdict::kAgree;
  if (high < allowed.low || low > allowed.high) return Verdict::kDisagree;
  return Verdict::kInconclusive;
}

Region band_region(double figure, double band) {
  const double half = band * std::fabs(figure);
  return {figure - half, figure + half};
}

Region direction_region(bool b_lower) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  // Strictly on one side: an interval that reaches 0 does not show the direction.
  return b_lower ? Region{-inf, -std::numeric_limits<double>::denorm_min()}
                 : Region{std::numeric_limits<double>::denorm_min(), inf};
}

Region side_of(const Region& r, double pivot, bool below) {
  if (below)
    return {r.low, std::min(r.high, std::nextafter(pivot, -std::numeric_limits<double>::infinity()))};
  return {std::max(r.low, std::nextafter(pivot, std::numeric_limits<double>::infinity())), r.high};
}

Verdict combine(const std::vector<Verdict>& parts) {
  bool all_agree = true;
  for (Verdict v : parts) {
    if (v == Verdict::kDisagree) return Verdict::kDisagree;
    all_agree = all_agree && v == Verdict::kAgree;
  }
  return all_agree ? Verdict::kAgree : Verdict::kInconclusive;
}

Verdict equivalence_verdict(const EquivalenceResult& r, double margin, double alpha, bool one_sided) {
  if ((one_sided ? r.p_upper : r.p) < alpha) return Verdict::kAgree;
  if (r.low > margin || (!one_sided && r.high < -margin)) return Verdict::kDisagree;
  return Verdict::kInconclusive;
}

}  // namespace ncclbot::report
