// A campaign from plan to plugin with no cluster: `ncclbot plan` writes the campaign, run.sh runs
// it with the stand-in nccl-tests program and launcher (tests/campaign), `ncclbot ingest DIR` reads
// it back (one sample per timed iteration), a study runs on the sweep, its table is exported and
// the built plugin is checked against the replay. Along the way: a second run.sh rewrites nothing,
// --status reports a deleted log as missing and a cut-off log as failed, run.sh reruns exactly
// those, and run.sbatch submits exactly the incomplete array tasks.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "ncclbot/core/arm.hpp"
#include "ncclbot/core/names.hpp"
#include "ncclbot/io/sweep_csv.hpp"
#include "ncclbot/sim/simulator.hpp"
#include "support/run_cli.hpp"

using namespace ncclbot;
using namespace ncclbot::test;
namespace fs = std::filesystem;

namespace {

std::string q(const std::string& s) {
  return "'" + s + "'";
}

std::string build_dir() {
  return beside_ncclbot("");
}

struct Shell {
  int exit_code = -1;
  std::string out;
};

// Runs a shell command line, stdout and stderr together.
Shell sh(const std::string& command) {
  const std::string out = temp_dir() + "/sh.out";
  const int status = std::system((command + " >" + q(out) + " 2>&1").c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_all(out)};
}

// The logs' bytes and modification times, to prove a rerun touched nothing.
std::map<std::string, std::pair<std::string, int64_t>> logs_snapshot(const std::string& logs) {
  std::map<std::string, std::pair<std::string, int64_t>> out;
  for (const auto& e : fs::directory_iterator(logs))
    if (e.is_regular_file()) {
      struct stat st {};
      ::stat(e.path().c_str(), &st);
      out[e.path().filename().string()] = {read_all(e.path().string()),
                                           int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
    }
  return out;
}

const char* kStudy = R"([study]
name = "campaign"
seed = 3
seeds = 2
horizon = 60
curve_horizons = [20]
bootstrap_resamples = 200
permutation_resamples = 999
backend = "cpu"

[[sweep]]
name = "measured"
file = "c/sweep.csv"

[[scenario]]
name = "allreduce"
tune = { sweep = "measured", nodes = [2], collectives = ["allreduce"] }
score = { sweep = "measured", nodes = [4], collectives = ["allreduce"] }

[[scenario]]
name = "allgather"
tune = { sweep = "measured", nodes = [2], collectives = ["allgather"] }
score = { sweep = "measured", nodes = [4], collectives = ["allgather"] }

[[policy]]
name = "AUTO"
spec = "auto"

[[policy]]
name = "UCB1"
spec = "ucb1:c=0.2|0.5,n0=8"

[[hypothesis]]
a = "UCB1"
b = "AUTO"
metrics = ["mean"]
)";

std::string standin_launcher() {
  return std::string(NCCLBOT_TEST_DATA_DIR) + "/../campaign/standin_launcher.sh";
}

// The stand-in as DIR/bin/all_reduce_perf, and a campaign of one run planned into `camp`: 2 nodes x
// 8 GPUs, all-reduce Ring/Simple, 1-4 KiB, 2 timed iterations.
void plan_one_run(const std::string& dir, const std::string& camp) {
  fs::create_directories(dir + "/bin");
  fs::create_symlink(build_dir() + "nccl_tests_standin", dir + "/bin/all_reduce_perf");
  const CliResult plan = run_cli(
      "plan --fabric h100-ib-a --nodes 2 --gpus-per-node 8 --collectives allreduce --arms Ring/Simple "
      "--min-bytes 1K --max-bytes 4K --iters 2 --out " +
      q(camp));
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
}

}  // namespace

