// Knob mode (NCCLBOT_KNOBS, docs/plugin.md "Knob mode") through the built plugin and the stand-in
// NCCL: the learner's decision sets nChannels in getCollInfo and the chunk in v6 getChunkSize, asked
// per channel as NCCL asks it; a latency is credited to the arm that ran; a chunk NCCL cannot run is
// clamped and said once; an NCCL without getChunkSize gets no chunk arms.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "ncclbot/core/knob_spec.hpp"
#include "ncclbot/core/sweep.hpp"
#include "ncclbot/log/decision_log.hpp"
#include "ncclbot/replay/cpu_engine.hpp"
#include "ncclbot/replay/policy_for_view.hpp"
#include "ncclbot/replay/policy_spec.hpp"
#include "ncclbot/replay/replay.hpp"
#include "plugin/standin_nccl.hpp"

using namespace ncclbot::test;

namespace {

struct KnobOnline {
  EnvVar mode{"NCCLBOT_MODE", "online"}, agree{"NCCLBOT_AGREEMENT", "local"}, seed{"NCCLBOT_SEED", "5"};
  EnvVar policy, knobs;
  KnobOnline(const std::string& spec, const std::string& knob_lists)
      : policy("NCCLBOT_POLICY", spec), knobs("NCCLBOT_KNOBS", knob_lists) {}
};

// Tree/Simple and Ring/Simple; NCCL's model prefers Ring.
CostTable7x3 two_simple_arms() {
  CostTable7x3 t;
  t.t[0][2] = 12.0f;
  t.t[1][2] = 10.0f;
  return t;
}

// A latency that falls with channels and with a 64 KiB chunk: Ring/Simple on 8 channels with 64 KiB
// chunks is the fastest (40 us) of the arms channels=0,4,8 x chunk=0,64K.
double knob_latency(int arm, int channels, size_t chunk) {
  double us = arm == 5 ? 100.0 : 120.0;
  us -= channels == 8 ? 40.0 : channels == 4 ? 20.0 : 0.0;
  us -= chunk == 65536 ? 20.0 : 0.0;
  return us;
}

// One all-reduce of 1 MiB offered two_simple_arms(), timed by knob_latency for what ran; the arm
// that ran.
int knob_call(StandInNccl& comm) {
  return comm.group({{4, 1 << 20}}, two_simple_arms(), false,
                    [&](size_t, int a) { return knob_latency(a, comm.ran_channels(), comm.ran_chunk()); })[0];
}

// The finalize line's counts, "ncclbot: knob learner: D decisions, L latencies learned, U calls settled
// unlearned (N whose latency never came)".
struct KnobTotals {
  long decisions = -1, learned = -1, unlearned = -1, lost = -1;
};
KnobTotals knob_totals() {
  std::lock_guard<std::mutex> lock(log_mutex());
  KnobTotals t;
  for (const auto& l : log_lines())
    if (l.text.rfind("ncclbot: knob learner: ", 0) == 0)
      std::sscanf(
          l.text.c_str(),
          "ncclbot: knob learner: %ld decisions, %ld latencies learned, %ld calls settled unlearned (%ld",
          &t.decisions, &t.learned, &t.unlearned, &t.lost);
  return t;
}

}  // namespace

// NCCL 2.30 (tuner v6): over 12 knob arms UCB1 settles on Ring/Simple with 8 channels and 64 KiB
// chunks, which the plugin sets through nChannels and getChunkSize; every latency is learned.
TEST(KnobMode, LearnsChannelsAndChunkThroughGetCollInfoAndGetChunkSize) {
  KnobOnline online("ucb1", "channels=0,4,8;chunk=0,64K");
  clear_log();
  int best_late = 0;
  {
    StandInNccl comm(kNccl230, 0x6b6e6f62, 1, 1);
    for (int k = 0; k < 600; ++k) {
      const int arm = knob_call(comm);
      if (k >= 500 && arm == 5 && comm.ran_channels() == 8 && comm.ran_chunk() == 65536) ++best_late;
    }
    EXPECT_EQ(comm.failures(), 0);
    EXPECT_GT(comm.chunks_changed(), 0);
  }
  EXPECT_GE(best_late, 90);
  EXPECT_TRUE(logged(kNcclLogInfo, "online (rank-local learner over knob arms)"));
  EXPECT_TRUE(logged(kNcclLogInfo, "(12 knob arms)"));
  const KnobTotals t = knob_totals();
  EXPECT_EQ(t.decisions, 600);
  EXPECT_EQ(t.learned, 600);
  EXPECT_EQ(t.unlearned, 0);
}

