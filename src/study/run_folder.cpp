#include "study/run_folder.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "ncclbot/core/error.hpp"
#include "ncclbot/io/output_file.hpp"

namespace ncclbot::study {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kHeader = "# ncclbot run folder: files written by ncclbot (one per line)\n";
constexpr std::string_view kOwnerLine = "# owner: ";
// "# sha256 HEX PATH": the digest of a listed file as the command wrote it (a comment to older
// versions, which ignore it).
constexpr std::string_view kChecksumLine = "# sha256 ";
constexpr uint64_t kMaxMarkerBytes = uint64_t(16) << 20;

struct Marker {
  std::optional<FolderOwner> owner;  // absent in markers of older versions and in `touch`ed ones
  std::set<std::string> files;
  std::map<std::string, std::string> checksums;  // listed path -> sha256 of its bytes when written
};

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

FolderOwner owner_from(const std::string& json_text, const fs::path& marker, long line) {
  try {
    const nlohmann::json j = nlohmann::json::parse(json_text);
    return {j.at("command").get<std::string>(), j.value("study", std::string())};
  } catch (const nlohmann::json::exception&) {
    throw InputError(marker.string(), line, "the owner line is damaged");
  }
}

// "HEX PATH" of a checksum line.
void add_checksum(Marker& m, const std::string& rest, const fs::path& marker, long line) {
  const size_t space = rest.find(' ');
  if (space != 64 || !safe_relative(rest.substr(space + 1)))
    throw InputError(marker.string(), line, "the sha256 line is damaged");
  m.checksums[rest.substr(space + 1)] = rest.substr(0, space);
}

Marker read_marker(const fs::path& dir) {
  const fs::path marker = dir / kRunFolderMarker;
  const std::string text = read_input_file(marker.string(), kMaxMarkerBytes, false);
  Marker m;
  std::istringstream in(text);
  std::string line;
  long n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.rfind(kOwnerLine, 0) == 0) m.owner = owner_from(line.substr(kOwnerLine.size()), marker, n);
    if (line.rfind(kChecksumLine, 0) == 0) add_checksum(m, line.substr(kChecksumLine.size()), marker, n);
    if (line.empty() || line.front() == '#') continue;
    if (!safe_relative(line))
      throw InputError(marker.string(), n, "'" + line + "' is not a relative path inside the folder");
    m.files.insert(line);
  }
  return m;
}

// The owner of a folder whose marker names none: an older `ncclbot run` wrote it if it holds a
// results.json, whose study it then holds; otherwise (an adopted folder) nobody.
std::optional<FolderOwner> legacy_owner(const fs::path& dir) {
  try {
    const auto text = read_input_file_if_exists((dir / "results.json").string(), kMaxJsonInputBytes, false);
    if (!text) return std::nullopt;
    return FolderOwner{"run", nlohmann::json::parse(*text).at("study").at("name").get<std::string>()};
  } catch (const std::exception&) {
    return FolderOwner{"run", "?"};  // a results.json of unknown origin: not to be replaced unasked
  }
}

void write_marker(const fs::path& dir, const Marker& m) {
  std::string text(kHeader);
  if (m.owner) {
    nlohmann::json o = {{"command", m.owner->command}};
    if (!m.owner->study.empty()) o["study"] = m.owner->study;
    text += std::string(kOwnerLine) + o.dump() + "\n";
  }
  for (const auto& [f, sum] : m.checksums)
    if (m.files.count(f)) text += std::string(kChecksumLine) + sum + " " + f + "\n";
  for (const auto& f : m.files) text += f + "\n";
  write_output_file((dir / kRunFolderMarker).string(), text, "");
}

bool is_temporary_of(const std::string& name, const std::set<std::string>& owners) {
  const size_t at = name.rfind(".tmp.");
  return at != std::string::npos && owners.count(name.substr(0, at)) > 0;
}

}  // namespace

std::string FolderOwner::text() const {
  return study.empty() ? "ncclbot " + command : "the study '" + study + "' (ncclbot " + command + ")";
}

RunFolder RunFolder::claim(const std::string& dir, std::string_view option, const FolderOwner& owner,
                           bool replace) {
  if (dir.empty()) throw UsageError(std::string(option) + ": empty folder name");
  const fs::path path = dir;
  std::error_code ec;
  if (fs::exists(path, ec) && !fs::is_directory(path, ec))
    throw UsageError(std::string(option) + " '" + dir + "' exists and is not a folder");
  fs::create_directories(path, ec);
  if (ec) throw UsageError(std::string(option) + " '" + dir + "': cannot create the folder: " + ec.message());
  FolderLock lock(path);
  const fs::file_type marker_type = fs::symlink_status(path / kRunFolderMarker, ec).type();
  if (marker_type == fs::file_type::symlink)
    throw UsageError(std::string(option) + " '" + dir + "': its " + kRunFolderMarker +
                     " is a symbolic link; ncclbot writes only inside the folder it is given");
  // A FIFO would stall reading or writing the marker forever; a device or a folder is no marker.
  if (marker_type != fs::file_type::not_found && marker_type != fs::file_type::regular)
    throw UsageError(std::string(option) + " '" + dir + "': its " + kRunFolderMarker +
                     " is not a regular file");
  const std::string take_over = "; give --replace to replace them, or choose another folder";
  if (fs::exists(path / kRunFolderMarker, ec)) {
    Marker m = read_marker(path);  // a damaged marker is an error now, not a surprise later
    const std::optional<FolderOwner> was = m.owner ? m.owner : legacy_owner(path);
    if (was && *was != owner && !replace)
      throw UsageError(std::string(option) + " '" + dir + "' holds the results of " + was->text() +
                       take_over);
    if (m.owner != owner) {
      m.owner = owner;
      write_marker(path, m);
    }
    return RunFolder(path, std::string(option));
  }
  // A run killed while writing the first marker leaves only its temporary: still an empty folder.
  for (const auto& e : fs::directory_iterator(path, ec))
    if (e.path().filename().string().rfind(std::string(kRunFolderMarker) + ".tmp.", 0) == 0 &&
        fs::is_regular_file(e.symlink_status(ec)))
      fs::remove(e.path(), ec);
  if ((!fs::is_empty(path, ec) || ec) && !replace)
    throw UsageError(std::string(option) + " '" + dir + "' is not empty and has no " + kRunFolderMarker +
                     " marker, so it was not written by ncclbot" + take_over);
  write_marker(path, {owner, {}, {}});
  return RunFolder(path, std::string(option));
}

