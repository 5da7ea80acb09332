// libFuzzer target: the leader's wire protocol, server end. Byte 0 picks the mode:
//  - even: the rest is raw bytes from a stranger (no secret), fed in chunks whose sizes come
//    from the input; the session must close or wait, never reach the handler;
//  - odd: the rest is a sequence of frames from a peer that holds the secret (kind byte, then raw
//    payload bytes), signed here, so every field check and the leader's memo behind the handler
//    (a real OnlineLearner, or with bit 2 of byte 0 a KnobLeaderLearner over knob lists) are
//    exercised.
// The follower end parses the leader's answers and must accept every one of them.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "ncclbot/core/knob_spec.hpp"
#include "plugin/leader_wire.hpp"
#include "plugin/online_learner.hpp"

using namespace ncclbot;
using namespace ncclbot::plugin;

namespace {

struct Leader {
  std::shared_ptr<LeaderLearner> learner;
  int calls = 0;
};

LeaderHandler handler(Leader* leader) {
  LeaderHandler h;
  h.ctx = leader;
  h.hello = [](void* c, const WireHello& hello) {
    auto* l = static_cast<Leader*>(c);
    ++l->calls;
    l->learner->add_member(LeaderLearner::follower_member(hello.rank, hello.ordinal));
    return (hello.rank & 7) != 7;  // some are refused
  };
  h.decide = [](void* c, const WireRequest& r, WireDecisions* d) {
    auto* l = static_cast<Leader*>(c);
    ++l->calls;
    float prior[kNumArms];
    for (int s = 0; s < kNumArms; ++s) prior[s] = s < kNumNcclArms ? r.prior[s] : -1.0f;
    d->status = l->learner->decide_window(int(r.key), r.bytes, prior, r.start, int(r.count), d->arms,
                                          LeaderLearner::follower_member(r.rank, r.ordinal))
                    ? DecisionStatus::kOk
                    : DecisionStatus::kLater;
  };
  return h;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static LeaderKey key = [] {
    LeaderKey k;
    std::string why;
    if (!leader_key_from_text("fuzzing-secret-0123456789", &k, &why)) std::abort();
    return k;
  }();
  static std::shared_ptr<const PolicyEngine> engine = [] {
    std::string error;
    return PolicyEngine::create("egreedy:eps=0.3,n0=1", 1, &error);
  }();
  if (size == 0 || !engine) return 0;
  Leader leader;
  MemoLimits limits;
  limits.per_context = 4096;  // small, so the fuzzer reaches the retirement path
  static const KnobSpec knobs = parse_knob_spec("channels=0,2,64;chunk=0,1920,64K,1M");
  if (data[0] & 4)
    leader.learner = std::make_shared<KnobLeaderLearner>(1, 4, 2, engine, true, limits, knobs);
  else
    leader.learner = std::make_shared<OnlineLearner>(1, 4, 2, engine, true, limits);
  leader.learner->add_member(LeaderLearner::local_member(0));  // contexts start with three followers' tables
  leader.learner->set_active(data[0] & 2);
  const uint8_t server_nonce[kNonceBytes] = {1};
  LeaderSession session(key, server_nonce);
  const LeaderHandler h = handler(&leader);
  std::vector<uint8_t> out;
  const uint8_t* p = data + 1;
  size_t left = size - 1;

  if ((data[0] & 1) == 0) {
    while (left > 0) {
      const size_t chunk = 1 + p[0] % 64 < left ? 1 + p[0] % 64 : left;
      if (!session.feed(p, chunk, h, &out)) break;
      p += chunk;
      left -= chunk;
    }
    if (leader.calls != 0) std::abort();  // nothing without the secret reaches the handler
    return 0;
  }

  FollowerSession follower(key);
  const std::vector<uint8_t> greeting = session.greeting();
  const uint8_t client_nonce[kNonceBytes] = {2};
  std::vector<uint8_t> frames;
  if (!follower.start(greeting.data(), greeting.size(), client_nonce, &frames)) std::abort();
  // Frames signed as the follower would sign them (direction 1 = to the leader), around payload
  // bytes taken raw from the input: kind (even: hello, odd: request), then the payload (zero-padded).
  FrameMac mac(key, server_nonce, client_nonce, 1);
  while (left > 0) {
    const bool hello = (p[0] & 1) == 0;
    ++p;
    --left;
    const size_t need = hello ? kHelloPayload : kRequestPayload;
    std::vector<uint8_t> f(kFrameHeaderBytes + need + kTagBytes, 0);
    const uint32_t header[4] = {kWireMagic, hello ? 1u : 2u, uint32_t(need), 0};
    for (int w = 0; w < 4; ++w)
      for (int b = 0; b < 4; ++b) f[size_t(4 * w + b)] = uint8_t(header[w] >> (8 * b));
    const size_t take = need < left ? need : left;
    std::memcpy(f.data() + kFrameHeaderBytes, p, take);
    p += take;
    left -= take;
    mac.sign(f.data(), kFrameHeaderBytes + need, f.data() + kFrameHeaderBytes + need);
    frames.insert(frames.end(), f.begin(), f.end());
  }
  session.feed(frames.data(), frames.size(), h, &out);
  // Every answer the leader sent must pass the follower's own checks.
  size_t at = 0;
  while (at < out.size()) {
    size_t used = 0;
    WireHello ack;
    WireDecisions d;
    const auto e = follower.feed(out.data() + at, out.size() - at, &used, &ack, &d);
    if (e == FollowerSession::Event::kBad) std::abort();
    at += used;
    if (e == FollowerSession::Event::kNone) break;
  }
  return 0;
}
