#include "cli/stats_handlers.hpp"

#include <cmath>

#include "ncclbot/stats/alternative.hpp"
#include "ncclbot/stats/binomial_test.hpp"
#include "ncclbot/stats/bootstrap.hpp"
#include "ncclbot/stats/mcnemar.hpp"
#include "ncclbot/stats/multiple_testing.hpp"
#include "ncclbot/stats/resolution_floor.hpp"
#include "ncclbot/stats/sign_flip_test.hpp"
#include "ncclbot/stats/wilcoxon.hpp"

namespace ncclbot::cli {
namespace {

// Caps on resampling work, so a typo (1e12 resamples) is refused at once instead of running for
// days: at most 10^8 resamples, and at most 10^11 resampled values (resamples times n).
constexpr uint64_t kMaxResamples = 100'000'000;
constexpr double kMaxResampledValues = 1e11;

uint64_t resamples_field(const JsonInput& in, size_t n) {
  const uint64_t resamples = in.unsigned_integer("resamples", 9999);
  if (resamples == 0) in.fail("\"resamples\" must be >= 1");
  if (resamples > kMaxResamples)
    in.fail("\"resamples\" must be at most " + std::to_string(kMaxResamples) + ", got " +
            std::to_string(resamples));
  if (double(resamples) * double(n) > kMaxResampledValues)
    in.fail("\"resamples\" times the number of values (" + std::to_string(resamples) + " x " +
            std::to_string(n) + ") exceeds the cap of 1e11 resampled values");
  return resamples;
}

PermutationMethod permutation_method_field(const JsonInput& in) {
  const std::string method = in.text("method", "auto");
  if (method == "auto") return PermutationMethod::automatic;
  if (method == "exact") return PermutationMethod::exact;
  if (method == "monte_carlo") return PermutationMethod::monte_carlo;
  in.fail("\"method\" must be \"auto\", \"exact\" or \"monte_carlo\", not \"" + method + "\"");
}

nlohmann::json numbers_json(const std::vector<double>& v) {
  nlohmann::json out = nlohmann::json::array();
  for (double d : v) out.push_back(json_number(d));
  return out;
}

double alpha_field(const JsonInput& in) {
  const double alpha = in.number("alpha", 0.05);
  if (!(alpha > 0.0 && alpha < 1.0)) in.fail("\"alpha\" must lie in (0, 1)");
  return alpha;
}

std::vector<double> p_values_field(const JsonInput& in) {
  std::vector<double> p = in.numbers("p", /*allow_null=*/true);
  for (size_t i = 0; i < p.size(); ++i)
    if (!std::isnan(p[i]) && !(p[i] >= 0.0 && p[i] <= 1.0))
      in.fail("\"p\"[" + std::to_string(i) + "] = " + std::to_string(p[i]) +
              " is not a probability in [0, 1]");
  return p;
}

nlohmann::json adjusted(const JsonInput& in, bool holm) {
  in.only_fields({"p", "alpha"});
  const std::vector<double> p = p_values_field(in);
  const double alpha = alpha_field(in);
  const std::vector<double> adj = holm ? holm_adjust(p) : bonferroni_adjust(p);
  nlohmann::json rejected = nlohmann::json::array();
  for (double a : adj)
    rejected.push_back(std::isnan(a) ? nlohmann::json(nullptr) : nlohmann::json(a <= alpha));
  return {{"method", holm ? "holm" : "bonferroni"},
          {"adjusted", numbers_json(adj)},
          {"rejected", rejected},
          {"alpha", alpha},
          {"family_size", family_size(p)}};
}

nlohmann::json permutation(const JsonInput& in, const StatsRunOptions& run) {
  in.only_fields({"diffs", "alternative", "resamples", "seed", "method"});
  const std::vector<double> d = in.numbers("diffs");
  SignFlipOptions opt;
  opt.alternative = parse_alternative(in.text("alternative", "two-sided"));
  opt.resamples = resamples_field(in, d.size());
  opt.seed = in.unsigned_integer("seed", 0);
  opt.threads = run.threads;
  opt.method = permutation_method_field(in);
  const SignFlipResult r = sign_flip_test(d, opt);
  long nonzero = 0;
  for (double v : d) nonzero += v != 0.0;
  nlohmann::json out = {
      {"test", "paired sign-flip permutation"},
      {"statistic", r.statistic},
      {"statistic_name", "mean of diffs"},
      {"p", r.p_value},
      {"exact", r.exact},
      {"sign_vectors", r.sign_vectors},
      {"count_greater_or_equal", r.count_greater},
      {"count_less_or_equal", r.count_less},
      {"alternative", to_string(opt.alternative)},
      {"n", d.size()},
      {"nonzero", nonzero},
      {"smallest_attainable_p", smallest_permutation_p(nonzero, opt.alternative, opt.method, opt.resamples)}};
  if (!r.exact) {
    out["resamples"] = opt.resamples;
    out["seed"] = opt.seed;
  }
  return out;
}

nlohmann::json resolution(const JsonInput& in, const StatsRunOptions&) {
  in.only_fields({"units", "alpha", "family_size", "alternative", "method", "resamples"});
  const int64_t units = in.integer("units", std::nullopt, 0);
  const double alpha = alpha_field(in);
  const Alternative alt = parse_alternative(in.text("alternative", "two-sided"));
  const PermutationMethod method = permutation_method_field(in);
  const uint64_t resamples = resamples_field(in, 1);
  if (method == PermutationMethod::exact && units > kSignFlipExactMaxUnits)
    in.fail("exact sign-flip enumeration supports at most " + std::to_string(kSignFlipExactMaxUnits) +
            " units");
  const double floor = smallest_permutation_p(units, alt, method, resamples);
  nlohmann::json out = {{"units", units},
                        {"alternative", to_string(alt)},
                        {"exact", units == 0 || sign_flip_enumerates(uint64_t(units), method, resamples)},
                        {"alpha", alpha},
                        {"smallest_attainable_p", floor},
                        {"holm_max_family_with_rejection", holm_max_family_with_rejection(floor, alpha)}};
  if (in.has("family_size")) {
    const int64_t m = in.integer("family_size", std::nullopt, 0);
    out["family_size"] = m;
    out["holm_max_rejections"] = holm_max_rejections(floor, alpha, m);
  }
  return out;
}

nlohmann::json bootstrap(const JsonInput& in, const StatsRunOptions& run) {
  in.only_fields({"x", "y", "statistic", "threshold", "level", "method", "resamples", "seed"});
  const std::vector<double> x = in.numbers("x");
  const bool paired = in.has("y");
  const std::vector<double> y = paired ? in.numbers("y") : std::vector<double>();
  if (paired && y.size() != x.size())
    in.fail("paired bootstrap: \"x\" has " + std::to_string(x.size()) + " values but \"y\" has " +
            std::to_string(y.size()));
  BootstrapOptions opt;
  opt.statistic = parse_bootstrap_statistic(in.text("statistic", "mean"));
  opt.threshold = in.number("threshold", 0.10);
  opt.level = in.number("level", 0.95);
  if (!(opt.level > 0.0 && opt.level < 1.0)) in.fail("\"level\" must lie in (0, 1), e.g. 0.95");
  opt.method = parse_interval_method(in.text("method", "bca"));
  // The bootstrap distribution is kept in memory (8 bytes per resample), hence also the count cap.
  opt.resamples = resamples_field(in, x.size());
  opt.seed = in.unsigned_integer("seed", 0);
  opt.threads = run.threads;
  if (opt.method == IntervalMethod::bca && x.size() < 2)
    in.fail("BCa needs at least 2 values (use \"method\": \"percentile\")");
  const BootstrapResult r = paired ? bootstrap_paired_difference(x, y, opt) : bootstrap_interval(x, opt);
  nlohmann::json out = {{"statistic", to_string(opt.statistic)},
                        {"paired", paired},
                        {"n", x.size()},
                        {"estimate", r.estimate},
                        {"low", json_number(r.low)},
                        {"high", json_number(r.high)},
                        {"level", opt.level},
                        {"method", to_string(opt.method)},
                        {"quantile_levels", {json_number(r.level_low), json_number(r.level_high)}},
                        {"standard_error", json_number(r.standard_error)},
                        {"resamples", opt.resamples},
                        {"seed", opt.seed},
                        {"degenerate", r.degenerate}};
  if (opt.statistic == BootstrapStatistic::count_above) out["threshold"] = opt.threshold;
  if (opt.method == IntervalMethod::bca) {
    out["bias_correction"] = json_number(r.bias_correction);
    out["acceleration"] = json_number(r.acceleration);
  }
  if (paired) out["estimate_is"] = "statistic(x) - statistic(y)";
  if (r.degenerate)
    out["note"] = "BCa is undefined here (constant jackknife or bootstrap distribution); try \"percentile\"";
  return out;
}

nlohmann::json wilcoxon(const JsonInput& in, const StatsRunOptions&) {
  in.only_fields({"x", "y", "diffs", "alternative", "zero_method", "method", "correction"});
  std::vector<double> d;
  if (in.has("diffs")) {
    if (in.has("x") || in.has("y")) in.fail("give either \"diffs\" or \"x\" (and \"y\"), not both");
    d = in.numbers("diffs");
  } else {
    d = in.numbers("x");
    if (in.has("y")) {
      const std::vector<double> y = in.numbers("y");
      if (y.size() != d.size())
        in.fail("\"x\" has " + std::to_string(d.size()) + " values but \"y\" has " +
                std::to_string(y.size()));
      for (size_t i = 0; i < d.size(); ++i) d[i] -= y[i];
    }
  }
  WilcoxonOptions opt;
  opt.alternative = parse_alternative(in.text("alternative", "two-sided"));
  opt.zero_method = parse_zero_method(in.text("zero_method", "wilcox"));
  opt.method = parse_wilcoxon_method(in.text("method", "auto"));
  if (in.has("correction")) {
    if (!in.doc()["correction"].is_boolean()) in.fail("\"correction\" must be true or false");
    opt.continuity = in.doc()["correction"].get<bool>();
  }
  const WilcoxonResult r = wilcoxon_signed_rank(d, opt);
  return {{"test", "wilcoxon signed-rank"},
          {"statistic", r.statistic},
          {"statistic_is", opt.alternative == Alternative::two_sided ? "min(W+, W-)" : "W+"},
          {"r_plus", r.r_plus},
          {"r_minus", r.r_minus},
          {"p", r.p_value},
          {"z", json_number(r.z)},
          {"method", r.method_used},
          {"alternative", to_string(opt.alternative)},
          {"zero_method", to_string(opt.zero_method)},
          {"n", r.n},
          {"zeros", r.zeros},
          {"ties", r.ties}};
}

nlohmann::json binomial(const JsonInput& in, const StatsRunOptions&) {
  in.only_fields({"k", "n", "p", "alternative"});
  const int64_t n = in.integer("n", std::nullopt, 0);
  const int64_t k = in.integer("k", std::nullopt, 0);
  if (k > n) in.fail("\"k\" (" + std::to_string(k) + ") must not exceed \"n\" (" + std::to_string(n) + ")");
  const double p = in.number("p", 0.5);
  if (!(p >= 0.0 && p <= 1.0)) in.fail("\"p\" must lie in [0, 1]");
  const Alternative alt = parse_alternative(in.text("alternative", "two-sided"));
  return {{"test", "exact binomial"},
          {"k", k},
          {"n", n},
          {"p_null", p},
          {"p", binomial_test(k, n, p, alt)},
          {"alternative", to_string(alt)},
          {"proportion", n > 0 ? json_number(double(k) / double(n)) : nlohmann::json(nullptr)}};
}

nlohmann::json mcnemar(const JsonInput& in, const StatsRunOptions&) {
  in.only_fields({"b", "c"});
  const int64_t b = in.integer("b", std::nullopt, 0);
  const int64_t c = in.integer("c", std::nullopt, 0);
  const McNemarResult r = mcnemar_exact(b, c);
  return {{"test", "exact McNemar"}, {"b", b}, {"c", c}, {"statistic", r.statistic}, {"p", r.p_value}};
}

}  // namespace

const std::vector<StatsTest>& stats_tests() {
  static const std::vector<StatsTest> tests = {
      {"holm", "Holm step-down adjusted p-values (NaN/null = untested, excluded from the family)",
       R"({"p": [0.01, 0.04, null, 0.03], "alpha": 0.05})",
       [](const JsonInput& in, const StatsRunOptions&) { return adjusted(in, true); }},
      {"bonferroni", "Bonferroni adjusted p-values, min(1, m p)",
       R"({"p": [0.01, 0.04, 0.03], "alpha": 0.05})",
       [](const JsonInput& in, const StatsRunOptions&) { return adjusted(in, false); }},
      {"permutation", "paired sign-flip permutation test of the mean difference",
       R"({"diffs": [...], "alternative": "two-sided|greater|less", "method": "auto|exact|monte_carlo", "resamples": 9999, "seed": 0})",
       permutation},
      {"bootstrap", "bootstrap confidence interval (percentile or BCa) of mean, p99, max or count_above",
       R"({"x": [...], "y": [...] (optional, paired: statistic(x) - statistic(y)), "statistic": "mean|p99|max|count_above", "threshold": 0.1, "level": 0.95, "method": "percentile|bca", "resamples": 9999, "seed": 0})",
       bootstrap},
      {"wilcoxon", "Wilcoxon signed-rank test (zero_method wilcox (default) or pratt)",
       R"({"diffs": [...]} or {"x": [...], "y": [...]}, "alternative": "two-sided", "zero_method": "wilcox|pratt", "method": "auto|exact|approx", "correction": false)",
       wilcoxon},
      {"binomial", "exact binomial (sign) test", R"({"k": 7, "n": 8, "p": 0.5, "alternative": "two-sided"})",
       binomial},
      {"mcnemar", "exact McNemar test on the discordant counts b and c", R"({"b": 7, "c": 1})", mcnemar},
      {"resolution", "smallest attainable sign-flip p for n paired units and what Holm can then reject",
       R"({"units": 9, "alpha": 0.05, "family_size": 20, "alternative": "two-sided", "method": "auto", "resamples": 9999})",
       resolution},
  };
  return tests;
}

}  // namespace ncclbot::cli
