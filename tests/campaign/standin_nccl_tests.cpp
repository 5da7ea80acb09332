// A stand-in for NVIDIA's nccl-tests programs (all_reduce_perf, all_gather_perf, ...), so a
// campaign can run end to end without GPUs. Invoked under one of those names (a symlink), it
// parses the real programs' flags -b -e -f -g -n -w -c -I -J and NCCL_ALGO / NCCL_PROTO, takes the
// job's shape from the launcher (OMPI_COMM_WORLD_SIZE / OMPI_COMM_WORLD_LOCAL_SIZE, one process per
// GPU with -g 1), and prints a 2.19-layout text log (with the -I 1 columns) and the -J JSON, its
// times drawn from the simulator's ground truth for the fabric in NCCLBOT_STANDIN_FABRIC (seed
// NCCLBOT_STANDIN_SEED). A forced arm NCCL cannot run there fails as nccl-tests does.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "ncclbot/core/arm.hpp"
#include "ncclbot/core/names.hpp"
#include "ncclbot/hipipe/byte_size.hpp"
#include "ncclbot/io/nccl_tests/forced_list.hpp"
#include "ncclbot/model/cost_model.hpp"
#include "ncclbot/sim/simulator.hpp"

extern char** environ;

namespace {

using namespace ncclbot;

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr, "standin nccl-tests: %s\n", why.c_str());
  std::exit(2);
}

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

int env_int(const char* name, int fallback) {
  const std::string v = env_or(name, "");
  if (v.empty()) return fallback;
  const int n = std::atoi(v.c_str());
  if (n < 1) usage(std::string(name) + " must be a positive integer");
  return n;
}

// nccl-tests prints a value in a fixed width: 2 decimals if they fit, then 1, 0, then exponent.
std::string fit(double v, int width) {
  char buf[64];
  for (int decimals = 2; decimals >= 0; --decimals)
    if (std::snprintf(buf, sizeof buf, "%*.*f", width, decimals, v) <= width) return buf;
  std::snprintf(buf, sizeof buf, "%*.1e", width, v);
  return buf;
}

struct Options {
  uint64_t min_bytes = 32 << 20, max_bytes = 32 << 20, step_factor = 1;
  int gpus = 1, iters = 20, warmup = 1, per_iter = 0, check = 1;
  std::string json_path;
};

Options parse_flags(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) usage("option " + flag + " needs a value");
    const std::string value = argv[++i];
    const auto size = [&] {
      const auto v = hipipe::parse_byte_size(value);
      if (!v) usage(flag + " " + value + ": not a size");
      return *v;
    };
    const auto number = [&] {
      const int n = std::atoi(value.c_str());
      if (n < 0 || std::to_string(n) != value) usage(flag + " " + value + ": not a non-negative integer");
      return n;
    };
    if (flag == "-b")
      o.min_bytes = size();
    else if (flag == "-e")
      o.max_bytes = size();
    else if (flag == "-f")
      o.step_factor = uint64_t(number());
    else if (flag == "-g")
      o.gpus = number();
    else if (flag == "-n")
      o.iters = number();
    else if (flag == "-w")
      o.warmup = number();
    else if (flag == "-I")
      o.per_iter = number();
    else if (flag == "-c")
      o.check = number();
    else if (flag == "-J")
      o.json_path = value;
    else
      usage("unknown option " + flag);
  }
  if (o.gpus < 1 || o.iters < 1 || o.step_factor < 2 || o.min_bytes > o.max_bytes)
    usage("inconsistent options");
  return o;
}

Collective collective_of_program(const std::string& argv0) {
  const std::string base = argv0.substr(argv0.rfind('/') + 1);
  if (base == "all_reduce_perf") return Collective::kAllReduce;
  if (base == "all_gather_perf") return Collective::kAllGather;
  if (base == "reduce_scatter_perf") return Collective::kReduceScatter;
  if (base == "broadcast_perf") return Collective::kBroadcast;
  if (base == "reduce_perf") return Collective::kReduce;
  usage("run me as all_reduce_perf, all_gather_perf, reduce_scatter_perf, broadcast_perf or reduce_perf");
}

