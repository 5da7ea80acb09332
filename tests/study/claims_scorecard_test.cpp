// The "Against the original study" scorecard: each [[claim]] of a study beside the number the study
// measured for it (results.json "against_original", report.md's section), recomputed here from the
// per-context losses results.json stores; and hypotheses limited to some scenarios.
#include <gtest/gtest.h>

#include <limits>
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

// The three-way rule applied to a part as results.json reports it: its interval against what the
// claim allows (null bounds are unbounded).
std::string rule_verdict(const json& part) {
  const double inf = std::numeric_limits<double>::infinity();
  const double low = part["low"], high = part["high"];
  const double lo = part["allowed"][0].is_null() ? -inf : part["allowed"][0].get<double>();
  const double hi = part["allowed"][1].is_null() ? inf : part["allowed"][1].get<double>();
  if (low >= lo && high <= hi) return "agree";
  if (high < lo || low > hi) return "disagree";
  return "inconclusive";
}

// A row's verdict from its parts: all agree, agree; any disagrees, disagree; else inconclusive.
std::string combined(const json& row) {
  bool all = true;
  for (const auto& p : row["parts"]) {
    if (p["verdict"] == "disagree") return "disagree";
    all = all && p["verdict"] == "agree";
  }
  return all ? "agree" : "inconclusive";
}

