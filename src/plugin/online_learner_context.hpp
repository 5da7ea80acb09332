#pragma once
// One context of a communicator's learner (online_learner.hpp, whose header comment has the
// protocol): its arms and policy, the leader's memo of decisions by call index, the latencies held
// back, the calls awaiting their latencies (local mode), the decision log's rings, and the chunk
// sizes handed over (knob arms); and the ranks' first cost tables gathered before a context starts.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <type_traits>
#include <vector>

#include "ncclbot/core/arm.hpp"
#include "ncclbot/policy/policy.hpp"
#include "plugin/context_watch.hpp"
#include "plugin/decision_log_writer.hpp"

namespace ncclbot::plugin {

// How far (calls) a follower may ask ahead of the leader's own call count in a context.
inline constexpr uint64_t kMaxFollowerLead = 4096;

// A decision as the memo keeps it: an arm index (the slot over N = kNumArms), -1 for NCCL's own.
template <int N>
using LearnerIndex = std::conditional_t<(N < 128), int8_t, int16_t>;

template <int N>
struct LearnerContext {
  using Index = LearnerIndex<N>;
  ArmMaskT<N> mask;                // the arms the policy may choose
  ArmMask slots;                   // the usable slots of the table it was seeded from (slot mode: `mask`)
  float slot_prior[kNumNcclArms];  // that table's costs by slot (the state file keeps them)
  std::vector<Arm> arms;           // knob arms, in Arm order (index: the memo's); empty in slot mode
  float prior[N];
  AnyPolicyT<N> policy;
  uint64_t first_bytes = 0;  // nBytes of the context's first call: keys its Philox stream
  uint64_t stream_id = 0;
  uint64_t steps = 0;      // policy selections so far: the Philox step of the next one
  uint64_t next_call = 0;  // this rank's next call index in the context
  uint64_t absorbed = 0;   // latencies of this context the policy has been updated with
  uint64_t memo_base = 0;  // call index of memo[0]; calls before it are NCCL's choice
  uint64_t retired_at = UINT64_MAX;
  int retired_slot = -1;
  std::deque<Index> memo;  // decisions by call index (leader mode)
  // Leader mode: the latencies arrived and held back, oldest first (the front one is call
  // `absorbed`'s; slot -1: a report the policy cannot use, an arm outside the mask or a bad
  // value, kept so that arrivals stay numbered by call), and the policy's decisions whose
  // latencies are not absorbed yet, by arm (each arm's count saturates at 65,535: a leader whose
  // latencies never arrive).
  struct Arrival {
    double latency_us;
    int slot;
  };
  std::deque<Arrival> held;
  // Leader mode: the indices of captured calls whose place among the arrivals is still ahead
  // (ascending): when arrivals reach one, a placeholder takes it.
  std::deque<uint64_t> captured_ahead;
  PendingPullsT<N> in_flight{};
  uint64_t steps_at_feedback = 0;  // `steps` when the last report of this context came in
  ContextWatch watch;              // with a watch rule: latencies per arm, the latest decision's arm
  // Local mode: this rank's calls whose latencies have not come back, oldest first, from call
  // `awaiting_first` on, each with the arm its decision counts pending (-1: none; kSettled: a
  // captured call, settled already). A latency settles the oldest call's decision whichever arm
  // ran, so a decision NCCL overrode is never left pending. Allocated on the context's first
  // call; past kAwaitCap calls the oldest is settled unanswered.
  static constexpr size_t kAwaitCap = 2048;
  static constexpr Index kSettled = -2;
  std::vector<Index> awaiting;
  size_t awaiting_head = 0, awaiting_count = 0;
  uint64_t awaiting_first = 0;
  uint64_t bound = 0;  // local mode: the next call a Coll event takes (bind_call)
  // With a decision log: the decided calls not yet measured, oldest first, and each size of the
  // context whose cost table the log holds, with NCCL's pick for it (a size class holds several
  // sizes; a context restored from a state file starts with none).
  struct Pending {  // 32 bytes
    uint64_t index, bytes;
    double propensity;
    Index slot;         // the arm that will run
    int8_t nccl_slot;   // NCCL's pick
    bool lost = false;  // its probability was lost (a full ahead ring): the call goes unlogged
  };
  // A ring of the last kPendingCap decisions (a latency later than that is logged without its
  // decision): allocated on the context's first logged call, no allocation per call.
  static constexpr size_t kPendingCap = 1024;
  std::vector<Pending> pending;
  size_t pending_head = 0, pending_count = 0;
  // Beside pending[i] whose propensity is an integral (Thompson sampling: NaN in pending[i]): the
  // contest the log's writer thread computes it from. Allocated with pending, for such policies.
  std::vector<ThompsonContestT<N>> contests;
  LoggedSizes logged_sizes;
  // Leader mode with a log: the decisions made for calls the logging rank has not reached yet (a
  // follower asked ahead), oldest first, each with its probability (and contest, beside it),
  // until that rank's own call takes them. A ring that doubles up to kAheadCap: followers stay
  // within kMaxFollowerLead of the leader's own calls, so it is rarely full; when it is, the
  // oldest decision's call is not logged (counted as dropped), never logged without its
  // probability.
  struct Ahead {
    uint64_t index;
    double propensity;
  };
  static constexpr size_t kAheadCap = 4 * kMaxFollowerLead;
  std::vector<Ahead> ahead;
  std::vector<ThompsonContestT<N>> ahead_contests;
  size_t ahead_head = 0, ahead_count = 0;
  // Knob arms: the chunk getChunkSize handed over for this rank's recent calls, by call (a ring of
  // kChunkCap, allocated at the first; call UINT64_MAX: none), read when the call's latency comes.
  struct ChunkSet {
    uint64_t call = UINT64_MAX;
    uint32_t chunk = 0;
  };
  static constexpr size_t kChunkCap = 1024;
  std::vector<ChunkSet> chunks;
};

// The ranks' first cost tables of one context, until it starts.
struct LearnerAgreement {
  std::vector<uint64_t> seen;  // one bit per member whose table arrived
  size_t count = 0;
  ArmMask mask;  // the first table's usable slots; every other must have the same
  float prior[kNumArms];
  uint64_t bytes = 0;
};

}  // namespace ncclbot::plugin
