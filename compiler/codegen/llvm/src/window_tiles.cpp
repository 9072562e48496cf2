// Vectorised sliding windows over one NCHW plane (see window_tiles.h).
#include "window_tiles.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>

#include <algorithm>

namespace kiln::codegen::detail {

WindowGeometry windowGeometry(const KernelDesc& d, int64_t KH, int64_t KW) {
  const std::vector<int64_t>& xs = d.inputs[0].shape;
  const std::vector<int64_t>& ys = d.output.shape;
  WindowGeometry g;
  g.H = xs[2];
  g.W = xs[3];
  g.OH = ys[2];
  g.OW = ys[3];
  g.KH = KH;
  g.KW = KW;
  g.sh = d.strides[0];
  g.sw = d.strides[1];
  g.padTop = d.pads[0];
  g.padLeft = d.pads[1];
  return g;
}
bool windowRowsApply(const KernelDesc& d, unsigned lanes) {
  if (lanes < 4 || d.inputs[0].shape.size() != 4) return false;
  if (d.dilations[0] != 1 || d.dilations[1] != 1) return false;
  return d.strides[1] == 1 || d.strides[1] == 2;
}

namespace {

// Kernel-column loads of a tile: stride 1 loads V lanes per kernel column; stride 2 loads 2V
// lanes per pair of kernel columns (kw = 2m from the even lanes, 2m + 1 from the odd ones).
int64_t loadCount(const WindowGeometry& g) { return g.sw == 1 ? g.KW : (g.KW + 1) / 2; }
int64_t loadOffset(const WindowGeometry& g, int64_t load) {
  return (g.sw == 1 ? load : 2 * load) - g.padLeft;  // input column relative to start * sw
}
unsigned loadLanes(const WindowGeometry& g, unsigned lanes) {
  return g.sw == 1 ? lanes : 2 * lanes;
}

// True if every load of the tile at `start` stays inside [0, W).
bool interiorTile(const WindowGeometry& g, int64_t start, unsigned lanes) {
  int64_t first = start * g.sw + loadOffset(g, 0);
  int64_t last = start * g.sw + loadOffset(g, loadCount(g) - 1) + loadLanes(g, lanes) - 1;
  return first >= 0 && last < g.W;
}

}  // namespace

std::vector<ColumnTile> planColumnTiles(const WindowGeometry& g, unsigned lanes) {
  // A row narrower than a vector but wider than half of one is one masked tile (MobileNetV2's
  // 7-wide rows: one 8-lane tile instead of two overlapping 4-lane ones, half the multiply-adds).
  unsigned v = lanes;
  while (v > 4 && 2 * g.OW <= int64_t(v)) v /= 2;
  if (g.OW < int64_t(v)) return {{0, 1, v, false}};  // its stores keep the lanes inside the row
  std::vector<ColumnTile> tiles;
  int64_t t = 0;
  while (t + v <= g.OW && !interiorTile(g, t, v)) {
    tiles.push_back({t, 1, v, false});
    t += v;
  }
  int64_t count = 0;
  while (t + (count + 1) * v <= g.OW && interiorTile(g, t + count * v, v)) ++count;
  if (count > 0) {
    tiles.push_back({t, count, v, true});
    t += count * v;
  }
  while (t + v <= g.OW) {
    tiles.push_back({t, 1, v, false});
    t += v;
  }
  if (t < g.OW) tiles.push_back({g.OW - v, 1, v, false});  // overlaps the tile before
  return tiles;
}

bool windowTilesFit(const WindowGeometry& g, const std::vector<ColumnTile>& tiles) {
  int64_t unrolled = 0;
  for (const ColumnTile& tile : tiles) unrolled += tile.loop ? 0 : 1;
  return g.KH <= 16 && g.KW <= 16 && unrolled <= 8;
}

bool windowNeedsPadRow(const WindowGeometry& g) {
  return g.padTop > 0 || (g.OH - 1) * g.sh - g.padTop + g.KH - 1 >= g.H;
}

llvm::Value* makePadRow(KernelBuilder& kb, const WindowGeometry& g, float value) {
  llvm::IRBuilder<>& b = kb.b();
  llvm::Value* row = kb.local(llvm::ArrayType::get(b.getFloatTy(), uint64_t(g.W)), "padrow");
  kb.forRange(0, g.W, [&](llvm::Value* i) {
    b.CreateAlignedStore(kb.f32(value), b.CreateGEP(b.getFloatTy(), row, i), llvm::Align(4));
  });
  return row;
}

// Output maps of at most this many rows are computed as one group of rows; with 32 vector
// registers (AVX-512), maps of up to kWholePlaneRowsWide rows.
constexpr int64_t kWholePlaneRows = 7;
constexpr int64_t kWholePlaneRowsWide = 14;

int64_t windowGroupRows(const WindowGeometry& g, unsigned vectorRegisters) {
  // Stride 1: 4 rows share KH + 3 input rows; stride 2: 2 rows share KH + 2.
  // (Measured on MobileNetV2: 6 rows spill registers; 4 rows at stride 2 were slower.)
  // Maps of at most 7 rows are one group: one work item per plane, its weights broadcast once
  // and no separate last group (MobileNetV2's 7x7 depthwise layers 26.5-26.8 -> 22.1-22.6 us
  // by min, features.14's 14 -> 7 stride 2 36.0 -> 20.0 us; 14-row maps as 7 + 7 were slower).
  // With 32 registers a 14-row plane is one group too (14 accumulators, the weights as
  // broadcast operands): MobileNetV2's 14x14 depthwise layers (384 and 576 channels)
  // 25.2 -> 17.5 and 37.5 -> 27.0 us by median thread CPU time on Zen 4, 1 thread.
  const int64_t whole = vectorRegisters >= 32 ? kWholePlaneRowsWide : kWholePlaneRows;
  if (g.OH <= whole) return g.OH;
  return std::min<int64_t>(g.OH, g.sh == 1 ? 4 : 2);
}

int64_t windowGroupCount(const WindowGeometry& g, int64_t planes, unsigned vectorRegisters) {
  int64_t rows = windowGroupRows(g, vectorRegisters);
  return planes * ((g.OH + rows - 1) / rows);
}

void forEachWindowGroup(
    KernelBuilder& kb, const WindowGeometry& g, int64_t planes,
    const std::function<void(llvm::Value* plane, llvm::Value* oh0, int64_t rows)>& rowsBody) {
  llvm::IRBuilder<>& b = kb.b();
  const int64_t R = windowGroupRows(g, kb.target().vectorRegisters);
  const int64_t groups = (g.OH + R - 1) / R;
  const int64_t tail = g.OH - (groups - 1) * R;
  kb.forWorkgroupShare(planes * groups, [&](llvm::Value* item) {
    llvm::Value* plane = b.CreateUDiv(item, kb.index(groups));
    llvm::Value* group = b.CreateURem(item, kb.index(groups));
    llvm::Value* oh0 = b.CreateMul(group, kb.index(R));
    if (tail == R) {
      rowsBody(plane, oh0, R);
      return;
    }
    llvm::Function* fn = b.GetInsertBlock()->getParent();
    auto* last = llvm::BasicBlock::Create(kb.context(), "lastgroup", fn);
    auto* full = llvm::BasicBlock::Create(kb.context(), "fullgroup", fn);
    auto* merge = llvm::BasicBlock::Create(kb.context(), "groupdone", fn);
    b.CreateCondBr(b.CreateICmpEQ(group, kb.index(groups - 1)), last, full);
    b.SetInsertPoint(last);
    rowsBody(plane, oh0, tail);
    b.CreateBr(merge);
    b.SetInsertPoint(full);
    rowsBody(plane, oh0, R);
    b.CreateBr(merge);
    b.SetInsertPoint(merge);
  });
}

void emitWindowRows(KernelBuilder& kb, const WindowGeometry& g,
                    const std::vector<ColumnTile>& tiles, llvm::Value* inPlane, llvm::Value* oh0,
                    int64_t rows, llvm::Value* padRow, const WindowOps& ops) {
  llvm::IRBuilder<>& b = kb.b();
  llvm::Type* floatTy = b.getFloatTy();
  const int64_t inputRows = (rows - 1) * g.sh + g.KH;
  // Start of each input row of the group's window (the pad row outside the image).
  std::vector<llvm::Value*> rowPointer(size_t(inputRows), nullptr);
  llvm::Value* ihStart = b.CreateSub(b.CreateMul(oh0, kb.index(g.sh)), kb.index(g.padTop));
  for (int64_t i = 0; i < inputRows; ++i) {
    llvm::Value* ih = b.CreateAdd(ihStart, kb.index(i));
    llvm::Value* at = b.CreateGEP(floatTy, kb.bindingPointer(0),
                                  b.CreateAdd(inPlane, b.CreateMul(ih, kb.index(g.W))));
    if (padRow) at = b.CreateSelect(b.CreateICmpULT(ih, kb.index(g.H)), at, padRow);
    rowPointer[size_t(i)] = at;
  }

  // One tile at column `start` (a constant for unrolled tiles, whose loads may be masked).
  auto emitTile = [&](llvm::Value* start, const ColumnTile& tile) {
    const unsigned lanes = tile.lanes;
    const unsigned wide = loadLanes(g, lanes);
    auto* wideTy = llvm::FixedVectorType::get(floatTy, wide);
    std::vector<llvm::Value*> acc(static_cast<size_t>(rows), nullptr);
    for (int64_t r = 0; r < rows; ++r) acc[size_t(r)] = ops.init(lanes);
    // Stride 2: the even (odd) lanes of a 2V load in the order one in-lane shuffle per 128-bit
    // block gives them (x86 shufps on 2 x V lanes: block k holds evens 2k, 2k+1, V/2 + 2k,
    // V/2 + 2k + 1). Every tap uses the same order, so the accumulators are put back in column
    // order once, before `finish`, instead of once per load.
    std::vector<int> even, odd, columnOrder(lanes);
    for (unsigned p = 0; p < lanes; ++p) {
      unsigned block = p / 4, j = p % 4;
      unsigned e = j < 2 ? 2 * block + j : lanes / 2 + 2 * block + (j - 2);
      if (lanes < 4) e = p;
      even.push_back(int(2 * e));
      odd.push_back(int(2 * e + 1));
      columnOrder[e] = int(p);
    }
    bool permuted = false;
    for (unsigned e = 0; e < lanes; ++e) permuted |= columnOrder[e] != int(e);
    llvm::Value* inColumn = b.CreateMul(start, kb.index(g.sw));
    for (int64_t i = 0; i < inputRows; ++i) {
      bool used = false;  // by some output row of the group
      for (int64_t r = 0; r < rows; ++r) used |= i - r * g.sh >= 0 && i - r * g.sh < g.KH;
      if (!used) continue;
      for (int64_t load = 0; load < loadCount(g); ++load) {
        const int64_t offset = loadOffset(g, load);
        llvm::Constant* mask = nullptr;
        if (!tile.loop) {  // lanes outside [0, W) read the padding value
          std::vector<llvm::Constant*> on;
          int64_t count = 0;
          for (unsigned j = 0; j < wide; ++j) {
            int64_t iw = tile.start * g.sw + offset + j;
            bool inside = iw >= 0 && iw < g.W;
            count += inside;
            on.push_back(b.getInt1(inside));
          }
          if (count == 0) continue;  // these taps meet padding only
          if (count < int64_t(wide)) mask = llvm::ConstantVector::get(on);
        }
        llvm::Value* at =
            b.CreateGEP(floatTy, rowPointer[size_t(i)], b.CreateAdd(inColumn, kb.index(offset)));
        llvm::Value* x = nullptr;
        if (mask) {
          x = b.CreateMaskedLoad(wideTy, at, llvm::Align(4), mask,
                                 b.CreateVectorSplat(wide, kb.f32(ops.padValue)));
        } else {
          x = b.CreateAlignedLoad(wideTy, at, llvm::Align(4));
        }
        // (input vector, kernel column) pairs this load provides.
        std::vector<std::pair<llvm::Value*, int64_t>> taps;
        if (g.sw == 1) {
          taps.push_back({x, load});
        } else {
          taps.push_back({b.CreateShuffleVector(x, even), 2 * load});
          if (2 * load + 1 < g.KW) taps.push_back({b.CreateShuffleVector(x, odd), 2 * load + 1});
        }
        for (int64_t r = 0; r < rows; ++r) {
          int64_t kh = i - r * g.sh;
          if (kh < 0 || kh >= g.KH) continue;
          for (auto& [value, kw] : taps)
            acc[size_t(r)] = ops.combine(acc[size_t(r)], value, kh, kw);
        }
      }
    }
    llvm::Constant* storeMask = nullptr;
    if (!tile.loop && tile.start + int64_t(lanes) > g.OW) {
      std::vector<llvm::Constant*> on;
      for (unsigned j = 0; j < lanes; ++j) on.push_back(b.getInt1(tile.start + j < g.OW));
      storeMask = llvm::ConstantVector::get(on);
    }
    for (int64_t r = 0; r < rows; ++r) {
      llvm::Value* value = acc[size_t(r)];
      if (g.sw == 2 && permuted) value = b.CreateShuffleVector(value, columnOrder);
      ops.finish(r, tile, start, value, storeMask);
    }
  };

  for (const ColumnTile& tile : tiles) {
    if (!tile.loop) {
      emitTile(kb.index(tile.start), tile);
      continue;
    }
    kb.forRange(0, tile.repeats, [&](llvm::Value* repeat) {
      emitTile(b.CreateAdd(kb.index(tile.start), b.CreateMul(repeat, kb.index(tile.lanes))), tile);
    });
  }
}

namespace {

// Outputs at least this large prefetch their stores' lines (WindowOutput::startGroup).
constexpr int64_t kPrefetchOutputBytes = int64_t(1) << 20;

// Stores the lanes of `value` that `mask` (a constant) has on. Without cheap masked stores
// a mask whose on lanes are a prefix is stored in power-of-two pieces (7 lanes: 4 + 2 + 1),
// since AVX2's masked store (vmaskmovps) costs ~12 cycles on Zen 3 against one per plain
// store; others stay masked. With AVX-512's k-mask stores one masked store is cheaper than
// the pieces (14 lanes: 8 + 4 + 2 and two extracts): MobileNetV2's 14x14 depthwise layer
// alone 23.7 -> 19.5 us by min on Zen 4.
void storeMaskedPrefix(llvm::IRBuilder<>& b, llvm::Value* value, llvm::Value* at,
                       llvm::Constant* mask, bool maskedStores) {
  const unsigned lanes =
      unsigned(llvm::cast<llvm::FixedVectorType>(value->getType())->getNumElements());
  unsigned prefix = 0;
  while (prefix < lanes && mask->getAggregateElement(prefix)->isOneValue()) ++prefix;
  bool isPrefix = true;
  for (unsigned j = prefix; j < lanes; ++j) isPrefix &= mask->getAggregateElement(j)->isNullValue();
  if (maskedStores || !isPrefix) {
    b.CreateMaskedStore(value, at, llvm::Align(4), mask);
    return;
  }
  llvm::Type* floatTy = value->getType()->getScalarType();
  unsigned done = 0;
  for (unsigned piece = lanes; piece >= 1; piece /= 2) {
    if (prefix - done < piece) continue;
    llvm::Value* part = nullptr;
    if (piece == 1) {
      part = b.CreateExtractElement(value, uint64_t(done));
    } else {
      std::vector<int> pick;
      for (unsigned j = 0; j < piece; ++j) pick.push_back(int(done + j));
      part = b.CreateShuffleVector(value, pick);
    }
    b.CreateAlignedStore(part, b.CreateConstGEP1_64(floatTy, at, done), llvm::Align(4));
    done += piece;
  }
}

}  // namespace

void WindowOutput::startGroup(const WindowGeometry& g, llvm::Value* plane, llvm::Value* oh0,
                              int64_t rows,
                              const std::function<void(int64_t r, llvm::Value* oh)>& perRow) {
  llvm::IRBuilder<>& b = kb_.b();
  rowStart_.assign(size_t(rows), nullptr);
  // Outputs larger than a core's L2 (MobileNetV2's features.1: 1.6 MB) mostly land on lines
  // that are not in cache: each store waits for its line to be read first. Prefetching each
  // store's line for writing two row groups ahead overlaps those reads (features.1 depthwise
  // 190-209 -> 121-133 us by min, 1 thread); smaller outputs measured no gain.
  int64_t outputBytes = elemSize(kb_.desc().output.type);
  for (int64_t e : kb_.desc().output.shape) outputBytes *= e;
  aheadElements_ = outputBytes >= kPrefetchOutputBytes ? 2 * rows * g.OW : 0;
  epilogueRows_.assign(size_t(rows), {});
  for (int64_t r = 0; r < rows; ++r) {
    llvm::Value* oh = b.CreateAdd(oh0, kb_.index(r));
    rowStart_[size_t(r)] =
        b.CreateMul(b.CreateAdd(b.CreateMul(plane, kb_.index(g.OH)), oh), kb_.index(g.OW));
    if (epilogue_.vectorizable()) epilogueRows_[size_t(r)] = epilogue_.row(rowStart_[size_t(r)]);
    if (perRow) perRow(r, oh);
  }
}

void WindowOutput::store(int64_t r, llvm::Value* column, llvm::Value* acc,
                         llvm::Constant* storeMask) {
  llvm::IRBuilder<>& b = kb_.b();
  if (epilogue_.vectorizable())
    acc = epilogue_.applyVector(acc, epilogueRows_[size_t(r)], column, storeMask);
  llvm::Value* at =
      kb_.elementAddress(kb_.outputBinding(), b.CreateAdd(rowStart_[size_t(r)], column));
  if (aheadElements_ > 0) {
    llvm::Value* ahead = b.CreateGEP(b.getFloatTy(), at, kb_.index(aheadElements_));
    b.CreateIntrinsic(llvm::Intrinsic::prefetch, {ahead->getType()},
                      {ahead, b.getInt32(1), b.getInt32(3), b.getInt32(1)});
  }
  if (storeMask) {
    storeMaskedPrefix(b, acc, at, storeMask, kb_.target().maskedStores);
  } else {
    b.CreateAlignedStore(acc, at, llvm::Align(4));
  }
}

void WindowOutput::finishGroup(const WindowGeometry& g, int64_t rows) {
  if (epilogue_.vectorizable()) return;
  for (int64_t r = 0; r < rows; ++r) epilogue_.applyToRow(rowStart_[size_t(r)], g.OW);
}

}  // namespace kiln::codegen::detail
