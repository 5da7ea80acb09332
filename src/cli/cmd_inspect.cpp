// `ncclbot inspect SWEEP.csv`: what a sweep holds and, when it carries the model's prior, how much
// AUTO's picks lose when priced on the measured arms (the library call: cli/inspect_call.hpp).
#include <CLI/CLI.hpp>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "cli/inspect_call.hpp"
#include "ncclbot/core/command_streams.hpp"

namespace ncclbot::cli {
namespace inspect_command {

void print_human(const nlohmann::json& j, std::ostream& os) {
  os << "contexts: " << j["contexts"] << ", arms seen: " << j["arms"] << ", samples per arm: " << j["samples"]
     << "\n";
  if (j.contains("arms_per_context"))
    os << "arms per context: " << j["arms_per_context"]["min"] << "-" << j["arms_per_context"]["max"]
       << ", sizes: " << j["bytes"]["min"] << "-" << j["bytes"]["max"] << " B\n";
  if (j.contains("auto")) {
    const auto& a = j["auto"];
    os << (j.contains("knob_arms") ? "NCCL's default (AUTO's algorithm and protocol, NCCL's own channels and "
                                     "chunk) priced on the measured arms: mean loss "
                                   : "AUTO priced on the measured arms: mean loss ")
       << a["mean"].get<double>() * 100 << "%, p99 " << a["p99"].get<double>() * 100 << "%, max "
       << a["max"].get<double>() * 100 << "%, contexts above 10%: " << a["above_10pct"]
       << ", within 1% of best: " << a["within_1pct"] << "\n";
  } else {
    os << "no prior in this sweep: AUTO's loss cannot be priced\n";
  }
  if (j.contains("knob_headroom")) {
    const auto& h = j["knob_headroom"];
    os << "knob headroom (the best arm at NCCL's own channels and chunk against the best arm, on the "
          "samples' means): mean "
       << h["mean"].get<double>() * 100 << "%, max " << h["max"].get<double>() * 100
       << "%, contexts above 10%: " << h["above_10pct"] << "\n";
  }
}

Action setup(CLI::App& app) {
  auto opt = std::make_shared<InspectCallOptions>();
  auto json = std::make_shared<bool>(false);
  app.add_option("sweep", opt->sweep_path, "sweep CSV")->required();
  app.add_option("--nodes", opt->nodes, "only these node counts, e.g. 16,32");
  app.add_option("--collectives", opt->collectives, "only these collectives, e.g. allreduce,allgather");
  app.add_flag("--json", *json, "print one JSON document on stdout");
  return [opt, json] {
    const nlohmann::json j = inspect_document(inspect_call(*opt));
    if (*json) {
      command_out() << j.dump(2) << "\n";
      print_human(j, command_err());
    } else {
      print_human(j, command_out());
    }
    return 0;
  };
}

const bool registered =
    register_command({"inspect", "summarise a sweep: contexts, arms, samples, AUTO's loss", setup});

}  // namespace inspect_command
}  // namespace ncclbot::cli
