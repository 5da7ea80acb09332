#include "plugin/table_tuner.hpp"

#include "ncclbot/core/knob_limits.hpp"
#include "plugin/plugin_names.hpp"

namespace ncclbot::plugin {

void TableTuner::log_first_call(const CommIdentity& id, int coll, size_t bytes, const DecisionRow& row) {
  if (row.algo == kAny)
    id.log.info("first call of %s %zu bytes: table row %ld keeps NCCL's arm with %d channels",
                collective_label(coll), bytes, row.line, row.channels);
  else
    id.log.info("first call of %s %zu bytes: table row %ld chose %s/%s", collective_label(coll), bytes,
                row.line, algo_label(row.algo), proto_label(row.proto));
}

void TableTuner::get_chunk_size(const CommIdentity& id, int coll, size_t bytes, int algo, int proto,
                                size_t* chunk_size) const {
  if (chunk_size == nullptr) return;
  // An index outside NCCL's would name another arm's slot (algo 0, proto 5 is Ring/Simple's).
  if (algo < 0 || algo >= kNumNcclAlgos || proto < 0 || proto >= kNumProtos) return;
  const CallKey key{coll, uint64_t(bytes), id.nnodes, id.nranks, kAny, kAny};
  const int ran = algo * kNumProtos + proto;
  // As getCollInfo searches, with only the arm NCCL runs usable: an explicit "keep NCCL's choice"
  // row before it ends the search there.
  const DecisionRow* row = deciding_row(rows_, key, [&](int slot) { return slot == ran; });
  // The table refuses a chunk off the protocol's grain at load; checked again here because NCCL
  // divides by the rounded chunk.
  if (row != nullptr && row->algo != kAny && row->chunk_bytes > 0 &&
      chunk_fits_grain(row->chunk_bytes, proto))
    *chunk_size = size_t(row->chunk_bytes);
}

void TableTuner::get_coll_info_v2(const CommIdentity& id, int coll, size_t bytes, int coll_net, int nvls,
                                  int num_pipe_ops, int* algorithm, int* protocol, int* nchannels) const {
  if (algorithm == nullptr || protocol == nullptr) return;
  const CallKey key{coll, uint64_t(bytes), id.nnodes, id.nranks, num_pipe_ops, kAny};
  for (const DecisionRow* row : rows_) {
    if (!DecisionTable::matches(*row, key)) continue;
    if (row->algo == kAny) {  // NCCL's arm, with the row's channel count when it gives one
      if (row->channels > 0 && nchannels != nullptr) *nchannels = row->channels;
      return;
    }
    const bool needs_collnet = row->algo == 2 || row->algo == 3;
    const bool needs_nvls = row->algo == 4 || row->algo == 5;
    if ((needs_collnet && !coll_net) || (needs_nvls && !nvls)) continue;
    *algorithm = row->algo;
    *protocol = row->proto;
    if (row->channels > 0 && nchannels != nullptr) *nchannels = row->channels;
    return;
  }
}

}  // namespace ncclbot::plugin
