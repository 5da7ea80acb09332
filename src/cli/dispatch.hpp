#pragma once
// The whole `ncclbot` command line as a function: the program's main() and the Python module (which
// runs commands in process) share it, so both print the same output and the same one-line errors
// with the same exit codes: 0 success, 2 bad input or usage, 1 an internal failure.
#include <exception>
#include <iosfwd>
#include <string>
#include <vector>

namespace ncclbot::cli {

// argv[0] is the program name; output goes to command_out() and errors to command_err()
// (core/command_streams.hpp: std::cout and std::cerr unless the calling thread redirected them).
int run_cli(int argc, char** argv);
int run_cli(const std::vector<std::string>& args);  // args without the program name

// The one line a failed command prints (to `err`), and its exit code: 2 for InputError, UsageError
// and std::filesystem's errors (they are about a path the user gave), 1 for anything else. Rethrows what is
// not a std::exception.
int report_failure(std::exception_ptr failure, std::ostream& err);

}  // namespace ncclbot::cli
