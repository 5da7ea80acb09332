#pragma once
// `autoccl:pretrain,train`: AutoCCL's online search (Xu et al., NSDI 2025), as its code runs it
// (gbxu/autoccl at a0bf96bf, ext-tuner/example: TUNER_MODE 5, NcclCombinedJob over CoDesJob), on a
// context's arms. A baseline to compare learners with, not a bandit: it has no regret bound.
//   - Calls 1-5 play NCCL's default (AUTO's arm) as warm-up, their latencies dropped; calls 6-10 play
//     it again and are kept (jobs/job.h: warm-up and native steps, 5 each).
//   - Each algorithm x protocol is a subspace (AutoCCL's subspace is algorithm, protocol and
//     transport; a context here has no transport arms). The step budgets pretrain and train (calls;
//     run.sh sets 360 and 240) are split evenly: each subspace gets P = max(pretrain / G, 1) and
//     T = max(train / G, 1) for G subspaces. The subspaces take turns, in algorithm and protocol
//     order, each turn one round of the next subspace that has one (nccl_combined_job.h).
//   - A candidate is played 5 calls in a row (TUNER_OPTIMUM_EXPIRE) and scored by the mean of its
//     fastest ceil(0.75 n) latencies (datatype.h meanOfTopPercent(75)); lower is better.
//   - A subspace's first round samples max(P / 5, 1) of its arms: strided from a random start (stride
//     n / (P / 5)); where it has no more arms than that, each arm once (the code's test there looks
//     inverted and draws with replacement; taking each arm once is the evident intent).
//   - Then coordinate descent (coordinate_descent_job.h) from its best arm over the axes channels,
//     then chunk size (AutoCCL's nThreads axis has no arm here), each first upwards then downwards:
//     a round plays the 3 unvisited arms of the subspace nearest the current arm strictly along the
//     axis in that direction (off-axis knobs may differ: nearest by the axis distance, then the
//     off-axis one; NCCL's own value, 0, sits below every explicit value). A round whose best beats
//     the current arm moves there and sets lr = 0.8 x the relative gain, and the next round takes
//     the 3 farthest of the max(3, lr x eligible) nearest, a jump; else it counts a failure and turns
//     (up -> down -> next axis, lr = -1). 2 x axes failures in a row end a descent; a new one starts
//     from a random unvisited arm, at most 4 times (TUNER_RETRY 5). A train round plays each
//     candidate min(5, calls left of T) times.
//   - A subspace whose budget or arms run out, or whose descents end, plays its best arm 10 calls
//     and is done; if that beats the combined best (NCCL's default to start with), it becomes the
//     combined best. A subspace that has spent P + 0.1 T calls and whose best is above 1.5 x the
//     combined best is pruned.
//   - Once every subspace is done it plays the arm with the best score over everything it measured,
//     NCCL's default included, for good.
// The code's open points (its failure count is not reset by a restart, a restart keeps the last
// round's neighbours) are not copied: each restart starts a fresh descent. With feedback delayed
// it decides each round from the latencies that have arrived.
// Committed arm: the best score so far (NCCL's default before any).
#include <cmath>
#include <cstdint>

#include "ncclbot/core/philox.hpp"
#include "ncclbot/policy/arm_set.hpp"
#include "ncclbot/policy/auto_policy.hpp"
#include "ncclbot/policy/knob_lattice.hpp"
#include "ncclbot/policy/policy_context.hpp"

namespace ncclbot {

template <int N>
struct AutocclPolicyT {
  struct Params {
    int pretrain;
    int train;
  };
  static constexpr int kRepeat = 5;         // calls per candidate (TUNER_OPTIMUM_EXPIRE / PROFILE_REPEAT)
  static constexpr int kWarmup = 5;         // warm-up calls of NCCL's default, dropped
  static constexpr int kNative = 5;         // calls of NCCL's default that are kept
  static constexpr int kTopK = 3;           // TUNER_ACCESS_TOPK
  static constexpr int kRetry = 5;          // TUNER_RETRY: descents per subspace
  static constexpr int kBestReplay = 10;    // calls of a finished subspace's best
  static constexpr int kMaxSamples = 10;    // latencies kept per arm for its score
  static constexpr int kAxes = 2;           // channels, chunk size
  static constexpr int kGroups = kNumArms;  // subspaces: one per algorithm x protocol slot
  using Index = ArmIndexT<N>;

