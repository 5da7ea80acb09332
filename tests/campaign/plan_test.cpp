// `make_plan`: which arms a campaign runs and which it leaves out (with the reason), which sizes
// nccl-tests can print as themselves, and the predicted cluster time. Expected arm sets are read
// off NCCL's enabling rules for the h100-ib-a preset (NVLS support, no SHARP plugin, 8 GPUs per
// node): all-reduce across nodes runs Ring and Tree with every protocol plus NVLSTree/Simple;
// all-gather runs Ring only.
#include <gtest/gtest.h>

#include <algorithm>

#include "ncclbot/campaign/arm_exclusion.hpp"
#include "ncclbot/campaign/plan.hpp"
#include "ncclbot/core/arm.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/model/cost_model.hpp"

using namespace ncclbot;
using namespace ncclbot::campaign;

namespace {

PlanOptions small_plan() {
  PlanOptions o;
  o.nodes = {2, 4};
  o.gpus_per_node = 8;
  o.collectives = {Collective::kAllReduce, Collective::kAllGather};
  o.min_bytes = 1024;
  o.max_bytes = 65536;
  o.step_factor = 4;
  o.iters = 10;
  o.warmup = 5;
  return o;
}

std::vector<std::string> ids_at(const Plan& p, int nodes, Collective c) {
  std::vector<std::string> out;
  for (const auto& r : p.runs)
    if (r.nodes == nodes && r.collective == c) out.push_back(r.id);
  return out;
}

std::string reason_for(const Plan& p, int nodes, Collective c, Algo a, Proto pr) {
  for (const auto& l : p.left_out)
    if (l.nodes == nodes && l.collective == c && l.slot == arm_slot(a, pr)) return l.reason;
  return "";
}

}  // namespace

TEST(Plan, RunsEveryArmNcclCanRunAndNoOther) {
  const Plan p = make_plan(sim::load_fabric("h100-ib-a"), small_plan());
  EXPECT_EQ(p.runs.size(), 20u);
  EXPECT_EQ(
      ids_at(p, 2, Collective::kAllReduce),
      (std::vector<std::string>{"n2-allreduce-tree-ll", "n2-allreduce-tree-ll128", "n2-allreduce-tree-simple",
                                "n2-allreduce-ring-ll", "n2-allreduce-ring-ll128", "n2-allreduce-ring-simple",
                                "n2-allreduce-nvlstree-simple"}));
  EXPECT_EQ(ids_at(p, 4, Collective::kAllGather),
            (std::vector<std::string>{"n4-allgather-ring-ll", "n4-allgather-ring-ll128",
                                      "n4-allgather-ring-simple"}));
  for (const auto& r : p.runs) EXPECT_EQ(r.sizes, (std::vector<uint64_t>{1024, 4096, 16384, 65536})) << r.id;
}

// A collective given twice is planned once: the same 20 runs (each with its own log file) and the
// same predicted cost as the plain plan, and the plan records each collective once.
TEST(Plan, ARepeatedCollectiveIsPlannedOnce) {
  PlanOptions twice = small_plan();
  twice.collectives = {Collective::kAllReduce, Collective::kAllGather, Collective::kAllReduce,
                       Collective::kAllReduce};
  const Plan a = make_plan(sim::load_fabric("h100-ib-a"), small_plan());
  const Plan b = make_plan(sim::load_fabric("h100-ib-a"), twice);
  ASSERT_EQ(b.runs.size(), 20u);
  for (size_t i = 0; i < a.runs.size(); ++i) EXPECT_EQ(b.runs[i].id, a.runs[i].id);
  EXPECT_EQ(b.options.collectives, small_plan().collectives);
}

