#include "study/run_folder.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "ncclbot/core/error.hpp"
#include "ncclbot/io/output_file.hpp"

namespace ncclbot::study {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kHeader = "# ncclbot run folder: files written by ncclbot (one per line)\n";
constexpr uint64_t kMaxMarkerBytes = uint64_t(16) << 20;

// Holds flock() on the folder for one read-modify-write of the marker, so concurrent `run-units`
// shards writing into the same folder do not lose each other's entries.
class FolderLock {
 public:
  explicit FolderLock(const fs::path& dir) : fd_(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {
    if (fd_ < 0) throw UsageError("cannot open the folder '" + dir.string() + "': " + std::strerror(errno));
    while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
    }
  }
  ~FolderLock() { ::close(fd_); }
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

 private:
  int fd_;
};

// A listed path must stay inside the folder: relative, no "..", no empty or dot components.
bool safe_relative(const std::string& p) {
  if (p.empty() || p.front() == '/' || p.size() > 4096) return false;
  for (const auto& part : fs::path(p))
    if (part == ".." || part == "." || part.empty()) return false;
  for (char c : p)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return false;
  return true;
}

std::set<std::string> read_marker(const fs::path& dir) {
  const fs::path marker = dir / kRunFolderMarker;
  const std::string text = read_input_file(marker.string(), kMaxMarkerBytes);
  std::set<std::string> files;
  std::istringstream in(text);
  std::string line;
  long n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty() || line.front() == '#') continue;
    if (!safe_relative(line))
      throw InputError(marker.string(), n, "'" + line + "' is not a relative path inside the folder");
    files.insert(line);
  }
  return files;
}

void write_marker(const fs::path& dir, const std::set<std::string>& files) {
  std::string text(kHeader);
  for (const auto& f : files) text += f + "\n";
  write_output_file((dir / kRunFolderMarker).string(), text, "");
}

bool is_temporary_of(const std::string& name, const std::set<std::string>& owners) {
  const size_t at = name.rfind(".tmp.");
  return at != std::string::npos && owners.count(name.substr(0, at)) > 0;
}

}  // namespace

RunFolder RunFolder::claim(const std::string& dir, std::string_view option) {
  if (dir.empty()) throw UsageError(std::string(option) + ": empty folder name");
  const fs::path path = dir;
  std::error_code ec;
  if (fs::exists(path, ec) && !fs::is_directory(path, ec))
    throw UsageError(std::string(option) + " '" + dir + "' exists and is not a folder");
  fs::create_directories(path, ec);
  if (ec) throw UsageError(std::string(option) + " '" + dir + "': cannot create the folder: " + ec.message());
  FolderLock lock(path);
  if (fs::exists(path / kRunFolderMarker, ec)) {
    read_marker(path);  // a damaged marker is an error now, not a surprise later
    return RunFolder(path);
  }
  // A run killed while writing the first marker leaves only its temporary: still an empty folder.
  for (const auto& e : fs::directory_iterator(path, ec))
    if (e.path().filename().string().rfind(std::string(kRunFolderMarker) + ".tmp.", 0) == 0 &&
        fs::is_regular_file(e.symlink_status(ec)))
      fs::remove(e.path(), ec);
  if (!fs::is_empty(path, ec) || ec)
    throw UsageError(std::string(option) + " '" + dir + "' is not empty and has no " + kRunFolderMarker +
                     " marker, so it was not written by ncclbot run: choose a new or empty folder");
  write_marker(path, {});
  return RunFolder(path);
}

std::set<std::string> RunFolder::listed() const {
  FolderLock lock(dir_);
  return read_marker(dir_);
}

void RunFolder::record(const std::set<std::string>& files) const {
  FolderLock lock(dir_);
  std::set<std::string> listed = read_marker(dir_);
  const size_t before = listed.size();
  for (const auto& f : files) {
    if (!safe_relative(f)) throw std::logic_error("run folder entry '" + f + "' escapes the folder");
    listed.insert(f);
  }
  if (listed.size() != before) write_marker(dir_, listed);
}

void RunFolder::remove_unlisted(const std::set<std::string>& keep) const {
  FolderLock lock(dir_);
  const std::set<std::string> listed = read_marker(dir_);
  std::set<std::string> owners = listed;
  owners.insert(keep.begin(), keep.end());
  owners.insert(kRunFolderMarker);
  std::set<std::string> still;
  std::error_code ec;
  for (const auto& f : listed) {
    if (keep.count(f)) {
      still.insert(f);
      continue;
    }
    const fs::path p = dir_ / f;
    // Only plain files are ever removed: a folder or a symlink in a listed place is left alone.
    if (fs::is_regular_file(fs::symlink_status(p, ec))) fs::remove(p, ec);
  }
  // Temporaries of owned names, in every folder that holds an owned name.
  std::set<fs::path> folders;
  for (const auto& f : owners) folders.insert(fs::path(f).parent_path());
  for (const auto& sub : folders)
    for (const auto& e : fs::directory_iterator(dir_ / sub, ec)) {
      if (!fs::is_regular_file(e.symlink_status(ec))) continue;
      const std::string rel = (sub / e.path().filename()).string();
      if (is_temporary_of(rel, owners)) fs::remove(e.path(), ec);
    }
  if (still != listed) write_marker(dir_, still);
}

}  // namespace ncclbot::study
