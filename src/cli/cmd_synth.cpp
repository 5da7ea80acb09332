// `ncclbot synth`: a forced-arm sweep from a fabric preset (see docs/simulator.md), made by the library
// call (cli/synth_call.hpp) and written to --out.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "cli/synth_call.hpp"
#include "ncclbot/core/command_streams.hpp"

namespace ncclbot::cli {
namespace synth_command {

// The command's options: the library call's (cli/synth_call.hpp) and --json.
struct SynthCliOptions {
  SynthCallOptions call;
  bool json = false;
};

// Declares synth's options on `app`, in --help order, bound to `cli`.
void add_synth_options(CLI::App& app, SynthCliOptions& cli) {
  SynthCallOptions& opt = cli.call;
  app.add_option("--fabric", opt.fabric,
                 "fabric preset: h100-ib-a, h100-ib-b, h100-roce, gb200-mnnvl, gb200-ib")
      ->required();
  app.add_option("--seed", opt.seed, "seed of the hidden deviations and the noise")->capture_default_str();
  app.add_option("--out", opt.out, "sweep CSV to write")->required();
  app.add_option("--nodes", opt.nodes, "host counts, e.g. 4,8,16,32 (default: the preset's)");
  app.add_option("--collectives", opt.collectives, "default allreduce,allgather,reducescatter");
  app.add_option("--samples", opt.samples, "samples per arm")->capture_default_str();
  app.add_option("--min-bytes", opt.min_bytes, "smallest size (powers of two from here)")
      ->capture_default_str();
  app.add_option("--max-bytes", opt.max_bytes, "largest size")->capture_default_str();
  app.add_option("--gpus-per-node", opt.gpus_per_node, "GPUs per host (default: the preset's)");
  app.add_flag("--hipipe", opt.hipipe,
               "add the simulated HiPIPE/Simple arm to multi-dimension all-reduce contexts (docs/hipipe.md)");
  app.add_option("--observation", opt.observation,
                 "on: the preset's per-call observation model (docs/simulator.md); off: the [noise]-only "
                 "sweep of before, bit for bit")
      ->capture_default_str();
  app.add_option("--noise-scale", opt.noise_scale, "multiplies the call-to-call cv and the spike probability")
      ->capture_default_str();
  app.add_option("--drift", opt.drift, "level shifts on or off")->capture_default_str();
  app.add_option("--first-use", opt.first_use, "an algorithm's one-time first-use cost on or off")
      ->capture_default_str();
  app.add_option("--warmup", opt.warmup, "job and arm warm-up on or off")->capture_default_str();
  // Each left out keeps the preset's; given, it must be a real size or rate.
  app.add_option("--shift-rate", opt.shift_rate, "level shifts per call (default: the preset's)");
  app.add_option("--shift-size", opt.shift_size,
                 "half-width of the level all arms share, e.g. 0.2 (default: the preset's)");
  app.add_option("--shift-arm-size", opt.shift_arm_size,
                 "half-width of each arm's own part of its level, which can change the best arm (default: "
                 "the preset's)");
  app.add_option(
      "--knobs", opt.knobs,
      "cross each algorithm and protocol with channel and chunk values, e.g. "
      "'channels=0,8,16;chunk=0,64K,1M' (chunk.LL=, chunk.LL128=, chunk.Simple= for one protocol), or "
      "@FILE holding such a spec (docs/simulator.md, \"Knob model\")");
  app.add_option("--deviations", opt.deviations,
                 "where the truth's errors against the cost model come from: structured (the preset's "
                 "mechanisms), independent (a log-normal factor per context and arm) or adversarial (the "
                 "model's pick slowed by its confidence); docs/simulator.md \"Deviation models\"")
      ->capture_default_str();
  app.add_option("--independent-sigma", opt.independent_sigma, "sigma of --deviations independent, in [0, 2]")
      ->capture_default_str();
  app.add_option("--adversarial-gain", opt.adversarial_gain, "gain of --deviations adversarial, in [0, 100]")
      ->capture_default_str();
  app.add_option("--deviation-scale", opt.deviation_scale,
                 "strength of --deviations structured: 0 none, 1 the preset's, in [0, 4]; errors scale with "
                 "it, factors are raised to its power (docs/simulator.md \"Deviation strength\")")
      ->capture_default_str();
  app.add_flag("--json", cli.json, "print one JSON document on stdout");
}

Action setup(CLI::App& app) {
  auto opt = std::make_shared<SynthCliOptions>();
  add_synth_options(app, *opt);
  return [opt] {
    const SynthCallResult r = synth_call(opt->call);
    command_err() << "synth: " << r.fabric << " seed " << r.seed << ": " << r.sweep.num_contexts()
                  << " contexts x " << r.sweep.samples() << " samples -> " << r.out << "\n";
    if (opt->json) command_out() << synth_document(r).dump(2) << "\n";
    return 0;
  };
}

const bool registered =
    register_command({"synth", "generate a forced-arm sweep from a fabric preset", setup});

}  // namespace synth_command
}  // namespace ncclbot::cli
