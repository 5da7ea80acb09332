// The commands' library calls (cli/*_call.hpp) used as a library user would: typed options in, typed
// results out, nothing printed; expected values counted by hand, and each call's document equal to
// what its command prints with --json.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include <sys/stat.h>

#include "cli/hipipe_call.hpp"
#include "cli/inspect_call.hpp"
#include "cli/json_input.hpp"
#include "cli/merge_call.hpp"
#include "cli/plan_call.hpp"
#include "cli/replay_call.hpp"
#include "cli/secret_call.hpp"
#include "cli/stats_call.hpp"
#include "cli/synth_call.hpp"
#include "cli/tune_call.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/io/sweep_csv.hpp"
#include "support/run_cli.hpp"

using namespace ncclbot;
using namespace ncclbot::cli;
using namespace ncclbot::test;

namespace {

// Two contexts, AUTO right on the first and 50% off on the second (the prior prefers Ring/LL; the
// second's Ring/LL mean 30 against Tree/LL's 20).
const char* kTwoContexts =
    "fabric,collective,nodes,gpus_per_node,bytes,algo,proto,sample,time_us,prior_us\n"
    "f,allreduce,1,8,1024,Ring,LL,0,9,5\n"
    "f,allreduce,1,8,1024,Ring,LL,1,11,5\n"
    "f,allreduce,1,8,1024,Tree,LL,0,20,6\n"
    "f,allreduce,1,8,1024,Tree,LL,1,20,6\n"
    "f,allgather,16,8,4096,Ring,LL,0,30,5\n"
    "f,allgather,16,8,4096,Ring,LL,1,30,5\n"
    "f,allgather,16,8,4096,Tree,LL,0,19,6\n"
    "f,allgather,16,8,4096,Tree,LL,1,21,6\n"
    "f,allgather,16,8,4096,Ring,Simple,0,40,7\n"
    "f,allgather,16,8,4096,Ring,Simple,1,40,7\n";

nlohmann::json cli_json(const std::string& args) {
  const CliResult r = run_cli(args + " --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

}  // namespace

TEST(LibraryCalls, InspectReturnsTheSweepsSummaryTyped) {
  const std::string dir = temp_dir();
  write_file(dir + "/s.csv", kTwoContexts);
  const InspectCallResult r = inspect_call({dir + "/s.csv", "", ""});
  EXPECT_EQ(r.contexts, 2u);
  EXPECT_EQ(r.arms, 3u);  // Ring/LL, Tree/LL, Ring/Simple
  EXPECT_EQ(r.samples, 2);
  EXPECT_FALSE(r.knob_arms);
  EXPECT_EQ(r.min_arms, 2u);
  EXPECT_EQ(r.max_arms, 3u);
  EXPECT_EQ(r.min_bytes, 1024u);
  EXPECT_EQ(r.max_bytes, 4096u);
  ASSERT_TRUE(r.auto_loss.has_value());
  EXPECT_DOUBLE_EQ(r.auto_loss->summary.mean, 0.25);  // (0 + 0.5) / 2
  EXPECT_DOUBLE_EQ(r.auto_loss->summary.max, 0.5);
  EXPECT_EQ(r.auto_loss->summary.above_10pct, 1);
  EXPECT_EQ(r.auto_loss->within_1pct, 1);
  EXPECT_FALSE(r.knob_headroom.has_value());
  EXPECT_EQ(inspect_document(r), cli_json("inspect '" + dir + "/s.csv'"));

  const InspectCallResult one = inspect_call({dir + "/s.csv", "16", "allgather"});
  EXPECT_EQ(one.contexts, 1u);
  EXPECT_DOUBLE_EQ(one.auto_loss->summary.mean, 0.5);
  EXPECT_THROW(inspect_call({dir + "/s.csv", "x", ""}), UsageError);
  EXPECT_THROW(inspect_call({dir + "/s.csv", "2", ""}), UsageError);  // selects nothing
  EXPECT_THROW(inspect_call({dir + "/none.csv", "", ""}), InputError);
}

TEST(LibraryCalls, StatsAnswersByHandAndNamesItsInput) {
  // Holm on (0.01, 0.04, 0.03), family 3: 0.01*3 = 0.03, then max(0.03, 0.03*2) = 0.06, max(0.06, 0.04).
  const JsonInput in = JsonInput::parse(R"({"p": [0.01, 0.04, 0.03]})", "<mine>");
  const nlohmann::json h = stats_call({"holm", 1}, in);
  EXPECT_DOUBLE_EQ(h["adjusted"][0].get<double>(), 0.03);
  EXPECT_DOUBLE_EQ(h["adjusted"][1].get<double>(), 0.06);
  EXPECT_DOUBLE_EQ(h["adjusted"][2].get<double>(), 0.06);
  EXPECT_EQ(h["rejected"], nlohmann::json({true, false, false}));
  EXPECT_THROW(stats_call({"nosuch", 1}, in), UsageError);
  try {
    stats_call({"holm", 1}, JsonInput::parse(R"({"p": [0.5], "resample": 3})", "<mine>"));
    ADD_FAILURE() << "an unknown field was taken";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("<mine>"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("resample"), std::string::npos) << e.what();
  }
}

TEST(LibraryCalls, SynthWritesOnlyWhenAskedAndEqualsTheCommand) {
  const std::string dir = temp_dir();
  SynthCallOptions o;
  o.fabric = "gb200-mnnvl";
  o.seed = 9;
  o.nodes = "2";
  o.samples = 2;
  const SynthCallResult held = synth_call(o);
  EXPECT_TRUE(held.out.empty());
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  const CliResult r =
      run_cli("synth --fabric gb200-mnnvl --seed 9 --nodes 2 --samples 2 --out '" + dir + "/cli.csv'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ostringstream csv;
  write_sweep_csv(held.sweep, csv);
  EXPECT_EQ(csv.str(), read_all(dir + "/cli.csv"));
  // Every context of a 2-tray GB200 sweep: 3 collectives x sizes 8 B .. 8 GiB (31 powers of two).
  EXPECT_EQ(held.sweep.num_contexts(), 3 * 31);
  o.out = dir + "/call.csv";
  const SynthCallResult written = synth_call(o);
  EXPECT_EQ(read_all(dir + "/call.csv"), read_all(dir + "/cli.csv"));
  EXPECT_EQ(synth_document(written)["out"], dir + "/call.csv");
  o.shift_rate = -0.1;
  EXPECT_THROW(synth_call(o), UsageError);
  o.shift_rate.reset();
  o.gpus_per_node = 0;
  EXPECT_THROW(synth_call(o), UsageError);
}

TEST(LibraryCalls, TuneChoosesEachGridsBestPointOnTheTuneContexts) {
  const std::string dir = temp_dir();
  write_file(dir + "/s.csv", kTwoContexts);
  TuneCallOptions o;
  o.sweep_path = dir + "/s.csv";
  o.policies = {"ucb1:c=0.05|0.4,n0=1", "auto"};
  o.tune_nodes = "1";
  o.score_nodes = "16";
  o.seeds = 2;
  o.horizon = 40;
  o.threads = 1;
  const TuneCallResult r = tune_call(o);
  EXPECT_EQ(r.report.tune_contexts, 1u);
  EXPECT_EQ(r.report.score_contexts, 1u);
  ASSERT_EQ(r.tuned.size(), 2u);
  ASSERT_EQ(r.tuned[0].points.size(), 2u);
  const auto& obj = r.tuned[0].objective;
  EXPECT_EQ(obj[size_t(r.tuned[0].chosen)], std::min(obj[0], obj[1]));
  // AUTO is right on the tune context and 50% off on the score context, whatever the seed.
  EXPECT_DOUBLE_EQ(r.tuned[1].tune_online.summary.mean, 0.0);
  EXPECT_DOUBLE_EQ(r.tuned[1].score_online.summary.mean, 0.5);
  EXPECT_EQ(tune_document(r.report, r.tuned),
            cli_json("tune --sweep '" + dir +
                     "/s.csv' --policy 'ucb1:c=0.05|0.4,n0=1' --policy auto "
                     "--tune-nodes 1 --score-nodes 16 --seeds 2 --horizon 40 --threads 1"));
  o.objective = "median";
  EXPECT_THROW(tune_call(o), UsageError);
}

TEST(LibraryCalls, MergeOfReplayShardsIsTheUnshardedReplay) {
  const std::string dir = temp_dir();
  write_file(dir + "/s.csv", kTwoContexts);
  const std::string replay = "replay --sweep '" + dir +
                             "/s.csv' --policy auto --policy 'ucb1:c=0.1,n0=1' --seeds 2 "
                             "--horizon 30 --threads 1";
  for (int i = 0; i < 2; ++i) {
    const CliResult r = run_cli(replay + " --shard " + std::to_string(i) + "/2 --out '" + dir + "/p" +
                                std::to_string(i) + "'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  const MergeCallResult merged = merge_call({{dir + "/p1", dir + "/p0"}, ""});
  EXPECT_EQ(merged.kind, MergeCallResult::Kind::kReplay);
  EXPECT_EQ(merged.partials, 2u);
  ReplayCallOptions o;
  o.sweep_path = dir + "/s.csv";
  o.policies = {"auto", "ucb1:c=0.1,n0=1"};
  o.seeds = 2;
  o.horizon = 30;
  o.threads = 1;
  const ReplayCallResult whole = replay_call(o);
  EXPECT_EQ(replay_document(merged.replay_report, merged.replay_results),
            replay_document(whole.report, whole.results));
  EXPECT_THROW(merge_call({{dir + "/p0", dir + "/p1"}, dir + "/choice.json"}),
               UsageError);                                   // --out: tune only
  EXPECT_THROW(merge_call({{dir + "/p0"}, ""}), UsageError);  // a shard missing
}

TEST(LibraryCalls, PlanWritesOneRunPerArmAndItsStatusSaysMissing) {
  const std::string dir = temp_dir();
  PlanCallOptions o;
  o.fabric = "h100-ib-a";
  o.nodes = "2,4";
  o.collectives = "allreduce";
  o.arms = "Ring/LL,Ring/Simple";
  o.out = dir + "/campaign";
  const PlanCallResult plan = plan_call(o);
  EXPECT_EQ(plan.plan.runs.size(), 4u);  // 2 node counts x 1 collective x 2 arms
  EXPECT_TRUE(std::filesystem::exists(dir + "/campaign/campaign.toml"));
  const PlanStatusResult status = plan_status_call(dir + "/campaign");
  EXPECT_EQ(status.runs.size(), 4u);
  EXPECT_EQ(status.missing, 4u);
  EXPECT_EQ(status.done + status.failed, 0u);
  EXPECT_EQ(plan_status_document(status), cli_json("plan --status '" + dir + "/campaign'"));
  o.gpus_per_node = 0;
  EXPECT_THROW(plan_call(o), UsageError);
  EXPECT_THROW(plan_status_call(dir), UsageError);  // no campaign.toml there
}

TEST(LibraryCalls, SecretWritesAnOwnerOnlyKeyOnceAndNeverOverwrites) {
  const std::string path = temp_dir() + "/keys/leader.key";
  const SecretCallResult r = secret_call({path});
  EXPECT_EQ(r.key_file, path);
  const std::string key = read_all(path);
  ASSERT_EQ(key.size(), 65u);  // 32 bytes as 64 hex digits and a newline
  EXPECT_EQ(key.find_first_not_of("0123456789abcdef"), 64u);
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_THROW(secret_call({path}), InputError);
  EXPECT_EQ(read_all(path), key);
  EXPECT_EQ(shell_quoted("a'b c"), "'a'\\''b c'");
}

TEST(LibraryCalls, HipipeRefusesCountsAndSizesItCannotModel) {
  HipipeCallOptions o;
  o.fabric = "h100-ib-a";
  o.bytes = "64M";
  const HipipeCallResult r = hipipe_call(o);
  EXPECT_GT(r.nodes, 0);
  EXPECT_GT(r.gpus_per_node, 0);
  EXPECT_EQ(hipipe_document(r), cli_json("hipipe --fabric h100-ib-a --bytes 64M"));
  o.nodes = 0;
  EXPECT_THROW(hipipe_call(o), UsageError);
  o.nodes.reset();
  o.bytes = "0";
  EXPECT_THROW(hipipe_call(o), UsageError);
}
