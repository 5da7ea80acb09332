#pragma once
// Aggregation of replay outcomes where they were computed, written once against Thrust's generic
// algorithms: the CUDA engine passes thrust::device (the work runs on the GPU and only summaries
// cross PCIe), the host test passes thrust::cpp::par (the same code, run by g++).
//
// The reduction order is pinned to the CPU engine's, so the numbers are bit-identical:
//   - the per (config, context) mean over seeds is one sequential sum in seed order, divided by
//     the seed count (cpu_engine.cpp);
//   - the per-config summary is summarize_losses() (stats/loss_summary.cpp): a sequential sum and
//     max in context order, the count of losses > 0.10, and the p99 of NumPy's "linear" method read
//     from the config's losses sorted ascending.
// Sorting is the only parallel step, and a sort's output does not depend on how it was computed.
#include <thrust/copy.h>
#include <thrust/for_each.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/sort.h>
#include <thrust/transform.h>

#include <cstdint>

#include "ncclbot/core/hd.hpp"
#include "ncclbot/stats/loss_summary.hpp"

namespace ncclbot {

// per_seed[(config * seeds + seed) * contexts + i] -> mean[config * contexts + i].
struct MeanOverSeeds {
  const double* per_seed;
  double* mean;
  int seeds, contexts;

  NCCLBOT_HD void operator()(int64_t item) const {
    const int64_t config = item / contexts, i = item % contexts;
    double sum = 0.0;
    for (int s = 0; s < seeds; ++s) sum += per_seed[(config * seeds + s) * contexts + i];
    mean[item] = sum / double(seeds);
  }
};

template <typename Exec>
void mean_over_seeds(const Exec& exec, const double* per_seed, int configs, int seeds, int contexts,
                     double* mean) {
  thrust::for_each_n(exec, thrust::counting_iterator<int64_t>(0), int64_t(configs) * contexts,
                     MeanOverSeeds{per_seed, mean, seeds, contexts});
}

struct ConfigOfItem {
  int contexts;
  NCCLBOT_HD int operator()(int64_t item) const { return int(item / contexts); }
};

// summarize_losses() of config `c`'s row, with its ascending copy in `sorted`.
struct SummarizeRow {
  const double* loss;    // [config][contexts], context order
  const double* sorted;  // [config][contexts], ascending within each config
  LossSummary* out;
  int contexts;

  NCCLBOT_HD void operator()(int c) const {
    const double* row = loss + int64_t(c) * contexts;
    const double* asc = sorted + int64_t(c) * contexts;
    LossSummary s;
    double sum = 0.0;
    for (int i = 0; i < contexts; ++i) {
      const double l = row[i];
      sum += l;
      s.max = s.max < l ? l : s.max;  // std::max(s.max, l)
      if (l > 0.10) ++s.above_10pct;
    }
    s.mean = sum / double(contexts);
    // quantile_linear_sorted(asc, 0.99); pos >= 0, so truncation is floor.
    const double pos = 0.99 * double(contexts - 1);
    const int lo = int(pos);
    const int hi = lo + 1 < contexts ? lo + 1 : contexts - 1;
    const double frac = pos - double(lo);
    s.p99 = asc[lo] + (asc[hi] - asc[lo]) * frac;
    out[c] = s;
  }
};

// One LossSummary per config of `loss` [configs][contexts] (contexts >= 1). The scratch arrays hold
// configs * contexts elements each and live where `exec` runs.
template <typename Exec>
void summarize_per_config(const Exec& exec, const double* loss, int configs, int contexts,
                          double* sorted_scratch, int* key_scratch, LossSummary* out) {
  const int64_t n = int64_t(configs) * contexts;
  thrust::copy(exec, loss, loss + n, sorted_scratch);
  thrust::transform(exec, thrust::counting_iterator<int64_t>(0), thrust::counting_iterator<int64_t>(n),
                    key_scratch, ConfigOfItem{contexts});
  // A segmented sort from two stable sorts: by value, then by config (values stay ascending).
  thrust::stable_sort_by_key(exec, sorted_scratch, sorted_scratch + n, key_scratch);
  thrust::stable_sort_by_key(exec, key_scratch, key_scratch + n, sorted_scratch);
  thrust::for_each_n(exec, thrust::counting_iterator<int>(0), configs,
                     SummarizeRow{loss, sorted_scratch, out, contexts});
}

}  // namespace ncclbot
