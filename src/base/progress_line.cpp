#include "base/progress_line.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>

#include "base/progress_bar.hpp"

namespace ncclbot {
namespace {

std::mutex observer_mu;
ProgressObserver& installed_observer() {
  static ProgressObserver observer;
  return observer;
}

ProgressObserver current_observer() {
  std::lock_guard<std::mutex> lock(observer_mu);
  return installed_observer();
}

}  // namespace

void set_progress_observer(ProgressObserver observer) {
  std::lock_guard<std::mutex> lock(observer_mu);
  installed_observer() = std::move(observer);
}

ProgressLine::ProgressLine(std::string label, size_t total_units, bool enabled)
    : label_(std::move(label)),
      observer_(enabled ? current_observer() : ProgressObserver{}),
      total_(total_units),
      active_(enabled && (observer_ || ::isatty(STDERR_FILENO) == 1)),
      start_(std::chrono::steady_clock::now()) {}

ProgressLine::~ProgressLine() {
  finish();
}

void ProgressLine::units_done(size_t units) {
  done_ += units;
  if (!active_) return;
  constexpr int64_t kEveryNs = 200'000'000;
  const int64_t now =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start_).count();
  const int64_t last = last_draw_ns_.load();
  if (now - (last < 0 ? 0 : last) < kEveryNs) return;
  std::unique_lock<std::mutex> lock(mu_, std::try_to_lock);
  if (!lock.owns_lock() || finished_) return;
  last_draw_ns_ = now;
  draw_locked(false);
}

void ProgressLine::finish() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!active_ || finished_) return;
  finished_ = true;
  // Only a line that was drawn is closed: a command that finished quickly leaves no trace.
  if (last_draw_ns_.load() >= 0) draw_locked(true);
}

std::string ProgressLine::format(const std::string& label, size_t done, size_t total, double elapsed_s) {
  const double frac = total > 0 ? std::min(1.0, double(done) / double(total)) : 1.0;
  const double eta = done > 0 ? elapsed_s / double(done) * double(total > done ? total - done : 0) : NAN;
  return fmt::format("{}: {:3.0f}% {}/{} units, elapsed {}, ETA {}", label, frac * 100, done, total,
                     format_duration(elapsed_s), format_duration(eta));
}

void ProgressLine::draw_locked(bool last) {
  if (observer_) {
    observer_(label_, done_.load(), total_.load(), last);
    return;
  }
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const std::string line = format(label_, done_.load(), total_.load(), elapsed);
  std::fprintf(stderr, "\r%-100.100s%s", line.c_str(), last ? "\n" : "");
  std::fflush(stderr);
}

}  // namespace ncclbot
