// libFuzzer target: the tuner plugin's decision table parser (both formats) either rejects the
// bytes with "SOURCE:LINE: reason" or accepts rows that stay within NCCL's algorithms, protocols
// and 64 channels, with chunk sizes on their protocol's grain, and matching them against any call
// never fails.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "table/decision_table.hpp"

using namespace ncclbot;
using namespace ncclbot::table;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  DecisionTable table;
  std::string error;
  if (!table.parse(text, "fuzz.csv", size % 2 ? "h100-ib-a" : "", &error)) {
    if (error.rfind("fuzz.csv:", 0) != 0) std::abort();  // every rejection names the input
    return 0;
  }
  for (const DecisionRow& row : table.rows()) {
    if ((row.algo == kAny) != (row.proto == kAny)) std::abort();
    if (row.algo != kAny && (row.algo < 0 || row.algo >= 7 || row.proto < 0 || row.proto >= 3)) std::abort();
    if (row.channels != kAny && (row.channels < 0 || row.channels > kMaxChannels)) std::abort();
    if (row.chunk_bytes != 0 && !chunk_fits_grain(row.chunk_bytes, row.proto)) std::abort();
  }
  for (int nodes : {1, 2, 4}) {
    const auto rows = table.rows_for(nodes, nodes * 8);
    const CallKey key{4, uint64_t(size) * 977, nodes, nodes * 8, 1, 0};
    for (const DecisionRow* row : rows) (void)DecisionTable::matches(*row, key);
  }
  return 0;
}