  Params params;
  static constexpr bool kDeterministic = false;  // random start and restarts; no closed-form propensity
  ArmSetT<N> arms;
  KnobLatticeT<N> lattice;
  float sample[N][kMaxSamples];
  uint8_t samples[N];
  ArmIndexSet<N> visited;
  int default_arm;  // packed
  int64_t calls, updates;
  // The round being played: round[0..round_len) each `per_candidate` calls, at round_pos.
  Index round[N];
  int round_len, round_pos, round_calls_left, per_candidate;
  int turn;               // the subspace whose turn comes next
  int combined;           // the combined best (packed)
  int final_arm;          // once every subspace is done, else -1
  int groups;             // G
  int8_t phase[kGroups];  // 0 not started, 1 descending, 2 done
  int32_t spent[kGroups];
  Index cur[kGroups];
  int8_t axis[kGroups], dir[kGroups], fails[kGroups], retry[kGroups];
  double lr[kGroups];
  Index next[kGroups][kTopK];
  int8_t next_len[kGroups];
  int32_t pretrain_calls, train_calls;  // P and T
  // A pass over the subspaces that found every one waiting for latencies and changed none of them:
  // its answer, and the latencies had by then. Until another arrives a pass would do the same (it
  // reads no random word and the turn comes full circle), so select() gives the answer again
  // without scoring every arm. idle_best -1: none.
  int32_t idle_best;
  int64_t idle_updates;

  NCCLBOT_HD void reset(const PolicyContextT<N>& ctx) {
    arms.assign(ctx.mask);
    lattice.assign(arms, ctx.arms);
    visited.clear_all();
    for (int j = 0; j < arms.k; ++j) samples[j] = 0;
    AutoPolicyT<N> nccl;
    nccl.reset(ctx);
    default_arm = nccl.pick >= 0 ? arms.index[nccl.pick] : 0;
    calls = updates = 0;
    idle_best = -1;
    idle_updates = 0;
    round_len = round_pos = round_calls_left = per_candidate = 0;
    turn = 0;
    combined = default_arm;
    final_arm = -1;
    groups = 0;
    for (int j = 0; j < N; ++j) round[j] = 0;
    for (int g = 0; g < kGroups; ++g) {
      phase[g] = 2;
      spent[g] = 0;
      cur[g] = 0;
      axis[g] = fails[g] = retry[g] = next_len[g] = 0;
      dir[g] = 1;
      lr[g] = -1.0;
      for (int i = 0; i < kTopK; ++i) next[g][i] = 0;
      for (int j = 0; j < arms.k; ++j)
        if (lattice.group[j] == g) phase[g] = 0;
      groups += phase[g] == 0 ? 1 : 0;
    }
    const int g = groups > 0 ? groups : 1;
    pretrain_calls = params.pretrain / g > 1 ? params.pretrain / g : 1;
    train_calls = params.train / g > 1 ? params.train / g : 1;
  }

  // The mean of the fastest ceil(0.75 n) latencies of packed arm j; HUGE_VAL without any.
  NCCLBOT_HD double score(int j) const {
    const int n = samples[j];
    if (n == 0) return HUGE_VAL;
    float s[kMaxSamples];
    for (int i = 0; i < n; ++i) {  // insertion sort, ascending
      int at = i;
      while (at > 0 && s[at - 1] > sample[j][i]) {
        s[at] = s[at - 1];
        --at;
      }
      s[at] = sample[j][i];
    }
    const int keep = (3 * n + 3) / 4;
    double sum = 0.0;
    for (int i = 0; i < keep; ++i) sum += double(s[i]);
    return sum / double(keep);
  }

