// Shared subcommand plumbing: argument checking before a command runs, and the command list.
#include "command.h"

#include "cli_error.h"

namespace kiln::cli {

std::vector<const Command*> allCommands() {
  return {&compileCommand(), &runCommand(), &benchCommand(), &dumpCommand()};
}

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

}  // namespace kiln::cli
