// NCCL runs something other than the plugin's pick (a registered buffer, a user restriction, a
// symmetric kernel), and the profiler's Coll event names the arm that ran. The stand-in NCCL
// (plugin/standin_nccl.hpp, run_instead) does so for a share of the calls. A latency is credited
// only to the arm that ran, the decision NCCL overrode is settled (never left pending, so the arm
// it named is still tried), and the decision log records such a call in a form `ope` and
// `telemetry` read (docs/ope.md "Calls NCCL ran otherwise").
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ncclbot/log/decision_log.hpp"
#include "plugin/standin_nccl.hpp"
#include "support/run_cli.hpp"

using namespace ncclbot::test;

namespace {

// Four arms of one all-reduce context: NCCL's model ranks them 0, 1, 3, 5 (slot 0 its pick), but
// slot 1 is the fastest by far.
constexpr int kOverriddenArms[] = {0, 1, 3, 5};
constexpr int kOverriddenBest = 1;

CostTable7x3 overridden_table() {
  CostTable7x3 t;
  t.t[0][0] = 10, t.t[0][1] = 11, t.t[1][0] = 12, t.t[1][2] = 13;
  return t;
}

double overridden_latency(int arm) {
  switch (arm) {
    case 0:
      return 100.0;
    case 1:
      return 20.0;
    case 3:
      return 50.0;
    default:
      return 60.0;
  }
}

// The next usable arm after `pick` in slot order (cyclic): what NCCL runs instead.
int overridden_other(int pick) {
  for (size_t i = 0; i < 4; ++i)
    if (kOverriddenArms[i] == pick) return kOverriddenArms[(i + 1) % 4];
  return kOverriddenArms[0];
}

// NCCL runs another arm on a share of the calls: call k when (k * 2654435761) mod 100 < percent.
struct OverriddenShare {
  int percent;
  uint64_t call = 0;
  int operator()(int pick, const CostTable7x3&) {
    const bool other = (call++ * 2654435761u) % 100 < uint64_t(percent);
    return other ? overridden_other(pick) : pick;
  }
};

struct OverriddenOnline {
  EnvVar mode{"NCCLBOT_MODE", "online"}, agree{"NCCLBOT_AGREEMENT", "local"}, seed{"NCCLBOT_SEED", "3"};
  EnvVar policy;
  explicit OverriddenOnline(const std::string& spec) : policy("NCCLBOT_POLICY", spec) {}
};

// Drives `calls` all-reduce calls of 4096 B; returns the arms that ran (the picks stay in `comm`).
std::vector<int> overridden_run(StandInNccl& comm, int calls) {
  std::vector<int> ran;
  for (int k = 0; k < calls; ++k) {
    const int arm = comm.group({{4, 4096}}, overridden_table(), false,
                               [](size_t, int a) { return overridden_latency(a); })[0];
    ran.push_back(arm);
  }
  return ran;
}

// The observation counts the state file (docs/plugin.md "State file", format 3) holds for the one
// context of the file: the policy's first values, ArmStats's counts, one per arm in slot order.
std::vector<double> overridden_state_counts(const std::string& path, size_t arms) {
  const std::string bytes = read_all(path);
  constexpr size_t kHeader = 8 + 4 + 4 + 8 + 4 + 4 + 4;  // with the arms field (0: slot arms)
  constexpr size_t kEntryFixed = 4 * 4 + 8 + 8 + 21 * 4 + 4 + 4;
  std::vector<double> counts;
  if (bytes.size() < kHeader + kEntryFixed + 8 * arms) return counts;
  for (size_t j = 0; j < arms; ++j) {
    double v;
    std::memcpy(&v, bytes.data() + kHeader + kEntryFixed + 8 * j, 8);
    counts.push_back(v);
  }
  return counts;
}

}  // namespace

