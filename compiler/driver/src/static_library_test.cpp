// Tests for --output-format=static-lib on the shipped digits model: the object holds the
// kernels, the library struct and the artifact bytes under the chosen prefix; the header's
// numbers add up and match the compiled model; --external-constants=FILE.o puts the weights in
// section .kiln_weights; and every user error of the option has its message.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>

#include <unistd.h>

#include "kiln/driver/compile.h"
#include "kiln/support/diagnostics.h"

namespace kiln::driver {
namespace {

namespace fs = std::filesystem;

std::string digitsModel() { return std::string(KILN_SOURCE_DIR) + "/examples/digits/model.onnx"; }

// One scratch directory per test process, removed at exit.
struct ScratchDir {
  fs::path path =
      fs::temp_directory_path() / ("kiln_static_lib_test_" + std::to_string(getpid()));
  ~ScratchDir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
};

fs::path scratch(const std::string& name) {
  static ScratchDir dir;
  fs::create_directories(dir.path);
  return dir.path / name;
}

std::vector<uint8_t> readBytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string readText(const fs::path& path) {
  std::vector<uint8_t> bytes = readBytes(path);
  return std::string(bytes.begin(), bytes.end());
}

bool contains(const std::vector<uint8_t>& haystack, const std::vector<uint8_t>& needle) {
  return std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end()) !=
         haystack.end();
}

bool contains(const std::vector<uint8_t>& haystack, const std::string& needle) {
  return contains(haystack, std::vector<uint8_t>(needle.begin(), needle.end()));
}

// "#define PREFIX_NAME 123u" lines of a header.
std::map<std::string, uint64_t> defines(const std::string& header, const std::string& upper) {
  std::map<std::string, uint64_t> values;
  std::regex line("#define " + upper + "_(\\w+) (\\d+)u");
  for (std::sregex_iterator it(header.begin(), header.end(), line), end; it != end; ++it)
    values[(*it)[1].str()] = std::stoull((*it)[2].str());
  return values;
}

CompileOptions staticLib(const std::string& target, const fs::path& output) {
  CompileOptions options;
  options.modelPath = digitsModel();
  options.outputPath = output;
  options.target.name = target;
  options.outputFormat = OutputFormat::StaticLib;
  return options;
}

std::string errorOf(const CompileOptions& options) {
  try {
    compile(options);
  } catch (const CompileError& e) {
    return e.what();
  }
  return "";
}

TEST(StaticLib, ObjectHoldsKernelsAndArtifactUnderThePrefix) {
  fs::path out = scratch("digits-model");
  CompileOptions options = staticLib("cortex-m33", out);
  CompileSummary summary = compile(options);
  EXPECT_EQ(summary.kernelObjectPath, scratch("digits-model.o"));
  EXPECT_EQ(summary.headerPath, scratch("digits-model.h"));
  EXPECT_EQ(summary.libraryName, "digits_model_kernels");

  std::vector<uint8_t> object = readBytes(summary.kernelObjectPath);
  ASSERT_GT(object.size(), 52u);
  EXPECT_EQ(object[4], 1);    // ELFCLASS32
  EXPECT_EQ(object[18], 40);  // EM_ARM
  EXPECT_EQ(object[16], 1);   // ET_REL
  EXPECT_TRUE(contains(object, std::string("digits_model_kernels")));
  EXPECT_TRUE(contains(object, std::string("digits_model_artifact")));
  // The artifact bytes are exactly those of the artifact format for the same options.
  CompileOptions artifactOptions = options;
  artifactOptions.outputFormat = OutputFormat::Artifact;
  artifactOptions.name = "digits_model";
  CompiledModel model = compileModel(artifactOptions);
  EXPECT_TRUE(contains(object, model.artifact));
  EXPECT_TRUE(contains(model.artifact, std::string("digits_model_kernels")));

  std::map<std::string, uint64_t> v = defines(readText(summary.headerPath), "DIGITS_MODEL");
  EXPECT_EQ(v["ARTIFACT_BYTES"], model.artifact.size());
  EXPECT_EQ(v["ARENA_BYTES"], model.summary.arenaBytes);
  EXPECT_EQ(v["CONSTANTS_BYTES"], model.summary.constantsBytes);
  EXPECT_EQ(v["CONSTANTS_EXTERNAL"], 0u);
  EXPECT_EQ(v["INPUT_COUNT"], 1u);
  EXPECT_EQ(v["INPUT0_BYTES"], 8u * 8u * 4u);  // image 1x1x8x8 f32
  EXPECT_EQ(v["OUTPUT0_BYTES"], 10u * 4u);     // logits 1x10 f32
  EXPECT_EQ(v["KERNEL_STACK_BYTES"], model.firmware.kernelStackBytes);
  EXPECT_GT(v["KERNEL_STACK_BYTES"], 0u);
  EXPECT_EQ(v["STACK_BYTES"], std::max(v["KERNEL_STACK_BYTES"] + v["RUNTIME_STACK_BYTES"],
                                       v["LOAD_STACK_BYTES"]));
  EXPECT_GT(v["LOAD_STACK_BYTES"], 0u);
  // Cortex-M33: the module is 168 bytes; the context 40 + 20 per dispatch + 4 per binding of
  // the largest stage, 64-byte aligned, then the arena.
  EXPECT_EQ(v["MODULE_BYTES"], 168u);
  uint64_t head = 40 + 20 * model.firmware.maxStageDispatches + 4 * model.firmware.maxStageBindings;
  EXPECT_EQ(v["CONTEXT_BYTES"], (head + 63) / 64 * 64 + v["ARENA_BYTES"]);
  EXPECT_EQ(v["RAM_BYTES"], v["MODULE_BYTES"] + v["CONTEXT_BYTES"] + v["STACK_BYTES"]);
  EXPECT_EQ(v["FLASH_CONSTANTS_BYTES"], model.summary.constantsBytes);
  EXPECT_EQ(v["FLASH_COMMANDS_BYTES"], model.artifact.size() - model.summary.constantsBytes);
  EXPECT_EQ(v["FLASH_BYTES"], v["FLASH_RUNTIME_BYTES"] + v["FLASH_KERNEL_BYTES"] +
                                  v["FLASH_CONSTANTS_BYTES"] + v["FLASH_COMMANDS_BYTES"]);
  EXPECT_NE(summary.footprint.find("flash "), std::string::npos) << summary.footprint;
  EXPECT_NE(summary.footprint.find("RAM "), std::string::npos) << summary.footprint;
}

TEST(StaticLib, ExternalWeightsObjectHasItsOwnSection) {
  CompileOptions options = staticLib("rv32imafc", scratch("ext.o"));
  options.name = "ext";
  options.externalConstantsPath = scratch("ext_weights.o");
  compile(options);
  std::vector<uint8_t> weights = readBytes(options.externalConstantsPath);
  ASSERT_GT(weights.size(), 52u);
  EXPECT_EQ(weights[18], 243);  // EM_RISCV
  EXPECT_TRUE(contains(weights, std::string(".kiln_weights")));
  EXPECT_TRUE(contains(weights, std::string("ext_constants")));
  std::string header = readText(scratch("ext.h"));
  std::map<std::string, uint64_t> v = defines(header, "EXT");
  EXPECT_EQ(v["CONSTANTS_EXTERNAL"], 1u);
  EXPECT_NE(header.find("extern const uint8_t ext_constants[EXT_CONSTANTS_BYTES];"),
            std::string::npos);
  // The weights (7.7 k parameters) are in their object, not in the artifact.
  EXPECT_GE(weights.size(), v["CONSTANTS_BYTES"]);
  EXPECT_GT(v["CONSTANTS_BYTES"], 7000u * 4u);
  EXPECT_LT(v["ARTIFACT_BYTES"], v["CONSTANTS_BYTES"]);
  EXPECT_EQ(v["FLASH_COMMANDS_BYTES"], v["ARTIFACT_BYTES"]);
}

TEST(StaticLib, PrefixFromOutputName) {
  compile(staticLib("rv32imac", scratch("2nd-model.o")));
  std::string header = readText(scratch("2nd-model.h"));
  EXPECT_NE(header.find("extern const kiln_kernel_library m_2nd_model_kernels;"),
            std::string::npos)
      << header;
}

TEST(StaticLib, UnmeasuredTargetSaysSo) {
  CompileOptions options = staticLib("", scratch("m3.o"));
  options.target.triple = "thumbv7m-none-eabi";
  options.target.cpu = "cortex-m3";
  CompileSummary summary = compile(options);
  EXPECT_NE(summary.footprint.find("runtime figures not measured on this target"),
            std::string::npos)
      << summary.footprint;
  std::string header = readText(scratch("m3.h"));
  EXPECT_NE(header.find("not measured here: largest measured figure"), std::string::npos);
  // Measured targets do not carry the remark.
  CompileSummary m7 = compile(staticLib("cortex-m7", scratch("m7.o")));
  EXPECT_EQ(m7.footprint.find("not measured"), std::string::npos) << m7.footprint;
}

TEST(StaticLib, Errors) {
  EXPECT_EQ(errorOf(staticLib("x86_64", scratch("host"))),
            "--output-format=static-lib needs a microcontroller target (cortex-m4, cortex-m33, "
            "cortex-m7, cortex-m55, rv32imac, rv32imafc); target 'x86_64' "
            "(x86_64-unknown-linux-gnu) builds an embedded ELF");
  CompileOptions badName = staticLib("cortex-m4", scratch("bad"));
  badName.name = "my-model";
  EXPECT_EQ(errorOf(badName),
            "--name 'my-model' is not a C identifier (letters, digits and '_', not starting with "
            "a digit)");
  CompileOptions clash = staticLib("cortex-m4", scratch("clash"));
  clash.externalConstantsPath = scratch("clash.o");
  EXPECT_EQ(errorOf(clash), "--external-constants '" + scratch("clash.o").string() +
                                "' would overwrite the static library's own output");
  CompileOptions kernelPath = staticLib("cortex-m4", scratch("kp"));
  kernelPath.kernelObjectPath = scratch("kp.kernels.o");
  EXPECT_EQ(errorOf(kernelPath),
            "--output-format=static-lib writes the kernels into its own object; a separate "
            "kernel object path cannot be given");
  try {
    parseOutputFormat("elf");
    ADD_FAILURE() << "no error";
  } catch (const CompileError& e) {
    EXPECT_STREQ(e.what(), "unknown --output-format 'elf' (expected artifact or static-lib)");
  }
  EXPECT_EQ(parseOutputFormat("static-lib"), OutputFormat::StaticLib);
  EXPECT_EQ(parseOutputFormat("artifact"), OutputFormat::Artifact);
}

TEST(StaticLib, TwoPrefixesTwoLibraries) {
  CompileOptions a = staticLib("cortex-m33", scratch("a.o"));
  a.name = "first";
  CompileOptions b = staticLib("cortex-m33", scratch("b.o"));
  b.name = "second";
  compile(a);
  compile(b);
  std::vector<uint8_t> objectA = readBytes(scratch("a.o")), objectB = readBytes(scratch("b.o"));
  EXPECT_TRUE(contains(objectA, std::string("first_artifact")));
  EXPECT_FALSE(contains(objectA, std::string("second_")));
  EXPECT_TRUE(contains(objectB, std::string("second_kernels")));
  EXPECT_FALSE(contains(objectB, std::string("first_")));
}

}  // namespace
}  // namespace kiln::driver
