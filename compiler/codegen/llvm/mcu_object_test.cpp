// Microcontroller targets: every one produces a relocatable object with no undefined symbols
// (kernels call no library; soft-float arithmetic is linked in), the library struct exported
// under its name, and on soft-float targets (cortex-m4, rv32imac) no FPU instruction.
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <sstream>

#include "test_support.h"

namespace kiln::codegen {
namespace {

using testing::f32;

// A 2 x 2 pooling with stride 2 over an f32 NCHW input.
KernelDesc pool2x2(PoolKind kind, std::vector<int64_t> in) {
  KernelDesc pool;
  pool.kind = KernelKind::Pool;
  pool.poolKind = kind;
  pool.kernelShape = {2, 2};
  pool.strides = {2, 2};
  pool.output = f32({in[0], in[1], in[2] / 2, in[3] / 2});
  pool.inputs = {f32(std::move(in))};
  return pool;
}

// A small model's worth of kernels touching every arithmetic the emitters produce.
std::vector<KernelDesc> sampleKernels() {
  std::vector<KernelDesc> kernels;
  KernelDesc conv;
  conv.kind = KernelKind::Conv;
  conv.inputs = {f32({1, 2, 6, 6}), f32({4, 2, 3, 3}), f32({4})};
  conv.output = f32({1, 4, 6, 6});
  conv.pads = {1, 1, 1, 1};
  conv.epilogue.act = Activation::Clip;
  conv.epilogue.beta = 6;
  kernels.push_back(conv);
  kernels.push_back(pool2x2(PoolKind::Average, {1, 4, 6, 6}));
  KernelDesc gemm;
  gemm.kind = KernelKind::MatMul;
  gemm.inputs = {f32({1, 36}), f32({10, 36}), f32({10})};
  gemm.output = f32({1, 10});
  gemm.transB = true;
  gemm.epilogue.act = Activation::Sigmoid;
  kernels.push_back(gemm);
  KernelDesc softmax;
  softmax.kind = KernelKind::Softmax;
  softmax.axis = 1;
  softmax.inputs = {f32({1, 10})};
  softmax.output = f32({1, 10});
  kernels.push_back(softmax);
  KernelDesc misc;
  misc.kind = KernelKind::Elementwise;
  misc.inputs = {f32({10})};
  misc.output = {ElemType::I32, {10}};
  ElementwiseExpr& e = misc.expr;
  int x = e.addInput(0, ElemType::F32);
  int t = e.addUnary(ExprOp::Tanh, x);
  t = e.addBinary(ExprOp::Add, t, e.addUnary(ExprOp::Erf, x));
  t = e.addBinary(ExprOp::Div, t, e.addUnary(ExprOp::Sqrt, e.addUnary(ExprOp::Abs, x)));
  t = e.addBinary(ExprOp::Max, t, e.addUnary(ExprOp::LeakyRelu, x, 0.2));
  e.addCast(t, ElemType::I32);
  kernels.push_back(misc);
  return kernels;
}

struct McuCase {
  const char* target;
  bool softFloat;
};

class McuObject : public ::testing::TestWithParam<McuCase> {};

TEST_P(McuObject, NoUndefinedSymbolsAndRightFloatUnit) {
  TargetRequest request;
  request.name = GetParam().target;
  TargetConfig target = resolveTarget(request);
  CodegenOptions options;
  options.libraryName = "model_kernels";
  CodegenResult result = generateKernels(sampleKernels(), target, options);
  ASSERT_EQ(result.output, KernelOutput::RelocatableObject);
  EXPECT_EQ(result.kernelCount, 5u);
  EXPECT_GT(result.stackBoundBytes, 0u);
  EXPECT_LT(result.stackBoundBytes, 1024u);

  testing::TempFile file(result.bytes, ".o");
  const std::string& path = file.path();
  std::string symbols = testing::runTool("llvm-readelf", "-s -W " + path);
  std::istringstream lines(symbols);
  std::string line;
  int undefined = 0;
  bool exported = false;
  while (std::getline(lines, line)) {
    if (line.find(" UND ") != std::string::npos && line.find(" UND \n") == std::string::npos) {
      // The null symbol (index 0) is "UND" with an empty name.
      std::istringstream fields(line);
      std::vector<std::string> f;
      for (std::string s; fields >> s;) f.push_back(s);
      if (f.size() >= 8) {
        ++undefined;
        ADD_FAILURE() << "undefined symbol: " << line;
      }
    }
    if (line.find("GLOBAL") != std::string::npos &&
        line.find("model_kernels") != std::string::npos) {
      exported = true;
    }
  }
  EXPECT_EQ(undefined, 0);

  // The stack bound covers the largest frame llvm-readelf reports and no more than all of
  // them together.
  uint32_t largest = 0, total = 0;
  std::regex sizeLine(R"((?:^|\n)\s+(\d+)\s+\S+)");  // "   68     kiln_kernel_0"
  std::string sizes = testing::runTool("llvm-readelf", "--stack-sizes " + path);
  for (std::sregex_iterator it(sizes.begin(), sizes.end(), sizeLine), end; it != end; ++it) {
    uint32_t size = static_cast<uint32_t>(std::stoul((*it)[1].str()));
    largest = std::max(largest, size);
    total += size;
  }
  EXPECT_GT(largest, 0u) << sizes;
  EXPECT_GE(result.stackBoundBytes, largest);
  EXPECT_LE(result.stackBoundBytes, total);
  EXPECT_TRUE(exported) << symbols;

  std::string disassembly =
      testing::runTool("llvm-objdump", "-d --no-show-raw-insn --mcpu=" + target.cpu + " " + path);
  // Instruction lines are "  addr:  mnemonic operands". ARM VFP/MVE mnemonics start with 'v';
  // RISC-V F-extension ones with 'f' (but 'fence' is an integer instruction).
  std::regex instruction(R"(^\s+[0-9a-f]+:\s+([a-z][a-z0-9.]*))");
  int fpuInstructions = 0;
  std::string examples;
  std::istringstream listing(disassembly);
  while (std::getline(listing, line)) {
    std::smatch m;
    if (!std::regex_search(line, m, instruction)) continue;
    std::string mnemonic = m[1].str();
    bool isFpu = target.arch == TargetArch::Arm32
                     ? mnemonic[0] == 'v'
                     : mnemonic[0] == 'f' && mnemonic.rfind("fence", 0) != 0;
    if (isFpu && ++fpuInstructions < 5) examples += mnemonic + " ";
  }
  if (GetParam().softFloat) {
    EXPECT_EQ(fpuInstructions, 0) << examples;
  } else {
    EXPECT_GT(fpuInstructions, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, McuObject,
                         ::testing::Values(McuCase{"cortex-m4", true}, McuCase{"rv32imac", true},
                                           McuCase{"cortex-m33", false},
                                           McuCase{"cortex-m7", false},
                                           McuCase{"rv32imafc", false}),
                         [](const auto& info) {
                           std::string name = info.param.target;
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

// Int8 convolution (1x1 and depthwise 3x3) and fully connected kernels as a TFLite model's
// lowering gives them (NHWC, per-channel rescale, the zero-point correction of constant
// weights).
std::vector<KernelDesc> int8Kernels() {
  auto quantized = [](QuantOp op, std::vector<BufferDesc> inputs, BufferDesc output) {
    KernelDesc d;
    d.kind = KernelKind::Quantized;
    d.quant.op = op;
    d.inputs = std::move(inputs);
    d.output = std::move(output);
    const int64_t channels = d.output.shape.back();
    d.quant.inputZeroPoint = -7;
    d.quant.outputZeroPoint = 4;
    d.quant.actMin = -128;
    d.quant.actMax = 127;
    for (int64_t c = 0; c < channels; ++c) {
      d.quant.multipliers.push_back(int32_t(1 << 30) + int32_t(c) * 4099);
      d.quant.shifts.push_back(-7);
      d.quant.zeroPointCorrection.push_back(int32_t(c) * 13 - 50);
    }
    return d;
  };
  KernelDesc pointwise = quantized(
      QuantOp::Conv,
      {{ElemType::I8, {1, 4, 4, 16}}, {ElemType::I8, {8, 1, 1, 16}}, {ElemType::I32, {8}}},
      {ElemType::I8, {1, 4, 4, 8}});
  pointwise.kernelShape = {1, 1};
  KernelDesc depthwise =
      quantized(QuantOp::DepthwiseConv,
                {{ElemType::I8, {1, 6, 6, 8}}, {ElemType::I8, {1, 3, 3, 8}}, {ElemType::I32, {8}}},
                {ElemType::I8, {1, 6, 6, 8}});
  depthwise.kernelShape = {3, 3};
  depthwise.pads = {1, 1, 1, 1};
  depthwise.groups = 8;
  KernelDesc fc =
      quantized(QuantOp::FullyConnected,
                {{ElemType::I8, {1, 32}}, {ElemType::I8, {10, 32}}, {ElemType::I32, {10}}},
                {ElemType::I8, {1, 10}});
  return {pointwise, depthwise, fc};
}

// The disassembly of `result`'s object.
std::string disassemble(const CodegenResult& result, const TargetConfig& target) {
  testing::TempFile file(result.bytes, ".o");
  return testing::runTool("llvm-objdump",
                          "-d --no-show-raw-insn --mcpu=" + target.cpu + " " + file.path());
}

// Mnemonics in the disassembly of `result`'s object.
std::set<std::string> mnemonics(const CodegenResult& result, const TargetConfig& target) {
  std::string disassembly = disassemble(result, target);
  std::regex instruction(R"(^\s+[0-9a-f]+:\s+([a-z][a-z0-9.]*))");
  std::set<std::string> found;
  std::istringstream listing(disassembly);
  for (std::string line; std::getline(listing, line);) {
    std::smatch m;
    if (std::regex_search(line, m, instruction)) found.insert(m[1].str());
  }
  return found;
}

// Cortex-M4/M7/M33 have the DSP extension: the int8 kernels multiply pairs of i16 (SXTB16,
// SMLAD for sums of products, SMLABB/SMLATT per channel); --optimize=size keeps the plain
// loops; RISC-V has neither.
TEST(McuInt8, DspExtensionKernels) {
  for (const char* name : {"cortex-m33", "cortex-m4", "cortex-m7"}) {
    TargetRequest request;
    request.name = name;
    TargetConfig target = resolveTarget(request);
    std::set<std::string> fast = mnemonics(generateKernels(int8Kernels(), target), target);
    for (const char* m : {"sxtb16", "smlad", "smlabb", "smlatt"})
      EXPECT_TRUE(fast.count(m)) << name << ": no " << m;
    CodegenOptions small;
    small.smallestCode = true;
    std::set<std::string> plain = mnemonics(generateKernels(int8Kernels(), target, small), target);
    for (const char* m : {"sxtb16", "smlad", "smlatt"})
      EXPECT_FALSE(plain.count(m)) << name << " with smallestCode: " << m;
  }
  TargetRequest request;
  request.name = "rv32imac";
  TargetConfig riscv = resolveTarget(request);
  EXPECT_FALSE(generateKernels(int8Kernels(), riscv).bytes.empty());
}

// Cortex-M55 (Helium): the dot products sum 16 products per VMLAV.S8, a span's last bytes
// are one predicated load (a fully connected layer over 20 values: 16 + 4), the depthwise
// kernel's four channels are one vector (VLDRB.S32), the rescale runs on VQRDMULH and VRSHL;
// --optimize=size keeps the plain loops.
TEST(McuInt8, HeliumKernels) {
  TargetRequest request;
  request.name = "cortex-m55";
  TargetConfig target = resolveTarget(request);
  std::vector<KernelDesc> kernels = int8Kernels();
  KernelDesc tail = kernels.back();
  tail.inputs[0].shape = {1, 20};
  tail.inputs[1].shape = {10, 20};
  kernels.push_back(tail);
  std::set<std::string> fast = mnemonics(generateKernels(kernels, target), target);
  for (const char* m : {"vmlava.s8", "vldrbt.u8", "vldrb.s32", "vqrdmulh.s32", "vrshl.s32"})
    EXPECT_TRUE(fast.count(m)) << "no " << m;
  CodegenOptions small;
  small.smallestCode = true;
  std::set<std::string> plain = mnemonics(generateKernels(kernels, target, small), target);
  EXPECT_FALSE(plain.count("vmlava.s8"));
}

// Cortex-M55's f32 kernels use Helium's float vectors, and no kernel uses MVE gathers (vector
// addresses, "[qN"): kiln turns LLVM's off (target_machine.cpp) since QEMU ran a MaxPool
// vectorised into them wrong; this one, 2 x 2 with stride 2 over 26 x 26, was it.
TEST(McuHelium, FloatVectorsWithoutGathers) {
  TargetRequest request;
  request.name = "cortex-m55";
  TargetConfig target = resolveTarget(request);
  std::vector<KernelDesc> kernels = sampleKernels();
  kernels.push_back(pool2x2(PoolKind::Max, {1, 8, 26, 26}));
  std::string listing = disassemble(generateKernels(kernels, target), target);
  EXPECT_EQ(listing.find("[q"), std::string::npos)
      << listing.substr(listing.find("[q") > 300 ? listing.find("[q") - 300 : 0, 400);
  EXPECT_TRUE(std::regex_search(listing, std::regex(R"(\tv[a-z]+\.f32\tq\d)"))) << listing;
}

}  // namespace
}  // namespace kiln::codegen