RunFolder RunFolder::claim(const std::string& dir, std::string_view option) {
  const fs::path path = dir;
  std::error_code ec;
  if (!fs::is_regular_file(fs::symlink_status(path / kRunFolderMarker, ec)))
    throw UsageError(std::string(option) + " '" + dir + "' has no " + kRunFolderMarker +
                     " marker, so it was not written by ncclbot");
  FolderLock lock(path);
  read_marker(path);
  return RunFolder(path, std::string(option));
}

void RunFolder::check_inside(const std::string& rel) const {
  std::error_code ec;
  std::string root = fs::weakly_canonical(dir_, ec).string();
  const std::string target = fs::weakly_canonical(dir_ / rel, ec).lexically_normal().string();
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  const std::string prefix = root == "/" ? root : root + "/";
  if (ec || (target != root && target.rfind(prefix, 0) != 0 && target != prefix))
    throw UsageError(
        option_ + ": " + (dir_ / rel).string() + " leads out of " + dir_.string() +
        " through a symbolic link; ncclbot writes and deletes only inside the folder it is given");
}

void RunFolder::check_replaceable(const std::string& rel) const {
  std::error_code ec;
  const fs::path p = dir_ / rel;
  const fs::file_type type = fs::status(p, ec).type();  // a link inside the folder: its target
  if (type == fs::file_type::directory)
    throw UsageError(option_ + ": " + p.string() + " is a folder, not a file; ncclbot writes a file there");
  if (type != fs::file_type::not_found && type != fs::file_type::regular && type != fs::file_type::none)
    throw UsageError(option_ + ": " + p.string() +
                     " is not a regular file (a FIFO or a device); ncclbot writes a file there");
}

fs::path RunFolder::make_subfolder(const std::string& rel) const {
  check_inside(rel);
  const fs::path p = dir_ / rel;
  std::error_code ec;
  fs::create_directories(p, ec);
  if (ec || !fs::is_directory(p, ec))
    throw UsageError(option_ + ": cannot create " + p.string() + (ec ? ": " + ec.message() : std::string()));
  // Files are written here under names only a script may know (figures): none may lead out.
  for (const auto& e : fs::directory_iterator(p, ec))
    check_inside((fs::path(rel) / e.path().filename()).string());
  return p;
}

void RunFolder::record_checksum(const std::string& rel, const std::string& sha256) const {
  FolderLock lock(dir_);
  Marker m = read_marker(dir_);
  if (!m.files.count(rel)) throw std::logic_error("run folder: a checksum of the unlisted '" + rel + "'");
  if (m.checksums[rel] == sha256) return;
  m.checksums[rel] = sha256;
  write_marker(dir_, m);
}

std::optional<std::string> RunFolder::checksum(const std::string& rel) const {
  FolderLock lock(dir_);
  const Marker m = read_marker(dir_);
  const auto it = m.checksums.find(rel);
  if (it == m.checksums.end() || !m.files.count(rel)) return std::nullopt;
  return it->second;
}

std::set<std::string> RunFolder::listed() const {
  FolderLock lock(dir_);
  return read_marker(dir_).files;
}

void RunFolder::record(const std::set<std::string>& files) const {
  FolderLock lock(dir_);
  Marker m = read_marker(dir_);
  const size_t before = m.files.size();
  for (const auto& f : files) {
    if (!safe_relative(f)) throw std::logic_error("run folder entry '" + f + "' escapes the folder");
    check_inside(f);
    check_replaceable(f);
  }
  m.files.insert(files.begin(), files.end());
  if (m.files.size() != before) write_marker(dir_, m);
}

void RunFolder::remove_unlisted(const std::set<std::string>& keep) const {
  FolderLock lock(dir_);
  Marker m = read_marker(dir_);
  const std::set<std::string> listed = m.files;
  std::set<std::string> owners = listed;
  owners.insert(keep.begin(), keep.end());
  owners.insert(kRunFolderMarker);
  // Temporaries of owned names, in every folder that holds an owned name.
  std::set<fs::path> folders;
  for (const auto& f : owners) {
    folders.insert(fs::path(f).parent_path());
    check_inside(fs::path(f).parent_path().string());  // a listed file itself may be a link: never followed
  }
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
  for (const auto& sub : folders)
    for (const auto& e : fs::directory_iterator(dir_ / sub, ec)) {
      if (!fs::is_regular_file(e.symlink_status(ec))) continue;
      const std::string rel = (sub / e.path().filename()).string();
      if (is_temporary_of(rel, owners)) fs::remove(e.path(), ec);
    }
  if (still != listed) {
    m.files = still;
    write_marker(dir_, m);
  }
}

}  // namespace ncclbot::study
