// Tests for the driver on the shipped digits model (examples/digits/model.onnx): reproducible
// bytes, --strip, --external-constants, and the user errors the driver itself reports.
#include "kiln/driver/compile.h"

#include <gtest/gtest.h>

#include <cstring>

#include "kiln/format/artifact.h"
#include "kiln/support/diagnostics.h"

namespace kiln::driver {
namespace {

std::string digitsModel() { return std::string(KILN_SOURCE_DIR) + "/examples/digits/model.onnx"; }

CompileOptions digitsOptions() {
  CompileOptions options;
  options.modelPath = digitsModel();
  options.target.name = "x86_64";
  return options;
}

const kiln_section* findSection(const std::vector<uint8_t>& bytes, uint32_t kind) {
  kiln_header header;
  std::memcpy(&header, bytes.data(), sizeof header);
  for (uint32_t i = 0; i < header.section_count; ++i) {
    auto* s = reinterpret_cast<const kiln_section*>(bytes.data() + header.section_table_offset +
                                                    i * sizeof(kiln_section));
    if (s->kind == kind) return s;
  }
  return nullptr;
}

std::string errorOf(const CompileOptions& options) {
  try {
    compileModel(options);
  } catch (const CompileError& e) {
    return e.what();
  }
  return "";
}

TEST(Driver, SameInputSameBytes) {
  CompiledModel a = compileModel(digitsOptions());
  CompiledModel b = compileModel(digitsOptions());
  ASSERT_FALSE(a.artifact.empty());
  EXPECT_EQ(a.artifact, b.artifact);
  EXPECT_EQ(a.summary.artifactBytes, a.artifact.size());
  EXPECT_GT(a.summary.dispatchCount, 0u);
  EXPECT_NE(findSection(a.artifact, KILN_SECTION_DEBUG), nullptr);
  // The model has 7666 f32 parameters: at least that many bytes x4 of constants, 64-byte aligned.
  const kiln_section* constants = findSection(a.artifact, KILN_SECTION_CONSTANTS);
  ASSERT_NE(constants, nullptr);
  EXPECT_GE(constants->size, 7666u * 4);
  EXPECT_EQ(constants->offset % 64, 0u);
}

TEST(Driver, StripDropsDebug) {
  CompileOptions options = digitsOptions();
  options.strip = true;
  CompiledModel stripped = compileModel(options);
  EXPECT_EQ(findSection(stripped.artifact, KILN_SECTION_DEBUG), nullptr);
  EXPECT_LT(stripped.artifact.size(), compileModel(digitsOptions()).artifact.size());
}

TEST(Driver, ExternalConstantsWritesTwoFiles) {
  std::string dir = testing::TempDir();
  CompileOptions options = digitsOptions();
  options.outputPath = dir + "/digits_ext.kiln";
  options.externalConstantsPath = dir + "/digits_ext.bin";
  CompileSummary summary = compile(options);
  EXPECT_EQ(std::filesystem::file_size(options.externalConstantsPath), summary.constantsBytes);
  EXPECT_EQ(std::filesystem::file_size(options.outputPath), summary.artifactBytes);
  CompiledModel embedded = compileModel(digitsOptions());
  EXPECT_LT(summary.artifactBytes + summary.constantsBytes / 2, embedded.artifact.size());
}

TEST(Driver, Errors) {
  CompileOptions missing = digitsOptions();
  missing.modelPath = "/nonexistent/model.onnx";
  EXPECT_EQ(errorOf(missing), "cannot open '/nonexistent/model.onnx': No such file or directory");
  // A .tflite file goes to the TFLite importer, which names the file in its errors.
  CompileOptions tflite = digitsOptions();
  tflite.modelPath = "/nonexistent/model.tflite";
  EXPECT_EQ(errorOf(tflite), "cannot open '/nonexistent/model.tflite': No such file or directory");
  tflite.modelPath = std::string(KILN_TESTDATA_DIR) +
                     "/tflite/models/mlperf-tiny/anomaly_detection__ad01_fp32.tflite";
  if (std::filesystem::exists(tflite.modelPath)) {
    CompiledModel model = compileModel(tflite);
    EXPECT_GT(model.artifact.size(), 1000000u);  // 1 MB of float weights
  }
  CompileOptions badTarget = digitsOptions();
  badTarget.target.name = "pdp11";
  EXPECT_NE(errorOf(badTarget).find("pdp11"), std::string::npos);
  CompileOptions overwrite = digitsOptions();
  overwrite.outputPath = overwrite.modelPath;
  try {
    compile(overwrite);
    FAIL();
  } catch (const CompileError& e) {
    EXPECT_EQ(std::string(e.what()),
              "the output would overwrite the model '" + digitsModel() + "'");
  }
  CompileOptions noOutput = digitsOptions();
  try {
    compile(noOutput);
    FAIL();
  } catch (const CompileError& e) {
    EXPECT_STREQ(e.what(), "no output file given (-o OUT.kiln)");
  }
}

}  // namespace
}  // namespace kiln::driver
