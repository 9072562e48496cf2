// Int8 convolution (group 1) and fully connected layers on the target's dot-product
// instructions, bit exact with the plain loops of emit_quantized_conv.cpp (TFLite reference
// semantics): every product of two int8 values and every partial sum is exact in wrapping
// i32, and i32 addition is associative, so only the order of the additions changes.
//   - x86 AVX2: the 16 bytes of x and of w sign-extended to i16, vpmaddwd (pairs of products
//     summed into i32) added to an <8 x i32> accumulator.
//   - x86 AVX-VNNI / AVX512-VNNI+VL: vpdpbusd multiplies u8 by s8, so x goes in as x + 128
//     (x xor 0x80) and the accumulator starts 128 * sum(w) lower (see "offset" below).
//   - AArch64 +dotprod: sdot on <16 x i8>, four i32 lanes of four-product sums.
//   - Arm DSP extension (Cortex-M4/M7/M33, no vector registers): 4 bytes at a time in one
//     32-bit load, SXTB16 (and SXTB16 of the word rotated by 8) sign-extend bytes 0, 2 and
//     1, 3 into two pairs of i16, and SMLAD adds both pairs' products to a scalar i32
//     accumulator: 4 products in 2 multiply instructions (TFLite's CMSIS-NN kernels use the
//     same instructions).
//   - Helium (Armv8.1-M's vector extension, Cortex-M55): 16 bytes of x and of w per vector
//     load, VMLAVA.S8 adds the 16 products to a scalar i32 accumulator; a span's last chunk
//     of under 16 bytes is one predicated load whose inactive lanes read as zero (instead of
//     scalar steps).
//   - Other microcontrollers (RV32: no such instruction): the same blocks, 4 bytes at a time
//     as 4 sign-extending byte loads, products added to a scalar i32 accumulator; what it
//     saves against the plain loops is the accumulator's load and store per product and the
//     loads that a block shares.
// A block of output channels (4; 2 on the DSP extension and RV32) shares every chunk loaded
// of x (16 bytes; 4 there); pixels whose taps all lie inside the image go two at a time,
// sharing every load of w (on the DSP extension and RV32 2 channels x 2 pixels: the DSP
// extension's 13 general registers hold their 4 accumulators, both pixels' x and one
// channel's w; Helium keeps x and w in vector registers and 4 x 2 accumulators in general
// ones, 5 % fewer instructions than 2 x 2 on VWW and ResNet-8). The reduction runs over the
// contiguous input channels of one tap, or over a whole kernel row (KW taps, KW * C bytes,
// contiguous in x and w when the dilation is 1 and the row lies inside the image). Leftover
// channels (C mod the chunk) are scalar, or Helium's one predicated step. The block's lane
// sums share one shuffle tree, and its bias, rescale, zero point and clamp run on <4 x i32>
// (lane by lane on the DSP extension and RV32).
//
// Input zero point: with offset o (128 for VNNI, else 0) the kernels accumulate (x + o) * w
// and need z = zx + o subtracted: the accumulator starts at -z * sum(w) (the lowering's
// compile-time correction when o = 0 and the weights are constant, otherwise sums of the
// weights computed by the kernel) and taps outside the image add z * w back.
#include <llvm/IR/IntrinsicsAArch64.h>
#include <llvm/IR/IntrinsicsARM.h>
#include <llvm/IR/IntrinsicsX86.h>

#include <functional>
#include <limits>

#include "emit_quantized.h"
#include "emitters.h"

namespace kiln::codegen::detail {
namespace {

using Int8Dot = EmitTarget::Int8Dot;

constexpr int64_t kChunk = 16;    // bytes of x and of w per dot-product step (vectors)
constexpr int64_t kDspChunk = 4;  // the same on the Arm DSP extension (one 32-bit register)
constexpr int64_t kBlock = 4;     // output channels per block (one x load serves all)
constexpr int64_t kDspBlock = 2;  // the same on the DSP extension
// Neighbouring interior pixels per block (one w load serves all).
constexpr int64_t kPairPixels = 2;
// Largest stack table of per-channel weight sums a convolution computes for itself.
constexpr int64_t kMaxWeightSumChannels = 4096;

// The target's dot-product step on 16 int8 values of x and w.
class DotUnit {
 public:
  DotUnit(KernelBuilder& kb) : kb_(kb), ir_(kb.b()), kind_(kb.target().int8Dot) {}

  int32_t offset() const { return kind_ == Int8Dot::Vnni ? 128 : 0; }
  // The microcontrollers' units: one i32 accumulator per output (Helium's vector registers
  // are few: 8).
  bool scalarAcc() const {
    return kind_ == Int8Dot::ArmDsp || kind_ == Int8Dot::Scalar || kind_ == Int8Dot::Mve;
  }
  // Bytes of x and of w per dot() step.
  int64_t chunk() const {
    return kind_ == Int8Dot::ArmDsp || kind_ == Int8Dot::Scalar ? kDspChunk : kChunk;
  }
  // The shortest span worth a dot step: Helium's predicated tail chunk covers any length.
  int64_t shortestSpan() const { return kind_ == Int8Dot::Mve ? kDspChunk : chunk(); }
  // Whether a span's last length % chunk() bytes are one predicated step (else scalar steps).
  bool predicatedTail() const { return kind_ == Int8Dot::Mve; }
  // Output channels per block of `pixels` pixels (the DSP extension and RV32: 2 x 2 or 4 x 1,
  // four accumulators either way).
  int64_t block(int64_t pixels) const {
    const bool fewRegisters = kind_ == Int8Dot::ArmDsp || kind_ == Int8Dot::Scalar;
    return fewRegisters && pixels > 1 ? kDspBlock : kBlock;
  }

  // The accumulators: i32 vectors whose lanes finishBlock sums, or (microcontrollers) one i32.
  llvm::Type* accType() const {
    if (scalarAcc()) return ir_.getInt32Ty();
    return llvm::FixedVectorType::get(ir_.getInt32Ty(), kind_ == Int8Dot::Avx2 ? 8 : 4);
  }
  llvm::Value* zero() const { return llvm::Constant::getNullValue(accType()); }

