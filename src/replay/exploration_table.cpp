#include "ncclbot/replay/exploration_table.hpp"

#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "ncclbot/core/portable_math.hpp"
#include "ncclbot/policy/confidence_bound.hpp"

namespace ncclbot {
namespace {

struct BonusTable {
  double total0;
  std::vector<double> values;
};

// A handful of distinct starting totals occur in a run (one per arm count and n0), so a short
// list searched linearly is enough; it is bounded so that no input can grow it without limit.
constexpr size_t kMaxTablesPerThread = 64;

}  // namespace

const double* exploration_bonus_table(double total0, int horizon) {
  thread_local std::vector<std::unique_ptr<BonusTable>> tables;
  const size_t need = size_t(horizon > 0 ? horizon : 0);
  for (const auto& t : tables)
    if (std::memcmp(&t->total0, &total0, sizeof total0) == 0 && t->values.size() >= need)
      return t->values.data();
  if (tables.size() == kMaxTablesPerThread) tables.erase(tables.begin());
  auto table = std::make_unique<BonusTable>();
  table->total0 = total0;
  table->values.resize(need);
  double t = total0;
  for (size_t p = 0; p < need; ++p) {
    table->values[p] = exploration_bonus(t);
    t += 1.0;
  }
  tables.push_back(std::move(table));
  return tables.back()->values.data();
}

const double* sample_log_table(const SweepView& v, int c) {
  thread_local std::vector<double> logs;
  const size_t n = size_t(v.arms) * size_t(v.samples);
  logs.resize(n);
  const float* times = v.time_us + int64_t(c) * v.arms * v.samples;
  for (size_t i = 0; i < n; ++i) logs[i] = portable_log(double(times[i]));
  return logs.data();
}

}  // namespace ncclbot
