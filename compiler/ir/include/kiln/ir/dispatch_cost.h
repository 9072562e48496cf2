// The arithmetic cost of a dispatch: 2 x multiply-accumulates for float Conv, ConvTranspose,
// Gemm and MatMul (plus a Gemm/MatMul or a depthwise Conv fused behind them), 2 x integer
// MACs for the quantized conv / fully-connected ops, elements processed for elementwise,
// pooling, reduction and normalization roots, and nothing for pure data movement. Fused
// elementwise epilogues are not counted (one op per output element, noise next to a conv).
// The artifact's DEBUG cost table records it (kiln/emit/dispatch_cost.h); the scheduler
// orders a stage's dispatches by it.
#pragma once

#include <cstdint>

#include "kiln/ir/dispatch_graph.h"

namespace kiln::ir {

enum class CostKind { None, Flops, IntOps, Elements };

struct DispatchCost {
  CostKind kind = CostKind::None;
  uint64_t count = 0;
};

DispatchCost dispatchCost(const Dispatch& dispatch);

}  // namespace kiln::ir
