#include "base/child_process.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace ncclbot {
namespace {

constexpr size_t kKeptOutput = 4096;

}  // namespace

ChildResult run_child(const std::vector<std::string>& argv, ChildOutput output) {
  ChildResult result;
  if (argv.empty()) return result;
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  int pipe_fds[2] = {-1, -1};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (output == ChildOutput::kCapture) {
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
      posix_spawn_file_actions_destroy(&actions);
      result.output = std::string("cannot create a pipe: ") + std::strerror(errno);
      return result;
    }
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  } else {
    posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO);
  }
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (pipe_fds[1] >= 0) ::close(pipe_fds[1]);
  if (rc != 0) {
    if (pipe_fds[0] >= 0) ::close(pipe_fds[0]);
    result.output = "cannot run " + argv[0] + ": " + std::strerror(rc);
    return result;
  }
  result.started = true;
  if (pipe_fds[0] >= 0) {
    char buf[4096];
    while (true) {
      const ssize_t n = ::read(pipe_fds[0], buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      result.output.append(buf, size_t(n));
      if (result.output.size() > 2 * kKeptOutput) result.output.erase(0, result.output.size() - kKeptOutput);
    }
    ::close(pipe_fds[0]);
    if (result.output.size() > kKeptOutput) result.output.erase(0, result.output.size() - kKeptOutput);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  // posix_spawnp reports a missing program as exit 127 of the child on glibc.
  if (result.exit_code == 127 && result.output.empty()) result.output = "cannot run " + argv[0];
  return result;
}

}  // namespace ncclbot
