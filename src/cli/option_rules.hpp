#pragma once
// Rules every option of every subcommand obeys, applied once in main() instead of per option:
//  - an integer option takes a plain decimal integer: no sign on an unsigned one (CLI11 would read
//    `--seed -1` as 2^64 - 1), nothing out of its range (CLI11 would clamp 99999999999999999999 to
//    2^64 - 1), no octal or hex surprise ("010" is not 8);
//  - an option given with an empty value (`--collectives ""`) is an error, never the default.
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace ncclbot::cli {

void apply_option_rules(CLI::App& app);

// "" when no argument holds a NUL byte; else which option's value (or which argument) does. Only a
// caller with std::strings (the Python module) can pass one: argv's C strings end at the NUL.
std::string nul_byte_problem(const std::vector<std::string>& args);

// An error message as one line: control characters (a newline in a user's file name) are shown as
// \xNN, so stderr carries exactly one line per error, and one over 600 bytes keeps its first 300
// and last 200 (the file and line, the reason) around a count of what was cut.
std::string one_line(const std::string& message);

}  // namespace ncclbot::cli
