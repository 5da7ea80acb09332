// Saving a state file (state_file.hpp): the path checks, the directory lock, the merge with what
// the file holds now and the atomic replacement.
#include "plugin/state_file_io.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "plugin/state_file.hpp"

namespace ncclbot::plugin {
namespace {

std::string dir_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}
std::string base_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string errno_text() {
  return std::strerror(errno);
}

// Reads up to `size` bytes from `fd` (fewer if the file shrank) and closes it.
std::string read_and_close(int fd, size_t size) {
  std::string bytes(size, '\0');
  size_t have = 0;
  while (have < bytes.size()) {
    const ssize_t n = ::read(fd, bytes.data() + have, bytes.size() - have);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    have += size_t(n);
  }
  ::close(fd);
  bytes.resize(have);
  return bytes;
}

// Writes `out` to a new temporary file beside `base` in the directory `dfd`, fsyncs it and renames
// it over `base`. false + `why` when a step fails (the temporary file, if made, is removed). Called
// by save_state_bytes with the directory's flock held.
bool replace_file_atomically(int dfd, const std::string& base, const std::string& out, std::string* why) {
  uint64_t salt = 0;
  if (::getrandom(&salt, sizeof salt, 0) != ssize_t(sizeof salt))
    salt = uint64_t(std::chrono::steady_clock::now().time_since_epoch().count()) ^ uint64_t(::getpid());
  char suffix[40];
  std::snprintf(suffix, sizeof suffix, ".tmp.%016llx", (unsigned long long)salt);
  const std::string tmp = base + suffix;
  const int fd = ::openat(dfd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    *why = "cannot create a temporary file beside it (" + errno_text() + ")";
    return false;
  }
  size_t done = 0;
  bool ok = true;
  while (ok && done < out.size()) {
    const ssize_t n = ::write(fd, out.data() + done, out.size() - done);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) done += size_t(n);
  }
  if (!ok) *why = "write failed (" + errno_text() + ")";
  if (ok && ::fsync(fd) != 0) ok = false, *why = "fsync failed (" + errno_text() + ")";
  if (::close(fd) != 0 && ok) ok = false, *why = "close failed (" + errno_text() + ")";
  if (ok && ::renameat(dfd, tmp.c_str(), dfd, base.c_str()) != 0)
    ok = false, *why = "rename failed (" + errno_text() + ")";
  if (!ok) ::unlinkat(dfd, tmp.c_str(), 0);
  return ok;
}

}  // namespace

bool save_state_bytes(const std::string& path, const std::function<std::string(const std::string*)>& merge,
                      std::string* warning) {
  const std::string dir = dir_of(path), base = base_of(path);
  if (base.empty() || base == "." || base == "..") {
    *warning = "NCCLBOT_STATE=" + path + ": not a file name";
    return false;
  }
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) {
    *warning = "NCCLBOT_STATE=" + path + ": cannot open its directory (" + errno_text() + ")";
    return false;
  }
  auto give_up = [&](const std::string& why) {
    *warning = "NCCLBOT_STATE=" + path + ": " + why;
    ::close(dfd);  // also releases the lock
    return false;
  };
  // Concurrent jobs take turns (and merge); a lock held for seconds is not worth stalling NCCL's
  // finalize for.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (::flock(dfd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR)
      return give_up("cannot lock its directory (" + errno_text() + ")");
    if (std::chrono::steady_clock::now() >= deadline)
      return give_up("its directory stayed locked; not saved");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::string bytes;
  bool exists = false;
  struct stat st;
  if (::fstatat(dfd, base.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
    if (!S_ISREG(st.st_mode)) return give_up("not a regular file; left alone, not saved");
    if (uint64_t(st.st_size) > kMaxStateFileBytes)
      return give_up("larger than an ncclbot state file; left alone");
    const int fd = ::openat(dfd, base.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return give_up("cannot read (" + errno_text() + "); not saved");
    bytes = read_and_close(fd, size_t(st.st_size));
    if (!has_state_magic(bytes)) return give_up("not written by ncclbot; left alone, not saved");
    exists = true;
  } else if (errno != ENOENT) {
    return give_up("cannot stat (" + errno_text() + "); not saved");
  }
  const std::string out = merge(exists ? &bytes : nullptr);

  std::string why;
  if (!replace_file_atomically(dfd, base, out, &why)) return give_up(why);
  ::fsync(dfd);  // the rename itself survives a crash
  ::close(dfd);
  return true;
}

}  // namespace ncclbot::plugin
