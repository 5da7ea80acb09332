// The strict study loader: a valid file parses into the expected spec; every kind of mistake is an
// InputError whose message names the file, the line and the reason.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "ncclbot/core/error.hpp"
#include "study/study_spec.hpp"

namespace ncclbot::study {
namespace {

const char* kValid = R"([study]
name = "t"
seed = 7
seeds = 3
horizon = 50
curve_horizons = [10, 20]
objective = "p99"
alpha = 0.05
bootstrap_resamples = 500

[[sweep]]
name = "a"
preset = "h100-ib-a"
seed = 2
nodes = [4, 8, 16]
collectives = ["allreduce", "all_gather"]

[[sweep]]
name = "b"
file = "sweeps/b.csv"

[[scenario]]
name = "s1"
tune = { sweep = "a", nodes = [4, 8] }
score = { sweep = "b", nodes = [16], collectives = ["allreduce"] }

[[policy]]
name = "AUTO"
spec = "auto"

[[policy]]
name = "UCB1"
spec = "ucb1:c=0.1|0.5,n0=0|4"

[[hypothesis]]
a = ["UCB1"]
b = "AUTO"
metrics = ["mean", "above_10pct"]
family = "primary"
)";

// Every study the project ships loads: a rule the loader gains (a why text that states a cause, a
// key renamed) fails here before a user runs the study.
TEST(StudyLoader, EveryShippedStudyLoads) {
  int studies = 0;
  for (const auto& e :
       std::filesystem::directory_iterator(std::string(NCCLBOT_SOURCE_DIR) + "/experiments")) {
    if (e.path().extension() != ".toml") continue;
    std::ifstream in(e.path());
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (text.find("\n[study]") == std::string::npos) continue;  // hipipe.toml: `ncclbot hipipe`'s options
    ++studies;
    EXPECT_NO_THROW(study::load_study(e.path().string())) << e.path();
  }
  EXPECT_GE(studies, 10);
}

TEST(StudyLoader, ParsesEveryField) {
  const StudySpec s = parse_study(kValid, "/x/study.toml");
  EXPECT_EQ(s.name, "t");
  EXPECT_EQ(s.seed, 7u);
  EXPECT_EQ(s.seeds, 3);
  EXPECT_EQ(s.horizon, 50);
  // The final horizon is appended to the learning curve.
  EXPECT_EQ(s.curve_horizons, (std::vector<int>{10, 20, 50}));
  EXPECT_EQ(s.objective, Metric::kP99);
  EXPECT_EQ(s.bootstrap_resamples, 500);
  ASSERT_EQ(s.sweeps.size(), 2u);
  EXPECT_EQ(s.sweeps[0].preset, "h100-ib-a");
  EXPECT_EQ(s.sweeps[0].nodes, (std::vector<int>{4, 8, 16}));
  EXPECT_EQ(s.sweeps[0].collectives,
            (std::vector<Collective>{Collective::kAllReduce, Collective::kAllGather}));
  // Sweep files are relative to the study file's folder.
  EXPECT_EQ(s.sweeps[1].file, "/x/sweeps/b.csv");
  ASSERT_EQ(s.scenarios.size(), 1u);
  EXPECT_EQ(s.scenarios[0].tune.sweep, "a");
  EXPECT_EQ(s.scenarios[0].score.sweep, "b");
  EXPECT_EQ(s.scenarios[0].score.nodes, (std::vector<int>{16}));
  EXPECT_EQ(s.scenarios[0].line, 22);  // the [[scenario]] header line
  ASSERT_EQ(s.policies.size(), 2u);
  EXPECT_EQ(s.policies[1].spec, "ucb1:c=0.1|0.5,n0=0|4");
  EXPECT_EQ(s.policies[1].line, 31);
  // One hypothesis per (a, b, metric).
  ASSERT_EQ(s.hypotheses.size(), 2u);
  EXPECT_EQ(s.hypotheses[1].metric, Metric::kAbove10pct);
  EXPECT_EQ(s.hypotheses[0].a, "UCB1");
  EXPECT_EQ(s.hypotheses[0].b, "AUTO");
}

// Replaces the first occurrence of `from` in the valid study and expects "FILE:LINE: ...reason...".
void expect_error(const std::string& from, const std::string& to, long line, const std::string& reason) {
  std::string text = kValid;
  const size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
  try {
    parse_study(text, "study.toml");
    FAIL() << "no error for " << to;
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(e.line(), line) << msg;
    EXPECT_EQ(msg.rfind("study.toml:" + std::to_string(line) + ": ", 0), 0u) << msg;
    EXPECT_NE(msg.find(reason), std::string::npos) << msg;
  }
}

// The feedback delay of every replay (replay/replay.hpp): the leader protocol's 8 when left out
// (scored as deployed by default), at most kMaxReplayDelay.
TEST(StudyLoader, FeedbackDelay) {
  EXPECT_EQ(parse_study(kValid, "/x/study.toml").delay, 8);
  std::string text = kValid;
  text.replace(text.find("horizon = 50"), 12, "horizon = 50\ndelay = 64");
  EXPECT_EQ(parse_study(text, "/x/study.toml").delay, 64);
}

// Scoring as deployed (deployed/deployed_cost.hpp): the leader protocol by default, the mode's
// schedule unless `delay` is given, and "ideal" for the undelayed world without plugin costs.
TEST(StudyLoader, AsDeployedTakesThePluginsDelayUnlessOneIsGiven) {
  const StudySpec by_default = parse_study(kValid, "/x/study.toml");
  ASSERT_TRUE(by_default.as_deployed.has_value());
  EXPECT_EQ(*by_default.as_deployed, Deployment::kLeader);
  EXPECT_EQ(by_default.delay, 8);  // leader_protocol.hpp: windows of 4 asked for 8 calls ahead
  EXPECT_EQ(by_default.window, 4);
  EXPECT_EQ(by_default.policy_start, 12);
  std::string leader = kValid;
  leader.replace(leader.find("horizon = 50"), 12, "horizon = 50\nas_deployed = \"leader\"");
  const StudySpec l = parse_study(leader, "/x/study.toml");
  ASSERT_TRUE(l.as_deployed.has_value());
  EXPECT_EQ(*l.as_deployed, Deployment::kLeader);
  EXPECT_EQ(l.delay, deployed_delay(Deployment::kLeader));
  EXPECT_GT(l.delay, 0);  // leader windows always make feedback late
  std::string ideal = kValid;
  ideal.replace(ideal.find("horizon = 50"), 12, "horizon = 50\nas_deployed = \"ideal\"");
  const StudySpec i = parse_study(ideal, "/x/study.toml");
  EXPECT_FALSE(i.as_deployed.has_value());
  EXPECT_EQ(i.delay, 0);
  EXPECT_EQ(i.window, 1);
  std::string given = kValid;
  given.replace(given.find("horizon = 50"), 12, "horizon = 50\ndelay = 3\nas_deployed = \"leader\"");
  EXPECT_EQ(parse_study(given, "/x/study.toml").delay, 3);
  std::string local = kValid;
  local.replace(local.find("horizon = 50"), 12, "horizon = 50\nas_deployed = \"local\"");
  EXPECT_EQ(*parse_study(local, "/x/study.toml").as_deployed, Deployment::kLocal);
  expect_error("horizon = 50", "horizon = 50\nas_deployed = \"cluster\"", 6,
               "study.as_deployed must be \"ideal\", \"local\" or \"leader\"");
  expect_error("horizon = 50", "horizon = 50\nas_deployed = 1", 6, "study.as_deployed must be a string");
}

TEST(StudyLoader, ErrorsNameLineAndReason) {
  expect_error("horizon = 50", "horizon = 50\ndelay = 1025", 6, "study.delay must be in");
  expect_error("horizon = 50", "horizon = 50\ndelay = -1", 6, "study.delay must be in");
  expect_error("seeds = 3", "seedz = 3", 4, "unknown key 'seedz'");
  expect_error("horizon = 50", "horizon = \"50\"", 5, "study.horizon must be an integer");
  expect_error("horizon = 50", "horizon = 0", 5, "study.horizon must be in");
  expect_error("objective = \"p99\"", "objective = \"median\"", 7, "not a metric");
  expect_error("curve_horizons = [10, 20]", "curve_horizons = [20, 10]", 6, "increasing");
  expect_error("alpha = 0.05", "alpha = 0.0", 8, "study.alpha must be in");
  expect_error("\"all_gather\"", "\"alltoall_x\"", 16, "unknown collective 'alltoall_x'");
  expect_error("file = \"sweeps/b.csv\"", "file = \"sweeps/b.csv\"\nseed = 3", 21,
               "applies only to a synthesised");
  expect_error("preset = \"h100-ib-a\"", "preset = \"h100-ib-a\"\nfile = \"x.csv\"", 11,
               "exactly one of preset or file");
  expect_error("score = { sweep = \"b\"", "score = { sweep = \"c\"", 25, "not a [[sweep]] of this study");
  expect_error("tune = { sweep = \"a\", nodes = [4, 8] }\n", "", 22, "needs both tune and score");
  expect_error("name = \"UCB1\"", "name = \"AUTO\"", 31, "duplicate policy name 'AUTO'");
  expect_error("b = \"AUTO\"", "b = \"NOPE\"", 37, "policy 'NOPE', which is not a [[policy]]");
  expect_error("b = \"AUTO\"", "b = \"UCB1\"", 35, "with itself");
  expect_error("metrics = [\"mean\", \"above_10pct\"]", "metrics = [\"mean\", 3]", 38, "must be a string");
  expect_error("[[hypothesis]]", "[[hypotheses]]", 35, "unknown key 'hypotheses'");
  expect_error("name = \"s1\"", "name = \"s 1\"", 23, "scenario name 's 1'");
  // A syntax error is reported at its line by the TOML parser.
  expect_error("seed = 7", "seed = = 7", 3, "");
}

TEST(StudyLoader, HiPipeArmKeyOnSynthesisedSweepsOnly) {
  EXPECT_FALSE(parse_study(kValid, "/x/study.toml").sweeps[0].hipipe);  // off unless asked
  std::string text = kValid;
  text.replace(text.find("seed = 2\n"), 9, "seed = 2\nhipipe = true\n");
  EXPECT_TRUE(parse_study(text, "/x/study.toml").sweeps[0].hipipe);
  expect_error("seed = 2\n", "seed = 2\nhipipe = 1\n", 15, "sweep.hipipe must be true or false");
  expect_error("file = \"sweeps/b.csv\"", "file = \"sweeps/b.csv\"\nhipipe = true", 21,
               "sweep.hipipe applies only to a synthesised sweep");
}

// [[variant]]s (docs/study.md, "Variants and sensitivity"): a name and the knobs it changes.
const std::string kSynthOnly = [] {
  std::string text = kValid;
  const auto replace = [&](const std::string& from, const std::string& to) {
    text.replace(text.find(from), from.size(), to);
  };
  replace("[[sweep]]\nname = \"b\"\nfile = \"sweeps/b.csv\"\n\n", "");
  replace("score = { sweep = \"b\"", "score = { sweep = \"a\"");
  return text;
}();

// `base` and a blank line, then `variants`: in kSynthOnly (35 lines) they start at line 37.
void expect_variant_error(const std::string& base, const std::string& variants, long line,
                          const std::string& reason) {
  try {
    parse_study(base + "\n" + variants, "study.toml");
    FAIL() << "no error for " << variants;
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("study.toml:" + std::to_string(line) + ": ", 0), 0u) << msg;
    EXPECT_NE(msg.find(reason), std::string::npos) << msg;
  }
}

