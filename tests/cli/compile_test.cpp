// `kiln compile` end to end on the shipped digits model (examples/digits): the artifact runs
// and matches PyTorch's logits, --strip, --external-constants, reproducible bytes, a
// microcontroller target, and --print-ir-after-all.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "cli_runner.h"
#include "npy.h"

namespace kiln::clitest {
namespace {

std::string example(const std::string& file) {
  return std::string(KILN_SOURCE_DIR) + "/examples/digits/" + file;
}

class KilnCompile : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(makeTempDir("kiln-cli-compile-"));
    CliResult r = runKiln({"compile", example("model.onnx"), "-o", *dir_ + "/digits.kiln"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
  }
  static std::string path(const std::string& name) { return *dir_ + "/" + name; }
  static std::string* dir_;
};
std::string* KilnCompile::dir_ = nullptr;

TEST_F(KilnCompile, DigitsMatchPyTorch) {
  for (int digit = 0; digit < 10; ++digit) {
    std::string k = std::to_string(digit);
    CliResult r = runKiln({"run", path("digits.kiln"),
                           "--input=1x1x8x8xf32=@" + example("digit_" + k + ".npy"),
                           "--expected_output=@" + example("digit_" + k + "_logits.npy"),
                           "--tolerance=1e-4,1e-4", "--output=@" + path("logits.npy")});
    EXPECT_EQ(r.exitCode, 0) << "digit " << k << ": " << r.err;
  }
}

TEST_F(KilnCompile, SameFlagsSameBytes) {
  CliResult r = runKiln({"compile", example("model.onnx"), "-o", path("again.kiln")});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(cli::readFileBytes(path("again.kiln")), cli::readFileBytes(path("digits.kiln")));
}

TEST_F(KilnCompile, StripRemovesDebug) {
  CliResult r = runKiln({"compile", example("model.onnx"), "-o", path("stripped.kiln"), "--strip"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  CliResult dump = runKiln({"dump", path("stripped.kiln")});
  EXPECT_EQ(dump.out.find("DEBUG"), std::string::npos);
  CliResult full = runKiln({"dump", path("digits.kiln")});
  EXPECT_NE(full.out.find("  DEBUG "), std::string::npos);
  EXPECT_NE(full.out.find("<- /features/features.0/Conv (Conv)"), std::string::npos) << full.out;
  EXPECT_LT(std::filesystem::file_size(path("stripped.kiln")),
            std::filesystem::file_size(path("digits.kiln")));
}

TEST_F(KilnCompile, ExternalConstants) {
  CliResult r = runKiln({"compile", example("model.onnx"), "-o", path("ext.kiln"),
                         "--external-constants=" + path("ext.bin")});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  // 7666 f32 parameters, each tensor 64-byte aligned.
  EXPECT_GE(std::filesystem::file_size(path("ext.bin")), 7666u * 4);
  EXPECT_LT(std::filesystem::file_size(path("ext.kiln")) + 7666 * 4,
            std::filesystem::file_size(path("digits.kiln")) + 1024);
  CliResult run = runKiln({"run", path("ext.kiln"), "--constants=" + path("ext.bin"),
                           "--input=@" + example("digit_3.npy"),
                           "--expected_output=@" + example("digit_3_logits.npy"),
                           "--tolerance=1e-4,1e-4", "--output=@" + path("l.npy")});
  EXPECT_EQ(run.exitCode, 0) << run.err;
  CliResult missing = runKiln({"run", path("ext.kiln"), "--input=@" + example("digit_3.npy")});
  EXPECT_EQ(missing.exitCode, 1);
  EXPECT_NE(missing.err.find("external constants"), std::string::npos) << missing.err;
}

TEST_F(KilnCompile, MicrocontrollerTargetWritesKernelObject) {
  CliResult r = runKiln({"compile", example("model.onnx"), "-o", path("m33.kiln"),
                         "--target=cortex-m33"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.out, path("m33.kernels.o") + ": kernel object for the firmware to link (library "
                                            "'kiln_kernels')\n");
  std::vector<uint8_t> object = cli::readFileBytes(path("m33.kernels.o"));
  ASSERT_GT(object.size(), 64u);
  EXPECT_EQ(object[0], 0x7f);  // ELF, 32-bit, little-endian, relocatable, EM_ARM (40)
  EXPECT_EQ(object[4], 1);
  EXPECT_EQ(object[16], 1);
  EXPECT_EQ(object[18], 40);
  CliResult dump = runKiln({"dump", path("m33.kiln")});
  EXPECT_NE(dump.out.find("target: arm (thumb), abi eabihf (hard float)"), std::string::npos)
      << dump.out;
  EXPECT_NE(dump.out.find("static library 'kiln_kernels'"), std::string::npos);
}

// `kiln dump --kernels-elf=FILE` writes the KERNELS section byte for byte: an ELF shared
// object (ET_DYN) where `kiln dump --json` says the section is. A microcontroller artifact
// names a static library instead, and the error says so.
TEST_F(KilnCompile, DumpWritesTheKernelElf) {
  std::string elf = path("kernels.so");
  CliResult r = runKiln({"dump", path("digits.kiln"), "--kernels-elf=" + elf, "--json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.err.find("-byte ELF shared object) to '" + elf + "'"), std::string::npos) << r.err;
  size_t at = r.out.find("{\"name\":\"KERNELS\",\"offset\":");
  ASSERT_NE(at, std::string::npos) << r.out;
  char* end = nullptr;
  size_t offset = std::strtoull(r.out.c_str() + r.out.find(':', r.out.find("offset", at)) + 1,
                                &end, 10);
  size_t bytes = std::strtoull(r.out.c_str() + r.out.find(':', r.out.find("bytes", at)) + 1,
                               &end, 10);
  std::vector<uint8_t> artifact = cli::readFileBytes(path("digits.kiln"));
  std::vector<uint8_t> written = cli::readFileBytes(elf);
  ASSERT_EQ(written.size(), bytes);
  ASSERT_LE(offset + bytes, artifact.size());
  EXPECT_TRUE(std::equal(written.begin(), written.end(), artifact.begin() + long(offset)));
  ASSERT_GT(written.size(), 64u);
  EXPECT_EQ(written[0], 0x7f);
  EXPECT_EQ(std::string(written.begin() + 1, written.begin() + 4), "ELF");
  EXPECT_EQ(written[16], 3);  // e_type ET_DYN: the runtime maps a shared object

  CliResult compiled = runKiln({"compile", example("model.onnx"), "-o", path("m33-dump.kiln"),
                                "--target=cortex-m33"});
  ASSERT_EQ(compiled.exitCode, 0) << compiled.err;
  CliResult refused = runKiln({"dump", path("m33-dump.kiln"), "--kernels-elf=" + path("m.so")});
  EXPECT_EQ(refused.exitCode, 1);
  EXPECT_NE(refused.err.find("kiln: error: --kernels-elf: '" + path("m33-dump.kiln") +
                             "' embeds no kernel ELF: its kernels are the static library "
                             "'kiln_kernels', which the firmware links: disassemble the "
                             "kernel object written beside the artifact"),
            std::string::npos) << refused.err;
  EXPECT_FALSE(std::filesystem::exists(path("m.so")));
  CliResult unwritable = runKiln({"dump", path("digits.kiln"), "--kernels-elf=/nonexistent/k.so"});
  EXPECT_EQ(unwritable.exitCode, 1);
  EXPECT_NE(unwritable.err.find("cannot write '/nonexistent/k.so'"), std::string::npos)
      << unwritable.err;
}

TEST_F(KilnCompile, RawTargetSettings) {
  struct Case {
    std::vector<std::string> flags;
    std::string target;
  } cases[] = {
      {{"--target-triple=aarch64-unknown-linux-gnu"},
       "target: aarch64, abi lp64, required cpu features: neon\n"},
      {{"--target=x86_64"}, "target: x86_64, abi lp64, required cpu features: sse4.2\n"},
      {{"--target=x86_64", "--target-features=+avx2,+fma"},
       "target: x86_64, abi lp64, required cpu features: sse4.2 avx avx2 fma\n"},
      {{"--target=x86_64", "--target-cpu=haswell"},
       "target: x86_64, abi lp64, required cpu features: sse4.2 avx avx2 fma f16c\n"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"compile", example("model.onnx"), "-o", path("raw.kiln")};
    args.insert(args.end(), c.flags.begin(), c.flags.end());
    CliResult r = runKiln(args);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    CliResult dump = runKiln({"dump", path("raw.kiln")});
    EXPECT_NE(dump.out.find(c.target), std::string::npos) << c.flags[0] << "\n" << dump.out;
  }
}

TEST_F(KilnCompile, PrintIrAfterAll) {
  CliResult r = runKiln({"compile", example("model.onnx"), "-o", path("ir.kiln"),
                         "--print-ir-after-all"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.err.find("graph @"), std::string::npos);
  EXPECT_NE(r.err.find("input %image : f32[1,1,8,8]"), std::string::npos);
}

}  // namespace
}  // namespace kiln::clitest