// nccl-tests' counts for float data: all-gather and reduce-scatter round the per-rank count down to
// 16 bytes; the printed size is the larger of the send and receive buffers.
void counts(Collective c, uint64_t size, int ranks, uint64_t& printed_size, uint64_t& count) {
  const uint64_t elements = size / 4;
  if (c == Collective::kAllGather || c == Collective::kReduceScatter) {
    count = (elements / uint64_t(ranks)) & ~uint64_t(3);
    printed_size = count * uint64_t(ranks) * 4;
  } else {
    count = elements;
    printed_size = elements * 4;
  }
}

double bus_factor(Collective c, int n) {
  if (c == Collective::kAllReduce) return 2.0 * (n - 1) / n;
  if (c == Collective::kAllGather || c == Collective::kReduceScatter) return double(n - 1) / n;
  return 1.0;
}

struct Stats {
  double min = 0, max = 0, p99 = 0, avg = 0, stdev = 0, p50 = 0, p95 = 0;
};

Stats stats_of(std::vector<double> t) {
  std::sort(t.begin(), t.end());
  const int n = int(t.size());
  const auto pct = [&](int p) { return t[size_t(std::min(n - 1, (n * p + 99) / 100 - 1))]; };
  Stats s;
  s.min = t.front();
  s.max = t.back();
  s.p50 = t[size_t(n / 2)];
  s.p95 = pct(95);
  s.p99 = pct(99);
  for (double x : t) s.avg += x;
  s.avg /= n;
  for (double x : t) s.stdev += (x - s.avg) * (x - s.avg);
  s.stdev = std::sqrt(s.stdev / n);
  return s;
}

// NCCL's INIT line with the channels it set up (NCCL src/init.cc), as NCCL_DEBUG=INFO prints it on
// every rank: NCCL_MAX_CTAS's count when set, else 32; NCCLBOT_STANDIN_CHANNELS overrides it.
void print_coll_channels(int ranks, int gpus_per_node) {
  if (env_or("NCCL_DEBUG", "") != "INFO") return;
  const int channels = env_int("NCCLBOT_STANDIN_CHANNELS", env_int("NCCL_MAX_CTAS", 32));
  for (int r = 0; r < ranks; ++r)
    std::printf(
        "standin-node%d:%d:%d [%d] NCCL INFO %d coll channels, %d collnet channels, 0 nvls channels, %d p2p "
        "channels, 2 p2p channels per peer\n",
        r / gpus_per_node, 10000 + r, 10000 + r, r % gpus_per_node, channels, channels, channels);
}

}  // namespace