  // `count` consecutive int8 elements from `index` of x (at `base`: binding 0 or a stack
  // buffer) or of w, in the form dot() takes: chunk() of them, or fewer (predicatedTail()
  // units) with the other lanes zero.
  llvm::Value* loadX(llvm::Value* base, llvm::Value* index, int64_t count) {
    return prepare(load(base, index, count), true);
  }
  llvm::Value* loadW(llvm::Value* index, int64_t count) {
    return prepare(load(kb_.bindingPointer(1), index, count), false);
  }

  // chunk() int8 elements of x from `index` where `active` (an <16 x i1>) is set, `fill`
  // elsewhere: one predicated load that touches no byte of an inactive lane (so `index` may
  // lie outside the binding there). Helium only.
  llvm::Value* loadMaskedX(llvm::Value* index, llvm::Value* active, int32_t fill) {
    auto* bytes = llvm::FixedVectorType::get(ir_.getInt8Ty(), unsigned(chunk()));
    llvm::Value* address = ir_.CreateGEP(ir_.getInt8Ty(), kb_.bindingPointer(0), index);
    return ir_.CreateMaskedLoad(bytes, address, llvm::Align(1), active,
                                llvm::ConstantInt::get(bytes, uint64_t(uint8_t(int8_t(fill)))));
  }

  // acc + the products of x and w summed into acc's lanes (x already offset for VNNI).
  llvm::Value* dot(llvm::Value* acc, llvm::Value* x, llvm::Value* w) {
    switch (kind_) {
      case Int8Dot::Avx2:
        return ir_.CreateAdd(acc,
                             ir_.CreateIntrinsic(llvm::Intrinsic::x86_avx2_pmadd_wd, {}, {x, w}));
      case Int8Dot::Vnni:
        return ir_.CreateIntrinsic(llvm::Intrinsic::x86_avx512_vpdpbusd_128, {}, {acc, x, w});
      case Int8Dot::Sdot:
        return ir_.CreateIntrinsic(llvm::Intrinsic::aarch64_neon_sdot, {accType(), x->getType()},
                                   {acc, x, w});
      case Int8Dot::ArmDsp:
        // Bytes 0, 2 of x times those of w, then bytes 1, 3: all four products.
        for (uint64_t half = 0; half < 2; ++half) {
          acc = ir_.CreateIntrinsic(
              llvm::Intrinsic::arm_smlad, {},
              {ir_.CreateExtractElement(x, half), ir_.CreateExtractElement(w, half), acc});
        }
        return acc;
      case Int8Dot::Scalar:
        for (uint64_t j = 0; j < uint64_t(kDspChunk); ++j) {
          acc = ir_.CreateAdd(
              acc, ir_.CreateMul(ir_.CreateExtractElement(x, j), ir_.CreateExtractElement(w, j)));
        }
        return acc;
      case Int8Dot::Mve: {
        // VMLAVA.S8 as its intrinsic (unsigned 0, subtract 0, exchange 0): written as
        // sext / mul / reduce, LLVM hoisted the sign extension of x out of the channel-block
        // loop and summed i32 vectors instead (4x the instructions on VWW's 8-channel layers).
        llvm::Value* no = ir_.getInt32(0);
        return ir_.CreateIntrinsic(llvm::Intrinsic::arm_mve_vmldava, {x->getType()},
                                   {no, no, no, acc, x, w});
      }
      case Int8Dot::None:
        break;
    }
    return acc;
  }

 private:
  llvm::Value* load(llvm::Value* base, llvm::Value* index, int64_t count) {
    llvm::Value* address = ir_.CreateInBoundsGEP(ir_.getInt8Ty(), base, index);
    if (count < chunk()) {
      // One predicated load (Helium: VCTP, then VLDRB with the inactive lanes zeroed).
      auto* bytes = llvm::FixedVectorType::get(ir_.getInt8Ty(), unsigned(chunk()));
      llvm::SmallVector<llvm::Constant*, 16> active;
      for (int64_t i = 0; i < chunk(); ++i) active.push_back(ir_.getInt1(i < count));
      return ir_.CreateMaskedLoad(bytes, address, llvm::Align(1), llvm::ConstantVector::get(active),
                                  llvm::Constant::getNullValue(bytes));
    }
    // (Cortex-M4/M7/M33 load words from any address.)
    if (kind_ == Int8Dot::ArmDsp)
      return ir_.CreateAlignedLoad(ir_.getInt32Ty(), address, llvm::Align(1));
    if (kind_ == Int8Dot::Scalar) {
      // <4 x i32> of 4 sign-extended byte loads (RV32 has no cheap unaligned word load).
      llvm::Value* bytes = llvm::PoisonValue::get(llvm::FixedVectorType::get(ir_.getInt32Ty(), 4));
      for (uint64_t j = 0; j < uint64_t(kDspChunk); ++j) {
        llvm::Value* at = ir_.CreateConstInBoundsGEP1_64(ir_.getInt8Ty(), address, j);
        bytes = ir_.CreateInsertElement(
            bytes, ir_.CreateSExt(ir_.CreateLoad(ir_.getInt8Ty(), at), ir_.getInt32Ty()), j);
      }
      return bytes;
    }
    llvm::Type* bytes = llvm::FixedVectorType::get(ir_.getInt8Ty(), kChunk);
    return ir_.CreateAlignedLoad(bytes, address, llvm::Align(1));
  }

  llvm::Value* prepare(llvm::Value* bytes, bool isX) {
    switch (kind_) {
      case Int8Dot::Avx2:
        return ir_.CreateSExt(bytes, llvm::FixedVectorType::get(ir_.getInt16Ty(), kChunk));
      case Int8Dot::Vnni: {
        if (isX) bytes = ir_.CreateXor(bytes, llvm::ConstantInt::get(bytes->getType(), 0x80));
        return ir_.CreateBitCast(bytes, llvm::FixedVectorType::get(ir_.getInt32Ty(), 4));
      }
      case Int8Dot::ArmDsp: {
        // <2 x i32>: bytes 0, 2 and bytes 1, 3 of the word as pairs of i16 (SXTB16, the
        // second of the word rotated right by 8, which SXTB16 takes as an operand).
        llvm::Value* rotated = ir_.CreateIntrinsic(llvm::Intrinsic::fshr, {ir_.getInt32Ty()},
                                                   {bytes, bytes, ir_.getInt32(8)});
        llvm::Value* pairs =
            llvm::PoisonValue::get(llvm::FixedVectorType::get(ir_.getInt32Ty(), 2));
        pairs = ir_.CreateInsertElement(
            pairs, ir_.CreateIntrinsic(llvm::Intrinsic::arm_sxtb16, {}, {bytes}), uint64_t(0));
        return ir_.CreateInsertElement(
            pairs, ir_.CreateIntrinsic(llvm::Intrinsic::arm_sxtb16, {}, {rotated}), uint64_t(1));
      }
      default:
        return bytes;
    }
  }

