// The strict TOML loader of study files. Every error names the file, the line of the offending key
// or table and the reason; unknown keys and wrong types are errors rather than silent defaults.
#include <toml++/toml.h>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

#include "io/toml_reader.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/core/knob_spec.hpp"
#include "ncclbot/core/names.hpp"
#include "ncclbot/io/output_file.hpp"
#include "ncclbot/replay/replay.hpp"
#include "ncclbot/sim/simulator.hpp"
#include "study/study_spec.hpp"

namespace ncclbot::study {

const char* metric_name(Metric m) {
  return tune_objective_name(m).data();
}

const char* loss_kind_name(LossKind k) {
  return k == LossKind::kOnline ? "online" : "final";
}

const SweepSource& StudySpec::sweep(const std::string& n) const {
  for (const auto& s : sweeps)
    if (s.name == n) return s;
  throw UsageError("study has no sweep named '" + n + "'");
}

const PolicyEntry& StudySpec::policy(const std::string& n) const {
  for (const auto& p : policies)
    if (p.name == n) return p;
  throw UsageError("study has no policy named '" + n + "'");
}

namespace {

// The strict TOML reader (io/toml_reader.hpp) with the study format's own values.
class Reader : public TomlReader {
 public:
  using TomlReader::TomlReader;

  std::vector<int> node_list(const toml::node& n, const std::string& what) const {
    std::vector<int> out;
    for (const auto& item : array(n, what)) out.push_back(int(integer(item, what + " item", 1, 1 << 20)));
    if (out.empty()) fail(n, what + " must not be empty");
    return out;
  }
  std::vector<Collective> collective_list(const toml::node& n, const std::string& what) const {
    std::vector<Collective> out;
    for (const auto& item : array(n, what)) {
      const std::string s = string(item, what + " item");
      const auto c = parse_collective(s);
      if (!c)
        fail(item, "unknown collective '" + s + "' (valid: " + std::string(collective_names_list()) + ")");
      out.push_back(*c);
    }
    if (out.empty()) fail(n, what + " must not be empty");
    return out;
  }
  Metric metric(const toml::node& n, const std::string& what) const {
    const std::string s = string(n, what);
    if (s == "mean") return Metric::kMean;
    if (s == "p99") return Metric::kP99;
    if (s == "above_10pct") return Metric::kAbove10pct;
    fail(n, what + " '" + s + "' is not a metric (valid: mean, p99, above_10pct)");
  }
  // A string or an array of strings.
  std::vector<std::string> names(const toml::node& n, const std::string& what) const {
    std::vector<std::string> out;
    if (n.is_string()) return {string(n, what)};
    for (const auto& item : array(n, what)) out.push_back(string(item, what + " item"));
    if (out.empty()) fail(n, what + " must not be empty");
    return out;
  }
};

bool valid_name(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == '/' ||
          c == '+'))
      return false;
  return true;
}

// A sweep's name becomes the file name DIR/sweeps/NAME.csv, so it may not leave that folder or
// hide: no '/', no leading '.', no "..".
bool valid_file_stem(const std::string& s) {
  if (!valid_name(s) || s.front() == '.' || s.find('/') != std::string::npos) return false;
  return s.find("..") == std::string::npos;
}

// `deviations = "structured" | "independent" | "adversarial"`: the name of one of
// sim::kDeviationModels, checked.
std::string deviation_model_text(const Reader& r, const toml::node& n, const std::string& what) {
  const std::string v = r.string(n, what);
  std::string valid;
  const size_t count = std::size(sim::kDeviationModels);
  for (size_t i = 0; i < count; ++i) {
    const std::string name = sim::deviation_model_name(sim::kDeviationModels[i]);
    if (v == name) return v;
    valid += (i == 0 ? "" : i + 1 == count ? " or " : ", ") + ("\"" + name + "\"");
  }
  r.fail(n, what + " must be " + valid);
}

// `as_deployed = "ideal" | "local" | "leader"` (deployed/deployed_cost.hpp): the name, checked.
std::string deployment_text(const Reader& r, const toml::node& n, const std::string& what) {
  const std::string v = r.string(n, what);
  if (v != "ideal" && v != "local" && v != "leader")
    r.fail(n, what + " must be \"ideal\", \"local\" or \"leader\"");
  return v;
}

// The most draws a study may ask for (each is a whole run of the study).
constexpr int64_t kMaxDraws = 1000;

