#include "ncclbot/core/sweep.hpp"

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

std::string describe_arm(int slot) {
  return std::string(algo_name(slot_algo(slot))) + "/" + std::string(proto_name(slot_proto(slot)));
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
      double sum = 0.0;
      for (int r = 0; r < samples_; ++r) sum += double(time_us_[(c * kNumArms + a) * samples_ + r]);
      mean_us_[c * kNumArms + a] = sum / samples_;
    }
}

SweepView Sweep::view() const {
  SweepView v;
  v.num_contexts = num_contexts();
  v.samples = samples_;
  v.time_us = time_us_.data();
  v.mean_us = mean_us_.data();
  v.prior_us = prior_us_ ? prior_us_->data() : nullptr;
  v.valid = valid_.data();
  v.first_use_us = first_use_us_.empty() ? nullptr : first_use_us_.data();
  v.dynamics = dynamics_.call;
  return v;
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
  if (!(dynamics_ == o.dynamics_)) return false;
  return !prior_us_ || bitwise_equal(*prior_us_, *o.prior_us_);
}

void SweepBuilder::add(const Context& ctx, int slot, int sample, float time_us, std::optional<float> prior_us,
                       long line) {
  if (!is_arm_slot(slot)) throw InputError(source_, line, "arm slot out of range");
  if (sample < 0) throw InputError(source_, line, "sample index must be >= 0");
  if (!std::isfinite(time_us) || time_us <= 0.0f)
    throw InputError(source_, line, "time_us must be a positive finite number");
  if (prior_us && (!std::isfinite(*prior_us) || *prior_us <= 0.0f))
    throw InputError(source_, line, "prior_us must be a positive finite number");
  if (!with_prior_) with_prior_ = prior_us.has_value();
  if (*with_prior_ != prior_us.has_value())
    throw InputError(source_, line, "prior_us must be given on every row or on none");

  ArmRows& arm = cells_[ctx][slot];
  if (arm.samples.empty()) {
    arm.first_line = line;
    arm.prior = prior_us;
  } else if (prior_us && arm.prior && *prior_us != *arm.prior) {
    throw InputError(
        source_, line,
        "prior_us differs from line " + std::to_string(arm.first_line) + " for the same context and arm");
  }
  if (!arm.samples.emplace(sample, time_us).second)
    throw InputError(source_, line,
                     "duplicate row for " + describe(ctx) + " " + describe_arm(slot) + " sample " +
                         std::to_string(sample));
  ++rows_;
}

Sweep SweepBuilder::build() const {
  if (cells_.empty()) throw InputError(source_, 0, "no data rows");
  int R = -1;
  long r_line = 0;
  std::vector<Context> contexts;
  std::vector<uint32_t> valid;
  for (const auto& [ctx, arms] : cells_) {
    for (const auto& [slot, arm] : arms) {
      const int n = int(arm.samples.size());
      if (R < 0) {
        R = n;
        r_line = arm.first_line;
      } else if (n != R) {
        throw InputError(source_, arm.first_line,
                         describe(ctx) + " " + describe_arm(slot) + " has " + std::to_string(n) +
                             " samples, but the arm at line " + std::to_string(r_line) + " has " +
                             std::to_string(R) + " (every arm needs the same sample count)");
      }
      if (arm.samples.rbegin()->first != n - 1)
        throw InputError(source_, arm.first_line,
                         describe(ctx) + " " + describe_arm(slot) + ": sample indices must be 0.." +
                             std::to_string(n - 1));
    }
  }
  const size_t C = cells_.size();
  std::vector<float> time(C * kNumArms * size_t(R), std::numeric_limits<float>::quiet_NaN());
  std::optional<std::vector<float>> prior;
  if (with_prior_.value_or(false)) prior.emplace(C * kNumArms, -1.0f);
  size_t c = 0;
  for (const auto& [ctx, arms] : cells_) {
    contexts.push_back(ctx);
    ArmMask mask;
    for (const auto& [slot, arm] : arms) {
      mask.set(slot);
      for (const auto& [r, t] : arm.samples) time[(c * kNumArms + slot) * R + r] = t;
      if (prior) (*prior)[c * kNumArms + slot] = *arm.prior;
    }
    valid.push_back(mask.bits);
    ++c;
  }
  return Sweep(std::move(contexts), R, std::move(time), std::move(valid), std::move(prior));
}

}  // namespace ncclbot
