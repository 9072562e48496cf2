// Host conveniences: load options with the ELF loader and detected CPU features, CPU feature
// detection, the monotonic clock, mapping an artifact file, allocate-for-me wrappers.
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#if defined(__aarch64__)
#include <sys/auxv.h>
#endif

#include <cerrno>

#include "base/diag.h"
#include "kiln/kiln_host.h"

extern "C" void kiln_host_load_options_init(kiln_load_options* options) {
  kiln_load_options_init(options);
  options->elf_loader = kiln_host_elf_loader();
  options->cpu_features = kiln_host_cpu_features();
}

extern "C" uint64_t kiln_host_cpu_features(void) {
  uint64_t f = 0;
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("sse4.2")) f |= KILN_X86_SSE4_2;
  if (__builtin_cpu_supports("avx")) f |= KILN_X86_AVX;
  if (__builtin_cpu_supports("avx2")) f |= KILN_X86_AVX2;
  if (__builtin_cpu_supports("fma")) f |= KILN_X86_FMA;
  if (__builtin_cpu_supports("avx512f")) f |= KILN_X86_AVX512F;
  if (__builtin_cpu_supports("avx512bw")) f |= KILN_X86_AVX512BW;
  if (__builtin_cpu_supports("avx512dq")) f |= KILN_X86_AVX512DQ;
  if (__builtin_cpu_supports("avx512vl")) f |= KILN_X86_AVX512VL;
  if (__builtin_cpu_supports("f16c")) f |= KILN_X86_F16C;
  if (__builtin_cpu_supports("avx512vnni")) f |= KILN_X86_AVX512VNNI;
  if (__builtin_cpu_supports("avxvnni")) f |= KILN_X86_AVXVNNI;
#elif defined(__aarch64__)
  unsigned long hw = getauxval(AT_HWCAP);
  f |= KILN_AARCH64_NEON;
  if (hw & (1ul << 20)) f |= KILN_AARCH64_DOTPROD; /* HWCAP_ASIMDDP */
  if (hw & (1ul << 10)) f |= KILN_AARCH64_FP16;    /* HWCAP_ASIMDHP */
#endif
  return f;
}

extern "C" uint64_t kiln_host_clock_ns(void*) {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1000000000u + static_cast<uint64_t>(t.tv_nsec);
}

extern "C" kiln_status_t kiln_host_file_map(const char* path, kiln_host_file* out, char* error,
                                            size_t error_capacity) {
  kiln::Diag diag(error, error_capacity);
  if (!path || !out)
    return diag.fail(KILN_ERROR_INVALID_ARGUMENT, "kiln_host_file_map: NULL argument");
  *out = kiln_host_file{};
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return diag.fail(KILN_ERROR_IO, "cannot open '{}': {}", path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_size <= 0) {
    close(fd);
    return diag.fail(KILN_ERROR_IO, "'{}' is empty or unreadable", path);
  }
  void* p = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (p == MAP_FAILED)
    return diag.fail(KILN_ERROR_IO, "cannot map '{}': {}", path, strerror(errno));
  out->data = p;
  out->size = static_cast<size_t>(st.st_size);
  return KILN_OK;
}

extern "C" void kiln_host_file_unmap(kiln_host_file* file) {
  if (file && file->data) munmap(const_cast<void*>(file->data), file->size);
  if (file) *file = kiln_host_file{};
}

extern "C" kiln_status_t kiln_host_module_load(const void* artifact, size_t size,
                                               const kiln_load_options* options,
                                               kiln_module** out_module) {
  void* memory = aligned_alloc(64, (kiln_module_memory_size() + 63) / 64 * 64);
  if (!memory) return KILN_ERROR_OUT_OF_MEMORY;
  kiln_status_t st =
      kiln_module_load(artifact, size, options, memory, kiln_module_memory_size(), out_module);
  if (st != KILN_OK) free(memory);
  return st;
}

extern "C" void kiln_host_module_free(kiln_module* module) {
  if (!module) return;
  kiln_module_unload(module);
  free(module);
}

extern "C" kiln_status_t kiln_host_context_create(const kiln_module* module,
                                                  const kiln_executor* executor,
                                                  kiln_context** out_context) {
  if (!module || !out_context) return KILN_ERROR_INVALID_ARGUMENT;
  size_t size = (kiln_context_memory_size(module) + 63) / 64 * 64;
  void* memory = aligned_alloc(64, size);
  if (!memory) return KILN_ERROR_OUT_OF_MEMORY;
  kiln_status_t st = kiln_context_init(module, executor, memory, size, out_context);
  if (st != KILN_OK) free(memory);
  return st;
}

extern "C" void kiln_host_context_free(kiln_context* context) { free(context); }
