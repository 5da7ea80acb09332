#pragma once
// The one benchmark harness (nvbench's split: a benchmark names its work, the harness owns the
// measuring): warm-up runs, then timed repetitions on a steady clock, reported as their median.
#include <functional>
#include <vector>

namespace ncclbot {

// Wall time on a steady clock, the process's CPU time (all threads) and the calling thread's: on a
// shared machine the CPU times give the per-core rate that the wall time hides, and the thread's
// leaves out what other threads of the process do meanwhile.
struct BenchTiming {
  double median_s = 0, min_s = 0, max_s = 0;
  double median_cpu_s = 0;
  double median_thread_cpu_s = 0, min_thread_cpu_s = 0;
  std::vector<double> runs_s;  // the wall time of each timed repetition, in the order run
  int repetitions = 0;
};

struct BenchSettings {
  int warmup = 1;
  int repetitions = 5;
  // Work after each timed repetition that belongs to no time (a tuner's latency reports, which NCCL
  // makes on another thread): left out when empty.
  std::function<void()> after_each;
};

BenchTiming measure(const std::function<void()>& work, const BenchSettings& settings = {});

}  // namespace ncclbot
