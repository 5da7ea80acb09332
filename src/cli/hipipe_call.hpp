#pragma once
// `hipipe` as library calls (cli/replay_call.hpp has the pattern): the HiPIPE model's schedulers
// compared on one fabric and all-reduce size, and a study of fabrics, node counts and sizes written
// into a folder (docs/hipipe.md); typed options in, typed results out.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "ncclbot/hipipe/comparison.hpp"

namespace ncclbot::cli {

struct HipipeCallOptions {
  std::string fabric;  // a preset (h100-ib-a, gb200-mnnvl, h100-ib-3d, ...) or a .toml path
  std::string bytes;   // all-reduce size per rank: 1048576, 64M, 1G, ...
  std::optional<int> nodes, gpus_per_node;  // nullopt: the preset's
  int chunks = 4, max_chunks = 64;
};

struct HipipeCallResult {
  hipipe::Comparison comparison;
  int nodes = 0, gpus_per_node = 0;
};

// UsageError unless the node and GPU counts given are in [1, a preset's largest].
void check_hipipe_counts(const HipipeCallOptions& options);
// UsageError naming the option on a bad value; InputError on a bad preset.
HipipeCallResult hipipe_call(const HipipeCallOptions& options);
// The JSON document `hipipe --json` prints.
nlohmann::json hipipe_document(const HipipeCallResult& result);

struct HipipeStudyCallOptions {
  std::string study;     // a study TOML (experiments/hipipe.toml)
  std::string out;       // the output folder
  bool figure = true;    // draw hipipe.png (python3 with matplotlib)
  bool replace = false;  // take over a folder another command wrote
};

struct HipipeStudyCallResult {
  size_t cases = 0;
  nlohmann::json summary;      // hipipe_summary.json's content
  bool figure_failed = false;  // the figure was tried and not drawn (no python3 or matplotlib)
};

// UsageError on a bad option or an output folder that is not ours; InputError on a bad study.
// The case count and the progress of the cases go to command_err() (the progress line).
HipipeStudyCallResult hipipe_study_call(const HipipeStudyCallOptions& options);

}  // namespace ncclbot::cli