  KernelBuilder& kb_;
  llvm::IRBuilder<>& ir_;
  Int8Dot kind_;
};

// The accumulators of one block: channels() output channels of `pixels` output pixels, a
// vector and a scalar accumulator each (index p * channels() + j).
struct Block {
  int64_t pixels = 1;
  int64_t outputChannels = 0;         // of the layer
  std::vector<llvm::Value*> channel;  // index type; the last channel repeated past the end
  std::vector<llvm::Value*> wBase;    // index of each channel's weights of the current span
  std::vector<llvm::Value*> vacc, sacc;
  int64_t channels() const { return int64_t(channel.size()); }
};

// Where the accumulators start: -z * sum(w) per channel, from the lowering's table or from
// sums the kernel computes (zero point z = zx + offset).
struct ZeroPoint {
  int32_t z = 0;
  llvm::Value* corrections = nullptr;  // i32 table of -zx * sum(w) (offset 0 only)
  llvm::Value* sums = nullptr;         // stack array of sum(w) per channel
};

void addTo(KernelBuilder& kb, llvm::Type* type, llvm::Value* slot, llvm::Value* value) {
  kb.b().CreateStore(kb.b().CreateAdd(kb.b().CreateLoad(type, slot), value), slot);
}

// sacc[p][j] += (x_p + offset) * w_j over `length` scalars from xIndex[p] and
// block.wBase[j] + wStart; with no xIndex (a tap outside the image, one pixel) z * w.
void scalarSpan(KernelBuilder& kb, Block& block, const std::vector<llvm::Value*>& xIndex,
                int64_t wStart, int64_t length, int32_t offset, int32_t z) {
  llvm::IRBuilder<>& ir = kb.b();
  kb.forRange(0, length, [&](llvm::Value* k) {
    std::vector<llvm::Value*> xv;
    for (llvm::Value* x : xIndex) {
      xv.push_back(ir.CreateAdd(qToI32(kb, kb.load(0, ElemType::I8, ir.CreateAdd(x, k))),
                                qConst(kb, offset)));
    }
    if (xIndex.empty()) xv.assign(size_t(block.pixels), qConst(kb, z));
    for (int64_t j = 0; j < block.channels(); ++j) {
      llvm::Value* wi = ir.CreateAdd(block.wBase[size_t(j)], ir.CreateAdd(kb.index(wStart), k));
      llvm::Value* wv = qToI32(kb, kb.load(1, ElemType::I8, wi));
      for (int64_t p = 0; p < block.pixels; ++p) {
        addTo(kb, ir.getInt32Ty(), block.sacc[size_t(p * block.channels() + j)],
              ir.CreateMul(xv[size_t(p)], wv));
      }
    }
  });
}

// Accumulates the dot products of `length` contiguous int8 values of x (from xIndex[p], one
// per pixel) with those of every channel of the block (from block.wBase[j]): each 16-byte
// load of x serves the block's channels, each load of w every pixel.
void dotSpan(KernelBuilder& kb, DotUnit& unit, Block& block,
             const std::vector<llvm::Value*>& xIndex, int64_t length,
             llvm::Value* xBase = nullptr) {
  llvm::IRBuilder<>& ir = kb.b();
  if (!xBase) xBase = kb.bindingPointer(0);
  const int64_t chunk = unit.chunk();
  const int64_t chunks = length / chunk, rest = length % chunk;
  // One dot step over `count` bytes from `at` (a full chunk, or a predicated tail).
  auto step = [&](llvm::Value* at, int64_t count) {
    std::vector<llvm::Value*> xv;
    for (llvm::Value* x : xIndex) xv.push_back(unit.loadX(xBase, ir.CreateAdd(x, at), count));
    for (int64_t j = 0; j < block.channels(); ++j) {
      llvm::Value* wv = unit.loadW(ir.CreateAdd(block.wBase[size_t(j)], at), count);
      for (int64_t p = 0; p < block.pixels; ++p) {
        llvm::Value* slot = block.vacc[size_t(p * block.channels() + j)];
        ir.CreateStore(unit.dot(ir.CreateLoad(unit.accType(), slot), xv[size_t(p)], wv), slot);
      }
    }
  };
  if (chunks > 0)
    kb.forRange(0, chunks, [&](llvm::Value* c) { step(ir.CreateMul(c, kb.index(chunk)), chunk); });
  if (rest == 0) return;
  if (unit.predicatedTail()) {
    step(kb.index(chunks * chunk), rest);
    return;
  }
  std::vector<llvm::Value*> restIndex;
  for (llvm::Value* x : xIndex) restIndex.push_back(ir.CreateAdd(x, kb.index(chunks * chunk)));
  scalarSpan(kb, block, restIndex, chunks * chunk, rest, unit.offset(), 0);
}

// Helium: the x bytes of one kernel row of a pixel whose taps may lie partly or wholly
// outside the image (`rowInside` false: all of them), chunk by chunk over the row's KW * C
// bytes: the lanes of taps inside the image load from the row (one predicated load per chunk,
// the active lanes a contiguous range: two VCTP masks), the others read as `fill` (zx, which
// the accumulators' start -zx * sum(w) cancels: TFLite skips those taps). `rowStart` is the x
// index of the row's first tap, wherever it lies; `firstCol` that tap's column. `use` takes
// each chunk's offset in the row, its length and its bytes.
void maskedRowChunks(KernelBuilder& kb, DotUnit& unit, llvm::Value* rowStart, llvm::Value* firstCol,
                     llvm::Value* rowInside, const QWindowShape& g, int32_t fill,
                     const std::function<void(int64_t, int64_t, llvm::Value*)>& use) {
  llvm::IRBuilder<>& ir = kb.b();
  const int64_t chunk = unit.chunk(), length = g.KW * g.C;
  llvm::Type* i32 = ir.getInt32Ty();
  auto* lanes = llvm::FixedVectorType::get(ir.getInt1Ty(), unsigned(chunk));
  // Lanes below n (n clamped at 0: the mask compares unsigned).
  auto below = [&](llvm::Value* n) {
    n = ir.CreateBinaryIntrinsic(llvm::Intrinsic::smax, n, ir.getInt32(0));
    return ir.CreateIntrinsic(llvm::Intrinsic::get_active_lane_mask, {lanes, i32},
                              {ir.getInt32(0), n});
  };
  // Byte offset of the row's first tap from the image row's start (negative: left of it).
  llvm::Value* offset = ir.CreateTrunc(ir.CreateMul(firstCol, kb.index(g.C)), i32);
  for (int64_t c = 0; c * chunk < length; ++c) {
    const int64_t count = std::min(chunk, length - c * chunk);
    // Lane i reads byte offset + c * chunk + i of the image row: inside for
    // -offset - c * chunk <= i < W * C - offset - c * chunk.
    llvm::Value* start = ir.CreateSub(ir.getInt32(uint32_t(-c * chunk)), offset);
    llvm::Value* end = ir.CreateSub(ir.getInt32(uint32_t(g.W * g.C - c * chunk)), offset);
    end = ir.CreateSelect(
        rowInside,
        ir.CreateBinaryIntrinsic(llvm::Intrinsic::smin, end, ir.getInt32(uint32_t(count))),
        ir.getInt32(0));
    llvm::Value* active = ir.CreateAnd(below(end), ir.CreateNot(below(start)));
    use(c * chunk, count,
        unit.loadMaskedX(ir.CreateAdd(rowStart, kb.index(c * chunk)), active, fill));
  }
}

// Helium: a single pixel's kernel row (maskedRowChunks) dotted with the block's weights.
void maskedRowSpan(KernelBuilder& kb, DotUnit& unit, Block& block, llvm::Value* rowStart,
                   llvm::Value* firstCol, llvm::Value* rowInside, const QWindowShape& g,
                   int32_t fill) {
  llvm::IRBuilder<>& ir = kb.b();
  maskedRowChunks(kb, unit, rowStart, firstCol, rowInside, g, fill,
                  [&](int64_t at, int64_t count, llvm::Value* xv) {
                    for (int64_t j = 0; j < block.channels(); ++j) {
                      llvm::Value* wv =
                          unit.loadW(ir.CreateAdd(block.wBase[size_t(j)], kb.index(at)), count);
                      llvm::Value* slot = block.vacc[size_t(j)];
                      ir.CreateStore(unit.dot(ir.CreateLoad(unit.accType(), slot), xv, wv), slot);
                    }
                  });
}

// Helium: a pixel's whole window (KH rows of KW * C bytes, x outside the image as `fill`)
// copied to `buffer` from byte `at`, in the weights' (kh, kw, c) order: rows of a few bytes
// then make one span of KH * KW * C instead of KH spans that fill a fraction of the vector.
// Each chunk is stored whole, so a row's store spills up to 15 bytes past its end, which the
// next row's overwrites; the buffer needs 16 bytes beyond the window.
void gatherWindow(KernelBuilder& kb, DotUnit& unit, const QWindowShape& g, llvm::Value* buffer,
                  int64_t at, const std::function<llvm::Value*(llvm::Value*)>& rowStartAt,
                  llvm::Value* ihStart, llvm::Value* iwStart, int32_t fill) {
  llvm::IRBuilder<>& ir = kb.b();
  const int64_t length = g.KW * g.C;
  kb.forRange(0, g.KH, [&](llvm::Value* kh) {
    llvm::Value* ih = ir.CreateAdd(ihStart, ir.CreateMul(kh, kb.index(g.dh)));
    llvm::Value* rowAt = ir.CreateAdd(kb.index(at), ir.CreateMul(kh, kb.index(length)));
    maskedRowChunks(kb, unit, rowStartAt(ih), iwStart, qInside(kb, ih, g.H), g, fill,
                    [&](int64_t offset, int64_t, llvm::Value* xv) {
                      llvm::Value* to = ir.CreateInBoundsGEP(ir.getInt8Ty(), buffer,
                                                             ir.CreateAdd(rowAt, kb.index(offset)));
                      ir.CreateAlignedStore(xv, to, llvm::Align(1));
                    });
  });
}

// Output channels base + j (j < n), the last one repeated past `count`: the repeated lanes
// compute and store the same value again, which keeps the block's code straight.
std::vector<llvm::Value*> blockChannels(KernelBuilder& kb, llvm::Value* base, int64_t count,
                                        int64_t n) {
  llvm::IRBuilder<>& ir = kb.b();
  std::vector<llvm::Value*> channels;
  for (int64_t j = 0; j < n; ++j) {
    llvm::Value* c = ir.CreateAdd(base, kb.index(j));
    if (count % n != 0) {
      c = ir.CreateSelect(ir.CreateICmpULT(c, kb.index(count)), c, kb.index(count - 1));
    }
    channels.push_back(c);
  }
  return channels;
}

// Where every block holds consecutive channels (no repeated last one), channel j's
// weights as the first channel's plus j * perChannel bytes: one pointer and constant offsets
// for all of them (on the DSP extension four pointers left too few of its 13 general
// registers for the accumulators).
void sharedWeightsBase(KernelBuilder& kb, Block& block, int64_t channels, int64_t perChannel) {
  if (channels % block.channels() != 0) return;
  for (int64_t j = 1; j < block.channels(); ++j)
    block.wBase[size_t(j)] = kb.b().CreateAdd(block.wBase[0], kb.index(j * perChannel));
}

// Stack slots for the accumulators of the largest block (promoted to registers).
struct Slots {
  std::vector<llvm::Value*> vacc, sacc;
};
Slots makeSlots(KernelBuilder& kb, DotUnit& unit, int64_t pixels) {
  Slots slots;
  const int64_t most = std::max(pixels * unit.block(pixels), unit.block(1));
  for (int64_t i = 0; i < most; ++i) {
    slots.vacc.push_back(kb.local(unit.accType(), "vacc"));
    slots.sacc.push_back(kb.local(kb.b().getInt32Ty(), "sacc"));
  }
  return slots;
}

// A block of `pixels` pixels for the channels from `base`, its accumulators at their start.
Block startBlock(KernelBuilder& kb, DotUnit& unit, const Slots& slots, const ZeroPoint& zp,
                 llvm::Value* base, int64_t channels, int64_t pixels) {
  llvm::IRBuilder<>& ir = kb.b();
  Block block;
  block.pixels = pixels;
  const int64_t n = unit.block(pixels);
  block.channel = blockChannels(kb, base, channels, n);
  block.outputChannels = channels;
  block.vacc.assign(slots.vacc.begin(), slots.vacc.begin() + pixels * n);
  block.sacc.assign(slots.sacc.begin(), slots.sacc.begin() + pixels * n);
  for (int64_t j = 0; j < n; ++j) {
    llvm::Value* start = qConst(kb, 0);
    if (zp.corrections) {
      start = qTableLoad(kb, zp.corrections, block.channel[size_t(j)]);
    } else if (zp.sums) {
      llvm::Value* s =
          ir.CreateLoad(ir.getInt32Ty(),
                        ir.CreateInBoundsGEP(ir.getInt32Ty(), zp.sums, block.channel[size_t(j)]));
      start = ir.CreateMul(s, qConst(kb, -zp.z));
    }
    for (int64_t p = 0; p < pixels; ++p) {
      ir.CreateStore(unit.zero(), block.vacc[size_t(p * n + j)]);
      ir.CreateStore(start, block.sacc[size_t(p * n + j)]);
    }
  }
  return block;
}

// <n x i32> of n scalars.
llvm::Value* gather(KernelBuilder& kb, const std::vector<llvm::Value*>& lanes) {
  llvm::IRBuilder<>& ir = kb.b();
  llvm::Value* v =
      llvm::PoisonValue::get(llvm::FixedVectorType::get(ir.getInt32Ty(), unsigned(lanes.size())));
  for (size_t i = 0; i < lanes.size(); ++i) v = ir.CreateInsertElement(v, lanes[i], uint64_t(i));
  return v;
}

// <4 x i32> of the lane sums of four i32 vectors (4 or 8 lanes): pairwise even + odd lane
// shuffles, so the four reductions share their steps.
llvm::Value* sumEach(KernelBuilder& kb, const std::vector<llvm::Value*>& v) {
  static_assert(kBlock == 4, "sumEach reduces four accumulators");
  llvm::IRBuilder<>& ir = kb.b();
  auto pairSums = [&](llvm::Value* a, llvm::Value* b) {
    unsigned lanes = llvm::cast<llvm::FixedVectorType>(a->getType())->getNumElements();
    llvm::SmallVector<int, 16> even, odd;
    for (unsigned i = 0; i < lanes; ++i) {
      even.push_back(int(2 * i));
      odd.push_back(int(2 * i + 1));
    }
    return ir.CreateAdd(ir.CreateShuffleVector(a, b, even), ir.CreateShuffleVector(a, b, odd));
  };
  llvm::Value* all = pairSums(pairSums(v[0], v[1]), pairSums(v[2], v[3]));
  if (llvm::cast<llvm::FixedVectorType>(all->getType())->getNumElements() == 4) return all;
  // Eight lanes: each vector's two partial sums are neighbours.
  return ir.CreateAdd(ir.CreateShuffleVector(all, {0, 2, 4, 6}),
                      ir.CreateShuffleVector(all, {1, 3, 5, 7}));
}

// Sums the block's lanes and stores pixel p's outputs at outBase[p] + channel: bias,
// rescale, output zero point and clamp on the block's channels at once.
void finishBlock(KernelBuilder& kb, DotUnit& unit, Block& block, const QRescale& rescale,
                 const std::vector<llvm::Value*>& outBase) {
  const KernelDesc& d = kb.desc();
  const QuantDesc& q = d.quant;
  llvm::IRBuilder<>& ir = kb.b();
  std::vector<llvm::Value*> biases, multipliers, shifts;
  for (llvm::Value* channel : block.channel) {
    if (d.inputs.size() == 3) biases.push_back(qToI32(kb, kb.load(2, d.inputs[2].type, channel)));
    multipliers.push_back(rescale.multipliers ? qTableLoad(kb, rescale.multipliers, channel)
                                              : qConst(kb, q.multipliers[0]));
    shifts.push_back(rescale.shifts ? qShiftLoad(kb, rescale.shifts, channel)
                                    : qConst(kb, q.shifts[0]));
  }
  llvm::Value* m = gather(kb, multipliers);
  llvm::Value* s = gather(kb, shifts);
  const int64_t n = block.channels();
  auto* v32 = llvm::FixedVectorType::get(ir.getInt32Ty(), unsigned(n));
  auto* outType = llvm::FixedVectorType::get(kb.elemType(d.output.type), unsigned(n));
  for (int64_t p = 0; p < block.pixels; ++p) {
    std::vector<llvm::Value*> vectors, scalars;
    for (int64_t j = 0; j < n; ++j) {
      size_t i = size_t(p * n + j);
      vectors.push_back(ir.CreateLoad(unit.accType(), block.vacc[i]));
      scalars.push_back(ir.CreateLoad(ir.getInt32Ty(), block.sacc[i]));
    }
    llvm::Value* sums = unit.scalarAcc() ? gather(kb, vectors) : sumEach(kb, vectors);
    llvm::Value* acc = ir.CreateAdd(sums, gather(kb, scalars));
    if (!biases.empty()) acc = ir.CreateAdd(acc, gather(kb, biases));
    llvm::Value* y = ir.CreateAdd(qMultiplyLanes(kb, acc, m, s, qRescaleRange(q)),
                                  llvm::ConstantInt::get(v32, uint64_t(q.outputZeroPoint)));
    y = qClampLanes(kb, y, q.actMin, q.actMax);
    if (kb.target().helium) {
      // One store of the pixel's channels (VSTRB.32), predicated where the last block
      // reaches past the layer's channels (its repeated lanes are not stored).
      llvm::Value* to =
          ir.CreateInBoundsGEP(outType->getElementType(), kb.bindingPointer(kb.outputBinding()),
                               ir.CreateAdd(outBase[size_t(p)], block.channel[0]));
      llvm::Value* value = ir.CreateTrunc(y, outType);
      if (block.outputChannels % n == 0) {
        ir.CreateAlignedStore(value, to, llvm::Align(1));
      } else {
        llvm::Value* inside = ir.CreateIntrinsic(
            llvm::Intrinsic::get_active_lane_mask,
            {llvm::FixedVectorType::get(ir.getInt1Ty(), unsigned(n)), kb.indexType()},
            {block.channel[0], kb.index(block.outputChannels)});
        ir.CreateMaskedStore(value, to, llvm::Align(1), inside);
      }
      continue;
    }
    for (int64_t j = 0; j < n; ++j) {
      llvm::Value* value =
          ir.CreateTrunc(ir.CreateExtractElement(y, uint64_t(j)), kb.elemType(d.output.type));
      kb.store(kb.outputBinding(), d.output.type,
               ir.CreateAdd(outBase[size_t(p)], block.channel[size_t(j)]), value);
    }
  }
}

// The zero-point plan for `channels` output channels whose weights are `perChannel`
// consecutive int8 values each (OHWI / [N, K]). Emits the weight sums when they are needed.
ZeroPoint planZeroPoint(KernelBuilder& kb, const DotUnit& unit, int64_t channels,
                        int64_t perChannel) {
  const QuantDesc& q = kb.desc().quant;
  llvm::IRBuilder<>& ir = kb.b();
  ZeroPoint zp;
  zp.z = q.inputZeroPoint + unit.offset();
  if (zp.z == 0 || q.correctionInBias) return zp;  // (the bias starts the accumulators)
  if (unit.offset() == 0 && !q.zeroPointCorrection.empty()) {
    zp.corrections = qTable(kb, q.zeroPointCorrection, "qzpc");
    return zp;
  }
  llvm::Type* i32 = ir.getInt32Ty();
  zp.sums = kb.local(llvm::ArrayType::get(i32, uint64_t(channels)), "wsums");
  kb.forRange(0, channels, [&](llvm::Value* c) {
    llvm::Value* slot = ir.CreateInBoundsGEP(i32, zp.sums, c);
    ir.CreateStore(qConst(kb, 0), slot);
    llvm::Value* base = ir.CreateMul(c, kb.index(perChannel));
    kb.forRange(0, perChannel, [&](llvm::Value* k) {
      llvm::Value* wv = qToI32(kb, kb.load(1, ElemType::I8, ir.CreateAdd(base, k)));
      ir.CreateStore(ir.CreateAdd(ir.CreateLoad(i32, slot), wv), slot);
    });
  });
  return zp;
}

}  // namespace

bool quantizedDotApplies(KernelBuilder& kb) {
  const KernelDesc& d = kb.desc();
  const QuantDesc& q = d.quant;
  const Int8Dot kind = kb.target().int8Dot;
  // Microcontrollers (optimised for size) take these kernels too: 2.6-3.3x fewer instructions
  // than the plain loops for some KB more code (docs/mcu.md; --optimize=size keeps those).
  const bool microcontroller =
      kind == Int8Dot::ArmDsp || kind == Int8Dot::Scalar || kind == Int8Dot::Mve;
  if (kind == Int8Dot::None || (kb.target().optimizeForSize && !microcontroller)) return false;
  if (d.inputs[0].type != ElemType::I8 || d.inputs[1].type != ElemType::I8) return false;
  const int64_t shortest = DotUnit(kb).shortestSpan();
  if (q.op == QuantOp::FullyConnected)
    return q.weightZeroPoint == 0 && d.inputs[0].shape[1] >= shortest;
  if (q.op != QuantOp::Conv || d.groups != 1) return false;
  const std::vector<int64_t>& ws = d.inputs[1].shape;
  const int64_t C = ws[3], KW = ws[2];
  const int64_t rowSpan = d.dilations[1] == 1 ? KW * C : C;
  if (rowSpan < shortest) return false;
  // Kernels that compute their weight sums keep them in a stack table.
  const bool needsSums = q.inputZeroPoint + (kb.target().int8Dot == Int8Dot::Vnni ? 128 : 0) != 0 &&
                         (kb.target().int8Dot == Int8Dot::Vnni || q.zeroPointCorrection.empty());
  return !needsSums || ws[0] <= kMaxWeightSumChannels;
}

uint32_t emitQuantizedConvDot(KernelBuilder& kb) {
  const KernelDesc& d = kb.desc();
  llvm::IRBuilder<>& ir = kb.b();
  const QWindowShape g = qConvShape(d);
  // Whole kernel rows as one span where they are contiguous (and worth it).
  const bool rowSpans = g.dw == 1 && g.KW > 1;
  DotUnit unit(kb);
  // Helium: a border pixel's rows as predicated spans too (no tap-by-tap steps).
  const bool maskedRows = rowSpans && unit.predicatedTail();
  // Helium, kernel rows that fill a vector poorly (KW * C not a multiple of 16, e.g. KWS's
  // 10 x 4 stem over one channel): every pixel's window gathered into a stack buffer, then one
  // span (gatherWindow; windows up to 1 KB), where the dot steps it saves over the channel
  // blocks outweigh the copy (about 7 instructions per step and 4-channel block of a pixel,
  // 12 per row copied: KWS's stem 10 steps -> 3 over 16 blocks; VWW's and ResNet-8's 3 x 3
  // stems over 3 channels, 3 -> 2 over 2 and 4 blocks, stay on rows).
  const int64_t window = g.KH * g.KW * g.C;
  const int64_t rowSteps = g.KH * ((g.KW * g.C + kChunk - 1) / kChunk);
  const int64_t windowSteps = (window + kChunk - 1) / kChunk;
  const bool gathered = maskedRows && (g.KW * g.C) % kChunk != 0 && window <= 1024 &&
                        (g.OC / kBlock) * (rowSteps - windowSteps) * 7 > g.KH * 12;
  const int64_t windowStride = window + kChunk;  // a window and its last row's spill
  llvm::Value* windows =
      gathered
          ? kb.local(llvm::ArrayType::get(ir.getInt8Ty(), uint64_t(kPairPixels * windowStride)),
                     "windows")
          : nullptr;
  const QRescale rescale = qMakeRescale(kb);
  const ZeroPoint zp = planZeroPoint(kb, unit, g.OC, g.KH * g.KW * g.C);
  const int64_t pairPixels = kPairPixels;
  const Slots slots = makeSlots(kb, unit, pairPixels);
  // Blocks of channels for one pixel and for pairs of interior pixels.
  const int64_t singleChannels = unit.block(1), pairChannels = unit.block(pairPixels);
  const int64_t singleBlocks = (g.OC + singleChannels - 1) / singleChannels;
  const int64_t pairBlocks = (g.OC + pairChannels - 1) / pairChannels;

  const int64_t rows = g.N * g.OH;
  kb.forWorkgroupShare(rows, [&](llvm::Value* row) {
    const QOutputRow start = qOutputRow(kb, g, row);
    llvm::Value *xBatch = start.xBatch, *ihStart = start.ihStart;
    auto xAt = [&](llvm::Value* ih, llvm::Value* iw) {
      return ir.CreateAdd(
          xBatch, ir.CreateMul(ir.CreateAdd(ir.CreateMul(ih, kb.index(g.W)), iw), kb.index(g.C)));
    };
    auto outAt = [&](llvm::Value* ow) {
      return ir.CreateMul(ir.CreateAdd(ir.CreateMul(row, kb.index(g.OW)), ow), kb.index(g.OC));
    };
    // Points the block's weights at tap `tap` (kh * KW + kw) of its channels.
    auto pointWeightsAt = [&](Block& block, llvm::Value* tap) {
      block.wBase.clear();
      for (llvm::Value* oc : block.channel) {
        block.wBase.push_back(ir.CreateMul(
            ir.CreateAdd(ir.CreateMul(oc, kb.index(g.KH * g.KW)), tap), kb.index(g.C)));
      }
      sharedWeightsBase(kb, block, g.OC, g.KH * g.KW * g.C);
    };

    // Helium's gathered windows: `pixels` neighbouring pixels from ow0, any position.
    auto gatheredPixels = [&](llvm::Value* ow0, int64_t pixels) {
      std::vector<llvm::Value*> xIndex, outBase;
      for (int64_t p = 0; p < pixels; ++p) {
        llvm::Value* ow = ir.CreateAdd(ow0, kb.index(p));
        llvm::Value* iwStart = ir.CreateSub(ir.CreateMul(ow, kb.index(g.sw)), kb.index(g.pl));
        gatherWindow(
            kb, unit, g, windows, p * windowStride,
            [&](llvm::Value* ih) { return xAt(ih, iwStart); }, ihStart, iwStart, zp.z);
        xIndex.push_back(kb.index(p * windowStride));
        outBase.push_back(outAt(ow));
      }
      const int64_t n = unit.block(pixels);
      kb.forRange(0, (g.OC + n - 1) / n, [&](llvm::Value* blockIndex) {
        Block block =
            startBlock(kb, unit, slots, zp, ir.CreateMul(blockIndex, kb.index(n)), g.OC, pixels);
        pointWeightsAt(block, kb.index(0));
        dotSpan(kb, unit, block, xIndex, window, windows);
        finishBlock(kb, unit, block, rescale, outBase);
      });
    };
    if (gathered) {
      kb.forRange(0, g.OW / kPairPixels, [&](llvm::Value* pair) {
        gatheredPixels(ir.CreateMul(pair, kb.index(kPairPixels)), kPairPixels);
      });
      if (g.OW % kPairPixels != 0) gatheredPixels(kb.index(g.OW - 1), 1);
      return;
    }

    // One output pixel, any position: taps outside the image are skipped (z * w added).
    auto onePixel = [&](llvm::Value* ow) {
      llvm::Value* iwStart = ir.CreateSub(ir.CreateMul(ow, kb.index(g.sw)), kb.index(g.pl));
      kb.forRange(0, singleBlocks, [&](llvm::Value* blockIndex) {
        Block block = startBlock(kb, unit, slots, zp,
                                 ir.CreateMul(blockIndex, kb.index(singleChannels)), g.OC, 1);
        // One tap at a time: inside the image a dot span over C, outside z * w.
        auto tapByTap = [&](llvm::Value* kh, llvm::Value* ih) {
          kb.forRange(0, g.KW, [&](llvm::Value* kw) {
            pointWeightsAt(block, ir.CreateAdd(ir.CreateMul(kh, kb.index(g.KW)), kw));
            if (!ih) {
              scalarSpan(kb, block, {}, 0, g.C, unit.offset(), zp.z);
              return;
            }
            llvm::Value* iw = ir.CreateAdd(iwStart, ir.CreateMul(kw, kb.index(g.dw)));
            llvm::Value* colInside = qInside(kb, iw, g.W);
            kb.ifThen(colInside, [&] { dotSpan(kb, unit, block, {xAt(ih, iw)}, g.C); });
            if (zp.z != 0) {
              kb.ifThen(ir.CreateNot(colInside),
                        [&] { scalarSpan(kb, block, {}, 0, g.C, unit.offset(), zp.z); });
            }
          });
        };
        kb.forRange(0, g.KH, [&](llvm::Value* kh) {
          llvm::Value* ih = ir.CreateAdd(ihStart, ir.CreateMul(kh, kb.index(g.dh)));
          llvm::Value* rowInside = qInside(kb, ih, g.H);
          if (maskedRows) {
            pointWeightsAt(block, ir.CreateMul(kh, kb.index(g.KW)));
            maskedRowSpan(kb, unit, block, xAt(ih, iwStart), iwStart, rowInside, g, zp.z);
            return;
          }
          kb.ifThen(rowInside, [&] {
            if (!rowSpans) {
              tapByTap(kh, ih);
              return;
            }
            llvm::Value* whole = ir.CreateAnd(ir.CreateICmpSGE(iwStart, kb.index(0)),
                                              ir.CreateICmpSLT(iwStart, kb.index(g.W - g.KW + 1)));
            kb.ifThen(whole, [&] {
              pointWeightsAt(block, ir.CreateMul(kh, kb.index(g.KW)));
              dotSpan(kb, unit, block, {xAt(ih, iwStart)}, g.KW * g.C);
            });
            kb.ifThen(ir.CreateNot(whole), [&] { tapByTap(kh, ih); });
          });
          if (zp.z != 0) kb.ifThen(ir.CreateNot(rowInside), [&] { tapByTap(kh, nullptr); });
        });
        finishBlock(kb, unit, block, rescale, {outAt(ow)});
      });
    };

    // pairPixels neighbouring pixels whose every tap lies inside the image: no border
    // tests, and every weight load serves all of them.
    auto interiorPixels = [&](llvm::Value* ow0) {
      std::vector<llvm::Value*> iwStart, outBase;
      for (int64_t p = 0; p < pairPixels; ++p) {
        llvm::Value* ow = ir.CreateAdd(ow0, kb.index(p));
        iwStart.push_back(ir.CreateSub(ir.CreateMul(ow, kb.index(g.sw)), kb.index(g.pl)));
        outBase.push_back(outAt(ow));
      }
      kb.forRange(0, pairBlocks, [&](llvm::Value* blockIndex) {
        Block block =
            startBlock(kb, unit, slots, zp, ir.CreateMul(blockIndex, kb.index(pairChannels)), g.OC,
                       pairPixels);
        kb.forRange(0, g.KH, [&](llvm::Value* kh) {
          llvm::Value* ih = ir.CreateAdd(ihStart, ir.CreateMul(kh, kb.index(g.dh)));
          if (rowSpans) {
            pointWeightsAt(block, ir.CreateMul(kh, kb.index(g.KW)));
            std::vector<llvm::Value*> x;
            for (llvm::Value* iw : iwStart) x.push_back(xAt(ih, iw));
            dotSpan(kb, unit, block, x, g.KW * g.C);
            return;
          }
          kb.forRange(0, g.KW, [&](llvm::Value* kw) {
            pointWeightsAt(block, ir.CreateAdd(ir.CreateMul(kh, kb.index(g.KW)), kw));
            std::vector<llvm::Value*> x;
            for (llvm::Value* iw : iwStart)
              x.push_back(xAt(ih, ir.CreateAdd(iw, ir.CreateMul(kw, kb.index(g.dw)))));
            dotSpan(kb, unit, block, x, g.C);
          });
        });
        finishBlock(kb, unit, block, rescale, outBase);
      });
    };

    // Every window inside the image (no padding: 1x1 convolutions, valid windows): only the
    // interior path, which also saves its code.
    const bool allInterior = g.pt == 0 && g.pl == 0 &&
                             (g.OH - 1) * g.sh + (g.KH - 1) * g.dh < g.H &&
                             (g.OW - 1) * g.sw + (g.KW - 1) * g.dw < g.W;
    if (allInterior && g.OW % pairPixels == 0) {
      kb.forRange(0, g.OW / pairPixels, [&](llvm::Value* group) {
        interiorPixels(ir.CreateMul(group, kb.index(pairPixels)));
      });
      return;
    }
    // Interior rows and columns: ih and iw of every tap inside the image.
    llvm::Value* rowInterior =
        ir.CreateAnd(ir.CreateICmpSGE(ihStart, kb.index(0)),
                     ir.CreateICmpSLT(ihStart, kb.index(g.H - (g.KH - 1) * g.dh)));
    const int64_t groups = g.OW / pairPixels;
    kb.forRange(0, groups, [&](llvm::Value* group) {
      llvm::Value* ow0 = ir.CreateMul(group, kb.index(pairPixels));
      llvm::Value* first = ir.CreateSub(ir.CreateMul(ow0, kb.index(g.sw)), kb.index(g.pl));
      llvm::Value* last =
          ir.CreateAdd(first, kb.index((pairPixels - 1) * g.sw + (g.KW - 1) * g.dw));
      llvm::Value* interior =
          ir.CreateAnd(rowInterior, ir.CreateAnd(ir.CreateICmpSGE(first, kb.index(0)),
                                                 ir.CreateICmpSLT(last, kb.index(g.W))));
      kb.ifThen(interior, [&] { interiorPixels(ow0); });
      kb.ifThen(ir.CreateNot(interior), [&] {
        kb.forRange(0, pairPixels, [&](llvm::Value* p) { onePixel(ir.CreateAdd(ow0, p)); });
      });
    });
    if (g.OW % pairPixels != 0)
      kb.forRange(groups * pairPixels, g.OW, [&](llvm::Value* ow) { onePixel(ow); });
  });
  return workgroupsFor(rows, g.OW * g.OC * g.KH * g.KW * g.C);
}

uint32_t emitQuantizedFullyConnectedDot(KernelBuilder& kb) {
  const KernelDesc& d = kb.desc();
  llvm::IRBuilder<>& ir = kb.b();
  const int64_t B = d.inputs[0].shape[0], K = d.inputs[0].shape[1], N = d.inputs[1].shape[0];
  DotUnit unit(kb);
  const QRescale rescale = qMakeRescale(kb);
  const Slots slots = makeSlots(kb, unit, 1);
  const int64_t n = unit.block(1);
  const int64_t blocks = (N + n - 1) / n;
  // A fully connected layer computes its weight sums per block (no table of all N).
  const QuantDesc& q = d.quant;
  const int32_t z = q.inputZeroPoint + unit.offset();
  const bool ownSums = z != 0 && (unit.offset() != 0 || q.zeroPointCorrection.empty());
  ZeroPoint zp;
  zp.z = z;
  if (z != 0 && !ownSums && !q.correctionInBias)
    zp.corrections = qTable(kb, q.zeroPointCorrection, "qzpc");
  kb.forWorkgroupShare(B * blocks, [&](llvm::Value* item) {
    llvm::Value* b = ir.CreateUDiv(item, kb.index(blocks));
    llvm::Value* blockIndex = ir.CreateURem(item, kb.index(blocks));
    Block block = startBlock(kb, unit, slots, zp, ir.CreateMul(blockIndex, kb.index(n)), N, 1);
    for (llvm::Value* n : block.channel) block.wBase.push_back(ir.CreateMul(n, kb.index(K)));
    sharedWeightsBase(kb, block, N, K);
    // -z * sum(w): the same accumulators, run once over the weights with x = z.
    if (ownSums) scalarSpan(kb, block, {}, 0, K, unit.offset(), -z);
    dotSpan(kb, unit, block, {ir.CreateMul(b, kb.index(K))}, K);
    finishBlock(kb, unit, block, rescale, {ir.CreateMul(b, kb.index(N))});
  });
  return workgroupsFor(B * blocks, K * n);
}

}  // namespace kiln::codegen::detail
