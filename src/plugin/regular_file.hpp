#pragma once
// Reading a file the plugin was pointed at without letting the path hurt the job: only a regular
// file is read (a FIFO, a device such as /dev/zero or a directory is refused at once, never
// opened in a way that blocks), and never more than a cap (docs/plugin.md "Files the plugin
// touches").
#include <cstddef>
#include <string>

namespace ncclbot::plugin {

struct ReadRules {
  size_t max_bytes = 0;
  bool no_follow = false;   // refuse a symbolic link
  bool owner_only = false;  // owned by this user, no group or world permission bits (secrets)
};

enum class ReadResult { kOk, kMissing, kRefused };

// kMissing: no such file (`why` empty); kRefused: `why` says what is wrong, naming `path`.
ReadResult read_regular_file(const std::string& path, const ReadRules& rules, std::string* bytes,
                             std::string* why);

}  // namespace ncclbot::plugin
