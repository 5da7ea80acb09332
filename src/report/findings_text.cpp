#include "report/findings_text.hpp"

#include <algorithm>

#include "report/number_format.hpp"

namespace ncclbot::report {
namespace {

using nlohmann::json;

std::string pooled_sentence(const json& pooled_row, const json& results) {
  const json& m = pooled_row.at("metrics");
  const auto iv = [&](const char* k) {
    const json& x = m.at(k);
    const std::string kind = std::string(k) == "above_10pct" ? "above_10pct" : "loss";
    return metric_text(kind, x.at("estimate").get<double>()) + " [" +
           metric_text(kind, x.at("low").get<double>()) + ", " +
           metric_text(kind, x.at("high").get<double>()) + "]";
  };
  return pooled_row.at("policy").get<std::string>() + " over all " +
         std::to_string(pooled_row.at("contexts").get<long>()) + " score contexts of the " +
         std::to_string(results.at("scenarios").size()) + " scenarios: mean loss " + iv("mean") + ", p99 " +
         iv("p99") + ", contexts above 10% " + iv("above_10pct") + " (" +
         count(results.at("study").at("level").get<double>() * 100) + "% bootstrap intervals).";
}

std::string hypothesis_sentence(const json& h, double alpha) {
  const std::string a = h.at("a"), b = h.at("b"), metric = h.at("metric");
  const int S = int(h.at("diffs").size());
  std::string s = a + " vs " + b + " on " + metric_words(metric) + ": mean difference " +
                  metric_diff_text(metric, h.at("mean_diff").get<double>()) + " (" + a + " lower in " +
                  std::to_string(h.at("a_better").get<int>()) + ", higher in " +
                  std::to_string(h.at("b_better").get<int>()) + ", equal in " +
                  std::to_string(h.at("ties").get<int>()) + " of " + std::to_string(S) +
                  " scenarios), p = " + p_value(h.at("p").get<double>()) + ", Holm-adjusted " +
                  p_value(h.at("p_holm").get<double>());
  if (h.at("reject").get<bool>()) {
    s += " <= " + p_value(alpha) + ": significant; " + (h.at("mean_diff").get<double>() < 0 ? a : b) +
         " is better.";
  } else {
    s += " > " + p_value(alpha) + ": not significant; these data do not show a difference";
    if (h.at("ties").get<int>() > 0)
      s += " (with " + std::to_string(h.at("ties").get<int>()) +
           " tied scenarios this test cannot go below p = " +
           p_value(h.at("smallest_attainable_p").get<double>()) + ")";
    s += ".";
  }
  if (h.contains("context_level") && h.at("context_level").is_object()) {
    const json& c = h.at("context_level");
    s += " Context by context: " + c.at("a_only").dump() + " contexts above 10% only under " + a + ", " +
         c.at("b_only").dump() + " only under " + b +
         " (exact McNemar p = " + p_value(c.at("p").get<double>()) +
         "; contexts are not independent, so this is descriptive).";
  }
  return s;
}

}  // namespace

std::vector<std::string> findings_text(const json& results) {
  std::vector<std::string> out;
  const double alpha = results.at("study").at("alpha").get<double>();
  const auto& policies = results.at("policies");
  const auto& pooled = results.at("pooled");

  // The model's own choice first, as the baseline everything else is read against.
  for (size_t i = 0; i < policies.size(); ++i)
    if (policies[i].at("spec").get<std::string>().rfind("auto", 0) == 0)
      out.push_back(pooled_sentence(pooled[i], results));
  size_t best = 0;
  for (size_t i = 1; i < pooled.size(); ++i)
    if (pooled[i]["metrics"]["mean"]["estimate"].get<double>() <
        pooled[best]["metrics"]["mean"]["estimate"].get<double>())
      best = i;
  if (!pooled.empty() && policies[best].at("spec").get<std::string>().rfind("auto", 0) != 0)
    out.push_back("Lowest pooled mean loss: " + pooled_sentence(pooled[best], results));

  for (const auto& f : results.at("families")) {
    const std::string name = f.at("name");
    const int m = f.at("size").get<int>();
    const int k = f.at("max_rejectable").get<int>();
    std::string s = "Family '" + name + "': " + std::to_string(m) + " hypotheses tested over " +
                    std::to_string(f.at("scenarios").get<int>()) +
                    " scenarios; the smallest two-sided p a sign-flip test " + "can reach is " +
                    p_value(f.at("smallest_attainable_p").get<double>()) +
                    ", so Holm at alpha = " + p_value(alpha) + " could reject at most " + std::to_string(k) +
                    ".";
    if (k == 0)
      s += " No hypothesis in this family can be significant whatever the effect size: read its numbers as "
           "descriptive only.";
    else if (k < m)
      s += " Some of them could not be significant even with the most extreme data.";
    s += " Rejected: " + std::to_string(f.at("rejected").get<int>()) + ".";
    out.push_back(s);
    // Every hypothesis of a small family gets its own sentence; for a large one, only the
    // significant ones, and a count of the rest.
    int not_sig = 0;
    for (const auto& id : f.at("hypotheses")) {
      const json& h = results.at("hypotheses").at(size_t(id.get<int>() - 1));
      if (m <= 12 || h.at("reject").get<bool>())
        out.push_back(hypothesis_sentence(h, alpha));
      else
        ++not_sig;
    }
    if (not_sig > 0)
      out.push_back("The other " + std::to_string(not_sig) + " hypotheses of family '" + name +
                    "' are not significant after Holm's correction (table below).");
  }
  return out;
}

}  // namespace ncclbot::report
