// Quantized elementwise kernels with TFLite reference semantics — Add/Sub (left-shifted
// inputs rescaled to a common scale), Mul, LeakyRelu, 256-entry lookups, Quantize,
// Dequantize, Requantize — and emitQuantized, which dispatches every QuantOp to its emitter.
// Binary ops broadcast numpy-style: a work item is one row of the output's last axis.
#include "emit_quantized.h"
#include "emitters.h"

namespace kiln::codegen::detail {
namespace {

// The work of one element for the workgroup policy, in the multiply-accumulates it counts:
// an Add's three rescales took 5.5 us for 16 K int8 elements on one thread (LLVM vectorises
// the loop), what the policy expects of about 16 multiply-accumulates per element.
constexpr int64_t kAddWork = 16;
constexpr int64_t kRescaleWork = 8;  // one rescale (Mul, LeakyRelu, Requantize)

// Each input's element strides over the output's axes (0 where it broadcasts).
std::vector<std::vector<int64_t>> inputStrides(const KernelDesc& d) {
  std::vector<int64_t> ys = d.output.shape.empty() ? std::vector<int64_t>{1} : d.output.shape;
  std::vector<std::vector<int64_t>> strides;
  for (const BufferDesc& in : d.inputs)
    strides.push_back(in.shape.empty() ? std::vector<int64_t>(ys.size(), 0)
                                       : broadcastStrides(in.shape, ys));
  return strides;
}

// Calls body(outIndex, inputIndices, count) for every run of `lanes` output elements along
// the last axis (the row's last run `count` < lanes long), rows split over workgroups (each
// element `work` for the workgroup policy).
using StepBody =
    std::function<void(llvm::Value*, const std::vector<llvm::Value*>&, int64_t count)>;
uint32_t forEachStep(KernelBuilder& kb, int64_t lanes, const StepBody& body, int64_t work) {
  const KernelDesc& d = kb.desc();
  llvm::IRBuilder<>& ir = kb.b();
  std::vector<int64_t> ys = d.output.shape;
  if (ys.empty()) ys = {1};
  const int64_t inner = ys.back();
  const int64_t rows = d.output.elementCount() / std::max<int64_t>(inner, 1);
  const std::vector<std::vector<int64_t>> strides = inputStrides(d);
  std::vector<int64_t> outer(ys.begin(), ys.end() - 1);
  kb.forWorkgroupShare(rows, [&](llvm::Value* row) {
    std::vector<llvm::Value*> coords = outer.empty() ? std::vector<llvm::Value*>{} : kb.decompose(row, outer);
    std::vector<llvm::Value*> bases;
    for (const std::vector<int64_t>& s : strides) {
      bases.push_back(coords.empty() ? kb.index(0)
                                     : kb.linearize(coords, std::vector<int64_t>(s.begin(), s.end() - 1)));
    }
    llvm::Value* outBase = ir.CreateMul(row, kb.index(inner));
    auto stepAt = [&](llvm::Value* j, int64_t count) {
      std::vector<llvm::Value*> at;
      for (size_t i = 0; i < bases.size(); ++i)
        at.push_back(ir.CreateAdd(bases[i], ir.CreateMul(j, kb.index(strides[i].back()))));
      body(ir.CreateAdd(outBase, j), at, count);
    };
    kb.forRange(0, inner / lanes,
                [&](llvm::Value* c) { stepAt(ir.CreateMul(c, kb.index(lanes)), lanes); });
    if (inner % lanes != 0) stepAt(kb.index(inner - inner % lanes), inner % lanes);
  });
  return workgroupsFor(d.output.elementCount(), work);
}

// Calls body(outIndex, inputIndices) for every output element.
uint32_t forEachElement(KernelBuilder& kb,
                        const std::function<void(llvm::Value*, const std::vector<llvm::Value*>&)>& body,
                        int64_t work = 1) {
  return forEachStep(
      kb, 1,
      [&](llvm::Value* out, const std::vector<llvm::Value*>& at, int64_t) { body(out, at); },
      work);
}

// Helium (Cortex-M55): int8 Add and Sub four elements at a time, where every input steps by 1
// or 0 (broadcast) along the output's last axis: the scalar loop's arithmetic on <4 x i32>
// (VLDRB.S32 loads, the three rescales on VQRDMULH and VRSHL through qMultiplyLanes), the
// last elements of a row one predicated step. The scalar loop took ~30 instructions an
// element there (LLVM does not vectorise its rescale for MVE). int16 keeps the scalar loop:
// no int16 Add runs on the Cortex-M55 board to check a vector one.
bool heliumAddApplies(KernelBuilder& kb) {
  const KernelDesc& d = kb.desc();
  if (!kb.target().helium || (d.quant.op != QuantOp::Add && d.quant.op != QuantOp::Sub))
    return false;
  if (d.inputs[0].type != ElemType::I8 || d.inputs[1].type != ElemType::I8 ||
      d.output.type != ElemType::I8)
    return false;
  for (const std::vector<int64_t>& strides : inputStrides(d))
    if (strides.back() != 0 && strides.back() != 1) return false;
  return true;
}

uint32_t emitHeliumAdd(KernelBuilder& kb) {
  const KernelDesc& d = kb.desc();
  const QuantDesc& q = d.quant;
  llvm::IRBuilder<>& ir = kb.b();
  constexpr int64_t kLanes = 4;
  auto* v32 = llvm::FixedVectorType::get(ir.getInt32Ty(), kLanes);
  auto splat = [&](int32_t value) {
    return llvm::ConstantInt::get(v32, uint64_t(uint32_t(value)));
  };
  const std::vector<std::vector<int64_t>> strides = inputStrides(d);
  // The first `count` lanes active (a row's last step), or all.
  auto activeLanes = [&](int64_t count) {
    llvm::SmallVector<llvm::Constant*, 4> lanes;
    for (int64_t i = 0; i < kLanes; ++i) lanes.push_back(ir.getInt1(i < count));
    return llvm::ConstantVector::get(lanes);
  };
  // Input i's elements from `index` as <4 x i32> (one element splat where it broadcasts).
  auto loadLanes = [&](unsigned i, llvm::Value* index, int64_t count) -> llvm::Value* {
    const ElemType t = d.inputs[i].type;
    if (strides[i].back() == 0)
      return ir.CreateVectorSplat(kLanes, qToI32(kb, kb.load(i, t, index)));
    auto* narrow = llvm::FixedVectorType::get(kb.elemType(t), kLanes);
    llvm::Value* at = ir.CreateInBoundsGEP(narrow->getElementType(), kb.bindingPointer(i), index);
    llvm::Value* v =
        count == kLanes
            ? static_cast<llvm::Value*>(ir.CreateAlignedLoad(narrow, at, llvm::Align(1)))
            : ir.CreateMaskedLoad(narrow, at, llvm::Align(1), activeLanes(count),
                                  llvm::Constant::getNullValue(narrow));
    return ir.CreateSExt(v, v32);
  };
  const QRescaleRange range;  // (any multiplier and shift)
  return forEachStep(
      kb, kLanes,
      [&](llvm::Value* out, const std::vector<llvm::Value*>& at, int64_t count) {
        llvm::Value* a = ir.CreateSub(loadLanes(0, at[0], count), splat(q.inputZeroPoint));
        llvm::Value* b = ir.CreateSub(loadLanes(1, at[1], count), splat(q.input2ZeroPoint));
        a = ir.CreateShl(a, splat(q.leftShift));
        b = ir.CreateShl(b, splat(q.leftShift));
        a = qMultiplyLanes(kb, a, splat(q.input1Multiplier), splat(q.input1Shift), range);
        b = qMultiplyLanes(kb, b, splat(q.input2Multiplier), splat(q.input2Shift), range);
        llvm::Value* raw = q.op == QuantOp::Add ? ir.CreateAdd(a, b) : ir.CreateSub(a, b);
        llvm::Value* y = ir.CreateAdd(
            qMultiplyLanes(kb, raw, splat(q.multipliers[0]), splat(q.shifts[0]), range),
            splat(q.outputZeroPoint));
        y = qClampLanes(kb, y, q.actMin, q.actMax);
        auto* narrow = llvm::FixedVectorType::get(kb.elemType(d.output.type), kLanes);
        llvm::Value* to = ir.CreateInBoundsGEP(narrow->getElementType(),
                                               kb.bindingPointer(kb.outputBinding()), out);
        llvm::Value* value = ir.CreateTrunc(y, narrow);
        if (count == kLanes)
          ir.CreateAlignedStore(value, to, llvm::Align(1));
        else
          ir.CreateMaskedStore(value, to, llvm::Align(1), activeLanes(count));
      },
      kAddWork);
}

void storeInt(KernelBuilder& kb, llvm::Value* at, llvm::Value* v32) {
  const KernelDesc& d = kb.desc();
  kb.store(kb.outputBinding(), d.output.type, at, kb.b().CreateSExtOrTrunc(v32, kb.elemType(d.output.type)));
}

}  // namespace

uint32_t emitQuantizedElementwise(KernelBuilder& kb) {
  const KernelDesc& d = kb.desc();
  const QuantDesc& q = d.quant;
  llvm::IRBuilder<>& ir = kb.b();
  const ElemType xt = d.inputs[0].type;
  switch (q.op) {
    case QuantOp::Add:
    case QuantOp::Sub:
      if (heliumAddApplies(kb)) return emitHeliumAdd(kb);
      return forEachElement(kb, [&](llvm::Value* out, const std::vector<llvm::Value*>& at) {
        llvm::Value* a = ir.CreateSub(qToI32(kb, kb.load(0, xt, at[0])), qConst(kb, q.inputZeroPoint));
        llvm::Value* b = ir.CreateSub(qToI32(kb, kb.load(1, xt, at[1])), qConst(kb, q.input2ZeroPoint));
        a = ir.CreateShl(a, uint64_t(q.leftShift));
        b = ir.CreateShl(b, uint64_t(q.leftShift));
        a = qMultiply(kb, a, qConst(kb, q.input1Multiplier), qConst(kb, q.input1Shift));
        b = qMultiply(kb, b, qConst(kb, q.input2Multiplier), qConst(kb, q.input2Shift));
        llvm::Value* raw = q.op == QuantOp::Add ? ir.CreateAdd(a, b) : ir.CreateSub(a, b);
        llvm::Value* y = ir.CreateAdd(qMultiply(kb, raw, qConst(kb, q.multipliers[0]), qConst(kb, q.shifts[0])),
                                      qConst(kb, q.outputZeroPoint));
        storeInt(kb, out, qClamp(kb, y, q.actMin, q.actMax));
      }, kAddWork);
    case QuantOp::Mul:
      return forEachElement(kb, [&](llvm::Value* out, const std::vector<llvm::Value*>& at) {
        llvm::Value* a = ir.CreateSub(qToI32(kb, kb.load(0, xt, at[0])), qConst(kb, q.inputZeroPoint));
        llvm::Value* b = ir.CreateSub(qToI32(kb, kb.load(1, xt, at[1])), qConst(kb, q.input2ZeroPoint));
        llvm::Value* y = ir.CreateAdd(
            qMultiply(kb, ir.CreateMul(a, b), qConst(kb, q.multipliers[0]), qConst(kb, q.shifts[0])),
            qConst(kb, q.outputZeroPoint));
        storeInt(kb, out, qClamp(kb, y, q.actMin, q.actMax));
      }, kRescaleWork);
    case QuantOp::LeakyRelu:
      return forEachElement(kb, [&](llvm::Value* out, const std::vector<llvm::Value*>& at) {
        llvm::Value* v = ir.CreateSub(qToI32(kb, kb.load(0, xt, at[0])), qConst(kb, q.inputZeroPoint));
        llvm::Value* positive = ir.CreateICmpSGE(v, qConst(kb, 0));
        llvm::Value* m = ir.CreateSelect(positive, qConst(kb, q.multipliers[0]), qConst(kb, q.multipliers[1]));
        llvm::Value* s = ir.CreateSelect(positive, qConst(kb, q.shifts[0]), qConst(kb, q.shifts[1]));
        llvm::Value* y = ir.CreateAdd(qMultiply(kb, v, m, s), qConst(kb, q.outputZeroPoint));
        storeInt(kb, out, qClamp(kb, y, q.actMin, q.actMax));
      }, kRescaleWork);
    case QuantOp::Lookup: {
      llvm::Value* table = qTable(kb, q.table, "qlut");
      return forEachElement(kb, [&](llvm::Value* out, const std::vector<llvm::Value*>& at) {
        llvm::Value* x = ir.CreateAdd(qToI32(kb, kb.load(0, xt, at[0])), qConst(kb, 128));
        storeInt(kb, out, qTableLoad(kb, table, ir.CreateZExtOrTrunc(x, kb.indexType())));
      });
    }
    case QuantOp::Quantize:
      return forEachElement(kb, [&](llvm::Value* out, const std::vector<llvm::Value*>& at) {
        llvm::Value* x = kb.load(0, ElemType::F32, at[0]);
        llvm::Value* r = qRoundToInt(kb, ir.CreateFDiv(x, kb.f32(q.scale)));
        storeInt(kb, out, qClamp(kb, ir.CreateAdd(r, qConst(kb, q.outputZeroPoint)), q.actMin, q.actMax));
      });
    case QuantOp::Dequantize:
      return forEachElement(kb, [&](llvm::Value* out, const std::vector<llvm::Value*>& at) {
        llvm::Value* v = ir.CreateSub(qToI32(kb, kb.load(0, xt, at[0])), qConst(kb, q.inputZeroPoint));
        llvm::Value* y = ir.CreateFMul(ir.CreateSIToFP(v, ir.getFloatTy()), kb.f32(q.scale));
        kb.store(kb.outputBinding(), ElemType::F32, out, y);
      });
    case QuantOp::Requantize:
      return forEachElement(kb, [&](llvm::Value* out, const std::vector<llvm::Value*>& at) {
        llvm::Value* v = ir.CreateSub(qToI32(kb, kb.load(0, xt, at[0])), qConst(kb, q.inputZeroPoint));
        llvm::Value* y = ir.CreateAdd(qMultiply(kb, v, qConst(kb, q.multipliers[0]), qConst(kb, q.shifts[0])),
                                      qConst(kb, q.outputZeroPoint));
        storeInt(kb, out, qClamp(kb, y, q.actMin, q.actMax));
      }, kRescaleWork);
    default:
      break;
  }
  return 1;
}

uint32_t emitQuantized(KernelBuilder& kb) {
  switch (kb.desc().quant.op) {
    case QuantOp::Conv:
    case QuantOp::DepthwiseConv:
    case QuantOp::TransposeConv:
      return emitQuantizedConv(kb);
    case QuantOp::FullyConnected:
      return emitQuantizedFullyConnected(kb);
    case QuantOp::AveragePool:
    case QuantOp::MaxPool:
      return emitQuantizedPool(kb);
    case QuantOp::Softmax:
      return emitQuantizedSoftmax(kb);
    case QuantOp::Mean:
      return emitQuantizedMean(kb);
    default:
      return emitQuantizedElementwise(kb);
  }
}

}  // namespace kiln::codegen::detail
