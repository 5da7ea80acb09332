// Calls on which NCCL ran another arm than the plugin decided (docs/ope.md "Calls NCCL ran
// otherwise") are left out of every estimate and counted, in the logs the plugin writes now
// (version 3: flagged, naming the arm decided, with the decision's probability) and in those it
// wrote before (version 2: a NaN probability), which `ope` used to refuse whole. The logs are
// written with the format's own encoder (support/decision_log_bytes.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "ncclbot/core/error.hpp"
#include "ncclbot/log/decision_log.hpp"
#include "support/decision_log_bytes.hpp"
#include "support/run_cli.hpp"

namespace {

// A greedy log of 12 calls of slot 0 (the cheapest in the cost table) at 10 + i us; calls 2, 5 and 8
// NCCL ran as slot 1 instead (30 us).
std::string greedy_log_run_otherwise(uint32_t version) {
  namespace dl = ncclbot::decision_log;
  std::string bytes = ncclbot::test::decision_log_header("policy=greedy:n0=1\nseed=1\n");
  bytes[8] = char(version);  // the version field, little-endian u32
  bytes += ncclbot::test::decision_log_context();
  for (int i = 0; i < 12; ++i) {
    const bool other = i == 2 || i == 5 || i == 8;
    dl::CallRecord r =
        ncclbot::test::decision_log_call_record(uint64_t(i), other ? 1 : 0, 1.0, other ? 30.0 : 10.0 + i);
    unsigned char out[dl::kCallRecordBytes];
    const uint32_t size = dl::call_record_bytes(version, false);
    if (other && version >= 3) {
      r.overridden = true;
      r.decided_slot = 0;
    } else if (other) {
      r.propensity = NAN;  // what the plugin wrote for such a call before version 3
    }
    dl::encode_call(r, out, version);
    if (version < 3) {
      out[60] = 0;  // no decided slot before version 3
      dl::detail::seal(out, dl::kKindCall, size);
    }
    bytes.append(reinterpret_cast<char*>(out), size);
  }
  return bytes;
}

void expect_three_left_out(const std::string& path) {
  const ncclbot::DecisionLogData d = ncclbot::read_decision_logs({path});
  ASSERT_EQ(d.calls.size(), 9u);
  EXPECT_EQ(d.files.at(0).overridden, 3u);
  for (const auto& c : d.calls) {
    EXPECT_EQ(c.slot, 0);
    EXPECT_EQ(c.latency_us, 10.0 + double(c.call_index));
  }
  const ncclbot::test::CliResult r = ncclbot::test::run_cli("ope --log '" + path + "' --policy auto --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["calls"], 9);
  EXPECT_EQ(j["overridden_calls"], 3);
  // AUTO plays slot 0, which ran on the other 9 calls (weight 1 each): IPS is their mean, 141 / 9 us.
  const double mean = (10.0 * 9 + (0 + 1 + 3 + 4 + 6 + 7 + 9 + 10 + 11)) / 9.0;
  EXPECT_NEAR(j["policies"][0]["estimators"][0]["value_us"].get<double>(), mean, 1e-9);
}

}  // namespace

TEST(OverriddenCalls, AVersion2LogsNaNCallsAreLeftOutAndCounted) {
  const std::string path = ncclbot::test::temp_dir() + "/overridden_v2.log";
  ncclbot::test::write_file(path, greedy_log_run_otherwise(2));
  expect_three_left_out(path);
}

TEST(OverriddenCalls, AVersion3LogsFlaggedCallsAreLeftOutAndCounted) {
  const std::string path = ncclbot::test::temp_dir() + "/overridden_v3.log";
  ncclbot::test::write_file(path, greedy_log_run_otherwise(3));
  expect_three_left_out(path);
}

// A flagged call that names the arm that ran as the one decided, or a flag in a version-2 log, is
// no record the plugin writes: refused with the byte.
TEST(OverriddenCalls, AFlaggedCallNoPluginWritesIsRefused) {
  namespace dl = ncclbot::decision_log;
  std::string bytes = ncclbot::test::decision_log_header("policy=greedy:n0=1\nseed=1\n") +
                      ncclbot::test::decision_log_context();
  dl::CallRecord r = ncclbot::test::decision_log_call_record(0, 4, 1.0, 10.0);
  r.overridden = true;
  r.decided_slot = 4;
  const std::string path = ncclbot::test::temp_dir() + "/overridden_bad.log";
  ncclbot::test::write_file(path, bytes + ncclbot::test::encoded(r));
  EXPECT_THROW(ncclbot::read_decision_logs({path}), ncclbot::InputError);
  r.decided_slot = 1;
  bytes[8] = 2;
  ncclbot::test::write_file(path, bytes + ncclbot::test::encoded(r, 4));  // version 2's 72 bytes
  EXPECT_THROW(ncclbot::read_decision_logs({path}), ncclbot::InputError);
}

// Version 5: a call NCCL ran with one of its symmetric kernels (no arm: slot -1, the arm decided in
// byte 60) is left out and counted with the overridden ones, and each call keeps its user tag. The
// flag in a version-4 log, or beside an arm, is no record the plugin writes.
TEST(OverriddenCalls, ASymmetricKernelCallIsLeftOutAndCountedAndTagsAreRead) {
  namespace dl = ncclbot::decision_log;
  const std::string head = ncclbot::test::decision_log_header("policy=greedy:n0=1\nseed=1\n") +
                           ncclbot::test::decision_log_context();
  dl::CallRecord sym = ncclbot::test::decision_log_call_record(1, -1, 1.0, 7.0);
  sym.symmetric = true;
  sym.decided_slot = 4;
  sym.user_tag = 42;
  dl::CallRecord tagged = ncclbot::test::decision_log_call_record(2, 4, 1.0, 11.0);
  tagged.user_tag = 0xfeedfacecafebeefull;
  const std::string path = ncclbot::test::temp_dir() + "/symmetric.log";
  ncclbot::test::write_file(path, head + ncclbot::test::decision_log_call(0, 4, 1.0, 10.0) +
                                      ncclbot::test::encoded(sym) + ncclbot::test::encoded(tagged));
  const ncclbot::DecisionLogData d = ncclbot::read_decision_logs({path});
  ASSERT_EQ(d.calls.size(), 2u);
  EXPECT_EQ(d.files[0].overridden, 1u);
  EXPECT_EQ(d.files[0].symmetric, 1u);
  EXPECT_EQ(d.calls[0].user_tag, 0u);
  EXPECT_EQ(d.calls[1].user_tag, 0xfeedfacecafebeefull);
  EXPECT_EQ(d.calls[1].latency_us, 11.0);

  std::string v4 = head + ncclbot::test::encoded(sym, 4);
  v4[8] = 4;
  ncclbot::test::write_file(path, v4);
  try {
    ncclbot::read_decision_logs({path});
    ADD_FAILURE() << "a version-4 log with a symmetric call was read";
  } catch (const ncclbot::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("a flag of version 5 in a version-4 log"), std::string::npos)
        << e.what();
  }
  sym.slot = 3;
  ncclbot::test::write_file(path, head + ncclbot::test::encoded(sym));
  try {
    ncclbot::read_decision_logs({path});
    ADD_FAILURE() << "a symmetric call naming an arm was read";
  } catch (const ncclbot::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("the arm that ran, 3, is no arm a symmetric-kernel call names"),
              std::string::npos)
        << e.what();
  }
}