void read_study_table(const Reader& r, const toml::table& t, StudySpec& s) {
  r.only_keys(t, "[study]",
              {"name",
               "description",
               "seed",
               "seeds",
               "horizon",
               "delay",
               "as_deployed",
               "curve_horizons",
               "loss_vs_horizon",
               "loss_vs_horizon_contexts",
               "loss_vs_horizon_seeds",
               "promise_seeds",
               "promise_horizon",
               "promise_contexts",
               "objective",
               "loss",
               "alpha",
               "level",
               "bootstrap_resamples",
               "permutation_resamples",
               "backend",
               "nccl_version",
               "observation_cost",
               "draws"});
  if (auto* n = r.find(t, "name")) s.name = r.string(*n, "study.name");
  if (auto* n = r.find(t, "description")) s.description = r.string(*n, "study.description");
  if (auto* n = r.find(t, "seed")) s.seed = uint64_t(r.integer(*n, "study.seed", 0, INT64_MAX));
  if (auto* n = r.find(t, "seeds")) s.seeds = int(r.integer(*n, "study.seeds", 1, 100000));
  if (auto* n = r.find(t, "draws")) s.draws = int(r.integer(*n, "study.draws", 1, kMaxDraws));
  if (auto* n = r.find(t, "horizon")) s.horizon = int(r.integer(*n, "study.horizon", 1, 100000000));
  if (auto* n = r.find(t, "delay")) s.delay = int(r.integer(*n, "study.delay", 0, kMaxReplayDelay));
  if (auto* n = r.find(t, "as_deployed"))
    s.as_deployed = scoring_mode(deployment_text(r, *n, "study.as_deployed"));
  if (s.as_deployed) {
    const DeployedFeedback feedback = deployed_feedback(*s.as_deployed);
    if (!r.find(t, "delay")) s.delay = feedback.delay;
    s.window = feedback.window;
    s.policy_start = feedback.policy_start;
  }
  if (auto* n = r.find(t, "nccl_version")) {
    try {
      s.nccl_version = nccl_minor_version(r.string(*n, "study.nccl_version"), "study.nccl_version");
    } catch (const UsageError& e) {
      r.fail(*n, e.what());
    }
  }
  if (auto* n = r.find(t, "observation_cost"))
    s.observation_cost = r.number(*n, "study.observation_cost", 0.0, kMaxObservationCost);
  if (auto* n = r.find(t, "curve_horizons")) {
    for (const auto& item : r.array(*n, "study.curve_horizons"))
      s.curve_horizons.push_back(int(r.integer(item, "study.curve_horizons item", 1, s.horizon)));
    for (size_t i = 1; i < s.curve_horizons.size(); ++i)
      if (s.curve_horizons[i] <= s.curve_horizons[i - 1])
        r.fail(*n, "study.curve_horizons must be increasing");
  }
  if (auto* n = r.find(t, "loss_vs_horizon")) {
    s.loss_vs_horizon.clear();
    for (const auto& item : r.array(*n, "study.loss_vs_horizon"))
      s.loss_vs_horizon.push_back(int(r.integer(item, "study.loss_vs_horizon item", 1, 10000000)));
    for (size_t i = 1; i < s.loss_vs_horizon.size(); ++i)
      if (s.loss_vs_horizon[i] <= s.loss_vs_horizon[i - 1])
        r.fail(*n, "study.loss_vs_horizon must be increasing");
  }
  if (auto* n = r.find(t, "loss_vs_horizon_contexts"))
    s.loss_vs_horizon_contexts = int(r.integer(*n, "study.loss_vs_horizon_contexts", 1, 100000));
  if (auto* n = r.find(t, "loss_vs_horizon_seeds"))
    s.loss_vs_horizon_seeds = int(r.integer(*n, "study.loss_vs_horizon_seeds", 1, 1000));
  if (auto* n = r.find(t, "promise_seeds"))
    s.promise_seeds = int(r.integer(*n, "study.promise_seeds", 0, 100000));
  if (auto* n = r.find(t, "promise_horizon"))
    s.promise_horizon = int(r.integer(*n, "study.promise_horizon", 1, 100000000));
  if (auto* n = r.find(t, "promise_contexts"))
    s.promise_contexts = int(r.integer(*n, "study.promise_contexts", 1, 100000));
  if (auto* n = r.find(t, "objective")) s.objective = r.metric(*n, "study.objective");
  if (auto* n = r.find(t, "loss")) {
    const std::string v = r.string(*n, "study.loss");
    if (v == "online")
      s.loss = LossKind::kOnline;
    else if (v == "final")
      s.loss = LossKind::kFinal;
    else
      r.fail(*n, "study.loss '" + v + "' must be online or final");
  }
  if (auto* n = r.find(t, "alpha")) s.alpha = r.number(*n, "study.alpha", 0.0, 0.5, true);
  if (auto* n = r.find(t, "level")) s.level = r.number(*n, "study.level", 0.5, 0.999, false);
  if (auto* n = r.find(t, "bootstrap_resamples"))
    s.bootstrap_resamples = int(r.integer(*n, "study.bootstrap_resamples", 100, 10000000));
  if (auto* n = r.find(t, "permutation_resamples"))
    s.permutation_resamples = int(r.integer(*n, "study.permutation_resamples", 100, 100000000));
  if (auto* n = r.find(t, "backend")) {
    s.backend = r.string(*n, "study.backend");
    if (s.backend != "cpu" && s.backend != "cuda" && s.backend != "auto")
      r.fail(*n, "study.backend '" + s.backend + "' must be cpu, cuda or auto");
  }
}

