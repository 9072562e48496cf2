// Reductions (sum, mean, max, min, prod, L1, L2, sum of squares, log-sum, log-sum-exp over any
// set of axes; GlobalAveragePool is a mean over H, W)
// softmax / log-softmax and CumSum (running sums) along one axis. Each workgroup item produces one output element
// (reduce) or one softmax lane; its reduced axes are walked by nested loops. On targets with
// vector registers, f32 sum / mean / max / min over trailing axes (GlobalAveragePool, ReduceMean
// over H, W) read each output's contiguous run as vectors (a masked last one) into a vector
// accumulator, folded across its lanes at the end; so do softmax's max and sum over the last
// axis.
#include <algorithm>
#include <functional>

#include "emitters.h"
#include "kernel_builder.h"
#include "math_approx.h"

namespace kiln::codegen::detail {
namespace {

// Calls body(offset) for every point of a loop nest over `extents` with `strides`, starting
// at `base` (offsets in elements).
void forNest(KernelBuilder& kb, llvm::Value* base, const std::vector<int64_t>& extents,
             const std::vector<int64_t>& strides, size_t axis,
             const std::function<void(llvm::Value*)>& body) {
  if (axis == extents.size()) {
    body(base);
    return;
  }
  kb.forRange(0, extents[axis], [&](llvm::Value* i) {
    llvm::IRBuilder<>& b = kb.b();
    llvm::Value* offset = b.CreateAdd(base, b.CreateMul(i, kb.index(strides[axis])));
    forNest(kb, offset, extents, strides, axis + 1, body);
  });
}

// The f32 sum, max or min (`kind`: Sum, Max or Min) of the run [base, base + count) of
// `binding`, read in vectors of `lanes` (a masked last one) into one vector accumulator
// (`slot`, a local of that vector type), its lanes folded pairwise at the end.
llvm::Value* reduceRun(KernelBuilder& kb, unsigned binding, llvm::Value* base, int64_t count,
                       unsigned lanes, ReduceKind kind, llvm::Value* slot) {
  llvm::IRBuilder<>& b = kb.b();
  auto* vecTy = llvm::FixedVectorType::get(b.getFloatTy(), lanes);
  llvm::Value* identity = kb.f32(kind == ReduceKind::Sum   ? 0.0f
                                 : kind == ReduceKind::Max ? -__builtin_inff()
                                                           : __builtin_inff());
  auto combine = [&](llvm::Value* acc, llvm::Value* x) {
    if (kind == ReduceKind::Sum) return b.CreateFAdd(acc, x);
    return kind == ReduceKind::Max ? kb.maxValue(x, acc) : kb.minValue(x, acc);
  };
  const int64_t full = count / lanes, rest = count % lanes;
  b.CreateStore(b.CreateVectorSplat(lanes, identity), slot);
  kb.forRange(0, full, [&](llvm::Value* i) {
    llvm::Value* x =
        kb.loadVector(binding, b.CreateAdd(base, b.CreateMul(i, kb.index(lanes))), lanes);
    b.CreateStore(combine(b.CreateLoad(vecTy, slot), x), slot);
  });
  llvm::Value* acc = b.CreateLoad(vecTy, slot);
  if (rest > 0) {
    std::vector<llvm::Constant*> on;
    for (unsigned j = 0; j < lanes; ++j) on.push_back(b.getInt1(j < rest));
    llvm::Value* at = kb.elementAddress(binding, b.CreateAdd(base, kb.index(full * lanes)));
    acc = combine(acc, b.CreateMaskedLoad(vecTy, at, llvm::Align(4), llvm::ConstantVector::get(on),
                                          b.CreateVectorSplat(lanes, identity)));
  }
  for (unsigned width = lanes / 2; width >= 1; width /= 2) {  // fold halves
    std::vector<int> low, high;
    for (unsigned j = 0; j < width; ++j) {
      low.push_back(int(j));
      high.push_back(int(j + width));
    }
    acc = combine(b.CreateShuffleVector(acc, low), b.CreateShuffleVector(acc, high));
  }
  return b.CreateExtractElement(acc, uint64_t(0));
}

// The target's vector lanes, halved (down to 4) while a run of `count` floats is shorter.
unsigned runLanes(const KernelBuilder& kb, int64_t count) {
  unsigned lanes = kb.target().vectorLanes;
  while (lanes > 4 && count < int64_t(lanes)) lanes /= 2;
  return lanes;
}

// f32 Sum / Mean / Max / Min over the trailing axes (each output reads a contiguous run of at
// least one vector), if it applies: reduceRun per output.
bool emitReduceVector(KernelBuilder& kb, uint32_t& workgroups) {
  const KernelDesc& d = kb.desc();
  const ReduceKind kind = d.reduceKind;
  if (kb.target().vectorLanes < 4 || d.output.type != ElemType::F32 || d.axes.empty()) return false;
  if (kind != ReduceKind::Sum && kind != ReduceKind::Mean && kind != ReduceKind::Max &&
      kind != ReduceKind::Min)
    return false;
  const std::vector<int64_t>& xs = d.inputs[0].shape;
  for (size_t i = 0; i < d.axes.size(); ++i)  // the last axes.size() axes, in order
    if (d.axes[i] != int64_t(xs.size() - d.axes.size() + i)) return false;
  int64_t inner = 1, outputs = 1;
  for (size_t i = 0; i < xs.size(); ++i) (i + d.axes.size() < xs.size() ? outputs : inner) *= xs[i];
  const unsigned lanes = runLanes(kb, inner);
  if (inner < int64_t(lanes)) return false;
  llvm::IRBuilder<>& b = kb.b();
  llvm::Value* slot = kb.local(llvm::FixedVectorType::get(b.getFloatTy(), lanes), "acc");
  kb.forWorkgroupShare(outputs, [&](llvm::Value* o) {
    llvm::Value* base = b.CreateMul(o, kb.index(inner));
    llvm::Value* result = reduceRun(kb, 0, base, inner, lanes,
                                    kind == ReduceKind::Mean ? ReduceKind::Sum : kind, slot);
    if (kind == ReduceKind::Mean) result = b.CreateFDiv(result, kb.f32(float(inner)));
    kb.store(kb.outputBinding(), ElemType::F32, o, result);
  });
  workgroups = workgroupsFor(outputs, inner);
  return true;
}

// f32 softmax / log-softmax along the last axis (rows of A contiguous floats) on targets with
// vector registers: the row's max by reduceRun; exp(x - max) into the output row (a loop
// without a reduction, which the vectoriser widens); their sum by reduceRun; then the row
// scaled by 1 / sum, or x - (max + log sum). The scalar form carries the max and the sum from
// one element to the next, a few cycles each (GPT block's log-softmax over 16 x 512: 40 us).
bool emitSoftmaxRows(KernelBuilder& kb, uint32_t& workgroups) {
  const KernelDesc& d = kb.desc();
  const std::vector<int64_t>& xs = d.inputs[0].shape;
  if (kb.target().vectorLanes < 4 || d.output.type != ElemType::F32 ||
      d.inputs[0].type != ElemType::F32 || d.axis != int64_t(xs.size()) - 1 || d.bindingsMayAlias)
    return false;
  const int64_t A = xs.back();
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < xs.size(); ++i) rows *= xs[i];
  const unsigned lanes = runLanes(kb, A);
  if (A < int64_t(lanes)) return false;
  llvm::IRBuilder<>& b = kb.b();
  const ElemType f32 = ElemType::F32;
  const unsigned out = kb.outputBinding();
  llvm::Value* slot = kb.local(llvm::FixedVectorType::get(b.getFloatTy(), lanes), "acc");
  kb.forWorkgroupShare(rows, [&](llvm::Value* row) {
    llvm::Value* base = b.CreateMul(row, kb.index(A));
    llvm::Value* max = reduceRun(kb, 0, base, A, lanes, ReduceKind::Max, slot);
    kb.forRange(0, A, [&](llvm::Value* a) {
      llvm::Value* at = b.CreateAdd(base, a);
      kb.store(out, f32, at, emitExp(kb, b.CreateFSub(kb.load(0, f32, at), max)));
    });
    llvm::Value* sum = reduceRun(kb, out, base, A, lanes, ReduceKind::Sum, slot);
    if (d.logSoftmax) {
      // (x - max) - log sum: x - max is exact near the max, where max + log sum would round
      // to the large values' spacing.
      llvm::Value* logSum = emitLog(kb, sum);
      kb.forRange(0, A, [&](llvm::Value* a) {
        llvm::Value* at = b.CreateAdd(base, a);
        kb.store(out, f32, at, b.CreateFSub(b.CreateFSub(kb.load(0, f32, at), max), logSum));
      });
    } else {
      llvm::Value* scale = b.CreateFDiv(kb.f32(1.0f), sum);
      kb.forRange(0, A, [&](llvm::Value* a) {
        llvm::Value* at = b.CreateAdd(base, a);
        kb.store(out, f32, at, b.CreateFMul(kb.load(out, f32, at), scale));
      });
    }
  });
  workgroups = workgroupsFor(rows, A * 8);
  return true;
}

}  // namespace

