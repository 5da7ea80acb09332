// Whatever a message quotes, its line stays short: a 200 KB JSON key or a 100 KB policy spec that
// no reader cut where it quoted it is cut where the line is printed, keeping the file, the line and
// the reason at its two ends.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <string>

#include "support/run_cli.hpp"

namespace ncclbot::test {
namespace {

void expect_short_line_with(const CliResult& r, const std::string& start, const std::string& end) {
  EXPECT_EQ(r.exit_code, 2) << r.err.substr(0, 400);
  EXPECT_LT(r.err.size(), 700u) << r.err.substr(0, 400);
  EXPECT_EQ(r.err.rfind(start, 0), 0u) << r.err.substr(0, 400);
  EXPECT_NE(r.err.find("bytes cut)"), std::string::npos) << r.err.substr(0, 400);
  EXPECT_NE(r.err.find(end), std::string::npos) << r.err;
}

TEST(LongMessageCut, AHugeJsonKeyKeepsTheStartAndTheReason) {
  const std::string key(204800, 'k');
  const CliResult r = run_cli("stats holm", "{\"" + key + "\": 1, \"p\": [0.1]}");
  expect_short_line_with(r, "ncclbot: ", "\"");
}

TEST(LongMessageCut, AHugePolicySpecIsCut) {
  const std::string dir = temp_dir();
  const CliResult synth = run_cli(
      "synth --fabric h100-ib-a --nodes 4 --collectives allreduce --samples 1 --out " + dir + "/s.csv");
  ASSERT_EQ(synth.exit_code, 0) << synth.err;
  const CliResult r =
      run_cli("replay --sweep " + dir + "/s.csv --seeds 1 --horizon 5 --policy " + std::string(102400, 'u'));
  expect_short_line_with(r, "ncclbot: ", "");
}

// The longest run of digits in `s`.
size_t longest_digit_run(const std::string& s) {
  size_t longest = 0, run = 0;
  for (char c : s)
    longest = std::max(longest, run = std::isdigit(static_cast<unsigned char>(c)) ? run + 1 : 0);
  return longest;
}

TEST(LongMessageCut, AThreeHundredDigitTimeInALogIsShownShort) {
  std::string log = read_all(NCCLBOT_SOURCE_DIR "/tests/data/nccl-tests/srun_prefixed.txt");
  const size_t at = log.find("96.40");
  ASSERT_NE(at, std::string::npos);
  log.replace(at, 5, std::string(300, '9'));
  const std::string dir = temp_dir();
  write_file(dir + "/huge.txt", log);
  const CliResult r = run_cli("ingest " + dir + "/huge.txt --out " + dir + "/s.csv");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_LT(longest_digit_run(r.err), 20u) << r.err;  // 1e+300, not 300 digits (nor 63 of them)
}

TEST(LongMessageCut, ANegativeThreadCountNamesAShortRange) {
  // CLI11's non-negative check wrote its bound as DBL_MAX in full: 310 digits.
  for (const std::string command : {"run", "run-units"}) {
    const CliResult r = run_cli(command + " experiments/quick.toml --out /nonexistent/x --threads -1");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_LT(r.err.size(), 200u) << r.err;
    EXPECT_NE(r.err.find("--threads"), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace ncclbot::test
