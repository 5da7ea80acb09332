#pragma once
// The output folders of `ncclbot run` (and `run-units`), `telemetry` and `hipipe --study` are marked
// as ncclbot's by DIR/.ncclbot-run, which names the command (and for `run` the study) that owns the
// folder and lists every file it wrote there, one relative path a line. A command writes only into
// a new or empty folder or one it owns, unless told to replace what is there (--replace); `run`
// deletes only files on that list (and the temporaries "NAME.tmp.*" of listed names), so `--out .`
// in a project folder can never remove a user's own file, nor one study's run remove another's.
// Every path written or deleted must resolve inside the folder: a symbolic link leading out of it
// is refused. A folder written by an older ncclbot can be adopted with an empty marker (`touch
// DIR/.ncclbot-run`): nothing in it is deleted, and stale checkpoints are recomputed anyway. The
// marker also keeps the SHA-256 of files whose later edits must be noticed (results.json).
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace ncclbot::study {

inline constexpr const char* kRunFolderMarker = ".ncclbot-run";

// Who wrote a folder: the command, and for `run` the study (by its [study] name, so an edited study
// still resumes in its own folder).
struct FolderOwner {
  std::string command;  // "run", "telemetry", "hipipe --study"
  std::string study;    // `run`'s study name; empty for the other commands
  bool operator==(const FolderOwner&) const = default;
  // "the study 'paper' (ncclbot run)", "ncclbot telemetry"
  std::string text() const;
};

class RunFolder {
 public:
  // Creates `dir` if needed. A non-empty folder without the marker, or one whose marker names
  // another owner, is a UsageError naming `option`, the folder and its owner, unless `replace`:
  // then `owner` takes it over (nothing is deleted that its marker does not list). An empty folder
  // gets the marker before anything else is written. A marker that is a symbolic link is refused.
  static RunFolder claim(const std::string& dir, std::string_view option, const FolderOwner& owner,
                         bool replace);
  // A marked folder opened to read its list, whoever owns it (export-table reads a run's folder).
  static RunFolder claim(const std::string& dir, std::string_view option);

  const std::filesystem::path& path() const { return dir_; }

  // Creates the subfolder `rel`; a UsageError if it, a folder on the way or an entry in it leads
  // out of the folder.
  std::filesystem::path make_subfolder(const std::string& rel) const;
  // Adds relative paths to the list. Call it before writing them: a run killed in between leaves
  // them listed, so the next run may replace or remove them. A path that resolves outside the
  // folder (through a symbolic link), or that holds a folder, a FIFO or a device (which would
  // stall or defeat the write), is a UsageError, and nothing is listed.
  void record(const std::set<std::string>& files) const;
  // Deletes every listed file not in `keep` and every leftover temporary of a listed or kept name;
  // the list becomes the listed files that are kept. A listed path that resolves outside the folder
  // is a UsageError, before anything is deleted.
  void remove_unlisted(const std::set<std::string>& keep) const;
  // Records the SHA-256 (hex) of the listed file `rel` as just written, so a reader can tell a
  // file edited since from the command's own (export-table checks results.json).
  void record_checksum(const std::string& rel, const std::string& sha256) const;
  // The recorded SHA-256 of `rel`; nullopt when none was recorded (a folder of an older version).
  std::optional<std::string> checksum(const std::string& rel) const;
  // The listed files (relative paths), as the marker says now.
  std::set<std::string> listed() const;

 private:
  RunFolder(std::filesystem::path dir, std::string option)
      : dir_(std::move(dir)), option_(std::move(option)) {}
  // Throws UsageError when DIR/rel resolves outside the folder.
  void check_inside(const std::string& rel) const;
  // Throws UsageError when DIR/rel is there but is not a regular file.
  void check_replaceable(const std::string& rel) const;
  std::filesystem::path dir_;
  std::string option_;
};

}  // namespace ncclbot::study
