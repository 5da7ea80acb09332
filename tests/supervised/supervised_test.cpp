// kNN and the decision tree on a sweep whose answer is known: the best arm is Ring/LL (slot 3)
// below 64 KiB and Ring/Simple (slot 5) from 64 KiB on, at every scale; AllGather prefers Tree/LL
// (slot 0) at every size. Fit on 4-node contexts, the selectors must get every 32-node context.
// The right answer is that rule itself (known_best_slot), not the library's oracle: the selectors
// learn from the oracle, so checking them against it would pass with any oracle at all.
#include "ncclbot/supervised/supervised.hpp"

#include <gtest/gtest.h>

#include "support/tiny_sweep.hpp"

using namespace ncclbot;
using namespace ncclbot::test;

namespace {

Sweep threshold_sweep() {
  std::vector<TinyContext> cs;
  for (int nodes : {4, 32})
    for (int e = 4; e <= 28; e += 2) {
      const uint64_t bytes = uint64_t(1) << e;
      const bool small = bytes < 65536;
      cs.push_back(
          {tiny_context(nodes, bytes),
           {{0, {30.0f}, 1.0f}, {3, {small ? 10.0f : 20.0f}, 1.0f}, {5, {small ? 20.0f : 10.0f}, 1.0f}}});
      cs.push_back({tiny_context(nodes, bytes, Collective::kAllGather),
                    {{0, {5.0f}, 1.0f}, {3, {15.0f}, 1.0f}, {5, {25.0f}, 1.0f}}});
    }
  return tiny_sweep(cs);
}

// The fastest arm as threshold_sweep() lays the times out: 5 us Tree/LL for AllGather; for
// AllReduce 10 us Ring/LL below 64 KiB and 10 us Ring/Simple from 64 KiB on.
int known_best_slot(const Sweep& s, int c) {
  const Context& ctx = s.context(c);
  if (ctx.collective == Collective::kAllGather) return 0;
  return ctx.bytes < 65536 ? 3 : 5;
}

std::vector<int> nodes_of(const Sweep& s, int nodes) {
  std::vector<int> out;
  for (int c = 0; c < s.num_contexts(); ++c)
    if (s.context(c).nodes == nodes) out.push_back(c);
  return out;
}

}  // namespace

TEST(Supervised, KnnRecoversTheThreshold) {
  const Sweep s = threshold_sweep();
  for (int k : {1, 3}) {
    KnnSelector knn;
    knn.fit(s, nodes_of(s, 4), k);
    for (int c : nodes_of(s, 32))
      EXPECT_EQ(knn.predict(s, c), known_best_slot(s, c)) << "k=" << k << " context " << c;
  }
}

// Depth 2: split on the collective, then on log2 bytes at 15 (midpoint of 14 and 16).
TEST(Supervised, TreeRecoversTheThreshold) {
  const Sweep s = threshold_sweep();
  TreeSelector tree;
  tree.fit(s, nodes_of(s, 4), 2);
  EXPECT_EQ(tree.leaves(), 3);
  for (int c : nodes_of(s, 32)) EXPECT_EQ(tree.predict(s, c), known_best_slot(s, c)) << c;
  TreeSelector stump;  // depth 1 cannot express both rules: it must get some contexts wrong
  stump.fit(s, nodes_of(s, 4), 1);
  int wrong = 0;
  for (int c : nodes_of(s, 32)) wrong += stump.predict(s, c) != known_best_slot(s, c);
  EXPECT_GT(wrong, 0);
}

// Leave-one-out: a training context is predicted without itself. With k = 1 and one context of a
// size, its nearest other context is a neighbouring size; at the threshold that neighbour is on
// the other side, so LOO is wrong exactly there, while the full fit is right everywhere.
TEST(Supervised, LeaveOneOutIsOutOfSample) {
  const Sweep s = threshold_sweep();
  PolicyConfig cfg;
  cfg.kind = PolicyKind::kKnn;
  cfg.k = 1;
  const auto train = nodes_of(s, 4);
  const auto loo = supervised_decisions(cfg, s, train, true);
  const auto full = supervised_decisions(cfg, s, train, false);
  int loo_wrong = 0;
  for (int c : train) {
    EXPECT_EQ(full[size_t(c)], known_best_slot(s, c));
    loo_wrong += loo[size_t(c)] != known_best_slot(s, c);
  }
  EXPECT_GE(loo_wrong, 1);
  for (int c : nodes_of(s, 32)) EXPECT_EQ(loo[size_t(c)], full[size_t(c)]);
}
