// A tiny NCCL program for scripts/plugin-live-check.sh: one rank per process (PROBE_RANK of
// PROBE_NRANKS; rank 0 publishes the unique id in PROBE_ID_FILE), AllReduce of float sums from 1 KiB
// to 64 MiB, PROBE_ITERS iterations per size, synchronised after each, printing the mean time.
// Built against the machine's NCCL (2.28) by the script; it needs a GPU to run.
#include <cuda_runtime.h>
#include <nccl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#define CHECK_CUDA(x)                                                            \
  do {                                                                           \
    cudaError_t e = (x);                                                         \
    if (e != cudaSuccess) {                                                      \
      std::fprintf(stderr, "probe: %s failed: %s\n", #x, cudaGetErrorString(e)); \
      std::exit(1);                                                              \
    }                                                                            \
  } while (0)
#define CHECK_NCCL(x)                                                            \
  do {                                                                           \
    ncclResult_t r = (x);                                                        \
    if (r != ncclSuccess) {                                                      \
      std::fprintf(stderr, "probe: %s failed: %s\n", #x, ncclGetErrorString(r)); \
      std::exit(1);                                                              \
    }                                                                            \
  } while (0)

static int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : fallback;
}

int main() {
  const int rank = env_int("PROBE_RANK", 0), nranks = env_int("PROBE_NRANKS", 1);
  const int iters = env_int("PROBE_ITERS", 20);
  const std::string id_file =
      std::getenv("PROBE_ID_FILE") ? std::getenv("PROBE_ID_FILE") : "/tmp/ncclbot_probe.id";
  CHECK_CUDA(cudaSetDevice(env_int("PROBE_DEVICE", 0)));
  ncclUniqueId id;
  if (rank == 0) {
    CHECK_NCCL(ncclGetUniqueId(&id));
    const std::string tmp = id_file + ".tmp";
    std::ofstream(tmp, std::ios::binary).write(reinterpret_cast<const char*>(&id), sizeof id);
    std::rename(tmp.c_str(), id_file.c_str());
  } else {
    for (int i = 0; i < 600; ++i) {
      std::ifstream in(id_file, std::ios::binary);
      if (in.read(reinterpret_cast<char*>(&id), sizeof id)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  ncclComm_t comm;
  CHECK_NCCL(ncclCommInitRank(&comm, nranks, id, rank));
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreate(&stream));
  const size_t max_bytes = size_t(64) << 20;
  float *send = nullptr, *recv = nullptr;
  CHECK_CUDA(cudaMalloc(&send, max_bytes));
  CHECK_CUDA(cudaMalloc(&recv, max_bytes));
  CHECK_CUDA(cudaMemset(send, 0, max_bytes));
  for (size_t bytes = 1024; bytes <= max_bytes; bytes *= 4) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) {
      CHECK_NCCL(ncclAllReduce(send, recv, bytes / sizeof(float), ncclFloat32, ncclSum, comm, stream));
      CHECK_CUDA(cudaStreamSynchronize(stream));
    }
    const double us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / iters;
    std::printf("probe rank %d: allreduce %zu bytes %.1f us\n", rank, bytes, us);
  }
  CHECK_CUDA(cudaFree(send));
  CHECK_CUDA(cudaFree(recv));
  CHECK_NCCL(ncclCommDestroy(comm));
  std::printf("probe rank %d: done\n", rank);
  return 0;
}
