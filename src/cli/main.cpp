// The `ncclbot` program: one binary, one subcommand per cmd_*.cpp (cli/dispatch.hpp).
#include "cli/dispatch.hpp"

int main(int argc, char** argv) {
  return ncclbot::cli::run_cli(argc, argv);
}
