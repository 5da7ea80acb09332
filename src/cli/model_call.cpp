#include "cli/model_call.hpp"

#include "ncclbot/core/error.hpp"
#include "ncclbot/core/names.hpp"
#include "ncclbot/sim/fabric.hpp"

namespace ncclbot::cli {

ModelCallResult model_call(const ModelCallOptions& o) {
  // 0 means "the preset's" only when the option is left out; given, it must be a real count.
  if (o.gpus_per_node && *o.gpus_per_node < 1)
    throw UsageError("--gpus-per-node " + std::to_string(*o.gpus_per_node) +
                     ": must be at least 1 (leave it out for the preset's)");
  if (o.nodes < 1) throw UsageError("--nodes " + std::to_string(o.nodes) + ": must be at least 1");
  if (o.bytes < 1 || o.bytes > sim::kLargestMessageBytes)
    throw UsageError("--bytes " + std::to_string(o.bytes) + ": must be in [1, 2^40] (1 TiB per rank)");
  const auto coll = parse_collective(o.collective);
  if (!coll) throw UsageError("--collective: unknown collective '" + o.collective + "'");
  const sim::FabricPreset f = sim::load_fabric(o.fabric);
  ModelCallResult r;
  r.fabric = f.name;
  r.collective = *coll;
  r.nodes = o.nodes;
  r.gpus_per_node = o.gpus_per_node ? *o.gpus_per_node : f.gpus_per_host;
  r.bytes = o.bytes;
  r.topology = sim::topology_for(f, o.nodes, r.gpus_per_node);
  r.table = model::predict(r.topology, *coll, o.bytes);
  r.pick = model::auto_pick(r.table);
  return r;
}

nlohmann::json model_document(const ModelCallResult& r) {
  nlohmann::json j;
  j["fabric"] = r.fabric;
  j["collective"] = std::string(collective_name(r.collective));
  j["nodes"] = r.nodes;
  j["gpus_per_node"] = r.gpus_per_node;
  j["bytes"] = r.bytes;
  j["nccl_nodes"] = r.topology.nodes;
  j["nccl_ppn"] = r.topology.gpus_per_node;
  j["arms"] = nlohmann::json::array();
  for (int s = 0; s < kNumNcclArms; ++s) {
    if (r.table.time_us[s] < 0.0f) continue;
    j["arms"].push_back({{"algo", std::string(algo_name(slot_algo(s)))},
                         {"proto", std::string(proto_name(slot_proto(s)))},
                         {"time_us", r.table.time_us[s]}});
  }
  if (r.pick >= 0)
    j["pick"] = {{"algo", std::string(algo_name(slot_algo(r.pick)))},
                 {"proto", std::string(proto_name(slot_proto(r.pick)))}};
  else
    j["pick"] = nullptr;
  return j;
}

}  // namespace ncclbot::cli
