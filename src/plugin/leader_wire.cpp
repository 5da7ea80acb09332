#include "plugin/leader_wire.hpp"

#include <sodium.h>

#include <cmath>
#include <cstring>

#include "plugin/context_key.hpp"

namespace ncclbot::plugin {
namespace {

constexpr uint8_t kToLeader = 1, kToFollower = 2;

void put_u32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = uint8_t(v >> (8 * i));
}
void put_u64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = uint8_t(v >> (8 * i));
}
uint32_t get_u32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t(p[i]) << (8 * i);
  return v;
}
uint64_t get_u64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t(p[i]) << (8 * i);
  return v;
}
void put_f32(uint8_t* p, float f) {
  uint32_t v;
  std::memcpy(&v, &f, 4);
  put_u32(p, v);
}
float get_f32(const uint8_t* p) {
  const uint32_t v = get_u32(p);
  float f;
  std::memcpy(&f, &v, 4);
  return f;
}

void put_header(uint8_t* p, FrameKind kind, size_t payload) {
  put_u32(p, kWireMagic);
  put_u32(p + 4, uint32_t(kind));
  put_u32(p + 8, uint32_t(payload));
  put_u32(p + 12, 0);
}

// The exact payload size a client frame of this kind must have; 0 for kinds a client never sends.
size_t client_payload(uint32_t kind) {
  if (kind == uint32_t(FrameKind::kHello)) return kHelloPayload;
  if (kind == uint32_t(FrameKind::kRequest)) return kRequestPayload;
  return 0;
}

WireHello decode_hello(const uint8_t* p) {
  WireHello h;
  h.comm_id = get_u64(p);
  h.nranks = get_u32(p + 8);
  h.nnodes = get_u32(p + 12);
  h.rank = get_u32(p + 16);
  h.ordinal = get_u32(p + 20);
  return h;
}
void encode_hello(const WireHello& h, uint8_t* p) {
  put_u64(p, h.comm_id);
  put_u32(p + 8, h.nranks);
  put_u32(p + 12, h.nnodes);
  put_u32(p + 16, h.rank);
  put_u32(p + 20, h.ordinal);
}

WireRequest decode_request(const uint8_t* p) {
  WireRequest r;
  r.comm_id = get_u64(p);
  r.start = get_u64(p + 8);
  r.bytes = get_u64(p + 16);
  r.key = get_u32(p + 24);
  r.count = get_u32(p + 28);
  r.nranks = get_u32(p + 32);
  r.nnodes = get_u32(p + 36);
  r.rank = get_u32(p + 40);
  r.ordinal = get_u32(p + 44);
  for (int s = 0; s < kNumNcclArms; ++s) r.prior[s] = get_f32(p + 48 + 4 * s);
  return r;
}
void encode_request(const WireRequest& r, uint8_t* p) {
  put_u64(p, r.comm_id);
  put_u64(p + 8, r.start);
  put_u64(p + 16, r.bytes);
  put_u32(p + 24, r.key);
  put_u32(p + 28, r.count);
  put_u32(p + 32, r.nranks);
  put_u32(p + 36, r.nnodes);
  put_u32(p + 40, r.rank);
  put_u32(p + 44, r.ordinal);
  for (int s = 0; s < kNumNcclArms; ++s) put_f32(p + 48 + 4 * s, r.prior[s]);
}

bool valid_shape(uint32_t nranks, uint32_t nnodes) {
  return nranks >= 1 && nranks <= kMaxWireRanks && nnodes >= 1 && nnodes <= nranks;
}

}  // namespace

bool valid_hello(const WireHello& h) {
  return valid_shape(h.nranks, h.nnodes) && h.nranks >= 2 && h.ordinal < h.nranks && h.rank < (1u << 30);
}

