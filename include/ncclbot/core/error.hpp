#pragma once
// Host-side error types. The CLI maps InputError and UsageError to exit code 2 (bad input the
// user can fix) and anything else to exit code 1 (an internal failure).
#include <stdexcept>
#include <string>

namespace ncclbot {

// what() is a C string, which ends at its first NUL: a NUL in a user's value quoted in a message
// (a name, a key) would cut the reason off, so it is kept as the four characters \x00.
inline std::string message_without_nul(const std::string& message) {
  std::string out;
  for (char c : message) out += c == '\0' ? std::string("\\x00") : std::string(1, c);
  return out;
}

// Bad input data: names the file and line (line 0 = the file as a whole) and says why.
class InputError : public std::runtime_error {
 public:
  InputError(std::string file, long line, const std::string& reason)
      : std::runtime_error(format(file, line, reason)), file_(std::move(file)), line_(line) {}
  const std::string& file() const { return file_; }
  long line() const { return line_; }

 private:
  static std::string format(const std::string& file, long line, const std::string& reason) {
    return message_without_nul(line > 0 ? file + ":" + std::to_string(line) + ": " + reason
                                        : file + ": " + reason);
  }
  std::string file_;
  long line_;
};

// Bad command-line usage or arguments (not tied to an input file).
class UsageError : public std::runtime_error {
 public:
  explicit UsageError(const std::string& message) : std::runtime_error(message_without_nul(message)) {}
  explicit UsageError(const char* message) : std::runtime_error(message) {}
};

}  // namespace ncclbot
