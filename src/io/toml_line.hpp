#pragma once
// The line a TOML node starts on: what the strict TOML readers (presets, studies, manifests,
// campaigns) put in their file:line errors.
#include <toml++/toml.h>

namespace ncclbot {

inline long toml_line(const toml::node& n) {
  return static_cast<long>(n.source().begin.line);
}

}  // namespace ncclbot
