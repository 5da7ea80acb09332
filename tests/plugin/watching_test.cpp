// Watching fewer calls through NCCL's activation mask (docs/plugin.md "The cost of watching"): the
// stand-in NCCL 2.31 loads its process-wide mask at each collective's API call and instruments the
// collective's kernel only when that held KernelCh, as NCCL does (NVIDIA/nccl src/enqueue.cc collTaskAppend).
// A policy with a watch rule (`@watch`) has the profiler switch KernelCh for the call it expects next: 30,000
// calls of three contexts over two communicators, interleaved in one order, watch every call while the
// contexts learn and at least 10x fewer once they have settled, still learn each context's best arm, credit
// every latency to the context and arm that ran it, and settle every unwatched call.
#include <gtest/gtest.h>

#include <cstdint>
#include <regex>
#include <string>
#include <vector>

#include "ncclbot/log/decision_log.hpp"
#include "plugin/standin_nccl.hpp"
#include "support/run_cli.hpp"

using namespace ncclbot::test;

namespace {

// Four arms each, as NCCL's model ranks them (slot 0 its pick): slots 0, 1, 3 and 5.
CostTable7x3 watching_table() {
  CostTable7x3 t;
  t.t[0][0] = 10, t.t[0][1] = 11, t.t[1][0] = 12, t.t[1][2] = 13;
  return t;
}

// Three contexts, each with another best arm; every (context, arm) latency is distinct, so a latency
// credited to another arm or context shows.
struct WatchedContext {
  int comm;  // 0: communicator A, 1: B
  StandInOp op;
  double us[4];  // slots 0, 1, 3, 5
  int best;
};
const WatchedContext kWatchedContexts[] = {
    {0, {4, 4096}, {100, 20, 50, 60}, 1},
    {1, {4, 1 << 20}, {300, 250, 120, 200}, 3},
    {1, {2, 65536}, {500, 400, 450, 130}, 5},
};

double watched_latency(const WatchedContext& c, int slot) {
  return c.us[slot == 0 ? 0 : slot == 1 ? 1 : slot == 3 ? 2 : 3];
}

struct WatchingRun {
  std::vector<std::vector<int>> ran{3};  // per context, the arm of each call
  long calls = 0, watched_late = 0, late = 0;
  bool first_watched = true;  // every call of the first rounds
  std::vector<StandInNccl::Unwatched> unwatched[2];
};

constexpr int kRounds = 10000, kLateFrom = 7000, kFirstRounds = 4;

WatchingRun run_watching(const std::string& policy, const std::string& log) {
  EnvVar mode("NCCLBOT_MODE", "online"), agree("NCCLBOT_AGREEMENT", "local"), seed("NCCLBOT_SEED", "11"),
      spec("NCCLBOT_POLICY", policy), log_env("NCCLBOT_LOG", log);
  WatchingRun r;
  {
    StandInNccl a(kNccl231, 0xa11, 8, 1), b(kNccl231, 0xb22, 8, 1);
    StandInNccl* comms[2] = {&a, &b};
    // The GPU runs behind: a call's channels report after the communicator's next 2 calls started,
    // so an unwatched call is done before the watched calls ahead of it have reported.
    a.defer_channels(2);
    b.defer_channels(2);
    for (int round = 0; round < kRounds; ++round) {
      const long before = a.watched_calls() + b.watched_calls();
      for (size_t c = 0; c < 3; ++c) {
        const WatchedContext& ctx = kWatchedContexts[c];
        const int arm = comms[ctx.comm]->group({ctx.op}, watching_table(), false, [&](size_t, int slot) {
          return watched_latency(ctx, slot);
        })[0];
        r.ran[c].push_back(arm);
        ++r.calls;
      }
      const long watched = a.watched_calls() + b.watched_calls() - before;
      if (round < kFirstRounds && watched != 3) r.first_watched = false;
      if (round >= kLateFrom) {
        r.late += 3;
        r.watched_late += watched;
      }
    }
    EXPECT_EQ(a.failures() + b.failures(), 0);
    r.unwatched[0] = a.unwatched();
    r.unwatched[1] = b.unwatched();
  }
  return r;
}

double best_share(const WatchingRun& r, size_t c) {
  long best = 0, n = 0;
  for (size_t k = kLateFrom; k < r.ran[c].size(); ++k, ++n) best += r.ran[c][k] == kWatchedContexts[c].best;
  return double(best) / double(n);
}

// The number in a recorded log line after `prefix` (`prefix` then digits), or -1.
long logged_count(const std::string& pattern) {
  std::lock_guard<std::mutex> lock(log_mutex());
  const std::regex re(pattern);
  for (const auto& l : log_lines()) {
    std::smatch m;
    if (std::regex_search(l.text, m, re)) return std::stol(m[1].str());
  }
  return -1;
}

}  // namespace

