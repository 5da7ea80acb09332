// The "Against the original study" scorecard: each [[claim]] of a study beside the number the study
// measured for it (results.json "against_original", report.md's section), recomputed here from the
// per-context losses results.json stores; and hypotheses limited to some scenarios.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "ncclbot/core/error.hpp"
#include "study/study_spec.hpp"
#include "support/run_cli.hpp"
#include "support/study_files.hpp"

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
  for (const auto& x : c) {
    for (const char* key : {"claim", "paper", "measured", "agrees", "why", "basis"})
      EXPECT_TRUE(x.contains(key)) << key;
    // The cause printed is the one for the outcome that happened.
    EXPECT_EQ(x["why"], x["agrees"].get<bool>() ? std::string("agree: test") : x["why"].get<std::string>());
    if (!x["agrees"].get<bool>()) {
      EXPECT_NE(x["why"], "agree: test");
    }
  }

  // Pooled mean over big/* contexts of at most 64 KiB.
  const auto auto_small = pooled(r, "AUTO", "big/", 65536), ucb_small = pooled(r, "UCB1", "big/", 65536);
  ASSERT_FALSE(auto_small.empty());
  EXPECT_EQ(c[0]["values"]["contexts"], auto_small.size());
  EXPECT_NEAR(c[0]["values"]["a"].get<double>(), mean(auto_small), 1e-15);
  EXPECT_NEAR(c[0]["values"]["b"].get<double>(), mean(ucb_small), 1e-15);
  // Its figure: 0.5 for UCB1 within a band of 1.9, |mean - 0.5| <= 0.95: any mean in [0, 1.45].
  EXPECT_EQ(c[0]["figures"]["b"]["measured"].get<double>(), mean(ucb_small));
  EXPECT_TRUE(c[0]["figures"]["b"]["within_band"].get<bool>());
  EXPECT_EQ(c[0]["band"].get<double>(), 1.9);
  EXPECT_EQ(c[0]["agrees"].get<bool>(), mean(ucb_small) < mean(auto_small));

  // Pooled count above 10% over every scenario.
  const auto ucb_all = pooled(r, "UCB1", "", UINT64_MAX), auto_all = pooled(r, "AUTO", "", UINT64_MAX);
  EXPECT_EQ(c[1]["values"]["a"].get<double>(), above(ucb_all));
  EXPECT_EQ(c[1]["values"]["b"].get<double>(), above(auto_all));
  // A count compares as a share of the contexts: AUTO's share is far from the figure 0.9 (default
  // band 0.5: within [0.45, 1.35]), so the row disagrees whatever the direction; it is calibrated,
  // so the tally leaves it out.
  const double share = above(auto_all) / double(auto_all.size());
  ASSERT_LT(share, 0.45);
  EXPECT_DOUBLE_EQ(c[1]["figures"]["b"]["measured"].get<double>(), share);
  EXPECT_FALSE(c[1]["figures"]["b"]["within_band"].get<bool>());
  EXPECT_EQ(c[1]["band"].get<double>(), 0.5);
  EXPECT_FALSE(c[1]["agrees"].get<bool>());
  EXPECT_EQ(c[1]["basis"], "calibrated");

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
  int tested_agree = 0;
  for (int i : {0, 2, 3}) tested_agree += c[i]["agrees"].get<bool>();
  EXPECT_NE(md.find("Tested claims: " + std::to_string(tested_agree) + " of 3 agree. 1 more restate"),
            std::string::npos);
}

