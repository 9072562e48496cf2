// The embedded ELF is what the runtime's loader accepts: for each Linux target, only RELATIVE
// relocations, exactly one exported dynamic symbol (the query function), nothing undefined,
// no DT_NEEDED/TEXTREL, no segment both writable and executable; and the same kernels give
// the same bytes (reproducible builds).
#include <gtest/gtest.h>

#include <sstream>

#include "test_support.h"

namespace kiln::codegen {
namespace {

using testing::f32;

std::vector<KernelDesc> sampleKernels() {
  KernelDesc gemm;
  gemm.kind = KernelKind::MatMul;
  gemm.inputs = {f32({4, 64}), f32({64, 32}), f32({32})};
  gemm.output = f32({4, 32});
  gemm.epilogue.act = Activation::Relu;
  KernelDesc softmax;
  softmax.kind = KernelKind::Softmax;
  softmax.axis = 1;
  softmax.inputs = {f32({4, 32})};
  softmax.output = f32({4, 32});
  KernelDesc pool;
  pool.kind = KernelKind::Pool;
  pool.kernelShape = {3, 3};
  pool.pads = {1, 1, 1, 1};
  pool.inputs = {f32({1, 8, 16, 16})};
  pool.output = f32({1, 8, 16, 16});
  KernelDesc conv;
  conv.kind = KernelKind::Conv;
  conv.inputs = {f32({1, 8, 14, 14}), f32({8, 8, 3, 3}), f32({8})};
  conv.output = f32({1, 8, 14, 14});
  conv.pads = {1, 1, 1, 1};
  return {gemm, softmax, pool, conv};
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

class EmbeddedElf : public ::testing::TestWithParam<const char*> {};

TEST_P(EmbeddedElf, IsLoaderFriendly) {
  TargetRequest request;
  request.name = GetParam();
  TargetConfig target = resolveTarget(request);
  CodegenResult result = generateKernels(sampleKernels(), target);
  ASSERT_EQ(result.output, KernelOutput::SharedElf);
  EXPECT_EQ(result.kernelCount, 4u);
  EXPECT_LT(result.bytes.size(), 64u * 1024);
  testing::TempFile file(result.bytes, ".so");
  const std::string& path = file.path();

  // Relocations: RELATIVE only (the kernel table and the library struct).
  int relocations = 0;
  for (const std::string& line : lines(testing::runTool("llvm-readelf", "-r -W " + path))) {
    if (line.find("R_") == std::string::npos) continue;
    ++relocations;
    EXPECT_NE(line.find("_RELATIVE"), std::string::npos) << line;
  }
  EXPECT_GE(relocations, 3);

  // Dynamic symbols: the query function and nothing else, nothing undefined.
  int defined = 0;
  for (const std::string& line : lines(testing::runTool("llvm-readelf", "--dyn-syms -W " + path))) {
    std::istringstream fields(line);
    std::vector<std::string> f;
    for (std::string s; fields >> s;) f.push_back(s);
    if (f.size() < 8 || f[0].back() != ':' || f[0] == "0:") continue;
    EXPECT_NE(f[6], "UND") << line;
    if (f[4] == "GLOBAL") {
      ++defined;
      EXPECT_EQ(f[7], KILN_KERNEL_QUERY_SYMBOL) << line;
    }
  }
  EXPECT_EQ(defined, 1);

  std::string dynamic = testing::runTool("llvm-readelf", "-d -W " + path);
  EXPECT_EQ(dynamic.find("NEEDED"), std::string::npos) << dynamic;
  EXPECT_EQ(dynamic.find("TEXTREL"), std::string::npos) << dynamic;
  EXPECT_EQ(dynamic.find("RELR"), std::string::npos) << dynamic;
  EXPECT_EQ(dynamic.find("JMPREL"), std::string::npos) << dynamic;
  EXPECT_EQ(dynamic.find("INIT"), std::string::npos) << dynamic;

  // Segments: never writable and executable at once.
  for (const std::string& line : lines(testing::runTool("llvm-readelf", "-l -W " + path))) {
    if (line.find("LOAD") == std::string::npos) continue;
    bool writable = line.find(" RW") != std::string::npos;
    bool executable =
        line.find(" R E") != std::string::npos || line.find("RWE") != std::string::npos;
    EXPECT_FALSE(writable && executable) << line;
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, EmbeddedElf,
                         ::testing::Values("host", "x86_64", "x86_64-v4", "aarch64", "riscv64"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

TEST(EmbeddedElf, SameInputSameBytes) {
  TargetRequest request;
  request.name = "x86_64-v3";
  TargetConfig target = resolveTarget(request);
  CodegenResult first = generateKernels(sampleKernels(), target);
  CodegenResult second = generateKernels(sampleKernels(), target);
  EXPECT_EQ(first.bytes, second.bytes);
  request.name = "cortex-m33";
  TargetConfig mcu = resolveTarget(request);
  EXPECT_EQ(generateKernels(sampleKernels(), mcu).bytes,
            generateKernels(sampleKernels(), mcu).bytes);
}

}  // namespace
}  // namespace kiln::codegen
