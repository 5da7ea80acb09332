#include "report/telemetry_report.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace ncclbot::report {
namespace {

std::string us(double v) {
  const double a = std::abs(v);
  if (a >= 1e6) return fmt::format("{:.3f} s", v / 1e6);
  if (a >= 1e3) return fmt::format("{:.2f} ms", v / 1e3);
  return fmt::format("{:.2f} us", v);
}

std::string with_ci(const nlohmann::json& x, bool percent = false) {
  if (!x.contains("value") || x["value"].is_null()) return "n/a";
  const auto f = [&](const nlohmann::json& v) {
    if (v.is_null()) return std::string("?");
    return percent ? fmt::format("{:.1f}%", v.get<double>() * 100) : us(v.get<double>());
  };
  return f(x["value"]) + " [" + f(x["ci"][0]) + ", " + f(x["ci"][1]) + "]";
}

std::string context_name(const nlohmann::json& c) {
  return fmt::format("{} {} B, {}x{}", c["collective"].get<std::string>(), c["bytes"].get<uint64_t>(),
                     c["nodes"].get<uint32_t>(),
                     c["ranks"].get<uint32_t>() / std::max(1u, c["nodes"].get<uint32_t>()));
}

// The "Was it worth it?" section: time saved against NCCL's choice, departures and contexts lost.
void telemetry_worth_it_section(std::vector<Block>& out, const nlohmann::json& total) {
  out.push_back(heading(2, "Was it worth it?"));
  Block summary = bullets({});
  if (total.contains("saved_us")) {
    summary.items.push_back(
        "Time saved against NCCL's own choice: " + with_ci(total["saved_us"]) + " (" +
        (total.contains("saved_share") ? with_ci(total["saved_share"], true) : std::string("no share")) +
        " of NCCL's estimated time).");
    summary.items.push_back("Measured time of the estimated contexts: " +
                            us(total["measured_us_of_estimated_contexts"].get<double>()) +
                            "; NCCL's choice would have taken " + with_ci(total["nccl_estimate_us"]) + ".");
  } else {
    summary.items.push_back(
        "Time saved against NCCL's own choice: no estimate (NCCL's pick was played in no "
        "context, so no call shows what it would have taken).");
  }
  summary.items.push_back(
      "Departures from NCCL's pick: " + std::to_string(total["departures"].get<size_t>()) + " of " +
      std::to_string(total["calls"].get<size_t>()) + " calls (" + with_ci(total["departure_share"], true) +
      ", Wilson interval).");
  summary.items.push_back(
      fmt::format("Contexts where the plugin was slower than NCCL's choice (the whole interval "
                  "below zero): {}; contexts without an estimate (NCCL's pick never played): {}.",
                  total["contexts_lost"].get<size_t>(), total["contexts_without_estimate"].get<size_t>()));
  out.push_back(summary);
}

// The "Where it lost" section: the contexts whose saving interval lies wholly below zero.
void telemetry_lost_section(std::vector<Block>& out, const std::vector<nlohmann::json>& contexts) {
  Block lost = table_block({"context", "calls", "NCCL's arm", "saved per call", "saved in total"});
  for (const auto& c : contexts)
    if (c.value("lost", false))
      lost.rows.push_back({context_name(c), std::to_string(c["calls"].get<size_t>()), c["nccl_arm"],
                           with_ci(c["saved_per_call_us"]), with_ci(c["saved_total_us"])});
  out.push_back(heading(2, "Where it lost"));
  if (lost.rows.empty())
    out.push_back(paragraph("No context's interval lies wholly below zero."));
  else
    out.push_back(lost);
}

// The "Per context" section: one row per context, in the order given.
void telemetry_per_context_section(std::vector<Block>& out, const std::vector<nlohmann::json>& contexts) {
  out.push_back(heading(2, "Per context"));
  Block table = table_block({"context", "calls", "NCCL's arm", "departures", "mean latency",
                             "NCCL's choice (est.)", "saved per call", "saved in total"});
  for (const auto& c : contexts) {
    const bool est = c.contains("saved_total_us");
    table.rows.push_back({context_name(c), std::to_string(c["calls"].get<size_t>()), c["nccl_arm"],
                          with_ci(c["departure_share"], true), with_ci(c["mean_latency_us"]),
                          est ? with_ci(c["nccl_estimate_us"]) : "no estimate",
                          est ? with_ci(c["saved_per_call_us"]) : "-",
                          est ? with_ci(c["saved_total_us"]) : "-"});
  }
  out.push_back(table);
}

// The "Learning curves" and "Recomputing" sections: the figures and the command that redoes it all.
void telemetry_curves_and_recompute_sections(std::vector<Block>& out, const nlohmann::json& t,
                                             const std::vector<std::string>& logs,
                                             const nlohmann::json& figures, const std::string& figures_note) {
  out.push_back(heading(2, "Learning curves"));
  out.push_back(paragraph(
      "Each context's calls in index order, in equal buckets: the share that departed from NCCL's pick "
      "(Wilson interval) and the mean measured latency (normal interval) are in telemetry.json "
      "(`per_context[].learning_curve`)."));
  for (const auto& f : figures) {
    out.push_back(figure("figures/" + f.value("file", ""), f.value("caption", "")));
  }
  if (!figures_note.empty()) out.push_back(paragraph("No figures: " + figures_note + "."));
  Block recompute = code("");
  std::string cmd = "ncclbot telemetry";
  for (const auto& l : logs) cmd += " " + l;
  recompute.text = cmd + " --out DIR --resamples " + std::to_string(t["resamples"].get<int>());
  out.push_back(heading(2, "Recomputing"));
  out.push_back(paragraph(
      "Every number comes from the logs alone (decision records and NCCL's cost tables); telemetry.json "
      "holds them all. The same command gives the same numbers:"));
  out.push_back(recompute);
}

}  // namespace

std::vector<Block> build_telemetry_report(const nlohmann::json& t, const std::vector<std::string>& logs,
                                          const nlohmann::json& figures, const std::string& figures_note) {
  std::vector<Block> out;
  const auto& total = t["total"];
  const std::string level = fmt::format("{:.0f}%", t["level"].get<double>() * 100);
  out.push_back(heading(1, "ncclbot telemetry: what the plugin did"));
  out.push_back(paragraph(fmt::format(
      "{} measured calls of policy `{}` over {} contexts, from {} log file(s). Intervals are {} "
      "percentile block bootstrap intervals ({} resamples); {}.",
      total["calls"].get<size_t>(), t["behaviour"].get<std::string>(), t["contexts"].get<size_t>(),
      logs.size(), level, t["resamples"].get<int>(), t["method"].get<std::string>())));
  telemetry_worth_it_section(out, total);

  std::vector<nlohmann::json> contexts(t["per_context"].begin(), t["per_context"].end());
  const auto saved = [](const nlohmann::json& c) {
    return c.contains("saved_total_us") ? c["saved_total_us"]["value"].get<double>() : 0.0;
  };
  std::stable_sort(contexts.begin(), contexts.end(),
                   [&](const auto& a, const auto& b) { return saved(a) < saved(b); });
  telemetry_lost_section(out, contexts);
  telemetry_per_context_section(out, contexts);
  telemetry_curves_and_recompute_sections(out, t, logs, figures, figures_note);
  return out;
}

}  // namespace ncclbot::report
