// kiln_make_tflite_edge_model DIR: writes DIR/model.tflite, an int8 TFLite model whose shapes
// fall off every kernel's fast path (5 input channels: a kernel row of 15 bytes, 7 output
// channels, padding on every side, a stride-2 depthwise layer and one over 7 channels, an ADD
// over 7 channels and one of a broadcast scalar, a fully connected layer over 175 values into
// 9), DIR/input.npy (seeded random int8) and DIR/expected.npy: the output as TFLite's
// reference kernels compute it, written out here from their arithmetic (int32 sums of
// (x - zx) * w, QuantizeMultiplier of the double effective scale, MultiplyByQuantizedMultiplier
// in quantized_reference.h; ADD's inputs shifted left by 20 and rescaled to twice the larger
// input scale), not through kiln. The microcontroller tests run the model against
// it byte for byte (examples/mcu/CMakeLists.txt).
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "quantized_reference.h"  // compiler/codegen/llvm: the independent rescale
#include "test_support.h"         // compiler/codegen/llvm: randomInts
#include "tflite_test_models.h"

namespace {

using namespace kiln::import::tflite::testing;
using kiln::codegen::testing::randomInts;
using kiln::codegen::testing::refMbqm;

// TFLite's QuantizeMultiplier: real = q * 2^shift with q in [0.5, 1) as Q31.
void quantizeMultiplier(double real, int32_t& multiplier, int& shift) {
  if (real == 0) {
    multiplier = 0, shift = 0;
    return;
  }
  const double q = std::frexp(real, &shift);
  int64_t fixed = int64_t(std::round(q * double(int64_t(1) << 31)));
  if (fixed == (int64_t(1) << 31)) fixed /= 2, ++shift;
  if (shift < -31) shift = 0, fixed = 0;
  multiplier = int32_t(fixed);
}

struct Quant {
  float scale;
  int32_t zeroPoint;
};

int8_t requantize(int32_t acc, double effectiveScale, int32_t zeroPoint) {
  int32_t m = 0;
  int shift = 0;
  quantizeMultiplier(effectiveScale, m, shift);
  const int32_t y = refMbqm(acc, m, shift) + zeroPoint;
  return int8_t(std::min(127, std::max(-128, y)));
}

// TFLite's int8 ADD of a and b (b broadcast when it has one element).
std::vector<int8_t> add(const std::vector<int8_t>& a, Quant aq, const std::vector<int8_t>& b,
                        Quant bq, Quant yq) {
  const int leftShift = 20;
  const double twiceMax = 2.0 * std::max(double(aq.scale), double(bq.scale));
  int32_t ma, mb, my;
  int sa, sb, sy;
  quantizeMultiplier(double(aq.scale) / twiceMax, ma, sa);
  quantizeMultiplier(double(bq.scale) / twiceMax, mb, sb);
  quantizeMultiplier(twiceMax / (double(1 << leftShift) * double(yq.scale)), my, sy);
  std::vector<int8_t> y(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const int32_t av = refMbqm((a[i] - aq.zeroPoint) * (1 << leftShift), ma, sa);
    const int32_t bv =
        refMbqm((b[b.size() == 1 ? 0 : i] - bq.zeroPoint) * (1 << leftShift), mb, sb);
    const int32_t v = refMbqm(av + bv, my, sy) + yq.zeroPoint;
    y[i] = int8_t(std::min(127, std::max(-128, v)));
  }
  return y;
}

// NHWC convolution (depthwise: one input channel per output channel), TFLite's SAME padding.
std::vector<int8_t> conv(const std::vector<int8_t>& x, int H, int W, int C, Quant xq,
                         const std::vector<int8_t>& w, const std::vector<float>& wScales,
                         const std::vector<int32_t>& bias, int OC, int K, int stride, bool same,
                         bool depthwise, Quant yq, int& OH, int& OW) {
  OH = same ? (H + stride - 1) / stride : (H - K) / stride + 1;
  OW = same ? (W + stride - 1) / stride : (W - K) / stride + 1;
  const int pt = same ? std::max((OH - 1) * stride + K - H, 0) / 2 : 0;
  const int pl = same ? std::max((OW - 1) * stride + K - W, 0) / 2 : 0;
  std::vector<int8_t> y(size_t(OH * OW * OC));
  for (int oh = 0; oh < OH; ++oh)
    for (int ow = 0; ow < OW; ++ow)
      for (int oc = 0; oc < OC; ++oc) {
        int32_t acc = bias[size_t(oc)];
        for (int kh = 0; kh < K; ++kh)
          for (int kw = 0; kw < K; ++kw) {
            const int ih = oh * stride - pt + kh, iw = ow * stride - pl + kw;
            if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
            if (depthwise) {
              acc += (x[size_t((ih * W + iw) * C + oc)] - xq.zeroPoint) *
                     w[size_t((kh * K + kw) * C + oc)];
              continue;
            }
            for (int ic = 0; ic < C; ++ic)
              acc += (x[size_t((ih * W + iw) * C + ic)] - xq.zeroPoint) *
                     w[size_t(((oc * K + kh) * K + kw) * C + ic)];
          }
        const double scale = double(xq.scale) * double(wScales[size_t(oc)]) / double(yq.scale);
        y[size_t((oh * OW + ow) * OC + oc)] = requantize(acc, scale, yq.zeroPoint);
      }
  return y;
}

void writeNpyInt8(const std::string& path, const std::vector<int>& shape,
                  const std::vector<int8_t>& values) {
  std::string dims;
  for (int d : shape) dims += std::to_string(d) + ", ";
  std::string header = "{'descr': '|i1', 'fortran_order': False, 'shape': (" + dims + "), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  const uint16_t length = uint16_t(header.size());
  out.put(char(length & 0xff)).put(char(length >> 8));
  out.write(header.data(), std::streamsize(header.size()));
  out.write(reinterpret_cast<const char*>(values.data()), std::streamsize(values.size()));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: kiln_make_tflite_edge_model DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  std::filesystem::create_directories(dir);
  const int H = 9, W = 9, C = 5, C1 = 8, C3 = 7, N = 9;
  const Quant xq{0.05f, -3}, y1q{0.1f, 2}, y2q{0.12f, -1}, y3q{0.1f, 0}, y4q{0.11f, 1}, outq{3.0f, 5};
  const Quant y5q{0.17f, -2}, cq{0.04f, 3}, y6q{0.19f, 4};
  const std::vector<int8_t> c = {int8_t(-71)};  // the broadcast scalar
  std::vector<float> w1Scales, w2Scales, w3Scales, w5Scales;
  for (int c = 0; c < C1; ++c) w1Scales.push_back(0.01f + 0.002f * float(c));
  for (int c = 0; c < C1; ++c) w2Scales.push_back(0.02f + 0.003f * float(c));
  for (int c = 0; c < C3; ++c) w3Scales.push_back(0.015f + 0.001f * float(c));
  for (int c = 0; c < C3; ++c) w5Scales.push_back(0.02f + 0.002f * float(c));
  const float w4Scale = 0.01f;
  const std::vector<int8_t> x = randomInts<int8_t>(size_t(H * W * C), 1, -128, 127);
  const std::vector<int8_t> w1 = randomInts<int8_t>(size_t(C1 * 3 * 3 * C), 2, -127, 127);
  const std::vector<int8_t> w2 = randomInts<int8_t>(size_t(3 * 3 * C1), 3, -127, 127);
  const std::vector<int8_t> w3 = randomInts<int8_t>(size_t(C3 * C1), 4, -127, 127);
  const std::vector<int8_t> w4 = randomInts<int8_t>(size_t(N * 5 * 5 * C3), 5, -127, 127);
  const std::vector<int32_t> b1 = randomInts<int32_t>(size_t(C1), 6, -3000, 3000);
  const std::vector<int32_t> b2 = randomInts<int32_t>(size_t(C1), 7, -3000, 3000);
  const std::vector<int32_t> b3 = randomInts<int32_t>(size_t(C3), 8, -3000, 3000);
  const std::vector<int8_t> w5 = randomInts<int8_t>(size_t(3 * 3 * C3), 10, -127, 127);
  const std::vector<int32_t> b5 = randomInts<int32_t>(size_t(C3), 11, -3000, 3000);
  const std::vector<int32_t> b4 = randomInts<int32_t>(size_t(N), 9, -3000, 3000);

  // The reference.
  int H1, W1, H2, W2, H3, W3, H4, W4;
  std::vector<int8_t> y1 =
      conv(x, H, W, C, xq, w1, w1Scales, b1, C1, 3, 1, true, false, y1q, H1, W1);
  std::vector<int8_t> y2 =
      conv(y1, H1, W1, C1, y1q, w2, w2Scales, b2, C1, 3, 2, true, true, y2q, H2, W2);
  std::vector<int8_t> y3 =
      conv(y2, H2, W2, C1, y2q, w3, w3Scales, b3, C3, 1, 1, false, false, y3q, H3, W3);
  // 7 channels: not a multiple of the microcontroller depthwise kernel's 4 (the plain loops).
  std::vector<int8_t> y4 =
      conv(y3, H3, W3, C3, y3q, w5, w5Scales, b5, C3, 3, 1, true, true, y4q, H4, W4);
  // A residual ADD over 7 channels, then one of a constant scalar.
  std::vector<int8_t> y5 = add(y4, y4q, y3, y3q, y5q);
  std::vector<int8_t> y6 = add(y5, y5q, c, cq, y6q);
  const int K = H4 * W4 * C3;  // 175
  std::vector<int8_t> out(static_cast<size_t>(N));
  for (int n = 0; n < N; ++n) {
    int32_t acc = b4[size_t(n)];
    for (int k = 0; k < K; ++k) acc += (y6[size_t(k)] - y6q.zeroPoint) * w4[size_t(n * K + k)];
    out[size_t(n)] =
        requantize(acc, double(y6q.scale) * double(w4Scale) / double(outq.scale), outq.zeroPoint);
  }

  // The model: tensors in the order the operators below name them.
  const fb::TensorType i8 = fb::TensorType::INT8, i32 = fb::TensorType::INT32;
  TestModel m;
  auto activation = [&](const char* name, std::vector<int32_t> shape, Quant q) {
    m.tensors.push_back({name, i8, std::move(shape), {}, {q.scale}, {q.zeroPoint}});
  };
  // A convolution's per-channel weights (quantised along `axis`) and bias (scale input x w).
  auto convParameters = [&](const char* w, const char* b, std::vector<int32_t> shape,
                            const std::vector<int8_t>& weights, const std::vector<float>& scales,
                            int32_t axis, const std::vector<int32_t>& bias, Quant input) {
    const size_t channels = scales.size();
    std::vector<float> biasScales;
    for (float v : scales) biasScales.push_back(input.scale * v);
    m.tensors.push_back({w, i8, std::move(shape), int8Bytes(weights), scales,
                         std::vector<int64_t>(channels, 0), axis});
    m.tensors.push_back({b, i32, {int32_t(channels)}, int32Bytes(bias), biasScales,
                         std::vector<int64_t>(channels, 0), 0});
  };
  activation("x", {1, H, W, C}, xq);
  convParameters("w1", "b1", {C1, 3, 3, C}, w1, w1Scales, 0, b1, xq);
  activation("y1", {1, H1, W1, C1}, y1q);
  convParameters("w2", "b2", {1, 3, 3, C1}, w2, w2Scales, 3, b2, y1q);
  activation("y2", {1, H2, W2, C1}, y2q);
  convParameters("w3", "b3", {C3, 1, 1, C1}, w3, w3Scales, 0, b3, y2q);
  activation("y3", {1, H3, W3, C3}, y3q);
  convParameters("w5", "b5", {1, 3, 3, C3}, w5, w5Scales, 3, b5, y3q);
  activation("y4", {1, H4, W4, C3}, y4q);  // 12
  activation("y5", {1, H4, W4, C3}, y5q);  // 13
  m.tensors.push_back({"c", i8, {1}, int8Bytes(c), {cq.scale}, {cq.zeroPoint}});
  activation("y6", {1, H4, W4, C3}, y6q);  // 15
  m.tensors.push_back({"shape", i32, {2}, int32Bytes({1, K})});
  activation("r", {1, K}, y6q);  // 17
  m.tensors.push_back({"w4", i8, {N, K}, int8Bytes(w4), {w4Scale}, {0}});
  m.tensors.push_back({"b4", i32, {N}, int32Bytes(b4), {y6q.scale * w4Scale}, {0}});
  activation("out", {1, N}, outq);  // 20
  const auto none = fb::ActivationFunctionType::NONE;
  // CONV_2D (code 3) from tensor `in` (weights and bias next) to `out`.
  auto conv2d = [&](int32_t in, int32_t out, fb::Padding padding) {
    return TestOperator{3, {in, in + 1, in + 2}, {out}, fb::BuiltinOptions::Conv2DOptions,
                        [=](flatbuffers::FlatBufferBuilder& b) {
                          return fb::CreateConv2DOptions(b, padding, 1, 1, none).Union();
                        }};
  };
  // DEPTHWISE_CONV_2D (code 4) from tensor `in` (weights and bias next) to `out`, SAME.
  auto depthwise = [&](int32_t in, int32_t out, int stride) {
    return TestOperator{4, {in, in + 1, in + 2}, {out}, fb::BuiltinOptions::DepthwiseConv2DOptions,
                        [=](flatbuffers::FlatBufferBuilder& b) {
                          return fb::CreateDepthwiseConv2DOptions(b, fb::Padding::SAME, stride,
                                                                  stride, 1, none)
                              .Union();
                        }};
  };
  // ADD (code 0) of tensors a and b to `out`.
  auto add2 = [&](int32_t a, int32_t b, int32_t out) {
    return TestOperator{0,
                        {a, b},
                        {out},
                        fb::BuiltinOptions::AddOptions,
                        [=](flatbuffers::FlatBufferBuilder& builder) {
                          return fb::CreateAddOptions(builder, none).Union();
                        }};
  };
  m.operators = {
      conv2d(0, 3, fb::Padding::SAME),
      depthwise(3, 6, 2),
      conv2d(6, 9, fb::Padding::VALID),
      depthwise(9, 12, 1),
      add2(12, 9, 13),
      add2(13, 14, 15),
      {22,
       {15, 16},
       {17},
       fb::BuiltinOptions::ReshapeOptions,
       [&](flatbuffers::FlatBufferBuilder& b) {
         return fb::CreateReshapeOptions(b, b.CreateVector(std::vector<int32_t>{1, K})).Union();
       }},
      {9,
       {17, 18, 19},
       {20},
       fb::BuiltinOptions::FullyConnectedOptions,
       [&](flatbuffers::FlatBufferBuilder& b) {
         return fb::CreateFullyConnectedOptions(b, none).Union();
       }},
  };
  m.inputs = {0};
  m.outputs = {20};
  const std::string bytes = buildTflite(m);
  std::ofstream(dir + "/model.tflite", std::ios::binary)
      .write(bytes.data(), std::streamsize(bytes.size()));
  writeNpyInt8(dir + "/input.npy", {1, H, W, C}, x);
  writeNpyInt8(dir + "/expected.npy", {1, N}, out);
  std::printf("%s/model.tflite: %d MACs\n", dir.c_str(),
              H1 * W1 * C1 * 9 * C + H2 * W2 * C1 * 9 + H3 * W3 * C3 * C1 + H4 * W4 * C3 * 9 +
                  N * K);
  return 0;
}
