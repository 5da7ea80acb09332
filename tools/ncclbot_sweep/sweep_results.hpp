#pragma once
// What rank 0 keeps of a sweep, one entry per finished context, and the three files it becomes:
//   OUT                      the sweep CSV (io/sweep_csv.hpp), one row per arm and iteration: the time
//                            of the slowest rank, in us; what `ingest` gives (channels and chunk_bytes
//                            columns where an arm sets its channels), with its side file
//                            OUT-stem.sweep.toml saying samples = "iterations" as ingest's does
//   OUT-stem.nccl-own.csv    NCCL's own pick (the call with no config) per iteration:
//                            fabric,collective,nodes,gpus_per_node,bytes,sample,time_us
//                            (not an arm: which kernel NCCL ran is not reported by its API)
//   OUT-stem.unavailable.csv the arms NCCL refused, with its words:
//                            fabric,collective,nodes,gpus_per_node,bytes,algo,proto,channels,chunk_bytes,reason
// All three are rewritten whole after every finished context, so a run that stops keeps every
// context it finished.
#include <string>
#include <utility>
#include <vector>

#include "ncclbot/core/arm.hpp"
#include "ncclbot/core/context.hpp"

namespace ncclbot::sweep_tool {

struct ContextResult {
  Context context;
  std::vector<Arm> arms;                    // the arms NCCL ran, in the order of `samples`
  std::vector<std::vector<float>> samples;  // [arm][iteration]
  std::vector<float> own_samples;           // NCCL's own pick, [iteration]
  std::vector<std::pair<Arm, std::string>> unavailable;
};

struct SweepFiles {
  std::string sweep, own, unavailable;
};
SweepFiles sweep_files(const std::string& out);

// Writes the three files of `done` (the sweep only when some context ran an arm).
void write_sweep_files(const std::vector<ContextResult>& done, const SweepFiles& files);

}  // namespace ncclbot::sweep_tool