TEST(WatchingFewerCalls, ASettledPolicyWatchesTenTimesFewerCallsAndStillLearnsEachBestArm) {
  const std::string dir = temp_dir(), log = dir + "/watching.log";
  clear_log();
  const WatchingRun r = run_watching("ucb1@watch", log);
  EXPECT_TRUE(r.first_watched);
  EXPECT_LE(r.watched_late * 10, r.late) << r.watched_late << " of " << r.late << " late calls watched";
  for (size_t c = 0; c < 3; ++c) EXPECT_GT(best_share(r, c), 0.9) << "context " << c;

  // Every latency logged is the one of the context and arm that ran, and only watched calls have one.
  const ncclbot::DecisionLogData data = ncclbot::read_decision_logs({log});
  const long unwatched = long(r.unwatched[0].size() + r.unwatched[1].size());
  EXPECT_EQ(long(data.calls.size()), r.calls - unwatched);
  for (const auto& call : data.calls) {
    const WatchedContext* ctx = nullptr;
    for (const WatchedContext& c : kWatchedContexts)
      if (int(call.collective) == c.op.coll && call.bytes == c.op.bytes) ctx = &c;
    ASSERT_NE(ctx, nullptr) << call.bytes;
    EXPECT_EQ(call.latency_us, watched_latency(*ctx, call.slot)) << call.call_index;
  }
  // The profiler settled every unwatched call, and says how many; none is left waiting.
  for (int comm = 0; comm < 2; ++comm) {
    const std::string id = comm == 0 ? "0xa11" : "0xb22";
    EXPECT_EQ(logged_count("profiler watching: commId " + id + ", ([0-9]+) collectives run unwatched"),
              long(r.unwatched[comm].size()));
    EXPECT_EQ(logged_count("commId " + id + ": ([0-9]+) calls run unwatched by the watch rule"),
              long(r.unwatched[comm].size()));
    EXPECT_EQ(logged_count("profiler finalised: commId " + id +
                           ", [0-9]+ latencies delivered, ([0-9]+) "
                           "collectives unfinished"),
              0);
  }
  // The order never changes, so the call expected next was always the one that came: on A, from its
  // third call (its first follows nothing, its second the first call of context 2, never seen before).
  EXPECT_EQ(
      logged_count("profiler watching: commId 0xa11, [0-9]+ collectives run unwatched by the watch rule "
                   "\\(settled, not learned from\\); the call expected next was right for ([0-9]+) of \\1;"),
      kRounds - 2);
  // The stand-in instruments exactly the calls that loaded KernelCh: no channel of an unwatched call.
  for (const std::string id : {"0xa11", "0xb22"})
    EXPECT_EQ(logged_count("profiler watching: commId " + id +
                           ", .*; ([0-9]+) kernel channels came of calls taken as unwatched"),
              0)
        << id;
  // The last communicator gone, KernelCh is back on for whatever runs next.
  EXPECT_NE(standin_event_mask & int(kNcclProfileKernelCh), 0);
}

TEST(WatchingFewerCalls, WithoutAWatchRuleEveryCallIsWatchedAndTheMaskIsNeverTouched) {
  const std::string dir = temp_dir(), log = dir + "/every.log";
  clear_log();
  const WatchingRun r = run_watching("ucb1", log);
  EXPECT_EQ(r.unwatched[0].size() + r.unwatched[1].size(), 0u);
  EXPECT_EQ(r.watched_late, r.late);
  EXPECT_EQ(ncclbot::read_decision_logs({log}).calls.size(), size_t(r.calls));
  EXPECT_EQ(logged_count("profiler watching: commId 0xa11, ([0-9]+)"), -1);
}

// Knob mode (NCCLBOT_KNOBS, a rank-local knob learner) follows the rule the same way over its knob
// arms: slot 1 (Tree/LL128) on 8 channels is the fastest of the 4 slots x channels 0, 4, 8.
TEST(WatchingFewerCalls, KnobModeWatchesFewerCallsAndStillFindsTheBestKnobArm) {
  EnvVar mode("NCCLBOT_MODE", "online"), agree("NCCLBOT_AGREEMENT", "local"), seed("NCCLBOT_SEED", "5"),
      spec("NCCLBOT_POLICY", "ucb1@watch"), knobs("NCCLBOT_KNOBS", "channels=0,4,8");
  clear_log();
  constexpr int kCalls = 6000, kLate = 4000;
  long watched_late = 0, best_late = 0;
  size_t unwatched = 0;
  {
    StandInNccl comm(kNccl231, 0xc33, 8, 1);
    const WatchedContext& ctx = kWatchedContexts[0];
    for (int k = 0; k < kCalls; ++k) {
      const long before = comm.watched_calls();
      int channels = 0;
      const int arm = comm.group({ctx.op}, watching_table(), false, [&](size_t, int slot) {
        channels = comm.tuner_channels();
        return watched_latency(ctx, slot) - (channels == 8 ? 10.0 : channels == 4 ? 5.0 : 0.0);
      })[0];
      if (k >= kLate) {
        watched_late += comm.watched_calls() - before;
        best_late += arm == 1 && comm.tuner_channels() == 8;
      }
    }
    EXPECT_EQ(comm.failures(), 0);
    unwatched = comm.unwatched().size();
  }
  EXPECT_LE(watched_late * 10, kCalls - kLate);
  EXPECT_GT(best_late, (kCalls - kLate) * 9 / 10);
  EXPECT_EQ(logged_count("whose latency never came, ([0-9]+) run unwatched by the watch rule"),
            long(unwatched));
  EXPECT_GT(unwatched, size_t(kCalls / 2));
}

