#include "ncclbot/io/nccl_tests/ingest.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <stdexcept>

#include "ncclbot/core/error.hpp"
#include "ncclbot/core/names.hpp"
#include "ncclbot/core/parse_number.hpp"
#include "ncclbot/core/quoted_value.hpp"
#include "ncclbot/io/nccl_tests/checks.hpp"
#include "ncclbot/io/nccl_tests/forced_list.hpp"

namespace ncclbot::nccl_tests {
namespace {

constexpr int64_t kMaxRanks = 10'000'000;

std::string at(const std::string& file, long line) {
  return line > 0 ? file + ":" + std::to_string(line) : file;
}

struct Skip {
  std::string reason;
};

// One arm component (algo or proto) from the log and/or the manifest; they must agree.
template <typename T>
std::optional<T> resolve_forced(const std::optional<ForcedSetting>& in_log,
                                const std::optional<T>& in_manifest, const char* var, const char* key,
                                std::optional<T> (*parse)(std::string_view), std::string_view (*name)(T),
                                std::string_view names, const std::string& file, const Manifest* manifest,
                                const ManifestEntry* entry, std::optional<Collective> collective) {
  std::optional<T> from_log;
  if (in_log) {
    // A per-function value ("AllReduce:Ring", docs/campaign.md): the list of this run's collective;
    // one naming other functions only forces nothing here.
    std::string v = in_log->value;
    if (collective) {
      std::optional<std::string> list;
      try {
        list = list_for_collective(v, *collective);
      } catch (const std::invalid_argument& e) {
        throw InputError(
            file, in_log->line,
            std::string(var) + "=" + in_log->value + " (" + in_log->how + "): NCCL refuses it: " + e.what());
      }
      if (!list) return in_manifest;
      v = *list;
    }
    if (v.find_first_of(",^") != std::string::npos)
      throw InputError(file, in_log->line,
                       std::string(var) + "=" + v + " (" + in_log->how +
                           ") allows several choices, so NCCL picked among "
                           "them per call: not one forced arm");
    from_log = parse(v);
    if (!from_log)
      throw InputError(file, in_log->line,
                       std::string(var) + "=" + v + " is not one of " + std::string(names));
  }
  if (from_log && in_manifest && *from_log != *in_manifest)
    throw InputError(manifest->path, entry->line,
                     std::string(key) + " = " + std::string(name(*in_manifest)) + " contradicts the log: " +
                         var + "=" + in_log->value + " at " + at(file, in_log->line));
  return from_log ? from_log : in_manifest;
}

class Ingest {
 public:
  Ingest(const Manifest* manifest, const IngestOptions& options, SampleKind samples)
      : manifest_(manifest), options_(options), samples_(samples), builder_("nccl-tests logs") {
    result_.samples = samples;
  }

  void log(const ParsedLog& log) {
    for (const Diagnostic& w : log.warnings) warn(w);
    const ManifestEntry* entry = manifest_ ? manifest_->find(log.file) : nullptr;
    if (entry) matched_.insert(entry);
    for (const Run& run : log.runs) {
      RunReport report;
      report.file = log.file;
      report.line = run.first_line;
      report.test = run.test_name;
      try {
        use_run(log.file, run, entry, report);
        report.used = true;
      } catch (const Skip& s) {
        report.reason = s.reason;
        warn({log.file, run.first_line, "run skipped: " + s.reason});
      }
      result_.runs.push_back(std::move(report));
    }
  }

  IngestResult finish() {
    // A manifest entry that matches nothing is usually a misspelt file name.
    if (manifest_)
      for (const ManifestEntry& e : manifest_->entries)
        if (!matched_.count(&e))
          warn({manifest_->path, e.line, "entry for " + e.file + " matches none of the logs"});
    if (contributions_.empty())
      throw InputError(result_.runs.empty() ? "ingest" : result_.runs.front().file, 0,
                       "no forced-arm rows: every run was skipped (see the warnings above)");
    check_sample_counts();
    result_.sweep = builder_.build();
    result_.csv_rows = builder_.rows();
    return std::move(result_);
  }

 private:
  void warn(const Diagnostic& w) {
    if (options_.on_warning) options_.on_warning(w);
    result_.warnings.push_back(w);
  }

  struct Contribution {
    std::string file;
    long line;
  };

