// Knob call records (decision log version 4, kind 3; log/decision_log_format.hpp): read with the arm
// that ran, counted apart, refused where no plugin writes them (a version-3 log, a header without
// the knob lists, more channels than NCCL runs), and in blocks a knob arm off NCCL's own knobs is a
// departure of its own (kOffNcclKnobs), never NCCL's pick, while a knob call at NCCL's knobs counts
// at its slot.
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

// A knob call of the shared context: NCCL's pick's slot 4 at `channels` and `chunk` (0: NCCL's own).
std::string knob_call(uint64_t index, uint16_t channels, uint32_t chunk, double latency_us,
                      uint32_t version = dl::kDecisionLogVersion) {
  dl::CallRecord r = decision_log_call_record(index, 4, 1.0, latency_us);
  r.knobs = true;
  r.channels = channels;
  r.chunk_bytes = chunk;
  return encoded(r, version);
}

const char* const kKnobHeader = "policy=ucb1\nseed=5\nknobs=channels=0,4,8;chunk=0,64K\n";

// Header, the context, then calls at (0, 0), (4, 0) and (8, 64 KiB), as a log of `version` (4 or
// later) holds them (the header's version field is the caller's).
std::string knob_log(const std::string& header = kKnobHeader, uint32_t version = dl::kDecisionLogVersion) {
  return decision_log_header(header) + decision_log_context() + knob_call(0, 0, 0, 20.0, version) +
         knob_call(1, 4, 0, 15.0, version) + knob_call(2, 8, 65536, 12.0, version);
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
  EXPECT_EQ(data.calls[2].chunk_bytes, 65536u);
  EXPECT_EQ(data.calls[2].latency_us, 12.0);
  EXPECT_EQ(data.calls[2].user_tag, 0u);
}

TEST(KnobCalls, AreReadWithTheArmThatRan) {
  const ncclbot::DecisionLogData data = ncclbot::read_decision_logs({write_log("knobs.log", knob_log())});
  ASSERT_EQ(data.calls.size(), 3u);
  EXPECT_EQ(data.files[0].version, dl::kDecisionLogVersion);
  EXPECT_EQ(data.files[0].knob_calls, 3u);
  EXPECT_EQ(data.files[0].header.at("knobs"), "channels=0,4,8;chunk=0,64K");
  EXPECT_TRUE(data.calls[2].knobs);
  EXPECT_EQ(data.calls[2].channels, 8);
  EXPECT_EQ(data.calls[2].chunk_bytes, 65536u);
  EXPECT_EQ(data.calls[2].latency_us, 12.0);
  EXPECT_EQ(data.calls[1].channels, 4);
  EXPECT_EQ(data.calls[1].chunk_bytes, 0u);
}

TEST(KnobCalls, InBlocksAnArmOffNcclsKnobsIsADepartureOfItsOwn) {
  const ncclbot::LogBlocks b = ncclbot::read_log_blocks({write_log("blocks.log", knob_log())}, {});
  ASSERT_EQ(b.blocks.size(), 1u);
  EXPECT_EQ(b.knob_calls, 3u);
  EXPECT_EQ(b.blocks[0].total(4).calls, 1.0);  // (0, 0): NCCL's pick as NCCL runs it
  EXPECT_EQ(b.blocks[0].total(4).r, 20.0);
  EXPECT_EQ(b.blocks[0].total(ncclbot::kOffNcclKnobs).calls, 2.0);
  EXPECT_EQ(b.blocks[0].total(ncclbot::kOffNcclKnobs).r, 27.0);
  EXPECT_FALSE(b.blocks[0].played.has(ncclbot::kNumArms - 1));
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

// `ope` refuses a knob log (its targets decide over the slots) with exit 2 naming the file; telemetry
// reads it, counting the knob calls and the two off NCCL's knobs as departures.
TEST(KnobCalls, OpeRefusesAKnobLogAndTelemetryReadsIt) {
  const std::string path = write_log("cli.log", knob_log()), out = temp_dir() + "/knob_telemetry";
  const CliResult ope = run_cli("ope --log '" + path + "' --policy auto");
  EXPECT_EQ(ope.exit_code, 2);
  EXPECT_NE(ope.err.find(path + ": 3 calls decided over knob arms (a knob-mode log)"), std::string::npos)
      << ope.err;
  const CliResult tel = run_cli("telemetry '" + path + "' --out '" + out + "' --no-figures");
  ASSERT_EQ(tel.exit_code, 0) << tel.err;
  const nlohmann::json j = nlohmann::json::parse(read_all(out + "/telemetry.json"));
  EXPECT_EQ(j["knob_calls"], 3);
  EXPECT_EQ(j["total"]["departures"], 2);
  EXPECT_EQ(j["total"]["calls"], 3);
}
