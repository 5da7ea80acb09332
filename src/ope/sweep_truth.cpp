#include "ncclbot/ope/sweep_truth.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <tuple>

#include "ncclbot/core/call_dynamics.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/io/sweep_csv.hpp"
#include "ncclbot/replay/cpu_engine.hpp"
#include "ncclbot/replay/replay.hpp"

namespace ncclbot {

std::vector<int> sweep_contexts(const LogBlocks& data, const Sweep& sweep, const std::string& path) {
  std::map<std::tuple<int, uint64_t, int, int>, int> index;
  for (int c = 0; c < sweep.num_contexts(); ++c) {
    const Context& ctx = sweep.context(c);
    index[{int(ctx.collective), ctx.bytes, ctx.nodes, ctx.gpus_per_node}] = c;
  }
  std::vector<int> out;
  for (const OpeContext& c : data.contexts) {
    const int gpn = c.nodes > 0 ? int(c.ranks / c.nodes) : int(c.ranks);
    const auto it = index.find({c.collective, c.bytes, int(c.nodes), gpn});
    if (it == index.end())
      throw InputError(path, 0,
                       "holds no context of the log's collective " + std::to_string(c.collective) + ", " +
                           std::to_string(c.bytes) + " B, " + std::to_string(c.nodes) + "x" +
                           std::to_string(gpn));
    out.push_back(it->second);
  }
  return out;
}

std::vector<std::vector<int>> sweep_arms(const LogBlocks& data, const Sweep& sweep,
                                         const std::vector<int>& where) {
  std::vector<std::vector<int>> out(data.contexts.size());
  for (size_t x = 0; x < data.contexts.size(); ++x)
    for (const Arm& a : data.arms.arms) out[x].push_back(sweep.arm_index(where[x], a));
  return out;
}

std::vector<std::vector<double>> logged_level_sums(const LogBlocks& data, const Sweep& sweep,
                                                   const std::vector<int>& where,
                                                   const std::vector<std::vector<int>>& arms,
                                                   const std::string& path) {
  const SweepView v = sweep.arm_view();
  std::vector<std::vector<double>> out(data.contexts.size());
  for (size_t x = 0; x < data.contexts.size(); ++x)
    out[x].assign(data.arms.size(), double(data.blocks[x].calls));
  if (!v.dynamic()) return out;
  const CallDynamics& d = v.dynamics;
  if (d.arm_warmup > 0.0f && d.arm_warmup_calls > 0)
    throw InputError(path, 0,
                     "has arm warm-up, which depends on the target's own plays: no truth for a target");
  // The plugin writes the seed as a decimal number; anything else is no seed to replay with.
  std::string seed_text;
  if (!data.files.empty())
    if (const auto it = data.files.front().header.find("seed"); it != data.files.front().header.end())
      seed_text = it->second;
  uint64_t seed = 0;
  const auto [end, error] = std::from_chars(seed_text.data(), seed_text.data() + seed_text.size(), seed);
  if (seed_text.empty() || error != std::errc() || end != seed_text.data() + seed_text.size())
    throw InputError(path, 0, "has call dynamics, and the log's header gives no seed to replay them with");
  std::vector<double> level(size_t(v.arms));
  for (size_t x = 0; x < data.contexts.size(); ++x) {
    const ContextBlocks& b = data.blocks[x];
    const uint64_t id = context_stream_id(sweep.context(where[x]));
    uint64_t covered = 0;
    for (size_t j = 0; j < b.blocks(); ++j) covered += b.last_index[j] - b.first_index[j] + 1;
    if (covered != b.calls)
      throw InputError(path, 0,
                       "has call dynamics, and the log misses calls of " +
                           ope_context_text(data.contexts[x]) + " (" + std::to_string(b.calls) +
                           " logged between its first and last of " + std::to_string(covered) +
                           "): the truth needs each logged call's level");
    std::fill(out[x].begin(), out[x].end(), 0.0);
    uint32_t shifts = 0, next = d.shifts() ? shift_gap(d, seed, id, 0) : 0xffffffffu;
    std::fill(level.begin(), level.end(), 1.0);
    for (size_t j = 0; j < b.blocks(); ++j)
      for (uint64_t t = b.first_index[j]; t <= b.last_index[j]; ++t) {
        while (uint64_t(next) <= t) {
          ++shifts;
          shifted_best_cost(d, v.mean_us + int64_t(where[x]) * v.arms, v.valid_arms(where[x]), v.arms, seed,
                            id, shifts, level.data());
          next = next_change_point(d, seed, id, shifts, next);
        }
        const double warm =
            warm_factor(d.job_warmup, d.job_warmup_calls, uint32_t(std::min<uint64_t>(t, 0xffffffffu)));
        for (size_t i = 0; i < data.arms.size(); ++i)
          if (arms[x][i] >= 0) out[x][i] += level[size_t(arms[x][i])] * warm;
      }
  }
  return out;
}

double truth_us(const LogBlocks& data, const TargetProbabilities& pi, const SweepTruth& truth,
                const std::string& path) {
  const SweepView v = truth.sweep->arm_view();
  double sum = 0;
  for (size_t x = 0; x < data.contexts.size(); ++x)
    for (size_t i = 0; i < data.arms.size(); ++i) {
      if (pi[x][i] <= 0.0) continue;
      const int j = truth.arms[x][i];
      if (j < 0)
        throw InputError(
            path, 0,
            "has no measurement of an arm the target plays (context " + std::to_string(truth.where[x]) +
                (data.arms.knob_log() ? ", " + logged_arm_text(data.arms.arms[i]) : std::string()) + ")");
      sum += pi[x][i] * v.mean(truth.where[x], j) * truth.levels[x][i];
    }
  return sum / double(data.calls);
}

ReplayTruthInputs replay_truth_inputs(const LogBlocks& data, const SweepTruth& truth) {
  const SweepView v = truth.sweep->arm_view();
  ReplayTruthInputs in;
  in.arm_mean.assign(data.contexts.size(), std::vector<double>(data.arms.size(), NAN));
  in.samples.resize(data.contexts.size());
  for (size_t x = 0; x < data.contexts.size(); ++x) {
    in.samples[x].resize(data.arms.size());
    for (size_t i = 0; i < data.arms.size(); ++i) {
      const int j = truth.arms[x][i];
      if (j < 0) continue;
      in.arm_mean[x][i] = v.mean(truth.where[x], j);
      for (int r = 0; r < v.samples; ++r) in.samples[x][i].push_back(v.sample(truth.where[x], j, r));
    }
  }
  return in;
}

SweepTruth read_sweep_truth(const std::string& sweep_path, const LogBlocks& data) {
  SweepTruth truth;
  if (!sweep_path.empty()) {
    truth.sweep = read_sweep_csv(sweep_path);
    truth.where = sweep_contexts(data, *truth.sweep, sweep_path);
    truth.arms = sweep_arms(data, *truth.sweep, truth.where);
    truth.levels = logged_level_sums(data, *truth.sweep, truth.where, truth.arms, sweep_path);
  }
  return truth;
}

}  // namespace ncclbot
