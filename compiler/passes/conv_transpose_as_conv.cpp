// ConvTranspose as a convolution: a 2-D transposed convolution with constant weights whose
// kernel is a multiple of its stride (the upsampling layers of decoders and segmentation
// nets: 4x4 stride 2 pad 1, 2x2 stride 2) becomes one stride-1 Conv that computes every
// stride phase of the output as channels of its own, then the phases interleaved into the
// output (Reshape, Transpose, Reshape: a depth-to-space). The Conv runs on the code
// generator's fast convolution kernels instead of the transposed convolution's plain loops.
//
// Per spatial axis (input size I, kernel K = s*t, stride s, begin pad p, output O = s*Q),
// output position o = s*q + r (phase r) takes the taps k = s*m + f_r, f_r = (r + p) mod s,
// from input q + c_r - m, c_r = floor((r + p) / s), m in [0, t). As a correlation over input
// q - padBegin + j, j in [0, T): T = t + max c - min c taps (the phases' windows united; a
// phase's taps outside its own window are 0), padBegin = t - 1 - min c, and the end pad
// that gives Q outputs. Conv output channel (oc*sh + rh)*sw + rw holds phase (rh, rw) of
// output channel oc; its bias is oc's.
//
// Left as they are: groups, dilations, a kernel not a multiple of the stride, an output size
// not a multiple of the stride, non-constant or non-f32 weights, other ranks.
#include "kiln/ir/constant_data.h"
#include "kiln/ir/window_geometry.h"
#include "kiln/passes/passes.h"

