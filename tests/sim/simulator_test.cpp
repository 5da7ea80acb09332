// The simulator: determinism in the seed, the prior is the cost model's prediction, the CSV round
// trip, the noise model's statistics, and each hidden mechanism against its formula.
#include "ncclbot/sim/simulator.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "ncclbot/core/error.hpp"
#include "ncclbot/io/sweep_csv.hpp"
#include "ncclbot/model/cost_model.hpp"
#include "support/run_cli.hpp"

namespace ncclbot::sim {
namespace {

SynthOptions small_options(uint64_t seed) {
  SynthOptions o;
  o.seed = seed;
  o.nodes = {2, 16};
  o.min_bytes = 1024;
  o.max_bytes = 1 << 24;
  o.samples = 3;
  return o;
}

TEST(Simulator, DeterministicInTheSeed) {
  const FabricPreset f = load_fabric("h100-ib-a");
  const Sweep a = synthesize(f, small_options(7));
  const Sweep b = synthesize(f, small_options(7));
  const Sweep c = synthesize(f, small_options(8));
  EXPECT_TRUE(a.identical_to(b));
  EXPECT_FALSE(a.identical_to(c));
  // 3 collectives x 2 node counts x 15 sizes (2^10 .. 2^24)
  EXPECT_EQ(a.num_contexts(), 3 * 2 * 15);
}

TEST(Simulator, PriorIsTheCostModelAndMaskItsValidArms) {
  const FabricPreset f = load_fabric("h100-ib-a");
  const Sweep s = synthesize(f, small_options(1));
  ASSERT_TRUE(s.has_prior());
  const SweepView v = s.view();
  for (int c = 0; c < s.num_contexts(); ++c) {
    const Context& ctx = s.context(c);
    const model::CostTable t =
        model::predict(topology_for(f, ctx.nodes, ctx.gpus_per_node), ctx.collective, ctx.bytes);
    EXPECT_EQ(v.mask(c).bits, t.valid().bits);
    for (int a = 0; a < kNumArms; ++a) {
      EXPECT_EQ(v.prior(c, a), a < kNumNcclArms ? t.time_us[a] : -1.0f);  // no HiPIPE unless asked
      if (v.mask(c).has(a))
        for (int r = 0; r < s.samples(); ++r) {
          EXPECT_GT(v.sample(c, a, r), 0.0f);
        }
    }
  }
}

TEST(Simulator, CsvRoundTripIsBitIdentical) {
  const Sweep s = synthesize(load_fabric("gb200-mnnvl"), small_options(3));
  ASSERT_TRUE(s.dynamics().any());  // so the side file is part of the round trip
  const std::string path = test::temp_dir() + "/gb200.csv";
  write_sweep_csv(s, path);
  EXPECT_TRUE(read_sweep_csv(path).identical_to(s));
}

TEST(Simulator, DeviationsStayInTheirRanges) {
  const FabricPreset f = load_fabric("h100-roce");
  for (uint64_t seed : {1u, 2u, 3u, 99u}) {
    const Deviations d = draw_deviations(f, seed);
    EXPECT_GE(d.ll128_bw, f.ll128_bw_scale.lo);
    EXPECT_LE(d.ll128_bw, f.ll128_bw_scale.hi);
    EXPECT_GE(d.tree_congestion, f.tree_congestion.lo);
    EXPECT_LE(d.tree_congestion, f.tree_congestion.hi);
    EXPECT_GE(d.slow_slice_log2, f.slow_path_slice_log2.lo);
    EXPECT_LE(d.slow_slice_log2, f.slow_path_slice_log2.hi);
    for (int s = 0; s < kNumArms; ++s) EXPECT_LE(std::abs(d.cap_error[s]), f.channel_cap_error.hi);
  }
}

// A preset with every hidden deviation off and unit calibration: the truth is the model.
FabricPreset plain(const char* name) {
  FabricPreset f = load_fabric(name);
  f.ring_bw_scale_one_node = f.ring_bw_scale_multi_node = f.nvls_bw_scale = f.nvls_tree_bw_scale = 1.0;
  f.channel_cap_error = f.latency_error = Range{0, 0};
  f.ll_bw_scale = f.ll128_bw_scale = f.ll128_lat_scale = Range{1, 1};
  f.tree_congestion = f.nvls_tree_overhead_us = f.nvls_tree_bw_loss = Range{0, 0};
  f.slow_path_bw_factor = Range{1, 1};
  return f;
}

TEST(SimulatorMechanisms, WithoutDeviationsTheTruthIsTheModel) {
  const FabricPreset f = plain("h100-ib-a");
  const Deviations d = draw_deviations(f, 5);
  for (int hosts : {1, 2, 16})
    for (uint64_t b : {uint64_t(8), uint64_t(1) << 20, uint64_t(1) << 33}) {
      const Context ctx{f.name, Collective::kAllReduce, hosts, 8, b};
      const model::CostTable t = model::predict(topology_for(f, hosts, 8), ctx.collective, b);
      for (int s = 0; s < kNumNcclArms; ++s)
        if (t.time_us[s] >= 0.0f) {
          EXPECT_NEAR(true_time_us(f, d, ctx, s), t.time_us[s], 1e-3 * t.time_us[s]);
        }
    }
}

TEST(SimulatorMechanisms, TreeCongestionFromSixteenNodes) {
  FabricPreset f = plain("h100-ib-a");
  f.tree_congestion = Range{0.5, 0.5};
  f.tree_congestion_from = 16;
  const Deviations d = draw_deviations(f, 1);
  const int slot = arm_slot(Algo::kTree, Proto::kSimple);
  const uint64_t b = uint64_t(1) << 30;  // no tree correction at 1 GiB
  for (int hosts : {8, 16, 32}) {
    const model::ArmCost k =
        model::arm_cost(topology_for(f, hosts, 8), Collective::kAllReduce, Algo::kTree, Proto::kSimple, b);
    // bandwidth / (1 + 0.5 * (log2(nodes / 16) + 1)): 8 nodes x1, 16 nodes /1.5, 32 nodes /2
    const double div = hosts < 16 ? 1.0 : 1.0 + 0.5 * (std::log2(hosts / 16.0) + 1.0);
    const double want = k.latency_us + double(b) * div / (1000.0 * k.alg_bw);
    EXPECT_NEAR(true_time_us(f, d, Context{f.name, Collective::kAllReduce, hosts, 8, b}, slot), want,
                1e-6 * want);
  }
}

TEST(SimulatorMechanisms, SlowPathFollowsTheSliceSize) {
  FabricPreset f = plain("h100-ib-a");
  f.slow_path_proto = "LL128";
  f.slow_path_slice_log2 = Range{12.0, 12.0};
  f.slow_path_width_log2 = 1.0;
  f.slow_path_bw_factor = Range{0.25, 0.25};
  f.slow_path_from_nodes = 2;
  const Deviations d = draw_deviations(f, 1);
  const Deviations none = draw_deviations(plain("h100-ib-a"), 1);
  const int ll128 = arm_slot(Algo::kRing, Proto::kLL128);
  auto ratio = [&](int hosts, uint64_t b) {
    const Context ctx{f.name, Collective::kAllGather, hosts, 8, b};
    return true_time_us(f, d, ctx, ll128) / true_time_us(plain("h100-ib-a"), none, ctx, ll128);
  };
  // slice = bytes / (ranks x 16 channels) = 2^12: 16 nodes -> 2^12 * 128 * 16 = 8 MiB; 32 nodes -> 16 MiB
  EXPECT_NEAR(ratio(16, 8u << 20), 4.0, 1e-9);
  EXPECT_NEAR(ratio(16, 16u << 20), 1.0, 1e-9);
  EXPECT_NEAR(ratio(32, 16u << 20), 4.0, 1e-9);
  EXPECT_NEAR(ratio(32, 8u << 20), 1.0, 1e-9);
  EXPECT_NEAR(ratio(1, 1u << 20), 1.0, 1e-9);  // one node: below slow_path_from_nodes
  // Other protocols are untouched.
  const Context ctx{f.name, Collective::kAllGather, 16, 8, 8u << 20};
  const int simple = arm_slot(Algo::kRing, Proto::kSimple);
  EXPECT_EQ(true_time_us(f, d, ctx, simple), true_time_us(plain("h100-ib-a"), none, ctx, simple));
}

TEST(SimulatorMechanisms, Ll128OnRoceIsSlowerAcrossNodesOnly) {
  FabricPreset f = plain("h100-roce");
  f.ll128_bw_scale = Range{0.6, 0.6};
  f.ll128_lat_scale = Range{1.5, 1.5};
  const Deviations d = draw_deviations(f, 1);
  const uint64_t b = 1 << 20;
  const model::ArmCost k =
      model::arm_cost(topology_for(f, 4, 8), Collective::kAllReduce, Algo::kRing, Proto::kLL128, b);
  const double want = 1.5 * k.latency_us + double(b) / (1000.0 * 0.6 * k.alg_bw);
  EXPECT_NEAR(true_time_us(f, d, Context{f.name, Collective::kAllReduce, 4, 8, b},
                           arm_slot(Algo::kRing, Proto::kLL128)),
              want, 1e-6 * want);
  const model::ArmCost one =
      model::arm_cost(topology_for(f, 1, 8), Collective::kAllReduce, Algo::kRing, Proto::kLL128, b);
  EXPECT_NEAR(true_time_us(f, d, Context{f.name, Collective::kAllReduce, 1, 8, b},
                           arm_slot(Algo::kRing, Proto::kLL128)),
              one.latency_us + double(b) / (1000.0 * one.alg_bw), 1e-3);
}

// The [noise]-only model (the preset's observation model switched off).
TEST(SimulatorNoise, LogNormalSpreadShrinksWithSizeAndOutliersAreRare) {
  FabricPreset f = load_fabric("h100-ib-a");
  f.observation.enabled = false;
  f.outlier_prob = 0.0;
  const int n = 20000;
  auto log_sd = [&](uint64_t bytes) {
    const Context ctx{f.name, Collective::kAllReduce, 2, 8, bytes};
    double s = 0, s2 = 0;
    for (int r = 0; r < n; ++r) {
      const double x = std::log(sample_time_us(f, 11, ctx, 0, r, 100.0) / 100.0);
      s += x;
      s2 += x * x;
    }
    const double mean = s / n;
    EXPECT_NEAR(mean, 0.0, 4.0 * std::sqrt(s2 / n) / std::sqrt(double(n)));  // median = truth
    return std::sqrt(s2 / n - mean * mean);
  };
  // sigma = sigma_large + sigma_small / (1 + bytes / small_bytes): 8 B ~0.033, 1 GiB ~0.008
  const double want_small = f.sigma_large + f.sigma_small / (1.0 + 8.0 / f.small_bytes);
  const double want_large = f.sigma_large + f.sigma_small / (1.0 + double(1 << 30) / f.small_bytes);
  EXPECT_NEAR(log_sd(8), want_small, 0.05 * want_small);
  EXPECT_NEAR(log_sd(1 << 30), want_large, 0.05 * want_large);

  // Outliers: probability p, every one slows the sample (factor > 1).
  FabricPreset g = load_fabric("h100-ib-a");
  g.observation.enabled = false;
  g.sigma_large = g.sigma_small = 0.0;
  g.outlier_prob = 0.01;
  int slow = 0;
  const Context ctx{g.name, Collective::kAllReduce, 2, 8, 1 << 20};
  for (int r = 0; r < n; ++r) slow += sample_time_us(g, 12, ctx, 3, r, 50.0) > 50.0 ? 1 : 0;
  // binomial(20000, 0.01): mean 200, sd 14; 5 sd
  EXPECT_NEAR(slow, 200, 70);
}

TEST(Simulator, BadOptionsAreUsageErrors) {
  const FabricPreset f = load_fabric("gb200-mnnvl");
  SynthOptions o;
  o.nodes = {20};  // 20 trays do not fill whole NVL72 racks
  EXPECT_THROW(synthesize(f, o), UsageError);
  o.nodes = {2};
  o.samples = 0;
  EXPECT_THROW(synthesize(f, o), UsageError);
  o.samples = 2;
  o.min_bytes = 1024;
  o.max_bytes = 8;
  EXPECT_THROW(synthesize(f, o), UsageError);
}

TEST(Simulator, DefaultSweepIsTheBuiltInH100Study) {
  const Sweep s = default_sweep();
  // 3 collectives x 6 node counts (1..32) x 31 sizes (8 B .. 8 GiB)
  EXPECT_EQ(s.num_contexts(), 3 * 6 * 31);
  EXPECT_EQ(s.samples(), 5);
  EXPECT_TRUE(s.has_prior());
  EXPECT_EQ(s.context(0).fabric, "h100-ib-a");
  EXPECT_TRUE(s.identical_to(default_sweep()));
}

}  // namespace
}  // namespace ncclbot::sim
