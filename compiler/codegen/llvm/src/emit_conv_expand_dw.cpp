// A 1x1 "expand" convolution fused with the depthwise convolution after it (MobileNet's
// inverted residual blocks; KernelDesc::tailB, fuseExpandDepthwise): the expanded tensor never
// reaches memory. The output rows are walked G at a time (a step, the work item). The
// expanded rows a step's depthwise windows need, (G - 1) * stride + KH of them, live in a
// stack buffer (at most 256 KiB, in L2), one slice per expanded channel:
//  - per step, every slice first moves its last KH - stride rows (the window overlap with the
//    previous step) to the front, then the G * stride new rows are computed by the GEMM
//    microkernel (emit_gemm_microkernel.h) over flattened tiles of NR input pixels (B read
//    straight from the NCHW input; per tile every panel of MR channels, so the tile's inputs
//    stay in L1; A the weights, packed in panels of MR at compile time like
//    emit_conv_gemm.cpp's), bias and the expand's chain (Clip) applied to the accumulators
//    before they are stored into the slices; rows in the padding are zeros. With stride 2 a
//    slice keeps each row's even and odd columns in two planes (a shuffle at that store), so
//    every depthwise tap reads consecutive floats;
//  - then the depthwise convolution, per channel, for the step's G output rows: vectors of
//    output pixels, each slice row loaded once per kernel column and fed to every output row
//    whose window holds it; the image's left/right padding columns are lanes set to zero by
//    constant masks, a row's last vector ends on the row's end (no masked stores); the bias
//    and its own chain are applied before the only store.
// A workgroup's first step computes the overlap rows as well (KH - stride rows recomputed per
// workgroup; few workgroups). On targets without vector registers (and stride 2 over odd
// widths) a plain loop computes each output row from the KH expanded rows it needs, one
// channel at a time (recomputing them).
#include <llvm/IR/Intrinsics.h>

#include <algorithm>
#include <cassert>

#include "emit_gemm_microkernel.h"
#include "emitters.h"
#include "expr_eval.h"
#include "kernel_builder.h"
#include "kiln/codegen/conv_gemm_plan.h"