SweepSource read_sweep(const Reader& r, const toml::table& t, const std::filesystem::path& base) {
  r.only_keys(t, "[[sweep]]", {"name",      "preset", "seed",        "nodes",       "collectives",
                               "samples",   "hipipe", "observation", "noise_scale", "drift",
                               "first_use", "warmup", "shift_rate",  "shift_size",  "shift_arm_size",
                               "knobs",     "price",  "observe",     "deviations",  "file"});
  SweepSource s;
  s.line = toml_line(t);
  const auto* name = r.find(t, "name");
  if (!name) r.fail(t, "[[sweep]] needs a name");
  s.name = r.string(*name, "sweep.name");
  if (!valid_file_stem(s.name))
    r.fail(*name, "sweep name '" + s.name +
                      "' must be 1-64 of [A-Za-z0-9-_.+], not start with '.' nor contain '..' (it names "
                      "the file sweeps/NAME.csv)");
  const auto* preset = r.find(t, "preset");
  const auto* file = r.find(t, "file");
  if (bool(preset) == bool(file)) r.fail(t, "sweep '" + s.name + "' needs exactly one of preset or file");
  if (preset) {
    s.preset = r.string(*preset, "sweep.preset");
    if (auto* n = r.find(t, "seed")) s.seed = uint64_t(r.integer(*n, "sweep.seed", 0, INT64_MAX));
    if (auto* n = r.find(t, "nodes")) s.nodes = r.node_list(*n, "sweep.nodes");
    if (auto* n = r.find(t, "collectives")) s.collectives = r.collective_list(*n, "sweep.collectives");
    if (auto* n = r.find(t, "samples")) s.samples = int(r.integer(*n, "sweep.samples", 1, 100000));
    auto flag = [&](const char* key, bool& out) {
      if (auto* n = r.find(t, key)) {
        out = r.boolean(*n, std::string("sweep.") + key);
      }
    };
    flag("hipipe", s.hipipe);
    flag("observation", s.observation);
    flag("drift", s.drift);
    flag("first_use", s.first_use);
    flag("warmup", s.warmup);
    if (auto* n = r.find(t, "noise_scale"))
      s.noise_scale = r.number(*n, "sweep.noise_scale", 0.0, 100.0, false);
    if (auto* n = r.find(t, "shift_rate")) s.shift_rate = r.number(*n, "sweep.shift_rate", 0.0, 0.499, false);
    if (auto* n = r.find(t, "shift_size")) s.shift_size = r.number(*n, "sweep.shift_size", 0.0, 0.899, false);
    if (auto* n = r.find(t, "shift_arm_size"))
      s.shift_arm_size = r.number(*n, "sweep.shift_arm_size", 0.0, 0.899, false);
    if (auto* n = r.find(t, "deviations")) s.deviations = deviation_model_text(r, *n, "sweep.deviations");
    if (auto* n = r.find(t, "price")) {
      const std::string price = r.string(*n, "sweep.price");
      if (price != "samples" && price != "truth")
        r.fail(*n, "sweep.price '" + price +
                       "' must be samples (the samples' means) or truth (the simulator's true latencies)");
      s.price_on_truth = price == "truth";
    }
    if (auto* n = r.find(t, "observe")) {
      const std::string observe = r.string(*n, "sweep.observe");
      if (observe != "samples" && observe != "fresh")
        r.fail(*n, "sweep.observe '" + observe +
                       "' must be samples (one of the stored samples per call) or fresh (each call drawn "
                       "afresh from the simulator's noise)");
      s.observe_afresh = observe == "fresh";
      if (s.observe_afresh && !s.price_on_truth)
        r.fail(*n,
               "sweep.observe 'fresh' draws around the simulator's true latencies: it needs price = "
               "\"truth\"");
    }
    if (auto* n = r.find(t, "knobs")) {
      s.knobs = r.string(*n, "sweep.knobs");
      try {
        (void)parse_knob_spec(s.knobs);
      } catch (const std::exception& e) {
        // The parser speaks of the command-line flag; here the key is the one to name.
        std::string why = e.what();
        if (why.rfind("--knobs: ", 0) == 0) why.erase(0, 9);
        r.fail(*n, "sweep.knobs: " + why);
      }
    }
  } else {
    for (const char* k : {"seed", "nodes", "collectives", "samples", "hipipe", "observation", "noise_scale",
                          "drift", "first_use", "warmup", "shift_rate", "shift_size", "shift_arm_size",
                          "knobs", "price", "observe", "deviations"})
      if (auto* n = r.find(t, k))
        r.fail(*n, std::string("sweep.") + k + " applies only to a synthesised sweep");
    const std::filesystem::path p = r.string(*file, "sweep.file");
    s.file = (p.is_absolute() ? p : base / p).lexically_normal().string();
  }
  return s;
}

ContextSet read_context_set(const Reader& r, const toml::node& n, const std::string& what,
                            const StudySpec& s) {
  const toml::table& t = r.table(n, what);
  r.only_keys(t, what, {"sweep", "nodes", "collectives"});
  ContextSet set;
  const auto* sweep = r.find(t, "sweep");
  if (!sweep) r.fail(t, what + " needs a sweep");
  set.sweep = r.string(*sweep, what + ".sweep");
  bool known = false;
  for (const auto& sw : s.sweeps) known = known || sw.name == set.sweep;
  if (!known) r.fail(*sweep, what + ".sweep '" + set.sweep + "' is not a [[sweep]] of this study");
  if (auto* x = r.find(t, "nodes")) set.nodes = r.node_list(*x, what + ".nodes");
  if (auto* x = r.find(t, "collectives")) set.collectives = r.collective_list(*x, what + ".collectives");
  return set;
}

