// `tune` split over separate processes as a Slurm array or a shell loop runs it: `--phase tune
// --shard I/N`, `merge --out choice`, `--phase score --choice --shard I/N`, `merge`. Any split
// prints exactly the bytes of the unsharded `tune` (JSON and text), and a wrong set of partials
// or a wrong choice is exit 2 with a message naming the file.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "cli/shard_sweep.hpp"
#include "support/run_cli.hpp"

using namespace ncclbot::test;

namespace {

// Three policies: two grids (4 and 2 points) and a supervised one, so the choice has a real pick
// and a supervised fit on the tune contexts.
std::string tune_args(const std::string& sweep, int seeds = 3) {
  return "tune --sweep '" + sweep +
         "' --policy 'ucb1:c=0.05|0.2,n0=0|2' --policy 'thompson:sigma=0.05|0.2' --policy auto"
         " --tune-nodes 4 --score-nodes 16 --horizon 40 --threads 1 --seeds " +
         std::to_string(seeds);
}

// Runs every shard of N of one phase into dir/<prefix>N_I; returns the file names in shard order.
std::vector<std::string> run_phase(const std::string& args, const std::string& phase_args,
                                   const std::string& dir, const std::string& prefix, int n) {
  std::vector<std::string> files;
  for (int i = 0; i < n; ++i) {
    files.push_back(dir + "/" + prefix + std::to_string(n) + "_" + std::to_string(i));
    const CliResult r = run_cli(args + phase_args + " --shard " + std::to_string(i) + "/" +
                                std::to_string(n) + " --out '" + files.back() + "'");
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
  return files;
}

// Both rounds for N shards; returns the score-phase partials (and the choice in `choice`).
std::vector<std::string> run_both_phases(const std::string& args, const std::string& dir, int n,
                                         std::string& choice) {
  const std::vector<std::string> tune_parts = run_phase(args, " --phase tune", dir, "tune", n);
  choice = dir + "/choice" + std::to_string(n) + ".json";
  const CliResult merged = run_cli("merge" + quoted(tune_parts) + " --out '" + choice + "'");
  EXPECT_EQ(merged.exit_code, 0) << merged.err;
  return run_phase(args, " --phase score --choice '" + choice + "'", dir, "score", n);
}

}  // namespace

TEST(TuneShardMergeCli, AnySplitMergesToTheUnshardedBytes) {
  const std::string dir = temp_dir(), args = tune_args(write_shard_sweep(dir));
  const CliResult whole = run_cli(args + " --json"), whole_text = run_cli(args);
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  const auto j = nlohmann::json::parse(whole.out);
  ASSERT_EQ(j["tune_contexts"], 4);
  ASSERT_EQ(j["score_contexts"], 4);
  ASSERT_EQ(j["policies"].size(), 3u);
  for (int n : {1, 2, 3}) {
    std::string choice;
    std::vector<std::string> parts = run_both_phases(args, dir, n, choice);
    std::reverse(parts.begin(), parts.end());  // order on the command line does not matter
    const CliResult merged = run_cli("merge" + quoted(parts) + " --json");
    ASSERT_EQ(merged.exit_code, 0) << merged.err;
    EXPECT_EQ(merged.out, whole.out) << "N=" << n;
    EXPECT_EQ(merged.err, whole.err) << "N=" << n;
    const CliResult text = run_cli("merge" + quoted(parts));
    EXPECT_EQ(text.out, whole_text.out) << "N=" << n;
    // The choice names each policy's frozen point, the one the unsharded run printed.
    const auto c = nlohmann::json::parse(read_all(choice));
    for (size_t p = 0; p < 3; ++p) EXPECT_EQ(c["policies"][p]["tuned"], j["policies"][p]["tuned"]) << p;
  }
}

// Scored as deployed: the split keeps the delay, the per-call costs and the mode, so the merged
// report is still the unsharded one, byte for byte, and differs from the plain run.
TEST(TuneShardMergeCli, AsDeployedSplitsMergeToTheUnshardedBytes) {
  const std::string dir = temp_dir(), args = tune_args(write_shard_sweep(dir), 2) + " --as-deployed leader";
  const CliResult whole = run_cli(args + " --json");
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  const auto j = nlohmann::json::parse(whole.out);
  EXPECT_EQ(j["as_deployed"], "leader");
  EXPECT_GT(j["delay"].get<int>(), 0);
  EXPECT_GT(j["policies"][0]["call_cost_us"].get<double>(), 0.0);  // UCB1
  EXPECT_EQ(j["policies"][2]["call_cost_us"].get<double>(), 0.0);  // AUTO
  std::string choice;
  const std::vector<std::string> parts = run_both_phases(args, dir, 2, choice);
  const CliResult merged = run_cli("merge" + quoted(parts) + " --json");
  ASSERT_EQ(merged.exit_code, 0) << merged.err;
  EXPECT_EQ(merged.out, whole.out);
  EXPECT_EQ(merged.err, whole.err);
  const CliResult plain = run_cli(tune_args(write_shard_sweep(dir), 2) + " --json");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_NE(nlohmann::json::parse(plain.out)["policies"][0]["score"], j["policies"][0]["score"]);
}

TEST(TuneShardMergeCli, WrongPartialsAndChoicesAreExitTwoNamingTheFile) {
  const std::string dir = temp_dir(), sweep = write_shard_sweep(dir), args = tune_args(sweep);
  std::string choice;
  const std::vector<std::string> score = run_both_phases(args, dir, 3, choice);
  const std::vector<std::string> tune = {dir + "/tune3_0", dir + "/tune3_1", dir + "/tune3_2"};
  // Missing shard 1.
  CliResult r = run_cli("merge '" + score[0] + "' '" + score[2] + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("missing shard(s) 1 of 3"), std::string::npos) << r.err;
  // Duplicated shard (a copy under another name).
  write_file(dir + "/copy.part", read_all(score[2]));
  r = run_cli("merge" + quoted(score) + " '" + dir + "/copy.part'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("copy.part"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("duplicates shard 2/3"), std::string::npos) << r.err;
  // Wrong phase: a tune-phase partial among score-phase ones.
  r = run_cli("merge '" + score[0] + "' '" + tune[1] + "' '" + score[2] + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("tune3_1"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("phase"), std::string::npos) << r.err;
  // Tune-phase partials merge into a choice only: without --out there is nothing to write.
  r = run_cli("merge" + quoted(tune));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--out"), std::string::npos) << r.err;
  // A score partial is no choice.
  r = run_cli(args + " --phase score --choice '" + score[0] + "' --shard 0/1 --out '" + dir + "/x'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("score3_0"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("not a tune choice"), std::string::npos) << r.err;
  // A foreign choice: made for 4 seeds, used by a tune of 3.
  const std::string args4 = tune_args(sweep, 4);
  std::string choice4;
  const std::vector<std::string> score4 = run_both_phases(args4, dir + "/", 2, choice4);
  r = run_cli(args + " --phase score --choice '" + choice4 + "' --shard 0/3 --out '" + dir + "/x'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("choice2.json"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("foreign tune choice: its seeds differs"), std::string::npos) << r.err;
  // A foreign score partial: same split, scored from another tune's choice.
  const std::string other_choice = dir + "/other.json";
  const std::vector<std::string> other_tune =
      run_phase(args + " --objective p99", " --phase tune", dir, "p99_", 3);
  ASSERT_EQ(run_cli("merge" + quoted(other_tune) + " --out '" + other_choice + "'").exit_code, 0);
  const std::string foreign = dir + "/foreign.part";
  ASSERT_EQ(run_cli(args + " --objective p99 --phase score --choice '" + other_choice +
                    "' --shard 1/3 --out '" + foreign + "'")
                .exit_code,
            0);
  r = run_cli("merge '" + score[0] + "' '" + foreign + "' '" + score[2] + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("foreign.part"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("foreign partial"), std::string::npos) << r.err;
  // A missing choice file.
  r = run_cli(args + " --phase score --choice '" + dir + "/none.json' --shard 0/3 --out '" + dir + "/x'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("none.json"), std::string::npos) << r.err;
}

TEST(TuneShardMergeCli, ShardUsageErrors) {
  const std::string dir = temp_dir(), args = tune_args(write_shard_sweep(dir));
  const std::string out = " --out '" + dir + "/x'";
  EXPECT_EQ(run_cli(args + " --shard 0/2" + out).exit_code, 2);                          // no --phase
  EXPECT_EQ(run_cli(args + " --phase tune" + out).exit_code, 2);                         // no --shard
  EXPECT_EQ(run_cli(args + " --phase tune --shard 0/2").exit_code, 2);                   // no --out
  EXPECT_EQ(run_cli(args + " --phase score --shard 0/2" + out).exit_code, 2);            // no --choice
  EXPECT_EQ(run_cli(args + " --phase tune --choice c --shard 0/2" + out).exit_code, 2);  // --choice, tune
  EXPECT_EQ(run_cli(args + " --phase scores --shard 0/2" + out).exit_code, 2);
  EXPECT_EQ(run_cli(args + " --phase tune --shard 2/2" + out).exit_code, 2);
  EXPECT_EQ(run_cli(args + " --rank-timeout -1").exit_code, 2);
}
