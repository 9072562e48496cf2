// The code generator's own description of one kernel: an op family, its attributes and the
// dtypes/shapes of its bindings. Dispatches of the IR are lowered to this (dispatch_lowering),
// and unit tests build it directly. LLVM-free. Every binding is a dense row-major buffer, except
// 4-D activations stored in row groups (BufferDesc::rowGroups, row_groups.h).
//
// Binding order of a kernel = order of `inputs`, then the output (always the last binding).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kiln/codegen/quant_desc.h"

namespace kiln::codegen {

// F64 kernels: elementwise arithmetic, comparisons, casts, data movement and simple reductions
// (f64_support.cpp refuses the rest, and 32-bit targets).
enum class ElemType : uint8_t { F32, I8, U8, I16, I32, I64, Bool, F64 };

// Size in bytes of one element.
uint32_t elemSize(ElemType type);
const char* elemTypeName(ElemType type);
bool isFloat(ElemType type);

struct BufferDesc {
  BufferDesc() = default;
  BufferDesc(ElemType elemType, std::vector<int64_t> dims = {})
      : type(elemType), shape(std::move(dims)) {}

  ElemType type = ElemType::F32;
  std::vector<int64_t> shape;  // empty = scalar
  // Empty: dense row-major. Else a 4-D [N, C, H, W] tensor stored in groups of rows
  // (kiln/codegen/row_groups.h): the boundaries 0 = b[0] < b[1] < ... < b[G] = H; within each
  // image, group g holds rows [b[g], b[g + 1]) of every channel ([C][rows][W]), the groups one
  // after another. Same elements, same byte size.
  std::vector<int64_t> rowGroups;
  int64_t elementCount() const;
};

// ---- Elementwise expressions: a small SSA list evaluated per output element -------------
enum class ExprOp : uint8_t {
  Input,     // value of input `input`, broadcast (numpy rules) to the output shape
  Constant,  // `alpha`
  Result,    // epilogue chains only: the root's value at this output element
  // unary
  Neg,
  Abs,
  Relu,
  Sigmoid,
  Tanh,
  Exp,
  Log,
  Erf,
  Sqrt,
  Floor,
  Ceil,
  Not,
  LeakyRelu,  // alpha
  Clip,       // min = alpha, max = beta
  Cast,       // to the node's type
  // binary
  Add,
  Sub,
  Mul,
  Div,
  Max,
  Min,
  And,
  Or,
  Xor,  // Bool
  Equal,
  Less,
  Greater,  // result Bool
  // ternary
  Where,  // a ? b : c
};

struct ExprNode {
  ExprOp op = ExprOp::Input;
  ElemType type = ElemType::F32;   // type of the result
  int32_t a = -1, b = -1, c = -1;  // operand node indices (earlier nodes)
  int32_t input = -1;              // for Input: kernel input index
  double alpha = 0, beta = 0;
};

// Whether every node of an expression is an f32 op the code generator evaluates on whole
// vectors (arithmetic, Min/Max, Relu/LeakyRelu/Clip, Neg/Abs, Sigmoid/Tanh/Exp/Log/Erf); else
// it runs per element.
bool evaluatesOnVectors(const std::vector<ExprNode>& nodes);

// The result is the last node. Node types must be consistent (operands of arithmetic share
// the result type; Cast changes it).
struct ElementwiseExpr {
  std::vector<ExprNode> nodes;
  int32_t addInput(int32_t input, ElemType type);
  int32_t addConstant(double value, ElemType type);
  int32_t addUnary(ExprOp op, int32_t a, double alpha = 0, double beta = 0);
  int32_t addCast(int32_t a, ElemType to);
  int32_t addBinary(ExprOp op, int32_t a, int32_t b);
  int32_t addWhere(int32_t cond, int32_t a, int32_t b);
};

// Applied to a conv/matmul/pool result before it is stored (a fused epilogue): first `act`,
// then `chain` (fused elementwise ops: its Result node is the value so far, its Input nodes
// read kernel inputs broadcast to `shape`; the last `inputCount` kernel inputs are read by the
// chain only). See fused_epilogue.h.
enum class Activation : uint8_t { None, Relu, Clip, LeakyRelu, Sigmoid, Tanh };
struct Epilogue {
  Activation act = Activation::None;
  float alpha = 0, beta = 0;  // Clip: [alpha, beta]; LeakyRelu: slope alpha
  ElementwiseExpr chain;      // empty: no fused chain
  uint32_t inputCount = 0;
  // The output's shape as the chain sees it (the IR's: a 1-D conv keeps rank 3 here, while
  // `output` is [N, C, 1, W]); same elements in the same order as `output`.
  std::vector<int64_t> shape;
};

// ---- Op families --------------------------------------------------------------------------
enum class KernelKind : uint8_t {
  Elementwise,  // inputs: any; output: broadcast shape
  Conv,         // inputs: X[N,C,(D,)H,W], W[OC,C/g,(KD,)KH,KW], optional B[OC];
                //   output [N,OC,(OD,)OH,OW]
  MatMul,       // inputs: A[...,M,K], B[...,K,N] (transposable), optional C (broadcast)
  Pool,         // inputs: X[N,C,(D,)H,W]; output [N,C,(OD,)OH,OW]
  Reduce,       // inputs: X; output: X with `axes` reduced (keepdims or not, same order)
  Softmax,      // inputs: X; output: same shape
  Transpose,    // inputs: X; output: permuted
  Concat,       // inputs: several; output: joined along `axis`
  Slice,        // inputs: X; output shape = element counts per axis
  Gather,       // inputs: data, indices (I32/I64); output data.shape with axis replaced
  Pad,          // inputs: X; output: padded shape
  Split,        // inputs: X; outputs: `output` then `extraOutputs`, consecutive along `axis`
  Tile,         // inputs: X; output: X repeated (output dim = a multiple of the input dim)
  ConvTranspose,  // inputs: X[N,C,(D,)H,W], W[C,OC/g,(KD,)KH,KW], optional B[OC];
                  //   output [N,OC,(OD,)OH,OW]; strides, dilations, pads (cropped), groups
  LayerNorm,      // inputs: X, scale, optional B (broadcast to X's dims from `axis` on)
  InstanceNorm,   // inputs: X[N,C,...], scale[C], B[C]
  Lrn,            // inputs: X[N,C,...]; lrnSize, alpha, beta, lrnBias
  ArgReduce,      // inputs: X; output I64: index of the max (`largest`) or min along `axis`
  TopK,           // inputs: X; outputs: values (`output`), I64 indices (extraOutputs[0]),
                  //   k = output.shape[axis]
  GatherElements,  // inputs: data, indices (I32/I64, data's rank); output: indices' shape
  CumSum,          // inputs: X; output: running sums along `axis` (exclusive, reverse)
  ScatterND,       // inputs: data, indices [..., k] (I32/I64), updates; output: data's shape
  Quantized,  // integer ops with TFLite semantics: `quant` (quant_desc.h)
};

enum class PoolKind : uint8_t { Max, Average };
enum class ReduceKind : uint8_t { Sum, Mean, Max, Min, Prod, L1, L2, SumSquare, LogSum, LogSumExp };
enum class PadMode : uint8_t { Constant, Reflect, Edge };
// Conv weights' layout in the weights binding (KernelDesc::weightLayout).
enum class ConvWeights : uint8_t {
  Oihw,            // the model's [OC][C/groups][KH][KW]
  GemmPanels,      // panels of weightPanel output channels (emit_conv_gemm.cpp)
  OcVectorPanels,  // [OC/NR][K][NR], output channels in vector lanes (small maps)
  Winograd,        // transformed in the Winograd domain (3x3 stride 1)
  WinogradPanels,  // 3x3 taps in Winograd panels, transformed by the kernel (winograd_plan.h)
  // Quantized Conv: int8 blocks of weightPanel output channels x 4 input channels
  // (quantized_conv_plan.h, emit_quantized_conv_oc.cpp).
  Int8OcBlocks,
  // The same over whole kernel rows (C not a multiple of 4; quantized_conv_plan.h).
  Int8OcRowBlocks,
};

struct KernelDesc {
  KernelKind kind = KernelKind::Elementwise;
  std::vector<BufferDesc> inputs;
  BufferDesc output;
  std::vector<BufferDesc> extraOutputs;  // Split only: bindings after `output`
  // Bindings may overlap (an in-place elementwise op): no `noalias` on the pointers.
  bool bindingsMayAlias = false;
  // Work queues (work_queue.h): this many claim counters, kWorkQueueBytes each, in one more
  // binding after the outputs, zeroed before every call. The kernel's workgroups take their
  // share of the work from them at run time. 0: no such binding.
  int64_t workQueues = 0;
  // Winograd convolutions of artifacts compiled for T >= 2 threads (row_groups.h): T
  // workgroups, each a contiguous run of the blocks of tile rows with every output channel,
  // so that each thread keeps the same rows in every convolution and every call; fused
  // expand + depthwise convolutions: at most T workgroups, each a run of steps of output rows.
  // 0: the kernel's own items (work queues or fixed groups).
  int64_t threadSplit = 0;
  // Bindings of the kernel: inputs, output, extra outputs, then the work queues if any.
  size_t bindingCount() const { return inputs.size() + 1 + extraOutputs.size() + (workQueues > 0); }
  unsigned workQueueBinding() const { return unsigned(inputs.size() + 1 + extraOutputs.size()); }
  std::string name;  // for diagnostics and symbol names only; not part of identity

