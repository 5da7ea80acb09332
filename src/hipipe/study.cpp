#include "ncclbot/hipipe/study.hpp"

#include <fmt/format.h>

#include <toml++/toml.h>
#include <algorithm>
#include <filesystem>
#include <fstream>

#include "io/toml_reader.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/core/parse_number.hpp"
#include "ncclbot/hipipe/byte_size.hpp"
#include "ncclbot/hipipe/fabric_preset.hpp"
#include "ncclbot/hipipe/network.hpp"

namespace ncclbot::hipipe {

namespace {

// The paper's headline numbers (HiPIPE abstract), for the side-by-side in the summary.
constexpr double kPaperMeanReduction = 0.2885;
constexpr double kPaperBestUtilisation = 0.9811;
const std::vector<std::string> kBaselines = {"hierarchical", "equal-chunk", "themis", "equal-chunk-best"};

int read_int(const toml::node& n, const std::string& file, const std::string& what) {
  if (auto v = n.value_exact<int64_t>(); v && *v >= 1 && *v <= 1 << 20) return static_cast<int>(*v);
  throw InputError(file, toml_line(n), what + " must be an integer from 1 to 1048576");
}

std::vector<int> read_int_list(const toml::node& n, const std::string& file, const std::string& what) {
  std::vector<int> out;
  if (const toml::array* a = n.as_array()) {
    for (const toml::node& x : *a) out.push_back(read_int(x, file, what));
    if (out.empty()) throw InputError(file, toml_line(n), what + " is an empty list");
  } else {
    out.push_back(read_int(n, file, what));
  }
  return out;
}

double read_size(const toml::node& n, const std::string& file) {
  std::optional<std::uint64_t> v;
  if (auto i = n.value_exact<int64_t>(); i && *i > 0) v = static_cast<std::uint64_t>(*i);
  if (auto s = n.value_exact<std::string>()) v = parse_byte_size(*s);
  if (!v || *v == 0)
    throw InputError(file, toml_line(n), "a size must be a positive byte count (e.g. 1048576 or \"1M\")");
  if (static_cast<double>(*v) > kMaxMessageBytes)
    throw InputError(
        file, toml_line(n),
        "size " + std::to_string(*v) + " B: above the largest the model takes, " + kMaxMessageText);
  return static_cast<double>(*v);
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / v.size();
}

// hipipe_cases.csv: the header, then one row per case and scheduler.
void write_hipipe_cases_csv(std::ostream& csv, const std::vector<StudyCase>& cases,
                            const std::vector<Comparison>& comps) {
  csv << "fabric,nodes,gpus_per_node,ranks,dimensions,bytes,scheduler,makespan_us,chunks,"
         "max_utilisation,max_bandwidth_utilisation,hipipe_reduction\n";
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Comparison& c = comps[i];
    for (const auto& r : c.results) {
      const Schedule& s = r.schedule;
      const double red = s.scheduler == "hipipe" ? 0.0 : c.hipipe_reduction_vs(s.scheduler);
      csv << cases[i].fabric << ',' << cases[i].nodes << ',' << cases[i].gpus_per_node << ','
          << c.network.num_ranks() << ',' << c.network.num_dimensions() << ',' << format_double(c.bytes)
          << ',' << s.scheduler << ',' << format_double(s.makespan_us) << ',' << s.num_chunks() << ','
          << format_double(*std::max_element(r.utilisation.begin(), r.utilisation.end())) << ','
          << format_double(*std::max_element(r.bandwidth_utilisation.begin(), r.bandwidth_utilisation.end()))
          << ',' << format_double(red) << '\n';
    }
  }
}

// The summary's "reduction_vs": reductions over all cases, and over the cases with more than one
// dimension (where pipelining across dimensions exists at all).
void add_hipipe_reductions(nlohmann::json& summary, const std::vector<Comparison>& comps) {
  for (const std::string& b : kBaselines) {
    std::vector<double> all, multi;
    for (const Comparison& c : comps) {
      all.push_back(c.hipipe_reduction_vs(b));
      if (c.network.num_dimensions() > 1) multi.push_back(c.hipipe_reduction_vs(b));
    }
    summary["reduction_vs"][b] = {{"mean", mean(all)},
                                  {"min", *std::min_element(all.begin(), all.end())},
                                  {"max", *std::max_element(all.begin(), all.end())},
                                  {"mean_multi_dimension", mean(multi)}};
  }
}

// HiPIPE's best bottleneck bandwidth utilisation over the cases (and its case), and its best busy
// utilisation.
struct HipipeBestUtilisation {
  double bandwidth = 0, busy = 0;
  std::size_t case_index = 0;
};
HipipeBestUtilisation hipipe_best_utilisation(const std::vector<Comparison>& comps) {
  HipipeBestUtilisation best;
  for (std::size_t i = 0; i < comps.size(); ++i) {
    const SchedulerResult& h = comps[i].result("hipipe");
    const double bw = *std::max_element(h.bandwidth_utilisation.begin(), h.bandwidth_utilisation.end());
    best.busy = std::max(best.busy, *std::max_element(h.utilisation.begin(), h.utilisation.end()));
    if (bw > best.bandwidth) best.bandwidth = bw, best.case_index = i;
  }
  return best;
}

// The cases' fabrics, each once, in the order they first appear.
std::vector<std::string> hipipe_case_fabrics(const std::vector<StudyCase>& cases) {
  std::vector<std::string> fabrics;
  for (const auto& c : cases)
    if (std::find(fabrics.begin(), fabrics.end(), c.fabric) == fabrics.end()) fabrics.push_back(c.fabric);
  return fabrics;
}

// The summary's "per_fabric": per fabric, the mean reduction against each baseline.
void add_hipipe_per_fabric(nlohmann::json& summary, const std::vector<StudyCase>& cases,
                           const std::vector<Comparison>& comps, const std::vector<std::string>& fabrics) {
  for (const std::string& f : fabrics) {
    nlohmann::json row;
    for (const std::string& b : kBaselines) {
      std::vector<double> v;
      for (std::size_t i = 0; i < cases.size(); ++i)
        if (cases[i].fabric == f) v.push_back(comps[i].hipipe_reduction_vs(b));
      row[b] = mean(v);
    }
    summary["per_fabric"][f] = row;
  }
}

// hipipe_summary.md: the reductions and utilisation beside the paper's, then the per-fabric table.
void write_hipipe_summary_markdown(std::ostream& md, const StudyResult& result, const nlohmann::json& summary,
                                   const HipipeBestUtilisation& best,
                                   const std::vector<std::string>& fabrics) {
  const auto& cases = result.study.cases;
  md << "# HiPIPE reconstruction: study summary\n\n";
  md << fmt::format("{} cases from `{}`.\n\n", cases.size(), result.study.file);
  md << "| HiPIPE vs | mean reduction | min | max | mean (D > 1 only) | paper |\n|---|---|---|---|---|---|\n";
  for (const std::string& b : kBaselines) {
    const auto& r = summary["reduction_vs"][b];
    md << fmt::format("| {} | {:.2f}% | {:.2f}% | {:.2f}% | {:.2f}% | {} |\n", b,
                      100 * r["mean"].get<double>(), 100 * r["min"].get<double>(),
                      100 * r["max"].get<double>(), 100 * r["mean_multi_dimension"].get<double>(),
                      b == "hierarchical" ? "28.85% (vs prior hierarchical schemes)" : "-");
  }
  md << fmt::format(
      "\nBest bandwidth utilisation reached by HiPIPE (bottleneck dimension, time moving bytes / makespan): "
      "**{:.2f}%** ({} at {} nodes, {:.0f} B); paper: 98.11%. Best busy utilisation (latency included): "
      "{:.2f}%.\n\n",
      100 * best.bandwidth, cases[best.case_index].fabric, cases[best.case_index].nodes,
      cases[best.case_index].bytes, 100 * best.busy);
  md << "| fabric |";
  for (const std::string& b : kBaselines) md << " vs " << b << " |";
  md << "\n|---|";
  for (std::size_t i = 0; i < kBaselines.size(); ++i) md << "---|";
  md << "\n";
  for (const std::string& f : fabrics) {
    md << "| " << f << " |";
    for (const std::string& b : kBaselines)
      md << fmt::format(" {:.2f}% |", 100 * summary["per_fabric"][f][b].get<double>());
    md << "\n";
  }
  md << "\nThe numbers come from a reconstruction (docs/hipipe.md): the paper's own LP, baselines and "
        "testbed are unknown, so they are set beside the paper's, not compared as a replication.\n";
}

}  // namespace

