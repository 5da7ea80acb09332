// The leader's wire protocol without sockets: a follower and a leader session with the same
// secret talk; a wrong secret, a replayed or reordered frame, a lying header and out-of-range
// fields all end the connection before the handler sees anything.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "plugin/leader_wire.hpp"

using namespace ncclbot::plugin;

namespace {

LeaderKey key_of(const char* secret) {
  LeaderKey k;
  std::string why;
  EXPECT_TRUE(leader_key_from_text(secret, &k, &why)) << why;
  return k;
}

struct Calls {
  DecidedArm knob_arm{5, 8, 131072};  // what the handler decides for the window's third call
  int hellos = 0, requests = 0;
  WireHello last_hello;
  WireRequest last_request;
};

LeaderHandler handler_for(Calls* calls) {
  LeaderHandler h;
  h.ctx = calls;
  h.hello = [](void* c, const WireHello& hello) {
    auto* calls = static_cast<Calls*>(c);
    ++calls->hellos;
    calls->last_hello = hello;
    return true;
  };
  h.decide = [](void* c, const WireRequest& r, WireDecisions* d) {
    auto* calls = static_cast<Calls*>(c);
    ++calls->requests;
    calls->last_request = r;
    for (int i = 0; i < kLeaderWindow; ++i) d->arms[i] = DecidedArm::of_slot(i % 3 == 0 ? -1 : 5);
    d->arms[2] = calls->knob_arm;  // Ring/Simple with a channel count and a chunk size by default
  };
  return h;
}

WireHello a_hello() {
  WireHello h;
  h.comm_id = 0x1234;
  h.nranks = 4;
  h.nnodes = 2;
  h.rank = 3;
  h.ordinal = 0;
  return h;
}

WireRequest a_request() {
  WireRequest r;
  r.comm_id = 0x1234;
  r.start = 512;
  r.bytes = 4096;  // size class 13
  r.key = 4 * 65 + 13;
  r.count = kLeaderWindow;
  r.nranks = 4;
  r.nnodes = 2;
  r.rank = 3;
  r.ordinal = 1;
  for (float& p : r.prior) p = -1.0f;
  r.prior[5] = 7.5f;
  return r;
}

// A connected pair: the leader's greeting went to the follower, the follower's nonce to the leader,
// and the leader's WELCOME back to the follower (`welcome`: what the follower made of it).
struct Pair {
  LeaderSession leader;
  FollowerSession follower;
  FollowerSession::Event welcome = FollowerSession::Event::kNone;
  Pair(const LeaderKey& leader_key, const LeaderKey& follower_key, uint8_t nonce_byte = 7)
      : leader(leader_key, std::vector<uint8_t>(kNonceBytes, nonce_byte).data()), follower(follower_key) {
    const std::vector<uint8_t> g = leader.greeting();
    std::vector<uint8_t> client_nonce(kNonceBytes, 9), out;
    EXPECT_TRUE(follower.start(g.data(), g.size(), client_nonce.data(), &out));
    Calls none;
    std::vector<uint8_t> w;
    EXPECT_TRUE(leader.feed(out.data(), out.size(), handler_for(&none), &w));
    EXPECT_EQ(w.size(), kFrameHeaderBytes + kWelcomePayload + kTagBytes);
    size_t used = 0;
    WireHello ack;
    WireDecisions d;
    welcome = follower.feed(w.data(), w.size(), &used, &ack, &d);
  }
};

}  // namespace

TEST(LeaderWire, HelloAndRequestRoundTripWithTheSameSecret) {
  const LeaderKey key = key_of("the-same-secret-on-both-ends");
  Pair p(key, key);
  EXPECT_EQ(p.welcome, FollowerSession::Event::kWelcome);
  Calls calls;
  std::vector<uint8_t> frames, replies;
  p.follower.hello(a_hello(), &frames);
  p.follower.request(a_request(), &frames);
  ASSERT_TRUE(p.leader.feed(frames.data(), frames.size(), handler_for(&calls), &replies));
  EXPECT_EQ(calls.hellos, 1);
  EXPECT_EQ(calls.requests, 1);
  EXPECT_EQ(calls.last_hello.rank, 3u);
  EXPECT_EQ(calls.last_request.start, 512u);
  EXPECT_EQ(calls.last_request.rank, 3u);
  EXPECT_EQ(calls.last_request.ordinal, 1u);
  EXPECT_EQ(calls.last_request.prior[5], 7.5f);
  // Header 16 + hello 24 + tag 16, then header 16 + decisions head 32 + 4 arms of 8 + tag 16.
  ASSERT_EQ(replies.size(), size_t(56 + 96));
  size_t used = 0;
  WireHello ack;
  WireDecisions d;
  EXPECT_EQ(p.follower.feed(replies.data(), replies.size(), &used, &ack, &d), FollowerSession::Event::kAck);
  EXPECT_EQ(used, 56u);
  EXPECT_EQ(ack.ordinal, 0u);
  EXPECT_EQ(ack.comm_id, 0x1234u);
  EXPECT_EQ(p.follower.feed(replies.data() + used, replies.size() - used, &used, &ack, &d),
            FollowerSession::Event::kDecisions);
  EXPECT_EQ(d.start, 512u);
  EXPECT_EQ(d.ordinal, 1u);  // echoed: the stream of the rank that asked
  EXPECT_EQ(d.arms[0], DecidedArm{});
  EXPECT_EQ(d.arms[1], DecidedArm::of_slot(5));
  EXPECT_EQ(d.arms[2], (DecidedArm{5, 8, 131072}));  // the whole knob arm crosses the wire
  EXPECT_EQ(d.arms[3], DecidedArm{});
}

