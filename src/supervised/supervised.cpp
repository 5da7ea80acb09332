#include "ncclbot/supervised/supervised.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <span>

#include "ncclbot/core/error.hpp"
#include "ncclbot/replay/loss.hpp"

namespace ncclbot {

ContextFeatures context_features(const Context& c) {
  ContextFeatures f;
  f.collective = int(c.collective);
  f.log2_bytes = std::log2(double(std::max<uint64_t>(c.bytes, 1)));
  f.log2_nodes = std::log2(double(std::max(c.nodes, 1)));
  f.log2_gpus_per_node = std::log2(double(std::max(c.gpus_per_node, 1)));
  return f;
}

namespace {

double numeric(const ContextFeatures& f, int feature) {
  switch (feature) {
    case 1:
      return f.log2_bytes;
    case 2:
      return f.log2_nodes;
    default:
      return f.log2_gpus_per_node;
  }
}

double distance2(const ContextFeatures& a, const ContextFeatures& b) {
  const double db = a.log2_bytes - b.log2_bytes, dn = a.log2_nodes - b.log2_nodes,
               dg = a.log2_gpus_per_node - b.log2_gpus_per_node;
  return db * db + dn * dn + dg * dg;
}

double gini(const std::vector<int>& votes, int n) {
  if (n == 0) return 0.0;
  double g = 1.0;
  for (int v : votes) {
    const double p = double(v) / n;
    g -= p * p;
  }
  return g;
}

// The best arm of training context c (best_slot over the sweep's arm view: either shape), as an arm.
std::optional<Arm> best_arm(const Sweep& sweep, const SweepView& v, int c) {
  const int best = best_slot(v, c);
  return best < 0 ? std::nullopt : std::optional<Arm>(sweep.arm_at(c, best));
}

}  // namespace

void KnnSelector::fit(const Sweep& sweep, const std::vector<int>& train, int k) {
  const SweepView v = sweep.arm_view();
  examples_.clear();
  for (int c : train) examples_.push_back({context_features(sweep.context(c)), best_arm(sweep, v, c)});
  k_ = std::max(1, k);
}

int KnnSelector::predict(const Sweep& sweep, int context) const {
  const ContextFeatures q = context_features(sweep.context(context));
  std::vector<std::pair<std::pair<int, double>, size_t>> order;  // ((other collective, distance), index)
  order.reserve(examples_.size());
  for (size_t i = 0; i < examples_.size(); ++i)
    order.push_back({{examples_[i].f.collective != q.collective ? 1 : 0, distance2(q, examples_[i].f)}, i});
  const size_t k = std::min(size_t(k_), order.size());
  std::partial_sort(order.begin(), order.begin() + long(k), order.end());
  // The query's arm index each neighbour votes for (-1: its arm is not the query's), its votes and
  // the rank of its nearest voter; distinct arms have distinct nearest voters.
  struct Vote {
    int index, votes, first_seen;
  };
  std::vector<Vote> votes;
  for (size_t r = 0; r < k; ++r) {
    const std::optional<Arm>& a = examples_[order[r].second].best;
    const int index = a ? sweep.arm_index(context, *a) : -1;
    if (index < 0) continue;
    auto it = std::find_if(votes.begin(), votes.end(), [&](const Vote& v) { return v.index == index; });
    if (it == votes.end())
      votes.push_back({index, 1, int(r)});
    else
      ++it->votes;
  }
  const Vote* best = nullptr;
  for (const Vote& v : votes)
    if (best == nullptr || v.votes > best->votes ||
        (v.votes == best->votes && v.first_seen < best->first_seen))
      best = &v;
  return best == nullptr ? -1 : best->index;
}

int TreeSelector::build(const std::vector<std::pair<ContextFeatures, int>>& data, std::vector<int> rows,
                        int depth) {
  const int id = int(nodes_.size());
  nodes_.emplace_back();
  nodes_[size_t(id)].votes.assign(labels_.size(), 0);
  for (int r : rows) ++nodes_[size_t(id)].votes[size_t(data[size_t(r)].second)];
  const int n = int(rows.size());
  const double parent = gini(nodes_[size_t(id)].votes, n);
  if (depth <= 0 || parent == 0.0 || n < 2) return id;

  int best_feature = -1;
  double best_threshold = 0, best_gain = 1e-12;
  auto consider = [&](int feature, double threshold, auto goes_left) {
    std::vector<int> lv(labels_.size(), 0), rv(labels_.size(), 0);
    int nl = 0, nr = 0;
    for (int r : rows) {
      if (goes_left(data[size_t(r)].first))
        ++lv[size_t(data[size_t(r)].second)], ++nl;
      else
        ++rv[size_t(data[size_t(r)].second)], ++nr;
    }
    if (nl == 0 || nr == 0) return;
    const double gain = parent - (nl * gini(lv, nl) + nr * gini(rv, nr)) / n;
    if (gain > best_gain) best_gain = gain, best_feature = feature, best_threshold = threshold;
  };
  std::vector<int> collectives;
  for (int r : rows) collectives.push_back(data[size_t(r)].first.collective);
  std::sort(collectives.begin(), collectives.end());
  collectives.erase(std::unique(collectives.begin(), collectives.end()), collectives.end());
  for (int cv : collectives) consider(0, cv, [cv](const ContextFeatures& f) { return f.collective == cv; });
  for (int feature = 1; feature <= 3; ++feature) {
    std::vector<double> values;
    for (int r : rows) values.push_back(numeric(data[size_t(r)].first, feature));
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    for (size_t i = 0; i + 1 < values.size(); ++i) {
      const double t = 0.5 * (values[i] + values[i + 1]);
      consider(feature, t, [feature, t](const ContextFeatures& f) { return numeric(f, feature) <= t; });
    }
  }
  if (best_feature < 0) return id;
  std::vector<int> left, right;
  for (int r : rows) {
    const ContextFeatures& f = data[size_t(r)].first;
    const bool l =
        best_feature == 0 ? f.collective == int(best_threshold) : numeric(f, best_feature) <= best_threshold;
    (l ? left : right).push_back(r);
  }
  nodes_[size_t(id)].feature = best_feature;
  nodes_[size_t(id)].threshold = best_threshold;
  const int l = build(data, std::move(left), depth - 1);
  const int r = build(data, std::move(right), depth - 1);
  nodes_[size_t(id)].left = l;
  nodes_[size_t(id)].right = r;
  return id;
}

void TreeSelector::fit(const Sweep& sweep, const std::vector<int>& train, int depth) {
  const SweepView v = sweep.arm_view();
  std::vector<std::pair<ContextFeatures, Arm>> best;
  for (int c : train)
    if (const std::optional<Arm> a = best_arm(sweep, v, c))
      best.push_back({context_features(sweep.context(c)), *a});
  // The labels: the distinct best arms in Arm order (a slot sweep's: slot order).
  labels_.clear();
  for (const auto& [f, a] : best) labels_.push_back(a);
  std::sort(labels_.begin(), labels_.end());
  labels_.erase(std::unique(labels_.begin(), labels_.end()), labels_.end());
  std::vector<std::pair<ContextFeatures, int>> data;
  for (const auto& [f, a] : best)
    data.push_back({f, int(std::lower_bound(labels_.begin(), labels_.end(), a) - labels_.begin())});
  nodes_.clear();
  std::vector<int> rows(data.size());
  std::iota(rows.begin(), rows.end(), 0);
  if (!data.empty()) build(data, std::move(rows), depth);
}

int TreeSelector::predict(const Sweep& sweep, int context) const {
  if (nodes_.empty()) return -1;
  const ContextFeatures f = context_features(sweep.context(context));
  int id = 0;
  while (nodes_[size_t(id)].feature >= 0) {
    const Node& nd = nodes_[size_t(id)];
    const bool l =
        nd.feature == 0 ? f.collective == int(nd.threshold) : numeric(f, nd.feature) <= nd.threshold;
    id = l ? nd.left : nd.right;
  }
  // The leaf's most frequent label the query holds; ties: the lowest label.
  const std::vector<int>& votes = nodes_[size_t(id)].votes;
  int best = -1, best_index = -1;
  for (size_t l = 0; l < labels_.size(); ++l) {
    if (votes[l] == 0 || (best >= 0 && votes[l] <= votes[size_t(best)])) continue;
    const int index = sweep.arm_index(context, labels_[l]);
    if (index < 0) continue;
    best = int(l);
    best_index = index;
  }
  return best_index;
}

int TreeSelector::leaves() const {
  return int(std::count_if(nodes_.begin(), nodes_.end(), [](const Node& n) { return n.feature < 0; }));
}

namespace {

// A selector's decisions (Selector: KnnSelector, TreeSelector, ... fit(sweep, train, value) and
// predict(sweep, context)): the fit on every training context predicts the others, and with
// leave_one_out each training context is predicted by a fit on the rest.
template <typename Selector, typename Value>
std::vector<int> selector_decisions(const Sweep& sweep, const std::vector<int>& train, bool leave_one_out,
                                    Value value) {
  std::vector<int> out(size_t(sweep.num_contexts()), -1);
  std::vector<char> in_train(out.size(), 0);
  for (int c : train) in_train[size_t(c)] = 1;
  Selector full;
  full.fit(sweep, train, value);
  for (int c = 0; c < sweep.num_contexts(); ++c)
    if (!(leave_one_out && in_train[size_t(c)])) out[size_t(c)] = full.predict(sweep, c);
  if (leave_one_out)
    for (size_t i = 0; i < train.size(); ++i) {
      std::vector<int> others;
      others.reserve(train.size());
      for (size_t j = 0; j < train.size(); ++j)
        if (j != i) others.push_back(train[j]);
      Selector fold;
      fold.fit(sweep, others, value);
      out[size_t(train[i])] = fold.predict(sweep, train[i]);
    }
  return out;
}

}  // namespace

std::vector<int> supervised_decisions(const PolicyConfig& cfg, const Sweep& sweep,
                                      const std::vector<int>& train, bool leave_one_out) {
  switch (cfg.kind) {
#define NCCLBOT_SUPERVISED_DECISIONS(Kind, Selector, key) \
  case PolicyKind::Kind:                                  \
    return selector_decisions<Selector>(sweep, train, leave_one_out, cfg.key);
    NCCLBOT_SUPERVISED_SELECTORS(NCCLBOT_SUPERVISED_DECISIONS)
#undef NCCLBOT_SUPERVISED_DECISIONS
    default:
      throw UsageError("supervised_decisions: not a supervised policy");
  }
}

}  // namespace ncclbot