  // The arm with the best score among those with `in_group` (g >= 0) or all (g < 0); ties lowest.
  NCCLBOT_HD int best_of(int g) const {
    int best = -1;
    double lowest = HUGE_VAL;
    for (int j = 0; j < arms.k; ++j) {
      if (g >= 0 && lattice.group[j] != g) continue;
      const double s = score(j);
      if (s < lowest) {
        lowest = s;
        best = j;
      }
    }
    return best;
  }

  NCCLBOT_HD double knob(int j, int a) const {
    return a == 0 ? double(lattice.channels[j]) : double(lattice.chunk[j]);
  }
  // How far packed arm j lies from arm c along axis a in direction `sign` (> 0: on that side), and
  // across it (the other knob's distance): findKCandidatesWithAxis's two sort keys.
  NCCLBOT_HD double along(int j, int c, int a, int sign) const {
    return (knob(j, a) - knob(c, a)) * double(sign);
  }
  NCCLBOT_HD double across(int j, int c, int a) const {
    const double x = knob(j, 1 - a), y = knob(c, 1 - a);
    return x > y ? x - y : y - x;
  }
  // The best score over everything measured, NCCL's default before anything is.
  NCCLBOT_HD int best_or_default() const {
    const int best = best_of(-1);
    return best >= 0 ? best : default_arm;
  }

  NCCLBOT_HD void add_to_round(int j) {
    round[round_len++] = Index(j);
    visited.set(j);
  }

  // A random unvisited arm of subspace g, or -1.
  NCCLBOT_HD int random_unvisited(int g, StepRandom& rng) const {
    int n = 0;
    for (int j = 0; j < arms.k; ++j) n += lattice.group[j] == g && !visited.has(j) ? 1 : 0;
    if (n == 0) return -1;
    int pick = int(uniform_below(rng.next_u32(), uint32_t(n)));
    for (int j = 0; j < arms.k; ++j)
      if (lattice.group[j] == g && !visited.has(j) && pick-- == 0) return j;
    return -1;
  }

  // The descent's step (updateStatus): move to the best of the last round if it beats the current
  // arm, else count a failure and turn. False once 2 x axes failures come in a row.
  NCCLBOT_HD bool step_descent(int g) {
    const double here = score(cur[g]);
    double lowest = here;
    int best = -1;
    for (int i = 0; i < next_len[g]; ++i) {
      const double s = score(next[g][i]);
      if (s < lowest) {
        lowest = s;
        best = next[g][i];
      }
    }
    if (best >= 0) {
      lr[g] = 0.8 * (here - lowest) / here;
      cur[g] = Index(best);
      fails[g] = 0;
      return true;
    }
    ++fails[g];
    if (dir[g] > 0) {
      dir[g] = -1;
    } else {
      dir[g] = 1;
      axis[g] = int8_t((axis[g] + 1) % kAxes);
    }
    lr[g] = -1.0;
    next_len[g] = 0;
    return fails[g] != 2 * kAxes;
  }

  // The next points along the current axis and direction (findKCandidatesWithAxis) into the round.
  NCCLBOT_HD int survey_axis(int g) {
    const int a = axis[g], c = cur[g];
    Index order[N];
    int n = 0;
    for (int j = 0; j < arms.k; ++j) {
      if (lattice.group[j] != g || visited.has(j)) continue;
      const double d = along(j, c, a, dir[g]);
      if (!(d > 0.0)) continue;
      // Insert by (axis distance, off-axis distance), then index.
      const double off = across(j, c, a);
      int at = n++;
      while (at > 0) {
        const int p = order[at - 1];
        const double dp = along(p, c, a, dir[g]);
        if (dp < d || (dp == d && across(p, c, a) <= off)) break;
        order[at] = order[at - 1];
        --at;
      }
      order[at] = Index(j);
    }
    if (n == 0) return 0;
    int k = int(lr[g] * double(n));
    k = k > kTopK ? k : kTopK;
    k = k < n ? k : n;
    const int first = k - kTopK > 0 ? k - kTopK : 0;
    next_len[g] = 0;
    for (int i = first; i < k; ++i) {
      next[g][next_len[g]++] = order[i];
      add_to_round(order[i]);
    }
    return next_len[g];
  }

