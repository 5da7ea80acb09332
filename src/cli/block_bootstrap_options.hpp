#pragma once
// The block-bootstrap options `ope` and `telemetry` share (docs/ope.md "Logs of any size"):
// --block-length, --threads and --backend, added to a command and checked (exit 2) before any log
// is read.
#include <CLI/CLI.hpp>
#include <string>

#include "ncclbot/ope/block_bootstrap.hpp"
#include "ncclbot/ope/log_blocks.hpp"

namespace ncclbot::cli {

struct BlockBootstrapOptions {
  std::string block_length = "auto";
  unsigned threads = 0;
  std::string backend = "cpu";

  void add_to(CLI::App& app) {
    app.add_option(
        "--block-length", block_length,
        "calls per bootstrap block: auto (about the cube root of a context's calls) or a number; 1 "
        "resamples calls one by one (default auto)");
    app.add_option("--threads", threads, "resampling threads (default 0: all cores; same numbers)");
    app.add_option("--backend", backend,
                   "where the bootstrap resamples: cpu or cuda (same numbers; default cpu)");
  }
  BlockRule rule() const { return parse_block_rule(block_length, "--block-length"); }
  ResampleBackend resample_backend() const { return parse_resample_backend(backend, "--backend"); }
};

}  // namespace ncclbot::cli
