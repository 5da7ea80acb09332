#pragma once
// Runs ncclbot-sweep's stand-in build (the program's own objects against the stand-in libnccl and
// CUDA calls) as a user would: under `mpirun -np 2` where it is built with MPI, else as one rank.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ncclbot_sweep/standin_model.hpp"
#include "support/run_cli.hpp"

namespace ncclbot::test {

#ifdef NCCLBOT_SWEEP_STANDIN_MPI
inline constexpr int kStandinRanks = 2;
#else
inline constexpr int kStandinRanks = 1;
#endif

inline bool have_sweep_standin() {
#ifdef NCCLBOT_SWEEP_STANDIN
  return kStandinRanks == 1 || std::system("command -v mpirun >/dev/null 2>&1") == 0;
#else
  return false;
#endif
}

// `ncclbot-sweep ARGS` on every rank, with `env` (NAME=VALUE words) set on each.
inline CliResult run_sweep_standin(const std::string& args, const std::vector<std::string>& env = {}) {
#ifdef NCCLBOT_SWEEP_STANDIN
  std::string vars, forward;
  for (const std::string& e : env) {
    vars += " '" + e + "'";
    forward += " -x " + e.substr(0, e.find('='));
  }
  // mpirun refuses root unless told; CI runs as root in a container.
  const std::string launch = kStandinRanks == 1
                                 ? std::string()
                                 : "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun "
                                   "--oversubscribe -np 2" +
                                       forward + " ";
  return run_cli_with("/usr/bin/env", vars + " " + launch + "'" + NCCLBOT_SWEEP_STANDIN + "' " + args);
#else
  (void)args;
  (void)env;
  return {};
#endif
}

// The stand-in registry row of an arm (its algorithm and protocol), or -1.
inline int standin_row(int algo, int proto) {
  for (int id = 0; id < sweep_standin::kStandinIds; ++id)
    if (sweep_standin::standin_id(id).algo == algo && sweep_standin::standin_id(id).proto == proto) return id;
  return -1;
}

// What a call of row `id` takes on the slowest rank (the stand-in's model adds 0.5 us per rank).
inline float standin_slowest_us(int id, int channels, uint64_t bytes) {
  return float(sweep_standin::model_us(id, channels, size_t(bytes), kStandinRanks - 1));
}

}  // namespace ncclbot::test

#define SKIP_WITHOUT_SWEEP_STANDIN()        \
  if (!ncclbot::test::have_sweep_standin()) \
  GTEST_SKIP() << "ncclbot-sweep is not built here (no NCCL >= 2.31 headers) or mpirun is missing"
