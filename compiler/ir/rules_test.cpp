// Tests of the op type/shape rules against hand-computed shapes (ONNX semantics), and of
// the rules' error messages.
#include <gtest/gtest.h>

#include "kiln/ir/constant_data.h"
#include "kiln/ir/graph.h"
#include "kiln/ir/op_rules.h"
#include "kiln/support/diagnostics.h"

namespace kiln::ir {
namespace {

class Rules : public ::testing::Test {
 protected:
  Value* input(Shape shape, DType dtype = DType::F32) {
    return graph_.addInput("", TensorType(dtype, std::move(shape)));
  }
  Value* ints(std::vector<int64_t> values, Shape shape = {}) {
    if (shape.empty()) shape = {int64_t(values.size())};
    TensorType t(DType::I64, shape);
    return graph_.addConstant("", t, makeConstantBytesInt(t, values));
  }
  std::vector<std::optional<TensorType>> infer(OpKind kind, std::vector<Value*> operands,
                                               AttributeMap attrs = {}, size_t results = 1) {
    return inferResultTypes(RuleInput{kind, operands, attrs, results}).types;
  }
  Shape shapeOf(OpKind kind, std::vector<Value*> operands, AttributeMap attrs = {}) {
    auto types = infer(kind, std::move(operands), std::move(attrs));
    EXPECT_TRUE(types[0].has_value());
    return types[0] ? types[0]->shape : Shape{-1};
  }
  std::string error(OpKind kind, std::vector<Value*> operands, AttributeMap attrs = {},
                    size_t results = 1) {
    try {
      infer(kind, std::move(operands), std::move(attrs), results);
    } catch (const CompileError& e) {
      return e.what();
    }
    return "(no error)";
  }
  static AttributeMap attrs(std::initializer_list<std::pair<const char*, Attribute>> list) {
    AttributeMap a;
    for (const auto& [k, v] : list) a.set(k, v);
    return a;
  }
  Graph graph_;
};

using Ints = std::vector<int64_t>;

TEST_F(Rules, ConvGeometry) {
  Value* x = input({1, 4, 10, 12});
  // 3x3, stride 2, pads 1, dilation 1: (10 + 2 - 3) / 2 + 1 = 5, (12 + 2 - 3) / 2 + 1 = 6
  EXPECT_EQ(shapeOf(OpKind::Conv, {x, input({8, 4, 3, 3})},
                    attrs({{"pads", Ints{1, 1, 1, 1}}, {"strides", Ints{2, 2}}})),
            (Shape{1, 8, 5, 6}));
  // Depthwise with dilation 2: extent 5, (10 - 5) + 1 = 6, (12 - 5) + 1 = 8
  EXPECT_EQ(shapeOf(OpKind::Conv, {x, input({4, 1, 3, 3}), input({4})},
                    attrs({{"group", int64_t(4)}, {"dilations", Ints{2, 2}}})),
            (Shape{1, 4, 6, 8}));
  EXPECT_EQ(error(OpKind::Conv, {x, input({8, 3, 3, 3})}),
            "weight has 3 input channels per group, input has 4 channels in 1 group(s)");
  EXPECT_EQ(error(OpKind::Conv, {x, input({8, 4, 3, 3}), input({7})}),
            "bias has shape [7], expected [8]");
  EXPECT_EQ(error(OpKind::Conv, {x, input({8, 4, 3, 3})}, attrs({{"pads", Ints{1, 1}}})),
            "pads has 2 values, expected 4");
  EXPECT_EQ(error(OpKind::Conv, {x, input({8, 4, 11, 3})}),
            "window of extent 11 does not fit input size 10 plus padding");
  EXPECT_EQ(
      error(OpKind::Conv, {x, input({8, 4, 3, 3})}, attrs({{"auto_pad", std::string("SAME")}})),
      "auto_pad 'SAME' is not NOTSET, SAME_UPPER, SAME_LOWER or VALID");
}

TEST_F(Rules, PoolCeilMode) {
  Value* x = input({1, 2, 6, 6});
  // kernel 3, stride 2: floor((6 - 3) / 2) + 1 = 2; ceil mode: ceil(3 / 2) + 1 = 3
  auto a = attrs({{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}});
  EXPECT_EQ(shapeOf(OpKind::MaxPool, {x}, a), (Shape{1, 2, 2, 2}));
  a.set("ceil_mode", int64_t(1));
  EXPECT_EQ(shapeOf(OpKind::MaxPool, {x}, a), (Shape{1, 2, 3, 3}));
  // ceil mode whose last window would start in the end padding is dropped:
  // in 5, kernel 2, stride 2, pad 1+1: span 5, ceil(5/2)+1 = 4, but (4-1)*2 = 6 >= 5+1 -> 3
  auto b = attrs({{"kernel_shape", Ints{2}},
                  {"strides", Ints{2}},
                  {"pads", Ints{1, 1}},
                  {"ceil_mode", int64_t(1)}});
  EXPECT_EQ(shapeOf(OpKind::AveragePool, {input({1, 1, 5})}, b), (Shape{1, 1, 3}));
  EXPECT_EQ(shapeOf(OpKind::GlobalAveragePool, {x}), (Shape{1, 2, 1, 1}));
  EXPECT_EQ(error(OpKind::MaxPool, {x}), "missing attribute 'kernel_shape'");
}

TEST_F(Rules, MatMulAndGemm) {
  EXPECT_EQ(shapeOf(OpKind::MatMul, {input({2, 1, 3, 4}), input({5, 4, 6})}), (Shape{2, 5, 3, 6}));
  EXPECT_EQ(shapeOf(OpKind::MatMul, {input({4}), input({3, 4, 6})}), (Shape{3, 6}));
  EXPECT_EQ(shapeOf(OpKind::MatMul, {input({3, 4}), input({4})}), (Shape{3}));
  EXPECT_EQ(error(OpKind::MatMul, {input({3, 4}), input({5, 6})}),
            "inner dims differ: [3,4] x [5,6]");
  EXPECT_EQ(shapeOf(OpKind::Gemm, {input({4, 3}), input({5, 4}), input({5})},
                    attrs({{"transA", int64_t(1)}, {"transB", int64_t(1)}})),
            (Shape{3, 5}));
  EXPECT_EQ(error(OpKind::Gemm, {input({4, 3}), input({5, 4}), input({4})},
                  attrs({{"transA", int64_t(1)}, {"transB", int64_t(1)}})),
            "C shape [4] does not broadcast to [3,5]");
}

TEST_F(Rules, ReshapeFlattenSqueezeUnsqueeze) {
  Value* x = input({2, 3, 4});
  EXPECT_EQ(shapeOf(OpKind::Reshape, {x, ints({0, -1})}), (Shape{2, 12}));
  EXPECT_EQ(shapeOf(OpKind::Reshape, {x, ints({4, 0, 2})}), (Shape{4, 3, 2}));
  EXPECT_EQ(error(OpKind::Reshape, {x, ints({5, -1})}), "cannot reshape [2,3,4] to [5,-1]");
  EXPECT_EQ(error(OpKind::Reshape, {x, ints({-1, -1})}), "shape has more than one -1");
  EXPECT_FALSE(infer(OpKind::Reshape, {x, input({2}, DType::I64)})[0].has_value());
  EXPECT_EQ(shapeOf(OpKind::Flatten, {x}), (Shape{2, 12}));
  EXPECT_EQ(shapeOf(OpKind::Flatten, {x}, attrs({{"axis", int64_t(0)}})), (Shape{1, 24}));
  Value* y = input({1, 3, 1});
  EXPECT_EQ(shapeOf(OpKind::Squeeze, {y}), (Shape{3}));
  EXPECT_EQ(shapeOf(OpKind::Squeeze, {y, ints({-1})}), (Shape{1, 3}));
  EXPECT_EQ(error(OpKind::Squeeze, {y, ints({1})}), "cannot squeeze axis 1 of shape [1,3,1]");
  EXPECT_EQ(shapeOf(OpKind::Unsqueeze, {input({3}), ints({0, -1})}), (Shape{1, 3, 1}));
}

TEST_F(Rules, SliceConcatSplitGatherPadExpandTile) {
  Value* x = input({10, 6});
  // starts -3 (=7) .. INT_MAX on axis 0; axis 1 from 5 down to 0 exclusive with step -2 -> 5, 3, 1
  EXPECT_EQ(
      shapeOf(OpKind::Slice, {x, ints({-3, 5}), ints({INT64_MAX, 0}), ints({0, 1}), ints({1, -2})}),
      (Shape{3, 3}));
  EXPECT_EQ(error(OpKind::Slice, {x, ints({0}), ints({1}), ints({0}), ints({0})}),
            "slice step must not be 0");
  EXPECT_EQ(shapeOf(OpKind::Concat, {x, input({10, 2})}, attrs({{"axis", int64_t(-1)}})),
            (Shape{10, 8}));
  EXPECT_EQ(error(OpKind::Concat, {x, input({9, 2})}, attrs({{"axis", int64_t(1)}})),
            "operand 1 shape [9,2] does not match [10,6] outside axis 1");
  auto split = infer(OpKind::Split, {x, ints({2, 4})}, attrs({{"axis", int64_t(1)}}), 2);
  EXPECT_EQ(split[0]->shape, (Shape{10, 2}));
  EXPECT_EQ(split[1]->shape, (Shape{10, 4}));
  auto equal = infer(OpKind::Split, {x}, {}, 3);  // 10 into 3: 4, 4, 2
  EXPECT_EQ(equal[2]->shape, (Shape{2, 6}));
  EXPECT_EQ(error(OpKind::Split, {x, ints({2, 3})}, attrs({{"axis", int64_t(1)}}), 2),
            "split sizes sum to 5, the axis has 6");
  EXPECT_EQ(shapeOf(OpKind::Gather, {x, input({2, 2}, DType::I64)}, attrs({{"axis", int64_t(1)}})),
            (Shape{10, 2, 2}));
  EXPECT_EQ(shapeOf(OpKind::Pad, {x, ints({1, 0, 2, 3})}), (Shape{13, 9}));
  EXPECT_EQ(shapeOf(OpKind::Expand, {input({3, 1}), ints({2, 1, 4})}), (Shape{2, 3, 4}));
  EXPECT_EQ(shapeOf(OpKind::Tile, {input({3, 1}), ints({2, 4})}), (Shape{6, 4}));
  EXPECT_EQ(shapeOf(OpKind::Transpose, {input({2, 3, 4})}), (Shape{4, 3, 2}));
  EXPECT_EQ(error(OpKind::Transpose, {input({2, 3})}, attrs({{"perm", Ints{0, 0}}})),
            "perm [0, 0] is not a permutation of 2 dims");
}

TEST_F(Rules, ShapeArithmeticAndReductions) {
  EXPECT_EQ(shapeOf(OpKind::Shape, {input({2, 3, 4})}, attrs({{"start", int64_t(-2)}})),
            (Shape{2}));
  EXPECT_EQ(shapeOf(OpKind::ConstantOfShape, {ints({2, 5})}), (Shape{2, 5}));
  TensorType s(DType::I64, {});
  std::vector<int64_t> v0 = {0}, v10 = {10}, v3 = {3};
  Value* start = graph_.addConstant("", s, makeConstantBytesInt(s, v0));
  Value* limit = graph_.addConstant("", s, makeConstantBytesInt(s, v10));
  Value* delta = graph_.addConstant("", s, makeConstantBytesInt(s, v3));
  EXPECT_EQ(shapeOf(OpKind::Range, {start, limit, delta}), (Shape{4}));  // 0 3 6 9
  Value* x = input({2, 3, 4});
  EXPECT_EQ(shapeOf(OpKind::ReduceMean, {x}, attrs({{"axes", Ints{-1}}})), (Shape{2, 3, 1}));
  EXPECT_EQ(shapeOf(OpKind::ReduceSum, {x, ints({0, 2})}, attrs({{"keepdims", int64_t(0)}})),
            (Shape{3}));
  EXPECT_EQ(shapeOf(OpKind::ReduceMax, {x}, attrs({{"keepdims", int64_t(0)}})), (Shape{}));
  auto arg = infer(OpKind::ArgMax, {x}, attrs({{"axis", int64_t(1)}}));
  EXPECT_EQ(arg[0]->dtype, DType::I64);
  EXPECT_EQ(arg[0]->shape, (Shape{2, 1, 4}));
  EXPECT_EQ(error(OpKind::Softmax, {x}, attrs({{"axis", int64_t(3)}})),
            "axis 3 is out of range for rank 3");
}

TEST_F(Rules, ElementwiseAndArity) {
  Value* a = input({4, 1});
  Value* b = input({3});
  EXPECT_EQ(shapeOf(OpKind::Add, {a, b}), (Shape{4, 3}));
  EXPECT_EQ(infer(OpKind::Less, {a, b})[0]->dtype, DType::Bool);
  EXPECT_EQ(shapeOf(OpKind::Where, {input({3}, DType::Bool), a, b}), (Shape{4, 3}));
  EXPECT_EQ(error(OpKind::Add, {a, input({3}, DType::I32)}),
            "operand 1 has dtype i32, expected f32 like operand 0");
  EXPECT_EQ(error(OpKind::Exp, {input({3}, DType::I32)}),
            "operand 0 has dtype i32, expected f32 or f16");
  EXPECT_EQ(error(OpKind::Add, {a}), "has 1 operands, expected 2");
  EXPECT_EQ(error(OpKind::Conv, {a, nullptr}), "operand 1 is required but absent");
  EXPECT_EQ(error(OpKind::Relu, {a}, {}, 2), "has 2 results, expected 1");
  EXPECT_EQ(infer(OpKind::Cast, {a}, attrs({{"to", int64_t(DType::F16)}}))[0]->dtype, DType::F16);
  EXPECT_EQ(error(OpKind::Cast, {a}, attrs({{"to", int64_t(9)}})),
            "attribute 'to' = 9 is not a kiln dtype");
  EXPECT_EQ(error(OpKind::Cast, {a}), "missing attribute 'to'");
  EXPECT_EQ(error(OpKind::Cast, {a}, attrs({{"to", std::string("f16")}})),
            "attribute 'to' is string, expected int");
}

// ---- ops added for ONNX coverage ----

TEST_F(Rules, ConvTransposeGeometry) {
  // out = stride * (in - 1) + output_padding + (k - 1) * dilation + 1 - pads
  // H: 2 * 4 + 1 + 2 * 2 + 1 - 2 - 1 = 11; W: 3 * 5 + 0 + 2 + 1 - 1 - 1 = 16
  EXPECT_EQ(shapeOf(OpKind::ConvTranspose, {input({2, 4, 5, 6}), input({4, 3, 3, 3})},
                    attrs({{"group", int64_t(2)},
                           {"strides", Ints{2, 3}},
                           {"dilations", Ints{2, 1}},
                           {"pads", Ints{2, 1, 1, 1}},
                           {"output_padding", Ints{1, 0}}})),
            (Shape{2, 6, 11, 16}));
  // output_shape wins over pads; SAME_UPPER gives in * stride.
  EXPECT_EQ(shapeOf(OpKind::ConvTranspose, {input({1, 2, 5}), input({2, 3, 4})},
                    attrs({{"strides", Ints{2}}, {"output_shape", Ints{11}}})),
            (Shape{1, 3, 11}));
  EXPECT_EQ(shapeOf(OpKind::ConvTranspose, {input({1, 2, 3, 3}), input({2, 1, 3, 3})},
                    attrs({{"strides", Ints{2, 2}}, {"auto_pad", std::string("SAME_UPPER")}})),
            (Shape{1, 1, 6, 6}));
}

TEST_F(Rules, ConvTransposeErrors) {
  EXPECT_EQ(error(OpKind::ConvTranspose, {input({1, 4, 5, 5}), input({3, 2, 3, 3})}),
            "weight has shape [3,2,3,3], expected 4 input channels in dim 0");
  EXPECT_EQ(error(OpKind::ConvTranspose, {input({1, 4, 5, 5}), input({4, 2, 3, 3}), input({3})}),
            "bias has shape [3], expected [2]");
  EXPECT_EQ(error(OpKind::ConvTranspose, {input({1, 4, 2, 2}), input({4, 2, 3, 3})},
                  attrs({{"output_shape", Ints{9, 9}}})),
            "output_shape 9 is larger than the full output 4");
}

TEST_F(Rules, NormalizationsAndTopK) {
  EXPECT_EQ(shapeOf(OpKind::InstanceNormalization, {input({2, 3, 4}), input({3}), input({3})}),
            (Shape{2, 3, 4}));
  EXPECT_EQ(error(OpKind::InstanceNormalization, {input({2, 3, 4}), input({4}), input({3})}),
            "scale has shape [4], expected [3]");
  EXPECT_EQ(shapeOf(OpKind::LRN, {input({1, 5, 2, 2})}, attrs({{"size", int64_t(3)}})),
            (Shape{1, 5, 2, 2}));
  EXPECT_EQ(error(OpKind::LRN, {input({1, 5, 2, 2})}),
            "attribute 'size' must be a positive integer");
  auto types = infer(OpKind::TopK, {input({3, 7}), ints({2})}, attrs({{"axis", int64_t(1)}}), 2);
  EXPECT_EQ(types[0]->toString(), "f32[3,2]");
  EXPECT_EQ(types[1]->toString(), "i64[3,2]");
  EXPECT_FALSE(infer(OpKind::TopK, {input({3, 7}), input({1}, DType::I64)}, {}, 2)[0]);
  EXPECT_EQ(error(OpKind::TopK, {input({3, 7}), ints({8})}, {}, 2),
            "K = 8 is outside [0, 7] (the size of axis 1)");
  EXPECT_EQ(shapeOf(OpKind::CumSum, {input({2, 5}, DType::I64), ints({-1}, {})}), (Shape{2, 5}));
  EXPECT_EQ(error(OpKind::CumSum, {input({2, 5}), ints({2}, {})}),
            "axis 2 is out of range for rank 2");
  EXPECT_EQ(shapeOf(OpKind::ScatterND, {input({4, 3}), input({2, 1}, DType::I64), input({2, 3})}),
            (Shape{4, 3}));
  EXPECT_EQ(error(OpKind::ScatterND, {input({4, 3}), input({2, 1}, DType::I64), input({2, 4})}),
            "updates have shape [2,4], expected [2,3]");
  EXPECT_EQ(shapeOf(OpKind::GatherElements, {input({3, 5}), input({3, 2}, DType::I64)},
                    attrs({{"axis", int64_t(1)}})),
            (Shape{3, 2}));
  EXPECT_EQ(error(OpKind::GatherElements, {input({3, 5}), input({4, 2}, DType::I64)},
                  attrs({{"axis", int64_t(1)}})),
            "indices have shape [4,2], larger than data [3,5] in dim 0");
  EXPECT_EQ(shapeOf(OpKind::ReduceLogSumExp, {input({2, 3, 4})},
                    attrs({{"axes", Ints{1}}, {"keepdims", int64_t(0)}})),
            (Shape{2, 4}));
}

}  // namespace
}  // namespace kiln::ir
