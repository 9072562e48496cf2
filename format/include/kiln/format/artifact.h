/* kiln artifact format v1: the byte layout of a compiled model, shared by the compiler (which
 * writes it) and the runtime (which validates it once and then reads it in place).
 *
 * Everything is little-endian and offset-based; the runtime never copies the artifact, so it
 * may sit in a memory map or in microcontroller flash. The buffer must be 64-byte aligned.
 *
 *   [header 64 B][section table: section_count x 32 B][sections, each 64-byte aligned]
 *
 * Sections: META (required), COMMANDS (required), KERNELS (required), CONSTANTS (optional,
 * absent = no constants), DEBUG (optional). Each kind appears at most once. The full byte-by-byte
 * description and the versioning rule are in docs/artifact-format.md.
 *
 * Freestanding C: <stdint.h> and <stddef.h> only. */
#ifndef KILN_FORMAT_ARTIFACT_H_
#define KILN_FORMAT_ARTIFACT_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- versioning ----------------------------------------------------------------------------
 * major: incompatible change. minor: additive change (new section kinds, new commands, new enum
 * values). A runtime refuses another major and any minor newer than its own. */
#define KILN_FORMAT_MAJOR 1u
#define KILN_FORMAT_MINOR 1u

#define KILN_MAGIC_0 'K'
#define KILN_MAGIC_1 'I'
#define KILN_MAGIC_2 'L'
#define KILN_MAGIC_3 'N'

/* Alignment of the artifact buffer, of every section and of the arena. */
#define KILN_ALIGNMENT 64u

/* Largest tensor rank that META can describe. */
#define KILN_MAX_RANK 8u

/* ---- target --------------------------------------------------------------------------------*/
typedef enum kiln_arch {
  KILN_ARCH_NONE = 0,
  KILN_ARCH_X86_64 = 1,
  KILN_ARCH_AARCH64 = 2,
  KILN_ARCH_RISCV64 = 3,
  KILN_ARCH_ARM = 4, /* 32-bit Arm, Thumb (Cortex-M) */
  KILN_ARCH_RISCV32 = 5,
  KILN_ARCH_COUNT = 6
} kiln_arch;

/* Calling convention / float ABI the kernels were compiled for. */
typedef enum kiln_abi {
  KILN_ABI_NONE = 0,
  KILN_ABI_LP64 = 1,      /* x86-64 System V, AArch64 AAPCS64 */
  KILN_ABI_LP64D = 2,     /* RISC-V 64, double-precision float registers */
  KILN_ABI_EABI_SOFT = 3, /* Arm EABI, floats in integer registers */
  KILN_ABI_EABI_HARD = 4, /* Arm EABI, floats in VFP registers */
  KILN_ABI_ILP32 = 5,     /* RISC-V 32, no float registers */
  KILN_ABI_ILP32F = 6,    /* RISC-V 32, single-precision float registers */
  KILN_ABI_COUNT = 7
} kiln_abi;

/* Required CPU feature bits (header.cpu_features). Bit meanings depend on the architecture. */
enum {
  /* x86-64 */
  KILN_X86_SSE4_2 = 1u << 0,
  KILN_X86_AVX = 1u << 1,
  KILN_X86_AVX2 = 1u << 2,
  KILN_X86_FMA = 1u << 3,
  KILN_X86_AVX512F = 1u << 4,
  KILN_X86_AVX512BW = 1u << 5,
  KILN_X86_AVX512DQ = 1u << 6,
  KILN_X86_AVX512VL = 1u << 7,
  KILN_X86_F16C = 1u << 8,
  KILN_X86_AVX512VNNI = 1u << 9,
  KILN_X86_AVXVNNI = 1u << 10,
  /* AArch64 */
  KILN_AARCH64_NEON = 1u << 0,
  KILN_AARCH64_DOTPROD = 1u << 1,
  KILN_AARCH64_FP16 = 1u << 2,
  /* 32-bit Arm */
  KILN_ARM_DSP = 1u << 0,
  KILN_ARM_FPV5_SP = 1u << 1,
  KILN_ARM_MVE = 1u << 2,
  /* RISC-V (32 and 64) */
  KILN_RISCV_M = 1u << 0,
  KILN_RISCV_A = 1u << 1,
  KILN_RISCV_F = 1u << 2,
  KILN_RISCV_D = 1u << 3,
  KILN_RISCV_C = 1u << 4,
  KILN_RISCV_V = 1u << 5
};

