// Fused epilogues and chains: kernels whose KernelDesc carries a fused elementwise chain
// (per-channel scale/shift, residual operand, activation) are generated for the host, run
// with several workgroup splits and compared with C++ references computed here; then small IR
// graphs go through the real pass pipeline with and without fusion and must agree.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>

#include "kiln/codegen/dispatch_lowering.h"
#include "kiln/ir/parser.h"
#include "kiln/passes/pipeline.h"
#include "test_support.h"

namespace kiln::codegen {
namespace {

using testing::expectClose;
using testing::f32;
using testing::product;
using testing::randomFloats;
using testing::runKernel;

// chain: clip(result * scale[c] + residual, 0, 6) over kernel inputs `scale` and `residual`.
ElementwiseExpr scaleResidualClip(int32_t scale, int32_t residual) {
  ElementwiseExpr e;
  ExprNode result;
  result.op = ExprOp::Result;
  e.nodes.push_back(result);
  int32_t s = e.addInput(scale, ElemType::F32);
  int32_t m = e.addBinary(ExprOp::Mul, 0, s);
  int32_t r = e.addInput(residual, ElemType::F32);
  e.addUnary(ExprOp::Clip, e.addBinary(ExprOp::Add, m, r), 0.0, 6.0);
  return e;
}

// chain: sigmoid(result) + residual (Sigmoid is a polynomial: the tiled conv falls back to the
// row pass for it).
ElementwiseExpr sigmoidResidual(int32_t residual) {
  ElementwiseExpr e;
  ExprNode result;
  result.op = ExprOp::Result;
  e.nodes.push_back(result);
  int32_t s = e.addUnary(ExprOp::Sigmoid, 0);
  e.addBinary(ExprOp::Add, s, e.addInput(residual, ElemType::F32));
  return e;
}

float clip6(float v) { return std::min(6.0f, std::max(0.0f, v)); }

// Conv [1,C,H,W] (3x3, pads 1, stride s) + bias, then the scale/residual/clip chain (or,
// with `sigmoid`, sigmoid(conv) + residual).
void checkConvEpilogue(int64_t C, int64_t OC, int64_t H, int64_t W, int64_t stride,
                       bool sigmoid = false) {
  const int64_t OH = (H + 2 - 3) / stride + 1, OW = (W + 2 - 3) / stride + 1;
  KernelDesc d;
  d.kind = KernelKind::Conv;
  d.name = "conv_chain";
  d.inputs = {f32({1, C, H, W}), f32({OC, C, 3, 3}), f32({OC}), f32({OC, 1, 1}),
              f32({1, OC, OH, OW})};
  d.output = f32({1, OC, OH, OW});
  d.strides = {stride, stride};
  d.pads = {1, 1, 1, 1};
  d.epilogue.chain = sigmoid ? sigmoidResidual(4) : scaleResidualClip(3, 4);
  d.epilogue.inputCount = 2;
  d.epilogue.shape = d.output.shape;
  auto x = randomFloats(C * H * W, 1), w = randomFloats(OC * C * 9, 2), b = randomFloats(OC, 3);
  auto scale = randomFloats(OC, 4, 0.5f, 4.0f), res = randomFloats(OC * OH * OW, 5, -1, 3);
  std::vector<float> want(OC * OH * OW);
  for (int64_t o = 0; o < OC; ++o)
    for (int64_t i = 0; i < OH; ++i)
      for (int64_t j = 0; j < OW; ++j) {
        double acc = b[o];
        for (int64_t c = 0; c < C; ++c)
          for (int64_t ki = 0; ki < 3; ++ki)
            for (int64_t kj = 0; kj < 3; ++kj) {
              int64_t ih = i * stride - 1 + ki, iw = j * stride - 1 + kj;
              if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
              acc += double(x[(c * H + ih) * W + iw]) * w[((o * C + c) * 3 + ki) * 3 + kj];
            }
        size_t at = size_t((o * OH + i) * OW + j);
        want[at] = sigmoid ? float(1 / (1 + std::exp(-acc))) + res[at]
                           : clip6(float(acc) * scale[o] + res[at]);
      }
  expectClose(runKernel(d, {x, w, b, scale, res}, {1, 3, 1000}), want);
}

TEST(FusedEpilogue, TiledConvScaleResidualClip) {
  // On the accumulator vectors: wide tiles, narrow tiles and masked edge tiles (37 columns),
  // stride 1 and 2, and rows narrower than one vector.
  checkConvEpilogue(3, 8, 6, 37, 1);
  checkConvEpilogue(2, 4, 5, 29, 2);
  checkConvEpilogue(2, 6, 3, 5, 1);
}

TEST(FusedEpilogue, TiledConvPolynomialChainRunsOnRows) { checkConvEpilogue(3, 8, 4, 21, 1, true); }

TEST(FusedEpilogue, PlainConvScaleResidualClip) {
  // Stride 3 takes the plain (untiled) convolution.
  checkConvEpilogue(2, 3, 7, 11, 3);
}

TEST(FusedEpilogue, GemmBiasActivationThenChain) {
  // relu(A x B^T + c) then the chain: the built-in activation runs first.
  const int64_t M = 4, K = 5, N = 7;
  KernelDesc d;
  d.kind = KernelKind::MatMul;
  d.inputs = {f32({M, K}), f32({N, K}), f32({N}), f32({N}), f32({M, N})};
  d.output = f32({M, N});
  d.transB = true;
  d.epilogue.act = Activation::Relu;
  d.epilogue.chain = scaleResidualClip(3, 4);
  d.epilogue.inputCount = 2;
  d.epilogue.shape = d.output.shape;
  auto a = randomFloats(M * K, 6), b = randomFloats(N * K, 7), c = randomFloats(N, 8);
  auto scale = randomFloats(N, 9, 0.5f, 4.0f), res = randomFloats(M * N, 10, -1, 3);
  std::vector<float> want(M * N);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double acc = c[n];
      for (int64_t k = 0; k < K; ++k) acc += double(a[m * K + k]) * b[n * K + k];
      want[m * N + n] = clip6(std::max(0.0f, float(acc)) * scale[n] + res[m * N + n]);
    }
  expectClose(runKernel(d, {a, b, c, scale, res}, {1, 2, 9}), want);
}

TEST(FusedEpilogue, PoolsApplyTheChainPerOutputElement) {
  for (PoolKind kind : {PoolKind::Max, PoolKind::Average}) {
    const int64_t C = 3, H = 6, W = 10, OH = 3, OW = 5;
    KernelDesc d;
    d.kind = KernelKind::Pool;
    d.poolKind = kind;
    d.kernelShape = {2, 2};
    d.strides = {2, 2};
    d.inputs = {f32({1, C, H, W}), f32({C, 1, 1}), f32({1, 1, OH, OW})};
    d.output = f32({1, C, OH, OW});
    d.epilogue.chain = scaleResidualClip(1, 2);
    d.epilogue.inputCount = 2;
    d.epilogue.shape = d.output.shape;
    auto x = randomFloats(C * H * W, 11, -2, 2), scale = randomFloats(C, 12, 0.5f, 4.0f);
    auto res = randomFloats(OH * OW, 13, -1, 3);
    std::vector<float> want;
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < OH; ++i)
        for (int64_t j = 0; j < OW; ++j) {
          float taps[4] = {x[(c * H + 2 * i) * W + 2 * j], x[(c * H + 2 * i) * W + 2 * j + 1],
                           x[(c * H + 2 * i + 1) * W + 2 * j], x[(c * H + 2 * i + 1) * W + 2 * j + 1]};
          float v = kind == PoolKind::Max
                        ? std::max(std::max(taps[0], taps[1]), std::max(taps[2], taps[3]))
                        : (taps[0] + taps[1] + taps[2] + taps[3]) / 4;
          want.push_back(clip6(v * scale[c] + res[i * OW + j]));
        }
    expectClose(runKernel(d, {x, scale, res}, {1, 2, 7}), want);
  }
}

