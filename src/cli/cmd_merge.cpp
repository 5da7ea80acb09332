// `ncclbot merge`: combine the partial results of `replay --shard I/N --out FILE` (every shard
// exactly once, any order) into the report the unsharded run prints, byte for byte. Partials of
// `tune --phase tune|score --shard I/N` merge the same way: the tune phase into the choice file
// that the score phase reads (--out), the score phase into the report `tune` prints.
#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/command.hpp"
#include "cli/replay_report.hpp"
#include "cli/tune_merge.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/io/atomic_file.hpp"
#include "ncclbot/io/output_file.hpp"
#include "ncclbot/scale/replay_partial.hpp"

namespace ncclbot::cli {
namespace merge_command {

struct MergeOptions {
  std::vector<std::string> partials;
  std::string out_path;
  bool json = false;
};

Action setup(CLI::App& app) {
  auto opt = std::make_shared<MergeOptions>();
  app.add_option("partials", opt->partials,
                 "partial result files written by replay/tune --shard I/N --out FILE")
      ->required();
  app.add_option("--out", opt->out_path, "for tune --phase tune partials: where to write the choice");
  app.add_flag("--json", opt->json, "print one JSON document on stdout");
  return [opt] {
    if (!opt->out_path.empty()) check_output_not_input(opt->out_path, opt->partials, "--out");
    std::vector<ReplayPartial> parts;
    for (const std::string& path : opt->partials) {
      const auto bytes = read_file_if_exists(path);
      if (!bytes) throw InputError(path, 0, "cannot read the partial result");
      parts.push_back(decode_replay_partial(*bytes, path));
    }
    const nlohmann::json& id = parts.front().identity;
    if (id.value("command", "") == "tune") return merge_tune_partials(parts, opt->out_path, opt->json);
    if (!opt->out_path.empty()) throw UsageError("merge: --out is only for tune --phase tune partials");
    const ReplayResults merged = merge_replay_partials(parts);
    ReplayReport report;
    report.backend = id.at("backend").get<std::string>();
    report.policies = id.at("policies").get<std::vector<std::string>>();
    report.contexts = id.at("contexts").size();
    report.seeds = id.at("seeds").get<int>();
    report.horizon = id.at("horizon").get<int>();
    report.delay = id.value("delay", 0);
    report.window = id.value("window", 1);
    report.policy_start = id.value("policy_start", 0);
    report.call_cost_us = id.value("call_cost_us", std::vector<double>{});
    report.as_deployed = id.value("as_deployed", std::string());
    report.observation = id.value("observation", std::string());
    print_replay_report(report, merged, opt->json);
    return 0;
  };
}

const bool registered = register_command(
    {"merge", "combine replay or tune --shard partial results into the unsharded report", setup});

}  // namespace merge_command
}  // namespace ncclbot::cli
