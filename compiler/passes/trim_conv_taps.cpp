// Convolution taps that read only padding are dropped: a 2-D Conv with constant weights whose
// kernel rows (or columns) meet no input row (column) at any output position gets a kernel of
// the rows and columns that do, and pads reduced to keep the output the same. On small maps
// this is most of the kernel: Inception v3's Mixed_7 convolutions run on 1x1 maps at an 80x80
// input, where a 3x3 kernel with pad 1 reads only its centre tap (and a 1x3 only its middle
// one), so the kernel read 9 (3) times the weights it needed from memory.
//
// Along an axis (input size I, kernel K, stride s, dilation d, begin pad p, output O), tap k
// reads input o*s - p + k*d for o in [0, O): inside [0, I) for some o exactly when
// k*d - p <= I - 1 and (O - 1)*s - p + k*d >= 0, a contiguous range [k0, k1] of taps. The
// trimmed conv has K' = k1 - k0 + 1 taps, begin pad p - k0*d and the end pad that gives O.
#include "kiln/ir/constant_data.h"
#include "kiln/ir/window_geometry.h"
#include "kiln/passes/passes.h"

namespace kiln::passes {
namespace {

using ir::OpKind;

struct AxisTrim {
  int64_t first = 0, taps = 0, padBegin = 0, padEnd = 0;
};

// The taps of one axis that meet the input; false if every tap does (nothing to trim) or the
// trimmed pads would not be valid.
bool trimAxis(int64_t in, int64_t k, int64_t s, int64_t d, int64_t p, int64_t out, AxisTrim& t) {
  int64_t k0 = -1, k1 = -1;
  for (int64_t tap = 0; tap < k; ++tap) {
    const bool meets = tap * d - p <= in - 1 && (out - 1) * s - p + tap * d >= 0;
    if (!meets) continue;
    if (k0 < 0) k0 = tap;
    k1 = tap;
  }
  if (k0 < 0) return false;  // no tap meets the input: a constant output, left to the kernel
  t.first = k0;
  t.taps = k1 - k0 + 1;
  t.padBegin = p - k0 * d;
  t.padEnd = (out - 1) * s + d * (t.taps - 1) + 1 - in - t.padBegin;
  return t.padBegin >= 0 && t.padEnd >= 0;
}

bool trim(ir::Graph& graph, ir::Op* op) {
  const ir::Value* x = op->operand(0);
  const ir::Value* weight = op->operand(1);
  if (x->type().rank() != 4 || weight->type().rank() != 4 || !ir::isConstantValue(weight) ||
      (weight->dtype() != ir::DType::F32 && weight->dtype() != ir::DType::F64))
    return false;
  const ir::Shape& xs = x->shape();
  const ir::Shape& ws = weight->shape();  // [OC, C/groups, KH, KW]
  const ir::Shape& ys = op->result()->shape();
  ir::WindowGeometry g = ir::computeWindowGeometry({xs[2], xs[3]}, {ws[2], ws[3]}, op->attrs(),
                                                   /*allowCeilMode=*/false);
  AxisTrim h, w;
  if (!trimAxis(xs[2], ws[2], g.strides[0], g.dilations[0], g.pads[0], ys[2], h) ||
      !trimAxis(xs[3], ws[3], g.strides[1], g.dilations[1], g.pads[1], ys[3], w))
    return false;
  if (h.taps == ws[2] && w.taps == ws[3]) return false;

  std::vector<double> taps = ir::constantDoubles(weight), kept;
  const int64_t rows = ws[0] * ws[1];
  kept.reserve(size_t(rows * h.taps * w.taps));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t kh = h.first; kh < h.first + h.taps; ++kh)
      for (int64_t kw = w.first; kw < w.first + w.taps; ++kw)
        kept.push_back(taps[size_t((r * ws[2] + kh) * ws[3] + kw)]);
  ir::TensorType type(weight->dtype(), {ws[0], ws[1], h.taps, w.taps});
  ir::Value* trimmed = graph.addConstant(weight->name() + ".trimmed", type,
                                         ir::makeConstantBytes(type, kept));
  ir::AttributeMap attrs = op->attrs();
  attrs.erase("auto_pad");
  attrs.set("kernel_shape", std::vector<int64_t>{h.taps, w.taps});
  attrs.set("pads", std::vector<int64_t>{h.padBegin, w.padBegin, h.padEnd, w.padEnd});
  attrs.set("strides", g.strides);
  attrs.set("dilations", g.dilations);
  std::vector<ir::Value*> operands;
  for (size_t i = 0; i < op->numOperands(); ++i) operands.push_back(op->operand(i));
  operands[1] = trimmed;
  ir::Op* replacement = graph.createOp(OpKind::Conv, operands, {op->result()->type()}, attrs,
                                       op->source(), op);
  graph.replaceOpWith(op, replacement->result());
  return true;
}

}  // namespace

bool trimConvTaps(ir::Graph& graph) {
  bool changed = false;
  for (ir::Op* op : graph.opList())
    if (op->kind() == OpKind::Conv) changed |= trim(graph, op);
  if (changed) graph.eraseUnusedConstants();
  return changed;
}

}  // namespace kiln::passes