  ElementwiseExpr expr;  // Elementwise

  // Conv / Pool: 2-D windows (1-D ones are lowered with H = 1). Rank-5 tensors add a depth
  // axis with its own window below (KD, its stride, dilation and pads).
  std::array<int64_t, 2> kernelShape{1, 1};  // Pool only (Conv reads it from W)
  std::array<int64_t, 2> strides{1, 1};
  std::array<int64_t, 2> dilations{1, 1};
  std::array<int64_t, 4> pads{0, 0, 0, 0};                      // top, left, bottom, right
  int64_t depthKernel = 1, depthStride = 1, depthDilation = 1;  // Pool's KD; Conv reads W
  int64_t depthPadBegin = 0, depthPadEnd = 0;
  int64_t groups = 1;
  // Conv: the layout the weights binding was packed in at compile time, which also names the
  // kernel that reads it (packConvWeights decides; conv_gemm_plan.h). Oihw: as the model gives
  // them, read by any convolution kernel.
  ConvWeights weightLayout = ConvWeights::Oihw;
  // GemmPanels: panels of this many output channels in the GEMM kernel's order
  // (packConvWeightPanels); 0 with Oihw.
  int64_t weightPanel = 0;
  // Winograd, WinogradPanels: the output tile size m of F(m x m, 3 x 3) of the kernel.
  int64_t winogradTile = 0;
  PoolKind poolKind = PoolKind::Max;
  bool countIncludePad = false;
  // Conv with a fused MaxPool (fuseConvPools; emit_conv_pool.cpp): the convolution's result,
  // of shape convOutput [N, OC, OH, OW] after the epilogue, is max-pooled over poolKernel
  // windows (poolStrides, poolPads top, left, bottom, right; -inf padding, ceil mode already
  // in the shapes) before it is stored: `output` is the pooled tensor. Empty: no pool.
  std::vector<int64_t> convOutput;
  std::array<int64_t, 2> poolKernel{1, 1}, poolStrides{1, 1};
  std::array<int64_t, 4> poolPads{0, 0, 0, 0};
  bool pooled() const { return !convOutput.empty(); }
  Epilogue epilogue;  // Conv, MatMul

