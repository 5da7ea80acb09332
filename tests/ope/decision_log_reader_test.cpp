// Reading decision logs strictly (log/decision_log.hpp): the records the format's encoder writes
// come back field for field; a killed job's partial last record is dropped and counted; a
// truncated header, another version, a damaged record and logs of two policies are errors, and so
// are a FIFO, one file given twice, a call logged twice and a header whose policy is no spec or
// disagrees with the records; a huge damaged file is refused at its first record, in bounded memory.
#include "ncclbot/log/decision_log.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <future>

#include "ncclbot/core/error.hpp"
#include "support/decision_log_bytes.hpp"
#include "support/run_cli.hpp"

using namespace ncclbot;
using namespace ncclbot::test;

namespace {

// A log of `policy` with `calls` calls of the one context (support/decision_log_bytes.hpp), each
// with a probability the policy can give: 1 when deterministic, 1/6 for random (six usable arms),
// 0.3/6 or 0.3/6 + 0.7 for egreedy:eps=0.3; Thompson sampling's are 0.25, and NaN on call 1 (a
// policy that cannot say: the reader keeps it, `ope` refuses it).
std::string log_bytes(const std::string& policy, int calls) {
  std::string out = decision_log_header("policy=" + policy + "\nseed=7\n") + decision_log_context();
  for (int i = 0; i < calls; ++i) {
    const double p = policy == "random"                 ? 1.0 / 6.0
                     : policy.rfind("egreedy", 0) == 0  ? (i % 2 ? 0.3 / 6.0 : 0.3 / 6.0 + (1.0 - 0.3))
                     : policy.rfind("thompson", 0) == 0 ? (i == 1 ? NAN : 0.25)
                                                        : 1.0;
    out += decision_log_call(uint64_t(i), i % 6, p, 12.5 + i);
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
  const DecisionLogData d = read_decision_logs({write_log(log_bytes("thompson:n0=1", 3))});
  ASSERT_EQ(d.calls.size(), 3u);
  ASSERT_EQ(d.contexts.size(), 1u);
  EXPECT_EQ(d.policy, "thompson:n0=1");
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

namespace {

// Bytes laid out by hand from the layout documented in log/decision_log_format.hpp, little-endian,
// with FNV-1a 64 (offset basis 0xcbf29ce484222325, prime 0x100000001b3) written out here: the
// format's own encoder and decoder could agree on a wrong offset, this cannot.
void put_le(std::string& out, size_t at, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out[at + size_t(i)] = char((v >> (8 * i)) & 0xff);
}
void put_f64(std::string& out, size_t at, double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, 8);
  put_le(out, at, bits, 8);
}
void put_f32(std::string& out, size_t at, float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  put_le(out, at, bits, 4);
}
// Kind and size first, the checksum of every byte before it last.
std::string sealed_record(std::string r, uint32_t kind) {
  put_le(r, 0, kind, 4);
  put_le(r, 4, r.size(), 4);
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i + 8 < r.size(); ++i) h = (h ^ uint8_t(r[i])) * 0x100000001b3ull;
  put_le(r, r.size() - 8, h, 8);
  return r;
}

// Kind 2, 136 bytes: hash, bytes, nodes, ranks, collective, NCCL's pick, 6 zero bytes, 21 costs.
std::string hand_context_record() {
  std::string r(136, '\0');
  put_le(r, 8, 0x1122334455667788ull, 8);
  put_le(r, 16, 1u << 20, 8);
  put_le(r, 24, 3, 4);
  put_le(r, 28, 24, 4);
  r[32] = 2;  // ncclFuncAllGather
  r[33] = 5;
  for (int s = 0; s < 21; ++s) put_f32(r, 40 + 4 * size_t(s), s < 6 ? 100.0f + float(s) : -1.0f);
  return sealed_record(r, 2);
}

// Kind 1, 72 bytes (80 from version 5): hash, call index, bytes, latency, propensity, nodes, ranks,
// collective, slot, NCCL's pick, flags, 4 zero bytes (version 5: then the u64 user tag).
std::string hand_call_record(uint64_t index, int slot, double latency_us, uint32_t version = 2,
                             uint64_t user_tag = 0) {
  std::string r(version >= 5 ? 80 : 72, '\0');
  if (version >= 5) put_le(r, 64, user_tag, 8);
  put_le(r, 8, 0x1122334455667788ull, 8);
  put_le(r, 16, index, 8);
  put_le(r, 24, 1u << 20, 8);
  put_f64(r, 32, latency_us);
  put_f64(r, 40, 1.0 / 6.0);
  put_le(r, 48, 3, 4);
  put_le(r, 52, 24, 4);
  r[56] = 2;
  r[57] = char(slot);
  r[58] = 5;
  return sealed_record(r, 1);
}

// "NCBTLOG\n", `version`, 40 header bytes (16 + 21 of text, NUL-padded).
std::string hand_header(uint32_t version) {
  const std::string text = "policy=random\nseed=9\n";
  std::string header(40, '\0');
  header.replace(0, 8, "NCBTLOG\n");
  put_le(header, 8, version, 4);
  put_le(header, 12, 40, 4);
  header.replace(16, text.size(), text);
  return header;
}

}  // namespace

// "NCBTLOG\n", version 2, 40 header bytes (16 + 21 of text, NUL-padded), then a context and two calls.
TEST(DecisionLogReader, ALogLaidOutByHandFromTheDocumentedLayoutReadsBack) {
  const std::string header = hand_header(2);
  const DecisionLogData d = read_decision_logs({write_log(
      header + hand_context_record() + hand_call_record(0, 3, 210.5) + hand_call_record(1, 5, 105.25))});
  EXPECT_EQ(d.policy, "random");
  EXPECT_EQ(d.seed, "9");
  ASSERT_EQ(d.contexts.size(), 1u);
  const decision_log::ContextRecord& c = d.contexts[0];
  EXPECT_EQ(c.comm_hash, 0x1122334455667788ull);
  EXPECT_EQ(c.bytes, 1u << 20);
  EXPECT_EQ(c.nodes, 3u);
  EXPECT_EQ(c.ranks, 24u);
  EXPECT_EQ(c.collective, 2);
  EXPECT_EQ(c.nccl_slot, 5);
  for (int s = 0; s < 21; ++s) EXPECT_EQ(c.cost_us[s], s < 6 ? 100.0f + float(s) : -1.0f) << s;
  ASSERT_EQ(d.calls.size(), 2u);
  const decision_log::CallRecord& k = d.calls[1];
  EXPECT_EQ(k.comm_hash, 0x1122334455667788ull);
  EXPECT_EQ(k.call_index, 1u);
  EXPECT_EQ(k.bytes, 1u << 20);
  EXPECT_EQ(k.latency_us, 105.25);
  EXPECT_EQ(k.propensity, 1.0 / 6.0);
  EXPECT_EQ(k.nodes, 3u);
  EXPECT_EQ(k.ranks, 24u);
  EXPECT_EQ(k.collective, 2);
  EXPECT_EQ(k.slot, 5);
  EXPECT_EQ(k.nccl_slot, 5);
  EXPECT_FALSE(k.graph_replay);
  EXPECT_EQ(d.calls[0].slot, 3);
  EXPECT_EQ(d.calls[0].latency_us, 210.5);
  EXPECT_EQ(d.call_offsets[1], 40u + 136u + 72u);
}

// Version 5 by hand: each call record 80 bytes, its user tag at byte 64.
TEST(DecisionLogReader, AVersion5LogLaidOutByHandReadsItsUserTags) {
  const std::string header = hand_header(5);
  const DecisionLogData d =
      read_decision_logs({write_log(header + hand_context_record() + hand_call_record(0, 3, 210.5, 5, 7) +
                                    hand_call_record(1, 5, 105.25, 5, 0x0102030405060708ull))});
  ASSERT_EQ(d.calls.size(), 2u);
  EXPECT_EQ(d.calls[0].user_tag, 7u);
  EXPECT_EQ(d.calls[1].user_tag, 0x0102030405060708ull);
  EXPECT_EQ(d.calls[1].latency_us, 105.25);
  EXPECT_EQ(d.call_offsets[1], 40u + 136u + 80u);
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
  std::string v6 = whole;
  v6[8] = 6;
  EXPECT_NE(error_of({write_log(v6)}).find("decision log version 6, this ncclbot reads versions 1 to 5"),
            std::string::npos);
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
    decision_log::CallRecord r = decision_log_call_record(0, 3, 0.5, 10.0);
    edit(r);
    return log_bytes("random", 0) + encoded(r);
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

// A FIFO (or any file that is not a regular one) is refused at once: neither the open nor a read
// waits for a writer that may never come.
TEST(DecisionLogReader, AFifoIsRefusedWithoutWaiting) {
  const std::string fifo = temp_dir() + "/log.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto error = std::async(std::launch::async, [&] { return error_of({fifo}); });
  if (error.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    const int writer = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);  // let the reader end, then fail
    error.wait();
    if (writer >= 0) ::close(writer);
    FAIL() << "reading a FIFO as a decision log blocked";
  }
  EXPECT_NE(error.get().find(fifo + ": is not a regular file"), std::string::npos);
  EXPECT_NE(error_of({temp_dir()}).find("is a folder"), std::string::npos);
}

// The reader streams: a valid header followed by 1 GiB of zeros (a sparse file, so the test writes
// nothing) ends at the first record, at the byte after the header, and the process's peak memory
// grows by far less than the file (each test runs in a process of its own).
TEST(DecisionLogReader, AHugeDamagedFileIsRefusedAtItsFirstRecordInBoundedMemory) {
  const std::string header = decision_log_header("policy=random\nseed=7\n");
  const std::string path = write_log(header);
  ASSERT_EQ(::truncate(path.c_str(), off_t(1) << 30), 0);
  rusage before{};
  ::getrusage(RUSAGE_SELF, &before);
  const std::string e = error_of({path});
  rusage after{};
  ::getrusage(RUSAGE_SELF, &after);
  EXPECT_NE(e.find("byte " + std::to_string(header.size()) + ": unknown record (kind 0, 0 bytes)"),
            std::string::npos)
      << e;
  EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 64L << 10) << "KiB of peak memory more";  // 64 MiB
  std::remove(path.c_str());
}

