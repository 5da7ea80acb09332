// The command table (each cmd_*.cpp registers itself) and the dispatcher behind `ncclbot` and the
// Python module: one subcommand per command, errors as one line on stderr and an exit code.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <exception>
#include <filesystem>
#include <iostream>
#include <map>

#include "cli/command.hpp"
#include "cli/dispatch.hpp"
#include "cli/option_rules.hpp"
#include "ncclbot/core/command_streams.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/version.hpp"

namespace ncclbot::cli {

namespace {
std::vector<Command>& command_table() {
  static std::vector<Command> table;
  return table;
}
}  // namespace

bool register_command(Command command) {
  command_table().push_back(std::move(command));
  return true;
}

const std::vector<Command>& registered_commands() {
  return command_table();
}

int run_cli(int argc, char** argv) {
  CLI::App app{"ncclbot: counterfactual evaluation of NCCL algorithm/protocol selection policies"};
  app.set_version_flag("--version", std::string(kVersion));
  app.require_subcommand(1);
  std::vector<Command> commands = registered_commands();
  std::sort(commands.begin(), commands.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  std::map<CLI::App*, Action> actions;
  for (const auto& command : commands) {
    CLI::App* sub = app.add_subcommand(command.name, command.help);
    actions[sub] = command.setup(*sub);
  }
  apply_option_rules(app);
  // CLI11 would only say "A subcommand is required"; name the word it did not know.
  if (argc > 1 && argv[1][0] != '-' &&
      std::none_of(commands.begin(), commands.end(), [&](const auto& c) { return c.name == argv[1]; })) {
    command_err() << "ncclbot: unknown command '" << one_line(argv[1]) << "' (see ncclbot --help)\n";
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e, command_out(), command_err());
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e, command_out(), command_err());
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e, command_out(), command_err());
  } catch (const CLI::ParseError& e) {
    command_err() << "ncclbot: " << one_line(e.what()) << " (see ncclbot --help)\n";
    return 2;
  }
  try {
    for (auto& [sub, action] : actions)
      if (sub->parsed()) return action();
    return 2;
  } catch (...) {
    return report_failure(std::current_exception(), command_err());
  }
}

int report_failure(std::exception_ptr failure, std::ostream& err) {
  try {
    std::rethrow_exception(failure);
  } catch (const InputError& e) {
    err << "ncclbot: " << one_line(e.what()) << "\n";
    return 2;
  } catch (const UsageError& e) {
    err << "ncclbot: " << one_line(e.what()) << "\n";
    return 2;
  } catch (const std::filesystem::filesystem_error& e) {
    // The system's answer about a path the user gave (a symlink loop, no permission): theirs to fix.
    const std::string path = e.path1().empty() ? std::string() : e.path1().string() + ": ";
    err << "ncclbot: " << one_line(path + e.code().message()) << "\n";
    return 2;
  } catch (const std::bad_alloc&) {
    err << "ncclbot: out of memory (is an input or a requested size far larger than intended?)\n";
    return 1;
  } catch (const std::exception& e) {
    err << "ncclbot: internal error: " << one_line(e.what()) << "\n";
    return 1;
  }
}

int run_cli(const std::vector<std::string>& args) {
  // A C string ends at its first NUL, so 'keep\0.csv' would reach the command as 'keep': refuse it.
  if (const std::string problem = nul_byte_problem(args); !problem.empty()) {
    command_err() << "ncclbot: " << one_line(problem) << "\n";
    return 2;
  }
  std::vector<std::string> words{"ncclbot"};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  return run_cli(int(words.size()), argv.data());
}

}  // namespace ncclbot::cli
