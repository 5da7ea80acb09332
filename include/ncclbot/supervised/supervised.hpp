#pragma once
// Supervised selectors (`knn:k`, `tree:depth`): fit once on training contexts, then frozen. A
// training example is a context's features and its best measured arm (best_slot); a prediction
// is one arm per context, replayed as a FrozenArmPolicy (it never learns online). On a knob sweep
// the arms are knob arms, matched by identity (a context's best arm counts for another context
// that holds the same arm) and predicted as arm indices of the sweep's arm view. Features, all in
// log2 units so no scaling is needed: collective (categorical), log2 bytes, log2 nodes, log2 GPUs
// per node. A prediction that is not a valid arm of the query context falls back to AUTO.
#include <optional>
#include <vector>

#include "ncclbot/core/sweep.hpp"
#include "ncclbot/policy/policy.hpp"

namespace ncclbot {

struct ContextFeatures {
  int collective = 0;
  double log2_bytes = 0, log2_nodes = 0, log2_gpus_per_node = 0;
};
ContextFeatures context_features(const Context& c);

// k nearest training contexts by squared Euclidean distance over the numeric features, contexts
// of another collective only after all of the same collective (ties: training order). The
// neighbours vote for their best arm; only arms valid in the query count; most votes wins, ties
// go to the arm voted by the nearer neighbour. -1 if no neighbour's arm is valid.
class KnnSelector {
 public:
  void fit(const Sweep& sweep, const std::vector<int>& train, int k);
  int predict(const Sweep& sweep, int context) const;

 private:
  struct Example {
    ContextFeatures f;
    std::optional<Arm> best;  // none: the context had no valid arm
  };
  std::vector<Example> examples_;
  int k_ = 1;
};

// CART classification tree (Breiman et al. 1984) with Gini impurity, at most `depth` levels of
// splits. Splits: "collective == v" and "feature <= midpoint between consecutive distinct
// values"; the best split is the one with the largest impurity decrease (ties: the first in
// collective, bytes, nodes, GPUs-per-node order, then the smaller threshold); a node stops when
// pure, at the depth limit, or when no split decreases impurity. A leaf predicts its most frequent
// training arm valid in the query context (ties: the lowest arm, i.e. the lowest slot), -1 if none is
// valid.
class TreeSelector {
 public:
  void fit(const Sweep& sweep, const std::vector<int>& train, int depth);
  int predict(const Sweep& sweep, int context) const;
  int leaves() const;

 private:
  struct Node {
    int feature = -1;  // -1 leaf; 0 collective (==), 1 bytes, 2 nodes, 3 gpus per node (<=)
    double threshold = 0;
    int left = -1, right = -1;
    std::vector<int> votes;  // per label
  };
  int build(const std::vector<std::pair<ContextFeatures, int>>& data, std::vector<int> rows, int depth);
  std::vector<Arm> labels_;  // the training contexts' distinct best arms, in Arm order
  std::vector<Node> nodes_;
};

// The supervised selectors' registry: S(Kind, Selector, key), one line per kSupervised policy of
// NCCLBOT_POLICIES (policy/policy.hpp): its kind, its class (fit(sweep, train, value), then
// predict(sweep, context) -> an arm index of sweep.arm_view() (a slot sweep's slot) or -1), and the
// PolicyConfig field fit() takes. A build's own
// selectors come through NCCLBOT_EXTRA_SUPERVISED_SELECTORS(S), defined by the header named in
// NCCLBOT_EXTRA_POLICY_HEADER (policy.hpp).
#ifndef NCCLBOT_EXTRA_SUPERVISED_SELECTORS
#define NCCLBOT_EXTRA_SUPERVISED_SELECTORS(S)
#endif
#define NCCLBOT_SUPERVISED_SELECTORS(S) \
  S(kKnn, KnnSelector, k)               \
  S(kTree, TreeSelector, depth)         \
  NCCLBOT_EXTRA_SUPERVISED_SELECTORS(S)

// Frozen decisions of a supervised config for every context of the sweep (-1 where none): fit on
// `train`, predict everywhere. Leave-one-out: each training context is predicted by a model fit on
// the other training contexts, so its loss is an honest out-of-sample estimate; other contexts by
// the model fit on all of `train`.
std::vector<int> supervised_decisions(const PolicyConfig& cfg, const Sweep& sweep,
                                      const std::vector<int>& train, bool leave_one_out);

}  // namespace ncclbot
