#include "report/claims_document.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <tuple>

#include "ncclbot/stats/equivalence_test.hpp"
#include "report/claim_verdict.hpp"
#include "report/number_format.hpp"
#include "study/study_statistics.hpp"

namespace ncclbot::report {
namespace {

using nlohmann::json;
using study::Claim;

// What one claim is measured on, and how its intervals are drawn.
struct ClaimInputs {
  const study::PreparedStudy& st;
  const Claim& c;
  size_t index;  // the claim's place in the study: its resampling seeds derive from it

  uint64_t seed(const std::string& part) const {
    return study::derived_seed(st.spec.seed, "claim/" + std::to_string(index) + "/" + part);
  }
  std::string level() const { return count(st.spec.level * 100) + "%"; }
};

// One part of a verdict: what was compared, its interval, what the claim allows, and the outcome.
struct Part {
  std::string what;
  double estimate, low, high;
  Region allowed;
  Verdict verdict;
  std::string unit;  // value_text's: a metric's name, "share", "ratio" or "p"
  std::string side;  // "a" or "b" for a side's figure, else empty
};

study::Statistic statistic_of(study::Metric m) {
  switch (m) {
    case study::Metric::kP99:
      return study::Statistic::kP99;
    case study::Metric::kAbove10pct:
      return study::Statistic::kAbove10pct;
    default:
      return study::Statistic::kMean;
  }
}

// A number of the claim's metric (or a plain ratio), printed; the largest double is "unbounded".
std::string value_text(const std::string& unit, double v) {
  if (std::isinf(v) || std::fabs(v) == std::numeric_limits<double>::max())
    return v > 0 ? "unbounded" : "-unbounded";
  if (std::fabs(v) < 1e-300) v = 0.0;  // the edge of a strict side of 0
  if (unit == "ratio") {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
  }
  if (unit == "p") return p_value(v);
  return unit == "share" ? percent(v) : metric_text(unit, v);
}

// What a part allows, in words: "below 0", "above 1.95", "[0.80%, 2.40%]".
std::string allowed_text(const Part& p) {
  if (std::isinf(p.allowed.low)) return "below " + value_text(p.unit, p.allowed.high);
  if (std::isinf(p.allowed.high)) return "above " + value_text(p.unit, p.allowed.low);
  return "[" + value_text(p.unit, p.allowed.low) + ", " + value_text(p.unit, p.allowed.high) + "]";
}

std::string part_text(const Part& p) {
  const std::string& u = p.unit;
  if (u == "p") return p.what + ": " + verdict_name(p.verdict);
  return p.what + " " + value_text(u, p.estimate) + " [" + value_text(u, p.low) + ", " +
         value_text(u, p.high) + "] against " + allowed_text(p) + ": " + verdict_name(p.verdict);
}

json part_json(const Part& p) {
  return {{"part", p.what},
          {"estimate", p.estimate},
          {"low", p.low},
          {"high", p.high},
          {"allowed", {p.allowed.low, p.allowed.high}},
          {"verdict", verdict_name(p.verdict)},
          {"text", part_text(p)}};
}

Part interval_part(std::string what, const study::Interval& iv, const Region& allowed, std::string unit,
                   std::string side = "") {
  return {std::move(what), iv.estimate,    iv.low,
          iv.high,         allowed,        interval_verdict(iv.low, iv.high, allowed),
          std::move(unit), std::move(side)};
}

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

// A and b over the claim's contexts, pooled and per scenario.
struct Gathered {
  std::vector<double> a, b;
  std::vector<std::tuple<std::string, std::vector<double>, std::vector<double>>> scenarios;
};

Gathered gather(const study::PreparedStudy& st, const std::vector<study::UnitResult>& units, const Claim& c) {
  const int pa = study::policy_index(st, c.a), pb = study::policy_index(st, c.b);
  Gathered g;
  for (size_t si = 0; si < st.scenarios.size(); ++si) {
    const std::string& name = st.scenarios[si].spec->name;
    if (!study::in_scenarios(c.scenarios, name)) continue;
    auto la = claim_losses(st, units, c, si, pa), lb = claim_losses(st, units, c, si, pb);
    if (la.empty()) continue;
    g.a.insert(g.a.end(), la.begin(), la.end());
    g.b.insert(g.b.end(), lb.begin(), lb.end());
    g.scenarios.emplace_back(name, std::move(la), std::move(lb));
  }
  return g;
}

const char* basis_name(const Claim& c) {
  return c.basis == Claim::Basis::kTested       ? "tested"
         : c.basis == Claim::Basis::kCalibrated ? "calibrated"
                                                : "untestable";
}

std::string range_text(const Region& r) {
  return "[" + percent(r.low) + ", " + (std::isinf(r.high) ? std::string("unbounded") : percent(r.high)) +
         "]";
}

// The verdict's rule in words, as the report prints it beside the row.
std::string rule_text(const ClaimInputs& in) {
  const Claim& c = in.c;
  const std::string iv = in.level() + " bootstrap interval";
  if (c.basis == Claim::Basis::kUntestable) return "none: the study file says why it cannot be tested";
  if (c.basis == Claim::Basis::kCalibrated)
    return "calibration: the " + iv + " of the fitted figure inside " +
           (c.range ? "the calibration range " + range_text({c.range->first, c.range->second})
                    : "the band of ±" + percent(c.band) + " around the original's");
  if (c.agrees_if == "not_reject" || c.agrees_if == "b_not_higher") {
    const bool two = c.agrees_if == "not_reject";
    return std::string(two ? "equivalence: two one-sided t-tests of the per-scenario differences"
                           : "non-inferiority: a one-sided t-test of the per-context differences b - a") +
           " at alpha " + count(in.st.spec.alpha) + " against a margin of " +
           value_text(study::metric_name(c.metric), *c.margin) + " (" + c.margin_reason + ")";
  }
  if (c.agrees_if == "reject")
    return "test: the study's sign-flip test after Holm at alpha " + count(in.st.spec.alpha) +
           "; rejected the stated way agrees, the other way disagrees, not rejected is inconclusive";
  if (c.paper_ratio)
    return "ratio: the " + iv + " of b's contexts above 10% over a's inside the original's ratio ±" +
           percent(c.band) + ", on its side of 1";
  std::string rule = "direction: the " + iv + " of b - a on the stated side of 0";
  if (c.kind == Claim::Kind::kEveryScenario) rule += " in every scenario";
  if (c.paper_a || c.paper_b)
    rule += "; figures: the " + iv + " inside ±" + percent(c.band) + " of the original's";
  return rule;
}

// One side's figure: the interval of its statistic over the claim's contexts (a share of them for a
// count of contexts above 10%) against what the claim allows.
Part figure_part(const ClaimInputs& in, const std::string& side, const std::vector<double>& losses,
                 const Region& allowed) {
  const Claim& c = in.c;
  study::Interval iv = study::bootstrap_interval(losses, statistic_of(c.metric), in.st.spec.level,
                                                 in.st.spec.bootstrap_resamples, in.seed(side));
  const bool share = c.metric == study::Metric::kAbove10pct;
  if (share)
    for (double* v : {&iv.estimate, &iv.low, &iv.high}) *v /= double(losses.size());
  return interval_part(side + " (" + (side == "a" ? c.a : c.b) + ")", iv, allowed,
                       share ? "share" : study::metric_name(c.metric), side);
}

// Each side the original gives a figure for: against the calibration range for a calibrated claim
// (the band when it states none), against the band otherwise.
void add_figure_parts(const ClaimInputs& in, const Gathered& g, std::vector<Part>& parts) {
  const Claim& c = in.c;
  for (const auto& [side, paper, losses] :
       {std::tuple{"a", c.paper_a, &g.a}, std::tuple{"b", c.paper_b, &g.b}}) {
    if (!paper) continue;
    const Region allowed = c.basis == Claim::Basis::kCalibrated && c.range
                               ? Region{c.range->first, c.range->second}
                               : band_region(*paper, c.band);
    parts.push_back(figure_part(in, side, *losses, allowed));
  }
}

// An equivalence part (TOST, or its upper test alone when `one_sided`) of paired differences against
// the claim's margin; fewer than two differences cannot be tested and stay inconclusive.
Part equivalence_part(const ClaimInputs& in, std::string what, const std::vector<double>& diffs,
                      bool one_sided) {
  const double m = *in.c.margin, alpha = in.st.spec.alpha;
  constexpr double inf = std::numeric_limits<double>::infinity();
  const Region allowed{one_sided ? -inf : -m, m};
  const std::string metric = study::metric_name(in.c.metric);
  if (diffs.size() < 2) {
    const double mean = diffs.empty() ? 0.0 : diffs[0];
    return {std::move(what), mean, -inf, inf, allowed, Verdict::kInconclusive, metric, ""};
  }
  const EquivalenceResult r = equivalence_test(diffs, m, alpha);
  return {std::move(what), r.mean, r.low, r.high, allowed, equivalence_verdict(r, m, alpha, one_sided),
          metric,          ""};
}

// A tested pooled claim's parts: the direction (or the ratio, or non-inferiority) and each figure.
std::vector<Part> pooled_parts(const ClaimInputs& in, const Gathered& g) {
  const Claim& c = in.c;
  const auto& s = in.st.spec;
  const std::string metric = study::metric_name(c.metric);
  const bool b_lower = c.agrees_if == "b_lower";
  std::vector<Part> parts;
  if (c.agrees_if == "b_not_higher") {
    std::vector<double> d(g.a.size());
    for (size_t i = 0; i < d.size(); ++i) d[i] = g.b[i] - g.a[i];
    parts.push_back(equivalence_part(in, "b - a", d, true));
  } else if (c.paper_ratio) {
    const auto iv =
        study::paired_ratio_above_interval(g.b, g.a, s.level, s.bootstrap_resamples, in.seed("ratio"));
    parts.push_back(
        interval_part("b / a", iv, side_of(band_region(*c.paper_ratio, c.band), 1.0, b_lower), "ratio"));
  } else {
    const auto iv = study::paired_difference_interval(g.b, g.a, statistic_of(c.metric), s.level,
                                                      s.bootstrap_resamples, in.seed("direction"));
    parts.push_back(interval_part("b - a", iv, direction_region(b_lower), metric));
  }
  add_figure_parts(in, g, parts);
  return parts;
}

// An every-scenario claim's parts: the direction's interval in each scenario.
std::vector<Part> every_scenario_parts(const ClaimInputs& in, const Gathered& g) {
  std::vector<Part> parts;
  const auto& s = in.st.spec;
  for (const auto& [name, la, lb] : g.scenarios) {
    const auto iv = study::paired_difference_interval(lb, la, statistic_of(in.c.metric), s.level,
                                                      s.bootstrap_resamples, in.seed("scenario/" + name));
    parts.push_back(interval_part(name + ": b - a", iv, direction_region(in.c.agrees_if == "b_lower"),
                                  study::metric_name(in.c.metric)));
  }
  return parts;
}

// The row: the verdict of its parts, the rule, and the cause printed for that outcome (for an
// inconclusive row, the parts that straddled the edge).
json row(const ClaimInputs& in, const std::string& measured, json values, const std::vector<Part>& parts,
         json figures) {
  const Claim& c = in.c;
  std::vector<Verdict> verdicts;
  json parts_json = json::array();
  std::string open;
  for (const auto& p : parts) {
    verdicts.push_back(p.verdict);
    parts_json.push_back(part_json(p));
    if (p.verdict == Verdict::kInconclusive) open += (open.empty() ? "" : "; ") + part_text(p);
  }
  const Verdict v = combine(verdicts);
  json out = {{"claim", c.claim},
              {"paper", c.paper},
              {"measured", measured},
              {"values", std::move(values)},
              {"verdict", verdict_name(v)},
              {"agrees", v == Verdict::kInconclusive ? json(nullptr) : json(v == Verdict::kAgree)},
              {"rule", rule_text(in)},
              {"parts", std::move(parts_json)},
              {"basis", basis_name(c)},
              {"why", v == Verdict::kAgree      ? c.why_agree
                      : v == Verdict::kDisagree ? c.why_disagree
                                                : "Inconclusive: " + open + "."}};
  if (c.range) out["range"] = {c.range->first, c.range->second};
  if (!c.conjecture.empty()) out["conjecture"] = c.conjecture;
  if (!figures.empty()) {
    out["band"] = c.band;
    out["figures"] = std::move(figures);
  }
  return out;
}

// A claim that no score context of the study can test: shown with the reason, neither agreeing nor
// disagreeing, and left out of the tally.
json untestable_row(const ClaimInputs& in, const std::string& reason) {
  return {{"claim", in.c.claim},       {"paper", in.c.paper}, {"measured", reason},   {"values", nullptr},
          {"verdict", "untestable"},   {"agrees", nullptr},   {"untestable", reason}, {"rule", rule_text(in)},
          {"basis", basis_name(in.c)}, {"why", reason}};
}

// The part a hypothesis claim's verdict rests on: the Holm decision, or the equivalence test.
Part hypothesis_part(const ClaimInputs& in, const study::HypothesisResult& h) {
  const Claim& c = in.c;
  if (c.agrees_if == "reject") {
    const bool a_lower = h.mean_diff < 0.0;
    const Verdict v = !h.reject                               ? Verdict::kInconclusive
                      : a_lower == (c.direction == "a_lower") ? Verdict::kAgree
                                                              : Verdict::kDisagree;
    const std::string what =
        "Holm p " + p_value(h.p_holm) +
        (h.reject ? ", rejected with " + (a_lower ? c.a : c.b) + " lower" : ", not rejected");
    return {what, h.p_holm, h.p_holm, h.p_holm, {0.0, in.st.spec.alpha}, v, "p", ""};
  }
  return equivalence_part(in, "a - b", h.diffs, false);
}

json evaluate_hypothesis(const ClaimInputs& in, const study::SignificanceResult& sig) {
  const Claim& c = in.c;
  const std::string metric = study::metric_name(c.metric);
  for (const auto& h : sig.hypotheses) {
    if (h.spec.a != c.a || h.spec.b != c.b || h.spec.metric != c.metric) continue;
    const Part part = hypothesis_part(in, h);
    json values = {{"p", h.test.p},
                   {"p_holm", h.p_holm},
                   {"reject", h.reject},
                   {"mean_diff", h.mean_diff},
                   {"family", h.spec.family}};
    const std::string lower = h.mean_diff < 0.0 ? c.a : h.mean_diff > 0.0 ? c.b : "neither";
    std::string measured =
        c.a + " vs " + c.b + " on " + metric + ": mean difference " + metric_diff_text(metric, h.mean_diff) +
        ", p = " + p_value(h.test.p) + ", Holm p = " + p_value(h.p_holm) + " (" + h.spec.family +
        " family): " + (h.reject ? "rejected, " + lower + " lower" : std::string("not rejected"));
    if (c.margin) {
      const EquivalenceResult r =
          h.diffs.size() < 2 ? EquivalenceResult{} : equivalence_test(h.diffs, *c.margin, in.st.spec.alpha);
      values["equivalence"] = {{"margin", *c.margin},  {"p", r.p},     {"p_lower", r.p_lower},
                               {"p_upper", r.p_upper}, {"low", r.low}, {"high", r.high}};
      measured += "; equivalence within " + value_text(metric, *c.margin) + ": TOST p = " + p_value(r.p);
    }
    return row(in, measured, values, {part}, json::object());
  }
  return untestable_row(in, "untestable: the study has no test of " + c.a + " vs " + c.b + " on " + metric);
}

// The figures block of a pooled row: the original's figure beside the measured interval.
json figures_json(const Claim& c, const std::vector<Part>& parts) {
  json figures = json::object();
  for (const auto& p : parts)
    if (!p.side.empty())
      figures[p.side] = {{"paper", p.side == "a" ? *c.paper_a : *c.paper_b},
                         {"measured", p.estimate},
                         {"low", p.low},
                         {"high", p.high},
                         {"verdict", verdict_name(p.verdict)}};
  return figures;
}

json evaluate(const ClaimInputs& in, const std::vector<study::UnitResult>& units,
              const study::SignificanceResult& sig) {
  const Claim& c = in.c;
  if (c.basis == Claim::Basis::kUntestable) return untestable_row(in, "untestable: " + c.untestable);
  if (c.kind == Claim::Kind::kHypothesis) return evaluate_hypothesis(in, sig);
  const std::string metric = study::metric_name(c.metric);
  const Gathered g = gather(in.st, units, c);
  if (g.a.empty())
    return untestable_row(in, "untestable: no score context of the claim's scenarios has a size in [" +
                                  std::to_string(c.min_bytes) + ", " + std::to_string(c.max_bytes) +
                                  "] bytes");
  const double va = study::metric_value(g.a, c.metric), vb = study::metric_value(g.b, c.metric);
  json values = {
      {"metric", metric}, {"a", va}, {"b", vb}, {"contexts", g.a.size()}, {"scenarios", g.scenarios.size()}};
  std::string measured = c.a + " " + metric_text(metric, va) + " -> " + c.b + " " + metric_text(metric, vb) +
                         " (" + metric + ", " + std::to_string(g.a.size()) + " contexts)";
  std::vector<Part> parts;
  if (c.basis == Claim::Basis::kCalibrated)
    add_figure_parts(in, g, parts);
  else if (c.kind == Claim::Kind::kPooled)
    parts = pooled_parts(in, g);
  else
    parts = every_scenario_parts(in, g);
  if (c.kind == Claim::Kind::kEveryScenario) {
    json per_scenario = json::array();
    int holds = 0;
    for (const auto& [name, la, lb] : g.scenarios) {
      const double sa = study::metric_value(la, c.metric), sb = study::metric_value(lb, c.metric);
      holds += c.agrees_if == "b_lower" ? sb < sa : sb > sa;
      per_scenario.push_back({{"scenario", name}, {"a", sa}, {"b", sb}});
    }
    values["per_scenario"] = per_scenario;
    values["holds_in"] = holds;
    measured = c.b + (c.agrees_if == "b_lower" ? " lower" : " higher") + " than " + c.a + " on " + metric +
               " in " + std::to_string(holds) + " of " + std::to_string(g.scenarios.size()) +
               " scenarios (pooled " + metric_text(metric, va) + " vs " + metric_text(metric, vb) + ")";
  }
  return row(in, measured, values, parts, figures_json(c, parts));
}

}  // namespace

json against_original(const study::PreparedStudy& study, const std::vector<study::UnitResult>& units,
                      const study::SignificanceResult& significance) {
  json out = json::array();
  for (size_t i = 0; i < study.spec.claims.size(); ++i)
    out.push_back(evaluate(ClaimInputs{study, study.spec.claims[i], i}, units, significance));
  return out;
}

}  // namespace ncclbot::report