  void use_run(const std::string& file, const Run& run, const ManifestEntry* entry, RunReport& report) {
    const std::string test = run.test_name.empty() ? "nccl-tests" : run.test_name;
    if (run.failure) {
      const std::string why = test + " failed: " + run.failure->message;
      if (options_.skip_failed) throw Skip{why};
      throw InputError(file, run.failure->line, why + " (a failed run is not data; --skip-failed skips it)");
    }

    // The collective is needed first only when a forced value names functions.
    const auto names_functions = [](const std::optional<ForcedSetting>& f) {
      return f && f->value.find_first_of(":;") != std::string::npos;
    };
    std::optional<Collective> per_function;
    if (names_functions(run.algo) || names_functions(run.proto))
      per_function = resolve_collective(file, run, entry);
    const auto algo =
        resolve_forced<Algo>(run.algo, entry ? entry->algo : std::nullopt, "NCCL_ALGO", "algo",
                             parse_nccl_algo, algo_name, nccl_algo_names_list(), file, manifest_, entry,
                             per_function);  // NCCL's algorithms only: a log never runs HiPIPE
    const auto proto = resolve_forced<Proto>(run.proto, entry ? entry->proto : std::nullopt, "NCCL_PROTO",
                                             "proto", parse_proto, proto_name, proto_names_list(), file,
                                             manifest_, entry, per_function);
    if (!algo || !proto) {
      std::string why;
      if (!algo && !proto)
        why =
            "no forced arm: neither NCCL_ALGO nor NCCL_PROTO forces this collective in the log or the "
            "manifest "
            "(an AUTO run measures NCCL's own picks, not one arm)";
      else if (!proto)
        why = "NCCL_PROTO unknown: the algorithm is forced (" + std::string(algo_name(*algo)) +
              ") but not the protocol, so NCCL chose the protocol per size; "
              "state proto in the manifest if the run forced it";
      else
        why = "NCCL_ALGO unknown: the protocol is forced (" + std::string(proto_name(*proto)) +
              ") but not the algorithm; state algo in the manifest if the run forced it";
      if (options_.skip_unforced) throw Skip{why};
      throw InputError(file, run.first_line, test + ": " + why + " (--skip-unforced skips such runs)");
    }

    const Collective collective = resolve_collective(file, run, entry);
    const Topology topo = resolve_topology(file, run, entry);
    const std::string fabric = entry && entry->fabric ? *entry->fabric : options_.fabric;
    if (!valid_fabric_name(fabric))
      throw UsageError("fabric '" + fabric + "' must be 1-64 characters of letters, digits, '-', '_' or '.'");

    std::vector<Diagnostic> checks;
    check_bandwidths(run, collective, topo.ranks(), file, checks);
    for (const Diagnostic& w : checks) warn(w);
    warn_identical(file, run, *algo, *proto);

    for (const Row& row : run.rows)
      if (row.type != run.rows.front().type || row.redop != run.rows.front().redop)
        throw InputError(
            file, row.line,
            "rows for another data type or reduction (" + row.type + " " + row.redop + " after " +
                run.rows.front().type + " " + run.rows.front().redop +
                ", -d all / -o all): a sweep context has no type, so ingest one type and op per run");
    const Arm arm = resolve_knobs(file, run, entry, *algo, *proto);
    int wrong_rows = 0;
    long first_wrong = 0;
    for (const Row& row : run.rows) {
      const Context ctx{fabric, collective, topo.nodes, topo.gpus_per_node, row.bytes};
      const bool out = options_.placement != Placement::kInPlace;
      const bool in = options_.placement != Placement::kOutOfPlace;
      if (in && !row.in_place)
        throw InputError(file, row.line, "row has no in-place measurement (--placement)");
      if (out) add_measurement(ctx, arm, row.out_of_place, file, row.line);
      if (in) add_measurement(ctx, arm, *row.in_place, file, row.line);
      // The pre-2022 `error` column is a float deviation (2e-07 is rounding), not wrong elements.
      const bool wrong =
          !run.wrong_is_deviation && ((row.out_of_place.wrong && *row.out_of_place.wrong > 0) ||
                                      (row.in_place && row.in_place->wrong && *row.in_place->wrong > 0));
      if (wrong && wrong_rows++ == 0) first_wrong = row.line;
    }
    if (wrong_rows > 0)
      warn({file, first_wrong,
            std::to_string(wrong_rows) +
                " rows report wrong results (#wrong > 0): " + std::string(algo_name(*algo)) + "/" +
                std::string(proto_name(*proto)) + " produced incorrect data; its times are kept"});
    fill_report(report, run, collective, arm, fabric, topo);
  }

