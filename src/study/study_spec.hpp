#pragma once
// A study as written in experiments/*.toml (docs/study.md has the schema): where the sweeps come
// from, which named scenarios slice them into tune and score contexts, which policies (with
// hyperparameter grids) are compared, how long each replay runs, and which hypotheses are tested.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ncclbot/core/collective.hpp"
#include "ncclbot/deployed/deployed_cost.hpp"
#include "ncclbot/deployed/observation_cost.hpp"
#include "ncclbot/tune/tune.hpp"

namespace ncclbot::study {

// The three metrics of docs/architecture.md "Metrics" over a set of per-context losses (max is
// reported, not tested): the same choice `ncclbot tune` offers as its objective.
using Metric = TuneObjective;
// Which per-context loss the study scores: what a job pays while learning, or what it settles on.
enum class LossKind { kOnline, kFinal };

const char* metric_name(Metric m);  // "mean", "p99", "above_10pct"
const char* loss_kind_name(LossKind k);

// A sweep is either synthesised from a fabric preset and a seed, or read from a sweep CSV.
struct SweepSource {
  std::string name;
  long line = 0;
  std::string preset;  // synthesised when non-empty
  uint64_t seed = 0;
  std::vector<int> nodes;               // empty = the preset's default node counts
  std::vector<Collective> collectives;  // empty = the preset's default collectives
  int samples = 0;                      // 0 = the simulator's default
  bool hipipe = false;                  // add the simulated HiPIPE arm (hipipe/simulated_arm.hpp)
  // The observation model (sim::SynthOptions): off, scaled, or without one mechanism.
  bool observation = true;
  double noise_scale = 1.0;
  bool drift = true, first_use = true, warmup = true;
  double shift_rate = -1.0, shift_size = -1.0, shift_arm_size = -1.0;  // negative: the preset's
  // Where the truth's errors against the cost model come from (sim::DeviationModel's names):
  // "structured" (the preset's mechanisms), "independent" or "adversarial".
  std::string deviations = "structured";
  std::string knobs;  // a knob spec (core/knob_spec.hpp, as synth --knobs takes): knob arms when non-empty
  // `price = "truth"`: losses priced at the simulator's true latencies (Sweep::price_on), not at the
  // samples' means, which the learners see.
  bool price_on_truth = false;
  // `observe = "fresh"` (with price = "truth"): every replayed call's latency drawn afresh from the
  // simulator's noise around the truth (Sweep::observe_afresh), not one of `samples` stored samples.
  bool observe_afresh = false;
  std::string file;  // a sweep CSV (path as resolved against the study file)
};

// Contexts of one sweep selected by node counts and collectives (empty list = all).
struct ContextSet {
  std::string sweep;
  std::vector<int> nodes;
  std::vector<Collective> collectives;
};

// A named slice: hyperparameters are tuned on `tune` and the frozen choice is scored on `score`.
// The two sets may come from different sweeps (e.g. tuned on H100, scored on GB200).
struct Scenario {
  std::string name;
  long line = 0;
  ContextSet tune, score;
};

// A policy under its report name; `spec` is a policy spec string whose `|` lists make a grid.
struct PolicyEntry {
  std::string name;
  long line = 0;
  std::string spec;
};

// One paired test over scenarios: metric(a) - metric(b), per scenario, sign-flip permutation.
// Holm's correction runs over all hypotheses of the same family.
// `scenarios` (patterns as for claims: "x" or "x*") limits the pairing to those scenarios; empty = all.
struct Hypothesis {
  std::string a, b;
  Metric metric = Metric::kMean;
  std::string family = "primary";
  long line = 0;
  std::vector<std::string> scenarios;
};

// A published claim to set beside this study's own number ("Against the original study" in the
// report, results.json "against_original"). What is measured:
//   kPooled         metric of policy a and of policy b over the score contexts of the matching
//                   scenarios (bytes within [min_bytes, max_bytes]), pooled;
//   kEveryScenario  metric of a and of b in each matching scenario;
//   kHypothesis     the study's own test of a vs b on metric (Holm-corrected p, decision).
// Each claim gets a three-way verdict from the uncertainty of what was measured (docs/study.md
// "Claims"): agree, disagree or inconclusive. `agrees_if` is what the claim states: b_lower or
// b_higher (pooled, every scenario: a bootstrap interval of b - a on the metric), b_not_higher
// ("match or beat", pooled mean only: a non-inferiority test of b - a against `margin`), reject or
// not_reject (hypothesis: the study's Holm-corrected test; "not significant" becomes a two one-sided
// tests equivalence test of the per-scenario differences against `margin`). `margin` comes with
// `margin_reason`, in the metric's unit (a fraction of loss; contexts above 10% per scenario). A
// claim that the test rejects also names the side it finds lower (`direction`: a_lower or b_lower).
// Where the paper gives a figure for a side (`paper_a`, `paper_b`, in the metric's unit: fractions
// for losses), its bootstrap interval must also lie within `band` of it (relative, default
// kDefaultClaimBand); a count of contexts above 10% compares the ratio b / a (`paper_ratio`) instead.
// `basis` says whether the claim tests the simulator ("tested") or restates a number it was fitted to
// ("calibrated": shown, never counted); a calibrated claim's verdict is its side's interval against
// the calibration `range` it states (or the band around its figure). `why_agree` / `why_disagree`
// say what each outcome means in the study's own numbers (the report prints the one that happened)
// and state no cause; a cause the study does not compute goes in `conjecture`, which the report
// prints labelled as such.
inline constexpr double kDefaultClaimBand = 0.5;

struct Claim {
  enum class Kind { kPooled, kEveryScenario, kHypothesis };
  // kUntestable: a claim the study cannot test, shown with the reason (`untestable`) and never tallied.
  enum class Basis { kTested, kCalibrated, kUntestable };
  long line = 0;
  std::string claim, paper, why_agree, why_disagree, agrees_if;
  std::string conjecture;  // optional: a cause no number of the study computes
  std::string untestable;  // basis untestable: why the study cannot test it
  std::string direction;   // hypothesis claims that reject: "a_lower" or "b_lower"
  Basis basis = Basis::kTested;
  std::optional<double> paper_a, paper_b;          // the paper's figures, where it gives them
  std::optional<double> paper_ratio;               // above_10pct: the paper's count of b over a's
  std::optional<std::pair<double, double>> range;  // calibrated: the range the fit aims for
  std::optional<double> margin;                    // b_not_higher, not_reject: the equivalence margin
  std::string margin_reason;
  double band = kDefaultClaimBand;
  Kind kind = Kind::kPooled;
  Metric metric = Metric::kMean;
  std::string a, b;
  std::vector<std::string> scenarios;  // name patterns ("x" exact, "x*" prefix); empty = all
  uint64_t min_bytes = 0, max_bytes = UINT64_MAX;
};

// A claim's scenario pattern: "x" names scenario x, "x*" every scenario whose name starts with x.
inline bool scenario_matches(const std::string& pattern, const std::string& name) {
  if (!pattern.empty() && pattern.back() == '*')
    return name.rfind(pattern.substr(0, pattern.size() - 1), 0) == 0;
  return name == pattern;
}

// Whether a scenario is in a hypothesis's or claim's list: every scenario when the list is empty.
inline bool in_scenarios(const std::vector<std::string>& patterns, const std::string& name) {
  if (patterns.empty()) return true;
  for (const auto& pattern : patterns)
    if (scenario_matches(pattern, name)) return true;
  return false;
}
// A named change of the simulator's assumptions (docs/study.md, "Variants and sensitivity"): the
// study is run again with only the knobs given here changed, the sweep knobs on every synthesised
// [[sweep]] and `delay` in [study]. A knob left out keeps the study's own value.
// "ideal" for nullopt, else the deployment's name; and back (a name checked by the loader).
inline std::string scoring_name(const std::optional<Deployment>& d) {
  return d ? std::string(deployment_name(*d)) : "ideal";
}
inline std::optional<Deployment> scoring_mode(const std::string& name) {
  if (name == "ideal") return std::nullopt;
  return parse_deployment(name);
}

struct Variant {
  std::string name;
  std::string slug;  // the folder DIR/variants/SLUG (variant_slug)
  long line = 0;
  std::optional<double> noise_scale;
  std::optional<bool> observation, drift, first_use, warmup;
  std::optional<double> shift_arm_size;  // each arm's own part of its level shifts
  std::optional<int> delay;
  // How the variant scores (StudySpec::as_deployed): "ideal", "local" or "leader" in [study], and
  // that mode's delay unless the variant gives `delay` too.
  std::optional<std::string> as_deployed;
  // What watching a call costs as deployed (StudySpec::observation_cost): f for every watched call.
  std::optional<double> observation_cost;
  // Another draw of the simulator (StudySpec::draws): every synthesised sweep's seed plus this.
  std::optional<int> seed_offset;
  // Where every synthesised sweep's truth errors come from (SweepSource::deviations).
  std::optional<std::string> deviations;
};

// The folder name of a variant: lower-case letters and digits, every other run of characters one
// '-', a '.' kept between two digits ("noise x0.5" -> "noise-x0.5"); empty if nothing is left.
std::string variant_slug(const std::string& name);

struct StudySpec {
  std::string name;
  std::string description;
  std::string path;  // the study file as given
  std::string text;  // its bytes, recorded with the results