TEST(Plan, SaysWhyEachArmIsLeftOut) {
  const Plan p = make_plan(sim::load_fabric("h100-ib-a"), small_plan());
  // 21 slots x 2 collectives x 2 node counts, minus the 20 runs.
  EXPECT_EQ(p.left_out.size(), 84u - 20u);
  EXPECT_EQ(reason_for(p, 2, Collective::kAllReduce, Algo::kNvls, Proto::kSimple),
            "NVLS/Simple: needs CollNet (a SHARP network plugin), which this fabric lacks");
  EXPECT_EQ(reason_for(p, 2, Collective::kAllReduce, Algo::kNvls, Proto::kLL),
            "NVLS/LL: NVLS runs with Simple only");
  EXPECT_EQ(reason_for(p, 4, Collective::kAllGather, Algo::kTree, Proto::kSimple),
            "Tree/Simple: NCCL has no Tree AllGather");
  EXPECT_EQ(reason_for(p, 4, Collective::kAllGather, Algo::kPat, Proto::kSimple),
            "PAT/Simple: runs only with one GPU per node");
}

TEST(Plan, ExplanationsAgreeWithTheCostModel) {
  // On every preset shape: an arm has no reason exactly when the model gives it a cost.
  for (const char* name : {"h100-ib-a", "h100-roce", "gb200-mnnvl", "gb200-ib"}) {
    const sim::FabricPreset f = sim::load_fabric(name);
    for (int hosts : {1, 2, 4})
      for (Collective c : {Collective::kAllReduce, Collective::kAllGather, Collective::kReduceScatter,
                           Collective::kBroadcast}) {
        const model::Topology t = sim::topology_for(f, hosts, f.gpus_per_host);
        for (int s = 0; s < kNumNcclArms; ++s) {
          const bool runs = model::arm_time_us(t, c, slot_algo(s), slot_proto(s), 65536) >= 0.0f;
          EXPECT_EQ(runs, !why_arm_left_out(t, c, s, 65536).has_value()) << name << " " << hosts << " " << s;
        }
      }
  }
}

