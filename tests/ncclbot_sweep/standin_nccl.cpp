// A stand-in libnccl 2.32 for ncclbot-sweep's tests, on the CPU: the nccl*Config calls select as
// NCCL 2.31+ does (algSelection tags as case-insensitive prefixes of the registry's names, ',' OR,
// '+' AND, '^' NOT; a selection with nothing this machine can run for the collective is refused with
// ncclInvalidArgument when forceAlgSelection = 1; NCCL picks the cheapest within a selected set; no
// config = its own pick), move the data with MPI (or copy it for one rank), and advance the stand-in
// clock by a model time, so the sweep's CSV can be checked against the model exactly.
// This machine has Tree, Ring and PAT, no NVLS and no CollNet. Environment, for the tests:
//   NCCLBOT_STANDIN_LOG=PREFIX         each call appended to PREFIX.rank<R> (see log_call)
//   NCCLBOT_STANDIN_FAIL_RANK=R and NCCLBOT_STANDIN_FAIL_CALL=N
//                                      rank R's N-th collective (from 1) fails, ncclUnhandledCudaError
//   NCCLBOT_STANDIN_CORRUPT=ALGO/PROTO a call that runs this arm writes a wrong first element
#include <nccl.h>
#ifdef NCCLBOT_SWEEP_MPI
#include <mpi.h>
#endif

#include <strings.h>

#include <algorithm>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "standin_clock.hpp"
#include "standin_model.hpp"

struct ncclComm {
  int rank = 0, ranks = 1, max_ctas = ncclbot::sweep_standin::kStandinMaxChannels;
  long calls = 0;
  std::string last_error;
};

