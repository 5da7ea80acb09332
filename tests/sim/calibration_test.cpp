// The simulator against real measurements (docs/simulator.md "Calibration targets": each target with
// its public source, also named per check below), with the tolerances stated per check (+-10% on
// plateaus). busbw is computed as nccl-tests does: algbw = size / time, busbw = algbw x 2(n-1)/n for
// all_reduce and (n-1)/n for all_gather / reduce_scatter. Ground truth is noise-free at the default seed.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ncclbot/model/cost_model.hpp"
#include "ncclbot/sim/simulator.hpp"
#include "support/shared_logs.hpp"

namespace ncclbot::sim {
namespace {

constexpr Collective kAR = Collective::kAllReduce;
constexpr Collective kAG = Collective::kAllGather;
constexpr Collective kRS = Collective::kReduceScatter;

double bus_factor(Collective c, int ranks) {
  return c == kAR ? 2.0 * (ranks - 1) / ranks : double(ranks - 1) / ranks;
}

struct Sim {
  FabricPreset f;
  Deviations d;
  explicit Sim(const char* name) : f(load_fabric(name)), d(draw_deviations(f, kDefaultSeed)) {}

  double time(Collective c, int hosts, uint64_t bytes, int slot) const {
    return true_time_us(f, d, Context{f.name, c, hosts, f.gpus_per_host, bytes}, slot);
  }
  double busbw(Collective c, int hosts, uint64_t bytes, int slot) const {
    const int ranks = hosts * f.gpus_per_host;
    return double(bytes) / (time(c, hosts, bytes, slot) * 1000.0) * bus_factor(c, ranks);
  }
  model::CostTable prior(Collective c, int hosts, uint64_t bytes) const {
    return model::predict(topology_for(f, hosts, f.gpus_per_host), c, bytes);
  }
  // NCCL_ALGO=RING: the protocol is still the model's choice among Ring's.
  int ring_forced(Collective c, int hosts, uint64_t bytes) const {
    const model::CostTable t = prior(c, hosts, bytes);
    ArmMask ring;
    for (int p = 0; p < kNumProtos; ++p) ring.set(arm_slot(Algo::kRing, Proto(p)));
    return nccl_argmin(ring, [&](int s) { return t.time_us[s]; });
  }
  double best_busbw(Collective c, int hosts, uint64_t bytes) const {
    double best = 0.0;
    for (int s = 0; s < kNumArms; ++s) {
      const double t = time(c, hosts, bytes, s);
      if (std::isfinite(t)) best = std::max(best, busbw(c, hosts, bytes, s));
    }
    return best;
  }
  double min_time(Collective c, int hosts, uint64_t bytes) const {
    double best = INFINITY;
    for (int s = 0; s < kNumArms; ++s) {
      const double t = time(c, hosts, bytes, s);
      if (std::isfinite(t)) best = std::min(best, t);
    }
    return best;
  }
};

const int kRingSimple = arm_slot(Algo::kRing, Proto::kSimple);
const int kNvls = arm_slot(Algo::kNvls, Proto::kSimple);

TEST(Calibration, H100OneNodeRingAndNvlsPlateaus) {
  const Sim s("h100-ib-a");
  for (uint64_t b : {uint64_t(4) << 30, uint64_t(8) << 30}) {
    // together-nccl-tests 1x8 forced Ring: 366.7 at 4 GiB, 368.1 at 8 GiB; target ~368 +-10%
    EXPECT_NEAR(s.busbw(kAR, 1, b, kRingSimple), 368.0, 36.8) << b;
    // NVLS on 1x8: 479 GB/s (together 20260306; nccl #1455); target ~480 +-10%
    EXPECT_NEAR(s.busbw(kAR, 1, b, kNvls), 480.0, 48.0) << b;
  }
}

TEST(Calibration, H100MultiNodeAllReduceOnIb) {
  const Sim s("h100-ib-a");
  // 8x400G NDR: 46-48 GB/s per NIC = 370-385 GB/s per node (nccl-tests #290; GTC 2024 in nccl #1649);
  // the best arm within [370 x 0.9, 385 x 1.1] at 4 and 8 GiB on 4-16 nodes, and at 8 GiB on 32 nodes
  // (at 4 GiB on 32 nodes the 256-rank ring's latency is still ~13% of the time).
  for (int hosts : {4, 8, 16, 32})
    for (uint64_t b : {uint64_t(4) << 30, uint64_t(8) << 30}) {
      if (hosts == 32 && b < (uint64_t(8) << 30)) continue;
      const double bw = s.best_busbw(kAR, hosts, b);
      EXPECT_GE(bw, 370.0 * 0.9) << hosts << " nodes, " << b << " B";
      EXPECT_LE(bw, 385.0 * 1.1) << hosts << " nodes, " << b << " B";
    }
}

TEST(Calibration, H100RoceMultiNode) {
  const Sim s("h100-roce");
  // RoCE 8x400G: about 320 GB/s at >= 4 nodes (nccl #1221), +-10%
  for (int hosts : {4, 8, 16}) EXPECT_NEAR(s.best_busbw(kAR, hosts, uint64_t(8) << 30), 320.0, 32.0) << hosts;
}

TEST(Calibration, Gb200Nvl72OneRack) {
  const Sim s("gb200-mnnvl");
  // Full rack (18 trays = 72 GPUs): 839 at 4 GiB, 835-847 at 8 GiB (coreweave PR #43); +-10% of 841
  for (uint64_t b : {uint64_t(4) << 30, uint64_t(8) << 30})
    EXPECT_NEAR(s.best_busbw(kAR, 18, b), 841.0, 84.1) << b;
  // Two racks: 820 at 16 GiB (coreweave README), +-10%
  EXPECT_NEAR(s.best_busbw(kAR, 36, uint64_t(16) << 30), 820.0, 82.0);
}

TEST(Calibration, Gb200Nvl4PartitionsOverIb) {
  const Sim s("gb200-ib");
  // NVL4 partitions joined by IB: ring 197 GB/s (nccl #1801), +-10%
  EXPECT_NEAR(s.busbw(kAR, 8, uint64_t(8) << 30, kRingSimple), 197.0, 19.7);
}

TEST(Calibration, SmallMessageLatencyFloors) {
  // Orders of magnitude, not exact values (launch setups differ between sources):
  // H100 1x8: 5.6-6 us with NVLS and CUDA graphs on 2 GPUs (nccl #1259), ~35 us under one-process
  // -g 8 (the together-nccl-tests 1x8 log); the simulated floor must lie in [5, 40] us.
  const Sim h("h100-ib-a");
  const double one = h.min_time(kAR, 1, 8);
  EXPECT_GE(one, 5.0);
  EXPECT_LE(one, 40.0);
  // Across IB the floor grows with log2(nodes) hops of ~5 us (Tree/LL): 2 nodes 20-60 us (H20 2x8
  // NVLSTree: 46-47 us, nccl #1244), 32 nodes below 150 us.
  const double two = h.min_time(kAR, 2, 8);
  EXPECT_GE(two, 20.0);
  EXPECT_LE(two, 60.0);
  EXPECT_LE(h.min_time(kAR, 32, 8), 150.0);
  EXPECT_GT(h.min_time(kAR, 32, 8), two);
  // GB200 4 GPUs: under 8 us up to 1 KiB (nccl-tests #333, with 2.27 symmetric kernels that the
  // 2.28 model does not price): within a factor 2, [4, 16] us.
  const Sim g("gb200-ib");
  EXPECT_GE(g.min_time(kAR, 1, 1024), 4.0);
  EXPECT_LE(g.min_time(kAR, 1, 1024), 16.0);
}

// --- Shape against the real logs in $NCCLBOT_SHARED_DIR/data/nccl-tests (third-party, beside the clone
// by default); each test skips, saying where it looked, when they are absent.

struct LogRow {
  uint64_t bytes;
  double time_us, busbw;
};

// Runs of 13-column data rows (out-of-place time and busbw); a new run starts at a
// "# Collective test starting" line or when the size does not grow.
std::vector<std::vector<LogRow>> read_runs(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::vector<std::vector<LogRow>> runs(1);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("# Collective test starting", 0) == 0) {
      if (!runs.back().empty()) runs.emplace_back();
      continue;
    }
    std::istringstream ss(line);
    std::vector<std::string> f;
    for (std::string w; ss >> w;) f.push_back(w);
    if (f.size() != 13 || f[0].find_first_not_of("0123456789") != std::string::npos) continue;
    const LogRow r{std::stoull(f[0]), std::stod(f[5]), std::stod(f[7])};
    if (!runs.back().empty() && r.bytes <= runs.back().back().bytes) runs.emplace_back();
    runs.back().push_back(r);
  }
  if (runs.back().empty()) runs.pop_back();
  return runs;
}