// NCCL 2.28 binds tuner v5, which has no getChunkSize: one warning at init, the chunk lists dropped
// (a chunk arm would run NCCL's chunk), and the channel counts still learned.
TEST(KnobMode, WithoutGetChunkSizeTheChunkArmsAreRefused) {
  KnobOnline online("ucb1", "channels=0,4,8;chunk=0,64K");
  clear_log();
  int eight = 0;
  {
    StandInNccl comm(kNccl228, 0x6b6e6f63, 1, 1);
    for (int k = 0; k < 300; ++k) {
      knob_call(comm);
      eight += comm.ran_channels() == 8;
    }
    EXPECT_EQ(comm.failures(), 0);
    EXPECT_EQ(comm.chunks_changed(), 0);
  }
  EXPECT_TRUE(logged(kNcclLogWarn, "chunk sizes need tuner v6 (getChunkSize, NCCL 2.30 and later)"));
  EXPECT_TRUE(logged(kNcclLogInfo, "(6 knob arms)"));
  EXPECT_GT(eight, 200);
  EXPECT_EQ(knob_totals().learned, 300);
}

// NCCL computed a 40,000 B chunk, below the decided 64 KiB: the plugin hands NCCL 39,936 B (40,000
// rounded down to Simple's 512 B grain, by hand), never more than NCCL's nor off the grain, says so
// once, and the call still counts as the decided arm's.
TEST(KnobMode, AChunkAboveNcclsIsClampedAndSaidOnce) {
  KnobOnline online("ucb1", "chunk=0,64K");
  clear_log();
  int clamped = 0;
  {
    StandInNccl comm(kNccl230, 0x6b6e6f64, 1, 1);
    comm.set_nccl_chunk(40000);
    for (int k = 0; k < 200; ++k) {
      comm.group({{4, 1 << 20}}, two_simple_arms(), false,
                 [&](size_t, int a) { return a == 5 ? 50.0 : 70.0; });
      EXPECT_TRUE(comm.ran_chunk() == 40000 || comm.ran_chunk() == 39936) << comm.ran_chunk();
      clamped += comm.ran_chunk() == 39936;
    }
    EXPECT_EQ(comm.failures(), 0);
  }
  EXPECT_GT(clamped, 0);
  int lines = 0;
  {
    std::lock_guard<std::mutex> lock(log_mutex());
    for (const auto& l : log_lines())
      lines += l.text.find("decided chunk 65536 B clamped to 39936 B") != std::string::npos;
  }
  EXPECT_EQ(lines, 1);
  EXPECT_EQ(knob_totals().unlearned, 0);
}

// NCCL runs at most 4 channels (small messages, its 32 KiB cells): a decision of 8 channels ran 4,
// and is credited to the 4-channel arm when the context has one; with channels=0,8 it has none, and
// exactly those calls teach the policy nothing.
TEST(KnobMode, ALatencyGoesToTheChannelCountThatRan) {
  for (const std::string lists : {"channels=0,4,8", "channels=0,8"}) {
    KnobOnline online("ucb1", lists);
    clear_log();
    int capped = 0;
    {
      StandInNccl comm(kNccl230, 0x6b6e6f65, 1, 1);
      comm.set_channels(2, 4);
      for (int k = 0; k < 300; ++k) {
        comm.group({{4, 1 << 20}}, two_simple_arms(), false,
                   [&](size_t, int a) { return a == 5 ? 50.0 : 70.0; });
        capped += comm.tuner_channels() == 8;
      }
      EXPECT_EQ(comm.failures(), 0);
    }
    ASSERT_GT(capped, 0) << lists;
    const KnobTotals t = knob_totals();
    EXPECT_EQ(t.decisions, 300) << lists;
    EXPECT_EQ(t.unlearned, lists == "channels=0,8" ? capped : 0) << lists;
    EXPECT_EQ(t.learned, 300 - t.unlearned) << lists;
  }
}

// A knob list the plugin cannot use: one warning naming NCCLBOT_KNOBS and the reason, and NCCL's own
// choices (nothing is written into the cost table or nChannels).
TEST(KnobMode, ABadKnobListKeepsNcclsChoices) {
  KnobOnline online("ucb1", "channels=0,65");
  clear_log();
  {
    StandInNccl comm(kNccl230, 0x6b6e6f66, 1, 1);
    for (int k = 0; k < 20; ++k) {
      comm.group({{4, 1 << 20}}, two_simple_arms(), false, [](size_t, int) { return 10.0; });
      EXPECT_EQ(comm.tuner_channels(), 0);
    }
    for (int pick : comm.picks()) EXPECT_EQ(pick, 5);
    EXPECT_EQ(comm.failures(), 0);
  }
  EXPECT_TRUE(logged(kNcclLogWarn, "NCCLBOT_KNOBS: channels: 65 is above 64; using NCCL's own choices"));
}

