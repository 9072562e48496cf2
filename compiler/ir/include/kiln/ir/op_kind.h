// OpKind (one enumerator per entry of ops.def) and the static facts about each op kind.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace kiln::ir {

enum class OpKind : uint16_t {
#define KILN_OP(Name, ...) Name,
#include "kiln/ir/ops.def"
#undef KILN_OP
};

enum OpTrait : uint32_t {
  kNone = 0,
  kElementwise = 1u << 0,  // result element i depends only on operand elements at i (after
                           // broadcasting): may run in place over a same-sized operand
  kView = 1u << 1,         // result is operand 0's bytes under another shape (no kernel)
  kCommutative = 1u << 2,  // operands may be swapped
};

struct RuleInput;  // op_rules.h
struct RuleResult;

struct OpInfo {
  std::string_view name;
  int minOperands;
  int maxOperands;          // -1: variadic
  int numResults;           // -1: decided by the op
  uint32_t traits;          // OpTrait bits
  uint32_t staticOperands;  // bit i: operand i is read at compile time
  RuleResult (*rule)(const RuleInput&);

  bool hasTrait(OpTrait t) const { return (traits & t) != 0; }
  bool isStaticOperand(size_t i) const { return i < 32 && ((staticOperands >> i) & 1u); }
};

const OpInfo& opInfo(OpKind kind);
inline std::string_view opName(OpKind kind) { return opInfo(kind).name; }
// Inverse of opName; nullopt for an unknown name.
std::optional<OpKind> parseOpKind(std::string_view name);

}  // namespace kiln::ir