// ---- Through the pass pipeline: fused and unfused dispatch graphs agree ---------------------

// Compiles `text` with or without fusion, runs every dispatch in order (each value in its
// own buffer) and returns output 0 and the dispatch count.
std::pair<std::vector<float>, size_t> runGraph(const std::string& text,
                                               const std::map<std::string, std::vector<float>>& in,
                                               bool fusion) {
  passes::PipelineOptions options;
  options.fusion = fusion;
  ir::DispatchGraph g = passes::compileGraph(ir::parseGraph(text), options);
  CodegenResult r = generateKernels(g, testing::hostTarget());
  testing::LoadedLibrary lib(r.bytes);
  std::map<const ir::Value*, std::vector<uint8_t>> memory;
  for (const ir::IoTensor& input : g.inputs) {
    const std::vector<float>& v = in.at(input.name);
    memory[input.value].resize(v.size() * 4);
    std::memcpy(memory[input.value].data(), v.data(), v.size() * 4);
  }
  for (const ir::ConstantEntry& c : g.constants) memory[c.value] = c.value->constantBytes();
  for (const ir::Dispatch& d : g.dispatches) {
    std::vector<void*> bindings;
    for (const ir::Binding& b : d.bindings) {
      std::vector<uint8_t>& bytes = memory[g.storageOf(b.value)];
      if (bytes.empty()) bytes.resize(std::max<uint64_t>(b.value->type().byteSize(), 1));
      bindings.push_back(bytes.data());
    }
    lib.run(r.kernelIndex[d.id], bindings, 3);
  }
  const ir::Value* out = g.storageOf(g.outputs[0].value);
  std::vector<float> result(g.outputs[0].type.numElements());
  std::memcpy(result.data(), memory.at(out).data(), result.size() * 4);
  return {result, g.dispatches.size()};
}

