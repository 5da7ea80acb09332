// What `ncclbot ingest` writes: never over one of its inputs, the sweep opened by a comment saying
// what its samples are (which every sweep reader skips), and the -I 1 spread in a sidecar.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "ncclbot/io/sweep_csv.hpp"
#include "support/nccl_tests_rows.hpp"
#include "support/run_cli.hpp"

using namespace ncclbot;
using namespace ncclbot::test;

namespace {

std::string quoted_arg(const std::string& s) {
  return "'" + s + "'";
}

}  // namespace

TEST(IngestOutputCli, RefusesToOverwriteAnInput) {
  const std::string dir = temp_dir();
  write_file(dir + "/log.txt", iteration_columns_log());
  const CliResult r =
      run_cli("ingest " + quoted_arg(dir + "/log.txt") + " --out " + quoted_arg(dir + "/log.txt"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("is an input"), std::string::npos) << r.err;
  EXPECT_EQ(read_all(dir + "/log.txt"), iteration_columns_log());
  // The same file through another spelling of its path.
  const CliResult r2 =
      run_cli("ingest " + quoted_arg(dir + "/log.txt") + " --out " + quoted_arg(dir + "/./log.txt"));
  EXPECT_EQ(r2.exit_code, 2);
  EXPECT_EQ(read_all(dir + "/log.txt"), iteration_columns_log());
}

TEST(IngestOutputCli, SweepSaysItsSampleKindAndKeepsTheSpread) {
  const std::string dir = temp_dir();
  write_file(dir + "/log.txt", iteration_columns_log());
  const CliResult r =
      run_cli("ingest " + quoted_arg(dir + "/log.txt") + " --out " + quoted_arg(dir + "/s.csv") + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["sample_kind"], "mean");
  EXPECT_EQ(j["noise"], dir + "/s.noise.csv");
  const std::string csv = read_all(dir + "/s.csv");
  // A plain CSV (its header first), with what its samples are in the side file beside it.
  EXPECT_EQ(csv.rfind("fabric,collective,", 0), 0u);
  EXPECT_EQ(read_all(dir + "/s.sweep.toml"),
            "# Side data of the sweep CSV of the same name, read with it (ncclbot).\nsamples = \"mean\"\n");
  EXPECT_EQ(read_sweep_csv(dir + "/s.csv").num_contexts(), 1);
  EXPECT_EQ(
      read_all(dir + "/s.noise.csv"),
      "fabric,collective,nodes,gpus_per_node,bytes,algo,proto,sample,i_min_us,i_max_us,i_p99_us,i_cv_pct\n"
      "unknown,AllReduce,1,8,1048576,Ring,LL,0,45.1,48.2,48,1.5\n");
  // Asking for per-iteration samples from a text log is a usage the person must fix.
  const CliResult it = run_cli("ingest " + quoted_arg(dir + "/log.txt") + " --samples iterations --out " +
                               quoted_arg(dir + "/t.csv"));
  EXPECT_EQ(it.exit_code, 2);
  EXPECT_NE(it.err.find("log.txt:2: --samples iterations"), std::string::npos) << it.err;
}
