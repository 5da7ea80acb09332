// The host library from the installed package (ncclbot::ncclbot): read a sweep, replay one policy
// on the CPU engine, print the mean online loss over contexts with every digit, so the caller can
// compare it with `ncclbot replay --json` of the same inputs.
// Usage: library_replay SWEEP.csv SPEC SEEDS HORIZON
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "ncclbot/io/sweep_csv.hpp"
#include "ncclbot/replay/cpu_engine.hpp"
#include "ncclbot/stats/loss_summary.hpp"

int main(int argc, char** argv) {
  if (argc != 5) return 2;
  try {
    using namespace ncclbot;
    const Sweep sweep = read_sweep_csv(argv[1]);
    ReplayJob job;
    job.sweep = &sweep;
    for (int c = 0; c < sweep.num_contexts(); ++c) job.contexts.push_back(c);
    job.configs = parse_policy_grid(argv[2]);
    job.seeds = std::atoi(argv[3]);
    job.horizon = std::atoi(argv[4]);
    const ReplayResults r = run_cpu_replay(job);
    std::printf("%.17g\n", summarize_losses(r.online_of(0)).mean);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "library_replay: %s\n", e.what());
    return 1;
  }
}
