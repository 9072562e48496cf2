// The IR verifier (see verifier.h for the list of checks).
#include "kiln/ir/verifier.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "kiln/ir/graph.h"
#include "kiln/ir/op_rules.h"
#include "kiln/ir/printer.h"
#include "kiln/support/diagnostics.h"

namespace kiln::ir {
namespace {

[[noreturn]] void fail(const std::string& message) {
  throw CompileError("IR verifier: " + message);
}

class Verifier {
 public:
  explicit Verifier(const Graph& graph) : graph_(graph) {}

  void run() {
    for (Value* v : graph_.inputs()) define(v, "graph input");
    for (Value* c : graph_.constants()) {
      define(c, "constant");
      if (c->constantBytes().size() != c->type().byteSize())
        fail("constant " + valueRef(c->name()) + " has " +
             std::to_string(c->constantBytes().size()) + " bytes, its type " +
             c->type().toString() + " needs " + std::to_string(c->type().byteSize()));
    }
    for (const auto& owned : graph_.ops()) verifyOp(*owned);
    std::unordered_set<std::string> outputNames;
    for (const GraphOutput& out : graph_.outputs()) {
      if (!defined_.count(out.value))
        fail("output \"" + out.name + "\" refers to " + valueRef(out.value->name()) +
             ", which is not defined in the graph");
      if (!outputNames.insert(out.name).second)
        fail("output name \"" + out.name + "\" is used twice");
    }
    for (const auto& [value, count] : useCounts_) {
      if (value->users().size() != count)
        fail("use list of " + valueRef(value->name()) + " is out of date");
    }
  }

 private:
  void define(const Value* v, const char* what) {
    if (!names_.insert(v->name()).second)
      fail(std::string(what) + " " + valueRef(v->name()) + " redefines a name");
    defined_.insert(v);
    useCounts_[v] = 0;
    checkQuant(v);
  }

  void checkQuant(const Value* v) {
    const auto& q = v->type().quant;
    if (!q) return;
    size_t expected = 1;
    if (q->perChannel()) {
      if (q->axis >= v->type().rank())
        fail("quantization axis of " + valueRef(v->name()) + " is out of range");
      expected = size_t(v->type().shape[size_t(q->axis)]);
    }
    if (q->scales.size() != expected || q->zeroPoints.size() != expected)
      fail(valueRef(v->name()) + " has " + std::to_string(q->scales.size()) + " scales and " +
           std::to_string(q->zeroPoints.size()) + " zero points, expected " +
           std::to_string(expected));
  }

  void verifyOp(const Op& op) {
    std::string where = " in " + op.describe();
    for (size_t i = 0; i < op.numOperands(); ++i) {
      const Value* v = op.operand(i);
      if (!v) continue;
      if (!defined_.count(v))
        fail("operand " + std::to_string(i) + " " + valueRef(v->name()) + where +
             " is not defined before its use");
      ++useCounts_[v];
    }
    RuleResult inferred;
    try {
      inferred = inferResultTypes(RuleInput{op.kind(), op.operands(), op.attrs(), op.numResults()});
    } catch (const CompileError& e) {
      fail(std::string(op.kindName()) + where + ": " + e.what());
    }
    for (size_t i = 0; i < op.numResults(); ++i) {
      const Value* r = op.result(i);
      if (r->definingOp() != &op || r->resultIndex() != int(i)) fail("result links broken" + where);
      const auto& t = inferred.types[i];
      if (t && !t->sameShapeAndDType(r->type()))
        fail("result " + valueRef(r->name()) + where + " has type " + r->type().toString() +
             ", the op produces " + t->toString());
      define(r, "result");
    }
  }

  const Graph& graph_;
  std::unordered_set<std::string> names_;
  std::unordered_set<const Value*> defined_;
  std::unordered_map<const Value*, size_t> useCounts_;
};

}  // namespace

void verifyGraph(const Graph& graph) { Verifier(graph).run(); }

}  // namespace kiln::ir