/* Name of feature bit `bit` (0..63) of `arch`, or NULL if the bit has no meaning there. */
static inline const char* kiln_cpu_feature_name(uint32_t arch, uint32_t bit) {
  static const char* const x86[] = {"sse4.2",   "avx",      "avx2",     "fma",
                                    "avx512f",  "avx512bw", "avx512dq", "avx512vl",
                                    "f16c",     "avx512vnni", "avxvnni"};
  static const char* const a64[] = {"neon", "dotprod", "fp16"};
  static const char* const arm[] = {"dsp", "fpv5-sp", "mve"};
  static const char* const rv[] = {"m", "a", "f", "d", "c", "v"};
  switch (arch) {
    case KILN_ARCH_X86_64:
      return bit < 11 ? x86[bit] : NULL;
    case KILN_ARCH_AARCH64:
      return bit < 3 ? a64[bit] : NULL;
    case KILN_ARCH_ARM:
      return bit < 3 ? arm[bit] : NULL;
    case KILN_ARCH_RISCV64:
    case KILN_ARCH_RISCV32:
      return bit < 6 ? rv[bit] : NULL;
    default:
      return NULL;
  }
}

/* ---- tensor element types (same order as the compiler's IR) ---------------------------------*/
typedef enum kiln_dtype {
  KILN_DTYPE_F32 = 0,
  KILN_DTYPE_F16 = 1,
  KILN_DTYPE_I8 = 2,
  KILN_DTYPE_U8 = 3,
  KILN_DTYPE_I16 = 4,
  KILN_DTYPE_I32 = 5,
  KILN_DTYPE_I64 = 6,
  KILN_DTYPE_BOOL = 7,
  KILN_DTYPE_F64 = 8, /* format 1.1: writers set format_minor 1 only when META uses it */
  KILN_DTYPE_COUNT = 9
} kiln_dtype;

static inline uint32_t kiln_dtype_size(uint32_t dtype) {
  static const uint8_t sizes[KILN_DTYPE_COUNT] = {4, 2, 1, 1, 2, 4, 8, 1, 8};
  return dtype < KILN_DTYPE_COUNT ? sizes[dtype] : 0;
}

static inline const char* kiln_dtype_name(uint32_t dtype) {
  static const char* const names[KILN_DTYPE_COUNT] = {"f32", "f16", "i8",  "u8",
                                                      "i16", "i32", "i64", "bool", "f64"};
  return dtype < KILN_DTYPE_COUNT ? names[dtype] : "?";
}

/* ---- header (offset 0, 64 bytes) ------------------------------------------------------------*/
typedef struct kiln_header {
  uint8_t magic[4];              /*  0: 'K' 'I' 'L' 'N' */
  uint16_t format_major;         /*  4: KILN_FORMAT_MAJOR */
  uint16_t format_minor;         /*  6: KILN_FORMAT_MINOR */
  uint64_t file_size;            /*  8: size of the whole artifact in bytes */
  uint8_t arch;                  /* 16: kiln_arch */
  uint8_t abi;                   /* 17: kiln_abi */
  uint16_t flags;                /* 18: reserved, 0 */
  uint32_t section_count;        /* 20: entries in the section table */
  uint64_t cpu_features;         /* 24: required KILN_<ARCH>_* feature bits */
  uint64_t section_table_offset; /* 32: offset of the section table (64 in v1 writers) */
  uint8_t reserved[24];          /* 40: 0 */
} kiln_header;

/* ---- section table (section_count entries of 32 bytes) --------------------------------------*/
typedef enum kiln_section_kind {
  KILN_SECTION_META = 1,
  KILN_SECTION_COMMANDS = 2,
  KILN_SECTION_CONSTANTS = 3,
  KILN_SECTION_KERNELS = 4,
  KILN_SECTION_DEBUG = 5,
  KILN_SECTION_KIND_COUNT = 6
} kiln_section_kind;

/* Section flags. */
enum {
  /* CONSTANTS: the constants live outside the artifact; the section holds a
   * kiln_external_constants record and the application passes the bytes at load time. */
  KILN_SECTION_FLAG_EXTERNAL = 1u << 0,
  /* KERNELS: the section holds the NUL-terminated name of a kernel library that the
   * application links and hands to the runtime; otherwise it holds an ELF shared object. */
  KILN_SECTION_FLAG_STATIC = 1u << 1
};