  // MatMul / Gemm: Y = alpha * op(A) op(B) + beta * C
  bool transA = false, transB = false;
  float alpha = 1.0f, beta = 1.0f;
  // B (inputs[1]) packed at compile time in column panels of this many columns of op(B)
  // (packMatMulWeights, matmul_pack.h); its shape and transB still describe the model's
  // layout. 0: B as the model gives it.
  int64_t bPanel = 0;
  // MatMul with a fused second product (an MLP head, emit_matmul_chain.cpp): each row H of
  // the first product, after the epilogue, becomes output row tailAlpha * H op(inputs[tailB])
  // + tailBeta * inputs[tailBias] (tailBias -1: none). A, B are rank 2; `output` is the
  // second product's result.
  int32_t tailB = -1, tailBias = -1;
  bool tailTransB = false;
  float tailAlpha = 1.0f, tailBeta = 1.0f;
  // Conv with a fused depthwise convolution (a MobileNet expand 1x1 -> depthwise, emit_conv_
  // expand_dw.cpp): the 1x1 convolution's result, after the epilogue, is the input of a
  // depthwise convolution with weights inputs[tailB] ([C, 1, KH, KW]), bias inputs[tailBias]
  // (-1: none), these strides and pads (top, left, bottom, right), then tailChain (its Result
  // node is the depthwise value; constants only). `output` is the depthwise result.
  std::array<int64_t, 2> tailStrides{1, 1};
  std::array<int64_t, 4> tailPads{0, 0, 0, 0};
  ElementwiseExpr tailChain;

  // Reduce
  ReduceKind reduceKind = ReduceKind::Sum;
  std::vector<int64_t> axes;  // Reduce axes (sorted, non-negative)

  // Softmax / Concat / Gather / Split: the axis (non-negative)
  int64_t axis = 0;
  bool logSoftmax = false;

  // LayerNorm / InstanceNorm: epsilon. Lrn: window size and bias (alpha, beta above).
  float epsilon = 1e-5f;
  int64_t lrnSize = 1;
  float lrnBias = 1.0f;
  // ArgReduce / TopK: largest (ArgMax, TopK largest = 1) or smallest; ArgReduce ties.
  bool largest = true;
  bool selectLastIndex = false;
  // CumSum
  bool exclusive = false, reverse = false;

  std::vector<int64_t> perm;    // Transpose
  std::vector<int64_t> starts;  // Slice: first element per input axis; Pad: pads before
  std::vector<int64_t> steps;   // Slice: step per axis (non-zero)
  PadMode padMode = PadMode::Constant;
  double padValue = 0;

  QuantDesc quant;  // Quantized

  // Canonical text of everything that determines the generated code (not `name`): two
  // kernels with the same key are interchangeable.
  std::string key() const;
};

// Checks a description for internal consistency (shapes agree with attributes). Throws
// kiln::CompileError naming the kernel on failure.
void verifyKernel(const KernelDesc& desc);

}  // namespace kiln::codegen
