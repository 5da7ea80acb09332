#include <mpi.h>

#include <cstdlib>

#include "rank_group.hpp"

namespace ncclbot::sweep_tool {

namespace {

class MpiRankGroup final : public RankGroup {
 public:
  MpiRankGroup() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    // The ranks sharing this node's memory are the node's GPUs, numbered by their world rank.
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local_rank_);
    MPI_Comm_size(node, &local_size_);
    MPI_Comm_free(&node);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return local_rank_; }
  int local_size() const override { return local_size_; }
  void broadcast(void* data, size_t bytes) override {
    MPI_Bcast(data, int(bytes), MPI_BYTE, 0, MPI_COMM_WORLD);
  }
  void max_in_place(std::vector<double>& values) override {
    MPI_Allreduce(MPI_IN_PLACE, values.data(), int(values.size()), MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  }
  [[noreturn]] void abort(int code) override {
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);
  }

 private:
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
};

}  // namespace

std::unique_ptr<RankGroup> make_rank_group(int* argc, char*** argv) {
  MPI_Init(argc, argv);
  return std::make_unique<MpiRankGroup>();
}

void finish_rank_group() {
  MPI_Finalize();
}

}  // namespace ncclbot::sweep_tool