typedef struct kiln_section {
  uint32_t kind;     /*  0: kiln_section_kind */
  uint32_t flags;    /*  4: KILN_SECTION_FLAG_* valid for the kind, others 0 */
  uint64_t offset;   /*  8: from the start of the artifact, multiple of 64 */
  uint64_t size;     /* 16: bytes */
  uint64_t reserved; /* 24: 0 */
} kiln_section;

/* ---- META -----------------------------------------------------------------------------------
 * A fixed header followed by tables; every *_offset is relative to the start of META and
 * aligned to the table's entry alignment (8). Names are offsets into the string table, where
 * each name ends with a NUL byte inside the table. */
typedef struct kiln_meta {
  uint64_t arena_size;          /*  0: scratch memory the context provides, bytes */
  uint32_t arena_alignment;     /*  8: 64 */
  uint32_t stack_bound;         /* 12: compile-time bound of a kernel's stack use, bytes */
  uint32_t kernel_count;        /* 16: kernels the KERNELS library must provide */
  uint32_t function_count;      /* 20: entry functions */
  uint32_t functions_offset;    /* 24: kiln_function[function_count] */
  uint32_t tensor_count;        /* 28: entries of the tensor table */
  uint32_t tensors_offset;      /* 32: kiln_tensor[tensor_count] */
  uint32_t signatures_offset;   /* 36: kiln_kernel_signature[kernel_count] */
  uint32_t binding_sig_count;   /* 40: entries of the binding signature table */
  uint32_t binding_sigs_offset; /* 44: kiln_binding_signature[binding_sig_count] */
  uint32_t strings_offset;      /* 48: string table */
  uint32_t strings_size;        /* 52: bytes */
  uint32_t reserved[2];         /* 56: 0 */
} kiln_meta;

/* An entry function: its inputs are tensors [first_tensor, first_tensor + input_count), its
 * outputs the next output_count tensors. Its command stream is the byte range
 * [commands_offset, commands_offset + commands_size) of COMMANDS and ends with RETURN. The
 * functions' ranges follow each other in order without overlap; first_dispatch is the number
 * of DISPATCH commands in all earlier functions (the global index of its first dispatch, used
 * by the trace hook and DEBUG), dispatch_count the number in this function. */
typedef struct kiln_function {
  uint32_t name;            /*  0: string table offset */
  uint32_t input_count;     /*  4 */
  uint32_t output_count;    /*  8 */
  uint32_t first_tensor;    /* 12: index into the tensor table */
  uint32_t commands_offset; /* 16: relative to COMMANDS */
  uint32_t commands_size;   /* 20 */
  uint32_t first_dispatch;  /* 24 */
  uint32_t dispatch_count;  /* 28 */
} kiln_function;

/* An input or output of an entry function. byte_size is the exact size of the caller's buffer
 * contents (dims product x dtype size for dense tensors); alignment (a power of two, <= 64) is
 * what the caller's buffer must satisfy; every binding into the tensor's space must be
 * compatible with it. */
typedef struct kiln_tensor {
  uint32_t name;                /*  0: string table offset */
  uint8_t dtype;                /*  4: kiln_dtype */
  uint8_t rank;                 /*  5: <= KILN_MAX_RANK */
  uint16_t alignment;           /*  6 */
  uint64_t byte_size;           /*  8 */
  uint32_t dims[KILN_MAX_RANK]; /* 16: dims[rank..] are 0 */
} kiln_tensor;

/* The bindings of kernel k are binding signatures [first_binding, first_binding + binding_count).
 * Every DISPATCH of kernel k passes exactly binding_count (space, offset) pairs. */
typedef struct kiln_kernel_signature {
  uint32_t first_binding; /* 0 */
  uint32_t binding_count; /* 4: <= KILN_MAX_BINDINGS */
} kiln_kernel_signature;

/* Binding access flags. */
enum { KILN_ACCESS_READ = 1u << 0, KILN_ACCESS_WRITE = 1u << 1 };

typedef struct kiln_binding_signature {
  uint64_t length;    /*  0: exact bytes the kernel accesses from the binding's start */
  uint8_t access;     /*  8: KILN_ACCESS_* (at least one) */
  uint8_t reserved0;  /*  9: 0 */
  uint16_t alignment; /* 10: required alignment of the binding address, power of two <= 64 */
  uint32_t reserved1; /* 12: 0 */
} kiln_binding_signature;

