// Int8 convolutions (groups 1, NHWC) with output channels in vector lanes, on x86 VNNI
// (vpdpbusd on 512-, 256- or 128-bit vectors) and AArch64 +dotprod (sdot), reading weights
// packed at compile time into blocks of L output channels x 4 input channels
// (quantized_conv_plan.h). Bit exact with the plain loops of emit_quantized_conv.cpp: every
// product of two int8 values and every partial sum is exact in wrapping i32.
//
// One dot-product step multiplies 4 input channels of one pixel, broadcast to every lane, by
// those 4 input channels of L output channels and adds the four products to each lane. A
// tile is `pixels` neighbouring output pixels of one row x `blocks` blocks of L output
// channels, its pixels x blocks accumulators in registers over every tap and every group of
// 4 input channels; each weight load serves every pixel and each broadcast every block. The
// lanes hold output channels, so the rescale (per-channel multipliers), output zero point
// and clamp run on whole vectors and the outputs are stored as L bytes; no horizontal sums.
//
// Row buffer: per output row, the KH input rows its windows read are first copied into a
// stack buffer with the image's padding around them (int8OcBufferColumns), already in the
// dot step's form and with x = zx wherever a tap lies outside the image (TFLite skips such a
// tap: its term is 0 below). The tiles then read every tap's 4 bytes straight from the
// buffer (a broadcast from memory): no border tests, no per-use offset, and row spans read
// their padding bytes (weights 0) from the buffer, never past the input.
//
// Zero points: vpdpbusd multiplies unsigned by signed bytes, so x goes in as x + 128 (x xor
// 0x80, done in the copy) and the kernel accumulates sum((x + o) * w) with o = 128 (0 for
// sdot). Each workgroup first computes start = bias - (zx + o) * sum(w) per output channel
// (with the same instruction and x = 1), so that start + sum((x + o) * w) = bias +
// sum((x - zx) * w).
#include <llvm/IR/IntrinsicsAArch64.h>
#include <llvm/IR/IntrinsicsX86.h>

#include <algorithm>

#include "codegen_error.h"
#include "emit_quantized.h"
#include "emitters.h"
#include "kiln/codegen/quantized_conv_plan.h"

namespace kiln::codegen::detail {
namespace {

constexpr int64_t kMaxTilePixels = 8;

// The target's dot-product step on L i32 lanes.
class LaneDot {
 public:
  LaneDot(KernelBuilder& kb, int64_t lanes) : ir_(kb.b()), lanes_(lanes) {
    aarch64_ = kb.target().int8Dot == EmitTarget::Int8Dot::Sdot;
    type_ = llvm::FixedVectorType::get(ir_.getInt32Ty(), unsigned(lanes));
  }
  llvm::FixedVectorType* type() const { return type_; }
  int32_t offset() const { return aarch64_ ? 0 : 128; }

  // Four bytes as one i32 repeated in every lane.
  llvm::Value* broadcast(llvm::Value* word) { return ir_.CreateVectorSplat(unsigned(lanes_), word); }
  // acc + per lane the sum of the four products of x's and w's bytes.
  llvm::Value* dot(llvm::Value* acc, llvm::Value* x, llvm::Value* w) {
    if (aarch64_) {
      auto* bytes = llvm::FixedVectorType::get(ir_.getInt8Ty(), unsigned(lanes_ * 4));
      return ir_.CreateIntrinsic(llvm::Intrinsic::aarch64_neon_sdot, {type_, bytes},
                                 {acc, ir_.CreateBitCast(x, bytes), ir_.CreateBitCast(w, bytes)});
    }
    llvm::Intrinsic::ID id = lanes_ == 16  ? llvm::Intrinsic::x86_avx512_vpdpbusd_512
                             : lanes_ == 8 ? llvm::Intrinsic::x86_avx512_vpdpbusd_256
                                           : llvm::Intrinsic::x86_avx512_vpdpbusd_128;
    return ir_.CreateIntrinsic(id, {}, {acc, x, w});
  }

