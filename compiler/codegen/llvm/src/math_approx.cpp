// Polynomial approximations of exp, log, tanh, sigmoid and erf in LLVM IR (Cephes-style
// range reduction), so that no kernel needs libm. Soft-float targets get the same code (its
// float operations become the target's soft-float arithmetic). Each works on an f32 scalar or
// an f32 vector alike: constants are made of the argument's type (a splat for a vector), and
// the integer steps use i32 of the same shape.
#include "math_approx.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>

#include <initializer_list>

#include "kernel_builder.h"

namespace kiln::codegen::detail {
namespace {

// A float constant of `like`'s type: a scalar, or a splat of a vector.
llvm::Value* constantOf(llvm::Value* like, float value) {
  return llvm::ConstantFP::get(like->getType(), double(value));
}

// i32, or a vector of i32 as wide as `like`.
llvm::Type* intTypeOf(llvm::IRBuilder<>& b, llvm::Value* like) {
  if (auto* vector = llvm::dyn_cast<llvm::VectorType>(like->getType()))
    return llvm::VectorType::get(b.getInt32Ty(), vector->getElementCount());
  return b.getInt32Ty();
}

llvm::Value* intOf(llvm::Type* type, int64_t value) {
  return llvm::ConstantInt::get(type, uint64_t(value), /*isSigned=*/true);
}

// Horner evaluation: c[0] * x^(n-1) + ... + c[n-1].
llvm::Value* polynomial(KernelBuilder& kb, llvm::Value* x, std::initializer_list<float> coeffs) {
  llvm::IRBuilder<>& b = kb.b();
  llvm::Value* result = nullptr;
  for (float c : coeffs) {
    result = result ? b.CreateFAdd(b.CreateFMul(result, x), constantOf(x, c)) : constantOf(x, c);
  }
  return result;
}

// floor(x) for |x| < 2^31 without a library call: truncate, then step down for negatives.
llvm::Value* floorToInt(KernelBuilder& kb, llvm::Value* x) {
  llvm::IRBuilder<>& b = kb.b();
  llvm::Type* intTy = intTypeOf(b, x);
  llvm::Value* truncated = b.CreateFPToSI(x, intTy);
  llvm::Value* back = b.CreateSIToFP(truncated, x->getType());
  llvm::Value* tooBig = b.CreateFCmpOGT(back, x);
  return b.CreateSub(truncated, b.CreateZExt(tooBig, intTy));
}

// 2^n for an i32 n in [-126, 127] (a scalar, or a vector like `like`), by building the float's
// exponent bits.
llvm::Value* powerOfTwo(KernelBuilder& kb, llvm::Value* n, llvm::Value* like) {
  llvm::IRBuilder<>& b = kb.b();
  llvm::Value* bits = b.CreateShl(b.CreateAdd(n, intOf(n->getType(), 127)), 23);
  return b.CreateBitCast(bits, like->getType());
}

}  // namespace

llvm::Value* emitExp(KernelBuilder& kb, llvm::Value* x) {
  llvm::IRBuilder<>& b = kb.b();
  llvm::Value* overflow = b.CreateFCmpOGT(x, constantOf(x, 88.72283f));
  llvm::Value* clamped = kb.minValue(kb.maxValue(x, constantOf(x, -87.33654f)), constantOf(x, 88.3762626647949f));
  // x = n ln2 + r, |r| <= ln2/2; ln2 split in two parts for an exact product.
  llvm::Value* n = floorToInt(
      kb, b.CreateFAdd(b.CreateFMul(clamped, constantOf(x, 1.44269504088896341f)), constantOf(x, 0.5f)));
  llvm::Value* nf = b.CreateSIToFP(n, x->getType());
  llvm::Value* r = b.CreateFSub(clamped, b.CreateFMul(nf, constantOf(x, 0.693359375f)));
  r = b.CreateFSub(r, b.CreateFMul(nf, constantOf(x, -2.12194440e-4f)));
  llvm::Value* r2 = b.CreateFMul(r, r);
  llvm::Value* p = polynomial(kb, r,
                              {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                               4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f});
  llvm::Value* y = b.CreateFAdd(b.CreateFAdd(b.CreateFMul(p, r2), r), constantOf(x, 1.0f));
  y = b.CreateFMul(y, powerOfTwo(kb, n, x));
  llvm::Value* infinity = constantOf(x, __builtin_inff());
  y = b.CreateSelect(overflow, infinity, y);
  // Below ln(smallest denormal) the result is 0; NaN stays NaN (the clamp above drops it).
  y = b.CreateSelect(b.CreateFCmpOLT(x, constantOf(x, -103.972084f)), constantOf(x, 0.0f), y);
  return b.CreateSelect(b.CreateFCmpUNO(x, x), x, y);
}

llvm::Value* emitLog(KernelBuilder& kb, llvm::Value* x) {
  llvm::IRBuilder<>& b = kb.b();
  // x = m * 2^e with m in [sqrt(1/2), sqrt(2)); log x = log m + e ln2.
  llvm::Type* intTy = intTypeOf(b, x);
  llvm::Value* bits = b.CreateBitCast(x, intTy);
  llvm::Value* e = b.CreateSub(b.CreateLShr(bits, 23), intOf(intTy, 127));
  llvm::Value* mBits =
      b.CreateOr(b.CreateAnd(bits, intOf(intTy, 0x007fffff)), intOf(intTy, 0x3f800000));
  llvm::Value* m = b.CreateBitCast(mBits, x->getType());  // [1, 2)
  llvm::Value* big = b.CreateFCmpOGT(m, constantOf(x, 1.41421356f));
  m = b.CreateSelect(big, b.CreateFMul(m, constantOf(x, 0.5f)), m);
  e = b.CreateAdd(e, b.CreateZExt(big, intTy));
  llvm::Value* f = b.CreateFSub(m, constantOf(x, 1.0f));
  llvm::Value* f2 = b.CreateFMul(f, f);
  llvm::Value* p = polynomial(
      kb, f,
      {7.0376836292e-2f, -1.1514610310e-1f, 1.1676998740e-1f, -1.2420140846e-1f, 1.4249322787e-1f,
       -1.6668057665e-1f, 2.0000714765e-1f, -2.4999993993e-1f, 3.3333331174e-1f});
  llvm::Value* y = b.CreateFMul(b.CreateFMul(p, f), f2);
  llvm::Value* ef = b.CreateSIToFP(e, x->getType());
  y = b.CreateFAdd(y, b.CreateFMul(ef, constantOf(x, -2.12194440e-4f)));
  y = b.CreateFSub(y, b.CreateFMul(f2, constantOf(x, 0.5f)));
  llvm::Value* result = b.CreateFAdd(b.CreateFAdd(f, y), b.CreateFMul(ef, constantOf(x, 0.693359375f)));
  // log(0) = -inf, log(negative) = NaN, log(inf) = inf.
  llvm::Value* nan = constantOf(x, __builtin_nanf(""));
  result = b.CreateSelect(b.CreateFCmpOEQ(x, constantOf(x, __builtin_inff())), x, result);
  result = b.CreateSelect(b.CreateFCmpOEQ(x, constantOf(x, 0.0f)), constantOf(x, -__builtin_inff()), result);
  return b.CreateSelect(b.CreateFCmpOLT(x, constantOf(x, 0.0f)), nan, result);
}

llvm::Value* emitSigmoid(KernelBuilder& kb, llvm::Value* x) {
  llvm::IRBuilder<>& b = kb.b();
  llvm::Value* e = emitExp(kb, b.CreateFNeg(x));
  return b.CreateFDiv(constantOf(x, 1.0f), b.CreateFAdd(constantOf(x, 1.0f), e));
}

llvm::Value* emitTanh(KernelBuilder& kb, llvm::Value* x) {
  llvm::IRBuilder<>& b = kb.b();
  llvm::Value* negative = b.CreateFCmpOLT(x, constantOf(x, 0.0f));
  llvm::Value* ax = b.CreateSelect(negative, b.CreateFNeg(x), x);
  // Small |x|: odd polynomial (no cancellation); otherwise 1 - 2 / (exp(2|x|) + 1).
  llvm::Value* z = b.CreateFMul(x, x);
  llvm::Value* p = polynomial(kb, z,
                              {-5.70498872745e-3f, 2.06390887954e-2f, -5.37397155531e-2f,
                               1.33314422036e-1f, -3.33332819422e-1f});
  llvm::Value* small = b.CreateFAdd(b.CreateFMul(b.CreateFMul(p, z), x), x);
  llvm::Value* e = emitExp(kb, b.CreateFMul(ax, constantOf(x, 2.0f)));
  llvm::Value* large =
      b.CreateFSub(constantOf(x, 1.0f), b.CreateFDiv(constantOf(x, 2.0f), b.CreateFAdd(e, constantOf(x, 1.0f))));
  large = b.CreateSelect(negative, b.CreateFNeg(large), large);
  return b.CreateSelect(b.CreateFCmpOLT(ax, constantOf(x, 0.625f)), small, large);
}

llvm::Value* emitErf(KernelBuilder& kb, llvm::Value* x) {
  llvm::IRBuilder<>& b = kb.b();
  llvm::Value* negative = b.CreateFCmpOLT(x, constantOf(x, 0.0f));
  llvm::Value* ax = b.CreateSelect(negative, b.CreateFNeg(x), x);
  // |x| < 0.5: Taylor series 2/sqrt(pi) (x - x^3/3 + x^5/10 - x^7/42 + x^9/216).
  llvm::Value* z = b.CreateFMul(x, x);
  llvm::Value* series = polynomial(kb, z, {1.0f / 216, -1.0f / 42, 1.0f / 10, -1.0f / 3, 1.0f});
  llvm::Value* small = b.CreateFMul(b.CreateFMul(series, x), constantOf(x, 1.12837916709551f));
  // Otherwise Abramowitz & Stegun 7.1.26 (absolute error < 1.5e-7).
  llvm::Value* t =
      b.CreateFDiv(constantOf(x, 1.0f), b.CreateFAdd(constantOf(x, 1.0f), b.CreateFMul(ax, constantOf(x, 0.3275911f))));
  llvm::Value* poly = b.CreateFMul(
      polynomial(kb, t, {1.061405429f, -1.453152027f, 1.421413741f, -0.284496736f, 0.254829592f}),
      t);
  llvm::Value* large = b.CreateFSub(constantOf(x, 1.0f), b.CreateFMul(poly, emitExp(kb, b.CreateFNeg(z))));
  large = b.CreateSelect(negative, b.CreateFNeg(large), large);
  return b.CreateSelect(b.CreateFCmpOLT(ax, constantOf(x, 0.5f)), small, large);
}

llvm::Value* emitFloor(KernelBuilder& kb, llvm::Value* x) {
  llvm::IRBuilder<>& b = kb.b();
  // From 2^23 on every float is an integer (and NaN/inf stay themselves).
  llvm::Value* ax = b.CreateSelect(b.CreateFCmpOLT(x, constantOf(x, 0.0f)), b.CreateFNeg(x), x);
  llvm::Value* small = b.CreateFCmpOLT(ax, constantOf(x, 8388608.0f));
  llvm::Value* safe = b.CreateSelect(small, x, constantOf(x, 0.0f));
  llvm::Value* floored = b.CreateSIToFP(floorToInt(kb, safe), x->getType());
  return b.CreateSelect(small, floored, x);
}

llvm::Value* emitSqrt(KernelBuilder& kb, llvm::Value* x) {
  llvm::IRBuilder<>& b = kb.b();
  if (!kb.target().softFloat) {
    return b.CreateIntrinsic(llvm::Intrinsic::sqrt, {x->getType()}, {x});
  }
  // Soft float: llvm.sqrt would call sqrtf. Bit-trick estimate plus three Newton steps.
  llvm::Type* intTy = intTypeOf(b, x);
  llvm::Value* bits = b.CreateBitCast(x, intTy);
  llvm::Value* guessBits = b.CreateAdd(b.CreateLShr(bits, 1), intOf(intTy, 0x1fbd1df5));
  llvm::Value* y = b.CreateBitCast(guessBits, x->getType());
  for (int step = 0; step < 3; ++step) {
    y = b.CreateFMul(constantOf(x, 0.5f), b.CreateFAdd(y, b.CreateFDiv(x, y)));
  }
  y = b.CreateSelect(b.CreateFCmpOEQ(x, constantOf(x, 0.0f)), x, y);
  return b.CreateSelect(b.CreateFCmpOLT(x, constantOf(x, 0.0f)), constantOf(x, __builtin_nanf("")), y);
}

}  // namespace kiln::codegen::detail
