#include "ncclbot/scale/shard.hpp"

#include <charconv>

#include "ncclbot/core/error.hpp"

namespace ncclbot {

namespace {

bool parse_int(std::string_view s, int& out) {
  if (s.empty()) return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

}  // namespace

ShardSpec parse_shard(const std::string& text, const std::string& option) {
  const size_t slash = text.find('/');
  ShardSpec s;
  if (slash == std::string::npos || !parse_int(std::string_view(text).substr(0, slash), s.index) ||
      !parse_int(std::string_view(text).substr(slash + 1), s.count) || s.count < 1 || s.index < 0 ||
      s.index >= s.count)
    throw UsageError(option + ": expected I/N with 0 <= I < N, got '" + text + "'");
  return s;
}

ReplaySlice run_replay_units(const ReplayJob& job, ShardSpec shard, ReplayBackend resolved) {
  if (job.raw) throw UsageError("--raw cannot be combined with --shard or MPI ranks");
  // The engine's checks, made here too: a shard with no units still rejects what the run would.
  if (!job.sweep) throw UsageError("replay: no sweep");
  if (job.configs.empty()) throw UsageError("replay: no policy given");
  if (job.contexts.empty()) throw UsageError("replay: no context selected");
  if (job.seeds < 1) throw UsageError("replay: --seeds must be at least 1");
  if (job.horizon < 1) throw UsageError("replay: --horizon must be at least 1");
  if (shard.count < 1 || shard.index < 0 || shard.index >= shard.count) throw UsageError("replay: bad shard");
  const size_t n_ctx = job.contexts.size(), n = size_t(shard.count);
  ReplaySlice out;
  out.units = shard_units(job.configs.size() * n_ctx, shard);
  out.online.reserve(out.units.size());
  out.final_loss.reserve(out.units.size());
  out.seeds_kept = job.keep_per_seed ? job.seeds : 0;
  for (size_t cfg = 0; cfg < job.configs.size(); ++cfg) {
    // This shard's contexts of config cfg: i with (cfg * n_ctx + i) mod N == I, ascending, so
    // the units come out in unit order.
    const size_t first = (size_t(shard.index) + n - (cfg * n_ctx) % n) % n;
    if (first >= n_ctx) continue;
    // Losses of a (config, context) unit depend on nothing else in the job (the replay id is a
    // function of the context alone), so a sub-job over part of the contexts gives the same bits.
    // Everything but the contexts and the per-config lists is the job's own (delay included).
    ReplayJob part = job;
    part.contexts.clear();
    for (size_t i = first; i < n_ctx; i += n) part.contexts.push_back(job.contexts[i]);
    part.configs = {job.configs[cfg]};
    part.fixed_slots.clear();
    if (cfg < job.fixed_slots.size()) part.fixed_slots = {job.fixed_slots[cfg]};
    part.call_cost_us.clear();
    if (!job.call_cost_us.empty()) part.call_cost_us = {job.call_cost_us[cfg]};
    part.raw = nullptr;
    const ReplayResults r = run_replay(part, resolved);
    out.online.insert(out.online.end(), r.online.begin(), r.online.end());
    out.final_loss.insert(out.final_loss.end(), r.final_loss.begin(), r.final_loss.end());
    // The engine's [config 0][seed][context] -> [unit][seed].
    const size_t m = part.contexts.size();
    for (size_t i = 0; out.seeds_kept && i < m; ++i)
      for (int seed = 0; seed < job.seeds; ++seed) {
        out.online_per_seed.push_back(r.online_per_seed[size_t(seed) * m + i]);
        out.final_per_seed.push_back(r.final_per_seed[size_t(seed) * m + i]);
      }
  }
  return out;
}

}  // namespace ncclbot
