// Value: one SSA tensor of a Graph — a graph input, a constant (with its bytes) or the result
// of an op. Values are owned by the Graph (inputs, constants) or by their defining Op (results)
// and are referred to by raw pointer; their addresses are stable.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/ir/type.h"

namespace kiln::ir {

class Op;
class Graph;

enum class ValueKind : uint8_t { Input, Constant, OpResult };

class Value {
 public:
  Value(const Value&) = delete;
  Value& operator=(const Value&) = delete;

  ValueKind kind() const { return kind_; }
  bool isInput() const { return kind_ == ValueKind::Input; }
  bool isConstant() const { return kind_ == ValueKind::Constant; }

  // SSA name, unique within the graph, printed as %name. Graph inputs keep the model's name.
  const std::string& name() const { return name_; }

  const TensorType& type() const { return type_; }
  DType dtype() const { return type_.dtype; }
  const Shape& shape() const { return type_.shape; }
  // Changes the type in place (e.g. to attach quantization parameters). The caller keeps the
  // graph consistent; the verifier checks it.
  void setType(TensorType type) { type_ = std::move(type); }

  // The op that produces this value, or nullptr for inputs and constants.
  Op* definingOp() const { return definingOp_; }
  // Index among the defining op's results (0 for inputs and constants).
  int resultIndex() const { return resultIndex_; }

  // Constant contents: type().byteSize() bytes, row-major, little-endian, bool as 0/1 bytes.
  // Only valid for constants.
  const std::vector<uint8_t>& constantBytes() const;
  // Replaces a constant's contents (same byte size as its type).
  void setConstantBytes(std::vector<uint8_t> bytes);

  // The ops that use this value, one entry per operand slot (an op using it twice appears
  // twice), in no particular order. Graph outputs are not listed: see Graph::isOutput.
  const std::vector<Op*>& users() const { return users_; }
  bool hasUsers() const { return !users_.empty(); }

 private:
  friend class Graph;
  friend class Op;
  Value(ValueKind kind, std::string name, TensorType type)
      : kind_(kind), name_(std::move(name)), type_(std::move(type)) {}
  void addUser(Op* op) { users_.push_back(op); }
  void removeUser(Op* op);  // removes one entry

  ValueKind kind_;
  std::string name_;
  TensorType type_;
  Op* definingOp_ = nullptr;
  int resultIndex_ = 0;
  std::vector<uint8_t> bytes_;  // constants only
  std::vector<Op*> users_;
};

}  // namespace kiln::ir