  static void fill_report(RunReport& report, const Run& run, Collective collective, const Arm& arm,
                          const std::string& fabric, const Topology& topo) {
    report.collective = std::string(collective_name(collective));
    report.algo = std::string(algo_name(arm.algo));
    report.proto = std::string(proto_name(arm.proto));
    report.fabric = fabric;
    report.nodes = topo.nodes;
    report.gpus_per_node = topo.gpus_per_node;
    report.channels = arm.channels;
    report.chunk_bytes = arm.chunk_bytes;
    if (run.coll_channels) report.nccl_channels = std::stoi(run.coll_channels->value);
    report.rows = run.rows.size();
  }

  // The run's knob point: the manifest's channels and chunk size, else the channel count its
  // recorded environment forced (NCCL_MIN_CTAS = NCCL_MAX_CTAS). A forced count that NCCL's INIT line
  // ("N coll channels") contradicts is an error: a latency is credited only to the arm that ran.
  Arm resolve_knobs(const std::string& file, const Run& run, const ManifestEntry* entry, Algo algo,
                    Proto proto) {
    std::optional<int> forced;
    if (run.min_ctas && run.max_ctas && run.min_ctas->value == run.max_ctas->value)
      forced = parse_channels(run.min_ctas->value);
    const auto stated = entry ? entry->channels : std::nullopt;
    if (stated && forced && *stated != *forced)
      throw InputError(manifest_->path, entry->channels_line,
                       "channels = " + std::to_string(*stated) +
                           " contradicts the log's NCCL_MIN_CTAS = NCCL_MAX_CTAS = " + run.min_ctas->value +
                           " (" + run.min_ctas->how + ")");
    const int channels = stated ? *stated : forced.value_or(0);
    if (channels > 0 && run.coll_channels) {
      if (run.coll_channels_disagree)
        throw InputError(file, run.coll_channels->line, "ranks report different coll channel counts");
      if (run.coll_channels->value != std::to_string(channels))
        throw InputError(file, run.coll_channels->line,
                         "NCCL set up " + run.coll_channels->value + " coll channels, but the run forced " +
                             std::to_string(channels) + ": its times belong to another arm");
    }
    const uint32_t chunk = entry && entry->chunk_bytes ? *entry->chunk_bytes : 0;
    if (chunk > 0 && !chunk_fits_grain(chunk, int(proto)))
      throw InputError(manifest_->path, entry->chunk_line,
                       "chunk_bytes = " + std::to_string(chunk) + " is not a multiple of " +
                           std::string(proto_name(proto)) + "'s " +
                           std::to_string(chunk_grain_bytes(int(proto))) +
                           " B grain (NCCL rounds a chunk down to it)");
    return Arm{algo, proto, uint16_t(channels), chunk};
  }

  // NCCL_MIN_CTAS's value as a forced channel count; NCCL ignores values <= 0 and caps above 64.
  static std::optional<int> parse_channels(const std::string& v) {
    int n = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (ec != std::errc() || end != v.data() + v.size() || n <= 0) return std::nullopt;
    return std::min(n, kMaxChannels);
  }

  Collective resolve_collective(const std::string& file, const Run& run, const ManifestEntry* entry) {
    std::optional<Collective> from_log;
    if (!run.test_name.empty()) {
      from_log = collective_of_test(run.test_name);
      if (!from_log)
        throw InputError(file, run.test_name_line,
                         "test '" + run.test_name + "' is not one NCCL collective (supported: " +
                             std::string(collective_names_list()) + ")");
    }
    const auto from_manifest = entry ? entry->collective : std::nullopt;
    if (from_log && from_manifest && *from_log != *from_manifest)
      throw InputError(manifest_->path, entry->line,
                       "collective = " + std::string(collective_name(*from_manifest)) +
                           " contradicts the log: " + run.test_name + " at " + at(file, run.test_name_line));
    if (from_log) return *from_log;
    if (from_manifest) return *from_manifest;
    throw InputError(
        file, run.first_line,
        "collective unknown: the log never names its test (no 'Collective test starting' line or *_perf "
        "command); give collective in the manifest");
  }

