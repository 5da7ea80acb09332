// `ncclbot model`: NCCL's cost-model prediction for every valid arm of one context, and AUTO's pick.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "cli/model_call.hpp"
#include "ncclbot/core/command_streams.hpp"
#include "ncclbot/core/names.hpp"

namespace ncclbot::cli {
namespace model_command {

Action setup(CLI::App& app) {
  auto opt = std::make_shared<ModelCallOptions>();
  auto json = std::make_shared<bool>(false);
  app.add_option("--fabric", opt->fabric, "fabric preset (data/fabrics/NAME.toml)")->capture_default_str();
  app.add_option("--collective", opt->collective, "allreduce, allgather, reducescatter, broadcast, reduce")
      ->capture_default_str();
  app.add_option("--nodes", opt->nodes, "hosts (H100 nodes, GB200 compute trays)")->capture_default_str();
  app.add_option("--gpus-per-node", opt->gpus_per_node, "GPUs per host (default: the preset's)");
  app.add_option("--bytes", opt->bytes, "message size as nccl-tests' size column")->required();
  app.add_flag("--json", *json, "print one JSON document on stdout");
  return [opt, json] {
    const ModelCallResult r = model_call(*opt);
    std::ostream& os = *json ? command_err() : command_out();
    os << r.fabric << " " << collective_name(r.collective) << " " << r.nodes << "x" << r.gpus_per_node
       << " (NCCL: " << r.topology.nodes << " node(s) x " << r.topology.gpus_per_node << " ranks), "
       << r.bytes << " B\n";
    char line[128];
    std::snprintf(line, sizeof line, "  %-14s %-7s %14s\n", "algo", "proto", "time_us");
    os << line;
    for (int s = 0; s < kNumNcclArms; ++s) {
      if (r.table.time_us[s] < 0.0f) continue;
      std::snprintf(line, sizeof line, "  %-14s %-7s %14.3f%s\n",
                    std::string(algo_name(slot_algo(s))).c_str(),
                    std::string(proto_name(slot_proto(s))).c_str(), double(r.table.time_us[s]),
                    s == r.pick ? "  <- AUTO" : "");
      os << line;
    }
    if (r.pick < 0) os << "  no valid arm\n";
    if (*json) command_out() << model_document(r).dump(2) << "\n";
    return 0;
  };
}

const bool registered = register_command(
    {"model", "NCCL's cost-model prediction per arm and AUTO's pick for one context", setup});

}  // namespace model_command
}  // namespace ncclbot::cli
