// A symlink loop where an input should be (a log, a manifest, a manifest's log, a fabric preset
// found by name or given as a path, a study folder) is one line naming the path, exit 2, as every
// other unreadable input is; never "internal error: filesystem error" (exit 1).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "support/run_cli.hpp"

namespace ncclbot::test {
namespace {

std::string in_quotes(const std::string& s) {
  return "'" + s + "'";
}

TEST(SymlinkLoopInputs, EveryReaderNamesThePathAndExitsTwo) {
  namespace fs = std::filesystem;
  const std::string dir = temp_dir();
  fs::create_symlink(dir + "/loop", dir + "/loop");  // a link to itself
  fs::create_symlink(dir + "/loop.toml", dir + "/loop.toml");
  fs::create_directories(dir + "/data/fabrics");
  fs::create_symlink(dir + "/data/fabrics/looped.toml", dir + "/data/fabrics/looped.toml");
  write_file(dir + "/manifest.toml", "[[run]]\nfile = \"loop\"\nalgo = \"Ring\"\nproto = \"LL\"\n");
  const std::string loop = in_quotes(dir + "/loop"), out = in_quotes(dir + "/out.csv");
  const std::string data_dir =
      "NCCLBOT_DATA_DIR=" + in_quotes(dir + "/data") + " " + in_quotes(ncclbot_binary());
  const struct {
    std::string program, args, path;
  } cases[] = {
      {ncclbot_binary(), "ingest " + loop + " --out " + out, dir + "/loop"},
      {ncclbot_binary(), "ingest --manifest " + loop + " --out " + out, dir + "/loop"},
      {ncclbot_binary(), "ingest --manifest " + in_quotes(dir + "/manifest.toml") + " --out " + out, "loop"},
      {ncclbot_binary(), "hipipe --fabric " + in_quotes(dir + "/loop.toml") + " --bytes 1M",
       dir + "/loop.toml"},
      {"env", data_dir + " synth --fabric looped --out " + out, dir + "/data/fabrics/looped.toml"},
      {"env", data_dir + " plan --fabric looped --nodes 2 --out " + in_quotes(dir + "/c"),
       dir + "/data/fabrics/looped.toml"},
      {ncclbot_binary(), "export-table --study " + loop + " --policy p --out " + out, dir + "/loop"},
      {ncclbot_binary(), "plan --status " + loop, dir + "/loop"},
  };
  for (const auto& c : cases) {
    const CliResult r = run_cli_with(c.program, c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.err;
    EXPECT_EQ(count_of(r.err, "\n"), 1u) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.path), std::string::npos) << c.args << "\n" << r.err;
    EXPECT_EQ(r.err.find("internal error"), std::string::npos) << c.args << "\n" << r.err;
  }
  EXPECT_FALSE(fs::exists(dir + "/out.csv"));
}

}  // namespace
}  // namespace ncclbot::test
