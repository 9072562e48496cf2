// Refuses an artifact compiled for a target this runtime cannot run: another architecture or
// ABI, or CPU features the processor lacks (named). The runtime's own target comes from the
// compiler's predefined macros; the host layer adds features it detects at run time.
#include "loader/module.h"

namespace kiln {
namespace {

#if defined(__x86_64__)
constexpr uint32_t kArch = KILN_ARCH_X86_64;
constexpr uint32_t kAbi = KILN_ABI_LP64;
#elif defined(__aarch64__)
constexpr uint32_t kArch = KILN_ARCH_AARCH64;
constexpr uint32_t kAbi = KILN_ABI_LP64;
#elif defined(__riscv) && __riscv_xlen == 64
constexpr uint32_t kArch = KILN_ARCH_RISCV64;
constexpr uint32_t kAbi = KILN_ABI_LP64D;
#elif defined(__riscv) && __riscv_xlen == 32
constexpr uint32_t kArch = KILN_ARCH_RISCV32;
#if defined(__riscv_float_abi_single)
constexpr uint32_t kAbi = KILN_ABI_ILP32F;
#else
constexpr uint32_t kAbi = KILN_ABI_ILP32;
#endif
#elif defined(__arm__)
constexpr uint32_t kArch = KILN_ARCH_ARM;
#if defined(__ARM_PCS_VFP)
constexpr uint32_t kAbi = KILN_ABI_EABI_HARD;
#else
constexpr uint32_t kAbi = KILN_ABI_EABI_SOFT;
#endif
#else
#error "kiln runtime: unknown target architecture"
#endif

// Features the compiler was told the processor has (the runtime itself requires them).
constexpr uint64_t compiledFeatures() {
  uint64_t f = 0;
#if defined(__x86_64__)
#ifdef __SSE4_2__
  f |= KILN_X86_SSE4_2;
#endif
#ifdef __AVX__
  f |= KILN_X86_AVX;
#endif
#ifdef __AVX2__
  f |= KILN_X86_AVX2;
#endif
#ifdef __FMA__
  f |= KILN_X86_FMA;
#endif
#ifdef __AVX512F__
  f |= KILN_X86_AVX512F;
#endif
#ifdef __AVX512VNNI__
  f |= KILN_X86_AVX512VNNI;
#endif
#ifdef __AVXVNNI__
  f |= KILN_X86_AVXVNNI;
#endif
#elif defined(__aarch64__)
  f |= KILN_AARCH64_NEON;
#ifdef __ARM_FEATURE_DOTPROD
  f |= KILN_AARCH64_DOTPROD;
#endif
#elif defined(__arm__)
#ifdef __ARM_FEATURE_DSP
  f |= KILN_ARM_DSP;
#endif
#if defined(__ARM_FP) && (__ARM_FP & 4)
  f |= KILN_ARM_FPV5_SP;
#endif
#ifdef __ARM_FEATURE_MVE
  f |= KILN_ARM_MVE;
#endif
#elif defined(__riscv)
#ifdef __riscv_mul
  f |= KILN_RISCV_M;
#endif
#ifdef __riscv_atomic
  f |= KILN_RISCV_A;
#endif
#ifdef __riscv_flen
  f |= KILN_RISCV_F;
#if __riscv_flen >= 64
  f |= KILN_RISCV_D;
#endif
#endif
#ifdef __riscv_compressed
  f |= KILN_RISCV_C;
#endif
#endif
  return f;
}

const char* archName(uint32_t arch) {
  switch (arch) {
    case KILN_ARCH_X86_64:
      return "x86_64";
    case KILN_ARCH_AARCH64:
      return "aarch64";
    case KILN_ARCH_RISCV64:
      return "riscv64";
    case KILN_ARCH_ARM:
      return "arm";
    case KILN_ARCH_RISCV32:
      return "riscv32";
    default:
      return "unknown";
  }
}

const char* abiName(uint32_t abi) {
  switch (abi) {
    case KILN_ABI_LP64:
      return "lp64";
    case KILN_ABI_LP64D:
      return "lp64d";
    case KILN_ABI_EABI_SOFT:
      return "eabi-soft";
    case KILN_ABI_EABI_HARD:
      return "eabi-hard";
    case KILN_ABI_ILP32:
      return "ilp32";
    case KILN_ABI_ILP32F:
      return "ilp32f";
    default:
      return "unknown";
  }
}

}  // namespace

kiln_status_t checkTarget(const kiln_module& m, const kiln_load_options& options, Diag& diag) {
  const kiln_header& h = *m.header;
  if (h.arch != kArch || h.abi != kAbi) {
    return diag.fail(KILN_ERROR_UNSUPPORTED,
                     "artifact targets {} ({}) but this runtime runs {} ({})", archName(h.arch),
                     abiName(h.abi), archName(kArch), abiName(kAbi));
  }
  uint64_t missing = h.cpu_features & ~(compiledFeatures() | options.cpu_features);
  if (missing == 0) return KILN_OK;
#ifdef KILN_NO_STATUS_MESSAGES
  return diag.fail(KILN_ERROR_UNSUPPORTED, "");
#else
  // Name every missing feature: "avx512f avx512bw bit40".
  char names[192];
  size_t n = 0;
  for (uint32_t bit = 0; bit < 64; ++bit) {
    if (!(missing >> bit & 1)) continue;
    const char* name = kiln_cpu_feature_name(h.arch, bit);
    char unnamed[6] = {'b', 'i', 't', 0, 0, 0};
    unnamed[3] = static_cast<char>('0' + (bit >= 10 ? bit / 10 : bit));
    if (bit >= 10) unnamed[4] = static_cast<char>('0' + bit % 10);
    if (!name) name = unnamed;
    if (n > 0 && n + 1 < sizeof names) names[n++] = ' ';
    for (const char* c = name; *c && n + 1 < sizeof names; ++c) names[n++] = *c;
  }
  names[n] = '\0';
  return diag.fail(KILN_ERROR_UNSUPPORTED, "artifact needs CPU features this processor lacks: {}",
                   static_cast<const char*>(names));
#endif
}

}  // namespace kiln