  uint64_t seed = 1;     // master seed: replay and resampling seeds derive from it
  int seeds = 4;         // replay seeds per (config, context)
  int horizon = 200;     // collective calls per replay
  int delay = 0;         // feedback delay D: call t's latency reaches the policy before call t+D+1
  int window = 1;        // decision window W (replay/replay.hpp): the plugin's when scored as leader
  int policy_start = 0;  // calls of NCCL's own pick first (replay/replay.hpp): the leader's
  // Scoring as deployed (deployed/deployed_cost.hpp, docs/study.md "As deployed"): every config pays
  // the plugin's measured per-call cost, and the replays run the plugin's feedback schedule in that
  // mode (`delay` replaces its delay part). The default is the leader protocol, what every
  // communicator of more than one rank runs; nullopt is `as_deployed = "ideal"`: no per-call cost,
  // and `delay` alone (0 unless given).
  std::optional<Deployment> as_deployed = Deployment::kLeader;
  // What watching a call costs when scored as deployed (deployed/observation_cost.hpp): the table's
  // values for `nccl_version` (MAJOR.MINOR), or `observation_cost` for every call when given.
  std::string nccl_version = std::string(kDefaultNcclVersion);
  std::optional<double> observation_cost;
  // What the study charges for watching: nothing unless scored as deployed.
  std::optional<ObservationCharge> observation_charge() const {
    if (!as_deployed) return std::nullopt;
    return ObservationCharge{nccl_version, observation_cost};
  }
  std::vector<int> curve_horizons;  // horizons of the online-loss-vs-horizon curve (ends at horizon)
  // Loss vs horizon out to production lengths (replay/horizon_curve.hpp, docs/study.md "Loss vs
  // horizon"): each tuned config replayed once at the longest of these horizons on up to
  // `loss_vs_horizon_contexts` score contexts per scenario (evenly spaced) with
  // `loss_vs_horizon_seeds` seeds, read at every horizon on the way. Empty: none.
  std::vector<int> loss_vs_horizon = {100, 1000, 10000, 100000};
  int loss_vs_horizon_contexts = 24;
  int loss_vs_horizon_seeds = 2;
  // The conservative promise checked for every policy run @conservative (study/unit_work.cpp): on up to
  // `promise_contexts` score contexts per scenario (evenly spaced) over `promise_seeds` seeds at
  // promise_calls() calls (promise_horizon, 0: the study's horizon). promise_seeds = 0: not checked.
  int promise_seeds = 0;
  int promise_horizon = 0;
  int promise_contexts = 24;
  int promise_calls() const { return promise_horizon > 0 ? promise_horizon : horizon; }
  Metric objective = Metric::kMean;
  LossKind loss = LossKind::kOnline;
  double alpha = 0.05;
  double level = 0.95;  // bootstrap interval coverage
  int bootstrap_resamples = 2000;
  int permutation_resamples = 9999;  // Monte Carlo draws when 2^n sign vectors exceed this
  std::string backend = "auto";      // cpu | cuda | auto
  // Draws of the simulator (docs/study.md "Draws"): the study runs on its sweeps as given and on
  // draws - 1 more, each with every synthesised sweep's seed moved by 1, 2, ... (the variants
  // "draw 2" ... "draw N", after the study's own), and the claims' verdicts are counted over all.
  int draws = 1;

  std::vector<SweepSource> sweeps;
  std::vector<Scenario> scenarios;
  std::vector<PolicyEntry> policies;
  std::vector<Hypothesis> hypotheses;
  std::vector<Claim> claims;
  std::vector<Variant> variants;

  const SweepSource& sweep(const std::string& name) const;
  const PolicyEntry& policy(const std::string& name) const;
};

// Strict loaders: every problem is an InputError naming the file, the line and the reason;
// unknown keys are errors, so a typo never silently falls back to a default.
StudySpec load_study(const std::string& path);
StudySpec parse_study(const std::string& text, const std::string& source_name);

}  // namespace ncclbot::study
