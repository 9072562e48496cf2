// Op: one operation of a Graph — a kind (ops.def), operands (Values, nullptr for an absent
// optional operand), results (Values it owns), attributes and the model node it came from.
// Create and erase ops through Graph; change operands through setOperand so that use lists
// stay right.
#pragma once

#include <list>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kiln/ir/attribute.h"
#include "kiln/ir/op_kind.h"
#include "kiln/ir/value.h"

namespace kiln::ir {

// Where an op came from, for diagnostics: the model node's name and op type (e.g. "conv1",
// "Conv"). Empty for ops created by passes without a single source node.
struct SourceInfo {
  std::string nodeName;
  std::string opType;
  bool empty() const { return nodeName.empty() && opType.empty(); }
  bool operator==(const SourceInfo&) const = default;
};

class Op {
 public:
  Op(const Op&) = delete;
  Op& operator=(const Op&) = delete;
  ~Op();

  OpKind kind() const { return kind_; }
  const OpInfo& info() const { return opInfo(kind_); }
  std::string_view kindName() const { return opName(kind_); }

  size_t numOperands() const { return operands_.size(); }
  // Operand i; nullptr if an optional operand is absent.
  Value* operand(size_t i) const { return operands_.at(i); }
  // Operand i, or nullptr if i is past the end or the operand is absent.
  Value* optionalOperand(size_t i) const { return i < operands_.size() ? operands_[i] : nullptr; }
  std::span<Value* const> operands() const { return operands_; }
  void setOperand(size_t i, Value* value);

  size_t numResults() const { return results_.size(); }
  Value* result(size_t i = 0) const { return results_.at(i).get(); }
  std::vector<Value*> results() const;

  AttributeMap& attrs() { return attrs_; }
  const AttributeMap& attrs() const { return attrs_; }

  const SourceInfo& source() const { return source_; }
  void setSource(SourceInfo source) { source_ = std::move(source); }

  // For messages: "node 'conv1' (Conv)" if the op has a source node, else "op %5 (Conv)".
  std::string describe() const;

 private:
  friend class Graph;
  Op(OpKind kind, AttributeMap attrs, SourceInfo source)
      : kind_(kind), attrs_(std::move(attrs)), source_(std::move(source)) {}

  OpKind kind_;
  std::vector<Value*> operands_;
  std::vector<std::unique_ptr<Value>> results_;
  AttributeMap attrs_;
  SourceInfo source_;
  std::list<std::unique_ptr<Op>>::iterator position_;  // in the graph's op list
};

}  // namespace kiln::ir
