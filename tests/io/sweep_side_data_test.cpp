// The side file that carries a sweep's call dynamics beside its plain CSV, and the older
// "# dynamics:" line that readers still take.
#include "ncclbot/io/sweep_side_data.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>

#include "ncclbot/core/error.hpp"
#include "ncclbot/io/sweep_csv.hpp"
#include "support/run_cli.hpp"

namespace {

const char* kSideCsv =
    "fabric,collective,nodes,gpus_per_node,bytes,algo,proto,sample,time_us\n"
    "h100,AllReduce,2,8,1048576,Tree,LL,0,8\n"
    "h100,AllReduce,2,8,1048576,Ring,Simple,0,7\n";

ncclbot::SweepDynamics side_test_dynamics() {
  ncclbot::SweepDynamics d;
  d.call.job_warmup = 0.5f;
  d.call.job_warmup_calls = 200;
  d.call.shift_rate = 0.001f;
  d.call.shift_arm_size = 0.25f;
  d.first_use_base_us = 10000.0;
  return d;
}

ncclbot::Sweep side_test_sweep() {
  std::istringstream in(kSideCsv);
  return ncclbot::parse_sweep_csv(in, "s.csv");
}

std::string side_error(const std::string& side_text) {
  try {
    ncclbot::parse_sweep_side_data(side_text, "s.sweep.toml");
  } catch (const ncclbot::InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(SweepSideData, TheCsvStaysPlainAndTheDynamicsComeBackFromBesideIt) {
  const std::string dir = ncclbot::test::temp_dir();
  ncclbot::Sweep s = side_test_sweep();
  s.set_dynamics(side_test_dynamics());
  ncclbot::write_sweep_csv(s, dir + "/s.csv");
  EXPECT_EQ(ncclbot::test::read_all(dir + "/s.csv"), kSideCsv);  // header first, no comment line
  EXPECT_EQ(ncclbot::sweep_side_data_path(dir + "/s.csv"), dir + "/s.sweep.toml");
  EXPECT_EQ(ncclbot::test::read_all(dir + "/s.sweep.toml"),
            "# Side data of the sweep CSV of the same name, read with it (ncclbot).\n"
            "[dynamics]\n"
            "job_warmup = 0.5\njob_warmup_calls = 200\narm_warmup = 0\narm_warmup_calls = 0\n"
            "shift_rate = 0.001\nshift_size = 0\nshift_arm_size = 0.25\n"
            "first_use_base_us = 10000\nfirst_use_per_host_us = 0\n");
  const ncclbot::Sweep back = ncclbot::read_sweep_csv(dir + "/s.csv");
  EXPECT_TRUE(back.identical_to(s));
  EXPECT_EQ(back.dynamics(), side_test_dynamics());
}

TEST(SweepSideData, ASweepWithoutDynamicsWrittenOverOneWithTakesItsSideFileAway) {
  const std::string dir = ncclbot::test::temp_dir();
  ncclbot::Sweep s = side_test_sweep();
  s.set_dynamics(side_test_dynamics());
  ncclbot::write_sweep_csv(s, dir + "/s.csv");
  ncclbot::write_sweep_csv(side_test_sweep(), dir + "/s.csv");
  EXPECT_FALSE(std::filesystem::exists(dir + "/s.sweep.toml"));
  EXPECT_FALSE(ncclbot::read_sweep_csv(dir + "/s.csv").dynamics().any());
}

TEST(SweepSideData, TheOldDynamicsLineStillReadsButNotBesideASideFile) {
  const std::string dir = ncclbot::test::temp_dir();
  const std::string legacy =
      "# dynamics: job_warmup=0.5 job_warmup_calls=200 arm_warmup=0 arm_warmup_calls=0 shift_rate=0.001 "
      "shift_size=0 shift_arm_size=0.25 first_use_base_us=10000 first_use_per_host_us=0\n" +
      std::string(kSideCsv);
  ncclbot::test::write_file(dir + "/old.csv", legacy);
  EXPECT_EQ(ncclbot::read_sweep_csv(dir + "/old.csv").dynamics(), side_test_dynamics());
  ncclbot::test::write_file(dir + "/old.sweep.toml", "[dynamics]\njob_warmup = 0.5\n");
  try {
    ncclbot::read_sweep_csv(dir + "/old.csv");
    FAIL() << "two sources of dynamics were taken";
  } catch (const ncclbot::InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(dir + "/old.sweep.toml: gives call dynamics, and so does", 0), 0u)
        << e.what();
  }
}

TEST(SweepSideData, EveryKeyIsCheckedWithItsLine) {
  EXPECT_NE(side_error("[dynamics]\nbogus = 1\n").find("s.sweep.toml:2: unknown dynamics key 'bogus'"),
            std::string::npos);
  EXPECT_NE(side_error("[dynamics]\njob_warmup = 200\n")
                .find("s.sweep.toml:2: dynamics job_warmup = '200' is not a number in [0, 100]"),
            std::string::npos);
  EXPECT_NE(side_error("[dynamics]\njob_warmup_calls = 1.5\n").find("is not an integer"), std::string::npos);
  EXPECT_NE(side_error("[dynamics]\njob_warmup = \"x\"\n").find("must be a number"), std::string::npos);
  EXPECT_NE(side_error("[dynamics]\njob_warmup = 0.5\n").find("dynamics lacks 'job_warmup_calls'"),
            std::string::npos);
  EXPECT_NE(side_error("stuff = 1\n").find("s.sweep.toml:1: unknown key 'stuff'"), std::string::npos);
  EXPECT_NE(side_error("samples = \"median\"\n").find("samples must be \"iterations\" or \"mean\""),
            std::string::npos);
  EXPECT_EQ(side_error("samples = \"iterations\"\n"), "");
}

TEST(SweepSideData, ADeviceTakesASweepWithoutSideDataOnly) {
  EXPECT_NO_THROW(ncclbot::write_sweep_csv(side_test_sweep(), "/dev/null"));
  ncclbot::Sweep s = side_test_sweep();
  s.set_dynamics(side_test_dynamics());
  EXPECT_THROW(ncclbot::write_sweep_csv(s, "/dev/null"), ncclbot::UsageError);
}
