// The dispatch graph: what the passes hand to codegen and to the artifact writer.
//
// Each Dispatch becomes one kernel (one LLVM function): a root op plus a chain of fused
// elementwise ops applied to its result, and its bindings — byte ranges in one of four memory
// spaces, in a fixed order. Steps are the command stream: DISPATCH / COPY / FILL grouped into
// stages; all steps of one stage are mutually independent and a barrier separates consecutive
// stages.
//
// Binding order (fixed, codegen relies on it): the root op's operands in operand order,
// skipping absent optional operands and static operands (OpInfo::isStaticOperand: shapes,
// axes, pads... that codegen reads from the IR constants); then, for a fused dispatch, the
// extra operands of the fused ops (fused[0]'s operands in operand order, then fused[1]'s...,
// skipping the chain value itself, absent and static operands; Binding::fusedOp says which
// fused op); then the results: the root op's results in order, or for a fused dispatch the
// single result of the last fused op (the chain's intermediate values are never stored).
// Each binding carries the IR value, so codegen reads dtype and shape from
// binding.value->type() and the op's attributes from root->attrs().
//
// Produced by passes/: formDispatches (dispatches, views, copies), fuseElementwise and
// fuseGemmChains (fused chains), scheduleDispatches
// (stages, steps) and planMemory (BufferRefs, arena size, constants layout, aliases).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kiln/ir/graph.h"

namespace kiln::ir {

// Memory spaces, as in the artifact (KILN_SPACE_ARENA, _CONSTANTS, _INPUT(i), _OUTPUT(i)).
enum class Space : uint8_t { Arena, Constants, Input, Output };

// A byte range in a memory space.
struct BufferRef {
  Space space = Space::Arena;
  // Input/Output: the graph input/output number. Constants: the constant's id (index into
  // DispatchGraph::constants). Arena: 0.
  uint32_t index = 0;
  // Byte offset inside the space: the arena offset; inside the input/output buffer; inside
  // the constant (add DispatchGraph::constants[index].offset for the blob offset).
  uint64_t offset = 0;
  uint64_t length = 0;
  bool operator==(const BufferRef&) const = default;
};

// Access flags, as KILN_ACCESS_READ / KILN_ACCESS_WRITE.
enum Access : uint8_t { kRead = 1, kWrite = 2 };

struct Binding {
  // The bound IR value: its type() is the binding's tensor type. Null only for a kernel's work
  // queues, which codegen adds after planning (codegen/work_queue.h): no tensor.
  const Value* value = nullptr;
  uint8_t access = kRead;        // Access bits
  BufferRef ref;                 // filled by planMemory
  int operandIndex = -1;         // root operand index, or -1 for a result or a fused operand
  int resultIndex = -1;          // result index (the chain's result: 0), or -1 for an operand
  int fusedOp = -1;              // extra operand of fused[fusedOp], else -1
};

struct Dispatch {
  uint32_t id = 0;   // index in DispatchGraph::dispatches
  std::string name;  // for DEBUG and traces: the source node's name, else "<Kind>_<id>"
  const Op* root = nullptr;
  // Fused ops, in order: fused[0] consumes the root's result, fused[i] the result of
  // fused[i - 1] (each of those values has no other use). Elementwise ops (fuseElementwise);
  // over a Gemm/MatMul root the last one may be a second Gemm/MatMul reading the chain value
  // as its A operand (fuseGemmChains).
  std::vector<const Op*> fused;
  std::vector<Binding> bindings;
  // Pairs (read binding, write binding) whose bytes coincide: the result is written in place
  // over an operand that dies here. Codegen must not mark these two pointers noalias.
  std::vector<std::pair<uint32_t, uint32_t>> aliases;
  uint32_t stage = 0;
};

enum class StepKind : uint8_t { Dispatch, Copy, Fill };

struct Step {
  StepKind kind = StepKind::Dispatch;
  uint32_t stage = 0;
  uint32_t dispatch = 0;            // Dispatch: index into DispatchGraph::dispatches
  BufferRef src;                    // Copy: source bytes
  BufferRef dst;                    // Copy, Fill: destination bytes
  uint8_t fillByte = 0;             // Fill: every destination byte gets this value
  const Value* srcValue = nullptr;  // Copy: the value read (planMemory resolves src)
  const Value* dstValue = nullptr;  // Copy, Fill: the value written (an output's value)
  uint32_t outputIndex = 0;         // Copy, Fill: the graph output written
};

struct ConstantEntry {
  const Value* value = nullptr;  // the IR constant
  std::vector<uint8_t> bytes;    // contents (codegen may repack them: then call layoutConstants)
  uint64_t offset = 0;           // 64-byte aligned offset in the constants blob
};

struct IoTensor {
  std::string name;
  TensorType type;
  const Value* value = nullptr;
};

struct MemoryStats {
  uint64_t naiveBytes = 0;  // every arena tensor in its own 64-byte aligned slot
  uint64_t lowerBound = 0;  // largest sum of live (aligned) arena bytes at any stage
  uint64_t arenaBytes = 0;  // planned arena size
};

struct DispatchGraph {
  std::unique_ptr<Graph> graph;  // the final IR; dispatches and bindings point into it
  std::vector<IoTensor> inputs;
  std::vector<IoTensor> outputs;
  std::vector<ConstantEntry> constants;
  uint64_t constantsSize = 0;        // blob size (sum of aligned entries)
  std::vector<Dispatch> dispatches;  // in schedule order (stage, then topological order)
  std::vector<Step> steps;           // command stream order; stage numbers never decrease
  uint32_t numStages = 0;
  uint64_t arenaSize = 0;
  MemoryStats memory;

  // Storage: every value that is a view (kView op result, contiguous Split/Slice result,
  // in-place Concat operand) maps to the value that owns its bytes (never itself a view).
  // Filled by formDispatches.
  std::unordered_map<const Value*, const Value*> viewRoot;
  // Byte offset of a view inside its storage (absent: 0). Views of Reshape-like ops start at
  // 0; a contiguous Split/Slice result or an operand written in place into a Concat's result
  // starts where its bytes lie.
  std::unordered_map<const Value*, uint64_t> viewOffset;
  // Where each value's bytes live (inputs, constants, arena tensors, outputs, views).
  std::unordered_map<const Value*, BufferRef> placement;

  // The value owning `value`'s bytes (value itself unless it is a view).
  const Value* storageOf(const Value* value) const;
  // Byte offset of `value` inside storageOf(value).
  uint64_t viewOffsetOf(const Value* value) const;
  // The constant id of a constant value, or -1.
  int constantId(const Value* value) const;
  // Offset of `ref` inside its space as the artifact sees it (constants: blob offset).
  uint64_t spaceOffset(const BufferRef& ref) const;
};

// Assigns 64-byte aligned offsets to `constants` in order and sets constantsSize.
void layoutConstants(DispatchGraph& graph);

// Human-readable listing (stages, steps, bindings, arena), used by tests and debugging.
std::string printDispatchGraph(const DispatchGraph& graph);
std::string bufferRefToString(const BufferRef& ref);

}  // namespace kiln::ir
