#pragma once
// The ranks of one sweep, one per GPU: MPI's world where the program is built with MPI
// (mpi_rank_group.cpp), else a single rank (single_rank_group.cpp), which is enough to run on one GPU.
#include <cstddef>
#include <memory>
#include <vector>

namespace ncclbot::sweep_tool {

class RankGroup {
 public:
  virtual ~RankGroup() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual int local_rank() const = 0;  // the GPU this rank drives
  virtual int local_size() const = 0;  // ranks on this node: the sweep's gpus_per_node
  // Rank 0's bytes to every rank.
  virtual void broadcast(void* data, size_t bytes) = 0;
  // Element-wise maximum over the ranks, in place on every rank.
  virtual void max_in_place(std::vector<double>& values) = 0;
  // Ends every rank with `code` (a rank that failed: the others may wait in a collective for it).
  [[noreturn]] virtual void abort(int code) = 0;
};

// The group of this process; takes MPI's arguments. finish_rank_group() ends it in order.
std::unique_ptr<RankGroup> make_rank_group(int* argc, char*** argv);
void finish_rank_group();

}  // namespace ncclbot::sweep_tool
