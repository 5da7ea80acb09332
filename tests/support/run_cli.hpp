#pragma once
// Runs the built `ncclbot` binary as a user would and captures its exit code, stdout and stderr.
#include <sys/wait.h>
#include <unistd.h>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "support/ncclbot_binary.hpp"

namespace ncclbot::test {

struct CliResult {
  int exit_code = -1;  // -1 if killed by a signal
  int signal = 0;
  std::string out, err;
};

inline std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::string temp_dir() {
  std::string tmpl = (std::getenv("TMPDIR") ? std::string(std::getenv("TMPDIR")) : std::string("/tmp")) +
                     "/ncclbot-test-XXXXXX";
  if (!mkdtemp(tmpl.data())) return "/tmp";
  return tmpl;
}

// `args` is passed through /bin/sh; callers quote paths themselves.
// Runs `program ARGS` through /bin/sh (ARGS quoted by the caller).
inline CliResult run_cli_with(const std::string& program, const std::string& args,
                              const std::string& stdin_text = "") {
  static int counter = 0;
  const std::string dir = temp_dir();
  const std::string base = dir + "/run" + std::to_string(counter++);
  {
    std::ofstream in(base + ".in", std::ios::binary);
    in << stdin_text;
  }
  const std::string cmd =
      "'" + program + "' " + args + " <'" + base + ".in' >'" + base + ".out' 2>'" + base + ".err'";
  const int status = std::system(cmd.c_str());
  CliResult r;
  if (WIFEXITED(status)) {
    r.exit_code = WEXITSTATUS(status);
    // /bin/sh reports a child killed by signal N as exit code 128+N.
    if (r.exit_code > 128) r.signal = r.exit_code - 128;
  } else if (WIFSIGNALED(status)) {
    r.signal = WTERMSIG(status);
  }
  r.out = read_all(base + ".out");
  r.err = read_all(base + ".err");
  return r;
}

// Runs the built `ncclbot ARGS` (support/ncclbot_binary.hpp says which one).
inline CliResult run_cli(const std::string& args, const std::string& stdin_text = "") {
  return run_cli_with(ncclbot_binary(), args, stdin_text);
}

inline void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

// A file the build puts beside the ncclbot program (the plugin, the test fixtures' programs).
inline std::string beside_ncclbot(const std::string& name) {
  const std::string bin = ncclbot_binary();
  return bin.substr(0, bin.rfind('/') + 1) + name;
}

// The tuner plugin, built beside the ncclbot program.
inline std::string plugin_path() {
  return beside_ncclbot("libnccl-tuner-ncclbot.so");
}

// How often `needle` occurs in `text` (overlapping occurrences counted).
inline size_t count_of(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// Every regular file under `dir` (relative path -> contents).
inline std::map<std::string, std::string> snapshot(const std::string& dir) {
  namespace fs = std::filesystem;
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) files[fs::relative(e.path(), dir).string()] = read_all(e.path().string());
  return files;
}

}  // namespace ncclbot::test
