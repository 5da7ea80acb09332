#pragma once
// The decision-table codec: one reader and one writer of the tables the tuner plugin's table mode
// plays (fixed decisions keyed only by what every rank shares: collective, size, nodes, ranks, so all
// ranks agree by construction), used by the plugin, `ncclbot export-table`, `ncclbot ope` and the
// tests. Two file formats (docs/plugin.md "Table format"):
//  - ncclbot's, written by `ncclbot export-table`, recognised by its header line
//      fabric,collective,nodes,gpus_per_node,min_bytes,max_bytes,algo,proto[,channels[,chunk_bytes]]
//  - NCCL's example tuner CSV (no header), so existing configurations migrate unchanged:
//      collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks[,numPipeOps[,regBuff]]
// The first matching row whose arm is usable in the call's cost table wins.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "ncclbot/core/knob_limits.hpp"

namespace ncclbot::table {

inline constexpr int kAny = -1;

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

// A table the writer cannot express in the format asked for (NCCL's CSV has no fabric and no chunk
// size column).
struct TableFormatError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// The text of `rows` in ncclbot's format, after a comment line `comment`: the knob columns only where
// some row sets one (channels > 0 or a chunk size), so an algorithm x protocol table keeps its eight
// (its rows' channels then read back as kAny, NCCL's own as 0 is). Rows with algo kAny are written
// "auto"; a kAny count or collective "*".
std::string format_ncclbot_table(const std::vector<DecisionRow>& rows, const std::string& comment);
// The same in NCCL's example tuner CSV (names as it spells them: allreduce, collnet_direct, ll128;
// nRanks = the row's ranks, else nodes x gpus_per_node; channels 0 or kAny as -1). Throws
// TableFormatError when two fabrics have a row of the same (collective, nodes, ranks), or a row sets
// a chunk size.
std::string format_nccl_csv(const std::vector<DecisionRow>& rows, const std::string& comment);

}  // namespace ncclbot::table