uint32_t emitReduce(KernelBuilder& kb) {
  uint32_t vectorWorkgroups = 0;
  if (emitReduceVector(kb, vectorWorkgroups)) return vectorWorkgroups;
  const KernelDesc& d = kb.desc();
  llvm::IRBuilder<>& b = kb.b();
  const ElemType type = d.output.type;
  const std::vector<int64_t>& xs = d.inputs[0].shape;
  std::vector<int64_t> xStrides = rowMajorStrides(xs);
  std::vector<int64_t> keptExtents, keptStrides, redExtents, redStrides;
  int64_t reducedCount = 1;
  for (size_t i = 0; i < xs.size(); ++i) {
    bool reduced = std::find(d.axes.begin(), d.axes.end(), static_cast<int64_t>(i)) != d.axes.end();
    (reduced ? redExtents : keptExtents).push_back(xs[i]);
    (reduced ? redStrides : keptStrides).push_back(xStrides[i]);
    if (reduced) reducedCount *= xs[i];
  }
  int64_t outputs = 1;
  for (int64_t e : keptExtents) outputs *= e;
  bool fp = isFloat(type);
  // Identity of the combination: -inf / +inf or the integer type's extremes for max / min.
  llvm::Value* init = kb.constant(type, 0);
  if (d.reduceKind == ReduceKind::Max || d.reduceKind == ReduceKind::Min) {
    bool isMax = d.reduceKind == ReduceKind::Max;
    if (fp) {
      init = kb.constant(type, isMax ? -__builtin_inf() : __builtin_inf());  // f32 or f64
    } else {
      unsigned bits = kb.elemType(type)->getIntegerBitWidth();
      bool uns = type == ElemType::U8 || type == ElemType::Bool;
      llvm::APInt value =
          uns ? (isMax ? llvm::APInt::getMinValue(bits) : llvm::APInt::getMaxValue(bits))
              : (isMax ? llvm::APInt::getSignedMinValue(bits)
                       : llvm::APInt::getSignedMaxValue(bits));
      init = llvm::ConstantInt::get(kb.context(), value);
    }
  }
  if (d.reduceKind == ReduceKind::Prod) init = kb.constant(type, 1);
  llvm::Value* acc = kb.local(kb.elemType(type), "acc");
  llvm::Value* shiftSlot = kb.local(kb.elemType(type), "shift");

  kb.forWorkgroupShare(outputs, [&](llvm::Value* o) {
    std::vector<llvm::Value*> coords =
        keptExtents.empty() ? std::vector<llvm::Value*>{} : kb.decompose(o, keptExtents);
    llvm::Value* base = kb.linearize(coords, keptStrides);
    // LogSumExp: exp(x - max) keeps the sum finite; the max is found first.
    llvm::Value* shift = nullptr;
    if (d.reduceKind == ReduceKind::LogSumExp) {
      b.CreateStore(kb.f32(-__builtin_inff()), shiftSlot);
      forNest(kb, base, redExtents, redStrides, 0, [&](llvm::Value* offset) {
        llvm::Value* m = b.CreateLoad(kb.elemType(type), shiftSlot);
        b.CreateStore(kb.maxValue(kb.load(0, type, offset), m), shiftSlot);
      });
      shift = b.CreateLoad(kb.elemType(type), shiftSlot);
      // All -inf (or an empty reduction): no shift, the sum of exp is 0 and the result -inf.
      shift = b.CreateSelect(b.CreateFCmpOEQ(shift, kb.f32(-__builtin_inff())), kb.f32(0.0f),
                             shift);
    }
    b.CreateStore(init, acc);
    forNest(kb, base, redExtents, redStrides, 0, [&](llvm::Value* offset) {
      llvm::Value* x = kb.load(0, type, offset);
      llvm::Value* a = b.CreateLoad(kb.elemType(type), acc);
      auto add = [&](llvm::Value* v) { return fp ? b.CreateFAdd(a, v) : b.CreateAdd(a, v); };
      auto square = [&](llvm::Value* v) { return fp ? b.CreateFMul(v, v) : b.CreateMul(v, v); };
      llvm::Value* next;
      switch (d.reduceKind) {
        case ReduceKind::Max:
          next = kb.maxValue(x, a);
          break;
        case ReduceKind::Min:
          next = kb.minValue(x, a);
          break;
        case ReduceKind::Prod:
          next = fp ? b.CreateFMul(a, x) : b.CreateMul(a, x);
          break;
        case ReduceKind::L1:
          next = add(fp ? b.CreateSelect(b.CreateFCmpOLT(x, kb.constant(type, 0)),
                                         b.CreateFNeg(x), x)
                        : b.CreateSelect(b.CreateICmpSLT(x, kb.constant(type, 0)),
                                         b.CreateNeg(x), x));
          break;
        case ReduceKind::L2:
        case ReduceKind::SumSquare:
          next = add(square(x));
          break;
        case ReduceKind::LogSumExp:
          next = add(emitExp(kb, b.CreateFSub(x, shift)));
          break;
        default:  // Sum, Mean, LogSum
          next = add(x);
          break;
      }
      b.CreateStore(next, acc);
    });
    llvm::Value* result = b.CreateLoad(kb.elemType(type), acc);
    switch (d.reduceKind) {
      case ReduceKind::Mean:
        result = fp ? b.CreateFDiv(result, kb.constant(type, static_cast<double>(reducedCount)))
                    : b.CreateSDiv(result, kb.constant(type, static_cast<double>(reducedCount)));
        break;
      case ReduceKind::L2:
        result = emitSqrt(kb, result);
        break;
      case ReduceKind::LogSum:
        result = emitLog(kb, result);
        break;
      case ReduceKind::LogSumExp:
        result = b.CreateFAdd(shift, emitLog(kb, result));
        break;
      default:
        break;
    }
    kb.store(kb.outputBinding(), type, o, result);
  });
  return workgroupsFor(outputs, reducedCount);
}

