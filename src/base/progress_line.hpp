#pragma once
// A progress line on stderr for commands that can run longer than a few seconds (replay, tune,
// hipipe --study): redrawn in place at most every 200 ms while stderr is a terminal, and silent
// otherwise (a log or a pipe gets nothing, so outputs stay byte-identical). A host that shows
// progress its own way (the Python module's notebook bar) installs an observer instead.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

#include "ncclbot/core/replay_progress.hpp"

namespace ncclbot {

// Receives what the terminal line would show: at most every 200 ms and once at the end (`last`),
// never from two threads at once. While one is installed every enabled ProgressLine reports to it
// whether or not stderr is a terminal, and draws nothing.
using ProgressObserver = std::function<void(const std::string& label, size_t done, size_t total, bool last)>;
void set_progress_observer(ProgressObserver observer);  // an empty one: back to the terminal line

class ProgressLine : public ReplayProgress {
 public:
  // `enabled` false (or stderr not a terminal) makes every call a no-op.
  ProgressLine(std::string label, size_t total_units, bool enabled = true);
  ~ProgressLine() override;  // finishes the line
  void units_done(size_t units) override;
  void finish();

  // The text of one redraw (a pure function, tested).
  static std::string format(const std::string& label, size_t done, size_t total, double elapsed_s);

 private:
  void draw_locked(bool last);
  std::string label_;
  ProgressObserver observer_;
  std::atomic<size_t> total_, done_{0};
  bool active_ = false, finished_ = false;
  std::mutex mu_;
  std::chrono::steady_clock::time_point start_;
  std::atomic<int64_t> last_draw_ns_{-1};  // since start_; -1 = never drawn
};

}  // namespace ncclbot
