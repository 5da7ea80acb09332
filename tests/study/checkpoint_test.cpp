// A checkpoint carries a checksum of its content (study/checkpoint.hpp): one whose numbers were
// changed after it was written, or one without a checksum, is recomputed, the run says so on
// stderr, and the report holds the recomputed numbers.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "support/run_cli.hpp"
#include "support/study_files.hpp"

namespace ncclbot::test {
namespace {

namespace fs = std::filesystem;

struct CheckpointRun {
  std::string study, out, unit;  // the study file, its folder, its one checkpoint
};

CheckpointRun run_one_unit_study() {
  CheckpointRun c;
  const std::string base = temp_dir();
  c.study = base + "/study.toml";
  c.out = base + "/run";
  write_file(c.study, small_study_text("c", "[[policy]]\nname = \"g\"\nspec = \"greedy\"\n"));
  const CliResult r = run_cli("run '" + c.study + "' --out '" + c.out + "' --no-figures");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const auto& e : fs::directory_iterator(c.out + "/units")) c.unit = e.path().string();
  return c;
}

// Reruns and checks that the checkpoint was recomputed, for `reason`, into the bytes of `original`.
void expect_recomputed(const CheckpointRun& c, const std::string& original, const std::string& reason) {
  const CliResult r = run_cli("run '" + c.study + "' --out '" + c.out + "' --no-figures --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["units_reused"], 0);
  EXPECT_NE(r.err.find("recomputing " + c.unit + ": " + reason), std::string::npos) << r.err;
  EXPECT_EQ(read_all(c.unit), original);
}

TEST(Checkpoint, AnEditedNumberIsRecomputedNotReported) {
  const CheckpointRun c = run_one_unit_study();
  const std::string original = read_all(c.unit);
  nlohmann::json j = nlohmann::json::parse(original);
  j["online"][0] = -5.0;  // no loss is below 0: a latency over the best arm's, minus 1
  write_file(c.unit, j.dump(1) + "\n");
  expect_recomputed(c, original, "its checksum does not match its content");
  const nlohmann::json results = nlohmann::json::parse(read_all(c.out + "/results.json"));
  for (const auto& loss : results["scores"][0]["losses"]) EXPECT_GE(loss.get<double>(), 0.0);
}

TEST(Checkpoint, OneWithoutAChecksumIsRecomputed) {
  const CheckpointRun c = run_one_unit_study();
  const std::string original = read_all(c.unit);
  nlohmann::json j = nlohmann::json::parse(original);
  ASSERT_EQ(j.erase("checkpoint_sha256"), 1u);
  write_file(c.unit, j.dump(1) + "\n");
  expect_recomputed(c, original, "it has no checksum");
}

}  // namespace
}  // namespace ncclbot::test
