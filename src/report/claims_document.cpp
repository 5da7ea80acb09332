#include "report/claims_document.hpp"

#include <cmath>
#include <optional>
#include <string>
#include <tuple>

#include "report/number_format.hpp"
#include "study/study_statistics.hpp"

namespace ncclbot::report {
namespace {

using nlohmann::json;
using study::Claim;

struct Measured {
  std::vector<double> a, b;  // score-context losses of a and b over the claim's contexts
};

// The losses of policy `p` in scenario `si` on the contexts whose size is within the claim's range.
std::vector<double> claim_losses(const study::PreparedStudy& st, const std::vector<study::UnitResult>& units,
                                 const Claim& c, size_t si, int p) {
  const auto& sc = st.scenarios[si];
  const auto& losses = study::scored_losses(units[si * st.policies.size() + size_t(p)], st.spec.loss);
  std::vector<double> out;
  for (size_t i = 0; i < sc.score.size(); ++i) {
    const uint64_t bytes = sc.sweep->context(sc.score[i]).bytes;
    if (bytes >= c.min_bytes && bytes <= c.max_bytes) out.push_back(losses[i]);
  }
  return out;
}

bool direction_holds(const std::string& agrees_if, double a, double b) {
  if (agrees_if == "b_lower") return b < a;
  if (agrees_if == "b_higher") return b > a;
  return b <= a;  // b_not_higher
}

// One side's figure against the paper's: the measured value (a share for a count of contexts above
// 10%) and whether it lies within the band.
json figure(const Claim& c, const std::optional<double>& paper, double measured, size_t contexts) {
  if (!paper) return nullptr;
  const double value = c.metric == study::Metric::kAbove10pct ? measured / double(contexts) : measured;
  const bool within = std::fabs(value - *paper) <= c.band * std::fabs(*paper);
  return {{"paper", *paper}, {"measured", value}, {"within_band", within}};
}

// The row's verdict fields: whether it agrees, its basis, and the cause for that outcome.
json row(const Claim& c, const std::string& measured, json values, bool agrees, json figures) {
  json out = {{"claim", c.claim},
              {"paper", c.paper},
              {"measured", measured},
              {"values", std::move(values)},
              {"agrees", agrees},
              {"basis", c.basis == Claim::Basis::kTested ? "tested" : "calibrated"},
              {"why", agrees ? c.why_agree : c.why_disagree}};
  if (!figures.empty()) {
    out["band"] = c.band;
    out["figures"] = std::move(figures);
  }
  return out;
}

// A claim that no score context of the study can test: shown with the reason, neither agreeing nor
// disagreeing, and left out of the tally.
json untestable_row(const Claim& c, const std::string& reason) {
  return {{"claim", c.claim},
          {"paper", c.paper},
          {"measured", reason},
          {"values", nullptr},
          {"agrees", nullptr},
          {"untestable", reason},
          {"basis", c.basis == Claim::Basis::kTested ? "tested" : "calibrated"},
          {"why", reason}};
}

json evaluate(const study::PreparedStudy& st, const std::vector<study::UnitResult>& units,
              const study::SignificanceResult& sig, const Claim& c) {
  const std::string metric = study::metric_name(c.metric);
  json values;
  std::string measured;
  bool agrees = false;
  if (c.kind == Claim::Kind::kHypothesis) {
    for (const auto& h : sig.hypotheses) {
      if (h.spec.a != c.a || h.spec.b != c.b || h.spec.metric != c.metric) continue;
      values = {{"p", h.test.p},
                {"p_holm", h.p_holm},
                {"reject", h.reject},
                {"mean_diff", h.mean_diff},
                {"family", h.spec.family}};
      const std::string lower = h.mean_diff < 0.0 ? c.a : h.mean_diff > 0.0 ? c.b : "neither";
      measured = c.a + " vs " + c.b + " on " + metric + ": mean difference " +
                 metric_diff_text(metric, h.mean_diff) + ", p = " + p_value(h.test.p) +
                 ", Holm p = " + p_value(h.p_holm) + " (" + h.spec.family +
                 " family): " + (h.reject ? "rejected, " + lower + " lower" : std::string("not rejected"));
      // A rejection agrees only in the direction the paper states; a "no difference" claim only
      // when the test does not reject.
      if (c.agrees_if == "reject")
        agrees = h.reject && (c.direction == "a_lower" ? h.mean_diff < 0.0 : h.mean_diff > 0.0);
      else
        agrees = !h.reject;
    }
    return row(c, measured, values, agrees, json::object());
  }
  const int pa = study::policy_index(st, c.a), pb = study::policy_index(st, c.b);
  std::vector<double> pooled_a, pooled_b;
  int scenarios = 0, holds = 0;
  json per_scenario = json::array();
  for (size_t si = 0; si < st.scenarios.size(); ++si) {
    const std::string& name = st.scenarios[si].spec->name;
    if (!study::in_scenarios(c.scenarios, name)) continue;
    const auto la = claim_losses(st, units, c, si, pa), lb = claim_losses(st, units, c, si, pb);
    if (la.empty()) continue;
    pooled_a.insert(pooled_a.end(), la.begin(), la.end());
    pooled_b.insert(pooled_b.end(), lb.begin(), lb.end());
    const double va = study::metric_value(la, c.metric), vb = study::metric_value(lb, c.metric);
    ++scenarios;
    holds += direction_holds(c.agrees_if, va, vb);
    per_scenario.push_back({{"scenario", name}, {"a", va}, {"b", vb}});
  }
  if (pooled_a.empty())
    return untestable_row(c, "untestable: no score context of the claim's scenarios has a size in [" +
                                 std::to_string(c.min_bytes) + ", " + std::to_string(c.max_bytes) +
                                 "] bytes");
  const double va = study::metric_value(pooled_a, c.metric), vb = study::metric_value(pooled_b, c.metric);
  values = {
      {"metric", metric}, {"a", va}, {"b", vb}, {"contexts", pooled_a.size()}, {"scenarios", scenarios}};
  bool direction = false;
  if (c.kind == Claim::Kind::kPooled) {
    measured = c.a + " " + metric_text(metric, va) + " -> " + c.b + " " + metric_text(metric, vb) + " (" +
               metric + ", " + std::to_string(pooled_a.size()) + " contexts)";
    direction = direction_holds(c.agrees_if, va, vb);
  } else {
    values["per_scenario"] = per_scenario;
    values["holds_in"] = holds;
    const std::string dir = c.agrees_if == "b_lower"    ? "lower"
                            : c.agrees_if == "b_higher" ? "higher"
                                                        : "not higher";
    measured = c.b + " " + dir + " than " + c.a + " on " + metric + " in " + std::to_string(holds) + " of " +
               std::to_string(scenarios) + " scenarios (pooled " + metric_text(metric, va) + " vs " +
               metric_text(metric, vb) + ")";
    direction = holds == scenarios;
  }
  // The paper's figures, where it gives them, must be met within the band too.
  json figures = json::object();
  agrees = direction;
  for (const auto& [side, paper, value] : {std::tuple{"a", c.paper_a, va}, std::tuple{"b", c.paper_b, vb}}) {
    json f = figure(c, paper, value, pooled_a.size());
    if (f.is_null()) continue;
    agrees = agrees && f.at("within_band").get<bool>();
    figures[side] = std::move(f);
  }
  return row(c, measured, values, agrees, figures);
}

}  // namespace

json against_original(const study::PreparedStudy& study, const std::vector<study::UnitResult>& units,
                      const study::SignificanceResult& significance) {
  json out = json::array();
  for (const auto& c : study.spec.claims) out.push_back(evaluate(study, units, significance, c));
  return out;
}

}  // namespace ncclbot::report
