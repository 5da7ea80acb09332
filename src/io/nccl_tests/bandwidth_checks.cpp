// nccl-tests computes algbw = size / time and busbw = algbw * factor(collective, ranks) from the
// same numbers it prints, so both hold up to printing precision. A mismatch means the size column,
// the rank count or the collective is not what the log claims (e.g. two 8-rank jobs sharing one
// file whose device list reads as 16 ranks).
#include <cmath>
#include <cstdio>

#include "ncclbot/core/parse_number.hpp"
#include "ncclbot/io/nccl_tests/checks.hpp"

namespace ncclbot::nccl_tests {
namespace {

// Slack on top of the printed rounding: time and bandwidths come from the same double.
constexpr double kRelativeSlack = 0.01;

bool overlaps(double lo1, double hi1, double lo2, double hi2) {
  return hi1 >= lo2 * (1.0 - kRelativeSlack) && lo1 <= hi2 * (1.0 + kRelativeSlack);
}

bool algbw_matches(uint64_t bytes, const Measurement& m) {
  const double t_hi = m.time_us.value + m.time_us.half_step;
  const double t_lo = std::max(m.time_us.value - m.time_us.half_step, 1e-12);
  // GB/s with GB = 1e9 B and time in µs: bytes / (t_us * 1e3).
  return overlaps(double(bytes) / (t_hi * 1e3), double(bytes) / (t_lo * 1e3),
                  m.algbw.value - m.algbw.half_step, m.algbw.value + m.algbw.half_step);
}

bool busbw_matches(const Measurement& m, double factor) {
  return overlaps((m.algbw.value - m.algbw.half_step) * factor, (m.algbw.value + m.algbw.half_step) * factor,
                  m.busbw.value - m.busbw.half_step, m.busbw.value + m.busbw.half_step);
}

// The rank count a busbw/algbw ratio implies, or 0 when none does.
int ranks_implied(Collective c, double ratio) {
  double n = 0;
  switch (c) {
    case Collective::kAllReduce:
      n = ratio < 2.0 ? 2.0 / (2.0 - ratio) : 0;
      break;
    case Collective::kAllGather:
    case Collective::kReduceScatter:
    case Collective::kAllToAll:
    case Collective::kGather:
    case Collective::kScatter:
      n = ratio < 1.0 ? 1.0 / (1.0 - ratio) : 0;
      break;
    default:
      return 0;
  }
  return n >= 1.0 && n < 1e7 ? int(std::lround(n)) : 0;
}

// A measured value with `decimals` places; one too large to read that way (a log's 300-digit time)
// in its shortest form instead.
std::string fixed(double v, int decimals) {
  if (!(std::fabs(v) < 1e12)) return format_double(v);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

}  // namespace

double bus_factor(Collective c, int ranks) {
  const double n = ranks;
  switch (c) {
    case Collective::kAllReduce:
      return 2.0 * (n - 1.0) / n;
    case Collective::kAllGather:
    case Collective::kReduceScatter:
    case Collective::kAllToAll:
    case Collective::kGather:
    case Collective::kScatter:
      return (n - 1.0) / n;
    default:
      return 1.0;
  }
}

void check_bandwidths(const Run& run, Collective c, int ranks, const std::string& file,
                      std::vector<Diagnostic>& out) {
  const double factor = bus_factor(c, ranks);
  int algbw_bad = 0, busbw_bad = 0, checked = 0;
  const Row* first_algbw = nullptr;
  const Row* first_busbw = nullptr;
  const Measurement* busbw_example = nullptr;
  double busbw_sum = 0;
  int busbw_n = 0;
  for (const Row& row : run.rows) {
    for (const Measurement* m : {&row.out_of_place, row.in_place ? &*row.in_place : nullptr}) {
      if (!m) continue;
      ++checked;
      busbw_sum += m->busbw.value;
      ++busbw_n;
      if (!algbw_matches(row.bytes, *m) && algbw_bad++ == 0) first_algbw = &row;
      if (!busbw_matches(*m, factor)) {
        if (busbw_bad++ == 0) first_busbw = &row;
        // The clearest witness of the ratio is the row with the largest bandwidth.
        if (!busbw_example || m->algbw.value > busbw_example->algbw.value) busbw_example = m;
      }
    }
  }
  if (algbw_bad > 0)
    out.push_back({file, first_algbw->line,
                   "algbw differs from size/time in " + std::to_string(algbw_bad) + " of " +
                       std::to_string(checked) + " measurements (first on this row: size " +
                       std::to_string(first_algbw->bytes) + " B, time " +
                       fixed(first_algbw->out_of_place.time_us.value, 2) + " us, algbw " +
                       fixed(first_algbw->out_of_place.algbw.value, 2) + " GB/s)"});
  if (busbw_bad > 0) {
    std::string why = "busbw/algbw should be " + fixed(factor, 4) + " for " + std::to_string(ranks) +
                      " ranks, but " + std::to_string(busbw_bad) + " of " + std::to_string(checked) +
                      " measurements disagree";
    if (busbw_example && busbw_example->algbw.value > 0) {
      const double ratio = busbw_example->busbw.value / busbw_example->algbw.value;
      why += " (busbw " + fixed(busbw_example->busbw.value, 2) + " / algbw " +
             fixed(busbw_example->algbw.value, 2) + " = " + fixed(ratio, 4);
      if (const int n = ranks_implied(c, ratio); n > 0 && n != ranks)
        why += ", which fits " + std::to_string(n) + " ranks";
      why += ")";
    }
    out.push_back({file, first_busbw->line, why + "; first on this row"});
  }
  // "Avg bus bandwidth" is the mean busbw of every printed measurement of the run.
  if (run.avg_busbw && busbw_n > 0 && run.trailer_line > 0) {
    const double mean = busbw_sum / busbw_n;
    const double tolerance = 0.006 + 1e-4 * std::abs(*run.avg_busbw);
    if (std::abs(mean - *run.avg_busbw) > tolerance)
      out.push_back({file, run.trailer_line,
                     "trailer's average busbw " + fixed(*run.avg_busbw, 3) +
                         " differs from the mean of the rows " + fixed(mean, 3) +
                         ": rows are missing or belong to another run"});
  }
}

}  // namespace ncclbot::nccl_tests
