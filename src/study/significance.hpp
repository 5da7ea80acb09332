#pragma once
// The study's hypotheses tested over scenarios: for each (a, b, metric) the per-scenario
// differences metric(a) - metric(b) on the score contexts, a two-sided paired sign-flip permutation
// test of their mean, and Holm's correction over each family of hypotheses actually tested.
#include <string>
#include <vector>

#include "study/prepared_study.hpp"
#include "study/study_statistics.hpp"
#include "study/unit_result.hpp"

namespace ncclbot::study {

struct HypothesisResult {
  Hypothesis spec;
  std::vector<std::string> scenarios;             // the scenarios it pairs, in study order
  std::vector<double> a_values, b_values, diffs;  // per scenario, in study order
  double mean_diff = 0;
  int a_better = 0, b_better = 0, ties = 0;  // scenarios where a's metric is lower / higher / equal
  double smallest_p = 1;  // the floor of this test: zero differences never help, so it uses the nonzero ones
  uint64_t seed = 0;
  int resamples = 0;
  PermutationOutcome test;
  double p_holm = 1;
  bool reject = false;
  // For above_10pct: the context-level view the original study quoted ("19 contexts against 1"),
  // over all score contexts of all scenarios: contexts above 10% under a only, under b only, and
  // the exact McNemar p. Contexts of one scenario are not independent units, so this is reported
  // beside the scenario-level test, outside any Holm family.
  bool has_context_level = false;
  long long a_only = 0, b_only = 0;
  double context_p = 1;
};

struct FamilyResult {
  std::string name;
  std::vector<int> members;  // indices into the hypothesis list
  int size = 0;              // hypotheses with a p-value (Holm's m)
  double smallest_p = 1;     // smallest attainable two-sided p with this many scenarios
  int max_rejectable = 0;    // how many Holm could ever reject at alpha given that floor
  int rejected = 0;
  int scenarios = 0;  // the most scenarios any member pairs (all of them unless filtered)
};

struct SignificanceResult {
  std::vector<HypothesisResult> hypotheses;
  std::vector<FamilyResult> families;  // in order of first appearance
};

// `units` is scenario-major: units[s * policies + p].
SignificanceResult test_hypotheses(const PreparedStudy& study, const std::vector<UnitResult>& units);

// The per-context losses the study scores (online or final) of one unit.
const std::vector<double>& scored_losses(const UnitResult& u, LossKind kind);

}  // namespace ncclbot::study
