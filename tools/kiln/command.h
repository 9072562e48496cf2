// The `kiln` subcommands: each one is a name, its help text, its flags and a function that
// runs it on parsed arguments and returns the process exit code.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "flags.h"

namespace kiln::cli {

struct Command {
  std::string name;         // "run"
  std::string summary;      // one line for `kiln help`
  std::string usage;        // "kiln run ARTIFACT --input=TENSOR... [flags]"
  std::string description;  // paragraphs for `kiln help run`
  std::vector<FlagSpec> flags;
  size_t positionals;       // exactly this many positional arguments
  int (*run)(const ParsedArgs& args);
};

const Command& compileCommand();
const Command& runCommand();
const Command& benchCommand();
const Command& dumpCommand();

// All subcommands in help order.
std::vector<const Command*> allCommands();

// Parses `args` for `command` (flag and positional-count errors are CliErrors) and runs it.
int runCommandLine(const Command& command, std::span<const std::string> args);

}  // namespace kiln::cli
