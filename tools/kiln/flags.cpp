// Flag parsing for the `kiln` subcommands (see flags.h).
#include "flags.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>

#include "cli_error.h"

namespace kiln::cli {
namespace {

std::string normalize(std::string name) {
  std::replace(name.begin(), name.end(), '_', '-');
  return name;
}

const FlagSpec* findFlag(std::span<const FlagSpec> flags, const std::string& name) {
  for (const FlagSpec& flag : flags)
    if (flag.name == name) return &flag;
  return nullptr;
}

const FlagSpec* findShort(std::span<const FlagSpec> flags, char shortName) {
  for (const FlagSpec& flag : flags)
    if (flag.shortName != 0 && flag.shortName == shortName) return &flag;
  return nullptr;
}

}  // namespace

std::optional<std::string> ParsedArgs::value(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end() || it->second.empty()) return std::nullopt;
  return it->second.back();
}

std::vector<std::string> ParsedArgs::values(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

bool ParsedArgs::flag(const std::string& name) const {
  auto text = value(name);
  return text && *text != "false" && *text != "0";
}

int64_t ParsedArgs::integer(const std::string& name, int64_t fallback, int64_t min,
                            int64_t max) const {
  auto text = value(name);
  if (!text) return fallback;
  int64_t result = 0;
  auto [ptr, ec] = std::from_chars(text->data(), text->data() + text->size(), result);
  if (text->empty() || ec != std::errc() || ptr != text->data() + text->size())
    throw CliError("--" + name + " expects an integer, got '" + *text + "'");
  if (result < min || result > max)
    throw CliError("--" + name + "=" + *text + " is out of range [" + std::to_string(min) +
                   ", " + std::to_string(max) + "]");
  return result;
}

double ParsedArgs::number(const std::string& name, double fallback) const {
  auto text = value(name);
  if (!text) return fallback;
  char* end = nullptr;
  double result = std::strtod(text->c_str(), &end);
  if (text->empty() || end != text->c_str() + text->size() || !(result > 0))
    throw CliError("--" + name + " expects a positive number, got '" + *text + "'");
  return result;
}

ParsedArgs parseArgs(const std::string& command, std::span<const FlagSpec> flags,
                     std::span<const std::string> args) {
  ParsedArgs parsed;
  bool onlyPositionals = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (onlyPositionals || arg.size() < 2 || arg[0] != '-') {
      parsed.positionals.push_back(arg);
      continue;
    }
    if (arg == "--") {
      onlyPositionals = true;
      continue;
    }
    const FlagSpec* spec = nullptr;
    std::optional<std::string> inlineValue;
    std::string shown;  // the flag as the user wrote it, for messages
    if (arg.starts_with("--")) {
      size_t equals = arg.find('=');
      std::string name = normalize(arg.substr(2, equals == std::string::npos ? std::string::npos
                                                                                : equals - 2));
      if (equals != std::string::npos) inlineValue = arg.substr(equals + 1);
      shown = "--" + name;
      spec = findFlag(flags, name);
    } else {
      shown = arg.substr(0, 2);
      spec = findShort(flags, arg[1]);
      if (arg.size() > 2) inlineValue = arg.substr(arg[2] == '=' ? 3 : 2);
    }
    if (!spec)
      throw CliError("unknown flag '" + shown + "' for 'kiln " + command + "' (see 'kiln help " +
                     command + "')");

    if (spec->kind == FlagKind::Bool) {
      std::string value = inlineValue.value_or("true");
      if (value != "true" && value != "false" && value != "1" && value != "0")
        throw CliError("flag '" + shown + "' takes no value (or true/false), got '" + value + "'");
      parsed.add(spec->name, value);
      continue;
    }
    std::string value;
    if (inlineValue) {
      value = *inlineValue;
    } else if (i + 1 < args.size() && !args[i + 1].starts_with("--")) {
      value = args[++i];
    } else {
      throw CliError("flag '" + shown + "' needs a value (" + shown + "=" + spec->valueName + ")");
    }
    if (value.empty())
      throw CliError("flag '" + shown + "' needs a value (" + shown + "=" + spec->valueName + ")");
    if (spec->kind == FlagKind::Value && parsed.has(spec->name))
      throw CliError("flag '" + shown + "' given more than once");
    parsed.add(spec->name, value);
  }
  return parsed;
}

std::string describeFlags(std::span<const FlagSpec> flags) {
  std::string text;
  for (const FlagSpec& flag : flags) {
    std::string left = "  ";
    if (flag.shortName) left += std::string("-") + flag.shortName + ", ";
    left += "--" + flag.name;
    if (flag.kind != FlagKind::Bool) left += "=" + flag.valueName;
    if (left.size() < 30) left.append(30 - left.size(), ' ');
    else left += "\n" + std::string(30, ' ');
    text += left + flag.help + "\n";
  }
  return text;
}

}  // namespace kiln::cli
