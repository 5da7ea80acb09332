#include "plugin/regular_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ncclbot::plugin {

ReadResult read_regular_file(const std::string& path, const ReadRules& rules, std::string* bytes,
                             std::string* why) {
  bytes->clear();
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below anyway.
  const int flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | (rules.no_follow ? O_NOFOLLOW : 0);
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0) {
    if (errno == ENOENT) return ReadResult::kMissing;
    *why = path + ": " +
           (errno == ELOOP ? std::string("a symbolic link, refused")
                           : "cannot open (" + std::string(std::strerror(errno)) + ")");
    return ReadResult::kRefused;
  }
  struct stat st;
  std::string problem;
  if (::fstat(fd, &st) != 0)
    problem = "cannot stat (" + std::string(std::strerror(errno)) + ")";
  else if (!S_ISREG(st.st_mode))
    problem = "not a regular file";
  else if (rules.owner_only && st.st_uid != ::geteuid())
    problem = "owned by another user";
  else if (rules.owner_only && (st.st_mode & 077) != 0)
    problem = "readable or writable by group or others (chmod 600 it)";
  else if (uint64_t(st.st_size) > rules.max_bytes)
    problem = "larger than " + std::to_string(rules.max_bytes) + " bytes";
  if (problem.empty()) {
    try {
      bytes->resize(size_t(st.st_size) + 1);  // one more: a file that grew is caught
      size_t have = 0;
      for (;;) {
        const ssize_t n = ::read(fd, bytes->data() + have, bytes->size() - have);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (n < 0) {
          problem = "read failed (" + std::string(std::strerror(errno)) + ")";
          break;
        }
        if (n == 0) break;
        have += size_t(n);
        if (have == bytes->size()) {
          if (have > rules.max_bytes) {
            problem = "larger than " + std::to_string(rules.max_bytes) + " bytes";
            break;
          }
          bytes->resize(have * 2 > rules.max_bytes + 1 ? rules.max_bytes + 1 : have * 2);
        }
      }
      bytes->resize(have);
    } catch (const std::exception&) {
      problem = "cannot hold it in memory";
    }
  }
  ::close(fd);
  if (!problem.empty()) {
    bytes->clear();
    *why = path + ": " + problem;
    return ReadResult::kRefused;
  }
  return ReadResult::kOk;
}

}  // namespace ncclbot::plugin
