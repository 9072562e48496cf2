// TFLite's fixed-point rescale written out independently for the quantized kernel tests
// (quantized_*_test.cpp): SaturatingRoundingDoublingHighMul in 128-bit arithmetic,
// RoundingDivideByPOT as rounding of magnitudes, MultiplyByQuantizedMultiplier (32- and
// 64-bit accumulators) and the activation clamp; and the int8 convolution case the tests
// share (the kernel's description, its data and the reference output bytes), and input
// bytes that end at an inaccessible page.
#pragma once

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <cstdint>
#include <vector>

#include "kiln/codegen/kernel_desc.h"

namespace kiln::codegen::testing {

// SaturatingRoundingDoublingHighMul = round-half-up of a*b / 2^31, saturated.
inline int32_t refSrdhm(int32_t a, int32_t b) {
  if (a == INT32_MIN && b == INT32_MIN) return INT32_MAX;
  __int128 p = __int128(a) * b;
  __int128 num = 2 * p + (__int128(1) << 31);  // floor((2ab + 2^31) / 2^32)
  __int128 q = num >= 0 ? num >> 32 : -((-num + ((__int128(1) << 32) - 1)) >> 32);
  return int32_t(q);
}
// RoundingDivideByPOT = x / 2^e rounded to nearest, ties away from zero.
inline int32_t refRdivpot(int32_t x, int e) {
  int64_t ax = x < 0 ? -int64_t(x) : x;
  int64_t r = (ax + (e > 0 ? (int64_t(1) << (e - 1)) : 0)) >> e;
  return int32_t(x < 0 ? -r : r);
}
inline int32_t refMbqm(int32_t x, int32_t m, int shift) {
  int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
  return refRdivpot(refSrdhm(int32_t(uint32_t(x) << left), m), right);
}
inline int32_t refMbqm64(int64_t x, int32_t m, int shift) {
  int32_t reduced = m < 0x7FFF0000 ? (m + (1 << 15)) >> 16 : 0x7FFF;
  int total = 15 - shift;
  __int128 v = __int128(x) * reduced + (__int128(1) << (total - 1));
  return int32_t(int64_t(v >> total));
}
inline int32_t clampTo(int32_t v, int32_t lo, int32_t hi) { return std::min(std::max(v, lo), hi); }

// The output size of a window along one axis (TFLite's and ONNX's formula, floor mode).
inline int64_t refWindowOutput(int64_t in, int64_t kernel, int64_t stride, int64_t dilation,
                               int64_t padBegin, int64_t padEnd) {
  return (in + padBegin + padEnd - ((kernel - 1) * dilation + 1)) / stride + 1;
}

// An int8 convolution (or depthwise, or fully connected) kernel with its inputs and the
// reference output.
struct QuantProblem {
  KernelDesc desc;
  std::vector<int8_t> x, w;
  std::vector<int32_t> b;
  std::vector<int8_t> want;
  std::vector<const void*> inputs() const {
    std::vector<const void*> v = {x.data(), w.data()};
    if (!b.empty()) v.push_back(b.data());
    return v;
  }
  // -zx * sum(w) per output channel, as the lowering computes it for constant weights (OHWI
  // or [N, K] weights: a channel's are consecutive; depthwise [1, KH, KW, C]: channel = i % C).
  void addCorrections() {
    const int64_t channels = desc.output.shape.back();
    const bool depthwise = desc.quant.op == QuantOp::DepthwiseConv;
    const int64_t per = int64_t(w.size()) / channels;
    std::vector<uint32_t> sums(size_t(channels), 0);
    for (size_t i = 0; i < w.size(); ++i)
      sums[depthwise ? i % size_t(channels) : i / size_t(per)] += uint32_t(int32_t(w[i]));
    desc.quant.zeroPointCorrection.clear();
    for (uint32_t sum : sums)
      desc.quant.zeroPointCorrection.push_back(int32_t(uint32_t(-desc.quant.inputZeroPoint) * sum));
  }
};

// `bytes` placed so that they end where an inaccessible page begins: a read past them faults.
class GuardedBytes {
 public:
  explicit GuardedBytes(const std::vector<int8_t>& bytes) {
    const size_t page = size_t(sysconf(_SC_PAGESIZE));
    size_ = (bytes.size() + page - 1) / page * page + page;
    base_ = static_cast<uint8_t*>(
        mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    EXPECT_NE(base_, MAP_FAILED);
    EXPECT_EQ(mprotect(base_ + size_ - page, page, PROT_NONE), 0);
    data_ = base_ + size_ - page - bytes.size();
    std::memcpy(data_, bytes.data(), bytes.size());
  }
  ~GuardedBytes() { munmap(base_, size_); }
  const void* data() const { return data_; }

 private:
  uint8_t* base_ = nullptr;
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace kiln::codegen::testing
