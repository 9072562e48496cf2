// `kiln`: the command-line entry point. Picks the subcommand (compile, run, bench, dump,
// help) and turns every user error into one line `kiln: error: ...` and exit code 1.
// `compile` runs in the separate executable kiln-compile (see compile_launcher.cpp) so that
// `kiln run`, `bench` and `dump` load only the runtime, not LLVM and libonnx.
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "cli_error.h"
#include "command.h"
#include "kiln/format/artifact.h"
#include "kiln/format/kernel_abi.h"

#ifndef KILN_VERSION_STRING
#define KILN_VERSION_STRING "0.0.0"
#endif

namespace kiln::cli {
namespace {

// All subcommands in help order.
std::vector<const Command*> allCommands() {
  return {&compileCommand(), &runCommand(), &benchCommand(), &compareCommand(), &dumpCommand()};
}

void printVersion() {
  std::printf("kiln %s (artifact format %u.%u, kernel ABI %u)\n", KILN_VERSION_STRING,
              KILN_FORMAT_MAJOR, KILN_FORMAT_MINOR, KILN_KERNEL_ABI_VERSION);
}

void printOverview() {
  std::printf(
      "kiln: an ahead-of-time compiler for ML inference models and its runtime.\n\n"
      "usage: kiln COMMAND [ARGS]\n\ncommands:\n");
  for (const Command* c : allCommands()) std::printf("  %-9s %s\n", c->name.c_str(), c->summary.c_str());
  std::printf("  %-9s %s\n", "help", "this text, or `kiln help COMMAND` for one command");
  std::printf("\n  kiln --version   print the version\n");
}

const Command* findCommand(const std::string& name) {
  for (const Command* c : allCommands())
    if (c->name == name) return c;
  return nullptr;
}

int help(const std::vector<std::string>& args) {
  if (args.empty()) {
    printOverview();
    return 0;
  }
  if (args.size() > 1) throw CliError("'kiln help' takes at most one command name");
  const Command* c = findCommand(args[0]);
  if (!c) throw CliError("unknown command '" + args[0] + "' (see 'kiln help')");
  if (c->runExternal) {
    std::vector<std::string> helpArgs = {"--help"};
    return c->runExternal(helpArgs);
  }
  std::printf("%s", commandHelp(*c).c_str());
  return 0;
}

int dispatch(const std::vector<std::string>& argv) {
  if (argv.empty()) {
    printOverview();
    return 1;
  }
  const std::string& first = argv[0];
  std::vector<std::string> rest(argv.begin() + 1, argv.end());
  if (first == "--version" || first == "version") {
    printVersion();
    return 0;
  }
  if (first == "help" || first == "--help" || first == "-h") return help(rest);
  const Command* c = findCommand(first);
  if (!c) {
    if (first.starts_with("-")) throw CliError("unknown flag '" + first + "' (see 'kiln help')");
    throw CliError("unknown command '" + first + "' (see 'kiln help')");
  }
  if (c->runExternal) return c->runExternal(rest);
  for (const std::string& arg : rest)
    if (arg == "--help" || arg == "-h") return help({first});
  return runCommandLine(*c, rest);
}

}  // namespace
}  // namespace kiln::cli

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return kiln::cli::guardedMain([&] { return kiln::cli::dispatch(args); });
}
