#include "study/sweep_source.hpp"

#include <algorithm>
#include <numeric>
#include <optional>
#include <set>

#include "ncclbot/core/error.hpp"
#include "ncclbot/io/sweep_csv.hpp"
#include "study/sweep_synthesis.hpp"

namespace ncclbot::study {

Sweep produce_sweep(const SweepSource& source, const std::string& study_path) {
  if (!source.file.empty()) {
    try {
      return read_sweep_csv(source.file);
    } catch (const InputError& e) {
      // The CSV's own file:line is the useful part; say which [[sweep]] asked for it.
      throw InputError(study_path, source.line, "sweep '" + source.name + "': " + e.what());
    }
  }
  return synthesise_sweep(source, study_path);
}

namespace {

UsageError shared_context(const Context& ctx) {
  return UsageError("sweeps of one scenario share the context " + ctx.fabric + " nodes " +
                    std::to_string(ctx.nodes) + " bytes " + std::to_string(ctx.bytes) +
                    "; give them distinct fabric names");
}

// merge_sweeps() where either sweep has knob arms: every context's arms, rebuilt in canonical order.
Sweep merge_knob_sweeps(const Sweep& a, const Sweep& b) {
  if (&a == &b) return a;
  SweepBuilder builder("the scenario's tune and score sweeps");
  std::set<Context> seen;
  for (const Sweep* s : {&a, &b})
    for (int c = 0; c < s->num_contexts(); ++c) {
      const Context& ctx = s->context(c);
      if (!seen.insert(ctx).second) throw shared_context(ctx);
      const auto arms = s->arms(c);
      for (size_t i = 0; i < arms.size(); ++i)
        for (int r = 0; r < s->samples(); ++r)
          builder.add(ctx, arms[i], r, s->arm_sample(c, int(i), r),
                      s->has_prior() ? std::optional<float>(s->arm_prior(c, int(i))) : std::nullopt, 0);
    }
  Sweep merged = builder.build();
  merged.set_dynamics(a.dynamics());
  return merged;
}

}  // namespace

Sweep merge_sweeps(const Sweep& a, const Sweep& b) {
  if (a.samples() != b.samples())
    throw UsageError("cannot combine sweeps with " + std::to_string(a.samples()) + " and " +
                     std::to_string(b.samples()) + " samples per arm in one scenario");
  if (a.has_prior() != b.has_prior())
    throw UsageError("cannot combine a sweep with a prior and one without in one scenario");
  if (!(a.dynamics() == b.dynamics()))
    throw UsageError(
        "cannot combine sweeps with different call dynamics (observation models) in one scenario");
  if (!a.slot_shaped() || !b.slot_shaped()) return merge_knob_sweeps(a, b);
  struct Ref {
    const Sweep* sweep;
    int c;
  };
  std::vector<Ref> refs;
  for (int c = 0; c < a.num_contexts(); ++c) refs.push_back({&a, c});
  for (int c = 0; c < b.num_contexts(); ++c) refs.push_back({&b, c});
  // Canonical order, as every Sweep keeps it; a context present in both must be the same data.
  std::stable_sort(refs.begin(), refs.end(),
                   [](const Ref& x, const Ref& y) { return x.sweep->context(x.c) < y.sweep->context(y.c); });
  const int R = a.samples();
  std::vector<Context> contexts;
  std::vector<float> time_us;
  std::vector<uint32_t> valid;
  std::vector<float> prior;
  for (size_t i = 0; i < refs.size(); ++i) {
    const Ref& r = refs[i];
    const Context& ctx = r.sweep->context(r.c);
    if (!contexts.empty() && contexts.back() == ctx) {
      if (&a == &b) continue;
      throw shared_context(ctx);
    }
    contexts.push_back(ctx);
    valid.push_back(r.sweep->valid()[size_t(r.c)]);
    const auto& t = r.sweep->time_us();
    time_us.insert(time_us.end(), t.begin() + ptrdiff_t(size_t(r.c) * kNumArms * R),
                   t.begin() + ptrdiff_t(size_t(r.c + 1) * kNumArms * R));
    if (r.sweep->has_prior()) {
      const auto& p = *r.sweep->prior_us();
      prior.insert(prior.end(), p.begin() + ptrdiff_t(size_t(r.c) * kNumArms),
                   p.begin() + ptrdiff_t(size_t(r.c + 1) * kNumArms));
    }
  }
  Sweep merged(std::move(contexts), R, std::move(time_us), std::move(valid),
               a.has_prior() ? std::optional<std::vector<float>>(std::move(prior)) : std::nullopt);
  merged.set_dynamics(a.dynamics());
  return merged;
}

}  // namespace ncclbot::study
