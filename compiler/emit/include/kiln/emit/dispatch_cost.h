// The arithmetic cost of a dispatch, as the artifact's DEBUG cost table records it (see
// kiln_debug_cost in kiln/format/artifact.h): 2 x multiply-accumulates for float Conv,
// ConvTranspose, Gemm and MatMul (plus a Gemm/MatMul fused behind them), 2 x integer MACs
// ("ops") for the quantized conv / fully-connected ops, elements processed for elementwise,
// pooling, reduction and normalization roots, and no cost for pure data movement. Fused
// elementwise epilogues are not counted (one op per output element, noise next to a conv).
#pragma once

#include <cstdint>

#include "kiln/format/artifact.h"
#include "kiln/ir/dispatch_graph.h"

namespace kiln::emit {

struct DispatchCost {
  kiln_cost_kind kind = KILN_COST_NONE;
  uint64_t count = 0;
};

DispatchCost dispatchCost(const ir::Dispatch& dispatch);

}  // namespace kiln::emit