// Two threads switching at once can make a call's kernel instrumented though its CollApi event read
// KernelCh off: its channels then reach a record already retired, and nothing is credited; every
// latency logged is still its own call's. The channels come after the next 3 calls have started (a
// GPU behind the enqueuing thread), when a record freed at once could have given its address to a
// later call's: the retired records are kept from reuse for that.
TEST(WatchingFewerCalls, ChannelsOfACallTakenAsUnwatchedAreCreditedToNoOtherCall) {
  const std::string log = temp_dir() + "/race.log";
  EnvVar mode("NCCLBOT_MODE", "online"), agree("NCCLBOT_AGREEMENT", "local"), seed("NCCLBOT_SEED", "7"),
      spec("NCCLBOT_POLICY", "ucb1@watch"), log_env("NCCLBOT_LOG", log);
  clear_log();
  constexpr int kCalls = 3000;
  size_t unwatched = 0;
  {
    StandInNccl comm(kNccl231, 0xd44, 8, 1);
    comm.instrument_every_call(true);
    comm.defer_channels(3);
    for (int k = 0; k < kCalls; ++k)
      comm.group({{4, 4096}}, watching_table(), false,
                 [&](size_t, int slot) { return 1000.0 + k * 4 + slot; });
    EXPECT_EQ(comm.failures(), 0);
    unwatched = size_t(kCalls - comm.watched_calls());  // loaded without KernelCh, instrumented all the same
  }
  ASSERT_GT(unwatched, size_t(kCalls / 2));
  EXPECT_EQ(logged_count("profiler watching: commId 0xd44, ([0-9]+) collectives run unwatched"),
            long(unwatched));
  // Each such call's two channels came all the same, and the finalize line counts them: what a live
  // check on a real NCCL reads to tell whether switching works there.
  EXPECT_EQ(
      logged_count("profiler watching: commId 0xd44, .*; ([0-9]+) kernel channels came of calls taken as "
                   "unwatched"),
      long(2 * unwatched));
  const ncclbot::DecisionLogData data = ncclbot::read_decision_logs({log});
  EXPECT_EQ(data.calls.size(), kCalls - unwatched);
  // Call k's latency is 1000 + 4k + its slot: only its own channels give it.
  for (const auto& call : data.calls)
    EXPECT_EQ(call.latency_us, 1000.0 + double(call.call_index) * 4 + call.slot);
}

// A call taken as watched whose channels never come (the other way round, or events lost) waits;
// while calls are switched, past 8,192 such records the ones more than 4,096 records old are let go
// (their calls settle as lost), so the calls that do report are still tracked.
TEST(WatchingFewerCalls, RecordsWaitingForChannelsThatNeverComeAreLetGo) {
  EnvVar mode("NCCLBOT_MODE", "online"), agree("NCCLBOT_AGREEMENT", "local"), seed("NCCLBOT_SEED", "7"),
      spec("NCCLBOT_POLICY", "ucb1@watch");
  clear_log();
  constexpr int kCalls = 12000;
  {
    StandInNccl comm(kNccl231, 0xe55, 8, 1);
    for (int k = 0; k < kCalls; ++k) {
      comm.lose_next_channels();
      comm.group({{4, 4096}}, watching_table(), false, [](size_t, int) { return 100.0; });
    }
    EXPECT_EQ(comm.failures(), 0);
    EXPECT_EQ(comm.watched_calls(), kCalls);  // nothing learned, so every call is wished watched
  }
  // Let go when the record numbered 8,192 starts (records 0 to 8,191 live): those numbered below
  // 8,192 - 4,096, 4,096 of them; the live count then climbs from 4,096 again and does not reach 8,192
  // before the run ends, so the rest wait until finalize.
  EXPECT_EQ(logged_count("the call expected next was right for [0-9]+ of [0-9]+; ([0-9]+) let go"), 4096);
  EXPECT_EQ(logged_count("profiler finalised: commId 0xe55, [0-9]+ latencies delivered, ([0-9]+) collectives "
                         "unfinished"),
            kCalls - 4096);
}
