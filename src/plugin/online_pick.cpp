#include "plugin/online_pick.hpp"

#include <string>

#include "plugin/plugin_names.hpp"

namespace ncclbot::plugin {

void OnlinePick::log_first_call(const CommIdentity& id, const CostTable& table, int coll, size_t bytes,
                                int slot) const {
  const int nccl_slot = table.nccl_pick_slot();
  std::string left;  // with NCCL_ALGO / NCCL_PROTO set: the arms this table leaves
  if (restricted_) {
    for (int s = 0; s < kNumArms; ++s)
      if (table.usable_slot(s))
        left += std::string(left.empty() ? "" : " ") + algo_label(s / kNumProtos) + "/" +
                proto_label(s % kNumProtos);
    left = "; arms left: " + (left.empty() ? std::string("none") : left);
  }
  id.log.info("first call of %s %zu bytes on commId 0x%llx: NCCL's pick %s/%s, ncclbot's %s/%s%s",
              collective_label(coll), bytes, (unsigned long long)id.comm_id,
              nccl_slot < 0 ? "none" : algo_label(nccl_slot / kNumProtos),
              nccl_slot < 0 ? "" : proto_label(nccl_slot % kNumProtos),
              slot < 0 ? "NCCL's" : algo_label(slot / kNumProtos),
              slot < 0 ? "own" : proto_label(slot % kNumProtos), left.c_str());
}

void OnlinePick::warn_unusable(const CommIdentity& id, int coll, size_t bytes, int slot) {
  id.log.warn("decided arm %s/%s is not usable for %s %zu bytes on this rank; kept NCCL's choice",
              algo_label(slot / kNumProtos), proto_label(slot % kNumProtos), collective_label(coll), bytes);
}

}  // namespace ncclbot::plugin
