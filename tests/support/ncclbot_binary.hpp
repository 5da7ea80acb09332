#pragma once
// The `ncclbot` program a test runs, found at run time so that a test program moved with its
// program (the GPU bundle of scripts/gpu-bundle.sh, carried to another machine and folder) runs the
// copy beside it, not a path of the machine that built it:
//   1. $NCCLBOT_BINARY, when set;
//   2. an `ncclbot` in the test program's own folder or up to two folders above it (the bundle:
//      beside it; a build folder: BUILD/tests/FOLDER/x -> BUILD/ncclbot);
//   3. the build's path compiled in as NCCLBOT_BINARY, when the test was built with one.
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

namespace ncclbot::test {

inline std::string ncclbot_binary() {
  if (const char* set = std::getenv("NCCLBOT_BINARY"); set != nullptr && *set != '\0') return set;
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path dir = fs::read_symlink("/proc/self/exe", ec).parent_path();
  for (int up = 0; !ec && up < 3 && !dir.empty(); ++up, dir = dir.parent_path()) {
    const fs::path candidate = dir / "ncclbot";
    std::error_code missing;  // set when the candidate does not exist
    if (fs::is_regular_file(candidate, missing)) return candidate.string();
    if (dir == dir.root_path()) break;
  }
#ifdef NCCLBOT_BINARY
  return NCCLBOT_BINARY;
#else
  return "ncclbot";  // from PATH, the last resort
#endif
}

}  // namespace ncclbot::test
