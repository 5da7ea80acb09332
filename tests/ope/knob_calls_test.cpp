// Knob call records (decision log version 4, kind 3; log/decision_log_format.hpp): read with the arm
// that ran, counted apart, refused where no plugin writes them (a version-3 log, a header without
// the knob lists, more channels than NCCL runs), and in blocks counted by their knob arm among the
// header's lists crossed with NCCL's 21 algorithm x protocol pairs (ope/logged_arms.hpp).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "ncclbot/core/error.hpp"
#include "ncclbot/log/decision_log.hpp"
#include "ncclbot/ope/log_blocks.hpp"
#include "support/decision_log_bytes.hpp"
#include "support/run_cli.hpp"

namespace dl = ncclbot::decision_log;
using namespace ncclbot::test;

namespace {

// A knob call of the shared context: NCCL's pick's slot 4 (or `slot`) at `channels` and `chunk` (0:
// NCCL's own).
std::string knob_call(uint64_t index, uint16_t channels, uint32_t chunk, double latency_us,
                      uint32_t version = dl::kDecisionLogVersion, int slot = 4) {
  dl::CallRecord r = decision_log_call_record(index, slot, 1.0, latency_us);
  r.knobs = true;
  r.channels = channels;
  r.chunk_bytes = chunk;
  return encoded(r, version);
}

// 60 KiB = 61440 B is a multiple of every protocol's grain (LL 16, LL128 1920, Simple 512 B).
const char* const kKnobHeader = "policy=ucb1\nseed=5\nknobs=channels=0,4,8;chunk=0,60K\n";

// Header, the context, then calls at (0, 0), (4, 0) and (8, 60 KiB), as a log of `version` (4 or
// later) holds them (the header's version field is the caller's).
std::string knob_log(const std::string& header = kKnobHeader, uint32_t version = dl::kDecisionLogVersion) {
  return decision_log_header(header) + decision_log_context() + knob_call(0, 0, 0, 20.0, version) +
         knob_call(1, 4, 0, 15.0, version) + knob_call(2, 8, 61440, 12.0, version);
}

std::string write_log(const std::string& name, const std::string& bytes) {
  const std::string path = temp_dir() + "/" + name;
  write_file(path, bytes);
  return path;
}

}  // namespace

// A version-4 log (88-byte knob records, no user tag) is still read, to the same calls.
TEST(KnobCalls, AVersion4LogIsStillRead) {
  std::string v4 = knob_log(kKnobHeader, 4);
  v4[8] = 4;
  const ncclbot::DecisionLogData data = ncclbot::read_decision_logs({write_log("v4.log", v4)});
  ASSERT_EQ(data.calls.size(), 3u);
  EXPECT_EQ(data.files[0].version, 4u);
  EXPECT_EQ(data.calls[2].channels, 8);
  EXPECT_EQ(data.calls[2].chunk_bytes, 61440u);
  EXPECT_EQ(data.calls[2].latency_us, 12.0);
  EXPECT_EQ(data.calls[2].user_tag, 0u);
}

TEST(KnobCalls, AreReadWithTheArmThatRan) {
  const ncclbot::DecisionLogData data = ncclbot::read_decision_logs({write_log("knobs.log", knob_log())});
  ASSERT_EQ(data.calls.size(), 3u);
  EXPECT_EQ(data.files[0].version, dl::kDecisionLogVersion);
  EXPECT_EQ(data.files[0].knob_calls, 3u);
  EXPECT_EQ(data.files[0].header.at("knobs"), "channels=0,4,8;chunk=0,60K");
  EXPECT_TRUE(data.calls[2].knobs);
  EXPECT_EQ(data.calls[2].channels, 8);
  EXPECT_EQ(data.calls[2].chunk_bytes, 61440u);
  EXPECT_EQ(data.calls[2].latency_us, 12.0);
  EXPECT_EQ(data.calls[1].channels, 4);
  EXPECT_EQ(data.calls[1].chunk_bytes, 0u);
}

// The header's lists cross NCCL's 21 pairs into 102 arms, by hand: channels {0, 4, 8} x chunks
// {0, 60K} on each of the 15 pairs outside CollNet (6 each) and NCCL's channels x {0, 60K} on the 6
// CollNet pairs (2 each): 90 + 12. Each call counts at its own arm.
TEST(KnobCalls, InBlocksEachKnobArmCountsApart) {
  const ncclbot::LogBlocks b = ncclbot::read_log_blocks({write_log("blocks.log", knob_log())}, {});
  ASSERT_EQ(b.blocks.size(), 1u);
  EXPECT_EQ(b.knob_calls, 3u);
  EXPECT_TRUE(b.arms.knob_log());
  EXPECT_EQ(b.arms.size(), 102u);
  using ncclbot::Algo, ncclbot::Proto;
  const int nccl = b.arms.index({Algo::kRing, Proto::kLL128, 0, 0});  // slot 4 as NCCL runs it
  const int four = b.arms.index({Algo::kRing, Proto::kLL128, 4, 0});
  const int eight = b.arms.index({Algo::kRing, Proto::kLL128, 8, 61440});
  ASSERT_TRUE(nccl >= 0 && four > nccl && eight > four) << nccl << " " << four << " " << eight;
  EXPECT_EQ(b.blocks[0].total(nccl).r, 20.0);
  EXPECT_EQ(b.blocks[0].total(four).r, 15.0);
  EXPECT_EQ(b.blocks[0].total(eight).r, 12.0);
  int played = 0;
  for (size_t i = 0; i < b.arms.size(); ++i) played += b.blocks[0].played(int(i));
  EXPECT_EQ(played, 3);
}