int main(int argc, char** argv) {
  const Collective coll = collective_of_program(argv[0]);
  const Options o = parse_flags(argc, argv);
  const sim::FabricPreset fabric = sim::load_fabric(env_or("NCCLBOT_STANDIN_FABRIC", ""));
  const uint64_t seed = uint64_t(env_int("NCCLBOT_STANDIN_SEED", 1));
  const int procs = env_int("OMPI_COMM_WORLD_SIZE", 1);
  const int local = env_int("OMPI_COMM_WORLD_LOCAL_SIZE", procs);
  if (procs % local != 0) usage("OMPI_COMM_WORLD_SIZE is not a multiple of OMPI_COMM_WORLD_LOCAL_SIZE");
  const int nodes = procs / local, gpus_per_node = local * o.gpus, ranks = procs * o.gpus;
  const std::string program = argv[0];
  const std::string name = program.substr(program.rfind('/') + 1);
  // NCCL_ALGO / NCCL_PROTO as NCCL reads them for this program's collective: a plain value or the
  // collective's own list ("AllReduce:Ring"); one NCCL refuses ends the run as NCCL's init would.
  const auto forced = [&](const char* var) -> std::string {
    const std::string value = env_or(var, "");
    if (value.empty()) return value;
    try {
      return nccl_tests::list_for_collective(value, coll).value_or("");
    } catch (const std::invalid_argument& e) {
      std::printf("standin-node0: NCCL WARN %s=%s: %s\n", var, value.c_str(), e.what());
      std::exit(1);
    }
  };
  const auto algo = parse_nccl_algo(forced("NCCL_ALGO"));
  const auto proto = parse_proto(forced("NCCL_PROTO"));
  const sim::Deviations dev = sim::draw_deviations(fabric, seed);
  const model::Topology topo = sim::topology_for(fabric, nodes, gpus_per_node);

  if (!o.json_path.empty()) std::printf("# Writing JSON output to %s\n", o.json_path.c_str());
  std::printf("# nccl-tests version 2.19.6 nccl-headers=22807 nccl-library=22807\n");
  std::printf("# Collective test starting: %s\n", name.c_str());
  std::printf(
      "# nThread 1 nGpus %d minBytes %llu maxBytes %llu step: %llu(factor) warmup iters: %d iters: %d agg "
      "iters: 1 validation: 1 graph: 0 unalign: 0\n",
      o.gpus, (unsigned long long)o.min_bytes, (unsigned long long)o.max_bytes,
      (unsigned long long)o.step_factor, o.warmup, o.iters);
  if (o.per_iter) std::printf("# Per-Iteration Report: CUDA event timing; i_* uses max over process rows \n");
  std::printf("#\n# Using devices\n");
  nlohmann::ordered_json devices = nlohmann::ordered_json::array();
  for (int r = 0; r < ranks; ++r) {
    const std::string host = "standin-node" + std::to_string(r / gpus_per_node);
    std::printf("#  Rank %2d Group  0 Pid %6d on %10s device %2d [0000:%02x:00] Stand-in GPU\n", r, 10000 + r,
                host.c_str(), r % gpus_per_node, 0x18 + r % gpus_per_node);
    devices.push_back({{"rank", r},
                       {"group", 0},
                       {"pid", 10000 + r},
                       {"hostname", host},
                       {"device", r % gpus_per_node},
                       {"device_hex", "0000:18:00"},
                       {"device_info", "Stand-in GPU"}});
  }
  print_coll_channels(ranks, gpus_per_node);
  std::printf("#\n");
  if (o.per_iter) {
    std::printf(
        "# %10s  %12s  %8s  %6s  %6s              out-of-place (+ per-iteration)                             "
        "   "
        "in-place (+ per-iteration)\n",
        "", "", "", "", "");
    std::printf(
        "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %7s  %7s  %7s  %7s  %6s  %6s  %6s  %7s  %7s  "
        "%7s  %7s\n",
        "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "i_min", "i_max",
        "i_p99", "i_cv%", "time", "algbw", "busbw", "#wrong", "i_min", "i_max", "i_p99", "i_cv%");
  } else {
    std::printf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s\n", "size", "count",
                "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw",
                "#wrong");
  }

  const bool reduces =
      coll == Collective::kAllReduce || coll == Collective::kReduceScatter || coll == Collective::kReduce;
  const int root = coll == Collective::kBroadcast || coll == Collective::kReduce ? 0 : -1;
  nlohmann::ordered_json results = nlohmann::ordered_json::array();
  double busbw_sum = 0.0;
  int busbw_n = 0;
  for (uint64_t size = o.min_bytes; size <= o.max_bytes; size *= o.step_factor) {
    uint64_t printed = 0, count = 0;
    counts(coll, size, ranks, printed, count);
    const Context ctx{fabric.name, coll, nodes, gpus_per_node, printed};
    int slot = -1;
    if (algo && proto)
      slot = arm_slot(*algo, *proto);
    else
      slot = model::auto_pick(model::predict(topo, coll, printed));  // NCCL's own choice (AUTO)
    const double truth = slot >= 0 ? sim::true_time_us(fabric, dev, ctx, slot) : NAN;
    if (!std::isfinite(truth)) {
      std::fflush(stdout);
      std::printf(
          "standin-node0: Test NCCL failure common.cu:1055 'invalid usage (run with NCCL_DEBUG=WARN for "
          "details)'\n .. standin-node0 pid 10000: Test failure common.cu:944\n");
      return 1;
    }
    std::printf("%12llu  %12llu  %8s  %6s  %6d", (unsigned long long)printed, (unsigned long long)count,
                "float", reduces ? "sum" : "none", root);
    nlohmann::ordered_json row = {
        {"size", printed}, {"count", count}, {"type", "float"}, {"redop", reduces ? "sum" : "none"}};
    char root_text[16];
    std::snprintf(root_text, sizeof root_text, "%6i", root);
    row["root"] = root_text;
    for (int placement = 0; placement < 2; ++placement) {
      std::vector<double> times;
      for (int i = 0; i < o.iters; ++i)
        times.push_back(sim::sample_time_us(fabric, seed, ctx, slot, placement * o.iters + i, truth));
      const Stats s = stats_of(times);
      const double algbw = double(printed) / s.avg / 1e3, busbw = algbw * bus_factor(coll, ranks);
      busbw_sum += busbw;
      ++busbw_n;
      std::printf("  %7s  %6s  %6s  %6g", fit(s.avg, 7).c_str(), fit(algbw, 6).c_str(), fit(busbw, 6).c_str(),
                  0.0);
      const char* key = placement == 0 ? "out_of_place" : "in_place";
      row[key] = {{"time", s.avg}, {"alg_bw", algbw}, {"bus_bw", busbw}, {"nwrong", 0.0}};
      if (!o.per_iter) continue;
      const double cv = s.avg > 0 ? s.stdev / s.avg * 100.0 : 0.0;
      std::printf("  %7s  %7s  %7s  %7s", fit(s.min, 7).c_str(), fit(s.max, 7).c_str(), fit(s.p99, 7).c_str(),
                  fit(cv, 7).c_str());
      nlohmann::ordered_json per = {{"skipped_iterations", 0}, {"min_us", s.min},     {"max_us", s.max},
                                    {"avg_us", s.avg},         {"p50_us", s.p50},     {"p95_us", s.p95},
                                    {"p99_us", s.p99},         {"stdev_us", s.stdev}, {"cv_pct", cv},
                                    {"times_us", times}};
      if (procs > 1) {  // the slowest process is process 0; the others finish a little earlier
        nlohmann::ordered_json rows = nlohmann::ordered_json::array();
        for (int p = 0; p < procs; ++p) {
          std::vector<double> r = times;
          for (double& t : r) t *= 1.0 - 0.0005 * p;
          rows.push_back(r);
        }
        per["per_process_max_times_us"] = rows;
      }
      row[std::string(key) + "_per_iter"] = per;
    }
    std::printf("\n");
    row["actual_iterations"] = o.iters;
    row["experiment_name"] = "";
    results.push_back(row);
    if (size > o.max_bytes / o.step_factor) break;
  }
  const double avg_busbw = busbw_n ? busbw_sum / busbw_n : 0.0;
  std::printf(
      "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : %g \n#\n# Collective test concluded: %s\n\n",
      avg_busbw, name.c_str());
  if (!o.json_path.empty()) {
    nlohmann::ordered_json env = nlohmann::ordered_json::array();
    for (char** e = environ; *e; ++e) env.push_back(std::string(*e));
    nlohmann::ordered_json args = nlohmann::ordered_json::array();
    for (int i = 0; i < argc; ++i) args.push_back(std::string(argv[i]));
    nlohmann::ordered_json doc = {{"version", 3},
                                  {"start_time", "2026-01-01 00:00:00"},
                                  {"args", args},
                                  {"env", env},
                                  {"nccl_version", 22807}};
    doc["config"] = {{"nthreads", 1},
                     {"ngpus", o.gpus},
                     {"minimum_bytes", o.min_bytes},
                     {"maximum_bytes", o.max_bytes},
                     {"step_factor", o.step_factor},
                     {"warmup_iters", o.warmup},
                     {"iterations", o.iters},
                     {"aggregated_iterations", 1},
                     {"validation", 1},
                     {"graph", 0},
                     {"blocking_collectives", false},
                     {"per_iter_timing", o.per_iter != 0},
                     {"per_iter_skip", 0},
                     {"parallel_init", false},
                     {"devices", devices}};
    doc["results"] = results;
    doc["out_of_bounds"] = {{"count", 0}, {"okay", true}};
    doc["average_bus_bandwidth"] = {{"bandwidth", avg_busbw}, {"okay", "unchecked"}};
    doc["errors"] = nlohmann::ordered_json::array();
    doc["end_time"] = "2026-01-01 00:00:01";
    std::ofstream out(o.json_path, std::ios::binary);
    out << doc.dump();
    if (!out) {
      std::printf("# skipping json output; %s not accessible\n", o.json_path.c_str());
      return 1;
    }
  }
  return 0;
}
