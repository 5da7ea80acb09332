// The plugin's decision log through the runtime, as NCCL drives it: every size of a context gets
// its cost-table record before its first call record, also for a context restored from a state
// file (whose learning predates the log) and for two sizes of one size class, and each call
// record carries NCCL's pick for its own size. The records are decoded with the format header.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <future>
#include <iterator>
#include <set>
#include <string>
#include <thread>

#include "log_records.hpp"
#include "ncclbot/log/decision_log_format.hpp"
#include "plugin/plugin_runtime.hpp"

using namespace ncclbot;
using namespace ncclbot::plugin;

namespace {

// NCCL's [7][3] table: Ring/LL is cheapest for 1024 bytes, Tree/Simple for 1500.
void call(TunerComm* comm, uint64_t comm_id, size_t bytes) {
  float t[7][3];
  for (auto& row : t)
    for (float& v : row) v = -1.0f;
  t[0][2] = bytes == 1024 ? 20.0f : 5.0f;   // Tree/Simple
  t[1][0] = bytes == 1024 ? 10.0f : 30.0f;  // Ring/LL
  t[1][2] = 40.0f;                          // Ring/Simple
  int nchannels = 0;
  PluginRuntime::instance().get_coll_info(comm, 4, bytes, 1, reinterpret_cast<float**>(t), 7, 3, 0,
                                          &nchannels);
  // The arm NCCL ran: the one whose entry the plugin set to 0, else NCCL's own pick.
  int algo = bytes == 1024 ? 1 : 0, proto = bytes == 1024 ? 0 : 2;
  for (int a = 0; a < 7; ++a)
    for (int p = 0; p < 3; ++p)
      if (t[a][p] == 0.0f) algo = a, proto = p;
  PluginRuntime::instance().report(comm_id, 1, 1, 4, bytes, algo, proto, 12.5);
}

struct Read {
  std::set<uint64_t> context_sizes;  // sizes with a context record
  int calls = 0, calls_before_their_context = 0, wrong_nccl_pick = 0;
};

Read read_log(const std::string& path) {
  Read r;
  test::for_each_record(path, [&](uint32_t kind, const unsigned char* record) {
    if (kind == decision_log::kKindContext) {
      r.context_sizes.insert(decision_log::decode_context(record).bytes);
    } else {
      const auto c = decision_log::decode_call(record);
      ++r.calls;
      r.calls_before_their_context += !r.context_sizes.count(c.bytes);
      r.wrong_nccl_pick += c.nccl_slot != (c.bytes == 1024 ? 1 * 3 + 0 : 0 * 3 + 2);
    }
  });
  return r;
}

}  // namespace

TEST(DecisionLog, EverySizeOfARestoredContextGetsItsCostTableFirst) {
  // A new directory each run: the runtime keeps a log open for its path for the process's life.
  std::string dir = "/tmp/ncclbot-decision-log-unit-XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  const std::string state = dir + "/state", log2 = dir + "/b.log";
  setenv("NCCLBOT_MODE", "online", 1);
  setenv("NCCLBOT_POLICY", "egreedy:eps=0.5,decay=0,n0=1", 1);
  setenv("NCCLBOT_STATE", state.c_str(), 1);
  unsetenv("NCCLBOT_LEADER");
  // A first job learns 1024-byte all-reduces without a log and saves its state.
  TunerComm* first = PluginRuntime::instance().init_comm(71, true, 1, 1, nullptr);
  for (int i = 0; i < 20; ++i) call(first, 71, 1024);
  PluginRuntime::instance().finalize_comm(first);
  // The next job restores that context and logs; 1500 bytes shares 1024's size class.
  setenv("NCCLBOT_LOG", log2.c_str(), 1);
  TunerComm* second = PluginRuntime::instance().init_comm(72, true, 1, 1, nullptr);
  for (int i = 0; i < 30; ++i) call(second, 72, i % 3 ? 1024 : 1500);
  PluginRuntime::instance().finalize_comm(second);
  const Read r = read_log(log2);
  EXPECT_EQ(r.calls, 30);
  EXPECT_EQ(r.context_sizes, (std::set<uint64_t>{1024, 1500}));
  EXPECT_EQ(r.calls_before_their_context, 0);
  EXPECT_EQ(r.wrong_nccl_pick, 0);
  for (const char* v : {"NCCLBOT_MODE", "NCCLBOT_POLICY", "NCCLBOT_STATE", "NCCLBOT_LOG"}) unsetenv(v);
  std::remove(state.c_str());
  std::remove(log2.c_str());
  rmdir(dir.c_str());
}

