/* kiln kernel ABI, version 1: how the runtime calls a compiled kernel and how it finds the
 * kernels of a library. Shared by the compiler (which generates code that follows it) and the
 * runtime (which calls that code). Freestanding C: <stdint.h> and <stddef.h> only. */
#ifndef KILN_FORMAT_KERNEL_ABI_H_
#define KILN_FORMAT_KERNEL_ABI_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on any change to the signature, the library struct or the query symbol. */
#define KILN_KERNEL_ABI_VERSION 1u

/* One kernel = one dispatch of the schedule. `bindings[i]` is the base address of the i-th
 * binding of the DISPATCH command (already offset into its space: arena, constants, an input or
 * an output). The kernel processes the share of its iteration space that belongs to
 * `workgroup_id` out of `workgroup_count` (0 <= workgroup_id < workgroup_count); the executor
 * may run different workgroups of one dispatch on different threads at once. A kernel never
 * allocates, calls no library and touches no global mutable state. */
typedef void (*kiln_kernel_fn)(void* const* bindings, uint32_t workgroup_id,
                               uint32_t workgroup_count);

/* What a kernel library exposes: its kernels in the order the artifact's DISPATCH commands
 * index them. An embedded ELF exports exactly one symbol, KILN_KERNEL_QUERY_SYMBOL, a function
 * returning a pointer to this struct; a statically linked library hands the struct to the
 * runtime directly, and the artifact names it by `name`. */
typedef struct kiln_kernel_library {
  uint32_t abi_version;          /* KILN_KERNEL_ABI_VERSION of the code generator */
  uint32_t kernel_count;         /* entries in `kernels` */
  const kiln_kernel_fn* kernels; /* kernel_count function pointers */
  const char* name;              /* NUL-terminated library name; may be NULL in an ELF */
} kiln_kernel_library;

typedef const kiln_kernel_library* (*kiln_kernel_query_fn)(void);

#define KILN_KERNEL_QUERY_SYMBOL "kiln_kernel_library_query"

/* Largest number of bindings one dispatch may have. */
#define KILN_MAX_BINDINGS 32u

#ifdef __cplusplus
}  /* extern "C" */
#endif

#if defined(__cplusplus)
#define KILN_ABI_STATIC_ASSERT(c, m) static_assert(c, m)
#else
#define KILN_ABI_STATIC_ASSERT(c, m) _Static_assert(c, m)
#endif
KILN_ABI_STATIC_ASSERT(offsetof(kiln_kernel_library, abi_version) == 0, "abi_version first");
KILN_ABI_STATIC_ASSERT(offsetof(kiln_kernel_library, kernel_count) == 4, "kernel_count at 4");
KILN_ABI_STATIC_ASSERT(offsetof(kiln_kernel_library, kernels) == 8, "kernels at 8");
KILN_ABI_STATIC_ASSERT(offsetof(kiln_kernel_library, name) == 8 + sizeof(void*), "name after");
KILN_ABI_STATIC_ASSERT(sizeof(kiln_kernel_library) == 8 + 2 * sizeof(void*), "no padding");

#endif /* KILN_FORMAT_KERNEL_ABI_H_ */
