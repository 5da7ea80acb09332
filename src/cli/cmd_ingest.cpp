// `ncclbot ingest LOG... [--manifest RUNS.toml] --out SWEEP.csv`: nccl-tests logs (text or -J
// JSON) into a forced-arm sweep, with a summary of the runs found, used and skipped.
// `ncclbot ingest DIR`: a campaign folder written by `ncclbot plan` (its campaign.toml), with a
// summary of its missing and failed runs. The library call: cli/ingest_call.hpp.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "cli/ingest_call.hpp"
#include "ncclbot/core/command_streams.hpp"

namespace ncclbot::cli {
namespace ingest_command {

// The command's options: the library call's (cli/ingest_call.hpp) and --json.
struct IngestCliOptions {
  IngestCallOptions call;
  bool json = false;
};

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
void add_ingest_options(CLI::App& app, IngestCliOptions& cli) {
  IngestCallOptions& opt = cli.call;
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
  app.add_flag("--json", cli.json, "print one JSON summary on stdout");
}

Action setup(CLI::App& app) {
  auto opt = std::make_shared<IngestCliOptions>();
  add_ingest_options(app, *opt);
  return [opt] {
    // The summary: JSON on stdout with --json, then text on stderr.
    const nlohmann::json s = ingest_document(ingest_call(opt->call));
    if (opt->json) {
      command_out() << s.dump(2) << "\n";
      print_human(s, command_err());
    } else {
      print_human(s, command_out());
    }
    return 0;
  };
}

const bool registered =
    register_command({"ingest", "turn nccl-tests logs (text or -J JSON) into a forced-arm sweep", setup});

}  // namespace ingest_command
}  // namespace ncclbot::cli
