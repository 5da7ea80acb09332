// `ope` and `telemetry` against decision logs a careless or hostile user hands them: each is exit 2
// with one line naming the file, within the test's 20 s limit; no estimate is ever printed as inf,
// nan or null. The logs are written with the format's own encoder (support/decision_log_bytes.hpp).
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "support/decision_log_bytes.hpp"
#include "support/run_cli.hpp"

using namespace ncclbot::test;

namespace {

// A Thompson-sampling log (any probability in (0, 1] is one it can give) of `calls` calls, call i
// with `propensity(i)` and `latency(i)`.
template <typename P, typename L>
std::string thompson_log(int calls, P propensity, L latency) {
  std::string bytes = decision_log_header("policy=thompson:n0=1\nseed=7\n") + decision_log_context();
  for (int i = 0; i < calls; ++i) bytes += decision_log_call(uint64_t(i), i % 6, propensity(i), latency(i));
  return bytes;
}

struct Hostile {
  std::string what, log, needle;
};

}  // namespace

TEST(HostileLogs, OpeAndTelemetryRefuseEachWithOneLineNamingTheFile) {
  const std::string dir = temp_dir();
  const auto fine = [](int) { return 0.5; };
  const auto normal = [](int i) { return 10.0 + i; };
  std::vector<Hostile> cases = {
      {"denormal propensity",
       thompson_log(
           12, [](int i) { return i == 3 ? 1e-310 : 0.5; }, normal),
       "is below the floor of 1e-06"},
      {"propensity 1e-300",
       thompson_log(
           12, [](int i) { return i == 3 ? 1e-300 : 0.5; }, normal),
       "is below the floor of 1e-06"},
      {"latency 1e-300 everywhere", thompson_log(12, fine, [](int) { return 1e-300; }),
       "the logs hold no measured call (12 calls with a latency outside"},
      {"every call index 0",
       decision_log_header("policy=random\nseed=7\n") + decision_log_context() +
           decision_log_call(0, 1, 1.0 / 6.0, 10.0) + decision_log_call(0, 2, 1.0 / 6.0, 11.0),
       "is logged twice"},
      {"two policy lines",
       decision_log_header("policy=random\npolicy=auto\nseed=7\n") + decision_log_context() +
           decision_log_call(0, 1, 1.0 / 6.0, 10.0),
       "header key 'policy' appears twice"},
      {"random over epsilon-greedy records",
       decision_log_header("policy=random\nseed=7\n") + decision_log_context() +
           decision_log_call(0, 1, 0.3 / 6.0 + 0.7, 10.0),
       "is none that the header's policy 'random' gives"},
  };
  std::vector<std::pair<std::string, std::string>> files;  // path, needle
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string path = dir + "/log" + std::to_string(i);
    write_file(path, cases[i].log);
    files.emplace_back(path, cases[i].needle);
  }
  const std::string fifo = dir + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  files.emplace_back(fifo, "is not a regular file");
  const std::string huge = dir + "/huge";
  write_file(huge, decision_log_header("policy=random\nseed=7\n"));
  ASSERT_EQ(::truncate(huge.c_str(), off_t(4) << 30), 0);  // 4 GiB of zeros, sparse
  files.emplace_back(huge, "unknown record (kind 0, 0 bytes)");
  const std::string good = dir + "/good";
  write_file(good, thompson_log(12, fine, normal));
  const auto bin = "timeout 20 '" + ncclbot_binary() + "' ";
  for (const auto& [path, needle] : files) {
    for (const std::string& args : {"ope --log '" + path + "' --policy auto",
                                    "telemetry '" + path + "' --out '" + dir + "/t' --no-figures"}) {
      const CliResult r = run_cli_with("sh", "-c \"" + bin + args + "\"");
      EXPECT_EQ(r.exit_code, 2) << args << ": " << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << ": " << r.err;
      EXPECT_NE(r.err.find(path), std::string::npos) << args << ": " << r.err;
      EXPECT_NE(r.err.find(needle), std::string::npos) << args << ": " << r.err;
    }
  }
  // One log given twice counts every call twice: refused.
  const CliResult twice = run_cli("ope --log '" + good + "' --log '" + good + "' --policy auto");
  EXPECT_EQ(twice.exit_code, 2) << twice.err;
  EXPECT_NE(twice.err.find("is the same file as"), std::string::npos) << twice.err;
  // The good log itself passes both.
  EXPECT_EQ(run_cli("ope --log '" + good + "' --policy auto").exit_code, 0);
  EXPECT_EQ(run_cli("telemetry '" + good + "' --out '" + dir + "/g' --no-figures").exit_code, 0);
}

// A log where NCCL's pick (slot 4) was never played has no estimate of the saving: telemetry says
// so, exit 0, and its JSON holds no null (what a NaN would be written as).
TEST(HostileLogs, TelemetryWithoutAnyEstimateWritesNoNull) {
  const std::string dir = temp_dir();
  std::string bytes = decision_log_header("policy=random\nseed=7\n") + decision_log_context();
  for (int i = 0; i < 12; ++i) bytes += decision_log_call(uint64_t(i), i % 4, 1.0 / 6.0, 10.0 + i);
  write_file(dir + "/log", bytes);
  const CliResult r = run_cli("telemetry '" + dir + "/log' --out '" + dir + "/t' --no-figures");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("unknown (NCCL's pick was played in no context)"), std::string::npos) << r.out;
  const std::string json = read_all(dir + "/t/telemetry.json");
  EXPECT_EQ(json.find("null"), std::string::npos) << json;
  EXPECT_EQ(json.find("saved_us"), std::string::npos);
  EXPECT_NE(read_all(dir + "/t/report.md").find("no estimate (NCCL's pick was played in no context"),
            std::string::npos);
}
