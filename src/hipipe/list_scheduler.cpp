#include "ncclbot/hipipe/list_scheduler.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "ncclbot/core/error.hpp"

namespace ncclbot::hipipe {

namespace {

std::vector<std::vector<StageCost>> stages_per_chunk(const Network& network,
                                                     const std::vector<double>& chunk_bytes,
                                                     const std::vector<std::vector<int>>& rs_orders) {
  if (chunk_bytes.empty()) throw UsageError("a schedule needs at least one chunk");
  if (rs_orders.size() != chunk_bytes.size()) throw UsageError("one dimension order per chunk expected");
  std::vector<std::vector<StageCost>> stages;
  stages.reserve(chunk_bytes.size());
  for (const auto& order : rs_orders) stages.push_back(allreduce_stages(network, order));
  return stages;
}

Schedule empty_schedule(const std::vector<double>& chunk_bytes,
                        const std::vector<std::vector<int>>& rs_orders, int D) {
  Schedule s;
  s.chunk_bytes = chunk_bytes;
  s.rs_orders = rs_orders;
  s.ops.resize(chunk_bytes.size() * 2 * D);
  return s;
}

}  // namespace

Schedule list_schedule(const Network& network, const std::vector<double>& chunk_bytes,
                       const std::vector<std::vector<int>>& rs_orders) {
  const int D = network.num_dimensions();
  const int K = static_cast<int>(chunk_bytes.size());
  const auto stages = stages_per_chunk(network, chunk_bytes, rs_orders);
  Schedule s = empty_schedule(chunk_bytes, rs_orders, D);
  std::vector<int> next_step(K, 0);
  std::vector<double> chunk_ready(K, 0.0), dim_free(D, 0.0);
  for (int scheduled = 0; scheduled < K * 2 * D; ++scheduled) {
    // The operation that can start first; on a tie, all-gather before reduce-scatter, then lower
    // chunk id. Taking the globally earliest start keeps the schedule non-delay: anything that
    // could still become ready earlier on that dimension would need a predecessor starting earlier.
    int best = -1;
    double best_start = std::numeric_limits<double>::infinity();
    bool best_is_ag = false;
    for (int k = 0; k < K; ++k) {
      const int j = next_step[k];
      if (j == 2 * D) continue;
      const double start = std::max(chunk_ready[k], dim_free[stages[k][j].dim]);
      const bool is_ag = stages[k][j].phase == Phase::kAllGather;
      if (start < best_start || (start == best_start && is_ag && !best_is_ag)) {
        best = k;
        best_start = start;
        best_is_ag = is_ag;
      }
    }
    const int k = best;
    const int j = next_step[k];
    const StageCost& st = stages[k][j];
    const double end = best_start + st.time_us(chunk_bytes[k]);
    s.ops[k * 2 * D + j] = {k, j, st.dim, st.phase, best_start, end};
    chunk_ready[k] = end;
    dim_free[st.dim] = end;
    next_step[k] = j + 1;
    s.makespan_us = std::max(s.makespan_us, end);
  }
  return s;
}

std::vector<std::vector<int>> dimension_sequences(const Network& network, const Schedule& schedule) {
  std::vector<std::vector<int>> seq(network.num_dimensions());
  for (int i = 0; i < static_cast<int>(schedule.ops.size()); ++i) seq[schedule.ops[i].dim].push_back(i);
  for (auto& ops : seq)
    std::stable_sort(ops.begin(), ops.end(), [&](int x, int y) {
      const Operation& a = schedule.ops[x];
      const Operation& b = schedule.ops[y];
      return a.start_us < b.start_us || (a.start_us == b.start_us && a.end_us < b.end_us);
    });
  return seq;
}

Schedule time_with_fixed_sequences(const Network& network, const std::vector<double>& chunk_bytes,
                                   const std::vector<std::vector<int>>& rs_orders,
                                   const std::vector<std::vector<int>>& sequences) {
  const int D = network.num_dimensions();
  const int K = static_cast<int>(chunk_bytes.size());
  const int n = K * 2 * D;
  const auto stages = stages_per_chunk(network, chunk_bytes, rs_orders);
  Schedule s = empty_schedule(chunk_bytes, rs_orders, D);
  // Each operation has at most two predecessors: the chunk's previous stage and the previous
  // operation in its dimension's sequence. Kahn's algorithm gives the longest-path start times.
  std::vector<int> dim_prev(n, -1), dim_next(n, -1), indegree(n, 0);
  for (const auto& seq : sequences)
    for (std::size_t i = 1; i < seq.size(); ++i) {
      dim_prev[seq[i]] = seq[i - 1];
      dim_next[seq[i - 1]] = seq[i];
    }
  for (int i = 0; i < n; ++i) indegree[i] = (i % (2 * D) != 0 ? 1 : 0) + (dim_prev[i] >= 0 ? 1 : 0);
  std::vector<double> start(n, 0.0), end(n, 0.0);
  std::vector<int> ready;
  for (int i = 0; i < n; ++i)
    if (indegree[i] == 0) ready.push_back(i);
  int done = 0;
  while (!ready.empty()) {
    const int i = ready.back();
    ready.pop_back();
    const int k = i / (2 * D), j = i % (2 * D);
    const StageCost& st = stages[k][j];
    end[i] = start[i] + st.time_us(chunk_bytes[k]);
    s.ops[i] = {k, j, st.dim, st.phase, start[i], end[i]};
    s.makespan_us = std::max(s.makespan_us, end[i]);
    ++done;
    for (int succ : {j + 1 < 2 * D ? i + 1 : -1, dim_next[i]}) {
      if (succ < 0) continue;
      start[succ] = std::max(start[succ], end[i]);
      if (--indegree[succ] == 0) ready.push_back(succ);
    }
  }
  if (done != n) throw std::logic_error("dimension sequences contradict the chunks' stage order (a cycle)");
  return s;
}

}  // namespace ncclbot::hipipe
