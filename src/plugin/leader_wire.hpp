#pragma once
// The leader's wire protocol (docs/plugin.md "Security model"), without sockets, so the fuzzer and
// the tests drive exactly what the server runs.
//
//   server -> client  greeting: u32 magic, u32 version, 24-byte server nonce          (plain)
//   client -> server  24-byte client nonce                                           (plain)
//   then frames both ways: u32 magic, u32 kind, u32 payload length, u32 0, payload, 16-byte tag
//   the server's first frame is WELCOME: a follower says nothing before it has verified it, so a
//   rank with another secret knows before sending any HELLO (no signed refusal could tell it later)
//
// tag = keyed BLAKE2b-128 (libsodium crypto_generichash, key from leader_secret.hpp) of
// server nonce || client nonce || direction || frame number in that direction || header || payload.
// The nonces make a frame valid on one connection only and the frame number in one place only, so
// nothing recorded can be replayed. Every length is fixed per kind and checked before anything is
// buffered; a frame that fails its tag or any field check closes the connection.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "ncclbot/core/arm.hpp"
#include "ncclbot/replay/leader_protocol.hpp"
#include "plugin/decided_arm.hpp"
#include "plugin/leader_secret.hpp"

namespace ncclbot::plugin {

// A request asks for one decision window of kLeaderWindow calls (replay/leader_protocol.hpp, the
// protocol the replay models). Version 6: each decision is a whole arm, with its channels and chunk
// (version 5 sent the slot alone; 5 had windows of 4 calls, 4 of 8, 3 of 256); a peer of another
// version fails the greeting and is never counted.
inline constexpr uint32_t kWireMagic = 0x4e43424cu;  // "LBCN"
inline constexpr uint32_t kWireVersion = 6;
inline constexpr size_t kNonceBytes = 24;
inline constexpr size_t kTagBytes = 16;
inline constexpr size_t kFrameHeaderBytes = 16;
inline constexpr size_t kGreetingBytes = 8 + kNonceBytes;
inline constexpr uint32_t kMaxWireRanks = 1u << 20;  // sane communicator sizes

// kRefused answers a HELLO the leader will never count (bad fields, another shape, the cap on
// learners); like kAck it echoes the HELLO. The connection stays open.
enum class FrameKind : uint32_t {
  kHello = 1,
  kRequest = 2,
  kDecisions = 3,
  kAck = 4,
  kRefused = 5,
  kWelcome = 6
};

// A follower's rank of one communicator. `ordinal` tells apart several ranks of one communicator
// in one process (0, 1, ...), so a HELLO counts once however often it is (re)sent.
struct WireHello {
  uint64_t comm_id = 0;
  uint32_t nranks = 0, nnodes = 0, rank = 0, ordinal = 0;
};

struct WireRequest {
  uint64_t comm_id = 0;
  uint64_t start = 0;  // first call index: a multiple of kLeaderWindow
  uint64_t bytes = 0;  // nBytes of the call that asked (seeds a context the leader has not seen yet)
  uint32_t key = 0, count = 0;
  uint32_t nranks = 0, nnodes = 0;
  uint32_t rank = 0, ordinal = 0;  // the asking rank, as in its HELLO: whose cost table this is
  float prior[kNumNcclArms] = {};  // NCCL's cost table of the asking call
};

enum class DecisionStatus : uint32_t { kOk = 0, kLater = 1 };

struct WireDecisions {
  uint64_t comm_id = 0;
  uint64_t start = 0;
  uint32_t key = 0, count = 0;
  uint32_t ordinal = 0;  // the asking rank's, echoed: several ranks of one process read separate streams
  DecisionStatus status = DecisionStatus::kOk;  // kLater: ask again (count is then 0)
  DecidedArm arms[kLeaderWindow] = {};
};

// Field checks shared by both ends (what a frame may say at all; the leader adds its own limits).
bool valid_hello(const WireHello& h);
bool valid_request(const WireRequest& r);

// One direction's MAC: keyed by the secret, bound to this connection's two nonces, and counting
// frames so each tag is valid at one position only.
class FrameMac {
 public:
  FrameMac(const LeaderKey& key, const uint8_t* server_nonce, const uint8_t* client_nonce, uint8_t direction);
  void sign(const uint8_t* frame, size_t n, uint8_t* tag);          // uses the next frame number
  bool verify(const uint8_t* frame, size_t n, const uint8_t* tag);  // consumes a number only on success

