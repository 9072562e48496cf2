// QuantDesc helpers: the identity key of a quantized kernel and its consistency check (run
// by verifyKernel before emission, so the emitters never index outside a binding).
#include "kiln/codegen/quant_desc.h"

#include <algorithm>
#include <sstream>

#include "codegen_error.h"
#include "kiln/codegen/kernel_desc.h"

namespace kiln::codegen {
namespace {

void printInts(std::ostream& os, const char* name, const std::vector<int32_t>& values) {
  os << ' ' << name << '[';
  for (size_t i = 0; i < values.size(); ++i) os << (i ? "," : "") << values[i];
  os << ']';
}

bool isQuantInt(ElemType t) { return t == ElemType::I8 || t == ElemType::I16 || t == ElemType::I32; }

}  // namespace

std::string QuantDesc::key(const KernelDesc& d) {
  const QuantDesc& q = d.quant;
  std::ostringstream os;
  os.precision(9);
  os << " qop" << static_cast<int>(q.op) << " k" << d.kernelShape[0] << 'x' << d.kernelShape[1]
     << " s" << d.strides[0] << 'x' << d.strides[1] << " d" << d.dilations[0] << 'x'
     << d.dilations[1] << " p" << d.pads[0] << ',' << d.pads[1] << ',' << d.pads[2] << ','
     << d.pads[3] << " g" << d.groups << " zp" << q.inputZeroPoint << ',' << q.input2ZeroPoint
     << ',' << q.weightZeroPoint << ',' << q.outputZeroPoint << " act" << q.actMin << ','
     << q.actMax << " in" << q.input1Multiplier << ',' << q.input1Shift << ','
     << q.input2Multiplier << ',' << q.input2Shift << ',' << q.leftShift << " scale"
     << q.scale << " same" << q.sameParameters << " axes";
  for (int64_t a : d.axes) os << a << ',';
  printInts(os, "m", q.multipliers);
  printInts(os, "sh", q.shifts);
  printInts(os, "t", q.table);
  printInts(os, "zc", q.zeroPointCorrection);
  if (q.correctionInBias) os << " zcb";
  return os.str();
}

void verifyQuantKernel(const KernelDesc& d) {
  const QuantDesc& q = d.quant;
  auto require = [&](bool ok, const std::string& what) {
    if (!ok) fail("cannot generate quantized kernel '" + d.name + "': " + what);
  };
  auto rank = [&](const BufferDesc& b, size_t r, const char* which) {
    require(b.shape.size() == r, std::string(which) + " must have rank " + std::to_string(r));
  };
  require(!d.inputs.empty(), "no inputs");
  require(q.multipliers.size() == q.shifts.size(), "multiplier and shift counts differ");
  for (int32_t s : q.shifts) require(s >= -31 && s <= 30, "shift out of range");
  for (int32_t m : q.multipliers) require(m >= 0, "negative multiplier");
  require(q.actMin <= q.actMax, "empty activation range");
  const BufferDesc& x = d.inputs[0];
  switch (q.op) {
    case QuantOp::Conv:
    case QuantOp::DepthwiseConv:
    case QuantOp::TransposeConv: {
      require(d.inputs.size() == 2 || d.inputs.size() == 3, "wrong number of inputs");
      rank(x, 4, "X");
      rank(d.inputs[1], 4, "W");
      rank(d.output, 4, "Y");
      require(x.type == ElemType::I8 || x.type == ElemType::I16, "X must be i8 or i16");
      require(d.inputs[1].type == ElemType::I8, "W must be i8");
      require(d.output.type == x.type, "Y dtype differs from X");
      const auto& w = d.inputs[1].shape;
      const auto& y = d.output.shape;
      int64_t oc = q.op == QuantOp::DepthwiseConv ? w[3] : w[0];
      require(y[3] == oc && y[0] == x.shape[0], "output shape does not match W");
      if (q.op == QuantOp::Conv)
        require(d.groups > 0 && x.shape[3] == w[3] * d.groups && oc % d.groups == 0,
                "channels do not match groups");
      if (q.op == QuantOp::DepthwiseConv) require(w[0] == 1 && oc % x.shape[3] == 0, "bad depthwise W");
      if (q.op == QuantOp::TransposeConv) require(w[3] == x.shape[3], "W input channels");
      require(int64_t(q.multipliers.size()) == oc, "one multiplier per output channel");
      require(q.zeroPointCorrection.empty() || int64_t(q.zeroPointCorrection.size()) == oc,
              "one zero-point correction per output channel");
      if (d.inputs.size() == 3) {
        require(d.inputs[2].elementCount() == oc, "bias size");
        require(d.inputs[2].type == ElemType::I32 || d.inputs[2].type == ElemType::I64, "bias dtype");
      }
      break;
    }
    case QuantOp::FullyConnected: {
      require(d.inputs.size() == 2 || d.inputs.size() == 3, "wrong number of inputs");
      rank(x, 2, "X");
      rank(d.inputs[1], 2, "W");
      rank(d.output, 2, "Y");
      require(x.type == ElemType::I8 || x.type == ElemType::I16, "X must be i8 or i16");
      require(d.inputs[1].type == ElemType::I8, "W must be i8");
      const auto& w = d.inputs[1].shape;
      require(w[1] == x.shape[1] && d.output.shape[0] == x.shape[0] && d.output.shape[1] == w[0],
              "shapes do not match");
      require(q.multipliers.size() == 1 || int64_t(q.multipliers.size()) == w[0],
              "one multiplier, or one per output channel");
      require(q.zeroPointCorrection.empty() || int64_t(q.zeroPointCorrection.size()) == w[0],
              "one zero-point correction per output channel");
      if (d.inputs.size() == 3) require(d.inputs[2].elementCount() == w[0], "bias size");
      break;
    }
    case QuantOp::Add:
    case QuantOp::Sub:
    case QuantOp::Mul:
      require(d.inputs.size() == 2, "wrong number of inputs");
      require(x.type == d.inputs[1].type && x.type == d.output.type, "dtypes differ");
      require(q.multipliers.size() == 1, "one output multiplier");
      for (const BufferDesc& in : d.inputs)
        require(in.shape.size() <= d.output.shape.size(), "input rank exceeds output rank");
      break;
    case QuantOp::AveragePool:
    case QuantOp::MaxPool:
      require(d.inputs.size() == 1, "wrong number of inputs");
      rank(x, 4, "X");
      rank(d.output, 4, "Y");
      require(d.output.type == x.type && d.output.shape[3] == x.shape[3], "output mismatch");
      break;
    case QuantOp::Softmax:
      require(d.inputs.size() == 1 && x.type == ElemType::I8 && d.output.type == ElemType::I8,
              "i8 -> i8 only");
      require(!x.shape.empty() && x.shape == d.output.shape, "shape mismatch");
      require(q.table.size() == 256, "exp table must have 256 entries");
      break;
    case QuantOp::LeakyRelu:
      require(d.inputs.size() == 1 && x.type == d.output.type && isQuantInt(x.type), "dtype");
      require(q.multipliers.size() == 2, "two multipliers (identity, alpha)");
      break;
    case QuantOp::Lookup:
      require(d.inputs.size() == 1 && x.type == ElemType::I8 && d.output.type == ElemType::I8,
              "i8 -> i8 only");
      require(q.table.size() == 256, "table must have 256 entries");
      break;
    case QuantOp::Quantize:
      require(x.type == ElemType::F32 && isQuantInt(d.output.type), "f32 -> integer only");
      break;
    case QuantOp::Dequantize:
      require(isQuantInt(x.type) && d.output.type == ElemType::F32, "integer -> f32 only");
      break;
    case QuantOp::Requantize:
      require(isQuantInt(x.type) && isQuantInt(d.output.type), "integer -> integer only");
      require(q.multipliers.size() == 1, "one multiplier");
      break;
    case QuantOp::Mean: {
      require(d.inputs.size() == 1 && x.type == d.output.type, "dtype");
      require(x.type == ElemType::I8 || x.type == ElemType::I16, "i8 or i16 only");
      require(!d.axes.empty(), "no axes");
      int64_t kept = 1;
      for (size_t i = 0; i < x.shape.size(); ++i)
        if (std::find(d.axes.begin(), d.axes.end(), int64_t(i)) == d.axes.end()) kept *= x.shape[i];
      for (int64_t a : d.axes) require(a >= 0 && a < int64_t(x.shape.size()), "axis out of range");
      require(kept == d.output.elementCount(), "output size does not match the kept axes");
      break;
    }
  }
  if (q.op != QuantOp::Conv && q.op != QuantOp::DepthwiseConv && q.op != QuantOp::Mean &&
      q.op != QuantOp::TransposeConv && q.op != QuantOp::FullyConnected &&
      q.op != QuantOp::Add && q.op != QuantOp::Sub && q.op != QuantOp::Mul) {
    require(x.elementCount() == d.output.elementCount() || q.op == QuantOp::AveragePool ||
                q.op == QuantOp::MaxPool,
            "element counts differ");
  }
}

}  // namespace kiln::codegen
