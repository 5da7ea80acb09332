#pragma once
// The one benchmark harness (nvbench's split: a benchmark names its work, the harness owns the
// measuring): warm-up runs, then timed repetitions on a steady clock, reported as their median.
#include <functional>
#include <vector>

namespace ncclbot {

// Wall time on a steady clock, and the process's CPU time (all threads): on a shared machine the
// CPU time gives the per-core rate that the wall time hides.
struct BenchTiming {
  double median_s = 0, min_s = 0, max_s = 0;
  double median_cpu_s = 0;
  int repetitions = 0;
};

struct BenchSettings {
  int warmup = 1;
  int repetitions = 5;
};

BenchTiming measure(const std::function<void()>& work, const BenchSettings& settings = {});

}  // namespace ncclbot
