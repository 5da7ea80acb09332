// Hostile traffic on the leader's port (docs/plugin.md "Security model"): garbage, truncated
// frames, spoofed HELLOs and requests without the secret or with a wrong one, absurd indices and
// hundreds of idle connections. Rank 0's getCollInfo must keep answering fast, must not be
// steered (a 2-rank communicator whose follower never joined plays NCCL's choice on every call,
// even with NCCLBOT_POLICY=random), and the process must stay small.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <random>
#include <thread>

#include "plugin/loopback_port.hpp"
#include "plugin/plugin_loader.hpp"
#include "support/run_cli.hpp"

#include <cstdlib>

using namespace ncclbot::test;
using ncclbot::plugin::free_loopback_port;

namespace {

int connect_to(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(uint16_t(port));
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return -1;
  }
  timeval tv{0, 200000};  // an attacker does not wait long for the server to hang up
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

void send_all(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return;
    done += size_t(n);
  }
}

std::string le32(uint32_t v) {
  std::string s(4, '\0');
  for (int i = 0; i < 4; ++i) s[size_t(i)] = char(uint8_t(v >> (8 * i)));
  return s;
}
std::string le64(uint64_t v) {
  return le32(uint32_t(v)) + le32(uint32_t(v >> 32));
}

// Frames as the format describes them (written here independently of the plugin's encoder): a
// header, a payload, and a 16-byte tag an attacker without the secret can only guess.
std::string frame(uint32_t kind, const std::string& payload, std::mt19937_64& rng) {
  std::string tag;
  for (int i = 0; i < 2; ++i) tag += le64(rng());
  return le32(0x4e43424cu) + le32(kind) + le32(uint32_t(payload.size())) + le32(0) + payload + tag;
}
std::string spoofed_hello(uint64_t comm, uint32_t rank) {
  return le64(comm) + le32(2) + le32(1) + le32(rank) + le32(0);
}
std::string absurd_request(uint64_t comm, std::mt19937_64& rng) {
  std::string p = le64(comm) + le64(rng()) + le64(rng()) + le32(uint32_t(rng())) + le32(8) + le32(2) +
                  le32(1) + le32(1) + le32(0);
  for (int s = 0; s < 21; ++s) p += le32(0x3f800000u);  // 1.0f everywhere
  return p;
}

// The leader's greeting, then our nonce: what a client must do before any frame is read.
bool handshake(int fd) {
  char greeting[32];
  size_t have = 0;
  while (have < sizeof greeting) {
    const ssize_t n = recv(fd, greeting + have, sizeof greeting - have, 0);
    if (n <= 0) return false;
    have += size_t(n);
  }
  uint32_t magic;
  std::memcpy(&magic, greeting, 4);
  if (magic != 0x4e43424cu) return false;
  send_all(fd, std::string(24, 'n'));
  return true;
}

size_t resident_bytes() {
  std::ifstream in("/proc/self/statm");
  size_t pages = 0, resident = 0;
  in >> pages >> resident;
  return resident * size_t(sysconf(_SC_PAGESIZE));
}

// The 2-rank communicator's table: Tree/LL 14, Ring/LL128 12, Ring/Simple 11 (NCCL picks slot 5).
void fill(CostTable7x3& t) {
  t.t[0][0] = 14.0f;
  t.t[1][1] = 12.0f;
  t.t[1][2] = 11.0f;
}

}  // namespace

