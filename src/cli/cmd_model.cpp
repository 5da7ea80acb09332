// `ncclbot model`: NCCL's cost-model prediction for every valid arm of one context, and AUTO's pick.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "ncclbot/core/command_streams.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/core/names.hpp"
#include "ncclbot/model/cost_model.hpp"
#include "ncclbot/sim/fabric.hpp"

namespace ncclbot::cli {
namespace model_command {

struct ModelOptions {
  std::string fabric = "h100-ib-a";
  std::string collective = "allreduce";
  int nodes = 1;
  int gpus_per_node = 0;
  uint64_t bytes = 0;
  bool json = false;
};

Action setup(CLI::App& app) {
  auto opt = std::make_shared<ModelOptions>();
  app.add_option("--fabric", opt->fabric, "fabric preset (data/fabrics/NAME.toml)")->capture_default_str();
  app.add_option("--collective", opt->collective, "allreduce, allgather, reducescatter, broadcast, reduce")
      ->capture_default_str();
  app.add_option("--nodes", opt->nodes, "hosts (H100 nodes, GB200 compute trays)")->capture_default_str();
  CLI::Option* gpus =
      app.add_option("--gpus-per-node", opt->gpus_per_node, "GPUs per host (default: the preset's)");
  app.add_option("--bytes", opt->bytes, "message size as nccl-tests' size column")->required();
  app.add_flag("--json", opt->json, "print one JSON document on stdout");
  return [opt, gpus] {
    // 0 means "the preset's" only when the option is left out; given, it must be a real count.
    if (gpus->count() > 0 && opt->gpus_per_node < 1)
      throw UsageError("--gpus-per-node " + std::to_string(opt->gpus_per_node) +
                       ": must be at least 1 (leave it out for the preset's)");
    if (opt->nodes < 1) throw UsageError("--nodes " + std::to_string(opt->nodes) + ": must be at least 1");
    if (opt->bytes < 1 || opt->bytes > sim::kLargestMessageBytes)
      throw UsageError("--bytes " + std::to_string(opt->bytes) + ": must be in [1, 2^40] (1 TiB per rank)");
    const auto coll = parse_collective(opt->collective);
    if (!coll) throw UsageError("--collective: unknown collective '" + opt->collective + "'");
    const sim::FabricPreset f = sim::load_fabric(opt->fabric);
    const int gpus = opt->gpus_per_node > 0 ? opt->gpus_per_node : f.gpus_per_host;
    const model::Topology t = sim::topology_for(f, opt->nodes, gpus);
    const model::CostTable table = model::predict(t, *coll, opt->bytes);
    const int pick = model::auto_pick(table);
    nlohmann::json j;
    j["fabric"] = f.name;
    j["collective"] = std::string(collective_name(*coll));
    j["nodes"] = opt->nodes;
    j["gpus_per_node"] = gpus;
    j["bytes"] = opt->bytes;
    j["nccl_nodes"] = t.nodes;
    j["nccl_ppn"] = t.gpus_per_node;
    j["arms"] = nlohmann::json::array();
    for (int s = 0; s < kNumNcclArms; ++s) {
      if (table.time_us[s] < 0.0f) continue;
      j["arms"].push_back({{"algo", std::string(algo_name(slot_algo(s)))},
                           {"proto", std::string(proto_name(slot_proto(s)))},
                           {"time_us", table.time_us[s]}});
    }
    if (pick >= 0)
      j["pick"] = {{"algo", std::string(algo_name(slot_algo(pick)))},
                   {"proto", std::string(proto_name(slot_proto(pick)))}};
    else
      j["pick"] = nullptr;

    std::ostream& os = opt->json ? command_err() : command_out();
    os << f.name << " " << collective_name(*coll) << " " << opt->nodes << "x" << gpus << " (NCCL: " << t.nodes
       << " node(s) x " << t.gpus_per_node << " ranks), " << opt->bytes << " B\n";
    char line[128];
    std::snprintf(line, sizeof line, "  %-14s %-7s %14s\n", "algo", "proto", "time_us");
    os << line;
    for (int s = 0; s < kNumNcclArms; ++s) {
      if (table.time_us[s] < 0.0f) continue;
      std::snprintf(line, sizeof line, "  %-14s %-7s %14.3f%s\n",
                    std::string(algo_name(slot_algo(s))).c_str(),
                    std::string(proto_name(slot_proto(s))).c_str(), double(table.time_us[s]),
                    s == pick ? "  <- AUTO" : "");
      os << line;
    }
    if (pick < 0) os << "  no valid arm\n";
    if (opt->json) command_out() << j.dump(2) << "\n";
    return 0;
  };
}

const bool registered = register_command(
    {"model", "NCCL's cost-model prediction per arm and AUTO's pick for one context", setup});

}  // namespace model_command
}  // namespace ncclbot::cli
