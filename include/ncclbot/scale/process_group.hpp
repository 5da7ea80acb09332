#pragma once
// The processes one command's work is split across. A plain `ncclbot` is one process and has no
// group; `ncclbot-mpi` (src/mpi) installs a factory that joins MPI's world on first use, so the
// commands themselves never include MPI and the default program has no MPI dependency.
#include <string>
#include <vector>

namespace ncclbot {

class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Rank and count within this node (for one GPU per local rank, threads per rank).
  virtual int local_rank() const = 0;
  virtual int local_size() const = 0;
  // Every rank passes its bytes; rank 0 gets everyone's in rank order, the others an empty list.
  // A failed transfer throws std::runtime_error naming the peer rank. With a rank timeout set,
  // rank 0 aborts the job naming the first rank that has not sent anything that many seconds
  // after rank 0 started waiting (a hung rank).
  virtual std::vector<std::string> gather_to_root(const std::string& bytes) = 0;
  // Seconds rank 0 waits in gather_to_root for a rank's bytes; 0 = for ever (the default).
  virtual void set_rank_timeout(double seconds) = 0;
  // Rank 0's `bytes` replace every other rank's.
  virtual void broadcast_from_root(std::string& bytes) = 0;
  // Ends the whole job at once (a rank that failed must not leave the others waiting).
  [[noreturn]] virtual void abort(int exit_code, const std::string& message) = 0;
};

using ProcessGroupFactory = ProcessGroup* (*)();
bool set_process_group_factory(ProcessGroupFactory factory);

// The group, created on first call; null in a program without one.
ProcessGroup* process_group();

}  // namespace ncclbot