Scenario read_scenario(const Reader& r, const toml::table& t, const StudySpec& s) {
  r.only_keys(t, "[[scenario]]", {"name", "tune", "score"});
  Scenario sc;
  sc.line = toml_line(t);
  const auto* name = r.find(t, "name");
  if (!name) r.fail(t, "[[scenario]] needs a name");
  sc.name = r.string(*name, "scenario.name");
  if (!valid_name(sc.name)) r.fail(*name, "scenario name '" + sc.name + "' must be 1-64 of [A-Za-z0-9-_./+]");
  const auto* tune = r.find(t, "tune");
  const auto* score = r.find(t, "score");
  if (!tune || !score) r.fail(t, "scenario '" + sc.name + "' needs both tune and score context sets");
  sc.tune = read_context_set(r, *tune, "scenario.tune", s);
  sc.score = read_context_set(r, *score, "scenario.score", s);
  return sc;
}

PolicyEntry read_policy(const Reader& r, const toml::table& t) {
  r.only_keys(t, "[[policy]]", {"name", "spec"});
  PolicyEntry p;
  p.line = toml_line(t);
  const auto* name = r.find(t, "name");
  const auto* spec = r.find(t, "spec");
  if (!name || !spec) r.fail(t, "[[policy]] needs a name and a spec");
  p.name = r.string(*name, "policy.name");
  if (!valid_name(p.name)) r.fail(*name, "policy name '" + p.name + "' must be 1-64 of [A-Za-z0-9-_./+]");
  p.spec = r.string(*spec, "policy.spec");
  if (p.spec.empty()) r.fail(*spec, "policy.spec must not be empty");
  return p;
}

// A hypothesis's or claim's `scenarios`: names or "prefix*" patterns, each matching some [[scenario]].
std::vector<std::string> scenario_list(const Reader& r, const toml::node& n, const std::string& what,
                                       const StudySpec& s) {
  std::vector<std::string> patterns = r.names(n, what);
  for (const auto& pattern : patterns) {
    bool any = false;
    for (const auto& sc : s.scenarios) any = any || scenario_matches(pattern, sc.name);
    if (!any) r.fail(n, what + " '" + pattern + "' matches no [[scenario]]");
  }
  return patterns;
}

// `a` and `b` may each be a name or a list of names; every (a, b, metric) combination is a hypothesis.
std::vector<Hypothesis> read_hypotheses(const Reader& r, const toml::table& t, const StudySpec& s) {
  r.only_keys(t, "[[hypothesis]]", {"a", "b", "metrics", "family", "scenarios"});
  const auto* a = r.find(t, "a");
  const auto* b = r.find(t, "b");
  if (!a || !b) r.fail(t, "[[hypothesis]] needs a and b (policy names)");
  const auto check = [&](const toml::node& n, const std::vector<std::string>& names) {
    for (const auto& x : names) {
      bool known = false;
      for (const auto& p : s.policies) known = known || p.name == x;
      if (!known) r.fail(n, "hypothesis names policy '" + x + "', which is not a [[policy]] of this study");
    }
  };
  const auto as = r.names(*a, "hypothesis.a");
  const auto bs = r.names(*b, "hypothesis.b");
  check(*a, as);
  check(*b, bs);
  std::vector<Metric> metrics = {Metric::kMean};
  if (auto* m = r.find(t, "metrics")) {
    metrics.clear();
    for (const auto& item : r.array(*m, "hypothesis.metrics"))
      metrics.push_back(r.metric(item, "hypothesis.metrics item"));
    if (metrics.empty()) r.fail(*m, "hypothesis.metrics must not be empty");
  }
  std::string family = "primary";
  if (auto* f = r.find(t, "family")) {
    family = r.string(*f, "hypothesis.family");
    if (!valid_name(family))
      r.fail(*f, "hypothesis.family '" + family + "' must be 1-64 of [A-Za-z0-9-_./+]");
  }
  std::vector<std::string> scenarios;
  if (auto* n = r.find(t, "scenarios")) scenarios = scenario_list(r, *n, "hypothesis.scenarios", s);
  std::vector<Hypothesis> out;
  for (const auto& x : as)
    for (const auto& y : bs) {
      if (x == y) r.fail(t, "hypothesis compares policy '" + x + "' with itself");
      for (Metric m : metrics) out.push_back({x, y, m, family, toml_line(t), scenarios});
    }
  return out;
}

// A claim's required text key: present, a string and not empty.
std::string claim_text(const Reader& r, const toml::table& t, const char* key) {
  const auto* n = r.find(t, key);
  if (!n) r.fail(t, std::string("[[claim]] needs ") + key);
  const std::string v = r.string(*n, std::string("claim.") + key);
  if (v.empty()) r.fail(*n, std::string("claim.") + key + " must not be empty");
  return v;
}

// A why_agree / why_disagree text says what the outcome means in the study's numbers; one that
// states a cause (the words below) is refused: the study computes no cause, so it belongs in the
// claim's `conjecture`, which the report labels.
void refuse_stated_cause(const Reader& r, const toml::table& t, const char* key) {
  const auto* n = r.find(t, key);
  std::string text = r.string(*n, std::string("claim.") + key);
  for (char& ch : text) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  for (const char* word : {"cause", "due to", "likely", "explain"})
    if (text.find(word) != std::string::npos)
      r.fail(*n, std::string("claim.") + key + " states a cause ('" + word +
                     "'): a cause the study does not compute goes in claim.conjecture, which the report "
                     "labels as one");
}