void expectFusedAgrees(const std::string& text, const std::map<std::string, std::vector<float>>& in,
                       size_t fusedDispatches, size_t unfusedDispatches) {
  auto [fused, fusedCount] = runGraph(text, in, true);
  auto [unfused, unfusedCount] = runGraph(text, in, false);
  EXPECT_EQ(fusedCount, fusedDispatches);
  EXPECT_EQ(unfusedCount, unfusedDispatches);
  expectClose(fused, unfused, 1e-6f, 1e-6f);
}

TEST(FusedEpilogue, Conv1dChainBroadcastsInTheIrShape) {
  // The 1-D conv is generated as 2-D (H = 1); the [3,1] shift still broadcasts per channel.
  expectFusedAgrees(R"(graph @g {
  input %x : f32[1,2,9]
  const %w : f32[3,2,3] = [0.5, -1.0, 0.25, 1.0, 0.0, 2.0, -0.5, 0.5, 1.0, 0.125, 0.75, -2.0, 1.5, -0.25, 0.5, 1.0, 1.0, -1.0]
  const %shift : f32[3,1] = [0.5, -1.0, 2.0]
  %c = Conv(%x, %w) {pads = [1, 1]} : f32[1,3,9]
  %a = Add(%c, %shift) : f32[1,3,9]
  %l = LeakyRelu(%a) {alpha = 0.1} : f32[1,3,9]
  output "y" = %l
})",
                    {{"x", randomFloats(18, 21, -2, 2)}}, 1, 3);
}

TEST(FusedEpilogue, ResidualBlockAndGemmChain) {
  expectFusedAgrees(R"(graph @g {
  input %x : f32[1,4,5,12]
  const %w : f32[4,4,3,3] = splat(0.0625)
  const %w2 : f32[4,4,1,1] = [1.0, -1.0, 0.5, 0.0, 0.25, 1.0, -0.5, 2.0, 0.0, 0.5, 1.0, -1.0, 1.5, 0.0, 0.5, 0.25]
  const %scale : f32[4,1,1] = [2.0, 0.5, -1.0, 1.0]
  const %fc : f32[3,120] = splat(0.01)
  %c1 = Conv(%x, %w) {pads = [1, 1, 1, 1]} : f32[1,4,5,12]
  %m = Mul(%c1, %scale) : f32[1,4,5,12]
  %r = Relu(%m) : f32[1,4,5,12]
  %c2 = Conv(%r, %w2) : f32[1,4,5,12]
  %s = Add(%x, %c2) : f32[1,4,5,12]
  %h = HardSwish(%s) : f32[1,4,5,12]
  %p = AveragePool(%h) {kernel_shape = [1, 2], strides = [1, 2]} : f32[1,4,5,6]
  %t = Tanh(%p) : f32[1,4,5,6]
  %f = Flatten(%t) : f32[1,120]
  %g = Gemm(%f, %fc) {transB = 1} : f32[1,3]
  %sg = Sigmoid(%g) : f32[1,3]
  output "y" = %sg
})",
                    {{"x", randomFloats(240, 22, -2, 2)}}, 4, 10);
}

