#include "ncclbot/campaign/arm_exclusion.hpp"

#include <array>
#include <functional>

#include "ncclbot/core/arm.hpp"
#include "ncclbot/core/names.hpp"
#include "ncclbot/model/cost_model.hpp"

namespace ncclbot::campaign {
namespace {

// One condition of NCCL's enabling rules, as the change to a topology that would satisfy it.
struct Enabler {
  const char* reason;
  std::function<void(model::Topology&)> apply;
};

const std::array<Enabler, 9>& enablers() {
  static const std::array<Enabler, 9> list = {{
      {"needs NVLink SHARP (NVLS multicast in the NVSwitch), which this fabric lacks",
       [](model::Topology& t) { t.nvls_support = true; }},
      {"needs CollNet (a SHARP network plugin), which this fabric lacks",
       [](model::Topology& t) { t.collnet_support = true; }},
      {"needs an NVSwitch", [](model::Topology& t) { t.nvswitch = true; }},
      {"LL128 is off on this platform (NCCL enables it only on NVLink/PXN paths of one GPU generation)",
       [](model::Topology& t) { t.ll128_path_ok = true; }},
      {"needs a host network device", [](model::Topology& t) { t.host_net_device = true; }},
      {"needs at least 2 NVLS channels", [](model::Topology& t) { t.nvls_channels = 16; }},
      {"runs only with one GPU per node", [](model::Topology& t) { t.gpus_per_node = 1; }},
      {"needs at least 2 GPUs per node", [](model::Topology& t) { t.gpus_per_node = 8; }},
      {"needs more than one node (NCCL counts an NVLink domain as one node)",
       [](model::Topology& t) { t.nodes = 2; }},
  }};
  return list;
}

bool runs(const model::Topology& t, Collective c, int slot, uint64_t bytes) {
  return model::arm_time_us(t, c, slot_algo(slot), slot_proto(slot), bytes) >= 0.0f;
}

// Every enabling condition satisfied at once, on a shape of `nodes` x `gpus` ranks.
model::Topology permissive(model::Topology t, int nodes, int gpus) {
  for (const Enabler& e : enablers()) e.apply(t);
  t.nodes = nodes;
  t.gpus_per_node = gpus;
  return t;
}

}  // namespace

std::optional<std::string> why_arm_left_out(const model::Topology& t, Collective c, int slot,
                                            uint64_t bytes) {
  if (runs(t, c, slot, bytes)) return std::nullopt;
  const std::string arm =
      std::string(algo_name(slot_algo(slot))) + "/" + std::string(proto_name(slot_proto(slot)));
  if (t.ranks() == 1) return arm + ": a one-rank communicator has only Ring/Simple";
  // Structural: no shape or platform runs it (the algorithm lacks this collective or protocol).
  bool anywhere = false, simple_anywhere = false;
  for (int nodes : {1, 2})
    for (int gpus : {1, 8}) {
      const model::Topology p = permissive(t, nodes, gpus);
      anywhere |= runs(p, c, slot, bytes);
      simple_anywhere |= runs(p, c, arm_slot(slot_algo(slot), Proto::kSimple), bytes);
    }
  if (!anywhere) {
    if (simple_anywhere)
      return arm + ": " + std::string(algo_name(slot_algo(slot))) + " runs with Simple only";
    return arm + ": NCCL has no " + std::string(algo_name(slot_algo(slot))) + " " +
           std::string(collective_name(c));
  }
  // The smallest set of conditions (one, else two) whose change would enable it.
  const auto& list = enablers();
  for (size_t i = 0; i < list.size(); ++i) {
    model::Topology m = t;
    list[i].apply(m);
    if (runs(m, c, slot, bytes)) return arm + ": " + list[i].reason;
  }
  for (size_t i = 0; i < list.size(); ++i)
    for (size_t j = i + 1; j < list.size(); ++j) {
      model::Topology m = t;
      list[i].apply(m);
      list[j].apply(m);
      if (runs(m, c, slot, bytes)) return arm + ": " + list[i].reason + "; and " + list[j].reason;
    }
  return arm + ": NCCL's cost model gives it no bandwidth on this fabric and shape (cost table entry -1)";
}

}  // namespace ncclbot::campaign
