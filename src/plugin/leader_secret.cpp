#include "plugin/leader_secret.hpp"

#include <sodium.h>

#include "plugin/regular_file.hpp"

namespace ncclbot::plugin {
namespace {

constexpr char kKeyDomain[] = "ncclbot leader key v2";  // BLAKE2b key: 21 bytes (16..64 allowed)

std::string trimmed(const std::string& s) {
  size_t end = s.size();
  while (end > 0 && (s[end - 1] == '\n' || s[end - 1] == '\r' || s[end - 1] == ' ' || s[end - 1] == '\t'))
    --end;
  return s.substr(0, end);
}

}  // namespace

bool leader_key_from_text(const std::string& secret, LeaderKey* key, std::string* why) {
  const std::string text = trimmed(secret);
  if (text.size() < kMinSecretBytes) {
    *why = "the secret has " + std::to_string(text.size()) + " bytes, fewer than " +
           std::to_string(kMinSecretBytes);
    return false;
  }
  if (sodium_init() < 0) {
    *why = "libsodium cannot initialise";
    return false;
  }
  crypto_generichash(key->bytes.data(), key->bytes.size(),
                     reinterpret_cast<const unsigned char*>(text.data()), text.size(),
                     reinterpret_cast<const unsigned char*>(kKeyDomain), sizeof kKeyDomain - 1);
  return true;
}

bool load_leader_key(const std::string& secret, const std::string& secret_file, LeaderKey* key,
                     std::string* why) {
  if (!secret.empty()) {
    if (leader_key_from_text(secret, key, why)) return true;
    *why = "NCCLBOT_LEADER_SECRET: " + *why;
    return false;
  }
  if (secret_file.empty()) {
    *why = "no secret (set NCCLBOT_LEADER_SECRET or NCCLBOT_LEADER_SECRET_FILE, e.g. from `ncclbot secret`)";
    return false;
  }
  ReadRules rules;
  rules.max_bytes = kMaxSecretFileBytes;
  rules.no_follow = true;
  rules.owner_only = true;
  std::string text;
  const ReadResult r = read_regular_file(secret_file, rules, &text, why);
  if (r != ReadResult::kOk) {
    if (r == ReadResult::kMissing) *why = secret_file + ": no such file";
    *why = "NCCLBOT_LEADER_SECRET_FILE=" + *why;
    return false;
  }
  const bool made = leader_key_from_text(text, key, why);
  sodium_memzero(text.data(), text.size());
  if (!made) *why = "NCCLBOT_LEADER_SECRET_FILE=" + secret_file + ": " + *why;
  return made;
}

}  // namespace ncclbot::plugin
