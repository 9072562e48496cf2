// Internal helpers shared by the dispatch lowering files (dispatch_lowering.cpp for the
// structured ops, lower_elementwise.cpp for elementwise expressions).
#pragma once

#include <string>

#include "kiln/codegen/kernel_desc.h"
#include "kiln/ir/dispatch_graph.h"

namespace kiln::codegen::detail {

// Throws CompileError "<node 'x' (Op)>: <message>".
[[noreturn]] void unsupported(const ir::Op& op, const std::string& message);

ElemType toElemType(const ir::Op& op, ir::DType dtype);
BufferDesc toBuffer(const ir::Op& op, const ir::Value& value);

// Fills desc.expr for an elementwise root op whose desc.inputs/output are set already
// (inputs = the op's runtime operands in order). Returns false if the op is not elementwise.
bool lowerElementwise(const ir::Op& op, KernelDesc& desc);

// Fills desc for a quantized root op (QConv2D ... Requantize, lower_quantized.cpp). Returns
// false if the op is not one of them.
bool lowerQuantized(const ir::Op& op, KernelDesc& desc);

// lower_fused.cpp: lowers dispatch.fused (after the root, with d.inputs = the root's inputs):
// appends the fused operands to d.inputs and extends d.expr (elementwise root) or fills
// d.epilogue's chain (other roots).
void lowerFusedChain(const ir::Dispatch& dispatch, KernelDesc& d);

// Appends `part` (an expression over its own inputs 0..k-1) to `e`, with part's input i
// replaced by node operandNodes[i]. Returns the node holding part's result.
int32_t splice(ElementwiseExpr& e, const ElementwiseExpr& part,
               const std::vector<int32_t>& operandNodes);

// lower_fused_depthwise.cpp: the depthwise Conv dispatch.fused[index] after a convolution's
// chain (fuseExpandDepthwise) and the ops after it: d.tail*, its result as d.output.
void lowerFusedDepthwise(const ir::Dispatch& dispatch, size_t index, KernelDesc& d);

// dispatch_lowering.cpp: a MaxPool fused after a 2-D convolution (fuseConvPools): the pool's
// geometry in d.pool* and d.convOutput, its result as d.output.
void lowerFusedPool(const ir::Op& pool, KernelDesc& d);

}  // namespace kiln::codegen::detail
