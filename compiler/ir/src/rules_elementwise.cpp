// Type rules of the elementwise ops: unary, broadcasting binary/variadic, comparisons,
// Where, Clip, Cast, Dropout.
#include "rule_helpers.h"

namespace kiln::ir {

using namespace rules;

RuleResult ruleUnary(const RuleInput& in) { return single(typeOf(in, 0)); }

RuleResult ruleUnaryFloat(const RuleInput& in) {
  requireFloat(in, 0);
  return single(typeOf(in, 0));
}

RuleResult ruleUnaryBool(const RuleInput& in) {
  if (typeOf(in, 0).dtype != DType::Bool) fail("operand 0 must be bool");
  return single(typeOf(in, 0));
}

RuleResult ruleClip(const RuleInput& in) {
  for (size_t i = 1; i < in.operands.size(); ++i) {
    if (!present(in, i)) continue;
    requireSameDType(in, 0, i);
    if (typeOf(in, i).numElements() != 1)
      fail(std::string(i == 1 ? "min" : "max") + " must be a scalar, got shape " +
           shapeToString(typeOf(in, i).shape));
  }
  return single(typeOf(in, 0));
}

RuleResult ruleCast(const RuleInput& in) {
  int64_t to = in.attrs.getInt("to");
  if (to < 0 || to >= kDTypeCount)
    fail("attribute 'to' = " + std::to_string(to) + " is not a kiln dtype");
  return single(TensorType(DType(to), typeOf(in, 0).shape));
}

RuleResult ruleDropout(const RuleInput& in) {
  if (in.numResults < 1 || in.numResults > 2)
    fail("has " + std::to_string(in.numResults) + " results, expected 1 or 2");
  RuleResult r = single(typeOf(in, 0));
  if (in.numResults == 2) r.types.push_back(TensorType(DType::Bool, typeOf(in, 0).shape));
  return r;
}

static Shape broadcastAll(const RuleInput& in) {
  Shape shape = typeOf(in, 0).shape;
  for (size_t i = 1; i < in.operands.size(); ++i)
    shape = broadcastShapes(shape, typeOf(in, i).shape);
  return shape;
}

RuleResult ruleBroadcast(const RuleInput& in) {
  for (size_t i = 1; i < in.operands.size(); ++i) requireSameDType(in, 0, i);
  return single(TensorType(typeOf(in, 0).dtype, broadcastAll(in)));
}

RuleResult ruleBroadcastBool(const RuleInput& in) {
  for (size_t i = 0; i < in.operands.size(); ++i)
    if (typeOf(in, i).dtype != DType::Bool) fail(operandName(i) + " must be bool");
  return single(TensorType(DType::Bool, broadcastAll(in)));
}

RuleResult rulePow(const RuleInput& in) {
  return single(TensorType(typeOf(in, 0).dtype, broadcastAll(in)));
}

RuleResult rulePRelu(const RuleInput& in) {
  requireSameDType(in, 0, 1);
  if (!broadcastsTo(typeOf(in, 1).shape, typeOf(in, 0).shape))
    fail("slope shape " + shapeToString(typeOf(in, 1).shape) + " does not broadcast to " +
         shapeToString(typeOf(in, 0).shape));
  return single(typeOf(in, 0));
}

RuleResult ruleCompare(const RuleInput& in) {
  requireSameDType(in, 0, 1);
  return single(TensorType(DType::Bool, broadcastAll(in)));
}

RuleResult ruleWhere(const RuleInput& in) {
  if (typeOf(in, 0).dtype != DType::Bool) fail("condition (operand 0) must be bool");
  requireSameDType(in, 1, 2);
  return single(TensorType(typeOf(in, 1).dtype, broadcastAll(in)));
}

}  // namespace kiln::ir
