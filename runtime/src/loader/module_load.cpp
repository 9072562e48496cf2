// kiln_module_load: runs the validation steps in order, binds the constants (embedded or the
// application's external bytes, checked by size and hash) and the kernels (a static library
// the application passed, or the embedded ELF through the loader hook), and unloads.
#include "kiln/format/commands.h"
#include "loader/module.h"

namespace kiln {
namespace {

constexpr uint64_t kDebugHeaderSize = sizeof(kiln_debug);

kiln_status_t checkLibrary(const kiln_module& m, const kiln_kernel_library* lib, const char* what,
                           Diag& diag) {
  if (lib->abi_version != KILN_KERNEL_ABI_VERSION) {
    return diag.fail(KILN_ERROR_KERNELS,
                     "{} has kernel ABI version {}, this runtime implements version {}", what,
                     lib->abi_version, KILN_KERNEL_ABI_VERSION);
  }
  if (lib->kernel_count != m.meta->kernel_count || (lib->kernel_count && !lib->kernels)) {
    return diag.fail(KILN_ERROR_KERNELS, "{} provides {} kernels, the artifact needs {}", what,
                     lib->kernel_count, m.meta->kernel_count);
  }
  for (uint32_t k = 0; k < lib->kernel_count; ++k) {
    if (!lib->kernels[k]) return diag.fail(KILN_ERROR_KERNELS, "{}: kernel {} is NULL", what, k);
  }
  return KILN_OK;
}

kiln_status_t bindStaticLibrary(kiln_module& m, const kiln_load_options& options, Diag& diag) {
  const char* name = reinterpret_cast<const char*>(m.kernelSection);
  if (m.kernelSectionSize < 2 || name[m.kernelSectionSize - 1] != '\0' || name[0] == '\0') {
    return diag.fail(KILN_ERROR_MALFORMED,
                     "KERNELS: static library name is not a NUL-terminated string");
  }
  for (uint32_t i = 0; i < options.kernel_library_count; ++i) {
    const kiln_kernel_library* lib = options.kernel_libraries[i];
    if (!lib || !lib->name || !sameString(lib->name, name)) continue;
    if (kiln_status_t st = checkLibrary(m, lib, "static kernel library", diag)) return st;
    m.library = lib;
    return KILN_OK;
  }
  return diag.fail(KILN_ERROR_KERNELS,
                   "artifact needs the static kernel library '{}', which the application did "
                   "not pass in kiln_load_options.kernel_libraries",
                   name);
}

}  // namespace

kiln_status_t bindConstants(kiln_module& m, const kiln_load_options& options, Diag& diag) {
  if (!m.constants || !m.constantsExternal) return KILN_OK;
  const kiln_external_constants* ext =
      reinterpret_cast<const kiln_external_constants*>(m.constants);
  if (m.constantsSize != sizeof(kiln_external_constants)) {
    return diag.fail(KILN_ERROR_MALFORMED, "CONSTANTS: external record is not 64 bytes");
  }
  for (uint8_t b : ext->reserved) {
    if (b) return diag.fail(KILN_ERROR_MALFORMED, "CONSTANTS: reserved bytes are not zero");
  }
  if (!options.external_constants) {
    return diag.fail(KILN_ERROR_CONSTANTS,
                     "artifact needs its external constants ({} bytes) but none were given",
                     ext->size);
  }
  if (options.external_constants_size != ext->size) {
    return diag.fail(KILN_ERROR_CONSTANTS,
                     "external constants are {} bytes, the artifact expects {}",
                     options.external_constants_size, ext->size);
  }
  if (reinterpret_cast<uintptr_t>(options.external_constants) % KILN_ALIGNMENT != 0) {
    return diag.fail(KILN_ERROR_INVALID_ARGUMENT, "external constants are not 64-byte aligned");
  }
  uint64_t hash = kiln_hash64(options.external_constants, static_cast<size_t>(ext->size));
  if (hash != ext->hash) {
    return diag.fail(KILN_ERROR_CONSTANTS,
                     "external constants hash {x} does not match the artifact's {x} (wrong or "
                     "stale constants file)",
                     hash, ext->hash);
  }
  m.constants = static_cast<const uint8_t*>(options.external_constants);
  m.constantsSize = ext->size;
  return KILN_OK;
}

kiln_status_t checkDebug(kiln_module& m, Diag& diag) {
  if (!m.debugSection) return KILN_OK;
  const kiln_debug& d = *reinterpret_cast<const kiln_debug*>(m.debugSection);
  uint64_t size = m.debugSectionSize;
  if (size < kDebugHeaderSize || d.entries_offset % 8 != 0 || d.entry_count != m.dispatchCount ||
      !inBounds(d.entries_offset, uint64_t{d.entry_count} * sizeof(kiln_debug_entry), size) ||
      !inBounds(d.strings_offset, d.strings_size, size) || d.strings_size == 0) {
    return diag.fail(KILN_ERROR_MALFORMED,
                     "DEBUG: tables lie outside the section or do not match the dispatch count");
  }
  m.debugEntries = reinterpret_cast<const kiln_debug_entry*>(m.debugSection + d.entries_offset);
  m.debugEntryCount = d.entry_count;
  m.debugStrings = reinterpret_cast<const char*>(m.debugSection + d.strings_offset);
  m.debugStringsSize = d.strings_size;
  if (m.debugStrings[d.strings_size - 1] != '\0') {
    return diag.fail(KILN_ERROR_MALFORMED, "DEBUG: string table does not end with a NUL byte");
  }
  for (uint32_t i = 0; i < d.entry_count; ++i) {
    if (m.debugEntries[i].dispatch_name >= d.strings_size ||
        m.debugEntries[i].node_name >= d.strings_size) {
      return diag.fail(KILN_ERROR_MALFORMED, "DEBUG: entry {} names a string outside the table", i);
    }
  }
  return KILN_OK;
}

kiln_status_t bindKernels(kiln_module& m, const kiln_load_options& options, Diag& diag) {
  if (m.kernelsStatic) return bindStaticLibrary(m, options, diag);
  if (!options.elf_loader) {
    return diag.fail(KILN_ERROR_UNSUPPORTED,
                     "artifact embeds ELF kernels but this runtime has no ELF loader (compile the "
                     "model as a static kernel library, or use the host runtime's "
                     "kiln_host_load_options_init)");
  }
  const kiln_kernel_library* lib = nullptr;
  void* mapping = nullptr;
  size_t mappingSize = 0;
  kiln_status_t st = options.elf_loader->load(
      options.elf_loader, m.kernelSection, static_cast<size_t>(m.kernelSectionSize), m.header->arch,
      &lib, &mapping, &mappingSize, diag.buffer(), diag.capacity());
  if (st != KILN_OK) return diag.adopt(st);  // the loader wrote the message
  st = checkLibrary(m, lib, "embedded kernel library", diag);
  if (st != KILN_OK) {
    options.elf_loader->unload(options.elf_loader, mapping, mappingSize);
    return st;
  }
  m.library = lib;
  m.elfLoader = options.elf_loader;
  m.elfMapping = mapping;
  m.elfMappingSize = mappingSize;
  return KILN_OK;
}

}  // namespace kiln