TEST(HostileClients, Rank0StaysFastUnsteeredAndSmallUnderAttack) {
  Plugin& p = plugin();
  ASSERT_TRUE(p.ok());
  const int port = free_loopback_port();
  const uint64_t comm = 0x5151;
  EnvVar mode("NCCLBOT_MODE", "online"), policy("NCCLBOT_POLICY", "random"), seed("NCCLBOT_SEED", "1"),
      rank("NCCLBOT_RANK", "0"), leader("NCCLBOT_LEADER", "127.0.0.1:" + std::to_string(port)),
      secret("NCCLBOT_LEADER_SECRET", "hostile-client-test-secret");
  clear_log();
  void* tuner = nullptr;
  ASSERT_EQ(p.v5->init(&tuner, comm, 2, 1, recording_logger, nullptr, nullptr), 0);
  ASSERT_TRUE(logged(kNcclLogInfo, "decision leader listening"));
  // Call times in 10 ns buckets up to 100 us (allocated before the memory baseline).
  std::vector<uint64_t> histogram(10001, 0);
  uint64_t calls = 0;
  double max_ns = 0.0;
  const size_t rss_before = resident_bytes();

  std::atomic<bool> stop{false};
  std::atomic<int> attacks{0};
  std::vector<int> idle;
  for (int i = 0; i < 300; ++i)
    if (int fd = connect_to(port); fd >= 0) idle.push_back(fd);
  EXPECT_GE(idle.size(), 250u);
  std::thread attacker([&] {
    std::mt19937_64 rng(99);
    while (!stop.load()) {
      const int fd = connect_to(port);
      if (fd < 0) continue;
      switch (attacks.load() % 6) {
        case 0: {  // garbage
          std::string junk(512, '\0');
          for (char& c : junk) c = char(rng());
          send_all(fd, junk);
          break;
        }
        case 1:  // a truncated frame, then silence
          if (handshake(fd)) send_all(fd, frame(2, absurd_request(comm, rng), rng).substr(0, 70));
          break;
        case 2:  // a spoofed HELLO completing the communicator
          if (handshake(fd)) send_all(fd, frame(1, spoofed_hello(comm, 1), rng));
          break;
        case 3:  // requests with absurd indices and keys
          if (handshake(fd))
            for (int k = 0; k < 4; ++k) send_all(fd, frame(2, absurd_request(comm, rng), rng));
          break;
        case 4:  // a header promising a gigabyte
          if (handshake(fd)) send_all(fd, le32(0x4e43424cu) + le32(2) + le32(1u << 30) + le32(0));
          break;
        default:  // HELLO before the handshake, i.e. without our nonce
          send_all(fd, frame(1, spoofed_hello(comm, 1), rng));
      }
      char sink[256];
      while (recv(fd, sink, sizeof sink, 0) > 0) {
      }
      close(fd);
      ++attacks;
    }
  });

  int steered = 0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (std::chrono::steady_clock::now() < until) {
    CostTable7x3 t;
    fill(t);
    const auto t0 = std::chrono::steady_clock::now();
    p.v5->getCollInfo(tuner, 4, 65536, 1, t.ptr(), 7, 3, 0, nullptr);
    const double ns = double(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count());
    ++histogram[std::min<size_t>(size_t(ns / 10.0), histogram.size() - 1)];
    ++calls;
    max_ns = std::max(max_ns, ns);
    steered += t.pick() != 5;
    p.report(comm, 2, 1, 4, 65536, 1, 2, 11.0);
  }
  stop = true;
  attacker.join();
  for (int fd : idle) close(fd);

  auto quantile_us = [&](double q) {
    uint64_t seen = 0;
    for (size_t b = 0; b < histogram.size(); ++b)
      if ((seen += histogram[b]) > uint64_t(q * double(calls))) return double(b) * 0.01;
    return 100.0;
  };
  const double median_us = quantile_us(0.5);
  std::printf(
      "hostile clients: %d attacking connections + %zu idle; %llu getCollInfo calls, median %.2f us, "
      "p99 %.2f us, max %.1f us; resident memory +%.1f MiB\n",
      attacks.load(), idle.size(), (unsigned long long)calls, median_us, quantile_us(0.99), max_ns / 1000.0,
      double(resident_bytes() - std::min(resident_bytes(), rss_before)) / 1048576.0);
  EXPECT_GE(attacks.load(), 30);
  EXPECT_EQ(steered, 0);  // not one pick moved off NCCL's choice
  EXPECT_LT(median_us, 50.0);
  EXPECT_LT(resident_bytes(), rss_before + (size_t(64) << 20));

  // The server is still there and still speaks the protocol.
  const int fd = connect_to(port);
  ASSERT_GE(fd, 0);
  EXPECT_TRUE(handshake(fd));
  close(fd);
  p.v5->finalize(tuner);
}

