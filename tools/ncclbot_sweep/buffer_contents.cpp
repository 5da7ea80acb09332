#include "buffer_contents.hpp"

#include "ncclbot/core/parse_number.hpp"

namespace ncclbot::sweep_tool {

namespace {

bool gathers_or_scatters(Collective c) {
  return c == Collective::kAllGather || c == Collective::kReduceScatter;
}

// The sum over ranks of send_value(q, i).
float sum_over_ranks(int ranks, size_t i) {
  float s = 0.0f;
  for (int q = 0; q < ranks; ++q) s += send_value(q, i);
  return s;
}

}  // namespace

const char* layout_fault(Collective collective, uint64_t bytes, int ranks) {
  if (bytes == 0) return "0 bytes";
  if (bytes % sizeof(float) != 0) return "not a whole number of 4-byte floats";
  if (gathers_or_scatters(collective) && (bytes / sizeof(float)) % uint64_t(ranks) != 0)
    return "not divisible into equal float blocks, one per rank";
  return nullptr;
}

BufferLayout buffer_layout(Collective collective, uint64_t bytes, int ranks) {
  const size_t floats = size_t(bytes / sizeof(float));
  switch (collective) {
    case Collective::kAllGather:
      return {floats / size_t(ranks), floats, floats / size_t(ranks)};
    case Collective::kReduceScatter:
      return {floats, floats / size_t(ranks), floats / size_t(ranks)};
    default:
      return {floats, floats, floats};
  }
}

float send_value(int rank, size_t i) {
  return float(rank + 1 + int(i % 5));
}

std::optional<float> expected_value(Collective collective, int rank, int ranks, const BufferLayout& layout,
                                    size_t i) {
  switch (collective) {
    case Collective::kAllGather:
      return send_value(int(i / layout.send_count), i % layout.send_count);
    case Collective::kReduceScatter:
      return sum_over_ranks(ranks, size_t(rank) * layout.recv_count + i);
    case Collective::kBroadcast:
      return send_value(0, i);
    case Collective::kReduce:
      if (rank != 0) return std::nullopt;
      return sum_over_ranks(ranks, i);
    default:
      return sum_over_ranks(ranks, i);
  }
}

std::string check_received(Collective collective, int rank, int ranks, const BufferLayout& layout,
                           const float* recv) {
  for (size_t i = 0; i < layout.recv_count; ++i) {
    const auto want = expected_value(collective, rank, ranks, layout, i);
    if (want && recv[i] != *want)
      return "element " + std::to_string(i) + " is " + format_float(recv[i]) + ", expected " +
             format_float(*want);
  }
  return "";
}

}  // namespace ncclbot::sweep_tool
