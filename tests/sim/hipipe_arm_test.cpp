// The simulated HiPIPE arm (hipipe/simulated_arm.hpp): added by `hipipe = true` only to all-reduce
// contexts of >= 2 hosts whose job spans >= 2 network dimensions on fabrics with a [hipipe] table;
// its truth is HiPIPE's makespan on the simulator's measured bandwidths plus NCCL's Ring/Simple
// base latency and the launch overhead, sampled with the common noise model; its prior is the same
// model on the nominal bandwidths. Expected values are built here from the numbers written in the
// preset files, not read back from the code under test.
#include "ncclbot/hipipe/simulated_arm.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ncclbot/core/error.hpp"
#include "ncclbot/hipipe/predicted_time.hpp"
#include "ncclbot/sim/simulator.hpp"
#include "support/run_cli.hpp"

namespace ncclbot::sim {
namespace {

SynthOptions small(bool hipipe) {
  SynthOptions o;
  o.seed = 11;
  o.nodes = {1, 2, 4};
  o.collectives = {Collective::kAllReduce, Collective::kAllGather};
  o.min_bytes = uint64_t(1) << 16;
  o.max_bytes = uint64_t(1) << 24;
  o.samples = 3;
  o.hipipe = hipipe;
  return o;
}

// data/fabrics/h100-ib-a.toml: nvlink_bw 370.8 (stored as float), ring_bw_scale_one_node 0.9935,
// nic_bw 48 with one NIC per GPU, [hipipe] nic_bw_scale 0.984, launch_overhead_us 0; NCCL's
// Ring/Simple base latency is 8.4 us (tuning.cc baseLat).
hipipe::FabricPreset h100_ib_a(bool truth) {
  hipipe::FabricPreset h = hipipe::load_fabric_preset("h100-ib-a");
  EXPECT_EQ(h.dimensions.size(), 2u);
  h.dimensions[0].bandwidth_GBps = double(370.8f) * (truth ? 0.9935 : 1.0);
  h.dimensions[1].bandwidth_GBps = 48.0 * (truth ? 0.984 : 1.0);
  return h;
}
constexpr double kBaseUs = 8.4;

TEST(HiPipeArm, OnlyOnMultiNodeAllReduce) {
  const FabricPreset f = load_fabric("h100-ib-a");
  const Sweep s = synthesize(f, small(true));
  const SweepView v = s.view();
  int with_arm = 0;
  for (int c = 0; c < s.num_contexts(); ++c) {
    const Context& ctx = s.context(c);
    const bool expected = ctx.collective == Collective::kAllReduce && ctx.nodes >= 2;
    EXPECT_EQ(v.mask(c).has(kHiPipeSlot), expected) << c;
    EXPECT_FALSE(v.mask(c).has(21));
    EXPECT_FALSE(v.mask(c).has(22));
    with_arm += expected;
  }
  EXPECT_EQ(with_arm, 2 * 9);  // 2 node counts x 9 sizes (2^16 .. 2^24)
}

TEST(HiPipeArm, TruthIsHiPipeOnMeasuredBandwidthsPlusBaseLatencyWithTheCommonNoise) {
  const FabricPreset f = load_fabric("h100-ib-a");
  const SynthOptions o = small(true);
  const Sweep s = synthesize(f, o);
  const SweepView v = s.view();
  const hipipe::FabricPreset measured = h100_ib_a(true), nominal = h100_ib_a(false);
  int checked = 0;
  for (int c = 0; c < s.num_contexts(); ++c) {
    if (!v.mask(c).has(kHiPipeSlot)) continue;
    const Context& ctx = s.context(c);
    const double truth =
        0.0 + kBaseUs +
        hipipe::hipipe_predicted_time_us(measured, ctx.collective, ctx.nodes, ctx.gpus_per_node, ctx.bytes);
    const double prior = kBaseUs + hipipe::hipipe_predicted_time_us(nominal, ctx.collective, ctx.nodes,
                                                                    ctx.gpus_per_node, ctx.bytes);
    EXPECT_NEAR(v.prior(c, kHiPipeSlot), prior, prior * 1e-6) << c;
    for (int r = 0; r < o.samples; ++r) {
      const double expected = sample_time_us(f, o.seed, ctx, kHiPipeSlot, r, truth);
      EXPECT_NEAR(v.sample(c, kHiPipeSlot, r), expected, expected * 1e-6) << c << " sample " << r;
    }
    // The measured NVLink plateau is below the rating and the NIC's too: truth > prior.
    EXPECT_GT(truth, prior);
    ++checked;
  }
  EXPECT_EQ(checked, 18);
}

TEST(HiPipeArm, NcclArmsAreUnchangedByAddingIt) {
  const FabricPreset f = load_fabric("h100-ib-a");
  const Sweep with = synthesize(f, small(true)), without = synthesize(f, small(false));
  ASSERT_EQ(with.num_contexts(), without.num_contexts());
  const SweepView a = with.view(), b = without.view();
  for (int c = 0; c < with.num_contexts(); ++c) {
    EXPECT_EQ(a.mask(c).nccl_arms(), b.mask(c));
    EXPECT_FALSE(b.mask(c).has(kHiPipeSlot));
    for (int s = 0; s < kNumNcclArms; ++s) {
      if (!b.mask(c).has(s)) continue;
      EXPECT_EQ(a.prior(c, s), b.prior(c, s));
      for (int r = 0; r < 3; ++r) EXPECT_EQ(a.sample(c, s, r), b.sample(c, s, r));
    }
  }
}

TEST(HiPipeArm, OneNvlinkDomainIsOneDimensionSoNoArm) {
  // gb200-mnnvl: 4 trays share one NVL72 domain (one dimension: NCCL's ring); 36 trays are two
  // racks (NVLink 72 x IB 2).
  const FabricPreset f = load_fabric("gb200-mnnvl");
  SynthOptions o;
  o.nodes = {4, 36};
  o.collectives = {Collective::kAllReduce};
  o.min_bytes = o.max_bytes = uint64_t(1) << 20;
  o.samples = 2;
  o.hipipe = true;
  const Sweep s = synthesize(f, o);
  ASSERT_EQ(s.num_contexts(), 2);
  EXPECT_FALSE(s.view().mask(0).has(kHiPipeSlot));
  EXPECT_TRUE(s.view().mask(1).has(kHiPipeSlot));
  // gb200-mnnvl: NVLink 721.8 x 1.164 measured; 4 NICs per 4-GPU tray at 48 x 0.979.
  hipipe::FabricPreset h = hipipe::load_fabric_preset("gb200-mnnvl");
  h.dimensions[0].bandwidth_GBps = double(721.8f) * 1.164;
  h.dimensions[1].bandwidth_GBps = 48.0 * 0.979;
  const double truth = kBaseUs + hipipe::hipipe_predicted_time_us(h, Collective::kAllReduce, 36, 4, 1 << 20);
  EXPECT_NEAR(s.view().sample(1, kHiPipeSlot, 0),
              sample_time_us(f, o.seed, s.context(1), kHiPipeSlot, 0, truth), truth * 1e-6);
}

TEST(HiPipeArm, FabricWithoutAHiPipeTableRefusesTheArm) {
  std::ifstream in(data_dir() + "/fabrics/h100-ib-a.toml");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  const auto at = text.find("[hipipe]");
  ASSERT_NE(at, std::string::npos);
  text.erase(at, text.find("\n[", at) + 1 - at);  // the table, and its values' provenance entries:
  for (size_t p = text.find("\n\"hipipe."); p != std::string::npos; p = text.find("\n\"hipipe."))
    text.erase(p + 1, text.find('\n', p + 1) - p);
  const std::string dir = test::temp_dir() + "/nohipipe";
  std::filesystem::create_directories(dir);
  test::write_file(dir + "/h100-ib-a.toml", text);
  const FabricPreset f = load_fabric_file(dir + "/h100-ib-a.toml");
  EXPECT_TRUE(f.hipipe_preset.empty());
  EXPECT_NO_THROW(synthesize(f, small(false)));
  try {
    synthesize(f, small(true));
    FAIL() << "accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("has no HiPIPE arm"), std::string::npos) << e.what();
  }
}

TEST(HiPipeArm, SynthCliFlagWritesHiPipeRows) {
  const std::string out = test::temp_dir() + "/hipipe_synth.csv";
  const auto r = test::run_cli(
      "synth --fabric h100-ib-a --nodes 2 --collectives allreduce --min-bytes 1048576 --max-bytes 1048576 "
      "--samples 2 --hipipe --out " +
      out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(out);
  std::string line;
  int hipipe_rows = 0;
  while (std::getline(in, line)) hipipe_rows += line.find(",HiPIPE,Simple,") != std::string::npos;
  EXPECT_EQ(hipipe_rows, 2);
}

}  // namespace
}  // namespace ncclbot::sim
