#include "cli/export_table_call.hpp"

#include <filesystem>
#include <optional>
#include <vector>

#include "base/sha256.hpp"
#include "ncclbot/core/command_streams.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/io/output_file.hpp"
#include "report/results_document.hpp"
#include "study/run_folder.hpp"
#include "table/decision_table.hpp"

namespace ncclbot::cli {
namespace {

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

}  // namespace

ExportTableCallResult export_table_call(const ExportTableCallOptions& o) {
  if (o.format != "ncclbot" && o.format != "nccl-csv")
    throw UsageError("--format must be ncclbot or nccl-csv, not '" + o.format + "'");
  const std::string path = o.study_dir + "/results.json";
  const nlohmann::json results = read_results(o.study_dir, path, o.out);
  if (!results.is_object() || results.value("schema", "") != report::kResultsSchema)
    throw InputError(
        path, 0, std::string("not an ncclbot study results file (schema ") + report::kResultsSchema + ")");
  std::vector<study::DecisionRow> rows;
  std::string comment;
  try {
    rows = study::decision_rows(results, o.selection);
    comment = "ncclbot " + results.at("program").at("version").get<std::string>() + " study '" +
              results.at("study").at("name").get<std::string>() + "' (sha256 " +
              results.at("study").at("sha256").get<std::string>() + "), policy " + o.selection.policy;
  } catch (const nlohmann::json::exception& e) {
    throw InputError(path, 0, std::string("malformed results: ") + e.what());
  }
  std::string table;
  try {
    table = o.format == "ncclbot" ? table::format_ncclbot_table(rows, comment)
                                  : table::format_nccl_csv(rows, comment);
  } catch (const table::TableFormatError& e) {
    throw UsageError(e.what());
  }
  write_output_file(o.out, table, "--out");
  return {o.selection.policy, o.format, o.out, rows.size()};
}

nlohmann::json export_table_document(const ExportTableCallResult& r) {
  return {{"policy", r.policy}, {"format", r.format}, {"rows", r.rows}, {"out", r.out}};
}

}  // namespace ncclbot::cli
