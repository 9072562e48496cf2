// Compile-time packing of matrix products' constant B (matmul_pack.h, pack_matmul_weights.cpp):
// the column-panel order against hand-written values, the tile policy per vector unit, and
// the packer on a real dispatch graph (which constants it repacks, which it leaves alone),
// whose kernels then run on the repacked bytes against a double-precision reference.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <sstream>

#include "kiln/codegen/dispatch_lowering.h"
#include "kiln/codegen/matmul_pack.h"
#include "kiln/ir/parser.h"
#include "kiln/passes/pipeline.h"
#include "test_support.h"

namespace kiln::codegen {
namespace {

BufferDesc f32(std::vector<int64_t> shape) { return {ElemType::F32, std::move(shape)}; }

TEST(MatMulPack, PanelOrderHandChecked) {
  // op(B) 2 x 5 = [[0 1 2 3 4] [5 6 7 8 9]] in panels of 4 columns: a full panel row by row,
  // then the last column's panel (width 1).
  const std::vector<float> want = {0, 1, 2, 3, 5, 6, 7, 8, 4, 9};
  EXPECT_EQ(packMatMulPanels({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 2, 5, false, 4), want);
  // The same op(B) stored transposed ([N][K], torch's Linear).
  EXPECT_EQ(packMatMulPanels({0, 5, 1, 6, 2, 7, 3, 8, 4, 9}, 2, 5, true, 4), want);
  // Panels of 2 over 3 rows: widths 2, 2, 1.
  EXPECT_EQ(packMatMulPanels({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}, 3, 5, false, 2),
            (std::vector<float>{0, 1, 5, 6, 10, 11, 2, 3, 7, 8, 12, 13, 4, 9, 14}));
}

KernelDesc productDesc(std::vector<int64_t> a, std::vector<int64_t> b, std::vector<int64_t> y,
                       bool transB) {
  KernelDesc d;
  d.kind = KernelKind::MatMul;
  d.inputs = {f32(std::move(a)), f32(std::move(b))};
  d.output = f32(std::move(y));
  d.transB = transB;
  return d;
}

TEST(MatMulPack, TilePolicy) {
  const VectorUnit avx2{8, 16}, sse{4, 16}, avx512{16, 32};
  auto tile = [](const KernelDesc& d, VectorUnit unit) {
    MatMulPanelTile t = matMulPanelTile(d, unit);
    return std::pair<int64_t, int64_t>(t.mr, t.nr);
  };
  using Tile = std::pair<int64_t, int64_t>;
  // Batch-1 and two-row products: 4 vectors of columns; taller: 6 rows x 2 vectors.
  EXPECT_EQ(tile(productDesc({1, 64}, {64, 100}, {1, 100}, false), avx2), Tile(1, 32));
  EXPECT_EQ(tile(productDesc({2, 64}, {64, 100}, {2, 100}, false), avx2), Tile(2, 32));
  EXPECT_EQ(tile(productDesc({3, 64}, {64, 100}, {3, 100}, false), avx2), Tile(3, 16));
  EXPECT_EQ(tile(productDesc({64, 64}, {100, 64}, {64, 100}, true), avx2), Tile(6, 16));
  EXPECT_EQ(tile(productDesc({64, 64}, {100, 64}, {64, 100}, true), sse), Tile(6, 8));
  EXPECT_EQ(tile(productDesc({64, 64}, {100, 64}, {64, 100}, true), avx512), Tile(6, 32));
  // Rows counted over the batch axes; B with a leading 1 axis is still one matrix.
  EXPECT_EQ(tile(productDesc({1, 16, 64}, {1, 64, 100}, {1, 16, 100}, false), avx2), Tile(6, 16));
  // Not packed: a batch-1 Linear (dot tiles stream its rows), fewer columns than a vector, B
  // with a batch axis, no vector unit, not f32, not a product.
  EXPECT_FALSE(matMulPanelTile(productDesc({1, 64}, {100, 64}, {1, 100}, true), avx2).applies());
  EXPECT_FALSE(matMulPanelTile(productDesc({4, 64}, {64, 5}, {4, 5}, false), avx2).applies());
  EXPECT_FALSE(
      matMulPanelTile(productDesc({2, 4, 64}, {2, 64, 9}, {2, 4, 9}, false), avx2).applies());
  EXPECT_FALSE(matMulPanelTile(productDesc({4, 64}, {64, 9}, {4, 9}, false), {}).applies());
  KernelDesc ints = productDesc({4, 64}, {64, 9}, {4, 9}, false);
  ints.inputs[1].type = ElemType::I32;
  EXPECT_FALSE(matMulPanelTile(ints, avx2).applies());
  KernelDesc conv = productDesc({4, 64}, {64, 9}, {4, 9}, false);
  conv.kind = KernelKind::Conv;
  EXPECT_FALSE(matMulPanelTile(conv, avx2).applies());
  // A fused MLP head: the rows of one block (hidden rows of at most kMlpHiddenBlockFloats).
  KernelDesc head = productDesc({13, 20}, {24, 20}, {13, 9}, true);
  head.tailB = 2;
  EXPECT_EQ(tile(head, avx2), Tile(6, 16));
  head.inputs[1].shape = {1500, 20};  // one row per block, transposed weights: dot tiles
  EXPECT_FALSE(matMulPanelTile(head, avx2).applies());
  head.transB = false;
  head.inputs[1].shape = {20, 1500};
  EXPECT_EQ(tile(head, avx2), Tile(1, 32));
}

// `count` values a, a + step, ... as an IR constant list.
std::string valueList(size_t count, float first, float step) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < count; ++i) os << (i ? ", " : "") << first + step * float(i % 23);
  os << ']';
  return os.str();
}
std::vector<float> values(size_t count, float first, float step) {
  std::vector<float> v;
  for (size_t i = 0; i < count; ++i) v.push_back(first + step * float(i % 23));
  return v;
}

TEST(MatMulPack, PacksOnlyConstantsReadByOneProduct) {
  // A Linear with its own weights (packed: one panel of 12 columns, i.e. W transposed), two
  // MatMuls sharing one weights constant (left alone), on AVX2's vectors (whose 8 lanes the 12
  // columns fill; AVX-512's 16 leave them to the dot tiles).
  std::string text = "graph @g {\n  input %x : f32[3,16]\n  input %x2 : f32[3,16]\n"
                     "  const %w : f32[12,16] = " + valueList(192, -0.5f, 0.0625f) + "\n" +
                     "  const %b : f32[12] = " + valueList(12, 0.25f, -0.125f) + "\n" +
                     "  const %s : f32[16,9] = " + valueList(144, 0.75f, -0.0625f) + "\n" + R"(
  %y = Gemm(%x, %w, %b) {transB = 1} : f32[3,12]
  %p = MatMul(%x, %s) : f32[3,9]
  %q = MatMul(%x2, %s) : f32[3,9]
  %r = Add(%p, %q) : f32[3,9]
  output "y" = %y
  output "r" = %r
})";
  ir::DispatchGraph g = passes::compileGraph(ir::parseGraph(text), {});
  std::vector<KernelDesc> kernels = lowerDispatches(g);
  TargetRequest avx2;
  avx2.name = "x86_64-v3";
  TargetConfig target = resolveTarget(avx2);
  ASSERT_EQ(packMatMulWeights(g, kernels, target), 1);

  // The packed kernel and its constant: W [12][16] as one panel of 12 columns, op(B) row by
  // row, which is W transposed.
  const std::vector<float> w = values(192, -0.5f, 0.0625f), s = values(144, 0.75f, -0.0625f);
  int packedKernels = 0;
  for (size_t i = 0; i < kernels.size(); ++i) {
    if (kernels[i].kind != KernelKind::MatMul) continue;
    const ir::Binding* weights = nullptr;
    for (const ir::Binding& binding : g.dispatches[i].bindings)
      if (binding.operandIndex == 1 && binding.fusedOp < 0) weights = &binding;
    ASSERT_NE(weights, nullptr);
    ASSERT_EQ(weights->ref.space, ir::Space::Constants);
    const std::vector<uint8_t>& bytes = g.constants[weights->ref.index].bytes;
    std::vector<float> stored(bytes.size() / 4);
    std::memcpy(stored.data(), bytes.data(), bytes.size());
    if (kernels[i].transB) {
      EXPECT_EQ(kernels[i].bPanel, 16);
      for (int64_t k = 0; k < 16; ++k)
        for (int64_t n = 0; n < 12; ++n)
          ASSERT_EQ(stored[size_t(k * 12 + n)], w[size_t(n * 16 + k)]) << k << ", " << n;
      ++packedKernels;
    } else {
      EXPECT_EQ(kernels[i].bPanel, 0);
      EXPECT_EQ(stored, s);
    }
  }
  EXPECT_EQ(packedKernels, 1);
  // Packing again finds nothing left to do; a microcontroller packs nothing.
  EXPECT_EQ(packMatMulWeights(g, kernels, target), 0);
  TargetRequest mcu;
  mcu.name = "cortex-m4";
  std::vector<KernelDesc> mcuKernels = lowerDispatches(g);
  EXPECT_EQ(packMatMulWeights(g, mcuKernels, resolveTarget(mcu)), 0);

  // Run the graph on the repacked constants.
  CodegenResult result = generateKernels(kernels, target);
  testing::LoadedLibrary lib(result.bytes);
  const std::vector<float> x = testing::randomFloats(48, 41), x2 = testing::randomFloats(48, 42);
  std::map<const ir::Value*, std::vector<uint8_t>> memory;
  for (const ir::IoTensor& input : g.inputs) {
    const std::vector<float>& v = input.name == "x" ? x : x2;
    memory[input.value].resize(v.size() * 4);
    std::memcpy(memory[input.value].data(), v.data(), v.size() * 4);
  }
  for (const ir::Dispatch& dispatch : g.dispatches) {
    std::vector<void*> bindings;
    for (const ir::Binding& binding : dispatch.bindings) {
      if (binding.ref.space == ir::Space::Constants) {
        bindings.push_back(g.constants[binding.ref.index].bytes.data() + binding.ref.offset);
        continue;
      }
      std::vector<uint8_t>& bytes = memory[g.storageOf(binding.value)];
      if (bytes.empty()) bytes.resize(binding.value->type().byteSize());
      bindings.push_back(bytes.data());
    }
    lib.run(result.kernelIndex[dispatch.id], bindings, 2);
  }
  auto output = [&](size_t i) {
    std::vector<float> v(g.outputs[i].type.numElements());
    std::memcpy(v.data(), memory.at(g.storageOf(g.outputs[i].value)).data(), v.size() * 4);
    return v;
  };
  const std::vector<float> bias = values(12, 0.25f, -0.125f);
  std::vector<float> y = output(0), r = output(1);
  for (int64_t m = 0; m < 3; ++m) {
    for (int64_t n = 0; n < 12; ++n) {
      double acc = bias[size_t(n)];
      for (int64_t k = 0; k < 16; ++k) acc += double(x[size_t(m * 16 + k)]) * w[size_t(n * 16 + k)];
      EXPECT_NEAR(y[size_t(m * 12 + n)], acc, 1e-5) << m << ", " << n;
    }
    for (int64_t n = 0; n < 9; ++n) {
      double acc = 0;
      for (int64_t k = 0; k < 16; ++k)
        acc += double(x[size_t(m * 16 + k)] + x2[size_t(m * 16 + k)]) * s[size_t(k * 9 + n)];
      EXPECT_NEAR(r[size_t(m * 9 + n)], acc, 1e-5) << m << ", " << n;
    }
  }
}

}  // namespace
}  // namespace kiln::codegen