// The plugin decides exactly as the replay engine on a knob sweep: the sweep's one context holds the
// arms the plugin builds from the same lists (Tree/Simple and Ring/Simple x channels 0,4,8 x chunk
// 0,64K, each with its slot's cost as the prior), the replay runs UCB1, OSUB and Thompson sampling on it with
// the seed the plugin is given, and every one of 400 calls through the stand-in NCCL runs the arm the replay
// chose at that step (channels from nChannels, the chunk from getChunkSize), fed the replay's
// latency.
TEST(KnobMode, DecidesCallForCallAsTheReplayOfAKnobSweep) {
  using namespace ncclbot;
  const Context ctx{"standin", Collective::kAllReduce, 1, 1, uint64_t(1) << 20};
  SweepBuilder b("knobs.csv");
  const KnobSpec spec = parse_knob_spec("channels=0,4,8;chunk=0,64K");
  long line = 1;
  for (const int slot : {arm_slot(Algo::kTree, Proto::kSimple), arm_slot(Algo::kRing, Proto::kSimple)})
    for (const Arm& a : knob_arms(spec, slot))
      for (int r = 0; r < 4; ++r)  // whole microseconds: exact through the profiler's nanoseconds
        b.add(ctx, a, r, float(knob_latency(slot, a.channels, a.chunk_bytes) + 3 * r),
              slot == arm_slot(Algo::kRing, Proto::kSimple) ? 10.0f : 12.0f, line++);
  const Sweep sweep = b.build();
  const SweepView v = sweep.arm_view();
  ASSERT_FALSE(v.slot_shaped());
  for (const std::string policy : {"ucb1", "osub", "thompson"}) {
    ReplayTask task;
    task.sweep = v;
    task.context = 0;
    task.seed = 5;
    task.stream_id = context_stream_id(ctx);
    task.horizon = 400;
    std::vector<int> chosen(400, -1);
    std::vector<float> latency(400, 0.0f);
    visit_policy_for(v, parse_policy_spec(policy).config, [&](auto p) {
      replay_one(p, task, [&](int t, int index, float x) {
        chosen[size_t(t)] = index;
        latency[size_t(t)] = x;
      });
      return 0;
    });
    KnobOnline online(policy, "channels=0,4,8;chunk=0,64K");
    StandInNccl comm(kNccl230, 0x6b6e6f67, 1, 1);
    int t = 0;
    for (; t < 400; ++t) {
      const int ran = comm.group({{4, size_t(1) << 20}}, two_simple_arms(), false,
                                 [&](size_t, int) { return double(latency[size_t(t)]); })[0];
      const Arm plugin_arm{slot_algo(ran), slot_proto(ran), uint16_t(comm.tuner_channels()),
                           comm.ran_chunk() == 131072 ? 0u : uint32_t(comm.ran_chunk())};
      if (!(plugin_arm == v.arm(0, chosen[size_t(t)]))) break;
    }
    EXPECT_EQ(t, 400) << policy << ": the plugin's arm differs from the replay's at call " << t;
    EXPECT_EQ(comm.failures(), 0);
  }
}

// Lists that give a context more arms than a policy holds (65 channel values x 5 chunks x 2 slots =
// 650 > 512): one warning naming the count, and NCCL's own choices there, never a truncated arm set.
TEST(KnobMode, AContextWithMoreArmsThanAPolicyHoldsKeepsNcclsChoices) {
  std::string channels = "channels=0";
  for (int c = 1; c <= 64; ++c) channels += "," + std::to_string(c);
  KnobOnline online("ucb1", channels + ";chunk=0,512,1K,2K,4K");
  clear_log();
  {
    StandInNccl comm(kNccl230, 0x6b6e6f68, 1, 1);
    for (int k = 0; k < 10; ++k) {
      knob_call(comm);
      EXPECT_EQ(comm.tuner_channels(), 0);
      EXPECT_EQ(comm.picks().back(), 5);  // NCCL's pick, Ring/Simple
    }
    EXPECT_EQ(comm.failures(), 0);
  }
  EXPECT_TRUE(
      logged(kNcclLogWarn, "NCCLBOT_KNOBS gives this context 650 arms, more than the 512 a policy holds"));
}

