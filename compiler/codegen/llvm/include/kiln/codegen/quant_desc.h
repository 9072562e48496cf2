// The quantized kernels' part of a KernelDesc (KernelKind::Quantized): which integer op, and
// every compile-time quantity its TFLite reference semantics need — zero points, the
// fixed-point multipliers and shifts already derived from the scales (dispatch lowering does
// that with kiln/ir/quant_math.h), activation clamps and lookup tables. LLVM-free.
// Formulas: docs/quantization.md. Layout NHWC; windows use KernelDesc's kernelShape,
// strides, dilations, pads and groups.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::codegen {

struct KernelDesc;

enum class QuantOp : uint8_t {
  Conv,            // inputs x [N,H,W,C], w [OC,KH,KW,C/g], bias? ; output [N,OH,OW,OC]
  DepthwiseConv,   // inputs x [N,H,W,C], w [1,KH,KW,C*M], bias? ; output [N,OH,OW,C*M]
  TransposeConv,   // inputs x [N,H,W,IC], w [OC,KH,KW,IC], bias? ; output [N,OH,OW,OC]
  FullyConnected,  // inputs x [B,K], w [N,K], bias? ; output [B,N]
  Add,             // inputs a, b (broadcast)
  Sub,
  Mul,
  AveragePool,  // input x [N,H,W,C]; kernelShape, strides, pads
  MaxPool,
  Softmax,     // last axis; `table` = exp of -d for d in [0, 256) (Q0.31, 0 below diff_min)
  LeakyRelu,   // multipliers/shifts: [identity, alpha]
  Lookup,      // i8 -> i8 through `table` (256 entries, index x + 128)
  Quantize,    // f32 -> int: round(x / scale) + zp
  Dequantize,  // int -> f32: (x - zp) * scale
  Requantize,  // int -> int: MBQM(x - zx, m, s) + zy
  Mean,        // over KernelDesc::axes: integer division (same parameters) or float rescale
};

struct QuantDesc {
  QuantOp op = QuantOp::Conv;
  int32_t inputZeroPoint = 0;
  int32_t input2ZeroPoint = 0;  // Add/Sub/Mul: second operand
  int32_t weightZeroPoint = 0;  // FullyConnected (per tensor)
  int32_t outputZeroPoint = 0;
  int32_t actMin = 0, actMax = 0;  // clamp of the result (already within its dtype)
  // Output rescale: one entry, or one per output channel (Conv, DepthwiseConv,
  // TransposeConv, FullyConnected). TFLite convention: real = m * 2^(shift - 31).
  std::vector<int32_t> multipliers;
  std::vector<int32_t> shifts;
  // Add/Sub: the two input rescales and the left shift (20 for i8, 15 for i16).
  int32_t input1Multiplier = 0, input1Shift = 0;
  int32_t input2Multiplier = 0, input2Shift = 0;
  int32_t leftShift = 0;
  std::vector<int32_t> table;  // Softmax / Lookup
  // Conv / DepthwiseConv / FullyConnected with constant weights and i8 input: per output
  // channel -zx * (sum of all its weights - zw), so the inner loop accumulates w * x only;
  // taps skipped at the image border add back zx * (their weights) at run time. Empty:
  // the inner loop subtracts the zero point itself.
  std::vector<int32_t> zeroPointCorrection;
  // The bias constant already holds zeroPointCorrection (foldZeroPointCorrections): the
  // accumulators start at the bias alone, with the corrected semantics above (no table).
  bool correctionInBias = false;
  float scale = 1.0f;          // Quantize: output scale; Dequantize: input scale; Mean: sx / sy
  bool sameParameters = false;  // Mean: input and result quantization equal

  // Canonical text of the quantized fields and the window of `desc` (part of its key()).
  static std::string key(const KernelDesc& desc);
};

// Checks a quantized kernel description (called by verifyKernel). Throws CompileError.
void verifyQuantKernel(const KernelDesc& desc);

}  // namespace kiln::codegen
