// Draws of the simulator (StudySpec::draws, docs/study.md "Draws"): `draws = N` runs the study on
// its sweeps and on N - 1 redraws, each every synthesised sweep's seed moved by 1 ... N - 1, and
// counts the claims' verdicts over all of them. The counts are checked against each run's own
// results.json, and the loader's refusals by their messages.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "ncclbot/core/error.hpp"
#include "report/claims_over_draws.hpp"
#include "study/study_spec.hpp"
#include "study/study_variants.hpp"
#include "support/run_cli.hpp"

using namespace ncclbot;
using namespace ncclbot::test;
using nlohmann::json;

namespace {

const std::string kClaimsTestStudy = std::string(NCCLBOT_TEST_DATA_DIR) + "/study/claims.toml";

// The claims test study with `line` added to its [study] table.
std::string claims_study_with(const std::string& line) {
  std::string text = read_all(kClaimsTestStudy);
  const size_t at = text.find("[study]\n");
  return text.insert(at + 8, line + "\n");
}

}  // namespace

TEST(Draws, EachDrawIsAVariantWhoseSweepsMoveTheirSeed) {
  const study::StudySpec s = study::parse_study(claims_study_with("draws = 3"), "s.toml");
  EXPECT_EQ(s.draws, 3);
  ASSERT_EQ(s.variants.size(), 2u);
  EXPECT_EQ(s.variants[0].name, "draw 2");
  EXPECT_EQ(s.variants[0].slug, "draw-2");
  EXPECT_EQ(s.variants[0].seed_offset, 1);
  EXPECT_EQ(s.variants[1].name, "draw 3");
  EXPECT_EQ(s.variants[1].seed_offset, 2);
  EXPECT_EQ(study::variant_knobs(s.variants[1]), (json{{"seed_offset", 2}}));
  EXPECT_EQ(study::baseline_knobs(s), (json{{"seed_offset", 0}}));
  // The variant's own study: the sweep's seed 11 moved by 2, and no draws of its own.
  const study::StudySpec third = study::variant_study(s, s.variants[1], temp_dir());
  EXPECT_EQ(third.draws, 1);
  EXPECT_TRUE(third.variants.empty());
  ASSERT_EQ(third.sweeps.size(), 1u);
  EXPECT_EQ(third.sweeps[0].seed, 13u);
}

TEST(Draws, WhatCannotBeRedrawnIsRefusedAtItsLine) {
  const auto fails = [](const std::string& text, const std::string& reason) {
    try {
      study::parse_study(text, "s.toml");
      ADD_FAILURE() << "accepted";
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("s.toml:"), std::string::npos) << what;
      EXPECT_NE(what.find(reason), std::string::npos) << what;
    }
  };
  fails(claims_study_with("draws = 0"), "study.draws");
  fails(claims_study_with("draws = 2") + "\n[[variant]]\nname = \"draw 2\"\nnoise_scale = 2\n",
        "the variant 'draw 2' (line");
  // A sweep read from a file has one draw.
  std::string from_file = claims_study_with("draws = 2");
  const std::string synthesised =
      "preset = \"h100-ib-a\"\nseed = 11\nnodes = [4, 16]\ncollectives = [\"allreduce\", \"allgather\", "
      "\"reducescatter\"]\nsamples = 3\n";
  const size_t at = from_file.find(synthesised);
  ASSERT_NE(at, std::string::npos);
  from_file.replace(at, synthesised.size(), "file = \"s.csv\"\n");
  fails(from_file, "sweep 'sim' (line");
}

// The counts over draws, by hand: three draws (the baseline and two seed offsets); a variant that
// changes anything else is no draw.
TEST(Draws, TheCountsAreTheDrawsVerdicts) {
  const auto entry = [](const std::string& variant, json knobs, const char* first, const char* second) {
    return json{{"variant", variant},
                {"knobs", std::move(knobs)},
                {"claims",
                 {{{"claim", "A"}, {"basis", "tested"}, {"verdict", first}},
                  {{"claim", "B"}, {"basis", "calibrated"}, {"verdict", second}}}}};
  };
  const json sensitivity = {entry("baseline", {{"seed_offset", 0}, {"delay", 8}}, "agree", "disagree"),
                            entry("draw 2", {{"seed_offset", 1}}, "inconclusive", "agree"),
                            entry("noise x2", {{"noise_scale", 2.0}}, "disagree", "disagree"),
                            entry("draw 3", {{"seed_offset", 2}}, "agree", "untestable")};
  const json d = report::claims_over_draws(sensitivity);
  EXPECT_EQ(d["draws"], 3);
  ASSERT_EQ(d["claims"].size(), 2u);
  EXPECT_EQ(d["claims"][0], (json{{"claim", "A"},
                                  {"basis", "tested"},
                                  {"agree", 2},
                                  {"disagree", 0},
                                  {"inconclusive", 1},
                                  {"untestable", 0}}));
  EXPECT_EQ(d["claims"][1], (json{{"claim", "B"},
                                  {"basis", "calibrated"},
                                  {"agree", 1},
                                  {"disagree", 1},
                                  {"inconclusive", 0},
                                  {"untestable", 1}}));
  // The tally counts tested claims only: A's three draws.
  EXPECT_EQ(d["tally"], (json{{"agree", 2}, {"disagree", 0}, {"inconclusive", 1}}));
  // One draw is no count over draws.
  EXPECT_TRUE(report::claims_over_draws(json::array({sensitivity[0], sensitivity[2]})).is_null());
}

