#include "study/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace ncclbot::study {

void write_file_atomic(const std::string& path, std::string_view bytes) {
  // The pid keeps two concurrent writers from sharing a temporary; a stale one left by a killed
  // run is simply overwritten or ignored.
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("cannot write " + tmp + ": " + std::strerror(errno));
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const std::string why = std::strerror(errno);
      ::close(fd);
      throw std::runtime_error("cannot write " + tmp + ": " + why);
    }
    done += size_t(n);
  }
  // No fsync: rename is atomic against a killed process, which is what resuming needs; after a
  // machine crash a renamed but empty checkpoint fails to parse and is simply recomputed.
  ::close(fd);
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw std::runtime_error("cannot rename " + tmp + " to " + path + ": " + std::strerror(errno));
}

std::optional<std::string> read_file_if_exists(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace ncclbot::study
