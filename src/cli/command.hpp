#pragma once
// Each subcommand lives in its own cmd_*.cpp and registers itself here at start-up, so adding a
// command never edits a shared list. `setup` declares the options on the subcommand and returns
// the action to run when that subcommand is chosen (its return value is the exit code). Each
// cmd_NAME.cpp keeps its own names in the namespace NAME_command, since the commands compile in unity
// batches (one translation unit holds several of them).
#include <functional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace ncclbot::cli {

using Action = std::function<int()>;

struct Command {
  std::string name;
  std::string help;
  std::function<Action(CLI::App&)> setup;
};

bool register_command(Command command);
const std::vector<Command>& registered_commands();

}  // namespace ncclbot::cli