// A whole run with two draws: results.json's counts are the verdicts of the base run and of
// variants/draw-2, each read from its own results.json, and the report says so.
TEST(Draws, ARunCountsEachClaimOverItsDraws) {
  const std::string dir = temp_dir();
  write_file(dir + "/claims.toml", claims_study_with("draws = 2"));
  const std::string out = dir + "/out";
  const CliResult run = run_cli("run '" + dir + "/claims.toml' --out '" + out + "' --no-figures");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json base = json::parse(read_all(out + "/results.json"));
  const json second = json::parse(read_all(out + "/variants/draw-2/results.json"));
  ASSERT_TRUE(base.contains("claims_over_draws")) << base.dump().substr(0, 400);
  const json& d = base["claims_over_draws"];
  EXPECT_EQ(d["draws"], 2);
  const json& mine = base["against_original"];
  const json& theirs = second["against_original"];
  ASSERT_EQ(d["claims"].size(), mine.size());
  ASSERT_EQ(theirs.size(), mine.size());
  int tested_agree = 0;
  for (size_t i = 0; i < mine.size(); ++i) {
    const json& row = d["claims"][i];
    EXPECT_EQ(row["claim"], mine[i]["claim"]);
    for (const char* v : {"agree", "disagree", "inconclusive", "untestable"})
      EXPECT_EQ(row[v].get<int>(), int(mine[i]["verdict"] == v) + int(theirs[i]["verdict"] == v)) << v;
    if (mine[i]["basis"] == "tested")
      tested_agree += int(mine[i]["verdict"] == "agree") + int(theirs[i]["verdict"] == "agree");
  }
  EXPECT_EQ(d["tally"]["agree"], tested_agree);
  // The second draw ran on another sweep: seed 12 in its own study file.
  EXPECT_NE(read_all(out + "/variants/draw-2/study.toml").find("seed = 12"), std::string::npos);
  const std::string md = read_all(out + "/report.md");
  EXPECT_NE(md.find("### Over 2 draws of the simulator"), std::string::npos) << md;
  // The first screen's headline is the count over the draws, the study's own draw beside it.
  const int agree = d["tally"]["agree"], disagree = d["tally"]["disagree"], open = d["tally"]["inconclusive"];
  EXPECT_NE(md.find("Against the original study, over 2 draws of the simulator: " + std::to_string(agree) +
                    " agree, " + std::to_string(disagree) + " disagree, " + std::to_string(open) +
                    " inconclusive of " + std::to_string(agree + disagree + open) +
                    " (claim, draw) pairs; on the study's own sweeps "),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| claim | basis | agree | disagree | inconclusive | untestable |"), std::string::npos);
}

// The simulator's deviation model (sim::DeviationModel) as a [[sweep]] key and a variant knob: the
// variant's study sets it on every synthesised sweep; an unknown model, or the baseline's own, is
// refused at its line.
TEST(Draws, DeviationsAreASweepKeyAndAVariantKnob) {
  const std::string base = read_all(kClaimsTestStudy);
  const study::StudySpec s =
      study::parse_study(base + "\n[[variant]]\nname = \"indep\"\ndeviations = \"independent\"\n", "s.toml");
  ASSERT_EQ(s.variants.size(), 1u);
  EXPECT_EQ(s.variants[0].deviations, "independent");
  EXPECT_EQ(s.sweeps[0].deviations, "structured");
  EXPECT_EQ(study::variant_knobs(s.variants[0]), (json{{"deviations", "independent"}}));
  EXPECT_EQ(study::baseline_knobs(s), (json{{"deviations", "structured"}}));
  const study::StudySpec v = study::variant_study(s, s.variants[0], temp_dir());
  EXPECT_EQ(v.sweeps[0].deviations, "independent");
  const auto fails = [](const std::string& text, const std::string& reason) {
    try {
      study::parse_study(text, "s.toml");
      ADD_FAILURE() << "accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
    }
  };
  fails(base + "\n[[variant]]\nname = \"x\"\ndeviations = \"random\"\n",
        "variant.deviations must be \"structured\", \"independent\" or \"adversarial\"");
  fails(base + "\n[[variant]]\nname = \"x\"\ndeviations = \"structured\"\n", "is the baseline");
  std::string bad = base;
  bad.insert(bad.find("seed = 11\n"), "deviations = \"Independent\"\n");
  fails(bad, "sweep.deviations must be");
}
