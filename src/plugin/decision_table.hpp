#pragma once
// Table mode: fixed decisions keyed only by what every rank shares (collective, size, nodes, ranks),
// so all ranks agree by construction. Two file formats (docs/plugin.md "Table format"):
//  - ncclbot's, written by `ncclbot export-table`, recognised by its header line
//      fabric,collective,nodes,gpus_per_node,min_bytes,max_bytes,algo,proto[,channels[,chunk_bytes]]
//  - NCCL's example tuner CSV (no header), so existing configurations migrate unchanged:
//      collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks[,numPipeOps[,regBuff]]
// The first matching row whose arm is usable in the call's cost table wins.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ncclbot/core/knob_limits.hpp"

namespace ncclbot::plugin {

inline constexpr int kAny = -1;
inline constexpr size_t kMaxTableFileBytes = size_t(16) << 20;  // far above any real table

struct DecisionRow {
  int collective = kAny;                           // ncclFunc_t
  uint64_t min_bytes = 0, max_bytes = UINT64_MAX;  // inclusive
  int nodes = kAny;
  int gpus_per_node = kAny;  // ncclbot format
  int ranks = kAny;          // NCCL format
  int num_pipe_ops = kAny, reg_buff = kAny;
  int algo = kAny, proto = kAny;  // both kAny: an explicit "keep NCCL's choice" row
  int channels = kAny;            // 1..kMaxChannels: also set nChannels; 0 or kAny: NCCL's
  uint64_t chunk_bytes = 0;       // > 0: the chunk size getChunkSize asks for (tuner v6), a
                                  // multiple of the protocol's grain; ncclbot format
  std::string fabric;             // empty or "*" = any
  long line = 0;
};

struct CallKey {
  int collective;
  uint64_t bytes;
  int nodes, ranks;
  int num_pipe_ops, reg_buff;  // kAny when the ABI version does not pass them
};

class DecisionTable {
 public:
  enum class Format { kNcclbot, kNcclExample };

  // Parses `text`; on failure returns false and sets `error` to "SOURCE:LINE: reason". Rows of
  // other fabrics (when `fabric` is non-empty) are dropped at load.
  bool parse(std::string_view text, const std::string& source, const std::string& fabric, std::string* error);
  // Reads a regular file of at most kMaxTableFileBytes (a device or FIFO is refused at once).
  bool load_file(const std::string& path, const std::string& fabric, std::string* error);

  // Rows that can match a communicator of this shape, in file order.
  std::vector<const DecisionRow*> rows_for(int nodes, int ranks) const;
  static bool matches(const DecisionRow& row, const CallKey& key);

  Format format() const { return format_; }
  size_t size() const { return rows_.size(); }
  const std::vector<DecisionRow>& rows() const { return rows_; }

 private:
  std::vector<DecisionRow> rows_;
  Format format_ = Format::kNcclbot;
};

// The row that decides a call in table mode: the first row matching `key` whose arm `usable(slot)`
// accepts (slot = algo * 3 + proto), or the first explicit "keep NCCL's choice" row before it;
// nullptr when none does. The plugin and `ncclbot ope`'s table targets both decide through it.
template <typename Usable>
const DecisionRow* deciding_row(const std::vector<const DecisionRow*>& rows, const CallKey& key,
                                Usable usable) {
  for (const DecisionRow* row : rows) {
    if (!DecisionTable::matches(*row, key)) continue;
    if (row->algo == kAny) return row;
    if (usable(row->algo * 3 + row->proto)) return row;
  }
  return nullptr;
}

}  // namespace ncclbot::plugin
