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

// Runs `kiln args...` (the binary built by this tree, KILN_CLI_PATH). With `oneStream`, stdout
// and stderr go to one file, as in `kiln ... 2>&1 | less`: `out` then holds both in the order
// they were written, and `err` is empty.
CliResult runKiln(const std::vector<std::string>& args, bool oneStream = false);

// A fresh directory for one test suite's files, removed with its contents when the test
// process exits.
std::string makeTempDir(const std::string& prefix);

}  // namespace kiln::clitest
