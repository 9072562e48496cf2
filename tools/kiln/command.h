// The `kiln` subcommands: each one is a name, its help text, its flags and a function that
// runs it on parsed arguments and returns the process exit code.
#pragma once

#include <functional>
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
  // A command implemented by another executable (`compile`, in kiln-compile): it receives
  // the raw arguments, including "--help", and `run`, `flags` and `description` are unused.
  int (*runExternal)(std::span<const std::string> args) = nullptr;
};

const Command& compileCommand();  // in kiln-compile: the real one; in kiln: the launcher
const Command& runCommand();
const Command& benchCommand();
const Command& compareCommand();
const Command& dumpCommand();

// Parses `args` for `command` (flag and positional-count errors are CliErrors) and runs it.
int runCommandLine(const Command& command, std::span<const std::string> args);

// "usage: ...\n\n<description>\n\nflags:\n..." for `kiln help COMMAND`.
std::string commandHelp(const Command& command);

// Runs `body` and turns any error into one line `kiln: error: <message>` on stderr and exit
// status 1: the shared top level of the kiln executables.
int guardedMain(const std::function<int()>& body);

}  // namespace kiln::cli
