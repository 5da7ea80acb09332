// `ncclbot ingest LOG... [--manifest RUNS.toml] --out SWEEP.csv`: nccl-tests logs (text or -J
// JSON) into a forced-arm sweep, with a summary of the runs found, used and skipped.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/io/nccl_tests/ingest.hpp"
#include "ncclbot/io/sweep_csv.hpp"

namespace ncclbot::cli {
namespace {

struct IngestCliOptions {
  std::vector<std::string> logs;
  std::string manifest, out, placement = "out", fabric = "unknown";
  bool json = false, skip_unforced = false, skip_failed = false;
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
                {"rows", run.rows}});
    } else {
      j["reason"] = run.reason;
    }
    runs.push_back(std::move(j));
  }
  return {{"out", out_path},
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
     << " sample(s) per arm, " << s["warnings"] << " warning(s) -> " << s["out"].get<std::string>() << "\n";
  for (const auto& run : s["runs"]) {
    os << "  " << run["file"].get<std::string>() << ":" << run["line"] << " "
       << (run["test"].get<std::string>().empty() ? std::string("(unnamed test)")
                                                  : run["test"].get<std::string>());
    if (run["used"].get<bool>())
      os << ": " << run["collective"].get<std::string>() << " " << run["algo"].get<std::string>() << "/"
         << run["proto"].get<std::string>() << " " << run["nodes"] << "x" << run["gpus_per_node"] << " on "
         << run["fabric"].get<std::string>() << ", " << run["rows"] << " sizes\n";
    else
      os << ": skipped (" << run["reason"].get<std::string>() << ")\n";
  }
}

Action setup(CLI::App& app) {
  auto opt = std::make_shared<IngestCliOptions>();
  app.add_option("logs", opt->logs, "nccl-tests logs (text or -J JSON); default: the manifest's files");
  app.add_option("--manifest", opt->manifest, "TOML list of [[run]] tables: file, algo, proto, nodes, ...");
  app.add_option("--out", opt->out, "sweep CSV to write")->required();
  app.add_option("--placement", opt->placement, "which times become samples: out (default), in, or both");
  app.add_option("--fabric", opt->fabric,
                 "fabric name for logs whose manifest entry names none (default unknown)");
  app.add_flag("--skip-unforced", opt->skip_unforced, "skip runs without a forced arm instead of failing");
  app.add_flag("--skip-failed", opt->skip_failed, "skip failed runs instead of failing");
  app.add_flag("--json", opt->json, "print one JSON summary on stdout");
  return [opt] {
    nccl_tests::IngestOptions options;
    options.placement = nccl_tests::parse_placement(opt->placement);
    options.fabric = opt->fabric;
    options.skip_unforced = opt->skip_unforced;
    options.skip_failed = opt->skip_failed;
    options.on_warning = [](const nccl_tests::Diagnostic& w) {
      std::cerr << "ncclbot: warning: " << w.text() << "\n";
    };
    if (!nccl_tests::valid_fabric_name(options.fabric))
      throw UsageError("--fabric: '" + options.fabric +
                       "' must be 1-64 characters of letters, digits, '-', '_' or '.'");
    std::optional<nccl_tests::Manifest> manifest;
    if (!opt->manifest.empty()) manifest = nccl_tests::read_manifest(opt->manifest);
    const auto result = nccl_tests::ingest_logs(opt->logs, manifest ? &*manifest : nullptr, options);
    const std::filesystem::path out_path(opt->out);
    if (out_path.has_parent_path()) std::filesystem::create_directories(out_path.parent_path());
    write_sweep_csv(result.sweep, opt->out);
    const size_t files = opt->logs.empty() && manifest ? manifest->entries.size() : opt->logs.size();
    const nlohmann::json s = summary(result, opt->out, files);
    if (opt->json) {
      std::cout << s.dump(2) << "\n";
      print_human(s, std::cerr);
    } else {
      print_human(s, std::cout);
    }
    return 0;
  };
}

const bool registered =
    register_command({"ingest", "turn nccl-tests logs (text or -J JSON) into a forced-arm sweep", setup});

}  // namespace
}  // namespace ncclbot::cli
