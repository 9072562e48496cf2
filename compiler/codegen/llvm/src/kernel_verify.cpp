// verifyKernel: checks that a KernelDesc is self-consistent before any code is emitted, so
// that an emitter never indexes outside a binding. Messages name the kernel and its family.
#include <algorithm>
#include <string>

#include "codegen_error.h"
#include "kiln/codegen/kernel_desc.h"

namespace kiln::codegen {
namespace {

const char* kindName(KernelKind kind) {
  switch (kind) {
    case KernelKind::Elementwise:
      return "elementwise";
    case KernelKind::Conv:
      return "conv";
    case KernelKind::MatMul:
      return "matmul";
    case KernelKind::Pool:
      return "pool";
    case KernelKind::Reduce:
      return "reduce";
    case KernelKind::Softmax:
      return "softmax";
    case KernelKind::Transpose:
      return "transpose";
    case KernelKind::Concat:
      return "concat";
    case KernelKind::Slice:
      return "slice";
    case KernelKind::Gather:
      return "gather";
    case KernelKind::Pad:
      return "pad";
    case KernelKind::Split:
      return "split";
    case KernelKind::Quantized:
      return "quantized";
    case KernelKind::Tile:
      return "tile";
    case KernelKind::ConvTranspose:
      return "conv-transpose";
    case KernelKind::LayerNorm:
      return "layer-norm";
    case KernelKind::InstanceNorm:
      return "instance-norm";
    case KernelKind::Lrn:
      return "lrn";
    case KernelKind::ArgReduce:
      return "arg-reduce";
    case KernelKind::TopK:
      return "top-k";
    case KernelKind::GatherElements:
      return "gather-elements";
    case KernelKind::CumSum:
      return "cumsum";
    case KernelKind::ScatterND:
      return "scatter-nd";
  }
  return "?";
}

class Checker {
 public:
  explicit Checker(const KernelDesc& d) : d_(d) {}
  void require(bool ok, const std::string& what) const {
    if (!ok) {
      fail("cannot generate " + std::string(kindName(d_.kind)) + " kernel '" + d_.name +
           "': " + what);
    }
  }
  void inputCount(size_t lo, size_t hi) const {
    size_t n = d_.inputs.size() - d_.epilogue.inputCount;  // the fused chain's come last
    require(d_.epilogue.inputCount <= d_.inputs.size() && n >= lo && n <= hi,
            "wrong number of inputs");
  }
  void rank(const BufferDesc& b, size_t r, const char* which) const {
    require(b.shape.size() == r, std::string(which) + " must have rank " + std::to_string(r));
  }
  void f32(const BufferDesc& b) const {
    require(b.type == ElemType::F32,
            std::string("dtype ") + elemTypeName(b.type) + " is not supported (f32 only)");
  }

