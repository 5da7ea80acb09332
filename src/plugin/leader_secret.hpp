#pragma once
// The per-job secret that authenticates every message between the decision leader and its
// followers (docs/plugin.md "Security model"). It comes from NCCLBOT_LEADER_SECRET (the text
// itself) or NCCLBOT_LEADER_SECRET_FILE (a regular file owned by this user with no group or world
// permission bits, e.g. written by `ncclbot secret`). The MAC key is BLAKE2b-256 of the secret,
// so any length from 16 bytes on works and both ends derive the same key.
#include <array>
#include <cstdint>
#include <string>

namespace ncclbot::plugin {

inline constexpr size_t kMinSecretBytes = 16;
inline constexpr size_t kMaxSecretFileBytes = 4096;

struct LeaderKey {
  std::array<uint8_t, 32> bytes{};
};

// Key from the secret text (trailing whitespace and newlines are not part of it); false + `why`
// when it is shorter than kMinSecretBytes.
bool leader_key_from_text(const std::string& secret, LeaderKey* key, std::string* why);

// Key from `secret` when non-empty, else from the file `secret_file`; false + `why` (naming the
// variable or the file) when neither gives a usable secret, or the file is not owner-only.
bool load_leader_key(const std::string& secret, const std::string& secret_file, LeaderKey* key,
                     std::string* why);

}  // namespace ncclbot::plugin
