/* kiln runtime C API: load a compiled artifact from memory (never copied), create execution
 * contexts in caller memory, call entry functions on caller buffers.
 *
 * The core is freestanding and allocates nothing: the caller provides the memory of a module
 * (kiln_module_memory_size) and of each context (kiln_context_memory_size, which includes the
 * arena). A module is immutable after kiln_module_load; a context is the only mutable state, so
 * several contexts of one module, and several modules, may run on different threads at once.
 * Host conveniences (load a file, allocate for me, ELF loader, thread pool) are in kiln_host.h.
 *
 * Errors: every call returns a kiln_status_t. The detailed one-line message of a failed load is
 * written to kiln_load_options.error, that of a failed call to kiln_context_error(). Building
 * the runtime with KILN_NO_STATUS_MESSAGES drops the message texts (the messages are then
 * empty) to save flash. */
#ifndef KILN_KILN_H_
#define KILN_KILN_H_

#include <stddef.h>
#include <stdint.h>

#include "kiln/format/artifact.h"
#include "kiln/format/kernel_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KILN_VERSION_MAJOR 0
#define KILN_VERSION_MINOR 1
#define KILN_VERSION_PATCH 0

/* ---- status --------------------------------------------------------------------------------*/
typedef enum kiln_status_t {
  KILN_OK = 0,
  KILN_ERROR_INVALID_ARGUMENT = 1, /* NULL pointer, too little or misaligned memory, bad index */
  KILN_ERROR_MALFORMED = 2,        /* the artifact fails validation */
  KILN_ERROR_VERSION = 3,          /* another major or a newer minor format version */
  KILN_ERROR_UNSUPPORTED = 4,      /* wrong architecture/ABI, missing CPU feature, no ELF loader */
  KILN_ERROR_KERNELS = 5,          /* kernel library missing or refused */
  KILN_ERROR_CONSTANTS = 6,        /* external constants missing, wrong size or hash */
  KILN_ERROR_NOT_FOUND = 7,        /* no entry function / debug info of that name or index */
  KILN_ERROR_IO = 8,               /* host layer: a file could not be read */
  KILN_ERROR_OUT_OF_MEMORY = 9     /* host layer: an allocation failed */
} kiln_status_t;

/* Short fixed text for a status code ("malformed artifact", ...; "" without messages). */
const char* kiln_status_string(kiln_status_t status);

/* Runtime version (KILN_VERSION_*) and the newest artifact format it reads. */
typedef struct kiln_version_info {
  uint32_t major, minor, patch;
  uint32_t format_major, format_minor;
  uint32_t kernel_abi_version;
} kiln_version_info;
void kiln_version(kiln_version_info* out_version);

/* ---- executors -----------------------------------------------------------------------------
 * The interpreter hands an executor one stage at a time: dispatches that are mutually
 * independent. The executor runs every workgroup of every dispatch and returns when all are
 * done. NULL executor = inline (the calling thread). */
typedef struct kiln_dispatch {
  kiln_kernel_fn kernel;
  void* const* bindings;    /* base address of each binding */
  uint32_t workgroup_count; /* >= 1 */
  uint32_t kernel_index;
  uint32_t dispatch_index; /* global index in the artifact's COMMANDS (see DEBUG) */
} kiln_dispatch;

typedef struct kiln_executor {
  void (*run_stage)(void* self, const kiln_dispatch* dispatches, uint32_t count);
  void* self;
} kiln_executor;

/* ---- embedded-ELF loader hook --------------------------------------------------------------
 * The core cannot map executable memory; the host layer supplies this (kiln_host_elf_loader()).
 * `load` validates and maps the ELF shared object `image`, resolves its query symbol, and
 * returns the library and the mapping (released by `unload`). */
typedef struct kiln_elf_loader {
  kiln_status_t (*load)(const struct kiln_elf_loader* self, const void* image, size_t size,
                        uint32_t arch, const kiln_kernel_library** out_library, void** out_mapping,
                        size_t* out_mapping_size, char* error, size_t error_capacity);
  void (*unload)(const struct kiln_elf_loader* self, void* mapping, size_t mapping_size);
  void* user;
} kiln_elf_loader;

/* ---- modules -------------------------------------------------------------------------------*/
typedef struct kiln_module kiln_module;

typedef struct kiln_load_options {
  /* Statically linked kernel libraries; an artifact with STATIC kernels names one of them. */
  const kiln_kernel_library* const* kernel_libraries;
  uint32_t kernel_library_count;
  /* The constants of an artifact compiled with external constants (64-byte aligned). */
  const void* external_constants;
  uint64_t external_constants_size;
  /* CPU features (KILN_<ARCH>_* bits) available beyond those the runtime was compiled for;
   * the host layer fills in what it detects. */
  uint64_t cpu_features;
  /* NULL: artifacts with embedded ELF kernels are refused. */
  const kiln_elf_loader* elf_loader;
  /* Receives a NUL-terminated one-line message when the load fails (may be NULL). */
  char* error;
  size_t error_capacity;
} kiln_load_options;

/* Zero-initialises the options. */
void kiln_load_options_init(kiln_load_options* options);

/* Bytes of memory (aligned to 16) a module needs. */
size_t kiln_module_memory_size(void);

