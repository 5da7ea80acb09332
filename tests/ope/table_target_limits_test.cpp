// `ope --policy table:FILE` reads decision tables with the plugin's own code, so a row the plugin
// refuses (a chunk size off its protocol's grain, more than NCCL's 64 channels, a count past an int)
// is exit 2 here too, naming the file and line; and a table saved with a UTF-8 byte order mark is
// read as the plugin reads it.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "support/decision_log_bytes.hpp"
#include "support/run_cli.hpp"

namespace {

// A decision log of six random-policy calls in `dir`; returns its path.
std::string write_table_target_log(const std::string& dir) {
  std::string log =
      ncclbot::test::decision_log_header("policy=random\nseed=7\n") + ncclbot::test::decision_log_context();
  for (int i = 0; i < 6; ++i) log += ncclbot::test::decision_log_call(uint64_t(i), i, 1.0 / 6.0, 10.0 + i);
  ncclbot::test::write_file(dir + "/log", log);
  return dir + "/log";
}

ncclbot::test::CliResult ope_with_table(const std::string& log, const std::string& table) {
  return ncclbot::test::run_cli("ope --log '" + log + "' --policy 'table:" + table + "'");
}

}  // namespace

TEST(OpeTableTarget, ARowThePluginRefusesIsExitTwoWithFileAndLine) {
  const std::string dir = ncclbot::test::temp_dir();
  const std::string log = write_table_target_log(dir);
  const std::string header =
      "fabric,collective,nodes,gpus_per_node,min_bytes,max_bytes,algo,proto,channels,chunk_bytes\n";
  // 511 B is below Simple's 512 B grain (NCCL src/include/device.h:328-334); 65 channels above 64.
  for (const auto& [row, needle] :
       {std::pair<std::string, std::string>{"*,allreduce,*,*,0,*,Ring,Simple,*,511\n",
                                            ":2: chunk_bytes 511 is not a multiple"},
        {"*,allreduce,*,*,0,*,Ring,Simple,65\n", ":2: bad channels '65'"},
        // 2^64 - 1 nodes: no count an int holds (it once read as "any" and matched every shape).
        {"*,allreduce,18446744073709551615,*,0,*,Ring,Simple\n", ":2: bad nodes '18446744073709551615'"}}) {
    const std::string table = dir + "/table.csv";
    ncclbot::test::write_file(table, header + row);
    const ncclbot::test::CliResult r = ope_with_table(log, table);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(table + needle), std::string::npos) << r.err;
  }
}

// The mark (EF BB BF) is no part of the header, and a fault after it is named on its own line.
TEST(OpeTableTarget, ATableWithAByteOrderMarkIsReadAndItsFaultsNamedOnTheirLine) {
  const std::string dir = ncclbot::test::temp_dir();
  const std::string log = write_table_target_log(dir);
  const std::string header =
      "\xEF\xBB\xBF"
      "fabric,collective,nodes,gpus_per_node,min_bytes,max_bytes,algo,proto\n";
  const std::string good = dir + "/bom_good.csv", bad = dir + "/bom_bad.csv";
  ncclbot::test::write_file(good, header + "*,allreduce,*,*,0,*,Tree,LL\n");
  ncclbot::test::write_file(bad, header + "*,allreduce,*,*,0,*,Tree,Nope\n");
  const ncclbot::test::CliResult ok = ope_with_table(log, good);
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  const ncclbot::test::CliResult refused = ope_with_table(log, bad);
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_NE(refused.err.find(bad + ":2: unknown protocol 'Nope'"), std::string::npos) << refused.err;
}
