#include "study/prepared_study.hpp"

#include <algorithm>
#include <sstream>

#include "base/sha256.hpp"
#include "ncclbot/core/context_filter.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/io/sweep_csv.hpp"
#include "ncclbot/io/sweep_side_data.hpp"
#include "ncclbot/replay/policy_spec.hpp"
#include "ncclbot/version.hpp"
#include "study/policy_replay.hpp"
#include "study/sweep_source.hpp"
#include "study/unit_result.hpp"

namespace ncclbot::study {
namespace {

const PreparedSweep& find_sweep(const std::vector<PreparedSweep>& sweeps, const std::string& name) {
  for (const auto& s : sweeps)
    if (s.source->name == name) return s;
  throw UsageError("no sweep named '" + name + "'");
}

// Indices into `in` of the contexts that come from `from` and match the set's filters.
std::vector<int> select_contexts(const Sweep& in, const Sweep& from, const ContextSet& set) {
  ContextFilter filter{set.nodes, set.collectives};
  std::vector<int> out;
  const auto& pool = from.contexts();
  for (int c = 0; c < in.num_contexts(); ++c) {
    const Context& ctx = in.context(c);
    if (filter.matches(ctx) && std::binary_search(pool.begin(), pool.end(), ctx)) out.push_back(c);
  }
  return out;
}

std::string describe(const ContextSet& s) {
  std::string d = "sweep '" + s.sweep + "'";
  if (!s.nodes.empty()) {
    d += " nodes";
    for (int n : s.nodes) d += " " + std::to_string(n);
  }
  return d;
}

// One scenario's merged sweep and its tune and score contexts; every policy built on the model's
// prior needs the merged sweep to carry one.
PreparedScenario prepare_scenario(const StudySpec& s, const std::vector<PreparedSweep>& sweeps,
                                  const Scenario& sc) {
  PreparedScenario pc;
  pc.spec = &sc;
  const PreparedSweep& t = find_sweep(sweeps, sc.tune.sweep);
  const PreparedSweep& v = find_sweep(sweeps, sc.score.sweep);
  try {
    pc.sweep = &t == &v ? t.sweep : std::make_shared<const Sweep>(merge_sweeps(*t.sweep, *v.sweep));
  } catch (const UsageError& e) {
    throw InputError(s.path, sc.line, "scenario '" + sc.name + "': " + e.what());
  }
  pc.tune = select_contexts(*pc.sweep, *t.sweep, sc.tune);
  pc.score = select_contexts(*pc.sweep, *v.sweep, sc.score);
  if (pc.tune.empty())
    throw InputError(s.path, sc.line, "scenario '" + sc.name + "': no tune contexts in " + describe(sc.tune));
  if (pc.score.empty())
    throw InputError(s.path, sc.line,
                     "scenario '" + sc.name + "': no score contexts in " + describe(sc.score));
  if (!pc.sweep->has_prior())
    for (const auto& pol : s.policies)
      if (pol.spec.rfind("auto", 0) == 0)
        throw InputError(s.path, pol.line,
                         "policy '" + pol.name + "' needs the model's prior, which the sweeps of scenario '" +
                             sc.name + "' lack");
  pc.sweeps_sha256 = sha256_hex(t.sha256 + "\n" + v.sha256);
  return pc;
}

// The relative cost of one (scenario, policy) unit: replays of tuning, scoring and the curves.
double work_unit_cost(const StudySpec& s, const PreparedScenario& sc, const PreparedPolicy& pol) {
  double curve = 0;
  for (int h : s.curve_horizons) curve += h;
  double cost = double(s.seeds) * (double(pol.grid.size()) * double(sc.tune.size()) * s.horizon +
                                   double(sc.score.size()) * curve);
  if (!s.loss_vs_horizon.empty())
    cost += double(s.loss_vs_horizon_seeds) *
            double(std::min(sc.score.size(), size_t(s.loss_vs_horizon_contexts))) *
            double(s.loss_vs_horizon.back());
  if (s.promise_seeds > 0 && parse_policy_spec(pol.grid.front()).conservative)
    cost += double(s.promise_seeds) * double(std::min(sc.score.size(), size_t(s.promise_contexts))) *
            double(s.promise_calls());
  return cost;
}

}  // namespace

uint64_t derived_seed(uint64_t master, const std::string& label) {
  const std::string h = sha256_hex(std::to_string(master) + "\n" + label);
  return std::stoull(h.substr(0, 16), nullptr, 16) & ((uint64_t(1) << 53) - 1);
}

PreparedStudy prepare_study(StudySpec spec) {
  PreparedStudy p;
  p.spec = std::move(spec);
  const StudySpec& s = p.spec;
  p.study_sha256 = sha256_hex(s.text);

  // Policies first: a typo in a spec should fail before any sweep is synthesised.
  for (const auto& pol : s.policies) {
    PreparedPolicy pp{&pol, {}};
    try {
      pp.grid = expand_policy_grid(pol.spec);
    } catch (const UsageError& e) {
      throw InputError(s.path, pol.line, "policy '" + pol.name + "': " + e.what());
    } catch (const InputError& e) {
      throw InputError(s.path, pol.line, "policy '" + pol.name + "': " + e.what());
    }
    p.policies.push_back(std::move(pp));
  }

  for (const auto& src : s.sweeps) {
    PreparedSweep ps;
    ps.source = &src;
    ps.sweep = std::make_shared<const Sweep>(produce_sweep(src, s.path));
    std::ostringstream csv;
    write_sweep_csv(*ps.sweep, csv);
    ps.csv = csv.str();
    ps.side = sweep_side_data_text(ps.sweep->dynamics());
    ps.sha256 = sha256_hex(ps.side + ps.csv);
    p.sweeps.push_back(std::move(ps));
  }

  for (const auto& sc : s.scenarios) p.scenarios.push_back(prepare_scenario(s, p.sweeps, sc));

  for (int si = 0; si < int(p.scenarios.size()); ++si)
    for (int pi = 0; pi < int(p.policies.size()); ++pi) {
      const auto& sc = p.scenarios[size_t(si)];
      const auto& pol = p.policies[size_t(pi)];
      WorkUnit u;
      u.scenario = si;
      u.policy = pi;
      u.file_name = unit_file_name(sc.spec->name, pol.spec->name);
      u.inputs_sha256 = sha256_hex(std::string(kVersion) + "\n" + p.study_sha256 + "\n" + sc.sweeps_sha256 +
                                   "\n" + sc.spec->name + "\n" + pol.spec->name + "\n" +
                                   observation_costs_text(compiled_observation_costs()));
      u.cost = work_unit_cost(s, sc, pol);
      p.units.push_back(std::move(u));
    }
  return p;
}

int policy_index(const PreparedStudy& study, const std::string& name) {
  for (int i = 0; i < int(study.policies.size()); ++i)
    if (study.policies[size_t(i)].spec->name == name) return i;
  return -1;
}

}  // namespace ncclbot::study
