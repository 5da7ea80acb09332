#pragma once
// The communicators of a replay job (replay/first_use.hpp): its contexts grouped by (fabric, nodes,
// GPUs per node), each group in the job's order, with the number of algorithms the oracle connects.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ncclbot {

class Sweep;

// The contexts of a job grouped by communicator (see above).
struct Communicators {
  std::vector<int> members;    // job-context indices, each communicator's in call order
  std::vector<int> begin;      // communicator g is members[begin[g], begin[g + 1])
  std::vector<int> connected;  // m per communicator: the distinct algorithms of its best arms
  int count() const { return int(connected.size()); }
};

// The communicators of `contexts` (sweep indices) of `sweep`, in order of first appearance.
Communicators communicators_of(const Sweep& sweep, const std::vector<int>& contexts);

// The communicators whose first-use charges couple a job's contexts: communicators_of() when `sweep`
// has a first-use cost, else none (count() == 0).
Communicators first_use_communicators(const Sweep& sweep, const std::vector<int>& contexts);

struct ReplayJob;  // replay/cpu_engine.hpp

// Adds the first-use charges (replay/first_use.hpp, ChargeFirstUses) to `configs` configs' online
// losses on the host, `job.threads` at a time: `online` and `first_use` in the engines' per-replay
// layout [config][seed][job context] (first_use with kNumAlgos per replay), `stream_ids` per job
// context, at horizon `horizon`.
void charge_first_uses(const ReplayJob& job, const Communicators& comms,
                       const std::vector<uint64_t>& stream_ids, const uint32_t* first_use, double* online,
                       size_t configs, int horizon);

}  // namespace ncclbot
