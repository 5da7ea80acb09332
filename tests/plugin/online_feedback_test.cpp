// Online mode end to end through the C ABI: decisions come from the shared policy headers, and
// measured latencies come back through the profiler (max over channels of stop - start) or the
// report function and change later decisions. Expected decisions follow from greedy's rule by
// hand (policy/greedy.hpp: with n0 = 0, untried arms in slot order first, then the smallest mean).
#include <gtest/gtest.h>

#include <cstring>

#include "plugin/plugin_loader.hpp"
#include "support/run_cli.hpp"

using namespace ncclbot::test;

namespace {

// Two usable arms: Tree/LL (slot 0, NCCL's cost 10) and Ring/Simple (slot 5, cost 20).

struct OnlineComm {
  uint64_t id;
  void* tuner = nullptr;
  void* prof = nullptr;
  OnlineComm(uint64_t comm_id, size_t nranks = 1) : id(comm_id) {
    int mask = 0;
    plugin().prof5->init(&prof, id, &mask, "test", 1, int(nranks), 0,
                         recording_logger);  // NCCL inits it first
    plugin().v5->init(&tuner, id, nranks, 1, recording_logger, nullptr, nullptr);
  }
  ~OnlineComm() {
    plugin().v5->finalize(tuner);
    plugin().prof5->finalize(prof);
  }
  int decide(size_t bytes = 1 << 20, int coll = 4) {
    CostTable7x3 t = two_arms();
    plugin().v5->getCollInfo(tuner, coll, bytes, 1, t.ptr(), 7, 3, 0, nullptr);
    return t.pick();
  }
  // One collective as NCCL's profiler reports it: Coll start, then per channel a KernelCh start
  // (pTimer = start) and stop state (pTimer = stop), with the Coll stopped ("enqueued") in between.
  // `bytes` is per rank (count x type size), as the profiler descriptor carries it.
  void run(int slot, const std::vector<std::pair<uint64_t, uint64_t>>& channels, size_t bytes = 1 << 20,
           const char* func = "AllReduce", const char* dtype = "ncclFloat32", size_t type_size = 4) {
    static const char* kAlgo[] = {"Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"};
    static const char* kProto[] = {"LL", "LL128", "Simple"};
    NcclProfilerEventDescrV5 d;
    std::memset(&d, 0, sizeof d);
    d.type = kNcclProfileColl;
    d.coll.func = func;
    d.coll.count = bytes / type_size;
    d.coll.datatype = dtype;
    d.coll.nChannels = uint8_t(channels.size());
    d.coll.algo = kAlgo[slot / 3];
    d.coll.proto = kProto[slot % 3];
    void* coll = nullptr;
    plugin().prof5->startEvent(prof, &coll, &d);
    ASSERT_NE(coll, nullptr);
    plugin().prof5->stopEvent(coll);
    for (size_t c = 0; c < channels.size(); ++c) {
      NcclProfilerEventDescrV5 k;
      std::memset(&k, 0, sizeof k);
      k.type = kNcclProfileKernelCh;
      k.parentObj = coll;
      k.kernelCh.channelId = uint8_t(c);
      k.kernelCh.pTimer = channels[c].first;
      void* ch = nullptr;
      plugin().prof5->startEvent(prof, &ch, &k);
      NcclProfilerEventStateArgs args;
      args.kernelCh.pTimer = channels[c].second;
      plugin().prof5->recordEventState(ch, kNcclProfilerKernelChStop, &args);
      plugin().prof5->stopEvent(ch);
    }
  }
};

}  // namespace

TEST(OnlineFeedback, ProfilerLatencyIsTheSlowestChannel) {
  EnvVar mode("NCCLBOT_MODE", "online"), policy("NCCLBOT_POLICY", "greedy:n0=0");
  OnlineComm comm(101);
  EXPECT_EQ(comm.decide(), 0);  // untried arms in slot order
  // Tree/LL: channels took 3 us and 9 us -> the collective took 9 us.
  comm.run(0, {{1000, 4000}, {1000, 10000}});
  EXPECT_EQ(comm.decide(), 5);
  comm.run(5, {{50000, 58000}});  // Ring/Simple: 8 us
  // Means: slot 0 = 9, slot 5 = 8 -> greedy plays slot 5. With the minimum over channels (3 us)
  // or the first channel only (3 us) it would play slot 0.
  EXPECT_EQ(comm.decide(), 5);
  EXPECT_EQ(comm.decide(), 5);
}

