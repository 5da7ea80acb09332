#include "ncclbot/scale/replay_partial.hpp"

#include <bit>
#include <cstring>
#include <map>
#include <stdexcept>

#include "ncclbot/core/error.hpp"
#include "ncclbot/version.hpp"

namespace ncclbot {

static_assert(std::endian::native == std::endian::little, "partial files store little-endian doubles");

namespace {

constexpr std::string_view kMagic = "ncclbot-partial v1\n";

uint64_t fnv1a64(std::string_view bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

std::string hex64(uint64_t v) {
  static const char* digits = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) s[size_t(i)] = digits[v & 15];
  return s;
}

std::string shard_text(ShardSpec s) {
  return std::to_string(s.index) + "/" + std::to_string(s.count);
}

}  // namespace

std::string first_identity_difference(const nlohmann::json& a, const nlohmann::json& b) {
  const auto differs = [&](const std::string& key) {
    return a.contains(key) != b.contains(key) || (a.contains(key) && a[key] != b[key]);
  };
  for (const char* key : {"command", "phase"})
    if (differs(key)) return key;
  for (auto it = a.begin(); it != a.end(); ++it)
    if (differs(it.key())) return it.key();
  for (auto it = b.begin(); it != b.end(); ++it)
    if (differs(it.key())) return it.key();
  return "";
}

nlohmann::json replay_identity(const ReplayJob& job, std::string_view sweep_sha256,
                               std::string_view backend) {
  nlohmann::json policies = nlohmann::json::array();
  for (const PolicySpec& p : job.configs) policies.push_back(p.text);
  nlohmann::json id = {{"program_version", std::string(kVersion)},
                       {"command", "replay"},
                       {"sweep_sha256", std::string(sweep_sha256)},
                       {"policies", policies},
                       {"contexts", job.contexts},
                       {"seeds", job.seeds},
                       {"seed", job.seed_base},
                       {"horizon", job.horizon},
                       {"delay", job.delay},
                       {"backend", std::string(backend)}};
  // Only when not 1 (nor charged), so partials of other runs keep their old identity.
  if (job.window > 1) id["window"] = job.window;
  if (job.policy_start > 0) id["policy_start"] = job.policy_start;
  if (!job.call_cost_us.empty()) id["call_cost_us"] = job.call_cost_us;
  if (!job.observation_cost.empty()) id["observation_cost"] = job.observation_cost;
  // Coupled contexts (a first-use cost) are dealt in communicator blocks: the merge needs the blocks.
  const std::vector<std::vector<int>> communicators = coupled_communicators(job);
  if (!communicators.empty()) id["communicators"] = communicators;
  return id;
}

namespace {

// The units of a partial's shard: in the communicator blocks its identity records (checked to cover
// each of its contexts once), else one by one.
ShardUnits partial_units(const nlohmann::json& identity, size_t total, ShardSpec shard,
                         const std::string& source) {
  if (!identity.contains("communicators")) return shard_units(total, shard);
  const size_t contexts = identity.at("contexts").size();
  std::vector<std::vector<int>> groups;
  std::vector<int> seen(contexts, 0);
  for (const auto& g : identity.at("communicators")) {  // checked before any conversion
    groups.emplace_back();
    for (const auto& i : g) {
      if (!i.is_number_integer() || i.get<int64_t>() < 0 || uint64_t(i.get<int64_t>()) >= contexts ||
          seen[size_t(i.get<int64_t>())]++)
        throw InputError(source, 2, "communicators do not cover each context once");
      groups.back().push_back(int(i.get<int64_t>()));
    }
  }
  for (int n : seen)
    if (n != 1) throw InputError(source, 2, "communicators do not cover each context once");
  if (contexts == 0 || total % contexts != 0)
    throw InputError(source, 2, "unit total does not match the contexts");
  return communicator_shard_units(total / contexts, contexts, groups, shard);
}

}  // namespace

std::string encode_replay_partial(const nlohmann::json& identity, ShardSpec shard, size_t total_units,
                                  const ReplaySlice& slice) {
  const size_t n = slice.units.size(), per_seed = n * size_t(slice.seeds_kept);
  if (slice.online.size() != n || slice.final_loss.size() != n || slice.watched.size() != n ||
      slice.online_per_seed.size() != per_seed || slice.final_per_seed.size() != per_seed)
    throw std::invalid_argument("encode_replay_partial: the slice's lists do not match its units");
  std::string payload;
  payload.reserve((3 * n + 2 * per_seed) * sizeof(double));
  for (const auto* v :
       {&slice.online, &slice.final_loss, &slice.watched, &slice.online_per_seed, &slice.final_per_seed})
    payload.append(reinterpret_cast<const char*>(v->data()), v->size() * sizeof(double));
  const nlohmann::json header = {{"identity", identity},
                                 {"shard", {{"index", shard.index}, {"count", shard.count}}},
                                 {"units", {{"total", total_units}, {"count", slice.units.size()}}},
                                 {"payload",
                                  {{"doubles", 3 * n + 2 * per_seed},
                                   {"seeds_kept", slice.seeds_kept},
                                   {"fnv1a64", hex64(fnv1a64(payload))}}}};
  return std::string(kMagic) + header.dump() + "\n" + payload;
}

ReplayPartial decode_replay_partial(std::string_view bytes, const std::string& source) {
  if (bytes.substr(0, kMagic.size()) != kMagic)
    throw InputError(source, 1,
                     "not an ncclbot partial result (expected '" +
                         std::string(kMagic.substr(0, kMagic.size() - 1)) + "')");
  const size_t eol = bytes.find('\n', kMagic.size());
  if (eol == std::string_view::npos) throw InputError(source, 2, "truncated header");
  ReplayPartial p;
  p.source = source;
  try {
    const nlohmann::json h = nlohmann::json::parse(bytes.substr(kMagic.size(), eol - kMagic.size()));
    p.identity = h.at("identity");
    p.shard.index = h.at("shard").at("index").get<int>();
    p.shard.count = h.at("shard").at("count").get<int>();
    p.total_units = h.at("units").at("total").get<size_t>();
    const size_t count = h.at("units").at("count").get<size_t>();
    const size_t doubles = h.at("payload").at("doubles").get<size_t>();
    const std::string sum = h.at("payload").at("fnv1a64").get<std::string>();
    p.slice.seeds_kept = h.at("payload").value("seeds_kept", 0);
    if (p.shard.count < 1 || p.shard.index < 0 || p.shard.index >= p.shard.count)
      throw InputError(source, 2, "bad shard " + shard_text(p.shard));
    p.slice.units = partial_units(p.identity, p.total_units, p.shard, source);
    if (count != p.slice.units.size())
      throw InputError(source, 2, "unit count does not match shard " + shard_text(p.shard));
    const size_t n = p.slice.units.size(), per_seed = n * size_t(p.slice.seeds_kept);
    if (p.slice.seeds_kept < 0 || doubles != 3 * n + 2 * per_seed)
      throw InputError(source, 2, "payload size does not match units");
    const std::string_view payload = bytes.substr(eol + 1);
    if (payload.size() != doubles * sizeof(double))
      throw InputError(source, 0,
                       "payload is " + std::to_string(payload.size()) + " bytes, header says " +
                           std::to_string(doubles * sizeof(double)) + " (truncated or appended to)");
    if (hex64(fnv1a64(payload)) != sum) throw InputError(source, 0, "payload checksum mismatch (corrupted)");
    const char* at = payload.data();
    for (auto [v, len] :
         {std::pair{&p.slice.online, n}, std::pair{&p.slice.final_loss, n}, std::pair{&p.slice.watched, n},
          std::pair{&p.slice.online_per_seed, per_seed}, std::pair{&p.slice.final_per_seed, per_seed}}) {
      v->resize(len);
      if (len) std::memcpy(v->data(), at, len * sizeof(double));
      at += len * sizeof(double);
    }
  } catch (const nlohmann::json::exception& e) {
    throw InputError(source, 2, std::string("bad header: ") + e.what());
  }
  return p;
}

ReplayResults merge_replay_partials(const std::vector<ReplayPartial>& parts) {
  if (parts.empty()) throw UsageError("merge: no partial result given");
  const ReplayPartial& first = parts.front();
  std::map<int, const ReplayPartial*> by_index;
  for (const ReplayPartial& p : parts) {
    if (p.identity != first.identity)
      throw InputError(p.source, 0,
                       "foreign partial: its " + first_identity_difference(first.identity, p.identity) +
                           " differs from " + first.source + "'s");
    if (p.slice.seeds_kept != first.slice.seeds_kept)
      throw InputError(p.source, 0,
                       "foreign partial: it keeps per-seed losses for " + std::to_string(p.slice.seeds_kept) +
                           " seeds, " + first.source + " for " + std::to_string(first.slice.seeds_kept));
    if (p.shard.count != first.shard.count || p.total_units != first.total_units)
      throw InputError(p.source, 0,
                       "foreign partial: shard " + shard_text(p.shard) + " of " +
                           std::to_string(p.total_units) + " units does not belong with " + first.source +
                           " (shard " + shard_text(first.shard) + " of " + std::to_string(first.total_units) +
                           " units)");
    const auto [at, fresh] = by_index.emplace(p.shard.index, &p);
    if (!fresh)
      throw InputError(p.source, 0, "duplicates shard " + shard_text(p.shard) + " of " + at->second->source);
  }
  std::string missing;
  for (int i = 0; i < first.shard.count; ++i)
    if (!by_index.count(i)) missing += (missing.empty() ? "" : ", ") + std::to_string(i);
  if (!missing.empty())
    throw UsageError("merge: missing shard(s) " + missing + " of " + std::to_string(first.shard.count) +
                     " (the partials given cover only the others)");

  const auto& id = first.identity;
  ReplayResults r;
  r.num_configs = int(id.at("policies").size());
  r.num_contexts = int(id.at("contexts").size());
  r.seeds = id.at("seeds").get<int>();
  if (size_t(r.num_configs) * size_t(r.num_contexts) != first.total_units)
    throw InputError(first.source, 0, "unit count does not match its policies x contexts");
  const size_t kept = size_t(first.slice.seeds_kept), n_ctx = size_t(r.num_contexts);
  if (kept) {
    if (kept != size_t(r.seeds))
      throw InputError(first.source, 0, "per-seed losses for a different seed count");
    r.online_per_seed.assign(first.total_units * kept, 0.0);
    r.final_per_seed.assign(first.total_units * kept, 0.0);
  }
  r.online.assign(first.total_units, 0.0);
  r.final_loss.assign(first.total_units, 0.0);
  r.watched.assign(first.total_units, 0.0);
  for (const auto& [index, p] : by_index) {
    for (size_t k = 0; k < p->slice.units.size(); ++k) {
      const size_t unit = p->slice.units.unit(k), config = unit / n_ctx, i = unit % n_ctx;
      r.online[unit] = p->slice.online[k];
      r.final_loss[unit] = p->slice.final_loss[k];
      r.watched[unit] = p->slice.watched[k];
      // [unit][seed] -> ReplayResults' [config][seed][context].
      for (size_t seed = 0; seed < kept; ++seed) {
        r.online_per_seed[(config * kept + seed) * n_ctx + i] = p->slice.online_per_seed[k * kept + seed];
        r.final_per_seed[(config * kept + seed) * n_ctx + i] = p->slice.final_per_seed[k * kept + seed];
      }
    }
  }
  return r;
}

}  // namespace ncclbot