TEST(StudyLoader, ParsesVariants) {
  EXPECT_TRUE(parse_study(kSynthOnly, "s.toml").variants.empty());
  const StudySpec s =
      parse_study(kSynthOnly +
                      "\n[[variant]]\nname = \"noise x0.5\"\nnoise_scale = 0.5\n"
                      "\n[[variant]]\nname = \"delay 512\"\ndelay = 512\n"
                      "\n[[variant]]\nname = \"Model off\"\nfirst_use = false\ndrift = false\n"
                      "warmup = false\nobservation = false\n",
                  "s.toml");
  ASSERT_EQ(s.variants.size(), 3u);
  const Variant& noise = s.variants[0];
  EXPECT_EQ(noise.name, "noise x0.5");
  EXPECT_EQ(noise.slug, "noise-x0.5");
  EXPECT_EQ(noise.line, 37);
  EXPECT_EQ(noise.noise_scale, 0.5);
  // A knob left out keeps the study's own value.
  EXPECT_FALSE(noise.delay || noise.drift || noise.first_use || noise.warmup || noise.observation);
  EXPECT_EQ(s.variants[1].slug, "delay-512");
  EXPECT_EQ(s.variants[1].delay, 512);
  EXPECT_FALSE(s.variants[1].noise_scale);
  const Variant& off = s.variants[2];
  EXPECT_EQ(off.slug, "model-off");
  EXPECT_EQ(off.first_use, false);
  EXPECT_EQ(off.drift, false);
  EXPECT_EQ(off.warmup, false);
  EXPECT_EQ(off.observation, false);
  // Scoring as deployed is a replay knob too, and a sweep file does not stop it.
  const StudySpec d = parse_study(
      std::string(kValid) + "\n[[variant]]\nname = \"as deployed\"\nas_deployed = \"local\"\n", "s.toml");
  EXPECT_EQ(d.variants.at(0).as_deployed, "local");
  EXPECT_FALSE(d.variants.at(0).delay);
  // A study with a sweep file may still vary the feedback delay, which is the replay's.
  EXPECT_EQ(parse_study(std::string(kValid) + "\n[[variant]]\nname = \"d\"\ndelay = 4\n", "s.toml")
                .variants.at(0)
                .delay,
            4);
}

