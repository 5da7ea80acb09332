// A study's [[variant]]s (docs/study.md, "Variants and sensitivity"): `ncclbot run` runs the base
// study and each variant as a complete run in DIR/variants/SLUG/, adds the "sensitivity" entries to
// the base's results.json and the section "Conclusions vs assumptions" to its report; a variant's
// numbers are those of the base study with its knobs set by hand; and the variant folders follow
// the run-folder rules (resumable, byte-identical reruns, removed variants emptied, foreign folders
// refused).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "ncclbot/core/error.hpp"
#include "study/study_spec.hpp"
#include "study/study_variants.hpp"
#include "support/run_cli.hpp"

namespace ncclbot::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kVariantsStudy = std::string(NCCLBOT_TEST_DATA_DIR) + "/study/variants.toml";

json results_of(const std::string& dir) {
  return json::parse(read_all(dir + "/results.json"));
}

// The study file without its [[variant]] tables, with `edit` applied: `from` -> `to`.
std::string base_with(const std::string& from, const std::string& to) {
  std::string text = read_all(kVariantsStudy);
  text = text.substr(0, text.find("[[variant]]"));
  text.replace(text.find(from), from.size(), to);
  return text;
}

TEST(Sensitivity, VariantStudyTextIsTheBaseWithTheKnobsWrittenIn) {
  const study::StudySpec base = study::load_study(kVariantsStudy);
  ASSERT_EQ(base.variants.size(), 2u);
  const study::StudySpec noise = study::variant_study(base, base.variants[0], "/tmp/x/variants/noise-x2");
  EXPECT_TRUE(noise.variants.empty());
  EXPECT_EQ(noise.path, kVariantsStudy + " with its variant 'noise x2'");
  ASSERT_EQ(noise.sweeps.size(), 1u);
  EXPECT_EQ(noise.sweeps[0].noise_scale, 2.0);
  EXPECT_EQ(noise.delay, 0);  // the base scores in the ideal world
  EXPECT_EQ(noise.sweeps[0].seed, base.sweeps[0].seed);
  EXPECT_EQ(noise.curve_horizons, base.curve_horizons);
  EXPECT_EQ(noise.hypotheses.size(), base.hypotheses.size());
  const study::StudySpec delay = study::variant_study(base, base.variants[1], "/tmp/x/variants/delay-8");
  EXPECT_EQ(delay.delay, 8);
  EXPECT_EQ(delay.sweeps[0].noise_scale, 1.0);
  EXPECT_EQ(study::variant_knobs(base.variants[0]), json({{"noise_scale", 2.0}}));
  EXPECT_EQ(study::baseline_knobs(base), json({{"noise_scale", 1.0}, {"delay", 0}}));

  // A sweep file is restated relative to the variant's folder and still names the same file.
  const std::string dir = temp_dir();
  fs::create_directories(dir + "/data");
  write_file(dir + "/data/s.csv", "");
  write_file(
      dir + "/study.toml",
      "[study]\nname = \"f\"\n[[sweep]]\nname = \"m\"\nfile = \"data/s.csv\"\n[[scenario]]\nname = \"s\"\n"
      "tune = { sweep = \"m\" }\nscore = { sweep = \"m\" }\n[[policy]]\nname = \"A\"\nspec = \"auto\"\n"
      "[[variant]]\nname = \"d\"\ndelay = 3\n");
  const study::StudySpec with_file = study::load_study(dir + "/study.toml");
  const study::StudySpec varied =
      study::variant_study(with_file, with_file.variants[0], dir + "/out/variants/d");
  EXPECT_EQ(fs::weakly_canonical(varied.sweeps[0].file), fs::weakly_canonical(dir + "/data/s.csv"));
  EXPECT_NE(study::variant_study_text(with_file, with_file.variants[0], dir + "/out/variants/d")
                .find("file = '../../../data/s.csv'"),
            std::string::npos);
}

