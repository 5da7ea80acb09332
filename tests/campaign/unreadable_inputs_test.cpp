// A manifest's log, or a campaign's campaign.toml, that cannot be read (a FIFO, a folder, a fabric
// no preset has) is one line naming the manifest file and its line, exit 2.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "support/run_cli.hpp"

namespace {

using ncclbot::test::run_cli;

TEST(UnreadableInputs, AManifestLogThatIsNoFileNamesTheManifestLine) {
  const std::string dir = ncclbot::test::temp_dir();
  ASSERT_EQ(mkfifo((dir + "/fifo").c_str(), 0600), 0);
  std::filesystem::create_directory(dir + "/folder");
  for (const char* raw : {"fifo", "folder"}) {
    const std::string name = raw;
    ncclbot::test::write_file(dir + "/m.toml", "# one run\n[[run]]\nalgo = \"Ring\"\nfile = \"" + name +
                                                   "\"\nproto = \"Simple\"\n");
    const auto r = run_cli("ingest --manifest '" + dir + "/m.toml' --out '" + dir + "/o.csv'");
    EXPECT_EQ(r.exit_code, 2) << name;
    const std::string want = name == "fifo" ? "not a regular file" : "is a folder, not a regular file";
    EXPECT_EQ(r.err, "ncclbot: " + dir + "/m.toml:4: file = '" + name + "': " + want + "\n");
  }
}

// A campaign folder planned for two nodes on h100-ib-a.
std::string planned_campaign() {
  const std::string camp = ncclbot::test::temp_dir() + "/camp";
  const auto r = run_cli(
      "plan --fabric h100-ib-a --nodes 2 --collectives allreduce --arms Ring/Simple "
      "--max-bytes 4K --out '" +
      camp + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return camp;
}

TEST(UnreadableInputs, AnUnknownCampaignFabricNamesItsLine) {
  const std::string camp = planned_campaign();
  const std::string toml = ncclbot::test::read_all(camp + "/campaign.toml");
  const size_t at = toml.find("fabric = \"h100-ib-a\"");
  ASSERT_NE(at, std::string::npos);
  const long line = 1 + std::count(toml.begin(), toml.begin() + long(at), '\n');
  std::string edited = toml;
  edited.replace(at, 20, "fabric = \"nope\"");
  ncclbot::test::write_file(camp + "/campaign.toml", edited);
  const std::string where = camp + "/campaign.toml:" + std::to_string(line) + ": unknown fabric 'nope'";
  for (const std::string& args :
       {"plan --status '" + camp + "'", "ingest '" + camp + "' --out '" + camp + "/o.csv'"}) {
    const auto r = run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_EQ(r.err.rfind("ncclbot: " + where, 0), 0u) << r.err;
  }
}

TEST(UnreadableInputs, ACampaignTomlThatIsAFolderIsNamed) {
  const std::string camp = planned_campaign();
  std::filesystem::remove(camp + "/campaign.toml");
  std::filesystem::create_directory(camp + "/campaign.toml");
  const auto r = run_cli("ingest '" + camp + "' --out '" + camp + "/o.csv'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "ncclbot: " + camp + "/campaign.toml: is a folder, not a file\n");
}

}  // namespace
