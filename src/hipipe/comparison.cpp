#include "ncclbot/hipipe/comparison.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <ostream>
#include <stdexcept>

#include "ncclbot/hipipe/closed_form.hpp"
#include "ncclbot/hipipe/feasibility.hpp"

namespace ncclbot::hipipe {

namespace {

// A chunk size with the binary unit that shows it in four significant digits: 812 B, 19.48 MiB,
// 1.25 GiB (one unit for all would print a 2 KiB chunk of a TiB plan as 0.000).
std::string chunk_size_text(double bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (unit + 1 < 5 && bytes >= 1024.0) {
    bytes /= 1024.0;
    ++unit;
  }
  return fmt::format("{:.4g} {}", bytes, kUnits[unit]);
}

}  // namespace

const SchedulerResult& Comparison::result(const std::string& scheduler) const {
  for (const auto& r : results)
    if (r.schedule.scheduler == scheduler) return r;
  throw std::out_of_range("no scheduler named " + scheduler);
}

double Comparison::hipipe_reduction_vs(const std::string& baseline) const {
  const double base = result(baseline).schedule.makespan_us;
  return (base - result("hipipe").schedule.makespan_us) / base;
}

Comparison compare_schedulers(const Network& network, double bytes, const SchedulerOptions& options) {
  Comparison c;
  c.network = network;
  c.bytes = bytes;
  c.sequential_us = sequential_allreduce_us(network, bytes);
  c.estimated_chunks = estimated_chunk_count(network, bytes, options.max_chunks);
  for (Schedule& s : schedule_all(network, bytes, options)) {
    const auto violations = schedule_violations(network, bytes, s);
    if (!violations.empty())
      throw std::logic_error("scheduler " + s.scheduler +
                             " produced an infeasible schedule: " + violations.front());
    SchedulerResult r;
    const auto busy = dimension_busy_us(network, s);
    const auto data = dimension_data_us(network, s);
    for (int d = 0; d < network.num_dimensions(); ++d) {
      r.utilisation.push_back(busy[d] / s.makespan_us);
      r.bandwidth_utilisation.push_back(data[d] / s.makespan_us);
    }
    r.schedule = std::move(s);
    c.results.push_back(std::move(r));
  }
  return c;
}

nlohmann::json comparison_json(const Comparison& c) {
  nlohmann::json j;
  j["fabric"] = c.network.name;
  j["bytes"] = c.bytes;
  j["ranks"] = c.network.num_ranks();
  for (const auto& d : c.network.dimensions)
    j["dimensions"].push_back({{"name", d.name},
                               {"group_size", d.group_size},
                               {"latency_us", d.latency_us},
                               {"bandwidth_GBps", d.bandwidth_GBps}});
  j["closed_form"] = {{"sequential_us", c.sequential_us}, {"estimated_chunks", c.estimated_chunks}};
  for (const auto& r : c.results) {
    const Schedule& s = r.schedule;
    nlohmann::json plan = nlohmann::json::array();
    for (int k = 0; k < s.num_chunks(); ++k) {
      nlohmann::json order = nlohmann::json::array();
      for (int d : s.rs_orders[k]) order.push_back(c.network.dimensions[d].name);
      plan.push_back({{"bytes", s.chunk_bytes[k]}, {"reduce_scatter_order", order}});
    }
    nlohmann::json util, bw;
    for (int d = 0; d < c.network.num_dimensions(); ++d) {
      util[c.network.dimensions[d].name] = r.utilisation[d];
      bw[c.network.dimensions[d].name] = r.bandwidth_utilisation[d];
    }
    nlohmann::json entry = {{"name", s.scheduler}, {"makespan_us", s.makespan_us}, {"chunks", s.num_chunks()},
                            {"utilisation", util}, {"bandwidth_utilisation", bw},  {"chunk_plan", plan}};
    if (s.scheduler != "hipipe") entry["hipipe_reduction"] = c.hipipe_reduction_vs(s.scheduler);
    j["schedulers"].push_back(entry);
  }
  return j;
}

void print_comparison_table(const Comparison& c, std::ostream& os) {
  os << fmt::format("fabric {} ({} ranks:", c.network.name, c.network.num_ranks());
  for (const auto& d : c.network.dimensions)
    os << fmt::format(" {} {} x {:g} GB/s {:g} us", d.name, d.group_size, d.bandwidth_GBps, d.latency_us);
  os << fmt::format("), all-reduce of {:.0f} B; closed-form K* = {:.2f}\n", c.bytes, c.estimated_chunks);
  os << fmt::format("{:<17} {:>14} {:>7} {:>10}", "scheduler", "makespan_us", "chunks", "hipipe_gain");
  for (const auto& d : c.network.dimensions) os << fmt::format(" {:>12}", "util_" + d.name);
  os << "\n";
  for (const auto& r : c.results) {
    const Schedule& s = r.schedule;
    const std::string gain =
        s.scheduler == "hipipe" ? "-" : fmt::format("{:.2f}%", 100 * c.hipipe_reduction_vs(s.scheduler));
    os << fmt::format("{:<17} {:>14.2f} {:>7} {:>10}", s.scheduler, s.makespan_us, s.num_chunks(), gain);
    for (double u : r.utilisation) os << fmt::format(" {:>11.2f}%", 100 * u);
    os << "\n";
  }
  const Schedule& h = c.result("hipipe").schedule;
  os << "hipipe chunk plan:";
  const int shown = std::min(h.num_chunks(), 24);
  for (int k = 0; k < shown; ++k) os << " " << chunk_size_text(h.chunk_bytes[k]);
  if (shown < h.num_chunks()) os << fmt::format(" ... ({} chunks)", h.num_chunks());
  os << "\n";
}

}  // namespace ncclbot::hipipe