// A follower plays what the leader sends into NCCL's calls: an arm NCCL cannot be given (a chunk
// off its protocol's grain, channels above 64, knobs beside NCCL's own choice, a slot outside the
// 21) ends the connection instead, even with a valid tag.
TEST(LeaderWire, AnArmNoRankCouldPlayEndsTheConnection) {
  const LeaderKey key = key_of("the-same-secret-on-both-ends");
  // What a follower makes of a window whose third decision is `arm`.
  const auto follower_reads = [&](const DecidedArm& arm, WireDecisions* d) {
    Pair p(key, key);
    Calls calls;
    calls.knob_arm = arm;
    std::vector<uint8_t> frames, replies;
    p.follower.request(a_request(), &frames);
    EXPECT_TRUE(p.leader.feed(frames.data(), frames.size(), handler_for(&calls), &replies));
    size_t used = 0;
    WireHello ack;
    return p.follower.feed(replies.data(), replies.size(), &used, &ack, d);
  };
  const DecidedArm bad[] = {{5, 0, 100}, {5, 65, 0}, {-1, 8, 0}, {-1, 0, 131072}, {21, 0, 0}, {-2, 0, 0}};
  for (const DecidedArm& arm : bad) {
    WireDecisions d;
    EXPECT_EQ(follower_reads(arm, &d), FollowerSession::Event::kBad)
        << int(arm.slot) << " " << arm.channels << " " << arm.chunk_bytes;
  }
  // The same frame with a playable arm there is read: Ring/LL128 at twice its 1920 B grain.
  WireDecisions d;
  ASSERT_EQ(follower_reads(DecidedArm{4, 64, 3840}, &d), FollowerSession::Event::kDecisions);
  EXPECT_EQ(d.arms[2], (DecidedArm{4, 64, 3840}));
}

TEST(LeaderWire, AWrongSecretEndsTheConnectionBeforeTheHandler) {
  Pair p(key_of("the-leaders-secret-0000"), key_of("another-jobs-secret-000"));
  // The follower learns it from the WELCOME, before it says anything (FollowerLink sends no HELLO
  // then); a HELLO sent all the same never reaches the handler.
  EXPECT_EQ(p.welcome, FollowerSession::Event::kBad);
  Calls calls;
  std::vector<uint8_t> frames, replies;
  p.follower.hello(a_hello(), &frames);
  EXPECT_FALSE(p.leader.feed(frames.data(), frames.size(), handler_for(&calls), &replies));
  EXPECT_EQ(calls.hellos, 0);
  EXPECT_TRUE(replies.empty());
  EXPECT_FALSE(p.leader.authenticated());
}

TEST(LeaderWire, ReplayedFramesAreRejected) {
  const LeaderKey key = key_of("the-same-secret-on-both-ends");
  Pair first(key, key, 7);
  std::vector<uint8_t> frames, replies;
  first.follower.hello(a_hello(), &frames);
  Calls calls;
  ASSERT_TRUE(first.leader.feed(frames.data(), frames.size(), handler_for(&calls), &replies));
  // The same bytes again on the same connection: the frame number has moved on.
  EXPECT_FALSE(first.leader.feed(frames.data(), frames.size(), handler_for(&calls), &replies));
  // On another connection (another leader nonce): not valid there either.
  Pair second(key, key, 8);
  Calls other;
  EXPECT_FALSE(second.leader.feed(frames.data(), frames.size(), handler_for(&other), &replies));
  EXPECT_EQ(other.hellos, 0);
  EXPECT_EQ(calls.hellos, 1);
}

