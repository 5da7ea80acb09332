// `ncclbot secret [--out PATH]`: writes a fresh random key for the tuner plugin's decision leader
// (docs/plugin.md "Security model"): 32 bytes from the kernel's random source, hex-encoded, in a
// file only its owner can read (0600), by default $HOME/.config/ncclbot/leader.key, which every
// node of a cluster with a shared home can read. It never overwrites a file: a key in use by a
// running job must not change under it. Point NCCLBOT_LEADER_SECRET_FILE at the file. The library
// call: cli/secret_call.hpp.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "cli/secret_call.hpp"
#include "ncclbot/core/command_streams.hpp"

namespace ncclbot::cli {
namespace secret_command {

Action setup(CLI::App& app) {
  auto opt = std::make_shared<SecretCallOptions>();
  auto json = std::make_shared<bool>(false);
  app.add_option("--out", opt->out, "where to write the key (default $HOME/.config/ncclbot/leader.key)");
  app.add_flag("--json", *json, "print one JSON document on stdout (the key file's path, never the key)");
  return [opt, json] {
    const SecretCallResult r = secret_call(*opt);
    // The key itself is never printed: only where it is, single-quoted for a shell, so pasting the
    // line cannot run what a folder name holds ($(...), backticks, spaces).
    (*json ? command_err() : command_out())
        << "wrote a new leader key to " << r.key_file << "\n"
        << "use it with: export NCCLBOT_LEADER_SECRET_FILE=" << shell_quoted(r.key_file) << "\n";
    if (*json) command_out() << secret_document(r).dump(2) << "\n";
    return 0;
  };
}

const bool registered = register_command(
    {"secret", "write a new owner-only key file for the tuner plugin's authenticated leader", setup});

}  // namespace secret_command
}  // namespace ncclbot::cli
