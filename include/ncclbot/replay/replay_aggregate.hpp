#pragma once
// Aggregation of replay outcomes where they were computed, written once against Thrust's generic
// algorithms: the CUDA engine passes thrust::device (the work runs on the GPU and only summaries
// cross PCIe), the host test passes thrust::cpp::par (the same code, run by g++).
//
// The reduction order is pinned to the CPU engine's, so the numbers are bit-identical:
//   - the per (config, context) mean over seeds is one sequential sum in seed order, divided by
//     the seed count (cpu_engine.cpp);
//   - the per-config summary is summarize_losses() (stats/loss_summary.cpp): a sequential sum and
//     max in context order, the count of losses above 10% (loss_above), and the p99 of NumPy's "linear"
//     method read from the config's losses sorted ascending.
//   - bootstrap resamples of contexts (for the metric intervals) draw resample b's units from
//     ResampleStream(seed, b) and accumulate the statistic in draw order, exactly as
//     bootstrap_interval() does (stats/bootstrap.cpp), so theta[b] equals its distribution[b].
// Sorting is the only parallel step, and a sort's output does not depend on how it was computed.
#include <thrust/copy.h>
#include <thrust/for_each.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/zip_iterator.h>
#include <thrust/sort.h>
#include <thrust/transform.h>

#include <cmath>
#include <cstdint>

#include "ncclbot/core/hd.hpp"
#include "ncclbot/stats/bootstrap_statistic.hpp"
#include "ncclbot/stats/loss_summary.hpp"
#include "ncclbot/stats/resample_stream.hpp"

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
      if (loss_above(l)) ++s.above_10pct;
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

// One LossSummary per config of `loss` [configs][contexts], given each row's ascending copy in
// `sorted` (however it was sorted: a sort's output depends only on its input).
template <typename Exec>
void summarize_sorted_rows(const Exec& exec, const double* loss, const double* sorted, int configs,
                           int contexts, LossSummary* out) {
  thrust::for_each_n(exec, thrust::counting_iterator<int>(0), configs,
                     SummarizeRow{loss, sorted, out, contexts});
}

// One LossSummary per config of `loss` [configs][contexts] (contexts >= 1), sorting with Thrust's
// generic algorithms (the CUDA engine sorts the rows with one CUB segmented sort instead and calls
// summarize_sorted_rows). The scratch arrays hold configs * contexts elements each and live where
// `exec` runs.
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
  summarize_sorted_rows(exec, loss, sorted_scratch, configs, contexts, out);
}

// theta[config][k] = the statistic of config's losses over the contexts drawn by resample
// first + k. One work item per (config, resample); every config sees the same units (paired).
struct BootstrapOverContexts {
  const double* loss;    // [config][n], context order
  const double* sorted;  // [config][n] ascending (p99 only)
  const int* unit_at;    // [config][n]: the context at each sorted position (p99 only)
  uint32_t* draws;       // [config][count][n] scratch: draws per context (p99 only)
  double* theta;         // [config][count]
  int n;
  uint64_t first, count, seed;
  BootstrapStatistic statistic;
  double threshold;

