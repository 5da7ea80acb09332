// `ncclbot export-table --study DIR --policy NAME --out FILE`: the per-context decisions of a
// policy of a finished study, as a decision table the NCCL tuner plugin reads (NCCLBOT_TABLE), or
// in NCCL's example CSV tuner format (NCCL_TUNER_CONFIG_FILE); the library call:
// cli/export_table_call.hpp.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "cli/export_table_call.hpp"
#include "ncclbot/core/command_streams.hpp"

namespace ncclbot::cli {
namespace export_table_command {

// The command's options: the library call's (cli/export_table_call.hpp) and --json.
struct ExportOptions {
  ExportTableCallOptions call;
  bool json = false;
};

Action setup(CLI::App& app) {
  auto opt = std::make_shared<ExportOptions>();
  app.add_option("--study", opt->call.study_dir, "report folder of a finished `ncclbot run`")->required();
  app.add_option("--policy", opt->call.selection.policy, "policy name as in the study")->required();
  app.add_option("--out", opt->call.out, "table file to write")->required();
  app.add_option("--format", opt->call.format,
                 "ncclbot (the plugin's table) or nccl-csv (NCCL's example tuner)")
      ->check(CLI::IsMember({"ncclbot", "nccl-csv"}));
  app.add_option("--scenario", opt->call.selection.scenarios, "only these scenarios (repeatable)");
  app.add_option("--fabric", opt->call.selection.fabric, "only contexts of this fabric");
  app.add_flag("--json", opt->json, "print one JSON document on stdout");
  return [opt] {
    const ExportTableCallResult r = export_table_call(opt->call);
    command_err() << "wrote " << r.rows << " rows (" << r.format << " format) to " << r.out << "\n";
    if (opt->json) command_out() << export_table_document(r).dump(2) << "\n";
    return 0;
  };
}

const bool registered = register_command(
    {"export-table", "write a study policy's per-context decisions as a plugin table", setup});

}  // namespace export_table_command
}  // namespace ncclbot::cli
