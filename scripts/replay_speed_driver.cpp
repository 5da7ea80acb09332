// Replay speed of a few policies through replay_batch<4> (what the CPU engine runs), built from one
// revision's headers: scripts/replay_speed_vs_rev.sh builds it for an old revision and for the
// working tree and runs both side by side, so a change's effect is measured in one run on one machine.
#include <chrono>
#include <cstdio>
#include "ncclbot/bench/bench_sweep.hpp"
#include "ncclbot/policy/policy.hpp"
#include "ncclbot/replay/exploration_table.hpp"
#include "ncclbot/replay/policy_spec.hpp"
#include "ncclbot/replay/replay_batch.hpp"
using namespace ncclbot;
template <class P>
double run(const Sweep& s, P proto, bool table) {
  auto t0 = std::chrono::steady_clock::now();
  double sink = 0;
  long steps = 0;
  for (int c = 0; c < s.num_contexts(); ++c) {
    ReplayTask task;
    task.sweep = s.view();
    task.context = c;
    task.stream_id = c + 1;
    task.horizon = 4096;
    P pol = proto;
#ifdef NCCLBOT_SELECT_AIDS  // the exploration table arrives at select time (since the policy registry)
    if (table) task.aids = exploration_aids(pol, task);
#else
    if (table) attach_exploration_tables(pol, task);
#endif
    P g[4];
    ReplayTask ts[4];
    ReplayOutcome o[4];
    for (int b = 0; b < 4; ++b) {
      g[b] = pol;
      ts[b] = task;
      ts[b].seed = b;
    }
    replay_batch<4>(g, ts, o);
    for (auto& x : o) sink += x.online_loss;
    steps += 4L * 4096;
  }
  double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return sink < 0 ? 0.0 : double(steps) / sec;
}
int main() {
  Sweep s = make_bench_sweep(12, 32, 8);
  for (int rep = 0; rep < 3; ++rep) {
    GreedyPolicy gr{};
    gr.params = {1.0};
    Ucb1Policy u{};
    u.params = {0.1, 1.0};
    ThompsonPolicy th{};
    th.params = {1.0, 0.1};
    EpsGreedyPolicy eg{};
    eg.params = {0.1, 0.0, 1.0};
    printf("greedy %.3g  ucb1 %.3g  thompson %.3g  egreedy %.3g\n", run(s, gr, false), run(s, u, true),
           run(s, th, true), run(s, eg, false));
  }
}
