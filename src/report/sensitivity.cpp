#include "report/sensitivity.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

#include "report/number_format.hpp"
#include "study/study_variants.hpp"

namespace ncclbot::report {
namespace {

using nlohmann::json;

// A p-value as stored: NaN (written as null) marks an untested hypothesis.
double p_of(const json& x) {
  return x.is_number() ? x.get<double>() : std::numeric_limits<double>::quiet_NaN();
}

std::string objective_value_text(const std::string& objective, double v) {
  return metric_text(objective == "above_10pct" ? "above_10pct" : "loss", v);
}

const json* primary_family(const json& results) {
  const json& families = results.at("families");
  for (const auto& f : families)
    if (f.at("name") == "primary") return &f;
  return families.empty() ? nullptr : &families[0];
}

// What a run concluded about one hypothesis: which policy Holm finds better, or none.
std::string conclusion(const json& h) {
  if (!h.at("reject").get<bool>()) return "";
  return h.at(h.at("mean_diff").get<double>() < 0 ? "a" : "b").get<std::string>();
}

std::string conclusion_text(const json& h) {
  const std::string better = conclusion(h);
  return better.empty() ? "not rejected" : "rejected, " + better + " better";
}

std::string ranking_text(const json& ranking) {
  std::string s;
  for (const auto& p : ranking) s += (s.empty() ? "" : ", ") + p.get<std::string>();
  return s;
}

std::string run_name(const json& entry) {
  return entry.at("variant").get<std::string>();
}

// "UCB1 vs AUTO on mean loss: ...", whether the decision of the baseline is every variant's.
std::string hypothesis_sentence(const json& runs, size_t k) {
  const json& base = runs[0].at("primary")[k];
  const std::string label = base.at("a").get<std::string>() + " vs " + base.at("b").get<std::string>() +
                            " on " + metric_words(base.at("metric"));
  double lo = 1, hi = 0;
  std::vector<const json*> differ;
  for (const auto& run : runs) {
    const json& h = run.at("primary")[k];
    if (const double p = p_of(h.at("p_holm")); p == p) {
      lo = std::min(lo, p);
      hi = std::max(hi, p);
    }
    if (conclusion(h) != conclusion(base)) differ.push_back(&run);
  }
  const std::string range = lo == hi ? p_value(lo) : p_value(lo) + " to " + p_value(hi);
  if (differ.empty()) {
    if (conclusion(base).empty())
      return label + ": holds under every variant; Holm rejects it in no run (Holm p " + range + ").";
    return label + ": holds under every variant; Holm rejects it in every run, " + conclusion(base) +
           " better (Holm p " + range + ").";
  }
  std::string s = label + ": does not hold under every variant. Baseline: " + conclusion_text(base) +
                  " (Holm p " + p_value(p_of(base.at("p_holm"))) + "); it differs under ";
  for (size_t i = 0; i < differ.size(); ++i) {
    const json& h = differ[i]->at("primary")[k];
    s += (i == 0                   ? ""
          : i + 1 == differ.size() ? " and "
                                   : ", ") +
         run_name(*differ[i]) + " (" + conclusion_text(h) + ", Holm p " + p_value(p_of(h.at("p_holm"))) + ")";
  }
  return s + ".";
}

std::string ranking_sentence(const json& runs, const std::string& objective) {
  const json& base = runs[0].at("ranking");
  std::vector<std::string> changed;
  for (size_t i = 1; i < runs.size(); ++i)
    if (runs[i].at("ranking") != base)
      changed.push_back(run_name(runs[i]) + " (" + ranking_text(runs[i].at("ranking")) + ")");
  std::string s =
      "Ranking by pooled " + metric_words(objective) + " at baseline: " + ranking_text(base) + ". ";
  if (changed.empty()) return s + "It is the same under every variant.";
  s += "It changes under ";
  for (size_t i = 0; i < changed.size(); ++i)
    s += (i == 0 ? "" : i + 1 == changed.size() ? " and " : ", ") + changed[i];
  return s + ".";
}

size_t decisions_that_hold(const json& runs) {
  size_t n = 0;
  for (size_t k = 0; k < runs[0].at("primary").size(); ++k) {
    bool holds = true;
    for (const auto& run : runs)
      holds = holds && conclusion(run.at("primary")[k]) == conclusion(runs[0].at("primary")[k]);
    n += holds ? 1 : 0;
  }
  return n;
}

}  // namespace

json sensitivity_entry(const json& results, const std::string& variant, const std::string& folder,
                       const json& knobs) {
  const std::string objective = results.at("study").at("objective");
  const json& pooled = results.at("pooled");
  json values = json::object();
  std::vector<size_t> order(pooled.size());
  std::iota(order.begin(), order.end(), size_t(0));
  const auto estimate = [&](size_t i, const char* m) {
    return pooled[i].at("metrics").at(m).at("estimate").get<double>();
  };
  // Ties as the tuner breaks them: the lower mean, then the study's order.
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    const double ox = estimate(x, objective.c_str()), oy = estimate(y, objective.c_str());
    if (ox != oy) return ox < oy;
    return estimate(x, "mean") < estimate(y, "mean");
  });
  json ranking = json::array();
  for (size_t i : order) ranking.push_back(pooled[i].at("policy"));
  for (size_t i = 0; i < pooled.size(); ++i)
    values[pooled[i].at("policy").get<std::string>()] = estimate(i, objective.c_str());

  json primary = json::array();
  if (const json* family = primary_family(results))
    for (const auto& id : family->at("hypotheses")) {
      const json& h = results.at("hypotheses").at(id.get<size_t>() - 1);
      primary.push_back({{"id", h.at("id")},
                         {"hypothesis", h.at("a").get<std::string>() + " vs " + h.at("b").get<std::string>() +
                                            " " + h.at("metric").get<std::string>()},
                         {"a", h.at("a")},
                         {"b", h.at("b")},
                         {"metric", h.at("metric")},
                         {"mean_diff", h.at("mean_diff")},
                         {"p_holm", h.at("p_holm")},
                         {"reject", h.at("reject")}});
    }
  json entry = {
      {"variant", variant}, {"folder", folder},    {"knobs", knobs},    {"objective_metric", objective},
      {"ranking", ranking}, {"objective", values}, {"primary", primary}};
  // The claims' verdicts of this run, for the count over draws (report/claims_over_draws.hpp).
  if (results.contains("against_original")) {
    json claims = json::array();
    for (const auto& c : results.at("against_original"))
      claims.push_back({{"claim", c.at("claim")}, {"basis", c.at("basis")}, {"verdict", c.at("verdict")}});
    entry["claims"] = std::move(claims);
  }
  return entry;
}