bool valid_request(const WireRequest& r) {
  if (!valid_shape(r.nranks, r.nnodes) || r.key >= uint32_t(kNumContextKeys)) return false;
  if (r.count != uint32_t(kLeaderWindow) || r.start % uint64_t(kLeaderWindow) != 0) return false;
  if (r.start > (uint64_t(1) << 62)) return false;
  if (r.rank >= (1u << 30) || r.ordinal >= r.nranks) return false;
  // The context key is (collective, size class of nBytes): a request must agree with itself.
  if (context_key(key_collective(int(r.key)), r.bytes) != int(r.key)) return false;
  return true;
}

FrameMac::FrameMac(const LeaderKey& key, const uint8_t* server_nonce, const uint8_t* client_nonce,
                   uint8_t direction)
    : key_(key), direction_(direction) {
  std::memcpy(nonces_, server_nonce, kNonceBytes);
  std::memcpy(nonces_ + kNonceBytes, client_nonce, kNonceBytes);
}

void FrameMac::compute(const uint8_t* frame, size_t n, uint64_t seq, uint8_t* tag) const {
  uint8_t position[9];
  position[0] = direction_;
  put_u64(position + 1, seq);
  crypto_generichash_state st;
  crypto_generichash_init(&st, key_.bytes.data(), key_.bytes.size(), kTagBytes);
  crypto_generichash_update(&st, nonces_, sizeof nonces_);
  crypto_generichash_update(&st, position, sizeof position);
  crypto_generichash_update(&st, frame, n);
  crypto_generichash_final(&st, tag, kTagBytes);
}

void FrameMac::sign(const uint8_t* frame, size_t n, uint8_t* tag) {
  compute(frame, n, seq_++, tag);
}

bool FrameMac::verify(const uint8_t* frame, size_t n, const uint8_t* tag) {
  uint8_t expect[kTagBytes];
  compute(frame, n, seq_, expect);
  if (sodium_memcmp(expect, tag, kTagBytes) != 0) return false;
  ++seq_;
  return true;
}

LeaderSession::LeaderSession(const LeaderKey& key, const uint8_t* server_nonce) : key_(key) {
  std::memcpy(server_nonce_, server_nonce, kNonceBytes);
}

std::vector<uint8_t> LeaderSession::greeting() const {
  std::vector<uint8_t> g(kGreetingBytes);
  put_u32(g.data(), kWireMagic);
  put_u32(g.data() + 4, kWireVersion);
  std::memcpy(g.data() + 8, server_nonce_, kNonceBytes);
  return g;
}

bool LeaderSession::feed(const uint8_t* data, size_t n, const LeaderHandler& handler,
                         std::vector<uint8_t>* out) {
  while (n > 0) {
    const size_t take = need_ - have_ < n ? need_ - have_ : n;
    std::memcpy(buf_ + have_, data, take);
    have_ += take;
    data += take;
    n -= take;
    if (have_ < need_) break;
    if (!got_nonce_) {
      got_nonce_ = true;
      in_mac_.emplace(key_, server_nonce_, buf_, kToLeader);
      out_mac_.emplace(key_, server_nonce_, buf_, kToFollower);
      // WELCOME: proves this end holds the job's key, on this connection, before the follower
      // says anything.
      uint8_t welcome[kFrameHeaderBytes + kWelcomePayload + kTagBytes];
      put_header(welcome, FrameKind::kWelcome, kWelcomePayload);
      put_u32(welcome + kFrameHeaderBytes, kWireVersion);
      put_u32(welcome + kFrameHeaderBytes + 4, 0);
      out_mac_->sign(welcome, kFrameHeaderBytes + kWelcomePayload,
                     welcome + kFrameHeaderBytes + kWelcomePayload);
      out->insert(out->end(), welcome, welcome + sizeof welcome);
      have_ = 0;
      need_ = kFrameHeaderBytes;
      continue;
    }
    if (need_ == kFrameHeaderBytes) {
      // Only fixed, known sizes are ever buffered: a header that promises anything else closes.
      const size_t payload = client_payload(get_u32(buf_ + 4));
      if (get_u32(buf_) != kWireMagic || payload == 0 || get_u32(buf_ + 8) != payload ||
          get_u32(buf_ + 12) != 0)
        return false;
      need_ = kFrameHeaderBytes + payload + kTagBytes;
      continue;
    }
    if (!frame_done(handler, out)) return false;
    have_ = 0;
    need_ = kFrameHeaderBytes;
  }
  return true;
}

