// Reading decision logs strictly (log/decision_log.hpp): the records the format's encoder writes
// come back field for field; a killed job's partial last record is dropped and counted; a
// truncated header, another version, a damaged record and logs of two policies are errors.
#include "ncclbot/log/decision_log.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "ncclbot/core/error.hpp"
#include "support/run_cli.hpp"

using namespace ncclbot;
using namespace ncclbot::test;

namespace {

std::string log_bytes(const std::string& policy, int calls) {
  unsigned char header[decision_log::kMaxHeaderBytes];
  const std::string text = "policy=" + policy + "\nseed=7\n";
  const uint32_t n = decision_log::encode_header(text.data(), text.size(), header);
  std::string out(reinterpret_cast<char*>(header), n);
  decision_log::ContextRecord c;
  c.comm_hash = 0xabc;
  c.bytes = 4096;
  c.nodes = 2;
  c.ranks = 16;
  c.collective = 4;
  c.nccl_slot = 4;
  for (int s = 0; s < kNumNcclArms; ++s) c.cost_us[s] = s < 6 ? 10.0f + float(s) : -1.0f;
  unsigned char cr[decision_log::kContextRecordBytes];
  decision_log::encode(c, cr);
  out.append(reinterpret_cast<char*>(cr), sizeof cr);
  for (int i = 0; i < calls; ++i) {
    decision_log::CallRecord r;
    r.comm_hash = 0xabc;
    r.call_index = uint64_t(i);
    r.bytes = 4096;
    r.latency_us = 12.5 + i;
    r.propensity = i == 1 ? NAN : 0.25;
    r.nodes = 2;
    r.ranks = 16;
    r.collective = 4;
    r.slot = i % 6;
    r.nccl_slot = 4;
    unsigned char rec[decision_log::kCallRecordBytes];
    decision_log::encode(r, rec);
    out.append(reinterpret_cast<char*>(rec), sizeof rec);
  }
  return out;
}

std::string write_log(const std::string& bytes) {
  static int n = 0;
  const std::string path = temp_dir() + "/log" + std::to_string(n++) + ".bin";
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

std::string error_of(const std::vector<std::string>& paths) {
  try {
    read_decision_logs(paths);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(DecisionLogReader, RecordsComeBackFieldForField) {
  const DecisionLogData d = read_decision_logs({write_log(log_bytes("egreedy:eps=0.3", 3))});
  ASSERT_EQ(d.calls.size(), 3u);
  ASSERT_EQ(d.contexts.size(), 1u);
  EXPECT_EQ(d.policy, "egreedy:eps=0.3");
  EXPECT_EQ(d.seed, "7");
  EXPECT_EQ(d.contexts[0].nccl_slot, 4);
  EXPECT_EQ(d.contexts[0].cost_us[5], 15.0f);
  EXPECT_EQ(d.contexts[0].cost_us[6], -1.0f);
  EXPECT_EQ(d.calls[2].call_index, 2u);
  EXPECT_EQ(d.calls[2].latency_us, 14.5);
  EXPECT_EQ(d.calls[2].slot, 2);
  EXPECT_EQ(d.calls[0].propensity, 0.25);
  EXPECT_TRUE(std::isnan(d.calls[1].propensity));
  EXPECT_EQ(d.files[0].dropped_tail_bytes, 0u);
}

TEST(DecisionLogReader, AKilledJobsPartialLastRecordIsDropped) {
  const std::string whole = log_bytes("random", 4);
  const DecisionLogData d = read_decision_logs({write_log(whole.substr(0, whole.size() - 30))});
  EXPECT_EQ(d.calls.size(), 3u);
  EXPECT_EQ(d.files[0].dropped_tail_bytes, decision_log::kCallRecordBytes - 30);
}

TEST(DecisionLogReader, DamageIsAnErrorNamingTheFile) {
  const std::string whole = log_bytes("random", 4);
  const std::string truncated = write_log(whole.substr(0, 12));
  EXPECT_NE(error_of({truncated}).find(truncated + ": not an ncclbot decision log"), std::string::npos);
  std::string v2 = whole;
  v2[8] = 2;
  EXPECT_NE(error_of({write_log(v2)}).find("decision log version 2"), std::string::npos);
  std::string flipped = whole;
  flipped[flipped.size() - 100] ^= 0x10;
  EXPECT_NE(error_of({write_log(flipped)}).find("checksum does not match"), std::string::npos);
  const std::string a = write_log(log_bytes("random", 2)), b = write_log(log_bytes("greedy:n0=4", 2));
  EXPECT_NE(error_of({a, b}).find("read logs of one behaviour policy together"), std::string::npos);
  EXPECT_NE(error_of({temp_dir() + "/none.bin"}).find("cannot open"), std::string::npos);
}

// Records a plugin never writes, with a valid checksum (a foreign or crafted file): out-of-range
// fields are errors with the byte offset, never an index out of bounds later.
TEST(DecisionLogReader, FieldsOutOfRangeAreErrors) {
  const auto with_call = [](auto edit) {
    std::string bytes = log_bytes("random", 0);
    decision_log::CallRecord r;
    r.bytes = 4096;
    r.latency_us = 10;
    r.propensity = 0.5;
    r.nodes = 2;
    r.ranks = 16;
    r.collective = 4;
    r.slot = 3;
    r.nccl_slot = 4;
    edit(r);
    unsigned char rec[decision_log::kCallRecordBytes];
    decision_log::encode(r, rec);
    return bytes + std::string(reinterpret_cast<char*>(rec), sizeof rec);
  };
  EXPECT_EQ(read_decision_logs({write_log(with_call([](auto&) {}))}).calls.size(), 1u);
  EXPECT_NE(error_of({write_log(with_call([](auto& r) { r.slot = 100; }))}).find("is no arm"),
            std::string::npos);
  EXPECT_NE(error_of({write_log(with_call([](auto& r) { r.slot = -1; }))}).find("is no arm"),
            std::string::npos);
  EXPECT_NE(error_of({write_log(with_call([](auto& r) { r.nccl_slot = 21; }))}).find("is no arm"),
            std::string::npos);
  EXPECT_NE(error_of({write_log(with_call([](auto& r) { r.collective = 200; }))}).find("no ncclFunc_t"),
            std::string::npos);
  EXPECT_NE(error_of({write_log(with_call([](auto& r) { r.nodes = 0; }))}).find("no communicator"),
            std::string::npos);
  const std::string e = error_of({write_log(with_call([](auto& r) { r.ranks = 1; }))});
  EXPECT_NE(e.find("byte "), std::string::npos) << e;
}
