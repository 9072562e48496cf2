// The int8 dot-product kernels (emit_quantized_dot.cpp) against an independent reference
// (TFLite's reference convolution / fully connected written out in plain C++ here):
//   - run on this machine: the AVX2 kernels (host target; few-channel convolutions:
//     emit_quantized_conv_pixel.cpp) and, for comparison, the plain
//     loops (x86_64 = x86-64-v2, no AVX2), on random int8 data with zero points, channel
//     counts that are not multiples of 4 or 16, padding taps, strides, dilations, per-channel
//     multipliers, with and without the compile-time zero-point correction;
//   - VNNI (vpdpbusd, which this machine lacks): the kernel's optimised LLVM IR, with every
//     vpdpbusd replaced by an IR function computing Intel's definition (u8 x s8, four
//     products summed into each i32 lane), compiled for this machine and run: this checks
//     the +128 transform and its zero-point bookkeeping, not the instruction itself;
//   - AArch64 +dotprod and x86 VNNI objects contain sdot / vpdpbusd (llvm-objdump);
//     plain-aarch64 objects do not.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <optional>
#include <random>
#include <regex>
#include <sstream>

#include "kiln/codegen/codegen.h"
#include "kiln/codegen/kernel_desc.h"
#include "kiln/codegen/quantized_conv_plan.h"
#include "kiln/codegen/target_config.h"
#include "quantized_reference.h"
#include "test_support.h"