TEST(LeaderWire, AHeaderPromisingAnOddLengthClosesAtOnce) {
  const LeaderKey key = key_of("the-same-secret-on-both-ends");
  Pair p(key, key);
  Calls calls;
  std::vector<uint8_t> replies;
  // magic, kind 2 (request), length 2^30, 0: refused on the 16 header bytes, nothing buffered.
  const uint8_t header[16] = {0x4c, 0x42, 0x43, 0x4e, 2, 0, 0, 0, 0, 0, 0, 0x40, 0, 0, 0, 0};
  EXPECT_FALSE(p.leader.feed(header, sizeof header, handler_for(&calls), &replies));
  Pair q(key, key);
  const uint8_t unknown_kind[16] = {0x4c, 0x42, 0x43, 0x4e, 3, 0, 0, 0, 24, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_FALSE(q.leader.feed(unknown_kind, sizeof unknown_kind, handler_for(&calls), &replies));
  Pair r(key, key);
  const uint8_t not_magic[16] = {1, 2, 3, 4, 1, 0, 0, 0, 24, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_FALSE(r.leader.feed(not_magic, sizeof not_magic, handler_for(&calls), &replies));
}

TEST(LeaderWire, TruncatedFramesWaitWithoutCallingTheHandler) {
  const LeaderKey key = key_of("the-same-secret-on-both-ends");
  Pair p(key, key);
  Calls calls;
  std::vector<uint8_t> frames, replies;
  p.follower.request(a_request(), &frames);
  for (size_t i = 0; i + 1 < frames.size(); ++i)
    ASSERT_TRUE(p.leader.feed(&frames[i], 1, handler_for(&calls), &replies));
  EXPECT_EQ(calls.requests, 0);
  ASSERT_TRUE(p.leader.feed(&frames.back(), 1, handler_for(&calls), &replies));
  EXPECT_EQ(calls.requests, 1);
}

TEST(LeaderWire, FieldsOutOfRangeAreInvalid) {
  EXPECT_TRUE(valid_request(a_request()));
  WireRequest r = a_request();
  r.key = 11 * 65;  // one past the last context key
  EXPECT_FALSE(valid_request(r));
  r = a_request();
  r.key = 4 * 65 + 14;  // 4096 bytes are size class 13, not 14
  EXPECT_FALSE(valid_request(r));
  r = a_request();
  r.count = 8;  // wire version 4's window: not this version's
  EXPECT_FALSE(valid_request(r));
  r = a_request();
  r.start = 302;  // not a window boundary (of 4 calls)
  EXPECT_FALSE(valid_request(r));
  r = a_request();
  r.start = (uint64_t(1) << 62) + 4;
  EXPECT_FALSE(valid_request(r));
  r = a_request();
  r.nnodes = 5;  // more nodes than ranks
  EXPECT_FALSE(valid_request(r));
  r = a_request();
  r.nranks = (1u << 20) + 1;
  EXPECT_FALSE(valid_request(r));
  r = a_request();
  r.ordinal = 4;  // a 4-rank communicator has no fifth rank in one process
  EXPECT_FALSE(valid_request(r));
  r = a_request();
  r.rank = 1u << 30;
  EXPECT_FALSE(valid_request(r));

  EXPECT_TRUE(valid_hello(a_hello()));
  WireHello h = a_hello();
  h.ordinal = 4;  // a 4-rank communicator has ordinals 0..3 in one process at most
  EXPECT_FALSE(valid_hello(h));
  h = a_hello();
  h.nranks = 1;  // a one-rank communicator needs no leader
  EXPECT_FALSE(valid_hello(h));
  h = a_hello();
  h.nnodes = 0;
  EXPECT_FALSE(valid_hello(h));
}

TEST(LeaderWire, ATamperedAnswerIsRejectedByTheFollower) {
  const LeaderKey key = key_of("the-same-secret-on-both-ends");
  Pair p(key, key);
  Calls calls;
  std::vector<uint8_t> frames, replies;
  p.follower.request(a_request(), &frames);
  ASSERT_TRUE(p.leader.feed(frames.data(), frames.size(), handler_for(&calls), &replies));
  replies[16 + 32 + 1] ^= 0x01;  // a decision slot changed in flight
  size_t used = 0;
  WireHello ack;
  WireDecisions d;
  EXPECT_EQ(p.follower.feed(replies.data(), replies.size(), &used, &ack, &d), FollowerSession::Event::kBad);
}

TEST(LeaderWire, ShortSecretsAreRefused) {
  LeaderKey k;
  std::string why;
  EXPECT_FALSE(leader_key_from_text("fifteen-bytes!!", &k, &why));
  EXPECT_NE(why.find("fewer than 16"), std::string::npos) << why;
  EXPECT_TRUE(leader_key_from_text("sixteen-bytes!!!\n", &k, &why));
  // Trailing newlines are not part of the secret: a key file and the same text in the
  // environment give the same key.
  LeaderKey a, b;
  ASSERT_TRUE(leader_key_from_text("0123456789abcdef0123", &a, &why));
  ASSERT_TRUE(leader_key_from_text("0123456789abcdef0123\n", &b, &why));
  EXPECT_EQ(a.bytes, b.bytes);
}

TEST(LeaderWire, AHelloTheLeaderCannotCountIsRefusedInASignedFrameAndTheConnectionStays) {
  // The refusal must be told apart from a connection that broke after the HELLO was counted: the
  // leader answers REFUSED, signed, instead of closing.
  const LeaderKey key = key_of("the-same-secret-on-both-ends");
  Pair p(key, key);
  Calls calls;
  LeaderHandler refusing = handler_for(&calls);
  refusing.hello = [](void* c, const WireHello&) {
    ++static_cast<Calls*>(c)->hellos;
    return false;  // e.g. the cap on learners
  };
  std::vector<uint8_t> frames, replies;
  WireHello bad_fields = a_hello();
  bad_fields.ordinal = 4;
  p.follower.hello(a_hello(), &frames);
  p.follower.hello(bad_fields, &frames);
  p.follower.request(a_request(), &frames);
  ASSERT_TRUE(p.leader.feed(frames.data(), frames.size(), refusing, &replies));
  EXPECT_EQ(calls.hellos, 1);    // bad fields never reach the handler
  EXPECT_EQ(calls.requests, 1);  // the connection still serves
  size_t at = 0, used = 0;
  WireHello echoed;
  WireDecisions d;
  EXPECT_EQ(p.follower.feed(replies.data(), replies.size(), &used, &echoed, &d),
            FollowerSession::Event::kRefused);
  EXPECT_EQ(echoed.ordinal, 0u);
  at += used;
  EXPECT_EQ(p.follower.feed(replies.data() + at, replies.size() - at, &used, &echoed, &d),
            FollowerSession::Event::kRefused);
  EXPECT_EQ(echoed.ordinal, 4u);
  at += used;
  EXPECT_EQ(p.follower.feed(replies.data() + at, replies.size() - at, &used, &echoed, &d),
            FollowerSession::Event::kDecisions);
  // A REFUSED forged without the secret fails the follower's check like any frame.
  Pair q(key, key);
  std::vector<uint8_t> more, answers;
  q.follower.hello(a_hello(), &more);
  ASSERT_TRUE(q.leader.feed(more.data(), more.size(), refusing, &answers));
  answers[kFrameHeaderBytes] ^= 0x01;
  EXPECT_EQ(q.follower.feed(answers.data(), answers.size(), &used, &echoed, &d),
            FollowerSession::Event::kBad);
}

TEST(LeaderWire, NoFrameIsAcceptedBeforeTheWelcome) {
  const LeaderKey key = key_of("the-same-secret-on-both-ends");
  LeaderSession leader(key, std::vector<uint8_t>(kNonceBytes, 7).data());
  FollowerSession follower(key);
  const std::vector<uint8_t> g = leader.greeting();
  std::vector<uint8_t> client_nonce(kNonceBytes, 9), out, welcome_and_ack;
  ASSERT_TRUE(follower.start(g.data(), g.size(), client_nonce.data(), &out));
  Calls calls;
  follower.hello(a_hello(), &out);
  ASSERT_TRUE(leader.feed(out.data(), out.size(), handler_for(&calls), &welcome_and_ack));
  // Dropping the WELCOME: the ACK alone is refused (it would also carry the wrong frame number).
  const size_t welcome = kFrameHeaderBytes + kWelcomePayload + kTagBytes;
  size_t used = 0;
  WireHello ack;
  WireDecisions d;
  EXPECT_EQ(
      follower.feed(welcome_and_ack.data() + welcome, welcome_and_ack.size() - welcome, &used, &ack, &d),
      FollowerSession::Event::kBad);
  EXPECT_FALSE(follower.welcomed());
}

// Wire version 6 sends whole arms (version 5 sent slots); a version-5 peer must never be counted.
// Its greeting fails the follower's check before anything is sent, and the greeting of a version-6
// leader carries version 6, which a version-5 follower refuses the same way.
TEST(LeaderWire, APeerOfAnotherWireVersionFailsTheGreeting) {
  const LeaderKey key = key_of("the-same-secret-on-both-ends");
  LeaderSession leader(key, std::vector<uint8_t>(kNonceBytes, 7).data());
  std::vector<uint8_t> g = leader.greeting();
  ASSERT_EQ(g.size(), kGreetingBytes);
  EXPECT_EQ(g[4] | g[5] << 8 | g[6] << 16 | g[7] << 24, 6);
  std::vector<uint8_t> client_nonce(kNonceBytes, 9), out;
  g[4] = 5;  // the previous version
  FollowerSession follower(key);
  EXPECT_FALSE(follower.start(g.data(), g.size(), client_nonce.data(), &out));
  EXPECT_TRUE(out.empty());
  g[4] = 6;
  FollowerSession current(key);
  EXPECT_TRUE(current.start(g.data(), g.size(), client_nonce.data(), &out));
}
