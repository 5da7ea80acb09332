// A sweep whose arms set channels or chunk sizes, as a user meets it on the command line: inspect
// prices NCCL's default against the best arm measured, replay plays every knob arm on the CPU, and
// the commands still on algorithm x protocol slots refuse it with exit 2 and the line of its first
// knob arm.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "support/run_cli.hpp"

namespace ncclbot::test {
namespace {

// One context. Ring/Simple with NCCL's knobs (prior 10, mean 11), Ring/Simple on 8 channels (prior 10,
// mean 8), Tree/Simple with NCCL's knobs (prior 20, mean 9). NCCL's default is the argmin of the prior
// over the arms with NCCL's own knobs: Ring/Simple (10 < 20), so it loses 11 / 8 - 1 = 0.375.
const char* kKnobSweep =
    "fabric,collective,nodes,gpus_per_node,bytes,algo,proto,channels,chunk_bytes,sample,time_us,prior_us\n"
    "h100,AllReduce,2,8,1048576,Ring,Simple,8,0,0,8,10\n"
    "h100,AllReduce,2,8,1048576,Ring,Simple,8,0,1,8,10\n"
    "h100,AllReduce,2,8,1048576,Ring,Simple,0,0,0,10,10\n"
    "h100,AllReduce,2,8,1048576,Ring,Simple,0,0,1,12,10\n"
    "h100,AllReduce,2,8,1048576,Tree,Simple,0,0,0,9,20\n"
    "h100,AllReduce,2,8,1048576,Tree,Simple,0,0,1,9,20\n";

TEST(KnobSweepCli, InspectPricesNcclsDefaultAgainstTheBestKnobArm) {
  const std::string dir = temp_dir();
  write_file(dir + "/k.csv", kKnobSweep);
  const CliResult r = run_cli("inspect '" + dir + "/k.csv' --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["contexts"], 1);
  EXPECT_EQ(j["arms"], 3);
  EXPECT_EQ(j["arms_per_context"]["max"], 3);
  EXPECT_EQ(j["knob_arms"], true);
  EXPECT_DOUBLE_EQ(j["auto"]["mean"].get<double>(), 0.375);
  EXPECT_EQ(j["auto"]["above_10pct"], 1);
  // The best arm at NCCL's knobs is Tree/Simple (9) against Ring/Simple at 8 channels (8): 0.125.
  EXPECT_DOUBLE_EQ(j["knob_headroom"]["mean"].get<double>(), 0.125);
  EXPECT_NE(r.err.find("NCCL's default"), std::string::npos) << r.err;
}

// The sweep's arms in Arm order: 0 Tree/Simple (mean 9), 1 Ring/Simple NCCL's knobs (mean 11),
// 2 Ring/Simple 8 channels (mean 8). By hand: AUTO plays arm 1 on every call (prior 10 ties arm 2's
// and goes to the lower index: NCCL's own knobs), loss 11 / 8 - 1 = 0.375; the oracle plays arm 2,
// loss 0; etc:m=1 probes arms 0, 1, 2 once each (losses 9 / 8 - 1 = 0.125, 0.375, 0), then keeps arm
// 2, whose every sample (8) is below every sample of the others: online (0.125 + 0.375) / 10 = 0.05
// at horizon 10, final 0.
TEST(KnobSweepCli, ReplayPlaysEveryKnobArm) {
  const std::string dir = temp_dir();
  write_file(dir + "/k.csv", kKnobSweep);
  const CliResult r = run_cli("replay --sweep '" + dir +
                              "/k.csv' --policy auto --policy oracle --policy etc:m=1 --seeds 3 --horizon 10 "
                              "--json --raw '" +
                              dir + "/raw.csv'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["configs"].size(), 3u);
  EXPECT_DOUBLE_EQ(j["configs"][0]["online"]["mean"].get<double>(), 0.375);
  EXPECT_DOUBLE_EQ(j["configs"][0]["final"]["mean"].get<double>(), 0.375);
  EXPECT_DOUBLE_EQ(j["configs"][1]["online"]["mean"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(j["configs"][2]["online"]["mean"].get<double>(), 0.05);
  EXPECT_DOUBLE_EQ(j["configs"][2]["final"]["mean"].get<double>(), 0.0);
  // The raw rows name each replay's final arm by its index in the context's arms.
  std::ifstream raw(dir + "/raw.csv");
  std::string header, row;
  std::getline(raw, header);
  std::getline(raw, row);
  EXPECT_EQ(row.substr(row.rfind(',') + 1), "1") << row;  // AUTO: Ring/Simple at NCCL's knobs
}

// Kept to NCCL's own knobs (@slots) the same policies see arms 0 and 1 only, and still pay against
// arm 2: etc:m=1@slots probes arm 0 (0.125) and arm 1 (0.375), then keeps arm 0 (samples 9 below 10
// and 12): online (0.125 + 0.375 + 8 x 0.125) / 10 = 0.15, final 0.125; oracle@slots plays arm 0.
TEST(KnobSweepCli, SlotsOnlyPoliciesChooseAmongNcclsOwnKnobsAndPayAgainstEveryArm) {
  const std::string dir = temp_dir();
  write_file(dir + "/k.csv", kKnobSweep);
  const CliResult r =
      run_cli("replay --sweep '" + dir +
              "/k.csv' --policy etc:m=1@slots --policy oracle@slots --seeds 3 --horizon 10 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["configs"][0]["policy"], "etc:m=1@slots");
  EXPECT_DOUBLE_EQ(j["configs"][0]["online"]["mean"].get<double>(), 0.15);
  EXPECT_DOUBLE_EQ(j["configs"][0]["final"]["mean"].get<double>(), 0.125);
  EXPECT_DOUBLE_EQ(j["configs"][1]["online"]["mean"].get<double>(), 0.125);
}

// The supervised selectors learn knob arms by identity (tests/supervised/supervised_knob_test.cpp has
// their predictions worked out by hand); here the command takes the sweep.
TEST(KnobSweepCli, TheSupervisedSelectorsTakeAKnobSweep) {
  const std::string dir = temp_dir();
  write_file(dir + "/k.csv", kKnobSweep);
  const CliResult r =
      run_cli("replay --sweep '" + dir + "/k.csv' --policy knn --policy tree --seeds 1 --horizon 10 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["configs"].size(), 2u);
}

TEST(KnobSweepCli, CudaBackendRefusesAKnobSweepAndAutoReplaysItOnTheCpu) {
  const std::string dir = temp_dir();
  write_file(dir + "/k.csv", kKnobSweep);
  const std::string args = "replay --sweep '" + dir + "/k.csv' --policy auto --seeds 1 --horizon 4 --json";
  const CliResult a = run_cli(args + " --backend auto");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(a.out)["configs"][0]["online"]["mean"].get<double>(), 0.375);
  const CliResult c = run_cli(args + " --backend cuda");
  EXPECT_EQ(c.exit_code, 2);
}

}  // namespace
}  // namespace ncclbot::test

namespace ncclbot::test {
namespace {

// synth --knobs: every arm of today's sweep crossed with the listed channels and chunks (chunks off a
// protocol's grain skipped for it), NCCL's own setting keeping today's samples bit for bit.
TEST(KnobSweepCli, SynthCrossesEachArmWithTheKnobsAndKeepsNcclsOwnSamples) {
  const std::string dir = temp_dir();
  const std::string opts =
      " --fabric h100-ib-a --seed 3 --nodes 2 --collectives allreduce --samples 2 "
      "--min-bytes 4194304 --max-bytes 4194304";
  ASSERT_EQ(run_cli("synth --out '" + dir + "/plain.csv'" + opts).exit_code, 0);
  const CliResult r =
      run_cli("synth --out '" + dir + "/k.csv'" + opts +
              "  --knobs 'channels=0,1,2,4,8,16,24,32,48,64;chunk=0,16K,64K,256K,1M,4M' --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["knob_arms"], true);
  const auto plain = nlohmann::json::parse(run_cli("inspect '" + dir + "/plain.csv' --json").out);
  const auto knobs = nlohmann::json::parse(run_cli("inspect '" + dir + "/k.csv' --json").out);
  // LL (grain 16) and Simple (512) take all six chunks, LL128 (1920) none of 16K..4M but 0: per
  // context 10 x 6 arms for each LL and Simple slot, 10 for each LL128 slot.
  const int slots = plain["arms_per_context"]["max"].get<int>();
  EXPECT_GT(knobs["arms_per_context"]["max"].get<int>(), 256);
  EXPECT_LE(knobs["arms_per_context"]["max"].get<int>(), slots * 60);
  EXPECT_GE(knobs["arms_per_context"]["max"].get<int>(), slots * 10);
  // The rows of NCCL's own knobs are today's rows, with "0,0," after the protocol: check the first.
  const std::string plain_csv = read_all(dir + "/plain.csv"), knob_csv = read_all(dir + "/k.csv");
  const size_t row_start = plain_csv.find('\n') + 1;
  const std::string row = plain_csv.substr(row_start, plain_csv.find('\n', row_start) - row_start);
  size_t proto_end = 0;
  for (int comma = 0; comma < 7; ++comma) proto_end = row.find(',', proto_end) + 1;  // after fabric..proto
  const std::string knob_row = row.substr(0, proto_end) + "0,0," + row.substr(proto_end) + "\n";
  EXPECT_NE(knob_csv.find("\n" + knob_row), std::string::npos) << knob_row;
  // The dynamics are the same side file.
  EXPECT_EQ(read_all(dir + "/k.sweep.toml"), read_all(dir + "/plain.sweep.toml"));
}

TEST(KnobSweepCli, SynthRefusesKnobValuesNcclCannotTake) {
  const std::string dir = temp_dir();
  for (const char* spec : {"channels=65", "channels=-1", "chunk=100", "bogus=1", "channels="}) {
    const CliResult r =
        run_cli("synth --fabric h100-ib-a --nodes 2 --out '" + dir + "/x.csv' --knobs '" + spec + "'");
    EXPECT_EQ(r.exit_code, 2) << spec << ": " << r.err;
    EXPECT_FALSE(std::ifstream(dir + "/x.csv").good()) << spec;
  }
  write_file(dir + "/spec.txt", "# the knob values\nchannels=0,8\n\nchunk=0,64K  # a comment\n");
  EXPECT_EQ(run_cli("synth --fabric h100-ib-a --nodes 2 --collectives allreduce --samples 1 --out '" + dir +
                    "/y.csv' --knobs @'" + dir + "/spec.txt'")
                .exit_code,
            0);
  const CliResult missing =
      run_cli("synth --fabric h100-ib-a --out '" + dir + "/z.csv' --knobs @'" + dir + "/none.txt'");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("none.txt"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace ncclbot::test
