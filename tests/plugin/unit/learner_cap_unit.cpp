// The leader keeps learners for at most kMaxForeignLearners communicators it has not joined: a
// peer holding the secret (a buggy job, say) that announces ever new communicators is refused past
// the cap (an authenticated REFUSED), and a refused follower is not counted, so it and the leader
// both play NCCL's choice.
#include <gtest/gtest.h>

#include <cstdlib>

#include "plugin/follower_link.hpp"
#include "plugin/loopback_port.hpp"
#include "plugin/plugin_runtime.hpp"

using namespace ncclbot::plugin;

TEST(LeaderCaps, LearnersForCommunicatorsTheLeaderHasNotJoinedAreCapped) {
  const std::string address = "127.0.0.1:" + std::to_string(ncclbot::plugin::free_loopback_port());
  const char* secret = "learner-cap-test-secret";
  setenv("NCCLBOT_MODE", "online", 1);
  setenv("NCCLBOT_POLICY", "random", 1);
  setenv("NCCLBOT_RANK", "0", 1);
  setenv("NCCLBOT_LEADER", address.c_str(), 1);
  setenv("NCCLBOT_LEADER_SECRET", secret, 1);
  TunerComm* own = PluginRuntime::instance().init_comm(1, true, 2, 1, nullptr);
  ASSERT_EQ(own->role(), Role::kLeader);

  LeaderKey key;
  std::string error;
  ASSERT_TRUE(leader_key_from_text(secret, &key, &error));
  auto link = FollowerLink::connect(address, key, 2000, &error);
  ASSERT_TRUE(link) << error;
  WireHello h;
  h.nranks = 2;
  h.nnodes = 1;
  h.rank = 1;
  for (size_t i = 0; i < kMaxForeignLearners; ++i) {
    h.comm_id = 1000 + i;
    ASSERT_EQ(link->hello(h, 2000), FollowerLink::Joined::kAcked) << i;
  }
  h.comm_id = 999999;
  EXPECT_EQ(link->hello(h, 2000), FollowerLink::Joined::kRefused);  // one more: refused
  // The leader's own communicator is not a foreign one and still gets its follower counted, on the
  // same connection (a refusal does not close it).
  EXPECT_TRUE(link->healthy());
  h.comm_id = 1;
  EXPECT_EQ(link->hello(h, 2000), FollowerLink::Joined::kAcked);
  PluginRuntime::instance().finalize_comm(own);
  for (const char* v :
       {"NCCLBOT_MODE", "NCCLBOT_POLICY", "NCCLBOT_RANK", "NCCLBOT_LEADER", "NCCLBOT_LEADER_SECRET"})
    unsetenv(v);
}
