#pragma once
// The owning forced-arm sweep. Contexts are kept in canonical (sorted) order so the tensor does not
// depend on the order rows arrived in; `view()` hands out the trivially copyable SweepView.
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ncclbot/core/arm.hpp"
#include "ncclbot/core/context.hpp"
#include "ncclbot/core/sweep_view.hpp"

namespace ncclbot {

// Whether a measured time (us) fits a sweep, which holds float us: finite and above 0 once rounded
// to float (1e300 overflows, 1e-50 rounds to 0). What ingest takes, and what `plan --status` checks
// before it calls a run done.
inline bool sweep_can_hold_time(double us) {
  const float f = float(us);
  return std::isfinite(f) && f > 0.0f;
}

// The call dynamics a sweep carries (core/call_dynamics.hpp) and its first-use cost, which grows
// with the job: F = first_use_base_us + first_use_per_host_us * hosts (Context::nodes).
struct SweepDynamics {
  CallDynamics call;
  double first_use_base_us = 0.0;
  double first_use_per_host_us = 0.0;

  bool has_first_use() const { return first_use_base_us > 0.0 || first_use_per_host_us > 0.0; }
  bool any() const { return call.active() || has_first_use(); }
  bool operator==(const SweepDynamics&) const = default;
};

class Sweep {
 public:
  Sweep() = default;
  // Takes the tensors in SweepView layout; checks shapes and computes the per-arm means.
  Sweep(std::vector<Context> contexts, int samples, std::vector<float> time_us, std::vector<uint32_t> valid,
        std::optional<std::vector<float>> prior_us);

  int num_contexts() const { return int(contexts_.size()); }
  int samples() const { return samples_; }
  bool has_prior() const { return prior_us_.has_value(); }
  const std::vector<Context>& contexts() const { return contexts_; }
  const Context& context(int c) const { return contexts_.at(size_t(c)); }
  const std::vector<float>& time_us() const { return time_us_; }
  const std::vector<double>& mean_us() const { return mean_us_; }
  const std::vector<uint32_t>& valid() const { return valid_; }
  const std::optional<std::vector<float>>& prior_us() const { return prior_us_; }
  const SweepDynamics& dynamics() const { return dynamics_; }
  // Attaches call dynamics (std::invalid_argument if out of range); none by default.
  void set_dynamics(const SweepDynamics& d);

  SweepView view() const;
  // Bitwise equality of every tensor (NaN slots compare by bit pattern).
  bool identical_to(const Sweep& other) const;

 private:
  std::vector<Context> contexts_;
  int samples_ = 0;
  std::vector<float> time_us_;
  std::vector<double> mean_us_;
  std::vector<uint32_t> valid_;
  std::optional<std::vector<float>> prior_us_;
  SweepDynamics dynamics_;
  std::vector<float> first_use_us_;  // per context, empty without a first-use cost
};

// Collects rows (context, arm, sample index, time, optional prior) from any source and validates
// them: duplicate rows, differing sample counts, gaps in sample indices and inconsistent priors
// are InputErrors naming the source and the line of the offending row.
class SweepBuilder {
 public:
  explicit SweepBuilder(std::string source) : source_(std::move(source)) {}

  void add(const Context& ctx, int slot, int sample, float time_us, std::optional<float> prior_us, long line);
  size_t rows() const { return rows_; }
  Sweep build() const;

 private:
  struct ArmRows {
    std::map<int, float> samples;  // sample index -> time
    std::optional<float> prior;
    long first_line = 0;
  };
  std::string source_;
  std::map<Context, std::map<int, ArmRows>> cells_;
  size_t rows_ = 0;
  std::optional<bool> with_prior_;
};

}  // namespace ncclbot
