// The posix side of the embedded-ELF loader: anonymous mmap for the image, mprotect to R / RX /
// RW, munmap; and the kiln_elf_loader hook that maps, queries and unmaps.
#include <sys/mman.h>
#include <unistd.h>

#include "base/diag.h"
#include "elf/elf_loader.h"
#include "kiln/kiln_host.h"

namespace {

void* reserve(void*, size_t size) {
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

bool protect(void*, void* address, size_t size, uint32_t prot) {
  int p = ((prot & kiln::kProtRead) ? PROT_READ : 0) |
          ((prot & kiln::kProtWrite) ? PROT_WRITE : 0) | ((prot & kiln::kProtExec) ? PROT_EXEC : 0);
  return mprotect(address, size, p) == 0;
}

void release(void*, void* address, size_t size) { munmap(address, size); }

kiln::ElfMemory posixMemory() {
  return kiln::ElfMemory{reserve, protect, release, static_cast<size_t>(sysconf(_SC_PAGESIZE)),
                         nullptr};
}

kiln_status_t load(const kiln_elf_loader*, const void* image, size_t size, uint32_t arch,
                   const kiln_kernel_library** out_library, void** out_mapping,
                   size_t* out_mapping_size, char* error, size_t error_capacity) {
  kiln::Diag diag(error, error_capacity);
  kiln::ElfMemory memory = posixMemory();
  kiln::ElfImage mapped;
  const uint8_t* bytes = static_cast<const uint8_t*>(image);
  if (kiln_status_t st = kiln::elfMap(bytes, size, arch, memory, &mapped, diag)) return st;
  if (kiln_status_t st = kiln::elfQuery(mapped, bytes, out_library, diag)) {
    kiln::elfUnmap(memory, &mapped);
    return st;
  }
  *out_mapping = mapped.base;
  *out_mapping_size = mapped.size;
  return KILN_OK;
}

void unload(const kiln_elf_loader*, void* mapping, size_t size) { munmap(mapping, size); }

const kiln_elf_loader kLoader = {load, unload, nullptr};

}  // namespace

extern "C" const kiln_elf_loader* kiln_host_elf_loader(void) { return &kLoader; }
