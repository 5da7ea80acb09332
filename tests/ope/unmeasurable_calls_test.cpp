// A call whose latency is no measurement (outside 0.001 to 10^9 us, NaN) is skipped and counted by
// every reader of decision logs (the reader of src/log, `ope`, `telemetry`), which read the log's
// other calls; a log with nothing else is still refused. The logs are written with the format's own
// encoder (support/decision_log_bytes.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "ncclbot/core/error.hpp"
#include "ncclbot/log/decision_log.hpp"
#include "support/decision_log_bytes.hpp"
#include "support/run_cli.hpp"

namespace {

// A Thompson-sampling log of 12 calls, four of them (3, 5, 7, 9) timed at 1e308, the smallest
// denormal, 2e9 us (2000 s) and NaN; the other eight at 10 + i us.
std::string log_with_four_unmeasurable() {
  std::string bytes = ncclbot::test::decision_log_header("policy=thompson:n0=1\nseed=7\n") +
                      ncclbot::test::decision_log_context();
  for (int i = 0; i < 12; ++i) {
    const double us = i == 3 ? 1e308 : i == 5 ? 4.9e-324 : i == 7 ? 2e9 : i == 9 ? NAN : 10.0 + i;
    bytes += ncclbot::test::decision_log_call(uint64_t(i), i % 6, 0.5, us);
  }
  return bytes;
}

}  // namespace

TEST(UnmeasurableCalls, TheLogReaderSkipsAndCountsThem) {
  const std::string path = ncclbot::test::temp_dir() + "/four.log";
  ncclbot::test::write_file(path, log_with_four_unmeasurable());
  const ncclbot::DecisionLogData d = ncclbot::read_decision_logs({path});
  ASSERT_EQ(d.calls.size(), 8u);
  EXPECT_EQ(d.files.at(0).calls, 8u);
  EXPECT_EQ(d.files.at(0).skipped_latencies, 4u);
  for (const auto& c : d.calls) EXPECT_EQ(c.latency_us, 10.0 + double(c.call_index));
}

TEST(UnmeasurableCalls, OpeAndTelemetryReadTheOtherCallsAndSayHowManyTheySkipped) {
  const std::string dir = ncclbot::test::temp_dir();
  const std::string path = dir + "/four.log";
  ncclbot::test::write_file(path, log_with_four_unmeasurable());
  const ncclbot::test::CliResult ope =
      ncclbot::test::run_cli("ope --log '" + path + "' --policy auto --json");
  ASSERT_EQ(ope.exit_code, 0) << ope.err;
  const auto j = nlohmann::json::parse(ope.out);
  EXPECT_EQ(j["calls"], 8);
  EXPECT_EQ(j["skipped_latencies"], 4);
  EXPECT_EQ(j["files"][0]["skipped_latencies"], 4);
  EXPECT_NE(ope.err.find("4 calls with a latency outside [0.001, 1e+09] us skipped"), std::string::npos)
      << ope.err;

  const ncclbot::test::CliResult tel =
      ncclbot::test::run_cli("telemetry '" + path + "' --out '" + dir + "/t' --no-figures");
  ASSERT_EQ(tel.exit_code, 0) << tel.err;
  EXPECT_NE(tel.out.find("4 calls with a latency outside [0.001, 1e+09] us skipped"), std::string::npos)
      << tel.out;
  const auto t = nlohmann::json::parse(ncclbot::test::read_all(dir + "/t/telemetry.json"));
  EXPECT_EQ(t["calls"], 8);
  EXPECT_EQ(t["skipped_latencies"], 4);
}

TEST(UnmeasurableCalls, ALogOfNothingElseIsStillRefused) {
  const std::string dir = ncclbot::test::temp_dir();
  std::string bytes = ncclbot::test::decision_log_header("policy=thompson:n0=1\nseed=7\n") +
                      ncclbot::test::decision_log_context();
  for (int i = 0; i < 12; ++i) bytes += ncclbot::test::decision_log_call(uint64_t(i), i % 6, 0.5, 1e-300);
  const std::string path = dir + "/none.log";
  ncclbot::test::write_file(path, bytes);
  for (const std::string& args : {"ope --log '" + path + "' --policy auto",
                                  "telemetry '" + path + "' --out '" + dir + "/t' --no-figures"}) {
    const ncclbot::test::CliResult r = ncclbot::test::run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.err;
    EXPECT_NE(r.err.find(path + ": the logs hold no measured call (12 calls with a latency outside"),
              std::string::npos)
        << args << ": " << r.err;
  }
}
