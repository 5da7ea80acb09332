#pragma once
// Ranks of a communicator as processes of their own, as the plugin's benchmarks run leader mode:
// `ranks` forks of this process, each running `rank_main(rank, barrier, out)` (it must end the
// process, e.g. with _exit) with a barrier all ranks share and a pipe they write their results to.
#include <pthread.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ncclbot::bench {

// What the ranks wrote, in the order it arrived; nullopt when a rank process failed (a non-zero exit
// or a signal) or no barrier or pipe could be made.
inline std::optional<std::string> run_rank_processes(
    int ranks, const std::function<void(int rank, pthread_barrier_t* barrier, int out)>& rank_main) {
  auto* barrier = static_cast<pthread_barrier_t*>(
      mmap(nullptr, sizeof(pthread_barrier_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  if (barrier == MAP_FAILED) return std::nullopt;
  pthread_barrierattr_t attr;
  pthread_barrierattr_init(&attr);
  pthread_barrierattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
  pthread_barrier_init(barrier, &attr, unsigned(ranks));
  int fds[2];
  if (pipe(fds) != 0) {
    munmap(barrier, sizeof(pthread_barrier_t));
    return std::nullopt;
  }
  std::vector<pid_t> pids;
  for (int r = 0; r < ranks; ++r) {
    const pid_t pid = fork();
    if (pid == 0) {
      close(fds[0]);
      rank_main(r, barrier, fds[1]);
      _exit(6);  // rank_main ends the process itself
    }
    pids.push_back(pid);
  }
  close(fds[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) text.append(buf, size_t(n));
  close(fds[0]);
  bool ok = true;
  for (pid_t pid : pids) {
    int status = 0;
    ok = waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0 && ok;
  }
  pthread_barrier_destroy(barrier);
  munmap(barrier, sizeof(pthread_barrier_t));
  if (!ok) return std::nullopt;
  return text;
}

}  // namespace ncclbot::bench
