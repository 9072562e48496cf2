// Build-time generator of the standard test artifacts (the fuzzer's seed corpus and sample
// inputs for `kiln dump`): writes <dir>/{static,static_nodebug,elf,external}.kiln and
// external.constants.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "test_artifacts.h"

namespace {

void writeFile(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  if (!out) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    std::exit(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace kiln::testing;
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <output directory>\n", argv[0]);
    return 2;
  }
  std::string dir = argv[1];
  writeFile(dir + "/static.kiln", writeArtifact(standardSpec(Kernels::kStatic)));
  writeFile(dir + "/static_nodebug.kiln",
            writeArtifact(standardSpec(Kernels::kStatic, Constants::kEmbedded, false)));
  writeFile(dir + "/external.kiln",
            writeArtifact(standardSpec(Kernels::kStatic, Constants::kExternal)));
  writeFile(dir + "/external.constants", standardConstants());
  writeFile(dir + "/elf.kiln", writeArtifact(standardSpec(Kernels::kElf)));
  return 0;
}
