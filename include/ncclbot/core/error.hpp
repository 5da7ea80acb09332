#pragma once
// Host-side error types. The CLI maps InputError and UsageError to exit code 2 (bad input the
// user can fix) and anything else to exit code 1 (an internal failure).
#include <stdexcept>
#include <string>

namespace ncclbot {

// Bad input data: names the file and line (line 0 = the file as a whole) and says why.
class InputError : public std::runtime_error {
 public:
  InputError(std::string file, long line, const std::string& reason)
      : std::runtime_error(format(file, line, reason)), file_(std::move(file)), line_(line) {}
  const std::string& file() const { return file_; }
  long line() const { return line_; }

 private:
  static std::string format(const std::string& file, long line, const std::string& reason) {
    return line > 0 ? file + ":" + std::to_string(line) + ": " + reason : file + ": " + reason;
  }
  std::string file_;
  long line_;
};

// Bad command-line usage or arguments (not tied to an input file).
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace ncclbot
