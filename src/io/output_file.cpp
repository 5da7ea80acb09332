#include "ncclbot/io/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ext/stdio_filebuf.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <istream>

#include "ncclbot/core/error.hpp"

namespace ncclbot {
namespace {

namespace fs = std::filesystem;

std::string quoted(std::string_view option, const std::string& path) {
  return std::string(option) + (option.empty() ? "" : " ") + "'" + path + "'";
}

std::string too_large(uint64_t max_bytes) {
  return "larger than the " + std::to_string(max_bytes >> 20) + " MiB this reader accepts";
}

// Reads from `fd` until EOF or until more than `max_bytes` arrived.
std::string read_fd_capped(int fd, const std::string& source, uint64_t max_bytes) {
  std::string out;
  char buf[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw InputError(source, 0, std::string("read error: ") + std::strerror(errno));
    }
    if (n == 0) break;
    if (out.size() + size_t(n) > max_bytes) throw InputError(source, 0, too_large(max_bytes));
    out.append(buf, size_t(n));
  }
  return out;
}

// Opens `path` for reading without waiting and checks it before any read (InputFile's rules; a pipe
// only with `pipes`); -1 when it does not exist. `st` gets the file's status.
int open_input_fd(const std::string& path, uint64_t max_bytes, bool pipes, struct stat& st) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT) return -1;
    throw InputError(path, 0, std::string("cannot open: ") + std::strerror(errno));
  }
  if (::fstat(fd, &st) != 0 || !(S_ISREG(st.st_mode) || (pipes && S_ISFIFO(st.st_mode)))) {
    ::close(fd);
    throw InputError(path, 0, S_ISDIR(st.st_mode) ? "is a folder, not a file" : "is not a regular file");
  }
  if (S_ISREG(st.st_mode) && uint64_t(st.st_size) > max_bytes) {
    ::close(fd);
    throw InputError(path, 0, too_large(max_bytes));
  }
  // O_NONBLOCK only kept open() from waiting on a FIFO without a writer; reads block as usual.
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

}  // namespace

struct InputFile::Impl {
  __gnu_cxx::stdio_filebuf<char> buffer;  // owns the descriptor and closes it
  std::istream in;
  std::pair<uint64_t, uint64_t> identity;
  Impl(int fd, const struct stat& st)
      : buffer(fd, std::ios::in, size_t(1) << 16),
        in(&buffer),
        identity{uint64_t(st.st_dev), uint64_t(st.st_ino)} {}
};

InputFile::InputFile(const std::string& path, uint64_t max_bytes, bool pipes) {
  struct stat st {};
  const int fd = open_input_fd(path, max_bytes, pipes, st);
  if (fd < 0) throw InputError(path, 0, "cannot open: no such file");
  impl_ = std::make_unique<Impl>(fd, st);
}

InputFile::~InputFile() = default;

std::istream& InputFile::stream() {
  return impl_->in;
}

std::pair<uint64_t, uint64_t> InputFile::identity() const {
  return impl_->identity;
}

std::optional<std::string> read_input_file_if_exists(const std::string& path, uint64_t max_bytes,
                                                     bool pipes) {
  struct stat st {};
  const int fd = open_input_fd(path, max_bytes, pipes, st);
  if (fd < 0) return std::nullopt;
  try {
    std::string text = read_fd_capped(fd, path, max_bytes);
    ::close(fd);
    return text;
  } catch (...) {
    ::close(fd);
    throw;
  }
}

std::string read_input_file(const std::string& path, uint64_t max_bytes, bool pipes) {
  auto text = read_input_file_if_exists(path, max_bytes, pipes);
  if (!text) throw InputError(path, 0, "cannot open: no such file");
  return std::move(*text);
}

bool input_path_exists(const std::string& path) {
  std::error_code ec;
  return fs::status(path, ec).type() != fs::file_type::not_found;  // a loop: type none, "there"
}

std::string read_input_stream(std::istream& in, const std::string& source, uint64_t max_bytes) {
  std::string out;
  char buf[1 << 16];
  while (in) {
    in.read(buf, sizeof buf);
    const std::streamsize n = in.gcount();
    if (n <= 0) break;
    if (out.size() + size_t(n) > max_bytes) throw InputError(source, 0, too_large(max_bytes));
    out.append(buf, size_t(n));
  }
  if (in.bad()) throw InputError(source, 0, "read error");
  return out;
}

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec1, ec2;
  const bool ea = fs::exists(a, ec1), eb = fs::exists(b, ec2);
  if (ea && eb) {
    std::error_code ec;
    return fs::equivalent(a, b, ec);
  }
  // weakly_canonical resolves the existing prefix (symlinked folders included).
  std::error_code ec;
  const fs::path ca = fs::weakly_canonical(fs::absolute(a, ec), ec);
  const fs::path cb = fs::weakly_canonical(fs::absolute(b, ec), ec);
  return ca.lexically_normal() == cb.lexically_normal();
}