TEST(StudyLoader, VariantSlugs) {
  EXPECT_EQ(variant_slug("noise x0.5"), "noise-x0.5");
  EXPECT_EQ(variant_slug("First use OFF"), "first-use-off");
  EXPECT_EQ(variant_slug("  a -- b!  "), "a-b");
  EXPECT_EQ(variant_slug("v1.2.3"), "v1.2.3");
  EXPECT_EQ(variant_slug("x.y"), "x-y");  // a dot only between digits
  EXPECT_EQ(variant_slug("../.."), "");
  EXPECT_EQ(variant_slug("!!!"), "");
}

TEST(StudyLoader, VariantErrorsNameLineAndReason) {
  const std::string v = "[[variant]]\nname = \"v\"\n";  // header at line 37, name at 38
  expect_variant_error(kSynthOnly, v + "noise = 2\n", 39, "unknown key 'noise' in [[variant]]");
  expect_variant_error(kSynthOnly, v + "drift = \"no\"\n", 39, "variant.drift must be true or false");
  expect_variant_error(kSynthOnly, v + "delay = 1.5\n", 39, "variant.delay must be an integer");
  expect_variant_error(kSynthOnly, v + "delay = 1025\n", 39, "variant.delay must be in");
  expect_variant_error(kSynthOnly, v + "as_deployed = \"rack\"\n", 39,
                       "variant.as_deployed must be \"ideal\", \"local\" or \"leader\"");
  expect_variant_error(kSynthOnly, v + "noise_scale = \"x\"\n", 39, "variant.noise_scale must be a number");
  expect_variant_error(kSynthOnly, v + "noise_scale = -1\n", 39, "variant.noise_scale must be in");
  expect_variant_error(kSynthOnly, v, 37, "variant 'v' changes nothing");
  // Settings equal to the study's own rerun the baseline: the default noise scale, the default
  // scoring mode (leader).
  expect_variant_error(kSynthOnly, v + "noise_scale = 1\n", 37, "variant 'v' is the baseline");
  expect_variant_error(kSynthOnly, v + "as_deployed = \"leader\"\n", 37, "variant 'v' is the baseline");
  expect_variant_error(kSynthOnly, v + "drift = true\nwarmup = true\n", 37, "variant 'v' is the baseline");
  expect_variant_error(kSynthOnly, "[[variant]]\ndelay = 2\n", 37, "[[variant]] needs a name");
  expect_variant_error(kSynthOnly, "[[variant]]\nname = 3\ndelay = 2\n", 38, "variant.name must be a string");
  expect_variant_error(kSynthOnly, v + "delay = 2\n[[variant]]\nname = \"v\"\ndelay = 4\n", 40,
                       "duplicate variant name 'v'");
  expect_variant_error(kSynthOnly, v + "delay = 2\n[[variant]]\nname = \"V\"\ndelay = 4\n", 41,
                       "would share the folder variants/v with variant 'v' (line 37)");
  expect_variant_error(kSynthOnly, "[[variant]]\nname = \"Baseline\"\ndelay = 2\n", 38, "is reserved");
  expect_variant_error(kSynthOnly, "[[variant]]\nname = \"+++\"\ndelay = 2\n", 38,
                       "needs a letter or a digit");
  expect_variant_error(kSynthOnly, "[[variant]]\nname = \"a`b\"\ndelay = 2\n", 38, "printable ASCII");
  expect_variant_error("variant = 3", kSynthOnly, 1, "variant must be an array of tables");
  // A sweep read from a file has its noise inside its samples: a variant cannot change it.
  expect_variant_error(
      kValid, v + "noise_scale = 2\n", 43,
      "variant 'v': noise_scale cannot change sweep 'b' (line 18), which is read from a file");
}

TEST(StudyLoader, MissingPartsAreErrors) {
  EXPECT_THROW(parse_study("[study]\nname = \"x\"\n", "s.toml"), InputError);  // no sweeps
  try {
    parse_study("[[sweep]]\nname = \"a\"\npreset = \"p\"\n", "s.toml");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("missing [study]"), std::string::npos);
  }
  EXPECT_THROW(load_study("/nonexistent/study.toml"), InputError);
}

}  // namespace
}  // namespace ncclbot::study
