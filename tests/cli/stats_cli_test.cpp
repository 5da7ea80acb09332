// `ncclbot stats` as a user runs it: JSON in on stdin or --input, JSON out, exit 2 with the reason
// for bad input.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/run_cli.hpp"

using namespace ncclbot::test;
using nlohmann::json;

namespace {

json run_ok(const std::string& args, const std::string& input) {
  const auto r = run_cli(args, input);
  EXPECT_EQ(r.exit_code, 0) << args << ": " << r.err;
  return r.exit_code == 0 ? json::parse(r.out) : json();
}

void expect_usage_error(const std::string& args, const std::string& input, const std::string& reason) {
  const auto r = run_cli(args, input);
  EXPECT_EQ(r.exit_code, 2) << args << " <<< " << input << "\n" << r.err;
  EXPECT_NE(r.err.find(reason), std::string::npos) << "stderr: " << r.err;
  EXPECT_TRUE(r.out.empty()) << "no number may be printed for bad input: " << r.out;
}

}  // namespace

TEST(StatsCli, HolmAndBonferroni) {
  // Hand-worked: m = 4 (null is untested); Holm 4*0.01, max(3*0.03, 2*0.04) = 0.09, 0.5.
  const json h = run_ok("stats holm", R"({"p": [0.01, 0.04, null, 0.03, 0.5]})");
  EXPECT_EQ(h["family_size"], 4);
  EXPECT_DOUBLE_EQ(h["adjusted"][0].get<double>(), 0.04);
  EXPECT_DOUBLE_EQ(h["adjusted"][1].get<double>(), 0.09);
  EXPECT_TRUE(h["adjusted"][2].is_null());
  EXPECT_EQ(h["rejected"][0], true);
  EXPECT_EQ(h["rejected"][1], false);
  const json b = run_ok("stats bonferroni", R"({"p": [0.01, 0.3]})");
  EXPECT_DOUBLE_EQ(b["adjusted"][1].get<double>(), 0.6);
}

TEST(StatsCli, PermutationExactNineScenarios) {
  // All nine differences positive: only the identity reaches t, two-sided p = 2/512.
  const json p = run_ok("stats permutation", R"({"diffs": [1,2,3,4,5,6,7,8,9], "alternative": "two-sided"})");
  EXPECT_EQ(p["exact"], true);
  EXPECT_EQ(p["sign_vectors"], 512);
  EXPECT_DOUBLE_EQ(p["p"].get<double>(), 2.0 / 512.0);
  EXPECT_DOUBLE_EQ(p["smallest_attainable_p"].get<double>(), 2.0 / 512.0);
  const json mc = run_ok("stats permutation",
                         R"({"diffs": [1,2,3], "method": "monte_carlo", "resamples": 999, "seed": 4})");
  EXPECT_EQ(mc["exact"], false);
  EXPECT_EQ(mc["sign_vectors"], 999);
  EXPECT_GT(mc["p"].get<double>(), 0.0);
}

TEST(StatsCli, InputFromFile) {
  const std::string dir = temp_dir();
  write_file(dir + "/p.json", R"({"p": [0.02]})");
  const json h = run_ok("stats holm --input '" + dir + "/p.json'", "");
  EXPECT_DOUBLE_EQ(h["adjusted"][0].get<double>(), 0.02);
  write_file(dir + "/bad.json", "{\n  \"p\": [0.02,,]\n}");
  expect_usage_error("stats holm --input '" + dir + "/bad.json'", "", "bad.json:2: invalid JSON");
}

TEST(StatsCli, BadInputIsExitTwoWithReason) {
  expect_usage_error("stats holm", "{\"p\": [0.1, NaN]}", "NaN and Infinity are not JSON numbers");
  expect_usage_error("stats holm", "{\"p\": [0.1, \"NaN\"]}", "only finite numbers");
  expect_usage_error("stats holm", "{\"p\": []}", "\"p\" is empty");
  expect_usage_error("stats holm", "{\"p\": [1.5]}", "not a probability");
  expect_usage_error("stats holm", "", "empty input");
  expect_usage_error("stats holm", "{\"pvals\": [0.1]}", "unknown field \"pvals\"");
  expect_usage_error("stats permutation",
                     "{\"diffs\": [1, 2], \"method\": \"monte_carlo\", \"resamples\": 0}",
                     "\"resamples\" must be >= 1");
  expect_usage_error("stats permutation", "{\"diffs\": [1, 2], \"alternative\": \"bigger\"}",
                     "<stdin>: alternative");
  expect_usage_error("stats permutation", "{\"diffs\": [1, null]}", "\"diffs\"[1] is not a number");
  expect_usage_error("stats", "", "");  // a test must be named
  // A field given twice was read as its last value (Holm of 0.9 instead of 0.01).
  expect_usage_error("stats holm", "{\"p\": [0.01], \"p\": [0.9]}", "field 'p' given twice");
}

