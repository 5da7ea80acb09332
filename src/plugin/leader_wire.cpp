#include "plugin/leader_wire.hpp"

#include <sodium.h>

#include <cmath>
#include <cstring>

#include "ncclbot/core/byte_codec.hpp"
#include "plugin/context_key.hpp"

namespace ncclbot::plugin {
namespace {

constexpr uint8_t kToLeader = 1, kToFollower = 2;

void put_header(uint8_t* p, FrameKind kind, size_t payload) {
  store_le<uint32_t>(p, kWireMagic);
  store_le<uint32_t>(p + 4, uint32_t(kind));
  store_le<uint32_t>(p + 8, uint32_t(payload));
  store_le<uint32_t>(p + 12, 0);
}

// The exact payload size a client frame of this kind must have; 0 for kinds a client never sends.
size_t client_payload(uint32_t kind) {
  if (kind == uint32_t(FrameKind::kHello)) return kHelloPayload;
  if (kind == uint32_t(FrameKind::kRequest)) return kRequestPayload;
  return 0;
}

WireHello decode_hello(const uint8_t* p) {
  WireHello h;
  h.comm_id = load_le<uint64_t>(p);
  h.nranks = load_le<uint32_t>(p + 8);
  h.nnodes = load_le<uint32_t>(p + 12);
  h.rank = load_le<uint32_t>(p + 16);
  h.ordinal = load_le<uint32_t>(p + 20);
  return h;
}
void encode_hello(const WireHello& h, uint8_t* p) {
  store_le<uint64_t>(p, h.comm_id);
  store_le<uint32_t>(p + 8, h.nranks);
  store_le<uint32_t>(p + 12, h.nnodes);
  store_le<uint32_t>(p + 16, h.rank);
  store_le<uint32_t>(p + 20, h.ordinal);
}

WireRequest decode_request(const uint8_t* p) {
  WireRequest r;
  r.comm_id = load_le<uint64_t>(p);
  r.start = load_le<uint64_t>(p + 8);
  r.bytes = load_le<uint64_t>(p + 16);
  r.key = load_le<uint32_t>(p + 24);
  r.count = load_le<uint32_t>(p + 28);
  r.nranks = load_le<uint32_t>(p + 32);
  r.nnodes = load_le<uint32_t>(p + 36);
  r.rank = load_le<uint32_t>(p + 40);
  r.ordinal = load_le<uint32_t>(p + 44);
  for (int s = 0; s < kNumNcclArms; ++s) r.prior[s] = load_le<float>(p + 48 + 4 * s);
  return r;
}
void encode_request(const WireRequest& r, uint8_t* p) {
  store_le<uint64_t>(p, r.comm_id);
  store_le<uint64_t>(p + 8, r.start);
  store_le<uint64_t>(p + 16, r.bytes);
  store_le<uint32_t>(p + 24, r.key);
  store_le<uint32_t>(p + 28, r.count);
  store_le<uint32_t>(p + 32, r.nranks);
  store_le<uint32_t>(p + 36, r.nnodes);
  store_le<uint32_t>(p + 40, r.rank);
  store_le<uint32_t>(p + 44, r.ordinal);
  for (int s = 0; s < kNumNcclArms; ++s) store_le<float>(p + 48 + 4 * s, r.prior[s]);
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
  store_le<uint64_t>(position + 1, seq);
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
  store_le<uint32_t>(g.data(), kWireMagic);
  store_le<uint32_t>(g.data() + 4, kWireVersion);
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
      store_le<uint32_t>(welcome + kFrameHeaderBytes, kWireVersion);
      store_le<uint32_t>(welcome + kFrameHeaderBytes + 4, 0);
      out_mac_->sign(welcome, kFrameHeaderBytes + kWelcomePayload,
                     welcome + kFrameHeaderBytes + kWelcomePayload);
      out->insert(out->end(), welcome, welcome + sizeof welcome);
      have_ = 0;
      need_ = kFrameHeaderBytes;
      continue;
    }
    if (need_ == kFrameHeaderBytes) {
      // Only fixed, known sizes are ever buffered: a header that promises anything else closes.
      const size_t payload = client_payload(load_le<uint32_t>(buf_ + 4));
      if (load_le<uint32_t>(buf_) != kWireMagic || payload == 0 || load_le<uint32_t>(buf_ + 8) != payload ||
          load_le<uint32_t>(buf_ + 12) != 0)
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
  if (load_le<uint32_t>(buf_ + 4) == uint32_t(FrameKind::kHello)) {
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
  for (DecidedArm& a : d.arms) a = DecidedArm{};
  handler.decide(handler.ctx, r, &d);
  const size_t count = d.status == DecisionStatus::kOk ? size_t(kLeaderWindow) : 0;
  const size_t payload_size = kDecisionsHead + count * kDecisionBytes;
  const size_t at = out->size();
  out->resize(at + kFrameHeaderBytes + payload_size + kTagBytes);
  uint8_t* f = out->data() + at;
  put_header(f, FrameKind::kDecisions, payload_size);
  store_le<uint64_t>(f + 16, d.comm_id);
  store_le<uint64_t>(f + 24, d.start);
  store_le<uint32_t>(f + 32, d.key);
  store_le<uint32_t>(f + 36, uint32_t(count));
  store_le<uint32_t>(f + 40, uint32_t(d.status));
  store_le<uint32_t>(f + 44, d.ordinal);
  for (size_t i = 0; i < count; ++i) {
    uint8_t* a = f + kFrameHeaderBytes + kDecisionsHead + i * kDecisionBytes;
    a[0] = uint8_t(d.arms[i].slot);
    a[1] = 0;
    store_le<uint16_t>(a + 2, d.arms[i].channels);
    store_le<uint32_t>(a + 4, d.arms[i].chunk_bytes);
  }
  out_mac_->sign(f, kFrameHeaderBytes + payload_size, f + kFrameHeaderBytes + payload_size);
  return true;
}

FollowerSession::FollowerSession(const LeaderKey& key) : key_(key) {}

bool FollowerSession::start(const uint8_t* greeting, size_t n, const uint8_t* client_nonce,
                            std::vector<uint8_t>* out) {
  if (n != kGreetingBytes || load_le<uint32_t>(greeting) != kWireMagic ||
      load_le<uint32_t>(greeting + 4) != kWireVersion)
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
      const uint32_t kind = load_le<uint32_t>(buf_.data() + 4), len = load_le<uint32_t>(buf_.data() + 8);
      // The WELCOME comes first and only once.
      const bool ok_len =
          welcomed_ ? ((kind == uint32_t(FrameKind::kAck) || kind == uint32_t(FrameKind::kRefused)) &&
                       len == kHelloPayload) ||
                          (kind == uint32_t(FrameKind::kDecisions) &&
                           (len == kDecisionsHead || len == kDecisionsHead + kLeaderWindow * kDecisionBytes))
                    : kind == uint32_t(FrameKind::kWelcome) && len == kWelcomePayload;
      if (load_le<uint32_t>(buf_.data()) != kWireMagic || load_le<uint32_t>(buf_.data() + 12) != 0 || !ok_len)
        return Event::kBad;
      need_ = kFrameHeaderBytes + len + kTagBytes;
      continue;
    }
    const size_t body = need_ - kTagBytes;
    if (!in_mac_->verify(buf_.data(), body, buf_.data() + body)) return Event::kBad;
    const uint8_t* p = buf_.data() + kFrameHeaderBytes;
    Event e;
    const uint32_t kind = load_le<uint32_t>(buf_.data() + 4);
    if (kind == uint32_t(FrameKind::kWelcome)) {
      if (load_le<uint32_t>(p) != kWireVersion || load_le<uint32_t>(p + 4) != 0) return Event::kBad;
      welcomed_ = true;
      e = Event::kWelcome;
    } else if (kind == uint32_t(FrameKind::kAck) || kind == uint32_t(FrameKind::kRefused)) {
      *ack = decode_hello(p);
      e = kind == uint32_t(FrameKind::kAck) ? Event::kAck : Event::kRefused;
    } else {
      d->comm_id = load_le<uint64_t>(p);
      d->start = load_le<uint64_t>(p + 8);
      d->key = load_le<uint32_t>(p + 16);
      d->count = load_le<uint32_t>(p + 20);
      const uint32_t status = load_le<uint32_t>(p + 24);
      d->ordinal = load_le<uint32_t>(p + 28);
      const size_t carried = (body - kFrameHeaderBytes - kDecisionsHead) / kDecisionBytes;
      if (status > uint32_t(DecisionStatus::kLater) || d->count != carried) return Event::kBad;
      if ((status == uint32_t(DecisionStatus::kOk)) != (carried == size_t(kLeaderWindow))) return Event::kBad;
      d->status = DecisionStatus(status);
      for (size_t i = 0; i < carried; ++i) {
        const uint8_t* a = p + kDecisionsHead + i * kDecisionBytes;
        d->arms[i] = DecidedArm{int8_t(a[0]), load_le<uint16_t>(a + 2), load_le<uint32_t>(a + 4)};
        // Nothing a rank could not hand NCCL: a slot outside its 21, knobs it cannot run.
        if (a[1] != 0 || decided_arm_fault(d->arms[i]) != nullptr) return Event::kBad;
      }
      e = Event::kDecisions;
    }
    buf_.clear();
    need_ = kFrameHeaderBytes;
    return e;
  }
  return Event::kNone;
}

}  // namespace ncclbot::plugin