// One file given twice, under its own name or another (a hard link), would count every call twice.
TEST(DecisionLogReader, AFileGivenTwiceIsRefused) {
  const std::string a = write_log(log_bytes("random", 3));
  const std::string b = a + ".link";
  ASSERT_EQ(::link(a.c_str(), b.c_str()), 0);
  EXPECT_NE(error_of({a, a}).find(a + ": is the same file as '" + a + "' given before"), std::string::npos);
  EXPECT_NE(error_of({a, b}).find(b + ": is the same file as '" + a + "'"), std::string::npos);
}

// A call of a context logged twice (here every record says call 0) is refused, naming the second
// record's byte: the header (21 bytes of text: 40), the context record (136), then 80 per call.
TEST(DecisionLogReader, ACallLoggedTwiceIsRefused) {
  std::string bytes = decision_log_header("policy=random\nseed=7\n") + decision_log_context();
  for (int i = 0; i < 3; ++i) bytes += decision_log_call(0, i, 1.0 / 6.0, 12.0);
  const std::string e = error_of({write_log(bytes)});
  EXPECT_NE(e.find("byte " + std::to_string(40 + 136 + 80) +
                   ": call 0 of its context is logged twice (also at byte " + std::to_string(40 + 136)),
            std::string::npos)
      << e;
  // The same call index on two contexts (another size) is two calls.
  const std::string other = decision_log_header("policy=greedy:n0=1\nseed=7\n") + decision_log_context() +
                            decision_log_call(0, 1, 1.0, 12.0) + decision_log_call(0, 1, 1.0, 12.0, 32);
  EXPECT_EQ(error_of({write_log(other)}), "");
}