// With NCCLBOT_LOG, knob mode writes a version-4 decision log (docs/ope.md): the context's cost table,
// then every decided call as a knob call record naming the arm that ran, with the call's own latency
// and UCB1's probability 1. NCCL runs at most 4 channels here, so a decision of 8 ran on 4: that call
// is flagged as run otherwise, with the 8 decided, and the readers leave it out and count it.
TEST(KnobMode, LogsEveryDecidedCallWithTheArmThatRan) {
  KnobOnline online("ucb1", "channels=0,4,8");
  const std::string log = temp_dir() + "/knobs.log";
  EnvVar log_env("NCCLBOT_LOG", log);
  std::vector<int> ran, decided;
  {
    StandInNccl comm(kNccl230, 0x6b6e6f66, 1, 1);
    comm.set_channels(2, 4);
    for (int k = 0; k < 300; ++k) {
      ran.push_back(comm.group({{4, 1 << 20}}, two_simple_arms(), false,
                               [&](size_t, int a) { return (a == 5 ? 50.0 : 70.0) + k; })[0]);
      decided.push_back(comm.tuner_channels());
    }
    EXPECT_EQ(comm.failures(), 0);
  }
  const size_t capped = size_t(std::count(decided.begin(), decided.end(), 8));
  ASSERT_GT(capped, 0u);
  const ncclbot::DecisionLogData data = ncclbot::read_decision_logs({log});
  EXPECT_EQ(data.files[0].version, 5u);
  EXPECT_EQ(data.files[0].header.at("knobs"), "channels=0,4,8");
  EXPECT_EQ(data.files[0].knob_calls, 300u);
  EXPECT_EQ(data.files[0].overridden, capped);
  ASSERT_EQ(data.calls.size(), 300u - capped);
  ASSERT_EQ(data.contexts.size(), 1u);
  EXPECT_EQ(data.contexts[0].nccl_slot, 5);  // Ring/Simple, the cheaper of the two entries
  for (const auto& r : data.calls) {
    const size_t k = size_t(r.call_index);
    ASSERT_LT(k, ran.size());
    EXPECT_TRUE(r.knobs);
    EXPECT_EQ(r.slot, ran[k]) << k;
    EXPECT_EQ(r.channels, decided[k]) << k;
    EXPECT_EQ(r.chunk_bytes, 0u);
    EXPECT_EQ(r.latency_us, (ran[k] == 5 ? 50.0 : 70.0) + double(k)) << k;
    EXPECT_EQ(r.propensity, 1.0);
  }
}

// Kernel-channel events that never arrive (every ninth call's): each latency still meets its own
// call's decision, so the chunk it is credited with is the chunk that call ran (arrival order alone
// would pair every later latency with the call before it). A lost call is settled unlearned once a
// call 64 later in its context has been answered, and UCB1 still settles on the best arm.
TEST(KnobMode, ALostLatencyLeavesEveryOtherCallItsOwnDecision) {
  KnobOnline online("ucb1", "channels=0,4,8;chunk=0,64K");
  const std::string log = temp_dir() + "/lost_knobs.log";
  EnvVar log_env("NCCLBOT_LOG", log);
  clear_log();
  constexpr int kCalls = 600;
  const auto lost = [](int k) { return k % 9 == 4; };
  std::vector<int> ran, channels, decided_channels;
  std::vector<size_t> chunk;
  int best_late = 0, late = 0;
  {
    StandInNccl comm(kNccl230, 0x6b6e6f70, 1, 1);
    for (int k = 0; k < kCalls; ++k) {
      if (lost(k)) comm.lose_next_channels();
      ran.push_back(knob_call(comm));
      channels.push_back(comm.ran_channels());
      decided_channels.push_back(comm.tuner_channels());  // 0: NCCL's own, which the arm names as 0
      chunk.push_back(comm.ran_chunk());
      if (k >= 500 && !lost(k)) {
        ++late;
        best_late += ran.back() == 5 && channels.back() == 8 && chunk.back() == 65536;
      }
    }
    EXPECT_EQ(comm.failures(), 0);
  }
  long lost_calls = 0, given_up = 0;
  for (int k = 0; k < kCalls; ++k)
    if (lost(k)) {
      ++lost_calls;
      given_up += k + 64 <= kCalls - 1;  // the last call (599) is answered
    }
  const ncclbot::DecisionLogData data = ncclbot::read_decision_logs({log});
  ASSERT_EQ(data.calls.size(), size_t(kCalls - lost_calls));
  for (const auto& r : data.calls) {
    const int k = int(r.call_index);
    ASSERT_TRUE(k >= 0 && k < kCalls && !lost(k)) << k;
    EXPECT_EQ(r.slot, ran[size_t(k)]) << k;
    EXPECT_EQ(r.channels, decided_channels[size_t(k)]) << k;
    EXPECT_EQ(r.chunk_bytes, chunk[size_t(k)] == 131072 ? 0u : chunk[size_t(k)]) << k;  // NCCL's: 0
    EXPECT_EQ(r.latency_us, knob_latency(ran[size_t(k)], channels[size_t(k)], chunk[size_t(k)])) << k;
  }
  const KnobTotals t = knob_totals();
  EXPECT_EQ(t.decisions, kCalls);
  EXPECT_EQ(t.learned, kCalls - lost_calls);
  EXPECT_EQ(t.lost, given_up);
  EXPECT_EQ(t.unlearned, given_up);
  EXPECT_GE(best_late, late * 9 / 10);
}