namespace ncclbot::sweep_standin {
namespace {

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

// The registry ids a selection string names, or -1 for bad syntax or an unknown tag.
long long parse_selection(const char* selection) {
  std::string s;
  for (const char* p = selection; *p; ++p)
    if (*p != ' ' && *p != '\t') s += *p;
  unsigned long long mask = 0, all = (1ull << kStandinIds) - 1;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t end = std::min(s.find(',', start), s.size());
    const std::string term = s.substr(start, end - start);
    unsigned long long term_mask = all;
    size_t f = 0;
    int factors = 0;
    while (f <= term.size()) {
      const size_t fe = std::min(term.find('+', f), term.size());
      std::string factor = term.substr(f, fe - f);
      const bool negate = !factor.empty() && factor[0] == '^';
      if (negate) factor.erase(0, 1);
      if (factor.empty()) return -1;
      unsigned long long tag = 0;
      for (int id = 0; id < kStandinIds; ++id)
        if (strncasecmp(standin_id(id).name, factor.c_str(), factor.size()) == 0) tag |= 1ull << id;
      if (tag == 0) return -1;
      term_mask &= negate ? (all & ~tag) : tag;
      ++factors;
      f = fe + 1;
    }
    if (factors == 0 || term_mask == 0) return -1;
    mask |= term_mask;
    start = end + 1;
  }
  return (long long)mask;
}

struct Choice {
  int id = -1;  // -1: refused
  int channels = 0;
};

// What runs for a config, as NCCL 2.31+ would decide it here; comm->last_error says why not.
Choice choose(ncclComm* comm, int func, size_t bytes, const ncclCollConfig_t* config) {
  Choice c;
  c.channels = kStandinDefaultChannels;
  unsigned long long allowed = runnable_ids(func);
  if (config) {
    if (config->size < sizeof(ncclCollConfig_t) || config->magic != NCCL_API_MAGIC ||
        (config->forceAlgSelection != 0 && config->forceAlgSelection != 1)) {
      comm->last_error = "ncclCollConfig_t not initialised with NCCL_COLLCONFIG_INITIALIZER";
      return c;
    }
    if (config->maxCTAs != NCCL_CONFIG_UNDEF_INT) {
      if (config->maxCTAs > comm->max_ctas || config->maxCTAs < 1) {
        comm->last_error = "config->maxCTAs " + std::to_string(config->maxCTAs) +
                           " is above the communicator's " + std::to_string(comm->max_ctas);
        return c;
      }
      c.channels = config->maxCTAs;
    }
    if (config->algSelection && config->algSelection[0]) {
      const long long mask = parse_selection(config->algSelection);
      const unsigned long long selected = mask < 0 ? 0 : (unsigned long long)mask & allowed;
      if (selected == 0 && config->forceAlgSelection) {
        comm->last_error =
            std::string("config->algSelection \"") + config->algSelection + "\" cannot be honored";
        return c;
      }
      if (selected != 0) allowed = selected;
    }
  }
  c.id = cheapest(allowed, c.channels, bytes, comm->rank);
  return c;
}

void log_call(const ncclComm* comm, int func, size_t bytes, const ncclCollConfig_t* config, const Choice& c) {
  const char* prefix = env("NCCLBOT_STANDIN_LOG");
  if (!prefix) return;
  const std::string path = std::string(prefix) + ".rank" + std::to_string(comm->rank);
  if (FILE* f = std::fopen(path.c_str(), "a")) {
    const bool forced = config && config->algSelection && config->algSelection[0];
    std::fprintf(f, "%d %zu %s %s %d\n", func, bytes, forced ? config->algSelection : "auto",
                 c.id < 0 ? "refused" : standin_id(c.id).name, c.id < 0 ? 0 : c.channels);
    std::fclose(f);
  }
}

void move_data(int func, const float* send, float* recv, size_t count, int ranks) {
#ifdef NCCLBOT_SWEEP_MPI
  if (ranks > 1) {
    switch (func) {
      case kAllGather:
        MPI_Allgather(send, int(count), MPI_FLOAT, recv, int(count), MPI_FLOAT, MPI_COMM_WORLD);
        return;
      case kReduceScatter:
        MPI_Reduce_scatter_block(send, recv, int(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        return;
      case kBroadcast:
        std::memmove(recv, send, count * sizeof(float));
        MPI_Bcast(recv, int(count), MPI_FLOAT, 0, MPI_COMM_WORLD);
        return;
      case kReduce:
        MPI_Reduce(send, recv, int(count), MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
        return;
      default:
        MPI_Allreduce(send, recv, int(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        return;
    }
  }
#endif
  (void)ranks;
  std::memmove(recv, send, count * sizeof(float));
}

ncclResult_t collective(int func, const void* send, void* recv, size_t count, size_t bytes, ncclComm* comm,
                        const ncclCollConfig_t* config) {
  ++comm->calls;
  const char* fail_rank = env("NCCLBOT_STANDIN_FAIL_RANK");
  const char* fail_call = env("NCCLBOT_STANDIN_FAIL_CALL");
  if (fail_rank && fail_call && std::atoi(fail_rank) == comm->rank && std::atol(fail_call) == comm->calls) {
    comm->last_error = "stand-in: injected failure at call " + std::to_string(comm->calls);
    return ncclUnhandledCudaError;
  }
  const Choice c = choose(comm, func, bytes, config);
  log_call(comm, func, bytes, config, c);
  if (c.id < 0) return ncclInvalidArgument;
  move_data(func, static_cast<const float*>(send), static_cast<float*>(recv), count, comm->ranks);
  const char* corrupt = env("NCCLBOT_STANDIN_CORRUPT");
  if (corrupt && arm_label(c.id) == corrupt) static_cast<float*>(recv)[0] += 1.0f;
  clock_us() += model_us(c.id, c.channels, bytes, comm->rank);
  return ncclSuccess;
}

}  // namespace
}  // namespace ncclbot::sweep_standin

namespace standin = ncclbot::sweep_standin;

ncclResult_t ncclGetVersion(int* version) {
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}
ncclResult_t ncclGetUniqueId(ncclUniqueId* id) {
  std::memset(id, 0, sizeof *id);
  return ncclSuccess;
}
ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId, int rank,
                                    ncclConfig_t* config) {
  *comm = new ncclComm;
  (*comm)->rank = rank;
  (*comm)->ranks = nranks;
  // Like a build of NCCL with fewer channels than asked for, the communicator keeps at most 32.
  if (config && config->maxCTAs != NCCL_CONFIG_UNDEF_INT)
    (*comm)->max_ctas = std::min(config->maxCTAs, standin::kStandinMaxChannels);
  return ncclSuccess;
}
ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  delete comm;
  return ncclSuccess;
}
const char* ncclGetErrorString(ncclResult_t result) {
  return result == ncclSuccess           ? "no error"
         : result == ncclInvalidArgument ? "invalid argument"
                                         : "stand-in error";
}
const char* ncclGetLastError(ncclComm_t comm) {
  return comm ? comm->last_error.c_str() : "";
}
ncclResult_t ncclAllReduceConfig(const void* send, void* recv, size_t count, ncclDataType_t, ncclRedOp_t,
                                 ncclComm_t comm, cudaStream_t, const ncclCollConfig_t* config) {
  return standin::collective(standin::kAllReduce, send, recv, count, count * sizeof(float), comm, config);
}
ncclResult_t ncclAllGatherConfig(const void* send, void* recv, size_t count, ncclDataType_t, ncclComm_t comm,
                                 cudaStream_t, const ncclCollConfig_t* config) {
  return standin::collective(standin::kAllGather, send, recv, count,
                             count * sizeof(float) * size_t(comm->ranks), comm, config);
}
ncclResult_t ncclReduceScatterConfig(const void* send, void* recv, size_t count, ncclDataType_t, ncclRedOp_t,
                                     ncclComm_t comm, cudaStream_t, const ncclCollConfig_t* config) {
  return standin::collective(standin::kReduceScatter, send, recv, count,
                             count * sizeof(float) * size_t(comm->ranks), comm, config);
}
ncclResult_t ncclBroadcastConfig(const void* send, void* recv, size_t count, ncclDataType_t, int,
                                 ncclComm_t comm, cudaStream_t, const ncclCollConfig_t* config) {
  return standin::collective(standin::kBroadcast, send, recv, count, count * sizeof(float), comm, config);
}
ncclResult_t ncclReduceConfig(const void* send, void* recv, size_t count, ncclDataType_t, ncclRedOp_t, int,
                              ncclComm_t comm, cudaStream_t, const ncclCollConfig_t* config) {
  return standin::collective(standin::kReduce, send, recv, count, count * sizeof(float), comm, config);
}
