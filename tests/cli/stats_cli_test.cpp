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
}