namespace kiln::codegen::detail {
namespace {

constexpr int64_t kMaxStepRows = 4;            // output rows per step at most
constexpr int64_t kMaxBufferFloats = 1 << 16;  // the expanded rows' buffer: 256 KiB (L2 / 2)
constexpr int64_t kDepthwiseAccumulators = 4;  // vector accumulators of the depthwise part

// The geometry both paths share.
struct Shape {
  int64_t n, c, h, w;         // the expand's input
  int64_t ch;                 // expanded channels (= the output's)
  int64_t kh, kw, s, pt, pl;  // depthwise window, stride, top / left pads
  int64_t oh, ow;             // output map
};

Shape shapeOf(const KernelDesc& d) {
  const std::vector<int64_t>& xs = d.inputs[0].shape;
  const std::vector<int64_t>& ws = d.inputs[size_t(d.tailB)].shape;
  const std::vector<int64_t>& ys = d.output.shape;
  return {xs[0],         xs[1],         xs[2], xs[3], ys[1], ws[2], ws[3], d.tailStrides[1],
          d.tailPads[0], d.tailPads[1], ys[2], ys[3]};
}

// The value after the epilogue's activation and chain (constants only), scalar or vector.
llvm::Value* applyChain(KernelBuilder& kb, const Epilogue* act, const ElementwiseExpr& chain,
                        llvm::Value* v, unsigned lanes) {
  if (act) v = kb.applyEpilogue(*act, v);
  if (chain.nodes.empty()) return v;
  return evalExpr(
      kb, chain.nodes,
      [](const ExprNode&) -> llvm::Value* {
        assert(false && "the fused chains of an expand-depthwise kernel read no inputs");
        return nullptr;
      },
      v, lanes);
}

// Plain loops: work item (image, channel, output row); the KH expanded rows of the window
// are computed into a row buffer one at a time and accumulated into the output row.
uint32_t emitPlain(KernelBuilder& kb, const Shape& g) {
  const KernelDesc& d = kb.desc();
  llvm::IRBuilder<>& b = kb.b();
  const ElemType f32 = ElemType::F32;
  const unsigned out = kb.outputBinding();
  const bool hasBias = d.inputs.size() - d.epilogue.inputCount > 2;
  const bool packedA = d.weightLayout == ConvWeights::GemmPanels;
  const int64_t mr = d.weightPanel, fullPanels = packedA ? g.ch / mr : 0;
  llvm::Value* row = kb.local(llvm::ArrayType::get(b.getFloatTy(), uint64_t(g.w)), "expanded");
  auto rowAt = [&](llvm::Value* i) { return b.CreateInBoundsGEP(b.getFloatTy(), row, i); };
  // Weight (c, k) of the expand, in either layout.
  auto weight = [&](llvm::Value* c, llvm::Value* k) {
    if (!packedA) return kb.load(1, f32, b.CreateAdd(b.CreateMul(c, kb.index(g.c)), k));
    llvm::Value* panel = b.CreateUDiv(c, kb.index(mr));
    llvm::Value* m = b.CreateURem(c, kb.index(mr));
    llvm::Value* rows = b.CreateSelect(b.CreateICmpULT(panel, kb.index(fullPanels)), kb.index(mr),
                                       kb.index(g.ch - fullPanels * mr));
    llvm::Value* at =
        b.CreateAdd(b.CreateMul(panel, kb.index(mr * g.c)), b.CreateAdd(b.CreateMul(k, rows), m));
    return kb.load(1, f32, at);
  };
  const int64_t items = g.n * g.ch * g.oh;
  kb.forWorkgroupShare(items, [&](llvm::Value* item) {
    std::vector<llvm::Value*> co = kb.decompose(item, {g.n, g.ch, g.oh});
    llvm::Value *n = co[0], *c = co[1], *oh = co[2];
    llvm::Value* outRow = b.CreateMul(item, kb.index(g.ow));
    llvm::Value* init = d.tailBias >= 0 ? kb.load(unsigned(d.tailBias), f32, c) : kb.f32(0.0f);
    kb.forRange(0, g.ow,
                [&](llvm::Value* ow) { kb.store(out, f32, b.CreateAdd(outRow, ow), init); });
    llvm::Value* xImage = b.CreateMul(n, kb.index(g.c * g.h * g.w));
    kb.forRange(0, g.kh, [&](llvm::Value* kh) {
      llvm::Value* ih =
          b.CreateAdd(b.CreateSub(b.CreateMul(oh, kb.index(g.s)), kb.index(g.pt)), kh);
      kb.ifThen(b.CreateICmpULT(ih, kb.index(g.h)), [&] {
        // Expanded row ih of channel c.
        llvm::Value* b1 = hasBias ? kb.load(2, f32, c) : kb.f32(0.0f);
        kb.forRange(0, g.w, [&](llvm::Value* x) { b.CreateStore(b1, rowAt(x)); });
        kb.forRange(0, g.c, [&](llvm::Value* k) {
          llvm::Value* wk = weight(c, k);
          llvm::Value* in = b.CreateAdd(xImage, b.CreateAdd(b.CreateMul(k, kb.index(g.h * g.w)),
                                                            b.CreateMul(ih, kb.index(g.w))));
          kb.forRange(0, g.w, [&](llvm::Value* x) {
            llvm::Value* v = b.CreateFMul(kb.load(0, f32, b.CreateAdd(in, x)), wk);
            b.CreateStore(b.CreateFAdd(b.CreateLoad(b.getFloatTy(), rowAt(x)), v), rowAt(x));
          });
        });
        kb.forRange(0, g.w, [&](llvm::Value* x) {
          llvm::Value* v = b.CreateLoad(b.getFloatTy(), rowAt(x));
          b.CreateStore(applyChain(kb, &d.epilogue, d.epilogue.chain, v, 0), rowAt(x));
        });
        // Its taps into the output row.
        kb.forRange(0, g.kw, [&](llvm::Value* kw) {
          llvm::Value* tap = b.CreateAdd(
              b.CreateMul(b.CreateAdd(b.CreateMul(c, kb.index(g.kh)), kh), kb.index(g.kw)), kw);
          llvm::Value* wt = kb.load(unsigned(d.tailB), f32, tap);
          kb.forRange(0, g.ow, [&](llvm::Value* ow) {
            llvm::Value* iw =
                b.CreateAdd(b.CreateSub(b.CreateMul(ow, kb.index(g.s)), kb.index(g.pl)), kw);
            kb.ifThen(b.CreateICmpULT(iw, kb.index(g.w)), [&] {
              llvm::Value* at = b.CreateAdd(outRow, ow);
              llvm::Value* v = b.CreateFMul(b.CreateLoad(b.getFloatTy(), rowAt(iw)), wt);
              kb.store(out, f32, at, b.CreateFAdd(kb.load(out, f32, at), v));
            });
          });
        });
      });
    });
    if (!d.tailChain.nodes.empty()) {
      kb.forRange(0, g.ow, [&](llvm::Value* ow) {
        llvm::Value* at = b.CreateAdd(outRow, ow);
        kb.store(out, f32, at, applyChain(kb, nullptr, d.tailChain, kb.load(out, f32, at), 0));
      });
    }
  });
  return workgroupsFor(items, g.kh * g.w * (g.c + g.kw));
}

}  // namespace

uint32_t emitConvExpandDepthwise(KernelBuilder& kb) {
  const KernelDesc& d = kb.desc();
  const Shape g = shapeOf(d);
  assert(d.tailB >= 0 && d.tailStrides[0] == d.tailStrides[1]);
  ConvGemmTile plan = convGemmTile(d, {kb.target().vectorLanes, kb.target().vectorRegisters});
  const bool packedA = d.weightLayout == ConvWeights::GemmPanels;
  assert(d.weightLayout == ConvWeights::Oihw || packedA);
  if (!plan.applies() || (packedA && d.weightPanel != plan.mr) || g.s > 2 || g.s > g.kh ||
      (g.s == 2 && g.w % 2 != 0) || plan.nrVectors % 2 != 0 || d.bindingsMayAlias)
    return emitPlain(kb, g);

  llvm::IRBuilder<>& b = kb.b();
  const unsigned L = unsigned(plan.lanes);
  const int64_t MR = plan.mr, NRV = plan.nrVectors, NR = plan.nr();
  const int64_t HW = g.h * g.w, K = g.c;
  const bool hasBias = d.inputs.size() - d.epilogue.inputCount > 2;
  const unsigned out = kb.outputBinding();
  const int64_t keep = g.kh - g.s;  // window rows shared by consecutive steps
  // Stride 2: each slice row is stored as its even columns, then (a plane further) its odd
  // ones, so every tap of the depthwise window reads consecutive floats.
  const bool split = g.s == 2;
  const int64_t planes = split ? 2 : 1, rowFloats = g.w / planes;
  auto bufferRows = [&](int64_t rows) { return (rows - 1) * g.s + g.kh; };
  auto planeFloats = [&](int64_t rows) {
    const int64_t f = bufferRows(rows) * rowFloats + 2 * int64_t(L) + 2 * g.kw;
    return (f + L - 1) / L * L;
  };
  // Output rows per step: a divisor of OH up to kMaxStepRows whose new input rows fill the
  // tiles best, the most rows on a tie (each loaded input row feeds every output row of the
  // step that uses it), the buffer bounded.
  int64_t G = 1;
  double best = -1;
  for (int64_t r = 1; r <= kMaxStepRows; ++r) {
    if (g.oh % r || planes * planeFloats(r) * g.ch > kMaxBufferFloats) continue;
    const int64_t pixels = r * g.s * g.w;
    const double fill = double(pixels) / double((pixels + NR - 1) / NR * NR);
    if (fill >= best) best = fill, G = r;
  }
  // The pass keeps KH rows of every channel within the budget; anything far past it (a
  // hand-made description) takes the plain loops rather than a huge stack frame.
  if (planes * planeFloats(1) * g.ch > 4 * kMaxBufferFloats) return emitPlain(kb, g);
  const int64_t fresh = G * g.s, RB = bufferRows(G), PF = planeFloats(G), SS = planes * PF;
  const int64_t front = (g.kw + L - 1) / L * L;  // floats before the first slice
  const int64_t steps = g.oh / G, items = g.n * steps;
  const int64_t fullPanels = g.ch / MR, remRows = g.ch % MR;
  // Depthwise accumulators: G rows x chunk vectors.
  const int64_t chunk = std::max<int64_t>(1, kDepthwiseAccumulators / G);

  llvm::Type* floatTy = b.getFloatTy();
  auto* vecTy = llvm::FixedVectorType::get(floatTy, L);
  auto* buffer = llvm::cast<llvm::AllocaInst>(
      kb.local(llvm::ArrayType::get(floatTy, uint64_t(front + (g.ch + 1) * SS)), "expanded.rows"));
  buffer->setAlignment(llvm::Align(64));
  auto bufAt = [&](llvm::Value* i) { return b.CreateGEP(floatTy, buffer, i); };
  Accumulators acc = makeAccumulators(kb, {MR, NRV, L});
  auto laneMask = [&](int64_t count, int64_t v) -> llvm::Value* {
    if ((v + 1) * int64_t(L) <= count) return nullptr;
    std::vector<llvm::Constant*> on;
    for (int64_t j = 0; j < int64_t(L); ++j) on.push_back(b.getInt1(v * L + j < count));
    return llvm::ConstantVector::get(on);
  };
  auto zero = llvm::Constant::getNullValue(vecTy);
  auto fma = [&](llvm::Value* x, llvm::Value* y, llvm::Value* z) {
    return b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {vecTy}, {x, y, z});
  };
  auto storeMasked = [&](llvm::Value* value, llvm::Value* at, llvm::Value* mask) {
    if (mask) {
      b.CreateMaskedStore(value, at, llvm::Align(4), mask);
    } else {
      b.CreateAlignedStore(value, at, llvm::Align(4));
    }
  };
  auto sliceOf = [&](llvm::Value* c) {
    return b.CreateAdd(kb.index(front), b.CreateMul(c, kb.index(SS)));
  };
  // The previous item this workgroup ran: a step right after it continues its rows.
  llvm::Value* previous = kb.local(kb.indexType(), "previous.step");
  b.CreateStore(kb.index(-2), previous);

