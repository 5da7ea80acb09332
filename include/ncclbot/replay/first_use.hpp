#pragma once
// An algorithm's first use, paid once per communicator (docs/replay.md "First use per
// communicator"). NCCL connects an algorithm's peers the first time a communicator runs it, whatever
// the collective or the size, so a job pays the first-use cost F (core/sweep.hpp) once per
// (communicator, algorithm), not once per context.
//
//   communicator: the replayed contexts of one (fabric, nodes, GPUs per node), in the job's order
//                 k = 0 .. K-1 (sweep order: collective, then message size).
//   call order:   a training iteration calls each of the communicator's contexts once, in that order,
//                 so call t of context k is the communicator's call t*K + k. An assumption: a real
//                 iteration calls some sizes more often than others (a bucketed gradient reduction
//                 repeats its bucket size); equal rates are the simplest order that is defined for any
//                 sweep.
//   charge:       the oracle, which plays each context's best arm, connects the distinct algorithms of
//                 the communicator's best arms: m of them. A job that uses n distinct algorithms pays
//                 F for n - m more connections; so the communicator's first m first uses (in call
//                 order) are free and each later one pays F, relative to the best arm of the context
//                 that makes the call, at that call's levels: F / mu*_t, added to that replay's online
//                 loss as one more call's loss (divided by the horizon). A communicator of one
//                 context is the per-context rule: its first algorithm free, each further one F.
//
// The policies never observe F (it is a one-time stall of the job, not a kernel time), so each
// context's decisions are those of its own replay; only the charge couples the contexts, and it is
// computed afterwards from each replay's first-use calls (ReplayOutcome::first_use). The same code
// runs on the CPU and on the device (ChargeFirstUses), in a fixed order, so the engines agree bit
// for bit.
#include <cstdint>

#include "ncclbot/core/call_dynamics.hpp"
#include "ncclbot/core/hd.hpp"
#include "ncclbot/core/sweep_view.hpp"
#include "ncclbot/replay/loss.hpp"
#include "ncclbot/replay/replay.hpp"

namespace ncclbot {

// What the best arm of context c costs at call t (mu*_t): its mean before the first level-shift
// change point, then the cheapest mean x level after the last change point at or before t, the value
// the replay cursor holds at that call (ReplayCursorT::shift_levels), replayed from the change points'
// own Philox draws.
NCCLBOT_HD inline double best_cost_at(const SweepView& v, int c, uint64_t seed, uint64_t stream_id,
                                      uint32_t t) {
  const double* means = v.mean_us + int64_t(c) * v.arms;
  const double first = means[best_slot(v, c)];
  const CallDynamics& d = v.dynamics;
  if (!d.shifts()) return first;
  uint32_t shifts = 0, next = shift_gap(d, seed, stream_id, 0);
  while (next <= t) {
    ++shifts;
    next = next_change_point(d, seed, stream_id, shifts, next);
  }
  if (shifts == 0) return first;
  return shifted_best_cost(d, means, v.valid_arms(c), v.arms, seed, stream_id, shifts, nullptr);
}

// One algorithm's first use in a communicator: the call t of context `member` (0 .. K-1).
struct FirstUseEvent {
  uint32_t t = 0;
  int member = 0;
};

// The communicator's first use of each algorithm, in call order (t, then member): `first_use` is one
// (config, seed)'s [job context][kNumAlgos] rows, `members` the communicator's job-context indices in
// call order. Returns how many algorithms were used (<= kNumAlgos) and fills out[0 .. that).
NCCLBOT_HD inline int communicator_first_uses(const uint32_t* first_use, const int* members, int count,
                                              FirstUseEvent* out) {
  int n = 0;
  for (int a = 0; a < kNumAlgos; ++a) {
    FirstUseEvent e{kNeverUsed, -1};
    for (int k = 0; k < count; ++k) {
      const uint32_t t = first_use[int64_t(members[k]) * kNumAlgos + a];
      if (t < e.t) e = FirstUseEvent{t, k};  // strict: an equal t stays with the earlier member
    }
    if (e.member < 0) continue;
    int at = n++;  // insertion into call order
    while (at > 0 && (out[at - 1].t > e.t || (out[at - 1].t == e.t && out[at - 1].member > e.member))) {
      out[at] = out[at - 1];
      --at;
    }
    out[at] = e;
  }
  return n;
}

// Adds the communicator's first-use charges to the online losses of one block of replays laid out
// [config][seed][job context] (the engines' per-replay layout), one work item per (config, seed,
// communicator): item = (config * seeds + seed) * communicators + g. Within a replay the charges are
// added in call order, each F / mu*_t / horizon, for the first uses before the horizon (the first
// h calls of longer replays are replays of horizon h: replay/horizon_curve.hpp).
struct ChargeFirstUses {
  SweepView sweep;
  const int* contexts;         // [job contexts] sweep indices
  const uint64_t* stream_ids;  // [job contexts]
  const int* members;          // Communicators::members (replay/communicators.hpp)
  const int* begin;            // Communicators::begin
  const int* connected;        // Communicators::connected
  const uint32_t* first_use;   // [config][seed][job context][kNumAlgos]
  double* online;              // [config][seed][job context]
  int communicators, seeds, contexts_count, horizon;
  uint64_t seed_base;

  NCCLBOT_HD void operator()(int64_t item) const {
    const int64_t row = item / communicators;  // config * seeds + seed
    const int g = int(item % communicators);
    const uint64_t seed = seed_base + uint64_t(row % seeds);
    const int* group = members + begin[g];
    FirstUseEvent events[kNumAlgos];
    const int n = communicator_first_uses(first_use + row * contexts_count * kNumAlgos, group,
                                          begin[g + 1] - begin[g], events);
    // Calls at or past the horizon are not in these replays (a horizon curve's shorter prefix).
    for (int e = connected[g]; e < n && events[e].t < uint32_t(horizon); ++e) {
      const int i = group[events[e].member], c = contexts[i];
      const double f = sweep.first_use(c);
      if (!(f > 0.0)) continue;
      online[row * contexts_count + i] +=
          f / best_cost_at(sweep, c, seed, stream_ids[i], events[e].t) / double(horizon);
    }
  }
};

}  // namespace ncclbot