  // survey(): points along the axis, turning while a direction is empty; a new descent from a random
  // unvisited arm when the turns run out. The number of candidates put in the round (0: none left).
  NCCLBOT_HD int survey(int g, StepRandom& rng) {
    for (int turns = 0; turns <= 2 * kAxes; ++turns) {
      if (survey_axis(g) > 0) return next_len[g];
      if (!step_descent(g)) break;
    }
    return restart(g, rng);
  }

  NCCLBOT_HD int restart(int g, StepRandom& rng) {
    if (retry[g] >= kRetry) return 0;
    ++retry[g];
    const int j = random_unvisited(g, rng);
    if (j < 0) return 0;
    cur[g] = Index(j);
    axis[g] = 0;
    dir[g] = 1;
    fails[g] = 0;
    lr[g] = -1.0;
    next_len[g] = 0;
    add_to_round(j);
    return 1;
  }

  // Subspace g's next round into round[] (Job::createResult); 0 when it is done.
  NCCLBOT_HD int subspace_round(int g, StepRandom& rng) {
    round_len = 0;
    if (phase[g] == 0) {  // the sampling round
      phase[g] = 1;
      const int want = pretrain_calls / kRepeat > 1 ? pretrain_calls / kRepeat : 1;
      int n = 0;
      for (int j = 0; j < arms.k; ++j) n += lattice.group[j] == g ? 1 : 0;
      const int stride = n > want ? n / want : 1;
      const int start = n > want ? int(uniform_below(rng.next_u32(), uint32_t(n))) : 0;
      for (int i = 0; i < (n < want ? n : want); ++i) {
        int at = (start + i * stride) % n;
        for (int j = 0; j < arms.k; ++j)
          if (lattice.group[j] == g && at-- == 0) add_to_round(j);
      }
      per_candidate = kRepeat;
      spent[g] += round_len * kRepeat;
      retry[g] = 0;
      next_len[g] = 0;
      return round_len;
    }
    const int budget = pretrain_calls + train_calls;
    if (spent[g] < budget && retry[g] <= kRetry) {
      int n = 0;
      if (retry[g] == 0) {  // the first descent starts at the subspace's best
        const int start = best_of(g);
        if (start < 0) return 0;  // no latency of the sampling round has arrived yet: wait
        retry[g] = 1;
        cur[g] = Index(start);
        axis[g] = 0;
        dir[g] = 1;
        fails[g] = 0;
        lr[g] = -1.0;
        n = survey(g, rng);
      } else {
        n = step_descent(g) ? survey(g, rng) : restart(g, rng);
      }
      if (n > 0) {
        const int left = budget - spent[g];
        per_candidate = left < kRepeat ? left : kRepeat;
        spent[g] += n * per_candidate;
        return n;
      }
    }
    phase[g] = 2;  // done: its best for kBestReplay calls, and the combined best follows it
    const int best = best_of(g);
    if (best < 0) return 0;
    if (score(best) < score(combined)) combined = best;
    round_len = 0;
    round[round_len++] = Index(best);
    per_candidate = kBestReplay;
    return 1;
  }

  // Prunes subspace g when its best is far behind the combined best (nccl_combined_job.h).
  NCCLBOT_HD void maybe_prune(int g) {
    if (phase[g] == 2 || double(spent[g]) <= double(pretrain_calls) + 0.1 * double(train_calls)) return;
    const int best = best_of(g);
    if (best >= 0 && score(best) > 1.5 * score(combined)) phase[g] = 2;
  }

