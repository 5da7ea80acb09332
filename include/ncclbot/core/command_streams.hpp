#pragma once
// Where a command's output goes: std::cout, std::cerr and std::cin, unless the calling thread
// redirected them (CommandStreams). The Python module redirects each command it runs into strings of
// its own, so two threads running two commands each get their own output, with no global stream
// swapped and no lock held. parallel_for() hands its caller's streams to its workers. Header-only,
// so whatever links parallel_for() links this too.
#include <iostream>

namespace ncclbot {

namespace detail {
inline thread_local std::ostream* command_out_stream = nullptr;
inline thread_local std::ostream* command_err_stream = nullptr;
inline thread_local std::istream* command_in_stream = nullptr;
}  // namespace detail

inline std::ostream& command_out() {
  return detail::command_out_stream ? *detail::command_out_stream : std::cout;
}
inline std::ostream& command_err() {
  return detail::command_err_stream ? *detail::command_err_stream : std::cerr;
}
inline std::istream& command_in() {
  return detail::command_in_stream ? *detail::command_in_stream : std::cin;
}

// The calling thread's streams for its lifetime (null: the stream as it was); then the ones before.
class CommandStreams {
 public:
  // The calling thread's streams now, to hand to a thread it starts.
  struct Current {
    std::ostream* out;
    std::ostream* err;
    std::istream* in;
  };
  static Current current() {
    return {detail::command_out_stream, detail::command_err_stream, detail::command_in_stream};
  }

  CommandStreams(std::ostream* out, std::ostream* err, std::istream* in = nullptr) : before_(current()) {
    if (out) detail::command_out_stream = out;
    if (err) detail::command_err_stream = err;
    if (in) detail::command_in_stream = in;
  }
  explicit CommandStreams(const Current& c) : CommandStreams(c.out, c.err, c.in) {}
  ~CommandStreams() {
    detail::command_out_stream = before_.out;
    detail::command_err_stream = before_.err;
    detail::command_in_stream = before_.in;
  }
  CommandStreams(const CommandStreams&) = delete;
  CommandStreams& operator=(const CommandStreams&) = delete;

 private:
  Current before_;
};

}  // namespace ncclbot