std::vector<Block> sensitivity_section(const json& results, const json& figure) {
  std::vector<Block> out;
  const json& runs = results.at("sensitivity");
  if (runs.empty()) return out;
  const std::string objective = results.at("study").at("objective");
  const double alpha = results.at("study").at("alpha").get<double>();
  out.push_back(heading(2, "Conclusions vs assumptions"));
  out.push_back(paragraph(
      "The study was run again under each variant below, each changing only the simulator assumptions it "
      "names (docs/simulator.md, \"The observation model\"; `delay` is the feedback delay of every replay): "
      "the same sweep seeds, scenarios, policies, grids, replay seeds and hypotheses. Per run, each policy's "
      "rank and pooled " +
      metric_words(objective) +
      " (the tuning objective, over every score context, at the configuration tuned in that run), and for "
      "each hypothesis of the primary family whether Holm rejects it at alpha = " +
      p_value(alpha) +
      " (and in whose favour). Each variant is a complete run with its own report and results.json in its "
      "folder."));

  Block t = table_block({"run", "assumptions"});
  const json& base_primary = runs[0].at("primary");
  for (const auto& p : results.at("pooled")) t.header.push_back(p.at("policy").get<std::string>());
  for (const auto& h : base_primary)
    t.header.push_back("H" + h.at("id").dump() + " " + h.at("hypothesis").get<std::string>());
  for (const auto& run : runs) {
    const std::string folder = run.at("folder");
    std::vector<std::string> row = {run_name(run) + (folder == "." ? "" : " (`" + folder + "/`)"),
                                    study::knobs_text(run.at("knobs"))};
    const json& ranking = run.at("ranking");
    for (const auto& p : results.at("pooled")) {
      const std::string name = p.at("policy");
      const size_t rank = size_t(std::find(ranking.begin(), ranking.end(), name) - ranking.begin()) + 1;
      row.push_back(std::string("#") + std::to_string(rank) + " " +
                    objective_value_text(objective, run.at("objective").at(name).get<double>()));
    }
    for (const auto& h : run.at("primary")) {
      const std::string better = conclusion(h);
      row.push_back((better.empty() ? "no" : "yes, " + better) + " (" + p_value(p_of(h.at("p_holm"))) + ")");
    }
    t.rows.push_back(row);
  }
  out.push_back(t);

  Block sentences = bullets({ranking_sentence(runs, objective)});
  for (size_t k = 0; k < base_primary.size(); ++k) sentences.items.push_back(hypothesis_sentence(runs, k));
  out.push_back(sentences);

  if (figure.is_object()) out.push_back(figure_block(figure));
  return out;
}

std::string sensitivity_summary(const json& results) {
  const json& runs = results.at("sensitivity");
  const size_t m = runs.empty() ? 0 : runs[0].at("primary").size();
  std::string names;
  for (size_t i = 1; i < runs.size(); ++i) names += (i == 1 ? "" : ", ") + run_name(runs[i]);
  const size_t variants = runs.empty() ? 0 : runs.size() - 1;
  std::string s = "Under " + std::to_string(variants) + (variants == 1 ? " variant" : " variants") +
                  " of the study's assumptions (" + names + "), " +
                  std::to_string(decisions_that_hold(runs)) + " of " + std::to_string(m) +
                  " primary-family decisions hold in every run";
  const std::string best = runs[0].at("ranking").empty() ? "" : runs[0].at("ranking")[0].get<std::string>();
  bool same_best = true;
  for (const auto& run : runs)
    same_best = same_best && !run.at("ranking").empty() && run.at("ranking")[0] == best;
  if (!best.empty())
    s += same_best ? "; " + best + " ranks first in every run" : "; the best policy changes between runs";
  return s + " (section \"Conclusions vs assumptions\").";
}

}  // namespace ncclbot::report