  Topology resolve_topology(const std::string& file, const Run& run, const ManifestEntry* entry) {
    const auto from_devices = topology_from_devices(run, file);
    const auto m_nodes = entry ? entry->nodes : std::nullopt;
    const auto m_gpus = entry ? entry->gpus_per_node : std::nullopt;
    if (from_devices) {
      if ((m_nodes && *m_nodes != from_devices->nodes) || (m_gpus && *m_gpus != from_devices->gpus_per_node))
        throw InputError(manifest_->path, entry->line,
                         "nodes = " + (m_nodes ? std::to_string(*m_nodes) : "?") + ", gpus_per_node = " +
                             (m_gpus ? std::to_string(*m_gpus) : "?") + " contradicts the device list at " +
                             at(file, run.devices.front().line) + ": " + std::to_string(from_devices->nodes) +
                             " host(s) x " + std::to_string(from_devices->gpus_per_node) + " rank(s)");
      return *from_devices;
    }
    if (!m_nodes || !m_gpus)
      throw InputError(
          file, run.first_line,
          "nodes and GPUs per node unknown: the log has no complete device list ('# Rank N ... on HOST' "
          "lines); give nodes and gpus_per_node in the manifest");
    if (int64_t(*m_nodes) * *m_gpus > kMaxRanks)
      throw InputError(manifest_->path, entry->line,
                       "nodes x gpus_per_node exceeds " + std::to_string(kMaxRanks) + " ranks");
    const Topology t{*m_nodes, *m_gpus};
    for (const DeviceEntry& d : run.devices)
      if (d.rank >= t.ranks())
        throw InputError(manifest_->path, entry->line,
                         "nodes x gpus_per_node = " + std::to_string(t.ranks()) +
                             " ranks, but the log lists rank " + std::to_string(d.rank) + " at " +
                             at(file, d.line));
    return t;
  }

  // The same times under two labels means at least one label is wrong (or one log given twice).
  void warn_identical(const std::string& file, const Run& run, Algo algo, Proto proto) {
    if (run.rows.size() < 2) return;
    std::vector<std::pair<uint64_t, double>> key;
    for (const Row& r : run.rows) key.emplace_back(r.bytes, r.out_of_place.time_us.value);
    const std::string label = std::string(algo_name(algo)) + "/" + std::string(proto_name(proto));
    // One warning per run, naming the first run it repeats.
    const auto [it, fresh] =
        seen_runs_.try_emplace(std::move(key), at(file, run.first_line) + " (" + label + ")");
    if (!fresh)
      warn({file, run.first_line,
            "run (" + label + ") has exactly the same times as the run at " + it->second +
                ": its label may not match what ran, or the same log was given twice"});
  }

  // One placement of one row: its timed iterations (after -K skipped ones), in order, or its
  // averaged time with the -I 1 spread kept beside it.
  void add_measurement(const Context& ctx, const Arm& arm, const Measurement& m, const std::string& file,
                       long line) {
    if (samples_ == SampleKind::kIterations) {
      const IterationTimes& it = *m.iterations;
      for (size_t i = size_t(it.skipped); i < it.times_us.size(); ++i)
        add(ctx, arm, it.times_us[i], file, line);
      return;
    }
    const int sample = add(ctx, arm, m.time_us.value, file, line);
    if (m.iteration_summary) result_.noise.push_back({ctx, arm, sample, *m.iteration_summary});
  }

  int add(const Context& ctx, const Arm& arm, double time, const std::string& file, long line) {
    // Sweeps hold float µs: a time beyond float's range (or rounding to 0) cannot be stored.
    if (!sweep_can_hold_time(time))
      throw InputError(file, line, "time " + format_double(time) + " us is outside what a sweep can hold");
    const float time_us = float(time);
    auto& list = contributions_[{ctx, arm}];
    const int sample = int(list.size());
    builder_.add(ctx, arm, sample, time_us, std::nullopt, line);
    list.push_back({file, line});
    return sample;
  }

  // Every arm of a sweep has the same number of samples; say which runs break that, by file.
  void check_sample_counts() const {
    const auto& [first_key, first_list] = *contributions_.begin();
    for (const auto& [key, list] : contributions_) {
      if (list.size() == first_list.size()) continue;
      const auto describe = [](const std::pair<Context, Arm>& k) {
        const Arm& a = k.second;
        return std::string(collective_name(k.first.collective)) + " " + std::to_string(k.first.nodes) + "x" +
               std::to_string(k.first.gpus_per_node) + " " + std::to_string(k.first.bytes) + " B " +
               std::string(algo_name(a.algo)) + "/" + std::string(proto_name(a.proto)) +
               (a.default_knobs()
                    ? ""
                    : " channels " + std::to_string(a.channels) + " chunk " + std::to_string(a.chunk_bytes)) +
               " on " + k.first.fabric;
      };
      throw InputError(list.front().file, list.front().line,
                       describe(key) + " has " + std::to_string(list.size()) + " sample(s), but " +
                           describe(first_key) + " (" + at(first_list.front().file, first_list.front().line) +
                           ") has " + std::to_string(first_list.size()) +
                           ": a sweep needs the same number of runs for every arm and size");
    }
  }

