// `ncclbot secret [--out PATH]`: writes a fresh random key for the tuner plugin's decision leader
// (docs/plugin.md "Security model"): 32 bytes from the kernel's random source, hex-encoded, in a
// file only its owner can read (0600), by default $HOME/.config/ncclbot/leader.key, which every
// node of a cluster with a shared home can read. It never overwrites a file: a key in use by a
// running job must not change under it. Point NCCLBOT_LEADER_SECRET_FILE at the file.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>

#include "base/random_key.hpp"
#include "cli/command.hpp"
#include "ncclbot/core/command_streams.hpp"
#include "ncclbot/core/error.hpp"

namespace ncclbot::cli {
namespace secret_command {

// `text` as one single-quoted shell word: every ' becomes '\''.
std::string shell_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string default_key_path() {
  const char* home = std::getenv("HOME");
  if (home == nullptr || *home == '\0') throw UsageError("secret: HOME is not set; give --out PATH");
  return std::string(home) + "/.config/ncclbot/leader.key";
}

// Creates the missing directories of `path` (owner-only, like ~/.config itself should be).
void make_parents(const std::string& path) {
  for (size_t slash = path.find('/', 1); slash != std::string::npos; slash = path.find('/', slash + 1)) {
    const std::string dir = path.substr(0, slash);
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
      throw InputError(dir, 0, std::string("cannot create the directory: ") + std::strerror(errno));
  }
}

int write_key(const std::string& path, bool json) {
  make_parents(path);
  // O_EXCL: never replace an existing file; O_NOFOLLOW: never write through a symlink.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    if (errno == EEXIST)
      throw InputError(path, 0, "already exists; not overwritten (remove it first to make a new key)");
    throw InputError(path, 0, std::string("cannot create: ") + std::strerror(errno));
  }
  const std::string key = random_hex_key() + "\n";  // one line, as the key file is read back
  bool ok = ::fchmod(fd, 0600) == 0;                // whatever the umask
  size_t done = 0;
  while (ok && done < key.size()) {
    const ssize_t n = ::write(fd, key.data() + done, key.size() - done);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) done += size_t(n);
  }
  ok = ok && ::fsync(fd) == 0;
  const int saved = errno;
  ::close(fd);
  if (!ok) {
    ::unlink(path.c_str());
    throw InputError(path, 0, std::string("cannot write: ") + std::strerror(saved));
  }
  // The key itself is never printed: only where it is, single-quoted for a shell, so pasting the
  // line cannot run what a folder name holds ($(...), backticks, spaces).
  (json ? command_err() : command_out())
      << "wrote a new leader key to " << path << "\n"
      << "use it with: export NCCLBOT_LEADER_SECRET_FILE=" << shell_quoted(path) << "\n";
  if (json) command_out() << nlohmann::json{{"key_file", path}, {"mode", "0600"}}.dump(2) << "\n";
  return 0;
}

Action setup(CLI::App& app) {
  auto out = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  app.add_option("--out", *out, "where to write the key (default $HOME/.config/ncclbot/leader.key)");
  app.add_flag("--json", *json, "print one JSON document on stdout (the key file's path, never the key)");
  return [out, json] { return write_key(out->empty() ? default_key_path() : *out, *json); };
}

const bool registered = register_command(
    {"secret", "write a new owner-only key file for the tuner plugin's authenticated leader", setup});

}  // namespace secret_command
}  // namespace ncclbot::cli