TEST(ClaimsScorecard, EveryClaimIsMeasuredAsItSays) {
  const std::string out = temp_dir() + "/claims";
  const CliResult run = run_cli("run '" + kClaimsStudy + "' --out '" + out + "' --no-figures");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json r = json::parse(read_all(out + "/results.json"));
  const json& c = r["against_original"];
  ASSERT_EQ(c.size(), 4u);
  for (const auto& x : c) {
    for (const char* key :
         {"claim", "paper", "measured", "verdict", "agrees", "rule", "why", "basis", "parts"})
      EXPECT_TRUE(x.contains(key)) << key;
    // The cause printed is the one for the outcome that happened.
    const std::string v = x["verdict"], why = x["why"];
    EXPECT_EQ(why == "agree: test", v == "agree") << why;
    EXPECT_EQ(why.rfind("Inconclusive: ", 0) == 0, v == "inconclusive") << why;
    EXPECT_EQ(x["agrees"].is_null(), v == "inconclusive");
    EXPECT_EQ(v, combined(x));
  }

  // Pooled mean over big/* contexts of at most 64 KiB: the direction part is the paired interval of
  // UCB1 - AUTO, the figure part UCB1's mean within a band of 1.9 around 0.5 ([-0.45, 1.45]).
  const auto auto_small = pooled(r, "AUTO", "big/", 65536), ucb_small = pooled(r, "UCB1", "big/", 65536);
  ASSERT_FALSE(auto_small.empty());
  EXPECT_EQ(c[0]["values"]["contexts"], auto_small.size());
  EXPECT_NEAR(c[0]["values"]["a"].get<double>(), mean(auto_small), 1e-15);
  EXPECT_NEAR(c[0]["values"]["b"].get<double>(), mean(ucb_small), 1e-15);
  const json& parts = c[0]["parts"];
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_NEAR(parts[0]["estimate"].get<double>(), mean(ucb_small) - mean(auto_small), 1e-15);
  EXPECT_TRUE(parts[0]["allowed"][0].is_null());  // b lower: (-inf, 0)
  EXPECT_LT(parts[0]["allowed"][1].get<double>(), 0.0);
  EXPECT_EQ(parts[0]["verdict"], rule_verdict(parts[0]));
  EXPECT_NEAR(c[0]["figures"]["b"]["measured"].get<double>(), mean(ucb_small), 1e-15);
  EXPECT_LE(c[0]["figures"]["b"]["low"].get<double>(), mean(ucb_small));
  EXPECT_GE(c[0]["figures"]["b"]["high"].get<double>(), mean(ucb_small));
  EXPECT_NEAR(parts[1]["allowed"][0].get<double>(), -0.45, 1e-15);
  EXPECT_NEAR(parts[1]["allowed"][1].get<double>(), 1.45, 1e-15);
  EXPECT_EQ(parts[1]["verdict"], "agree");  // every mean loss of these contexts is far below 1.45
  EXPECT_EQ(c[0]["band"].get<double>(), 1.9);

  // Pooled count above 10% over every scenario, calibrated: a share of the contexts against the band
  // of its figure, 0.9 +- 50% = [0.45, 1.35]. AUTO's share is far below it, so the row disagrees; it
  // is calibrated, so the tally leaves it out.
  const auto ucb_all = pooled(r, "UCB1", "", UINT64_MAX), auto_all = pooled(r, "AUTO", "", UINT64_MAX);
  EXPECT_EQ(c[1]["values"]["a"].get<double>(), above(ucb_all));
  EXPECT_EQ(c[1]["values"]["b"].get<double>(), above(auto_all));
  const double share = above(auto_all) / double(auto_all.size());
  ASSERT_EQ(c[1]["parts"].size(), 1u);
  EXPECT_DOUBLE_EQ(c[1]["figures"]["b"]["measured"].get<double>(), share);
  EXPECT_DOUBLE_EQ(c[1]["parts"][0]["allowed"][0].get<double>(), 0.45);
  EXPECT_DOUBLE_EQ(c[1]["parts"][0]["allowed"][1].get<double>(), 1.35);
  ASSERT_LT(c[1]["parts"][0]["high"].get<double>(), 0.45);
  EXPECT_EQ(c[1]["verdict"], "disagree");
  EXPECT_EQ(c[1]["basis"], "calibrated");

  // Every scenario: ETC's mean above UCB1's, one paired interval per scenario.
  int holds = 0;
  ASSERT_EQ(c[2]["parts"].size(), 3u);
  int i = 0;
  for (const char* sc : {"big/allreduce", "big/allgather", "other/reducescatter"}) {
    const double d = scenario_mean(r, sc, "ETC") - scenario_mean(r, sc, "UCB1");
    holds += d > 0;
    EXPECT_NEAR(c[2]["parts"][i]["estimate"].get<double>(), d, 1e-15) << sc;
    EXPECT_EQ(c[2]["parts"][i]["verdict"], rule_verdict(c[2]["parts"][i])) << sc;
    ++i;
  }
  EXPECT_EQ(c[2]["values"]["holds_in"], holds);
  EXPECT_EQ(c[2]["values"]["scenarios"], 3);

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
  // Two scenarios: p >= 0.5, never rejected, which shows nothing either way.
  EXPECT_EQ(c[3]["verdict"], "inconclusive");
  EXPECT_EQ(r["families"][0]["scenarios"], 2);
  EXPECT_EQ(r["families"][0]["smallest_attainable_p"].get<double>(), 0.5);

  const std::string md = read_all(out + "/report.md");
  EXPECT_NE(md.find("## Against the original study"), std::string::npos);
  EXPECT_NE(md.find("| UCB1 vs ETC is significant | p < 0.05 | "), std::string::npos);
  int n[3] = {0, 0, 0};
  for (int k : {0, 2, 3}) ++n[c[k]["verdict"] == "agree" ? 0 : c[k]["verdict"] == "disagree" ? 1 : 2];
  const std::string tally = std::to_string(n[0]) + " agree, " + std::to_string(n[1]) + " disagree, " +
                            std::to_string(n[2]) + " inconclusive of 3 tested claims";
  EXPECT_NE(md.find("Tested claims: " + tally + ". 1 more restate"), std::string::npos) << md;
  EXPECT_NE(md.find("checked against its calibration range: 0 inside it"), std::string::npos) << md;
  EXPECT_NE(md.find("| verdict | rule | why |"), std::string::npos) << md;
  // A conjecture travels with its claim, labelled as one; a claim without one has none.
  EXPECT_EQ(c[3]["conjecture"], "a cause: test");
  EXPECT_FALSE(c[0].contains("conjecture"));
  EXPECT_NE(md.find("Conjecture, not computed: a cause: test |"), std::string::npos) << md;
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

// A claim whose byte range holds no score context cannot be tested, nor can one the study file marks
// untestable: neither agrees nor disagrees, the report says why, and the tally counts only the claim
// that was tested.
TEST(ClaimsScorecard, AClaimNoContextMatchesIsUntestableAndNotCounted) {
  const std::string claim =
      "\n[[claim]]\npaper = \"lower\"\nkind = \"pooled\"\nmetric = \"mean\"\na = \"AUTO\"\nb = "
      "\"g\"\nagrees_if = \"b_not_higher\"\nmargin = 0.01\nmargin_reason = \"test\"\nbasis = \"tested\"\n"
      "why_agree = \"yes\"\nwhy_disagree = \"no\"\n";
  const std::string dir = temp_dir(), study = dir + "/s.toml", out = dir + "/run";
  // The sweep's smallest size is far above 1 byte; greedy vs AUTO over every context is testable.
  write_file(study, small_study_text("u",
                                     "[[policy]]\nname = \"AUTO\"\nspec = \"auto\"\n[[policy]]\nname = "
                                     "\"g\"\nspec = \"greedy\"\n") +
                        claim + "claim = \"every size\"\n" + claim +
                        "claim = \"tiny messages\"\nmax_bytes = 1\n" +
                        "\n[[claim]]\nclaim = \"live runs\"\npaper = \"0.9x\"\nbasis = \"untestable\"\n"
                        "untestable = \"a live measurement\"\n");
  const CliResult run = run_cli("run '" + study + "' --out '" + out + "' --no-figures");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json r = json::parse(read_all(out + "/results.json"));
  const json& c = r["against_original"];
  ASSERT_EQ(c.size(), 3u);
  ASSERT_NE(c[0]["verdict"], "untestable");
  EXPECT_EQ(c[1]["verdict"], "untestable");
  EXPECT_EQ(c[2]["verdict"], "untestable");
  EXPECT_EQ(c[2]["basis"], "untestable");
  EXPECT_TRUE(c[2]["agrees"].is_null());
  EXPECT_EQ(c[2]["why"], "untestable: a live measurement");
  EXPECT_EQ(c[2]["paper"], "0.9x");
  EXPECT_TRUE(c[1]["agrees"].is_null());
  ASSERT_TRUE(c[1]["untestable"].is_string());
  EXPECT_NE(c[1]["why"].get<std::string>().find("no score context"), std::string::npos);
  const std::string md = read_all(out + "/report.md");
  const std::string v = c[0]["verdict"];
  const std::string tally = std::string(v == "agree" ? "1" : "0") + " agree, " +
                            (v == "disagree" ? "1" : "0") + " disagree, " +
                            (v == "inconclusive" ? "1" : "0") + " inconclusive of 1 tested claims";
  EXPECT_NE(md.find(tally + ", 2 untestable"), std::string::npos) << md;
  EXPECT_NE(md.find("Tested claims: " + tally + ". 2 untestable"), std::string::npos) << md;
  EXPECT_NE(md.find("| untestable |"), std::string::npos) << md;
}

// A calibrated row is checked against the calibration range it states: AUTO's mean loss lies far
// below [90%, 100%] (disagree: the row says it is outside), and inside [0, unbounded] (agree).
TEST(ClaimsScorecard, ACalibratedRowOutsideItsRangeSaysSo) {
  const std::string claim =
      "\n[[claim]]\npaper = \"6.1%\"\nkind = \"pooled\"\nmetric = \"mean\"\na = \"AUTO\"\nb = \"g\"\n"
      "agrees_if = \"b_lower\"\npaper_a = 0.061\nbasis = \"calibrated\"\nwhy_agree = \"inside its range\"\n"
      "why_disagree = \"outside its range\"\n";
  const std::string dir = temp_dir(), study = dir + "/s.toml", out = dir + "/run";
  write_file(study, small_study_text("cal",
                                     "[[policy]]\nname = \"AUTO\"\nspec = \"auto\"\n[[policy]]\nname = "
                                     "\"g\"\nspec = \"greedy\"\n") +
                        claim + "claim = \"off the fit\"\nrange = [0.9, 1.0]\n" + claim +
                        "claim = \"on the fit\"\nrange = [0.0, inf]\n");
  const CliResult run = run_cli("run '" + study + "' --out '" + out + "' --no-figures");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json r = json::parse(read_all(out + "/results.json"));
  const json& c = r["against_original"];
  ASSERT_EQ(c.size(), 2u);
  ASSERT_LT(c[0]["parts"][0]["high"].get<double>(), 0.9);
  EXPECT_EQ(c[0]["verdict"], "disagree");
  EXPECT_EQ(c[0]["why"], "outside its range");
  EXPECT_EQ(c[0]["range"], json({0.9, 1.0}));
  EXPECT_EQ(c[1]["verdict"], "agree");
  EXPECT_EQ(c[1]["why"], "inside its range");
  const std::string md = read_all(out + "/report.md");
  EXPECT_NE(md.find("each checked against its calibration range: 1 inside it"), std::string::npos) << md;
  EXPECT_NE(md.find("| outside its range |"), std::string::npos) << md;
}

// A match on a single context has one difference, which no t-test can use: the row is inconclusive
// and says why, and the run does not fail.
TEST(ClaimsScorecard, AMatchOnOneContextIsInconclusive) {
  const std::string dir = temp_dir(), study = dir + "/s.toml", out = dir + "/run";
  write_file(study, small_study_text("one",
                                     "[[policy]]\nname = \"AUTO\"\nspec = \"auto\"\n[[policy]]\nname = "
                                     "\"g\"\nspec = \"greedy\"\n") +
                        "\n[[claim]]\nclaim = \"one size\"\npaper = \"match\"\nkind = \"pooled\"\nmetric = "
                        "\"mean\"\na = \"AUTO\"\nb = \"g\"\nmin_bytes = 1024\nmax_bytes = 1024\nagrees_if = "
                        "\"b_not_higher\"\nmargin = 0.01\nmargin_reason = \"test\"\nbasis = \"tested\"\n"
                        "why_agree = \"yes\"\nwhy_disagree = \"no\"\n");
  const CliResult run = run_cli("run '" + study + "' --out '" + out + "' --no-figures");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json r = json::parse(read_all(out + "/results.json"));
  const json& c = r["against_original"][0];
  EXPECT_EQ(c["values"]["contexts"], 1);
  EXPECT_EQ(c["verdict"], "inconclusive");
  EXPECT_EQ(c["why"].get<std::string>().rfind("Inconclusive: b - a", 0), 0u) << c["why"];
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
      "must be tested, calibrated or untestable");
  // A claim the study cannot test says why, and takes nothing to compare.
  const std::string untestable = "\n[[claim]]\nclaim = \"x\"\npaper = \"y\"\nbasis = \"untestable\"\n";
  fails(untestable, "needs untestable");
  fails(untestable + "untestable = \"no data\"\na = \"AUTO\"\n",
        "unknown key 'a' in [[claim]] of basis untestable");
  fails(untestable + "untestable = \"\"\n", "claim.untestable must not be empty");
  fails("\n[[claim]]\nclaim = \"x\"\npaper = \"y\"\nwhy = \"z\"\n" + pooled, "why_agree and why_disagree");
  // A why text that states a cause is refused: the cause goes in claim.conjecture.
  fails(
      "\n[[claim]]\nclaim = \"x\"\npaper = \"y\"\nwhy_agree = \"z\"\nwhy_disagree = \"Likely cause: "
      "w\"\nbasis = "
      "\"tested\"\n" +
          pooled,
      "claim.why_disagree states a cause ('cause')");
  fails(head + pooled + "conjecture = \"\"\n", "claim.conjecture must not be empty");
  fails("\n[[hypothesis]]\na = \"UCB1\"\nb = \"AUTO\"\nscenarios = [\"nope\"]\n", "matches no [[scenario]]");
  // Equivalence claims need their margin and its reason; no other claim takes one.
  fails(head + hyp + "agrees_if = \"not_reject\"\n", "needs margin and margin_reason");
  fails(head + hyp + "agrees_if = \"not_reject\"\nmargin = 0.01\n", "needs margin and margin_reason");
  fails(head + hyp + "agrees_if = \"not_reject\"\nmargin = 0\nmargin_reason = \"r\"\n",
        "claim.margin must be in");
  fails(head + pooled + "margin = 0.01\nmargin_reason = \"r\"\n", "goes with agrees_if = b_not_higher");
  fails(head +
            "kind = \"pooled\"\nmetric = \"p99\"\na = \"AUTO\"\nb = \"UCB1\"\nagrees_if = "
            "\"b_not_higher\"\nmargin = 0.01\nmargin_reason = \"r\"\n",
        "non-inferiority test of the mean");
  // A count's ratio must be on the claimed side of 1, on a pooled count claim.
  const std::string count = "kind = \"pooled\"\nmetric = \"above_10pct\"\na = \"AUTO\"\nb = \"UCB1\"\n";
  fails(head + count + "agrees_if = \"b_lower\"\npaper_ratio = 1.3\n", "wrong side of 1");
  fails(head + count + "agrees_if = \"b_higher\"\npaper_ratio = 0.5\n", "wrong side of 1");
  fails(head + pooled + "paper_ratio = 0.5\n", "goes with a pooled above_10pct claim");
  // A calibration range belongs to a calibrated claim with one figure, low <= high.
  fails(head + pooled + "paper_a = 0.06\nrange = [0.03, 0.1]\n", "goes with a calibrated claim");
  const std::string calibrated =
      "\n[[claim]]\nclaim = \"x\"\npaper = \"y\"\nwhy_agree = \"z\"\nwhy_disagree = \"w\"\nbasis = "
      "\"calibrated\"\n" +
      pooled + "paper_a = 0.06\n";
  fails(calibrated + "range = [0.1, 0.03]\n", "low is above its high");
  fails(calibrated + "range = [0.1]\n", "must be [low, high]");
  EXPECT_NO_THROW(study::parse_study(base + calibrated + "range = [0.5, inf]\n", "s.toml"));
}

}  // namespace
}  // namespace ncclbot::test
