#pragma once
// The owning forced-arm sweep. Contexts are kept in canonical (sorted) order so the tensor does not
// depend on the order rows arrived in; `view()` hands out the trivially copyable SweepView.
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
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
  // A sweep whose arms set channels or a chunk size (knob arms): context c holds the arms
  // arms[arm_begin[c] .. arm_begin[c+1]) in Arm order, and the tensors are [arm][sample] and [arm].
  // `knob_line` is the source line of its first knob arm, named when a command cannot take it.
  struct KnobArms {
    std::vector<Arm> arms;
    std::vector<int32_t> arm_begin;
    std::vector<float> time_us;
    std::optional<std::vector<float>> prior_us;
    std::string source;
    long knob_line = 0;
    std::vector<long> arm_line;  // each arm's first source line; may be empty (then knob_line is named)
  };
  Sweep(std::vector<Context> contexts, int samples, KnobArms knob);

  int num_contexts() const { return int(contexts_.size()); }
  int samples() const { return samples_; }
  bool has_prior() const { return knob_ ? knob_->prior_us.has_value() : prior_us_.has_value(); }
  const std::vector<Context>& contexts() const { return contexts_; }
  const Context& context(int c) const { return contexts_.at(size_t(c)); }
  const std::vector<float>& time_us() const { return time_us_; }
  const std::vector<double>& mean_us() const { return mean_us_; }
  const std::vector<uint32_t>& valid() const { return valid_; }
  const std::optional<std::vector<float>>& prior_us() const { return prior_us_; }
  const SweepDynamics& dynamics() const { return dynamics_; }
  // Attaches call dynamics (std::invalid_argument if out of range); none by default.
  void set_dynamics(const SweepDynamics& d);

  // Whether every arm runs with NCCL's own channels and chunk size: then the slot tensors (view(),
  // time_us(), valid(), ...) hold the sweep. A knob sweep has only the per-arm accessors below.
  bool slot_shaped() const { return !knob_; }
  // The slot view that the commands still on algorithm x protocol slots take; a knob sweep is
  // refused with an InputError naming its first knob arm's line.
  SweepView view() const;
  // The view of either shape (core/sweep_view.hpp): a slot sweep's is view(); a knob sweep's has each
  // context's arms at indices 0 .. K-1 in Arm order, padded to the largest K with invalid indices.
  // What the engines that hold any number of arms take (replay/replay.hpp, view_fits_arms()).
  SweepView arm_view() const;
  // The arm at index `index` of context c in arm_view(): slot `index` of a slot sweep, the
  // index-th of arms(c) in a knob sweep.
  Arm arm_at(int c, int index) const {
    return knob_ ? knob_index_.table.at(size_t(c) * size_t(knob_index_.arms) + size_t(index))
                 : Arm::of_slot(index);
  }
  // Arm `a`'s index in context c of arm_view() (a slot sweep's slot, a knob sweep's place among
  // arms(c), which both shapes list in Arm order), -1 when c did not measure it.
  int arm_index(int c, const Arm& a) const;
  // The most arms any context holds: kNumArms for a slot sweep (its indices are slots).
  int arms_per_context() const { return knob_ ? knob_index_.arms : kNumArms; }
  // An InputError when a context holds more than `limit` arms, naming the line of its first arm past
  // the limit and `what` holds no more (an engine, a command).
  void check_arms_per_context(int limit, const std::string& what) const;

  // Every sweep, either shape: the arms of context c in Arm order, and arm i's samples and prior.
  std::span<const Arm> arms(int c) const;
  float arm_sample(int c, int i, int r) const;
  float arm_prior(int c, int i) const;  // -1 without a prior
  // Arm i's price: the mean of its samples, or its truth's once price_on() gave one.
  double arm_mean(int c, int i) const;
  // Bitwise equality of every tensor (NaN slots compare by bit pattern).
  bool identical_to(const Sweep& other) const;
  // Prices every arm at `truth`'s mean of that arm instead of its own samples' mean (mean_us(), the
  // views' mean_us): a simulated sweep priced at the simulator's true latencies, which no learner
  // observes, while the replay still draws this sweep's samples. `truth` must hold the same
  // contexts and arms (std::invalid_argument otherwise).
  void price_on(const Sweep& truth);
  bool priced_on_truth() const { return priced_on_truth_; }
  // Replays draw every call's latency afresh from `noise` (one per context) around each arm's truth
  // instead of picking one of the stored samples (SweepView::fresh; the samples stay for everything
  // else). Only a sweep priced on its truth can (std::invalid_argument otherwise, or on a count that
  // is not one per context).
  void observe_afresh(std::vector<ObservationNoise> noise);

 private:
  std::vector<Context> contexts_;
  int samples_ = 0;
  std::vector<float> time_us_;
  std::vector<double> mean_us_;
  std::vector<uint32_t> valid_;
  std::optional<std::vector<float>> prior_us_;
  SweepDynamics dynamics_;
  std::vector<float> first_use_us_;  // per context, empty without a first-use cost
  // Slot sweeps: the arms of each context listed from `valid` (what arms() hands out).
  std::vector<Arm> slot_arms_;
  std::vector<int32_t> slot_arm_begin_;
  std::optional<KnobArms> knob_;  // knob sweeps only
  // A knob sweep's tensors by arm index, in SweepView layout (what arm_view() hands out).
  struct IndexTensors {
    int arms = 0;
    std::vector<float> time_us;
    std::vector<double> mean_us;
    std::optional<std::vector<float>> prior_us;
    std::vector<uint32_t> valid;
    std::vector<Arm> table;
  };
  IndexTensors knob_index_;
  bool priced_on_truth_ = false;
  std::vector<ObservationNoise> fresh_noise_;  // per context, empty unless observe_afresh()

  void list_slot_arms();
  void index_knob_arms();
};

// The most arms one context of a sweep may hold: every algorithm and protocol with 64 channel
// counts and a few chunk sizes each stays far below it.
inline constexpr int kMaxArmsPerContext = 4096;

// Collects rows (context, arm, sample index, time, optional prior) from any source and validates
// them: duplicate rows, differing sample counts, gaps in sample indices and inconsistent priors
// are InputErrors naming the source and the line of the offending row.
class SweepBuilder {
 public:
  explicit SweepBuilder(std::string source) : source_(std::move(source)) {}

  // Arm `arm` (checked with arm_fault) of context `ctx`, or its algorithm x protocol slot with
  // NCCL's own knobs.
  void add(const Context& ctx, const Arm& arm, int sample, float time_us, std::optional<float> prior_us,
           long line);
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
  std::map<Context, std::map<Arm, ArmRows>> cells_;
  std::optional<long> first_knob_line_;  // line of the first arm with channels or a chunk size

  Sweep build_slots(int samples) const;
  Sweep build_knobs(int samples) const;
  size_t rows_ = 0;
  std::optional<bool> with_prior_;
};

}  // namespace ncclbot