/* ---- memory spaces of a binding --------------------------------------------------------------
 * 0 arena (read/write), 1 constants (read only), 2 + 2i input i (read only),
 * 3 + 2i output i (read/write) of the function being called. */
#define KILN_SPACE_ARENA 0u
#define KILN_SPACE_CONSTANTS 1u
#define KILN_SPACE_INPUT(i) (2u + 2u * (i))
#define KILN_SPACE_OUTPUT(i) (3u + 2u * (i))

/* ---- CONSTANTS ------------------------------------------------------------------------------
 * Embedded: the section's bytes are the constants (space 1). External (flag EXTERNAL): the
 * section holds this record; the application passes `size` bytes whose kiln_hash64 is `hash`. */
typedef struct kiln_external_constants {
  uint64_t size;        /*  0 */
  uint64_t hash;        /*  8: kiln_hash64(constants, size) */
  uint8_t reserved[48]; /* 16: 0 */
} kiln_external_constants;

/* ---- DEBUG (optional) -----------------------------------------------------------------------
 * A header, then entry_count entries (one per DISPATCH of COMMANDS, in the order of their
 * global dispatch index), then a string table. Offsets are relative to the start of DEBUG. */
typedef struct kiln_debug {
  uint32_t entry_count;    /*  0 */
  uint32_t entries_offset; /*  4: kiln_debug_entry[entry_count] */
  uint32_t strings_offset; /*  8 */
  uint32_t strings_size;   /* 12 */
} kiln_debug;

typedef struct kiln_debug_entry {
  uint32_t dispatch_name; /* 0: string table offset (of DEBUG's own table) */
  uint32_t node_name;     /* 4: the model node(s) the dispatch came from */
} kiln_debug_entry;

/* Optional cost table of DEBUG (readable by every 1.0 reader, which ignores it): a writer that
 * records each dispatch's arithmetic cost puts the entries at entries_offset >= 32 and this
 * record at DEBUG offset 16. A reader uses the record only when entries_offset >= 32;
 * costs_offset 0 means "no cost table". Costs are what the compiler knows from the op and its
 * static shapes, for profilers (`kiln bench --per-dispatch`); the runtime never reads them. */
typedef struct kiln_debug_costs {
  uint32_t costs_offset; /* 16: 8-aligned, relative to DEBUG: kiln_debug_cost[entry_count] */
  uint32_t note;         /* 20: string table offset of the compiler's note on the build (e.g. the
                          *     inputs fixed at compile time, `kiln compile --fix-input`) */
  uint32_t note_size;    /* 24: the note's length without its NUL; 0 = no note */
  uint32_t reserved;     /* 28: 0 */
} kiln_debug_costs;

/* What kiln_debug_cost.count counts. */
typedef enum kiln_cost_kind {
  KILN_COST_NONE = 0,     /* data movement (copy, transpose, gather...): no arithmetic cost */
  KILN_COST_FLOPS = 1,    /* float conv / matmul: 2 x multiply-accumulates */
  KILN_COST_INT_OPS = 2,  /* quantized conv / fully connected: 2 x integer multiply-accumulates */
  KILN_COST_ELEMENTS = 3, /* elementwise, pooling, reduction, normalization: elements processed */
  KILN_COST_KIND_COUNT = 4
} kiln_cost_kind;

typedef struct kiln_debug_cost {
  uint64_t count; /* 0 */
  uint32_t kind;  /* 8: kiln_cost_kind */
  uint32_t work_queues; /* 12: the tasks whose work the dispatch's workgroups share at run time
                         *     (they claim it from work queues in the arena); 0: each workgroup
                         *     does a fixed share (earlier writers: always 0) */
} kiln_debug_cost;

/* ---- constants hash -------------------------------------------------------------------------
 * 64-bit hash of the external constants, 8 bytes per step (hundreds of MB hash in well under a
 * second). Not cryptographic: it catches the wrong file or a stale build, not an attacker. */
static inline uint64_t kiln_hash_rotl64(uint64_t x, unsigned r) {
  return (x << r) | (x >> (64u - r));
}

