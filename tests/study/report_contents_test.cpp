// What `ncclbot run` writes: results.json holds every hypothesis with its p-value, Holm-adjusted
// p-value and the per-scenario differences behind it; report.md shows them; report.html is
// self-contained (every figure embedded as a PNG data URI); and a rerun (every unit reused, the
// figures redrawn) rewrites the same bytes.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "support/run_cli.hpp"
#include "support/study_files.hpp"

namespace ncclbot::test {
namespace {

namespace fs = std::filesystem;

TEST(ReportContents, EveryHypothesisHasPAndHolmPAndTheHtmlEmbedsTheFigures) {
  const std::string out = temp_dir() + "/study";
  const CliResult r = run_cli("run '" + kTinyStudy + "' --out '" + out + "' --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto paths = nlohmann::json::parse(r.out);
  EXPECT_EQ(paths["units"], 8);  // 2 scenarios x 4 policies

  const auto results = nlohmann::json::parse(read_all(out + "/results.json"));
  EXPECT_EQ(results["schema"], "ncclbot-study-results/1");
  EXPECT_EQ(results["study"]["sha256"].get<std::string>().size(), 64u);
  EXPECT_EQ(read_all(out + "/study.toml"), read_all(kTinyStudy));
  ASSERT_EQ(results["sweeps"].size(), 1u);
  EXPECT_TRUE(fs::exists(out + "/" + results["sweeps"][0]["file"].get<std::string>()));
  // tiny.toml: 3 learners x 2 metrics in the primary family, 1 in the secondary.
  ASSERT_EQ(results["hypotheses"].size(), 7u);
  const std::string md = read_all(out + "/report.md");
  for (const auto& h : results["hypotheses"]) {
    const double p = h["p"].get<double>(), ph = h["p_holm"].get<double>();
    EXPECT_TRUE(p > 0 && p <= 1) << h.dump();
    EXPECT_TRUE(ph >= p && ph <= 1) << h.dump();  // Holm never lowers a p-value
    ASSERT_EQ(h["diffs"].size(), 2u);             // one per scenario
    // The stored differences are the stored per-scenario metrics' differences.
    for (size_t i = 0; i < 2; ++i)
      EXPECT_EQ(h["diffs"][i].get<double>(), h["a_values"][i].get<double>() - h["b_values"][i].get<double>());
    EXPECT_TRUE(h["exact"].get<bool>());
    EXPECT_EQ(h["sign_vectors"], 4);  // 2^2 sign vectors
    EXPECT_EQ(h["recompute"]["input"]["diffs"], h["diffs"]);
    EXPECT_NE(md.find("| " + h["id"].dump() + " | " + h["family"].get<std::string>() + " | " +
                      h["a"].get<std::string>() + " vs " + h["b"].get<std::string>()),
              std::string::npos)
        << "hypothesis " << h["id"] << " missing from report.md";
  }
  ASSERT_EQ(results["families"].size(), 2u);
  EXPECT_EQ(results["families"][0]["size"], 6);
  // Two scenarios: the smallest two-sided sign-flip p is 2/4 = 0.5, so nothing can be rejected,
  // and the findings must say so.
  EXPECT_EQ(results["families"][0]["smallest_attainable_p"].get<double>(), 0.5);
  EXPECT_EQ(results["families"][0]["max_rejectable"], 0);
  EXPECT_NE(md.find("No hypothesis in this family can be significant"), std::string::npos);
  EXPECT_NE(md.find("not significant"), std::string::npos);

  // Every score has its four metrics with intervals that contain the estimate.
  for (const auto& s : results["scores"])
    for (const char* m : {"mean", "p99", "max", "above_10pct"}) {
      const auto& x = s["metrics"][m];
      EXPECT_LE(x["low"].get<double>(), x["estimate"].get<double>() + 1e-12) << s["policy"] << " " << m;
      EXPECT_GE(x["high"].get<double>(), x["estimate"].get<double>() - 1e-12) << s["policy"] << " " << m;
    }

  const auto index = nlohmann::json::parse(read_all(out + "/figures/index.json"));
  ASSERT_GE(index.size(), 4u);
  const std::string html = read_all(out + "/report.html");
  EXPECT_EQ(count_of(html, "src=\"data:image/png;base64,iVBORw0KGgo"), index.size());  // PNG magic, base64
  EXPECT_EQ(count_of(html, "src=\"figures/"), 0u);                                     // nothing linked
  for (const auto& f : index) EXPECT_TRUE(fs::exists(out + "/figures/" + f["file"].get<std::string>()));

  // Rerun: all units reused, figures redrawn, same bytes.
  const std::string html_before = html, md_before = md;
  const std::string fig_before = read_all(out + "/figures/" + index[0]["file"].get<std::string>());
  const CliResult again = run_cli("run '" + kTinyStudy + "' --out '" + out + "' --json");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(nlohmann::json::parse(again.out)["units_reused"], 8);
  EXPECT_TRUE(read_all(out + "/report.html") == html_before);
  EXPECT_TRUE(read_all(out + "/report.md") == md_before);
  EXPECT_TRUE(read_all(out + "/figures/" + index[0]["file"].get<std::string>()) == fig_before);
}

// The promise of results.json: every test, correction and interval is reproduced exactly by the
// `ncclbot stats` call its "recompute" field describes.
TEST(ReportContents, EveryNumberIsRecomputedExactlyByNcclbotStats) {
  const std::string out = temp_dir() + "/study";
  ASSERT_EQ(run_cli("run '" + kTinyStudy + "' --out '" + out + "' --no-figures").exit_code, 0);
  const auto results = nlohmann::json::parse(read_all(out + "/results.json"));
  for (const auto& h : results["hypotheses"]) {
    const CliResult r = run_cli("stats permutation", h["recompute"]["input"].dump());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto got = nlohmann::json::parse(r.out);
    EXPECT_EQ(got["p"].get<double>(), h["p"].get<double>()) << h.dump();
    EXPECT_EQ(got["exact"], h["exact"]);
    if (h["context_level"].is_object()) {
      const CliResult m = run_cli("stats mcnemar", h["context_level"]["recompute"]["input"].dump());
      ASSERT_EQ(m.exit_code, 0) << m.err;
      EXPECT_EQ(nlohmann::json::parse(m.out)["p"].get<double>(), h["context_level"]["p"].get<double>());
    }
  }
  for (const auto& f : results["families"]) {
    const CliResult r = run_cli("stats holm", f["recompute"]["input"].dump());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto adjusted = nlohmann::json::parse(r.out)["adjusted"];
    ASSERT_EQ(adjusted.size(), f["hypotheses"].size());
    for (size_t i = 0; i < adjusted.size(); ++i)
      EXPECT_EQ(adjusted[i].get<double>(),
                results["hypotheses"][f["hypotheses"][i].get<size_t>() - 1]["p_holm"].get<double>());
  }
  for (const auto* cell : {&results["scores"][0], &results["pooled"][1]})
    for (const char* m : {"mean", "p99", "max", "above_10pct"}) {
      auto input = (*cell)["metrics"][m]["recompute"];
      if (cell->contains("losses")) {
        input["x"] = (*cell)["losses"];
      } else {  // pooled: the scored losses of every scenario of that policy, in scenario order
        nlohmann::json x = nlohmann::json::array();
        for (const auto& s : results["scores"])
          if (s["policy"] == (*cell)["policy"])
            for (const auto& v : s["losses"]) x.push_back(v);
        input["x"] = x;
      }
      const CliResult r = run_cli("stats bootstrap", input.dump());
      ASSERT_EQ(r.exit_code, 0) << r.err;
      const auto got = nlohmann::json::parse(r.out);
      for (const char* k : {"estimate", "low", "high"})
        EXPECT_EQ(got[k].get<double>(), (*cell)["metrics"][m][k].get<double>()) << m << " " << k;
    }
}

TEST(ReportContents, BadStudyIsExitTwoWithFileAndLine) {
  const std::string dir = temp_dir();
  write_file(dir + "/bad.toml", "[study]\nname = \"x\"\nhorizon = -3\n");
  const CliResult r = run_cli("run '" + dir + "/bad.toml' --out '" + dir + "/out'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("bad.toml:3: study.horizon must be in"), std::string::npos) << r.err;

  write_file(dir + "/badspec.toml",
             read_all(kTinyStudy) + "\n[[policy]]\nname = \"X\"\nspec = \"ucb2:c=1\"\n");
  const CliResult s = run_cli("run '" + dir + "/badspec.toml' --out '" + dir + "/out2'");
  EXPECT_EQ(s.exit_code, 2);
  EXPECT_NE(s.err.find("badspec.toml:"), std::string::npos) << s.err;
  EXPECT_NE(s.err.find("policy 'X'"), std::string::npos) << s.err;
}

}  // namespace
}  // namespace ncclbot::test
