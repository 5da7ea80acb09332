// `ncclbot export-table --study DIR --policy NAME --out FILE`: the per-context decisions of a
// policy of a finished study, as a decision table the NCCL tuner plugin reads (NCCLBOT_TABLE), or
// in NCCL's example CSV tuner format (NCCL_TUNER_CONFIG_FILE).
#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "base/sha256.hpp"
#include "cli/command.hpp"
#include "ncclbot/core/command_streams.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/io/output_file.hpp"
#include "report/results_document.hpp"
#include "study/decision_export.hpp"
#include "study/run_folder.hpp"
#include "table/decision_table.hpp"

namespace ncclbot::cli {
namespace export_table_command {

struct ExportOptions {
  std::string study_dir, out, format = "ncclbot";
  study::ExportSelection selection;
  bool json = false;
};

// The run's results.json, as `ncclbot run` wrote it: its SHA-256 must be the one the run recorded
// in the folder's marker, so a hand-edited decision never reaches a plugin table. A folder of an
// older version (no recorded digest) is read with a warning. The table (`out`) may not replace any
// file of the folder.
nlohmann::json read_results(const std::string& dir, const std::string& path, const std::string& out) {
  std::vector<std::string> inputs = {path};
  std::optional<std::string> recorded;
  const bool marked = input_path_exists((std::filesystem::path(dir) / study::kRunFolderMarker).string());
  if (marked) {
    const study::RunFolder folder = study::RunFolder::claim(dir, "--study");
    for (const auto& f : folder.listed()) inputs.push_back(dir + "/" + f);
    recorded = folder.checksum("results.json");
  }
  check_output_not_input(out, inputs, "--out");
  const auto text = read_input_file_if_exists(path, kMaxJsonInputBytes, false);
  if (!text) throw InputError(path, 0, "cannot open (is this the --out folder of a finished `ncclbot run`?)");
  if (recorded && *recorded != sha256_hex(*text))
    throw InputError(
        path, 0, "changed after `ncclbot run` wrote it (not the sha256 the run recorded); rerun the study");
  if (!recorded)
    command_err() << "ncclbot export-table: warning: " << dir
                  << " records no checksum of results.json (an older ncclbot wrote it), so edits to it "
                     "cannot be detected\n";
  try {
    return nlohmann::json::parse(*text);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(path, 0, std::string("not valid JSON: ") + e.what());
  }
}

Action setup(CLI::App& app) {
  auto opt = std::make_shared<ExportOptions>();
  app.add_option("--study", opt->study_dir, "report folder of a finished `ncclbot run`")->required();
  app.add_option("--policy", opt->selection.policy, "policy name as in the study")->required();
  app.add_option("--out", opt->out, "table file to write")->required();
  app.add_option("--format", opt->format, "ncclbot (the plugin's table) or nccl-csv (NCCL's example tuner)")
      ->check(CLI::IsMember({"ncclbot", "nccl-csv"}));
  app.add_option("--scenario", opt->selection.scenarios, "only these scenarios (repeatable)");
  app.add_option("--fabric", opt->selection.fabric, "only contexts of this fabric");
  app.add_flag("--json", opt->json, "print one JSON document on stdout");
  return [opt] {
    const std::string path = opt->study_dir + "/results.json";
    const nlohmann::json results = read_results(opt->study_dir, path, opt->out);
    if (!results.is_object() || results.value("schema", "") != report::kResultsSchema)
      throw InputError(
          path, 0, std::string("not an ncclbot study results file (schema ") + report::kResultsSchema + ")");
    std::vector<study::DecisionRow> rows;
    std::string comment;
    try {
      rows = study::decision_rows(results, opt->selection);
      comment = "ncclbot " + results.at("program").at("version").get<std::string>() + " study '" +
                results.at("study").at("name").get<std::string>() + "' (sha256 " +
                results.at("study").at("sha256").get<std::string>() + "), policy " + opt->selection.policy;
    } catch (const nlohmann::json::exception& e) {
      throw InputError(path, 0, std::string("malformed results: ") + e.what());
    }
    std::string table;
    try {
      table = opt->format == "ncclbot" ? table::format_ncclbot_table(rows, comment)
                                       : table::format_nccl_csv(rows, comment);
    } catch (const table::TableFormatError& e) {
      throw UsageError(e.what());
    }
    write_output_file(opt->out, table, "--out");
    command_err() << "wrote " << rows.size() << " rows (" << opt->format << " format) to " << opt->out
                  << "\n";
    if (opt->json)
      command_out() << nlohmann::json{{"policy", opt->selection.policy},
                                      {"format", opt->format},
                                      {"rows", rows.size()},
                                      {"out", opt->out}}
                           .dump(2)
                    << "\n";
    return 0;
  };
}

const bool registered = register_command(
    {"export-table", "write a study policy's per-context decisions as a plugin table", setup});

}  // namespace export_table_command
}  // namespace ncclbot::cli
