// The "Against the original study" scorecard: each [[claim]] of a study beside the number the study
// measured for it (results.json "against_original", report.md's section), recomputed here from the
// per-context losses results.json stores; and hypotheses limited to some scenarios.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "ncclbot/core/error.hpp"
#include "study/study_spec.hpp"
#include "support/run_cli.hpp"

namespace ncclbot::test {
namespace {

const std::string kClaimsStudy = std::string(NCCLBOT_TEST_DATA_DIR) + "/study/claims.toml";

using nlohmann::json;

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

// Losses of `policy` over the scenarios whose names start with `prefix`, contexts of at most max_bytes.
std::vector<double> pooled(const json& r, const std::string& policy, const std::string& prefix,
                           uint64_t max_bytes) {
  std::vector<double> out;
  for (const auto& sc : r["scenarios"]) {
    const std::string name = sc["name"];
    if (!starts_with(name, prefix)) continue;
    for (const auto& s : r["scores"]) {
      if (s["scenario"] != name || s["policy"] != policy) continue;
      const auto& ctx = sc["score"]["context_list"];
      for (size_t i = 0; i < s["losses"].size(); ++i)
        if (ctx[i]["bytes"].get<uint64_t>() <= max_bytes) out.push_back(s["losses"][i].get<double>());
    }
  }
  return out;
}

double mean(const std::vector<double>& x) {
  double s = 0;
  for (double v : x) s += v;
  return s / double(x.size());
}

double above(const std::vector<double>& x) {
  double n = 0;
  for (double v : x) n += v > 0.1 ? 1 : 0;
  return n;
}

double scenario_mean(const json& r, const std::string& scenario, const std::string& policy) {
  for (const auto& s : r["scores"])
    if (s["scenario"] == scenario && s["policy"] == policy)
      return mean(s["losses"].get<std::vector<double>>());
  ADD_FAILURE() << scenario << " " << policy;
  return 0;
}

TEST(ClaimsScorecard, EveryClaimIsMeasuredAsItSays) {
  const std::string out = temp_dir() + "/claims";
  const CliResult run = run_cli("run '" + kClaimsStudy + "' --out '" + out + "' --no-figures");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json r = json::parse(read_all(out + "/results.json"));
  const json& c = r["against_original"];
  ASSERT_EQ(c.size(), 4u);
  for (const auto& x : c)
    for (const char* key : {"claim", "paper", "measured", "agrees", "why"})
      EXPECT_TRUE(x.contains(key)) << key;

  // Pooled mean over big/* contexts of at most 64 KiB.
  const auto auto_small = pooled(r, "AUTO", "big/", 65536), ucb_small = pooled(r, "UCB1", "big/", 65536);
  ASSERT_FALSE(auto_small.empty());
  EXPECT_EQ(c[0]["values"]["contexts"], auto_small.size());
  EXPECT_NEAR(c[0]["values"]["a"].get<double>(), mean(auto_small), 1e-15);
  EXPECT_NEAR(c[0]["values"]["b"].get<double>(), mean(ucb_small), 1e-15);
  EXPECT_EQ(c[0]["agrees"].get<bool>(), mean(ucb_small) < mean(auto_small));

  // Pooled count above 10% over every scenario.
  const auto ucb_all = pooled(r, "UCB1", "", UINT64_MAX), auto_all = pooled(r, "AUTO", "", UINT64_MAX);
  EXPECT_EQ(c[1]["values"]["a"].get<double>(), above(ucb_all));
  EXPECT_EQ(c[1]["values"]["b"].get<double>(), above(auto_all));
  EXPECT_EQ(c[1]["agrees"].get<bool>(), above(auto_all) > above(ucb_all));

  // Every scenario: ETC's mean above UCB1's in each of the three.
  int holds = 0;
  for (const char* sc : {"big/allreduce", "big/allgather", "other/reducescatter"})
    holds += scenario_mean(r, sc, "ETC") > scenario_mean(r, sc, "UCB1");
  EXPECT_EQ(c[2]["values"]["holds_in"], holds);
  EXPECT_EQ(c[2]["values"]["scenarios"], 3);
  EXPECT_EQ(c[2]["agrees"].get<bool>(), holds == 3);

  // The hypothesis claim reads the study's own test, which pairs only the two big/* scenarios.
  const json* h = nullptr;
  for (const auto& x : r["hypotheses"])
    if (x["a"] == "UCB1" && x["b"] == "ETC") h = &x;
  ASSERT_NE(h, nullptr);
  EXPECT_EQ((*h)["scenarios"], json({"big/allreduce", "big/allgather"}));
  ASSERT_EQ((*h)["diffs"].size(), 2u);
  EXPECT_DOUBLE_EQ((*h)["mean_diff"].get<double>(),
                   ((*h)["diffs"][0].get<double>() + (*h)["diffs"][1].get<double>()) / 2);
  EXPECT_EQ((*h)["a_values"][0].get<double>(), scenario_mean(r, "big/allreduce", "UCB1"));
  EXPECT_EQ(c[3]["values"]["p_holm"], (*h)["p_holm"]);
  EXPECT_FALSE(c[3]["agrees"].get<bool>());  // two scenarios: p >= 0.5, never rejected
  EXPECT_EQ(r["families"][0]["scenarios"], 2);
  EXPECT_EQ(r["families"][0]["smallest_attainable_p"].get<double>(), 0.5);

  const std::string md = read_all(out + "/report.md");
  EXPECT_NE(md.find("## Against the original study"), std::string::npos);
  EXPECT_NE(md.find("| UCB1 vs ETC is significant | p < 0.05 | "), std::string::npos);
  EXPECT_NE(md.find(" of 4 agree"), std::string::npos);
}

TEST(ClaimsScorecard, BadClaimsAreErrorsWithTheirLine) {
  const std::string base = read_all(kClaimsStudy);
  auto fails = [&](const std::string& extra, const std::string& reason) {
    try {
      study::parse_study(base + extra, "s.toml");
      ADD_FAILURE() << "accepted: " << extra;
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("s.toml:"), std::string::npos) << what;
      EXPECT_NE(what.find(reason), std::string::npos) << what;
    }
  };
  const std::string head = "\n[[claim]]\nclaim = \"x\"\npaper = \"y\"\nwhy = \"z\"\n";
  fails(head + "kind = \"pooled\"\na = \"AUTO\"\nb = \"nobody\"\nagrees_if = \"b_lower\"\n",
        "policy 'nobody'");
  fails(head + "kind = \"vibes\"\na = \"AUTO\"\nb = \"UCB1\"\nagrees_if = \"b_lower\"\n", "must be pooled");
  fails(head + "kind = \"pooled\"\na = \"AUTO\"\nb = \"UCB1\"\nagrees_if = \"reject\"\n",
        "does not fit kind");
  fails(head + "kind = \"hypothesis\"\na = \"UCB1\"\nb = \"AUTO\"\nagrees_if = \"reject\"\n",
        "over the same scenarios");
  fails(head +
            "kind = \"pooled\"\na = \"AUTO\"\nb = \"UCB1\"\nagrees_if = \"b_lower\"\nscenarios = "
            "[\"none/*\"]\n",
        "matches no [[scenario]]");
  fails(head +
            "kind = \"pooled\"\na = \"AUTO\"\nb = \"UCB1\"\nagrees_if = \"b_lower\"\nmin_bytes = "
            "9\nmax_bytes = 8\n",
        "min_bytes is above");
  fails(head + "kind = \"pooled\"\na = \"AUTO\"\nb = \"UCB1\"\nagrees_if = \"b_lower\"\ncolour = 1\n",
        "colour");
  fails("\n[[claim]]\nclaim = \"x\"\n", "needs paper");
  fails("\n[[hypothesis]]\na = \"UCB1\"\nb = \"AUTO\"\nscenarios = [\"nope\"]\n", "matches no [[scenario]]");
}

}  // namespace
}  // namespace ncclbot::test