 private:
  llvm::IRBuilder<>& ir_;
  int64_t lanes_;
  bool aarch64_ = false;
  llvm::FixedVectorType* type_ = nullptr;
};

}  // namespace

uint32_t emitQuantizedConvOc(KernelBuilder& kb) {
  const KernelDesc& d = kb.desc();
  const QuantDesc& q = d.quant;
  llvm::IRBuilder<>& ir = kb.b();
  const QWindowShape g = qConvShape(d);
  const int64_t L = d.weightPanel;
  const EmitTarget::Int8Dot dotKind = kb.target().int8Dot;
  const bool usable = (dotKind == EmitTarget::Int8Dot::Vnni && L <= 16 &&
                       (L < 16 || kb.target().vectorLanes >= 16)) ||
                      (dotKind == EmitTarget::Int8Dot::Sdot && L == 4);
  // The reduction: per kernel row, `spans` spans of contiguous bytes of x, each `words`
  // words of 4 bytes: one tap's C channels, or with row spans the row's KW * C bytes padded
  // to R (zero weights past KW * C).
  const bool rowSpans = d.weightLayout == ConvWeights::Int8OcRowBlocks;
  const int64_t rowBytes = int8OcRowBytes(d);
  if (!usable || int8OcLanes(d, L, true) != L || rowSpans != (rowBytes > 0))
    fail("quantized kernel '" + d.name + "': weights packed in blocks of " + std::to_string(L) +
         " output channels, which this target's kernels do not read");
  LaneDot unit(kb, L);
  llvm::Type* i8 = ir.getInt8Ty();
  llvm::Type* i32 = ir.getInt32Ty();
  llvm::FixedVectorType* v32 = unit.type();
  auto* v8 = llvm::FixedVectorType::get(i8, unsigned(L));
  auto splat = [&](int32_t value) { return llvm::ConstantInt::get(v32, uint64_t(uint32_t(value))); };
  auto loadWords = [&](llvm::Value* base, llvm::Value* index) -> llvm::Value* {
    return ir.CreateAlignedLoad(v32, ir.CreateInBoundsGEP(i32, base, index), llvm::Align(4));
  };
  const int64_t spans = rowSpans ? 1 : g.KW;
  const int64_t words = (rowSpans ? rowBytes : g.C) / 4;
  const int64_t blockCount = g.OC / L;
  // The packed weights of block `block`, span `span` (kh * spans + s), word `word`.
  auto weights = [&](llvm::Value* block, llvm::Value* span, llvm::Value* word) -> llvm::Value* {
    llvm::Value* step = ir.CreateAdd(
        ir.CreateMul(ir.CreateAdd(ir.CreateMul(block, kb.index(g.KH * spans)), span),
                     kb.index(words)),
        word);
    llvm::Value* address =
        ir.CreateInBoundsGEP(i8, kb.bindingPointer(1), ir.CreateMul(step, kb.index(L * 4)));
    return ir.CreateAlignedLoad(v32, address, llvm::Align(1));
  };
  const int32_t z = q.inputZeroPoint + unit.offset();  // x + o for x = zx, in [0, 255] or int8
  const uint32_t zByte = uint32_t(z) & 0xFF;
  const QRescale rescale = qMakeRescale(kb);
  const QRescaleRange range = qRescaleRange(q);

  // start[oc] = bias[oc] - z * sum(w[oc]), per workgroup.
  llvm::Value* starts = kb.local(llvm::ArrayType::get(i32, uint64_t(g.OC)), "starts");
  llvm::Value* sumSlot = kb.local(v32, "wsum");
  kb.forRange(0, blockCount, [&](llvm::Value* block) {
    ir.CreateStore(splat(0), sumSlot);
    llvm::Value* ones = unit.broadcast(ir.getInt32(0x01010101u));
    kb.forRange(0, g.KH * spans * words, [&](llvm::Value* word) {
      ir.CreateStore(unit.dot(ir.CreateLoad(v32, sumSlot), ones, weights(block, kb.index(0), word)),
                     sumSlot);
    });
    llvm::Value* first = ir.CreateMul(block, kb.index(L));
    llvm::Value* start = ir.CreateMul(ir.CreateLoad(v32, sumSlot), splat(-z));
    if (d.inputs.size() == 3) start = ir.CreateAdd(start, loadWords(kb.bindingPointer(2), first));
    ir.CreateAlignedStore(start, ir.CreateInBoundsGEP(i32, starts, first), llvm::Align(4));
  });

  const int64_t registers = kb.target().vectorRegisters;
  const int64_t tileBlocks = std::min<int64_t>(blockCount, registers >= 32 ? 4 : 2);
  const int64_t tilePixels =
      std::min<int64_t>({g.OW, kMaxTilePixels, (registers - tileBlocks - 2) / tileBlocks});
  // Accumulator slots of the largest tile (promoted to registers).
  std::vector<llvm::Value*> slots;
  for (int64_t i = 0; i < tileBlocks * tilePixels; ++i) slots.push_back(kb.local(v32, "acc"));
  llvm::Value* results =
      kb.local(llvm::ArrayType::get(v32, uint64_t(tileBlocks * tilePixels)), "results");
  // The row buffer: KH rows of the padded input, bufferColumns pixels each, and 4 bytes
  // after them that row spans may read (their weights are 0; set once, so never undefined).
  const int64_t rowStride = int8OcBufferColumns(d) * g.C;
  const int64_t rowsBytes = g.KH * rowStride;
  llvm::Value* rows = kb.local(llvm::ArrayType::get(i8, uint64_t(rowsBytes + 4)), "rows");
  ir.CreateAlignedStore(ir.getInt32(0), ir.CreateInBoundsGEP(i8, rows, kb.index(rowsBytes)),
                        llvm::Align(1));

  const int64_t outputRows = g.N * g.OH;
  kb.forWorkgroupShare(outputRows, [&](llvm::Value* row) {
    const QOutputRow start = qOutputRow(kb, g, row);
    llvm::Value *xBatch = start.xBatch, *ihStart = start.ihStart;

    // The KH input rows of this output row into the row buffer, offset for the dot step
    // (x xor 0x80 for vpdpbusd), with zx (offset) in the padding columns and in the rows
    // outside the image: the tiles then read every tap from it without a border test.
    kb.forRange(0, g.KH, [&](llvm::Value* kh) {
      llvm::Value* ih = ir.CreateAdd(ihStart, ir.CreateMul(kh, kb.index(g.dh)));
      llvm::Value* dst = ir.CreateMul(kh, kb.index(rowStride));
      auto fill = [&](int64_t from, int64_t to) {
        kb.forRange(0, to - from, [&](llvm::Value* e) {
          ir.CreateStore(ir.getInt8(uint8_t(zByte)),
                         ir.CreateInBoundsGEP(i8, rows, ir.CreateAdd(ir.CreateAdd(dst, kb.index(from)), e)));
        });
      };
      llvm::Value* inside = qInside(kb, ih, g.H);
      kb.ifThen(inside, [&] {
        fill(0, g.pl * g.C);
        llvm::Value* src = ir.CreateAdd(xBatch, ir.CreateMul(ih, kb.index(g.W * g.C)));
        llvm::Value* to = ir.CreateAdd(dst, kb.index(g.pl * g.C));
        kb.forRange(0, g.W * g.C, [&](llvm::Value* e) {
          llvm::Value* x = kb.load(0, ElemType::I8, ir.CreateAdd(src, e));
          if (unit.offset() != 0) x = ir.CreateXor(x, ir.getInt8(0x80));
          ir.CreateStore(x, ir.CreateInBoundsGEP(i8, rows, ir.CreateAdd(to, e)));
        });
        fill((g.pl + g.W) * g.C, rowStride);
      });
      kb.ifThen(ir.CreateNot(inside), [&] { fill(0, rowStride); });
    });

    // Output pixels [ow0, ow0 + pixels) x blocks [block0, block0 + blocks).
    auto tile = [&](llvm::Value* block0, int64_t blocks, llvm::Value* ow0, int64_t pixels) {
      auto slot = [&](int64_t p, int64_t b) { return slots[size_t(p * tileBlocks + b)]; };
      for (int64_t i = 0; i < pixels * blocks; ++i) ir.CreateStore(splat(0), slot(i / blocks, i % blocks));
      kb.forRange(0, g.KH, [&](llvm::Value* kh) {
        kb.forRange(0, spans, [&](llvm::Value* span) {
          llvm::Value* spanIndex = ir.CreateAdd(ir.CreateMul(kh, kb.index(spans)), span);
          // Each pixel's first byte of the span in the row buffer.
          std::vector<llvm::Value*> xIndex;
          for (int64_t p = 0; p < pixels; ++p) {
            llvm::Value* column = ir.CreateAdd(ir.CreateMul(ir.CreateAdd(ow0, kb.index(p)), kb.index(g.sw)),
                                               ir.CreateMul(span, kb.index(g.dw)));
            xIndex.push_back(ir.CreateAdd(ir.CreateMul(kh, kb.index(rowStride)),
                                          ir.CreateMul(column, kb.index(g.C))));
          }
          kb.forRange(0, words, [&](llvm::Value* word) {
            std::vector<llvm::Value*> w;
            for (int64_t b = 0; b < blocks; ++b)
              w.push_back(weights(ir.CreateAdd(block0, kb.index(b)), spanIndex, word));
            for (int64_t p = 0; p < pixels; ++p) {
              llvm::Value* at = ir.CreateAdd(xIndex[size_t(p)], ir.CreateMul(word, kb.index(4)));
              llvm::Value* x = unit.broadcast(ir.CreateAlignedLoad(
                  i32, ir.CreateInBoundsGEP(i8, rows, at), llvm::Align(1)));
              for (int64_t b = 0; b < blocks; ++b) {
                llvm::Value* s = slot(p, b);
                ir.CreateStore(unit.dot(ir.CreateLoad(v32, s), x, w[size_t(b)]), s);
              }
            }
          });
        });
      });
      // The rescale in a loop over the tile's pixels, kept rolled (one copy of its code per
      // block of the tile shape, not one per accumulator).
      for (int64_t i = 0; i < pixels * blocks; ++i) {
        ir.CreateStore(ir.CreateLoad(v32, slot(i / blocks, i % blocks)),
                       ir.CreateInBoundsGEP(v32, results, kb.index(i)));
      }
      std::vector<llvm::Value*> first, start, m, s;
      for (int64_t b = 0; b < blocks; ++b) {
        first.push_back(ir.CreateMul(ir.CreateAdd(block0, kb.index(b)), kb.index(L)));
        start.push_back(loadWords(starts, first.back()));
        m.push_back(rescale.multipliers ? loadWords(rescale.multipliers, first.back())
                                        : splat(q.multipliers[0]));
        s.push_back(rescale.shifts ? qShiftLoad(kb, rescale.shifts, first.back(), unsigned(L))
                                   : splat(q.shifts[0]));
      }
      kb.forRange(kb.index(0), kb.index(pixels), [&](llvm::Value* p) {
        llvm::Value* pixel = ir.CreateAdd(ir.CreateMul(row, kb.index(g.OW)), ir.CreateAdd(ow0, p));
        for (int64_t b = 0; b < blocks; ++b) {
          llvm::Value* at = ir.CreateAdd(ir.CreateMul(p, kb.index(blocks)), kb.index(b));
          llvm::Value* acc = ir.CreateAdd(
              ir.CreateLoad(v32, ir.CreateInBoundsGEP(v32, results, at)), start[size_t(b)]);
          llvm::Value* y = ir.CreateAdd(qMultiplyLanes(kb, acc, m[size_t(b)], s[size_t(b)], range),
                                        splat(q.outputZeroPoint));
          y = qClampLanes(kb, y, q.actMin, q.actMax);
          llvm::Value* out = ir.CreateAdd(ir.CreateMul(pixel, kb.index(g.OC)), first[size_t(b)]);
          ir.CreateAlignedStore(ir.CreateTrunc(y, v8),
                                ir.CreateInBoundsGEP(i8, kb.bindingPointer(kb.outputBinding()), out),
                                llvm::Align(1));
        }
      }, /*unroll=*/false);
    };
    // Every pixel tile of the row for the blocks [block0, block0 + blocks).
    auto rowOfTiles = [&](llvm::Value* block0, int64_t blocks) {
      kb.forRange(0, g.OW / tilePixels, [&](llvm::Value* t) {
        tile(block0, blocks, ir.CreateMul(t, kb.index(tilePixels)), tilePixels);
      });
      if (g.OW % tilePixels != 0)
        tile(block0, blocks, kb.index(g.OW / tilePixels * tilePixels), g.OW % tilePixels);
    };
    kb.forRange(0, blockCount / tileBlocks, [&](llvm::Value* group) {
      rowOfTiles(ir.CreateMul(group, kb.index(tileBlocks)), tileBlocks);
    });
    if (blockCount % tileBlocks != 0)
      rowOfTiles(kb.index(blockCount / tileBlocks * tileBlocks), blockCount % tileBlocks);
  });
  return workgroupsFor(outputRows, g.OW * g.OC * g.KH * g.KW * g.C);
}

}  // namespace kiln::codegen::detail
