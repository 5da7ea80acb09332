#pragma once
// Writing NCCLBOT_STATE without ever hurting what the path names (docs/plugin.md "State file"): it
// replaces only a regular file that starts with the state file's magic (or creates one); a symlink,
// a device, a FIFO or a user's own file is left alone. Under an flock on the directory it re-reads
// the file and merges, writes a temporary file opened O_EXCL|O_NOFOLLOW beside it, fsyncs it,
// renames it over the target and fsyncs the directory.
#include <functional>
#include <string>

namespace ncclbot::plugin {

// Replaces `path` with merge(the bytes it holds now, or null when there is no such file); false +
// `warning` when the path is refused or a step fails (nothing is then changed).
bool save_state_bytes(const std::string& path, const std::function<std::string(const std::string*)>& merge,
                      std::string* warning);

}  // namespace ncclbot::plugin
