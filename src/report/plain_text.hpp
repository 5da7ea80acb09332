#pragma once
// Study text (names, descriptions, claims) is the user's: control characters would reach a terminal
// or an editor through report.md, or a browser through report.html, so the reports drop them.
#include <string>

namespace ncclbot::report {

// `s` without C0 controls (but tab, and newline where `multiline`; elsewhere a newline becomes a
// space), DEL, C1 controls (in UTF-8), ANSI escape sequences (ESC '[' ... final byte) and Unicode's
// bidi controls; its line and paragraph separators become newlines (or spaces).
std::string printable_text(const std::string& s, bool multiline);

}  // namespace ncclbot::report
