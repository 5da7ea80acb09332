#include "base/progress_bar.hpp"

#include <fmt/format.h>
#include <unistd.h>
#include <cmath>
#include <cstdio>

namespace ncclbot {

std::string format_duration(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  const long t = long(std::lround(s));
  if (t >= 3600) return fmt::format("{}h{:02}m", t / 3600, (t % 3600) / 60);
  if (t >= 60) return fmt::format("{}m{:02}s", t / 60, t % 60);
  return fmt::format("{}s", t);
}

ProgressBar::ProgressBar(std::string label, double total_cost, int total_items)
    : label_(std::move(label)),
      total_(total_cost),
      items_(total_items),
      tty_(::isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()) {}

void ProgressBar::skip(double cost) {
  done_ += cost;
  ++items_done_;
}

void ProgressBar::advance(double cost, const std::string& what) {
  done_ += cost;
  timed_ += cost;
  ++items_done_;
  draw(what);
}

void ProgressBar::draw(const std::string& what) {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double frac = total_ > 0 ? std::min(1.0, done_ / total_) : 1.0;
  const double eta = timed_ > 0 ? elapsed / timed_ * (total_ - done_) : NAN;
  constexpr int kWidth = 30;
  const int filled = int(frac * kWidth);
  const std::string bar = std::string(size_t(filled), '#') + std::string(size_t(kWidth - filled), '.');
  const std::string line =
      fmt::format("{} [{}] {:3.0f}% {}/{} units, elapsed {}, ETA {}  {}", label_, bar, frac * 100,
                  items_done_, items_, format_duration(elapsed), format_duration(eta), what);
  if (tty_)
    std::fprintf(stderr, "\r%-120.120s", line.c_str());
  else
    std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
}

void ProgressBar::finish() {
  if (tty_) std::fprintf(stderr, "\n");
  std::fflush(stderr);
}

}  // namespace ncclbot
