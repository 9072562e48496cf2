// Value, Op and Graph: ownership, use lists, naming and rewriting primitives.
#include "kiln/ir/graph.h"

#include <algorithm>

#include "kiln/ir/op_rules.h"
#include "kiln/ir/printer.h"
#include "kiln/support/diagnostics.h"

namespace kiln::ir {

// ---- Value ----

const std::vector<uint8_t>& Value::constantBytes() const {
  KILN_ASSERT(isConstant(), "constantBytes() of non-constant %" + name_);
  return bytes_;
}

void Value::setConstantBytes(std::vector<uint8_t> bytes) {
  KILN_ASSERT(isConstant(), "setConstantBytes() of non-constant %" + name_);
  KILN_ASSERT(bytes.size() == type_.byteSize(), "constant %" + name_ + " size mismatch");
  bytes_ = std::move(bytes);
}

void Value::removeUser(Op* op) {
  auto it = std::find(users_.begin(), users_.end(), op);
  KILN_ASSERT(it != users_.end(), "use list of %" + name_ + " lacks a user");
  users_.erase(it);
}

// ---- Op ----

Op::~Op() = default;

void Op::setOperand(size_t i, Value* value) {
  KILN_ASSERT(i < operands_.size(), "operand index out of range");
  if (operands_[i]) operands_[i]->removeUser(this);
  operands_[i] = value;
  if (value) value->addUser(this);
}

std::vector<Value*> Op::results() const {
  std::vector<Value*> out;
  for (const auto& r : results_) out.push_back(r.get());
  return out;
}

std::string Op::describe() const {
  std::string type = source_.opType.empty() ? std::string(kindName()) : source_.opType;
  if (!source_.nodeName.empty()) return "node '" + source_.nodeName + "' (" + type + ")";
  // An unnamed model node (ONNX allows it): named by its first result.
  std::string first = results_.empty() ? std::string("?") : valueRef(results_[0]->name());
  return "op " + first + " (" + type + ")";
}

// ---- Graph ----

Graph::~Graph() {
  // Ops refer to each other's results: drop all uses first, then destroy.
  for (auto& op : ops_) op->operands_.clear();
  ops_.clear();
}

std::string Graph::uniqueName(const std::string& hint) {
  if (hint.empty()) {
    std::string name;
    do name = std::to_string(nextId_++);
    while (names_.count(name));
    return name;
  }
  if (!names_.count(hint)) return hint;
  for (uint64_t i = 1;; ++i) {
    std::string name = hint + "." + std::to_string(i);
    if (!names_.count(name)) return name;
  }
}

Value* Graph::registerValue(std::unique_ptr<Value> owned,
                            std::vector<std::unique_ptr<Value>>* into) {
  Value* v = owned.get();
  names_[v->name_] = v;
  into->push_back(std::move(owned));
  return v;
}

void Graph::unregisterName(const Value* value) {
  auto it = names_.find(value->name());
  if (it != names_.end() && it->second == value) names_.erase(it);
}

Value* Graph::addInput(const std::string& name, TensorType type) {
  if (!name.empty() && names_.count(name))
    throw CompileError("graph input name '" + name + "' is used twice");
  auto v = std::unique_ptr<Value>(new Value(ValueKind::Input, uniqueName(name), std::move(type)));
  Value* raw = registerValue(std::move(v), &ownedValues_);
  inputs_.push_back(raw);
  return raw;
}

Value* Graph::addConstant(const std::string& name, TensorType type, std::vector<uint8_t> bytes) {
  KILN_ASSERT(bytes.size() == type.byteSize(),
              "constant '" + name + "' has " + std::to_string(bytes.size()) + " bytes, type " +
                  type.toString() + " needs " + std::to_string(type.byteSize()));
  auto v =
      std::unique_ptr<Value>(new Value(ValueKind::Constant, uniqueName(name), std::move(type)));
  v->bytes_ = std::move(bytes);
  Value* raw = registerValue(std::move(v), &ownedValues_);
  constants_.push_back(raw);
  return raw;
}

Op* Graph::createOp(OpKind kind, std::vector<Value*> operands, std::vector<TensorType> resultTypes,
                    AttributeMap attrs, SourceInfo source, Op* before,
                    std::vector<std::string> resultNames) {
  KILN_ASSERT(resultNames.empty() || resultNames.size() == resultTypes.size(),
              "createOp: one name per result");
  auto op = std::unique_ptr<Op>(new Op(kind, std::move(attrs), std::move(source)));
  Op* raw = op.get();
  for (Value* v : operands) {
    raw->operands_.push_back(v);
    if (v) v->addUser(raw);
  }
  for (size_t i = 0; i < resultTypes.size(); ++i) {
    std::string name = uniqueName(resultNames.empty() ? std::string() : resultNames[i]);
    auto r =
        std::unique_ptr<Value>(new Value(ValueKind::OpResult, name, std::move(resultTypes[i])));
    r->definingOp_ = raw;
    r->resultIndex_ = int(i);
    names_[name] = r.get();
    raw->results_.push_back(std::move(r));
  }
  auto where = before ? before->position_ : ops_.end();
  raw->position_ = ops_.insert(where, std::move(op));
  return raw;
}

Op* Graph::createOpInferred(OpKind kind, std::vector<Value*> operands, AttributeMap attrs,
                            SourceInfo source, Op* before, size_t numResults) {
  RuleResult inferred = inferResultTypes(RuleInput{kind, operands, attrs, numResults});
  std::vector<TensorType> types;
  for (auto& t : inferred.types) {
    if (!t)
      throw CompileError("cannot infer the result type of " + std::string(opName(kind)) +
                         ": a static operand is not a constant");
    types.push_back(*t);
  }
  return createOp(kind, std::move(operands), std::move(types), std::move(attrs), std::move(source),
                  before);
}

void Graph::addOutput(const std::string& name, Value* value) {
  KILN_ASSERT(value, "addOutput: null value");
  outputs_.push_back(GraphOutput{name, value});
}

void Graph::setOutputValue(size_t index, Value* value) {
  KILN_ASSERT(index < outputs_.size() && value, "setOutputValue: bad output");
  outputs_[index].value = value;
}

void Graph::replaceAllUsesWith(Value* from, Value* to) {
  KILN_ASSERT(from != to, "replaceAllUsesWith: same value");
  std::vector<Op*> users = from->users();
  for (Op* user : users)
    for (size_t i = 0; i < user->operands_.size(); ++i)
      if (user->operands_[i] == from) user->setOperand(i, to);
  for (auto& out : outputs_)
    if (out.value == from) out.value = to;
}

void Graph::eraseOp(Op* op) {
  for (const auto& r : op->results_) {
    KILN_ASSERT(!r->hasUsers() && !isOutput(r.get()),
                "eraseOp: result %" + r->name() + " is still used");
  }
  for (size_t i = 0; i < op->operands_.size(); ++i) op->setOperand(i, nullptr);
  for (const auto& r : op->results_) unregisterName(r.get());
  ops_.erase(op->position_);
}

void Graph::replaceOpWith(Op* op, Value* value) {
  KILN_ASSERT(op->results_.size() == 1, "replaceOpWith: the op must have one result");
  const std::string name = op->results_.front()->name();
  replaceAllUsesWith(op->results_.front().get(), value);
  eraseOp(op);
  renameValue(value, name);
}

void Graph::moveOpBefore(Op* op, Op* before) {
  KILN_ASSERT(op != before, "moveOpBefore: same op");
  auto where = before ? before->position_ : ops_.end();
  ops_.splice(where, ops_, op->position_);
}

void Graph::renameValue(Value* value, const std::string& name) {
  KILN_ASSERT(!name.empty() && !names_.count(name), "renameValue: name '" + name + "' is taken");
  unregisterName(value);
  value->name_ = name;
  names_[name] = value;
}

void Graph::eraseConstant(Value* constant) {
  KILN_ASSERT(constant->isConstant() && !constant->hasUsers() && !isOutput(constant),
              "eraseConstant: %" + constant->name() + " is still used");
  constants_.erase(std::find(constants_.begin(), constants_.end(), constant));
  unregisterName(constant);
  auto it = std::find_if(ownedValues_.begin(), ownedValues_.end(),
                         [&](const auto& p) { return p.get() == constant; });
  ownedValues_.erase(it);
}

size_t Graph::eraseUnusedConstants() {
  std::vector<Value*> dead;
  for (Value* c : constants_)
    if (!c->hasUsers() && !isOutput(c)) dead.push_back(c);
  for (Value* c : dead) eraseConstant(c);
  return dead.size();
}

std::vector<Op*> Graph::opList() const {
  std::vector<Op*> out;
  out.reserve(ops_.size());
  for (const auto& op : ops_) out.push_back(op.get());
  return out;
}

bool Graph::isOutput(const Value* value) const {
  for (const auto& out : outputs_)
    if (out.value == value) return true;
  return false;
}

Value* Graph::findValue(const std::string& name) const {
  auto it = names_.find(name);
  return it == names_.end() ? nullptr : it->second;
}

}  // namespace kiln::ir