// An as-deployed variant writes the mode into [study] and, unless it gives its own delay, drops the
// base's delay so that the plugin's schedule of that mode applies; "ideal" is a mode too.
TEST(Sensitivity, AsDeployedVariantTakesThePluginsDelay) {
  const std::string text =
      "[study]\nname = \"f\"\ndelay = 8\nas_deployed = \"ideal\"\n[[sweep]]\nname = \"m\"\npreset = "
      "\"h100-ib-a\"\n[[scenario]]\n"
      "name = \"s\"\ntune = { sweep = \"m\" }\nscore = { sweep = \"m\" }\n[[policy]]\nname = \"A\"\nspec = "
      "\"auto\"\n"
      "[[variant]]\nname = \"deployed\"\nas_deployed = \"leader\"\n"
      "[[variant]]\nname = \"deployed, delay 3\"\nas_deployed = \"local\"\ndelay = 3\n";
  const study::StudySpec base = study::parse_study(text, "/tmp/x/study.toml");
  EXPECT_FALSE(base.as_deployed);
  EXPECT_EQ(base.delay, 8);
  const study::StudySpec leader = study::variant_study(base, base.variants[0], "/tmp/x/variants/deployed");
  EXPECT_EQ(leader.as_deployed, Deployment::kLeader);
  EXPECT_EQ(leader.delay, deployed_delay(Deployment::kLeader));
  const study::StudySpec local =
      study::variant_study(base, base.variants[1], "/tmp/x/variants/deployed-delay-3");
  EXPECT_EQ(local.as_deployed, Deployment::kLocal);
  EXPECT_EQ(local.delay, 3);
  EXPECT_EQ(study::variant_knobs(base.variants[0]), json({{"as_deployed", "leader"}}));
  EXPECT_EQ(study::baseline_knobs(base), json({{"as_deployed", "ideal"}, {"delay", 8}}));
}

