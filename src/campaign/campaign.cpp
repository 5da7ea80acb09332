#include "ncclbot/campaign/campaign.hpp"

#include <fmt/format.h>

#include <toml++/toml.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <span>
#include <stdexcept>

#include "io/toml_reader.hpp"
#include "ncclbot/campaign/knob_point.hpp"
#include "ncclbot/campaign/plan.hpp"
#include "ncclbot/core/arm.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/core/names.hpp"
#include "ncclbot/core/nccl_version.hpp"
#include "ncclbot/core/quoted_value.hpp"
#include "ncclbot/io/nccl_tests/checks.hpp"
#include "ncclbot/io/nccl_tests/forced_list.hpp"
#include "ncclbot/io/nccl_tests/log.hpp"
#include "ncclbot/io/nccl_tests/manifest.hpp"
#include "ncclbot/model/cost_model.hpp"
#include "ncclbot/sim/fabric.hpp"

namespace ncclbot::campaign {
namespace {

namespace fs = std::filesystem;

// The campaign manifest's own values, through the strict TOML reader (io/toml_reader.hpp): every
// key known, every value of its type and range, every run inside the campaign's own settings.
class CampaignToml : public TomlReader {
 public:
  using TomlReader::integer;
  using TomlReader::string;
  using TomlReader::TomlReader;
  const toml::node& key(const toml::table& t, const char* key) const {
    return need(t, key, std::string("missing key '") + key + "'");
  }
  std::string string(const toml::table& t, const char* k) const { return TomlReader::string(key(t, k), k); }
  int64_t integer(const toml::table& t, const char* k, int64_t lo, int64_t hi) const {
    return TomlReader::integer(key(t, k), k, lo, hi);
  }
  std::string fabric(const toml::table& t) const {
    const std::string f = string(t, "fabric");
    if (!nccl_tests::valid_fabric_name(f))
      fail(key(t, "fabric"), "fabric must be 1-64 characters of letters, digits, '-', '_' or '.'");
    return f;
  }
  // A collective nccl-tests can run in a campaign (plan.hpp's test_binary).
  Collective collective(const toml::node& n, const std::string& what) const {
    const std::string name = TomlReader::string(n, what);
    const auto c = parse_collective(name);
    if (!c || (c != Collective::kAllReduce && c != Collective::kAllGather &&
               c != Collective::kReduceScatter && c != Collective::kBroadcast && c != Collective::kReduce))
      fail(n, what + " " + quoted_value(name) +
                  " is not one of allreduce, allgather, reducescatter, broadcast, reduce");
    return *c;
  }
  // A channel count: 0 (NCCL's own) to NCCL's MAXCHANNELS; a chunk size: 0 (NCCL's own) to 1 GiB.
  int channels(const toml::node& n) const { return int(TomlReader::integer(n, "channels", 0, kMaxChannels)); }
  uint64_t chunk(const toml::node& n) const {
    return uint64_t(TomlReader::integer(n, "chunk_bytes", 0, int64_t(kMaxChunkBytes)));
  }
  // A non-empty array whose elements `each` reads, none twice.
  template <typename T, typename Read>
  std::vector<T> list(const toml::table& t, const char* k, Read each) const {
    const toml::array& a = array(key(t, k), k);
    if (a.empty()) fail(key(t, k), std::string(k) + " must not be empty");
    std::vector<T> out;
    for (const toml::node& n : a) {
      out.push_back(each(n));
      if (std::count(out.begin(), out.end(), out.back()) > 1)
        fail(n, std::string(k) + " lists a value twice");
    }
    return out;
  }
};

constexpr int64_t kMaxCampaignBytes = int64_t(1) << 40;  // plan's --max-bytes bound

std::string context_text(const Context& c) {
  return std::string(collective_name(c.collective)) + " " + std::to_string(c.nodes) + "x" +
         std::to_string(c.gpus_per_node) + " " + std::to_string(c.bytes) + " B";
}

std::string arm_text(int slot) {
  return std::string(algo_name(slot_algo(slot))) + "/" + std::string(proto_name(slot_proto(slot)));
}

// " channels 8 chunk 65536 B", or "" at NCCL's own values.
std::string knob_text(const KnobPoint& k) {
  return (k.channels ? " channels " + std::to_string(k.channels) : std::string()) +
         (k.chunk_bytes ? " chunk " + std::to_string(k.chunk_bytes) + " B" : std::string());
}

// The sweep without the contexts in `drop`, with the cost model's prediction as its prior: the table
// NCCL would pass the tuner on this fabric, which AUTO and warm-started policies read. A knob arm gets
// its algorithm x protocol's cost, as the tuner does: NCCL's table has no channel or chunk term.
Sweep with_model_prior(const Sweep& in, const std::set<Context>& drop, const sim::FabricPreset& f,
                       const std::string& source) {
  SweepBuilder out(source);
  for (int c = 0; c < in.num_contexts(); ++c) {
    const Context& ctx = in.context(c);
    if (drop.count(ctx)) continue;
    const model::CostTable table =
        model::predict(sim::topology_for(f, ctx.nodes, ctx.gpus_per_node), ctx.collective, ctx.bytes);
    const std::span<const Arm> arms = in.arms(c);
    for (int i = 0; i < int(arms.size()); ++i) {
      const int slot = arms[size_t(i)].slot();
      if (!(is_nccl_slot(slot) && table.time_us[slot] > 0.0f))
        throw InputError(f.name, 0,
                         context_text(ctx) + ": " + arm_text(slot) +
                             " was measured but the cost model says NCCL cannot run it there");
      for (int r = 0; r < in.samples(); ++r)
        out.add(ctx, arms[size_t(i)], r, in.arm_sample(c, i, r), table.time_us[slot], 0);
    }
  }
  if (out.rows() == 0) throw InputError(source, 0, "no complete context: every context lacks a planned arm");
  return out.build();
}

// Why the run did not run its planned knob point, or nullopt: the environment its JSON recorded
// (NCCL_MIN_CTAS, NCCL_MAX_CTAS, NCCLBOT_TABLE; NCCL_CHUNK_SIZE refused) and, where the text log has
// NCCL's INIT line, the channels NCCL set up.
std::optional<std::string> knob_mismatch(const CampaignRun& run, const nccl_tests::Run& json,
                                         const nccl_tests::Run* text) {
  if (json.chunk_size_env)
    return "ran with NCCL_CHUNK_SIZE=" + json.chunk_size_env->value + ": " + kChunkSizeRefusal;
  if (json.nccl_version)
    if (auto why = why_nccl_cannot_force(run.knobs, *json.nccl_version)) return why;
  const std::string want = run.knobs.channels > 0 ? std::to_string(run.knobs.channels) : "";
  for (const auto& [var, got] :
       {std::pair{"NCCL_MIN_CTAS", &json.min_ctas}, {"NCCL_MAX_CTAS", &json.max_ctas}})
    if ((*got ? (*got)->value : "") != want)
      return std::string("ran with ") + var + "=" + (*got ? (*got)->value : "(unset)") + ", planned " +
             (want.empty() ? "NCCL's own channel count (unset)" : want);
  if (text && text->coll_channels && run.knobs.channels > 0) {
    if (text->coll_channels_disagree) return "ranks report different coll channel counts in " + run.log;
    if (text->coll_channels->value != want)
      return "NCCL set up " + text->coll_channels->value + " coll channels (" + run.log + ":" +
             std::to_string(text->coll_channels->line) + "), planned " + want;
  }
  if (run.knobs.chunk_bytes > 0) {
    const std::string table = chunk_table_path(run.knobs.chunk_bytes);
    const std::string got = json.tuner_table ? json.tuner_table->value : "";
    if (got.size() < table.size() || got.compare(got.size() - table.size(), table.size(), table) != 0)
      return "ran with NCCLBOT_TABLE=" + (got.empty() ? "(unset)" : got) + ", planned " + table;
  }
  return std::nullopt;
}

// The one name a forced value gives collective `c` ("Ring" from "Ring" or "AllReduce:Ring"); empty
// when it names none or NCCL would refuse it.
std::string forced_name(const std::string& value, Collective c) {
  try {
    return nccl_tests::list_for_collective(value, c).value_or("");
  } catch (const std::invalid_argument&) {
    return "";
  }
}

}  // namespace

bool is_campaign_dir(const std::string& dir) {
  std::error_code ec;
  // Any entry named campaign.toml makes it one, so that a FIFO, a folder or a broken link there is
  // refused by name rather than the folder being read as a log.
  return fs::is_directory(dir, ec) && fs::exists(fs::symlink_status(fs::path(dir) / kManifestName, ec));
}

namespace {

void read_campaign_head(const CampaignToml& r, const toml::table& head, Campaign& c) {
  r.only_keys(head, "[campaign]",
              {"version", "fabric", "gpus_per_node", "nodes", "collectives", "min_bytes", "max_bytes",
               "step_factor", "iters", "warmup", "launcher", "channels", "chunk_bytes", "nccl_version"});
  r.integer(head, "version", 1, 1);
  if (head.contains("nccl_version")) {
    c.nccl_version = exact_minor_version(r.string(head, "nccl_version"));
    if (c.nccl_version.empty())
      r.fail(r.key(head, "nccl_version"), "nccl_version is not MAJOR.MINOR, like 2.32");
  }
  c.fabric = r.fabric(head);
  // Checked here, not when ingest loads it, so that --status refuses it too and both name this line.
  const std::vector<std::string> known = sim::fabric_names();
  if (std::find(known.begin(), known.end(), c.fabric) == known.end()) {
    std::string list;
    for (const std::string& n : known) list += (list.empty() ? "" : ", ") + n;
    r.fail(r.key(head, "fabric"), "unknown fabric " + quoted_value(c.fabric) + " (presets: " + list + ")");
  }
  c.gpus_per_node = int(r.integer(head, "gpus_per_node", 1, 1024));
  c.nodes =
      r.list<int>(head, "nodes", [&](const toml::node& n) { return int(r.integer(n, "nodes", 1, 100000)); });
  c.collectives = r.list<Collective>(head, "collectives",
                                     [&](const toml::node& n) { return r.collective(n, "collectives"); });
  c.min_bytes = uint64_t(r.integer(head, "min_bytes", 1, kMaxCampaignBytes));
  c.max_bytes = uint64_t(r.integer(head, "max_bytes", int64_t(c.min_bytes), kMaxCampaignBytes));
  c.step_factor = uint64_t(r.integer(head, "step_factor", 2, 1024));
  c.iters = int(r.integer(head, "iters", 1, 100000));
  c.warmup = int(r.integer(head, "warmup", 0, 100000));
  const std::string launcher = r.string(head, "launcher");
  if (launcher != "srun" && launcher != "mpirun")
    r.fail(r.key(head, "launcher"), "launcher " + quoted_value(launcher) + " is not one of srun, mpirun");
  if (head.contains("channels"))
    c.channels = r.list<int>(head, "channels", [&](const toml::node& n) { return r.channels(n); });
  if (head.contains("chunk_bytes"))
    c.chunk_bytes = r.list<uint64_t>(head, "chunk_bytes", [&](const toml::node& n) {
      const uint64_t chunk = r.chunk(n);
      // LL's 16 B grain divides the other two: a size off it fits no protocol.
      if (chunk > 0 && !chunk_fits_grain(chunk, int(Proto::kLL)))
        r.fail(n,
               "chunk_bytes " + std::to_string(chunk) +
                   " is not a positive multiple of any protocol's grain (LL 16, LL128 1920, Simple 512 B)");
      return chunk;
    });
}

// A [[run]]'s knob point: one of the campaign's channel counts and chunk sizes, the chunk on the
// grain of the run's protocol (NCCL would round it down to another size).
KnobPoint read_run_knobs(const CampaignToml& r, const toml::table& t, const Campaign& c, int slot) {
  KnobPoint k;
  if (t.contains("channels")) {
    k.channels = r.channels(r.key(t, "channels"));
    if (std::find(c.channels.begin(), c.channels.end(), k.channels) == c.channels.end())
      r.fail(r.key(t, "channels"),
             "channels = " + std::to_string(k.channels) + " is not one of the campaign's channels");
  }
  if (t.contains("chunk_bytes")) {
    const toml::node& n = r.key(t, "chunk_bytes");
    k.chunk_bytes = r.chunk(n);
    if (std::find(c.chunk_bytes.begin(), c.chunk_bytes.end(), k.chunk_bytes) == c.chunk_bytes.end())
      r.fail(n,
             "chunk_bytes = " + std::to_string(k.chunk_bytes) + " is not one of the campaign's chunk_bytes");
    if (k.chunk_bytes > 0 && !chunk_fits_grain(k.chunk_bytes, int(slot_proto(slot))))
      r.fail(n, "chunk_bytes = " + std::to_string(k.chunk_bytes) + " is not a multiple of " +
                    std::string(proto_name(slot_proto(slot))) + "'s " +
                    std::to_string(chunk_grain_bytes(int(slot_proto(slot)))) + " B grain");
  }
  return k;
}

// One [[run]]: its own keys, and a shape, collective and fabric the [campaign] table plans.
CampaignRun read_campaign_run(const CampaignToml& r, const toml::table& t, const Campaign& c) {
  r.only_keys(t, "[[run]]",
              {"id", "file", "log", "collective", "algo", "proto", "nodes", "gpus_per_node", "fabric",
               "min_bytes", "channels", "chunk_bytes"});
  CampaignRun run;
  run.line = toml_line(t);
  run.id = r.string(t, "id");
  if (run.id.empty() ||
      run.id.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-._") != std::string::npos)
    r.fail(t, "id " + quoted_value(run.id) + " must be lower-case letters, digits, '-', '.' or '_'");
  run.json = (fs::path(c.dir) / r.string(t, "file")).lexically_normal().string();
  run.log = (fs::path(c.dir) / r.string(t, "log")).lexically_normal().string();
  run.nodes = int(r.integer(t, "nodes", 1, 100000));
  if (std::find(c.nodes.begin(), c.nodes.end(), run.nodes) == c.nodes.end())
    r.fail(r.key(t, "nodes"), "nodes = " + std::to_string(run.nodes) + " is not one of the campaign's nodes");
  run.gpus_per_node = int(r.integer(t, "gpus_per_node", 1, 1024));
  if (run.gpus_per_node != c.gpus_per_node)
    r.fail(r.key(t, "gpus_per_node"), "gpus_per_node = " + std::to_string(run.gpus_per_node) +
                                          " differs from the campaign's " + std::to_string(c.gpus_per_node));
  if (r.fabric(t) != c.fabric)
    r.fail(r.key(t, "fabric"), "fabric differs from the campaign's '" + c.fabric + "'");
  run.collective = r.collective(r.key(t, "collective"), "collective");
  if (std::find(c.collectives.begin(), c.collectives.end(), run.collective) == c.collectives.end())
    r.fail(r.key(t, "collective"), "collective is not one of the campaign's collectives");
  const auto algo = parse_nccl_algo(r.string(t, "algo"));
  const auto proto = parse_proto(r.string(t, "proto"));
  if (!algo) r.fail(r.key(t, "algo"), "algo is not one of " + std::string(nccl_algo_names_list()));
  if (!proto) r.fail(r.key(t, "proto"), "proto is not one of " + std::string(proto_names_list()));
  run.slot = arm_slot(*algo, *proto);
  run.knobs = read_run_knobs(r, t, c, run.slot);
  for (uint64_t b = uint64_t(r.integer(t, "min_bytes", int64_t(c.min_bytes), int64_t(c.max_bytes)));
       b <= c.max_bytes; b *= c.step_factor) {
    run.sizes.push_back(b);
    if (b > c.max_bytes / c.step_factor) break;
  }
  return run;
}

}  // namespace

Campaign read_campaign(const std::string& dir) {
  Campaign c;
  c.dir = dir;
  c.manifest_path = (fs::path(dir) / kManifestName).string();
  const std::string text = nccl_tests::read_log_bytes(c.manifest_path);
  c.manifest = nccl_tests::parse_manifest(text, c.manifest_path);
  const CampaignToml r(c.manifest_path);
  const toml::table root = r.parse(text);
  const toml::table* head = root["campaign"].as_table();
  if (!head)
    throw InputError(c.manifest_path, 0, "no [campaign] table: not a campaign written by ncclbot plan");
  read_campaign_head(r, *head, c);
  const toml::array* runs = root["run"].as_array();
  if (!runs) throw InputError(c.manifest_path, 0, "no [[run]] tables");
  std::set<std::string> ids;
  for (const toml::node& node : *runs) {
    // parse_manifest checked every run is a table
    c.runs.push_back(read_campaign_run(r, *node.as_table(), c));
    if (!ids.insert(c.runs.back().id).second)
      r.fail(node, "second run with id " + quoted_value(c.runs.back().id));
  }
  return c;
}

std::string_view run_state_name(RunState s) {
  switch (s) {
    case RunState::kDone:
      return "done";
    case RunState::kMissing:
      return "missing";
    case RunState::kFailed:
      break;
  }
  return "failed";
}

RunStatus run_status(const Campaign& campaign, const CampaignRun& run) {
  std::error_code ec;
  const bool have_log = fs::exists(run.log, ec), have_json = fs::exists(run.json, ec);
  if (!have_log && !have_json) return {RunState::kMissing, "no log yet"};
  const auto failed = [](std::string why) { return RunStatus{RunState::kFailed, std::move(why)}; };
  if (!have_log) return failed("the text log " + run.log + " is missing");
  nccl_tests::ParsedLog text, json;
  try {
    text = nccl_tests::read_log(run.log);
  } catch (const InputError& e) {
    return failed(e.what());
  }
  for (const auto& r : text.runs) {
    if (r.failure)
      return failed("nccl-tests failed at " + run.log + ":" + std::to_string(r.failure->line) + ": " +
                    r.failure->message);
    if (!r.trailer_line) return failed("the log ends before its trailer (the job was killed or preempted?)");
  }
  if (!have_json)
    return failed("no -J JSON file: nccl-tests older than 2.19.1 (no -I), or the run died before writing it");
  try {
    json = nccl_tests::read_log(run.json);
  } catch (const InputError& e) {
    return failed(e.what());
  }
  const nccl_tests::Run& r = json.runs.front();
  if (r.algo &&
      parse_nccl_algo(forced_name(r.algo->value, run.collective)) != std::optional<Algo>(slot_algo(run.slot)))
    return failed("ran NCCL_ALGO=" + r.algo->value + ", planned " +
                  std::string(algo_name(slot_algo(run.slot))));
  if (r.proto &&
      parse_proto(forced_name(r.proto->value, run.collective)) != std::optional<Proto>(slot_proto(run.slot)))
    return failed("ran NCCL_PROTO=" + r.proto->value + ", planned " +
                  std::string(proto_name(slot_proto(run.slot))));
  if (auto why = knob_mismatch(run, r, text.runs.empty() ? nullptr : &text.runs.front())) return failed(*why);
  if (const auto topo = nccl_tests::topology_from_devices(r, run.json);
      topo && (topo->nodes != run.nodes || topo->gpus_per_node != run.gpus_per_node))
    return failed("ran on " + std::to_string(topo->nodes) + " node(s) x " +
                  std::to_string(topo->gpus_per_node) + " ranks, planned " + std::to_string(run.nodes) +
                  " x " + std::to_string(run.gpus_per_node));
  std::vector<uint64_t> sizes;
  for (const auto& row : r.rows) {
    sizes.push_back(row.bytes);
    for (const nccl_tests::Measurement* m : {&row.out_of_place, row.in_place ? &*row.in_place : nullptr}) {
      if (!m) continue;
      if (!m->iterations)
        return failed("no per-iteration times at " + std::to_string(row.bytes) +
                      " B (-I 1 needs nccl-tests 2.19.1+)");
      if (int(m->iterations->times_us.size()) != campaign.iters)
        return failed(std::to_string(m->iterations->times_us.size()) + " timed iterations at " +
                      std::to_string(row.bytes) + " B, planned " + std::to_string(campaign.iters));
      if (m->wrong && *m->wrong > 0)
        return failed("wrong results (#wrong " + std::to_string(int64_t(*m->wrong)) + ") at " +
                      std::to_string(row.bytes) + " B");
      for (const double t : m->iterations->times_us)
        if (!sweep_can_hold_time(t))
          return failed("a time of " + fmt::format("{:g}", t) + " us at " + std::to_string(row.bytes) +
                        " B is outside what a sweep can hold (ingest would refuse it)");
    }
  }
  if (sizes != run.sizes)
    return failed("printed " + std::to_string(sizes.size()) + " sizes, planned " +
                  std::to_string(run.sizes.size()) + " (" + std::to_string(run.sizes.front()) + ".." +
                  std::to_string(run.sizes.back()) + " B)");
  return {RunState::kDone, ""};
}

CampaignIngest ingest_campaign(const Campaign& campaign, nccl_tests::IngestOptions options,
                               bool allow_missing, const std::function<void(size_t, size_t)>& progress) {
  const sim::FabricPreset fabric = sim::load_fabric(campaign.fabric);
  CampaignIngest out;
  std::vector<nccl_tests::ParsedLog> logs;
  nccl_tests::Manifest done_manifest;
  done_manifest.path = campaign.manifest_path;
  for (size_t i = 0; i < campaign.runs.size(); ++i) {
    const CampaignRun& run = campaign.runs[i];
    out.status.push_back(run_status(campaign, run));
    if (out.status.back().state == RunState::kDone) {
      logs.push_back(nccl_tests::read_log(run.json));
      for (const auto& e : campaign.manifest.entries)
        if (e.resolved == run.json) done_manifest.entries.push_back(e);
    }
    if (progress) progress(i + 1, campaign.runs.size());
  }
  if (logs.empty())
    throw InputError(campaign.manifest_path, 0, "no complete run yet (ncclbot plan --status DIR)");
  if (options.samples == nccl_tests::SampleKind::kAuto) options.samples = nccl_tests::SampleKind::kIterations;
  out.result = nccl_tests::ingest_parsed(logs, &done_manifest, options);

  // Every planned (context, arm): a context whose arm's run is not done lacks that arm.
  std::map<Context, std::vector<std::string>> lacking;
  for (size_t i = 0; i < campaign.runs.size(); ++i) {
    if (out.status[i].state == RunState::kDone) continue;
    const CampaignRun& run = campaign.runs[i];
    for (uint64_t b : run.sizes)
      lacking[Context{campaign.fabric, run.collective, run.nodes, run.gpus_per_node, b}].push_back(
          arm_text(run.slot) + knob_text(run.knobs) + " (" + run.id + ": " +
          std::string(run_state_name(out.status[i].state)) + ")");
  }
  if (!lacking.empty() && !allow_missing) {
    const auto& [ctx, arms] = *lacking.begin();
    throw InputError(campaign.manifest_path, 0,
                     std::to_string(lacking.size()) + " context(s) lack planned arms, e.g. " +
                         context_text(ctx) + " lacks " + arms.front() +
                         ": a sweep would compare arms that were not all measured (run.sh again, or "
                         "--allow-missing keeps only complete contexts)");
  }
  std::set<Context> drop;
  for (const auto& [ctx, arms] : lacking) {
    drop.insert(ctx);
    out.dropped.push_back(context_text(ctx) + " lacks " + arms.front() +
                          (arms.size() > 1 ? " and " + std::to_string(arms.size() - 1) + " more" : ""));
  }
  out.result.sweep = with_model_prior(out.result.sweep, drop, fabric, campaign.manifest_path);
  out.result.csv_rows = 0;
  for (int c = 0; c < out.result.sweep.num_contexts(); ++c)
    out.result.csv_rows += out.result.sweep.arms(c).size() * size_t(out.result.sweep.samples());
  return out;
}

}  // namespace ncclbot::campaign
