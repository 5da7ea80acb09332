// The MPI process group of ncclbot-mpi (scale/process_group.hpp). MPI's world is joined the first
// time a command asks for the group and left at exit. Errors return instead of aborting inside
// MPI, so a failed transfer becomes a message naming the peer rank; a rank that dies outright is
// reported by mpirun, which then ends the job ("process rank K ... exited on signal N"); one that
// hangs is named by rank 0 when a rank timeout is set (--rank-timeout), and the job aborted.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "ncclbot/core/command_streams.hpp"
#include "ncclbot/replay/backend.hpp"
#include "ncclbot/scale/process_group.hpp"

namespace ncclbot {
namespace {

constexpr int kTagLength = 1001, kTagBytes = 1002;
constexpr size_t kChunk = size_t(1) << 30;  // MPI counts are int

std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, text, &len);
  return std::string(text, size_t(len));
}

void check(int code, const std::string& what) {
  if (code != MPI_SUCCESS) throw std::runtime_error(what + ": " + mpi_error_text(code));
}

void finalize_at_exit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

class MpiProcessGroup final : public ProcessGroup {
 public:
  MpiProcessGroup() {
    // A rank that has finished waits for the others; by default OpenMPI spins while it waits,
    // taking a core from the ranks still replaying when ranks share cores. Yield instead, unless
    // the user chose otherwise.
    setenv("OMPI_MCA_mpi_yield_when_idle", "1", 0);
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    std::atexit(finalize_at_exit);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local_rank_);
    MPI_Comm_size(node, &local_size_);
    MPI_Comm_free(&node);
    set_device_local_rank(local_rank_);  // one rank per GPU when a GPU backend is chosen
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return local_rank_; }
  int local_size() const override { return local_size_; }

  std::vector<std::string> gather_to_root(const std::string& bytes) override {
    inject_fault();
    if (rank_ != 0) {
      const uint64_t length = bytes.size();
      check(MPI_Send(&length, 1, MPI_UINT64_T, 0, kTagLength, MPI_COMM_WORLD),
            "rank " + std::to_string(rank_) + " sending its result length to rank 0");
      for (size_t at = 0; at < bytes.size(); at += kChunk)
        check(MPI_Send(bytes.data() + at, int(std::min(kChunk, bytes.size() - at)), MPI_BYTE, 0, kTagBytes,
                       MPI_COMM_WORLD),
              "rank " + std::to_string(rank_) + " sending its result to rank 0");
      return {};
    }
    std::vector<std::string> all(static_cast<size_t>(size_));
    all[0] = bytes;
    // Every rank's length first, polled, so a rank that never reports is noticed (rank timeout).
    std::vector<uint64_t> lengths(static_cast<size_t>(size_), 0);
    std::vector<MPI_Request> pending(static_cast<size_t>(size_), MPI_REQUEST_NULL);
    for (int peer = 1; peer < size_; ++peer)
      check(MPI_Irecv(&lengths[size_t(peer)], 1, MPI_UINT64_T, peer, kTagLength, MPI_COMM_WORLD,
                      &pending[size_t(peer)]),
            "receiving the result length of rank " + std::to_string(peer));
    wait_for_ranks(pending, true);
    for (int peer = 1; peer < size_; ++peer) {
      std::string& in = all[size_t(peer)];
      in.resize(lengths[size_t(peer)]);
      for (size_t at = 0; at < in.size(); at += kChunk)
        check(MPI_Recv(in.data() + at, int(std::min(kChunk, in.size() - at)), MPI_BYTE, peer, kTagBytes,
                       MPI_COMM_WORLD, MPI_STATUS_IGNORE),
              "receiving the result of rank " + std::to_string(peer));
    }
    return all;
  }

  void set_rank_timeout(double seconds) override { rank_timeout_ = seconds; }

  void broadcast_from_root(std::string& bytes) override {
    // The length without blocking, then waited for as in a gather: a rank that waits for rank 0
    // (tune's slowest rank, the next bootstrap interval) sleeps instead of spinning in MPI. No
    // timeout: rank 0 may legitimately work alone for long (the report) between broadcasts.
    uint64_t length = bytes.size();
    std::vector<MPI_Request> pending(1, MPI_REQUEST_NULL);
    check(MPI_Ibcast(&length, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD, &pending[0]),
          "rank " + std::to_string(rank_) + " receiving a broadcast length from rank 0");
    wait_for_ranks(pending, false);
    bytes.resize(length);
    for (size_t at = 0; at < bytes.size(); at += kChunk)
      check(
          MPI_Bcast(bytes.data() + at, int(std::min(kChunk, bytes.size() - at)), MPI_BYTE, 0, MPI_COMM_WORLD),
          "rank " + std::to_string(rank_) + " receiving a broadcast from rank 0");
  }

  [[noreturn]] void abort(int exit_code, const std::string& message) override {
    command_err() << message << " (aborting all " << size_ << " ranks)" << std::endl;
    MPI_Abort(MPI_COMM_WORLD, exit_code);
    std::_Exit(exit_code);
  }

 private:
  // Waits until every request completes (pending[k]: the one from rank k), sleeping between
  // checks so that a waiting rank leaves its core to the ranks still working. With `timeout` and
  // a rank timeout set, the first rank whose request is still open that long after the wait began
  // is declared hung and the job is aborted.
  void wait_for_ranks(std::vector<MPI_Request>& pending, bool timeout) {
    const auto start = std::chrono::steady_clock::now();
    auto nap = std::chrono::microseconds(20);
    for (;;) {
      int open_rank = -1;
      for (size_t peer = 0; peer < pending.size(); ++peer) {
        if (pending[peer] == MPI_REQUEST_NULL) continue;
        int done = 0;
        check(MPI_Test(&pending[peer], &done, MPI_STATUS_IGNORE),
              "rank " + std::to_string(rank_) + " waiting for rank " + std::to_string(peer));
        if (!done && open_rank < 0) open_rank = int(peer);
      }
      if (open_rank < 0) return;
      const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (timeout && rank_timeout_ > 0 && waited >= rank_timeout_) {
        std::ostringstream message;
        message << "ncclbot: rank " << open_rank << " has not reported for " << rank_timeout_
                << " s (hung?); aborting all " << size_ << " ranks";
        command_err() << message.str() << std::endl;
        MPI_Abort(MPI_COMM_WORLD, 1);
        std::_Exit(1);
      }
      std::this_thread::sleep_for(nap);
      nap = std::min(nap * 2, std::chrono::microseconds(1000));  // a late rank costs rank 0 at most 1 ms
    }
  }

  // Fault injection for the tests and for trying the failure paths by hand, just before a rank
  // reports its results: NCCLBOT_FAULT_KILL_RANK=K makes rank K die by SIGKILL,
  // NCCLBOT_FAULT_HANG_RANK=K makes it sleep for ever (a hung rank).
  void inject_fault() const {
    const char* victim = std::getenv("NCCLBOT_FAULT_KILL_RANK");
    if (victim && std::atoi(victim) == rank_) std::raise(SIGKILL);
    const char* sleeper = std::getenv("NCCLBOT_FAULT_HANG_RANK");
    if (sleeper && std::atoi(sleeper) == rank_)
      for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
  }

  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  double rank_timeout_ = 0;
};

ProcessGroup* make_mpi_group() {
  static MpiProcessGroup group;
  return &group;
}

const bool installed = set_process_group_factory(&make_mpi_group);

}  // namespace
}  // namespace ncclbot
