// Lowering of the dispatch graph to kernel descriptions: bindings become BufferDescs, the
// root op's attributes and static operands become the KernelDesc's attributes. 1-D
// convolutions and pools are expressed as 2-D ones with H = 1 (same bytes), 1-D MatMul
// operands as matrices with a unit dimension.
#include "kiln/codegen/dispatch_lowering.h"

#include <algorithm>

#include "kiln/ir/constant_data.h"
#include "kiln/ir/window_geometry.h"
#include "f64_support.h"
#include "kiln/support/diagnostics.h"
#include "lowering.h"

namespace kiln::codegen {
namespace detail {

using ir::OpKind;

void unsupported(const ir::Op& op, const std::string& message) {
  throw CompileError(op.describe() + ": " + message);
}

ElemType toElemType(const ir::Op& op, ir::DType dtype) {
  switch (dtype) {
    case ir::DType::F32:
      return ElemType::F32;
    case ir::DType::I8:
      return ElemType::I8;
    case ir::DType::U8:
      return ElemType::U8;
    case ir::DType::I16:
      return ElemType::I16;
    case ir::DType::I32:
      return ElemType::I32;
    case ir::DType::I64:
      return ElemType::I64;
    case ir::DType::Bool:
      return ElemType::Bool;
    case ir::DType::F64:
      return ElemType::F64;
    case ir::DType::F16:
      break;
  }
  unsupported(op, "f16 tensors are not supported by the code generator yet");
}

BufferDesc toBuffer(const ir::Op& op, const ir::Value& value) {
  return BufferDesc{toElemType(op, value.dtype()), value.shape()};
}

namespace {

int64_t normalizeAxis(int64_t axis, size_t rank) {
  return axis < 0 ? axis + static_cast<int64_t>(rank) : axis;
}

std::vector<int64_t> staticInts(const ir::Op& op, size_t index) {
  const ir::Value* v = op.optionalOperand(index);
  if (!v) return {};
  if (!v->isConstant()) unsupported(op, "operand " + std::to_string(index) + " must be a constant");
  return ir::constantInts(v);
}

// Spatial rank 1 becomes 2 (H = 1).
void makeTwoDimensional(std::vector<int64_t>& shape) {
  if (shape.size() == 3) shape.insert(shape.begin() + 2, 1);
}

void lowerWindow(const ir::Op& op, KernelDesc& d, std::vector<int64_t> kernel, bool ceilMode) {
  const std::vector<int64_t>& xs = op.operand(0)->shape();
  ir::Shape spatial(xs.begin() + 2, xs.end());
  ir::WindowGeometry g = ir::computeWindowGeometry(spatial, kernel, op.attrs(), ceilMode);
  size_t n = spatial.size();
  if (n == 1) {
    d.kernelShape = {1, g.kernel[0]};
    d.strides = {1, g.strides[0]};
    d.dilations = {1, g.dilations[0]};
    d.pads = {0, g.pads[0], 0, g.pads[1]};
  } else if (n == 2) {
    d.kernelShape = {g.kernel[0], g.kernel[1]};
    d.strides = {g.strides[0], g.strides[1]};
    d.dilations = {g.dilations[0], g.dilations[1]};
    d.pads = {g.pads[0], g.pads[1], g.pads[2], g.pads[3]};
  } else if (n == 3) {
    d.depthKernel = g.kernel[0];
    d.depthStride = g.strides[0];
    d.depthDilation = g.dilations[0];
    d.depthPadBegin = g.pads[0];
    d.depthPadEnd = g.pads[3];
    d.kernelShape = {g.kernel[1], g.kernel[2]};
    d.strides = {g.strides[1], g.strides[2]};
    d.dilations = {g.dilations[1], g.dilations[2]};
    d.pads = {g.pads[1], g.pads[2], g.pads[4], g.pads[5]};
    return;  // rank-5 tensors are handled as they are
  } else {
    unsupported(op, "only 1-D, 2-D and 3-D windows are supported");
  }
  for (BufferDesc& b : d.inputs) {
    if (b.shape.size() == xs.size()) makeTwoDimensional(b.shape);
  }
  makeTwoDimensional(d.output.shape);
}

// ConvTranspose: the resolved strides, dilations and begin pads in the Conv fields (1-D as
// 2-D with H = 1, rank-5 tensors with the depth fields).
void lowerConvTranspose(const ir::Op& op, KernelDesc& d) {
  const std::vector<int64_t>& xs = op.operand(0)->shape();
  const std::vector<int64_t>& ws = op.operand(1)->shape();
  ir::Shape spatial(xs.begin() + 2, xs.end());
  ir::ConvTransposeGeometry g = ir::computeConvTransposeGeometry(
      spatial, std::vector<int64_t>(ws.begin() + 2, ws.end()), op.attrs());
  size_t n = spatial.size();
  d.kind = KernelKind::ConvTranspose;
  d.groups = op.attrs().getInt("group", 1);
  if (n == 3) {
    d.depthStride = g.strides[0];
    d.depthDilation = g.dilations[0];
    d.depthPadBegin = g.pads[0];
    d.depthPadEnd = g.pads[3];
  }
  size_t h = n == 1 ? 0 : n - 2;  // index of the H dim among the spatial dims
  if (n == 1) {
    d.strides = {1, g.strides[0]};
    d.dilations = {1, g.dilations[0]};
    d.pads = {0, g.pads[0], 0, g.pads[1]};
  } else if (n == 2 || n == 3) {
    d.strides = {g.strides[h], g.strides[h + 1]};
    d.dilations = {g.dilations[h], g.dilations[h + 1]};
    d.pads = {g.pads[h], g.pads[h + 1], g.pads[n + h], g.pads[n + h + 1]};
  } else {
    unsupported(op, "only 1-D, 2-D and 3-D transposed convolutions are supported");
  }
  if (n == 1) {
    for (BufferDesc& b : d.inputs) {
      if (b.shape.size() == xs.size()) makeTwoDimensional(b.shape);
    }
    makeTwoDimensional(d.output.shape);
  }
}

void lowerReduceAxes(const ir::Op& op, KernelDesc& d, std::vector<int64_t> axes) {
  size_t rank = d.inputs[0].shape.size();
  if (axes.empty()) {
    if (op.attrs().getInt("noop_with_empty_axes", 0) != 0) {
      unsupported(op, "noop_with_empty_axes is not supported");
    }
    for (size_t i = 0; i < rank; ++i) axes.push_back(static_cast<int64_t>(i));
  }
  for (int64_t& a : axes) a = normalizeAxis(a, rank);
  std::sort(axes.begin(), axes.end());
  d.axes = axes;
}

void lowerRoot(const ir::Op& op, KernelDesc& d) {
  if (lowerElementwise(op, d)) return;
  if (lowerQuantized(op, d)) return;
  const ir::AttributeMap& attrs = op.attrs();
  const size_t rank = d.inputs.empty() ? 0 : d.inputs[0].shape.size();
  switch (op.kind()) {
    case OpKind::Conv: {
      d.kind = KernelKind::Conv;
      const std::vector<int64_t>& ws = op.operand(1)->shape();
      lowerWindow(op, d, std::vector<int64_t>(ws.begin() + 2, ws.end()), false);
      d.groups = attrs.getInt("group", 1);
      return;
    }
    case OpKind::MaxPool:
    case OpKind::AveragePool: {
      if (op.numResults() > 1) unsupported(op, "MaxPool's Indices result is not supported");
      d.kind = KernelKind::Pool;
      d.poolKind = op.kind() == OpKind::MaxPool ? PoolKind::Max : PoolKind::Average;
      d.countIncludePad = attrs.getInt("count_include_pad", 0) != 0;
      if (attrs.getInt("storage_order", 0) != 0)
        unsupported(op, "storage_order=1 is not supported");
      lowerWindow(op, d, attrs.getInts("kernel_shape"), true);
      return;
    }
    case OpKind::GlobalAveragePool:
    case OpKind::GlobalMaxPool: {
      d.kind = KernelKind::Reduce;
      d.reduceKind = op.kind() == OpKind::GlobalMaxPool ? ReduceKind::Max : ReduceKind::Mean;
      for (size_t i = 2; i < rank; ++i) d.axes.push_back(static_cast<int64_t>(i));
      return;
    }
    case OpKind::MatMul: {
      d.kind = KernelKind::MatMul;
      // 1-D operands: A [K] is [1, K]; B [K] is [K, 1]; the output keeps its bytes.
      BufferDesc& a = d.inputs[0];
      BufferDesc& b = d.inputs[1];
      if (a.shape.size() == 1) a.shape.insert(a.shape.begin(), 1);
      if (b.shape.size() == 1) b.shape.push_back(1);
      std::vector<int64_t> out(std::max(a.shape.size(), b.shape.size()) - 2, 0);
      size_t batchRank = out.size();
      for (size_t i = 0; i < batchRank; ++i) {
        auto dim = [&](const std::vector<int64_t>& s) {
          size_t offset = batchRank - (s.size() - 2);
          return i < offset ? int64_t{1} : s[i - offset];
        };
        out[i] = std::max(dim(a.shape), dim(b.shape));
      }
      out.push_back(a.shape[a.shape.size() - 2]);
      out.push_back(b.shape.back());
      d.output.shape = out;
      return;
    }
    case OpKind::Gemm: {
      d.kind = KernelKind::MatMul;
      d.transA = attrs.getInt("transA", 0) != 0;
      d.transB = attrs.getInt("transB", 0) != 0;
      d.alpha = attrs.getFloat("alpha", 1.0f);
      d.beta = attrs.getFloat("beta", 1.0f);
      return;
    }
    case OpKind::Softmax:
    case OpKind::LogSoftmax:
      d.kind = KernelKind::Softmax;
      d.logSoftmax = op.kind() == OpKind::LogSoftmax;
      d.axis = normalizeAxis(attrs.getInt("axis", -1), rank);
      return;
    case OpKind::ReduceSum:
      d.kind = KernelKind::Reduce;
      d.reduceKind = ReduceKind::Sum;
      lowerReduceAxes(op, d, staticInts(op, 1));
      return;
    case OpKind::ReduceMean:
    case OpKind::ReduceMax:
    case OpKind::ReduceMin:
      d.kind = KernelKind::Reduce;
      d.reduceKind = op.kind() == OpKind::ReduceMean  ? ReduceKind::Mean
                     : op.kind() == OpKind::ReduceMax ? ReduceKind::Max
                                                      : ReduceKind::Min;
      lowerReduceAxes(op, d, attrs.getInts("axes", {}));
      return;
    case OpKind::Transpose: {
      d.kind = KernelKind::Transpose;
      std::vector<int64_t> perm = attrs.getInts("perm", {});
      if (perm.empty()) {
        for (size_t i = rank; i-- > 0;) perm.push_back(static_cast<int64_t>(i));
      }
      d.perm = perm;
      return;
    }
    case OpKind::Split:
      d.kind = KernelKind::Split;  // the results' shapes say where each part starts
      d.axis = normalizeAxis(attrs.getInt("axis", 0), rank);
      return;
    case OpKind::Tile:
      d.kind = KernelKind::Tile;  // repeats are implied by the output shape
      return;
    case OpKind::Concat:
      d.kind = KernelKind::Concat;
      d.axis = normalizeAxis(attrs.getInt("axis"), rank);
      return;
    case OpKind::Gather:
      d.kind = KernelKind::Gather;
      d.axis = normalizeAxis(attrs.getInt("axis", 0), rank);
      return;
    case OpKind::Slice: {
      d.kind = KernelKind::Slice;
      const std::vector<int64_t>& dims = d.inputs[0].shape;
      std::vector<int64_t> starts = staticInts(op, 1);
      std::vector<int64_t> axes = staticInts(op, 3);
      std::vector<int64_t> steps = staticInts(op, 4);
      if (axes.empty()) {
        for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
      }
      d.starts.assign(rank, 0);
      d.steps.assign(rank, 1);
      for (size_t i = 0; i < axes.size(); ++i) {
        int64_t axis = normalizeAxis(axes[i], rank);
        int64_t step = steps.empty() ? 1 : steps[i];
        int64_t dim = dims[axis];
        int64_t start = starts[i] < 0 ? starts[i] + dim : starts[i];
        // ONNX clamps: [0, dim] going forward, [0, dim - 1] going backward.
        start = step > 0 ? std::clamp<int64_t>(start, 0, dim)
                         : std::clamp<int64_t>(start, 0, std::max<int64_t>(dim - 1, 0));
        d.starts[axis] = start;
        d.steps[axis] = step;
      }
      return;
    }
    case OpKind::Pad: {
      d.kind = KernelKind::Pad;
      std::vector<int64_t> pads = staticInts(op, 1);
      std::vector<int64_t> axes = staticInts(op, 3);
      if (axes.empty()) {
        for (size_t i = 0; i < rank; ++i) axes.push_back(static_cast<int64_t>(i));
      }
      d.starts.assign(rank, 0);
      for (size_t i = 0; i < axes.size(); ++i) d.starts[normalizeAxis(axes[i], rank)] = pads.at(i);
      std::string mode = attrs.getString("mode", "constant");
      if (mode == "constant") {
        d.padMode = PadMode::Constant;
      } else if (mode == "reflect") {
        d.padMode = PadMode::Reflect;
      } else if (mode == "edge") {
        d.padMode = PadMode::Edge;
      } else {
        unsupported(op, "pad mode '" + mode + "' is not supported");
      }
      const ir::Value* value = op.optionalOperand(2);
      if (value) {
        if (!value->isConstant()) unsupported(op, "the pad value must be a constant");
        d.padValue = ir::constantDoubles(value).at(0);
      }
      // The pad value operand is static here: drop it from the kernel's inputs if bound.
      return;
    }
    case OpKind::ConvTranspose:
      lowerConvTranspose(op, d);
      return;
    case OpKind::LayerNormalization:
    case OpKind::InstanceNormalization:
      d.kind = op.kind() == OpKind::LayerNormalization ? KernelKind::LayerNorm
                                                         : KernelKind::InstanceNorm;
      d.axis = op.kind() == OpKind::LayerNormalization
                   ? normalizeAxis(attrs.getInt("axis", -1), rank)
                   : 2;
      d.epsilon = attrs.getFloat("epsilon", 1e-5f);
      if (op.kind() == OpKind::LayerNormalization && op.attrs().getInt("stash_type", 1) != 1)
        unsupported(op, "stash_type other than 1 (float) is not supported");
      return;
    case OpKind::LRN:
      d.kind = KernelKind::Lrn;
      d.lrnSize = attrs.getInt("size");
      d.alpha = attrs.getFloat("alpha", 1e-4f);
      d.beta = attrs.getFloat("beta", 0.75f);
      d.lrnBias = attrs.getFloat("bias", 1.0f);
      return;
    case OpKind::ArgMax:
    case OpKind::ArgMin:
      d.kind = KernelKind::ArgReduce;
      d.axis = normalizeAxis(attrs.getInt("axis", 0), rank);
      d.largest = op.kind() == OpKind::ArgMax;
      d.selectLastIndex = attrs.getInt("select_last_index", 0) != 0;
      return;
    case OpKind::CumSum: {
      d.kind = KernelKind::CumSum;
      std::vector<int64_t> axis = staticInts(op, 1);
      if (axis.size() != 1) unsupported(op, "axis must be a constant scalar");
      d.axis = normalizeAxis(axis[0], rank);
      d.exclusive = attrs.getInt("exclusive", 0) != 0;
      d.reverse = attrs.getInt("reverse", 0) != 0;
      return;
    }
    case OpKind::ScatterND:
      d.kind = KernelKind::ScatterND;
      return;
    case OpKind::GatherElements:
      d.kind = KernelKind::GatherElements;
      d.axis = normalizeAxis(attrs.getInt("axis", 0), rank);
      return;
    case OpKind::TopK:
      d.kind = KernelKind::TopK;
      d.axis = normalizeAxis(attrs.getInt("axis", -1), rank);
      d.largest = attrs.getInt("largest", 1) != 0;
      return;
    case OpKind::ReduceProd:
    case OpKind::ReduceL1:
    case OpKind::ReduceL2:
    case OpKind::ReduceSumSquare:
    case OpKind::ReduceLogSum:
    case OpKind::ReduceLogSumExp: {
      d.kind = KernelKind::Reduce;
      switch (op.kind()) {
        case OpKind::ReduceProd: d.reduceKind = ReduceKind::Prod; break;
        case OpKind::ReduceL1: d.reduceKind = ReduceKind::L1; break;
        case OpKind::ReduceL2: d.reduceKind = ReduceKind::L2; break;
        case OpKind::ReduceSumSquare: d.reduceKind = ReduceKind::SumSquare; break;
        case OpKind::ReduceLogSum: d.reduceKind = ReduceKind::LogSum; break;
        default: d.reduceKind = ReduceKind::LogSumExp; break;
      }
      bool needsFloat = d.reduceKind == ReduceKind::L2 || d.reduceKind == ReduceKind::LogSum ||
                        d.reduceKind == ReduceKind::LogSumExp;
      if (needsFloat && !isFloat(d.output.type))
        unsupported(op, std::string("integer tensors are not supported for ") +
                            std::string(op.info().name));
      lowerReduceAxes(op, d, attrs.getInts("axes", {}));
      return;
    }
    case OpKind::BatchNormalization:
      unsupported(op, "BatchNormalization with non-constant parameters is not supported");
    default:
      unsupported(op, "not supported by the code generator yet");
  }
}

}  // namespace

void lowerFusedPool(const ir::Op& pool, KernelDesc& d) {
  const std::vector<int64_t>& xs = pool.operand(0)->shape();
  if (d.kind != KernelKind::Conv || xs.size() != 4)
    unsupported(pool, "a fused pool must follow a 2-D convolution");
  ir::WindowGeometry g = ir::computeWindowGeometry(
      ir::Shape(xs.begin() + 2, xs.end()), pool.attrs().getInts("kernel_shape"), pool.attrs(),
      true);
  d.convOutput = xs;  // the dispatch's result binding is the pool's already
  d.poolKernel = {g.kernel[0], g.kernel[1]};
  d.poolStrides = {g.strides[0], g.strides[1]};
  d.poolPads = {g.pads[0], g.pads[1], g.pads[2], g.pads[3]};
  d.output = toBuffer(pool, *pool.result());
}

KernelDesc lowerDispatch(const ir::Dispatch& dispatch) {
  const ir::Op& op = *dispatch.root;
  checkF64Ops(dispatch);
  KernelDesc d;
  d.name = dispatch.name;
  d.bindingsMayAlias = !dispatch.aliases.empty();
  std::vector<const ir::Binding*> results;
  for (const ir::Binding& binding : dispatch.bindings) {
    if (binding.resultIndex >= 0) {
      results.push_back(&binding);
    } else if (binding.fusedOp < 0) {  // fused ops' operands: lowerFusedChain
      d.inputs.push_back(toBuffer(op, *binding.value));
    }
  }
  if (results.size() != 1 && op.kind() != OpKind::Split && op.kind() != OpKind::TopK) {
    unsupported(op, "ops with several results are not supported yet");
  }
  d.output = toBuffer(op, *results[0]->value);
  for (size_t i = 1; i < results.size(); ++i)
    d.extraOutputs.push_back(toBuffer(op, *results[i]->value));
  lowerRoot(op, d);
  lowerFusedChain(dispatch, d);
  return d;
}

}  // namespace detail

std::vector<KernelDesc> lowerDispatches(const ir::DispatchGraph& graph) {
  std::vector<KernelDesc> kernels;
  kernels.reserve(graph.dispatches.size());
  for (const ir::Dispatch& dispatch : graph.dispatches) {
    kernels.push_back(detail::lowerDispatch(dispatch));
  }
  return kernels;
}

CodegenResult generateKernels(const ir::DispatchGraph& graph, const TargetConfig& target,
                              const CodegenOptions& options) {
  return generateKernels(lowerDispatches(graph), target, options);
}

}  // namespace kiln::codegen