TEST(Sensitivity, RunsEveryVariantAndSaysWhichConclusionsHold) {
  const std::string out = temp_dir() + "/study";
  const CliResult r = run_cli("run '" + kVariantsStudy + "' --out '" + out + "' --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json paths = json::parse(r.out);
  EXPECT_EQ(paths["units"], 6);
  ASSERT_EQ(paths["variants"].size(), 2u);
  EXPECT_EQ(paths["variants"][0]["variant"], "noise x2");
  EXPECT_EQ(paths["variants"][0]["folder"], out + "/variants/noise-x2");
  EXPECT_EQ(paths["variants"][1]["results"], out + "/variants/delay-8/results.json");

  const json base = results_of(out);
  ASSERT_TRUE(base.contains("sensitivity"));
  const json& runs = base["sensitivity"];
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0]["variant"], "baseline");
  EXPECT_EQ(runs[0]["folder"], ".");
  EXPECT_EQ(runs[0]["knobs"], json({{"delay", 0}, {"noise_scale", 1.0}}));
  EXPECT_EQ(runs[1]["variant"], "noise x2");
  EXPECT_EQ(runs[1]["knobs"], json({{"noise_scale", 2.0}}));
  EXPECT_EQ(runs[2]["variant"], "delay 8");
  EXPECT_EQ(runs[2]["folder"], "variants/delay-8");
  EXPECT_EQ(runs[2]["knobs"], json({{"delay", 8}}));

  // Each entry holds its run's own numbers: the pooled objective per policy, the ranking by it, and
  // the primary family's Holm decisions (and nothing of the secondary family).
  for (size_t i = 0; i < runs.size(); ++i) {
    const json& e = runs[i];
    const json own = i == 0 ? base : results_of(out + "/" + e["folder"].get<std::string>());
    EXPECT_FALSE(i > 0 && own.contains("sensitivity"));
    EXPECT_EQ(e["objective_metric"], "mean");
    ASSERT_EQ(e["objective"].size(), own["pooled"].size());
    for (const auto& p : own["pooled"])
      EXPECT_EQ(e["objective"][p["policy"].get<std::string>()].get<double>(),
                p["metrics"]["mean"]["estimate"].get<double>());
    ASSERT_EQ(e["ranking"].size(), 3u);
    for (size_t k = 1; k < 3; ++k)
      EXPECT_LE(e["objective"][e["ranking"][k - 1].get<std::string>()].get<double>(),
                e["objective"][e["ranking"][k].get<std::string>()].get<double>());
    ASSERT_EQ(e["primary"].size(), 2u);
    for (size_t k = 0; k < 2; ++k) {
      const json& h = own["hypotheses"][k];
      ASSERT_EQ(h["family"], "primary");
      EXPECT_EQ(e["primary"][k]["hypothesis"],
                h["a"].get<std::string>() + " vs " + h["b"].get<std::string>() + " mean");
      EXPECT_EQ(e["primary"][k]["p_holm"].get<double>(), h["p_holm"].get<double>());
      EXPECT_EQ(e["primary"][k]["reject"], h["reject"]);
    }
  }

  // The report: the section, one row per run, one sentence per primary hypothesis, the figure.
  const std::string md = read_all(out + "/report.md");
  EXPECT_NE(md.find("## Conclusions vs assumptions"), std::string::npos);
  EXPECT_NE(
      md.find("| run | assumptions | AUTO | greedy | UCB1 | H1 greedy vs AUTO mean | H2 UCB1 vs AUTO mean |"),
      std::string::npos)
      << md;
  EXPECT_NE(md.find("| baseline | delay = 0, noise_scale = 1.0 | #"), std::string::npos);
  EXPECT_NE(md.find("| noise x2 (`variants/noise-x2/`) | noise_scale = 2.0 | #"), std::string::npos);
  EXPECT_NE(md.find("| delay 8 (`variants/delay-8/`) | delay = 8 | #"), std::string::npos);
  EXPECT_NE(md.find("- greedy vs AUTO on mean loss: "), std::string::npos);
  EXPECT_NE(md.find("- UCB1 vs AUTO on mean loss: "), std::string::npos);
  EXPECT_NE(md.find("under every variant"), std::string::npos);
  EXPECT_NE(md.find("Under 2 variants of the study's assumptions (noise x2, delay 8), "), std::string::npos);
  EXPECT_NE(md.find("primary-family decisions hold in every run"), std::string::npos);  // What this says
  EXPECT_NE(md.find("](figures/sensitivity.png)"), std::string::npos);
  EXPECT_EQ(count_of(md, "figures/sensitivity.png"), 1u);  // in the section, not again under Figures
  const json index = json::parse(read_all(out + "/figures/index.json"));
  bool drawn = false;
  for (const auto& f : index) drawn = drawn || f["file"] == "sensitivity.png";
  EXPECT_TRUE(drawn);
  EXPECT_TRUE(fs::exists(out + "/figures/sensitivity.png"));
  const std::string html = read_all(out + "/report.html");
  EXPECT_NE(html.find("<h2>Conclusions vs assumptions</h2>"), std::string::npos);
  EXPECT_EQ(count_of(html, "src=\"data:image/png;base64,iVBORw0KGgo"), index.size());

  // Every variant is a complete run of its own, with a study file that runs on its own.
  for (const char* v : {"noise-x2", "delay-8"}) {
    const std::string dir = out + "/variants/" + v;
    for (const char* f : {"report.md", "report.html", "results.json", "study.toml", "sweeps/sim.csv",
                          "figures/index.json", ".ncclbot-run"})
      EXPECT_TRUE(fs::exists(dir + "/" + f)) << dir << "/" << f;
    EXPECT_EQ(read_all(dir + "/report.md").find("Conclusions vs assumptions"), std::string::npos);
    EXPECT_FALSE(fs::exists(dir + "/figures/sensitivity.png"));
  }

  // A rerun reuses every unit of every run and rewrites the same bytes.
  const auto before = snapshot(out);
  const CliResult again = run_cli("run '" + kVariantsStudy + "' --out '" + out + "' --json");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const json again_paths = json::parse(again.out);
  EXPECT_EQ(again_paths["units_reused"], 6);
  for (const auto& v : again_paths["variants"]) EXPECT_EQ(v["units_reused"], 6);
  const auto after = snapshot(out);
  EXPECT_EQ(after.size(), before.size());
  for (const auto& [path, bytes] : before) EXPECT_TRUE(after.count(path) && after.at(path) == bytes) << path;
}