  kb.forWorkgroupShare(items, [&](llvm::Value* item) {
    llvm::Value* n = b.CreateUDiv(item, kb.index(steps));
    llvm::Value* step = b.CreateURem(item, kb.index(steps));
    llvm::Value* first = b.CreateOr(
        b.CreateICmpEQ(step, kb.index(0)),
        b.CreateICmpNE(item, b.CreateAdd(b.CreateLoad(kb.indexType(), previous), kb.index(1))));
    b.CreateStore(item, previous);
    llvm::Value* xImage = b.CreateMul(n, kb.index(g.c * HW));
    llvm::Value* outImage = b.CreateMul(n, kb.index(g.ch * g.oh * g.ow));

    // Expanded channels [panel * MR, + rows) at `width` flat input pixels from p0 into the
    // slices from flat slice pixel `dst` on (even: split planes), bias and chain applied.
    auto tile = [&](llvm::Value* panel, int64_t rows, llvm::Value* p0, int64_t width,
                    llvm::Value* dst) {
      const int64_t nv = (width + L - 1) / L;
      llvm::Value* oc0 = b.CreateMul(panel, kb.index(MR));
      for (int64_t m = 0; m < rows; ++m) {
        llvm::Value* start =
            hasBias
                ? b.CreateVectorSplat(L, kb.load(2, ElemType::F32, b.CreateAdd(oc0, kb.index(m))))
                : zero;
        for (int64_t v = 0; v < nv; ++v) b.CreateStore(start, acc[m][v]);
      }
      llvm::Value* aBase =
          packedA ? b.CreateMul(panel, kb.index(K * MR)) : b.CreateMul(oc0, kb.index(K));
      LoadA loadA = [&](llvm::Value* k, int64_t m) {
        llvm::Value* at = packedA ? b.CreateAdd(b.CreateMul(k, kb.index(rows)), kb.index(m))
                                  : b.CreateAdd(k, kb.index(m * K));
        return kb.load(1, ElemType::F32, b.CreateAdd(aBase, at));
      };
      LoadB loadB = [&](llvm::Value* k, int64_t v) -> llvm::Value* {
        llvm::Value* at = b.CreateAdd(b.CreateAdd(xImage, b.CreateMul(k, kb.index(HW))),
                                      b.CreateAdd(p0, kb.index(v * L)));
        llvm::Value* mask = laneMask(width, v);
        if (!mask) return kb.loadVector(0, at, L);
        return b.CreateMaskedLoad(vecTy, kb.elementAddress(0, at), llvm::Align(4), mask, zero);
      };
      emitMicrokernel(kb, {rows, nv, L}, acc, K, 4, loadA, loadB);
      std::vector<int> evens, odds;
      for (unsigned l = 0; l < L; ++l) evens.push_back(int(2 * l)), odds.push_back(int(2 * l + 1));
      for (int64_t m = 0; m < rows; ++m) {
        llvm::Value* slice = sliceOf(b.CreateAdd(oc0, kb.index(m)));
        std::vector<llvm::Value*> value;
        for (int64_t v = 0; v < nv; ++v)
          value.push_back(
              applyChain(kb, &d.epilogue, d.epilogue.chain, b.CreateLoad(vecTy, acc[m][v]), L));
        if (!split) {
          for (int64_t v = 0; v < nv; ++v)
            storeMasked(value[size_t(v)],
                        bufAt(b.CreateAdd(slice, b.CreateAdd(dst, kb.index(v * L)))),
                        laneMask(width, v));
          continue;
        }
        // Pairs of vectors: their even lanes to the even plane, odd lanes to the odd one.
        llvm::Value* half = b.CreateUDiv(dst, kb.index(2));
        for (int64_t q = 0; q * 2 < nv; ++q) {
          llvm::Value* lo = value[size_t(2 * q)];
          llvm::Value* hi = 2 * q + 1 < nv ? value[size_t(2 * q + 1)] : zero;
          llvm::Value* at = b.CreateAdd(slice, b.CreateAdd(half, kb.index(q * L)));
          storeMasked(b.CreateShuffleVector(lo, hi, evens), bufAt(at),
                      laneMask((width + 1) / 2, q));
          storeMasked(b.CreateShuffleVector(lo, hi, odds), bufAt(b.CreateAdd(at, kb.index(PF))),
                      laneMask(width / 2, q));
        }
      }
    };
    // `pixels` consecutive input pixels from p0 into the slices from flat pixel dst on, every
    // channel: per pixel tile, every panel (the tile's inputs stay in L1 across the panels).
    auto pixelRun = [&](llvm::Value* p0, int64_t pixels, llvm::Value* dst) {
      const int64_t full = pixels / NR, tail = pixels % NR;
      auto panels = [&](llvm::Value* off, int64_t width) {
        kb.forRange(
            kb.index(0), kb.index(fullPanels),
            [&](llvm::Value* panel) {
              tile(panel, MR, b.CreateAdd(p0, off), width, b.CreateAdd(dst, off));
            },
            false);
        if (remRows > 0)
          tile(kb.index(fullPanels), remRows, b.CreateAdd(p0, off), width, b.CreateAdd(dst, off));
      };
      kb.forRange(
          kb.index(0), kb.index(full),
          [&](llvm::Value* t) { panels(b.CreateMul(t, kb.index(NR)), NR); }, false);
      if (tail > 0) panels(kb.index(full * NR), tail);
    };
    // Expanded rows [ih, ih + count) into slice rows [row0, row0 + count): one run over the
    // flattened rows when all are inside the image, else row by row (zeros outside).
    auto computeRows = [&](llvm::Value* ih, int64_t count, int64_t row0) {
      llvm::Value* inside =
          b.CreateAnd(b.CreateICmpSGE(ih, kb.index(0)),
                      b.CreateICmpSLE(b.CreateAdd(ih, kb.index(count)), kb.index(g.h)));
      kb.ifThen(inside, [&] {
        pixelRun(b.CreateMul(ih, kb.index(g.w)), count * g.w, kb.index(row0 * g.w));
      });
      kb.ifThen(b.CreateNot(inside), [&] {
        kb.forRange(
            kb.index(0), kb.index(count),
            [&](llvm::Value* r) {
              llvm::Value* row = b.CreateAdd(ih, r);
              llvm::Value* slot = b.CreateAdd(r, kb.index(row0));
              llvm::Value* rowInside = b.CreateICmpULT(row, kb.index(g.h));
              kb.ifThen(rowInside, [&] {
                pixelRun(b.CreateMul(row, kb.index(g.w)), g.w, b.CreateMul(slot, kb.index(g.w)));
              });
              kb.ifThen(b.CreateNot(rowInside), [&] {
                kb.forRange(kb.index(0), kb.index(g.ch), [&](llvm::Value* c) {
                  llvm::Value* at = b.CreateAdd(sliceOf(c), b.CreateMul(slot, kb.index(rowFloats)));
                  for (int64_t p = 0; p < planes; ++p)
                    kb.forRange(0, rowFloats, [&](llvm::Value* x) {
                      b.CreateStore(kb.f32(0.0f),
                                    bufAt(b.CreateAdd(at, b.CreateAdd(x, kb.index(p * PF)))));
                    });
                });
              });
            },
            /*unroll=*/false);
      });
    };
    // Moves the last `keep` rows of every slice (each plane) to its front.
    auto shift = [&]() {
      const int64_t floats = keep * rowFloats, vectors = floats / L;
      kb.forRange(kb.index(0), kb.index(g.ch), [&](llvm::Value* c) {
        llvm::Value* slice = sliceOf(c);
        for (int64_t p = 0; p < planes; ++p) {
          llvm::Value* to = b.CreateAdd(slice, kb.index(p * PF));
          llvm::Value* from = b.CreateAdd(to, kb.index(fresh * rowFloats));
          kb.forRange(kb.index(0), kb.index(vectors), [&](llvm::Value* i) {
            llvm::Value* o = b.CreateMul(i, kb.index(L));
            llvm::Value* v =
                b.CreateAlignedLoad(vecTy, bufAt(b.CreateAdd(from, o)), llvm::Align(4));
            b.CreateAlignedStore(v, bufAt(b.CreateAdd(to, o)), llvm::Align(4));
          });
          kb.forRange(vectors * L, floats, [&](llvm::Value* i) {
            llvm::Value* v = b.CreateLoad(floatTy, bufAt(b.CreateAdd(from, i)));
            b.CreateStore(v, bufAt(b.CreateAdd(to, i)));
          });
        }
      });
    };
    // The depthwise convolution of every channel for the step's output rows [oh0, oh0 + G):
    // per chunk of output vectors, each slice row's vector for each kernel column is loaded
    // once and feeds every output row whose window holds that row.
    auto depthwise = [&](llvm::Value* oh0) {
      const int64_t nvOut = (g.ow + L - 1) / L;
      // Output vector v's first column: a last vector that would run past the row's end
      // ends on it instead (a few columns computed twice, no masked stores: slow on AMD).
      auto column = [&](int64_t v) {
        return g.ow < int64_t(L) ? v * L : std::min<int64_t>(v * L, g.ow - L);
      };
      kb.forRange(
          kb.index(0), kb.index(g.ch),
          [&](llvm::Value* c) {
            llvm::Value* slice = sliceOf(c);
            std::vector<llvm::Value*> wt;
            llvm::Value* wBase = b.CreateMul(c, kb.index(g.kh * g.kw));
            for (int64_t t = 0; t < g.kh * g.kw; ++t)
              wt.push_back(b.CreateVectorSplat(
                  L, kb.load(unsigned(d.tailB), ElemType::F32, b.CreateAdd(wBase, kb.index(t)))));
            llvm::Value* bias =
                d.tailBias >= 0
                    ? b.CreateVectorSplat(L, kb.load(unsigned(d.tailBias), ElemType::F32, c))
                    : zero;
            llvm::Value* outRows = b.CreateAdd(
                outImage,
                b.CreateMul(b.CreateAdd(b.CreateMul(c, kb.index(g.oh)), oh0), kb.index(g.ow)));
            for (int64_t v0 = 0; v0 < nvOut; v0 += chunk) {
              const int64_t v1 = std::min(nvOut, v0 + chunk);
              std::vector<std::vector<llvm::Value*>> sum(
                  size_t(G), std::vector<llvm::Value*>(size_t(v1 - v0), bias));
              for (int64_t rr = 0; rr < RB; ++rr) {
                for (int64_t kw = 0; kw < g.kw; ++kw) {
                  // Column (ow * s - pl + kw): plane and offset of output column ow's input.
                  const int64_t col = kw - g.pl;
                  const int64_t plane = split ? ((col % 2) + 2) % 2 : 0;
                  const int64_t offset = split ? (col - plane) / 2 : col;
                  for (int64_t v = v0; v < v1; ++v) {
                    llvm::Value* at = b.CreateAdd(
                        slice, kb.index(plane * PF + rr * rowFloats + column(v) + offset));
                    llvm::Value* x = b.CreateAlignedLoad(vecTy, bufAt(at), llvm::Align(4));
                    // Lanes whose column lies in the image's left/right padding read zero.
                    bool edge = false;
                    std::vector<llvm::Constant*> on;
                    for (int64_t l = 0; l < int64_t(L); ++l) {
                      const int64_t iw = (column(v) + l) * g.s + col;
                      const bool in = iw >= 0 && iw < g.w;
                      edge |= !in && column(v) + l < g.ow;
                      on.push_back(b.getInt1(in));
                    }
                    if (edge) x = b.CreateSelect(llvm::ConstantVector::get(on), x, zero);
                    for (int64_t j = 0; j < G; ++j) {
                      const int64_t kh = rr - j * g.s;
                      if (kh < 0 || kh >= g.kh) continue;
                      llvm::Value*& s = sum[size_t(j)][size_t(v - v0)];
                      s = fma(x, wt[size_t(kh * g.kw + kw)], s);
                    }
                  }
                }
              }
              for (int64_t j = 0; j < G; ++j) {
                for (int64_t v = v0; v < v1; ++v) {
                  llvm::Value* value =
                      applyChain(kb, nullptr, d.tailChain, sum[size_t(j)][size_t(v - v0)], L);
                  llvm::Value* at = b.CreateAdd(outRows, kb.index(j * g.ow + column(v)));
                  llvm::Value* mask = g.ow < int64_t(L) ? laneMask(g.ow, v) : nullptr;
                  if (mask) {
                    b.CreateMaskedStore(value, kb.elementAddress(out, at), llvm::Align(4), mask);
                  } else {
                    kb.storeVector(out, at, value);
                  }
                }
              }
            }
          },
          /*unroll=*/false);
    };
    // One step: output rows [step * G, + G).
    llvm::Value* oh0 = b.CreateMul(step, kb.index(G));
    llvm::Value* ihTop = b.CreateSub(b.CreateMul(oh0, kb.index(g.s)), kb.index(g.pt));
    if (keep > 0) {
      kb.ifThen(first, [&] { computeRows(ihTop, keep, 0); });
      kb.ifThen(b.CreateNot(first), [&] { shift(); });
    }
    computeRows(b.CreateAdd(ihTop, kb.index(keep)), fresh, keep);
    depthwise(oh0);
  });
  // Every workgroup's first step computes its window overlap again: few workgroups, and in an
  // artifact compiled for T threads at most T (KernelDesc::threadSplit): MobileNetV2's
  // --threads=2 artifact with 2 instead of 4 for its stride-2 blocks 0.990 at 2 threads while
  // the host kept both vCPUs on one core complex (three runs), 0.981-1.002 on two; 8 were
  // 1.032-1.042 (`kiln compare`, Zen 4).
  const uint32_t workgroups = workgroupsFor(items, fresh * g.w * g.ch * (g.c + g.kh * g.kw));
  const uint32_t most = keep > 1 ? 2 : 4;
  return std::min<uint32_t>(
      workgroups, d.threadSplit > 0 ? std::min<uint32_t>(most, uint32_t(d.threadSplit)) : most);
}

}  // namespace kiln::codegen::detail
