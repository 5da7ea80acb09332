// `ope --policy table:FILE` reads decision tables with the plugin's own code, so a row the plugin
// refuses (a chunk size off its protocol's grain, more than NCCL's 64 channels) is exit 2 here too,
// naming the file and line.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "support/decision_log_bytes.hpp"
#include "support/run_cli.hpp"

TEST(OpeTableTarget, ARowThePluginRefusesIsExitTwoWithFileAndLine) {
  const std::string dir = ncclbot::test::temp_dir();
  std::string log =
      ncclbot::test::decision_log_header("policy=random\nseed=7\n") + ncclbot::test::decision_log_context();
  for (int i = 0; i < 6; ++i) log += ncclbot::test::decision_log_call(uint64_t(i), i, 1.0 / 6.0, 10.0 + i);
  ncclbot::test::write_file(dir + "/log", log);
  const std::string header =
      "fabric,collective,nodes,gpus_per_node,min_bytes,max_bytes,algo,proto,channels,chunk_bytes\n";
  // 511 B is below Simple's 512 B grain (NCCL src/include/device.h:328-334); 65 channels above 64.
  for (const auto& [row, needle] :
       {std::pair<std::string, std::string>{"*,allreduce,*,*,0,*,Ring,Simple,*,511\n",
                                            ":2: chunk_bytes 511 is not a multiple"},
        {"*,allreduce,*,*,0,*,Ring,Simple,65\n", ":2: bad channels '65'"}}) {
    const std::string table = dir + "/table.csv";
    ncclbot::test::write_file(table, header + row);
    const ncclbot::test::CliResult r =
        ncclbot::test::run_cli("ope --log '" + dir + "/log' --policy 'table:" + table + "'");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(table + needle), std::string::npos) << r.err;
  }
}