TEST(FusedEpilogue, MlpHeadInOneKernel) {
  // Gemm -> bias -> Relu -> Gemm (transposed weights, alpha, bias) as one dispatch, with a
  // hand-computed reference.
  std::string text = R"(graph @g {
  input %x : f32[3,4]
  const %w1 : f32[4,5] = [0.5, -1.0, 0.25, 1.0, 0.0, 2.0, -0.5, 0.5, 1.0, 0.125, 0.75, -2.0, 1.5, -0.25, 0.5, 1.0, 1.0, -1.0, 0.5, 0.25]
  const %b1 : f32[5] = [0.1, -0.2, 0.3, -0.4, 0.5]
  const %w2 : f32[2,5] = [1.0, 0.5, -1.0, 2.0, 0.25, -0.5, 1.5, 0.75, -0.25, 1.0]
  const %b2 : f32[2] = [0.5, -0.5]
  %h = MatMul(%x, %w1) : f32[3,5]
  %a = Add(%h, %b1) : f32[3,5]
  %r = Relu(%a) : f32[3,5]
  %y = Gemm(%r, %w2, %b2) {alpha = 0.5, transB = 1} : f32[3,2]
  output "y" = %y
})";
  std::vector<float> x = randomFloats(12, 31, -2, 2);
  float w1[4][5] = {{0.5f, -1.0f, 0.25f, 1.0f, 0.0f}, {2.0f, -0.5f, 0.5f, 1.0f, 0.125f},
                    {0.75f, -2.0f, 1.5f, -0.25f, 0.5f}, {1.0f, 1.0f, -1.0f, 0.5f, 0.25f}};
  float b1[5] = {0.1f, -0.2f, 0.3f, -0.4f, 0.5f};
  float w2[2][5] = {{1.0f, 0.5f, -1.0f, 2.0f, 0.25f}, {-0.5f, 1.5f, 0.75f, -0.25f, 1.0f}};
  float b2[2] = {0.5f, -0.5f};
  std::vector<float> want;
  for (int m = 0; m < 3; ++m)
    for (int n = 0; n < 2; ++n) {
      double acc = 0;
      for (int k = 0; k < 5; ++k) {
        double h = b1[k];
        for (int i = 0; i < 4; ++i) h += double(x[m * 4 + i]) * w1[i][k];
        acc += std::max(h, 0.0) * w2[n][k];
      }
      want.push_back(float(0.5 * acc + b2[n]));
    }
  auto [fused, count] = runGraph(text, {{"x", x}}, true);
  EXPECT_EQ(count, 1u);
  expectClose(fused, want);
  expectFusedAgrees(text, {{"x", x}}, 1, 4);
}

TEST(FusedEpilogue, ElementwiseChainIsOneLoop) {
  expectFusedAgrees(R"(graph @g {
  input %x : f32[2,33]
  input %y : f32[33]
  const %k : f32[] = [1.5]
  %a = Sub(%x, %y) : f32[2,33]
  %m = Mul(%a, %k) : f32[2,33]
  %g = Gelu(%m) : f32[2,33]
  %c = Clip(%g) : f32[2,33]
  %n = Neg(%c) : f32[2,33]
  output "n" = %n
})",
                    {{"x", randomFloats(66, 23, -3, 3)}, {"y", randomFloats(33, 24)}}, 1, 5);
}

}  // namespace
}  // namespace kiln::codegen
