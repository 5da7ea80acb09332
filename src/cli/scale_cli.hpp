#pragma once
// Command-line pieces the scale-out commands (`replay`, `tune`, `run-units`) share
// (docs/scale-out.md).
#include <cstddef>
#include <string>

#include "ncclbot/scale/process_group.hpp"
#include "ncclbot/scale/shard.hpp"

namespace CLI {
class App;
}

namespace ncclbot::cli {

// SHA-256 of the sweep file, for partials' identity (InputError naming it when unreadable).
std::string sweep_digest(const std::string& path);

// Writes one shard's partial result atomically and says so: a line on stderr and, with `json`,
// the document {"shard", "units": {"total", "count"}, "out"} on stdout.
void write_shard_partial(const std::string& path, const std::string& bytes, ShardSpec shard,
                         size_t total_units, size_t units, bool json);

// `--rank-timeout SECONDS`: under mpirun, how long rank 0 waits for another rank's result once it
// is ready to receive it before it declares that rank hung and aborts the job; 0 (the default)
// waits for ever.
void add_rank_timeout_option(CLI::App& app, double& seconds);
// Hands the option to the group (nothing without one); a negative value is a usage error.
void apply_rank_timeout(ProcessGroup* group, double seconds);

}  // namespace ncclbot::cli