  NCCLBOT_HD int select(StepRandom& rng) {
    if (arms.k == 0) return -1;
    const int64_t t = calls++;
    if (t < kWarmup + kNative) return arms.slot[default_arm];
    if (final_arm >= 0) return arms.slot[final_arm];
    if (round_calls_left == 0 && round_pos + 1 < round_len) {
      ++round_pos;
      round_calls_left = per_candidate;
    }
    if (round_calls_left == 0) {
      if (idle_best >= 0 && idle_updates == updates) return arms.slot[idle_best];
      idle_best = -1;
      round_len = round_pos = 0;
      int changed = 0;  // subspaces whose phase the pass moved
      for (int tries = 0; tries < kGroups && round_len == 0; ++tries) {
        const int g = turn;
        turn = (turn + 1) % kGroups;
        if (phase[g] == 2) continue;
        subspace_round(g, rng);
        maybe_prune(g);
        changed += phase[g] == 2 ? 1 : 0;
      }
      if (round_len == 0) {
        bool done = true;
        for (int g = 0; g < kGroups; ++g) done = done && phase[g] == 2;
        const int best = best_or_default();
        if (done) final_arm = best;
        // Else every subspace waits for latencies: the best so far meanwhile.
        if (!done && changed == 0) {
          idle_best = best;
          idle_updates = updates;
        }
        return arms.slot[best];
      }
      round_calls_left = per_candidate;
    }
    --round_calls_left;
    return arms.slot[round[round_pos]];
  }

  NCCLBOT_HD void update(int slot, double latency_us) {
    const int64_t u = updates++;
    if (u < kWarmup) return;  // warm-up latencies are dropped
    const int j = arms.index[slot];
    if (samples[j] < kMaxSamples) sample[j][samples[j]++] = float(latency_us);
  }

  // Learned fields, for the tuner plugin's state file; the arm set and the graph come from reset().
  template <typename F>
  NCCLBOT_HD void visit_state(F&& f) {
    f(&sample[0][0], arms.k * kMaxSamples, 0.0, 3.0e38);
    f(samples, arms.k, 0.0, double(kMaxSamples));
    f(visited.words, ArmIndexSet<N>::kWords, 0.0, 4294967295.0);
    f(&calls, 1, 0.0, 9.0e18);
    f(&updates, 1, 0.0, 9.0e18);
    f(&round_len, 1, 0.0, double(arms.k));
    f(round, round_len, 0.0, double(arms.k - 1));
    f(&round_pos, 1, 0.0, double(N));
    f(&round_calls_left, 1, 0.0, double(kBestReplay));
    f(&per_candidate, 1, 0.0, double(kBestReplay));
    f(&turn, 1, 0.0, double(kGroups - 1));
    f(&combined, 1, 0.0, double(N - 1));
    f(&final_arm, 1, -1.0, double(N - 1));
    f(phase, kGroups, 0.0, 2.0);
    f(spent, kGroups, 0.0, 2147483647.0);
    f(cur, kGroups, 0.0, double(N - 1));
    f(axis, kGroups, 0.0, double(kAxes - 1));
    f(dir, kGroups, -1.0, 1.0);
    f(fails, kGroups, 0.0, double(2 * kAxes));
    f(retry, kGroups, 0.0, double(kRetry));
    f(lr, kGroups, -1.0, 1.0);
    f(&next[0][0], kGroups * kTopK, 0.0, double(N - 1));
    f(next_len, kGroups, 0.0, double(kTopK));
  }

  NCCLBOT_HD int commit(StepRandom&) const {
    if (arms.k == 0) return -1;
    return arms.slot[final_arm >= 0 ? final_arm : best_or_default()];
  }
};
using AutocclPolicy = AutocclPolicyT<kNumArms>;

}  // namespace ncclbot
