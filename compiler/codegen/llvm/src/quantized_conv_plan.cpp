// Which int8 convolutions take the output-channel-vectorised kernel and its weight packing
// (kiln/codegen/quantized_conv_plan.h).
#include "kiln/codegen/quantized_conv_plan.h"

#include <algorithm>

#include "target_machine.h"

namespace kiln::codegen {
namespace {

// The start table of the kernel (bias - z * sum(w) per output channel) lives on the stack.
constexpr int64_t kMaxOutputChannels = 4096;
// Row spans the kernel reads (as words of 4 bytes).
constexpr int64_t kMaxRowBytes = 64;
// The row buffer on the stack.
constexpr int64_t kMaxRowBufferBytes = 64 * 1024;

}  // namespace

int64_t int8OcTargetLanes(const TargetConfig& target) {
  if (target.microcontroller) return 0;
  if (target.arch == TargetArch::AArch64) return detail::targetHasFeature(target, "dotprod") ? 4 : 0;
  if (target.arch != TargetArch::X86_64) return 0;
  // 512-bit vpdpbusd; the narrower ones (fewer output channels) need AVX512-VL.
  if (detail::targetHasFeature(target, "avx512vnni") && detail::targetHasFeature(target, "avx512bw") &&
      detail::targetHasFeature(target, "avx512vl"))
    return 16;
  return detail::targetHasFeature(target, "avxvnni") ? 8 : 0;
}

int64_t int8OcRowBytes(const KernelDesc& d) {
  const std::vector<int64_t>& ws = d.inputs[1].shape;  // [OC, KH, KW, C]
  if (ws.size() != 4 || ws[3] % 4 == 0 || d.dilations[1] != 1) return 0;
  const int64_t rowBytes = (ws[2] * ws[3] + 3) / 4 * 4;
  return rowBytes <= kMaxRowBytes ? rowBytes : 0;
}

int64_t int8OcBufferColumns(const KernelDesc& d) {
  const int64_t W = d.inputs[0].shape[2], OW = d.output.shape[2], KW = d.inputs[1].shape[2];
  return std::max(W + d.pads[1], (OW - 1) * d.strides[1] + (KW - 1) * d.dilations[1] + 1);
}

int64_t int8OcLanes(const KernelDesc& d, int64_t targetLanes, bool mayGrowConstants) {
  if (targetLanes == 0 || d.kind != KernelKind::Quantized || d.quant.op != QuantOp::Conv ||
      d.groups != 1)
    return 0;
  if (d.inputs.size() < 2 || d.inputs[0].type != ElemType::I8 || d.inputs[1].type != ElemType::I8 ||
      d.output.type != ElemType::I8)
    return 0;
  if (d.inputs.size() == 3 && d.inputs[2].type != ElemType::I32) return 0;
  const std::vector<int64_t>& ws = d.inputs[1].shape;  // [OC, KH, KW, C]
  if (ws.size() != 4 || d.inputs[0].shape.size() != 4) return 0;
  const int64_t oc = ws[0], c = ws[3];
  if (oc > kMaxOutputChannels) return 0;
  if (ws[1] * int8OcBufferColumns(d) * c > kMaxRowBufferBytes) return 0;
  if (c % 4 != 0 && (!mayGrowConstants || int8OcRowBytes(d) == 0)) return 0;
  for (int64_t lanes = targetLanes; lanes >= 4; lanes /= 2)
    if (oc % lanes == 0) return lanes;
  return 0;
}

std::vector<int8_t> packInt8OcWeights(const std::vector<int8_t>& w, int64_t oc, int64_t taps,
                                      int64_t c, int64_t lanes) {
  std::vector<int8_t> packed(w.size());
  const int64_t groups = c / 4;
  size_t at = 0;
  for (int64_t block = 0; block < oc / lanes; ++block)
    for (int64_t tap = 0; tap < taps; ++tap)
      for (int64_t c4 = 0; c4 < groups; ++c4)
        for (int64_t lane = 0; lane < lanes; ++lane)
          for (int64_t j = 0; j < 4; ++j)
            packed[at++] = w[size_t(((block * lanes + lane) * taps + tap) * c + c4 * 4 + j)];
  return packed;
}

std::vector<int8_t> packInt8OcRowWeights(const std::vector<int8_t>& w, int64_t oc, int64_t kh,
                                         int64_t kwc, int64_t rowBytes, int64_t lanes) {
  std::vector<int8_t> packed(size_t(oc * kh * rowBytes), 0);
  size_t at = 0;
  for (int64_t block = 0; block < oc / lanes; ++block)
    for (int64_t row = 0; row < kh; ++row)
      for (int64_t r4 = 0; r4 < rowBytes / 4; ++r4)
        for (int64_t lane = 0; lane < lanes; ++lane)
          for (int64_t j = 0; j < 4; ++j, ++at) {
            const int64_t e = r4 * 4 + j;
            if (e < kwc) packed[at] = w[size_t(((block * lanes + lane) * kh + row) * kwc + e)];
          }
  return packed;
}

}  // namespace kiln::codegen