static inline uint64_t kiln_hash64(const void* data, size_t size) {
  const uint64_t k1 = 0x87c37b91114253d5ull, k2 = 0x4cf5ad432745937full;
  const uint8_t* p = (const uint8_t*)data;
  uint64_t h = 0x9e3779b97f4a7c15ull ^ ((uint64_t)size * k2);
  size_t n = size;
  while (n >= 8) {
    uint64_t w;
    __builtin_memcpy(&w, p, 8); /* little-endian targets only */
    w *= k1;
    w = kiln_hash_rotl64(w, 31);
    w *= k2;
    h ^= w;
    h = kiln_hash_rotl64(h, 27) * 5u + 0x52dce729u;
    p += 8;
    n -= 8;
  }
  uint64_t tail = 0;
  for (size_t i = 0; i < n; ++i) tail |= (uint64_t)p[i] << (8u * i);
  tail *= k1;
  tail = kiln_hash_rotl64(tail, 31);
  h ^= tail * k2;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

#ifdef __cplusplus
} /* extern "C" */
#endif

/* ---- pinned layout --------------------------------------------------------------------------*/
#if defined(__cplusplus)
#define KILN_FORMAT_STATIC_ASSERT(c, m) static_assert(c, m)
#else
#define KILN_FORMAT_STATIC_ASSERT(c, m) _Static_assert(c, m)
#endif
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "kiln artifacts are little-endian and read in place: big-endian hosts are not supported"
#endif
KILN_FORMAT_STATIC_ASSERT(sizeof(kiln_header) == 64, "header is 64 bytes");
KILN_FORMAT_STATIC_ASSERT(offsetof(kiln_header, file_size) == 8, "file_size at 8");
KILN_FORMAT_STATIC_ASSERT(offsetof(kiln_header, arch) == 16, "arch at 16");
KILN_FORMAT_STATIC_ASSERT(offsetof(kiln_header, section_count) == 20, "section_count at 20");
KILN_FORMAT_STATIC_ASSERT(offsetof(kiln_header, cpu_features) == 24, "cpu_features at 24");
KILN_FORMAT_STATIC_ASSERT(offsetof(kiln_header, section_table_offset) == 32, "table at 32");
KILN_FORMAT_STATIC_ASSERT(sizeof(kiln_section) == 32, "section entry is 32 bytes");
KILN_FORMAT_STATIC_ASSERT(offsetof(kiln_section, offset) == 8, "offset at 8");
KILN_FORMAT_STATIC_ASSERT(offsetof(kiln_section, size) == 16, "size at 16");
KILN_FORMAT_STATIC_ASSERT(sizeof(kiln_meta) == 64, "META header is 64 bytes");
KILN_FORMAT_STATIC_ASSERT(offsetof(kiln_meta, strings_size) == 52, "strings_size at 52");
KILN_FORMAT_STATIC_ASSERT(sizeof(kiln_function) == 32, "function entry is 32 bytes");
KILN_FORMAT_STATIC_ASSERT(sizeof(kiln_tensor) == 48, "tensor entry is 48 bytes");
KILN_FORMAT_STATIC_ASSERT(offsetof(kiln_tensor, byte_size) == 8, "byte_size at 8");
KILN_FORMAT_STATIC_ASSERT(offsetof(kiln_tensor, dims) == 16, "dims at 16");
KILN_FORMAT_STATIC_ASSERT(sizeof(kiln_kernel_signature) == 8, "kernel signature is 8 bytes");
KILN_FORMAT_STATIC_ASSERT(sizeof(kiln_binding_signature) == 16, "binding signature is 16 B");
KILN_FORMAT_STATIC_ASSERT(offsetof(kiln_binding_signature, alignment) == 10, "alignment at 10");
KILN_FORMAT_STATIC_ASSERT(sizeof(kiln_external_constants) == 64, "external record is 64 B");
KILN_FORMAT_STATIC_ASSERT(sizeof(kiln_debug) == 16, "debug header is 16 bytes");
KILN_FORMAT_STATIC_ASSERT(sizeof(kiln_debug_entry) == 8, "debug entry is 8 bytes");
KILN_FORMAT_STATIC_ASSERT(sizeof(kiln_debug_costs) == 16, "debug costs record is 16 B");
KILN_FORMAT_STATIC_ASSERT(sizeof(kiln_debug_cost) == 16, "debug cost entry is 16 bytes");

#endif /* KILN_FORMAT_ARTIFACT_H_ */