bool LeaderSession::frame_done(const LeaderHandler& handler, std::vector<uint8_t>* out) {
  const size_t body = need_ - kTagBytes;
  if (!in_mac_->verify(buf_, body, buf_ + body)) return false;
  authenticated_ = true;
  const uint8_t* payload = buf_ + kFrameHeaderBytes;
  if (get_u32(buf_ + 4) == uint32_t(FrameKind::kHello)) {
    // The sender holds the secret: a HELLO it cannot have counted is answered with REFUSED (signed,
    // so the follower can trust it and pass through), never by closing, which a network failure
    // could also do after the rank was counted.
    const WireHello h = decode_hello(payload);
    const bool accepted = valid_hello(h) && handler.hello != nullptr && handler.hello(handler.ctx, h);
    uint8_t frame[kFrameHeaderBytes + kHelloPayload + kTagBytes];
    put_header(frame, accepted ? FrameKind::kAck : FrameKind::kRefused, kHelloPayload);
    encode_hello(h, frame + kFrameHeaderBytes);
    out_mac_->sign(frame, kFrameHeaderBytes + kHelloPayload, frame + kFrameHeaderBytes + kHelloPayload);
    out->insert(out->end(), frame, frame + sizeof frame);
    return true;
  }
  const WireRequest r = decode_request(payload);
  if (!valid_request(r) || handler.decide == nullptr) return false;
  WireDecisions d;
  d.comm_id = r.comm_id;
  d.start = r.start;
  d.key = r.key;
  d.count = r.count;
  d.ordinal = r.ordinal;
  std::memset(d.slots, -1, sizeof d.slots);
  handler.decide(handler.ctx, r, &d);
  const size_t count = d.status == DecisionStatus::kOk ? size_t(kLeaderWindow) : 0;
  const size_t payload_size = kDecisionsHead + count;
  const size_t at = out->size();
  out->resize(at + kFrameHeaderBytes + payload_size + kTagBytes);
  uint8_t* f = out->data() + at;
  put_header(f, FrameKind::kDecisions, payload_size);
  put_u64(f + 16, d.comm_id);
  put_u64(f + 24, d.start);
  put_u32(f + 32, d.key);
  put_u32(f + 36, uint32_t(count));
  put_u32(f + 40, uint32_t(d.status));
  put_u32(f + 44, d.ordinal);
  std::memcpy(f + kFrameHeaderBytes + kDecisionsHead, d.slots, count);
  out_mac_->sign(f, kFrameHeaderBytes + payload_size, f + kFrameHeaderBytes + payload_size);
  return true;
}

FollowerSession::FollowerSession(const LeaderKey& key) : key_(key) {}

bool FollowerSession::start(const uint8_t* greeting, size_t n, const uint8_t* client_nonce,
                            std::vector<uint8_t>* out) {
  if (n != kGreetingBytes || get_u32(greeting) != kWireMagic || get_u32(greeting + 4) != kWireVersion)
    return false;
  in_mac_.emplace(key_, greeting + 8, client_nonce, kToFollower);
  out_mac_.emplace(key_, greeting + 8, client_nonce, kToLeader);
  out->insert(out->end(), client_nonce, client_nonce + kNonceBytes);
  return true;
}

void FollowerSession::frame(FrameKind kind, const uint8_t* payload, size_t n, std::vector<uint8_t>* out) {
  const size_t at = out->size();
  out->resize(at + kFrameHeaderBytes + n + kTagBytes);
  uint8_t* f = out->data() + at;
  put_header(f, kind, n);
  std::memcpy(f + kFrameHeaderBytes, payload, n);
  out_mac_->sign(f, kFrameHeaderBytes + n, f + kFrameHeaderBytes + n);
}

