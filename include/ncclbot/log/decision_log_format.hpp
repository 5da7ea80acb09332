#pragma once
// The plugin's decision log (NCCLBOT_LOG, docs/ope.md): what the plugin decided on every measured
// collective, with the probability of that decision, for off-policy evaluation. The plugin writes
// it and `ncclbot ope` reads it; this header is the whole format, header-only and allocation-free
// (the plugin links nothing of the host library). Little-endian, 8-byte aligned:
//
//   file header   "NCBTLOG\n"  u32 version (kDecisionLogVersion)  u32 header bytes H (a multiple
//                 of 8, the 16 so far included)  then H - 16 bytes of "key=value\n" lines
//                 (policy, seed, nccl_version, rank, pid, host, started_unix), NUL-padded
//   records       u32 kind  u32 size S (the whole record, a multiple of 8)  payload
//                 u64 FNV-1a 64 of every byte before it in the record
//     kind 1, call (72 bytes; 80 from version 5): u64 comm_hash, u64 call_index (of the context on that
//                 communicator), u64 bytes, f64 latency_us (measured), f64 propensity (of the
//                 arm played; NaN = the policy cannot say), u32 nodes, u32 ranks, u8 collective
//                 (ncclFunc_t), i8 slot played (algo*3+proto; -1 = NCCL's own choice kept),
//                 i8 nccl_slot (NCCL's pick from its cost table), u8 flags (version 2; bit 0:
//                 a CUDA-graph replay of a collective captured earlier, no decision of its own:
//                 call_index UINT64_MAX, propensity NaN, nccl_slot -1; version 3, bit 1: NCCL
//                 ran another arm than the one decided, which the slot played names; the
//                 propensity is the decision's), i8 decided slot (version 3: the arm decided when
//                 bit 1 is set, else -1), 3 bytes 0; version 5: u64 user_tag (the
//                 collective's ncclCollConfig_t userProfilerTag as profiler v7 reports it, else
//                 0) before the checksum (80 bytes), and flags bit 2: NCCL ran one of its
//                 symmetric kernels (profiler v7 isSymColl), no arm of the table: slot -1,
//                 the decided slot (or -1 when NCCL's own choice was left) in byte 60
//     kind 2, context (136 bytes): the cost table NCCL passed on a context's first call:
//                 u64 comm_hash, u64 bytes, u32 nodes, u32 ranks, u8 collective, i8 nccl_slot,
//                 6 bytes 0, f32 cost_us[21] (slot order; < 0 = not usable), 4 bytes 0
//     kind 3, knob call (version 4, 88 bytes; 96 from version 5; knob mode, NCCLBOT_KNOBS, whose lists the
//     header's
//                 `knobs` line gives): a call record's 64 bytes before its checksum, the slots
//                 naming the arms' algorithm and protocol, then u32 chunk_bytes and u32 decided
//                 chunk_bytes, u16 channels and u16 decided channels (0: NCCL's own; the decided
//                 pair 0 unless flag bit 1 or 2 is set), 4 bytes 0; version 5: u64 user_tag
//                 before the checksum (96 bytes). The propensity is over the context's knob arms
//                 (the policy's own arm set).
//
// A record is written with one write() of whole bytes, so a killed job leaves at most a partial
// last record, which a reader drops and reports; any other damage is an error.
#include <cstdint>
#include <cstring>

#include "ncclbot/core/arm.hpp"
#include "ncclbot/core/byte_codec.hpp"