namespace {

// A log whose writer is never woken by its period (one hour): only a half-full buffer or queue of
// integrals, or a flush, makes it write.
struct HourLog {
  std::string path;
  std::shared_ptr<DecisionLog> log;
  explicit HourLog(const std::string& name) {
    path = "/tmp/ncclbot-decision-log-" + name + "-" + std::to_string(getpid());
    std::remove(path.c_str());
    std::string error;
    log = DecisionLog::open({path, uint64_t(1) << 30, "policy=test\n", std::chrono::hours(1)}, 0, &error);
    EXPECT_TRUE(log) << error;
  }
  ~HourLog() {
    log.reset();
    std::remove(path.c_str());
  }
  // Whether the writer wrote something within `seconds` (it is woken at once, so this is slack for a
  // loaded machine, not a measurement).
  bool writes_within(int seconds) const {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (log->written() == 0 && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return log->written() > 0;
  }
};

decision_log::CallRecord some_call(int i) {
  decision_log::CallRecord r;
  r.call_index = uint64_t(i);
  r.latency_us = 10.0;
  r.propensity = 0.5;
  r.slot = 0;
  r.nccl_slot = 0;
  return r;
}

}  // namespace

// A burst faster than one buffer per period is written as it comes: the writer wakes as the 1 MiB
// buffer reaches half full (6,554 call records of 80 bytes: 6,553 are 524,240 bytes, just short of
// 524,288), not at its next period.
TEST(DecisionLog, TheWriterWakesAsTheBufferReachesHalfFull) {
  HourLog h("half-buffer");
  unsigned char out[decision_log::kCallRecordBytes];
  for (int i = 0; i < 6553; ++i) {
    decision_log::encode(some_call(i), out);
    h.log->append(out, sizeof out);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(h.log->written(), 0u);  // below half nothing may wake it
  decision_log::encode(some_call(6553), out);
  h.log->append(out, sizeof out);
  ASSERT_TRUE(h.writes_within(10));
  EXPECT_EQ(h.log->written(), uint64_t(6554) * sizeof out);
  EXPECT_EQ(h.log->dropped(), 0u);
}

// Thompson sampling's records wait for their integrals in a queue of 4,096; the writer wakes as it
// reaches half (2,048 records, far below half the buffer) and computes them.
TEST(DecisionLog, TheWriterWakesAsTheQueueOfIntegralsReachesHalf) {
  HourLog h("half-queue");
  ThompsonContest contest;
  contest.n = 2;
  contest.played = 0;
  contest.mean[0] = 10.0, contest.mean[1] = 11.0;
  contest.spread[0] = contest.spread[1] = 1.0;
  for (int i = 0; i < 2047; ++i) h.log->append_deferred(some_call(i), contest);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(h.log->written(), 0u);
  h.log->append_deferred(some_call(2047), contest);
  ASSERT_TRUE(h.writes_within(10));
  const auto calls = test::call_records(h.path);
  ASSERT_EQ(calls.size(), 2048u);
  // The played arm is faster by one spread-sum: it wins with probability Φ(1/√2) = 0.7602499...
  // (scipy.stats.norm.cdf(1 / 2 ** 0.5)).
  for (const auto& r : calls) EXPECT_NEAR(r.propensity, 0.760249938, 1e-8);
}

// A burst far faster than any job (10^5 records, one per microsecond) loses nothing silently: every
// record is in the file or counted as dropped, however far the writer thread fell behind.
TEST(DecisionLog, ABurstIsWrittenOrCountedAsDropped) {
  const std::string path = "/tmp/ncclbot-decision-log-burst-" + std::to_string(getpid());
  std::remove(path.c_str());
  std::string error;
  auto log = DecisionLog::open({path, uint64_t(1) << 30, "policy=test\n"}, 0, &error);
  ASSERT_TRUE(log) << error;
  constexpr int kRecords = 100000;
  unsigned char out[decision_log::kCallRecordBytes];
  auto next = std::chrono::steady_clock::now();
  for (int i = 0; i < kRecords; ++i) {
    decision_log::encode(some_call(i), out);
    log->append(out, sizeof out);
    next += std::chrono::microseconds(1);
    while (std::chrono::steady_clock::now() < next) {
    }
  }
  log->flush();
  RecordProperty("dropped", std::to_string(log->dropped()));
  int calls = 0;
  test::for_each_record(
      path, [&](uint32_t kind, const unsigned char*) { calls += kind == decision_log::kKindCall; });
  EXPECT_GT(calls, 0);
  EXPECT_EQ(uint64_t(calls) + log->dropped(), uint64_t(kRecords));
  std::remove(path.c_str());
}

// NCCLBOT_LOG naming a FIFO (or any non-regular file) is refused at once, never waited on: the open
// comes in NCCL's communicator set-up, where a blocking open without a reader would hang the job.
TEST(DecisionLog, AFifoIsRefusedWithoutWaiting) {
  const std::string path = "/tmp/ncclbot-decision-log-fifo-" + std::to_string(getpid());
  std::remove(path.c_str());
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  std::string error;
  auto opened = std::async(std::launch::async, [&] {
    return DecisionLog::open({path, uint64_t(1) << 30, "policy=test\n"}, 0, &error) != nullptr;
  });
  if (opened.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
    // Unblock the writer's open so the test can end, then fail.
    const int reader = ::open(path.c_str(), O_RDONLY | O_NONBLOCK);
    opened.wait();
    if (reader >= 0) ::close(reader);
    std::remove(path.c_str());
    FAIL() << "opening a FIFO as the decision log blocked";
  }
  EXPECT_FALSE(opened.get());
  EXPECT_NE(error.find(path), std::string::npos) << error;
  // With a reader on the FIFO the open succeeds, and the file type check refuses it.
  const int reader = ::open(path.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  error.clear();
  EXPECT_EQ(DecisionLog::open({path, uint64_t(1) << 30, "policy=test\n"}, 0, &error), nullptr);
  EXPECT_NE(error.find("is not a regular file"), std::string::npos) << error;
  ::close(reader);
  std::remove(path.c_str());
}

namespace {

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The "key=value" text of a log's header (NUL padding cut).
std::string header_text(const std::string& path) {
  const std::string bytes = file_bytes(path);
  if (bytes.size() < 16) return "";
  const uint32_t size =
      decision_log::detail::get<uint32_t>(reinterpret_cast<const unsigned char*>(bytes.data()), 12);
  const std::string text = bytes.substr(16, size - 16);
  return text.substr(0, text.find('\0'));
}

}  // namespace

// A second run with the same NCCLBOT_LOG never appends under the first run's header: it creates
// PATH.1 with its own, and PATH keeps its bytes. A third run takes PATH.2.
TEST(DecisionLog, EveryRunWritesANewFileAndLeavesAnOlderLogAlone) {
  const std::string path = "/tmp/ncclbot-decision-log-runs-" + std::to_string(getpid());
  for (const char* suffix : {"", ".1", ".2"}) std::remove((path + suffix).c_str());
  unsigned char out[decision_log::kCallRecordBytes];
  std::string error;
  {
    auto first = DecisionLog::open({path, uint64_t(1) << 30, "policy=auto\n"}, 0, &error);
    ASSERT_TRUE(first) << error;
    EXPECT_EQ(first->path(), path);
    decision_log::encode(some_call(1), out);
    first->append(out, sizeof out);
  }
  const std::string before = file_bytes(path);
  for (const char* policy : {"policy=ucb1:c=0.1,n0=1\n", "policy=egreedy:eps=0.1\n"}) {
    auto next = DecisionLog::open({path, uint64_t(1) << 30, policy}, 0, &error);
    ASSERT_TRUE(next) << error;
    decision_log::encode(some_call(2), out);
    next->append(out, sizeof out);
  }
  EXPECT_EQ(file_bytes(path), before);
  EXPECT_EQ(header_text(path), "policy=auto\n");
  EXPECT_EQ(header_text(path + ".1"), "policy=ucb1:c=0.1,n0=1\n");
  EXPECT_EQ(header_text(path + ".2"), "policy=egreedy:eps=0.1\n");
  for (const char* suffix : {"", ".1", ".2"}) {
    EXPECT_EQ(test::call_records(path + suffix).size(), 1u) << suffix;
    std::remove((path + suffix).c_str());
  }
}

// Past the size cap the run goes on in the next free name with a header of its own; nothing is
// renamed or replaced (PATH.1 here belongs to someone else and keeps its bytes), and every record
// is in exactly one file. The header is 16 bytes plus 17 of text, padded to 40, a record 72: with a
// cap of 200 bytes a file takes two records (40 + 144 = 184; a third would make 256), flushed one
// by one.
TEST(DecisionLog, PastTheSizeCapTheRunGoesOnInTheNextFreeName) {
  const std::string path = "/tmp/ncclbot-decision-log-cap-" + std::to_string(getpid());
  for (const char* suffix : {"", ".1", ".2", ".3"}) std::remove((path + suffix).c_str());
  { std::ofstream(path + ".1") << "someone else's file"; }
  std::string error;
  auto log = DecisionLog::open({path, 200, "policy=test_pad_\n"}, 0, &error);
  ASSERT_TRUE(log) << error;
  unsigned char out[decision_log::kCallRecordBytes];
  for (int i = 0; i < 5; ++i) {
    decision_log::encode(some_call(i), out);
    log->append(out, sizeof out);
    log->flush();
  }
  EXPECT_EQ(log->failed_writes(), 0u);
  EXPECT_EQ(log->path(), path + ".3");
  EXPECT_EQ(file_bytes(path + ".1"), "someone else's file");
  std::vector<uint64_t> indices;
  for (const char* suffix : {"", ".2", ".3"}) {
    EXPECT_EQ(header_text(path + suffix), "policy=test_pad_\n") << suffix;
    for (const auto& r : test::call_records(path + suffix)) indices.push_back(r.call_index);
  }
  EXPECT_EQ(test::call_records(path).size(), 2u);
  EXPECT_EQ(test::call_records(path + ".2").size(), 2u);
  EXPECT_EQ(indices, (std::vector<uint64_t>{0, 1, 2, 3, 4}));
  for (const char* suffix : {"", ".1", ".2", ".3"}) std::remove((path + suffix).c_str());
}

// A symlink at PATH, dangling or not, is refused like any other non-regular file: the plugin
// writes no log rather than follow it or pick another name beside it.
TEST(DecisionLog, ASymlinkAtThePathIsRefused) {
  const std::string path = "/tmp/ncclbot-decision-log-link-" + std::to_string(getpid());
  std::remove(path.c_str());
  ASSERT_EQ(::symlink("/nonexistent/ncclbot-target", path.c_str()), 0);
  std::string error;
  EXPECT_EQ(DecisionLog::open({path, uint64_t(1) << 30, "policy=test\n"}, 0, &error), nullptr);
  EXPECT_NE(error.find("is not a regular file"), std::string::npos) << error;
  EXPECT_FALSE(std::ifstream(path + ".1").good());
  std::remove(path.c_str());
}