  NCCLBOT_HD void operator()(int64_t item) const {
    const int64_t config = item / int64_t(count);
    const uint64_t k = uint64_t(item) % count;
    const double* x = loss + config * n;
    ResampleStream stream(seed, first + k, ResamplePurpose::bootstrap_indices);
    const uint32_t n32 = uint32_t(n);
    double t = 0.0;
    switch (statistic) {
      case BootstrapStatistic::mean: {
        // bootstrap.cpp's order: draw i goes to partial sum i mod 4, then (s0 + s1) + (s2 + s3).
        double sum[4] = {0.0, 0.0, 0.0, 0.0};
        for (uint32_t i = 0; i < n32; ++i) sum[i & 3] += x[stream.next_below(n32)];
        t = ((sum[0] + sum[1]) + (sum[2] + sum[3])) / double(n);
        break;
      }
      case BootstrapStatistic::max: {
        double m = -HUGE_VAL;
        for (uint32_t i = 0; i < n32; ++i) {
          const double v = x[stream.next_below(n32)];
          m = m < v ? v : m;  // std::max(m, v)
        }
        t = m;
        break;
      }
      case BootstrapStatistic::count_above: {
        uint32_t above = 0;
        for (uint32_t i = 0; i < n32; ++i)
          above += loss_above(x[stream.next_below(n32)], threshold) ? 1u : 0u;
        t = double(above);
        break;
      }
      case BootstrapStatistic::p99: {
        // The top order statistics from per-context draw counts, walking the sorted order down
        // (stats/bootstrap.cpp, resample_p99); pos >= 0, so truncation is floor.
        uint32_t* c = draws + item * int64_t(n);
        for (int i = 0; i < n; ++i) c[i] = 0;
        for (uint32_t i = 0; i < n32; ++i) ++c[stream.next_below(n32)];
        const double pos = 0.99 * double(n - 1);
        const int lo = int(pos), hi = lo + 1 < n ? lo + 1 : n - 1;
        const double frac = pos - double(lo);
        const int64_t want_hi = n - 1 - hi, want_lo = n - 1 - lo;
        const double* asc = sorted + config * n;
        const int* unit = unit_at + config * n;
        double at_hi = 0.0, at_lo = 0.0;
        bool have_hi = false;
        int64_t seen = 0;
        for (int r = n - 1; r >= 0; --r) {
          const uint32_t drawn = c[unit[r]];
          if (drawn == 0) continue;
          seen += drawn;
          if (!have_hi && seen > want_hi) {
            at_hi = asc[r];
            have_hi = true;
          }
          if (seen > want_lo) {
            at_lo = asc[r];
            break;
          }
        }
        t = at_lo + (at_hi - at_lo) * frac;
        break;
      }
    }
    theta[item] = t;
  }
};

struct IndexInRow {
  int n;
  NCCLBOT_HD int operator()(int64_t item) const { return int(item % n); }
};

// The order a p99 bootstrap walks: per config, the losses ascending (`sorted`) and the context at
// each position (`unit_at`, ties in context order like std::stable_sort). `keys` is scratch.
// Thrust's generic version; the CUDA engine makes the same arrays with one CUB stable segmented
// sort of (loss, context) pairs.
template <typename Exec>
void sort_rows_with_units(const Exec& exec, const double* loss, int configs, int n, double* sorted,
                          int* unit_at, int* keys) {
  const int64_t total = int64_t(configs) * n;
  thrust::copy(exec, loss, loss + total, sorted);
  thrust::transform(exec, thrust::counting_iterator<int64_t>(0), thrust::counting_iterator<int64_t>(total),
                    keys, ConfigOfItem{n});
  thrust::transform(exec, thrust::counting_iterator<int64_t>(0), thrust::counting_iterator<int64_t>(total),
                    unit_at, IndexInRow{n});
  // Stable sorts keep equal losses in context order; (value, context) pairs travel together.
  thrust::stable_sort_by_key(exec, sorted, sorted + total,
                             thrust::make_zip_iterator(thrust::make_tuple(keys, unit_at)));
  thrust::stable_sort_by_key(exec, keys, keys + total,
                             thrust::make_zip_iterator(thrust::make_tuple(sorted, unit_at)));
}

// Resamples [first, first + count) of every config: theta[config][k]. For p99, `sorted` and
// `unit_at` come from sort_rows_with_units() and `draws` holds configs * count * n counters.
template <typename Exec>
void bootstrap_over_contexts(const Exec& exec, const double* loss, int configs, int n,
                             BootstrapStatistic statistic, double threshold, uint64_t seed, uint64_t first,
                             uint64_t count, const double* sorted, const int* unit_at, uint32_t* draws,
                             double* theta) {
  thrust::for_each_n(exec, thrust::counting_iterator<int64_t>(0), int64_t(configs) * int64_t(count),
                     BootstrapOverContexts{loss, sorted, unit_at, draws, theta, n, first, count, seed,
                                           statistic, threshold});
}

}  // namespace ncclbot
