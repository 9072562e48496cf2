// The error type of the `kiln` command-line tool: a user mistake (bad flag, missing file,
// mismatching input) that main() reports as one line `kiln: error: <message>` with a
// non-zero exit code.
#pragma once

#include <stdexcept>
#include <string>

namespace kiln::cli {

class CliError : public std::runtime_error {
 public:
  explicit CliError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace kiln::cli