TEST(CampaignEndToEnd, PlanRunIngestStudyTablePlugin) {
  const std::string dir = temp_dir(), camp = dir + "/c";
  // nccl-tests' programs are the stand-in under their real names.
  fs::create_directories(dir + "/bin");
  for (const char* name : {"all_reduce_perf", "all_gather_perf"})
    fs::create_symlink(build_dir() + "nccl_tests_standin", dir + "/bin/" + name);
  const std::string launcher = standin_launcher();
  const std::string env = "NCCL_TESTS_DIR=" + q(dir + "/bin") + " SRUN=" + q(launcher) +
                          " NCCLBOT_STANDIN_FABRIC=h100-ib-a NCCLBOT_STANDIN_SEED=7 ";

  // 1. Plan: 2 and 4 nodes x 8 GPUs, all-reduce and all-gather, 1 KiB-64 KiB by 4, 10 iterations.
  const CliResult plan = run_cli(
      "plan --fabric h100-ib-a --nodes 2,4 --gpus-per-node 8 --collectives allreduce,allgather --min-bytes "
      "1K "
      "--max-bytes 64K --step-factor 4 --iters 10 --warmup 2 --out " +
      q(camp) + " --json");
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  const auto pj = nlohmann::json::parse(plan.out);
  ASSERT_EQ(pj["runs"].size(), 20u);
  EXPECT_NE(plan.err.find("NVLS/Simple: needs CollNet"), std::string::npos) << plan.err;
  EXPECT_EQ(sh("bash -n " + q(camp + "/run.sh") + " && bash -n " + q(camp + "/run.sbatch")).exit_code, 0);

  // 2. run.sh with the stand-ins: every run, with progress.
  const Shell first = sh(env + "bash " + q(camp + "/run.sh"));
  ASSERT_EQ(first.exit_code, 0) << first.out;
  EXPECT_NE(first.out.find("[20/20] n4-allgather-ring-simple: done"), std::string::npos) << first.out;

  // 3. A second run.sh keeps every log as it is.
  const auto before = logs_snapshot(camp + "/logs");
  ASSERT_EQ(before.size(), 40u);  // text log + JSON per run
  const Shell second = sh(env + "bash " + q(camp + "/run.sh"));
  ASSERT_EQ(second.exit_code, 0) << second.out;
  EXPECT_NE(second.out.find("[1/20] n2-allreduce-tree-ll: complete, kept"), std::string::npos) << second.out;
  EXPECT_EQ(second.out.find("running"), std::string::npos) << second.out;
  EXPECT_EQ(logs_snapshot(camp + "/logs"), before);

  // 4. ingest DIR: every planned (context, arm) with 10 samples, each a timed iteration in order.
  const CliResult ing = run_cli("ingest " + q(camp) + " --json");
  ASSERT_EQ(ing.exit_code, 0) << ing.err;
  const auto ij = nlohmann::json::parse(ing.out);
  EXPECT_EQ(ij["sample_kind"], "iterations");
  EXPECT_EQ(ij["samples"], 10);
  EXPECT_EQ(ij["contexts"], 16);                // 2 collectives x 2 node counts x 4 sizes
  EXPECT_EQ(ij["rows"], (7 + 3) * 2 * 4 * 10);  // arms x node counts x sizes x iterations
  EXPECT_EQ(ij["campaign"]["done"], 20);
  const Sweep sweep = read_sweep_csv(camp + "/sweep.csv");
  ASSERT_TRUE(sweep.has_prior());
  const SweepView v = sweep.view();
  for (const auto& run : pj["runs"]) {
    const int slot = arm_slot(*parse_nccl_algo(run["algo"].get<std::string>()),
                              *parse_proto(run["proto"].get<std::string>()));
    int contexts = 0;
    for (int c = 0; c < v.num_contexts; ++c) {
      const Context& ctx = sweep.context(c);
      if (ctx.nodes != run["nodes"] ||
          collective_name(ctx.collective) != (run["collective"] == "allreduce" ? "AllReduce" : "AllGather"))
        continue;
      ++contexts;
      EXPECT_TRUE(v.mask(c).has(slot)) << run["id"] << " " << ctx.bytes;
    }
    EXPECT_EQ(contexts, 4) << run["id"];
  }
  // The stand-in drew iteration i of the out-of-place timing as the simulator's sample i.
  const sim::FabricPreset fabric = sim::load_fabric("h100-ib-a");
  const Context ctx{"h100-ib-a", Collective::kAllReduce, 4, 8, 16384};
  const int ring_ll = arm_slot(Algo::kRing, Proto::kLL);
  const double truth = sim::true_time_us(fabric, sim::draw_deviations(fabric, 7), ctx, ring_ll);
  int c = 0;
  while (sweep.context(c) != ctx) ++c;
  for (int r = 0; r < 10; ++r)
    EXPECT_EQ(v.sample(c, ring_ll, r), float(sim::sample_time_us(fabric, 7, ctx, ring_ll, r, truth))) << r;

  // 5. A study on the measured sweep, its table, and the plugin against the replay.
  write_file(dir + "/study.toml", kStudy);
  const CliResult study =
      run_cli("run " + q(dir + "/study.toml") + " --out " + q(dir + "/study") + " --no-figures");
  ASSERT_EQ(study.exit_code, 0) << study.err;
  const CliResult table =
      run_cli("export-table --study " + q(dir + "/study") + " --policy UCB1 --out " + q(dir + "/ucb1.csv"));
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(read_all(dir + "/ucb1.csv").find("h100-ib-a,AllReduce,4,8,"), std::string::npos)
      << read_all(dir + "/ucb1.csv");
  const CliResult check =
      run_cli("plugin-check --plugin " + q(build_dir() + "libnccl-tuner-ncclbot.so") + " --sweep " +
              q(camp + "/sweep.csv") + " --policy 'ucb1:c=0.5,n0=8' --seed 5 --horizon 60 --json");
  ASSERT_EQ(check.exit_code, 0) << check.err;
  EXPECT_EQ(nlohmann::json::parse(check.out)["equal"], true);

  // 6. A deleted log is missing, a cut-off one failed; ingest refuses the holes unless told.
  fs::remove(camp + "/logs/n2-allreduce-ring-ll.json");
  fs::remove(camp + "/logs/n2-allreduce-ring-ll.log");
  const std::string cut = read_all(camp + "/logs/n4-allgather-ring-simple.log");
  write_file(camp + "/logs/n4-allgather-ring-simple.log", cut.substr(0, cut.find("# Out of bounds")));
  const CliResult st = run_cli("plan --status " + q(camp) + " --json");
  ASSERT_EQ(st.exit_code, 0) << st.err;
  const auto sj = nlohmann::json::parse(st.out);
  EXPECT_EQ(sj["done"], 18);
  EXPECT_EQ(sj["missing"], 1);
  EXPECT_EQ(sj["failed"], 1);
  for (const auto& r : sj["runs"]) {
    if (r["id"] == "n2-allreduce-ring-ll") {
      EXPECT_EQ(r["state"], "missing");
    }
    if (r["id"] == "n4-allgather-ring-simple") {
      EXPECT_EQ(r["state"], "failed");
      EXPECT_NE(r["reason"].get<std::string>().find("trailer"), std::string::npos) << r["reason"];
    }
  }
  const CliResult holes = run_cli("ingest " + q(camp) + " --out " + q(dir + "/holes.csv"));
  EXPECT_EQ(holes.exit_code, 2);
  EXPECT_NE(holes.err.find("8 context(s) lack planned arms"), std::string::npos) << holes.err;
  const CliResult allowed =
      run_cli("ingest " + q(camp) + " --allow-missing --out " + q(dir + "/kept.csv") + " --json");
  ASSERT_EQ(allowed.exit_code, 0) << allowed.err;
  EXPECT_EQ(nlohmann::json::parse(allowed.out)["contexts"], 8);

  // 7. run.sbatch submits just the two incomplete array tasks (a stand-in sbatch echoes), and
  //    run.sh reruns just those, moving the cut-off log aside.
  const Shell submit = sh("SBATCH=echo bash " + q(camp + "/run.sbatch"));
  ASSERT_EQ(submit.exit_code, 0) << submit.out;
  EXPECT_NE(submit.out.find("--nodes=2 --time="), std::string::npos) << submit.out;
  EXPECT_NE(submit.out.find("--array=3 "), std::string::npos) << submit.out;   // n2-allreduce-ring-ll
  EXPECT_NE(submit.out.find("--array=19 "), std::string::npos) << submit.out;  // n4-allgather-ring-simple
  const auto kept = logs_snapshot(camp + "/logs");
  const Shell third = sh(env + "bash " + q(camp + "/run.sh"));
  ASSERT_EQ(third.exit_code, 0) << third.out;
  EXPECT_NE(third.out.find("n2-allreduce-ring-ll: running"), std::string::npos) << third.out;
  EXPECT_NE(third.out.find("n4-allgather-ring-simple: running"), std::string::npos) << third.out;
  const auto after = logs_snapshot(camp + "/logs");
  for (const auto& [name, content] : kept)
    if (name.rfind("n4-allgather-ring-simple", 0) != 0) {
      EXPECT_EQ(after.at(name), content) << name;
    }
  EXPECT_EQ(std::distance(fs::directory_iterator(camp + "/logs/attempts"), fs::directory_iterator()), 2);
  const CliResult done = run_cli("plan --status " + q(camp) + " --json");
  EXPECT_EQ(nlohmann::json::parse(done.out)["done"], 20);

  // 8. A JSON document that still ends in '}' but does not parse is not complete: run.sh lists it
  //    again (python3 is there to say so), and plan --status says why.
  const std::string json1 = camp + "/logs/n2-allreduce-tree-ll.json";
  std::string text = read_all(json1);
  text.replace(text.find(':'), 1, "::");
  write_file(json1, text);
  const Shell incomplete = sh("bash " + q(camp + "/run.sh") + " --incomplete");
  EXPECT_EQ(incomplete.out, "0\n") << incomplete.out;
  const CliResult broken = run_cli("plan --status " + q(camp) + " --json");
  EXPECT_EQ(nlohmann::json::parse(broken.out)["done"], 19) << broken.out;
}

