#include "cli/secret_call.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "base/random_key.hpp"
#include "ncclbot/core/error.hpp"

namespace ncclbot::cli {
namespace {

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

void write_key(const std::string& path) {
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
}

}  // namespace

std::string shell_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

SecretCallResult secret_call(const SecretCallOptions& o) {
  const std::string path = o.out.empty() ? default_key_path() : o.out;
  write_key(path);
  return {path};
}

nlohmann::json secret_document(const SecretCallResult& r) {
  return {{"key_file", r.key_file}, {"mode", "0600"}};
}

}  // namespace ncclbot::cli