// 4,000 calls of ε-greedy, 25% of them run by NCCL with another arm than the pick: the policy's
// count of each arm, read from the state file it saves, is its one prior pseudo-observation plus
// exactly the calls that ran that arm (no latency credited to an arm that did not run), and every
// logged call names the arm that ran; one NCCL ran otherwise names the arm decided, with the
// decision's probability. Before, such a call was logged with a NaN probability and no decided arm.
TEST(OverriddenArm, LatenciesAreCreditedOnlyToTheArmThatRan) {
  OverriddenOnline online("egreedy:eps=0.3,decay=0,n0=1");
  const std::string dir = temp_dir(), log = dir + "/credited.log", state = dir + "/credited.state";
  EnvVar log_env("NCCLBOT_LOG", log), state_env("NCCLBOT_STATE", state);
  std::vector<int> ran, picks;
  {
    StandInNccl comm(kNccl230, 0xc4ed, 8, 1);
    comm.run_instead(OverriddenShare{25});
    ran = overridden_run(comm, 4000);
    picks = comm.picks();
    EXPECT_EQ(comm.failures(), 0);
  }
  std::map<int, int> runs;
  int overridden = 0;
  for (size_t k = 0; k < ran.size(); ++k) {
    ++runs[ran[k]];
    overridden += ran[k] != picks[k];
  }
  EXPECT_GT(overridden, 800);
  const std::vector<double> counts = overridden_state_counts(state, 4);
  ASSERT_EQ(counts.size(), 4u);
  for (size_t j = 0; j < 4; ++j)
    EXPECT_EQ(counts[j], 1.0 + runs[kOverriddenArms[j]]) << "slot " << kOverriddenArms[j];

  const std::string bytes = read_all(log);
  ASSERT_GT(bytes.size(), 16u);
  size_t at = 0, records = 0;
  std::memcpy(&at, bytes.data() + 12, 4);
  for (; at + 8 <= bytes.size();) {
    uint32_t kind = 0, size = 0;
    std::memcpy(&kind, bytes.data() + at, 4);
    std::memcpy(&size, bytes.data() + at + 4, 4);
    if (kind == ncclbot::decision_log::kKindCall) {
      const auto r =
          ncclbot::decision_log::decode_call(reinterpret_cast<const unsigned char*>(bytes.data() + at));
      ASSERT_LT(r.call_index, ran.size());
      const size_t k = size_t(r.call_index);
      EXPECT_EQ(r.slot, ran[k]) << k;
      EXPECT_EQ(r.overridden, ran[k] != picks[k]) << k;
      if (ran[k] != picks[k]) {
        EXPECT_EQ(r.decided_slot, picks[k]) << k;
      }
      EXPECT_TRUE(r.propensity > 0.0 && r.propensity <= 1.0) << k << ": " << r.propensity;
      ++records;
    }
    at += size;
  }
  EXPECT_EQ(records, ran.size());
}

// Of the last 500 of 2,000 calls of `spec`, those that picked the best arm, when NCCL ran the best
// arm's first pick as `instead`.
int overridden_late_best_picks(const char* spec, int instead) {
  OverriddenOnline online(spec);
  clear_log();
  StandInNccl comm(kNccl230, 0xbe57, 8, 1);
  bool overridden = false;
  comm.run_instead([&](int pick, const CostTable7x3&) {
    if (pick != kOverriddenBest || overridden) return pick;
    overridden = true;
    return instead;
  });
  overridden_run(comm, 2000);
  EXPECT_TRUE(overridden) << spec;
  EXPECT_EQ(comm.failures(), 0);
  const std::vector<int>& picks = comm.picks();
  int best = 0;
  for (size_t k = picks.size() - 500; k < picks.size(); ++k) best += picks[k] == kOverriddenBest;
  return best;
}

// A context whose best arm's first pick NCCL ran as something else still converges to it: that
// decision is settled when the latency of the arm that ran comes back, so the best arm is not left
// looking pending for good (which greedy and UCB1 pass over while its estimate is only the prior).
// Before, both played the best arm on 0 of the last 500 of 2,000 calls.
TEST(OverriddenArm, ABestArmWhoseFirstPickWasOverriddenStillWins) {
  for (const char* spec : {"greedy:n0=1", "ucb1:c=0.1,n0=1"})
    EXPECT_GE(overridden_late_best_picks(spec, 0), 475) << spec;  // run as NCCL's own choice
}

// What ran is a kernel the plugin cannot name (a Coll event whose algorithm is no NCCL algorithm
// name): the call is still answered (settled, nothing learned, not logged), so every later latency
// is logged with its own call. Before, no latency answered it and each later one was logged with
// the call before its own.
TEST(OverriddenArm, ACallRunAsAnUnnamedKernelIsAnsweredAndLaterCallsKeepTheirOwnLatencies) {
  OverriddenOnline online("greedy:n0=1");
  const std::string log = temp_dir() + "/unnamed.log";
  EnvVar log_env("NCCLBOT_LOG", log);
  {
    StandInNccl comm(kNccl230, 0x5e7c, 8, 1);
    int call = 0;
    comm.run_instead([&](int pick, const CostTable7x3&) { return call == 10 ? kStandInUnnamedArm : pick; });
    for (; call < 40; ++call)
      comm.group({{4, 4096}}, overridden_table(), false, [&](size_t, int) { return 100.0 + call; });
    EXPECT_EQ(comm.failures(), 0);
  }
  const ncclbot::DecisionLogData data = ncclbot::read_decision_logs({log});
  ASSERT_EQ(data.calls.size(), 39u);
  for (const auto& r : data.calls) {
    EXPECT_NE(r.call_index, 10u);
    EXPECT_EQ(r.latency_us, 100.0 + double(r.call_index)) << r.call_index;
  }
}