TEST(CampaignEndToEnd, PlanRefusesSomeoneElsesFolder) {
  const std::string dir = temp_dir();
  write_file(dir + "/notes.txt", "mine");
  const CliResult r = run_cli(
      "plan --fabric h100-ib-a --nodes 2 --collectives allreduce --min-bytes 1K --max-bytes 4K "
      "--out " +
      q(dir));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(read_all(dir + "/notes.txt"), "mine");
  EXPECT_FALSE(fs::exists(dir + "/campaign.toml"));
}

// run.sh writes only into its own folder: run by a relative path with CDPATH pointing at a decoy
// that holds a folder of the same name, its logs still land in the campaign. And a folder name the
// scripts could not hold as one word (a trailing newline) is refused by plan, which writes nothing.
TEST(CampaignEndToEnd, RunShStaysInItsFolder) {
  const std::string dir = temp_dir(), camp = dir + "/c";
  fs::create_directories(dir + "/decoy/c");
  ASSERT_NO_FATAL_FAILURE(plan_one_run(dir, camp));
  const std::string launcher = standin_launcher();
  const Shell run =
      sh("cd " + q(dir) + " && export CDPATH=" + q(dir + "/decoy") + " && NCCL_TESTS_DIR=" + q(dir + "/bin") +
         " SRUN=" + q(launcher) + " NCCLBOT_STANDIN_FABRIC=h100-ib-a bash c/run.sh");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_TRUE(fs::exists(camp + "/logs/n2-allreduce-ring-simple.log")) << run.out;
  EXPECT_TRUE(fs::is_empty(dir + "/decoy/c"));
  const CliResult bad =
      run_cli("plan --fabric h100-ib-a --nodes 2 --collectives allreduce --out " + q(dir + "/trail\n"));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("control character"), std::string::npos) << bad.err;
  EXPECT_FALSE(fs::exists(dir + "/trail\n"));
}

