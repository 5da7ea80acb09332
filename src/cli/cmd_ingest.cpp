// `ncclbot ingest LOG... [--manifest RUNS.toml] --out SWEEP.csv`: nccl-tests logs (text or -J
// JSON) into a forced-arm sweep, with a summary of the runs found, used and skipped.
// `ncclbot ingest DIR`: a campaign folder written by `ncclbot plan` (its campaign.toml), with a
// summary of its missing and failed runs.
#include <unistd.h>
#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "ncclbot/campaign/campaign.hpp"
#include "ncclbot/core/command_streams.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/io/nccl_tests/ingest.hpp"
#include "ncclbot/io/nccl_tests/ingest_output.hpp"
#include "ncclbot/io/nccl_tests/manifest.hpp"

namespace ncclbot::cli {
namespace ingest_command {

struct IngestCliOptions {
  std::vector<std::string> logs;
  std::string manifest, out, placement = "out", fabric = "unknown", samples = "auto";
  bool json = false, skip_unforced = false, skip_failed = false, allow_missing = false;
};

nlohmann::json summary(const nccl_tests::IngestResult& r, const std::string& out_path, size_t files) {
  nlohmann::json runs = nlohmann::json::array();
  size_t used = 0;
  for (const auto& run : r.runs) {
    nlohmann::json j = {{"file", run.file}, {"line", run.line}, {"test", run.test}, {"used", run.used}};
    if (run.used) {
      ++used;
      j.update({{"collective", run.collective},
                {"algo", run.algo},
                {"proto", run.proto},
                {"fabric", run.fabric},
                {"nodes", run.nodes},
                {"gpus_per_node", run.gpus_per_node},
                {"channels", run.channels},
                {"chunk_bytes", run.chunk_bytes},
                {"rows", run.rows}});
      if (run.nccl_channels) j["nccl_channels"] = *run.nccl_channels;
    } else {
      j["reason"] = run.reason;
    }
    runs.push_back(std::move(j));
  }
  return {{"out", out_path},
          {"sample_kind", std::string(nccl_tests::sample_kind_name(r.samples))},
          {"files", files},
          {"runs_found", r.runs.size()},
          {"runs_used", used},
          {"runs_skipped", r.runs.size() - used},
          {"rows", r.csv_rows},
          {"contexts", r.sweep.num_contexts()},
          {"samples", r.sweep.samples()},
          {"warnings", r.warnings.size()},
          {"runs", std::move(runs)}};
}

void print_human(const nlohmann::json& s, std::ostream& os) {
  os << "ingested " << s["runs_used"] << " of " << s["runs_found"] << " runs from " << s["files"]
     << " file(s): " << s["rows"] << " rows, " << s["contexts"] << " contexts, " << s["samples"]
     << " sample(s) per arm (" << s["sample_kind"].get<std::string>() << "), " << s["warnings"]
     << " warning(s) -> " << s["out"].get<std::string>() << "\n";
  if (s.contains("noise"))
    os << "  per-iteration spread (-I 1 columns) -> " << s["noise"].get<std::string>() << "\n";
  if (s.contains("campaign")) {
    const auto& c = s["campaign"];
    os << "  campaign: " << c["done"] << " done, " << c["missing"] << " missing, " << c["failed"]
       << " failed of " << c["runs"] << " runs\n";
    for (const auto& r : c["not_done"])
      os << "    " << r["state"].get<std::string>() << " " << r["id"].get<std::string>() << ": "
         << r["reason"].get<std::string>() << "\n";
    for (const auto& d : c["dropped"]) os << "    dropped " << d.get<std::string>() << "\n";
  }
  for (const auto& run : s["runs"]) {
    os << "  " << run["file"].get<std::string>() << ":" << run["line"] << " "
       << (run["test"].get<std::string>().empty() ? std::string("(unnamed test)")
                                                  : run["test"].get<std::string>());
    if (run["used"].get<bool>())
      os << ": " << run["collective"].get<std::string>() << " " << run["algo"].get<std::string>() << "/"
         << run["proto"].get<std::string>()
         << (run["channels"] != 0 ? " channels " + run["channels"].dump() : std::string())
         << (run["chunk_bytes"] != 0 ? " chunk " + run["chunk_bytes"].dump() + " B" : std::string())
         << (run.contains("nccl_channels") ? " (NCCL set up " + run["nccl_channels"].dump() + " channels)"
                                           : std::string())
         << " " << run["nodes"] << "x" << run["gpus_per_node"] << " on " << run["fabric"].get<std::string>()
         << ", " << run["rows"] << " sizes\n";
    else
      os << ": skipped (" << run["reason"].get<std::string>() << ")\n";
  }
}

// Declares ingest's options on `app`, in --help order, bound to `opt`.
void add_ingest_options(CLI::App& app, IngestCliOptions& opt) {
  app.add_option("logs", opt.logs,
                 "nccl-tests logs (text or -J JSON), or one campaign folder (ncclbot plan); default: the "
                 "manifest's files");
  app.add_option("--manifest", opt.manifest, "TOML list of [[run]] tables: file, algo, proto, nodes, ...");
  app.add_option("--out", opt.out, "sweep CSV to write (a campaign folder: default DIR/sweep.csv)");
  app.add_option("--placement", opt.placement, "which times become samples: out (default), in, or both");
  app.add_option("--samples", opt.samples,
                 "iterations (one sample per timed iteration of -I 1 -J logs), mean (one averaged sample per "
                 "run), or auto (default: iterations when every run has them)");
  app.add_flag("--allow-missing", opt.allow_missing,
               "campaign folder: keep only contexts whose planned arms are all complete instead of failing");
  app.add_option("--fabric", opt.fabric,
                 "fabric name for logs whose manifest entry names none (default unknown)");
  app.add_flag("--skip-unforced", opt.skip_unforced, "skip runs without a forced arm instead of failing");
  app.add_flag("--skip-failed", opt.skip_failed, "skip failed runs instead of failing");
  app.add_flag("--json", opt.json, "print one JSON summary on stdout");
}

// The library's ingest options from the command line's; warnings go to stderr as they come.
nccl_tests::IngestOptions ingest_options_from(const IngestCliOptions& opt) {
  nccl_tests::IngestOptions options;
  options.placement = nccl_tests::parse_placement(opt.placement);
  options.samples = nccl_tests::parse_sample_kind(opt.samples);
  options.fabric = opt.fabric;
  options.skip_unforced = opt.skip_unforced;
  options.skip_failed = opt.skip_failed;
  options.on_warning = [](const nccl_tests::Diagnostic& w) {
    command_err() << "ncclbot: warning: " << w.text() << "\n";
  };
  if (!nccl_tests::valid_fabric_name(options.fabric))
    throw UsageError("--fabric: '" + options.fabric +
                     "' must be 1-64 characters of letters, digits, '-', '_' or '.'");
  return options;
}

// Checks the options against the input (a campaign folder or logs) and fills in a campaign
// folder's default --out; true when the input is a campaign folder.
bool check_ingest_input(IngestCliOptions& opt) {
  const bool campaign_dir = opt.logs.size() == 1 && campaign::is_campaign_dir(opt.logs[0]);
  if (!campaign_dir && opt.allow_missing) throw UsageError("--allow-missing: only for a campaign folder");
  if (campaign_dir && !opt.manifest.empty()) throw UsageError("--manifest: a campaign folder has its own");
  if (campaign_dir && opt.out.empty()) opt.out = (std::filesystem::path(opt.logs[0]) / "sweep.csv").string();
  if (opt.out.empty()) throw UsageError("--out is required");
  return campaign_dir;
}

// What was ingested, from how many files, and (a campaign folder) the state of its runs.
struct IngestOutcome {
  nccl_tests::IngestResult result;
  size_t files = 0;
  nlohmann::json campaign_summary;
};

// Ingests the complete runs of the campaign folder opt.logs[0], counting its runs by state.
IngestOutcome ingest_campaign_folder(const IngestCliOptions& opt, const nccl_tests::IngestOptions& options) {
  IngestOutcome out;
  const campaign::Campaign c = campaign::read_campaign(opt.logs[0]);
  std::vector<std::string> inputs = {c.manifest_path};
  for (const auto& run : c.runs) inputs.insert(inputs.end(), {run.json, run.log});
  nccl_tests::check_output_is_not_input(opt.out, inputs);
  const bool tty = isatty(2);
  // A progress line on a terminal only: written to a file, it would be a second line before an error.
  auto ingested = campaign::ingest_campaign(c, options, opt.allow_missing, [tty](size_t done, size_t total) {
    if (tty) command_err() << "\rchecking runs: " << done << "/" << total << (done == total ? "\n" : "");
  });
  out.result = std::move(ingested.result);
  out.files = 0;
  size_t counts[3] = {0, 0, 0};
  nlohmann::json not_done = nlohmann::json::array();
  for (size_t i = 0; i < c.runs.size(); ++i) {
    const auto& st = ingested.status[i];
    ++counts[int(st.state)];
    out.files += st.state == campaign::RunState::kDone;
    if (st.state != campaign::RunState::kDone)
      not_done.push_back({{"id", c.runs[i].id},
                          {"state", std::string(campaign::run_state_name(st.state))},
                          {"reason", st.reason}});
  }
  out.campaign_summary = {{"dir", opt.logs[0]},         {"runs", c.runs.size()},
                          {"done", counts[0]},          {"missing", counts[1]},
                          {"failed", counts[2]},        {"not_done", std::move(not_done)},
                          {"dropped", ingested.dropped}};
  return out;
}

// Ingests the logs given (or, with none, the manifest's files).
IngestOutcome ingest_log_files(const IngestCliOptions& opt, const nccl_tests::IngestOptions& options) {
  IngestOutcome out;
  std::vector<std::string> inputs = opt.logs;
  out.files = opt.logs.size();
  std::optional<nccl_tests::Manifest> manifest;
  if (!opt.manifest.empty()) {
    manifest = nccl_tests::read_manifest(opt.manifest);
    inputs.push_back(opt.manifest);
    if (opt.logs.empty())
      for (const auto& e : manifest->entries) inputs.push_back(e.resolved);
    if (opt.logs.empty()) out.files = manifest->entries.size();
  }
  nccl_tests::check_output_is_not_input(opt.out, inputs);
  out.result = nccl_tests::ingest_logs(opt.logs, manifest ? &*manifest : nullptr, options);
  return out;
}

// Ingests, writes the sweep and prints the summary (JSON on stdout with --json, then text on stderr).
int run_ingest(IngestCliOptions& opt) {
  const nccl_tests::IngestOptions options = ingest_options_from(opt);
  const bool campaign_dir = check_ingest_input(opt);
  const IngestOutcome ingested =
      campaign_dir ? ingest_campaign_folder(opt, options) : ingest_log_files(opt, options);
  const std::string sidecar = nccl_tests::write_ingest_output(ingested.result, opt.out);
  nlohmann::json s = summary(ingested.result, opt.out, ingested.files);
  if (!sidecar.empty()) s["noise"] = sidecar;
  if (campaign_dir) s["campaign"] = ingested.campaign_summary;
  if (opt.json) {
    command_out() << s.dump(2) << "\n";
    print_human(s, command_err());
  } else {
    print_human(s, command_out());
  }
  return 0;
}

Action setup(CLI::App& app) {
  auto opt = std::make_shared<IngestCliOptions>();
  add_ingest_options(app, *opt);
  return [opt] { return run_ingest(*opt); };
}

const bool registered =
    register_command({"ingest", "turn nccl-tests logs (text or -J JSON) into a forced-arm sweep", setup});

}  // namespace ingest_command
}  // namespace ncclbot::cli