  const Manifest* manifest_;
  IngestOptions options_;
  SampleKind samples_;
  SweepBuilder builder_;
  IngestResult result_;
  std::map<std::pair<Context, Arm>, std::vector<Contribution>> contributions_;
  std::map<std::vector<std::pair<uint64_t, double>>, std::string> seen_runs_;
  std::set<const ManifestEntry*> matched_;
};

// Whether every row of a run carries its timed iterations in the placements ingest uses.
bool has_iterations(const Run& run, Placement placement) {
  for (const Row& row : run.rows) {
    if (placement != Placement::kInPlace && !row.out_of_place.iterations) return false;
    if (placement != Placement::kOutOfPlace && row.in_place && !row.in_place->iterations) return false;
  }
  return !run.rows.empty();
}

// What the samples will be: the requested kind, or for kAuto the kind every finished run allows.
// A sweep's arms need equal sample counts, so runs with and without iterations cannot mix.
SampleKind resolve_sample_kind(const std::vector<ParsedLog>& logs, const IngestOptions& options) {
  if (options.samples == SampleKind::kMean) return SampleKind::kMean;
  const Run* with = nullptr;
  const Run* without = nullptr;
  std::string with_file, without_file;
  for (const ParsedLog& log : logs)
    for (const Run& run : log.runs) {
      if (run.failure) continue;
      if (has_iterations(run, options.placement)) {
        if (!with) with = &run, with_file = log.file;
      } else if (!without) {
        without = &run, without_file = log.file;
      }
    }
  if (options.samples == SampleKind::kIterations && without)
    throw InputError(without_file, without->first_line,
                     "--samples iterations: this run has no per-iteration times (nccl-tests -I 1 -J FILE, "
                     "2.19.1+, writes them to the JSON file; give that file)");
  if (with && without)
    throw InputError(without_file, without->first_line,
                     "this run has no per-iteration times but the run at " + at(with_file, with->first_line) +
                         " has: a sweep needs one kind of sample (--samples mean keeps one averaged sample "
                         "per run for both)");
  return with ? SampleKind::kIterations : SampleKind::kMean;
}

}  // namespace

IngestResult ingest_parsed(const std::vector<ParsedLog>& logs, const Manifest* manifest,
                           const IngestOptions& options) {
  Ingest ingest(manifest, options, resolve_sample_kind(logs, options));
  for (const ParsedLog& log : logs) ingest.log(log);
  return ingest.finish();
}

namespace {

// A manifest's log that cannot be read as one (missing, a FIFO, a folder, a device, a link loop) is
// named by the manifest's `file =` line, which is what the user has to fix.
void check_manifest_log(const Manifest& manifest, const ManifestEntry& e) {
  struct stat st {};
  std::string reason;
  if (::stat(e.resolved.c_str(), &st) != 0)
    reason = errno == ENOENT ? "no such file" : std::string("cannot open: ") + std::strerror(errno);
  else if (S_ISDIR(st.st_mode))
    reason = "is a folder, not a regular file";
  else if (!S_ISREG(st.st_mode))
    reason = "not a regular file";
  if (!reason.empty())
    throw InputError(manifest.path, e.file_line, "file = " + quoted_value(e.file) + ": " + reason);
}

}  // namespace

IngestResult ingest_logs(const std::vector<std::string>& paths, const Manifest* manifest,
                         const IngestOptions& options) {
  std::vector<std::string> files = paths;
  if (files.empty() && manifest)
    for (const ManifestEntry& e : manifest->entries) {
      check_manifest_log(*manifest, e);
      files.push_back(e.resolved);
    }
  if (files.empty()) throw UsageError("no logs given (name LOG files or a --manifest listing them)");
  std::vector<ParsedLog> logs;
  for (const std::string& f : files) logs.push_back(read_log(f));
  return ingest_parsed(logs, manifest, options);
}

SampleKind parse_sample_kind(std::string_view s) {
  if (s == "auto") return SampleKind::kAuto;
  if (s == "iterations") return SampleKind::kIterations;
  if (s == "mean") return SampleKind::kMean;
  throw UsageError("--samples: '" + std::string(s) + "' is not one of auto, iterations, mean");
}

std::string_view sample_kind_name(SampleKind k) {
  switch (k) {
    case SampleKind::kIterations:
      return "iterations";
    case SampleKind::kMean:
      return "mean";
    case SampleKind::kAuto:
      break;
  }
  return "auto";
}

Placement parse_placement(std::string_view s) {
  if (s == "out") return Placement::kOutOfPlace;
  if (s == "in") return Placement::kInPlace;
  if (s == "both") return Placement::kBoth;
  throw UsageError("--placement: '" + std::string(s) + "' is not one of out, in, both");
}

}  // namespace ncclbot::nccl_tests
