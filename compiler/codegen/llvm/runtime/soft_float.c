/* IEEE-754 single-precision arithmetic in integer code, for kernels on soft-float targets
 * (cortex-m4, rv32imac). The build compiles this file to LLVM IR (clang -S -emit-llvm) and the
 * code generator links it into every soft-float kernel module as internal functions, so that
 * the back end's soft-float library calls resolve inside the object: no undefined symbols,
 * no libgcc needed. Round to nearest even; denormals supported; NaNs are the default NaN.
 *
 * Both naming schemes are defined: the ARM run-time ABI (__aeabi_*) and libgcc's (used by
 * RISC-V); the code generator keeps the set its target calls. Floats are passed as their bit
 * patterns in integer registers, which is what the soft-float calling conventions do. */

typedef unsigned int u32;
typedef int i32;
typedef unsigned long long u64;

#define SIGN 0x80000000u
#define EXP_MASK 0x7f800000u
#define FRAC_MASK 0x007fffffu
#define HIDDEN 0x00800000u
#define DEFAULT_NAN 0x7fc00000u

static int isNan(u32 a) { return (a & ~SIGN) > EXP_MASK; }

/* Shift right, folding every bit shifted out into bit 0 ("sticky"). */
static u32 shiftRightSticky(u32 m, u32 shift) {
  if (shift == 0) return m;
  if (shift > 31) return m != 0;
  return (m >> shift) | ((m & ((1u << shift) - 1)) != 0);
}

/* Packs sign, biased exponent e and significand m that carries 3 extra rounding bits
 * (normal numbers: 2^26 <= m < 2^27). e <= 0 becomes a denormal; e == 1 with m < 2^26 is a
 * denormal already. */
static u32 roundPack(u32 sign, i32 e, u32 m) {
  if (e >= 255) return sign | EXP_MASK;
  if (e <= 0) {
    m = shiftRightSticky(m, (u32)(1 - e));
    e = 1;
  }
  u32 rest = m & 7;
  m >>= 3;
  if (rest > 4 || (rest == 4 && (m & 1))) m++;
  /* The hidden bit adds one to the exponent field: pack with e - 1. A carry out of the
   * significand moves to the next exponent (possibly infinity) on its own. */
  return sign | (((u32)(e - 1) << 23) + m);
}

/* Splits a finite non-zero value into exponent and significand with the hidden bit at 23. */
static void unpack(u32 a, i32* e, u32* m) {
  *e = (i32)((a >> 23) & 0xff);
  *m = a & FRAC_MASK;
  if (*e) {
    *m |= HIDDEN;
  } else {
    *e = 1;
    while (!(*m & HIDDEN)) {
      *m <<= 1;
      --*e;
    }
  }
}

static u32 add(u32 a, u32 b) {
  if (isNan(a) || isNan(b)) return DEFAULT_NAN;
  u32 absA = a & ~SIGN, absB = b & ~SIGN;
  if (absA == EXP_MASK) return (absB == EXP_MASK && (a ^ b) & SIGN) ? DEFAULT_NAN : a;
  if (absB == EXP_MASK) return b;
  if (absA == 0 && absB == 0) return a & b;  /* -0 only if both are -0 */
  if (absA < absB) {
    u32 t = a;
    a = b;
    b = t;
  }
  u32 sign = a & SIGN;
  i32 ea = (i32)((a >> 23) & 0xff), eb = (i32)((b >> 23) & 0xff);
  u32 ma = a & FRAC_MASK, mb = b & FRAC_MASK;
  if (ea) ma |= HIDDEN; else ea = 1;
  if (eb) mb |= HIDDEN; else eb = 1;
  ma <<= 3;
  mb = shiftRightSticky(mb << 3, (u32)(ea - eb));
  u32 m;
  if ((a ^ b) & SIGN) {
    m = ma - mb;
    if (m == 0) return 0;
    while (m < (1u << 26) && ea > 1) {
      m <<= 1;
      --ea;
    }
  } else {
    m = ma + mb;
    if (m >= (1u << 27)) {
      m = shiftRightSticky(m, 1);
      ++ea;
    }
  }
  return roundPack(sign, ea, m);
}

static u32 mul(u32 a, u32 b) {
  u32 sign = (a ^ b) & SIGN;
  if (isNan(a) || isNan(b)) return DEFAULT_NAN;
  u32 absA = a & ~SIGN, absB = b & ~SIGN;
  if (absA == EXP_MASK || absB == EXP_MASK) {
    return (absA == 0 || absB == 0) ? DEFAULT_NAN : sign | EXP_MASK;
  }
  if (absA == 0 || absB == 0) return sign;
  i32 ea, eb;
  u32 ma, mb;
  unpack(a, &ea, &ma);
  unpack(b, &eb, &mb);
  i32 e = ea + eb - 127;
  u64 p = (u64)ma * mb; /* [2^46, 2^48) */
  u32 shift = 20;
  if (p >= (1ull << 47)) {
    shift = 21;
    ++e;
  }
  u32 m = (u32)(p >> shift) | ((p & ((1ull << shift) - 1)) != 0);
  return roundPack(sign, e, m);
}