uint32_t emitSoftmax(KernelBuilder& kb) {
  uint32_t rowWorkgroups = 0;
  if (emitSoftmaxRows(kb, rowWorkgroups)) return rowWorkgroups;
  const KernelDesc& d = kb.desc();
  llvm::IRBuilder<>& b = kb.b();
  const ElemType f32 = ElemType::F32;
  const std::vector<int64_t>& xs = d.inputs[0].shape;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < d.axis; ++i) outer *= xs[i];
  for (size_t i = d.axis + 1; i < xs.size(); ++i) inner *= xs[i];
  const int64_t A = xs[d.axis];
  const unsigned out = kb.outputBinding();
  llvm::Value* maxSlot = kb.local(b.getFloatTy(), "max");
  llvm::Value* sumSlot = kb.local(b.getFloatTy(), "sum");

  kb.forWorkgroupShare(outer * inner, [&](llvm::Value* lane) {
    llvm::Value* o = b.CreateUDiv(lane, kb.index(inner));
    llvm::Value* i = b.CreateURem(lane, kb.index(inner));
    llvm::Value* base = b.CreateAdd(b.CreateMul(o, kb.index(A * inner)), i);
    auto at = [&](llvm::Value* a) { return b.CreateAdd(base, b.CreateMul(a, kb.index(inner))); };
    b.CreateStore(kb.f32(-__builtin_inff()), maxSlot);
    kb.forRange(0, A, [&](llvm::Value* a) {
      llvm::Value* x = kb.load(0, f32, at(a));
      b.CreateStore(kb.maxValue(x, b.CreateLoad(b.getFloatTy(), maxSlot)), maxSlot);
    });
    llvm::Value* max = b.CreateLoad(b.getFloatTy(), maxSlot);
    b.CreateStore(kb.f32(0.0f), sumSlot);
    kb.forRange(0, A, [&](llvm::Value* a) {
      llvm::Value* e = emitExp(kb, b.CreateFSub(kb.load(0, f32, at(a)), max));
      if (!d.logSoftmax) kb.store(out, f32, at(a), e);
      b.CreateStore(b.CreateFAdd(b.CreateLoad(b.getFloatTy(), sumSlot), e), sumSlot);
    });
    llvm::Value* sum = b.CreateLoad(b.getFloatTy(), sumSlot);
    if (d.logSoftmax) {
      llvm::Value* logSum = emitLog(kb, sum);  // (x - max) - log sum, as emitSoftmaxRows
      kb.forRange(0, A, [&](llvm::Value* a) {
        kb.store(out, f32, at(a),
                 b.CreateFSub(b.CreateFSub(kb.load(0, f32, at(a)), max), logSum));
      });
    } else {
      llvm::Value* scale = b.CreateFDiv(kb.f32(1.0f), sum);
      kb.forRange(0, A, [&](llvm::Value* a) {
        kb.store(out, f32, at(a), b.CreateFMul(kb.load(out, f32, at(a)), scale));
      });
    }
  });
  return workgroupsFor(outer * inner, A * 4);
}

