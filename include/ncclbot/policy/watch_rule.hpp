#pragma once
// When a learning policy needs the latency of a call (docs/replay.md "The cost of watching"): the
// plugin pays for every call it watches (deployed/observation_cost.hpp), and a policy that has
// settled learns little from one more latency of an arm it knows well. `@watch:full=K,floor=F`
// after a policy spec watches a call of arm a with probability
//     p(n_a) = 1                      while n_a < K,
//              max(F, K / n_a)        after,
// n_a the latencies of arm a observed so far. An arm's confidence interval narrows as 1 / sqrt(n_a),
// so p falls as the square of its width: every arm is watched fully until it has K latencies, an
// arm played for ever is watched about sqrt(2 K t) times in its first t plays while K / n_a is above
// F, and then on a fraction F of its calls, so a level shift is still seen. Whether a call is
// watched is decided before it runs (the plugin switches the profiler's kernel events for the next
// call), from a Philox word of its own lane (kWatchLane), so it never shifts a policy's draws.
#include <cstdint>

#include "ncclbot/core/hd.hpp"
#include "ncclbot/core/philox.hpp"

namespace ncclbot {

struct WatchRule {
  uint32_t full = 0;   // K: latencies of an arm always watched; 0 watches every call
  double floor = 1.0;  // F in (0, 1]: the least fraction of an arm's calls watched
};

// `@watch` with no options: the rule with the lowest mean online loss at 10,000 calls per context of
// those compared in experiments/watching.toml (docs/results.md "The cost of watching"); the floor
// was not reached there, so it is the larger of the two that tied.
inline constexpr WatchRule kDefaultWatchRule{4, 0.01};

NCCLBOT_HD inline bool watches_every_call(const WatchRule& r) {
  return r.full == 0 || r.floor >= 1.0;
}

NCCLBOT_HD inline double watch_probability(const WatchRule& r, uint32_t observed) {
  if (watches_every_call(r) || observed < r.full) return 1.0;
  const double p = double(r.full) / double(observed);
  return p > r.floor ? p : r.floor;
}

// The Philox lane of the watch decision of step t, (seed, id): no policy draws this far.
inline constexpr uint32_t kWatchLane = 0xffffffffu;

// Whether call t is watched, for an arm with `observed` latencies so far.
NCCLBOT_HD inline bool watch_call(const WatchRule& r, uint32_t observed, uint64_t seed, uint64_t id,
                                  uint32_t t) {
  const double p = watch_probability(r, observed);
  if (p >= 1.0) return true;
  return uniform_open01(philox_block(seed, id, t, kWatchLane).v[0]) < p;
}

}  // namespace ncclbot
