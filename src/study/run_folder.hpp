#pragma once
// The report folder of `ncclbot run` (and `run-units`) is marked as ncclbot's by DIR/.ncclbot-run,
// which lists every file the runner wrote there, one relative path a line. The runner writes only
// into a new or empty folder or a marked one, and it deletes only files on that list (and the
// temporaries "NAME.tmp.*" of listed names), so `--out .` in a project folder can never remove a
// user's own file. A folder written by an older ncclbot can be adopted with an empty marker
// (`touch DIR/.ncclbot-run`): nothing in it is deleted, and stale checkpoints are recomputed anyway.
#include <filesystem>
#include <set>
#include <string>
#include <string_view>

namespace ncclbot::study {

inline constexpr const char* kRunFolderMarker = ".ncclbot-run";

class RunFolder {
 public:
  // Creates `dir` if needed. A non-empty folder without the marker is a UsageError naming `option`
  // and the folder; an empty one gets the marker before anything else is written.
  static RunFolder claim(const std::string& dir, std::string_view option);

  const std::filesystem::path& path() const { return dir_; }

  // Adds relative paths to the list. Call it before writing them: a run killed in between leaves
  // them listed, so the next run may replace or remove them.
  void record(const std::set<std::string>& files) const;
  // Deletes every listed file not in `keep` and every leftover temporary of a listed or kept name;
  // the list becomes the listed files that are kept.
  void remove_unlisted(const std::set<std::string>& keep) const;
  // The listed files (relative paths), as the marker says now.
  std::set<std::string> listed() const;

 private:
  explicit RunFolder(std::filesystem::path dir) : dir_(std::move(dir)) {}
  std::filesystem::path dir_;
};

}  // namespace ncclbot::study
