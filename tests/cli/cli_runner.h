// Runs the `kiln` binary for the CLI tests and captures its exit code, stdout and stderr.
#pragma once

#include <string>
#include <vector>

namespace kiln::clitest {

struct CliResult {
  int exitCode = -1;
  std::string out;
  std::string err;
  long maxRssKb = 0;  // peak resident set size of the process
};

// Runs `kiln args...` (the binary built by this tree, KILN_CLI_PATH).
CliResult runKiln(const std::vector<std::string>& args);

// A fresh directory for one test suite's files, removed with its contents when the test
// process exits.
std::string makeTempDir(const std::string& prefix);

}  // namespace kiln::clitest