// A claim's `a` and `b`: two different policies of the study.
void read_claim_policies(const Reader& r, const toml::table& t, const StudySpec& s, Claim& c) {
  c.a = claim_text(r, t, "a");
  c.b = claim_text(r, t, "b");
  for (const std::string* name : {&c.a, &c.b}) {
    bool known = false;
    for (const auto& p : s.policies) known = known || p.name == *name;
    if (!known) r.fail(t, "claim names policy '" + *name + "', which is not a [[policy]] of this study");
  }
  if (c.a == c.b) r.fail(t, "claim compares policy '" + c.a + "' with itself (a and b must differ)");
}

// A claim's `kind`; returns the key's text for the messages that name it.
std::string read_claim_kind(const Reader& r, const toml::table& t, Claim& c) {
  const std::string kind = claim_text(r, t, "kind");
  if (kind == "pooled")
    c.kind = Claim::Kind::kPooled;
  else if (kind == "every_scenario")
    c.kind = Claim::Kind::kEveryScenario;
  else if (kind == "hypothesis")
    c.kind = Claim::Kind::kHypothesis;
  else
    r.fail(*r.find(t, "kind"), "claim.kind '" + kind + "' must be pooled, every_scenario or hypothesis");
  return kind;
}

// A claim's `agrees_if`, which must fit its kind, and the `direction` that goes with "reject".
void read_claim_agreement(const Reader& r, const toml::table& t, const std::string& kind, Claim& c) {
  c.agrees_if = claim_text(r, t, "agrees_if");
  const bool directional =
      c.agrees_if == "b_lower" || c.agrees_if == "b_higher" || c.agrees_if == "b_not_higher";
  const bool decision = c.agrees_if == "reject" || c.agrees_if == "not_reject";
  if (c.kind == Claim::Kind::kHypothesis ? !decision : !directional)
    r.fail(*r.find(t, "agrees_if"),
           "claim.agrees_if '" + c.agrees_if + "' does not fit kind " + kind +
               " (pooled, every_scenario: b_lower, b_higher, b_not_higher; hypothesis: "
               "reject, not_reject)");
  const auto* direction = r.find(t, "direction");
  if (c.agrees_if == "reject") {
    if (!direction) r.fail(t, "a claim that the test rejects needs direction = \"a_lower\" or \"b_lower\"");
    c.direction = r.string(*direction, "claim.direction");
    if (c.direction != "a_lower" && c.direction != "b_lower")
      r.fail(*direction, "claim.direction '" + c.direction + "' must be a_lower or b_lower");
  } else if (direction) {
    r.fail(*direction, "claim.direction goes with agrees_if = \"reject\" only");
  }
}

// A claim's published figures `paper_a`, `paper_b` and `paper_ratio` and the `band` around them.
void read_claim_figures(const Reader& r, const toml::table& t, Claim& c) {
  // Figures in the metric's unit: a loss as a fraction, contexts above 10% as a share of the contexts
  // (the paper's count over its own denominator; a count compares only as a share).
  const double most = c.metric == Metric::kAbove10pct ? 1.0 : 1.0e6;
  const std::pair<const char*, std::optional<double>*> figures[] = {{"paper_a", &c.paper_a},
                                                                    {"paper_b", &c.paper_b}};
  for (const auto& [key, figure] : figures)
    if (const auto* n = r.find(t, key)) {
      if (c.kind == Claim::Kind::kHypothesis)
        r.fail(*n, std::string("a hypothesis claim has no claim.") + key);
      *figure = r.number(*n, std::string("claim.") + key, 0.0, most, false);
    }
  if (const auto* n = r.find(t, "paper_ratio")) {
    if (c.kind != Claim::Kind::kPooled || c.metric != Metric::kAbove10pct || c.paper_a || c.paper_b)
      r.fail(*n, "claim.paper_ratio goes with a pooled above_10pct claim without paper_a or paper_b");
    c.paper_ratio = r.number(*n, "claim.paper_ratio", 0.0, 1.0e6, true);
    if (c.agrees_if == "b_lower" ? *c.paper_ratio >= 1.0 : *c.paper_ratio <= 1.0)
      r.fail(*n, "claim.paper_ratio is on the wrong side of 1 for agrees_if = \"" + c.agrees_if + "\"");
  }
  if (const auto* n = r.find(t, "band")) {
    if (!c.paper_a && !c.paper_b && !c.paper_ratio)
      r.fail(*n, "claim.band needs a figure to apply to (paper_a, paper_b or paper_ratio)");
    c.band = r.number(*n, "claim.band", 0.0, 100.0, true);
  }
}

// A calibrated claim's `range`: [low, high] of the one side it gives a figure for (high may be inf).
void read_claim_range(const Reader& r, const toml::table& t, Claim& c) {
  const auto* n = r.find(t, "range");
  if (!n) return;
  if (c.basis != Claim::Basis::kCalibrated || (c.paper_a.has_value() == c.paper_b.has_value()))
    r.fail(*n, "claim.range goes with a calibrated claim that gives paper_a or paper_b (one of them)");
  const toml::array& a = r.array(*n, "claim.range");
  if (a.size() != 2) r.fail(*n, "claim.range must be [low, high]");
  const double low = r.number(a[0], "claim.range low");
  const auto* f = a[1].as_floating_point();
  const double high =
      f && std::isinf(f->get()) && f->get() > 0 ? f->get() : r.number(a[1], "claim.range high");
  if (!(low <= high)) r.fail(*n, "claim.range's low is above its high");
  c.range = {low, high};
}

