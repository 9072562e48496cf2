// Tests for dispatchCost: the FLOP / integer-op / element counts of hand-built dispatches,
// each worked out by hand from the op's definition (2 x multiply-accumulates).
#include "kiln/emit/dispatch_cost.h"

#include <gtest/gtest.h>

#include "kiln/ir/graph.h"

namespace kiln::emit {
namespace {

using ir::DType;
using ir::OpKind;
using ir::TensorType;

class DispatchCostTest : public ::testing::Test {
 protected:
  ir::Value* input(ir::Shape shape, DType dtype = DType::F32) {
    return g_.addInput("", TensorType(dtype, std::move(shape)));
  }
  ir::Op* op(OpKind kind, std::vector<ir::Value*> operands, ir::Shape result,
             ir::AttributeMap attrs = {}, DType dtype = DType::F32) {
    return g_.createOp(kind, std::move(operands), {TensorType(dtype, std::move(result))},
                       std::move(attrs));
  }
  DispatchCost cost(const ir::Op* root, std::vector<const ir::Op*> fused = {}) {
    ir::Dispatch d;
    d.root = root;
    d.fused = std::move(fused);
    return dispatchCost(d);
  }
  ir::Graph g_{"model"};
};

TEST_F(DispatchCostTest, ConvCountsTwoFlopsPerMac) {
  // [1,3,8,8] * [4,3,3,3] -> [1,4,6,6]: 144 outputs x 27 MACs = 3888 MACs.
  ir::Op* conv = op(OpKind::Conv, {input({1, 3, 8, 8}), input({4, 3, 3, 3})}, {1, 4, 6, 6});
  DispatchCost c = cost(conv);
  EXPECT_EQ(c.kind, KILN_COST_FLOPS);
  EXPECT_EQ(c.count, 2u * 3888u);
}

TEST_F(DispatchCostTest, DepthwiseConvCountsOneChannelPerOutput) {
  // group 4: [1,4,8,8] * [4,1,3,3] -> [1,4,6,6]: 144 x 9 MACs.
  ir::AttributeMap attrs;
  attrs.set("group", int64_t{4});
  ir::Op* conv =
      op(OpKind::Conv, {input({1, 4, 8, 8}), input({4, 1, 3, 3})}, {1, 4, 6, 6}, attrs);
  EXPECT_EQ(cost(conv).count, 2u * 144u * 9u);
}

TEST_F(DispatchCostTest, ConvTransposeCountsPerInputElement) {
  // x [1,2,3,3], W [2,4,3,3]: each of 18 inputs feeds 4 x 9 outputs: 648 MACs.
  ir::Op* conv =
      op(OpKind::ConvTranspose, {input({1, 2, 3, 3}), input({2, 4, 3, 3})}, {1, 4, 5, 5});
  EXPECT_EQ(cost(conv).count, 2u * 648u);
}

TEST_F(DispatchCostTest, GemmWithTransposedA) {
  // A [5,3] transposed: M 3, K 5; B [5,7]: 21 outputs x 5 MACs.
  ir::AttributeMap attrs;
  attrs.set("transA", int64_t{1});
  ir::Op* gemm = op(OpKind::Gemm, {input({5, 3}), input({5, 7})}, {3, 7}, attrs);
  EXPECT_EQ(cost(gemm).count, 2u * 105u);
}

TEST_F(DispatchCostTest, BatchedMatMulAndAFusedSecondProduct) {
  // [2,3,4] x [4,5] -> [2,3,5]: 30 x 4 MACs; a fused Relu is not counted; a fused second
  // MatMul [2,3,5] x [5,6] -> [2,3,6] adds 36 x 5 MACs.
  ir::Op* first = op(OpKind::MatMul, {input({2, 3, 4}), input({4, 5})}, {2, 3, 5});
  EXPECT_EQ(cost(first).count, 2u * 120u);
  ir::Op* relu = op(OpKind::Relu, {first->result()}, {2, 3, 5});
  ir::Op* second = op(OpKind::MatMul, {relu->result(), input({5, 6})}, {2, 3, 6});
  EXPECT_EQ(cost(first, {relu, second}).count, 2u * (120u + 180u));
}

TEST_F(DispatchCostTest, DepthwiseConvFusedBehindAPointwiseOneCounts) {
  // 1x1 [1,2,6,6] * [4,2,1,1] -> [1,4,6,6]: 144 x 2 MACs; a fused Clip is not counted; the
  // fused depthwise [1,4,6,6] * [4,1,3,3] stride 1 -> [1,4,4,4] adds 64 x 9 MACs.
  ir::Op* expand = op(OpKind::Conv, {input({1, 2, 6, 6}), input({4, 2, 1, 1})}, {1, 4, 6, 6});
  ir::Op* clip = op(OpKind::Clip, {expand->result()}, {1, 4, 6, 6});
  ir::AttributeMap attrs;
  attrs.set("group", int64_t{4});
  ir::Op* depthwise =
      op(OpKind::Conv, {clip->result(), input({4, 1, 3, 3})}, {1, 4, 4, 4}, attrs);
  EXPECT_EQ(cost(expand, {clip, depthwise}).count, 2u * (288u + 576u));
}

TEST_F(DispatchCostTest, QuantizedOpsCountIntegerOps) {
  // QFullyConnected [2,16] x [8,16] -> [2,8]: 16 outputs x 16 MACs.
  ir::Op* fc = op(OpKind::QFullyConnected, {input({2, 16}, DType::I8), input({8, 16}, DType::I8)},
                  {2, 8}, {}, DType::I8);
  DispatchCost c = cost(fc);
  EXPECT_EQ(c.kind, KILN_COST_INT_OPS);
  EXPECT_EQ(c.count, 2u * 256u);
  // QDepthwiseConv2D [1,6,6,4] * [1,3,3,4] -> [1,4,4,4]: 64 outputs x 9 MACs.
  ir::Op* dw = op(OpKind::QDepthwiseConv2D,
                  {input({1, 6, 6, 4}, DType::I8), input({1, 3, 3, 4}, DType::I8)}, {1, 4, 4, 4},
                  {}, DType::I8);
  EXPECT_EQ(cost(dw).count, 2u * 64u * 9u);
  // QConv2D [1,5,5,3] * [2,3,3,3] -> [1,3,3,2]: 18 outputs x 27 MACs.
  ir::Op* qconv = op(OpKind::QConv2D,
                     {input({1, 5, 5, 3}, DType::I8), input({2, 3, 3, 3}, DType::I8)},
                     {1, 3, 3, 2}, {}, DType::I8);
  EXPECT_EQ(cost(qconv).count, 2u * 18u * 27u);
}

TEST_F(DispatchCostTest, PoolingCountsInputElementsAndMovesCountNothing) {
  ir::Op* pool = op(OpKind::MaxPool, {input({1, 2, 4, 4})}, {1, 2, 2, 2});
  DispatchCost c = cost(pool);
  EXPECT_EQ(c.kind, KILN_COST_ELEMENTS);
  EXPECT_EQ(c.count, 32u);
  ir::Op* add = op(OpKind::Add, {input({3, 4}), input({4})}, {3, 4});
  EXPECT_EQ(cost(add).count, 12u);
  ir::Op* transpose = op(OpKind::Transpose, {input({3, 4})}, {4, 3});
  EXPECT_EQ(cost(transpose).kind, KILN_COST_NONE);
  EXPECT_EQ(cost(transpose).count, 0u);
}

}  // namespace
}  // namespace kiln::emit
