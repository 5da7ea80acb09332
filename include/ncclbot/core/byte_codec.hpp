#pragma once
// The one byte codec of ncclbot's binary formats: the leader's wire messages (plugin/leader_wire),
// the plugin's state file (plugin/state_file) and the decision log (log/decision_log_format.hpp)
// are all fixed-width little-endian fields, written and read here. On a little-endian host (x86-64,
// aarch64) a field is one memcpy; elsewhere it is assembled byte by byte, so a file or a message
// means the same on every host. Floats and doubles travel as their IEEE-754 bits.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

namespace ncclbot {

namespace byte_codec_detail {
template <typename T>
using Bits = std::conditional_t<
    sizeof(T) == 8, uint64_t,
    std::conditional_t<sizeof(T) == 4, uint32_t, std::conditional_t<sizeof(T) == 2, uint16_t, uint8_t>>>;
}  // namespace byte_codec_detail

// Writes v (an integer, float or double) at p as sizeof(T) little-endian bytes.
template <typename T>
inline void store_le(void* p, T v) {
  static_assert(std::is_arithmetic_v<T>, "fields are integers or floating point");
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(p, &v, sizeof v);
  } else {
    const auto bits = std::bit_cast<byte_codec_detail::Bits<T>>(v);
    auto* out = static_cast<unsigned char*>(p);
    for (size_t i = 0; i < sizeof v; ++i) out[i] = static_cast<unsigned char>(bits >> (8 * i));
  }
}

// Reads a T written by store_le at p.
template <typename T>
inline T load_le(const void* p) {
  static_assert(std::is_arithmetic_v<T>, "fields are integers or floating point");
  if constexpr (std::endian::native == std::endian::little) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
  } else {
    using B = byte_codec_detail::Bits<T>;
    const auto* in = static_cast<const unsigned char*>(p);
    B bits = 0;
    for (size_t i = 0; i < sizeof(T); ++i) bits |= B(B(in[i]) << (8 * i));
    return std::bit_cast<T>(bits);
  }
}

// Appends v to out as sizeof(T) little-endian bytes.
template <typename T>
inline void append_le(std::string& out, T v) {
  unsigned char bytes[sizeof v];
  store_le(bytes, v);
  out.append(reinterpret_cast<const char*>(bytes), sizeof v);
}

}  // namespace ncclbot
