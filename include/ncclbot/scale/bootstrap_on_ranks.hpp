#pragma once
// Bootstrap intervals with their resamples split across the ranks of a process group: for each
// interval rank r computes resamples [B r / N, B (r + 1) / N) from the same streams (seed, b) one
// process uses (scale/bootstrap_range.hpp), and rank 0 gathers the pieces in rank order and takes
// the interval, so the result is bit for bit bootstrap_interval()'s for any N.
//
// Rank 0 drives: it calls interval() once per interval (every rank then computes its piece) and
// finish() at the end, while every other rank sits in serve() until that finish().
#include <span>

#include "ncclbot/scale/process_group.hpp"
#include "ncclbot/stats/bootstrap.hpp"

namespace ncclbot {

class BootstrapOnRanks {
 public:
  // `threads`: this rank's threads for its piece (0 = all cores).
  BootstrapOnRanks(ProcessGroup& group, unsigned threads) : group_(group), threads_(threads) {}

  // Rank 0 only. Percentile intervals are split; anything else (BCa, or input the library
  // rejects) runs here as bootstrap_interval(), which also raises the library's errors.
  BootstrapResult interval(std::span<const double> x, const BootstrapOptions& options);
  // Rank 0 only: releases the other ranks from serve().
  void finish();
  // Every rank but 0: computes its piece of each interval rank 0 asks for, until finish().
  void serve();

  // Intervals whose resamples were split so far (rank 0).
  long split_intervals() const { return split_; }

 private:
  std::vector<double> my_piece(std::span<const double> x, const BootstrapOptions& options) const;

  ProcessGroup& group_;
  unsigned threads_;
  long split_ = 0;
};

}  // namespace ncclbot
