#include "ncclbot/tune/tune.hpp"

#include <gtest/gtest.h>

#include "ncclbot/core/error.hpp"
#include "support/tiny_sweep.hpp"

using namespace ncclbot;
using namespace ncclbot::test;

namespace {
// Prior points at slot 0, which is 50% slower than slot 1 everywhere: n0 = 0 (cold) explores and
// finds slot 1; a huge n0 trusts the prior for the whole horizon.
Sweep misleading_prior_sweep() {
  std::vector<TinyContext> cs;
  for (int nodes : {4, 8, 16, 32})
    for (uint64_t bytes : {1024ull, 1048576ull})
      cs.push_back({tiny_context(nodes, bytes), {{0, {15.0f, 15.5f}, 5.0f}, {1, {10.0f, 10.5f}, 20.0f}}});
  return tiny_sweep(cs);
}
std::vector<int> nodes_in(const Sweep& s, std::initializer_list<int> nodes) {
  std::vector<int> out;
  for (int c = 0; c < s.num_contexts(); ++c)
    if (std::find(nodes.begin(), nodes.end(), s.context(c).nodes) != nodes.end()) out.push_back(c);
  return out;
}
}  // namespace

TEST(Tune, PicksTheBestGridPointAndScoresIt) {
  const Sweep s = misleading_prior_sweep();
  TuneRequest req;
  req.sweep = &s;
  req.grids = {"greedy:n0=1000|0", "auto"};
  req.tune_contexts = nodes_in(s, {4, 8});
  req.score_contexts = nodes_in(s, {16, 32});
  req.seeds = 3;
  req.horizon = 100;
  req.threads = 2;
  const auto out = tune_and_score(req);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].points[size_t(out[0].chosen)].text, "greedy:n0=0");
  // Greedy with n0 = 1000 stays on slot 0 for all 100 steps: loss 15.25 / 10.25 - 1 every step.
  EXPECT_NEAR(out[0].objective[0], 15.25 / 10.25 - 1, 1e-12);
  // Cold greedy: one step on slot 0, then slot 1 for good: (15.25 / 10.25 - 1) / 100.
  EXPECT_NEAR(out[0].score_online.summary.mean, (15.25 / 10.25 - 1) / 100, 1e-12);
  EXPECT_EQ(out[0].score_final.summary.max, 0.0);
  EXPECT_EQ(out[0].score_online.mean.sd, 0.0);  // deterministic policy: no spread across seeds
  EXPECT_NEAR(out[1].score_online.summary.mean, 15.25 / 10.25 - 1, 1e-12);
  EXPECT_EQ(out[1].score_online.summary.above_10pct, 4);
}

TEST(Tune, ObjectivesAndErrors) {
  EXPECT_EQ(parse_tune_objective("p99"), TuneObjective::kP99);
  EXPECT_THROW(parse_tune_objective("median"), UsageError);
  LossSummary s;
  s.mean = 0.1;
  s.p99 = 0.5;
  s.above_10pct = 3;
  EXPECT_EQ(objective_value(s, TuneObjective::kAbove10pct), 3.0);
  const Sweep sw = misleading_prior_sweep();
  TuneRequest req;
  req.sweep = &sw;
  req.grids = {"ucb1"};
  req.tune_contexts = {0};
  EXPECT_THROW(tune_and_score(req), UsageError);  // no score contexts
}