// Kernel-channel events that never arrive (every seventh call's): each later latency is still
// logged with its own call and its own decision's probability (ε-greedy: the greedy arm's and an
// explored arm's differ), the lost calls are left out, and the tuner's finalize line counts those
// given up (a call 64 later answered). Before, every latency after a lost one was logged with the
// call before its own.
TEST(OverriddenArm, ALostLatencyLeavesEveryLaterCallItsOwnDecision) {
  OverriddenOnline online("egreedy:eps=0.3,decay=0,n0=1");
  const std::string log = temp_dir() + "/lost.log";
  EnvVar log_env("NCCLBOT_LOG", log);
  clear_log();
  constexpr int kCalls = 400;
  const auto lost = [](int k) { return k % 7 == 3; };
  std::vector<int> ran, picks;
  {
    StandInNccl comm(kNccl231, 0x1057, 8, 1);
    for (int call = 0; call < kCalls; ++call) {
      if (lost(call)) comm.lose_next_channels();
      ran.push_back(
          comm.group({{4, 4096}}, overridden_table(), false, [&](size_t, int) { return 100.0 + call; })[0]);
    }
    EXPECT_EQ(comm.failures(), 0);
  }
  long lost_calls = 0, given_up = 0;
  for (int k = 0; k < kCalls; ++k)
    if (lost(k)) {
      ++lost_calls;
      given_up += k + 64 <= kCalls - 1;
    }
  const ncclbot::DecisionLogData data = ncclbot::read_decision_logs({log});
  ASSERT_EQ(data.calls.size(), size_t(kCalls - lost_calls));
  int greedy_probability = 0, explored_probability = 0;
  for (const auto& r : data.calls) {
    const int k = int(r.call_index);
    ASSERT_TRUE(k < kCalls && !lost(k)) << k;
    EXPECT_EQ(r.latency_us, 100.0 + double(k)) << k;
    EXPECT_EQ(r.slot, ran[size_t(k)]) << k;
    // eps = 0.3 over 4 arms: 0.3 / 4 + 0.7 for the greedy arm, 0.3 / 4 for any other.
    const bool greedy = std::fabs(r.propensity - 0.775) < 1e-9,
               explored = std::fabs(r.propensity - 0.075) < 1e-9;
    EXPECT_TRUE(greedy || explored) << k << " " << r.propensity;
    greedy_probability += greedy;
    explored_probability += explored;
  }
  EXPECT_GT(explored_probability, 20);
  EXPECT_GT(greedy_probability, 200);
  EXPECT_TRUE(logged(kNcclLogInfo, std::to_string(given_up) + " calls whose latency never came"));
}

// `ope` and `telemetry` read the log of a greedy run with 20% of its calls run otherwise (the
// policy of the message they refused it with before): those calls are left out and counted.
TEST(OverriddenArm, OpeAndTelemetryReadTheLogOfARunNcclOverrode) {
  OverriddenOnline online("greedy:n0=1");
  const std::string dir = temp_dir(), log = dir + "/overridden.log";
  EnvVar log_env("NCCLBOT_LOG", log);
  int overridden = 0;
  {
    StandInNccl comm(kNccl230, 0x0e9e, 8, 1);
    comm.run_instead(OverriddenShare{20});
    const std::vector<int> ran = overridden_run(comm, 1000);
    for (size_t k = 0; k < ran.size(); ++k) overridden += ran[k] != comm.picks()[k];
  }
  ASSERT_GT(overridden, 100);
  const CliResult ope = run_cli("ope --log '" + log + "' --policy auto --json");
  ASSERT_EQ(ope.exit_code, 0) << ope.err;
  const auto j = nlohmann::json::parse(ope.out);
  EXPECT_EQ(j["overridden_calls"], overridden);
  EXPECT_EQ(j["calls"], 1000 - overridden);
  EXPECT_NE(ope.err.find(std::to_string(overridden) +
                         " calls on which NCCL ran another arm than the decided one left out"),
            std::string::npos)
      << ope.err;
  const std::string report = dir + "/overridden_report";
  const CliResult tel = run_cli("telemetry '" + log + "' --out '" + report + "' --no-figures");
  ASSERT_EQ(tel.exit_code, 0) << tel.err;
  EXPECT_EQ(nlohmann::json::parse(read_all(report + "/telemetry.json"))["overridden_calls"], overridden);
}

