// The simulator's per-call observation model (the presets' [observation] table, docs/simulator.md):
// switched off it reproduces the sweeps of before bit for bit; on, its noise, spikes and call
// dynamics are what the table says.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <vector>

#include "ncclbot/core/error.hpp"
#include "ncclbot/io/sweep_csv.hpp"
#include "ncclbot/sim/fabric.hpp"
#include "ncclbot/sim/simulator.hpp"

using namespace ncclbot;
using namespace ncclbot::sim;

namespace {

uint64_t fnv1a64(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

std::string csv_of(const Sweep& s) {
  std::ostringstream out;
  write_sweep_csv(s, out);
  return out.str();
}

}  // namespace

// FNV-1a-64 of the CSV that `ncclbot synth` wrote before the observation model existed (revision
// 4ea1470, data/fabrics of that revision), made with
//   NCCLBOT_DATA_DIR=<4ea1470 data> ncclbot synth --fabric F --out F.csv         (3 presets)
//   NCCLBOT_DATA_DIR=<4ea1470 data> ncclbot synth --fabric h100-ib-a --nodes 2,4 --samples 50 --seed 7
//   --hipipe
// and hashed by python3 (h ^= byte; h *= 0x100000001b3, from 0xcbf29ce484222325).
TEST(ObservationModel, SwitchedOffItReproducesTheEarlierSweepsBitForBit) {
  struct Case {
    const char* fabric;
    uint64_t digest;
    size_t bytes;
  };
  for (const Case& k :
       {Case{"h100-ib-a", 0xfcbf2152d6a0852cull, 795255}, Case{"gb200-mnnvl", 0xc5d82e7432316a49ull, 1039688},
        Case{"h100-roce", 0xd53789328fee1ee0ull, 795612}}) {
    SynthOptions o;
    o.seed = kDefaultSeed;
    o.observation = false;
    const std::string csv = csv_of(synthesize(load_fabric(k.fabric), o));
    EXPECT_EQ(csv.size(), k.bytes) << k.fabric;
    EXPECT_EQ(fnv1a64(csv), k.digest) << k.fabric;
  }
  SynthOptions o;
  o.seed = 7;
  o.nodes = {2, 4};
  o.samples = 50;
  o.hipipe = true;
  o.observation = false;
  const std::string csv = csv_of(synthesize(load_fabric("h100-ib-a"), o));
  // Every row as at 4ea1470 but the HiPIPE arm's 400, 0.1-2.6% faster since its LP dropped empty
  // chunks and works in units of the unpipelined all-reduce (the same command, hashed the same way).
  EXPECT_EQ(csv.size(), 2810280u);
  EXPECT_EQ(fnv1a64(csv), 0x6a4cbb67d6715b05ull);
  // The same through the preset's own switch.
  FabricPreset off = load_fabric("h100-ib-a");
  off.observation.enabled = false;
  SynthOptions d;
  d.seed = kDefaultSeed;
  EXPECT_EQ(fnv1a64(csv_of(synthesize(off, d))), 0xfcbf2152d6a0852cull);
}

TEST(ObservationModel, OnByDefaultWithThePresetsDynamics) {
  const FabricPreset f = load_fabric("h100-ib-a");
  ASSERT_TRUE(f.observation.enabled);
  const Sweep s = default_sweep();
  const SweepDynamics& d = s.dynamics();
  EXPECT_EQ(d.call.job_warmup, float(f.observation.dynamics.call.job_warmup));
  EXPECT_EQ(d.call.arm_warmup_calls, f.observation.dynamics.call.arm_warmup_calls);
  EXPECT_EQ(d.call.shift_rate, f.observation.dynamics.call.shift_rate);
  EXPECT_EQ(d.first_use_base_us, f.observation.dynamics.first_use_base_us);
  EXPECT_TRUE(s.view().dynamic());
  ASSERT_NE(s.view().first_use_us, nullptr);
  EXPECT_EQ(s.view().first_use(0), float(d.first_use_base_us + d.first_use_per_host_us * s.context(0).nodes));

  SynthOptions o;
  o.nodes = {2};
  o.drift = false;
  EXPECT_FALSE(synthesize(f, o).dynamics().call.shifts());
  o.drift = true;
  o.first_use = false;
  EXPECT_FALSE(synthesize(f, o).dynamics().has_first_use());
  EXPECT_EQ(synthesize(f, o).view().first_use_us, nullptr);
  o.first_use = true;
  o.warmup = false;
  const SweepDynamics w = synthesize(f, o).dynamics();
  EXPECT_EQ(w.call.job_warmup_calls + w.call.arm_warmup_calls, 0);
  EXPECT_TRUE(w.call.shifts());
  // A changing fabric of one's own: shift rate and size override the preset's (drift off wins).
  SynthOptions fast;
  fast.nodes = {2};
  fast.shift_rate = 0.004;
  fast.shift_size = 0.25;
  const SweepDynamics g = synthesize(f, fast).dynamics();
  EXPECT_EQ(g.call.shift_rate, 0.004f);
  EXPECT_EQ(g.call.shift_size, 0.25f);
  fast.drift = false;
  EXPECT_FALSE(synthesize(f, fast).dynamics().call.shifts());
  fast.drift = true;
  fast.shift_rate = 0.6;
  EXPECT_THROW(synthesize(f, fast), UsageError);
}

// Call-to-call noise: log-normal with sigma = cv_large + (cv_small - cv_large) / (1 + bytes / knee).
TEST(ObservationModel, NoiseFollowsTheTablesCvBySize) {
  FabricPreset f = load_fabric("h100-ib-a");
  f.observation.spike_prob = 0.0;
  const ObservationModel& o = f.observation;
  const int n = 20000;
  for (uint64_t bytes : {uint64_t(8), uint64_t(1) << 24, uint64_t(1) << 30}) {
    const Context ctx{f.name, Collective::kAllReduce, 2, 8, bytes};
    double s = 0, s2 = 0;
    for (int r = 0; r < n; ++r) {
      const double x = std::log(sample_time_us(f, 3, ctx, 5, r, 100.0) / 100.0);
      s += x;
      s2 += x * x;
    }
    const double mean = s / n, sd = std::sqrt(s2 / n - mean * mean);
    const double want = o.cv_large + (o.cv_small - o.cv_large) / (1.0 + double(bytes) / o.cv_knee_bytes);
    EXPECT_NEAR(sd, want, 0.04 * want) << bytes;  // sd of a sample sd of 20000: 0.5%
  }
}

// Spikes: with probability spike_prob a call takes spike_min * U^(-1/alpha) times as long, capped.
TEST(ObservationModel, SpikesHaveTheTablesRateTailAndCap) {
  FabricPreset f = load_fabric("h100-ib-a");
  ObservationModel& o = f.observation;
  o.cv_small = o.cv_large = 0.0;
  o.spike_prob = 0.01;
  o.spike_min = 2.0;
  o.spike_alpha = 1.5;
  o.spike_cap = 20.0;
  const Context ctx{f.name, Collective::kAllReduce, 2, 8, 4096};
  const int n = 200000;
  int spikes = 0, above4 = 0;
  double biggest = 0;
  for (int r = 0; r < n; ++r) {
    const double m = sample_time_us(f, 9, ctx, 3, r, 10.0) / 10.0;
    if (m > 1.0 + 1e-12) {
      ++spikes;
      EXPECT_GE(m, 2.0 - 1e-12);
      above4 += m > 4.0;
    }
    biggest = std::max(biggest, m);
  }
  // binomial(200000, 0.01): 2000 +- 44.5; P(m > 4 | spike) = (2/4)^1.5 = 0.354.
  EXPECT_NEAR(spikes, 2000, 5 * 44.5);
  EXPECT_NEAR(double(above4) / spikes, 0.3536, 0.05);
  EXPECT_LE(biggest, 20.0 + 1e-9);
  EXPECT_GT(biggest, 15.0);  // P(m > 15) = (2/15)^1.5 = 4.9% of 2000 spikes: ~97 of them
}

// noise_scale multiplies the log-noise (the same normal draw) and the spike probability.
TEST(ObservationModel, NoiseScaleScalesTheSameDraws) {
  FabricPreset f = load_fabric("h100-ib-a");
  f.observation.spike_prob = 0.0;
  SynthOptions twice;
  twice.noise_scale = 2.0;
  const FabricPreset g = with_observation_options(f, twice);
  EXPECT_DOUBLE_EQ(g.observation.cv_small, 2.0 * f.observation.cv_small);
  const Context ctx{f.name, Collective::kAllReduce, 4, 8, 65536};
  for (int r = 0; r < 50; ++r) {
    const double a = std::log(sample_time_us(f, 5, ctx, 2, r, 30.0) / 30.0);
    const double b = std::log(sample_time_us(g, 5, ctx, 2, r, 30.0) / 30.0);
    EXPECT_NEAR(b, 2.0 * a, 1e-12);
  }
  twice.noise_scale = -1.0;
  EXPECT_THROW(with_observation_options(f, twice), UsageError);
}

TEST(ObservationModel, ATableWithABadValueIsAnErrorWithItsLine) {
  const FabricPreset f = load_fabric("h100-ib-a");
  std::ifstream in(f.file);
  std::stringstream text;
  text << in.rdbuf();
  const std::string good = text.str();
  auto with = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    const size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    s.replace(at, from.size(), to);
    return s;
  };
  for (auto [from, to] : {std::pair<std::string, std::string>{"cv_small = 0.043", "cv_small = -1"},
                          {"spike_cap = 40.0", "spike_cap = 1.5"},
                          {"job_warmup_calls = 5", "job_warmup_calls = 2.5"},
                          {"shift_rate = 0.0005", "shift_rate = 0.9"},
                          {"enabled = true", "enabled = 1"},
                          {"first_use_per_host_us = 0.0\n", "first_use_per_host_us = 0.0\nsurprise = 1\n"}}) {
    try {
      parse_fabric(with(from, to), "x/h100-ib-a.toml");
      ADD_FAILURE() << to;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("h100-ib-a.toml:"), std::string::npos) << e.what();
    }
  }
  // A preset without the table has the model off.
  const size_t at = good.find("[observation]");
  ASSERT_NE(at, std::string::npos);
  const size_t end = good.find("\n[", at + 1);
  std::string without = good.substr(0, at) + (end == std::string::npos ? "" : good.substr(end + 1));
  for (size_t p = without.find("\n\"observation."); p != std::string::npos;
       p = without.find("\n\"observation."))
    without.erase(p + 1, without.find('\n', p + 1) - p);  // and its values' provenance entries
  EXPECT_FALSE(parse_fabric(without, "x/h100-ib-a.toml").observation.enabled);
}
