// runKiln: fork + exec of the kiln binary with stdout and stderr redirected to files, and its
// peak resident set from wait4.
#include "cli_runner.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace kiln::clitest {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Removes the directories made by makeTempDir when the process exits.
struct TempDirs {
  std::vector<std::string> paths;
  ~TempDirs() {
    std::error_code ec;
    for (const std::string& path : paths) std::filesystem::remove_all(path, ec);
  }
};

}  // namespace

std::string makeTempDir(const std::string& prefix) {
  static TempDirs dirs;
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base && *base ? base : "/tmp") + "/" + prefix + "XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back(0);
  if (!mkdtemp(buffer.data())) throw std::runtime_error("mkdtemp failed");
  dirs.paths.push_back(buffer.data());
  return buffer.data();
}

CliResult runKiln(const std::vector<std::string>& args, bool oneStream) {
  static const std::string dir = makeTempDir("kiln-cli-run-");
  std::string outPath = dir + "/stdout";
  std::string errPath = dir + "/stderr";
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    int out = open(outPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
    int err = oneStream ? out : open(errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (oneStream) std::ofstream(errPath, std::ios::trunc);  // no stale stderr of a run before
    dup2(out, 1);
    dup2(err, 2);
    std::vector<char*> argv;
    std::string program = KILN_CLI_PATH;
    argv.push_back(program.data());
    std::vector<std::string> copies = args;
    for (std::string& a : copies) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(program.c_str(), argv.data());
    _exit(127);
  }
  int status = 0;
  struct rusage usage {};
  wait4(pid, &status, 0, &usage);
  CliResult result;
  result.maxRssKb = usage.ru_maxrss;
  result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = slurp(outPath);
  result.err = slurp(errPath);
  return result;
}

}  // namespace kiln::clitest
