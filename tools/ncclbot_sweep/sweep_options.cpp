#include "sweep_options.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <string_view>

#include "ncclbot/core/error.hpp"
#include "ncclbot/core/names.hpp"
#include "ncclbot/core/parse_number.hpp"
#include "ncclbot/io/nccl_tests/manifest.hpp"

namespace ncclbot::sweep_tool {

namespace {

std::vector<std::string> split_commas(const std::string& option, const std::string& list) {
  std::vector<std::string> items;
  size_t start = 0;
  while (true) {
    const size_t end = list.find(',', start);
    std::string item = list.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (item.empty()) throw UsageError(option + ": an empty item in '" + list + "'");
    items.push_back(std::move(item));
    if (end == std::string::npos) return items;
    start = end + 1;
  }
}

// Each item of `list` through `parse`, or a UsageError naming the item and the valid spellings.
template <typename T, typename Parse>
std::vector<T> parse_list(const std::string& option, const std::string& list, Parse parse,
                          std::string_view valid) {
  std::vector<T> out;
  for (const std::string& item : split_commas(option, list)) {
    const std::optional<T> v = parse(item);
    if (!v) throw UsageError(option + ": '" + item + "' is not one of " + std::string(valid));
    out.push_back(*v);
  }
  return out;
}

std::optional<uint64_t> positive_size(const std::string& s) {
  const auto v = parse_uint(s);
  return v && *v > 0 ? v : std::nullopt;
}

std::optional<uint16_t> channel_count(const std::string& s) {
  const auto v = parse_uint(s);
  return v && *v <= uint64_t(kMaxChannels) ? std::optional<uint16_t>(uint16_t(*v)) : std::nullopt;
}

std::vector<Arm> arm_product(const std::vector<Algo>& algos, const std::vector<Proto>& protos,
                             const std::vector<uint16_t>& channels) {
  std::vector<Arm> arms;
  for (Algo a : algos)
    for (Proto p : protos)
      for (uint16_t c : channels) arms.push_back(Arm{a, p, c, 0});
  std::sort(arms.begin(), arms.end());
  arms.erase(std::unique(arms.begin(), arms.end()), arms.end());
  return arms;
}

struct RawOptions {
  std::string collectives = "allreduce", bytes, algos = "Tree,Ring", protos = "LL,LL128,Simple",
              channels = "0";
};

void add_options(CLI::App& app, RawOptions& raw, SweepOptions& opt) {
  app.add_option("--collectives", raw.collectives,
                 "collectives, comma-separated (allreduce, allgather, "
                 "reducescatter, broadcast, reduce)")
      ->capture_default_str();
  app.add_option("--bytes", raw.bytes, "message sizes in bytes, comma-separated (nccl-tests' size)")
      ->required();
  app.add_option("--algos", raw.algos, "algorithms, comma-separated (NCCL's names)")->capture_default_str();
  app.add_option("--protos", raw.protos, "protocols, comma-separated (LL, LL128, Simple)")
      ->capture_default_str();
  app.add_option("--channels", raw.channels, "channel counts (minCTAs = maxCTAs), 0 = NCCL's own, at most 64")
      ->capture_default_str();
  app.add_option("--iterations", opt.iterations, "timed calls of every arm per context")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  app.add_option("--warmup", opt.warmup, "untimed rounds over every arm before the timed ones")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  app.add_option("--seed", opt.seed, "seed of the call order")->capture_default_str();
  app.add_option("--fabric", opt.fabric, "the fabric column's value")->capture_default_str();
  app.add_option("--out", opt.out, "the sweep CSV to write")->required();
}

}  // namespace

SweepOptions parse_sweep_options(int argc, const char* const* argv) {
  SweepOptions opt;
  RawOptions raw;
  CLI::App app{"ncclbot-sweep: time forced arms per call through NCCL 2.31+'s nccl*Config (docs/campaign.md)",
               "ncclbot-sweep"};
  add_options(app, raw, opt);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    opt.help = true;
    opt.help_text = app.help();
    return opt;
  } catch (const CLI::ParseError& e) {
    throw UsageError(e.what());
  }
  opt.collectives = parse_list<Collective>("--collectives", raw.collectives, parse_collective,
                                           "AllReduce, AllGather, ReduceScatter, Broadcast, Reduce");
  for (Collective c : opt.collectives)
    if (int(c) > int(Collective::kAllReduce))
      throw UsageError("--collectives: " + std::string(collective_name(c)) +
                       " is not swept (AllReduce, AllGather, ReduceScatter, Broadcast, Reduce)");
  opt.bytes = parse_list<uint64_t>("--bytes", raw.bytes, positive_size, "a positive whole number of bytes");
  opt.arms = arm_product(parse_list<Algo>("--algos", raw.algos, parse_nccl_algo, nccl_algo_names_list()),
                         parse_list<Proto>("--protos", raw.protos, parse_proto, proto_names_list()),
                         parse_list<uint16_t>("--channels", raw.channels, channel_count, "0..64"));
  if (!nccl_tests::valid_fabric_name(opt.fabric))
    throw UsageError(
        "--fabric: '" + opt.fabric +
        "' is not 1-64 characters of letters, digits, '-', '_' or '.' (the sweep's fabric column)");
  return opt;
}

}  // namespace ncclbot::sweep_tool
