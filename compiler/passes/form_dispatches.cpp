// Dispatch formation: turns the optimised graph into the skeleton of the dispatch graph.
//  - Every op with the kView trait (Reshape, Flatten, Squeeze, Unsqueeze, Identity) becomes
//    a view: its result shares the bytes of its operand's storage; no kernel.
//  - Contiguous Split and Slice results (each one byte range of the operand) are views
//    with an offset into the operand's storage; no kernel.
//  - Concat in place: when every operand is one contiguous byte range of the result (every
//    dim before the axis is 1) and each operand's storage can move there, each operand's
//    storage becomes a view of the result at its offset, so its producer writes straight
//    into its slice and the Concat needs no kernel. An operand that is a graph input, a
//    constant, a graph output, a part of another tensor, taken by an earlier in-place
//    Concat or given twice keeps the Concat a copying dispatch. Nested Concats chain.
//  - Every other op becomes one dispatch (root op, no fused ops yet) whose bindings are its
//    present non-static operands, then its results (order documented in dispatch_graph.h).
//  - Graph outputs: the dispatch producing an output's storage writes straight into the
//    caller's output buffer, except when that is impossible — the output is a constant
//    (FILL if all its bytes are equal, else COPY from the constants), a graph input or a
//    view of one (COPY), only a part of its storage (COPY), or the same storage as an
//    earlier output (COPY from that output).
//  - Constants read by dispatches or copies go into the constants list.
// Assumes a verified graph after constant folding; a static operand (shape, axes...) that is
// still not a constant is a user error: kiln needs static shapes.
#include <algorithm>

#include "kiln/ir/constant_data.h"
#include "kiln/ir/printer.h"
#include "kiln/passes/passes.h"
#include "kiln/support/diagnostics.h"
#include "view_ranges.h"

namespace kiln::passes {
namespace {

// Makes `view` a view of `of`'s storage, `offset` bytes after where `of` starts.
void addView(ir::DispatchGraph& dg, const ir::Value* view, const ir::Value* of, uint64_t offset) {
  dg.viewRoot[view] = dg.storageOf(of);
  uint64_t total = dg.viewOffsetOf(of) + offset;
  if (total) dg.viewOffset[view] = total;
}

// Moves the storage `part` (and every view of it) into `whole` at `offset`.
void moveStorageInto(ir::DispatchGraph& dg, const ir::Value* part, const ir::Value* whole,
                     uint64_t offset) {
  for (auto& [view, root] : dg.viewRoot)
    if (root == part) {
      root = whole;
      dg.viewOffset[view] = dg.viewOffsetOf(view) + offset;
    }
  dg.viewRoot[part] = whole;
  dg.viewOffset[part] = offset;
}

// Whether every operand of `concat` can be moved into its result (see the file comment).
bool concatInPlace(const ir::DispatchGraph& dg, const ir::Op& concat,
                   const std::vector<const ir::Value*>& outputValues) {
  if (!concatOperandOffsets(concat)) return false;
  std::vector<const ir::Value*> storages;
  for (const ir::Value* v : concat.operands()) {
    const ir::Value* s = dg.storageOf(v);
    if (s->kind() != ir::ValueKind::OpResult || dg.viewOffsetOf(v) != 0 ||
        s->type().byteSize() != v->type().byteSize())
      return false;
    if (std::find(storages.begin(), storages.end(), s) != storages.end()) return false;
    for (const ir::Value* out : outputValues)
      if (dg.storageOf(out) == s) return false;
    storages.push_back(s);
  }
  return true;
}

// The model node's name; for an unnamed node its op type (the model's, which a pass that
// rewrote the op keeps: an unnamed ConvTranspose run as a Conv is "ConvTranspose_0") and the
// dispatch's index.
std::string dispatchName(const ir::Op& op, size_t id) {
  if (!op.source().nodeName.empty()) return op.source().nodeName;
  const std::string kind =
      op.source().opType.empty() ? std::string(op.kindName()) : op.source().opType;
  return kind + "_" + std::to_string(id);
}

void checkStaticOperands(const ir::Op& op) {
  for (size_t i = 0; i < op.numOperands(); ++i) {
    const ir::Value* v = op.operand(i);
    if (!v || !op.info().isStaticOperand(i) || v->isConstant()) continue;
    std::string what = op.describe() + ": operand " + std::to_string(i) + " (" +
                       ir::valueRef(v->name()) + ") must be a compile-time constant, but it ";
    if (v->isInput())
      throw CompileError(
          what + "is the graph input '" + v->name() +
          "', whose contents are known only at run time; kiln needs static shapes: make it a "
          "constant in the model (export with fixed shapes), or give its values when compiling: "
          "--fix-input=" + v->name() + "=@VALUES.npy");
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

  std::vector<const ir::Value*> outputValues;
  for (const ir::IoTensor& out : dg.outputs) outputValues.push_back(out.value);
  for (const auto& owned : graph->ops()) {
    const ir::Op& op = *owned;
    checkStaticOperands(op);
    if (op.info().hasTrait(ir::kView)) {
      addView(dg, op.result(), op.operand(0), 0);
      continue;
    }
    bool partOfStorage = !dg.storageOf(op.operand(0))->isConstant();
    if (op.kind() == ir::OpKind::Split && partOfStorage) {
      if (auto offsets = splitResultOffsets(op)) {
        for (size_t i = 0; i < op.numResults(); ++i)
          addView(dg, op.result(i), op.operand(0), (*offsets)[i]);
        continue;
      }
    }
    if (op.kind() == ir::OpKind::Slice && partOfStorage) {
      if (auto offset = sliceResultOffset(op)) {
        addView(dg, op.result(), op.operand(0), *offset);
        continue;
      }
    }
    if (op.kind() == ir::OpKind::Concat && concatInPlace(dg, op, outputValues)) {
      std::vector<uint64_t> offsets = *concatOperandOffsets(op);
      for (size_t i = 0; i < op.numOperands(); ++i)
        moveStorageInto(dg, dg.storageOf(op.operand(i)), op.result(), offsets[i]);
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
    bool wholeStorage =
        dg.viewOffsetOf(value) == 0 && value->type().byteSize() == storage->type().byteSize();
    if (storage->kind() == ir::ValueKind::OpResult && wholeStorage &&
        !outputOfStorage.count(storage)) {
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