void FollowerSession::hello(const WireHello& h, std::vector<uint8_t>* out) {
  uint8_t p[kHelloPayload];
  encode_hello(h, p);
  frame(FrameKind::kHello, p, sizeof p, out);
}

void FollowerSession::request(const WireRequest& r, std::vector<uint8_t>* out) {
  uint8_t p[kRequestPayload];
  encode_request(r, p);
  frame(FrameKind::kRequest, p, sizeof p, out);
}

FollowerSession::Event FollowerSession::feed(const uint8_t* data, size_t n, size_t* used, WireHello* ack,
                                             WireDecisions* d) {
  *used = 0;
  if (!in_mac_) return Event::kBad;
  while (*used < n) {
    const size_t take = need_ - buf_.size() < n - *used ? need_ - buf_.size() : n - *used;
    buf_.insert(buf_.end(), data + *used, data + *used + take);
    *used += take;
    if (buf_.size() < need_) break;
    if (need_ == kFrameHeaderBytes) {
      const uint32_t kind = get_u32(buf_.data() + 4), len = get_u32(buf_.data() + 8);
      // The WELCOME comes first and only once.
      const bool ok_len =
          welcomed_ ? ((kind == uint32_t(FrameKind::kAck) || kind == uint32_t(FrameKind::kRefused)) &&
                       len == kHelloPayload) ||
                          (kind == uint32_t(FrameKind::kDecisions) &&
                           (len == kDecisionsHead || len == kDecisionsHead + size_t(kLeaderWindow)))
                    : kind == uint32_t(FrameKind::kWelcome) && len == kWelcomePayload;
      if (get_u32(buf_.data()) != kWireMagic || get_u32(buf_.data() + 12) != 0 || !ok_len) return Event::kBad;
      need_ = kFrameHeaderBytes + len + kTagBytes;
      continue;
    }
    const size_t body = need_ - kTagBytes;
    if (!in_mac_->verify(buf_.data(), body, buf_.data() + body)) return Event::kBad;
    const uint8_t* p = buf_.data() + kFrameHeaderBytes;
    Event e;
    const uint32_t kind = get_u32(buf_.data() + 4);
    if (kind == uint32_t(FrameKind::kWelcome)) {
      if (get_u32(p) != kWireVersion || get_u32(p + 4) != 0) return Event::kBad;
      welcomed_ = true;
      e = Event::kWelcome;
    } else if (kind == uint32_t(FrameKind::kAck) || kind == uint32_t(FrameKind::kRefused)) {
      *ack = decode_hello(p);
      e = kind == uint32_t(FrameKind::kAck) ? Event::kAck : Event::kRefused;
    } else {
      d->comm_id = get_u64(p);
      d->start = get_u64(p + 8);
      d->key = get_u32(p + 16);
      d->count = get_u32(p + 20);
      const uint32_t status = get_u32(p + 24);
      d->ordinal = get_u32(p + 28);
      const size_t carried = body - kFrameHeaderBytes - kDecisionsHead;
      if (status > uint32_t(DecisionStatus::kLater) || d->count != carried) return Event::kBad;
      if ((status == uint32_t(DecisionStatus::kOk)) != (carried == size_t(kLeaderWindow))) return Event::kBad;
      d->status = DecisionStatus(status);
      std::memcpy(d->slots, p + kDecisionsHead, carried);
      for (size_t i = 0; i < carried; ++i)
        if (d->slots[i] < -1 || d->slots[i] >= kNumNcclArms) return Event::kBad;
      e = Event::kDecisions;
    }
    buf_.clear();
    need_ = kFrameHeaderBytes;
    return e;
  }
  return Event::kNone;
}

}  // namespace ncclbot::plugin
