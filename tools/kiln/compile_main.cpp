// kiln-compile: the executable behind `kiln compile` (kiln execs it; it can also be run
// directly with the same arguments). It links the compiler driver; the `kiln` executable
// itself links only the runtime.
#include <cstdio>
#include <string>
#include <vector>

#include "command.h"

int main(int argc, char** argv) {
  using namespace kiln::cli;
  std::vector<std::string> args(argv + 1, argv + argc);
  return guardedMain([&] {
    for (const std::string& arg : args) {
      if (arg == "--help" || arg == "-h") {
        std::printf("%s", commandHelp(compileCommand()).c_str());
        return 0;
      }
    }
    return runCommandLine(compileCommand(), args);
  });
}
