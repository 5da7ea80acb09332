// `ncclbot replay`, `tune` and `bench` as a user runs them: JSON shapes, exit codes, messages.
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "support/run_cli.hpp"

using namespace ncclbot::test;

namespace {

// Two node counts, two sizes; slot 0 (Tree/LL) is the model's pick, slot 4 (Ring/LL128) is best.
std::string write_sweep() {
  std::string csv = "fabric,collective,nodes,gpus_per_node,bytes,algo,proto,sample,time_us,prior_us\n";
  for (int nodes : {4, 16})
    for (int bytes : {1024, 65536})
      for (int r = 0; r < 2; ++r) {
        const std::string ctx =
            "h100-ib-a,allreduce," + std::to_string(nodes) + ",8," + std::to_string(bytes);
        csv += ctx + ",Tree,LL," + std::to_string(r) + ",30,10\n";
        csv += ctx + ",Ring,LL128," + std::to_string(r) + ",20,15\n";
        csv += ctx + ",Ring,Simple," + std::to_string(r) + ",25,40\n";
      }
  const std::string path = temp_dir() + "/sweep.csv";
  write_file(path, csv);
  return path;
}

}  // namespace

TEST(ReplayCli, JsonShapeAndAutoLoss) {
  const std::string sweep = write_sweep();
  const CliResult r = run_cli("replay --sweep '" + sweep +
                              "' --policy auto --policy 'ucb1:c=0.1|0.2,n0=0' --seeds 3 --horizon 50 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["configs"].size(), 3u);
  EXPECT_EQ(j["configs"][0]["policy"], "auto");
  EXPECT_EQ(j["configs"][1]["policy"], "ucb1:c=0.1,n0=0");
  EXPECT_EQ(j["configs"][2]["policy"], "ucb1:c=0.2,n0=0");
  // AUTO plays Tree/LL (30 µs) against the best 20 µs everywhere: loss 0.5 on all 4 contexts.
  for (const char* which : {"online", "final"}) {
    EXPECT_DOUBLE_EQ(j["configs"][0][which]["mean"].get<double>(), 0.5);
    EXPECT_DOUBLE_EQ(j["configs"][0][which]["p99"].get<double>(), 0.5);
    EXPECT_DOUBLE_EQ(j["configs"][0][which]["max"].get<double>(), 0.5);
    EXPECT_EQ(j["configs"][0][which]["above_10pct"].get<int>(), 4);
  }
  EXPECT_LT(j["configs"][1]["online"]["mean"].get<double>(), 0.5);
  // The node filter keeps two contexts.
  const CliResult f =
      run_cli("replay --sweep '" + sweep + "' --policy auto --seeds 1 --horizon 5 --nodes 16 --json");
  ASSERT_EQ(f.exit_code, 0) << f.err;
  EXPECT_EQ(nlohmann::json::parse(f.out)["contexts"], 2);
}

// One context where NCCL's default (the lowest prior: Ring/LL128, 20 µs) is the best arm and Tree/LL
// costs 30 µs. Cold UCB1 tries Tree/LL (slot 0) first: 30 > 1.05 x 20 at call 1, in each of the 3
// replays. In the conservative wrapper it never does; the samples lie within 5% of their arm's mean.
TEST(ReplayCli, BudgetCountsTheReplaysAboveOnePlusAlpha) {
  std::string csv = "fabric,collective,nodes,gpus_per_node,bytes,algo,proto,sample,time_us,prior_us\n";
  const std::string ctx = "h100-ib-a,allreduce,4,8,1024";
  for (int r = 0; r < 2; ++r) {
    csv += ctx + ",Tree,LL," + std::to_string(r) + (r ? ",31.5,10\n" : ",28.5,10\n");
    csv += ctx + ",Ring,LL128," + std::to_string(r) + (r ? ",21,5\n" : ",19,5\n");
  }
  const std::string sweep = temp_dir() + "/budget.csv";
  write_file(sweep, csv);
  const CliResult r =
      run_cli("replay --sweep '" + sweep +
              "' --policy ucb1:n0=0 --policy 'ucb1:n0=0@conservative' --seeds 3 --horizon 200 "
              "--budget 0.05 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["budget"]["alpha"], 0.05);
  EXPECT_EQ(j["budget"]["replays_per_config"], 3);
  EXPECT_NEAR(j["budget"]["largest_relative_deviation"].get<double>(), 0.05, 1e-6);
  EXPECT_EQ(j["configs"][0]["budget"]["replays_broken"], 3);
  EXPECT_EQ(j["configs"][0]["budget"]["seeds_broken"], 3);
  EXPECT_EQ(j["configs"][0]["budget"]["first_break_call"], 1);
  EXPECT_EQ(j["configs"][1]["budget"]["replays_broken"], 0);
  EXPECT_EQ(j["configs"][1]["budget"]["first_break_call"], 0);
  const CliResult bad =
      run_cli("replay --sweep '" + sweep + "' --policy auto --seeds 1 --horizon 5 --budget -1");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--budget must be a number in [0, 10]"), std::string::npos) << bad.err;
}

TEST(ReplayCli, SameOutputForOneAndTwoThreads) {
  const std::string sweep = write_sweep();
  const std::string args =
      "replay --sweep '" + sweep + "' --policy thompson --policy egreedy --seeds 4 --horizon 40 --json";
  const CliResult one = run_cli(args + " --threads 1"), two = run_cli(args + " --threads 2");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(one.out, two.out);
}

TEST(ReplayCli, BadPolicyIsExitTwoWithTheValidNames) {
  const std::string sweep = write_sweep();
  const CliResult r = run_cli("replay --sweep '" + sweep + "' --policy ucb9 --seeds 1 --horizon 5");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown policy 'ucb9' (valid: auto, oracle, random"), std::string::npos) << r.err;
  const CliResult k = run_cli("replay --sweep '" + sweep + "' --policy ucb1:cc=1 --seeds 1 --horizon 5");
  EXPECT_EQ(k.exit_code, 2);
  EXPECT_NE(k.err.find("(valid: c, n0)"), std::string::npos) << k.err;
  const CliResult h = run_cli("replay --sweep '" + sweep + "' --policy ucb1 --seeds 1 --horizon 0");
  EXPECT_EQ(h.exit_code, 2);
}

// Without a usable device (this machine, or a CPU-only build), cuda is one clear line and exit 2,
// auto falls back to the CPU and says so. Skipped where a device and the CUDA engine are present.
TEST(ReplayCli, CudaBackendWithoutDevice) {
  const std::string sweep = write_sweep();
  const CliResult r =
      run_cli("replay --sweep '" + sweep + "' --policy auto --seeds 1 --horizon 5 --backend cuda --json");
  if (r.exit_code == 0) GTEST_SKIP() << "a CUDA device is usable here";
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("ncclbot: --backend cuda: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
  const CliResult a =
      run_cli("replay --sweep '" + sweep + "' --policy auto --seeds 1 --horizon 5 --backend auto --json");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_NE(a.err.find("replaying on the CPU"), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(a.out)["backend"], "cpu");
}

TEST(TuneCli, ReportsTunedConfigAndScoreMetrics) {
  const std::string sweep = write_sweep();
  const CliResult r =
      run_cli("tune --sweep '" + sweep +
              "' --policy 'greedy:n0=0|100' --policy auto --tune-nodes 4 --score-nodes 16 --seeds 2 "
              "--horizon 40 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["policies"].size(), 2u);
  const auto& g = j["policies"][0];
  EXPECT_EQ(g["grid_size"], 2);
  EXPECT_EQ(g["tuned"], "greedy:n0=0");
  // Cold greedy: Tree/LL once (loss 0.5), Ring/LL128 once (0), Ring/Simple once (0.25), then Ring/LL128.
  EXPECT_NEAR(g["score"]["online"]["mean"].get<double>(), 0.75 / 40, 1e-12);
  EXPECT_EQ(g["score"]["online"]["across_seeds"]["mean"]["sd"], 0.0);
  EXPECT_NEAR(j["policies"][1]["score"]["online"]["mean"].get<double>(), 0.5, 1e-12);
  const CliResult bad =
      run_cli("tune --sweep '" + sweep + "' --policy ucb1 --objective median --seeds 1 --horizon 5");
  EXPECT_EQ(bad.exit_code, 2);
}

TEST(BenchCli, JsonShape) {
  const CliResult r = run_cli(
      "bench --backend cpu --policy ucb1 --arms 6 --arms 21 --threads 1 --contexts 2 --seeds 1 --horizon 64 "
      "--repetitions 1 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["results"].size(), 2u);
  EXPECT_EQ(j["results"][0]["policy"], "ucb1:c=0.1,n0=1");
  EXPECT_EQ(j["results"][0]["arms"], 6);
  EXPECT_EQ(j["results"][1]["arms"], 21);
  EXPECT_EQ(j["results"][0]["backend"], "cpu");
  EXPECT_EQ(j["results"][0]["threads"], 1);
  EXPECT_GT(j["results"][0]["steps_per_s"].get<double>(), 0.0);
}

// --as-deployed: warm greedy with a huge prior weight plays the model's pick (Tree/LL, 30 us against
// the best 20 us) on every call, so its online loss is exactly 0.5 plus its per-call cost over 20 us;
// the final loss (the committed arm) pays no cost. The delay is the mode's unless --delay is given.
TEST(ReplayCli, AsDeployedChargesThePluginsCostAndDelay) {
  const std::string sweep = write_sweep();
  const std::string base =
      "replay --sweep '" + sweep + "' --policy auto --policy greedy:n0=1000 --seeds 2 --horizon 40";
  const CliResult r = run_cli(base + " --as-deployed leader --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["as_deployed"], "leader");
  EXPECT_GT(j["delay"].get<int>(), 0);
  EXPECT_EQ(j["configs"][0]["call_cost_us"].get<double>(), 0.0);  // stock NCCL needs no plugin
  const double cost = j["configs"][1]["call_cost_us"].get<double>();
  EXPECT_GT(cost, 0.0);
  EXPECT_NEAR(j["configs"][1]["online"]["mean"].get<double>(), 0.5 + cost / 20.0, 1e-12);
  EXPECT_DOUBLE_EQ(j["configs"][1]["final"]["mean"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(j["configs"][0]["online"]["mean"].get<double>(), 0.5);
  EXPECT_NE(r.err.find("as deployed (leader)"), std::string::npos) << r.err;

  const CliResult given = run_cli(base + " --as-deployed local --delay 7 --json");
  ASSERT_EQ(given.exit_code, 0) << given.err;
  EXPECT_EQ(nlohmann::json::parse(given.out)["delay"], 7);

  const CliResult plain = run_cli(base + " --json");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  const auto p = nlohmann::json::parse(plain.out);
  EXPECT_FALSE(p.contains("as_deployed"));
  EXPECT_FALSE(p["configs"][1].contains("call_cost_us"));
  EXPECT_DOUBLE_EQ(p["configs"][1]["online"]["mean"].get<double>(), 0.5);

  const CliResult bad = run_cli(base + " --as-deployed cluster");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--as-deployed: unknown deployment 'cluster' (local or leader)"), std::string::npos)
      << bad.err;
}

// The cost of watching (docs/replay.md): greedy:n0=1000 plays Tree/LL (30 us, best 20 us) on every
// call, l = 0.5; charged F = 0.1 on every watched call it pays 0.1 * 1.5 more. AUTO watches nothing.
// This sweep's 1 KB and 64 KB contexts are outside every measured band: the table charges nothing.
TEST(ReplayCli, AsDeployedChargesTheCostOfWatching) {
  const std::string sweep = write_sweep();
  const std::string base =
      "replay --sweep '" + sweep +
      "' --policy auto --policy greedy:n0=1000 --seeds 2 --horizon 40 --as-deployed local";
  const CliResult flat = run_cli(base + " --observation-cost 0.1 --json");
  ASSERT_EQ(flat.exit_code, 0) << flat.err;
  const auto j = nlohmann::json::parse(flat.out);
  const double cost = j["configs"][1]["call_cost_us"].get<double>();
  EXPECT_NEAR(j["configs"][1]["online"]["mean"].get<double>(), 0.5 + 0.1 * 1.5 + cost / 20.0, 1e-12);
  EXPECT_DOUBLE_EQ(j["configs"][0]["online"]["mean"].get<double>(), 0.5);
  EXPECT_NE(j["observation"].get<std::string>().find("0.1"), std::string::npos) << j["observation"];
  EXPECT_NE(flat.err.find("and the cost of watching"), std::string::npos) << flat.err;

  const CliResult table = run_cli(base + " --nccl-version 2.31.2 --json");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  const auto t = nlohmann::json::parse(table.out);
  EXPECT_NEAR(t["configs"][1]["online"]["mean"].get<double>(), 0.5 + cost / 20.0, 1e-12);
  EXPECT_NE(t["observation"].get<std::string>().find("NCCL 2.31"), std::string::npos) << t["observation"];

  // A watch rule reports the calls it watched: greedy's one arm, K = 4, F = 1 watches all of them.
  const CliResult watch =
      run_cli(base + " --observation-cost 0.1 --policy 'greedy:n0=1000@watch:full=4,floor=1' --json");
  ASSERT_EQ(watch.exit_code, 0) << watch.err;
  const auto w = nlohmann::json::parse(watch.out);
  EXPECT_FALSE(w["configs"][1].contains("watched"));
  EXPECT_EQ(w["configs"][2]["watched"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(w["configs"][2]["online"]["mean"].get<double>(),
                   w["configs"][1]["online"]["mean"].get<double>());

  for (const std::string& bad :
       {std::string("replay --sweep '") + sweep + "' --policy auto --nccl-version 2.32",
        base + " --nccl-version 2", base + " --nccl-version two.32", base + " --observation-cost -0.1",
        base + " --observation-cost lots"}) {
    const CliResult r = run_cli(bad);
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}