namespace ncclbot::decision_log {

inline constexpr char kMagic[8] = {'N', 'C', 'B', 'T', 'L', 'O', 'G', '\n'};
// 1: no flags byte (read as no flags); 2: no decided slot, and a call on which NCCL ran another arm
// than the decided one has a NaN propensity (docs/ope.md "Calls NCCL ran otherwise"); 3: no knob
// call records; 4: no user tag, no symmetric-kernel calls (records 72 and 88 bytes).
inline constexpr uint32_t kDecisionLogVersion = 5;
inline constexpr uint32_t kOldestDecisionLogVersion = 1;
inline constexpr uint8_t kCallFlagGraphReplay = 1;
inline constexpr uint8_t kCallFlagOverridden = 2;
inline constexpr uint8_t kCallFlagSymmetric = 4;
inline constexpr uint32_t kKindCall = 1;
inline constexpr uint32_t kKindContext = 2;
inline constexpr uint32_t kKindKnobCall = 3;
inline constexpr uint32_t kCallRecordBytes = 80;
inline constexpr uint32_t kKnobCallRecordBytes = 96;
// A call record's size in a log of `version` (before 5: no user tag).
inline constexpr uint32_t call_record_bytes(uint32_t version, bool knobs) {
  return (knobs ? kKnobCallRecordBytes : kCallRecordBytes) - (version < 5 ? 8 : 0);
}
inline constexpr uint32_t kContextRecordBytes = 136;
inline constexpr uint32_t kMaxHeaderBytes = 64 * 1024;

// The latencies a collective can have (us): at least 1 ns, at most 1000 s. Outside, a value is no
// measurement (a profiler timer that wrapped, a reported 1e-300): the plugin neither learns from
// nor logs one, and the readers skip and count a call record that carries one. 1e-300 everywhere
// would estimate 0.000 and 1e308 overflow the estimators' sums.
inline constexpr double kMinLatencyUs = 1e-3, kMaxLatencyUs = 1e9;
inline constexpr bool latency_measurable(double us) {
  return us >= kMinLatencyUs && us <= kMaxLatencyUs;  // false for NaN
}

struct CallRecord {
  uint64_t comm_hash = 0;
  uint64_t call_index = 0;
  uint64_t bytes = 0;
  double latency_us = 0.0;
  double propensity = 0.0;
  uint32_t nodes = 0;
  uint32_t ranks = 0;
  int collective = -1;
  int slot = -1;
  int nccl_slot = -1;
  bool graph_replay = false;
  bool overridden = false;  // NCCL ran `slot`, not `decided_slot` (the propensity is the decision's)
  // NCCL ran one of its symmetric kernels (version 5): `slot` is -1, `decided_slot` the decision
  // (-1: NCCL's own choice was left), the propensity the decision's.
  bool symmetric = false;
  int decided_slot = -1;
  uint64_t user_tag = 0;  // version 5: the call's userProfilerTag (0: none)
  // A knob call (kind 3): the channels and chunk size of the arm that ran and, when overridden, of
  // the arm decided; 0 is NCCL's own value.
  bool knobs = false;
  uint16_t channels = 0, decided_channels = 0;
  uint32_t chunk_bytes = 0, decided_chunk_bytes = 0;
};

struct ContextRecord {
  uint64_t comm_hash = 0;
  uint64_t bytes = 0;
  uint32_t nodes = 0;
  uint32_t ranks = 0;
  int collective = -1;
  int nccl_slot = -1;
  float cost_us[kNumNcclArms] = {};
};

inline uint64_t fnv1a64(const unsigned char* p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

namespace detail {
// A field at byte offset `at` of a record, little-endian (core/byte_codec.hpp).
template <typename T>
inline void put(unsigned char* out, size_t at, T v) {
  store_le(out + at, v);
}
template <typename T>
inline T get(const unsigned char* in, size_t at) {
  return load_le<T>(in + at);
}
inline void seal(unsigned char* out, uint32_t kind, uint32_t size) {
  put<uint32_t>(out, 0, kind);
  put<uint32_t>(out, 4, size);
  put<uint64_t>(out, size - 8, fnv1a64(out, size - 8));
}
}  // namespace detail

namespace detail {
// The fields a call and a knob call share: bytes 8..63 of either.
inline void put_call_fields(const CallRecord& r, unsigned char* out) {
  put<uint64_t>(out, 8, r.comm_hash);
  put<uint64_t>(out, 16, r.call_index);
  put<uint64_t>(out, 24, r.bytes);
  put<double>(out, 32, r.latency_us);
  put<double>(out, 40, r.propensity);
  put<uint32_t>(out, 48, r.nodes);
  put<uint32_t>(out, 52, r.ranks);
  out[56] = uint8_t(r.collective);
  out[57] = uint8_t(int8_t(r.slot));
  out[58] = uint8_t(int8_t(r.nccl_slot));
  out[59] = uint8_t((r.graph_replay ? kCallFlagGraphReplay : 0) | (r.overridden ? kCallFlagOverridden : 0) |
                    (r.symmetric ? kCallFlagSymmetric : 0));
  out[60] = uint8_t(int8_t(r.overridden || r.symmetric ? r.decided_slot : -1));
}
}  // namespace detail

// The record a call is written as in a log of `version` (4 or 5; earlier logs are written only by
// tests, with their own fields): a knob call (kind 3) when r.knobs, else a call (kind 1); `out`
// holds kKnobCallRecordBytes. Returns the record's size.
inline uint32_t encode_call(const CallRecord& r, unsigned char* out, uint32_t version = kDecisionLogVersion) {
  const uint32_t size = call_record_bytes(version, r.knobs);
  std::memset(out, 0, size);
  detail::put_call_fields(r, out);
  const bool decided = r.overridden || r.symmetric;
  if (r.knobs) {
    detail::put<uint32_t>(out, 64, r.chunk_bytes);
    detail::put<uint32_t>(out, 68, decided ? r.decided_chunk_bytes : 0);
    detail::put<uint16_t>(out, 72, r.channels);
    detail::put<uint16_t>(out, 74, decided ? r.decided_channels : 0);
  }
  if (version >= 5) detail::put<uint64_t>(out, size - 16, r.user_tag);
  detail::seal(out, r.knobs ? kKindKnobCall : kKindCall, size);
  return size;
}

// A call (kind 1) of the current version: r.knobs is ignored.
inline void encode(const CallRecord& r, unsigned char (&out)[kCallRecordBytes]) {
  CallRecord call = r;
  call.knobs = false;
  encode_call(call, out);
}

inline void encode(const ContextRecord& r, unsigned char (&out)[kContextRecordBytes]) {
  std::memset(out, 0, sizeof out);
  detail::put<uint64_t>(out, 8, r.comm_hash);
  detail::put<uint64_t>(out, 16, r.bytes);
  detail::put<uint32_t>(out, 24, r.nodes);
  detail::put<uint32_t>(out, 28, r.ranks);
  out[32] = uint8_t(r.collective);
  out[33] = uint8_t(int8_t(r.nccl_slot));
  for (int s = 0; s < kNumNcclArms; ++s) detail::put<float>(out, 40 + 4 * size_t(s), r.cost_us[s]);
  detail::seal(out, kKindContext, kContextRecordBytes);
}

// Whether the record at `in` (of `size` bytes, as its header says) carries its own checksum.
inline bool intact(const unsigned char* in, uint32_t size) {
  return size >= 16 && size % 8 == 0 && detail::get<uint64_t>(in, size - 8) == fnv1a64(in, size - 8);
}

inline CallRecord decode_call(const unsigned char* in) {
  CallRecord r;
  r.comm_hash = detail::get<uint64_t>(in, 8);
  r.call_index = detail::get<uint64_t>(in, 16);
  r.bytes = detail::get<uint64_t>(in, 24);
  r.latency_us = detail::get<double>(in, 32);
  r.propensity = detail::get<double>(in, 40);
  r.nodes = detail::get<uint32_t>(in, 48);
  r.ranks = detail::get<uint32_t>(in, 52);
  r.collective = in[56];
  r.slot = int8_t(in[57]);
  r.nccl_slot = int8_t(in[58]);
  r.graph_replay = (in[59] & kCallFlagGraphReplay) != 0;
  r.overridden = (in[59] & kCallFlagOverridden) != 0;
  r.symmetric = (in[59] & kCallFlagSymmetric) != 0;
  r.decided_slot = r.overridden || r.symmetric ? int8_t(in[60]) : -1;  // byte 60 is 0 before version 3
  const uint32_t kind = detail::get<uint32_t>(in, 0), size = detail::get<uint32_t>(in, 4);
  if (size == call_record_bytes(5, kind == kKindKnobCall)) r.user_tag = detail::get<uint64_t>(in, size - 16);
  if (kind == kKindKnobCall) {
    r.knobs = true;
    r.chunk_bytes = detail::get<uint32_t>(in, 64);
    r.decided_chunk_bytes = detail::get<uint32_t>(in, 68);
    r.channels = detail::get<uint16_t>(in, 72);
    r.decided_channels = detail::get<uint16_t>(in, 74);
  }
  return r;
}

inline ContextRecord decode_context(const unsigned char* in) {
  ContextRecord r;
  r.comm_hash = detail::get<uint64_t>(in, 8);
  r.bytes = detail::get<uint64_t>(in, 16);
  r.nodes = detail::get<uint32_t>(in, 24);
  r.ranks = detail::get<uint32_t>(in, 28);
  r.collective = in[32];
  r.nccl_slot = int8_t(in[33]);
  for (int s = 0; s < kNumNcclArms; ++s) r.cost_us[s] = detail::get<float>(in, 40 + 4 * size_t(s));
  return r;
}

// The file header for `text` ("key=value\n" lines): magic, version, size, text, NUL padding.
// Returns the header's size, 0 when `text` is too long; `out` must hold kMaxHeaderBytes.
inline uint32_t encode_header(const char* text, size_t text_bytes, unsigned char* out) {
  if (text_bytes > kMaxHeaderBytes - 16) return 0;
  const size_t size = (16 + text_bytes + 7) / 8 * 8;
  if (size > kMaxHeaderBytes) return 0;
  std::memset(out, 0, size);
  std::memcpy(out, kMagic, 8);
  detail::put<uint32_t>(out, 8, kDecisionLogVersion);
  detail::put<uint32_t>(out, 12, uint32_t(size));
  std::memcpy(out + 16, text, text_bytes);
  return uint32_t(size);
}

}  // namespace ncclbot::decision_log
