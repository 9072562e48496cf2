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
// Zero points: vpdpbusd multiplies unsigned by signed bytes, so x goes in as x + 128 (x xor
// 0x80) and the kernel accumulates sum((x + o) * w) with o = 128 (0 for sdot). Each
// workgroup first computes start = bias - (zx + o) * sum(w) per output channel (with the same
// instruction and x = 1), so that start + sum((x + o) * w) = bias + sum((x - zx) * w). A tap
// outside the image counts as x = zx (TFLite skips it: its term is 0), by a select in the
// tiles at the image's border only.
#include <llvm/IR/IntrinsicsAArch64.h>
#include <llvm/IR/IntrinsicsX86.h>

#include <algorithm>
#include <functional>

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
  LaneDot(KernelBuilder& kb, int64_t lanes) : kb_(kb), ir_(kb.b()), lanes_(lanes) {
    aarch64_ = kb.target().int8Dot == EmitTarget::Int8Dot::Sdot;
    type_ = llvm::FixedVectorType::get(ir_.getInt32Ty(), unsigned(lanes));
  }
  llvm::FixedVectorType* type() const { return type_; }
  int32_t offset() const { return aarch64_ ? 0 : 128; }

  // Four bytes as one i32 repeated in every lane.
  llvm::Value* broadcast(llvm::Value* word) { return ir_.CreateVectorSplat(unsigned(lanes_), word); }
  // Four int8 values of x (from byte `index` of binding 0) as the dot step takes them.
  llvm::Value* xWord(llvm::Value* index) {
    llvm::Value* address = ir_.CreateInBoundsGEP(ir_.getInt8Ty(), kb_.bindingPointer(0), index);
    llvm::Value* word = ir_.CreateAlignedLoad(ir_.getInt32Ty(), address, llvm::Align(1));
    if (offset() != 0) word = ir_.CreateXor(word, ir_.getInt32(0x80808080u));
    return word;
  }
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
  KernelBuilder& kb_;
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
  const int64_t rowTaps = g.KW * g.C;  // the bytes of a row span that have weights
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
  llvm::Value* zWord = unit.broadcast(ir.getInt32(zByte * 0x01010101u));
  const QRescale rescale = qMakeRescale(kb);

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

  const int64_t rows = g.N * g.OH;
  kb.forWorkgroupShare(rows, [&](llvm::Value* row) {
    const QOutputRow start = qOutputRow(kb, g, row);
    llvm::Value *xBatch = start.xBatch, *ihStart = start.ihStart;
    llvm::Value* rowInterior =
        ir.CreateAnd(ir.CreateICmpSGE(ihStart, kb.index(0)),
                     ir.CreateICmpSLT(ihStart, kb.index(g.H - (g.KH - 1) * g.dh)));

    // Output pixels [ow0, ow0 + pixels) x blocks [block0, block0 + blocks); `border`: some of
    // their taps may lie outside the image.
    auto tile = [&](llvm::Value* block0, int64_t blocks, llvm::Value* ow0, int64_t pixels,
                    bool border) {
      auto slot = [&](int64_t p, int64_t b) { return slots[size_t(p * tileBlocks + b)]; };
      for (int64_t i = 0; i < pixels * blocks; ++i) ir.CreateStore(splat(0), slot(i / blocks, i % blocks));
      std::vector<llvm::Value*> iwStart;
      for (int64_t p = 0; p < pixels; ++p) {
        iwStart.push_back(ir.CreateSub(
            ir.CreateMul(ir.CreateAdd(ow0, kb.index(p)), kb.index(g.sw)), kb.index(g.pl)));
      }
      kb.forRange(0, g.KH, [&](llvm::Value* kh) {
        llvm::Value* ih = ir.CreateAdd(ihStart, ir.CreateMul(kh, kb.index(g.dh)));
        llvm::Value* rowInside = border ? qInside(kb, ih, g.H) : nullptr;
        kb.forRange(0, spans, [&](llvm::Value* span) {
          llvm::Value* spanIndex = ir.CreateAdd(ir.CreateMul(kh, kb.index(spans)), span);
          // Each pixel's first byte of the span (pixel 0 of the image where a tap's span lies
          // outside it) and, at the border, whether the tap lies inside.
          std::vector<llvm::Value*> xIndex, inside;
          for (int64_t p = 0; p < pixels; ++p) {
            llvm::Value* iw = ir.CreateAdd(iwStart[size_t(p)], ir.CreateMul(span, kb.index(g.dw)));
            llvm::Value* at = ir.CreateAdd(
                xBatch, ir.CreateMul(ir.CreateAdd(ir.CreateMul(ih, kb.index(g.W)), iw), kb.index(g.C)));
            if (border && !rowSpans) {
              inside.push_back(ir.CreateAnd(rowInside, qInside(kb, iw, g.W)));
              at = ir.CreateSelect(inside.back(), at, xBatch);
            }
            xIndex.push_back(at);
          }
          // Adds the products of word `word` of the span, x given per pixel.
          auto step = [&](llvm::Value* word, const std::function<llvm::Value*(int64_t)>& xOf) {
            std::vector<llvm::Value*> w;
            for (int64_t b = 0; b < blocks; ++b)
              w.push_back(weights(ir.CreateAdd(block0, kb.index(b)), spanIndex, word));
            for (int64_t p = 0; p < pixels; ++p) {
              llvm::Value* x = xOf(p);
              for (int64_t b = 0; b < blocks; ++b) {
                llvm::Value* s = slot(p, b);
                ir.CreateStore(unit.dot(ir.CreateLoad(v32, s), x, w[size_t(b)]), s);
              }
            }
          };
          auto wordAt = [&](int64_t p, llvm::Value* word) {
            return unit.xWord(ir.CreateAdd(xIndex[size_t(p)], ir.CreateMul(word, kb.index(4))));
          };
          if (border && rowSpans) {
            // Byte by byte: byte e of a row span belongs to tap e / C, inside or not.
            for (int64_t word = 0; word < words; ++word) {
              step(kb.index(word), [&](int64_t p) {
                llvm::Value* value = ir.getInt32(0);
                for (int64_t j = 0; j < 4; ++j) {
                  const int64_t e = word * 4 + j;
                  llvm::Value* byte = ir.getInt32(zByte);
                  if (e < rowTaps) {
                    llvm::Value* in = ir.CreateAnd(
                        rowInside, qInside(kb, ir.CreateAdd(iwStart[size_t(p)], kb.index(e / g.C)), g.W));
                    llvm::Value* at =
                        ir.CreateSelect(in, ir.CreateAdd(xIndex[size_t(p)], kb.index(e)), xBatch);
                    llvm::Value* x = ir.CreateZExt(kb.load(0, ElemType::I8, at), i32);
                    if (unit.offset() != 0) x = ir.CreateXor(x, ir.getInt32(0x80));
                    byte = ir.CreateSelect(in, x, byte);
                  }
                  value = ir.CreateOr(value, ir.CreateShl(byte, uint64_t(8 * j)));
                }
                return unit.broadcast(value);
              });
            }
            return;
          }
          kb.forRange(0, words, [&](llvm::Value* word) {
            step(word, [&](int64_t p) {
              llvm::Value* x = unit.broadcast(wordAt(p, word));
              return border ? ir.CreateSelect(inside[size_t(p)], x, zWord) : x;
            });
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
        s.push_back(rescale.shifts ? loadWords(rescale.shifts, first.back()) : splat(q.shifts[0]));
      }
      kb.forRange(kb.index(0), kb.index(pixels), [&](llvm::Value* p) {
        llvm::Value* pixel = ir.CreateAdd(ir.CreateMul(row, kb.index(g.OW)), ir.CreateAdd(ow0, p));
        for (int64_t b = 0; b < blocks; ++b) {
          llvm::Value* at = ir.CreateAdd(ir.CreateMul(p, kb.index(blocks)), kb.index(b));
          llvm::Value* acc = ir.CreateAdd(
              ir.CreateLoad(v32, ir.CreateInBoundsGEP(v32, results, at)), start[size_t(b)]);
          llvm::Value* y = ir.CreateAdd(qMultiplyLanes(kb, acc, m[size_t(b)], s[size_t(b)]),
                                        splat(q.outputZeroPoint));
          y = qClampLanes(kb, y, q.actMin, q.actMax);
          llvm::Value* out = ir.CreateAdd(ir.CreateMul(pixel, kb.index(g.OC)), first[size_t(b)]);
          ir.CreateAlignedStore(ir.CreateTrunc(y, v8),
                                ir.CreateInBoundsGEP(i8, kb.bindingPointer(kb.outputBinding()), out),
                                llvm::Align(1));
        }
      }, /*unroll=*/false);
    };
    // A tile at its place: without the border selects where every tap lies inside the image
    // (everywhere, without padding: a valid window never leaves the image).
    // Row spans padded past their taps read up to 3 bytes beyond the last one: the tiles
    // whose last span would end past the input take the border path too.
    const bool overreads = rowSpans && rowBytes > rowTaps;
    const bool padded = d.pads[0] != 0 || d.pads[1] != 0 || d.pads[2] != 0 || d.pads[3] != 0;
    auto placedTile = [&](llvm::Value* block0, int64_t blocks, llvm::Value* ow0, int64_t pixels) {
      if (!padded && !overreads) {
        tile(block0, blocks, ow0, pixels, false);
        return;
      }
      llvm::Value* first = ir.CreateSub(ir.CreateMul(ow0, kb.index(g.sw)), kb.index(g.pl));
      llvm::Value* last = ir.CreateAdd(first, kb.index((pixels - 1) * g.sw + (g.KW - 1) * g.dw));
      llvm::Value* interior =
          ir.CreateAnd(rowInterior, ir.CreateAnd(ir.CreateICmpSGE(first, kb.index(0)),
                                                 ir.CreateICmpSLT(last, kb.index(g.W))));
      if (overreads) {
        llvm::Value* lastSpan = ir.CreateAdd(
            xBatch,
            ir.CreateMul(ir.CreateAdd(ir.CreateMul(ir.CreateAdd(ihStart, kb.index((g.KH - 1) * g.dh)),
                                                   kb.index(g.W)),
                                      ir.CreateSub(last, kb.index(g.KW - 1))),
                         kb.index(g.C)));
        interior = ir.CreateAnd(interior, ir.CreateICmpSLE(ir.CreateAdd(lastSpan, kb.index(rowBytes)),
                                                           kb.index(g.N * g.H * g.W * g.C)));
      }
      kb.ifThen(interior, [&] { tile(block0, blocks, ow0, pixels, false); });
      kb.ifThen(ir.CreateNot(interior), [&] { tile(block0, blocks, ow0, pixels, true); });
    };
    // Every pixel tile of the row for the blocks [block0, block0 + blocks).
    auto rowOfTiles = [&](llvm::Value* block0, int64_t blocks) {
      kb.forRange(0, g.OW / tilePixels, [&](llvm::Value* t) {
        placedTile(block0, blocks, ir.CreateMul(t, kb.index(tilePixels)), tilePixels);
      });
      if (g.OW % tilePixels != 0)
        placedTile(block0, blocks, kb.index(g.OW / tilePixels * tilePixels), g.OW % tilePixels);
    };
    kb.forRange(0, blockCount / tileBlocks, [&](llvm::Value* group) {
      rowOfTiles(ir.CreateMul(group, kb.index(tileBlocks)), tileBlocks);
    });
    if (blockCount % tileBlocks != 0)
      rowOfTiles(kb.index(blockCount / tileBlocks * tileBlocks), blockCount % tileBlocks);
  });
  return workgroupsFor(rows, g.OW * g.OC * g.KH * g.KW * g.C);
}

}  // namespace kiln::codegen::detail