// The promise of a variant: the base study with the knob set by hand in its [[sweep]] or [study]
// gives the same numbers, bit for bit (only the study file's digest and name differ).
TEST(Sensitivity, AVariantEqualsItsKnobSetByHand) {
  const std::string dir = temp_dir();
  ASSERT_EQ(run_cli("run '" + kVariantsStudy + "' --out '" + dir + "/study' --no-figures").exit_code, 0);
  write_file(dir + "/noise.toml", base_with("samples = 3\n", "samples = 3\nnoise_scale = 2\n"));
  write_file(dir + "/delay.toml", base_with("horizon = 200\n", "horizon = 200\ndelay = 8\n"));
  for (const auto& [variant, by_hand] :
       {std::pair<std::string, std::string>{"noise-x2", "noise"}, {"delay-8", "delay"}}) {
    const std::string out = dir + "/" + by_hand;
    const CliResult r = run_cli("run '" + dir + "/" + by_hand + ".toml' --out '" + out + "' --no-figures");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    json direct = results_of(out);
    json varied = results_of(dir + "/study/variants/" + variant);
    EXPECT_FALSE(direct.contains("sensitivity"));  // a study without variants: as before
    EXPECT_FALSE(fs::exists(out + "/variants"));
    EXPECT_EQ(varied["study"]["source"], kVariantsStudy + " with its variant '" +
                                             (variant == "noise-x2" ? std::string("noise x2") : "delay 8") +
                                             "'");
    direct.erase("study");
    varied.erase("study");
    EXPECT_TRUE(direct == varied) << variant;
    EXPECT_EQ(read_all(out + "/sweeps/sim.csv"),
              read_all(dir + "/study/variants/" + variant + "/sweeps/sim.csv"));
  }
  // The variant's own study file reproduces it alone (only the name of the study file differs).
  const std::string alone = dir + "/alone";
  ASSERT_EQ(run_cli("run '" + dir + "/study/variants/delay-8/study.toml' --out '" + alone + "' --no-figures")
                .exit_code,
            0);
  json a = results_of(alone), b = results_of(dir + "/study/variants/delay-8");
  a["study"].erase("source");
  b["study"].erase("source");
  EXPECT_TRUE(a == b);
}

TEST(Sensitivity, RemovedVariantIsEmptiedAndForeignOrLinkedFoldersAreRefused) {
  const std::string dir = temp_dir();
  const std::string out = dir + "/study";
  ASSERT_EQ(run_cli("run '" + kVariantsStudy + "' --out '" + out + "' --no-figures").exit_code, 0);
  write_file(out + "/variants/delay-8/mine.txt", "a file of the user's");
  // Without the variant: its folder loses every file ncclbot wrote, nothing else.
  std::string text = read_all(kVariantsStudy);
  write_file(dir + "/one.toml", text.substr(0, text.find("[[variant]]\nname = \"delay 8\"")));
  const CliResult r = run_cli("run '" + dir + "/one.toml' --out '" + out + "' --no-figures");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> left;
  for (const auto& e : fs::recursive_directory_iterator(out + "/variants/delay-8"))
    left.push_back(fs::relative(e.path(), out + "/variants/delay-8").string());
  EXPECT_EQ(left, std::vector<std::string>{"mine.txt"});
  EXPECT_EQ(read_all(out + "/.ncclbot-run").find("variants/delay-8"), std::string::npos);
  EXPECT_EQ(results_of(out)["sensitivity"].size(), 2u);
  // With it back, the folder holds a file ncclbot did not write and has no marker: refused.
  const CliResult back = run_cli("run '" + kVariantsStudy + "' --out '" + out + "' --no-figures");
  EXPECT_EQ(back.exit_code, 2);
  EXPECT_NE(back.err.find("variants/delay-8' is not empty and has no .ncclbot-run marker"), std::string::npos)
      << back.err;
  EXPECT_EQ(read_all(out + "/variants/delay-8/mine.txt"), "a file of the user's");

  // A variants folder that leads elsewhere is refused before anything is written there.
  const std::string linked = dir + "/linked";
  ASSERT_EQ(run_cli("run '" + dir + "/one.toml' --out '" + linked + "' --no-figures").exit_code, 0);
  fs::create_directories(dir + "/elsewhere");
  fs::rename(linked + "/variants", dir + "/moved");
  fs::create_directory_symlink(dir + "/elsewhere", linked + "/variants");
  const CliResult via_link = run_cli("run '" + dir + "/one.toml' --out '" + linked + "' --no-figures");
  EXPECT_EQ(via_link.exit_code, 2);
  EXPECT_NE(via_link.err.find("symbolic link"), std::string::npos) << via_link.err;
  EXPECT_TRUE(fs::is_empty(dir + "/elsewhere"));
}

