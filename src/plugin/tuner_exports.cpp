// The tuner symbols NCCL looks up (v6 first, then v5, v4, v3, v2) and the report function. Every entry
// point returns success whatever happens: in NCCL 2.28 an error from getCollInfo fails the user's
// collective instead of falling back (NCCL src/enqueue.cc wraps the call in NCCLCHECK; docs/plugin.md
// "NCCL's ABI, as ncclbot declares it"), so failures degrade to pass-through inside the plugin and
// exceptions never cross the C boundary.
#include "plugin/nccl_abi.hpp"
#include "plugin/ncclbot_tuner.h"
#include "plugin/plugin_runtime.hpp"

using ncclbot::plugin::PluginRuntime;
using ncclbot::plugin::TunerComm;

namespace {

nccl_result_t init_any(void** ctx, uint64_t comm_id, bool has_comm_id, size_t nranks, size_t nnodes,
                       nccl_logger_t logger, bool chunk_hook = false) {
  if (ctx == nullptr) return kNcclSuccess;
  *ctx = nullptr;
  try {
    *ctx = PluginRuntime::instance().init_comm(comm_id, has_comm_id, nranks, nnodes, logger, chunk_hook);
  } catch (...) {
    *ctx = nullptr;  // a NULL context makes every later call a pass-through
  }
  return kNcclSuccess;
}

nccl_result_t init_v5(void** ctx, uint64_t comm_id, size_t nranks, size_t nnodes, nccl_logger_t logger,
                      NcclNvlDomainInfoV5*, NcclTunerConstantsV5*) {
  return init_any(ctx, comm_id, true, nranks, nnodes, logger);
}

// NCCL loaded the v6 table, so it will call getChunkSize (the v2..v5 adapters set it to NULL).
nccl_result_t init_v6(void** ctx, uint64_t comm_id, size_t nranks, size_t nnodes, nccl_logger_t logger,
                      NcclNvlDomainInfoV5*, NcclTunerConstantsV5*) {
  return init_any(ctx, comm_id, true, nranks, nnodes, logger, true);
}

nccl_result_t init_v4(size_t nranks, size_t nnodes, nccl_logger_t logger, void** ctx) {
  return init_any(ctx, 0, false, nranks, nnodes, logger);
}

nccl_result_t get_coll_info_v4(void* ctx, int coll, size_t bytes, int num_pipe_ops, float** table,
                               int num_algo, int num_proto, int reg_buff, int* nchannels) {
  if (ctx == nullptr) return kNcclSuccess;
  try {
    PluginRuntime::instance().get_coll_info(static_cast<TunerComm*>(ctx), coll, bytes, num_pipe_ops, table,
                                            num_algo, num_proto, reg_buff, nchannels);
  } catch (...) {
  }
  return kNcclSuccess;
}

nccl_result_t get_coll_info_v3(void* ctx, int coll, size_t bytes, int num_pipe_ops, float** table,
                               int num_algo, int num_proto, int* nchannels) {
  return get_coll_info_v4(ctx, coll, bytes, num_pipe_ops, table, num_algo, num_proto, ncclbot::plugin::kAny,
                          nchannels);
}

nccl_result_t get_coll_info_v2(void* ctx, int coll, size_t bytes, int coll_net, int nvls, int num_pipe_ops,
                               int* algorithm, int* protocol, int* nchannels) {
  if (ctx == nullptr) return kNcclSuccess;
  try {
    PluginRuntime::instance().get_coll_info_v2(static_cast<TunerComm*>(ctx), coll, bytes, coll_net, nvls,
                                               num_pipe_ops, algorithm, protocol, nchannels);
  } catch (...) {
  }
  return kNcclSuccess;
}

nccl_result_t get_chunk_size_v6(void* ctx, int coll, size_t bytes, int algo, int proto, int /*nchannels*/,
                                size_t* chunk_size) {
  if (ctx == nullptr) return kNcclSuccess;
  try {
    PluginRuntime::instance().get_chunk_size(static_cast<TunerComm*>(ctx), coll, bytes, algo, proto,
                                             chunk_size);
  } catch (...) {
  }
  return kNcclSuccess;
}

nccl_result_t finalize_any(void* ctx) {
  if (ctx == nullptr) return kNcclSuccess;
  try {
    PluginRuntime::instance().finalize_comm(static_cast<TunerComm*>(ctx));
  } catch (...) {
  }
  return kNcclSuccess;
}

}  // namespace

extern "C" {

// `extern` gives the const objects external linkage; NCCL only reads them.
NCCLBOT_PLUGIN_EXPORT extern const NcclTunerV6 ncclTunerPlugin_v6;
NCCLBOT_PLUGIN_EXPORT extern const NcclTunerV5 ncclTunerPlugin_v5;
NCCLBOT_PLUGIN_EXPORT extern const NcclTunerV4 ncclTunerPlugin_v4;
NCCLBOT_PLUGIN_EXPORT extern const NcclTunerV3 ncclTunerPlugin_v3;
NCCLBOT_PLUGIN_EXPORT extern const NcclTunerV2 ncclTunerPlugin_v2;

const NcclTunerV6 ncclTunerPlugin_v6 = {"ncclbot", init_v6, get_coll_info_v4, finalize_any,
                                        get_chunk_size_v6};
const NcclTunerV5 ncclTunerPlugin_v5 = {"ncclbot", init_v5, get_coll_info_v4, finalize_any};
const NcclTunerV4 ncclTunerPlugin_v4 = {"ncclbot", init_v4, get_coll_info_v4, finalize_any};
const NcclTunerV3 ncclTunerPlugin_v3 = {"ncclbot", init_v4, get_coll_info_v3, finalize_any};
const NcclTunerV2 ncclTunerPlugin_v2 = {"ncclbot", init_v4, get_coll_info_v2, finalize_any};

NCCLBOT_PLUGIN_EXPORT int ncclbotReportLatency(uint64_t comm_id, int nranks, int nnodes, int coll_type,
                                               size_t bytes, int algo, int proto, double latency_us) {
  try {
    return PluginRuntime::instance().report(comm_id, nranks, nnodes, coll_type, bytes, algo, proto,
                                            latency_us)
               ? 0
               : 1;
  } catch (...) {
    return 1;
  }
}

}  // extern "C"