const std::string kRingLog = "h100_1node_8gpu_allreduce_ring_forced_8B-8G.txt";
const std::string kTenNodeLog = "h100_10node_80gpu_5collectives_auto_32M-16G.txt";
const std::string kGb200Log = "gb200_nvl72_1rack_2rack_20rack_allreduce_auto_README_excerpt_TRUNCATED.txt";

TEST(CalibrationShape, H100OneNodeForcedRingLog) {
  NCCLBOT_SKIP_WITHOUT_SHARED_LOGS(kRingLog);
  const auto runs = read_runs(ncclbot::test::shared_logs_dir() + kRingLog);
  ASSERT_EQ(runs.size(), 1u);
  ASSERT_EQ(runs[0].size(), 31u);
  const Sim s("h100-ib-a");
  const LogRow& last = runs[0].back();
  const double sim_peak = s.busbw(kAR, 1, last.bytes, s.ring_forced(kAR, 1, last.bytes));
  EXPECT_NEAR(sim_peak, last.busbw, 0.10 * last.busbw);
  // Normalised busbw (by the 8 GiB value) within 0.15 from 1 MiB up: the rise through the protocol
  // switches and the approach to the plateau. Below 1 MiB the log's floor is the one-process -g 8
  // launch overhead (~35 us), which a one-process-per-GPU model does not have.
  for (const LogRow& r : runs[0]) {
    if (r.bytes < (1u << 20)) continue;
    const double sim = s.busbw(kAR, 1, r.bytes, s.ring_forced(kAR, 1, r.bytes)) / sim_peak;
    EXPECT_NEAR(sim, r.busbw / last.busbw, 0.15) << r.bytes << " B";
  }
  // Small sizes: latency-bound in both (busbw grows ~2x per doubling); the real floor is within 3x.
  const double t8 = s.time(kAR, 1, 8, s.ring_forced(kAR, 1, 8));
  EXPECT_GT(runs[0][0].time_us, t8);
  EXPECT_LT(runs[0][0].time_us, 3.0 * t8);
}

