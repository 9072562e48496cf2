// A self-contained check of the runtime on another architecture (no GoogleTest needed): built
// with Debian's gcc cross compilers and run under qemu-aarch64 / qemu-riscv64 by CTest. It loads
// the standard test artifact with that architecture's build of the test kernels embedded as ELF
// (the loader maps, relocates and runs real AArch64 / RISC-V 64 code), and with the static
// kernel library, runs "main" inline and on a thread pool, and compares with the hand-computed
// reference.
#include <cmath>
#include <cstdio>

#include "runtime_fixture.h"

namespace {

using namespace kiln::testing;

int check(const char* what, Kernels kernels, bool pool) {
  Loaded loaded(writeArtifact(standardSpec(kernels)));
  if (loaded.status() != KILN_OK) {
    std::printf("FAIL %s: load: %s\n", what, loaded.error().c_str());
    return 1;
  }
  kiln_thread_pool* threads = nullptr;
  if (pool && kiln_thread_pool_create(3, &threads) != KILN_OK) return 1;
  Context context(loaded.module(), pool ? kiln_thread_pool_executor(threads) : nullptr);
  MainResult got;
  MainResult want = referenceMain(sampleX(), sampleY());
  int failures = 0;
  for (int i = 0; i < 20; ++i) {
    if (runMain(context.get(), sampleX(), sampleY(), &got) != KILN_OK) {
      std::printf("FAIL %s: call: %s\n", what, kiln_context_error(context.get()));
      ++failures;
      break;
    }
    for (int k = 0; k < 16; ++k) {
      if (got.out[k] != want.out[k] || got.twice[k] != want.twice[k]) ++failures;
    }
    if (std::fabs(got.total - want.total) > 1e-5f) ++failures;
  }
  kiln_thread_pool_destroy(threads);
  std::printf("%s %s\n", failures ? "FAIL" : "ok  ", what);
  return failures ? 1 : 0;
}

}  // namespace

int main() {
  std::printf("architecture: %s\n", kHostArchName);
  int failed = 0;
  failed += check("embedded ELF kernels, inline executor", Kernels::kElf, false);
  failed += check("embedded ELF kernels, thread pool", Kernels::kElf, true);
  failed += check("static kernel library, inline executor", Kernels::kStatic, false);
  return failed ? 1 : 0;
}