using kiln::Diag;

extern "C" void kiln_load_options_init(kiln_load_options* options) {
  if (options) *options = kiln_load_options{};
}

extern "C" size_t kiln_module_memory_size(void) { return sizeof(kiln_module); }

extern "C" kiln_status_t kiln_module_load(const void* artifact, size_t size,
                                          const kiln_load_options* options, void* memory,
                                          size_t memory_size, kiln_module** out_module) {
  kiln_load_options none{};
  const kiln_load_options& opts = options ? *options : none;
  Diag diag(opts.error, opts.error_capacity);
  if (out_module) *out_module = nullptr;
  if (!artifact || !memory || !out_module) {
    return diag.fail(KILN_ERROR_INVALID_ARGUMENT,
                     "kiln_module_load: NULL artifact, memory or out_module");
  }
  if (opts.kernel_library_count != 0 && !opts.kernel_libraries) {
    return diag.fail(KILN_ERROR_INVALID_ARGUMENT,
                     "kiln_load_options: kernel_library_count is {} but kernel_libraries is NULL",
                     opts.kernel_library_count);
  }
  if (reinterpret_cast<uintptr_t>(artifact) % KILN_ALIGNMENT != 0) {
    return diag.fail(KILN_ERROR_INVALID_ARGUMENT, "artifact buffer is not 64-byte aligned");
  }
  if (memory_size < sizeof(kiln_module) ||
      reinterpret_cast<uintptr_t>(memory) % alignof(kiln_module) != 0) {
    return diag.fail(KILN_ERROR_INVALID_ARGUMENT, "module memory must be {} bytes aligned to {}",
                     sizeof(kiln_module), alignof(kiln_module));
  }
  kiln_module* m = static_cast<kiln_module*>(memory);
  *m = kiln_module{};
  m->base = static_cast<const uint8_t*>(artifact);
  m->size = size;
  kiln_status_t st = kiln::checkHeaderAndSections(*m, diag);
  if (!st) st = kiln::checkTarget(*m, opts, diag);
  if (!st) st = kiln::checkMeta(*m, diag);
  if (!st) st = kiln::bindConstants(*m, opts, diag);
  if (!st) st = kiln::checkCommands(*m, diag);
  if (!st) st = kiln::checkDebug(*m, diag);
  if (!st) st = kiln::bindKernels(*m, opts, diag);
  if (st) return st;
  *out_module = m;
  return KILN_OK;
}

extern "C" void kiln_module_unload(kiln_module* module) {
  if (!module) return;
  if (module->elfLoader && module->elfMapping) {
    module->elfLoader->unload(module->elfLoader, module->elfMapping, module->elfMappingSize);
  }
  module->elfMapping = nullptr;
  module->library = nullptr;
}