// Started through a symlink in another folder (a link in ~/bin, a shared folder of links), run.sh
// and run.sbatch still work on the campaign the file is in: logs land there, --incomplete reads
// them there, and sbatch is sent to the campaign's folder.
TEST(CampaignEndToEnd, ScriptsStartedThroughASymlinkUseTheCampaignsFolder) {
  const std::string dir = temp_dir(), camp = dir + "/c";
  ASSERT_NO_FATAL_FAILURE(plan_one_run(dir, camp));
  fs::create_directories(dir + "/links");
  fs::create_symlink(camp + "/run.sh", dir + "/links/run.sh");
  fs::create_symlink(camp + "/run.sbatch", dir + "/links/run.sbatch");
  const Shell run = sh("NCCL_TESTS_DIR=" + q(dir + "/bin") + " SRUN=" + q(standin_launcher()) +
                       " NCCLBOT_STANDIN_FABRIC=h100-ib-a bash " + q(dir + "/links/run.sh"));
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_TRUE(fs::exists(camp + "/logs/n2-allreduce-ring-simple.log")) << run.out;
  EXPECT_FALSE(fs::exists(dir + "/links/logs"));
  const Shell incomplete = sh("bash " + q(dir + "/links/run.sh") + " --incomplete");
  EXPECT_EQ(incomplete.exit_code, 0) << incomplete.out;
  EXPECT_EQ(incomplete.out, "") << incomplete.out;  // the one run is complete
  fs::remove(camp + "/logs/n2-allreduce-ring-simple.log");
  const Shell submit = sh("SBATCH=echo bash " + q(dir + "/links/run.sbatch"));
  ASSERT_EQ(submit.exit_code, 0) << submit.out;
  EXPECT_NE(submit.out.find("--chdir=" + fs::canonical(camp).string() + " --nodes=2"), std::string::npos)
      << submit.out;
  EXPECT_NE(submit.out.find("--array=0 "), std::string::npos) << submit.out;
}

