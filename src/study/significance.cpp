#include "study/significance.hpp"

#include <algorithm>
#include <cmath>

namespace ncclbot::study {

const std::vector<double>& scored_losses(const UnitResult& u, LossKind kind) {
  return kind == LossKind::kOnline ? u.online : u.final_loss;
}

SignificanceResult test_hypotheses(const PreparedStudy& study, const std::vector<UnitResult>& units) {
  const StudySpec& s = study.spec;
  const int S = int(study.scenarios.size());
  const int P = int(study.policies.size());
  SignificanceResult out;
  for (size_t hi = 0; hi < s.hypotheses.size(); ++hi) {
    const Hypothesis& h = s.hypotheses[hi];
    HypothesisResult r;
    r.spec = h;
    const int a = policy_index(study, h.a), b = policy_index(study, h.b);
    std::vector<int> paired;  // the scenarios this hypothesis pairs, in study order
    for (int sc = 0; sc < S; ++sc)
      if (in_scenarios(h.scenarios, study.scenarios[size_t(sc)].spec->name)) paired.push_back(sc);
    const int n = int(paired.size());
    for (int sc : paired) {
      r.scenarios.push_back(study.scenarios[size_t(sc)].spec->name);
      const double va = metric_value(scored_losses(units[size_t(sc * P + a)], s.loss), h.metric);
      const double vb = metric_value(scored_losses(units[size_t(sc * P + b)], s.loss), h.metric);
      r.a_values.push_back(va);
      r.b_values.push_back(vb);
      r.diffs.push_back(va - vb);
      r.mean_diff += (va - vb) / n;
      if (va < vb)
        ++r.a_better;
      else if (va > vb)
        ++r.b_better;
      else
        ++r.ties;
    }
    if (h.metric == Metric::kAbove10pct) {
      r.has_context_level = true;
      for (int sc : paired) {
        const auto& la = scored_losses(units[size_t(sc * P + a)], s.loss);
        const auto& lb = scored_losses(units[size_t(sc * P + b)], s.loss);
        for (size_t i = 0; i < la.size(); ++i) {
          r.a_only += (loss_above(la[i]) && !loss_above(lb[i])) ? 1 : 0;
          r.b_only += (loss_above(lb[i]) && !loss_above(la[i])) ? 1 : 0;
        }
      }
      r.context_p = mcnemar_p(r.a_only, r.b_only);
    }
    r.smallest_p = smallest_attainable_p(n - r.ties, s.permutation_resamples);
    r.resamples = s.permutation_resamples;
    r.seed = derived_seed(s.seed, "permutation/" + h.a + "/" + h.b + "/" + metric_name(h.metric));
    r.test = paired_permutation(r.diffs, r.resamples, r.seed);
    out.hypotheses.push_back(std::move(r));

    FamilyResult* fam = nullptr;
    for (auto& f : out.families)
      if (f.name == h.family) fam = &f;
    if (!fam) {
      out.families.push_back({h.family, {}, 0, 1, 0, 0, 0});
      fam = &out.families.back();
    }
    fam->members.push_back(int(hi));
    fam->scenarios = std::max(fam->scenarios, n);
  }
  for (auto& f : out.families) {
    std::vector<double> p;
    for (int m : f.members) p.push_back(out.hypotheses[size_t(m)].test.p);
    const std::vector<double> adj = holm(p);
    f.size = 0;
    for (double x : p) f.size += std::isnan(x) ? 0 : 1;
    f.smallest_p = smallest_attainable_p(f.scenarios, s.permutation_resamples);
    f.max_rejectable = max_rejectable(f.smallest_p, f.size, s.alpha);
    for (size_t i = 0; i < f.members.size(); ++i) {
      auto& r = out.hypotheses[size_t(f.members[i])];
      r.p_holm = adj[i];
      r.reject = adj[i] <= s.alpha;
      f.rejected += r.reject ? 1 : 0;
    }
  }
  return out;
}

}  // namespace ncclbot::study
