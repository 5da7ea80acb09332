// Knob points in a campaign: `plan --channels --chunk-bytes` runs each arm once per (channel count,
// chunk size). The expected commands, environments and tables below are written by hand from
// docs/campaign.md and NCCL's buffer arithmetic (calcCollChunking: a step is an eighth of the
// buffer; LL carries half, LL128 15/16 of a step; Ring/Simple all-reduce chunks span 4 steps):
//   Tree/Simple 1 MiB: 4 MiB / 8 = 512 KiB < 1 MiB, so NCCL_BUFFSIZE = 8 MiB (8388608) holds it;
//   Ring/LL 1 MiB: 524288 / 8 / 2 = 32 KiB, doubled 5 times: NCCL_LL_BUFFSIZE = 16777216;
//   Ring/LL128 1 MiB: 1048576 / 1920 = 546.1, off LL128's grain: left out.
#include <gtest/gtest.h>

#include <filesystem>

#include "plugin/decision_table_file.hpp"
#include "support/run_cli.hpp"

namespace ncclbot::test {
namespace {

std::string quoted_path(const std::string& s) {
  return "'" + s + "'";
}

// Runs a shell command line with only the variables given (no NCCL_* of the test's own
// environment); stdout and stderr together.
CliResult clean_shell(const std::string& vars, const std::string& command) {
  return run_cli_with("/usr/bin/env", "-i PATH=/usr/bin:/bin HOME=/nonexistent " + vars + " " + command);
}

// The knob campaign of this file: 2 nodes x 8 GPUs, all-reduce, 1-4 KiB, three arms, channels
// {NCCL's, 16} x chunk {NCCL's, 1 MiB}, for NCCL 2.30 (plain NCCL_ALGO/NCCL_PROTO values:
// plan_forcing_test.cpp has the per-function ones of 2.31 on).
std::string plan_knobs(const std::string& camp, const std::string& extra = "") {
  const CliResult plan = run_cli(
      "plan --fabric h100-ib-a --nodes 2 --gpus-per-node 8 --collectives allreduce "
      "--arms Tree/Simple,Ring/LL,Ring/LL128 --channels 16,0 --chunk-bytes 1M,0 --min-bytes 1K "
      "--max-bytes 4K --iters 2 --nccl-version 2.30 " +
      extra + " --out " + quoted_path(camp));
  EXPECT_EQ(plan.exit_code, 0) << plan.err;
  return plan.out;
}

// A launcher that prints what it was asked to run and the NCCL/ncclbot variables it sees.
std::string echo_launcher(const std::string& dir) {
  const std::string path = dir + "/launcher.sh";
  write_file(path, "#!/bin/bash\necho \"$*\"\nenv | grep -E '^NCCL' | grep -v '^NCCL_TESTS_DIR=' | sort\n");
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  return path;
}

TEST(PlanKnobs, RunsEveryArmOncePerKnobPointAndLeavesOffGrainChunksOut) {
  const std::string camp = temp_dir() + "/c";
  const std::string out = plan_knobs(camp);
  EXPECT_NE(out.find("knob points: channels [0,16] x chunk_bytes [0,1048576]"), std::string::npos) << out;
  EXPECT_NE(out.find("Ring/LL128 chunk 1048576 B: not a multiple of LL128's 1920 B grain"), std::string::npos)
      << out;
  const std::string sh = read_all(camp + "/run.sh");
  const std::string runs =
      sh.substr(sh.find("RUNS=("), sh.find(")\n", sh.find("RUNS=(")) - sh.find("RUNS=("));
  EXPECT_EQ(runs,
            "RUNS=(\n"
            "  \"n2-allreduce-tree-simple 2 all_reduce_perf Tree Simple 1024 0 0 -\"\n"
            "  \"n2-allreduce-tree-simple-ch16 2 all_reduce_perf Tree Simple 1024 16 0 -\"\n"
            "  \"n2-allreduce-tree-simple-chunk1048576 2 all_reduce_perf Tree Simple 1024 0 1048576 "
            "NCCL_BUFFSIZE=8388608\"\n"
            "  \"n2-allreduce-tree-simple-ch16-chunk1048576 2 all_reduce_perf Tree Simple 1024 16 1048576 "
            "NCCL_BUFFSIZE=8388608\"\n"
            "  \"n2-allreduce-ring-ll 2 all_reduce_perf Ring LL 1024 0 0 -\"\n"
            "  \"n2-allreduce-ring-ll-ch16 2 all_reduce_perf Ring LL 1024 16 0 -\"\n"
            "  \"n2-allreduce-ring-ll-chunk1048576 2 all_reduce_perf Ring LL 1024 0 1048576 "
            "NCCL_LL_BUFFSIZE=16777216\"\n"
            "  \"n2-allreduce-ring-ll-ch16-chunk1048576 2 all_reduce_perf Ring LL 1024 16 1048576 "
            "NCCL_LL_BUFFSIZE=16777216\"\n"
            "  \"n2-allreduce-ring-ll128 2 all_reduce_perf Ring LL128 1024 0 0 -\"\n"
            "  \"n2-allreduce-ring-ll128-ch16 2 all_reduce_perf Ring LL128 1024 16 0 -\"\n");
  EXPECT_EQ(read_all(camp + "/tables/chunk-1048576.csv"),
            "# Written by `ncclbot plan` (docs/campaign.md): every arm below runs with a 1048576 B chunk\n"
            "# (tuner v6 getChunkSize, NCCL 2.30.3 or later); channels 0 keeps NCCL's count.\n"
            "fabric,collective,nodes,gpus_per_node,min_bytes,max_bytes,algo,proto,channels,chunk_bytes\n"
            "*,*,*,*,0,*,Tree,Simple,0,1048576\n"
            "*,*,*,*,0,*,Ring,LL,0,1048576\n");
  // The plugin reads the table as written; with NCCL_ALGO=Ring NCCL_PROTO=LL only slot 3 (Ring x 3 +
  // LL) is usable, and its row asks for the 1 MiB chunk (an all-reduce, ncclFuncAllReduce = 4).
  plugin::DecisionTable table;
  std::string error;
  ASSERT_TRUE(plugin::load_decision_table(camp + "/tables/chunk-1048576.csv", "h100-ib-a", &table, &error))
      << error;
  const plugin::DecisionRow* row = plugin::deciding_row(table.rows_for(2, 16), {4, 4096, 2, 16, -1, -1},
                                                        [](int slot) { return slot == 3; });
  ASSERT_NE(row, nullptr);
  EXPECT_EQ(row->algo * 3 + row->proto, 3);
  EXPECT_EQ(row->chunk_bytes, 1048576u);
  EXPECT_LE(row->channels, 0);  // 0 or kAny: NCCL's count
  const std::string toml = read_all(camp + "/campaign.toml");
  EXPECT_NE(toml.find("launcher = \"srun\"\nchannels = [0, 16]\nchunk_bytes = [0, 1048576]\n"),
            std::string::npos)
      << toml;
  EXPECT_NE(toml.find("id = \"n2-allreduce-ring-ll-ch16-chunk1048576\"\nfile = "), std::string::npos);
  EXPECT_NE(toml.find("min_bytes = 1024\nchannels = 16\nchunk_bytes = 1048576\n"), std::string::npos) << toml;
}

// What run.sh hands the launcher for one knob point, under srun and under mpirun.
TEST(PlanKnobs, EachRunGetsItsKnobPointsEnvironmentAndResultChecks) {
  const std::string dir = temp_dir(), camp = dir + "/c";
  plan_knobs(camp);
  const std::string vars = "NCCL_TESTS_DIR=/opt/nt NCCLBOT_PLUGIN=/opt/libnccl-tuner-ncclbot.so SRUN=" +
                           quoted_path(echo_launcher(dir));
  clean_shell(vars, "bash " + quoted_path(camp + "/run.sh") + " --task 3");
  const std::string id = "n2-allreduce-tree-simple-ch16-chunk1048576";
  EXPECT_EQ(read_all(camp + "/logs/" + id + ".log"),
            "--nodes=2 --ntasks-per-node=8 --gpus-per-node=8 --export=ALL /opt/nt/all_reduce_perf -b 1024 "
            "-e 4096 -f 2 -g 1 -n 2 -w 5 -c 1 -I 1 -J " +
                camp + "/logs/" + id +
                ".json\n"
                "NCCLBOT_MODE=table\n"
                "NCCLBOT_PLUGIN=/opt/libnccl-tuner-ncclbot.so\n"
                "NCCLBOT_TABLE=" +
                camp +
                "/tables/chunk-1048576.csv\n"
                "NCCL_ALGO=Tree\n"
                "NCCL_BUFFSIZE=8388608\n"
                "NCCL_DEBUG=INFO\n"
                "NCCL_DEBUG_SUBSYS=INIT\n"
                "NCCL_MAX_CTAS=16\n"
                "NCCL_MIN_CTAS=16\n"
                "NCCL_PROTO=Simple\n"
                "NCCL_TUNER_PLUGIN=/opt/libnccl-tuner-ncclbot.so\n");
  // NCCL's own knobs: only the forced arm.
  clean_shell(vars, "bash " + quoted_path(camp + "/run.sh") + " --task 4");
  EXPECT_EQ(read_all(camp + "/logs/n2-allreduce-ring-ll.log"),
            "--nodes=2 --ntasks-per-node=8 --gpus-per-node=8 --export=ALL /opt/nt/all_reduce_perf -b 1024 "
            "-e 4096 -f 2 -g 1 -n 2 -w 5 -c 1 -I 1 -J " +
                camp +
                "/logs/n2-allreduce-ring-ll.json\nNCCLBOT_PLUGIN=/opt/"
                "libnccl-tuner-ncclbot.so\nNCCL_ALGO=Ring\nNCCL_PROTO=LL\n");

  const std::string mcamp = dir + "/m";
  plan_knobs(mcamp, "--launcher mpirun");
  clean_shell("NCCL_TESTS_DIR=/opt/nt NCCLBOT_PLUGIN=/opt/p.so MPIRUN=" + quoted_path(echo_launcher(dir)),
              "bash " + quoted_path(mcamp + "/run.sh") + " --task 7");
  const std::string log = read_all(mcamp + "/logs/n2-allreduce-ring-ll-ch16-chunk1048576.log");
  EXPECT_EQ(log.substr(0, log.find('\n')),
            "-np 16 --map-by ppr:8:node -x NCCL_ALGO -x NCCL_PROTO -x NCCL_MIN_CTAS -x NCCL_MAX_CTAS -x "
            "NCCL_DEBUG -x NCCL_DEBUG_SUBSYS -x NCCL_TUNER_PLUGIN -x NCCLBOT_MODE -x NCCLBOT_TABLE -x "
            "NCCL_LL_BUFFSIZE /opt/nt/all_reduce_perf -b 1024 -e 4096 -f 2 -g 1 -n 2 -w 5 -c 1 -I 1 -J " +
                mcamp + "/logs/n2-allreduce-ring-ll-ch16-chunk1048576.json");
  EXPECT_NE(log.find("\nNCCL_LL_BUFFSIZE=16777216\n"), std::string::npos) << log;
}

// A chunk run with no plugin to load fails (and is retried later) rather than running NCCL's chunk.
TEST(PlanKnobs, AChunkRunWithoutThePluginFailsWithoutLaunching) {
  const std::string dir = temp_dir(), camp = dir + "/c";
  plan_knobs(camp);
  const CliResult r = clean_shell("NCCL_TESTS_DIR=/opt/nt SRUN=" + quoted_path(echo_launcher(dir)),
                                  "bash " + quoted_path(camp + "/run.sh") + " --task 2");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("FAILED: a chunk size needs NCCLBOT_PLUGIN="), std::string::npos) << r.out << r.err;
  EXPECT_FALSE(std::filesystem::exists(camp + "/logs/n2-allreduce-tree-simple-chunk1048576.log"));
}

// NCCL_CHUNK_SIZE, wherever NCCL would read it (the environment, $NCCL_CONF_FILE), stops run.sh and
// run.sbatch before anything runs or is submitted: one line citing NVIDIA/nccl #2408, exit 2.
TEST(PlanKnobs, NcclChunkSizeIsRefusedWhereverNcclWouldReadIt) {
  const std::string dir = temp_dir(), camp = dir + "/c";
  plan_knobs(camp);
  write_file(dir + "/nccl.conf", "# site settings\nNCCL_DEBUG=WARN\nNCCL_CHUNK_SIZE=1048576\n");
  const std::string base =
      "NCCL_TESTS_DIR=/opt/nt NCCLBOT_PLUGIN=/opt/p.so SRUN=" + quoted_path(echo_launcher(dir));
  const struct {
    std::string vars, command, expected;
  } cases[] = {
      {"NCCL_CHUNK_SIZE=1048576", "run.sh", "run.sh: NCCL_CHUNK_SIZE is set in the environment: "},
      {"NCCL_CHUNK_SIZE=1048576", "run.sh --task 0", "run.sh: NCCL_CHUNK_SIZE is set in the environment: "},
      {"NCCL_CONF_FILE=" + quoted_path(dir + "/nccl.conf"), "run.sh",
       "run.sh: " + dir + "/nccl.conf:3: sets NCCL_CHUNK_SIZE: "},
      {"NCCL_CHUNK_SIZE=1048576 SBATCH=echo", "run.sbatch",
       "run.sh: NCCL_CHUNK_SIZE is set in the environment: "},
  };
  for (const auto& c : cases) {
    const CliResult r = clean_shell(base + " " + c.vars, "bash " + quoted_path(camp + "/") + c.command);
    EXPECT_EQ(r.exit_code, 2) << c.command << "\n" << r.out << r.err;
    EXPECT_EQ(r.err.rfind(c.expected, 0), 0u) << r.err;
    EXPECT_NE(r.err.find("NVIDIA/nccl #2408 reports silently wrong results"), std::string::npos) << r.err;
    EXPECT_EQ(count_of(r.err, "\n"), 1u) << r.err;
    EXPECT_EQ(r.out.find("submitting"), std::string::npos) << r.out;
    EXPECT_TRUE(std::filesystem::is_empty(camp + "/logs")) << c.command;
  }
}

TEST(PlanKnobs, BadKnobValuesAreOneLineUsageErrors) {
  const struct {
    std::string options, expected;
  } cases[] = {
      {"--channels 65", "--channels: 65 is not in [0, 64]"},
      {"--channels=-1", "--channels: -1 is not in [0, 64]"},
      {"--channels 8,x", "--channels: 'x' is not a channel count"},
      {"--chunk-bytes 1000",
       "--chunk-bytes: 1000 is not a positive multiple of any planned protocol's grain"},
      // 1920 fits LL128 alone, and no LL128 arm is planned.
      {"--arms Ring/Simple --chunk-bytes 1920",
       "--chunk-bytes: 1920 is not a positive multiple of any planned"},
      {"--chunk-bytes 2G", "--chunk-bytes: 2147483648 is above 1 GiB"},
  };
  for (const auto& c : cases) {
    const std::string camp = temp_dir() + "/c";
    const CliResult r = run_cli("plan --fabric h100-ib-a --nodes 2 --collectives allreduce " + c.options +
                                " --out " + quoted_path(camp));
    EXPECT_EQ(r.exit_code, 2) << c.options << "\n" << r.err;
    EXPECT_NE(r.err.find(c.expected), std::string::npos) << c.options << "\n" << r.err;
    EXPECT_EQ(count_of(r.err, "\n"), 1u) << r.err;
    EXPECT_FALSE(std::filesystem::exists(camp)) << c.options;
  }
}

}  // namespace
}  // namespace ncclbot::test
