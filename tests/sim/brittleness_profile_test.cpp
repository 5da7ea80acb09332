// The brittleness profile the study depends on (issue "cost model and simulator", item 5): AUTO's
// pick priced on the simulated forced arms is right on most contexts and badly wrong on a few. The
// ranges are the acceptance ranges; the original study measured mean 6.1%, p99 103% and 19
// contexts above 10% on H100 at 16-32 nodes, and p99 60% / 56% on its two GB200 systems. The
// simulator's deviation ranges are calibrated to that profile (a modelling choice, not a
// measurement); the profile must come out of the mechanisms for any seed, so a few seeds besides the
// default are checked too.
#include <gtest/gtest.h>

#include <algorithm>

#include "ncclbot/core/context_filter.hpp"
#include "ncclbot/replay/loss.hpp"
#include "ncclbot/sim/simulator.hpp"
#include "ncclbot/stats/loss_summary.hpp"

namespace ncclbot::sim {
namespace {

struct Profile {
  LossSummary summary;
  long within_1pct = 0;
  size_t contexts = 0;
};

Profile auto_profile(const Sweep& sweep, const std::vector<int>& nodes) {
  ContextFilter filter;
  filter.nodes = nodes;
  const SweepView v = sweep.view();
  std::vector<double> losses;
  for (int c : filter.select(sweep)) losses.push_back(relative_loss(v, c, auto_slot(v, c)));
  Profile p;
  p.summary = summarize_losses(losses);
  p.within_1pct = std::count_if(losses.begin(), losses.end(), [](double l) { return l <= 0.01; });
  p.contexts = losses.size();
  return p;
}

void expect_h100_profile(const Profile& p, uint64_t seed) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  // allreduce/allgather/reducescatter x {16, 32} nodes x 31 sizes (8 B .. 8 GiB)
  ASSERT_EQ(p.contexts, 3u * 2u * 31u);
  EXPECT_GE(double(p.within_1pct), 0.80 * double(p.contexts));
  EXPECT_GE(p.summary.mean, 0.03);
  EXPECT_LE(p.summary.mean, 0.10);
  EXPECT_GE(p.summary.p99, 0.50);
  EXPECT_GE(p.summary.above_10pct, 10);
  EXPECT_LE(p.summary.above_10pct, 30);
}

TEST(BrittlenessProfile, DefaultH100SweepAtSixteenToThirtyTwoNodes) {
  expect_h100_profile(auto_profile(default_sweep(), {16, 32}), kDefaultSeed);
}

TEST(BrittlenessProfile, H100ProfileHoldsForOtherSeeds) {
  const FabricPreset f = load_fabric(kDefaultFabric);
  for (uint64_t seed : {1u, 2u, 3u}) {
    SynthOptions o;
    o.seed = seed;
    o.nodes = {16, 32};
    expect_h100_profile(auto_profile(synthesize(f, o), {16, 32}), seed);
  }
}

TEST(BrittlenessProfile, Gb200PresetsP99) {
  for (const char* name : {"gb200-mnnvl", "gb200-ib"}) {
    SCOPED_TRACE(name);
    SynthOptions o;
    o.seed = kDefaultSeed;
    const Profile p = auto_profile(synthesize(load_fabric(name), o), {});
    EXPECT_GE(p.summary.p99, 0.40);
    EXPECT_LE(p.summary.p99, 0.80);
    EXPECT_GE(double(p.within_1pct), 0.80 * double(p.contexts));
  }
}

}  // namespace
}  // namespace ncclbot::sim
