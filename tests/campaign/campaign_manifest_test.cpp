// `plan --status` and `ingest DIR` read campaign.toml as strictly as every other TOML input: a key
// the format does not have, a value of the wrong type or range, or a run outside the campaign's own
// settings is one line naming the file and line, exit 2.
#include <gtest/gtest.h>

#include <string>

#include "support/run_cli.hpp"

namespace ncclbot::test {
namespace {

// A one-run campaign as plan writes it; its manifest text.
std::string planned_campaign(const std::string& camp) {
  const CliResult plan = run_cli(
      "plan --fabric h100-ib-a --nodes 2 --gpus-per-node 8 --collectives allreduce --arms Ring/Simple "
      "--min-bytes 1K --max-bytes 4K --iters 2 --out '" +
      camp + "'");
  EXPECT_EQ(plan.exit_code, 0) << plan.err;
  return read_all(camp + "/campaign.toml");
}

// `text` with its first `from` (at or after `after`) replaced by `to`.
std::string replaced(std::string text, const std::string& after, const std::string& from,
                     const std::string& to) {
  const size_t at = text.find(from, text.find(after));
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

TEST(CampaignManifest, EveryKeyOfEveryTableIsChecked) {
  const std::string camp = temp_dir() + "/c";
  const std::string good = planned_campaign(camp);
  ASSERT_EQ(run_cli("plan --status '" + camp + "'").exit_code, 0);
  // Line 3 is [campaign]; the run's table follows the campaign's 11 keys and a blank line.
  const struct {
    std::string text, expected;
  } cases[] = {
      {replaced(good, "[campaign]", "[campaign]\n", "[campaign]\ncolour = \"blue\"\n"),
       "campaign.toml:4: unknown key 'colour' in [campaign]"},
      {replaced(good, "[campaign]", "nodes = [2]", "nodes = [-2]"), "nodes must be in [1, 100000]"},
      {replaced(good, "[campaign]", "collectives = [\"allreduce\"]", "collectives = [4]"),
       "collectives must be a string"},
      {replaced(good, "[campaign]", "launcher = \"srun\"", "launcher = \"ssh\""),
       "launcher 'ssh' is not one of srun, mpirun"},
      {replaced(good, "[[run]]", "nodes = 2", "nodes = 3"), "nodes = 3 is not one of the campaign's nodes"},
      {replaced(good, "[[run]]", "gpus_per_node = 8", "gpus_per_node = 4"), "differs from the campaign's 8"},
      {replaced(good, "[[run]]", "[[run]]\n", "[[run]]\nretries = 2\n"), "unknown key 'retries'"},
  };
  for (const auto& c : cases) {
    write_file(camp + "/campaign.toml", c.text);
    for (const char* command : {"plan --status ", "ingest "}) {
      const CliResult r = run_cli(command + ("'" + camp + "'"));
      EXPECT_EQ(r.exit_code, 2) << command << c.expected << "\n" << r.err;
      EXPECT_EQ(count_of(r.err, "\n"), 1u) << r.err;
      EXPECT_NE(r.err.find("campaign.toml:"), std::string::npos) << r.err;
      EXPECT_NE(r.err.find(c.expected), std::string::npos) << command << "\n" << r.err;
    }
  }
}

// Knob values: a channel count outside [0, 64], a chunk size off every protocol's grain or off its
// run's protocol's grain, or a run's knob that is not one of the campaign's, is one line naming
// campaign.toml and the line, exit 2.
TEST(CampaignManifest, KnobValuesAreCheckedWithTheirLine) {
  const std::string camp = temp_dir() + "/c";
  const CliResult plan = run_cli(
      "plan --fabric h100-ib-a --nodes 2 --gpus-per-node 8 --collectives allreduce --arms Ring/LL128 "
      "--channels 0,8 --chunk-bytes 0,3840 --min-bytes 1K --max-bytes 4K --iters 2 --nccl-version 2.30 --out "
      "'" +
      camp + "'");
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  const std::string good = read_all(camp + "/campaign.toml");
  ASSERT_EQ(run_cli("plan --status '" + camp + "'").exit_code, 0);
  // Lines: 3 [campaign], 4-14 its keys, 15 channels, 16 chunk_bytes; the first run's table at 18,
  // its keys 19-28 (min_bytes at 28); the second run (channels 8) has channels at line 41.
  const struct {
    std::string text, expected;
  } cases[] = {
      {replaced(good, "[campaign]", "channels = [0, 8]", "channels = [0, 65]"),
       "campaign.toml:15: channels must be in [0, 64]"},
      {replaced(good, "[campaign]", "channels = [0, 8]", "channels = [-1, 8]"),
       "campaign.toml:15: channels must be in [0, 64]"},
      {replaced(good, "[campaign]", "chunk_bytes = [0, 3840]", "chunk_bytes = [0, 1000]"),
       "campaign.toml:16: chunk_bytes 1000 is not a positive multiple of any protocol's grain"},
      {replaced(good, "[campaign]", "chunk_bytes = [0, 3840]", "chunk_bytes = [0, 3840, 4096]"),
       ""},  // a campaign may list more than its runs use
      {replaced(replaced(good, "[campaign]", "chunk_bytes = [0, 3840]", "chunk_bytes = [0, 3840, 4096]"),
                "chunk_bytes = 3840", "chunk_bytes = 3840", "chunk_bytes = 4096"),
       "chunk_bytes = 4096 is not a multiple of LL128's 1920 B grain"},
      {replaced(good, "-ch8\"", "channels = 8", "channels = 16"),
       "campaign.toml:41: channels = 16 is not one of the campaign's channels"},
      {replaced(good, "-ch8\"", "channels = 8", "channels = 99"),
       "campaign.toml:41: channels must be in [0, 64]"},
  };
  for (const auto& c : cases) {
    write_file(camp + "/campaign.toml", c.text);
    const CliResult r = run_cli("plan --status '" + camp + "'");
    if (c.expected.empty()) {
      EXPECT_EQ(r.exit_code, 0) << r.err;
      continue;
    }
    EXPECT_EQ(r.exit_code, 2) << c.expected << "\n" << r.err;
    EXPECT_EQ(count_of(r.err, "\n"), 1u) << r.err;
    EXPECT_NE(r.err.find(c.expected), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace ncclbot::test
