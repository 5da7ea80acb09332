#pragma once
// Why a GPU test skips, in words and as the test property `skip_kind`, which the GPU check reads
// from each program's --gtest_output=json report (scripts/gpu_check_report.py): on the GPU machine
// "no_device" fails the check, while "no_mpirun" and "no_ncclbot_mpi" (what the MPI tests need
// besides a device; the GPU machine has no MPI) do not.
#include <gtest/gtest.h>

#include "ncclbot/core/cuda_probe.hpp"

// Skips the calling test, recording `kind` for the report.
#define NCCLBOT_SKIP_BECAUSE(kind, why)                   \
  do {                                                    \
    ::testing::Test::RecordProperty("skip_kind", (kind)); \
    GTEST_SKIP() << why;                                  \
  } while (0)

#define NCCLBOT_SKIP_WITHOUT_GPU()                                                  \
  do {                                                                              \
    const ::ncclbot::CudaProbe probe = ::ncclbot::probe_cuda();                     \
    if (probe.usable_devices == 0)                                                  \
      NCCLBOT_SKIP_BECAUSE("no_device", "no usable CUDA device: " << probe.reason); \
  } while (0)