namespace kiln::codegen {
namespace {

// The reference rescale: quantized_reference.h.
using testing::refMbqm;
using testing::randomInts;

TargetConfig target(const std::string& name, const std::string& features = "") {
  TargetRequest request;
  request.name = name;
  request.features = features;
  return resolveTarget(request);
}

std::vector<int8_t> run(const KernelDesc& d, const std::vector<const void*>& inputs,
                        const TargetConfig& t) {
  return testing::runEverySplit<int8_t>(generateKernels({d}, t).bytes, d, inputs);
}

std::string readText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Intel's VPDPBUSD on one 128-bit lane set: acc[i] += sum_j u8(a[4i+j]) * s8(b[4i+j]).
const char* kVpdpbusdEmulation = R"(
define internal <4 x i32> @kiln_test_vpdpbusd(<4 x i32> %acc, <4 x i32> %a, <4 x i32> %b) {
  %ab = bitcast <4 x i32> %a to <16 x i8>
  %bb = bitcast <4 x i32> %b to <16 x i8>
  %az = zext <16 x i8> %ab to <16 x i32>
  %bs = sext <16 x i8> %bb to <16 x i32>
  %p = mul <16 x i32> %az, %bs
  %p0 = shufflevector <16 x i32> %p, <16 x i32> poison, <4 x i32> <i32 0, i32 4, i32 8, i32 12>
  %p1 = shufflevector <16 x i32> %p, <16 x i32> poison, <4 x i32> <i32 1, i32 5, i32 9, i32 13>
  %p2 = shufflevector <16 x i32> %p, <16 x i32> poison, <4 x i32> <i32 2, i32 6, i32 10, i32 14>
  %p3 = shufflevector <16 x i32> %p, <16 x i32> poison, <4 x i32> <i32 3, i32 7, i32 11, i32 15>
  %s01 = add <4 x i32> %p0, %p1
  %s23 = add <4 x i32> %p2, %p3
  %s = add <4 x i32> %s01, %s23
  %r = add <4 x i32> %acc, %s
  ret <4 x i32> %r
}
)";

// The kernel generated for a VNNI target, run here with vpdpbusd emulated (see the top).
// `dotKernel`: the kernel must use vpdpbusd (not one of the few-channel kernels).
std::vector<int8_t> runVnniEmulated(const KernelDesc& d, const std::vector<const void*>& inputs,
                                    bool dotKernel = true) {
  testing::TempFile irFile({}, ".ll");
  const std::string& irPath = irFile.path();
  CodegenOptions options;
  options.dumpIrPath = irPath;
  generateKernels({d}, target("x86_64-v4", "+avx512vnni"), options);
  std::string ir = readText(irPath);
  const std::string intrinsic = "@llvm.x86.avx512.vpdpbusd.128";
  EXPECT_EQ(ir.find(intrinsic) != std::string::npos, dotKernel) << "vpdpbusd in the VNNI kernel";
  ir = std::regex_replace(
      ir,
      std::regex("declare [^\n]*" + std::regex_replace(intrinsic, std::regex("\\."), "\\.") +
                 "[^\n]*\n"),
      "");
  size_t at;
  while ((at = ir.find(intrinsic)) != std::string::npos)
    ir.replace(at, intrinsic.size(), "@kiln_test_vpdpbusd");
  // Run on this machine: drop the AVX-512 CPU and features of the functions.
  ir = std::regex_replace(ir, std::regex(R"re("target-(cpu|features)"="[^"]*")re"), "");
  ir = std::regex_replace(ir, std::regex(R"re("tune-cpu"="[^"]*")re"), "");
  ir += kVpdpbusdEmulation;
  std::ofstream(irPath) << ir;
  std::string soPath = irPath + ".so";
  std::string log = testing::runTool(
      "clang", "-O2 -march=x86-64-v3 -shared -fPIC -nostdlib -Wno-override-module -o " + soPath +
                   " " + irPath);
  std::ifstream so(soPath, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(so)),
                             std::istreambuf_iterator<char>());
  std::remove(soPath.c_str());
  if (bytes.empty()) {
    ADD_FAILURE() << "clang failed: " << log;
    return {};
  }
  return testing::runEverySplit<int8_t>(bytes, d, inputs);
}

// ---- convolution cases -------------------------------------------------------------------------
struct ConvCase {
  int64_t h, w, c, oc, kh, kw;
  std::array<int64_t, 2> strides, dilations;
  std::array<int64_t, 4> pads;
  int32_t zx;
  bool bias, perChannel;
};

using Problem = testing::QuantProblem;

void setRescale(QuantDesc& q, int64_t channels, bool perChannel, uint32_t seed) {
  std::mt19937 rng(seed);
  for (int64_t o = 0; o < (perChannel ? channels : 1); ++o) {
    q.multipliers.push_back(int32_t(1 << 30) + int32_t(rng() % (1 << 30)));
    // Every third channel anywhere in [-31, 1] (left shifts, everything shifted out).
    q.shifts.push_back(o % 3 == 2 ? 1 - int32_t(rng() % 33) : -int32_t(7 + rng() % 4));
  }
  q.outputZeroPoint = 3;
  q.actMin = -125, q.actMax = 120;
}

int8_t finish(int32_t acc, const QuantDesc& q, int64_t channel) {
  size_t c = q.multipliers.size() > 1 ? size_t(channel) : 0;
  int32_t y = refMbqm(acc, q.multipliers[c], q.shifts[c]) + q.outputZeroPoint;
  return int8_t(std::min(std::max(y, q.actMin), q.actMax));
}

// `fill`: every activation and weight this value instead of random ones.
Problem convProblem(const ConvCase& t, std::optional<int8_t> fill = std::nullopt) {
  const int64_t oh = testing::refWindowOutput(t.h, t.kh, t.strides[0], t.dilations[0], t.pads[0], t.pads[2]);
  const int64_t ow = testing::refWindowOutput(t.w, t.kw, t.strides[1], t.dilations[1], t.pads[1], t.pads[3]);
  Problem p;
  KernelDesc& d = p.desc;
  d.kind = KernelKind::Quantized;
  d.name = "qdot";
  d.quant.op = QuantOp::Conv;
  d.inputs = {{ElemType::I8, {1, t.h, t.w, t.c}}, {ElemType::I8, {t.oc, t.kh, t.kw, t.c}}};
  if (t.bias) d.inputs.push_back({ElemType::I32, {t.oc}});
  d.output = {ElemType::I8, {1, oh, ow, t.oc}};
  d.kernelShape = {t.kh, t.kw};
  d.strides = t.strides;
  d.dilations = t.dilations;
  d.pads = t.pads;
  QuantDesc& q = d.quant;
  q.inputZeroPoint = t.zx;
  setRescale(q, t.oc, t.perChannel, 5);
  p.x = randomInts<int8_t>(size_t(t.h * t.w * t.c), 11, -128, 127);
  p.w = randomInts<int8_t>(size_t(t.oc * t.kh * t.kw * t.c), 12, -127, 127);
  if (t.bias) p.b = randomInts<int32_t>(size_t(t.oc), 13, -30000, 30000);
  if (fill) {
    std::fill(p.x.begin(), p.x.end(), *fill);
    std::fill(p.w.begin(), p.w.end(), *fill);
  }
  for (int64_t i = 0; i < oh; ++i)
    for (int64_t j = 0; j < ow; ++j)
      for (int64_t o = 0; o < t.oc; ++o) {
        int32_t acc = t.bias ? p.b[size_t(o)] : 0;
        for (int64_t ki = 0; ki < t.kh; ++ki)
          for (int64_t kj = 0; kj < t.kw; ++kj) {
            int64_t ih = i * t.strides[0] - t.pads[0] + ki * t.dilations[0];
            int64_t iw = j * t.strides[1] - t.pads[1] + kj * t.dilations[1];
            if (ih < 0 || ih >= t.h || iw < 0 || iw >= t.w) continue;  // padding taps skipped
            for (int64_t c = 0; c < t.c; ++c) {
              int32_t xv = p.x[size_t((ih * t.w + iw) * t.c + c)];
              int32_t wv = p.w[size_t(((o * t.kh + ki) * t.kw + kj) * t.c + c)];
              acc += wv * (xv - t.zx);
            }
          }
        p.want.push_back(finish(acc, q, o));
      }
  return p;
}

// Every way this machine can run the case gives the reference bytes.
void checkConvCase(const ConvCase& t, bool dotKernel = true) {
  Problem p = convProblem(t);
  for (bool corrected : {false, true}) {
    if (corrected) p.addCorrections();
    SCOPED_TRACE(corrected ? "with the zero-point correction" : "zero point in the kernel");
    EXPECT_EQ(run(p.desc, p.inputs(), target("host")), p.want) << "host (AVX2 dot products)";
    EXPECT_EQ(run(p.desc, p.inputs(), target("x86_64")), p.want) << "x86-64-v2 (plain loops)";
    EXPECT_EQ(runVnniEmulated(p.desc, p.inputs(), dotKernel), p.want)
        << "VNNI kernel, vpdpbusd emulated";
  }
}

TEST(QuantizedDot, Conv3x3PaddedChannelsNotMultiplesOf16Or4) {
  checkConvCase({6, 7, 37, 7, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, -7, true, true});
}
TEST(QuantizedDot, Conv1x1StridedNoBias) {
  checkConvCase({5, 6, 48, 16, 1, 1, {2, 2}, {1, 1}, {0, 0, 0, 0}, 5, false, true});
}
TEST(QuantizedDot, ConvDilatedAsymmetricPadsTapByTap) {
  checkConvCase({7, 8, 20, 5, 3, 3, {2, 1}, {2, 2}, {2, 1, 0, 2}, -100, true, true});
}
TEST(QuantizedDot, ConvFewChannelsWholeRowSpans) {
  // C = 8 < 16: only whole kernel rows (3 taps, 24 bytes) reach the dot product.
  checkConvCase({6, 9, 8, 6, 3, 3, {1, 2}, {1, 1}, {1, 1, 1, 1}, 17, true, true});
}
TEST(QuantizedDot, ConvInputZeroPointMinus128AndZero) {
  // -128: VNNI's shifted zero point is 0; 0: the plain kernels need no correction.
  checkConvCase({5, 5, 16, 4, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, -128, true, true});
  checkConvCase({5, 5, 16, 4, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, 0, true, true});
}
TEST(QuantizedDot, ConvTallKernelExtremeValues) {
  // Every activation and weight -128: the largest products the i32 lanes sum, with
  // x - zx = 0 (zx = -128) and x - zx = -255 (zx = 127).
  for (int32_t zx : {-128, 127}) {
    Problem p =
        convProblem({9, 2, 32, 9, 5, 1, {1, 1}, {1, 1}, {2, 0, 2, 0}, zx, true, true}, -128);
    p.addCorrections();
    EXPECT_EQ(run(p.desc, p.inputs(), target("host")), p.want) << "zx " << zx;
    EXPECT_EQ(runVnniEmulated(p.desc, p.inputs()), p.want) << "zx " << zx;
  }
}

TEST(QuantizedDot, ConvFewChannelsByPixel) {
  // KW * C < 16: emit_quantized_conv_pixel.cpp (vectorised over the output channels).
  checkConvCase({10, 8, 1, 12, 10, 4, {2, 2}, {1, 1}, {4, 1, 5, 2}, -5, true, true}, false);
  checkConvCase({9, 9, 3, 9, 3, 3, {2, 2}, {1, 2}, {0, 0, 1, 1}, -128, false, true}, false);
}

// ---- output channels in vector lanes (emit_quantized_conv_oc.cpp) ----------------------------
// The VNNI targets this machine runs natively: AVX512-VNNI (16 lanes, 32 registers) and
// AVX-VNNI (8 lanes, 16 registers).
std::vector<TargetConfig> runnableVnniTargets() {
  std::vector<TargetConfig> targets;
  if (__builtin_cpu_supports("avx512vnni") && testing::hostRunsAvx512())
    targets.push_back(target("x86_64-v4", "+avx512vnni"));
  if (__builtin_cpu_supports("avxvnni")) targets.push_back(target("x86_64-v3", "+avxvnni"));
  return targets;
}

// The problem with its weights packed for the kernel on `t` (as packConvWeights does).
Problem packedForLanes(Problem p, const TargetConfig& t) {
  const int64_t lanes = int8OcLanes(p.desc, int8OcTargetLanes(t), true);
  EXPECT_GT(lanes, 0) << "the kernel takes the case on " << t.cpu;
  const std::vector<int64_t>& ws = p.desc.inputs[1].shape;
  const int64_t rowBytes = int8OcRowBytes(p.desc);
  if (rowBytes > 0) {
    p.w = packInt8OcRowWeights(p.w, ws[0], ws[1], ws[2] * ws[3], rowBytes, lanes);
    p.desc.weightLayout = ConvWeights::Int8OcRowBlocks;
  } else {
    p.w = packInt8OcWeights(p.w, ws[0], ws[1] * ws[2], ws[3], lanes);
    p.desc.weightLayout = ConvWeights::Int8OcBlocks;
  }
  p.desc.weightPanel = lanes;
  return p;
}

// The case on every VNNI target this machine runs, with and without the lowering's
// correction (which the kernel does not need), against the reference bytes.
void checkOcCase(const Problem& problem, int64_t wantLanesAvx512) {
  std::vector<TargetConfig> targets = runnableVnniTargets();
  if (targets.empty()) GTEST_SKIP() << "this CPU has no VNNI";
  EXPECT_EQ(int8OcLanes(problem.desc, 16, true), wantLanesAvx512);
  for (const TargetConfig& t : targets) {
    Problem p = packedForLanes(problem, t);
    for (bool corrected : {false, true}) {
      if (corrected) p.addCorrections();
      std::vector<int8_t> got = run(p.desc, p.inputs(), t);
      ASSERT_EQ(got.size(), p.want.size());
      for (size_t i = 0; i < got.size(); ++i)
        ASSERT_EQ(int(got[i]), int(p.want[i]))
            << t.cpu << t.features << (corrected ? ", with the correction" : "") << ": element "
            << i << " (pixel " << i / size_t(p.desc.output.shape[3]) << ", channel "
            << i % size_t(p.desc.output.shape[3]) << ")";
    }
  }
}

TEST(QuantizedConvOc, Conv3x3PaddedTwoBlocks) {
  checkOcCase(convProblem({6, 7, 8, 32, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, -7, true, true}), 16);
}
TEST(QuantizedConvOc, StridedAsymmetricPadsBlockAndPixelRemainders) {
  // 80 channels: a tile of 4 blocks and one of 1 on AVX-512; 13 output columns: a pixel
  // tile remainder; TFLite's SAME padding at stride 2.
  checkOcCase(convProblem({9, 26, 20, 80, 3, 3, {2, 2}, {1, 1}, {0, 0, 1, 1}, 12, true, true}), 16);
}
TEST(QuantizedConvOc, Pointwise24ChannelsNoBias) {
  // 24 output channels: blocks of 8 lanes; zx = -128 (x + 128 - 128: no start term).
  checkOcCase(convProblem({5, 11, 64, 24, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, -128, false, true}), 8);
}
TEST(QuantizedConvOc, DilatedTwelveChannelsFourLanes) {
  checkOcCase(convProblem({8, 9, 12, 12, 3, 2, {1, 2}, {2, 1}, {2, 1, 2, 0}, 0, true, true}), 4);
}
TEST(QuantizedConvOc, ImageSmallerThanTheKernel) {
  // Most taps of every window lie in the padding.
  checkOcCase(convProblem({2, 3, 16, 16, 5, 5, {1, 1}, {1, 1}, {2, 2, 2, 2}, 3, true, true}), 16);
}
TEST(QuantizedConvOc, ExtremeValues) {
  // Every activation and weight -128, zx = 127: x - zx = -255 in every term.
  checkOcCase(convProblem({4, 4, 32, 16, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, 127, true, true}, -128),
              16);
}

TEST(QuantizedConvOc, RowSpansOfStems) {
  // Image stems: 3x3 stride 2 on RGB (TFLite SAME: padding at the bottom and right; spans of
  // 9 bytes read as 12), a keyword-spotting 10x4 stride 2 on one channel (4-byte spans, no
  // padding bytes), 7x7 stride 2 pad 3 (21 bytes as 24), and 6 channels dilated by rows only.
  checkOcCase(convProblem({15, 14, 3, 8, 3, 3, {2, 2}, {1, 1}, {0, 0, 1, 1}, -1, true, true}), 8);
  checkOcCase(convProblem({13, 10, 1, 64, 10, 4, {2, 2}, {1, 1}, {4, 1, 5, 1}, 83, true, true}), 16);
  checkOcCase(convProblem({12, 19, 3, 32, 7, 7, {2, 2}, {1, 1}, {3, 3, 3, 3}, -128, false, true}), 16);
  checkOcCase(convProblem({10, 9, 6, 16, 3, 3, {1, 1}, {2, 1}, {2, 1, 2, 1}, 7, true, true}), 16);
}
using testing::GuardedBytes;

TEST(QuantizedConvOc, RowSpansReadingToTheInputsEnd) {
  // No padding: the last pixel's row span (9 bytes read as 12) ends at the input's end, which
  // lies at an inaccessible page: the kernel must read its padding bytes elsewhere (the row
  // buffer), never past the input.
  for (int64_t w : {8, 7}) {
    Problem p = convProblem({6, w, 3, 16, 3, 3, {1, 1}, {1, 1}, {0, 0, 0, 0}, 5, true, true});
    for (const TargetConfig& t : runnableVnniTargets()) {
      Problem packed = packedForLanes(p, t);
      GuardedBytes x(packed.x);
      std::vector<const void*> inputs = packed.inputs();
      inputs[0] = x.data();
      EXPECT_EQ(run(packed.desc, inputs, t), p.want) << t.cpu << t.features << ", width " << w;
    }
  }
  checkOcCase(convProblem({5, 7, 3, 16, 3, 3, {1, 1}, {1, 1}, {0, 0, 0, 0}, 5, true, true}, -128),
              16);
}

TEST(QuantizedConvOc, TakesOnlyWhatItReads) {
  Problem p = convProblem({6, 7, 8, 32, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, -7, true, true});
  EXPECT_EQ(int8OcTargetLanes(target("x86_64-v4", "+avx512vnni")), 16);
  EXPECT_EQ(int8OcTargetLanes(target("x86_64-v3", "+avxvnni")), 8);
  EXPECT_EQ(int8OcTargetLanes(target("aarch64-dotprod")), 4);
  EXPECT_EQ(int8OcTargetLanes(target("x86_64-v4")), 0);
  EXPECT_EQ(int8OcTargetLanes(target("aarch64")), 0);
  EXPECT_EQ(int8OcTargetLanes(target("cortex-m4")), 0);
  Problem stem = convProblem({9, 9, 3, 8, 3, 3, {2, 2}, {1, 1}, {0, 0, 1, 1}, 1, true, true});
  EXPECT_EQ(int8OcLanes(stem.desc, 16, true), 8) << "C = 3: row spans";
  EXPECT_EQ(int8OcRowBytes(stem.desc), 12);
  EXPECT_EQ(int8OcLanes(stem.desc, 16, false), 0) << "C = 3 without growing constants";
  Problem dilated = convProblem({9, 9, 3, 8, 3, 3, {1, 1}, {1, 2}, {0, 0, 0, 0}, 1, true, true});
  EXPECT_EQ(int8OcLanes(dilated.desc, 16, true), 0) << "C = 3, taps apart along the row";
  Problem odd = convProblem({5, 5, 8, 6, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, 1, true, true});
  EXPECT_EQ(int8OcLanes(odd.desc, 16, true), 0) << "OC = 6";
  // Weights packed for the kernel, generated for a target without it: a clear error.
  Problem packed = packedForLanes(p, target("x86_64-v4", "+avx512vnni"));
  try {
    generateKernels({packed.desc}, target("x86_64-v3"));
    ADD_FAILURE() << "no error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("weights packed in blocks of 16 output channels"),
              std::string::npos)
        << e.what();
  }
}

// ---- fully connected ---------------------------------------------------------------------------
Problem fcProblem(int64_t batch, int64_t k, int64_t n, int32_t zx, bool perChannel) {
  Problem p;
  KernelDesc& d = p.desc;
  d.kind = KernelKind::Quantized;
  d.name = "qfc";
  d.quant.op = QuantOp::FullyConnected;
  d.inputs = {{ElemType::I8, {batch, k}}, {ElemType::I8, {n, k}}, {ElemType::I32, {n}}};
  d.output = {ElemType::I8, {batch, n}};
  d.quant.inputZeroPoint = zx;
  setRescale(d.quant, n, perChannel, 7);
  p.x = randomInts<int8_t>(size_t(batch * k), 21, -128, 127);
  p.w = randomInts<int8_t>(size_t(n * k), 22, -127, 127);
  p.b = randomInts<int32_t>(size_t(n), 23, -9000, 9000);
  for (int64_t r = 0; r < batch; ++r)
    for (int64_t o = 0; o < n; ++o) {
      int32_t acc = p.b[size_t(o)];
      for (int64_t i = 0; i < k; ++i) acc += p.w[size_t(o * k + i)] * (p.x[size_t(r * k + i)] - zx);
      p.want.push_back(finish(acc, d.quant, o));
    }
  return p;
}

TEST(QuantizedDot, FullyConnectedBatchesAndTails) {
  for (auto [batch, k, n, zx, perChannel] : {std::tuple{3, 50, 7, 12, true},
                                             {1, 16, 4, -128, false},
                                             {2, 100, 9, 0, true},
                                             {1, 640, 13, -1, false}}) {
    SCOPED_TRACE("B=" + std::to_string(batch) + " K=" + std::to_string(k) +
                 " N=" + std::to_string(n));
    Problem p = fcProblem(batch, k, n, zx, perChannel);
    for (bool corrected : {false, true}) {
      if (corrected) p.addCorrections();
      EXPECT_EQ(run(p.desc, p.inputs(), target("host")), p.want);
      EXPECT_EQ(run(p.desc, p.inputs(), target("x86_64")), p.want);
      EXPECT_EQ(runVnniEmulated(p.desc, p.inputs()), p.want);
    }
  }
}

// ---- the instructions in the objects -----------------------------------------------------------
std::string disassemble(const KernelDesc& d, const TargetConfig& t) {
  CodegenResult r = generateKernels({d}, t);
  testing::TempFile file(r.bytes, t.output == KernelOutput::SharedElf ? ".so" : ".o");
  const std::string& path = file.path();
  std::string text = testing::runTool(
      "llvm-objdump", "-d --no-show-raw-insn --mcpu=" + t.cpu +
                          " --mattr=" + (t.features.empty() ? "+neon" : t.features) + " " + path);
  return text;
}

TEST(QuantizedDot, ObjectsUseTheTargetsDotProductInstructions) {
  Problem conv = convProblem({6, 7, 37, 7, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, -7, true, true});
  conv.addCorrections();
  Problem fc = fcProblem(1, 64, 8, 3, true);
  for (const KernelDesc* d : {&conv.desc, &fc.desc}) {
    EXPECT_NE(disassemble(*d, target("aarch64-dotprod")).find("sdot"), std::string::npos);
    EXPECT_NE(disassemble(*d, target("aarch64", "+dotprod")).find("sdot"), std::string::npos);
    EXPECT_EQ(disassemble(*d, target("aarch64")).find("sdot"), std::string::npos);
    EXPECT_NE(disassemble(*d, target("x86_64-v4", "+avx512vnni")).find("vpdpbusd"),
              std::string::npos);
    EXPECT_NE(disassemble(*d, target("x86_64-v3", "+avxvnni")).find("vpdpbusd"), std::string::npos);
    EXPECT_NE(disassemble(*d, target("x86_64-v3")).find("vpmaddwd"), std::string::npos);
    EXPECT_EQ(disassemble(*d, target("x86_64-v3")).find("vpdpbusd"), std::string::npos);
  }
}

TEST(QuantizedConvOc, AArch64ObjectsUseSdot) {
  Problem p = packedForLanes(
      convProblem({6, 7, 8, 32, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, -7, true, true}),
      target("aarch64-dotprod"));
  EXPECT_EQ(p.desc.weightPanel, 4);
  EXPECT_NE(disassemble(p.desc, target("aarch64-dotprod")).find("sdot"), std::string::npos);
}

}  // namespace
}  // namespace kiln::codegen
