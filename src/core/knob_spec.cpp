#include "ncclbot/core/knob_spec.hpp"

#include <algorithm>
#include <cctype>

#include "ncclbot/core/error.hpp"
#include "ncclbot/core/knob_limits.hpp"

namespace ncclbot {
namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == sep) out.push_back(s.substr(start, i - start)), start = i + 1;
  return out;
}

// A non-negative integer with an optional K (KiB) or M (MiB) suffix.
uint64_t parse_size(const std::string& key, const std::string& v) {
  uint64_t scale = 1;
  std::string digits = v;
  if (!digits.empty() && (digits.back() == 'K' || digits.back() == 'M')) {
    scale = digits.back() == 'K' ? 1024 : 1024 * 1024;
    digits.pop_back();
  }
  if (digits.empty() || digits.size() > 10 ||
      !std::all_of(digits.begin(), digits.end(), [](unsigned char c) { return std::isdigit(c); }))
    throw UsageError(key + ": '" + v + "' is not a count (digits, optionally K or M)");
  return std::stoull(digits) * scale;
}

std::vector<uint64_t> parse_list(const std::string& key, const std::string& list) {
  std::vector<uint64_t> out;
  for (const std::string& v : split(list, ',')) out.push_back(parse_size(key, v));
  if (list.empty()) throw UsageError(key + " has an empty list");
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void check_chunk(const std::string& key, uint64_t c, int proto) {
  if (c == 0) return;
  if (c > kMaxChunkBytes) throw UsageError(key + ": " + std::to_string(c) + " is above 2^30");
  if (proto >= 0 && !chunk_fits_grain(c, proto))
    throw UsageError(key + ": " + std::to_string(c) + " is not a multiple of the protocol's grain (" +
                     std::to_string(chunk_grain_bytes(proto)) + " B)");
  if (proto < 0 && !chunk_fits_grain(c, 0) && !chunk_fits_grain(c, 1) && !chunk_fits_grain(c, 2))
    throw UsageError("chunk: " + std::to_string(c) +
                     " is a multiple of no protocol's grain (LL 16, LL128 1920, Simple 512 B)");
}

KnobSpec parse_knob_text(const std::string& text) {
  static const char* const kProtoKeys[kNumProtos] = {"chunk.LL", "chunk.LL128", "chunk.Simple"};
  KnobSpec spec;
  bool have_channels = false, have_own[kNumProtos] = {};
  std::vector<uint64_t> common = {0};
  for (const std::string& part : split(text, ';')) {
    const size_t eq = part.find('=');
    const std::string key = part.substr(0, eq);
    if (eq == std::string::npos) throw UsageError("'" + part + "' is not KEY=LIST");
    const std::vector<uint64_t> values = parse_list(key, part.substr(eq + 1));
    if (key == "channels") {
      for (uint64_t c : values)
        if (c > uint64_t(kMaxChannels)) throw UsageError("channels: " + std::to_string(c) + " is above 64");
      spec.channels.assign(values.begin(), values.end()), have_channels = true;
      continue;
    }
    if (key == "chunk") {
      for (uint64_t c : values) check_chunk(key, c, -1);
      common = values;
      continue;
    }
    const auto* it = std::find(std::begin(kProtoKeys), std::end(kProtoKeys), key);
    if (it == std::end(kProtoKeys))
      throw UsageError("unknown key '" + key + "' (channels, chunk, chunk.LL, chunk.LL128, chunk.Simple)");
    const int p = int(it - std::begin(kProtoKeys));
    for (uint64_t c : values) check_chunk(key, c, p);
    spec.chunks[p].assign(values.begin(), values.end()), have_own[p] = true;
  }
  if (!have_channels) spec.channels = {0};
  for (int p = 0; p < kNumProtos; ++p)
    if (!have_own[p])
      for (uint64_t c : common)
        if (c == 0 || chunk_fits_grain(c, p)) spec.chunks[p].push_back(uint32_t(c));
  return spec;
}

}  // namespace

KnobSpec parse_knob_spec(const std::string& text, const std::string& source) {
  try {
    return parse_knob_text(text);
  } catch (const UsageError& e) {
    throw UsageError(source + ": " + e.what());
  }
}

std::vector<Arm> knob_arms(const KnobSpec& spec, int slot) {
  std::vector<Arm> arms;
  for (int c : spec.channels)
    for (uint32_t k : spec.chunks[int(slot_proto(slot))])
      arms.push_back(Arm{slot_algo(slot), slot_proto(slot), uint16_t(c), k});
  return arms;
}

}  // namespace ncclbot
