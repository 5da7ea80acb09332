#include "ncclbot/campaign/knob_point.hpp"

#include <sstream>

#include "ncclbot/core/arm.hpp"
#include "ncclbot/core/names.hpp"

namespace ncclbot::campaign {
namespace {

// NCCL keeps buffer sizes in ints (comm->buffSizes); a campaign stops at 1 GiB, far below.
constexpr uint64_t kMaxBufferBytes = uint64_t(1) << 30;

struct ProtoBuffer {
  const char* var;
  uint64_t default_bytes;
};

// NCCL's buffer of each protocol and its default (NCCL src/init.cc computeBuffSizes: LL 8 lines x 512
// threads x 8 steps x 16 B, LL128 120 elements x 640 threads x 8 steps x 8 B, Simple 4 MiB).
ProtoBuffer proto_buffer(Proto p) {
  switch (p) {
    case Proto::kLL:
      return {"NCCL_LL_BUFFSIZE", 524288};
    case Proto::kLL128:
      return {"NCCL_LL128_BUFFSIZE", 4915200};
    case Proto::kSimple:
      break;
  }
  return {"NCCL_BUFFSIZE", uint64_t(1) << 22};
}

// The largest chunk NCCL lets a tuner ask for with `buffer` bytes (calcCollChunking's
// bufferMaxChunkSize, NCCL src/enqueue.cc:2221-2229): a step is an eighth of the buffer, Ring/Simple
// chunks of all-reduce, all-gather and reduce-scatter span 4 steps (collectives.h *_CHUNKSTEPS), LL
// carries half its bytes as data and LL128 15 of every 16 words.
uint64_t buffer_max_chunk(Collective c, int slot, uint64_t buffer) {
  const uint64_t step = buffer / 8;
  switch (slot_proto(slot)) {
    case Proto::kLL:
      return step / 2;
    case Proto::kLL128:
      return step / 16 * 15;
    case Proto::kSimple:
      break;
  }
  const bool four_steps =
      slot_algo(slot) == Algo::kRing &&
      (c == Collective::kAllReduce || c == Collective::kAllGather || c == Collective::kReduceScatter);
  return step * (four_steps ? 4 : 1);
}

// NCCL's default buffer doubled until it holds `chunk` (0 when it already does), or nullopt past 1 GiB.
std::optional<uint64_t> raised_buffer(Collective c, int slot, uint64_t chunk) {
  const uint64_t base = proto_buffer(slot_proto(slot)).default_bytes;
  uint64_t buffer = base;
  while (buffer_max_chunk(c, slot, buffer) < chunk) {
    buffer *= 2;
    if (buffer > kMaxBufferBytes) return std::nullopt;
  }
  return buffer == base ? 0 : buffer;
}

std::string chunk_arm_name(int slot) {
  return std::string(algo_name(slot_algo(slot))) + "/" + std::string(proto_name(slot_proto(slot)));
}

}  // namespace

std::optional<std::string> why_chunk_left_out(Collective c, int slot, uint64_t chunk) {
  const int proto = int(slot_proto(slot));
  const std::string head = chunk_arm_name(slot) + " chunk " + std::to_string(chunk) + " B: ";
  if (!chunk_fits_grain(chunk, proto))
    return head + "not a multiple of " + std::string(proto_name(slot_proto(slot))) + "'s " +
           std::to_string(chunk_grain_bytes(proto)) + " B grain (NCCL would round it down to another size)";
  if (!raised_buffer(c, slot, chunk))
    return head + "needs " + proto_buffer(slot_proto(slot)).var + " above 1 GiB";
  return std::nullopt;
}

std::optional<BufferSetting> buffer_for_chunk(Collective c, int slot, uint64_t chunk) {
  const auto buffer = raised_buffer(c, slot, chunk);
  if (!buffer || *buffer == 0) return std::nullopt;
  return BufferSetting{proto_buffer(slot_proto(slot)).var, *buffer};
}

std::optional<std::string> why_nccl_cannot_force(const KnobPoint& k, int code) {
  const std::string ran = std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." +
                          std::to_string(code % 100);
  if (k.chunk_bytes > 0 && code < 23003)
    return "a chunk size needs NCCL 2.30.3 or later (tuner v6 getChunkSize); NCCL " + ran +
           " ran its own chunk size";
  if (k.channels > 0 && code < 21700)
    return "NCCL_MIN_CTAS/NCCL_MAX_CTAS need NCCL 2.17 or later; NCCL " + ran + " ran its own channel count";
  if (k.channels > 32 && code < 22500)
    return "NCCL before 2.25 caps NCCL_MIN_CTAS/NCCL_MAX_CTAS at 32; NCCL " + ran +
           " ran at most 32 channels";
  return std::nullopt;
}

std::string knob_id_suffix(const KnobPoint& k) {
  std::string s;
  if (k.channels > 0) s += "-ch" + std::to_string(k.channels);
  if (k.chunk_bytes > 0) s += "-chunk" + std::to_string(k.chunk_bytes);
  return s;
}

std::string chunk_table_path(uint64_t chunk) {
  return "tables/chunk-" + std::to_string(chunk) + ".csv";
}

std::string chunk_table(uint64_t chunk, const std::vector<int>& slots) {
  std::ostringstream os;
  os << "# Written by `ncclbot plan` (docs/campaign.md): every arm below runs with a " << chunk
     << " B chunk\n# (tuner v6 getChunkSize, NCCL 2.30.3 or later); channels 0 keeps NCCL's count.\n"
     << "fabric,collective,nodes,gpus_per_node,min_bytes,max_bytes,algo,proto,channels,chunk_bytes\n";
  for (int slot : slots)
    os << "*,*,*,*,0,*," << algo_name(slot_algo(slot)) << ',' << proto_name(slot_proto(slot)) << ",0,"
       << chunk << "\n";
  return os.str();
}

}  // namespace ncclbot::campaign
