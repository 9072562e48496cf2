// Freestanding loader of embedded-ELF kernel libraries (x86-64, AArch64, RISC-V 64): checks the
// image, maps its PT_LOAD segments into memory a platform hook provides, applies RELATIVE
// relocations, protects each segment R / RX / RW (never writable and executable) and finds the
// query symbol. Anything else (imports, text relocations, initialisers, lazy binding, RELR,
// other relocation types, TLS, an interpreter) is refused with its own message.
#ifndef KILN_RUNTIME_ELF_ELF_LOADER_H_
#define KILN_RUNTIME_ELF_ELF_LOADER_H_

#include <stddef.h>
#include <stdint.h>

#include "base/diag.h"
#include "kiln/kiln.h"

namespace kiln {

enum : uint32_t { kProtRead = 1, kProtWrite = 2, kProtExec = 4 };

// Memory the platform provides for a mapped image.
struct ElfMemory {
  // Page-aligned, zero-filled, readable and writable memory of `size` bytes, or NULL.
  void* (*reserve)(void* user, size_t size);
  // Sets the protection of whole pages; false on failure.
  bool (*protect)(void* user, void* address, size_t size, uint32_t prot);
  void (*release)(void* user, void* address, size_t size);
  size_t pageSize;
  void* user;
};

struct ElfImage {
  uint8_t* base = nullptr;  // the mapping (owned; release with elfUnmap)
  size_t size = 0;
  kiln_kernel_query_fn query = nullptr;  // address of the query symbol inside the mapping
};

// Maps `image` for architecture `arch` (kiln_arch). Does not run any of its code.
kiln_status_t elfMap(const uint8_t* image, size_t size, uint32_t arch, const ElfMemory& memory,
                     ElfImage* out, Diag& diag);

// Calls the query symbol and checks that the library struct and its kernel pointers lie inside
// the mapping (kernels inside executable segments).
kiln_status_t elfQuery(const ElfImage& image, const uint8_t* elfFile,
                       const kiln_kernel_library** out, Diag& diag);

void elfUnmap(const ElfMemory& memory, ElfImage* image);

}  // namespace kiln

#endif  // KILN_RUNTIME_ELF_ELF_LOADER_H_