TEST(CalibrationShape, H100TenNodesThreeCollectivesLog) {
  // 10 x 8 H100 on IB (xxrjun/nccl-tests-cluster), 32 MiB - 16 GiB: all_reduce, all_gather,
  // reduce_scatter, alltoall, sendrecv. The first three are compared with the simulator's Ring
  // curve (the curve shapes are ring-like: ~0.7-0.8 ms at 32 MiB) on h100-ib-a at 10 nodes.
  NCCLBOT_SKIP_WITHOUT_SHARED_LOGS(kTenNodeLog);
  const auto runs = read_runs(ncclbot::test::shared_logs_dir() + kTenNodeLog);
  ASSERT_EQ(runs.size(), 5u);
  const Sim s("h100-ib-a");
  const Collective colls[3] = {kAR, kAG, kRS};
  for (int k = 0; k < 3; ++k) {
    const Collective c = colls[k];
    const auto& run = runs[size_t(k)];
    ASSERT_EQ(run.size(), 10u);
    const LogRow& ref = run[8];  // ~8 GiB
    const double sim_ref = s.busbw(c, 10, ref.bytes, s.ring_forced(c, 10, ref.bytes));
    // This cluster plateaus at 316-324 GB/s, below h100-ib-a's 370-385: within 20%.
    EXPECT_NEAR(sim_ref, ref.busbw, 0.20 * ref.busbw) << k;
    // Shape: busbw normalised by each curve's peak within 0.25 at every size (the real curves are
    // bumpy: all_reduce peaks at 1 GiB, then settles 9% lower), and both rise >= 3x from 32 MiB.
    double real_peak = 0.0, sim_peak = 0.0;
    std::vector<double> sim(run.size());
    for (size_t i = 0; i < run.size(); ++i) {
      sim[i] = s.busbw(c, 10, run[i].bytes, s.ring_forced(c, 10, run[i].bytes));
      real_peak = std::max(real_peak, run[i].busbw);
      sim_peak = std::max(sim_peak, sim[i]);
    }
    for (size_t i = 0; i < run.size(); ++i)
      EXPECT_NEAR(sim[i] / sim_peak, run[i].busbw / real_peak, 0.25)
          << "collective " << k << ", " << run[i].bytes;
    EXPECT_GE(real_peak / run[0].busbw, 3.0);
    EXPECT_GE(sim_peak / sim[0], 3.0);
  }
}

TEST(CalibrationShape, Gb200OneRackLog) {
  // coreweave GB200 NVL72 excerpt: first block is one rack (72 GPUs), 512 MiB - 8 GiB, auto.
  NCCLBOT_SKIP_WITHOUT_SHARED_LOGS(kGb200Log);
  const auto runs = read_runs(ncclbot::test::shared_logs_dir() + kGb200Log);
  ASSERT_GE(runs.size(), 1u);
  const Sim s("gb200-mnnvl");
  for (const LogRow& r : runs[0]) {
    // Rising to the plateau: the simulator's best arm lies between the measured value and 1.6x it
    // (the real curve approaches its plateau more slowly than NCCL's latency terms suggest).
    const double sim = s.best_busbw(kAR, 18, r.bytes);
    EXPECT_GE(sim, 0.9 * r.busbw) << r.bytes;
    EXPECT_LE(sim, 1.6 * r.busbw) << r.bytes;
  }
}

}  // namespace
}  // namespace ncclbot::sim
