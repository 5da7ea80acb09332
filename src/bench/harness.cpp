#include "ncclbot/bench/harness.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>

namespace ncclbot {
namespace {
double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}
double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
}  // namespace

BenchTiming measure(const std::function<void()>& work, const BenchSettings& settings) {
  for (int i = 0; i < settings.warmup; ++i) work();
  std::vector<double> times, cpu_times;
  for (int i = 0; i < std::max(1, settings.repetitions); ++i) {
    const double cpu_start = process_cpu_seconds();
    const auto start = std::chrono::steady_clock::now();
    work();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    cpu_times.push_back(process_cpu_seconds() - cpu_start);
  }
  const double cpu_median = median_of(cpu_times);
  std::sort(times.begin(), times.end());
  BenchTiming t;
  t.repetitions = int(times.size());
  t.min_s = times.front();
  t.max_s = times.back();
  t.median_s = median_of(times);
  t.median_cpu_s = cpu_median;
  return t;
}

}  // namespace ncclbot
