#include "ncclbot/scale/shard.hpp"

#include <algorithm>
#include <charconv>

#include "ncclbot/core/error.hpp"
#include "ncclbot/replay/communicators.hpp"

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

ShardUnits communicator_shard_units(size_t configs, size_t contexts,
                                    const std::vector<std::vector<int>>& communicators, ShardSpec shard) {
  ShardUnits u = shard_units(configs * contexts, shard);
  u.listed = true;
  const size_t n = size_t(shard.count), groups = communicators.size();
  for (size_t cfg = 0; cfg < configs; ++cfg) {
    std::vector<size_t> mine;
    for (size_t g = 0; g < groups; ++g)
      if ((cfg * groups + g) % n == size_t(shard.index))
        for (int i : communicators[g]) mine.push_back(cfg * contexts + size_t(i));
    std::sort(mine.begin(), mine.end());
    u.units.insert(u.units.end(), mine.begin(), mine.end());
  }
  return u;
}

std::vector<std::vector<int>> coupled_communicators(const ReplayJob& job) {
  std::vector<std::vector<int>> out;
  const Communicators c = first_use_communicators(*job.sweep, job.contexts);
  for (int g = 0; g < c.count(); ++g)
    out.emplace_back(c.members.begin() + c.begin[size_t(g)], c.members.begin() + c.begin[size_t(g) + 1]);
  return out;
}

ShardUnits job_shard_units(const ReplayJob& job, ShardSpec shard) {
  const std::vector<std::vector<int>> groups = coupled_communicators(job);
  if (groups.empty()) return shard_units(job.configs.size() * job.contexts.size(), shard);
  return communicator_shard_units(job.configs.size(), job.contexts.size(), groups, shard);
}

ReplaySlice run_replay_units(const ReplayJob& job, ShardSpec shard, ReplayBackend resolved) {
  if (job.raw) throw UsageError("--raw cannot be combined with --shard or MPI ranks");
  // The engine's checks, made here too: a shard with no units still rejects what the run would.
  check_replay_job(job);
  if (shard.count < 1 || shard.index < 0 || shard.index >= shard.count) throw UsageError("replay: bad shard");
  const size_t n_ctx = job.contexts.size();
  ReplaySlice out;
  out.units = job_shard_units(job, shard);
  out.online.reserve(out.units.size());
  out.final_loss.reserve(out.units.size());
  out.watched.reserve(out.units.size());
  out.seeds_kept = job.keep_per_seed ? job.seeds : 0;
  // Units come in unit order, so a config's are consecutive: each config's part runs as one job
  // over its contexts (whole communicators when they are coupled, replay/first_use.hpp).
  for (size_t k = 0; k < out.units.size();) {
    const size_t cfg = out.units.unit(k) / n_ctx;
    std::vector<size_t> own;  // job-context indices, ascending
    for (; k < out.units.size() && out.units.unit(k) / n_ctx == cfg; ++k)
      own.push_back(out.units.unit(k) % n_ctx);
    // Losses of a (config, context) unit depend on nothing else in the job but its communicator
    // (the replay id is a function of the context alone), so a sub-job over whole communicators
    // gives the same bits. Everything but the contexts and the per-config lists is the job's own.
    ReplayJob part = job;
    part.contexts.clear();
    for (size_t i : own) part.contexts.push_back(job.contexts[i]);
    part.configs = {job.configs[cfg]};
    part.fixed_slots.clear();
    if (cfg < job.fixed_slots.size()) part.fixed_slots = {job.fixed_slots[cfg]};
    part.call_cost_us.clear();
    if (!job.call_cost_us.empty()) part.call_cost_us = {job.call_cost_us[cfg]};
    part.raw = nullptr;
    const ReplayResults r = run_replay(part, resolved);
    // The engine's [config 0][seed][context] -> [unit][seed].
    const size_t m = part.contexts.size();
    for (size_t at = 0; at < m; ++at) {
      out.online.push_back(r.online[at]);
      out.final_loss.push_back(r.final_loss[at]);
      out.watched.push_back(r.watched[at]);
      for (int seed = 0; out.seeds_kept && seed < job.seeds; ++seed) {
        out.online_per_seed.push_back(r.online_per_seed[size_t(seed) * m + at]);
        out.final_per_seed.push_back(r.final_per_seed[size_t(seed) * m + at]);
      }
    }
  }
  return out;
}

}  // namespace ncclbot
