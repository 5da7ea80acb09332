#pragma once
// A progress bar with an ETA on stderr. Work is weighted (a unit's cost in replay steps), so the
// ETA follows the expensive units rather than the count. On a terminal it redraws one line; in a
// log it prints one line per step of progress.
#include <chrono>
#include <string>

namespace ncclbot {

class ProgressBar {
 public:
  ProgressBar(std::string label, double total_cost, int total_items);
  // `done_cost` of work finished (cost already done before this process counts as done, not as
  // speed: the ETA only uses work timed here).
  void skip(double cost);
  void advance(double cost, const std::string& what);
  void finish();

 private:
  void draw(const std::string& what);
  std::string label_;
  double total_ = 0, done_ = 0, timed_ = 0;
  int items_ = 0, items_done_ = 0;
  bool tty_ = false;
  std::chrono::steady_clock::time_point start_;
};

// "1h02m", "3m05s", "12s".
std::string format_duration(double seconds);

}  // namespace ncclbot