// The equivalence `margin` and its `margin_reason`: required by the claims that state a match
// (b_not_higher, not_reject), refused by every other.
void read_claim_margin(const Reader& r, const toml::table& t, Claim& c) {
  const bool match = c.agrees_if == "b_not_higher" || c.agrees_if == "not_reject";
  const auto* n = r.find(t, "margin");
  const auto* why = r.find(t, "margin_reason");
  if (!match) {
    if (n || why) r.fail(n ? *n : *why, "claim.margin goes with agrees_if = b_not_higher or not_reject only");
    return;
  }
  if (!n || !why)
    r.fail(t, "a claim of agrees_if = \"" + c.agrees_if +
                  "\" is an equivalence test: it needs margin and margin_reason (why that margin)");
  c.margin = r.number(*n, "claim.margin", 0.0, 1.0e6, true);
  c.margin_reason = claim_text(r, t, "margin_reason");
  if (c.agrees_if == "b_not_higher" && (c.kind != Claim::Kind::kPooled || c.metric != Metric::kMean))
    r.fail(t,
           "agrees_if = \"b_not_higher\" is a non-inferiority test of the mean: kind = \"pooled\", "
           "metric = \"mean\"");
}

// A claim's scope: its scenarios and byte range, or for a hypothesis claim the study's own test.
void read_claim_scope(const Reader& r, const toml::table& t, const StudySpec& s, Claim& c) {
  if (auto* n = r.find(t, "scenarios")) c.scenarios = scenario_list(r, *n, "claim.scenarios", s);
  if (auto* n = r.find(t, "min_bytes"))
    c.min_bytes = uint64_t(r.integer(*n, "claim.min_bytes", 0, INT64_MAX));
  if (auto* n = r.find(t, "max_bytes"))
    c.max_bytes = uint64_t(r.integer(*n, "claim.max_bytes", 0, INT64_MAX));
  if (c.min_bytes > c.max_bytes) r.fail(t, "claim.min_bytes is above claim.max_bytes");
  if (c.kind == Claim::Kind::kHypothesis) {
    if (r.find(t, "min_bytes") || r.find(t, "max_bytes"))
      r.fail(t, "a hypothesis claim takes the study's own test: no byte range");
    bool found = false;
    for (const auto& h : s.hypotheses)
      found = found || (h.a == c.a && h.b == c.b && h.metric == c.metric && h.scenarios == c.scenarios);
    if (!found)
      r.fail(t, "claim needs the [[hypothesis]] " + c.a + " vs " + c.b + " on " + metric_name(c.metric) +
                    " over the same scenarios, which this study does not test");
  }
}

// A claim of basis "untestable": its text, the original's figure and why the study cannot test it;
// nothing to compare, so no other key.
Claim read_untestable_claim(const Reader& r, const toml::table& t) {
  r.only_keys(t, "[[claim]] of basis untestable", {"claim", "paper", "basis", "untestable"});
  Claim c;
  c.line = toml_line(t);
  c.basis = Claim::Basis::kUntestable;
  c.claim = claim_text(r, t, "claim");
  c.paper = claim_text(r, t, "paper");
  c.untestable = claim_text(r, t, "untestable");
  return c;
}

Claim read_claim(const Reader& r, const toml::table& t, const StudySpec& s) {
  if (const auto* n = r.find(t, "basis"); n && n->is_string() && n->value<std::string>() == "untestable")
    return read_untestable_claim(r, t);
  r.only_keys(t, "[[claim]]",
              {"claim",         "paper",     "kind",         "metric",    "a",         "b",
               "scenarios",     "min_bytes", "max_bytes",    "agrees_if", "direction", "basis",
               "paper_a",       "paper_b",   "paper_ratio",  "band",      "range",     "margin",
               "margin_reason", "why_agree", "why_disagree", "why",       "conjecture"});
  if (const auto* n = r.find(t, "why"))
    r.fail(*n,
           "claim.why is now two keys: why_agree and why_disagree (the report prints the one that happened)");
  Claim c;
  c.line = toml_line(t);
  c.claim = claim_text(r, t, "claim");
  c.paper = claim_text(r, t, "paper");
  c.why_agree = claim_text(r, t, "why_agree");
  c.why_disagree = claim_text(r, t, "why_disagree");
  for (const char* key : {"why_agree", "why_disagree"}) refuse_stated_cause(r, t, key);
  if (r.find(t, "conjecture")) c.conjecture = claim_text(r, t, "conjecture");
  const std::string basis = claim_text(r, t, "basis");
  if (basis == "tested")
    c.basis = Claim::Basis::kTested;
  else if (basis == "calibrated")
    c.basis = Claim::Basis::kCalibrated;
  else
    r.fail(*r.find(t, "basis"), "claim.basis '" + basis + "' must be tested, calibrated or untestable");
  read_claim_policies(r, t, s, c);
  const std::string kind = read_claim_kind(r, t, c);
  if (auto* m = r.find(t, "metric")) c.metric = r.metric(*m, "claim.metric");
  read_claim_agreement(r, t, kind, c);
  read_claim_figures(r, t, c);
  read_claim_range(r, t, c);
  read_claim_margin(r, t, c);
  read_claim_scope(r, t, s, c);
  return c;
}