// The header's policy is a spec, given once, and the records' probabilities are ones it can give.
TEST(DecisionLogReader, TheHeadersPolicyMustBeASpecThatAgreesWithTheRecords) {
  const auto log_with = [](const std::string& header, double p) {
    return write_log(decision_log_header(header) + decision_log_context() + decision_log_call(0, 1, p, 12.0));
  };
  EXPECT_NE(error_of({log_with("policy=random\npolicy=auto\nseed=7\n", 1.0)})
                .find("header key 'policy' appears twice"),
            std::string::npos);
  EXPECT_NE(error_of({log_with("policy=frobnicate\nseed=7\n", 1.0)})
                .find("the header's policy 'frobnicate' is no policy spec"),
            std::string::npos);
  // random over an epsilon-greedy record (0.3/6 + 0.7 = 0.75): no 1/K is 0.75.
  EXPECT_NE(error_of({log_with("policy=random\nseed=7\n", 0.3 / 6.0 + 0.7)})
                .find("probability 0.75 is none that the header's policy 'random' gives"),
            std::string::npos);
  EXPECT_NE(error_of({log_with("policy=greedy:n0=4\nseed=7\n", 0.5)}).find("'greedy:n0=4' gives"),
            std::string::npos);
  EXPECT_NE(
      error_of({log_with("policy=egreedy:eps=0.3\nseed=7\n", 1.0 / 6.0)}).find("'egreedy:eps=0.3' gives"),
      std::string::npos);
  // What each can give passes: 1/K for any K in 1..21, eps/K and eps/K + 1 - eps.
  EXPECT_EQ(error_of({log_with("policy=random\nseed=7\n", 1.0 / 21.0)}), "");
  EXPECT_EQ(error_of({log_with("policy=egreedy:eps=0.3\nseed=7\n", 0.3 / 4.0)}), "");
  EXPECT_EQ(error_of({log_with("policy=egreedy:eps=0.3\nseed=7\n", 0.3 / 4.0 + (1.0 - 0.3))}), "");
  EXPECT_EQ(error_of({log_with("policy=ucb1:c=0.1,n0=4\nseed=7\n", 1.0)}), "");
  EXPECT_EQ(error_of({log_with("policy=thompson:n0=1\nseed=7\n", 0.123)}), "");
  EXPECT_EQ(error_of({log_with("policy=egreedy:eps=0.3,decay=1\nseed=7\n", 0.0123)}), "");
}