 private:
  const KernelDesc& d_;
};

}  // namespace

void verifyKernel(const KernelDesc& d) {
  Checker c(d);
  for (const BufferDesc& b : d.inputs) {
    c.require(std::all_of(b.shape.begin(), b.shape.end(), [](int64_t e) { return e >= 0; }),
              "negative dimension");
  }
  switch (d.kind) {
    case KernelKind::Elementwise: {
      c.require(!d.expr.nodes.empty(), "empty expression");
      for (size_t i = 0; i < d.expr.nodes.size(); ++i) {
        const ExprNode& n = d.expr.nodes[i];
        auto earlier = [&](int32_t k) { return k < static_cast<int32_t>(i); };
        c.require(earlier(n.a) && earlier(n.b) && earlier(n.c), "operand refers forward");
        if (n.op == ExprOp::Input) {
          c.require(n.input >= 0 && n.input < static_cast<int32_t>(d.inputs.size()),
                    "expression input out of range");
          c.require(d.inputs[n.input].type == n.type, "expression input dtype mismatch");
          c.require(d.inputs[n.input].shape.size() <= d.output.shape.size(),
                    "input rank exceeds output rank");
        }
      }
      c.require(d.expr.nodes.back().type == d.output.type, "expression result dtype mismatch");
      break;
    }
    case KernelKind::Conv: {
      c.inputCount(2, 3);
      size_t rank = d.inputs[0].shape.size();
      c.require(rank == 4 || rank == 5, "X must have rank 4 or 5");
      c.rank(d.inputs[1], rank, "W");
      c.rank(d.output, rank, "Y");
      for (const BufferDesc& b : d.inputs) c.f32(b);
      const auto& x = d.inputs[0].shape;
      const auto& w = d.inputs[1].shape;
      c.require(d.groups > 0 && x[1] == w[1] * d.groups && w[0] % d.groups == 0,
                "channels do not match groups");
      c.require(d.output.shape[1] == w[0], "output channels do not match W");
      if (d.pooled()) {
        c.require(rank == 4 && d.convOutput.size() == 4 && d.groups == 1,
                  "a fused pool needs a 2-D convolution with group 1");
        for (int a = 0; a < 2; ++a) {
          int64_t windows = (d.convOutput[2 + a] + d.poolPads[a] + d.poolPads[2 + a] -
                             d.poolKernel[a] + d.poolStrides[a]) / d.poolStrides[a];
          c.require(d.poolKernel[a] > 0 && d.poolStrides[a] > 0 && d.output.shape[2 + a] > 0 &&
                        d.output.shape[2 + a] <= windows + 1,
                    "fused pool shape");
        }
      }
      if (d.inputs.size() - d.epilogue.inputCount == 3)  // fused-chain inputs come after
        c.require(d.inputs[2].elementCount() == w[0], "bias size");
      break;
    }
    case KernelKind::MatMul: {
      c.inputCount(2, 3);
      for (const BufferDesc& b : d.inputs) c.f32(b);
      c.require(d.inputs[0].shape.size() >= 2 && d.inputs[1].shape.size() >= 2 &&
                    d.output.shape.size() >= 2,
                "operands must have rank >= 2");
      const auto& a = d.inputs[0].shape;
      const auto& b = d.inputs[1].shape;
      int64_t ka = d.transA ? a[a.size() - 2] : a.back();
      int64_t kb = d.transB ? b.back() : b[b.size() - 2];
      c.require(ka == kb, "inner dimensions differ");
      break;
    }
    case KernelKind::Pool:
      c.inputCount(1, 1);
      c.require(d.inputs[0].shape.size() == 4 || d.inputs[0].shape.size() == 5,
                "X must have rank 4 or 5");
      c.rank(d.output, d.inputs[0].shape.size(), "Y");
      c.f32(d.inputs[0]);
      break;
    case KernelKind::Reduce:
      c.inputCount(1, 1);
      for (int64_t axis : d.axes) {
        c.require(axis >= 0 && axis < static_cast<int64_t>(d.inputs[0].shape.size()), "axis");
      }
      break;
    case KernelKind::Softmax:
      c.inputCount(1, 1);
      c.f32(d.inputs[0]);
      c.require(d.axis >= 0 && d.axis < static_cast<int64_t>(d.inputs[0].shape.size()), "axis");
      break;
    case KernelKind::Transpose:
      c.inputCount(1, 1);
      c.require(d.perm.size() == d.inputs[0].shape.size(), "perm size");
      break;
    case KernelKind::Concat:
      c.require(!d.inputs.empty(), "no inputs");
      for (const BufferDesc& b : d.inputs) {
        c.require(b.shape.size() == d.output.shape.size() && b.type == d.output.type,
                  "inputs differ in rank or dtype");
      }
      break;
    case KernelKind::Slice:
      c.inputCount(1, 1);
      c.require(
          d.starts.size() == d.inputs[0].shape.size() && d.steps.size() == d.inputs[0].shape.size(),
          "starts/steps size");
      break;
    case KernelKind::Gather:
      c.inputCount(2, 2);
      c.require(d.inputs[1].type == ElemType::I32 || d.inputs[1].type == ElemType::I64,
                "indices must be i32 or i64");
      c.require(d.axis >= 0 && d.axis < static_cast<int64_t>(d.inputs[0].shape.size()), "axis");
      break;
    case KernelKind::Split: {
      c.inputCount(1, 1);
      int64_t total = 0;
      c.require(d.axis >= 0 && d.axis < static_cast<int64_t>(d.inputs[0].shape.size()), "axis");
      for (size_t i = 0; i <= d.extraOutputs.size(); ++i) {
        const BufferDesc& out = i == 0 ? d.output : d.extraOutputs[i - 1];
        c.require(out.shape.size() == d.inputs[0].shape.size() && out.type == d.inputs[0].type,
                  "outputs differ in rank or dtype");
        total += out.shape[d.axis];
      }
      c.require(total <= d.inputs[0].shape[d.axis], "outputs larger than the input");
      break;
    }
    case KernelKind::Quantized:
      verifyQuantKernel(d);
      break;
    case KernelKind::Tile: {
      c.inputCount(1, 1);
      const auto& in = d.inputs[0].shape;
      c.require(in.size() == d.output.shape.size(), "rank differs");
      for (size_t i = 0; i < in.size(); ++i) {
        c.require(in[i] > 0 && d.output.shape[i] % in[i] == 0, "output is not a whole tiling");
      }
      break;
    }
    case KernelKind::Pad:
      c.inputCount(1, 1);
      c.require(d.starts.size() == d.inputs[0].shape.size(), "pads size");
      c.require(!d.output.shape.empty(), "rank 0");
      break;
    case KernelKind::ConvTranspose: {
      c.inputCount(2, 3);
      size_t rank = d.inputs[0].shape.size();
      c.require(rank == 4 || rank == 5, "X must have rank 4 or 5");
      c.rank(d.inputs[1], rank, "W");
      c.rank(d.output, rank, "Y");
      for (const BufferDesc& b : d.inputs) c.f32(b);
      const auto& x = d.inputs[0].shape;
      const auto& w = d.inputs[1].shape;
      c.require(d.groups > 0 && x[1] == w[0] && x[1] % d.groups == 0,
                "channels do not match groups");
      c.require(d.output.shape[1] == w[1] * d.groups, "output channels do not match W");
      if (d.inputs.size() == 3)
        c.require(d.inputs[2].elementCount() == d.output.shape[1], "bias size");
      break;
    }
    case KernelKind::LayerNorm:
    case KernelKind::InstanceNorm:
      c.inputCount(d.kind == KernelKind::LayerNorm ? 2 : 3, 3);
      for (const BufferDesc& b : d.inputs) c.f32(b);
      c.require(d.output.shape == d.inputs[0].shape, "output shape differs from X");
      c.require(d.axis >= 0 && d.axis < static_cast<int64_t>(d.inputs[0].shape.size()), "axis");
      if (d.kind == KernelKind::InstanceNorm) {
        c.require(d.inputs[0].shape.size() >= 3, "X must have rank >= 3");
        c.require(d.inputs[1].elementCount() == d.inputs[0].shape[1] &&
                      d.inputs[2].elementCount() == d.inputs[0].shape[1],
                  "scale and bias must have one value per channel");
      } else {
        for (size_t i = 1; i < d.inputs.size(); ++i)
          c.require(d.inputs[i].shape.size() <= d.inputs[0].shape.size() - d.axis,
                    "scale/bias rank exceeds the normalized block");
      }
      break;
    case KernelKind::Lrn:
      c.inputCount(1, 1);
      c.f32(d.inputs[0]);
      c.require(d.inputs[0].shape.size() >= 3 && d.output.shape == d.inputs[0].shape,
                "X must have rank >= 3 and the output its shape");
      c.require(d.lrnSize >= 1, "size must be positive");
      break;
    case KernelKind::ArgReduce:
    case KernelKind::TopK: {
      c.inputCount(1, 1);
      const auto& x = d.inputs[0].shape;
      c.require(d.axis >= 0 && d.axis < static_cast<int64_t>(x.size()), "axis");
      c.require(x[d.axis] > 0, "empty axis");
      if (d.kind == KernelKind::ArgReduce) {
        c.require(d.output.type == ElemType::I64, "indices must be i64");
        c.require(d.output.elementCount() * x[d.axis] == d.inputs[0].elementCount(),
                  "output size");
      } else {
        c.require(d.extraOutputs.size() == 1 && d.extraOutputs[0].type == ElemType::I64 &&
                      d.extraOutputs[0].shape == d.output.shape,
                  "TopK needs values and i64 indices of one shape");
        c.require(d.output.shape.size() == x.size() && d.output.shape[d.axis] <= x[d.axis],
                  "k exceeds the axis");
        c.require(d.output.type == d.inputs[0].type, "values dtype differs from X");
      }
      break;
    }
    case KernelKind::GatherElements:
      c.inputCount(2, 2);
      c.require(d.inputs[1].type == ElemType::I32 || d.inputs[1].type == ElemType::I64,
                "indices must be i32 or i64");
      c.require(d.inputs[1].shape.size() == d.inputs[0].shape.size() &&
                    d.output.shape == d.inputs[1].shape && d.output.type == d.inputs[0].type,
                "indices and output must have data's rank and the indices' shape");
      c.require(d.axis >= 0 && d.axis < static_cast<int64_t>(d.inputs[0].shape.size()) &&
                    d.inputs[0].shape[d.axis] > 0,
                "axis");
      break;
    case KernelKind::ScatterND: {
      c.inputCount(3, 3);
      const auto& idx = d.inputs[1].shape;
      c.require(d.inputs[1].type == ElemType::I32 || d.inputs[1].type == ElemType::I64,
                "indices must be i32 or i64");
      c.require(!idx.empty() && idx.back() <= static_cast<int64_t>(d.inputs[0].shape.size()) &&
                    d.output.shape == d.inputs[0].shape && d.inputs[2].type == d.output.type,
                "indices, updates and output do not fit data");
      break;
    }
    case KernelKind::CumSum:
      c.inputCount(1, 1);
      c.require(d.output.shape == d.inputs[0].shape && d.output.type == d.inputs[0].type &&
                    d.output.type != ElemType::Bool,
                "output must have X's shape and numeric dtype");
      c.require(d.axis >= 0 && d.axis < static_cast<int64_t>(d.inputs[0].shape.size()), "axis");
      break;
  }
}

}  // namespace kiln::codegen
