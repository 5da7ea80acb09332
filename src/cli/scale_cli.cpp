#include "cli/scale_cli.hpp"

#include <CLI/CLI.hpp>
#include <iostream>
#include <nlohmann/json.hpp>

#include "base/sha256.hpp"
#include "ncclbot/core/command_streams.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/io/atomic_file.hpp"

namespace ncclbot::cli {

std::string sweep_digest(const std::string& path) {
  const auto bytes = read_file_if_exists(path);
  if (!bytes) throw InputError(path, 0, "cannot read the sweep");
  return sha256_hex(*bytes);
}

void write_shard_partial(const std::string& path, const std::string& bytes, ShardSpec shard,
                         size_t total_units, size_t units, bool json) {
  write_file_atomic(path, bytes);
  command_err() << "shard " << shard.index << "/" << shard.count << ": " << units << " of " << total_units
                << " units -> " << path << "\n";
  if (json)
    command_out() << nlohmann::json{{"shard", {{"index", shard.index}, {"count", shard.count}}},
                                    {"units", {{"total", total_units}, {"count", units}}},
                                    {"out", path}}
                         .dump(2)
                  << "\n";
}

void add_rank_timeout_option(CLI::App& app, double& seconds) {
  app.add_option("--rank-timeout", seconds,
                 "under mpirun: abort the job when a rank has not reported this many seconds after "
                 "rank 0 is ready for it (a hung rank); 0 = wait for ever (default)");
}

void apply_rank_timeout(ProcessGroup* group, double seconds) {
  if (!(seconds >= 0)) throw UsageError("--rank-timeout must be 0 (off) or a positive number of seconds");
  if (group) group->set_rank_timeout(seconds);
}

}  // namespace ncclbot::cli