// A knob call whose arm the header's lists do not give (16 channels), or whose slot the context's cost
// table leaves out (slot 7), is refused naming the file and the call's byte.
TEST(KnobCalls, AnArmOffTheListsOrTheCostTableIsRefused) {
  dl::CallRecord unusable = decision_log_call_record(1, 7, 1.0, 9.0);
  unusable.knobs = true;
  const std::pair<std::string, std::string> cases[] = {
      {decision_log_header(kKnobHeader) + decision_log_context() + knob_call(0, 16, 0, 9.0),
       "an arm the header's knob lists (channels=0,4,8;chunk=0,60K) do not give"},
      {decision_log_header(kKnobHeader) + decision_log_context() + encoded(unusable),
       "an arm NCCL could not run"}};
  for (const auto& [bytes, why] : cases) {
    const std::string path = write_log("off_lists.log", bytes);
    try {
      ncclbot::read_log_blocks({path}, {});
      ADD_FAILURE() << "read: " << why;
    } catch (const ncclbot::InputError& e) {
      EXPECT_NE(std::string(e.what()).find(path + ": byte "), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  }
}

// Logs of one reading count their calls by one list of arms: a slot log beside a knob log, or knob logs
// with other lists, are refused naming the later file.
TEST(KnobCalls, LogsOverOtherArmsAreNotReadTogether) {
  const std::string knobs = write_log("first.log", knob_log());
  const std::string slots =
      write_log("slots.log", decision_log_header("policy=ucb1\nseed=5\n") + decision_log_context() +
                                 decision_log_call(5, 4, 1.0, 9.0));
  try {
    ncclbot::read_log_blocks({knobs, slots}, {});
    ADD_FAILURE() << "read a slot log beside a knob log";
  } catch (const ncclbot::InputError& e) {
    EXPECT_NE(
        std::string(e.what()).find(slots + ": has no knobs line (a slot log) where the first log has knobs "
                                           "line 'channels=0,4,8;chunk=0,60K'"),
        std::string::npos)
        << e.what();
  }
}

TEST(KnobCalls, AreRefusedWhereNoPluginWritesThem) {
  // Version 4's records in a version-3 log: bytes 8..11 of the header hold the version.
  std::string v3 = knob_log(kKnobHeader, 4);
  v3[8] = 3;
  const std::string wide =
      decision_log_header(kKnobHeader) + decision_log_context() + knob_call(0, 65, 0, 9.0);
  const std::pair<std::string, std::string> cases[] = {
      {v3, "a knob call record in a version-3 log"},
      {knob_log("policy=ucb1\nseed=5\n"), "a knob call record under a header without a `knobs` line"},
      {wide, "channels 65 is more than NCCL runs (64)"}};
  for (const auto& [bytes, why] : cases) {
    try {
      ncclbot::read_decision_logs({write_log("refused.log", bytes)});
      ADD_FAILURE() << "read: " << why;
    } catch (const ncclbot::InputError& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  }
}

// `ope` reads a knob log. Every call was played with probability 1; call 0 ran Tree/LL at NCCL's knobs
// (20 us), which `auto` plays (the cheapest of the cost table, 10 us). By hand: IPS = 20 / 3 calls,
// SNIPS = 20 / 1, and DR = 20 (the reward model of that arm is its logged mean, 20, and call 0's
// residual is 0). Telemetry reads the shared log, its two calls off NCCL's knobs the departures.
TEST(KnobCalls, OpeAndTelemetryReadAKnobLog) {
  const std::string path = write_log("cli.log", knob_log()), out = temp_dir() + "/knob_telemetry";
  const std::string tree = write_log("tree.log", decision_log_header(kKnobHeader) + decision_log_context() +
                                                     knob_call(0, 0, 0, 20.0, dl::kDecisionLogVersion, 0) +
                                                     knob_call(1, 4, 0, 15.0) + knob_call(2, 8, 61440, 12.0));
  const CliResult ope = run_cli("ope --log '" + tree + "' --policy auto --json");
  ASSERT_EQ(ope.exit_code, 0) << ope.err;
  const nlohmann::json o = nlohmann::json::parse(ope.out);
  EXPECT_EQ(o["knobs"], "channels=0,4,8;chunk=0,60K");
  EXPECT_EQ(o["arms"], 102);
  EXPECT_EQ(o["knob_calls"], 3);
  const nlohmann::json& e = o["policies"][0]["estimators"];
  EXPECT_EQ(e[0]["name"], "IPS");
  EXPECT_NEAR(e[0]["value_us"].get<double>(), 20.0 / 3.0, 1e-12);
  EXPECT_NEAR(e[1]["value_us"].get<double>(), 20.0, 1e-12);
  EXPECT_NEAR(e[2]["value_us"].get<double>(), 20.0, 1e-12);
  const CliResult tel = run_cli("telemetry '" + path + "' --out '" + out + "' --no-figures");
  ASSERT_EQ(tel.exit_code, 0) << tel.err;
  const nlohmann::json j = nlohmann::json::parse(read_all(out + "/telemetry.json"));
  EXPECT_EQ(j["knob_calls"], 3);
  EXPECT_EQ(j["total"]["departures"], 2);
  EXPECT_EQ(j["total"]["calls"], 3);
}
