// Type/shape rules of the ops (one per ops.def entry). A rule checks an op's operands and
// attributes and computes its result types. The verifier compares them with the declared
// result types; Graph::createOpInferred uses them to build new ops.
//
// A rule throws kiln::CompileError with a message that does not name the op (the caller
// adds "node 'x' (Conv): "). It returns std::nullopt for a result type it cannot know yet
// because a static operand (shape, axes...) is not a constant before constant folding.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "kiln/ir/attribute.h"
#include "kiln/ir/op_kind.h"
#include "kiln/ir/type.h"

namespace kiln::ir {

class Value;

struct RuleInput {
  OpKind kind;
  std::span<Value* const> operands;  // nullptr = absent optional operand
  const AttributeMap& attrs;
  size_t numResults;
};

struct RuleResult {
  std::vector<std::optional<TensorType>> types;  // one per result
};

// Runs the op's rule after checking the operand count, the result count and that only
// optional operands are absent. Throws CompileError (message without op context).
RuleResult inferResultTypes(const RuleInput& input);

// Broadcasts shapes the numpy way; throws CompileError naming both shapes if incompatible.
Shape broadcastShapes(const Shape& a, const Shape& b);
// True if `from` broadcasts to exactly `to` (unidirectional, as ONNX's Gemm C or PRelu slope).
bool broadcastsTo(const Shape& from, const Shape& to);
// Normalises a possibly negative axis against `rank`; throws CompileError if out of range.
int64_t normalizeAxis(int64_t axis, int64_t rank);

#define KILN_OP(Name, MinOps, MaxOps, NumResults, Traits, Static, Rule) \
  RuleResult Rule(const RuleInput& input);
#include "kiln/ir/ops.def"
#undef KILN_OP

}  // namespace kiln::ir

namespace kiln::ir {

// Slice resolved per data dim (dims the Slice does not name get start 0, step 1, full size):
// element j of output dim d reads input index starts[d] + j * steps[d]. Throws CompileError.
struct SliceGeometry {
  std::vector<int64_t> starts;
  std::vector<int64_t> steps;
  Shape output;
};
SliceGeometry resolveSlice(const Shape& data, const std::vector<int64_t>& starts,
                           const std::vector<int64_t>& ends, const std::vector<int64_t>& axes,
                           const std::vector<int64_t>& steps);

// The Split sizes along the axis: the static `split` operand's values, or an equal split into
// `count` parts (the last may be smaller, as in ONNX opset 18). Throws CompileError.
std::vector<int64_t> resolveSplit(int64_t dim, const std::vector<int64_t>* split, size_t count);

}  // namespace kiln::ir
