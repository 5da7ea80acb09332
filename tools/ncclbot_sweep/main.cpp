// ncclbot-sweep: one rank per GPU times every listed (algorithm, protocol, channels) arm and NCCL's own
// pick per call through NCCL 2.31+'s nccl*Config, and writes the sweep CSV (docs/campaign.md).
// Exit codes: 0 done; 2 bad usage or an unwritable output (before anything runs); 1 a rank failed.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>

#include "buffer_contents.hpp"
#include "collective_device.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/core/names.hpp"
#include "rank_group.hpp"
#include "sweep_options.hpp"
#include "sweep_run.hpp"

namespace ncclbot::sweep_tool {
namespace {

// Every rank reads the same arguments, so every rank reaches the same verdict; rank 0 says it.
void check_sizes(const SweepOptions& options, int ranks) {
  for (Collective c : options.collectives)
    for (uint64_t bytes : options.bytes)
      if (const char* fault = layout_fault(c, bytes, ranks))
        throw UsageError("--bytes: " + std::to_string(bytes) + " for " + std::string(collective_name(c)) +
                         " over " + std::to_string(ranks) + " ranks: " + fault);
}

// Rank 0 writes the (empty) side files first, so an unwritable --out is said before anything runs.
void check_output(const SweepFiles& files, RankGroup& group) {
  std::vector<double> failed{0.0};
  std::string message;
  if (group.rank() == 0) try {
      write_sweep_files({}, files);
    } catch (const std::exception& e) {
      failed[0] = 1.0;
      message = e.what();
    }
  group.max_in_place(failed);
  if (failed[0] > 0.0) throw UsageError(message.empty() ? "rank 0 cannot write --out" : message);
}

int run(int argc, char** argv, RankGroup& group) {
  SweepOptions options;
  SweepFiles files;
  try {
    options = parse_sweep_options(argc, argv);
    if (options.help) {
      if (group.rank() == 0) std::fputs(options.help_text.c_str(), stdout);
      return 0;
    }
    check_sizes(options, group.size());
    if (group.size() % group.local_size() != 0)
      throw UsageError("the nodes run different numbers of ranks: one rank per GPU on every node");
    files = sweep_files(options.out);
    check_output(files, group);
  } catch (const UsageError& e) {
    if (group.rank() == 0) std::fprintf(stderr, "ncclbot-sweep: %s\n", e.what());
    return 2;
  }
  try {
    uint64_t max_bytes = *std::max_element(options.bytes.begin(), options.bytes.end());
    int max_channels = 0;
    for (const Arm& a : options.arms) max_channels = std::max(max_channels, int(a.channels));
    const auto device = open_nccl_device(group, max_bytes, max_channels);
    const std::vector<ContextResult> done = run_sweep(options, group, *device, files);
    if (group.rank() == 0) {
      size_t unavailable = 0;
      for (const ContextResult& r : done) unavailable += r.unavailable.size();
      std::fprintf(stderr,
                   "ncclbot-sweep: %zu contexts x %zu arms (%zu unavailable) x %d iterations -> %s, %s, %s\n",
                   done.size(), options.arms.size(), unavailable, options.iterations, files.sweep.c_str(),
                   files.own.c_str(), files.unavailable.c_str());
    }
  } catch (const std::exception& e) {
    // The other ranks may wait in a collective for this one: end them all.
    std::fprintf(stderr,
                 "ncclbot-sweep: rank %d failed: %s; the run stops (the contexts finished before, if any, "
                 "are in %s)\n",
                 group.rank(), e.what(), files.sweep.c_str());
    std::fflush(stderr);
    group.abort(1);
  }
  return 0;
}

}  // namespace
}  // namespace ncclbot::sweep_tool

int main(int argc, char** argv) {
  auto group = ncclbot::sweep_tool::make_rank_group(&argc, &argv);
  const int code = ncclbot::sweep_tool::run(argc, argv, *group);
  group.reset();
  ncclbot::sweep_tool::finish_rank_group();
  return code;
}
