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

ReplaySlice run_replay_units(const ReplayJob& job, ShardSpec shard, ReplayBackend resolved) {
  if (job.raw) throw UsageError("--raw cannot be combined with --shard or MPI ranks");
  // The engine's checks, made here too: a shard with no units still rejects what the run would.
  check_replay_job(job);
  if (shard.count < 1 || shard.index < 0 || shard.index >= shard.count) throw UsageError("replay: bad shard");
  const size_t n_ctx = job.contexts.size(), n = size_t(shard.count);
  ReplaySlice out;
  out.units = shard_units(job.configs.size() * n_ctx, shard);
  out.online.reserve(out.units.size());
  out.final_loss.reserve(out.units.size());
  out.seeds_kept = job.keep_per_seed ? job.seeds : 0;
  // With a first-use cost the contexts of a communicator are coupled (replay/first_use.hpp): a part
  // replays every context of each communicator it touches, and keeps its own units' losses.
  std::vector<int> communicator_of(n_ctx, -1);
  Communicators comms;
  if (charges_first_use(*job.sweep)) {
    comms = communicators_of(*job.sweep, job.contexts);
    for (int g = 0; g < comms.count(); ++g)
      for (int k = comms.begin[size_t(g)]; k < comms.begin[size_t(g) + 1]; ++k)
        communicator_of[size_t(comms.members[size_t(k)])] = g;
  }
  for (size_t cfg = 0; cfg < job.configs.size(); ++cfg) {
    // This shard's contexts of config cfg: i with (cfg * n_ctx + i) mod N == I, ascending, so
    // the units come out in unit order.
    const size_t first = (size_t(shard.index) + n - (cfg * n_ctx) % n) % n;
    if (first >= n_ctx) continue;
    std::vector<size_t> own, replayed;  // job-context indices, ascending
    std::vector<bool> touched(size_t(comms.count()), false);
    for (size_t i = first; i < n_ctx; i += n) {
      own.push_back(i);
      if (communicator_of[i] >= 0) touched[size_t(communicator_of[i])] = true;
    }
    for (size_t i = 0; i < n_ctx; ++i)
      if (communicator_of[i] >= 0 ? bool(touched[size_t(communicator_of[i])])
                                  : (i >= first && (i - first) % n == 0))
        replayed.push_back(i);
    // Losses of a (config, context) unit depend on nothing else in the job but its communicator
    // (the replay id is a function of the context alone), so a sub-job over whole communicators
    // gives the same bits. Everything but the contexts and the per-config lists is the job's own.
    ReplayJob part = job;
    part.contexts.clear();
    for (size_t i : replayed) part.contexts.push_back(job.contexts[i]);
    part.configs = {job.configs[cfg]};
    part.fixed_slots.clear();
    if (cfg < job.fixed_slots.size()) part.fixed_slots = {job.fixed_slots[cfg]};
    part.call_cost_us.clear();
    if (!job.call_cost_us.empty()) part.call_cost_us = {job.call_cost_us[cfg]};
    part.raw = nullptr;
    const ReplayResults r = run_replay(part, resolved);
    // The engine's [config 0][seed][context] -> [unit][seed], own units only.
    const size_t m = part.contexts.size();
    for (size_t i : own) {
      const size_t at = size_t(std::lower_bound(replayed.begin(), replayed.end(), i) - replayed.begin());
      out.online.push_back(r.online[at]);
      out.final_loss.push_back(r.final_loss[at]);
      for (int seed = 0; out.seeds_kept && seed < job.seeds; ++seed) {
        out.online_per_seed.push_back(r.online_per_seed[size_t(seed) * m + at]);
        out.final_per_seed.push_back(r.final_per_seed[size_t(seed) * m + at]);
      }
    }
  }
  return out;
}

}  // namespace ncclbot
