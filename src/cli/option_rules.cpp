#include "cli/option_rules.hpp"

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "ncclbot/core/quoted_value.hpp"

namespace ncclbot::cli {
namespace {

// "" when `text` is a decimal integer (optionally with '-' when `allow_sign`) that fits in 64 bits;
// else why not. The option's own type then checks the narrower range.
std::string integer_problem(const std::string& text, bool allow_sign) {
  size_t i = 0;
  if (allow_sign && !text.empty() && text[0] == '-') i = 1;
  if (i == text.size()) return "expected an integer, got " + quoted_value(text);
  for (size_t k = i; k < text.size(); ++k)
    if (text[k] < '0' || text[k] > '9')
      return (text[0] == '-' && !allow_sign) ? "must not be negative, got " + quoted_value(text)
                                             : "expected a decimal integer, got " + quoted_value(text);
  if (text.size() - i > 1 && text[i] == '0')
    return "expected a decimal integer without leading zeros, got " + quoted_value(text);
  errno = 0;
  if (allow_sign)
    (void)std::strtoll(text.c_str(), nullptr, 10);
  else
    (void)std::strtoull(text.c_str(), nullptr, 10);
  if (errno == ERANGE) return "out of range: " + quoted_value(text);
  return "";
}

void apply_to(CLI::App& app) {
  for (CLI::Option* opt : app.get_options()) {
    if (opt->get_expected_min() == 0) continue;  // flags take no value
    // CLI11's type names ("UINT", "INT", "FLOAT", "TEXT"), maybe followed by ":VALIDATOR".
    const std::string type = opt->get_type_name();
    const auto is = [&](const char* name) {
      const std::string n = name;
      return type.compare(0, n.size(), n) == 0 && (type.size() == n.size() || type[n.size()] == ':');
    };
    const bool is_unsigned = is("UINT");
    const bool is_signed = is("INT");
    opt->check(CLI::Validator(
        [is_unsigned, is_signed](std::string& value) -> std::string {
          if (value.empty()) return "empty value: give a value or leave the option out";
          if (is_unsigned || is_signed) return integer_problem(value, is_signed);
          return "";
        },
        "", "ncclbot option rules"));
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) apply_to(*sub);
}

}  // namespace

void apply_option_rules(CLI::App& app) {
  apply_to(app);
}

std::string nul_byte_problem(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    const size_t nul = arg.find('\0');
    if (nul == std::string::npos) continue;
    const bool joined = arg.rfind("-", 0) == 0 && arg.find('=') < nul;  // --out=keep\0.csv
    const std::string shown = quoted_value(joined ? arg.substr(arg.find('=') + 1) : arg);
    std::string whose = "argument " + std::to_string(i + 1);
    if (joined)
      whose = arg.substr(0, arg.find('='));
    else if (arg.rfind("-", 0) == 0)
      whose = "option " + arg.substr(0, nul);
    else if (i > 0 && args[i - 1].rfind("-", 0) == 0 && args[i - 1].find('=') == std::string::npos)
      whose += " (after " + quoted_value(args[i - 1]) + ")";  // the value of --out, unless a flag
    return whose + " " + shown + " contains a NUL byte, which no path or value can hold";
  }
  return "";
}

namespace {

// A message whose user's value was not cut where it was quoted (a 200 KB key, a 100 KB name) is cut
// here: its start (the file and line) and its end (the reason) stay, the middle is counted.
constexpr size_t kLongestMessage = 600, kMessageHead = 300, kMessageTail = 200;

size_t utf8_boundary(const std::string& s, size_t i) {
  while (i > 0 && i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) --i;
  return i;
}

std::string shortened(const std::string& message) {
  if (message.size() <= kLongestMessage) return message;
  const size_t head = utf8_boundary(message, kMessageHead);
  const size_t tail = utf8_boundary(message, message.size() - kMessageTail);
  return message.substr(0, head) + "\u2026(" + std::to_string(tail - head) + " bytes cut)\u2026" +
         message.substr(tail);
}

}  // namespace

std::string one_line(const std::string& full_message) {
  const std::string message = shortened(full_message);
  std::string out;
  for (char c : message) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace ncclbot::cli
