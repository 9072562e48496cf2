// Command-line flag parsing for the `kiln` subcommands. Each command declares its flags;
// `--name=value`, `--name value`, `-o value` and bare boolean `--name` are accepted, and
// underscores and dashes in flag names are interchangeable (`--expected_output` is
// `--expected-output`). Unknown flags, missing values and repeated single flags are CliErrors.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace kiln::cli {

enum class FlagKind {
  Bool,      // --strip (or --strip=true/false)
  Value,     // --threads=4, at most once
  Repeated,  // --input=..., any number of times, order kept
};

struct FlagSpec {
  std::string name;       // without dashes, with '-' separators: "expected-output"
  FlagKind kind;
  std::string valueName;  // for help: "N", "FILE"
  std::string help;
  char shortName = 0;     // e.g. 'o' for -o
};

class ParsedArgs {
 public:
  std::vector<std::string> positionals;

  bool has(const std::string& name) const { return values_.count(name) != 0; }
  std::optional<std::string> value(const std::string& name) const;
  std::vector<std::string> values(const std::string& name) const;
  bool flag(const std::string& name) const;  // Bool flags

  // A Value flag as an integer within [min, max]; `fallback` when absent.
  int64_t integer(const std::string& name, int64_t fallback, int64_t min, int64_t max) const;
  // A Value flag as a positive number; `fallback` when absent.
  double number(const std::string& name, double fallback) const;

  void add(const std::string& name, const std::string& value) { values_[name].push_back(value); }

 private:
  std::map<std::string, std::vector<std::string>> values_;
};

// `command` names the subcommand in error messages ("run").
ParsedArgs parseArgs(const std::string& command, std::span<const FlagSpec> flags,
                     std::span<const std::string> args);

// "  --threads=N        worker threads (default 1)" lines for `kiln help COMMAND`.
std::string describeFlags(std::span<const FlagSpec> flags);

}  // namespace kiln::cli
