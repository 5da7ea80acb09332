#pragma once
// `secret` as a library call (cli/replay_call.hpp has the pattern): a fresh random key for the tuner
// plugin's decision leader (docs/plugin.md "Security model"), 32 bytes from the kernel's random
// source, hex-encoded, in a new file only its owner can read (0600). It never overwrites a file.
#include <nlohmann/json.hpp>
#include <string>

namespace ncclbot::cli {

struct SecretCallOptions {
  std::string out;  // empty: $HOME/.config/ncclbot/leader.key
};

struct SecretCallResult {
  std::string key_file;  // where the key is; the key itself is never returned
};

// UsageError without HOME for the default path; InputError when the file exists or cannot be made.
SecretCallResult secret_call(const SecretCallOptions& options);

// The JSON document `secret --json` prints.
nlohmann::json secret_document(const SecretCallResult& result);

// `text` as one single-quoted shell word: every ' becomes '\''.
std::string shell_quoted(const std::string& text);

}  // namespace ncclbot::cli