TEST(StatsCli, BootstrapSingleAndPaired) {
  // count_above of {0.01, 0.2, 0.3}: 2 values above 0.10; the percentile interval of a count of
  // n = 3 draws lies within [0, 3].
  const json b = run_ok("stats bootstrap",
                        R"({"x": [0.01, 0.2, 0.3], "statistic": "count_above", "threshold": 0.1,
                            "method": "percentile", "resamples": 2000, "seed": 3})");
  EXPECT_DOUBLE_EQ(b["estimate"].get<double>(), 2.0);
  EXPECT_GE(b["low"].get<double>(), 0.0);
  EXPECT_LE(b["high"].get<double>(), 3.0);
  EXPECT_EQ(b["resamples"], 2000);
  // Paired: mean(x) - mean(y) = 0.1 exactly when every pair differs by 0.1... up to rounding; every
  // resample then has the same difference, so the percentile interval collapses onto it.
  const json p = run_ok("stats bootstrap --threads 2",
                        R"({"x": [0.5, 0.25, 0.75], "y": [0.25, 0.0, 0.5], "method": "percentile"})");
  EXPECT_EQ(p["paired"], true);
  EXPECT_DOUBLE_EQ(p["estimate"].get<double>(), 0.25);
  EXPECT_DOUBLE_EQ(p["low"].get<double>(), 0.25);
  EXPECT_DOUBLE_EQ(p["high"].get<double>(), 0.25);
  // BCa on the same data is degenerate: reported as such, with null bounds, not as numbers.
  const json d = run_ok("stats bootstrap", R"({"x": [0.5, 0.25, 0.75], "y": [0.25, 0.0, 0.5]})");
  EXPECT_EQ(d["degenerate"], true);
  EXPECT_TRUE(d["low"].is_null());
  // Same seed, same answer, whatever the thread count.
  const std::string in = R"({"x": [0.1, 0.5, 0.2, 0.9, 0.3, 0.05], "statistic": "p99", "seed": 9})";
  EXPECT_EQ(run_ok("stats bootstrap --threads 1", in), run_ok("stats bootstrap --threads 3", in));
}

TEST(StatsCli, WilcoxonBinomialMcNemar) {
  // d = {1, 2, 3}: exact W+ = 6, two-sided p = 2/8.
  const json w = run_ok("stats wilcoxon", R"({"diffs": [1, 2, 3]})");
  EXPECT_EQ(w["method"], "exact");
  EXPECT_DOUBLE_EQ(w["p"].get<double>(), 0.25);
  EXPECT_EQ(w["zero_method"], "wilcox");
  const json wxy = run_ok("stats wilcoxon", R"({"x": [2, 4, 6], "y": [1, 2, 3], "alternative": "greater"})");
  EXPECT_DOUBLE_EQ(wxy["p"].get<double>(), 0.125);
  // 7 of 8: two-sided 2 * 9/256.
  const json b = run_ok("stats binomial", R"({"k": 7, "n": 8})");
  EXPECT_DOUBLE_EQ(b["p"].get<double>(), 18.0 / 256.0);
  const json m = run_ok("stats mcnemar", R"({"b": 7, "c": 1})");
  EXPECT_DOUBLE_EQ(m["p"].get<double>(), 18.0 / 256.0);
  EXPECT_EQ(m["statistic"], 1);
  const json r = run_ok("stats resolution", R"({"units": 9, "family_size": 13})");
  EXPECT_EQ(r["holm_max_family_with_rejection"], 12);
  EXPECT_EQ(r["holm_max_rejections"], 0);
}

TEST(StatsCli, MoreBadInput) {
  expect_usage_error("stats bootstrap", R"({"x": [0.1, 0.2], "statistic": "median"})", "statistic must be");
  expect_usage_error("stats bootstrap", R"({"x": [0.1, 0.2], "resamples": 0})", "\"resamples\" must be >= 1");
  expect_usage_error("stats bootstrap", R"({"x": [0.1, 0.2], "y": [0.1]})", "\"y\" has 1");
  expect_usage_error("stats bootstrap", R"({"x": []})", "\"x\" is empty");
  expect_usage_error("stats bootstrap", R"({"x": [0.1, 0.2], "level": 95})", "\"level\" must lie in (0, 1)");
  expect_usage_error("stats wilcoxon", R"({"diffs": [0, 0]})", "every difference is zero");
  expect_usage_error("stats wilcoxon", R"({"diffs": [1, 2], "zero_method": "zsplit"})",
                     "zero_method must be");
  expect_usage_error("stats binomial", R"({"k": 9, "n": 8})", "must not exceed");
  expect_usage_error("stats binomial", R"({"k": 1.5, "n": 8})", "\"k\" must be an integer");
  expect_usage_error("stats mcnemar", R"({"b": -1, "c": 2})", "\"b\" must be >= 0");
  expect_usage_error("stats holm --input /nonexistent/p.json", "", "/nonexistent/p.json: cannot open");
}
