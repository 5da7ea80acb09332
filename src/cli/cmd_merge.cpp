// `ncclbot merge`: combine the partial results of `replay --shard I/N --out FILE` (every shard
// exactly once, any order) into the report the unsharded run prints, byte for byte. Partials of
// `tune --phase tune|score --shard I/N` merge the same way: the tune phase into the choice file
// that the score phase reads (--out), the score phase into the report `tune` prints. The library
// call: cli/merge_call.hpp.
#include <CLI/CLI.hpp>
#include <memory>

#include "cli/command.hpp"
#include "cli/merge_call.hpp"

namespace ncclbot::cli {
namespace merge_command {

Action setup(CLI::App& app) {
  auto opt = std::make_shared<MergeCallOptions>();
  auto json = std::make_shared<bool>(false);
  app.add_option("partials", opt->partials,
                 "partial result files written by replay/tune --shard I/N --out FILE")
      ->required();
  app.add_option("--out", opt->out_path, "for tune --phase tune partials: where to write the choice");
  app.add_flag("--json", *json, "print one JSON document on stdout");
  return [opt, json] {
    print_merge_result(merge_call(*opt), *json);
    return 0;
  };
}

const bool registered = register_command(
    {"merge", "combine replay or tune --shard partial results into the unsharded report", setup});

}  // namespace merge_command
}  // namespace ncclbot::cli
