// Build-time generator of the standard test artifacts (the fuzzer's seed corpus and sample
// inputs for `kiln dump`): writes <dir>/{static,static_nodebug,elf,external}.kiln,
// external.constants, and m33.kiln + m33_expected.bin for the bare-metal test.
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

  // For the bare-metal Cortex-M33 test (tests/runtime/m33): the same artifact for 32-bit Arm
  // with the hard-float ABI and DSP + FPv5 required, and its expected outputs.
  ArtifactSpec m33 = standardSpec(Kernels::kStatic);
  m33.arch = KILN_ARCH_ARM;
  m33.abi = KILN_ABI_EABI_HARD;
  m33.cpuFeatures = KILN_ARM_DSP | KILN_ARM_FPV5_SP;
  writeFile(dir + "/m33.kiln", writeArtifact(m33));
  MainResult want = referenceMain(sampleX(), sampleY());
  std::vector<uint8_t> expected(33 * sizeof(float));
  std::memcpy(expected.data(), want.out.data(), 64);
  std::memcpy(expected.data() + 64, &want.total, 4);
  std::memcpy(expected.data() + 68, want.twice.data(), 64);
  writeFile(dir + "/m33_expected.bin", expected);
  return 0;
}