Study read_study(const std::string& path) {
  const TomlReader reader(path);
  const toml::table root = reader.parse_file();
  reader.only_keys(root, "the study file", {"sizes", "options", "topology"});
  Study study;
  study.file = path;
  if (const toml::node* options = reader.find(root, "options")) {
    for (auto&& [key, node] : reader.table(*options, "[options]")) {
      const std::string k(key.str());
      if (k == "baseline_chunks")
        study.options.baseline_chunks = read_int(node, path, k);
      else if (k == "max_chunks")
        study.options.max_chunks = read_int(node, path, k);
      else if (k == "search_points")
        study.options.search_points = read_int(node, path, k);
      else if (k == "lp_refinements")
        study.options.lp_refinements = read_int(node, path, k);
      else
        throw InputError(path, toml_line(node), "unknown option '" + k + "'");
    }
  }
  try {
    validate_options(study.options);
  } catch (const UsageError& e) {
    throw InputError(path, 0, e.what());
  }
  const toml::array* sizes = root["sizes"].as_array();
  if (!sizes || sizes->empty()) throw InputError(path, 0, "missing 'sizes' (a list of message sizes)");
  std::vector<double> bytes;
  for (const toml::node& n : *sizes) bytes.push_back(read_size(n, path));
  const toml::array* topologies = root["topology"].as_array();
  if (!topologies || topologies->empty()) throw InputError(path, 0, "no [[topology]] tables");
  for (const toml::node& node : *topologies) {
    const toml::table* t = node.as_table();
    if (!t) throw InputError(path, toml_line(node), "[[topology]] must be a table");
    reader.only_keys(*t, "[[topology]]", {"fabric", "nodes", "gpus_per_node"});
    const auto fabric_name = (*t)["fabric"].value<std::string>();
    if (!fabric_name) throw InputError(path, toml_line(node), "[[topology]] needs fabric = \"NAME\"");
    FabricPreset preset;
    try {
      preset = load_fabric_preset(*fabric_name);
    } catch (const UsageError& e) {
      throw InputError(path, toml_line(node), e.what());
    } catch (const InputError& e) {  // a fabric file's own message, said where the study names it
      throw InputError(path, toml_line(node), e.what());
    }
    const std::vector<int> nodes = t->contains("nodes") ? read_int_list(*t->get("nodes"), path, "nodes")
                                                        : std::vector<int>{preset.nodes};
    const std::vector<int> gpus = t->contains("gpus_per_node")
                                      ? read_int_list(*t->get("gpus_per_node"), path, "gpus_per_node")
                                      : std::vector<int>{preset.gpus_per_node};
    for (int n : nodes)
      for (int g : gpus) {
        try {
          build_network(preset, n, g);
        } catch (const UsageError& e) {
          throw InputError(path, toml_line(node), e.what());
        }
        for (double b : bytes) study.cases.push_back({*fabric_name, n, g, b});
      }
  }
  return study;
}