uint32_t emitCumSum(KernelBuilder& kb) {
  const KernelDesc& d = kb.desc();
  llvm::IRBuilder<>& b = kb.b();
  const ElemType type = d.output.type;
  const bool fp = isFloat(type);
  const std::vector<int64_t>& xs = d.inputs[0].shape;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < d.axis; ++i) outer *= xs[i];
  for (size_t i = d.axis + 1; i < xs.size(); ++i) inner *= xs[i];
  const int64_t A = xs[d.axis];
  llvm::Value* sumSlot = kb.local(kb.elemType(type), "sum");
  kb.forWorkgroupShare(outer * inner, [&](llvm::Value* lane) {
    llvm::Value* o = b.CreateUDiv(lane, kb.index(inner));
    llvm::Value* i = b.CreateURem(lane, kb.index(inner));
    llvm::Value* base = b.CreateAdd(b.CreateMul(o, kb.index(A * inner)), i);
    b.CreateStore(kb.constant(type, 0), sumSlot);
    kb.forRange(0, A, [&](llvm::Value* step) {
      llvm::Value* a = d.reverse ? b.CreateSub(kb.index(A - 1), step) : step;
      llvm::Value* at = b.CreateAdd(base, b.CreateMul(a, kb.index(inner)));
      llvm::Value* x = kb.load(0, type, at);
      llvm::Value* before = b.CreateLoad(kb.elemType(type), sumSlot);
      llvm::Value* after = fp ? b.CreateFAdd(before, x) : b.CreateAdd(before, x);
      b.CreateStore(after, sumSlot);
      kb.store(kb.outputBinding(), type, at, d.exclusive ? before : after);
    });
  });
  return workgroupsFor(outer * inner, A);
}

}  // namespace kiln::codegen::detail
