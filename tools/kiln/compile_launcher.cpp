// `kiln compile` inside the `kiln` executable: replaces the process with kiln-compile (built
// next to kiln), which links the compiler (LLVM, libonnx). Keeping the compiler out of `kiln`
// means `kiln run`, `bench` and `dump` start fast and with a small resident set.
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>

#include "cli_error.h"
#include "command.h"

namespace kiln::cli {
namespace {

std::string compilerPath() {
  char self[PATH_MAX];
  ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
  if (length <= 0) throw CliError("cannot find the kiln executable's folder to run kiln-compile");
  self[length] = 0;
  return (std::filesystem::path(self).parent_path() / "kiln-compile").string();
}

int launchCompiler(std::span<const std::string> args) {
  std::string path = compilerPath();
  std::vector<std::string> copies(args.begin(), args.end());
  std::vector<char*> argv;
  std::string name = "kiln-compile";
  argv.push_back(name.data());
  for (std::string& a : copies) argv.push_back(a.data());
  argv.push_back(nullptr);
  execv(path.c_str(), argv.data());
  throw CliError("cannot run the compiler '" + path + "': " + std::strerror(errno));
}

}  // namespace

const Command& compileCommand() {
  static const Command command{
      "compile", "compile a model (ONNX) into an artifact",
      "kiln compile MODEL -o OUT.kiln [flags]", "", {}, 1, nullptr, launchCompiler};
  return command;
}

}  // namespace kiln::cli
