// `replay --shard I/N --out FILE` and `merge` as a user runs them: any split merges into exactly
// the bytes the unsharded run prints (JSON and human text), and a wrong set of partials is exit 2
// with a message naming the file.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "cli/shard_sweep.hpp"
#include "support/run_cli.hpp"

using namespace ncclbot::test;

namespace {

std::string replay_args(const std::string& sweep, int horizon = 40) {
  return "replay --sweep '" + sweep +
         "' --policy auto --policy 'ucb1:c=0.05|0.2,n0=0|2' --policy thompson --seeds 3 --horizon " +
         std::to_string(horizon);
}

// Runs every shard of N into dir/N_I.part; returns the file names in shard order.
std::vector<std::string> run_shards(const std::string& args, const std::string& dir, int n) {
  std::vector<std::string> files;
  for (int i = 0; i < n; ++i) {
    files.push_back(dir + "/" + std::to_string(n) + "_" + std::to_string(i) + ".part");
    const CliResult r = run_cli(args + " --shard " + std::to_string(i) + "/" + std::to_string(n) +
                                " --out '" + files.back() + "'");
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
  return files;
}

}  // namespace

TEST(ShardMergeCli, AnySplitMergesToTheUnshardedBytes) {
  const std::string dir = temp_dir(), sweep = write_shard_sweep(dir), args = replay_args(sweep);
  const CliResult whole = run_cli(args + " --json"), whole_text = run_cli(args);
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  ASSERT_EQ(nlohmann::json::parse(whole.out)["configs"].size(), 6u);  // 6 configs x 8 contexts = 48 units
  for (int n : {1, 2, 3, 7, 60}) {                                    // 60 > 48: some shards are empty
    std::vector<std::string> files = run_shards(args, dir, n);
    std::reverse(files.begin(), files.end());  // order on the command line does not matter
    const CliResult merged = run_cli("merge" + quoted(files) + " --json");
    ASSERT_EQ(merged.exit_code, 0) << merged.err;
    EXPECT_EQ(merged.out, whole.out) << "N=" << n;
    EXPECT_EQ(merged.err, whole.err) << "N=" << n;
    const CliResult text = run_cli("merge" + quoted(files));
    EXPECT_EQ(text.out, whole_text.out) << "N=" << n;
  }
}

// Delayed feedback and per-call costs travel with the shards: the merge is the unsharded run's bytes
// (before, a shard replayed without the delay and the merged report said delay 0).
TEST(ShardMergeCli, DelayedAndAsDeployedSplitsMergeToTheUnshardedBytes) {
  const std::string dir = temp_dir(), sweep = write_shard_sweep(dir);
  for (const std::string extra : {" --delay 5", " --as-deployed leader"}) {
    const std::string args = replay_args(sweep) + extra;
    const CliResult whole = run_cli(args + " --json");
    ASSERT_EQ(whole.exit_code, 0) << whole.err;
    EXPECT_GT(nlohmann::json::parse(whole.out)["delay"].get<int>(), 0) << extra;
    const CliResult merged = run_cli("merge" + quoted(run_shards(args, temp_dir(), 3)) + " --json");
    ASSERT_EQ(merged.exit_code, 0) << merged.err;
    EXPECT_EQ(merged.out, whole.out) << extra;
    EXPECT_EQ(merged.err, whole.err) << extra;
  }
}

TEST(ShardMergeCli, WrongPartialSetsAreExitTwoNamingTheFile) {
  const std::string dir = temp_dir(), sweep = write_shard_sweep(dir), args = replay_args(sweep);
  const std::vector<std::string> three = run_shards(args, dir, 3);
  // Missing shard 1.
  CliResult r = run_cli("merge '" + three[0] + "' '" + three[2] + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("missing shard(s) 1 of 3"), std::string::npos) << r.err;
  // Duplicated shard (a copy under another name).
  write_file(dir + "/copy.part", read_all(three[2]));
  r = run_cli("merge" + quoted(three) + " '" + dir + "/copy.part'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("copy.part"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("duplicates shard 2/3"), std::string::npos) << r.err;
  // Foreign: same split, different horizon.
  const std::string foreign = dir + "/foreign.part";
  ASSERT_EQ(run_cli(replay_args(sweep, 41) + " --shard 1/3 --out '" + foreign + "'").exit_code, 0);
  r = run_cli("merge '" + three[0] + "' '" + foreign + "' '" + three[2] + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("foreign.part"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("horizon"), std::string::npos) << r.err;
  // Foreign: another sweep file (one sample changed).
  std::string other = read_all(sweep);
  other.replace(other.find(",31,10\n"), 7, ",35,10\n");  // the first Tree sample: 30 + k + r = 31
  write_file(dir + "/other.csv", other);
  const std::string other_part = dir + "/other.part";
  ASSERT_EQ(run_cli(replay_args(dir + "/other.csv") + " --shard 1/3 --out '" + other_part + "'").exit_code,
            0);
  r = run_cli("merge '" + three[0] + "' '" + other_part + "' '" + three[2] + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("sweep_sha256"), std::string::npos) << r.err;
  // Not a partial at all, and a truncated one.
  r = run_cli("merge '" + sweep + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("sweep.csv"), std::string::npos) << r.err;
  const std::string bytes = read_all(three[1]);
  write_file(dir + "/cut.part", bytes.substr(0, bytes.size() - 5));
  r = run_cli("merge '" + three[0] + "' '" + dir + "/cut.part' '" + three[2] + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("cut.part"), std::string::npos) << r.err;
}

TEST(ShardMergeCli, ShardUsageErrors) {
  const std::string dir = temp_dir(), sweep = write_shard_sweep(dir), args = replay_args(sweep);
  EXPECT_EQ(run_cli(args + " --shard 3/3 --out '" + dir + "/x'").exit_code, 2);
  EXPECT_EQ(run_cli(args + " --shard 1/3").exit_code, 2);  // no --out
  EXPECT_EQ(run_cli(args + " --out '" + dir + "/x'").exit_code, 2);
  EXPECT_EQ(run_cli(args + " --shard 0/2 --out '" + dir + "/x' --raw '" + dir + "/raw.csv'").exit_code, 2);
  EXPECT_EQ(run_cli("merge '" + dir + "/does-not-exist.part'").exit_code, 2);
}