 private:
  void compute(const uint8_t* frame, size_t n, uint64_t seq, uint8_t* tag) const;
  LeaderKey key_;
  uint8_t nonces_[2 * kNonceBytes];
  uint8_t direction_;
  uint64_t seq_ = 0;
};

// Payload sizes by kind (fixed; decisions: head + count decisions of kDecisionBytes: i8 slot, u8 0,
// u16 channels, u32 chunk bytes, little-endian).
inline constexpr size_t kHelloPayload = 24;
inline constexpr size_t kRequestPayload = 48 + 4 * kNumNcclArms;
inline constexpr size_t kDecisionsHead = 32;
inline constexpr size_t kDecisionBytes = 8;
inline constexpr size_t kWelcomePayload = 8;

// What the leader's session needs from the plugin. `hello` returns whether the rank is accepted
// (counted, or already counted: a repeated HELLO is accepted again); false sends REFUSED;
// `decide` fills `d` (status kLater when the index is too far ahead of the leader for now).
struct LeaderHandler {
  bool (*hello)(void* ctx, const WireHello& h) = nullptr;
  void (*decide)(void* ctx, const WireRequest& r, WireDecisions* d) = nullptr;
  void* ctx = nullptr;
};

// The server end of one connection: bytes in, bytes out. Never throws; false = close it.
class LeaderSession {
 public:
  LeaderSession(const LeaderKey& key, const uint8_t* server_nonce);
  // The greeting to send when the connection opens.
  std::vector<uint8_t> greeting() const;
  bool feed(const uint8_t* data, size_t n, const LeaderHandler& handler, std::vector<uint8_t>* out);
  bool authenticated() const { return authenticated_; }  // at least one frame passed its tag

 private:
  bool frame_done(const LeaderHandler& handler, std::vector<uint8_t>* out);
  LeaderKey key_;
  uint8_t server_nonce_[kNonceBytes];
  uint8_t buf_[kFrameHeaderBytes + kRequestPayload + kTagBytes];  // the largest client frame (a request)
  size_t have_ = 0, need_ = kNonceBytes;
  bool got_nonce_ = false, authenticated_ = false;
  std::optional<FrameMac> in_mac_, out_mac_;
};

// The follower end: parses the greeting, then the leader's frames; builds its own frames.
class FollowerSession {
 public:
  explicit FollowerSession(const LeaderKey& key);
  // After the greeting: the bytes to send back first (the client nonce). False for a bad greeting.
  bool start(const uint8_t* greeting, size_t n, const uint8_t* client_nonce, std::vector<uint8_t>* out);
  void hello(const WireHello& h, std::vector<uint8_t>* out);
  void request(const WireRequest& r, std::vector<uint8_t>* out);

  enum class Event { kNone, kWelcome, kAck, kRefused, kDecisions, kBad };
  // Consumes bytes until one frame completes (kWelcome, kAck/kRefused with the echoed HELLO in
  // `ack`, kDecisions; `*used` bytes consumed), more are needed (kNone, all consumed), or the stream
  // is invalid (kBad: a failed tag, which is what a leader with another secret sends, or any frame
  // before the WELCOME).
  Event feed(const uint8_t* data, size_t n, size_t* used, WireHello* ack, WireDecisions* d);
  bool welcomed() const { return welcomed_; }

 private:
  void frame(FrameKind kind, const uint8_t* payload, size_t n, std::vector<uint8_t>* out);
  LeaderKey key_;
  std::optional<FrameMac> in_mac_, out_mac_;
  std::vector<uint8_t> buf_;
  size_t need_ = kFrameHeaderBytes;
  bool welcomed_ = false;
};

}  // namespace ncclbot::plugin
