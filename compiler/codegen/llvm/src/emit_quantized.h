// Private interface of the quantized kernel emitters (emit_quantized_*.cpp): the
// fixed-point primitives as LLVM IR (TFLite reference semantics, docs/quantization.md) and
// the per-family emitters that emitQuantized dispatches to. All integer arithmetic is i32
// with i64 products; no 64-bit division anywhere (32-bit targets need no library routine).
#pragma once

#include <cstdint>
#include <vector>

#include "kernel_builder.h"

namespace kiln::codegen::detail {

// ---- fixed-point primitives (i32 values unless noted) --------------------------------------
llvm::Value* qConst(KernelBuilder& kb, int32_t value);  // i32 constant
// SaturatingRoundingDoublingHighMul(a, b).
llvm::Value* qSrdhm(KernelBuilder& kb, llvm::Value* a, llvm::Value* b);
// RoundingDivideByPOT(x, exponent), 0 <= exponent <= 31 (i32, may be a run-time value).
llvm::Value* qRoundingDivideByPOT(KernelBuilder& kb, llvm::Value* x, llvm::Value* exponent);
// MultiplyByQuantizedMultiplier(x, m, shift) for i32 x (shift may be a run-time value).
llvm::Value* qMultiply(KernelBuilder& kb, llvm::Value* x, llvm::Value* m, llvm::Value* shift);
// The 64-bit version (x is i64): ((x * round(m / 2^16)) + 2^(14 - shift)) >> (15 - shift).
llvm::Value* qMultiply64(KernelBuilder& kb, llvm::Value* x, llvm::Value* m, llvm::Value* shift);
// What a kernel's constant multipliers and shifts allow (qMultiplyLanes leaves out what they
// rule out): a multiplier of INT32_MIN (SRDHM's one saturating case), positive shifts.
struct QRescaleRange {
  bool minMultiplier = true;
  bool leftShifts = true;
};
QRescaleRange qRescaleRange(const QuantDesc& q);  // from q.multipliers and q.shifts
// qMultiply lane by lane on <n x i32> x, m and shift (the vectorised kernels' rescale), for
// m and shift within `range` (also on i32 scalars; on targets without vector registers a
// vector is rescaled one lane at a time).
llvm::Value* qMultiplyLanes(KernelBuilder& kb, llvm::Value* x, llvm::Value* m, llvm::Value* shift,
                            QRescaleRange range = {});
// gemmlowp SaturatingRoundingMultiplyByPOT with a constant exponent.
llvm::Value* qSaturatingMultiplyByPOT(KernelBuilder& kb, llvm::Value* x, int exponent);
// gemmlowp one_over_one_plus_x_for_x_in_0_1 (Q0.31 in and out).
llvm::Value* qOneOverOnePlusX(KernelBuilder& kb, llvm::Value* a);
// min(max(v, lo), hi) on i32.
llvm::Value* qClamp(KernelBuilder& kb, llvm::Value* v, int32_t lo, int32_t hi);
// min(max(v, lo), hi) on every lane of an <n x i32>.
llvm::Value* qClampLanes(KernelBuilder& kb, llvm::Value* v, int32_t lo, int32_t hi);
// 0 <= pos < size for an index-typed position (a tap's row or column inside the image).
llvm::Value* qInside(KernelBuilder& kb, llvm::Value* pos, int64_t size);
// std::round (half away from zero) of an f32 to i32; |x| beyond 2^30 saturates there.
llvm::Value* qRoundToInt(KernelBuilder& kb, llvm::Value* x);

// A constant i32 table in the module (internal) and a load of entry `index` (index type).
llvm::Value* qTable(KernelBuilder& kb, const std::vector<int32_t>& values, const char* name);
llvm::Value* qTableLoad(KernelBuilder& kb, llvm::Value* table, llvm::Value* index);
// The per-channel shifts (-31 ... 30) as a table of bytes, and the i32 shift of entry `index`
// (lanes 0), or <lanes x i32> of the entries from `index`.
llvm::Value* qShiftTable(KernelBuilder& kb, const std::vector<int32_t>& shifts);
llvm::Value* qShiftLoad(KernelBuilder& kb, llvm::Value* table, llvm::Value* index,
                        unsigned lanes = 0);

// Sign-extends an integer element to i32 (i8/i16/i32 loads).
llvm::Value* qToI32(KernelBuilder& kb, llvm::Value* v);

// ---- NHWC window geometry (emit_quantized_conv.cpp) -----------------------------------------
// The shapes of a quantized convolution or pool: input [N, H, W, C], output [N, OH, OW, OC], a
// KH x KW window with its strides, dilations and begin pads (top, left) from the descriptor.
struct QWindowShape {
  int64_t N = 1, H = 1, W = 1, C = 1;
  int64_t OH = 1, OW = 1, OC = 1;
  int64_t KH = 1, KW = 1;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t pt = 0, pl = 0;
};
// A convolution's (the window from the weights [OC, KH, KW, IC]).
QWindowShape qConvShape(const KernelDesc& d);
// Where output row `row` (n * OH + oh, a work item of the window kernels) reads: the first
// element of image n and the input row of its window's top taps (oh * sh - pad top).
struct QOutputRow {
  llvm::Value* xBatch = nullptr;
  llvm::Value* ihStart = nullptr;
};
QOutputRow qOutputRow(KernelBuilder& kb, const QWindowShape& g, llvm::Value* row);
// A pool's (the window from the descriptor's kernel shape).
QWindowShape qPoolShape(const KernelDesc& d);

// ---- conv / fully connected output (emit_quantized_conv.cpp) --------------------------------
// The per-channel multipliers (i32) and shifts (bytes: qShiftLoad) as tables (nullptr: one
// constant for every channel).
struct QRescale {
  llvm::Value* multipliers = nullptr;
  llvm::Value* shifts = nullptr;
};
QRescale qMakeRescale(KernelBuilder& kb);
// acc (+ bias[channel]) rescaled, + output zero point, clamped, stored as output element `at`
// (`wide`: i64 accumulator and the 64-bit multiply of 16x8 ops).
void qStoreConvOutput(KernelBuilder& kb, const QRescale& r, llvm::Value* acc, llvm::Value* channel,
                      llvm::Value* at, bool wide);

// ---- families ---------------------------------------------------------------------------
uint32_t emitQuantizedConv(KernelBuilder& kb);            // Conv, DepthwiseConv, TransposeConv
uint32_t emitQuantizedFullyConnected(KernelBuilder& kb);  // emit_quantized_conv.cpp
uint32_t emitQuantizedPool(KernelBuilder& kb);            // emit_quantized_pool.cpp
uint32_t emitQuantizedSoftmax(KernelBuilder& kb);         // emit_quantized_pool.cpp
uint32_t emitQuantizedMean(KernelBuilder& kb);            // emit_quantized_pool.cpp
uint32_t emitQuantizedElementwise(KernelBuilder& kb);     // the rest
// Conv (group 1) and FullyConnected with int8 activations on the target's dot-product
// instructions (EmitTarget::int8Dot), bit exact with the plain loops; emit_quantized_dot.cpp.
bool quantizedDotApplies(KernelBuilder& kb);
uint32_t emitQuantizedConvDot(KernelBuilder& kb);
uint32_t emitQuantizedFullyConnectedDot(KernelBuilder& kb);
// Conv (group 1, int8) whose weights packConvWeights packed in blocks of output channels
// (ConvWeights::Int8OcBlocks), output channels in vector lanes; emit_quantized_conv_oc.cpp.
uint32_t emitQuantizedConvOc(KernelBuilder& kb);
// Int8 depthwise convolutions (depth multiplier 1) vectorised over the channels on targets
// with vector registers; emit_quantized_depthwise.cpp.
bool quantizedDepthwiseByChannelsApplies(KernelBuilder& kb);
uint32_t emitQuantizedDepthwiseByChannels(KernelBuilder& kb);
// The same on microcontrollers: four channels in registers (the Arm DSP extension's SXTB16 and
// SMLABB/SMLATT on Cortex-M4/M7/M33, byte loads and multiply-adds on RV32);
// emit_quantized_depthwise_mcu.cpp.
bool quantizedDepthwiseMcuApplies(KernelBuilder& kb);
uint32_t emitQuantizedDepthwiseMcu(KernelBuilder& kb);
// Conv (group 1, int8) with too few input channels for those: vectorised over the output
// channels, per pixel, on the same targets; emit_quantized_conv_pixel.cpp.
bool quantizedConvByPixelApplies(KernelBuilder& kb);
uint32_t emitQuantizedConvByPixel(KernelBuilder& kb);

}  // namespace kiln::codegen::detail
