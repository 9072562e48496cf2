// Helpers shared by the op rule files (private to kiln_ir).
#pragma once

#include <string>

#include "kiln/ir/constant_data.h"
#include "kiln/ir/op_rules.h"
#include "kiln/ir/value.h"
#include "kiln/support/diagnostics.h"
#include "kiln/support/strings.h"

namespace kiln::ir::rules {

[[noreturn]] inline void fail(const std::string& message) { throw CompileError(message); }

inline const TensorType& typeOf(const RuleInput& in, size_t i) { return in.operands[i]->type(); }

inline bool present(const RuleInput& in, size_t i) {
  return i < in.operands.size() && in.operands[i] != nullptr;
}

inline RuleResult single(TensorType type) {
  RuleResult r;
  r.types.push_back(TensorType(type.dtype, std::move(type.shape)));
  return r;
}

inline RuleResult unknown(size_t count = 1) {
  RuleResult r;
  r.types.resize(count);
  return r;
}

// Values of static operand i if it is a constant, else nullopt.
inline std::optional<std::vector<int64_t>> staticInts(const RuleInput& in, size_t i) {
  if (!isConstantValue(in.operands[i])) return std::nullopt;
  return constantInts(in.operands[i]);
}

inline std::string operandName(size_t i) { return "operand " + std::to_string(i); }

inline void requireFloat(const RuleInput& in, size_t i) {
  if (!isFloat(typeOf(in, i).dtype))
    fail(operandName(i) + " has dtype " + std::string(dtypeName(typeOf(in, i).dtype)) +
         ", expected f32 or f16");
}

inline void requireSameDType(const RuleInput& in, size_t a, size_t b) {
  if (typeOf(in, a).dtype != typeOf(in, b).dtype)
    fail(operandName(b) + " has dtype " + std::string(dtypeName(typeOf(in, b).dtype)) +
         ", expected " + std::string(dtypeName(typeOf(in, a).dtype)) + " like " + operandName(a));
}

inline void requireRank(const RuleInput& in, size_t i, int64_t rank) {
  if (typeOf(in, i).rank() != rank)
    fail(operandName(i) + " has shape " + shapeToString(typeOf(in, i).shape) + ", expected rank " +
         std::to_string(rank));
}

inline void requireIndexType(const RuleInput& in, size_t i) {
  DType d = typeOf(in, i).dtype;
  if (d != DType::I64 && d != DType::I32)
    fail(operandName(i) + " has dtype " + std::string(dtypeName(d)) + ", expected i64 or i32");
}

}  // namespace kiln::ir::rules