TEST(OnlineFeedback, AllGatherBytesAreScaledByRanksToJoinTheTunerContext) {
  EnvVar mode("NCCLBOT_MODE", "online"), policy("NCCLBOT_POLICY", "greedy:n0=0"),
      agree("NCCLBOT_AGREEMENT", "local");
  OnlineComm comm(102, 4);
  // The profiler reports count per rank: 65536 floats x 4 ranks x 4 bytes = 1 MiB as the tuner saw it.
  EXPECT_EQ(comm.decide(1 << 20, 2), 0);
  comm.run(0, {{0, 30000}}, (1 << 20) / 4, "AllGather");
  EXPECT_EQ(comm.decide(1 << 20, 2), 5);  // slot 0 was observed: the join worked
  comm.run(5, {{0, 20000}}, (1 << 20) / 4, "AllGather");
  EXPECT_EQ(comm.decide(1 << 20, 2), 5);
  comm.run(5, {{0, 90000}}, (1 << 20) / 4, "AllGather");  // mean of slot 5 -> 55 > 30
  EXPECT_EQ(comm.decide(1 << 20, 2), 0);
}

// Profiler v6 (NCCL 2.29): the kernel-channel path as in v5, and copy-engine collectives, which NCCL
// runs without asking the tuner, counted in the finalize line and never learned from.
TEST(OnlineFeedback, ProfilerV6LearnsFromKernelsAndCountsCopyEngineCollectives) {
  ASSERT_NE(plugin().prof6, nullptr);
  EnvVar mode("NCCLBOT_MODE", "online"), policy("NCCLBOT_POLICY", "greedy:n0=0");
  clear_log();
  void* prof = nullptr;
  void* tuner = nullptr;
  int mask = 0;
  ASSERT_EQ(plugin().prof6->init(&prof, 106, &mask, "v6", 1, 1, 0, recording_logger), kNcclSuccess);
  EXPECT_EQ(uint64_t(mask),
            kNcclProfileColl | kNcclProfileKernelCh | kNcclProfileCollApi | kNcclProfileCeColl);
  ASSERT_EQ(plugin().v6->init(&tuner, 106, 1, 1, recording_logger, nullptr, nullptr), kNcclSuccess);
  CostTable7x3 t = two_arms();
  plugin().v6->getCollInfo(tuner, 4, 1 << 20, 1, t.ptr(), 7, 3, 0, nullptr);
  EXPECT_EQ(t.pick(), 0);           // untried arms in slot order
  for (int ce = 0; ce < 3; ++ce) {  // a copy-engine AllGather: no handle, nothing learned
    NcclProfilerEventDescrV6 d;
    std::memset(&d, 0, sizeof d);
    d.type = kNcclProfileCeColl;
    d.ceColl.func = "AllGather";
    d.ceColl.count = 1024;
    d.ceColl.datatype = "ncclFloat32";
    void* h = reinterpret_cast<void*>(1);
    EXPECT_EQ(plugin().prof6->startEvent(prof, &h, &d), kNcclSuccess);
    EXPECT_EQ(h, nullptr);
    EXPECT_EQ(plugin().prof6->stopEvent(h), kNcclSuccess);
  }
  // The Tree/LL AllReduce the tuner decided, through the v6 descriptor: 3 us on its one channel.
  NcclProfilerEventDescrV6 d;
  std::memset(&d, 0, sizeof d);
  d.type = kNcclProfileColl;
  d.coll.func = "AllReduce";
  d.coll.count = (1 << 20) / 4;
  d.coll.datatype = "ncclFloat32";
  d.coll.nChannels = 1;
  d.coll.algo = "Tree";
  d.coll.proto = "LL";
  void* coll = nullptr;
  plugin().prof6->startEvent(prof, &coll, &d);
  ASSERT_NE(coll, nullptr);
  plugin().prof6->stopEvent(coll);
  ASSERT_TRUE(run_kernel_channel<NcclProfilerEventDescrV6>(*plugin().prof6, prof, coll, 1000, 4000));
  plugin().v6->finalize(tuner);
  plugin().prof6->finalize(prof);
  EXPECT_TRUE(
      logged(kNcclLogInfo,
             "1 latencies delivered, 0 collectives unfinished, 3 copy-engine collectives not learned"));
}

