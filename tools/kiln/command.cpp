// Shared subcommand plumbing: argument checking before a command runs, help text, and the
// top-level error handler of the kiln executables.
#include "command.h"

#include <cstdio>
#include <exception>

#include "cli_error.h"

namespace kiln::cli {

int runCommandLine(const Command& command, std::span<const std::string> args) {
  ParsedArgs parsed = parseArgs(command.name, command.flags, args);
  if (parsed.positionals.size() < command.positionals)
    throw CliError("'kiln " + command.name + "' needs " +
                   (command.positionals == 1 ? std::string("a file argument")
                                             : std::to_string(command.positionals) + " arguments") +
                   " (usage: " + command.usage + ")");
  if (parsed.positionals.size() > command.positionals)
    throw CliError("unexpected argument '" + parsed.positionals[command.positionals] +
                   "' for 'kiln " + command.name + "' (usage: " + command.usage + ")");
  return command.run(parsed);
}

std::string commandHelp(const Command& command) {
  return "usage: " + command.usage + "\n\n" + command.description + "\n\nflags:\n" +
         describeFlags(command.flags);
}

int guardedMain(const std::function<int()>& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    // CliError, kiln::CompileError (a std::runtime_error) and anything else a user error
    // turns into: one line, exit status 1.
    std::fflush(stdout);
    std::fprintf(stderr, "kiln: error: %s\n", e.what());
    return 1;
  }
}

}  // namespace kiln::cli