/* Validates `artifact` (64-byte aligned, `size` bytes; it must outlive the module and is never
 * copied or written) and creates a module in `memory`. On failure nothing needs releasing. */
kiln_status_t kiln_module_load(const void* artifact, size_t size, const kiln_load_options* options,
                               void* memory, size_t memory_size, kiln_module** out_module);

/* Releases what the load acquired (the ELF mapping). The module's memory is the caller's. */
void kiln_module_unload(kiln_module* module);

/* ---- introspection -------------------------------------------------------------------------*/
typedef struct kiln_module_info {
  uint32_t format_major, format_minor;
  uint32_t arch;         /* kiln_arch */
  uint32_t abi;          /* kiln_abi */
  uint64_t cpu_features; /* required */
  uint64_t arena_size;
  uint32_t stack_bound;
  uint32_t kernel_count;
  uint32_t function_count;
  uint32_t dispatch_count; /* in all functions */
  uint32_t max_stage_dispatches;
  uint32_t kernels_static;     /* 1: static kernel library `kernel_library` */
  uint32_t constants_external; /* 1: constants passed by the application */
  uint64_t constants_size;
  const char* kernel_library; /* name of the static library, or NULL */
} kiln_module_info;
void kiln_module_info_get(const kiln_module* module, kiln_module_info* out_info);

typedef struct kiln_function_info {
  const char* name;
  uint32_t input_count, output_count;
  uint32_t first_dispatch, dispatch_count;
} kiln_function_info;

typedef struct kiln_tensor_info {
  const char* name;
  uint32_t dtype; /* kiln_dtype */
  uint32_t rank;
  const uint32_t* dims; /* rank entries */
  uint64_t byte_size;
  uint32_t alignment; /* the caller's buffer must be aligned to this */
} kiln_tensor_info;

uint32_t kiln_module_function_count(const kiln_module* module);
kiln_status_t kiln_module_function_info(const kiln_module* module, uint32_t function,
                                        kiln_function_info* out_info);
kiln_status_t kiln_module_find_function(const kiln_module* module, const char* name,
                                        uint32_t* out_function);
kiln_status_t kiln_module_input_info(const kiln_module* module, uint32_t function, uint32_t input,
                                     kiln_tensor_info* out_info);
kiln_status_t kiln_module_output_info(const kiln_module* module, uint32_t function, uint32_t output,
                                      kiln_tensor_info* out_info);
/* The binding signature of kernel `kernel`: how many bindings it takes, and for each the exact
 * byte length it accesses, its KILN_ACCESS_* flags and required alignment. */
kiln_status_t kiln_module_kernel_binding_count(const kiln_module* module, uint32_t kernel,
                                               uint32_t* out_count);
typedef struct kiln_binding_info {
  uint64_t length;
  uint32_t access;
  uint32_t alignment;
} kiln_binding_info;
kiln_status_t kiln_module_kernel_binding(const kiln_module* module, uint32_t kernel,
                                         uint32_t binding, kiln_binding_info* out_info);
/* Names from the optional DEBUG section; KILN_ERROR_NOT_FOUND if the artifact has none. */
kiln_status_t kiln_module_dispatch_debug(const kiln_module* module, uint32_t dispatch_index,
                                         const char** out_name, const char** out_node);

/* ---- contexts ------------------------------------------------------------------------------*/
typedef struct kiln_context kiln_context;

/* Bytes (including the arena) a context of `module` needs, for memory aligned to 64. */
size_t kiln_context_memory_size(const kiln_module* module);

/* Creates a context in `memory` (64-byte aligned). executor NULL = inline. A context runs one
 * call at a time; use one context per thread. Nothing needs releasing: the memory is the
 * caller's. */
kiln_status_t kiln_context_init(const kiln_module* module, const kiln_executor* executor,
                                void* memory, size_t memory_size, kiln_context** out_context);

/* Per-dispatch trace: called after each dispatch with its global index, its kernel and the
 * clock before and after it (clock in nanoseconds, from `clock`). While a trace hook is set,
 * the dispatches of a stage run one after another (each still split across workgroups). */
typedef void (*kiln_trace_fn)(void* user, uint32_t dispatch_index, uint32_t kernel_index,
                              uint64_t start_ns, uint64_t end_ns);
typedef uint64_t (*kiln_clock_fn)(void* user);
void kiln_context_set_trace(kiln_context* context, kiln_trace_fn trace, kiln_clock_fn clock,
                            void* user);

typedef struct kiln_input {
  const void* data;
  size_t size;
} kiln_input;

typedef struct kiln_output {
  void* data;
  size_t size;
} kiln_output;

/* Runs entry function `function` (index) on the caller's buffers: exactly the function's
 * input and output counts, each at least the tensor's byte_size and aligned to its alignment.
 * Output buffers must not overlap each other or the inputs. */
kiln_status_t kiln_context_call(kiln_context* context, uint32_t function, const kiln_input* inputs,
                                uint32_t input_count, const kiln_output* outputs,
                                uint32_t output_count);
kiln_status_t kiln_context_call_named(kiln_context* context, const char* function,
                                      const kiln_input* inputs, uint32_t input_count,
                                      const kiln_output* outputs, uint32_t output_count);

/* The message of the context's last failed call ("" if none or messages are compiled out). */
const char* kiln_context_error(const kiln_context* context);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_KILN_H_ */