// NCCL 2.31+ (profiler v7): on a share of the calls a symmetric kernel runs, which the tuner never
// saw, and its Coll event names the tuner's pick as its algorithm and protocol but says isSymColl.
// Over three communicators of 10,000 calls each (learning carried from one to the next by the state
// file), the policy's count of each arm is its one prior pseudo-observation plus exactly the calls
// that ran that general arm: no latency of a symmetric kernel is credited to the arm decided. Every
// call still answers its own decision (the symmetric ones settled unlearned), and the profiler's
// finalize line counts them.
TEST(OverriddenArm, ASymmetricKernelIsNeverCreditedToTheDecidedArm) {
  OverriddenOnline online("egreedy:eps=0.3,decay=0,n0=1");
  const std::string state = temp_dir() + "/symmetric.state";
  EnvVar state_env("NCCLBOT_STATE", state);
  std::map<int, int> runs;
  int symmetric = 0;
  clear_log();
  for (uint64_t comm_id : {0x5e01ull, 0x5e02ull, 0x5e03ull}) {
    StandInNccl comm(kNccl231, comm_id, 8, 1);
    OverriddenShare share{20};
    comm.run_instead([&](int pick, const CostTable7x3& t) {
      return share(pick, t) == pick ? pick : kStandInSymmetricArm;
    });
    for (int arm : overridden_run(comm, 10000)) {
      if (arm == kStandInSymmetricArm)
        ++symmetric;
      else
        ++runs[arm];
    }
    EXPECT_EQ(comm.failures(), 0);
  }
  EXPECT_GT(symmetric, 4000);
  const std::vector<double> counts = overridden_state_counts(state, 4);
  ASSERT_EQ(counts.size(), 4u);
  for (size_t j = 0; j < 4; ++j)
    EXPECT_EQ(counts[j], 1.0 + runs[kOverriddenArms[j]]) << "slot " << kOverriddenArms[j];
  EXPECT_TRUE(logged(kNcclLogInfo, "symmetric-kernel collectives not learned"));
}

// Bad input from a v7 profiler: a symmetric-kernel Coll event with no kernelVariant, algorithm or
// protocol, for a context no decision was made in, with its one kernel channel: every call returns
// success, nothing is credited, and the finalize line counts it.
// NCCL 2.31's own selection in the stand-in: a symmetric kernel, priced per call from 2 to 21 us
// against general entries of 10 to 13 us, runs whenever it is below every entry the tuner left.
// With the plugin off, it runs on about two fifths of the calls, and the profiler settles each one
// unlearned; with an online policy deciding every call (its entry written as 0), the decided
// general arm runs on every call and no symmetric kernel does.
TEST(OverriddenArm, UnderNccl231sSelectionTheDecidedArmAlwaysRuns) {
  const auto symmetric_us = [](long call) { return 2.0f + float((uint64_t(call) * 7919u) % 20u); };
  int symmetric_off = 0;
  {
    EnvVar off("NCCLBOT_MODE", "off");
    StandInNccl comm(kNccl231, 0x5e10, 8, 1);
    comm.price_symmetric_kernels(symmetric_us);
    for (int arm : overridden_run(comm, 2000)) symmetric_off += arm == kStandInSymmetricArm;
    EXPECT_EQ(comm.failures(), 0);
  }
  EXPECT_GT(symmetric_off, 600);
  EXPECT_LT(symmetric_off, 1000);
  OverriddenOnline online("egreedy:eps=0.3,decay=0,n0=1");
  clear_log();
  {
    StandInNccl comm(kNccl231, 0x5e11, 8, 1);
    comm.price_symmetric_kernels(symmetric_us);
    const std::vector<int> ran = overridden_run(comm, 3000);
    ASSERT_EQ(comm.picks().size(), ran.size());
    for (size_t k = 0; k < ran.size(); ++k) ASSERT_EQ(ran[k], comm.picks()[k]) << k;
    EXPECT_EQ(comm.failures(), 0);
  }
  EXPECT_TRUE(logged(kNcclLogInfo, "), 0 symmetric-kernel collectives not learned"));
}

