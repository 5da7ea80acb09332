#include "ncclbot/deployed/observation_cost.hpp"

#include <cmath>

#include "ncclbot/core/data_rows.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/core/names.hpp"
#include "ncclbot/core/nccl_version.hpp"
#include "ncclbot/core/parse_number.hpp"
#include "ncclbot_generated/observation_costs.hpp"

namespace ncclbot {

std::vector<ObservationCostRow> parse_observation_costs(std::string_view text, const std::string& path) {
  std::vector<ObservationCostRow> out;
  for_each_data_row(text, "nccl,collective,min_bytes,max_bytes,busbw_loss", path,
                    [&](long line_no, std::string_view line, const std::vector<std::string_view>& f) {
                      const auto bad = [&](const std::string& why) {
                        throw InputError(path, line_no, why + " in '" + std::string(line) + "'");
                      };
                      if (f.size() != 5) bad("expected NCCL,COLLECTIVE,MIN_BYTES,MAX_BYTES,BUSBW_LOSS");
                      ObservationCostRow r;
                      r.nccl = exact_minor_version(f[0]);
                      if (r.nccl.empty()) bad("the NCCL version must be MAJOR.MINOR (like 2.31)");
                      const auto coll = parse_collective(f[1]);
                      if (!coll)
                        bad("unknown collective '" + std::string(f[1]) + "' (" +
                            std::string(collective_names_list()) + ")");
                      r.collective = *coll;
                      const auto lo = parse_uint(f[2]), hi = parse_uint(f[3]);
                      if (!lo || !hi || *lo > *hi) bad("expected sizes MIN_BYTES <= MAX_BYTES");
                      r.min_bytes = *lo;
                      r.max_bytes = *hi;
                      const auto loss = parse_double(f[4]);
                      if (!loss || !std::isfinite(*loss) || *loss < 0.0 || *loss >= 1.0)
                        bad("busbw_loss must be in [0, 1)");
                      r.busbw_loss = *loss;
                      for (const ObservationCostRow& o : out)
                        if (o.nccl == r.nccl && o.collective == r.collective && o.min_bytes <= r.max_bytes &&
                            r.min_bytes <= o.max_bytes)
                          bad("overlaps an earlier row of NCCL " + r.nccl + " " +
                              std::string(collective_name(r.collective)));
                      out.push_back(std::move(r));
                    });
  return out;
}

const std::vector<ObservationCostRow>& compiled_observation_costs() {
  static const std::vector<ObservationCostRow> rows =
      parse_observation_costs(generated::kObservationCostsCsv, std::string(generated::kObservationCostsPath));
  return rows;
}

std::string observation_costs_text(const std::vector<ObservationCostRow>& rows) {
  std::string out;
  for (const ObservationCostRow& r : rows)
    out += r.nccl + "," + std::string(collective_name(r.collective)) + "," + std::to_string(r.min_bytes) +
           "," + std::to_string(r.max_bytes) + "," + format_double(r.busbw_loss) + "\n";
  return out;
}

bool observation_cost_measured(std::string_view nccl) {
  for (const ObservationCostRow& r : compiled_observation_costs())
    if (r.nccl == nccl) return true;
  return false;
}

double observation_cost_fraction(std::string_view nccl, const Context& c) {
  for (const ObservationCostRow& r : compiled_observation_costs())
    if (r.nccl == nccl && r.collective == c.collective && r.min_bytes <= c.bytes && c.bytes <= r.max_bytes)
      return 1.0 / (1.0 - r.busbw_loss) - 1.0;
  return 0.0;
}

std::vector<double> observation_costs(const Sweep& sweep, const ObservationCharge& charge) {
  std::vector<double> f(size_t(sweep.num_contexts()), 0.0);
  bool any = false;
  for (int c = 0; c < sweep.num_contexts(); ++c) {
    f[size_t(c)] = charge.flat ? *charge.flat : observation_cost_fraction(charge.nccl, sweep.context(c));
    any = any || f[size_t(c)] != 0.0;
  }
  if (!any) f.clear();
  return f;
}

std::string describe_observation_charge(const ObservationCharge& charge) {
  if (charge.flat)
    return "every watched call costs " + format_double(*charge.flat) +
           " of its own latency more (set by hand)";
  if (!observation_cost_measured(charge.nccl))
    return "no cost of watching is measured for NCCL " + charge.nccl +
           " (data/observation_costs.csv), so none is charged";
  return "watched calls cost what data/observation_costs.csv gives for NCCL " + charge.nccl +
         " (NVIDIA/nccl #2355: AllReduce 128 KB-4 MB; nothing elsewhere)";
}

}  // namespace ncclbot