// The quick study (nine scenarios, so Holm can reject) with two claims on the same hypotheses: the
// study finds UCB1 lower than AUTO and ETC higher than AUTO, each rejected. A claim in the test's
// direction agrees; a deliberately false claim, "ETC beats AUTO", whose test rejects the other way,
// does not, nor does "AUTO beats UCB1".
TEST(ClaimsScorecard, AClaimAgreesOnlyWhenTheTestRejectsInItsDirection) {
  std::string quick = read_all(std::string(NCCLBOT_SOURCE_DIR) + "/experiments/quick.toml");
  quick = quick.substr(0, quick.find("[[variant]]"));  // the study itself, not its ideal-world rerun
  quick.insert(quick.find("\n", quick.find("[study]")) + 1, "loss_vs_horizon = [100, 200]\n");
  const std::string tail =
      "kind = \"hypothesis\"\nmetric = \"mean\"\nb = \"AUTO\"\nagrees_if = \"reject\"\nbasis = "
      "\"tested\"\nwhy_agree = \"yes\"\nwhy_disagree = \"no\"\n";
  quick +=
      "\n[[claim]]\nclaim = \"UCB1 beats AUTO\"\npaper = \"p < 0.05\"\na = \"UCB1\"\ndirection = "
      "\"a_lower\"\n" +
      tail;
  quick +=
      "\n[[claim]]\nclaim = \"ETC beats AUTO\"\npaper = \"p < 0.05\"\na = \"ETC\"\ndirection = "
      "\"a_lower\"\n" +
      tail;
  quick +=
      "\n[[claim]]\nclaim = \"AUTO beats UCB1\"\npaper = \"p < 0.05\"\na = \"UCB1\"\ndirection = "
      "\"b_lower\"\n" +
      tail;
  const std::string dir = temp_dir(), study = dir + "/quick-claims.toml", out = dir + "/quick-claims";
  write_file(study, quick);
  const CliResult run = run_cli("run '" + study + "' --out '" + out + "' --no-figures");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json r = json::parse(read_all(out + "/results.json"));
  const auto hypothesis = [&](const std::string& a) {
    for (const auto& h : r["hypotheses"])
      if (h["a"] == a && h["b"] == "AUTO" && h["metric"] == "mean") return h;
    ADD_FAILURE() << a;
    return json();
  };
  const json ucb = hypothesis("UCB1"), etc = hypothesis("ETC");
  ASSERT_TRUE(ucb["reject"].get<bool>());
  ASSERT_LT(ucb["mean_diff"].get<double>(), 0.0);  // UCB1 lower
  ASSERT_TRUE(etc["reject"].get<bool>());
  ASSERT_GT(etc["mean_diff"].get<double>(), 0.0);  // AUTO lower
  const json& c = r["against_original"];
  ASSERT_EQ(c.size(), 3u);
  EXPECT_TRUE(c[0]["agrees"].get<bool>());
  EXPECT_EQ(c[0]["why"], "yes");
  EXPECT_FALSE(c[1]["agrees"].get<bool>());  // rejected, the other way
  EXPECT_EQ(c[1]["why"], "no");
  EXPECT_NE(c[1]["measured"].get<std::string>().find("rejected, AUTO lower"), std::string::npos);
  EXPECT_FALSE(c[2]["agrees"].get<bool>());
}

