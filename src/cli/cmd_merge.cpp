// `ncclbot merge`: combine the partial results of `replay --shard I/N --out FILE` (every shard
// exactly once, any order) into the report the unsharded run prints, byte for byte.
#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/command.hpp"
#include "cli/replay_report.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/scale/replay_partial.hpp"
#include "study/atomic_file.hpp"

namespace ncclbot::cli {
namespace {

struct MergeOptions {
  std::vector<std::string> partials;
  bool json = false;
};

Action setup(CLI::App& app) {
  auto opt = std::make_shared<MergeOptions>();
  app.add_option("partials", opt->partials, "partial result files written by replay --shard I/N --out FILE")
      ->required();
  app.add_flag("--json", opt->json, "print one JSON document on stdout");
  return [opt] {
    std::vector<ReplayPartial> parts;
    for (const std::string& path : opt->partials) {
      const auto bytes = study::read_file_if_exists(path);
      if (!bytes) throw InputError(path, 0, "cannot read the partial result");
      parts.push_back(decode_replay_partial(*bytes, path));
    }
    const ReplayResults merged = merge_replay_partials(parts);
    const nlohmann::json& id = parts.front().identity;
    ReplayReport report;
    report.backend = id.at("backend").get<std::string>();
    report.policies = id.at("policies").get<std::vector<std::string>>();
    report.contexts = id.at("contexts").size();
    report.seeds = id.at("seeds").get<int>();
    report.horizon = id.at("horizon").get<int>();
    print_replay_report(report, merged, opt->json);
    return 0;
  };
}

const bool registered =
    register_command({"merge", "combine replay --shard partial results into the unsharded report", setup});

}  // namespace
}  // namespace ncclbot::cli
