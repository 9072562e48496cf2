// foldZeroPointCorrections: the zero-point corrections added to the bias constants (see
// fold_corrections.h). LLVM-free.
#include "kiln/codegen/fold_corrections.h"

#include <cstring>
#include <map>

#include "constant_reads.h"

namespace kiln::codegen {

int foldZeroPointCorrections(ir::DispatchGraph& graph, std::vector<KernelDesc>& kernels,
                             const TargetConfig& target) {
  if (!target.microcontroller || kernels.size() != graph.dispatches.size()) return 0;
  std::map<uint32_t, int> reads = detail::constantReads(graph);
  int folded = 0;
  for (size_t i = 0; i < kernels.size(); ++i) {
    KernelDesc& desc = kernels[i];
    QuantDesc& q = desc.quant;
    if (desc.kind != KernelKind::Quantized || q.zeroPointCorrection.empty() ||
        q.correctionInBias)
      continue;
    if (q.op != QuantOp::Conv && q.op != QuantOp::DepthwiseConv &&
        q.op != QuantOp::FullyConnected)
      continue;
    // The bias: the dispatch's third operand, an int32 constant only this dispatch reads.
    if (desc.inputs.size() != 3 || desc.epilogue.inputCount != 0 ||
        desc.inputs[2].type != ElemType::I32)
      continue;
    const ir::Binding* bias = detail::soleConstantOperand(graph, i, 2, reads);
    if (!bias) continue;
    ir::ConstantEntry& constant = graph.constants[bias->ref.index];
    const uint64_t bytes = uint64_t(q.zeroPointCorrection.size()) * sizeof(int32_t);
    if (bias->ref.offset != 0 || bias->ref.length != bytes || constant.bytes.size() != bytes)
      continue;
    for (size_t c = 0; c < q.zeroPointCorrection.size(); ++c) {
      uint32_t value = 0;
      std::memcpy(&value, constant.bytes.data() + c * sizeof(value), sizeof(value));
      value += uint32_t(q.zeroPointCorrection[c]);
      std::memcpy(constant.bytes.data() + c * sizeof(value), &value, sizeof(value));
    }
    q.correctionInBias = true;
    ++folded;
  }
  return folded;
}

}  // namespace kiln::codegen