// A claim whose byte range holds no score context cannot be tested: it neither agrees nor disagrees,
// the report says why, and the tally counts only the claim that was tested.
TEST(ClaimsScorecard, AClaimNoContextMatchesIsUntestableAndNotCounted) {
  const std::string claim =
      "\n[[claim]]\npaper = \"lower\"\nkind = \"pooled\"\nmetric = \"mean\"\na = \"AUTO\"\nb = "
      "\"g\"\nagrees_if = \"b_not_higher\"\nbasis = \"tested\"\nwhy_agree = \"yes\"\nwhy_disagree = "
      "\"no\"\n";
  const std::string dir = temp_dir(), study = dir + "/s.toml", out = dir + "/run";
  // The sweep's smallest size is far above 1 byte; greedy vs AUTO over every context is testable.
  write_file(study, small_study_text("u",
                                     "[[policy]]\nname = \"AUTO\"\nspec = \"auto\"\n[[policy]]\nname = "
                                     "\"g\"\nspec = \"greedy\"\n") +
                        claim + "claim = \"every size\"\n" + claim +
                        "claim = \"tiny messages\"\nmax_bytes = 1\n");
  const CliResult run = run_cli("run '" + study + "' --out '" + out + "' --no-figures");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json r = json::parse(read_all(out + "/results.json"));
  const json& c = r["against_original"];
  ASSERT_EQ(c.size(), 2u);
  ASSERT_TRUE(c[0]["agrees"].is_boolean());
  EXPECT_TRUE(c[1]["agrees"].is_null());
  ASSERT_TRUE(c[1]["untestable"].is_string());
  EXPECT_NE(c[1]["why"].get<std::string>().find("no score context"), std::string::npos);
  const std::string md = read_all(out + "/report.md");
  const std::string agree = c[0]["agrees"].get<bool>() ? "1" : "0";
  EXPECT_NE(md.find(agree + " of 1 tested claims agree, 1 untestable"), std::string::npos) << md;
  EXPECT_NE(md.find("Tested claims: " + agree + " of 1 agree. 1 untestable"), std::string::npos) << md;
  EXPECT_NE(md.find("| untestable |"), std::string::npos) << md;
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
  const std::string head =
      "\n[[claim]]\nclaim = \"x\"\npaper = \"y\"\nwhy_agree = \"z\"\nwhy_disagree = \"w\"\nbasis = "
      "\"tested\"\n";
  fails(head + "kind = \"pooled\"\na = \"AUTO\"\nb = \"nobody\"\nagrees_if = \"b_lower\"\n",
        "policy 'nobody'");
  fails(head + "kind = \"vibes\"\na = \"AUTO\"\nb = \"UCB1\"\nagrees_if = \"b_lower\"\n", "must be pooled");
  fails(head + "kind = \"pooled\"\na = \"AUTO\"\nb = \"UCB1\"\nagrees_if = \"reject\"\n",
        "does not fit kind");
  fails(head +
            "kind = \"hypothesis\"\na = \"UCB1\"\nb = \"AUTO\"\nagrees_if = \"reject\"\ndirection = "
            "\"a_lower\"\n",
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
  fails(head + "kind = \"pooled\"\na = \"UCB1\"\nb = \"UCB1\"\nagrees_if = \"b_lower\"\n", "with itself");
  const std::string hyp = "kind = \"hypothesis\"\na = \"UCB1\"\nb = \"ETC\"\nscenarios = [\"big/*\"]\n";
  fails(head + hyp + "agrees_if = \"reject\"\n", "needs direction");
  fails(head + hyp + "agrees_if = \"reject\"\ndirection = \"up\"\n", "must be a_lower or b_lower");
  fails(head + hyp + "agrees_if = \"not_reject\"\ndirection = \"a_lower\"\n", "goes with agrees_if");
  fails(head + hyp + "agrees_if = \"not_reject\"\npaper_a = 0.1\n", "no claim.paper_a");
  const std::string pooled = "kind = \"pooled\"\na = \"AUTO\"\nb = \"UCB1\"\nagrees_if = \"b_lower\"\n";
  fails(head + pooled + "band = 0.2\n", "needs a figure");
  fails(head + pooled + "paper_b = 0.1\nband = 0\n", "claim.band must be in");
  fails(head + pooled + "paper_b = -1\n", "claim.paper_b must be in");
  fails(head + "metric = \"above_10pct\"\n" + pooled + "paper_b = 19\n", "claim.paper_b must be in");
  fails(
      "\n[[claim]]\nclaim = \"x\"\npaper = \"y\"\nwhy_agree = \"z\"\nwhy_disagree = \"w\"\nbasis = "
      "\"hunch\"\n" +
          pooled,
      "must be tested or calibrated");
  fails("\n[[claim]]\nclaim = \"x\"\npaper = \"y\"\nwhy = \"z\"\n" + pooled, "why_agree and why_disagree");
  fails("\n[[hypothesis]]\na = \"UCB1\"\nb = \"AUTO\"\nscenarios = [\"nope\"]\n", "matches no [[scenario]]");
}

}  // namespace
}  // namespace ncclbot::test
