// Zero-point corrections folded into the bias constants, for microcontrollers. LLVM-free.
//
// An int8 convolution or fully connected layer with constant weights carries a per-channel
// zero-point correction, -zx * sum(w) (QuantDesc::zeroPointCorrection), at which its
// accumulators start so that the inner loops multiply x, not x - zx. The kernels keep it as a
// table in the kernel object. Where the layer also has a constant int32 bias that it alone
// reads, the correction can be added to the bias instead: one table less in flash (on
// Cortex-M33 VWW's kernels and tables 51.3 -> 39.2 KB), one load less per block. The kernels
// then start at the bias alone (QuantDesc::correctionInBias) with the corrected semantics
// (taps outside the image add zx * w back), whichever kernel runs the layer (the DSP or RV32
// blocks, the microcontroller depthwise kernel or the plain loops). For microcontroller
// targets not compiled with --optimize=size (whose plain loops subtract zx per tap and keep no
// table); wrapping int32 addition, as every kernel sums.
#pragma once

#include <vector>

#include "kiln/codegen/kernel_desc.h"
#include "kiln/codegen/target_config.h"
#include "kiln/ir/dispatch_graph.h"

namespace kiln::codegen {

// Folds the corrections of `kernels` (the descriptions of graph's dispatches) into their bias
// constants where the target is a microcontroller; returns how many layers it folded.
int foldZeroPointCorrections(ir::DispatchGraph& graph, std::vector<KernelDesc>& kernels,
                             const TargetConfig& target);

}  // namespace kiln::codegen
