#include "ncclbot/core/sweep.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "ncclbot/core/error.hpp"
#include "ncclbot/core/names.hpp"

namespace ncclbot {
namespace {

std::string describe(const Context& c) {
  return c.fabric + " " + std::string(collective_name(c.collective)) + " " + std::to_string(c.nodes) + "x" +
         std::to_string(c.gpus_per_node) + " " + std::to_string(c.bytes) + "B";
}

// The mean of one arm's R samples, summed in sample order in double: every arm's price unless the
// sweep is priced at a truth.
double mean_of_samples(const float* samples, int R) {
  double sum = 0.0;
  for (int r = 0; r < R; ++r) sum += double(samples[r]);
  return sum / R;
}

template <typename T>
bool bitwise_equal(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

}  // namespace

Sweep::Sweep(std::vector<Context> contexts, int samples, std::vector<float> time_us,
             std::vector<uint32_t> valid, std::optional<std::vector<float>> prior_us)
    : contexts_(std::move(contexts)),
      samples_(samples),
      time_us_(std::move(time_us)),
      valid_(std::move(valid)),
      prior_us_(std::move(prior_us)) {
  const size_t C = contexts_.size();
  if (samples_ <= 0 && C > 0) throw std::invalid_argument("Sweep: samples per arm must be positive");
  if (time_us_.size() != C * kNumArms * size_t(samples_) || valid_.size() != C ||
      (prior_us_ && prior_us_->size() != C * kNumArms))
    throw std::invalid_argument("Sweep: tensor shapes do not match the context count");
  mean_us_.assign(C * kNumArms, std::numeric_limits<double>::quiet_NaN());
  for (size_t c = 0; c < C; ++c)
    for (int a = 0; a < kNumArms; ++a) {
      if (!ArmMask{valid_[c]}.has(a)) continue;
      mean_us_[c * kNumArms + a] = mean_of_samples(&time_us_[(c * kNumArms + a) * samples_], samples_);
    }
  list_slot_arms();
}

Sweep::Sweep(std::vector<Context> contexts, int samples, KnobArms knob)
    : contexts_(std::move(contexts)), samples_(samples) {
  const size_t C = contexts_.size();
  const size_t A = knob.arms.size();
  if (samples_ <= 0 && C > 0) throw std::invalid_argument("Sweep: samples per arm must be positive");
  if (knob.arm_begin.size() != C + 1 || knob.arm_begin.front() != 0 || size_t(knob.arm_begin.back()) != A ||
      knob.time_us.size() != A * size_t(samples_) || (knob.prior_us && knob.prior_us->size() != A))
    throw std::invalid_argument("Sweep: knob tensor shapes do not match the arm count");
  for (size_t c = 0; c < C; ++c)
    if (knob.arm_begin[c + 1] <= knob.arm_begin[c])
      throw std::invalid_argument("Sweep: a context without arms");
  knob_ = std::move(knob);
  index_knob_arms();
}

void Sweep::index_knob_arms() {
  const KnobArms& k = *knob_;
  const size_t C = contexts_.size(), R = size_t(samples_);
  IndexTensors& x = knob_index_;
  x.arms = 0;
  for (size_t c = 0; c < C; ++c) x.arms = std::max(x.arms, int(k.arm_begin[c + 1] - k.arm_begin[c]));
  const size_t A = size_t(x.arms), W = (A + 31) / 32;
  x.time_us.assign(C * A * R, std::numeric_limits<float>::quiet_NaN());
  x.mean_us.assign(C * A, std::numeric_limits<double>::quiet_NaN());
  if (k.prior_us) x.prior_us.emplace(C * A, -1.0f);
  x.valid.assign(C * W, 0u);
  x.table.assign(C * A, Arm{});
  for (size_t c = 0; c < C; ++c)
    for (int32_t at = k.arm_begin[c]; at < k.arm_begin[c + 1]; ++at) {
      const size_t i = size_t(at - k.arm_begin[c]), to = c * A + i;
      const float* samples = &k.time_us[size_t(at) * R];
      std::copy_n(samples, R, &x.time_us[to * R]);
      x.mean_us[to] = mean_of_samples(samples, samples_);
      if (k.prior_us) (*x.prior_us)[to] = (*k.prior_us)[size_t(at)];
      x.valid[c * W + i / 32] |= 1u << (i % 32);
      x.table[to] = k.arms[size_t(at)];
    }
}

void Sweep::list_slot_arms() {
  slot_arm_begin_.assign(1, 0);
  for (uint32_t bits : valid_) {
    for (int a = 0; a < kNumArms; ++a)
      if (ArmMask{bits}.has(a)) slot_arms_.push_back(Arm::of_slot(a));
    slot_arm_begin_.push_back(int32_t(slot_arms_.size()));
  }
}

std::span<const Arm> Sweep::arms(int c) const {
  const std::vector<Arm>& arms = knob_ ? knob_->arms : slot_arms_;
  const std::vector<int32_t>& begin = knob_ ? knob_->arm_begin : slot_arm_begin_;
  return std::span<const Arm>(arms).subspan(size_t(begin.at(size_t(c))),
                                            size_t(begin.at(size_t(c) + 1) - begin[size_t(c)]));
}

int Sweep::arm_index(int c, const Arm& a) const {
  const std::span<const Arm> list = arms(c);
  const auto it = std::lower_bound(list.begin(), list.end(), a);
  if (it == list.end() || !(*it == a)) return -1;
  return knob_ ? int(it - list.begin()) : a.slot();
}

float Sweep::arm_sample(int c, int i, int r) const {
  if (knob_) return knob_->time_us[(size_t(knob_->arm_begin[size_t(c)] + i)) * size_t(samples_) + size_t(r)];
  const int slot = arms(c)[size_t(i)].slot();
  return time_us_[(size_t(c) * kNumArms + size_t(slot)) * size_t(samples_) + size_t(r)];
}

double Sweep::arm_mean(int c, int i) const {
  if (knob_) return knob_index_.mean_us[size_t(c) * size_t(knob_index_.arms) + size_t(i)];
  return mean_us_[size_t(c) * kNumArms + size_t(arms(c)[size_t(i)].slot())];
}

float Sweep::arm_prior(int c, int i) const {
  if (knob_) return knob_->prior_us ? (*knob_->prior_us)[size_t(knob_->arm_begin[size_t(c)] + i)] : -1.0f;
  return prior_us_ ? (*prior_us_)[size_t(c) * kNumArms + size_t(arms(c)[size_t(i)].slot())] : -1.0f;
}

SweepView Sweep::view() const {
  if (knob_)
    throw InputError(
        knob_->source, knob_->knob_line,
        "this arm sets channels or a chunk size, but this command's engine holds one arm per "
        "algorithm and protocol (" +
            std::to_string(kNumArms) +
            " slots): give it a sweep without channels and chunk_bytes columns (or with 0 in them)");
  SweepView v;
  v.num_contexts = num_contexts();
  v.samples = samples_;
  v.time_us = time_us_.data();
  v.mean_us = mean_us_.data();
  v.prior_us = prior_us_ ? prior_us_->data() : nullptr;
  v.valid = valid_.data();
  v.first_use_us = first_use_us_.empty() ? nullptr : first_use_us_.data();
  v.fresh = fresh_noise_.empty() ? nullptr : fresh_noise_.data();
  v.dynamics = dynamics_.call;
  return v;
}

void Sweep::check_arms_per_context(int limit, const std::string& what) const {
  if (!knob_ || knob_index_.arms <= limit) return;
  for (size_t c = 0; c + 1 < knob_->arm_begin.size(); ++c) {
    const int32_t first = knob_->arm_begin[c], count = knob_->arm_begin[c + 1] - first;
    if (count <= limit) continue;
    const size_t past = size_t(first + limit);
    const long line = past < knob_->arm_line.size() ? knob_->arm_line[past] : knob_->knob_line;
    throw InputError(knob_->source, line,
                     "context " + describe(contexts_[c]) + " holds " + std::to_string(count) + " arms, but " +
                         what + " holds at most " + std::to_string(limit) + " per context (this is arm " +
                         std::to_string(limit + 1) + ")");
  }
}

SweepView Sweep::arm_view() const {
  if (!knob_) return view();
  SweepView v;
  v.num_contexts = num_contexts();
  v.samples = samples_;
  v.arms = knob_index_.arms;
  v.time_us = knob_index_.time_us.data();
  v.mean_us = knob_index_.mean_us.data();
  v.prior_us = knob_index_.prior_us ? knob_index_.prior_us->data() : nullptr;
  v.valid = knob_index_.valid.data();
  v.arm_table = knob_index_.table.data();
  v.first_use_us = first_use_us_.empty() ? nullptr : first_use_us_.data();
  v.fresh = fresh_noise_.empty() ? nullptr : fresh_noise_.data();
  v.dynamics = dynamics_.call;
  return v;
}

void Sweep::price_on(const Sweep& truth) {
  if (truth.contexts_ != contexts_ || truth.slot_shaped() != slot_shaped())
    throw std::invalid_argument("Sweep::price_on: the truth holds other contexts");
  for (int c = 0; c < num_contexts(); ++c) {
    const auto mine = arms(c), theirs = truth.arms(c);
    if (!std::equal(mine.begin(), mine.end(), theirs.begin(), theirs.end()))
      throw std::invalid_argument("Sweep::price_on: the truth holds other arms");
  }
  if (knob_) {
    knob_index_.mean_us = truth.knob_index_.mean_us;  // the same arms, so the same padded layout
  } else {
    mean_us_ = truth.mean_us_;  // the same valid slots, NaN elsewhere in both
  }
  priced_on_truth_ = true;
}

void Sweep::observe_afresh(std::vector<ObservationNoise> noise) {
  if (!priced_on_truth_)
    throw std::invalid_argument("Sweep::observe_afresh: only a sweep priced on its truth draws afresh");
  if (noise.size() != contexts_.size())
    throw std::invalid_argument("Sweep::observe_afresh: one noise per context is needed");
  for (const ObservationNoise& n : noise)
    if (!(n.sigma >= 0.0 && n.sigma <= 10.0) || !(n.spike_prob >= 0.0 && n.spike_prob <= 1.0) ||
        !(n.spike_alpha > 0.0) || !(n.spike_scale > 0.0) || !(n.spike_cap > 0.0))
      throw std::invalid_argument("Sweep::observe_afresh: noise out of range");
  fresh_noise_ = std::move(noise);
}

void Sweep::set_dynamics(const SweepDynamics& d) {
  const CallDynamics& c = d.call;
  auto in = [](double x, double lo, double hi) { return x >= lo && x <= hi; };
  if (!in(c.job_warmup, 0.0, 100.0) || !in(c.arm_warmup, 0.0, 100.0) || c.job_warmup_calls < 0 ||
      c.arm_warmup_calls < 0 || c.job_warmup_calls > 100000000 || c.arm_warmup_calls > 100000000 ||
      !(c.shift_rate >= 0.0f && c.shift_rate < 1.0f) || !(c.shift_size >= 0.0f && c.shift_size < 1.0f) ||
      !(c.shift_arm_size >= 0.0f && c.shift_arm_size < 1.0f) || !in(d.first_use_base_us, 0.0, 1e9) ||
      !in(d.first_use_per_host_us, 0.0, 1e9))
    throw std::invalid_argument("Sweep: call dynamics out of range");
  dynamics_ = d;
  first_use_us_.clear();
  if (d.has_first_use())
    for (const Context& ctx : contexts_)
      first_use_us_.push_back(float(d.first_use_base_us + d.first_use_per_host_us * double(ctx.nodes)));
}

bool Sweep::identical_to(const Sweep& o) const {
  if (contexts_ != o.contexts_ || samples_ != o.samples_ || has_prior() != o.has_prior()) return false;
  if (!bitwise_equal(time_us_, o.time_us_) || !bitwise_equal(valid_, o.valid_) ||
      !bitwise_equal(mean_us_, o.mean_us_) || !bitwise_equal(first_use_us_, o.first_use_us_))
    return false;
  if (!(dynamics_ == o.dynamics_) || fresh_noise_ != o.fresh_noise_) return false;
  if (knob_.has_value() != o.knob_.has_value()) return false;
  if (knob_ && (knob_->arms != o.knob_->arms || knob_->arm_begin != o.knob_->arm_begin ||
                !bitwise_equal(knob_->time_us, o.knob_->time_us) ||
                knob_->prior_us.has_value() != o.knob_->prior_us.has_value() ||
                (knob_->prior_us && !bitwise_equal(*knob_->prior_us, *o.knob_->prior_us))))
    return false;
  return !prior_us_ || bitwise_equal(*prior_us_, *o.prior_us_);
}

void SweepBuilder::add(const Context& ctx, int slot, int sample, float time_us, std::optional<float> prior_us,
                       long line) {
  if (!is_arm_slot(slot)) throw InputError(source_, line, "arm slot out of range");
  add(ctx, Arm::of_slot(slot), sample, time_us, prior_us, line);
}

void SweepBuilder::add(const Context& ctx, const Arm& key, int sample, float time_us,
                       std::optional<float> prior_us, long line) {
  if (const char* fault = arm_fault(key)) throw InputError(source_, line, arm_label(key) + ": " + fault);
  if (sample < 0) throw InputError(source_, line, "sample index must be >= 0");
  if (!std::isfinite(time_us) || time_us <= 0.0f)
    throw InputError(source_, line, "time_us must be a positive finite number");
  if (prior_us && (!std::isfinite(*prior_us) || *prior_us <= 0.0f))
    throw InputError(source_, line, "prior_us must be a positive finite number");
  if (!with_prior_) with_prior_ = prior_us.has_value();
  if (*with_prior_ != prior_us.has_value())
    throw InputError(source_, line, "prior_us must be given on every row or on none");

  if (!key.default_knobs() && !first_knob_line_) first_knob_line_ = line;
  std::map<Arm, ArmRows>& arms = cells_[ctx];
  if (arms.size() == size_t(kMaxArmsPerContext) && !arms.count(key))
    throw InputError(source_, line,
                     describe(ctx) + " has more than " + std::to_string(kMaxArmsPerContext) +
                         " arms, the most a sweep context may hold");
  ArmRows& arm = arms[key];
  if (arm.samples.empty()) {
    arm.first_line = line;
    arm.prior = prior_us;
  } else if (prior_us && arm.prior && *prior_us != *arm.prior) {
    throw InputError(
        source_, line,
        "prior_us differs from line " + std::to_string(arm.first_line) + " for the same context and arm");
  }
  if (!arm.samples.emplace(sample, time_us).second)
    throw InputError(
        source_, line,
        "duplicate row for " + describe(ctx) + " " + arm_label(key) + " sample " + std::to_string(sample));
  ++rows_;
}

Sweep SweepBuilder::build() const {
  if (cells_.empty()) throw InputError(source_, 0, "no data rows");
  int R = -1;
  long r_line = 0;
  for (const auto& [ctx, arms] : cells_) {
    for (const auto& [slot, arm] : arms) {
      const int n = int(arm.samples.size());
      if (R < 0) {
        R = n;
        r_line = arm.first_line;
      } else if (n != R) {
        throw InputError(source_, arm.first_line,
                         describe(ctx) + " " + arm_label(slot) + " has " + std::to_string(n) +
                             " samples, but the arm at line " + std::to_string(r_line) + " has " +
                             std::to_string(R) + " (every arm needs the same sample count)");
      }
      if (arm.samples.rbegin()->first != n - 1)
        throw InputError(
            source_, arm.first_line,
            describe(ctx) + " " + arm_label(slot) + ": sample indices must be 0.." + std::to_string(n - 1));
    }
  }
  return first_knob_line_ ? build_knobs(R) : build_slots(R);
}

Sweep SweepBuilder::build_slots(int R) const {
  const size_t C = cells_.size();
  std::vector<Context> contexts;
  std::vector<uint32_t> valid;
  std::vector<float> time(C * kNumArms * size_t(R), std::numeric_limits<float>::quiet_NaN());
  std::optional<std::vector<float>> prior;
  if (with_prior_.value_or(false)) prior.emplace(C * kNumArms, -1.0f);
  size_t c = 0;
  for (const auto& [ctx, arms] : cells_) {
    contexts.push_back(ctx);
    ArmMask mask;
    for (const auto& [arm_key, arm] : arms) {
      const int slot = arm_key.slot();
      mask.set(slot);
      for (const auto& [r, t] : arm.samples) time[(c * kNumArms + size_t(slot)) * size_t(R) + size_t(r)] = t;
      if (prior) (*prior)[c * kNumArms + size_t(slot)] = *arm.prior;
    }
    valid.push_back(mask.bits);
    ++c;
  }
  return Sweep(std::move(contexts), R, std::move(time), std::move(valid), std::move(prior));
}

Sweep SweepBuilder::build_knobs(int R) const {
  std::vector<Context> contexts;
  Sweep::KnobArms knob;
  knob.source = source_;
  knob.knob_line = *first_knob_line_;
  knob.arm_begin.push_back(0);
  if (with_prior_.value_or(false)) knob.prior_us.emplace();
  for (const auto& [ctx, arms] : cells_) {
    contexts.push_back(ctx);
    for (const auto& [arm_key, arm] : arms) {
      knob.arms.push_back(arm_key);
      knob.arm_line.push_back(arm.first_line);
      for (const auto& [r, t] : arm.samples) knob.time_us.push_back(t);
      if (knob.prior_us) knob.prior_us->push_back(*arm.prior);
    }
    knob.arm_begin.push_back(int32_t(knob.arms.size()));
  }
  return Sweep(std::move(contexts), R, std::move(knob));
}

}  // namespace ncclbot
