// Runs lld's ELF driver in process (lld::lldMain) on a private temporary directory: lld reads
// its inputs from files. The flags give a small, loader-friendly shared object (see
// ../shared/notes/toolchain.md); the output bytes depend only on the input object.
#include "elf_linker.h"

#include <lld/Common/Driver.h>
#include <llvm/Support/raw_ostream.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>

#include "codegen_error.h"

LLD_HAS_DRIVER(elf)

namespace kiln::codegen::detail {
namespace {

namespace fs = std::filesystem;

void writeFile(const fs::path& path, const void* data, size_t size) {
  std::ofstream out(path, std::ios::binary);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!out) fail("cannot write temporary file " + path.string());
}

// A directory only this process uses, removed when the object goes out of scope.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "kiln-link-XXXXXX").string();
    if (!mkdtemp(pattern.data())) fail("cannot create a temporary directory for linking");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

}  // namespace

std::vector<uint8_t> linkSharedElf(const std::vector<uint8_t>& object,
                                   const std::string& exportedSymbol) {
  // lld keeps global state per link; one link at a time.
  static std::mutex linkMutex;
  std::lock_guard<std::mutex> lock(linkMutex);

  TempDir dir;
  fs::path input = dir.path() / "kernels.o";
  fs::path output = dir.path() / "kernels.so";
  fs::path versionScript = dir.path() / "exports.map";
  writeFile(input, object.data(), object.size());
  std::string script = "{ global: " + exportedSymbol + "; local: *; };\n";
  writeFile(versionScript, script.data(), script.size());

  std::string inputArg = input.string(), outputArg = output.string();
  std::string scriptArg = "--version-script=" + versionScript.string();
  std::vector<const char*> args = {"ld.lld",
                                   inputArg.c_str(),
                                   "-o",
                                   outputArg.c_str(),
                                   "-shared",
                                   "--no-undefined",
                                   "-nostdlib",
                                   "-z",
                                   "noexecstack",
                                   "-z",
                                   "norelro",
                                   "--hash-style=sysv",
                                   "--build-id=none",
                                   "-z",
                                   "max-page-size=4096",
                                   "--gc-sections",
                                   "--icf=all",
                                   "-s",
                                   scriptArg.c_str()};

  std::string messages;
  llvm::raw_string_ostream messageStream(messages);
  lld::Result result =
      lld::lldMain(args, messageStream, messageStream, {{lld::Gnu, &lld::elf::link}});
  messageStream.flush();
  if (result.retCode != 0) fail("linking the kernel library failed: " + messages);

  std::ifstream in(output, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  if (bytes.empty()) fail("linking the kernel library produced no output");
  return bytes;
}

}  // namespace kiln::codegen::detail