TEST(CampaignEndToEnd, MpirunLauncherRunsTheSameWay) {
  const std::string dir = temp_dir(), camp = dir + "/m";
  fs::create_directories(dir + "/bin");
  fs::create_symlink(build_dir() + "nccl_tests_standin", dir + "/bin/reduce_scatter_perf");
  const CliResult plan = run_cli(
      "plan --fabric h100-ib-a --nodes 4 --gpus-per-node 8 --collectives reducescatter --arms Ring/Simple "
      "--min-bytes 1K --max-bytes 16K --step-factor 2 --iters 3 --launcher mpirun --out " +
      q(camp));
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  // 32 ranks: reduce-scatter sizes are multiples of 16 B x 32 = 512 B, so 1K..16K all print as themselves.
  const std::string launcher = standin_launcher();
  const Shell run = sh("NCCL_TESTS_DIR=" + q(dir + "/bin") + " MPIRUN=" + q(launcher) +
                       " NCCLBOT_STANDIN_FABRIC=h100-ib-a bash " + q(camp + "/run.sh"));
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const CliResult ing = run_cli("ingest " + q(camp) + " --placement both --json");
  ASSERT_EQ(ing.exit_code, 0) << ing.err;
  const auto j = nlohmann::json::parse(ing.out);
  EXPECT_EQ(j["contexts"], 5);  // 1, 2, 4, 8, 16 KiB
  EXPECT_EQ(j["samples"], 6);   // 3 out-of-place then 3 in-place iterations
  EXPECT_EQ(j["runs"][0]["nodes"], 4);
}

TEST(CampaignEndToEnd, AnArmNcclCannotRunFailsAndStatusSaysWhy) {
  const std::string dir = temp_dir(), camp = dir + "/f";
  ASSERT_NO_FATAL_FAILURE(plan_one_run(dir, camp));
  // What NCCL does when forced onto NVLS across nodes without SHARP: the run fails.
  const std::string launcher = standin_launcher();
  const Shell nvls =
      sh("(NCCL_ALGO=NVLS NCCL_PROTO=Simple NCCLBOT_STANDIN_FABRIC=h100-ib-a " + q(launcher) +
         " --nodes=2 --ntasks-per-node=8 " + q(dir + "/bin/all_reduce_perf") +
         " -b 1K -e 4K -f 2 -g 1 -n 2 -w 1 -I 1 -J " + q(camp + "/logs/n2-allreduce-ring-simple.json") +
         " > " + q(camp + "/logs/n2-allreduce-ring-simple.log") + ")");
  EXPECT_NE(nvls.exit_code, 0);
  const CliResult st = run_cli("plan --status " + q(camp) + " --json");
  ASSERT_EQ(st.exit_code, 0) << st.err;
  const auto run = nlohmann::json::parse(st.out)["runs"][0];
  EXPECT_EQ(run["state"], "failed");
  EXPECT_NE(run["reason"].get<std::string>().find("nccl-tests failed at"), std::string::npos)
      << run["reason"];
  EXPECT_NE(run["reason"].get<std::string>().find("Test NCCL failure"), std::string::npos) << run["reason"];
  // ingest says the same and writes nothing.
  const CliResult ing = run_cli("ingest " + q(camp));
  EXPECT_EQ(ing.exit_code, 2);
  EXPECT_FALSE(fs::exists(camp + "/sweep.csv"));
}
