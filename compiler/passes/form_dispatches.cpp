// Dispatch formation: turns the optimised graph into the skeleton of the dispatch graph.
//  - Every op with the kView trait (Reshape, Flatten, Squeeze, Unsqueeze, Identity) becomes
//    a view: its result shares the bytes of its operand's storage; no kernel.
//  - Every other op becomes one dispatch (root op, no fused ops yet) whose bindings are its
//    present non-static operands, then its results (order documented in dispatch_graph.h).
//  - Graph outputs: the dispatch producing an output's storage writes straight into the
//    caller's output buffer, except when that is impossible — the output is a constant
//    (FILL if all its bytes are equal, else COPY from the constants), a graph input or a
//    view of one (COPY), or the same storage as an earlier output (COPY from that output).
//  - Constants read by dispatches or copies go into the constants list.
// Assumes a verified graph after constant folding; a static operand (shape, axes...) that is
// still not a constant is a user error: kiln needs static shapes.
#include <algorithm>

#include "kiln/ir/constant_data.h"
#include "kiln/ir/printer.h"
#include "kiln/passes/passes.h"
#include "kiln/support/diagnostics.h"

namespace kiln::passes {
namespace {

std::string dispatchName(const ir::Op& op, size_t id) {
  if (!op.source().nodeName.empty()) return op.source().nodeName;
  return std::string(op.kindName()) + "_" + std::to_string(id);
}

void checkStaticOperands(const ir::Op& op) {
  for (size_t i = 0; i < op.numOperands(); ++i) {
    const ir::Value* v = op.operand(i);
    if (!v || !op.info().isStaticOperand(i) || v->isConstant()) continue;
    std::string what = op.describe() + ": operand " + std::to_string(i) + " (" +
                       ir::valueRef(v->name()) + ") must be a compile-time constant, but it ";
    if (v->isInput())
      throw CompileError(what + "is the graph input '" + v->name() +
                         "', whose contents are known only at run time; kiln needs static shapes");
    throw CompileError(what +
                       "is computed at run time; kiln needs static shapes (fix the input "
                       "shapes with --input-shape)");
  }
}

}  // namespace

ir::DispatchGraph formDispatches(std::unique_ptr<ir::Graph> graph) {
  ir::DispatchGraph dg;
  for (const ir::Value* in : graph->inputs()) dg.inputs.push_back({in->name(), in->type(), in});
  for (const ir::GraphOutput& out : graph->outputs())
    dg.outputs.push_back({out.name, out.value->type(), out.value});

  auto useConstant = [&](const ir::Value* v) {
    if (dg.constantId(v) >= 0) return;
    dg.constants.push_back(ir::ConstantEntry{v, v->constantBytes(), 0});
  };

  for (const auto& owned : graph->ops()) {
    const ir::Op& op = *owned;
    checkStaticOperands(op);
    if (op.info().hasTrait(ir::kView)) {
      dg.viewRoot[op.result()] = dg.storageOf(op.operand(0));
      continue;
    }
    ir::Dispatch d;
    d.id = uint32_t(dg.dispatches.size());
    d.name = dispatchName(op, d.id);
    d.root = &op;
    for (size_t i = 0; i < op.numOperands(); ++i) {
      const ir::Value* v = op.operand(i);
      if (!v || op.info().isStaticOperand(i)) continue;
      if (dg.storageOf(v)->isConstant()) useConstant(dg.storageOf(v));
      ir::Binding b;
      b.value = v;
      b.access = ir::kRead;
      b.operandIndex = int(i);
      d.bindings.push_back(b);
    }
    for (size_t i = 0; i < op.numResults(); ++i) {
      ir::Binding b;
      b.value = op.result(i);
      b.access = ir::kWrite;
      b.resultIndex = int(i);
      d.bindings.push_back(b);
    }
    KILN_ASSERT(d.bindings.size() <= 32,
                "dispatch " + d.name + " has more than KILN_MAX_BINDINGS bindings");
    dg.dispatches.push_back(std::move(d));
  }

  // Outputs: direct writes where possible, COPY/FILL steps otherwise.
  std::unordered_map<const ir::Value*, uint32_t> outputOfStorage;
  for (uint32_t i = 0; i < dg.outputs.size(); ++i) {
    const ir::Value* value = dg.outputs[i].value;
    const ir::Value* storage = dg.storageOf(value);
    ir::Step step;
    step.dstValue = value;
    step.outputIndex = i;
    if (storage->kind() == ir::ValueKind::OpResult && !outputOfStorage.count(storage)) {
      outputOfStorage[storage] = i;  // the producing dispatch writes output i directly
      continue;
    }
    if (storage->isConstant() && ir::isSplatConstant(storage) &&
        !storage->constantBytes().empty() &&
        std::all_of(storage->constantBytes().begin(), storage->constantBytes().end(),
                    [&](uint8_t b) { return b == storage->constantBytes()[0]; })) {
      step.kind = ir::StepKind::Fill;
      step.fillByte = storage->constantBytes()[0];
    } else {
      step.kind = ir::StepKind::Copy;
      step.srcValue = value;
      if (storage->isConstant()) useConstant(storage);
    }
    dg.steps.push_back(step);
  }
  for (auto [storage, index] : outputOfStorage) {
    ir::BufferRef ref;
    ref.space = ir::Space::Output;
    ref.index = index;
    ref.length = storage->type().byteSize();
    dg.placement[storage] = ref;
  }
  ir::layoutConstants(dg);
  dg.graph = std::move(graph);
  return dg;
}

}  // namespace kiln::passes