TEST(OverriddenArm, ASymmetricEventWithNoNamesAndNoDecisionIsCountedAndHarmless) {
  OverriddenOnline online("greedy:n0=1");
  clear_log();
  const Plugin& p = plugin();
  void* prof = nullptr;
  void* tuner = nullptr;
  int mask = 0;
  ASSERT_EQ(p.prof7->init(&prof, 0x5e7d, &mask, "bad-v7", 1, 8, 0, recording_logger), kNcclSuccess);
  ASSERT_EQ(p.v6->init(&tuner, 0x5e7d, 8, 1, recording_logger, nullptr, nullptr), kNcclSuccess);
  NcclProfilerEventDescrV7 d;
  std::memset(&d, 0, sizeof d);
  d.type = kNcclProfileColl;
  d.coll.v5.func = "AllReduce";
  d.coll.v5.count = 4096;
  d.coll.v5.datatype = "ncclInt8";
  d.coll.v5.nChannels = 1;
  d.coll.isSymColl = true;  // kernelVariant, algo and proto left null
  void* coll = nullptr;
  EXPECT_EQ(p.prof7->startEvent(prof, &coll, &d), kNcclSuccess);
  EXPECT_EQ(p.prof7->stopEvent(coll), kNcclSuccess);
  EXPECT_TRUE(run_kernel_channel<NcclProfilerEventDescrV7>(*p.prof7, prof, coll, 1000, 51000));
  EXPECT_EQ(p.v6->finalize(tuner), kNcclSuccess);
  EXPECT_EQ(p.prof7->finalize(prof), kNcclSuccess);
  EXPECT_TRUE(logged(kNcclLogInfo, "0 latencies delivered"));
  EXPECT_TRUE(logged(kNcclLogInfo, "1 symmetric-kernel collectives not learned"));
}

// Decision log version 5 under NCCL 2.31's profiler v7: a call NCCL ran with one of its symmetric
// kernels is logged (flag bit 2, no arm, the arm decided and its probability) and every call
// carries its own userProfilerTag (the stand-in tags call k with 1000 + k, so a tag on the wrong
// call shows). Readers leave the symmetric ones out and count them, in slot and in knob mode.
TEST(OverriddenArm, TheLogRecordsSymmetricKernelsAndEachCallsTag) {
  for (const char* knobs : {"", "channels=0,4"}) {
    SCOPED_TRACE(std::string("knobs: ") + knobs);
    OverriddenOnline online("greedy:n0=1");
    EnvVar knob_env("NCCLBOT_KNOBS", knobs);
    const std::string dir = temp_dir(), log = dir + "/symmetric.log";
    EnvVar log_env("NCCLBOT_LOG", log);
    int symmetric = 0;
    {
      StandInNccl comm(kNccl231, 0x5e20, 8, 1);
      OverriddenShare share{20};
      comm.run_instead([&](int pick, const CostTable7x3& t) {
        return share(pick, t) == pick ? pick : kStandInSymmetricArm;
      });
      comm.user_tags([](uint64_t seq) { return 1000 + seq; });
      for (int arm : overridden_run(comm, 1000)) symmetric += arm == kStandInSymmetricArm;
      EXPECT_EQ(comm.failures(), 0);
    }
    ASSERT_GT(symmetric, 100);
    const ncclbot::DecisionLogData data = ncclbot::read_decision_logs({log});
    ASSERT_EQ(data.files.size(), 1u);
    EXPECT_EQ(data.files[0].version, 5u);
    EXPECT_EQ(data.files[0].symmetric, size_t(symmetric));
    EXPECT_EQ(data.files[0].overridden, size_t(symmetric));
    ASSERT_EQ(data.calls.size(), size_t(1000 - symmetric));
    for (const auto& r : data.calls) {
      EXPECT_EQ(r.user_tag, 1000 + r.call_index) << r.call_index;
      EXPECT_FALSE(r.symmetric);
    }
    const CliResult tel = run_cli("telemetry '" + log + "' --out '" + dir + "/report' --no-figures");
    ASSERT_EQ(tel.exit_code, 0) << tel.err;
    const auto t = nlohmann::json::parse(read_all(dir + "/report/telemetry.json"));
    EXPECT_EQ(t["symmetric_calls"], symmetric);
    EXPECT_EQ(t["overridden_calls"], symmetric);
    if (*knobs != '\0') continue;  // ope estimates over slot logs only
    const CliResult ope = run_cli("ope --log '" + log + "' --policy auto --json");
    ASSERT_EQ(ope.exit_code, 0) << ope.err;
    const auto j = nlohmann::json::parse(ope.out);
    EXPECT_EQ(j["symmetric_calls"], symmetric);
    EXPECT_EQ(j["calls"], 1000 - symmetric);
    EXPECT_NE(ope.err.find("(" + std::to_string(symmetric) + " of them one of NCCL's symmetric kernels)"),
              std::string::npos)
        << ope.err;
  }
}
