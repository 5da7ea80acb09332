// A table saved by a spreadsheet starts with a UTF-8 byte order mark (EF BB BF): it is no part of
// the first line, in either format, so the header is recognised and a fault is reported on its own
// line. It was once read as part of the first field ("unknown collective '<BOM>fabric'", line 1).
#include <gtest/gtest.h>

#include <string>

#include "plugin/table_mode_comm.hpp"
#include "support/run_cli.hpp"

namespace {

const std::string kBom = "\xEF\xBB\xBF";
const std::string kBomHeader = "fabric,collective,nodes,gpus_per_node,min_bytes,max_bytes,algo,proto\n";
constexpr int kRingSimple = 1 * 3 + 2;

// The table `text` read by a communicator of 8 ranks on one node: no WARN, and its row picks
// Ring/Simple over two_arms()'s cheaper Tree/LL.
void expect_bom_table_read(const std::string& name, const std::string& text) {
  const std::string path = ncclbot::test::temp_dir() + "/" + name;
  ncclbot::test::write_file(path, text);
  ncclbot::test::TableModeComm comm(path, 8, 1);
  EXPECT_FALSE(ncclbot::test::logged(kNcclLogWarn, path)) << name;
  int nch = 0;
  EXPECT_EQ(comm.all_reduce(4096, &nch), kRingSimple) << name;
}

}  // namespace

TEST(TableBom, ATableWithAByteOrderMarkIsReadInBothFormats) {
  expect_bom_table_read("bom.csv", kBom + kBomHeader + "*,allreduce,*,*,0,*,Ring,Simple\n");
  expect_bom_table_read("bom.conf", kBom + "allreduce,0,-1,ring,simple,-1,-1,-1\n");
}

TEST(TableBom, AFaultAfterAByteOrderMarkIsReportedOnItsOwnLine) {
  const std::string path = ncclbot::test::temp_dir() + "/bom_bad.csv";
  ncclbot::test::write_file(path, kBom + kBomHeader + "*,allreduce,*,*,0,*,Ring,Nope\n");
  ncclbot::test::TableModeComm comm(path, 8, 1);
  EXPECT_TRUE(ncclbot::test::logged(kNcclLogWarn, path + ":2: unknown protocol 'Nope'"));
  EXPECT_FALSE(ncclbot::test::logged(kNcclLogWarn, path + ":1:"));
}
