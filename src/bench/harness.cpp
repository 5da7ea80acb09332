#include "ncclbot/bench/harness.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>

namespace ncclbot {
namespace {
double cpu_seconds(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
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
  BenchTiming t;
  std::vector<double> cpu_times, thread_times;
  for (int i = 0; i < std::max(1, settings.repetitions); ++i) {
    const double cpu_start = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID);
    const double thread_start = cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
    const auto start = std::chrono::steady_clock::now();
    work();
    t.runs_s.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    thread_times.push_back(cpu_seconds(CLOCK_THREAD_CPUTIME_ID) - thread_start);
    cpu_times.push_back(cpu_seconds(CLOCK_PROCESS_CPUTIME_ID) - cpu_start);
    if (settings.after_each) settings.after_each();
  }
  t.repetitions = int(t.runs_s.size());
  t.min_s = *std::min_element(t.runs_s.begin(), t.runs_s.end());
  t.max_s = *std::max_element(t.runs_s.begin(), t.runs_s.end());
  t.median_s = median_of(t.runs_s);
  t.median_cpu_s = median_of(cpu_times);
  t.median_thread_cpu_s = median_of(thread_times);
  t.min_thread_cpu_s = *std::min_element(thread_times.begin(), thread_times.end());
  return t;
}

}  // namespace ncclbot
