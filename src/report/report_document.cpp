#include "report/report_document.hpp"

#include <map>

#include "report/claim_tally.hpp"
#include "report/claims_over_draws.hpp"
#include "report/number_format.hpp"
#include "report/sensitivity.hpp"
#include "study/study_spec.hpp"

namespace ncclbot::report {
namespace {

using nlohmann::json;

// The figure the verdict shows: each policy's mean loss per scenario (scripts/study_figures.py).
constexpr const char* kKeyFigure = "paired_bars_mean.png";

std::string with_interval(const json& m, const std::string& kind) {
  return metric_text(kind, m.at("estimate").get<double>()) + " [" +
         metric_text(kind, m.at("low").get<double>()) + ", " + metric_text(kind, m.at("high").get<double>()) +
         "]";
}

std::vector<std::string> metric_cells(const json& metrics) {
  return {with_interval(metrics.at("mean"), "loss"), with_interval(metrics.at("p99"), "loss"),
          with_interval(metrics.at("above_10pct"), "above_10pct"), with_interval(metrics.at("max"), "loss")};
}

std::string source_text(const json& src) {
  if (src.contains("preset"))
    return "synth " + src.at("preset").get<std::string>() + " seed " + src.at("seed").dump() +
           (src.value("hipipe", false) ? " with the HiPIPE arm" : "") +
           (src.contains("knobs") ? " with knob arms " + src.at("knobs").get<std::string>() : "") +
           (src.value("price", "") == "truth" ? ", priced at the simulator's true latencies" : "") +
           (src.value("observe", "") == "fresh" ? ", every call's latency drawn afresh" : "");
  return src.at("file").get<std::string>();
}

std::string context_set_text(const json& s) {
  std::string t = s.at("sweep").get<std::string>();
  if (s.contains("nodes")) {
    t += ", nodes";
    for (const auto& n : s.at("nodes")) t += " " + n.dump();
  }
  if (s.contains("collectives")) {
    t += ",";
    for (const auto& c : s.at("collectives")) t += " " + c.get<std::string>();
  }
  return t + " (" + s.at("contexts").dump() + " contexts)";
}

// The context-level McNemar beside an above_10pct hypothesis, "-" for the other metrics.
std::string context_level_text(const json& h) {
  if (!h.contains("context_level") || !h.at("context_level").is_object()) return "-";
  const json& c = h.at("context_level");
  return c.at("a_only").dump() + " / " + c.at("b_only").dump() + " (" + p_value(c.at("p").get<double>()) +
         ")";
}

std::string deployment_text(const json& st) {
  return st.contains("as_deployed") && st.at("as_deployed").is_string()
             ? "as deployed (the plugin's " + st.at("as_deployed").get<std::string>() + " mode)"
             : std::string("in the ideal world (no plugin cost, no feedback lag)");
}

// A pooled metric with its interval, a count of contexts above 10% as a share of them.
std::string share_with_interval(const json& m, double contexts) {
  return percent(m.at("estimate").get<double>() / contexts) + " [" +
         percent(m.at("low").get<double>() / contexts) + ", " +
         percent(m.at("high").get<double>() / contexts) + "]";
}

// The primary-family test of `policy` against AUTO on the mean, as a table cell.
std::string against_auto(const json& r, const std::string& policy) {
  for (const auto& h : r.at("hypotheses")) {
    if (h.at("family") != "primary" || h.at("metric") != "mean") continue;
    const bool a_side = h.at("a") == policy && h.at("b") == "AUTO",
               b_side = h.at("b") == policy && h.at("a") == "AUTO";
    if (!a_side && !b_side) continue;
    const std::string holm = "Holm p " + p_value(h.at("p_holm").get<double>());
    if (!h.at("reject").get<bool>()) return "no difference shown (" + holm + ")";
    const bool policy_lower = (h.at("mean_diff").get<double>() < 0.0) == a_side;
    return std::string(policy_lower ? "lower* (" : "higher* (") + holm + ")";
  }
  return "-";
}

// The report's first screen: a verdict of a few computed lines, the key figure and one summary
// table. Every sentence is built from results.json; none is written in advance.
std::vector<Block> verdict_section(const json& r, const json& figures) {
  std::vector<Block> out;
  const json& st = r.at("study");
  const json& pooled = r.at("pooled");
  out.push_back(heading(2, "Verdict"));
  std::vector<std::string> lines;
  const double contexts = pooled.empty() ? 0.0 : pooled[0].at("contexts").get<double>();
  lines.push_back("Online loss after " + st.at("horizon").dump() + " calls per context, scored " +
                  deployment_text(st) + ", over " + count(contexts) + " score contexts of " +
                  std::to_string(r.at("scenarios").size()) +
                  " scenarios (loss = latency of the pick / latency of the best arm - 1).");
  const json* best = nullptr;
  const json* nccl = nullptr;
  for (const auto& p : pooled) {
    if (!best || p.at("metrics").at("mean").at("estimate").get<double>() <
                     best->at("metrics").at("mean").at("estimate").get<double>())
      best = &p;
    if (p.at("policy") == "AUTO") nccl = &p;
  }
  if (best) {
    std::string line = "Lowest pooled mean loss: " + best->at("policy").get<std::string>() + ", " +
                       with_interval(best->at("metrics").at("mean"), "loss");
    if (nccl && nccl != best)
      line += "; AUTO (NCCL's own choice) " + with_interval(nccl->at("metrics").at("mean"), "loss");
    lines.push_back(line + ".");
  }
  for (const auto& f : r.at("families"))
    if (f.at("name") == "primary")
      lines.push_back("Primary family: " + f.at("rejected").dump() + " of " + f.at("size").dump() +
                      " hypotheses rejected after Holm at alpha = " + count(st.at("alpha").get<double>()) +
                      " (at most " + f.at("max_rejectable").dump() + " could be, with " +
                      f.at("scenarios").dump() + " scenarios; table \"Hypotheses\").");
  if (r.contains("sensitivity")) lines.push_back(sensitivity_summary(r));
  if (r.contains("against_original")) {
    const ClaimTally n = tally_claims(r.at("against_original"));
    const std::string own =
        tally_text(n) +
        (n.untestable > 0 ? ", " + std::to_string(n.untestable) + " untestable" : std::string());
    // With draws of the simulator the headline is the count over them; one draw is one of them.
    if (const std::string draws = claims_over_draws_headline(r); !draws.empty())
      lines.push_back("Against the original study, " + draws + "; on the study's own sweeps " + own +
                      " (section \"Against the original study\").");
    else
      lines.push_back("Against the original study: " + own + " (section \"Against the original study\").");
  }
  out.push_back(bullets(lines));
  for (const auto& f : figures)
    if (f.at("file") == kKeyFigure) out.push_back(figure_block(f));
  Block t = table_block(
      {"policy", "mean loss", "p99 loss", "share of contexts above 10%", "mean vs AUTO (primary family)"});
  for (const auto& p : pooled) {
    const json& m = p.at("metrics");
    t.rows.push_back({p.at("policy"), with_interval(m.at("mean"), "loss"), with_interval(m.at("p99"), "loss"),
                      share_with_interval(m.at("above_10pct"), p.at("contexts").get<double>()),
                      p.at("policy") == "AUTO" ? "-" : against_auto(r, p.at("policy"))});
  }
  out.push_back(t);
  out.push_back(paragraph("Intervals: " + count(st.at("level").get<double>() * 100) +
                          "% percentile bootstrap over contexts. * significant after Holm's correction. "
                          "The sections below have the detail."));
  return out;
}

// The "Inputs" section's bullets: the study file, program, seeds, scoring and statistics.
void report_inputs_bullets(std::vector<Block>& out, const json& r, const json& st, const std::string& level) {
  out.push_back(heading(2, "Inputs"));
  out.push_back(bullets({
      "study file: `study.toml` (copy of " + st.at("source").get<std::string>() + "), sha256 " +
          st.at("sha256").get<std::string>(),
      "program: ncclbot " + r.at("program").at("version").get<std::string>() + ", replay backend " +
          st.at("backend").get<std::string>() + " (requested " +
          st.at("backend_requested").get<std::string>() + ")",
      "master seed " + st.at("seed").dump() + "; " + st.at("seeds").dump() +
          " replay seeds per configuration and context; horizon " + st.at("horizon").dump() + " calls",
      (st.contains("as_deployed") && st.at("as_deployed").is_string()
           ? "scored as deployed, " + st.at("as_deployed").get<std::string>() +
                 " mode: every call pays the plugin's measured per-call cost (`call_cost_us` per policy in "
                 "results.json) and decisions see latencies as the plugin's do; " +
                 (st.contains("observation") && st.at("observation").is_string()
                      ? st.at("observation").get<std::string>() +
                            " (`watched` per score in results.json: the fraction of calls watched); "
                      : std::string())
           : "scored in the ideal world (`as_deployed = \"ideal\"`): no per-call cost; ") +
          "feedback delay " + st.value("delay", json(0)).dump() + " calls" +
          (st.value("window", 1) > 1
               ? ", decisions in windows of " + st.at("window").dump() +
                     " calls, each decided with the latencies from before `delay` calls "
                     "ahead of it (the plugin's leader protocol)"
               : std::string()) +
          (st.value("policy_start", 0) > 0
               ? "; the first " + st.at("policy_start").dump() +
                     " calls of every context are NCCL's own choice while the ranks' cost tables gather"
               : std::string()),
      "scored loss: " + st.at("loss").get<std::string>() +
          "; tuning objective: " + st.at("objective").get<std::string>() + " over the tune contexts",
      "alpha " + p_value(st.at("alpha").get<double>()) + "; bootstrap: percentile, " + level + ", " +
          st.at("bootstrap_resamples").dump() +
          " resamples; permutation: all 2^n sign vectors when n <= 30 scenarios (or 2^n <= " +
          st.at("permutation_resamples").dump() + "), else that many Monte Carlo draws",
  }));
}

// The "Inputs" section's tables: the sweeps, each preset's simulator inputs, and the scenarios.
void report_inputs_tables(std::vector<Block>& out, const json& r) {
  {
    Block t = table_block({"sweep", "source", "contexts", "samples", "sha256"});
    for (const auto& s : r.at("sweeps"))
      t.rows.push_back({s.at("name"), source_text(s.at("source")), s.at("contexts").dump(),
                        s.at("samples").dump(), s.at("sha256")});
    out.push_back(t);
  }
  for (const auto& p : r.value("presets", json::array())) {
    const std::string name = p.at("name").get<std::string>();
    out.push_back(paragraph("Simulator inputs of preset `" + name + "` (data/fabrics/" + name +
                            ".toml): every value, and where it comes from. Basis: *measured*, read off a "
                            "named measurement; *derived*, computed from named measurements or constants "
                            "(NCCL's source, a vendor's specification); *assumed*, a modelling choice that "
                            "no named measurement gives."));
    Block t = table_block({"value", "is", "basis", "source"});
    for (const auto& v : p.at("values")) {
      // The key is a named string: GCC 12's -Wrestrict misreads "`" + (a temporary string) once inlined.
      const std::string key = v.at("key").get<std::string>();
      t.rows.push_back({"`" + key + "`", v.at("value").get<std::string>(), v.at("basis").get<std::string>(),
                        v.at("source").get<std::string>()});
    }
    out.push_back(t);
  }
  {
    Block t = table_block({"scenario", "tuned on", "scored on"});
    for (const auto& s : r.at("scenarios"))
      t.rows.push_back({s.at("name"), context_set_text(s.at("tune")), context_set_text(s.at("score"))});
    out.push_back(t);
  }
}

// The "All scenarios pooled" section: each policy's metrics over every score context.
void report_pooled_section(std::vector<Block>& out, const json& r, const json& st, const std::string& level) {
  out.push_back(heading(2, "All scenarios pooled"));
  out.push_back(
      paragraph("Per policy, the " + st.at("loss").get<std::string>() + " loss after " +
                st.at("horizon").dump() + " calls per context, " +
                (st.contains("as_deployed") && st.at("as_deployed").is_string()
                     ? "as deployed (" + st.at("as_deployed").get<std::string>() + " mode)"
                     : std::string("in the ideal world")) +
                ", over every score context of every scenario, with " + level +
                " percentile bootstrap intervals over contexts. Loss = latency of the pick / latency of "
                "the best arm - 1."));
  Block t = table_block({"policy", "contexts", "mean", "p99", "above 10%", "max"});
  for (const auto& p : r.at("pooled")) {
    std::vector<std::string> row = {p.at("policy"), p.at("contexts").dump()};
    for (auto& c : metric_cells(p.at("metrics"))) row.push_back(c);
    t.rows.push_back(row);
  }
  out.push_back(t);
}

// The "Loss vs horizon" section: each policy's mean over the scenarios of its mean online loss at
// each horizon; absent when the study asked for no horizons.
void report_loss_vs_horizon_section(std::vector<Block>& out, const json& r, const json& st) {
  if (const json& lvh = st.value("loss_vs_horizon", json::object());
      lvh.is_object() && !lvh.value("horizons", json::array()).empty()) {
    const std::vector<int> horizons = lvh.at("horizons").get<std::vector<int>>();
    out.push_back(heading(2, "Loss vs horizon"));
    out.push_back(paragraph(
        "Mean online loss (what a job pays, exploration included) after each number of calls per context, "
        "each policy at its tuned configuration, " +
        std::string(st.contains("as_deployed") && st.at("as_deployed").is_string()
                        ? "scored as deployed (" + st.at("as_deployed").get<std::string>() + " mode)"
                        : "scored in the ideal world") +
        "; averaged over the scenarios, each over up to " + lvh.at("contexts_per_scenario").dump() +
        " evenly spaced score contexts and " + lvh.at("seeds").dump() +
        " seeds (one replay per context and seed at the longest horizon, read on the way)."));
    Block t = table_block({"policy"});
    for (int h : horizons) t.header.push_back(std::to_string(h) + " calls");
    for (const auto& p : r.at("policies")) {
      const std::string name = p.at("name");
      std::vector<double> sum(horizons.size(), 0.0);
      int n = 0;
      for (const auto& s : r.at("scores")) {
        if (s.at("policy") != name || s.value("loss_vs_horizon", json::array()).size() != horizons.size())
          continue;
        for (size_t h = 0; h < horizons.size(); ++h)
          sum[h] += s.at("loss_vs_horizon")[h].at("mean_online").get<double>();
        ++n;
      }
      if (n == 0) continue;
      std::vector<std::string> row = {name};
      for (double v : sum) row.push_back(percent(v / n));
      t.rows.push_back(row);
    }
    out.push_back(t);
  }
}

// The "Conservative promise" section: for each policy run @conservative, how many replays and seeds
// broke its budget (study.promise_check); absent when the study checked none.
void report_promise_section(std::vector<Block>& out, const json& r, const json& st) {
  const json& pc = st.value("promise_check", json());
  if (!pc.is_object()) return;
  Block t = table_block(
      {"policy", "alpha", "replays that broke it", "scenario seeds that broke it", "earliest break (call)"});
  for (const auto& p : r.at("policies")) {
    const std::string name = p.at("name");
    int64_t replays = 0, broken = 0, seeds = 0, seeds_broken = 0, first = 0;
    double alpha = 0.0;
    bool any = false;
    for (const auto& s : r.at("scores")) {
      if (s.at("policy") != name || !s.contains("promise")) continue;
      const json& c = s.at("promise");
      any = true;
      alpha = c.at("alpha").get<double>();
      replays += c.at("contexts").get<int64_t>() * c.at("seeds").get<int64_t>();
      broken += c.at("replays_broken").get<int64_t>();
      seeds += c.at("seeds").get<int64_t>();
      seeds_broken += c.at("seeds_broken").get<int64_t>();
      const int64_t f = c.at("first_break_call").get<int64_t>();
      if (f > 0) first = first == 0 ? f : std::min(first, f);
    }
    if (!any) continue;
    t.rows.push_back({name, count(alpha), count(double(broken)) + " of " + count(double(replays)),
                      count(double(seeds_broken)) + " of " + count(double(seeds)),
                      first > 0 ? count(double(first)) : "none"});
  }
  if (t.rows.empty()) return;
  out.push_back(heading(2, "Conservative promise"));
  out.push_back(paragraph(
      "Each policy run @conservative promises that at every call its cumulative latency stays within 1 + "
      "alpha times what NCCL's default setting (AUTO's arm) would have cost, both at the arms' priced "
      "means. Checked on up to " +
      pc.at("contexts_per_scenario").dump() + " evenly spaced score contexts per scenario, " +
      pc.at("seeds").dump() + " seeds each, " + pc.at("horizon").dump() +
      " calls per replay; a scenario seed broke it when any of its contexts did."));
  out.push_back(t);
}

// The "Per scenario" section: one table of tuned configurations and metrics per scenario.
void report_per_scenario_section(std::vector<Block>& out, const json& r) {
  out.push_back(heading(2, "Per scenario"));
  for (const auto& sc : r.at("scenarios")) {
    out.push_back(heading(3, sc.at("name")));
    Block t = table_block({"policy", "tuned config", "mean", "p99", "above 10%", "max"});
    for (const auto& s : r.at("scores")) {
      if (s.at("scenario") != sc.at("name")) continue;
      std::vector<std::string> row = {s.at("policy"), s.at("config")};
      for (auto& c : metric_cells(s.at("metrics"))) row.push_back(c);
      t.rows.push_back(row);
    }
    out.push_back(t);
  }
}

// The "Hypotheses" section's opening: the method, and the table of families with their notes.
void report_hypothesis_families(std::vector<Block>& out, const json& r) {
  out.push_back(heading(2, "Hypotheses"));
  out.push_back(
      paragraph("Each test pairs the scenarios: the difference metric(a) - metric(b) per scenario, a "
                "two-sided sign-flip "
                "permutation test of its mean, then Holm's step-down correction within each family. Negative "
                "differences "
                "favour a."));
  Block t =
      table_block({"family", "size m", "scenarios n", "smallest attainable p", "max rejectable", "rejected"});
  for (const auto& f : r.at("families"))
    t.rows.push_back({f.at("name"), f.at("size").dump(), f.at("scenarios").dump(),
                      p_value(f.at("smallest_attainable_p").get<double>()), f.at("max_rejectable").dump(),
                      f.at("rejected").dump()});
  out.push_back(t);
  // What each family's size allows, in the findings' own words (a family that can reject nothing
  // says so).
  std::vector<std::string> notes;
  for (const auto& f : r.at("findings"))
    if (f.get<std::string>().rfind("Family '", 0) == 0) notes.push_back(f);
  if (!notes.empty()) out.push_back(bullets(notes));
}

// The "Hypotheses" section's table of every test, one row per hypothesis.
void report_hypothesis_table(std::vector<Block>& out, const json& r) {
  Block t = table_block({"#", "family", "a vs b", "metric", "mean diff", "a lower / higher / equal", "p",
                         "test", "Holm p", "significant", "contexts > 10%: a only / b only (McNemar p)"});
  for (const auto& h : r.at("hypotheses")) {
    const std::string metric = h.at("metric");
    const std::string test = h.at("exact").get<bool>()
                                 ? "exact, " + h.at("sign_vectors").dump() + " sign vectors"
                                 : "Monte Carlo, " + h.at("sign_vectors").dump() + " draws";
    t.rows.push_back(
        {h.at("id").dump(), h.at("family"),
         h.at("a").get<std::string>() + " vs " + h.at("b").get<std::string>(), metric,
         metric_diff_text(metric == "above_10pct" ? metric : "loss", h.at("mean_diff").get<double>()),
         h.at("a_better").dump() + " / " + h.at("b_better").dump() + " / " + h.at("ties").dump(),
         p_value(h.at("p").get<double>()), test, p_value(h.at("p_holm").get<double>()),
         h.at("reject").get<bool>() ? "yes" : "not significant", context_level_text(h)});
  }
  out.push_back(t);
}

// The "Against the original study" section: each published claim beside this study's number;
// absent when the study states no claims.
void report_against_original_section(std::vector<Block>& out, const json& r) {
  if (r.contains("against_original")) {
    const auto& claims = r.at("against_original");
    const ClaimTally n = tally_claims(claims);
    out.push_back(heading(2, "Against the original study"));
    out.push_back(paragraph(
        "Each published claim beside this study's own number, with a three-way verdict from the uncertainty "
        "of that number: a claim agrees when its interval lies wholly inside what the claim allows (the band "
        "around the original's figure, relative, default ±" +
        percent(study::kDefaultClaimBand) +
        "; the stated side of zero for a direction; the original's ratio for counts of contexts), disagrees "
        "when it lies wholly outside, and is inconclusive when it straddles the edge. A claim of a match or "
        "of no significant difference is an equivalence test against the margin the study file states; a "
        "claim that a test rejects agrees when this study's test rejects the same way. The column \"rule\" "
        "says which rule each row used. Tested claims: " +
        tally_text(n) + ". " +
        (n.calibrated > 0
             ? std::to_string(n.calibrated) +
                   " more restate numbers the simulator was fitted to (basis \"calibrated\"), each "
                   "checked against its calibration range: " +
                   std::to_string(n.calibrated_inside) + " inside it; shown, not counted."
             : std::string()) +
        (n.untestable > 0 ? std::string(n.calibrated > 0 ? " " : "") + std::to_string(n.untestable) +
                                " untestable (the column \"why\" says why): shown, not counted."
                          : std::string())));
    Block t = table_block({"claim", "original study", "this study", "intervals against what the claim allows",
                           "basis", "verdict", "rule", "why"});
    for (const auto& c : claims) {
      std::string parts;
      if (c.contains("parts"))
        for (const auto& p : c.at("parts"))
          parts += (parts.empty() ? "" : "; ") + p.at("text").get<std::string>();
      std::string why = c.at("why");
      if (c.contains("conjecture"))
        why += " Conjecture, not computed: " + c.at("conjecture").get<std::string>();
      t.rows.push_back({c.at("claim"), c.at("paper"), c.at("measured"), parts.empty() ? "-" : parts,
                        c.at("basis"), c.at("verdict"), c.at("rule"), why});
    }
    out.push_back(t);
  }
}

// The "Tuned hyperparameters" section: per policy, the configurations chosen and how often.
void report_tuned_section(std::vector<Block>& out, const json& r, const json& st) {
  out.push_back(heading(2, "Tuned hyperparameters"));
  out.push_back(
      paragraph("Each grid point is replayed on the tune contexts; the one with the lowest " +
                st.at("objective").get<std::string>() +
                " (ties: lower mean, then grid order) is frozen and scored. Per policy, the configurations "
                "chosen and in how many scenarios."));
  Block t = table_block({"policy", "spec", "grid size", "chosen (scenarios)"});
  for (const auto& p : r.at("policies")) {
    std::map<std::string, int> chosen;
    std::vector<std::string> order;
    for (const auto& s : r.at("scores")) {
      if (s.at("policy") != p.at("name")) continue;
      const std::string c = s.at("config");
      if (chosen[c]++ == 0) order.push_back(c);
    }
    std::string cell;
    for (const auto& c : order)
      cell += (cell.empty() ? "" : "; ") + c + " (" + std::to_string(chosen[c]) + ")";
    t.rows.push_back({p.at("name"), p.at("spec"), p.at("grid_size").dump(), cell});
  }
  out.push_back(t);
}

// The "Figures" section: every figure not already shown in the verdict or the sensitivity section.
void report_figures_section(std::vector<Block>& out, const json& r, const json& figures,
                            const std::string& figures_note) {
  out.push_back(heading(2, "Figures"));
  if (figures.empty()) out.push_back(paragraph("No figures: " + figures_note));
  for (const auto& f : figures) {
    if (r.contains("sensitivity") && f.at("file") == kSensitivityFigure) continue;
    if (f.at("file") == kKeyFigure) continue;  // at the top, in the verdict
    out.push_back(figure_block(f));
  }
}

// The "Recomputing the numbers" section: the commands that recompute a few numbers from results.json.
void report_recompute_section(std::vector<Block>& out) {
  out.push_back(heading(2, "Recomputing the numbers"));
  out.push_back(paragraph(
      "Every number above is in results.json together with its inputs; `ncclbot stats` recomputes it (see "
      "docs/study.md). For example, the first hypothesis, Holm's correction of the first family, and the "
      "mean's "
      "interval of the first scenario's first policy:"));
  out.push_back(code(
      "jq '.hypotheses[0].recompute.input' results.json | ncclbot stats permutation\n"
      "jq '.families[0].recompute.input' results.json | ncclbot stats holm\n"
      "jq '.scores[0] | .metrics.mean.recompute + {x: .losses}' results.json | ncclbot stats bootstrap"));
}

}  // namespace

Block heading(int level, std::string text) {
  Block b;
  b.kind = Block::Kind::kHeading;
  b.level = level;
  b.text = std::move(text);
  return b;
}
Block paragraph(std::string text) {
  Block b;
  b.text = std::move(text);
  return b;
}
Block bullets(std::vector<std::string> items) {
  Block b;
  b.kind = Block::Kind::kBullets;
  b.items = std::move(items);
  return b;
}
Block code(std::string text) {
  Block b;
  b.kind = Block::Kind::kCode;
  b.text = std::move(text);
  return b;
}
Block table_block(std::vector<std::string> header) {
  Block b;
  b.kind = Block::Kind::kTable;
  b.header = std::move(header);
  return b;
}
Block figure(std::string file, std::string caption) {
  Block b;
  b.kind = Block::Kind::kFigure;
  b.file = std::move(file);
  b.text = std::move(caption);
  return b;
}

Block figure_block(const json& entry) {
  return figure("figures/" + entry.at("file").get<std::string>(), entry.at("caption").get<std::string>());
}

std::vector<Block> build_report(const json& r, const json& figures, const std::string& figures_note) {
  std::vector<Block> out;
  const json& st = r.at("study");
  const std::string level = count(st.at("level").get<double>() * 100) + "%";
  out.push_back(heading(1, "ncclbot study: " + st.at("name").get<std::string>()));
  if (!st.at("description").get<std::string>().empty()) out.push_back(paragraph(st.at("description")));

  for (auto& b : verdict_section(r, figures)) out.push_back(std::move(b));

  report_inputs_bullets(out, r, st, level);
  report_inputs_tables(out, r);
  report_pooled_section(out, r, st, level);
  report_loss_vs_horizon_section(out, r, st);
  report_promise_section(out, r, st);
  report_per_scenario_section(out, r);
  report_hypothesis_families(out, r);
  report_hypothesis_table(out, r);
  report_against_original_section(out, r);
  for (Block& b : claims_over_draws_section(r)) out.push_back(std::move(b));

  // The study under its variants, with its figure here rather than among the others.
  nlohmann::json sensitivity_figure;
  for (const auto& f : figures)
    if (f.at("file") == kSensitivityFigure) sensitivity_figure = f;
  if (r.contains("sensitivity"))
    for (auto& b : sensitivity_section(r, sensitivity_figure)) out.push_back(std::move(b));

  report_tuned_section(out, r, st);
  report_figures_section(out, r, figures, figures_note);
  report_recompute_section(out);
  return out;
}

}  // namespace ncclbot::report
