#pragma once
// ncclbot's own declarations of the parts of NCCL's plugin ABI it implements or drives: the tuner
// (v2..v6, NCCL 2.21-2.30) and the profiler (v4 for 2.27, v5 for 2.28, v6 for 2.29 and later). Written from
// the facts (field order, signatures, enum values) listed with their NCCL files at tag v2.28.9-1 (tuner v6:
// v2.30.3-1; profiler v6: v2.29.2-1) in
// docs/plugin.md "NCCL's ABI, as ncclbot declares it", not copied from NCCL's headers;
// tests/plugin/abi_layout_test.cpp pins every size and offset that NCCL reads.
#include <cstddef>
#include <cstdint>

extern "C" {

// ncclResult_t is a C enum (int-sized); a plugin only ever returns success.
typedef int nccl_result_t;
inline constexpr nccl_result_t kNcclSuccess = 0;

// ncclDebugLogger_t(level, flags, file, line, fmt, ...)
typedef void (*nccl_logger_t)(int level, unsigned long flags, const char* file, int line, const char* fmt,
                              ...);

// --- tuner ------------------------------------------------------------------------------------

struct NcclNvlDomainInfoV5 {
  int nNvlDomains;
  int minRanksPerNvlDomain;
  int maxRanksPerNvlDomain;
};

// Edits made during init change NCCL's own cost model (it runs ncclTopoTuneModel after init).
struct NcclTunerConstantsV5 {
  double baseLatencies[7][3];
  double hwLatencies[3][7][3];
  double llMaxBws[4][3];
  double perChMaxRingLL128Bws[4][3];
  double perChMaxTreeLL128Bws[4][3];
  double perChMaxTreeBws[4][3];
  double perChMaxNVLSTreeBws[4][3];
};

// getCollInfo of v3..v5; v3 has no regBuff argument, v2 has no cost table at all.
typedef nccl_result_t (*nccl_tuner_get_coll_info_v4_fn)(void* ctx, int collType, size_t nBytes,
                                                        int numPipeOps, float** collCostTable, int numAlgo,
                                                        int numProto, int regBuff, int* nChannels);

struct NcclTunerV5 {
  const char* name;
  nccl_result_t (*init)(void** ctx, uint64_t commId, size_t nRanks, size_t nNodes, nccl_logger_t logFunction,
                        NcclNvlDomainInfoV5* nvlDomainInfo, NcclTunerConstantsV5* constants);
  nccl_tuner_get_coll_info_v4_fn getCollInfo;
  nccl_result_t (*finalize)(void* ctx);
};

// v6 (NCCL 2.30): v5 plus an optional getChunkSize, which may replace the chunk size NCCL computed
// for the algorithm and protocol chosen (NCCL clamps the result to its buffers).
struct NcclTunerV6 {
  const char* name;
  nccl_result_t (*init)(void** ctx, uint64_t commId, size_t nRanks, size_t nNodes, nccl_logger_t logFunction,
                        NcclNvlDomainInfoV5* nvlDomainInfo, NcclTunerConstantsV5* constants);
  nccl_tuner_get_coll_info_v4_fn getCollInfo;
  nccl_result_t (*finalize)(void* ctx);
  nccl_result_t (*getChunkSize)(void* ctx, int collType, size_t nBytes, int algo, int proto, int nChannels,
                                size_t* chunkSize);
};

struct NcclTunerV4 {
  const char* name;
  nccl_result_t (*init)(size_t nRanks, size_t nNodes, nccl_logger_t logFunction, void** ctx);
  nccl_tuner_get_coll_info_v4_fn getCollInfo;
  nccl_result_t (*destroy)(void* ctx);
};

struct NcclTunerV3 {
  const char* name;
  nccl_result_t (*init)(size_t nRanks, size_t nNodes, nccl_logger_t logFunction, void** ctx);
  nccl_result_t (*getCollInfo)(void* ctx, int collType, size_t nBytes, int numPipeOps, float** collCostTable,
                               int numAlgo, int numProto, int* nChannels);
  nccl_result_t (*destroy)(void* ctx);
};

struct NcclTunerV2 {
  const char* name;
  nccl_result_t (*init)(size_t nRanks, size_t nNodes, nccl_logger_t logFunction, void** ctx);
  nccl_result_t (*getCollInfo)(void* ctx, int collType, size_t nBytes, int collNetSupport, int nvlsSupport,
                               int numPipeOps, int* algorithm, int* protocol, int* nChannels);
  nccl_result_t (*destroy)(void* ctx);
};

// --- profiler ---------------------------------------------------------------------------------

// Event types (bit masks) and the one state ncclbot listens to.
inline constexpr uint64_t kNcclProfileColl = 1u << 1;
inline constexpr uint64_t kNcclProfileKernelCh = 1u << 6;
inline constexpr uint64_t kNcclProfileCollApi = 1u << 9;  // v5: the API call, with graphCaptured
inline constexpr uint64_t kNcclProfileCeColl = 1u << 12;  // v6: a collective run on the copy engines
inline constexpr int kNcclProfilerKernelChStop = 22;

// The collective descriptor; v5 appends parentGroup, which ncclbot does not read.
struct NcclProfileCollV4 {
  uint64_t seqNumber;
  const char* func;
  const void* sendBuff;
  void* recvBuff;
  size_t count;  // elements per rank
  int root;
  const char* datatype;
  uint8_t nChannels;
  uint8_t nWarps;
  const char* algo;
  const char* proto;
};

struct NcclProfileCollV5 {
  uint64_t seqNumber;
  const char* func;
  const void* sendBuff;
  void* recvBuff;
  size_t count;
  int root;
  const char* datatype;
  uint8_t nChannels;
  uint8_t nWarps;
  const char* algo;
  const char* proto;
  void* parentGroup;
};

// The collective API call (v5, v6): whether it was made while a CUDA graph was being captured. NCCL
// passes this event's handle as the parentObj of the collective's Coll event.
struct NcclProfileCollApiV5 {
  const char* func;
  size_t count;
  const char* datatype;
  int root;
  void* stream;
  bool graphCaptured;
};

struct NcclProfileKernelCh {
  uint8_t channelId;
  uint64_t pTimer;  // GPU globaltimer at the channel's start, ns
};

// The union's largest member (v5: the collective descriptor) fixes its size; members ncclbot does
// not read are represented by that padding only.
struct NcclProfilerEventDescrV5 {
  uint64_t type;
  void* parentObj;  // for a KernelCh event: the handle ncclbot returned for its Coll event
  int rank;
  union {
    NcclProfileCollApiV5 collApi;
    NcclProfileCollV5 coll;
    NcclProfileKernelCh kernelCh;
  };
};

// v6 (NCCL 2.29): v5's members unchanged, plus the copy-engine events; the ceColl member is as
// large as the collective one, so the descriptor keeps v5's size.
struct NcclProfileCeCollV6 {
  uint64_t seqNumber;
  const char* func;
  const void* sendBuff;
  void* recvBuff;
  size_t count;
  int root;
  const char* datatype;
  const char* syncStrategy;
  bool intraBatchSync;
  uint32_t batchSize;
  uint32_t numBatches;
  uint32_t ceSeqNum;
  void* stream;
};

struct NcclProfilerEventDescrV6 {
  uint64_t type;
  void* parentObj;
  int rank;
  union {
    NcclProfileCollApiV5 collApi;
    NcclProfileCollV5 coll;
    NcclProfileKernelCh kernelCh;
    NcclProfileCeCollV6 ceColl;
  };
};

// v7 (NCCL 2.31, 2.32): every API, collective and copy-engine descriptor gains a trailing userTag,
// and the collective one, before it, the kernel that ran: kernelVariant, and isSymColl when it was
// one of NCCL's symmetric kernels rather than a general (algorithm, protocol) pair. Layout as
// NCCL src/include/plugin/profiler/profiler_v7.h, checked against the debug information of the released
// 2.32.3 library (tests/plugin/abi_layout_test.cpp has the offsets and the command).
struct NcclProfileCollApiV7 {
  NcclProfileCollApiV5 v5;
  uint64_t userTag;
};

struct NcclProfileCollV7 {
  NcclProfileCollV5 v5;
  const char* kernelVariant;
  bool isSymColl;
  uint64_t userTag;
};

struct NcclProfileCeCollV7 {
  NcclProfileCeCollV6 v6;
  uint64_t userTag;
};

struct NcclProfilerEventDescrV7 {
  uint64_t type;
  void* parentObj;
  int rank;
  union {
    NcclProfileCollApiV7 collApi;
    NcclProfileCollV7 coll;
    NcclProfileKernelCh kernelCh;
    NcclProfileCeCollV7 ceColl;
  };
};

struct NcclProfilerEventDescrV4 {
  uint8_t type;
  void* parentObj;
  int rank;
  union {
    NcclProfileCollV4 coll;
    NcclProfileKernelCh kernelCh;
  };
};

// State arguments: a union whose kernelCh member is the channel's stop pTimer (ns).
union NcclProfilerEventStateArgs {
  struct {
    size_t transSize;
  } proxyStep;
  struct {
    uint64_t pTimer;
  } kernelCh;
};

// The function table of v5 and later: the same six functions over each version's descriptor (a
// template, so C++ linkage; the tables hold only C function pointers).
extern "C++" {
template <typename Descr>
struct NcclProfilerOf {
  const char* name;
  nccl_result_t (*init)(void** ctx, uint64_t commId, int* eActivationMask, const char* commName, int nNodes,
                        int nranks, int rank, nccl_logger_t logfn);
  nccl_result_t (*startEvent)(void* ctx, void** eHandle, Descr* eDescr);
  nccl_result_t (*stopEvent)(void* eHandle);
  nccl_result_t (*recordEventState)(void* eHandle, int eState, NcclProfilerEventStateArgs* eStateArgs);
  nccl_result_t (*finalize)(void* ctx);
};
using NcclProfilerV5 = NcclProfilerOf<NcclProfilerEventDescrV5>;
using NcclProfilerV6 = NcclProfilerOf<NcclProfilerEventDescrV6>;
using NcclProfilerV7 = NcclProfilerOf<NcclProfilerEventDescrV7>;

// The members every version from v4 (coll) or v5 (collApi) on has where it had them: a v7 member's
// nested `v5`, any other version's member itself. One path reads them from every version.
template <typename Member>
auto& v5_part(Member& m) {
  if constexpr (requires { m.v5; })
    return m.v5;
  else
    return m;
}
}  // extern "C++"

struct NcclProfilerV4 {
  const char* name;
  nccl_result_t (*init)(void** ctx, int* eActivationMask, const char* commName, uint64_t commHash, int nNodes,
                        int nranks, int rank, nccl_logger_t logfn);
  nccl_result_t (*startEvent)(void* ctx, void** eHandle, NcclProfilerEventDescrV4* eDescr);
  nccl_result_t (*stopEvent)(void* eHandle);
  nccl_result_t (*recordEventState)(void* eHandle, int eState, NcclProfilerEventStateArgs* eStateArgs);
  nccl_result_t (*finalize)(void* ctx);
};

// Logger levels and the subsystem flag ncclbot logs under.
inline constexpr int kNcclLogWarn = 2;
inline constexpr int kNcclLogInfo = 3;
inline constexpr int kNcclLogTrace = 5;
inline constexpr unsigned long kNcclLogTuning = 0x40;
inline constexpr unsigned long kNcclLogInit = 0x1;

}  // extern "C"
