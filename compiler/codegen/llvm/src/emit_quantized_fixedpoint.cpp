// The fixed-point primitives of TFLite's integer kernels as LLVM IR: SaturatingRounding-
// DoublingHighMul, RoundingDivideByPOT, MultiplyByQuantizedMultiplier (32- and 64-bit, and
// on i32 vectors), gemmlowp's reciprocal, clamps, round-half-away and constant tables.
// Divisions by 2^31 are shifts, so 32-bit targets need no i64 division.
#include <llvm/IR/IntrinsicsARM.h>

#include <algorithm>
#include <limits>

#include "emit_quantized.h"

namespace kiln::codegen::detail {

llvm::Value* qConst(KernelBuilder& kb, int32_t value) { return kb.b().getInt32(uint32_t(value)); }

llvm::Value* qToI32(KernelBuilder& kb, llvm::Value* v) {
  return kb.b().CreateSExtOrTrunc(v, kb.b().getInt32Ty());
}

llvm::Value* qSrdhm(KernelBuilder& kb, llvm::Value* a, llvm::Value* b) {
  llvm::IRBuilder<>& ir = kb.b();
  llvm::Type* i64 = ir.getInt64Ty();
  const int32_t minI32 = std::numeric_limits<int32_t>::min();
  llvm::Value* overflow = ir.CreateAnd(ir.CreateICmpEQ(a, qConst(kb, minI32)),
                                       ir.CreateICmpEQ(b, qConst(kb, minI32)));
  // (ab + nudge) / 2^31 truncated toward zero, nudge = 2^30 or 1 - 2^30 by ab's sign, is
  // floor((ab + 2^30) / 2^31) for every ab (for ab = -k < 0 both are
  // -floor((k + 2^30 - 1) / 2^31)): an add and an arithmetic shift.
  llvm::Value* ab = ir.CreateMul(ir.CreateSExt(a, i64), ir.CreateSExt(b, i64));
  llvm::Value* high = ir.CreateTrunc(ir.CreateAShr(ir.CreateAdd(ab, ir.getInt64(1 << 30)), 31),
                                     ir.getInt32Ty());
  return ir.CreateSelect(overflow, qConst(kb, std::numeric_limits<int32_t>::max()), high);
}

llvm::Value* qRoundingDivideByPOT(KernelBuilder& kb, llvm::Value* x, llvm::Value* exponent) {
  llvm::IRBuilder<>& ir = kb.b();
  // mask = 2^e - 1 computed in i64 so e = 31 is fine, then truncated.
  llvm::Value* e64 = ir.CreateZExt(exponent, ir.getInt64Ty());
  llvm::Value* mask = ir.CreateTrunc(ir.CreateSub(ir.CreateShl(ir.getInt64(1), e64), ir.getInt64(1)),
                                     ir.getInt32Ty());
  llvm::Value* remainder = ir.CreateAnd(x, mask);
  llvm::Value* threshold = ir.CreateAdd(
      ir.CreateAShr(mask, 1), ir.CreateZExt(ir.CreateICmpSLT(x, qConst(kb, 0)), ir.getInt32Ty()));
  llvm::Value* roundUp = ir.CreateZExt(ir.CreateICmpSGT(remainder, threshold), ir.getInt32Ty());
  return ir.CreateAdd(ir.CreateAShr(x, exponent), roundUp);
}

llvm::Value* qMultiply(KernelBuilder& kb, llvm::Value* x, llvm::Value* m, llvm::Value* shift) {
  llvm::IRBuilder<>& ir = kb.b();
  llvm::Value* positive = ir.CreateICmpSGT(shift, qConst(kb, 0));
  llvm::Value* left = ir.CreateSelect(positive, shift, qConst(kb, 0));
  llvm::Value* right = ir.CreateSelect(positive, qConst(kb, 0), ir.CreateNeg(shift));
  llvm::Value* shifted = ir.CreateShl(x, left);  // x * 2^left, wrapping like TFLite's int32
  return qRoundingDivideByPOT(kb, qSrdhm(kb, shifted, m), right);
}

llvm::Value* qMultiply64(KernelBuilder& kb, llvm::Value* x, llvm::Value* m, llvm::Value* shift) {
  llvm::IRBuilder<>& ir = kb.b();
  llvm::Value* reduced = ir.CreateSelect(
      ir.CreateICmpSLT(m, qConst(kb, 0x7FFF0000)),
      ir.CreateAShr(ir.CreateAdd(m, qConst(kb, 1 << 15)), 16), qConst(kb, 0x7FFF));
  llvm::Value* total = ir.CreateSExt(ir.CreateSub(qConst(kb, 15), shift), ir.getInt64Ty());
  llvm::Value* round = ir.CreateShl(ir.getInt64(1), ir.CreateSub(total, ir.getInt64(1)));
  llvm::Value* product = ir.CreateMul(x, ir.CreateSExt(reduced, ir.getInt64Ty()));
  return ir.CreateTrunc(ir.CreateAShr(ir.CreateAdd(product, round), total), ir.getInt32Ty());
}

QRescaleRange qRescaleRange(const QuantDesc& q) {
  QRescaleRange range;
  range.minMultiplier = std::find(q.multipliers.begin(), q.multipliers.end(),
                                  std::numeric_limits<int32_t>::min()) != q.multipliers.end();
  range.leftShifts = std::any_of(q.shifts.begin(), q.shifts.end(), [](int32_t s) { return s > 0; });
  return range;
}

namespace {

// qMultiplyLanes on Helium's <4 x i32>. SaturatingRoundingDoublingHighMul is VQRDMULH
// (sat((2ab + 2^31) >> 32) = floor((ab + 2^30) / 2^31), INT32_MAX for a = m = INT32_MIN).
// RoundingDivideByPOT(h, r) rounds half away from zero, VRSHL by -r half up: for h < 0 and
// r > 0 it takes h - 1 (saturating; INT32_MIN stays, its remainder is 0). With h = q 2^r + e
// (0 <= e < 2^r), TFLite's q + (e > 2^(r-1) - 1 + 1) equals floor((h - 1 + 2^(r-1)) / 2^r) =
// q + (e >= 2^(r-1) + 1); for h >= 0 both are q + (e >= 2^(r-1)); r = 0 adds nothing. The
// h - 1 is h + ((h & -r) >> 31): -r has its sign bit set exactly when r > 0.
llvm::Value* qMultiplyLanesHelium(KernelBuilder& kb, llvm::Value* x, llvm::Value* m,
                                  llvm::Value* shift, QRescaleRange range) {
  llvm::IRBuilder<>& ir = kb.b();
  llvm::Type* v32 = x->getType();
  llvm::Value* zero = llvm::Constant::getNullValue(v32);
  llvm::Value* a = x;
  llvm::Value* negRight = shift;  // -r: the shift where it is not positive
  if (range.leftShifts) {
    llvm::Value* positive = ir.CreateICmpSGT(shift, zero);
    a = ir.CreateShl(x, ir.CreateSelect(positive, shift, zero));
    negRight = ir.CreateSelect(positive, zero, shift);
  }
  llvm::Value* high = ir.CreateIntrinsic(llvm::Intrinsic::arm_mve_vqrdmulh, {v32}, {a, m});
  llvm::Value* minusOne =
      ir.CreateAShr(ir.CreateAnd(high, negRight), llvm::ConstantInt::get(v32, 31));
  llvm::Value* adjusted = ir.CreateBinaryIntrinsic(llvm::Intrinsic::sadd_sat, high, minusOne);
  // VRSHL.S32 (saturate 0, round 1, signed).
  return ir.CreateIntrinsic(llvm::Intrinsic::arm_mve_vshl_vector, {v32, v32},
                            {adjusted, negRight, ir.getInt32(0), ir.getInt32(1), ir.getInt32(0)});
}

}  // namespace

llvm::Value* qMultiplyLanes(KernelBuilder& kb, llvm::Value* x, llvm::Value* m, llvm::Value* shift,
                            QRescaleRange range) {
  llvm::IRBuilder<>& ir = kb.b();
  auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(x->getType());
  if (vector && kb.target().helium && vector->getNumElements() == 4)
    return qMultiplyLanesHelium(kb, x, m, shift, range);
  if (vector && kb.target().vectorLanes == 0) {
    // No vector registers (the Arm DSP extension's kernels): lane by lane on i32, where the
    // i64 product of two sign-extended i32 stays one SMULL / SMLAL (legalised as a vector of
    // i64 it became a full 64-bit multiply).
    llvm::Value* result = llvm::PoisonValue::get(vector);
    for (uint64_t i = 0; i < vector->getNumElements(); ++i) {
      llvm::Value* lane =
          qMultiplyLanes(kb, ir.CreateExtractElement(x, i), ir.CreateExtractElement(m, i),
                         ir.CreateExtractElement(shift, i), range);
      result = ir.CreateInsertElement(result, lane, i);
    }
    return result;
  }
  // <n x i32> (or one i32, above) and the i64 of the same shape.
  llvm::Type* v32 = x->getType();
  llvm::Type* v64 = vector ? static_cast<llvm::Type*>(llvm::FixedVectorType::get(
                                 ir.getInt64Ty(), vector->getNumElements()))
                           : ir.getInt64Ty();
  auto c32 = [&](int64_t value) { return llvm::ConstantInt::get(v32, uint64_t(value)); };
  auto c64 = [&](int64_t value) { return llvm::ConstantInt::get(v64, uint64_t(value)); };
  llvm::Value* zero = c32(0);
  llvm::Value* a = x;
  llvm::Value* right = ir.CreateNeg(shift);
  if (range.leftShifts) {
    llvm::Value* positive = ir.CreateICmpSGT(shift, zero);
    right = ir.CreateSelect(positive, zero, right);
    a = ir.CreateShl(x, ir.CreateSelect(positive, shift, zero));
  }
  // SaturatingRoundingDoublingHighMul(a, m): saturates only for a = m = INT32_MIN.
  const int64_t minI32 = std::numeric_limits<int32_t>::min();
  llvm::Value* overflow =
      range.minMultiplier
          ? ir.CreateAnd(ir.CreateICmpEQ(a, c32(minI32)), ir.CreateICmpEQ(m, c32(minI32)))
          : nullptr;
  // (ab + nudge) / 2^31 truncated, nudge = 2^30 or 1 - 2^30 by ab's sign, is floor((ab +
  // 2^30) / 2^31) for every ab (for ab = -k < 0 both are -floor((k + 2^30 - 1) / 2^31)):
  // one add and one arithmetic shift (AArch64's sqrdmulh computes the same).
  llvm::Value* ab = ir.CreateMul(ir.CreateSExt(a, v64), ir.CreateSExt(m, v64));
  llvm::Value* high =
      ir.CreateTrunc(ir.CreateAShr(ir.CreateAdd(ab, c64(int64_t{1} << 30)), c64(31)), v32);
  llvm::Value* srdhm =
      overflow ? ir.CreateSelect(overflow, c32(std::numeric_limits<int32_t>::max()), high) : high;
  // RoundingDivideByPOT(srdhm, right): 2^31 - 1 wraps to the right mask for right = 31.
  llvm::Value* mask = ir.CreateSub(ir.CreateShl(c32(1), right), c32(1));
  llvm::Value* remainder = ir.CreateAnd(srdhm, mask);
  llvm::Value* threshold =
      ir.CreateAdd(ir.CreateAShr(mask, c32(1)), ir.CreateZExt(ir.CreateICmpSLT(srdhm, zero), v32));
  llvm::Value* roundUp = ir.CreateZExt(ir.CreateICmpSGT(remainder, threshold), v32);
  return ir.CreateAdd(ir.CreateAShr(srdhm, right), roundUp);
}

llvm::Value* qSaturatingMultiplyByPOT(KernelBuilder& kb, llvm::Value* x, int exponent) {
  llvm::IRBuilder<>& ir = kb.b();
  if (exponent == 0) return x;
  if (exponent < 0) return qRoundingDivideByPOT(kb, x, qConst(kb, -exponent));
  const int32_t threshold = (1 << (31 - exponent)) - 1;
  llvm::Value* result = ir.CreateShl(x, uint64_t(exponent));
  result = ir.CreateSelect(ir.CreateICmpSGT(x, qConst(kb, threshold)),
                           qConst(kb, std::numeric_limits<int32_t>::max()), result);
  return ir.CreateSelect(ir.CreateICmpSLT(x, qConst(kb, -threshold)),
                         qConst(kb, std::numeric_limits<int32_t>::min()), result);
}

llvm::Value* qOneOverOnePlusX(KernelBuilder& kb, llvm::Value* a) {
  llvm::IRBuilder<>& ir = kb.b();
  llvm::Type* i64 = ir.getInt64Ty();
  // half_denominator = RoundingHalfSum(a, One): (sum + sign) / 2, truncating.
  llvm::Value* sum = ir.CreateAdd(ir.CreateSExt(a, i64), ir.getInt64(std::numeric_limits<int32_t>::max()));
  llvm::Value* negative = ir.CreateICmpSLT(sum, ir.getInt64(0));
  llvm::Value* plusSign = ir.CreateAdd(sum, ir.CreateSelect(negative, ir.getInt64(uint64_t(-1)), ir.getInt64(1)));
  // Truncating /2: add 1 to negative values before the arithmetic shift.
  llvm::Value* adjusted = ir.CreateAdd(
      plusSign, ir.CreateZExt(ir.CreateICmpSLT(plusSign, ir.getInt64(0)), i64));
  llvm::Value* half = ir.CreateTrunc(ir.CreateAShr(adjusted, 1), ir.getInt32Ty());
  llvm::Value* x = ir.CreateAdd(qConst(kb, 1515870810), qSrdhm(kb, half, qConst(kb, -1010580540)));
  for (int i = 0; i < 3; ++i) {
    llvm::Value* halfTimesX = qSrdhm(kb, half, x);
    llvm::Value* oneMinus = ir.CreateSub(qConst(kb, 1 << 29), halfTimesX);
    x = ir.CreateAdd(x, qSaturatingMultiplyByPOT(kb, qSrdhm(kb, x, oneMinus), 2));
  }
  return qSaturatingMultiplyByPOT(kb, x, 1);
}

llvm::Value* qClamp(KernelBuilder& kb, llvm::Value* v, int32_t lo, int32_t hi) {
  llvm::IRBuilder<>& ir = kb.b();
  v = ir.CreateSelect(ir.CreateICmpSLT(v, qConst(kb, lo)), qConst(kb, lo), v);
  return ir.CreateSelect(ir.CreateICmpSGT(v, qConst(kb, hi)), qConst(kb, hi), v);
}

llvm::Value* qClampLanes(KernelBuilder& kb, llvm::Value* v, int32_t lo, int32_t hi) {
  llvm::IRBuilder<>& ir = kb.b();
  llvm::Value* low = llvm::ConstantInt::get(v->getType(), uint64_t(int64_t(lo)));
  llvm::Value* high = llvm::ConstantInt::get(v->getType(), uint64_t(int64_t(hi)));
  v = ir.CreateSelect(ir.CreateICmpSLT(v, low), low, v);
  return ir.CreateSelect(ir.CreateICmpSGT(v, high), high, v);
}

llvm::Value* qInside(KernelBuilder& kb, llvm::Value* pos, int64_t size) {
  llvm::IRBuilder<>& ir = kb.b();
  return ir.CreateAnd(ir.CreateICmpSGE(pos, kb.index(0)), ir.CreateICmpSLT(pos, kb.index(size)));
}

llvm::Value* qRoundToInt(KernelBuilder& kb, llvm::Value* x) {
  llvm::IRBuilder<>& ir = kb.b();
  const float limit = 1073741824.0f;  // 2^30: larger magnitudes are clamped away anyway
  // NaN compares false and becomes -2^30.
  x = ir.CreateSelect(ir.CreateFCmpOGE(x, kb.f32(-limit)), x, kb.f32(-limit));
  x = ir.CreateSelect(ir.CreateFCmpOLE(x, kb.f32(limit)), x, kb.f32(limit));
  llvm::Value* t = ir.CreateFPToSI(x, ir.getInt32Ty());
  llvm::Value* frac = ir.CreateFSub(x, ir.CreateSIToFP(t, ir.getFloatTy()));  // exact
  llvm::Value* up = ir.CreateZExt(ir.CreateFCmpOGE(frac, kb.f32(0.5f)), ir.getInt32Ty());
  llvm::Value* down = ir.CreateZExt(ir.CreateFCmpOLE(frac, kb.f32(-0.5f)), ir.getInt32Ty());
  return ir.CreateSub(ir.CreateAdd(t, up), down);
}

llvm::Value* qTable(KernelBuilder& kb, const std::vector<int32_t>& values, const char* name) {
  llvm::Module* module = kb.b().GetInsertBlock()->getModule();
  std::vector<uint32_t> raw(values.begin(), values.end());
  llvm::Constant* init = llvm::ConstantDataArray::get(kb.context(), raw);
  auto* global = new llvm::GlobalVariable(*module, init->getType(), true,
                                          llvm::GlobalValue::PrivateLinkage, init, name);
  global->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  global->setAlignment(llvm::Align(4));
  return global;
}

llvm::Value* qShiftTable(KernelBuilder& kb, const std::vector<int32_t>& shifts) {
  llvm::Module* module = kb.b().GetInsertBlock()->getModule();
  std::vector<uint8_t> raw;
  for (int32_t s : shifts) raw.push_back(uint8_t(int8_t(s)));  // -31 ... 30
  llvm::Constant* init = llvm::ConstantDataArray::get(kb.context(), raw);
  auto* global = new llvm::GlobalVariable(*module, init->getType(), true,
                                          llvm::GlobalValue::PrivateLinkage, init, "qshift");
  global->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  return global;
}

llvm::Value* qShiftLoad(KernelBuilder& kb, llvm::Value* table, llvm::Value* index, unsigned lanes) {
  llvm::IRBuilder<>& ir = kb.b();
  llvm::Value* address = ir.CreateInBoundsGEP(ir.getInt8Ty(), table, index);
  if (lanes == 0) return ir.CreateSExt(ir.CreateLoad(ir.getInt8Ty(), address), ir.getInt32Ty());
  auto* bytes = llvm::FixedVectorType::get(ir.getInt8Ty(), lanes);
  return ir.CreateSExt(ir.CreateAlignedLoad(bytes, address, llvm::Align(1)),
                       llvm::FixedVectorType::get(ir.getInt32Ty(), lanes));
}

llvm::Value* qTableLoad(KernelBuilder& kb, llvm::Value* table, llvm::Value* index) {
  llvm::IRBuilder<>& ir = kb.b();
  llvm::Value* address = ir.CreateInBoundsGEP(ir.getInt32Ty(), table, index);
  return ir.CreateAlignedLoad(ir.getInt32Ty(), address, llvm::Align(4));
}

}  // namespace kiln::codegen::detail
