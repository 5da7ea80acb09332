#pragma once
// Table mode: fixed decisions from NCCLBOT_TABLE, keyed only by what every rank shares (collective,
// bytes, nodes, ranks), so ranks agree by construction (docs/plugin.md "Decision table").
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "plugin/comm_identity.hpp"
#include "plugin/context_key.hpp"
#include "plugin/cost_table.hpp"
#include "plugin/decision_table_file.hpp"
#include "plugin/first_calls.hpp"

namespace ncclbot::plugin {

class TableTuner {
 public:
  // `table` with the rows that apply to the communicator's shape.
  TableTuner(std::shared_ptr<const DecisionTable> table, std::vector<const DecisionRow*> rows)
      : table_(std::move(table)), rows_(std::move(rows)) {}

  size_t rows_applied() const { return rows_.size(); }

  // The first row that matches the call and whose arm this call's cost table offers sets the arm,
  // and the channel count when it gives one; a row that keeps NCCL's choice leaves the table alone
  // and still sets its channel count (NCCL applies a tuner's nChannels to whichever arm it then
  // picks); no row leaves both. Each context's first decided call is logged once. NCCL's hot path.
  void get_coll_info(const CommIdentity& id, int coll, size_t bytes, int num_pipe_ops, CostTable table,
                     int reg_buff, int* nchannels) {
    const CallKey key{coll, uint64_t(bytes), id.nnodes, id.nranks, num_pipe_ops, reg_buff};
    // A row whose arm this call's table lacks is passed over; an explicit "keep NCCL's choice" row
    // (algo kAny) ends the search.
    const DecisionRow* row = deciding_row(rows_, key, [&](int slot) { return table.usable_slot(slot); });
    if (row == nullptr) return;
    const bool keeps_arm = row->algo == kAny;
    if (keeps_arm && row->channels <= 0) return;
    if (!keeps_arm && !table.choose(row->algo * kNumProtos + row->proto)) return;
    if (row->channels > 0 && nchannels != nullptr) *nchannels = row->channels;
    const int context = context_key(coll, bytes);
    if (context >= 0 && first_calls_.first(context)) log_first_call(id, coll, bytes, *row);
  }
  // Tuner v6: the chunk size for the arm NCCL runs: the row getCollInfo's search stops at for that
  // arm (deciding_row; the call's numPipeOps and regBuff unknown here, so any), when it names the
  // arm and gives chunk_bytes; otherwise NCCL's value stays.
  void get_chunk_size(const CommIdentity& id, int coll, size_t bytes, int algo, int proto,
                      size_t* chunk_size) const;
  // Tuner v2: no cost table; the algorithm and protocol are answered directly.
  void get_coll_info_v2(const CommIdentity& id, int coll, size_t bytes, int coll_net, int nvls,
                        int num_pipe_ops, int* algorithm, int* protocol, int* nchannels) const;

 private:
  static void log_first_call(const CommIdentity& id, int coll, size_t bytes, const DecisionRow& row);

  std::shared_ptr<const DecisionTable> table_;  // owns the rows
  std::vector<const DecisionRow*> rows_;
  FirstCalls first_calls_;
};

}  // namespace ncclbot::plugin
