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

UnitRange shard_units(size_t total_units, ShardSpec shard) {
  // 128-bit products: U * N never overflows, and floor(U*I/N) is exact.
  const auto at = [&](int i) {
    return size_t((unsigned __int128)total_units * unsigned(i) / unsigned(shard.count));
  };
  return {at(shard.index), at(shard.index + 1)};
}

ReplaySlice run_replay_units(const ReplayJob& job, UnitRange range, ReplayBackend resolved) {
  if (job.raw) throw UsageError("--raw cannot be combined with --shard or MPI ranks");
  // The engine's checks, made here too: a shard with no units still rejects what the run would.
  if (!job.sweep) throw UsageError("replay: no sweep");
  if (job.configs.empty()) throw UsageError("replay: no policy given");
  if (job.contexts.empty()) throw UsageError("replay: no context selected");
  if (job.seeds < 1) throw UsageError("replay: --seeds must be at least 1");
  if (job.horizon < 1) throw UsageError("replay: --horizon must be at least 1");
  const size_t n_ctx = job.contexts.size();
  const size_t total = job.configs.size() * n_ctx;
  if (range.begin > range.end || range.end > total) throw UsageError("replay: unit range out of bounds");
  ReplaySlice out;
  out.units = range;
  out.online.reserve(range.size());
  out.final_loss.reserve(range.size());
  out.seeds_kept = job.keep_per_seed ? job.seeds : 0;
  size_t unit = range.begin;
  while (unit < range.end) {
    const size_t cfg = unit / n_ctx, i0 = unit % n_ctx;
    const size_t i1 = std::min(n_ctx, i0 + (range.end - unit));
    // Losses of a (config, context) unit depend on nothing else in the job (the replay id is a
    // function of the context alone), so a sub-job over part of the contexts gives the same bits.
    ReplayJob part;
    part.sweep = job.sweep;
    part.contexts.assign(job.contexts.begin() + long(i0), job.contexts.begin() + long(i1));
    part.configs = {job.configs[cfg]};
    if (cfg < job.fixed_slots.size()) part.fixed_slots = {job.fixed_slots[cfg]};
    part.seeds = job.seeds;
    part.seed_base = job.seed_base;
    part.horizon = job.horizon;
    part.threads = job.threads;
    part.keep_per_seed = job.keep_per_seed;
    const ReplayResults r = run_replay(part, resolved);
    out.online.insert(out.online.end(), r.online.begin(), r.online.end());
    out.final_loss.insert(out.final_loss.end(), r.final_loss.begin(), r.final_loss.end());
    // The engine's [config 0][seed][context] -> [unit][seed].
    const size_t n = i1 - i0;
    for (size_t i = 0; out.seeds_kept && i < n; ++i)
      for (int seed = 0; seed < job.seeds; ++seed) {
        out.online_per_seed.push_back(r.online_per_seed[size_t(seed) * n + i]);
        out.final_per_seed.push_back(r.final_per_seed[size_t(seed) * n + i]);
      }
    unit += i1 - i0;
  }
  return out;
}

}  // namespace ncclbot