namespace kiln::passes {
namespace {

using ir::OpKind;

// One spatial axis of the rewrite (see the top of the file).
struct Axis {
  int64_t s = 1, t = 1, taps = 1, padBegin = 0, padEnd = 0, phasesOut = 0;
  std::vector<int64_t> f, c;  // per phase r: the first tap f_r and the window offset c_r
  int64_t cMin = 0;
};

// The axis for input size `in`, kernel `k`, stride `s`, begin pad `p` and output `out`; false
// if the rewrite does not apply.
bool planAxis(int64_t in, int64_t k, int64_t s, int64_t p, int64_t out, Axis& a) {
  if (s < 1 || k % s != 0 || out % s != 0 || p < 0) return false;
  a.s = s;
  a.t = k / s;
  a.phasesOut = out / s;
  for (int64_t r = 0; r < s; ++r) {
    a.f.push_back((r + p) % s);
    a.c.push_back((r + p) / s);
  }
  a.cMin = a.c.front();  // c_r does not decrease with r
  a.taps = a.t + a.c.back() - a.cMin;
  a.padBegin = a.t - 1 - a.cMin;
  a.padEnd = a.phasesOut + a.taps - 1 - in - a.padBegin;
  return a.padBegin >= 0 && a.padEnd >= 0;
}

// The ConvTranspose tap along `a` that phase r's window position j reads, or -1 (a zero).
int64_t tapOf(const Axis& a, int64_t r, int64_t j) {
  const int64_t m = a.t - 1 - (j - (a.c[size_t(r)] - a.cMin));
  if (m < 0 || m >= a.t) return -1;
  return a.s * m + a.f[size_t(r)];
}

ir::Value* int64Constant(ir::Graph& graph, const std::string& name,
                         const std::vector<int64_t>& values) {
  ir::TensorType type(ir::DType::I64, {int64_t(values.size())});
  return graph.addConstant(name, type, ir::makeConstantBytesInt(type, values));
}

bool rewrite(ir::Graph& graph, ir::Op* op) {
  ir::Value* x = op->operand(0);
  const ir::Value* weight = op->operand(1);
  const ir::Value* bias = op->optionalOperand(2);
  if (x->type().rank() != 4 || weight->type().rank() != 4 || x->dtype() != ir::DType::F32 ||
      weight->dtype() != ir::DType::F32 || !ir::isConstantValue(weight) ||
      (bias && !ir::isConstantValue(bias)))
    return false;
  if (op->attrs().getInt("group", 1) != 1) return false;
  const ir::Shape& xs = x->shape();
  const ir::Shape& ws = weight->shape();  // [C, OC, KH, KW]
  const ir::Shape& ys = op->result()->shape();
  ir::ConvTransposeGeometry g =
      ir::computeConvTransposeGeometry({xs[2], xs[3]}, {ws[2], ws[3]}, op->attrs());
  if (g.dilations[0] != 1 || g.dilations[1] != 1) return false;
  Axis h, w;
  if (!planAxis(xs[2], ws[2], g.strides[0], g.pads[0], ys[2], h) ||
      !planAxis(xs[3], ws[3], g.strides[1], g.pads[1], ys[3], w))
    return false;
  // The united windows hold zeros where a phase has no tap (4x4 stride 2 pad 1: 3x3 windows
  // for 2x2 taps, 9/4 the multiplies), still far faster on the convolution kernels.
  const int64_t C = ws[0], OC = ws[1], phases = h.s * w.s, CO = OC * phases;

  std::vector<double> taps = ir::constantDoubles(weight);
  std::vector<double> convWeights(size_t(CO * C * h.taps * w.taps), 0.0);
  for (int64_t oc = 0; oc < OC; ++oc)
    for (int64_t rh = 0; rh < h.s; ++rh)
      for (int64_t rw = 0; rw < w.s; ++rw) {
        const int64_t co = (oc * h.s + rh) * w.s + rw;
        for (int64_t c = 0; c < C; ++c)
          for (int64_t jh = 0; jh < h.taps; ++jh) {
            const int64_t kh = tapOf(h, rh, jh);
            if (kh < 0) continue;
            for (int64_t jw = 0; jw < w.taps; ++jw) {
              const int64_t kw = tapOf(w, rw, jw);
              if (kw < 0) continue;
              convWeights[size_t(((co * C + c) * h.taps + jh) * w.taps + jw)] =
                  taps[size_t(((c * OC + oc) * ws[2] + kh) * ws[3] + kw)];
            }
          }
      }
  const std::string base = op->result()->name();
  ir::TensorType weightType(ir::DType::F32, {CO, C, h.taps, w.taps});
  std::vector<ir::Value*> operands = {
      x, graph.addConstant(base + ".phase_weights", weightType,
                           ir::makeConstantBytes(weightType, convWeights))};
  if (bias) {
    std::vector<double> b = ir::constantDoubles(bias), phaseBias;
    for (int64_t oc = 0; oc < OC; ++oc)
      for (int64_t p = 0; p < phases; ++p) phaseBias.push_back(b[size_t(oc)]);
    ir::TensorType biasType(ir::DType::F32, {CO});
    operands.push_back(graph.addConstant(base + ".phase_bias", biasType,
                                         ir::makeConstantBytes(biasType, phaseBias)));
  }
  ir::AttributeMap attrs;
  attrs.set("kernel_shape", std::vector<int64_t>{h.taps, w.taps});
  attrs.set("strides", std::vector<int64_t>{1, 1});
  attrs.set("dilations", std::vector<int64_t>{1, 1});
  attrs.set("pads", std::vector<int64_t>{h.padBegin, w.padBegin, h.padEnd, w.padEnd});
  attrs.set("group", int64_t{1});
  const int64_t N = xs[0], Q = h.phasesOut, P = w.phasesOut;
  ir::Op* conv = graph.createOp(OpKind::Conv, operands,
                                {ir::TensorType(ir::DType::F32, {N, CO, Q, P})}, attrs,
                                op->source(), op, {base + ".phases"});
  if (phases == 1) {  // stride 1: the Conv's result is the output
    graph.replaceOpWith(op, conv->result());
    return true;
  }
  // [N, OC, sh, sw, Q, P] -> [N, OC, Q, sh, P, sw] -> [N, OC, Q*sh, P*sw].
  ir::Op* split = graph.createOp(
      OpKind::Reshape, {conv->result(), int64Constant(graph, base + ".phase_shape",
                                                      {N, OC, h.s, w.s, Q, P})},
      {ir::TensorType(ir::DType::F32, {N, OC, h.s, w.s, Q, P})}, {}, op->source(), op);
  ir::AttributeMap perm;
  perm.set("perm", std::vector<int64_t>{0, 1, 4, 2, 5, 3});
  ir::Op* interleave = graph.createOp(
      OpKind::Transpose, {split->result()},
      {ir::TensorType(ir::DType::F32, {N, OC, Q, h.s, P, w.s})}, perm, op->source(), op);
  ir::Op* merge = graph.createOp(
      OpKind::Reshape,
      {interleave->result(), int64Constant(graph, base + ".shape", {N, OC, ys[2], ys[3]})},
      {op->result()->type()}, {}, op->source(), op);
  graph.replaceOpWith(op, merge->result());
  return true;
}

}  // namespace

bool convTransposeAsConv(ir::Graph& graph) {
  bool changed = false;
  for (ir::Op* op : graph.opList())
    if (op->kind() == OpKind::ConvTranspose) changed |= rewrite(graph, op);
  if (changed) graph.eraseUnusedConstants();
  return changed;
}

}  // namespace kiln::passes
