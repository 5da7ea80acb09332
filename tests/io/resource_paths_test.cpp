// Where a program finds its files (io/resource_paths.hpp), on hand-made trees: an installed
// prefix, a build folder whose marker names a source tree (found from a subfolder too), a marker
// naming no source tree, and nothing at all. This test program itself runs from the build tree.
#include "ncclbot/io/resource_paths.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "support/run_cli.hpp"

using namespace ncclbot;
using namespace ncclbot::test;
namespace fs = std::filesystem;

TEST(ResourcePaths, AnInstalledPrefixIsFoundFromItsBinFolder) {
  const fs::path p = fs::path(temp_dir()) / "prefix";
  fs::create_directories(p / "bin");
  fs::create_directories(p / "share" / "ncclbot" / "fabrics");
  write_file((p / "bin" / "ncclbot").string(), "");
  const ResourcePaths r = find_resource_paths((p / "bin" / "ncclbot").string());
  EXPECT_EQ(r.found_by, "installed");
  EXPECT_EQ(r.data, fs::weakly_canonical(p / "share" / "ncclbot").string());
  EXPECT_EQ(r.scripts, (fs::weakly_canonical(p / "share" / "ncclbot") / "scripts").string());
  EXPECT_EQ(r.experiments, (fs::weakly_canonical(p / "share" / "ncclbot") / "experiments").string());
}

TEST(ResourcePaths, ABuildFolderNamesItsSourceTree) {
  const fs::path root = fs::path(temp_dir());
  const fs::path src = root / "src", build = root / "build";
  fs::create_directories(src / "data" / "fabrics");
  fs::create_directories(build / "tests" / "deeper");
  write_file((build / kSourceTreeMarker).string(), src.string() + "\n");
  for (const fs::path& program : {build / "ncclbot", build / "tests" / "deeper" / "a_test"}) {
    const ResourcePaths r = find_resource_paths(program.string());
    EXPECT_EQ(r.found_by, "build tree") << program;
    EXPECT_EQ(r.data, (src / "data").string()) << program;
    EXPECT_EQ(r.scripts, (src / "scripts").string()) << program;
  }
  // A marker naming a folder that is no source tree (no data/fabrics) counts for nothing.
  write_file((build / kSourceTreeMarker).string(), (root / "elsewhere").string() + "\n");
  EXPECT_EQ(find_resource_paths((build / "ncclbot").string()).found_by, "");
  EXPECT_EQ(find_resource_paths((build / "ncclbot").string()).data, "");
}

TEST(ResourcePaths, NothingFoundLeavesThemEmptyAndSynthSaysWhatToSet) {
  const fs::path lonely = fs::path(temp_dir()) / "bin" / "ncclbot";
  const ResourcePaths r = find_resource_paths(lonely.string());
  EXPECT_EQ(r.found_by, "");
  EXPECT_TRUE(r.data.empty() && r.scripts.empty() && r.experiments.empty());
  // A copy of the program with nothing beside it (and no build folder above it) cannot find the
  // presets and says so in one line, exit 2.
  fs::create_directories(lonely.parent_path());
  fs::copy_file(NCCLBOT_BINARY, lonely);
  const std::string out = lonely.parent_path().string() + "/s.csv";
  const CliResult c = run_cli_with(lonely.string(), "synth --fabric h100-ib-a --out '" + out + "'");
  EXPECT_EQ(c.exit_code, 2) << c.err;
  EXPECT_NE(c.err.find("no fabric presets found"), std::string::npos) << c.err;
  EXPECT_NE(c.err.find("NCCLBOT_DATA_DIR"), std::string::npos) << c.err;
}

TEST(ResourcePaths, ThisTestProgramFindsTheSourceTree) {
  EXPECT_EQ(resource_paths().found_by, "build tree");
  EXPECT_TRUE(fs::exists(fs::path(resource_paths().data) / "fabrics" / "h100-ib-a.toml"));
  EXPECT_TRUE(fs::exists(fs::path(resource_paths().scripts) / "study_figures.py"));
}

// A shared object that carries its data beside itself, as the Python package does
// (site-packages/ncclbot/_core.so, site-packages/ncclbot/share/ncclbot/fabrics), and the plugin in
// PREFIX/lib, which finds PREFIX/share/ncclbot like a program in PREFIX/bin.
TEST(ResourcePaths, ASharedObjectFindsDataBesideItOrInItsPrefix) {
  const fs::path pkg = fs::path(temp_dir()) / "site-packages" / "ncclbot";
  fs::create_directories(pkg / "share" / "ncclbot" / "fabrics");
  write_file((pkg / "_core.cpython-311-x86_64-linux-gnu.so").string(), "");
  const ResourcePaths r = find_resource_paths((pkg / "_core.cpython-311-x86_64-linux-gnu.so").string());
  EXPECT_EQ(r.found_by, "installed");
  EXPECT_EQ(r.data, fs::weakly_canonical(pkg / "share" / "ncclbot").string());

  const fs::path prefix = fs::path(temp_dir()) / "plugin-prefix";
  fs::create_directories(prefix / "lib");
  fs::create_directories(prefix / "share" / "ncclbot" / "fabrics");
  const ResourcePaths q = find_resource_paths((prefix / "lib" / "libnccl-tuner-ncclbot.so").string());
  EXPECT_EQ(q.found_by, "installed");
  EXPECT_EQ(q.data, fs::weakly_canonical(prefix / "share" / "ncclbot").string());
}