void check_output_not_input(const std::string& output, const std::vector<std::string>& inputs,
                            std::string_view option) {
  for (const std::string& in : inputs)
    if (!in.empty() && !output.empty() && same_file(output, in))
      throw UsageError(quoted(option, output) + " is also an input ('" + in +
                       "'); choose another output path");
}

int create_temporary_for(const std::string& path, std::string_view option, std::string& tmp_path) {
  if (path.empty()) throw UsageError(std::string(option) + ": empty path");
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw UsageError(quoted(option, path) + " is a folder, not a file");
  // mkstemp opens with O_CREAT|O_EXCL, so it never follows or reuses an existing name (a planted
  // symlink included); the random suffix keeps concurrent writers apart.
  std::string tmpl = path + ".tmp.XXXXXX";
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) {
    const fs::path parent = fs::path(path).parent_path();
    throw UsageError(quoted(option, path) + ": cannot create a file in '" +
                     (parent.empty() ? std::string(".") : parent.string()) + "': " + std::strerror(errno));
  }
  ::fchmod(fd, 0644);  // mkstemp's 0600 would make outputs unreadable to the user's group
  ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  tmp_path = tmpl;
  return fd;
}

namespace {

// Where an output really goes. A symlink is followed, so its target is replaced and the link kept.
// A device or a pipe (/dev/null, /dev/stdout, a FIFO) is written in place: renaming a file over it
// would replace the device node itself.
struct OutputTarget {
  std::string path;
  bool in_place = false;
};

OutputTarget output_target(const std::string& path, std::string_view option) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);  // follows links
  if (fs::is_directory(st)) throw UsageError(quoted(option, path) + " is a folder, not a file");
  if (fs::exists(st) && !fs::is_regular_file(st)) return {path, true};
  if (!fs::is_symlink(fs::symlink_status(path, ec))) return {path, false};
  const fs::path real = fs::weakly_canonical(path, ec);
  if (ec) throw UsageError(quoted(option, path) + ": cannot resolve the link: " + ec.message());
  return {real.string(), false};
}

int open_in_place(const std::string& path, std::string_view option) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) throw UsageError(quoted(option, path) + ": cannot write: " + std::strerror(errno));
  return fd;
}

void rename_into_place(const std::string& tmp, const std::string& path, std::string_view option) {
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    throw UsageError(quoted(option, path) + ": cannot replace the file: " + why);
  }
}

}  // namespace

void write_output_file(const std::string& requested, std::string_view bytes, std::string_view option) {
  const OutputTarget target = output_target(requested, option);
  const std::string& path = target.path;
  std::string tmp;
  const int fd = target.in_place ? open_in_place(path, option) : create_temporary_for(path, option, tmp);
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const std::string why = std::strerror(errno);
      ::close(fd);
      if (!tmp.empty()) ::unlink(tmp.c_str());
      throw UsageError(quoted(option, path) + ": write failed: " + why);
    }
    done += size_t(n);
  }
  // No fsync: rename is atomic against a killed process, which is what these outputs need.
  if (::close(fd) != 0) {
    const std::string why = std::strerror(errno);
    if (!tmp.empty()) ::unlink(tmp.c_str());
    throw UsageError(quoted(option, path) + ": write failed: " + why);
  }
  if (!target.in_place) rename_into_place(tmp, path, option);
}

struct OutputFile::State {
  std::string path, option, tmp;
  std::ofstream out;
  bool committed = false;
};

OutputFile::OutputFile(std::string path, std::string option) : state_(std::make_unique<State>()) {
  const OutputTarget target = output_target(path, option);
  state_->path = target.path;
  state_->option = std::move(option);
  if (target.in_place) {
    ::close(open_in_place(state_->path, state_->option));  // fails here, with the reason, if it must
    state_->out.open(state_->path, std::ios::binary | std::ios::app);
    if (!state_->out) throw UsageError(quoted(state_->option, state_->path) + ": cannot write");
    return;
  }
  const int fd = create_temporary_for(state_->path, state_->option, state_->tmp);
  ::close(fd);  // the name is ours now (O_EXCL); reopen it as a stream
  state_->out.open(state_->tmp, std::ios::binary | std::ios::trunc);
  if (!state_->out) {
    ::unlink(state_->tmp.c_str());
    throw UsageError(quoted(state_->option, state_->path) + ": cannot write the temporary file");
  }
}

OutputFile::~OutputFile() {
  if (state_ && !state_->committed) {
    state_->out.close();
    if (!state_->tmp.empty()) ::unlink(state_->tmp.c_str());
  }
}

std::ostream& OutputFile::stream() {
  return state_->out;
}

void OutputFile::commit() {
  state_->out.flush();
  const bool ok = bool(state_->out);
  state_->out.close();
  if (!ok || state_->out.fail())
    throw UsageError(quoted(state_->option, state_->path) + ": write failed (disk full?)");
  if (!state_->tmp.empty()) rename_into_place(state_->tmp, state_->path, state_->option);
  state_->committed = true;
}

}  // namespace ncclbot