StudyResult run_study(const Study& study, const std::function<void()>& on_case_done) {
  StudyResult r;
  r.study = study;
  for (const StudyCase& c : study.cases) {
    const Network net = build_network(load_fabric_preset(c.fabric), c.nodes, c.gpus_per_node);
    r.comparisons.push_back(compare_schedulers(net, c.bytes, study.options));
    if (on_case_done) on_case_done();
  }
  return r;
}

nlohmann::json write_study_outputs(const StudyResult& result, const std::string& out_dir) {
  std::filesystem::create_directories(out_dir);
  const auto& cases = result.study.cases;
  const auto& comps = result.comparisons;

  std::ofstream csv(out_dir + "/hipipe_cases.csv");
  write_hipipe_cases_csv(csv, cases, comps);
  if (!csv) throw InputError(out_dir + "/hipipe_cases.csv", 0, "cannot write");

  nlohmann::json summary;
  summary["study"] = result.study.file;
  summary["cases"] = cases.size();
  summary["paper"] = {{"mean_reduction", kPaperMeanReduction},
                      {"best_bandwidth_utilisation", kPaperBestUtilisation}};
  add_hipipe_reductions(summary, comps);
  const HipipeBestUtilisation best = hipipe_best_utilisation(comps);
  summary["hipipe_best_bandwidth_utilisation"] = {{"value", best.bandwidth},
                                                  {"fabric", cases[best.case_index].fabric},
                                                  {"nodes", cases[best.case_index].nodes},
                                                  {"bytes", cases[best.case_index].bytes}};
  summary["hipipe_best_busy_utilisation"] = best.busy;
  const std::vector<std::string> fabrics = hipipe_case_fabrics(cases);
  add_hipipe_per_fabric(summary, cases, comps, fabrics);
  std::ofstream(out_dir + "/hipipe_summary.json") << summary.dump(2) << "\n";

  std::ofstream md(out_dir + "/hipipe_summary.md");
  write_hipipe_summary_markdown(md, result, summary, best, fabrics);
  return summary;
}

}  // namespace ncclbot::hipipe
