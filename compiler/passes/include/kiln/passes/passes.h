// The compiler's passes, one per file in compiler/passes/. pipeline.h runs them in order.
//
// Graph passes rewrite an ir::Graph in place and return true if they changed it. They assume
// a verified graph and leave it verified. The dispatch passes then turn the graph into an
// ir::DispatchGraph (kiln/ir/dispatch_graph.h): formDispatches -> scheduleDispatches ->
// planMemory, each filling in more of it.
#pragma once

#include <functional>

#include <memory>

#include "kiln/ir/dispatch_graph.h"
#include "kiln/ir/graph.h"

namespace kiln::passes {

// dce.cpp: erases ops whose results are unused and not graph outputs, then unused constants.
bool eliminateDeadCode(ir::Graph& graph);

// canonicalize.cpp: removes Identity and inference Dropout, no-op Reshape/Flatten/Squeeze/
// Unsqueeze/Transpose/Cast/Expand/Slice/Pad/Concat, and turns auto_pad into explicit pads.
bool canonicalize(ir::Graph& graph);

// fold_constants.cpp: evaluates ops whose operands are all constants (shape sub-graphs:
// Shape, Gather, Unsqueeze, Concat, ConstantOfShape, Range, small integer arithmetic...;
// also Transpose/Reshape/Cast of weights) and replaces them by constants.
bool foldConstants(ir::Graph& graph);

// fold_batchnorm.cpp: folds BatchNormalization with constant parameters into a preceding
// Conv/Gemm with constant weights (if that op's result has no other use), else rewrites it
// as Mul + Add by per-channel constants.
bool foldBatchNorm(ir::Graph& graph);

// conv_transpose_as_conv.cpp: a 2-D ConvTranspose with constant f32 weights, groups 1,
// dilation 1, a kernel and an output that are multiples of the stride, becomes a stride-1
// Conv computing every stride phase as channels, then a depth-to-space (Reshape, Transpose,
// Reshape) that interleaves them.
bool convTransposeAsConv(ir::Graph& graph);

// trim_conv_taps.cpp: a 2-D Conv with constant weights loses the kernel rows and columns
// that read only padding at every output position (a 3x3 kernel with pad 1 on a 1x1 map keeps
// its centre tap), its pads reduced so that the output stays the same.
bool trimConvTaps(ir::Graph& graph);

// form_dispatches.cpp: one dispatch per remaining compute op, view ops (Reshape, Flatten,
// Squeeze, Unsqueeze) share their input's storage, COPY/FILL steps for outputs that the
// producing dispatch cannot write directly, constants list. Takes ownership of the graph.
// Throws CompileError if a static operand is still not a constant.
ir::DispatchGraph formDispatches(std::unique_ptr<ir::Graph> graph);

// fuse_elementwise.cpp: moves elementwise consumers (activations, bias/scale, residual
// Add...) into the dispatch of their producer (Conv, Gemm/MatMul, pools, elementwise ops)
// when the producer's result has no other use; the fused ops' other operands become extra
// bindings. Runs after formDispatches, before scheduleDispatches.
void fuseElementwise(ir::DispatchGraph& graph);

// fuse_gemm_chain.cpp: a Gemm/MatMul with constant weights whose input is the result of
// another (fused) Gemm/MatMul joins that dispatch (an MLP head in one kernel). After
// fuseElementwise.
void fuseGemmChains(ir::DispatchGraph& graph);

// fuse_expand_depthwise.cpp: a depthwise convolution whose input is the result of a (fused)
// 1x1 convolution larger than L2 joins that dispatch (MobileNet's expand -> depthwise); the
// kernel computes the expanded rows into a stack buffer. For an artifact that `threads` >= 2
// threads will run, smaller expanded tensors too (the fused kernel keeps each thread on its
// rows). After fuseElementwise.
void fuseExpandDepthwise(ir::DispatchGraph& graph, uint32_t threads = 1);

// fuse_conv_pool.cpp: a MaxPool whose input is the result of a (fused) convolution joins
// that dispatch; the kernel pools each band of convolution rows before it is stored. After
// fuseElementwise.
void fuseConvPools(ir::DispatchGraph& graph);

// schedule.cpp: stages (a dispatch goes in the stage after its last producer), dispatches
// reordered by (stage, topological order), the step list with a barrier between stages.
void scheduleDispatches(ir::DispatchGraph& graph);

struct MemoryPlanOptions {
  // Let an elementwise dispatch write its result over an operand that dies there (recorded
  // in Dispatch::aliases). The operand and the result then start at the same arena byte,
  // the one kind of overlap the runtime's load-time validation accepts within a command.
  bool inPlace = true;
  // Tensors whose lifetimes do not overlap share bytes (best fit) only if this gives them the
  // same class (empty: one class for all). Artifacts compiled for several threads give each
  // row-group layout its own class, so that no arena byte passes between tensors whose rows
  // different threads own (docs/benchmarks.md, "Halo rows").
  std::function<uint64_t(const ir::Value*)> shareClass;
};

// plan_memory.cpp: lifetimes in stages, optional in-place elementwise writes over dying
// operands, best-fit arena offsets (64-byte aligned), BufferRefs of every binding and step,
// stats.
void planMemory(ir::DispatchGraph& graph, const MemoryPlanOptions& options = {});

}  // namespace kiln::passes