// `draws = N` in [study]: the variants "draw 2" ... "draw N", each every synthesised sweep's seed
// moved by 1 ... N - 1. Sweeps read from a file have one draw only, so they refuse it.
void add_draws(const Reader& r, const toml::table& study, StudySpec& s) {
  if (s.draws == 1) return;
  const auto* n = r.find(study, "draws");
  for (const auto& sw : s.sweeps)
    if (!sw.file.empty())
      r.fail(*n, "study.draws redraws every sweep from the simulator, and sweep '" + sw.name + "' (line " +
                     std::to_string(sw.line) + ") is read from a file");
  for (int k = 2; k <= s.draws; ++k) {
    Variant v;
    v.name = "draw " + std::to_string(k);
    v.slug = variant_slug(v.name);
    v.line = toml_line(study);
    v.seed_offset = k - 1;
    for (const auto& prev : s.variants)
      if (prev.slug == v.slug)
        r.fail(*n, "study.draws names its variants 'draw 2' ... 'draw " + std::to_string(s.draws) +
                       "', and the variant '" + prev.name + "' (line " + std::to_string(prev.line) +
                       ") takes the folder variants/" + v.slug);
    s.variants.push_back(std::move(v));
  }
}

// A [[variant]]: a name and the knobs it changes. Sweep knobs need every sweep synthesised: a sweep
// read from a file has its noise and dynamics inside its samples, so varying them would silently
// vary only part of the study.
Variant read_variant(const Reader& r, const toml::table& t, const StudySpec& s) {
  r.only_keys(t, "[[variant]]",
              {"name", "noise_scale", "observation", "drift", "shift_arm_size", "first_use", "warmup",
               "delay", "as_deployed", "observation_cost", "deviations"});
  Variant v;
  v.line = toml_line(t);
  const auto* name = r.find(t, "name");
  if (!name) r.fail(t, "[[variant]] needs a name");
  v.name = r.string(*name, "variant.name");
  bool printable = !v.name.empty() && v.name.size() <= 64;
  for (char c : v.name) printable = printable && c >= 0x20 && c < 0x7f && c != '`';
  if (!printable)
    r.fail(*name, "variant name '" + v.name + "' must be 1-64 printable ASCII characters, no '`'");
  v.slug = variant_slug(v.name);
  if (v.slug.empty())
    r.fail(*name, "variant name '" + v.name + "' needs a letter or a digit (it names a folder)");
  if (v.slug == "baseline")
    r.fail(*name, "variant name '" + v.name + "' is reserved: the base study is the baseline");
  for (const auto& prev : s.variants) {
    if (prev.name == v.name) r.fail(t, "duplicate variant name '" + v.name + "'");
    if (prev.slug == v.slug)
      r.fail(*name, "variant '" + v.name + "' would share the folder variants/" + v.slug + " with variant '" +
                        prev.name + "' (line " + std::to_string(prev.line) + ")");
  }
  auto flag = [&](const char* key, std::optional<bool>& out) {
    if (auto* n = r.find(t, key)) {
      out = r.boolean(*n, std::string("variant.") + key);
    }
  };
  flag("observation", v.observation);
  flag("drift", v.drift);
  flag("first_use", v.first_use);
  flag("warmup", v.warmup);
  if (auto* n = r.find(t, "noise_scale"))
    v.noise_scale = r.number(*n, "variant.noise_scale", 0.0, 100.0, false);
  if (auto* n = r.find(t, "shift_arm_size"))
    v.shift_arm_size = r.number(*n, "variant.shift_arm_size", 0.0, 0.899, false);
  if (auto* n = r.find(t, "delay")) v.delay = int(r.integer(*n, "variant.delay", 0, kMaxReplayDelay));
  if (auto* n = r.find(t, "as_deployed")) v.as_deployed = deployment_text(r, *n, "variant.as_deployed");
  if (auto* n = r.find(t, "observation_cost"))
    v.observation_cost = r.number(*n, "variant.observation_cost", 0.0, kMaxObservationCost);
  if (auto* n = r.find(t, "deviations")) v.deviations = deviation_model_text(r, *n, "variant.deviations");
  if (!v.noise_scale && !v.observation && !v.drift && !v.shift_arm_size && !v.first_use && !v.warmup &&
      !v.delay && !v.as_deployed && !v.observation_cost && !v.deviations)
    r.fail(t, "variant '" + v.name +
                  "' changes nothing: give at least one of noise_scale, observation, drift, shift_arm_size, "
                  "first_use, warmup, delay, as_deployed, observation_cost, deviations");
  for (const char* key :
       {"noise_scale", "observation", "drift", "shift_arm_size", "first_use", "warmup", "deviations"}) {
    const auto* n = r.find(t, key);
    if (!n) continue;
    for (const auto& sw : s.sweeps)
      if (!sw.file.empty())
        r.fail(*n, "variant '" + v.name + "': " + key + " cannot change sweep '" + sw.name + "' (line " +
                       std::to_string(sw.line) +
                       "), which is read from a file; a study with file-backed sweeps can vary only delay");
  }
  // Every knob it gives equal to the study's own (in each synthesised sweep; [study]'s delay and
  // scoring mode) would rerun the baseline under another name.
  const auto differs_in_a_sweep = [&](auto member, const auto& value) {
    for (const auto& sw : s.sweeps)
      if (sw.file.empty() && !(sw.*member == value)) return true;
    return false;
  };
  bool differs = false;
  if (v.noise_scale) differs = differs || differs_in_a_sweep(&SweepSource::noise_scale, *v.noise_scale);
  if (v.observation) differs = differs || differs_in_a_sweep(&SweepSource::observation, *v.observation);
  if (v.drift) differs = differs || differs_in_a_sweep(&SweepSource::drift, *v.drift);
  if (v.shift_arm_size)
    differs = differs || differs_in_a_sweep(&SweepSource::shift_arm_size, *v.shift_arm_size);
  if (v.first_use) differs = differs || differs_in_a_sweep(&SweepSource::first_use, *v.first_use);
  if (v.warmup) differs = differs || differs_in_a_sweep(&SweepSource::warmup, *v.warmup);
  if (v.as_deployed) differs = differs || scoring_mode(*v.as_deployed) != s.as_deployed;
  if (v.delay) differs = differs || *v.delay != s.delay;
  if (v.observation_cost) differs = differs || v.observation_cost != s.observation_cost;
  if (v.deviations) differs = differs || differs_in_a_sweep(&SweepSource::deviations, *v.deviations);
  if (!differs)
    r.fail(t, "variant '" + v.name + "' is the baseline: every setting it gives is the study's own");
  return v;
}

