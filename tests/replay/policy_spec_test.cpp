#include "ncclbot/replay/policy_spec.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "ncclbot/core/error.hpp"

using namespace ncclbot;

TEST(PolicySpec, DefaultsAndCanonicalText) {
  const PolicySpec p = parse_policy_spec("ucb1");
  EXPECT_EQ(p.config.kind, PolicyKind::kUcb1);
  EXPECT_EQ(p.text, "ucb1:c=0.1,n0=1");
  EXPECT_EQ(parse_policy_spec("auto").text, "auto");
  const PolicySpec e = parse_policy_spec(" egreedy:n0=0, eps=0.05 ");
  EXPECT_EQ(e.text, "egreedy:eps=0.05,decay=0,n0=0");
  EXPECT_EQ(e.config.eps, 0.05);
  EXPECT_EQ(e.config.n0, 0.0);
  EXPECT_EQ(parse_policy_spec("swucb:window=64").config.window, 64);
  EXPECT_EQ(parse_policy_spec("etc:m=3").config.m, 3);
  EXPECT_EQ(parse_policy_spec("knn:k=7").config.k, 7);
  EXPECT_EQ(parse_policy_spec("tree:depth=2").config.depth, 2);
  EXPECT_EQ(parse_policy_spec("thompson:sigma=0.3").config.sigma, 0.3);
}

TEST(PolicySpec, GridIsTheCartesianProductFirstKeyOutermost) {
  const auto g = parse_policy_grid("ucb1:c=0.1|0.2|0.5,n0=0|4|16");
  ASSERT_EQ(g.size(), 9u);
  EXPECT_EQ(g[0].text, "ucb1:c=0.1,n0=0");
  EXPECT_EQ(g[1].text, "ucb1:c=0.1,n0=4");
  EXPECT_EQ(g[3].text, "ucb1:c=0.2,n0=0");
  EXPECT_EQ(g[8].text, "ucb1:c=0.5,n0=16");
  EXPECT_EQ(g[8].config.c, 0.5);
  EXPECT_EQ(g[8].config.n0, 16.0);
  EXPECT_EQ(parse_policy_grid("tree:depth=1|2|3|4").size(), 4u);
}

namespace {
void expect_usage_error(const std::string& spec, const std::string& needle) {
  try {
    parse_policy_grid(spec);
    FAIL() << "accepted " << spec;
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}
}  // namespace

TEST(PolicySpec, ErrorsNameWhatIsValid) {
  expect_usage_error("ucb2",
                     "valid: auto, oracle, random, greedy, egreedy, ucb1, thompson, etc, swucb, knn, tree");
  expect_usage_error("ucb1:alpha=1", "unknown parameter 'alpha' for ucb1 (valid: c, n0)");
  expect_usage_error("auto:n0=1", "(valid: none)");
  expect_usage_error("ucb1:c=0.1,c=0.2", "given twice");
  expect_usage_error("ucb1:c=-1", "c='-1' must be a number in [0,");
  expect_usage_error("etc:m=1.5", "must be an integer");
  expect_usage_error("swucb:window=100000", "window='100000'");
  expect_usage_error("egreedy:eps=2", "eps='2'");
  expect_usage_error("ucb1:c", "is not key=value");
  expect_usage_error("ucb1:", "nothing after ':'");
  expect_usage_error("ucb1:c=0.1|", "c=''");
  EXPECT_THROW(parse_policy_spec("ucb1:c=0.1|0.2"), UsageError);
}

// `@slots` keeps a policy to NCCL's own channels and chunk size: on every point of a grid, written
// back in the canonical text; any other arm space is refused, naming the valid one.
TEST(PolicySpec, SlotsSuffixMarksEveryPointAndOthersAreRefused) {
  const auto grid = ncclbot::parse_policy_grid("ucb1:c=0.1|0.2 @slots");
  ASSERT_EQ(grid.size(), 2u);
  EXPECT_EQ(grid[0].text, "ucb1:c=0.1,n0=1@slots");
  EXPECT_EQ(grid[1].text, "ucb1:c=0.2,n0=1@slots");
  EXPECT_TRUE(grid[0].slots_only && grid[1].slots_only);
  EXPECT_FALSE(ncclbot::parse_policy_spec("ucb1").slots_only);
  EXPECT_EQ(ncclbot::parse_policy_spec(grid[1].text).text, grid[1].text);
  try {
    ncclbot::parse_policy_spec("ucb1@knobs");
    FAIL() << "an unknown modifier was taken";
  } catch (const ncclbot::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown modifier '@knobs' (valid: @slots"), std::string::npos)
        << e.what();
  }
}

// `@conservative` takes its three options in any order, keeps the defaults of those left out
// (alpha 0.05, delta 0.05, noise 0.1, worst 10: policy/conservative.hpp), goes with `@slots` in either order
// and writes one canonical text that parses back to itself.
TEST(PolicySpec, ConservativeModifierKeepsItsOptionsAndCanonicalText) {
  const auto bare = ncclbot::parse_policy_spec("ucb1@conservative");
  ASSERT_TRUE(bare.conservative.has_value());
  EXPECT_EQ(bare.conservative->alpha, 0.05);
  EXPECT_EQ(bare.conservative->delta, 0.05);
  EXPECT_EQ(bare.conservative->noise, 0.1);
  EXPECT_EQ(bare.conservative->worst, 10.0);
  EXPECT_EQ(bare.text, "ucb1:c=0.1,n0=1@conservative:alpha=0.05,delta=0.05,noise=0.1,worst=10");
  EXPECT_FALSE(ncclbot::parse_policy_spec("ucb1").conservative.has_value());

  const auto grid = ncclbot::parse_policy_grid("osub:c=0.1|0.3@conservative:noise=0.2,alpha=0.1@slots");
  ASSERT_EQ(grid.size(), 2u);
  for (const auto& p : grid) {
    ASSERT_TRUE(p.conservative.has_value());
    EXPECT_TRUE(p.slots_only);
    EXPECT_EQ(p.conservative->alpha, 0.1);
    EXPECT_EQ(p.conservative->delta, 0.05);
    EXPECT_EQ(p.conservative->noise, 0.2);
    EXPECT_EQ(ncclbot::parse_policy_spec(p.text).text, p.text);
  }
  EXPECT_EQ(grid[1].text, "osub:c=0.3,n0=1@slots@conservative:alpha=0.1,delta=0.05,noise=0.2,worst=10");
}

// Options that conflict or fall outside their range are refused, naming the option.
TEST(PolicySpec, ConservativeModifierRefusesBadOptions) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"ucb1@conservative:alpha=-0.1", "alpha='-0.1' must be a number in [0, 10]"},
      {"ucb1@conservative:delta=0", "delta='0' must be a number in (0, 1]"},
      {"ucb1@conservative:noise=0.1|0.2", "noise='0.1|0.2' must be a number"},
      {"ucb1@conservative:alpha=0.1,alpha=0.2", "alpha given twice"},
      {"ucb1@conservative:beta=1", "'beta=1' is no @conservative option"},
      {"ucb1@conservative:worst=0.5", "worst='0.5' must be a number in [1, 1e+06]"},
      {"ucb1@conservative@conservative", "'@conservative' given twice"},
      {"ucb1@slots@slots", "'@slots' given twice"},
  };
  for (const auto& [spec, message] : bad) {
    try {
      ncclbot::parse_policy_spec(spec);
      ADD_FAILURE() << spec << " was taken";
    } catch (const ncclbot::UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << spec << ": " << e.what();
    }
  }
}
