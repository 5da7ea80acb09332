// The sweep's NCCL calls (and its CUDA calls, through cuda_calls.hpp), and nothing else of the sweep:
// the tests link this file against a stand-in libnccl and stand-in CUDA calls.
#include <nccl.h>

#include <vector>

#include "alg_selection.hpp"
#include "buffer_contents.hpp"
#include "collective_device.hpp"
#include "cuda_calls.hpp"

static_assert(NCCL_VERSION_CODE >= 23100, "ncclbot-sweep needs NCCL 2.31 or later (ncclCollConfig_t)");

namespace ncclbot::sweep_tool {

namespace {

void cuda_ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw DeviceFailure(std::string(what) + ": " + cuda::error_string(e));
}

class NcclDevice final : public CollectiveDevice {
 public:
  NcclDevice(RankGroup& group, uint64_t max_bytes, int max_channels)
      : rank_(group.rank()), ranks_(group.size()) {
    cuda_ok(cuda::set_device(group.local_rank()), "cudaSetDevice");
    ncclUniqueId id{};
    if (rank_ == 0) nccl_ok(ncclGetUniqueId(&id), "ncclGetUniqueId");
    group.broadcast(&id, sizeof id);
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    // A call's maxCTAs must not exceed the communicator's.
    if (max_channels > 0) config.maxCTAs = max_channels;
    nccl_ok(ncclCommInitRankConfig(&comm_, ranks_, id, rank_, &config), "ncclCommInitRankConfig");
    cuda_ok(cuda::stream_create(&stream_), "cudaStreamCreate");
    cuda_ok(cuda::event_create(&start_), "cudaEventCreate");
    cuda_ok(cuda::event_create(&stop_), "cudaEventCreate");
    cuda_ok(cuda::device_malloc(&send_, max_bytes), "cudaMalloc");
    cuda_ok(cuda::device_malloc(&recv_, max_bytes), "cudaMalloc");
  }
  ~NcclDevice() override {
    if (comm_) ncclCommDestroy(comm_);
    if (send_) cuda::device_free(send_);
    if (recv_) cuda::device_free(recv_);
    if (start_) cuda::event_destroy(start_);
    if (stop_) cuda::event_destroy(stop_);
    if (stream_) cuda::stream_destroy(stream_);
  }

  void fill_send(Collective collective, uint64_t bytes) override {
    const BufferLayout layout = buffer_layout(collective, bytes, ranks_);
    std::vector<float> host(layout.send_count);
    for (size_t i = 0; i < host.size(); ++i) host[i] = send_value(rank_, i);
    cuda_ok(cuda::copy(send_, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice),
            "cudaMemcpy");
  }

  void clear_received(uint64_t bytes) override {
    cuda_ok(cuda::fill_bytes(recv_, 0xff, bytes), "cudaMemset");
  }

  CallResult call(Collective collective, uint64_t bytes, const std::optional<Arm>& arm) override {
    ncclCollConfig_t config = NCCL_COLLCONFIG_INITIALIZER;
    std::string selection;
    if (arm) {
      selection = alg_selection(*arm).value_or("");
      config.algSelection = selection.c_str();
      config.forceAlgSelection = 1;
      if (arm->channels > 0) config.minCTAs = config.maxCTAs = arm->channels;
    }
    CallResult result;
    cudaError_t e = cuda::event_record(start_, stream_);
    if (e != cudaSuccess) return cuda_failure(e, "cudaEventRecord");
    const ncclResult_t r = launch(collective, bytes, arm ? &config : nullptr);
    if (r != ncclSuccess) {
      const bool refused = arm && (r == ncclInvalidArgument || r == ncclInvalidUsage);
      result.outcome = refused ? CallOutcome::kRefused : CallOutcome::kFailed;
      result.message = std::string(ncclGetErrorString(r)) + ": " + ncclGetLastError(comm_);
      return result;
    }
    float ms = 0.0f;
    if ((e = cuda::event_record(stop_, stream_)) != cudaSuccess) return cuda_failure(e, "cudaEventRecord");
    if ((e = cuda::event_synchronize(stop_)) != cudaSuccess) return cuda_failure(e, "cudaEventSynchronize");
    if ((e = cuda::event_elapsed_ms(&ms, start_, stop_)) != cudaSuccess)
      return cuda_failure(e, "cudaEventElapsedTime");
    result.time_us = double(ms) * 1000.0;
    return result;
  }

  std::string check_received(Collective collective, uint64_t bytes) override {
    const BufferLayout layout = buffer_layout(collective, bytes, ranks_);
    std::vector<float> host(layout.recv_count);
    cuda_ok(cuda::copy(host.data(), recv_, host.size() * sizeof(float), cudaMemcpyDeviceToHost),
            "cudaMemcpy");
    return sweep_tool::check_received(collective, rank_, ranks_, layout, host.data());
  }

 private:
  void nccl_ok(ncclResult_t r, const char* what) {
    if (r != ncclSuccess)
      throw DeviceFailure(std::string(what) + ": " + ncclGetErrorString(r) +
                          (comm_ ? std::string(": ") + ncclGetLastError(comm_) : ""));
  }
  static CallResult cuda_failure(cudaError_t e, const char* what) {
    return {CallOutcome::kFailed, 0.0, std::string(what) + ": " + cuda::error_string(e)};
  }

  ncclResult_t launch(Collective collective, uint64_t bytes, const ncclCollConfig_t* config) {
    const size_t count = buffer_layout(collective, bytes, ranks_).call_count;
    switch (collective) {
      case Collective::kAllGather:
        return ncclAllGatherConfig(send_, recv_, count, ncclFloat, comm_, stream_, config);
      case Collective::kReduceScatter:
        return ncclReduceScatterConfig(send_, recv_, count, ncclFloat, ncclSum, comm_, stream_, config);
      case Collective::kBroadcast:
        return ncclBroadcastConfig(send_, recv_, count, ncclFloat, 0, comm_, stream_, config);
      case Collective::kReduce:
        return ncclReduceConfig(send_, recv_, count, ncclFloat, ncclSum, 0, comm_, stream_, config);
      default:
        return ncclAllReduceConfig(send_, recv_, count, ncclFloat, ncclSum, comm_, stream_, config);
    }
  }

  int rank_, ranks_;
  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  void* send_ = nullptr;
  void* recv_ = nullptr;
};

}  // namespace

std::unique_ptr<CollectiveDevice> open_nccl_device(RankGroup& group, uint64_t max_bytes, int max_channels) {
  return std::make_unique<NcclDevice>(group, max_bytes, max_channels);
}

}  // namespace ncclbot::sweep_tool