static u32 divide(u32 a, u32 b) {
  u32 sign = (a ^ b) & SIGN;
  if (isNan(a) || isNan(b)) return DEFAULT_NAN;
  u32 absA = a & ~SIGN, absB = b & ~SIGN;
  if (absA == EXP_MASK) return absB == EXP_MASK ? DEFAULT_NAN : sign | EXP_MASK;
  if (absB == EXP_MASK) return sign;
  if (absB == 0) return absA == 0 ? DEFAULT_NAN : sign | EXP_MASK;
  if (absA == 0) return sign;
  i32 ea, eb;
  u32 ma, mb;
  unpack(a, &ea, &ma);
  unpack(b, &eb, &mb);
  i32 e = ea - eb + 127;
  if (ma < mb) {
    ma <<= 1;
    --e;
  }
  /* Long division: 27 quotient bits, the first of which is 1. */
  u32 q = 0, r = ma;
  for (int i = 0; i < 27; ++i) {
    q <<= 1;
    if (r >= mb) {
      r -= mb;
      q |= 1;
    }
    r <<= 1;
  }
  return roundPack(sign, e, q | (r != 0));
}

/* -1, 0, 1 for less, equal, greater; 2 if unordered. */
static i32 compare(u32 a, u32 b) {
  if (isNan(a) || isNan(b)) return 2;
  if (((a | b) & ~SIGN) == 0) return 0;
  if ((a ^ b) & SIGN) return (a & SIGN) ? -1 : 1;
  if (a == b) return 0;
  i32 less = (a & ~SIGN) < (b & ~SIGN);
  if (a & SIGN) less = !less;
  return less ? -1 : 1;
}

static i32 toInt(u32 a) {
  if (isNan(a)) return 0;
  i32 e = (i32)((a >> 23) & 0xff);
  if (e < 127) return 0;
  if (e >= 127 + 31) return (a & SIGN) ? (i32)0x80000000u : 0x7fffffff;
  u32 m = (a & FRAC_MASK) | HIDDEN;
  m = e >= 150 ? m << (e - 150) : m >> (150 - e);
  return (a & SIGN) ? -(i32)m : (i32)m;
}

static u32 toUnsigned(u32 a) {
  if (isNan(a) || (a & SIGN)) return 0;
  i32 e = (i32)((a >> 23) & 0xff);
  if (e < 127) return 0;
  if (e >= 127 + 32) return 0xffffffffu;
  u32 m = (a & FRAC_MASK) | HIDDEN;
  return e >= 150 ? m << (e - 150) : m >> (150 - e);
}

static u32 fromUnsigned(u32 x, u32 sign) {
  if (x == 0) return 0;
  i32 top = 31;
  while (!(x & (1u << top))) --top;
  u32 m = top <= 26 ? x << (26 - top) : shiftRightSticky(x, (u32)(top - 26));
  return roundPack(sign, 127 + top, m);
}

static u32 fromInt(i32 x) {
  return x < 0 ? fromUnsigned(0u - (u32)x, SIGN) : fromUnsigned((u32)x, 0);
}

/* ---- ARM run-time ABI ---- */
u32 __aeabi_fadd(u32 a, u32 b) { return add(a, b); }
u32 __aeabi_fsub(u32 a, u32 b) { return add(a, b ^ SIGN); }
u32 __aeabi_frsub(u32 a, u32 b) { return add(b, a ^ SIGN); }
u32 __aeabi_fmul(u32 a, u32 b) { return mul(a, b); }
u32 __aeabi_fdiv(u32 a, u32 b) { return divide(a, b); }
i32 __aeabi_fcmpeq(u32 a, u32 b) { return compare(a, b) == 0; }
i32 __aeabi_fcmplt(u32 a, u32 b) { return compare(a, b) == -1; }
i32 __aeabi_fcmple(u32 a, u32 b) { i32 c = compare(a, b); return c == -1 || c == 0; }
i32 __aeabi_fcmpgt(u32 a, u32 b) { return compare(a, b) == 1; }
i32 __aeabi_fcmpge(u32 a, u32 b) { i32 c = compare(a, b); return c == 1 || c == 0; }
i32 __aeabi_fcmpun(u32 a, u32 b) { return compare(a, b) == 2; }
i32 __aeabi_f2iz(u32 a) { return toInt(a); }
u32 __aeabi_f2uiz(u32 a) { return toUnsigned(a); }
u32 __aeabi_i2f(i32 x) { return fromInt(x); }
u32 __aeabi_ui2f(u32 x) { return fromUnsigned(x, 0); }

/* ---- libgcc names (RISC-V and others) ---- */
u32 __addsf3(u32 a, u32 b) { return add(a, b); }
u32 __subsf3(u32 a, u32 b) { return add(a, b ^ SIGN); }
u32 __mulsf3(u32 a, u32 b) { return mul(a, b); }
u32 __divsf3(u32 a, u32 b) { return divide(a, b); }
u32 __negsf2(u32 a) { return a ^ SIGN; }
/* Comparisons return a value whose relation to 0 answers the question; unordered answers
 * "false" for every ordered predicate. */
i32 __eqsf2(u32 a, u32 b) { return compare(a, b) != 0; }
i32 __nesf2(u32 a, u32 b) { return compare(a, b) != 0; }
i32 __ltsf2(u32 a, u32 b) { i32 c = compare(a, b); return c == 2 ? 1 : c; }
i32 __lesf2(u32 a, u32 b) { i32 c = compare(a, b); return c == 2 ? 1 : c; }
i32 __gtsf2(u32 a, u32 b) { i32 c = compare(a, b); return c == 2 ? -1 : c; }
i32 __gesf2(u32 a, u32 b) { i32 c = compare(a, b); return c == 2 ? -1 : c; }
i32 __unordsf2(u32 a, u32 b) { return compare(a, b) == 2; }
i32 __fixsfsi(u32 a) { return toInt(a); }
u32 __fixunssfsi(u32 a) { return toUnsigned(a); }
u32 __floatsisf(i32 x) { return fromInt(x); }
u32 __floatunsisf(u32 x) { return fromUnsigned(x, 0); }
