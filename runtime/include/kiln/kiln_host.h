/* kiln host layer: conveniences for applications on an operating system (Linux/POSIX) on top of
 * the freestanding core in kiln.h — the embedded-ELF loader, CPU feature detection, mapping an
 * artifact file, allocating module and context memory, a monotonic clock for the trace hook,
 * and a thread-pool executor. Link kiln_runtime_host. */
#ifndef KILN_KILN_HOST_H_
#define KILN_KILN_HOST_H_

#include "kiln/kiln.h"

#ifdef __cplusplus
extern "C" {
#endif

/* kiln_load_options_init plus the ELF loader and the CPU features this machine has. */
void kiln_host_load_options_init(kiln_load_options* options);

/* Maps embedded ELF kernel libraries with mmap/mprotect (segments end R, RX or RW). */
const kiln_elf_loader* kiln_host_elf_loader(void);

/* KILN_<ARCH>_* feature bits of the running processor. */
uint64_t kiln_host_cpu_features(void);

/* CLOCK_MONOTONIC in nanoseconds; usable as a kiln_clock_fn. */
uint64_t kiln_host_clock_ns(void* unused);

/* A read-only file mapping (page aligned, so 64-byte aligned as artifacts must be). */
typedef struct kiln_host_file {
  const void* data;
  size_t size;
} kiln_host_file;
kiln_status_t kiln_host_file_map(const char* path, kiln_host_file* out_file, char* error,
                                 size_t error_capacity);
void kiln_host_file_unmap(kiln_host_file* file);

/* Allocate-for-me wrappers around kiln_module_load / kiln_context_init. */
kiln_status_t kiln_host_module_load(const void* artifact, size_t size,
                                    const kiln_load_options* options, kiln_module** out_module);
void kiln_host_module_free(kiln_module* module); /* unloads too */
kiln_status_t kiln_host_context_create(const kiln_module* module, const kiln_executor* executor,
                                       kiln_context** out_context);
void kiln_host_context_free(kiln_context* context);

/* Thread pool executor: `threads` workers in total (the calling thread counts as one). It
 * splits each stage's dispatches into workgroups and runs them all concurrently. One pool runs
 * one stage at a time; contexts on different threads sharing a pool take turns per stage. */
typedef struct kiln_thread_pool kiln_thread_pool;
kiln_status_t kiln_thread_pool_create(uint32_t threads, kiln_thread_pool** out_pool);
void kiln_thread_pool_destroy(kiln_thread_pool* pool);
const kiln_executor* kiln_thread_pool_executor(const kiln_thread_pool* pool);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_KILN_HOST_H_ */