// Thompson sampling states its probabilities only as integrals, over up to 512 arms in knob mode,
// which the plugin does not compute there: one warning, and no log is written rather than one with
// probabilities no estimator could use.
TEST(KnobMode, ThompsonSamplingWritesNoKnobLog) {
  KnobOnline online("thompson", "channels=0,4,8");
  const std::string log = temp_dir() + "/thompson_knobs.log";
  EnvVar log_env("NCCLBOT_LOG", log);
  clear_log();
  {
    StandInNccl comm(kNccl230, 0x6b6e6f67, 1, 1);
    for (int k = 0; k < 20; ++k) knob_call(comm);
    EXPECT_EQ(comm.failures(), 0);
  }
  EXPECT_TRUE(logged(kNcclLogWarn, "only as integrals, which knob mode does not compute; no decision log"));
  EXPECT_FALSE(std::ifstream(log).good());
  EXPECT_EQ(knob_totals().learned, 20);
}

// NCCLBOT_STATE over knob arms: a job that stops after 200 calls and a second job that restores it
// decide, call for call, as one job of 400 calls would (the policy's state and its Philox steps
// carry over; the arms are the same crossing of the same table and lists). A job with other lists
// finds another learner's file: one warning, and it starts clean (as a fresh learner decides).
TEST(KnobMode, AStateFileCarriesTheKnobArmsToTheNextJob) {
  using Played = std::vector<std::array<long, 3>>;
  const auto run = [](StandInNccl& comm, int calls, Played& played) {
    for (int k = 0; k < calls; ++k) {
      const int arm = knob_call(comm);
      played.push_back({arm, comm.ran_channels(), long(comm.ran_chunk())});
    }
  };
  for (const std::string policy : {"ucb1", "osub", "thompson"}) {
    Played whole, resumed;
    {
      KnobOnline online(policy, "channels=0,4,8;chunk=0,64K");
      StandInNccl comm(kNccl230, 0x6b6e6f70, 1, 1);
      run(comm, 400, whole);
    }
    const std::string state = temp_dir() + "/knobs.state";
    EnvVar st("NCCLBOT_STATE", state);
    {
      KnobOnline online(policy, "channels=0,4,8;chunk=0,64K");
      StandInNccl comm(kNccl230, 0x6b6e6f71, 1, 1);
      run(comm, 200, resumed);
    }
    clear_log();
    {
      KnobOnline online(policy, "channels=0,4,8;chunk=0,64K");
      StandInNccl comm(kNccl230, 0x6b6e6f72, 1, 1);
      run(comm, 200, resumed);
    }
    EXPECT_TRUE(logged(kNcclLogInfo, "restored 1 contexts from " + state)) << policy;
    EXPECT_EQ(resumed, whole) << policy;
    // Other lists: another learner's file, and a clean start.
    clear_log();
    Played other, fresh;
    {
      KnobOnline online(policy, "channels=0,8;chunk=0,64K");
      StandInNccl comm(kNccl230, 0x6b6e6f73, 1, 1);
      run(comm, 50, other);
    }
    EXPECT_TRUE(logged(kNcclLogWarn, "written for other NCCLBOT_KNOBS lists")) << policy;
    {
      EnvVar none("NCCLBOT_STATE", "");
      KnobOnline online(policy, "channels=0,8;chunk=0,64K");
      StandInNccl comm(kNccl230, 0x6b6e6f74, 1, 1);
      run(comm, 50, fresh);
    }
    EXPECT_EQ(other, fresh) << policy;
  }
}
