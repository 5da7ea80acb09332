#pragma once
// The communicators of a replay job (replay/first_use.hpp): its contexts grouped by (fabric, nodes,
// GPUs per node), each group in the job's order, with the number of algorithms the oracle connects.
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

// Whether a job on `sweep` couples its contexts through first-use charges (a first-use cost).
bool charges_first_use(const Sweep& sweep);

}  // namespace ncclbot
