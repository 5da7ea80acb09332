#pragma once
// Running a helper program (the Python figure scripts) without a shell: the arguments go to
// posix_spawnp as an argv, so no path or name, however odd, is ever interpreted by /bin/sh.
#include <string>
#include <vector>

namespace ncclbot {

enum class ChildOutput {
  kCapture,   // the child's stdout and stderr are collected into ChildResult::output (last 4 KiB)
  kToStderr,  // both go to our stderr (the user sees the child's messages as they come)
};

struct ChildResult {
  bool started = false;  // false when the program could not be run at all (not found, ...)
  int exit_code = -1;    // -1 when killed by a signal
  std::string output;    // with kCapture: the tail of what it printed; else empty
  bool ok() const { return started && exit_code == 0; }
};

// argv[0] is looked up in PATH as execvp does. Waits for the child.
ChildResult run_child(const std::vector<std::string>& argv, ChildOutput output);

}  // namespace ncclbot
