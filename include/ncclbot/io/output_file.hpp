#pragma once
// Every file a command writes or reads goes through these, so the rules hold everywhere:
//  - an output is written to a fresh temporary beside it (O_EXCL, never a symlink) and renamed into
//    place only when complete, so a killed command leaves the old file or none, never a torn one;
//    a symlink is followed (its target is replaced), and a device or pipe such as /dev/null or
//    /dev/stdout is written in place, never replaced by a file;
//  - an output never names one of the command's inputs (`replay --sweep S --raw S` would destroy S);
//  - an unwritable output or an unreadable input is a UsageError/InputError naming the path (exit 2);
//  - every input is read with a size cap, so /dev/zero or a huge file is refused, not swallowed.
#include <cstdint>
#include <istream>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ncclbot {

// Size caps of the readers (bytes). Generous for real data; their point is to end the read of a
// device or a runaway file with a clear message instead of exhausting memory.
inline constexpr uint64_t kMaxSweepBytes = uint64_t(4) << 30;        // sweep CSV
inline constexpr uint64_t kMaxConfigBytes = uint64_t(4) << 20;       // study TOML, fabric preset
inline constexpr uint64_t kMaxJsonInputBytes = uint64_t(256) << 20;  // stats input, results.json
inline constexpr uint64_t kMaxPartialBytes = uint64_t(2) << 30;      // merge partials, checkpoints

// The whole file, or an InputError naming `path` when it cannot be opened, is not a regular file
// or (with `pipes`) a pipe, or is larger than `max_bytes` (checked while reading, so it also ends
// /dev/zero). Files of an output folder are read without `pipes`: a FIFO there is refused at once.
std::string read_input_file(const std::string& path, uint64_t max_bytes, bool pipes = true);
// As read_input_file, but nullopt when the file does not exist; every other failure still throws.
std::optional<std::string> read_input_file_if_exists(const std::string& path, uint64_t max_bytes,
                                                     bool pipes = true);
// An input read as a stream (a sweep CSV, an nccl-tests log, a decision log): opened without
// waiting (O_NONBLOCK, so a FIFO without a writer cannot stall the open; its first read then ends
// at once), checked to be a regular file, or with `pipes` a pipe, before anything is read, then
// read as usual through a 64 KiB buffer. InputError naming the path when it cannot be opened, is a
// folder, a device or a refused pipe, or (a regular file) holds more than `max_bytes`.
class InputFile {
 public:
  InputFile(const std::string& path, uint64_t max_bytes, bool pipes = true);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  std::istream& stream();
  // The file's device and inode: one file under two names has one identity.
  std::pair<uint64_t, uint64_t> identity() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// False only when nothing is at `path` (a dangling symlink included). A path that cannot be looked at (a
// symlink loop, a folder without permission) counts as there, so the reader that then opens it names the
// reason (exit 2) where std::filesystem::exists would throw.
bool input_path_exists(const std::string& path);

// Reads all of a stream (stdin) with the same cap; `source` names it in the error.
std::string read_input_stream(std::istream& in, const std::string& source, uint64_t max_bytes);

// True when `a` and `b` name the same file: the same inode when both exist, else the same
// normalised absolute path (an output that does not exist yet can still alias an input path).
bool same_file(const std::string& a, const std::string& b);
// Throws UsageError "OPTION 'OUT' is also an input ('IN'); choose another path" when `output`
// names any of `inputs`.
void check_output_not_input(const std::string& output, const std::vector<std::string>& inputs,
                            std::string_view option);

// Writes `bytes` to `path` atomically (temporary + rename). Failures are UsageErrors naming
// `option` and the path, e.g. "--out 'x/y.csv': cannot create a file in 'x': No such file...".
void write_output_file(const std::string& path, std::string_view bytes, std::string_view option);

// An output written as a stream (a CSV row by row): rows go to a temporary beside `path`, which
// becomes `path` only on commit(). Destroyed without commit (an error, an exception), the temporary
// is removed and `path` is untouched; killed, the temporary stays behind but `path` never holds a
// partial file.
class OutputFile {
 public:
  OutputFile(std::string path, std::string option);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  std::ostream& stream();
  void commit();  // flush, check for write errors, rename into place

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Creates a unique temporary "DIR/NAME.tmp.XXXXXX" for `path` with O_EXCL|O_NOFOLLOW; returns its
// fd and sets `tmp_path`. Throws UsageError naming `option` and `path` on failure.
int create_temporary_for(const std::string& path, std::string_view option, std::string& tmp_path);

}  // namespace ncclbot
