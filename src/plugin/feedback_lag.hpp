#pragma once
// How late the policy's feedback is, as `replay --delay D` models it: when the policy decides call
// i of a context, the lag is the number of that context's calls decided before i whose latencies
// have not reached the policy yet (i minus the latencies absorbed so far, 0 when none are missing).
// A replay with delay D sees a lag of exactly D on every call past the first D; with window W too
// (the leader protocol, replay/leader_protocol.hpp) call t lags t - max(0, floor(t/W)W - D), D..D+W-1.
// The plugin keeps one histogram per communicator and logs its median, p90 and maximum at finalize,
// so a job's own log says which --delay matches it (docs/plugin.md "Feedback delay").
#include <cstddef>
#include <cstdint>

namespace ncclbot::plugin {

class FeedbackLagHistogram {
 public:
  // Lags of kExactBins or more share the last bin (the replay models at most 1024).
  static constexpr size_t kExactBins = 2048;

  void add(uint64_t lag) {
    ++counts_[lag < kExactBins - 1 ? lag : kExactBins - 1];
    ++total_;
    if (lag > max_) max_ = lag;
  }
  uint64_t count() const { return total_; }
  uint64_t max() const { return max_; }
  // The smallest lag L with at least ceil(q * count) decisions at or below L (q in (0, 1]); 0 when
  // nothing was recorded. A lag in the last bin reads as the largest one seen.
  uint64_t quantile(double q) const {
    if (total_ == 0) return 0;
    uint64_t need = uint64_t(q * double(total_));
    if (double(need) < q * double(total_)) ++need;
    if (need == 0) need = 1;
    uint64_t seen = 0;
    for (size_t l = 0; l < kExactBins; ++l) {
      seen += counts_[l];
      if (seen >= need) return l == kExactBins - 1 ? max_ : uint64_t(l);
    }
    return max_;
  }

 private:
  uint64_t counts_[kExactBins] = {};
  uint64_t total_ = 0;
  uint64_t max_ = 0;
};

}  // namespace ncclbot::plugin
