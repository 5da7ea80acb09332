// SHA-256 from libsodium (crypto_hash_sha256, FIPS 180-4); tests check it against the standard's
// test vectors.
#include "base/sha256.hpp"

#include <sodium.h>

namespace ncclbot {

std::string sha256_hex(std::string_view bytes) {
  unsigned char digest[crypto_hash_sha256_BYTES];
  crypto_hash_sha256(digest, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
  char hex[2 * crypto_hash_sha256_BYTES + 1];
  sodium_bin2hex(hex, sizeof hex, digest, sizeof digest);
  return std::string(hex, 2 * crypto_hash_sha256_BYTES);
}

}  // namespace ncclbot