TEST(Sensitivity, KilledAtRandomPointsThenResumedIsByteIdentical) {
  const std::string base = temp_dir();
  // Longer replays than the other tests, so that a kill lands inside the units of every run.
  const std::string study = base + "/study.toml";
  std::string text = read_all(kVariantsStudy);
  text.replace(text.find("horizon = 200"), 13, "horizon = 8000");
  write_file(study, text);
  const auto run = [&](const std::string& out) {
    const pid_t pid = fork();
    if (pid == 0) {
      freopen("/dev/null", "w", stdout);
      freopen("/dev/null", "w", stderr);
      execl(NCCLBOT_BINARY, NCCLBOT_BINARY, "run", study.c_str(), "--out", out.c_str(), "--no-figures",
            static_cast<char*>(nullptr));
      _exit(127);
    }
    return pid;
  };
  const auto t0 = std::chrono::steady_clock::now();
  int status = 0;
  waitpid(run(base + "/reference"), &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  const double full_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const auto expected = snapshot(base + "/reference");
  ASSERT_TRUE(expected.count("variants/delay-8/results.json"));

  const unsigned seed = unsigned(std::random_device{}());
  std::mt19937 rng(seed);
  SCOPED_TRACE("random seed " + std::to_string(seed) + ", uninterrupted run " + std::to_string(full_ms) +
               " ms");
  const std::string out = base + "/killed";
  int kills = 0;
  for (int k = 0; k < 4; ++k) {
    const pid_t pid = run(out);
    std::this_thread::sleep_for(std::chrono::microseconds(
        long(std::uniform_real_distribution<double>(0.0, 0.9)(rng) * full_ms * 1000)));
    if (waitpid(pid, &status, WNOHANG) == 0) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      ++kills;
    }
  }
  SCOPED_TRACE(std::to_string(kills) + " kills");
  waitpid(run(out), &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  const auto got = snapshot(out);
  EXPECT_EQ(got.size(), expected.size());
  for (const auto& [path, bytes] : expected) {
    ASSERT_TRUE(got.count(path)) << path;
    EXPECT_TRUE(got.at(path) == bytes) << path;
  }
}

TEST(Sensitivity, BadVariantIsExitTwoWithFileAndLine) {
  const std::string dir = temp_dir();
  std::string text = read_all(kVariantsStudy);
  text.replace(text.find("delay = 8"), 9, "delai = 8");
  write_file(dir + "/bad.toml", text);
  const CliResult r = run_cli("run '" + dir + "/bad.toml' --out '" + dir + "/out'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("bad.toml:" + std::to_string(count_of(text.substr(0, text.find("delai")), "\n") + 1) +
                       ": unknown key 'delai' in [[variant]]"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir + "/out/variants"));
}

}  // namespace
}  // namespace ncclbot::test
