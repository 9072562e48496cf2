// foldZeroPointCorrections (fold_corrections.h): on a microcontroller target a fully
// connected layer's bias constant takes its zero-point correction (hand-checked values) and
// the kernel is marked; other targets, and a bias that another dispatch also reads, keep it.
#include <gtest/gtest.h>

#include <cstring>

#include "kiln/codegen/dispatch_lowering.h"
#include "kiln/codegen/fold_corrections.h"
#include "kiln/codegen/target_config.h"
#include "kiln/ir/parser.h"
#include "kiln/passes/pipeline.h"

namespace kiln::codegen {
namespace {

// x (zero point -3) -> QFullyConnected with w = [[1, 2, 3], [-4, 5, -6]] and b = [100, -7]:
// corrections -zx * sum(w) = 3 * 6 = 18 and 3 * -5 = -15.
const char* kGraph = R"(graph @g {
  input %x : i8[1,3] quant(scale=0.5, zero_point=-3)
  const %w : i8[2,3] quant(scale=0.25, zero_point=0) = [1, 2, 3, -4, 5, -6]
  const %b : i32[2] = [100, -7]
  %f = QFullyConnected(%x, %w, %b) : i8[1,2] quant(scale=0.0625, zero_point=1) loc("fc", "FULLY_CONNECTED")
  output "f" = %f
})";

std::vector<int32_t> biasOf(const ir::DispatchGraph& g) {
  for (const ir::Dispatch& d : g.dispatches)
    for (const ir::Binding& b : d.bindings)
      if (b.operandIndex == 2 && b.ref.space == ir::Space::Constants) {
        const std::vector<uint8_t>& bytes = g.constants[b.ref.index].bytes;
        std::vector<int32_t> values(bytes.size() / 4);
        std::memcpy(values.data(), bytes.data(), bytes.size());
        return values;
      }
  return {};
}

TargetConfig target(const char* name) {
  TargetRequest request;
  request.name = name;
  return resolveTarget(request);
}

TEST(FoldCorrections, MicrocontrollerBiasTakesTheCorrection) {
  ir::DispatchGraph g = passes::compileGraph(ir::parseGraph(kGraph), {});
  std::vector<KernelDesc> kernels = lowerDispatches(g);
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0].quant.zeroPointCorrection, (std::vector<int32_t>{18, -15}));
  ASSERT_EQ(biasOf(g), (std::vector<int32_t>{100, -7}));
  EXPECT_EQ(foldZeroPointCorrections(g, kernels, target("cortex-m33")), 1);
  EXPECT_EQ(biasOf(g), (std::vector<int32_t>{118, -22}));
  EXPECT_TRUE(kernels[0].quant.correctionInBias);
  // Folded once: a second call changes nothing.
  EXPECT_EQ(foldZeroPointCorrections(g, kernels, target("cortex-m33")), 0);
  EXPECT_EQ(biasOf(g), (std::vector<int32_t>{118, -22}));
}

TEST(FoldCorrections, OtherTargetsKeepTheTable) {
  ir::DispatchGraph g = passes::compileGraph(ir::parseGraph(kGraph), {});
  std::vector<KernelDesc> kernels = lowerDispatches(g);
  EXPECT_EQ(foldZeroPointCorrections(g, kernels, target("x86_64")), 0);
  EXPECT_EQ(biasOf(g), (std::vector<int32_t>{100, -7}));
  EXPECT_FALSE(kernels[0].quant.correctionInBias);
}

TEST(FoldCorrections, SharedBiasIsLeftAlone) {
  ir::DispatchGraph g = passes::compileGraph(ir::parseGraph(R"(graph @g {
  input %x : i8[1,3] quant(scale=0.5, zero_point=-3)
  const %w : i8[2,3] quant(scale=0.25, zero_point=0) = [1, 2, 3, -4, 5, -6]
  const %v : i8[2,3] quant(scale=0.25, zero_point=0) = [2, 2, 2, 1, 1, 1]
  const %b : i32[2] = [100, -7]
  %f = QFullyConnected(%x, %w, %b) : i8[1,2] quant(scale=0.0625, zero_point=1) loc("f", "FULLY_CONNECTED")
  %h = QFullyConnected(%x, %v, %b) : i8[1,2] quant(scale=0.0625, zero_point=1) loc("h", "FULLY_CONNECTED")
  output "f" = %f
  output "h" = %h
})"), {});
  std::vector<KernelDesc> kernels = lowerDispatches(g);
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(foldZeroPointCorrections(g, kernels, target("cortex-m33")), 0);
  EXPECT_EQ(biasOf(g), (std::vector<int32_t>{100, -7}));
}

}  // namespace
}  // namespace kiln::codegen
