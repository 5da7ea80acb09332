// `--json` on every subcommand (docs/architecture.md "Contracts": one JSON document on stdout, human text on
// stderr): each subcommand `ncclbot --help` lists offers it, and the ones that only write a file
// (synth, export-table, secret) say in JSON what they wrote.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "support/run_cli.hpp"

using namespace ncclbot::test;

namespace {

// The subcommand names `ncclbot PREFIX --help` lists (the lines under "Subcommands:").
std::vector<std::string> subcommands(const std::string& prefix) {
  const CliResult help = run_cli(prefix + "--help");
  EXPECT_EQ(help.exit_code, 0) << help.err;
  std::vector<std::string> out;
  std::istringstream in(help.out);
  std::string line;
  bool listing = false;
  while (std::getline(in, line)) {
    if (line.rfind("Subcommands:", 0) == 0) {
      listing = true;
      continue;
    }
    if (!listing || line.size() < 3 || line[0] != ' ') continue;
    std::istringstream words(line);
    std::string name;
    words >> name;
    out.push_back(name);
  }
  return out;
}

}  // namespace

TEST(JsonEverywhereCli, EverySubcommandOffersJson) {
  const std::vector<std::string> names = subcommands("");
  ASSERT_GE(names.size(), 17u);  // bench ... tune: 17 as of this writing; more may come
  for (const std::string& name : names) {
    // A command made of subcommands (stats) offers it on each of them.
    std::vector<std::string> leaves;
    for (const std::string& sub : subcommands(name + " ")) leaves.push_back(name + " " + sub);
    if (leaves.empty()) leaves.push_back(name);
    for (const std::string& leaf : leaves) {
      const CliResult r = run_cli(leaf + " --help");
      EXPECT_EQ(r.exit_code, 0) << leaf << ": " << r.err;
      EXPECT_NE(r.out.find("--json"), std::string::npos) << leaf << " has no --json:\n" << r.out;
    }
  }
}

TEST(JsonEverywhereCli, SynthSaysWhatItWrote) {
  const std::string out = temp_dir() + "/s.csv";
  const CliResult r =
      run_cli("synth --fabric h100-roce --seed 4 --nodes 4 --collectives allreduce --samples 2 --out '" +
              out + "' --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["fabric"], "h100-roce");
  EXPECT_EQ(j["seed"], 4);
  EXPECT_EQ(j["samples"], 2);
  EXPECT_EQ(j["out"], out);
  EXPECT_EQ(j["observation"], true);
  // The count is the sweep's, as inspect reads it back.
  const CliResult inspect = run_cli("inspect '" + out + "' --json");
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  EXPECT_EQ(j["contexts"], nlohmann::json::parse(inspect.out)["contexts"]);
  EXPECT_NE(r.err.find("synth: h100-roce seed 4"), std::string::npos) << r.err;  // the human line stays
}

TEST(JsonEverywhereCli, SecretNamesTheKeyFileButNeverTheKey) {
  const std::string path = temp_dir() + "/leader.key";
  const CliResult r = run_cli("secret --out '" + path + "' --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["key_file"], path);
  EXPECT_EQ(j["mode"], "0600");
  const std::string key = read_all(path);
  ASSERT_FALSE(key.empty());
  EXPECT_EQ(r.out.find(key), std::string::npos);
  EXPECT_EQ(r.err.find(key), std::string::npos);
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}
