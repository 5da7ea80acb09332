#pragma once
// The cost of watching (docs/replay.md "The cost of watching"): to learn, the tuner plugin times
// each call through the profiler's Coll and KernelCh events, and NCCL instruments the kernel of every
// call it profiles that way. A watched call runs slower than an unwatched one, by an amount that
// depends on the NCCL version, the collective and the size. Scoring as deployed charges it on
// every call whose latency the policy observes:
//     l_t += f * (mu(a_t) / mu*_t),   f = 1 / (1 - busbw_loss) - 1,
// the played arm's own latency times f relative to the best arm now (replay/replay.hpp), where
// busbw_loss is the bandwidth a watched call loses (data/observation_costs.csv, with its sources;
// 0 where nothing was measured). Policies that never need a latency (AUTO, random, the oracle and the
// supervised selectors' frozen tables) watch nothing and pay nothing (policy_watches, policy/policy.hpp).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ncclbot/core/context.hpp"
#include "ncclbot/core/nccl_version.hpp"
#include "ncclbot/core/sweep.hpp"

namespace ncclbot {

// The NCCL version scoring as deployed assumes unless told: the current release.
inline constexpr std::string_view kDefaultNcclVersion = "2.32";
// The largest f a user may set (--observation-cost, a study's observation_cost): a watched call ten
// times its own latency slower.
inline constexpr double kMaxObservationCost = 10.0;

// One row of data/observation_costs.csv: in NCCL `nccl` (MAJOR.MINOR), `collective` calls of
// min_bytes..max_bytes (inclusive) lose busbw_loss of their bus bandwidth when watched.
struct ObservationCostRow {
  std::string nccl;
  Collective collective = Collective::kAllReduce;
  uint64_t min_bytes = 0, max_bytes = 0;
  double busbw_loss = 0.0;  // in [0, 1)
};

// The rows of a `nccl,collective,min_bytes,max_bytes,busbw_loss` table; bad text is an InputError
// naming `path` and the line (a version that is not MAJOR.MINOR, an unknown collective, sizes out of
// order, a loss outside [0, 1), two rows of one version and collective that overlap).
std::vector<ObservationCostRow> parse_observation_costs(std::string_view text, const std::string& path);

// What the library compiled in from data/observation_costs.csv, parsed.
const std::vector<ObservationCostRow>& compiled_observation_costs();
// The rows alone, one `nccl,collective,min_bytes,max_bytes,busbw_loss` line each: what a study's
// checkpoints depend on, so an edit of the file's comments keeps every checkpoint valid.
std::string observation_costs_text(const std::vector<ObservationCostRow>& rows);
// Whether the compiled table has any row for NCCL `nccl` (MAJOR.MINOR).
bool observation_cost_measured(std::string_view nccl);

// f of one call in `c` under NCCL `nccl` (MAJOR.MINOR): the fraction of the call's latency that
// watching it adds, from the compiled table; 0 where no row covers it.
double observation_cost_fraction(std::string_view nccl, const Context& c);

// How a scoring run charges watching: the table's values for an NCCL version, or one fraction f for
// every call (--observation-cost; 0 charges nothing).
struct ObservationCharge {
  std::string nccl = std::string(kDefaultNcclVersion);  // MAJOR.MINOR
  std::optional<double> flat;                           // f for every call, replacing the table
};

// f per sweep context under `charge` (ReplayJob::observation_cost); empty when nothing is charged
// anywhere, so a run with no cost of watching replays exactly as before.
std::vector<double> observation_costs(const Sweep& sweep, const ObservationCharge& charge);

// One line for reports: what `charge` charges, and where the figures come from.
std::string describe_observation_charge(const ObservationCharge& charge);

}  // namespace ncclbot