// A process holds several communicators (tensor, data and pipeline groups): each learns on its own.
// Latencies reported for one never move another's decisions, even with the same shape and context.
TEST(OnlineFeedback, SeveralCommunicatorsOfOneProcessLearnSeparately) {
  EnvVar mode("NCCLBOT_MODE", "online"), policy("NCCLBOT_POLICY", "greedy:n0=0"),
      agree("NCCLBOT_AGREEMENT", "local");
  OnlineComm a(111, 4), b(112, 4), c(113, 4);
  EXPECT_EQ(a.decide(4096), 0);
  EXPECT_EQ(b.decide(4096), 0);
  EXPECT_EQ(c.decide(4096), 0);
  // Only a hears that Tree/LL (slot 0) is slow and Ring/Simple fast; b that Tree/LL is fast.
  EXPECT_EQ(plugin().report(111, 4, 1, 4, 4096, 0, 0, 90.0), 0);
  EXPECT_EQ(plugin().report(112, 4, 1, 4, 4096, 0, 0, 5.0), 0);
  EXPECT_EQ(a.decide(4096), 5);  // a tries its untried arm
  EXPECT_EQ(plugin().report(111, 4, 1, 4, 4096, 1, 2, 20.0), 0);
  EXPECT_EQ(b.decide(4096), 5);  // b too has an untried arm
  EXPECT_EQ(plugin().report(112, 4, 1, 4, 4096, 1, 2, 50.0), 0);
  EXPECT_EQ(a.decide(4096), 5);  // a: 20 < 90
  EXPECT_EQ(b.decide(4096), 0);  // b: 5 < 50
  EXPECT_EQ(c.decide(4096), 5);  // c heard nothing: its own untried arm, as at the start
}

TEST(OnlineFeedback, ReportFunctionFeedsTheSameContext) {
  EnvVar mode("NCCLBOT_MODE", "online"), policy("NCCLBOT_POLICY", "greedy:n0=0");
  OnlineComm comm(103);
  EXPECT_EQ(comm.decide(4096), 0);
  EXPECT_EQ(plugin().report(103, 1, 1, 4, 4096, 0, 0, 50.0), 0);
  EXPECT_EQ(comm.decide(4096), 5);
  EXPECT_EQ(plugin().report(103, 1, 1, 4, 4096, 1, 2, 40.0), 0);
  EXPECT_EQ(comm.decide(4096), 5);
  // Unknown communicator, context or arm: not joined.
  EXPECT_EQ(plugin().report(999, 1, 1, 4, 4096, 0, 0, 5.0), 1);
  EXPECT_EQ(plugin().report(103, 1, 1, 3, 4096, 0, 0, 5.0), 1);
  EXPECT_EQ(plugin().report(103, 1, 1, 4, 4096, 6, 2, 5.0), 1);
  EXPECT_EQ(plugin().report(103, 1, 1, 4, 4096, 0, 0, -1.0), 1);
}

TEST(OnlineFeedback, PriorIsNcclsCostTable) {
  // greedy with a large pseudo-count plays the prior's argmin (NCCL's own choice) at the start.
  EnvVar mode("NCCLBOT_MODE", "online"), policy("NCCLBOT_POLICY", "greedy:n0=100");
  OnlineComm comm(104);
  EXPECT_EQ(comm.decide(), 0);  // prior 10 < 20
  for (int i = 0; i < 5; ++i) EXPECT_EQ(plugin().report(104, 1, 1, 4, 1 << 20, 0, 0, 1000.0), 0);
  // mean of slot 0 = (100*10 + 5*1000)/105 = 57.1 > 20 -> switches to slot 5.
  EXPECT_EQ(comm.decide(), 5);
}

TEST(OnlineFeedback, ManyRanksWithoutLeaderPassThroughWithAWarning) {
  EnvVar mode("NCCLBOT_MODE", "online"), policy("NCCLBOT_POLICY", "greedy:n0=0");
  clear_log();
  OnlineComm comm(105, 8);
  EXPECT_TRUE(logged(kNcclLogWarn, "needs NCCLBOT_LEADER"));
  CostTable7x3 t = two_arms();
  t.t[0][0] = 30.0f;  // NCCL prefers slot 5 now
  plugin().v5->getCollInfo(comm.tuner, 4, 1 << 20, 1, t.ptr(), 7, 3, 0, nullptr);
  EXPECT_EQ(t.t[0][0], 30.0f);
  EXPECT_EQ(t.t[1][2], 20.0f);
}

TEST(OnlineFeedback, BadPolicySpecWarnsAndPassesThrough) {
  EnvVar mode("NCCLBOT_MODE", "online"), policy("NCCLBOT_POLICY", "ucb1:c=0.5|1");
  clear_log();
  OnlineComm comm(106);
  EXPECT_TRUE(logged(kNcclLogWarn, "NCCLBOT_POLICY"));
  CostTable7x3 t = two_arms();
  plugin().v5->getCollInfo(comm.tuner, 4, 1 << 20, 1, t.ptr(), 7, 3, 0, nullptr);
  EXPECT_EQ(t.t[0][0], 10.0f);
}
