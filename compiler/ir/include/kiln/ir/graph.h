// Graph: a typed SSA graph of tensor ops with static shapes. It owns its inputs, constants
// and ops; ops are kept in a list in a valid execution (topological) order, which the
// verifier checks. Graph outputs are (name, value) pairs: one value may be several outputs,
// and an output may be an input or a constant.
//
// Typical use (importer):
//   Graph g("model");
//   Value* x = g.addInput("x", TensorType(DType::F32, {1, 4}));
//   Value* w = g.addConstant("w", TensorType(DType::F32, {4}), bytes);
//   Op* add = g.createOp(OpKind::Add, {x, w}, {TensorType(DType::F32, {1, 4})}, {},
//                        SourceInfo{"add0", "Add"}, nullptr, {"y"});
//   g.addOutput("y", add->result());
#pragma once

#include <list>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "kiln/ir/op.h"
#include "kiln/ir/value.h"

namespace kiln::ir {

struct GraphOutput {
  std::string name;  // the model's output name
  Value* value;
};

class Graph {
 public:
  explicit Graph(std::string name = "main") : name_(std::move(name)) {}
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  ~Graph();

  const std::string& name() const { return name_; }

  // ---- building ----
  // Names must be unique among all values; pass "" to get a fresh name. A taken name is
  // made unique by appending ".1", ".2"... (inputs must not collide: CompileError).
  Value* addInput(const std::string& name, TensorType type);
  Value* addConstant(const std::string& name, TensorType type, std::vector<uint8_t> bytes);
  // Creates an op with the given result types, inserted before `before` (nullptr: at the end).
  // `resultNames` may be empty (fresh names) or one (possibly empty) name per result.
  Op* createOp(OpKind kind, std::vector<Value*> operands, std::vector<TensorType> resultTypes,
               AttributeMap attrs = {}, SourceInfo source = {}, Op* before = nullptr,
               std::vector<std::string> resultNames = {});
  // Like createOp, with the result types computed by the op's rule (op_rules.h). Throws
  // CompileError if the rule rejects the operands/attributes or cannot infer a type yet.
  Op* createOpInferred(OpKind kind, std::vector<Value*> operands, AttributeMap attrs = {},
                       SourceInfo source = {}, Op* before = nullptr, size_t numResults = 1);
  void addOutput(const std::string& name, Value* value);
  void setOutputValue(size_t index, Value* value);

  // ---- rewriting ----
  // Replaces every use of `from` (operands and graph outputs) with `to`.
  void replaceAllUsesWith(Value* from, Value* to);
  // Erases an op whose results have no users and are not graph outputs.
  void eraseOp(Op* op);
  // Rewrites a one-result op as `value` (typically the result of the ops that replace it):
  // every use of the op's result becomes a use of `value`, the op is erased, and `value`
  // takes the result's name (which dumps and debug names keep).
  void replaceOpWith(Op* op, Value* value);
  // Moves `op` to just before `before` (nullptr: to the end).
  void moveOpBefore(Op* op, Op* before);
  // Renames a value (the name must be unused; an input keeps the model's name: do not).
  void renameValue(Value* value, const std::string& name);
  // Erases a constant with no users that is not a graph output.
  void eraseConstant(Value* constant);
  // Erases every constant with no users that is not an output; returns how many.
  size_t eraseUnusedConstants();

  // ---- queries ----
  const std::vector<Value*>& inputs() const { return inputs_; }
  const std::vector<Value*>& constants() const { return constants_; }
  const std::vector<GraphOutput>& outputs() const { return outputs_; }
  // The ops in execution order. Do not add or erase ops while iterating this list: iterate
  // over opList() (a snapshot) instead.
  const std::list<std::unique_ptr<Op>>& ops() const { return ops_; }
  std::vector<Op*> opList() const;
  size_t numOps() const { return ops_.size(); }
  bool isOutput(const Value* value) const;
  // The value named `name` (without '%'), or nullptr.
  Value* findValue(const std::string& name) const;
  // A name not used by any value, based on `hint` (a number if empty).
  std::string uniqueName(const std::string& hint);

 private:
  Value* registerValue(std::unique_ptr<Value> owned, std::vector<std::unique_ptr<Value>>* into);
  void unregisterName(const Value* value);

  std::string name_;
  std::vector<std::unique_ptr<Value>> ownedValues_;  // inputs and constants
  std::vector<Value*> inputs_;
  std::vector<Value*> constants_;
  std::vector<GraphOutput> outputs_;
  std::list<std::unique_ptr<Op>> ops_;
  std::unordered_map<std::string, Value*> names_;
  uint64_t nextId_ = 0;
};

}  // namespace kiln::ir