template <typename F>
void for_each_table(const Reader& r, const toml::node& n, const std::string& what, F&& f) {
  const toml::array* arr = n.as_array();
  if (!arr || !arr->is_array_of_tables()) r.fail(n, what + " must be an array of tables ([[" + what + "]])");
  for (const auto& item : *arr) f(*item.as_table());
}

}  // namespace

std::string variant_slug(const std::string& name) {
  std::string slug;
  for (size_t i = 0; i < name.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(name[i]);
    const bool digit_dot = c == '.' && i > 0 && i + 1 < name.size() &&
                           std::isdigit(static_cast<unsigned char>(name[i - 1])) &&
                           std::isdigit(static_cast<unsigned char>(name[i + 1]));
    if (std::isalnum(c) && c < 0x80)
      slug += char(std::tolower(c));
    else if (digit_dot)
      slug += '.';
    else if (!slug.empty() && slug.back() != '-')
      slug += '-';
  }
  while (!slug.empty() && slug.back() == '-') slug.pop_back();
  return slug;
}

StudySpec parse_study(const std::string& text, const std::string& source_name) {
  const Reader r(source_name);
  const toml::table root = r.parse(text);
  StudySpec s;
  s.path = source_name;
  s.text = text;
  r.only_keys(root, "the study file",
              {"study", "sweep", "scenario", "policy", "hypothesis", "claim", "variant"});
  const std::filesystem::path base = std::filesystem::path(source_name).parent_path();

  const auto* study = root.get("study");
  if (!study) throw InputError(source_name, 0, "missing [study] table");
  read_study_table(r, r.table(*study, "[study]"), s);
  if (s.name.empty()) r.fail(*study, "[study] needs a name");
  if (s.curve_horizons.empty() || s.curve_horizons.back() != s.horizon) s.curve_horizons.push_back(s.horizon);

  std::set<std::string> seen;
  const auto unique = [&](const toml::table& t, const std::string& kind, const std::string& name) {
    if (!seen.insert(kind + "\n" + name).second) r.fail(t, "duplicate " + kind + " name '" + name + "'");
  };
  if (auto* n = root.get("sweep"))
    for_each_table(r, *n, "sweep", [&](const toml::table& t) {
      s.sweeps.push_back(read_sweep(r, t, base));
      unique(t, "sweep", s.sweeps.back().name);
    });
  if (s.sweeps.empty()) throw InputError(source_name, 0, "a study needs at least one [[sweep]]");
  if (auto* n = root.get("scenario"))
    for_each_table(r, *n, "scenario", [&](const toml::table& t) {
      s.scenarios.push_back(read_scenario(r, t, s));
      unique(t, "scenario", s.scenarios.back().name);
    });
  if (s.scenarios.empty()) throw InputError(source_name, 0, "a study needs at least one [[scenario]]");
  if (auto* n = root.get("policy"))
    for_each_table(r, *n, "policy", [&](const toml::table& t) {
      s.policies.push_back(read_policy(r, t));
      unique(t, "policy", s.policies.back().name);
    });
  if (s.policies.empty()) throw InputError(source_name, 0, "a study needs at least one [[policy]]");
  if (auto* n = root.get("hypothesis"))
    for_each_table(r, *n, "hypothesis", [&](const toml::table& t) {
      for (auto& h : read_hypotheses(r, t, s)) {
        for (const auto& prev : s.hypotheses)
          if (prev.a == h.a && prev.b == h.b && prev.metric == h.metric && prev.scenarios == h.scenarios)
            r.fail(t,
                   "hypothesis " + h.a + " vs " + h.b + " on " + metric_name(h.metric) + " is listed twice");
        s.hypotheses.push_back(std::move(h));
      }
    });
  if (auto* n = root.get("claim"))
    for_each_table(r, *n, "claim", [&](const toml::table& t) { s.claims.push_back(read_claim(r, t, s)); });
  if (auto* n = root.get("variant"))
    for_each_table(r, *n, "variant",
                   [&](const toml::table& t) { s.variants.push_back(read_variant(r, t, s)); });
  add_draws(r, r.table(*study, "[study]"), s);
  return s;
}

StudySpec load_study(const std::string& path) {
  return parse_study(read_input_file(path, kMaxConfigBytes), path);
}

}  // namespace ncclbot::study
