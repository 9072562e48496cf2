// Shared files of the CLI tests: the runtime's standard test artifact (hand-written kernels
// built as an embedded ELF, see runtime/testing/test_artifacts.h) in several variants, its
// sample inputs as .npy files and the hand-computed reference outputs.
//   main(x: 1x16xf32, y: 1x16xf32) -> (out: 1x16xf32, total: 1xf32, twice: 16xf32)
//   relu(x: 16xf32) -> (y: 16xf32)
#pragma once

#include <string>

namespace kiln::clitest {

struct CliFiles {
  std::string dir;
  std::string elf;          // embedded ELF kernels, DEBUG names
  std::string stripped;     // the same without DEBUG
  std::string external;     // constants outside the artifact ...
  std::string constants;    // ... in this file
  std::string x, y;         // sample inputs (.npy)
  std::string out, total, twice;  // reference outputs (.npy)
};

// Written once per process into a temporary directory.
const CliFiles& cliFiles();

}  // namespace kiln::clitest
