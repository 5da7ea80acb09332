// `ncclbot bench`: replay throughput (policy steps per second) of a backend, per policy, at 6, 12
// and 21 valid arms, on one thread and on all of them. The library call: cli/bench_call.hpp.
#include <CLI/CLI.hpp>
#include <iomanip>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/bench_call.hpp"
#include "cli/command.hpp"
#include "ncclbot/bench/bench_sweep.hpp"
#include "ncclbot/core/command_streams.hpp"
#include "ncclbot/io/sweep_csv.hpp"

namespace ncclbot::cli {
namespace bench_command {

// The command's options: the library call's (cli/bench_call.hpp), --write-sweep and --json.
struct BenchOptions {
  BenchCallOptions call;
  std::string write_sweep;
  bool json = false;
};

void add_bench_options(CLI::App& app, BenchOptions& cli) {
  BenchCallOptions& opt = cli.call;
  app.add_option("--backend", opt.backend, "cpu or cuda (default cpu)");
  app.add_option("--policy", opt.policies, "policy specs to time (default: every online policy)");
  app.add_option("--arms", opt.arms,
                 "valid arms per context (default 6 12 21; above 21 knob arms, up to 512)");
  app.add_option("--threads", opt.threads, "thread counts to time (default: 1 and all cores)");
  app.add_option("--cuda-block", opt.cuda_blocks,
                 "with --backend cuda: threads per block of the replay kernels to time (default 128)");
  app.add_option("--contexts", opt.contexts, "contexts in the synthetic sweep (default 32)");
  app.add_option("--horizon", opt.horizon, "steps per replay (default 4096)");
  app.add_option("--seeds", opt.seeds, "seeds per context (default 4)");
  app.add_option("--delay", opt.delay, "feedback delay D of every replay (default 0)");
  app.add_option("--repetitions", opt.repetitions, "timed repetitions, median reported (default 5)");
  app.add_option("--write-sweep", cli.write_sweep,
                 "write the synthetic sweep for the first --arms value to this CSV and exit");
  app.add_option("--observation", opt.observation,
                 "on: give the synthetic sweep the default preset's call dynamics (warm-up, level shifts, "
                 "first-use cost; docs/simulator.md), so the replay takes its dynamic path (default off)");
  app.add_flag("--json", cli.json, "print one JSON document on stdout");
}

int run_bench(const BenchOptions& opt) {
  if (!opt.write_sweep.empty()) {
    bench_dynamics(opt.call.observation);  // a bad --observation is refused here as in the call
    write_sweep_csv(make_bench_sweep(opt.call.arms.at(0), opt.call.contexts, opt.call.samples),
                    opt.write_sweep);
    command_err() << "wrote " << opt.write_sweep << "\n";
    return 0;
  }
  std::ostream& human = opt.json ? command_err() : command_out();
  BenchCallOptions call = opt.call;  // its row callback lives as long as this run
  call.on_row = [&human](const BenchRow& row) {
    human << std::left << std::setw(34) << row.policy << " arms " << std::setw(3) << row.arms
          << (row.block ? " block " : " threads ") << (row.block ? *row.block : row.threads) << "  "
          << std::setprecision(3) << row.steps_per_s << " steps/s, " << row.steps_per_cpu_s
          << " per CPU-second\n";
  };
  const BenchCallResult r = bench_call(call);
  if (opt.json) command_out() << bench_document(r).dump(2) << "\n";
  return 0;
}

Action setup(CLI::App& app) {
  auto opt = std::make_shared<BenchOptions>();
  add_bench_options(app, *opt);
  return [opt] { return run_bench(*opt); };
}

const bool registered =
    register_command({"bench", "replay throughput of a backend in steps per second", setup});

}  // namespace bench_command
}  // namespace ncclbot::cli