TEST(Plan, SizesNcclTestsWouldRoundAreLeftOut) {
  // All-gather counts are rounded down to 16 B per rank: 128 ranks need multiples of 2048 B.
  PlanOptions o = small_plan();
  o.nodes = {16};
  const Plan p = make_plan(sim::load_fabric("h100-ib-a"), o);
  for (const auto& r : p.runs) {
    if (r.collective == Collective::kAllGather)
      EXPECT_EQ(r.sizes, (std::vector<uint64_t>{4096, 16384, 65536})) << r.id;
    else
      EXPECT_EQ(r.sizes.front(), 1024u) << r.id;
  }
  bool said = false;
  for (const auto& l : p.left_out)
    said |= l.slot == -1 && l.collective == Collective::kAllGather &&
            l.reason.find("sizes 1024..1024 B") != std::string::npos &&
            l.reason.find("2048 B at 128 ranks") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(Plan, PredictedTimeIsModelTimesCallsPlusStartUp) {
  PlanOptions o = small_plan();
  o.arms = {arm_slot(Algo::kRing, Proto::kLL)};
  o.collectives = {Collective::kAllReduce};
  o.nodes = {2};
  o.startup_s = 12.5;
  const Plan p = make_plan(sim::load_fabric("h100-ib-a"), o);
  ASSERT_EQ(p.runs.size(), 1u);
  // nccl-tests: 5 warm-up calls at each power of two 1K..64K, then per printed size and placement
  // one synchronising call, 10 timed calls and one data check: 2 x 12 calls.
  const model::Topology t = sim::topology_for(sim::load_fabric("h100-ib-a"), 2, 8);
  const auto time = [&](uint64_t b) {
    return double(model::arm_time_us(t, Collective::kAllReduce, Algo::kRing, Proto::kLL, b));
  };
  double us = 0.0;
  for (uint64_t b = 1024; b <= 65536; b *= 2) us += 5 * time(b);
  for (uint64_t b : {1024, 4096, 16384, 65536}) us += 24 * time(b);
  EXPECT_DOUBLE_EQ(p.runs[0].seconds, us * 1e-6 + 12.5);
  const Cost c = cost_of(p, 0);
  EXPECT_EQ(c.runs, 1u);
  EXPECT_DOUBLE_EQ(c.gpu_hours, p.runs[0].seconds * 16 / 3600.0);
}

TEST(Plan, RejectsWhatCannotBeRun) {
  PlanOptions o = small_plan();
  o.arms = {arm_slot(Algo::kCollNetDirect, Proto::kSimple)};
  EXPECT_THROW(make_plan(sim::load_fabric("h100-ib-a"), o), UsageError);  // left out everywhere: no run
  o = small_plan();
  o.step_factor = 1;
  EXPECT_THROW(make_plan(sim::load_fabric("h100-ib-a"), o), UsageError);
  o = small_plan();
  o.nodes = {};
  EXPECT_THROW(make_plan(sim::load_fabric("h100-ib-a"), o), UsageError);
}

// The same campaign by ncclbot-sweep: one launch per node count, each arm's call and NCCL's own once
// per round for 1 + warmup + iters rounds. With one arm per (nodes, collective) NCCL's own is priced
// as that arm, and with step factor 2 nccl-tests' warm-up covers exactly the run's sizes, so from the
// nccl-tests run's own time (start-up + (warmup + 2 (iters + 2)) x S, S the model's time of one call
// at every size): sweep = start-up + 2 (1 + warmup + iters) x S.
TEST(Plan, ItsCostWithNcclbotSweepFollowsFromTheNcclTestsRuns) {
  PlanOptions o = small_plan();
  o.nodes = {2};
  o.collectives = {Collective::kAllReduce};
  o.step_factor = 2;
  o.arms = {arm_slot(Algo::kRing, Proto::kSimple)};
  const Plan p = make_plan(sim::load_fabric("h100-ib-a"), o);
  ASSERT_EQ(p.runs.size(), 1u);
  const double S = (p.runs[0].seconds - o.startup_s) / (o.warmup + 2.0 * (o.iters + 2));
  const Cost sweep = sweep_cost_of(p, 0);
  EXPECT_NEAR(sweep.seconds, o.startup_s + 2.0 * (1 + o.warmup + o.iters) * S, 1e-9);
  EXPECT_NEAR(sweep.gpu_hours, sweep.seconds * 2 * 8 / 3600.0, 1e-12);
  EXPECT_EQ(sweep.runs, 0u);
  // Two node counts: one launch each, so the start-up twice; a node count filters.
  o.nodes = {2, 4};
  const Plan two = make_plan(sim::load_fabric("h100-ib-a"), o);
  EXPECT_NEAR(sweep_cost_of(two, 0).seconds, sweep_cost_of(two, 2).seconds + sweep_cost_of(two, 4).seconds,
              1e-9);
  EXPECT_NEAR(sweep_cost_of(two, 2).seconds, sweep.seconds, 1e-9);
  // Two collectives: one launch each (their sizes differ), each priced as its own plan.
  o.collectives = {Collective::kAllReduce, Collective::kAllGather};
  const Plan both = make_plan(sim::load_fabric("h100-ib-a"), o);
  o.collectives = {Collective::kAllGather};
  const Plan gather = make_plan(sim::load_fabric("h100-ib-a"), o);
  EXPECT_NEAR(sweep_cost_of(both, 2).seconds, sweep.seconds + sweep_cost_of(gather, 2).seconds, 1e-9);
  o.collectives = {Collective::kAllReduce};
  // A chunk size it cannot set: those runs stay nccl-tests runs, counted at their own time.
  o.nodes = {2};
  o.chunk_bytes = {0, 131072};
  const Plan chunks = make_plan(sim::load_fabric("h100-ib-a"), o);
  ASSERT_EQ(chunks.runs.size(), 2u);
  const Cost c = sweep_cost_of(chunks, 0);
  EXPECT_EQ(c.runs, 1u);
  EXPECT_NEAR(c.seconds, sweep.seconds + chunks.runs[1].seconds, 1e-9);
}