TEST(HostileClients, WithoutAUsableSecretMultiRankOnlineModePassesThroughWithAWarning) {
  Plugin& p = plugin();
  ASSERT_TRUE(p.ok());
  const std::string dir = temp_dir();
  const std::string loose = dir + "/loose.key";
  write_file(loose, "0123456789abcdef0123456789abcdef\n");
  chmod(loose.c_str(), 0644);
  EnvVar mode("NCCLBOT_MODE", "online"), policy("NCCLBOT_POLICY", "random"), rank("NCCLBOT_RANK", "1"),
      leader("NCCLBOT_LEADER", "127.0.0.1:1");
  struct Case {
    const char* secret;
    std::string file;
    const char* warning;
  };
  for (const Case& c : {Case{nullptr, "", "needs the job's secret: no secret"},
                        Case{nullptr, loose, "readable or writable by group or others"},
                        Case{"short", "", "fewer than 16"}}) {
    if (c.secret) setenv("NCCLBOT_LEADER_SECRET", c.secret, 1);
    if (!c.file.empty()) setenv("NCCLBOT_LEADER_SECRET_FILE", c.file.c_str(), 1);
    clear_log();
    void* tuner = nullptr;
    ASSERT_EQ(p.v5->init(&tuner, 0x99, 4, 1, recording_logger, nullptr, nullptr), 0);
    EXPECT_TRUE(logged(kNcclLogWarn, c.warning)) << c.warning;
    CostTable7x3 t;
    fill(t);
    p.v5->getCollInfo(tuner, 4, 65536, 1, t.ptr(), 7, 3, 0, nullptr);
    EXPECT_EQ(t.pick(), 5);  // NCCL's own
    p.v5->finalize(tuner);
    // A second communicator with the same problem: no second warning.
    clear_log();
    ASSERT_EQ(p.v5->init(&tuner, 0x9a, 4, 1, recording_logger, nullptr, nullptr), 0);
    EXPECT_FALSE(logged(kNcclLogWarn, c.warning)) << c.warning;
    p.v5->finalize(tuner);
    unsetenv("NCCLBOT_LEADER_SECRET");
    unsetenv("NCCLBOT_LEADER_SECRET_FILE");
  }
}

TEST(SecretCommand, WritesAnOwnerOnlyKeyAndNeverOverwrites) {
  const std::string dir = temp_dir();
  const std::string key = dir + "/sub/leader.key";
  const CliResult first = run_cli("secret --out '" + key + "'");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  struct stat st;
  ASSERT_EQ(stat(key.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  const std::string text = read_all(key);
  ASSERT_EQ(text.size(), 65u);  // 32 random bytes as hex, and a newline
  EXPECT_EQ(text.find_first_not_of("0123456789abcdef"), 64u);
  const CliResult again = run_cli("secret --out '" + key + "'");
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_NE(again.err.find("already exists"), std::string::npos) << again.err;
  EXPECT_EQ(read_all(key), text);
  // Default place: $HOME/.config/ncclbot/leader.key; two runs give different keys.
  const std::string saved_home = getenv("HOME") ? getenv("HOME") : "";
  setenv("HOME", dir.c_str(), 1);
  const CliResult home = run_cli("secret");
  setenv("HOME", saved_home.c_str(), 1);
  ASSERT_EQ(home.exit_code, 0) << home.err;
  const std::string default_key = dir + "/.config/ncclbot/leader.key";
  ASSERT_EQ(stat(default_key.c_str(), &st), 0);
  EXPECT_NE(read_all(default_key), text);
}

// The printed `export` line is one quoted shell word: pasted into a shell, a folder named with
// $(...) and backticks runs nothing, and the variable holds the path exactly.
TEST(SecretCommand, ThePrintedExportLineRunsNothing) {
  const std::string dir = temp_dir(), marker = dir + "/pwned";
  const std::string key = dir + "/a $(touch " + marker + ") `touch " + marker + "` b/leader.key";
  const CliResult r = run_cli("secret --out '" + key + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string prefix = "use it with: ";
  const size_t at = r.out.find(prefix);
  ASSERT_NE(at, std::string::npos) << r.out;
  const std::string line = r.out.substr(at + prefix.size(), r.out.find('\n', at) - at - prefix.size());
  const std::string script = dir + "/paste.sh", value = dir + "/value.txt";
  write_file(script, line + "\nprintf %s \"$NCCLBOT_LEADER_SECRET_FILE\" > '" + value + "'\n");
  ASSERT_EQ(std::system(("bash '" + script + "'").c_str()), 0);
  struct stat st;
  EXPECT_NE(stat(marker.c_str(), &st), 0) << "pasting the line ran a command";
  EXPECT_EQ(read_all(value), key);
}
