// Wilcoxon signed-rank, exact binomial and exact McNemar against scipy.stats.wilcoxon,
// scipy.stats.binomtest and statsmodels mcnemar(exact=True) (scripts/reference_stats.py).
#include <gtest/gtest.h>

#include <cmath>

#include "ncclbot/stats/binomial_test.hpp"
#include "ncclbot/stats/mcnemar.hpp"
#include "ncclbot/stats/wilcoxon.hpp"
#include "stats/reference_data.hpp"

using namespace ncclbot;

// Exact and permutation p-values are sums of the same dyadic probabilities: 1e-12. The normal
// approximation goes through Boost's erfc where SciPy uses its own ndtr: 1e-12 relative too.
TEST(Wilcoxon, MatchesScipy) {
  const auto cases = test::reference_cases("wilcoxon.json");
  ASSERT_GE(cases.size(), 100u);
  int by_method[3] = {0, 0, 0};
  for (size_t c = 0; c < cases.size(); ++c) {
    const auto& k = cases[c];
    const std::vector<double> d = test::as_doubles(k["diffs"]);
    WilcoxonOptions opt;
    opt.alternative = parse_alternative(k["alternative"].get<std::string>());
    opt.zero_method = parse_zero_method(k["zero_method"].get<std::string>());
    opt.method = parse_wilcoxon_method(k["method"].get<std::string>());
    const WilcoxonResult r = wilcoxon_signed_rank(d, opt);
    const std::string label = "case " + std::to_string(c) + " n=" + std::to_string(d.size()) + " " +
                              k["zero_method"].get<std::string>() + " " +
                              k["alternative"].get<std::string>() + " " + k["method"].get<std::string>() +
                              " -> " + r.method_used;
    const double p = k["p"].get<double>();
    EXPECT_NEAR(r.p_value, p, 1e-12 * std::max(1e-3, p)) << label;
    EXPECT_DOUBLE_EQ(r.statistic, k["statistic"].get<double>()) << label;
    if (k.contains("z")) {
      EXPECT_NEAR(r.z, k["z"].get<double>(), 1e-12 * std::max(1.0, std::abs(r.z))) << label;
    }
    by_method[r.method_used == "exact" ? 0 : r.method_used == "permutation" ? 1 : 2]++;
  }
  EXPECT_GT(by_method[0], 10);  // every path is exercised
  EXPECT_GT(by_method[1], 10);
  EXPECT_GT(by_method[2], 10);
}

TEST(Wilcoxon, HandWorkedExact) {
  // d = {1, 2, 3}: W+ = 6 is reached by 1 of the 8 sign patterns -> p_greater = 1/8, two-sided 2/8.
  const std::vector<double> d = {1, 2, 3};
  WilcoxonOptions opt;
  opt.alternative = Alternative::greater;
  const WilcoxonResult r = wilcoxon_signed_rank(d, opt);
  EXPECT_EQ(r.method_used, "exact");
  EXPECT_DOUBLE_EQ(r.r_plus, 6.0);
  EXPECT_DOUBLE_EQ(r.p_value, 1.0 / 8.0);
  opt.alternative = Alternative::two_sided;
  EXPECT_DOUBLE_EQ(wilcoxon_signed_rank(d, opt).p_value, 2.0 / 8.0);
  EXPECT_THROW(wilcoxon_signed_rank(std::vector<double>{0.0, 0.0}, opt), std::invalid_argument);
  EXPECT_THROW(wilcoxon_signed_rank(std::vector<double>{}, opt), std::invalid_argument);
}

TEST(BinomialTest, MatchesScipyBinomtest) {
  const auto cases = test::reference_cases("binomial.json");
  ASSERT_GE(cases.size(), 30u);
  for (size_t c = 0; c < cases.size(); ++c) {
    const auto& k = cases[c];
    const double got = binomial_test(k["k"].get<int64_t>(), k["n"].get<int64_t>(), k["p"].get<double>(),
                                     parse_alternative(k["alternative"].get<std::string>()));
    const double want = k["p_value"].get<double>();
    EXPECT_NEAR(got, want, 1e-12 * std::max(1e-6, want)) << "case " << c << ": " << k.dump();
  }
}

TEST(BinomialTest, HandWorkedSignTest) {
  // 7 of 8 contexts favour A: P(X >= 7) = (8 + 1)/256; two-sided doubles it (symmetric at p = 1/2).
  EXPECT_DOUBLE_EQ(binomial_test(7, 8, 0.5, Alternative::greater), 9.0 / 256.0);
  EXPECT_DOUBLE_EQ(binomial_test(7, 8, 0.5, Alternative::two_sided), 18.0 / 256.0);
  EXPECT_THROW(binomial_test(9, 8), std::invalid_argument);
}

TEST(McNemar, MatchesStatsmodelsExact) {
  const auto cases = test::reference_cases("mcnemar.json");
  for (size_t c = 0; c < cases.size(); ++c) {
    const auto& k = cases[c];
    const McNemarResult r = mcnemar_exact(k["b"].get<int64_t>(), k["c"].get<int64_t>());
    EXPECT_EQ(double(r.statistic), k["statistic"].get<double>()) << "case " << c;
    const double want = k["p_value"].get<double>();
    EXPECT_NEAR(r.p_value, want, 1e-12 * std::max(1e-6, want)) << "case " << c << ": " << k.dump();
  }
  // "7 against 1 contexts above 10%": 2 P(Bin(8, 1/2) <= 1) = 2 * 9/256.
  EXPECT_DOUBLE_EQ(mcnemar_exact(7, 1).p_value, 18.0 / 256.0);
}

TEST(Wilcoxon, ExactRefusesSizesItCannotBuildQuickly) {
  std::vector<double> d;
  for (int i = 1; i <= 2001; ++i) d.push_back(double(i));
  WilcoxonOptions opt;
  opt.method = WilcoxonMethod::exact;
  EXPECT_THROW(wilcoxon_signed_rank(d, opt), std::invalid_argument);
  opt.method = WilcoxonMethod::automatic;  // n > 50: the normal approximation, p ~ 0
  EXPECT_EQ(wilcoxon_signed_rank(d, opt).method_used, "approx");
}
